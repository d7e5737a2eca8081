"""The frontend rule sets (patterns/frontend-rules.toml): for each rule, a launch that breaks it (unmet, the
corrected command, and that command meeting every rule when checked again), a near miss on the other side
of the boundary (met), and unknown where the rule reads a file `check` cannot see.

Every run below, with vLLM's words, is in tests/rules_vllm_runs.toml, and
test_check_agrees_with_real_vllm (test_rules_server.py) checks that `check` predicts each verdict. Real
vLLM 0.33.0 agreed on both sides (`vllm serve /work/vllm-models/llama-tiny --load-format dummy ARGS`,
CPU, HF_HUB_OFFLINE=1; "accepted" = it reached `Initializing a V1 LLM engine`); the battery's captures
(fixtures/battery/tok-*, parser-*) are the refused side of most rules, and these were run beyond it:

  --enable-auto-tool-choice --tool-call-parser llama3_json        accepted
  --tool-call-parser llama3  (no --enable-auto-tool-choice)       accepted (the name is only checked with auto)
  --reasoning-parser none                                          accepted (0.33 reads `none` as no parser)
  --tokenizer-mode hf / --tokenizer-mode HF                        accepted (vLLM lower-cases the mode)
  --tokenizer-mode deepseek_v41                                    accepted by the parser and the registry
  --chat-template template_chatml.jinja                            accepted (a built-in template's name)
  --chat-template '{{ messages }}'                                 accepted (inline: has `{`)
  --tool-parser-plugin my_tool_parser.py (in the cwd) --enable-auto-tool-choice --tool-call-parser my_parser
                                                                   accepted (import_module fails, the file loads)
  --tool-parser-plugin ./my_tool_parser.py ... --tool-call-parser hermes
                                                                   TypeError: the 'package' argument is required
                                                                   to perform a relative import for './my_tool_parser.py'
  --tool-parser-plugin /tmp/nonexistent_dir_x/p.py ... --tool-call-parser hermes
                                                                   accepted (the failure is only logged)
  --reasoning-parser-plugin ./rp.py --reasoning-parser deepseek_r1 TypeError: ... relative import for './rp.py'
  --reasoning-effort-map '{"xhigh": "high"}'                       accepted
  --reasoning-effort-map '[1]'                                     ValueError: Error: --reasoning-effort-map must be
                                                                   a JSON object mapping reasoning efforts to strings.
  --enable-log-outputs --enable-log-requests                       accepted
  --tokenizer /work/vllm-models/llama-tiny                         accepted
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rules_helpers import check, llama_folder, own_results, recheck, result, status, unmet

THINK = ["<think>", "</think>"]


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # relative paths (templates, plugins) are read from where check runs
    return llama_folder(tmp_path / "llama")


# ---------------------------------------------------------------------------------------- chat template


def test_a_path_like_chat_template_that_does_not_exist_is_unmet(model: Path) -> None:
    report = check(f"vllm serve {model} --chat-template ./templates/chatml.jinja")
    assert unmet(report) == ["chat-template-resolves"]
    assert "--chat-template" not in (report.audit.after or "")
    recheck(report)


def test_a_chat_template_that_exists_a_built_in_name_or_inline_text_is_met(model: Path, tmp_path: Path) -> None:
    (tmp_path / "chat.jinja").write_text("{{ messages }}")
    assert status(check(f"vllm serve {model} --chat-template ./chat.jinja"), "chat-template-resolves") == "met"
    assert status(check(f"vllm serve {model} --chat-template template_chatml.jinja"), "chat-template-resolves") == "met"
    report = check(["vllm", "serve", str(model), "--chat-template", "{% for m in messages %}{{ m }}{% endfor %}"])
    assert status(report, "chat-template-resolves") == "met" and report.ok
    # a built-in template's bare name without its file name is no template
    assert status(check(f"vllm serve {model} --chat-template chatml"), "chat-template-resolves") == "unmet"


# ---------------------------------------------------------------------------------------- tool calling


def test_auto_tool_choice_without_a_parser_is_unmet(model: Path) -> None:
    report = check(f"vllm serve {model} --enable-auto-tool-choice")
    assert unmet(report) == ["auto-tool-choice-needs-parser"]
    assert "--enable-auto-tool-choice" not in (report.audit.after or "x")
    recheck(report)
    assert check(f"vllm serve {model} --enable-auto-tool-choice --tool-call-parser hermes").ok


def test_an_unknown_tool_call_parser_gets_the_nearest_registered_one(model: Path) -> None:
    report = check(f"vllm serve {model} --enable-auto-tool-choice --tool-call-parser llama3")
    assert unmet(report) == ["tool-call-parser-registered"]
    assert "--tool-call-parser llama3_json" in (report.audit.after or "")
    recheck(report)
    # without --enable-auto-tool-choice vLLM never looks the name up
    assert check(f"vllm serve {model} --tool-call-parser llama3").ok


def test_a_tool_call_parser_name_far_from_every_registered_one_drops_auto_tool_choice(model: Path) -> None:
    report = check(f"vllm serve {model} --enable-auto-tool-choice --tool-call-parser zzzzzzzz")
    assert unmet(report) == ["tool-call-parser-registered"]
    after = report.audit.after or ""
    assert "--enable-auto-tool-choice" not in after and "--tool-call-parser" not in after
    recheck(report)


def test_the_registered_names_are_each_release_s_own(model: Path) -> None:
    # `beam` is registered from 0.28 on (generated from each release's source)
    command = f"vllm serve {model} --enable-auto-tool-choice --tool-call-parser beam"
    assert status(check(command, version="0.27.0"), "tool-call-parser-registered") == "unmet"
    assert status(check(command, version="0.33.0"), "tool-call-parser-registered") == "met"


def test_a_relative_tool_parser_plugin_is_refused_from_0_30(model: Path, tmp_path: Path) -> None:
    (tmp_path / "my_tool_parser.py").write_text("x = 1\n")
    command = f"vllm serve {model} --tool-parser-plugin ./my_tool_parser.py --enable-auto-tool-choice --tool-call-parser my_parser"
    report = check(command)
    assert unmet(report) == ["tool-parser-plugin-not-relative"]
    assert "--tool-parser-plugin my_tool_parser.py" in (report.audit.after or "")
    recheck(report)
    # 0.27-0.29 load the plugin as a file: ./ is fine there
    assert status(check(command, version="0.29.0"), "tool-parser-plugin-not-relative") is None
    assert check(command, version="0.29.0").ok
    # without the file, both at once: vLLM would load it once the name is fixed
    (tmp_path / "my_tool_parser.py").unlink()
    assert sorted(unmet(check(command))) == ["tool-parser-plugin-file-exists", "tool-parser-plugin-not-relative"]


def test_a_tool_parser_plugin_file_that_is_not_there_is_unmet(model: Path, tmp_path: Path) -> None:
    missing = tmp_path / "plugins" / "my_tool_parser.py"
    command = (
        f"vllm serve {model} --tool-parser-plugin {missing} --enable-auto-tool-choice --tool-call-parser my_parser"
    )
    report = check(command)
    assert unmet(report) == ["tool-parser-plugin-file-exists"]
    assert report.audit.after is None  # where the plugin is, only its author knows: the fix says so
    assert "path of the plugin file" in (result(report, "tool-parser-plugin-file-exists").fix or "")
    missing.parent.mkdir()
    missing.write_text("x = 1\n")
    assert status(check(command), "tool-parser-plugin-file-exists") == "met"
    # a built-in parser does not need the plugin: vLLM only logs the plugin's failure
    builtin = f"vllm serve {model} --tool-parser-plugin {tmp_path / 'nope.py'} --enable-auto-tool-choice --tool-call-parser hermes"
    assert check(builtin).ok
    # a module name may be installed where vLLM runs: not decidable, not refused
    module = (
        f"vllm serve {model} --tool-parser-plugin mypkg.parsers --enable-auto-tool-choice --tool-call-parser my_parser"
    )
    assert check(module).ok


# ---------------------------------------------------------------------------------------- reasoning parser


def test_an_unknown_reasoning_parser_gets_the_registered_spelling(tmp_path: Path) -> None:
    model = llama_folder(tmp_path / "thinker", tokens=THINK)
    report = check(f"vllm serve {model} --reasoning-parser deepseek-r1")
    assert unmet(report) == ["reasoning-parser-registered"]
    assert "--reasoning-parser deepseek_r1" in (report.audit.after or "")
    recheck(report)
    assert own_results(check(f"vllm serve {model} --reasoning-parser none")) == []  # 0.33: no parser
    assert (
        status(check(f"vllm serve {model} --reasoning-parser none", version="0.32.0"), "reasoning-parser-registered")
        == "unmet"
    )


def test_a_think_parser_needs_the_think_tokens_in_the_tokenizer(tmp_path: Path) -> None:
    plain = llama_folder(tmp_path / "plain")
    report = check(f"vllm serve {plain} --reasoning-parser deepseek_r1")
    assert unmet(report) == ["think-tokens-in-tokenizer"]
    assert "--reasoning-parser" not in (report.audit.after or "x")
    recheck(report)
    thinker = llama_folder(tmp_path / "thinker", tokens=THINK)
    assert status(check(f"vllm serve {thinker} --reasoning-parser deepseek_r1"), "think-tokens-in-tokenizer") == "met"
    # only one of the two tokens is not enough
    half = llama_folder(tmp_path / "half", tokens=["<think>"])
    assert status(check(f"vllm serve {half} --reasoning-parser deepseek_r1"), "think-tokens-in-tokenizer") == "unmet"
    # --tokenizer's folder is the one vLLM loads
    report = check(f"vllm serve {plain} --tokenizer {thinker} --reasoning-parser deepseek_r1")
    assert status(report, "think-tokens-in-tokenizer") == "met"


def test_think_tokens_are_unknown_without_the_tokenizer(tmp_path: Path) -> None:
    report = check("vllm serve nobody/not-cached --reasoning-parser deepseek_r1")
    outcome = result(report, "think-tokens-in-tokenizer")
    assert outcome.status == "unknown" and "tokenizer.json" in (outcome.reveal or "")
    assert unmet(report) == []


def test_a_relative_reasoning_parser_plugin_is_refused_from_0_30(model: Path, tmp_path: Path) -> None:
    (tmp_path / "rp.py").write_text("x = 1\n")
    report = check(f"vllm serve {model} --reasoning-parser-plugin ./rp.py --reasoning-parser my_reasoner")
    assert unmet(report) == ["reasoning-parser-plugin-not-relative"]
    assert "--reasoning-parser-plugin rp.py" in (report.audit.after or "")
    recheck(report)


# ---------------------------------------------------------------------------------------- logging, effort map


def test_output_logging_needs_request_logging(model: Path) -> None:
    report = check(f"vllm serve {model} --enable-log-outputs")
    assert unmet(report) == ["log-outputs-needs-log-requests"]
    assert "--enable-log-requests" in (report.audit.after or "")
    recheck(report)


def test_the_reasoning_effort_map_keys_are_known_efforts(model: Path) -> None:
    report = check(["vllm", "serve", str(model), "--reasoning-effort-map", '{"extreme": "high"}'])
    assert unmet(report) == ["effort-map-known-efforts"]
    recheck(report)
    assert check(["vllm", "serve", str(model), "--reasoning-effort-map", '{"xhigh": "high"}']).ok
    report = check(["vllm", "serve", str(model), "--reasoning-effort-map", "[1]"])
    assert unmet(report) == ["effort-map-is-object"]
    recheck(report)


# ---------------------------------------------------------------------------------------- tokenizer


def test_an_unregistered_tokenizer_mode_becomes_auto(model: Path) -> None:
    report = check(f"vllm serve {model} --tokenizer-mode fast")
    assert unmet(report) == ["tokenizer-mode-registered"]
    assert "--tokenizer-mode auto" in (report.audit.after or "")
    recheck(report)
    assert check(f"vllm serve {model} --tokenizer-mode hf").ok
    assert check(f"vllm serve {model} --tokenizer-mode HF").ok  # vLLM lower-cases it
    # alpamayo2_super is registered from 0.33 on
    assert (
        status(
            check(f"vllm serve {model} --tokenizer-mode alpamayo2_super", version="0.32.0"), "tokenizer-mode-registered"
        )
        == "unmet"
    )
    assert status(check(f"vllm serve {model} --tokenizer-mode alpamayo2_super"), "tokenizer-mode-registered") == "met"


def test_a_path_like_tokenizer_that_is_not_there_is_unmet(model: Path, tmp_path: Path) -> None:
    report = check(f"vllm serve {model} --tokenizer {tmp_path / 'no-such-tokenizer'}")
    assert unmet(report) == ["tokenizer-path-exists"]
    assert "--tokenizer" not in (report.audit.after or "x").replace("--tokenizer-mode", "")
    recheck(report)
    assert check(f"vllm serve {model} --tokenizer {model}").ok
    # a repo id is looked up on the Hub, not refused here
    assert status(check(f"vllm serve {model} --tokenizer org/tokenizer"), "tokenizer-path-exists") == "met"


def test_a_tokenizer_json_that_does_not_parse_is_unmet(tmp_path: Path) -> None:
    bad = llama_folder(tmp_path / "bad", tokenizer_json='{"version": "1.0", "model": {"type": "WordLevel",\n}')
    report = check(f"vllm serve {bad}")
    assert unmet(report) == ["tokenizer-json-parses"]
    assert report.audit.after is None and "repair" in (result(report, "tokenizer-json-parses").fix or "")
    # a good tokenizer folder given with --tokenizer is the one vLLM loads
    good = llama_folder(tmp_path / "good")
    assert check(f"vllm serve {bad} --tokenizer {good}").ok
    # a good folder, or no folder to read (a repo id not in the cache), has no such rule
    assert own_results(check(f"vllm serve {good}")) == []
    assert own_results(check("vllm serve nobody/not-cached")) == []


def test_a_tokenizer_config_json_that_does_not_parse_is_unmet(tmp_path: Path) -> None:
    model = llama_folder(tmp_path / "m")
    (model / "tokenizer_config.json").write_text("{'single': 'quotes'}")
    assert unmet(check(f"vllm serve {model}")) == ["tokenizer-config-parses"]
    (model / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 2048}))
    assert check(f"vllm serve {model}").ok
