"""Rule data that reads files as files (does one parse, does the tokenizer's vocabulary have a token, in
the folder an argument names), facts about the machine `check` runs on (an injected probe), sets that apply
only when their activity is known, the `keys_in` op, and fix values that pick the nearest name or rewrite
text: all declared in the TOML, with no change to logdoctor's code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logdoctor.audit import audit
from logdoctor.check import build_config, run_check
from logdoctor.library.loader import LibraryError, constraint_sets_of

TOY = """
[lists]
names = ["alpha_one", "beta", "gamma-ray"]
keys = ["low", "high"]

[[constraint_set]]
id = "files-0.33"
feature = "Files"
versions = ">=0.33"
active = { field = "model", op = "not_null" }

[[constraint_set.fact]]
name = "vocab_json_parses"
valid_json = true
file = "tokenizer.json"
folder_of = "tokenizer"

[[constraint_set.fact]]
name = "has_magic"
has_token = "<magic>"
file = "tokenizer.json"
folder_of = "tokenizer"

[[constraint_set.rule]]
id = "parses"
says = "tokenizer.json parses"
require = { field = "vocab_json_parses", op = "ne", value = false }
vllm_message = "bad json"
[[constraint_set.rule.fix]]
says = "repair it"

[[constraint_set.rule]]
id = "magic"
says = "the vocabulary has <magic>"
require = { field = "has_magic", op = "eq", value = true }
vllm_message = "no magic"
[[constraint_set.rule.fix]]
says = "drop --tokenizer"
unset = ["tokenizer"]

[[constraint_set.rule]]
id = "name"
says = "--tool-call-parser is a listed name"
when = { field = "tool_call_parser", op = "not_null" }
require = { field = "tool_call_parser", op = "in", value = "@names" }
vllm_message = "bad name"
[[constraint_set.rule.fix]]
says = "the nearest listed name"
set = { tool_call_parser = { from = "tool_call_parser", nearest = "@names", otherwise = "beta" } }

[[constraint_set.rule]]
id = "keys"
says = "--default-chat-template-kwargs has listed keys only"
require = { field = "default_chat_template_kwargs", op = "keys_in", value = "@keys" }
vllm_message = "bad keys"
[[constraint_set.rule.fix]]
says = "drop it"
unset = ["default_chat_template_kwargs"]

[[constraint_set.rule]]
id = "no-dot"
says = "--tool-parser-plugin does not start with ./"
require = { field = "tool_parser_plugin", op = "not_matches", value = "^\\\\./" }
vllm_message = "relative"
[[constraint_set.rule.fix]]
says = "strip ./"
set = { tool_parser_plugin = { from = "tool_parser_plugin", sub = ["^(\\\\./)+", ""] } }

[[constraint_set]]
id = "machine-0.33"
feature = "Machine"
versions = ">=0.33"
strict_active = true
active = { field = "probed_port", op = "not_null" }

[[constraint_set.fact]]
name = "probed_port"
machine = "probed_port"
[[constraint_set.fact]]
name = "port_free"
machine = "port_free"
[[constraint_set.fact]]
name = "free_port"
machine = "free_port"

[[constraint_set.rule]]
id = "port"
says = "--port is free"
when = { field = "port", op = "eq", value_from = "probed_port" }
require = { field = "port_free", op = "eq", value = true }
vllm_message = "in use"
[[constraint_set.rule.fix]]
says = "a free port"
set = { port = { from = "free_port" } }
"""


def sets():  # type: ignore[no-untyped-def]
    return constraint_sets_of([("toy-rules.toml", TOY)])


def folder(root: Path, tokenizer: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"architectures": ["ToyForCausalLM"]}))
    (root / "tokenizer.json").write_text(tokenizer)
    return root


def vocab(*added: str) -> str:
    return json.dumps({"model": {"vocab": {"a": 0}}, "added_tokens": [{"id": 1, "content": t} for t in added]})


def statuses(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.id: r.status for r in report.audit.results}


def taken(host: str | None, port: int) -> dict[str, Any]:
    return {"port_free": port != 8000, "free_port": 8001}


def test_file_facts_read_the_folder_an_argument_names(tmp_path: Path) -> None:
    plain, magic = folder(tmp_path / "plain", vocab()), folder(tmp_path / "magic", vocab("<magic>"))
    report = run_check(["vllm", "serve", str(plain)], sets=sets(), environ={}, machine=None)
    assert statuses(report) == {"parses": "met", "magic": "unmet", "name": "met", "keys": "met", "no-dot": "met"}
    report = run_check(["vllm", "serve", str(plain), "--tokenizer", str(magic)], sets=sets(), environ={}, machine=None)
    assert statuses(report)["magic"] == "met"
    # tokens added by added_tokens.json count too
    (plain / "added_tokens.json").write_text(json.dumps({"<magic>": 5}))
    assert statuses(run_check(["vllm", "serve", str(plain)], sets=sets(), environ={}, machine=None))["magic"] == "met"
    # a Unigram vocabulary is a list of [token, score]
    unigram = folder(tmp_path / "uni", json.dumps({"model": {"vocab": [["<magic>", 0.0]]}}))
    assert statuses(run_check(["vllm", "serve", str(unigram)], sets=sets(), environ={}, machine=None))["magic"] == "met"


def test_a_file_that_does_not_parse_is_false_and_its_tokens_unknown(tmp_path: Path) -> None:
    bad = folder(tmp_path / "bad", '{"model": ')
    report = run_check(["vllm", "serve", str(bad)], sets=sets(), environ={}, machine=None)
    assert statuses(report)["parses"] == "unmet" and statuses(report)["magic"] == "unknown"
    # --tokenizer naming no local folder (a repo id): unknown, not the model's folder
    report = run_check(["vllm", "serve", str(bad), "--tokenizer", "org/tok"], sets=sets(), environ={}, machine=None)
    assert statuses(report)["parses"] == "unknown"


def test_nearest_names_keys_and_rewritten_text(tmp_path: Path) -> None:
    model = folder(tmp_path / "m", vocab("<magic>"))
    command = ["vllm", "serve", str(model), "--tool-call-parser", "gamma_ray"]
    assert "--tool-call-parser gamma-ray" in (
        run_check(command, sets=sets(), environ={}, machine=None).audit.after or ""
    )
    command = ["vllm", "serve", str(model), "--tool-call-parser", "alpha"]
    assert "--tool-call-parser alpha_one" in (
        run_check(command, sets=sets(), environ={}, machine=None).audit.after or ""
    )
    command = ["vllm", "serve", str(model), "--tool-call-parser", "zzzzzz"]
    assert "--tool-call-parser beta" in (run_check(command, sets=sets(), environ={}, machine=None).audit.after or "")
    command = ["vllm", "serve", str(model), "--default-chat-template-kwargs", '{"low": 1, "odd": 2}']
    assert statuses(run_check(command, sets=sets(), environ={}, machine=None))["keys"] == "unmet"
    command = ["vllm", "serve", str(model), "--default-chat-template-kwargs", '{"low": 1}']
    assert statuses(run_check(command, sets=sets(), environ={}, machine=None))["keys"] == "met"
    command = ["vllm", "serve", str(model), "--tool-parser-plugin", "././p.py"]
    after = run_check(command, sets=sets(), environ={}, machine=None).audit.after or ""
    assert "--tool-parser-plugin p.py" in after


def test_machine_facts_come_from_the_injected_probe(tmp_path: Path) -> None:
    model = folder(tmp_path / "m", vocab("<magic>"))
    report = run_check(["vllm", "serve", str(model)], sets=sets(), environ={}, machine=taken)
    assert statuses(report)["port"] == "unmet" and "--port 8001" in (report.audit.after or "")
    report = run_check(["vllm", "serve", str(model), "--port", "8001"], sets=sets(), environ={}, machine=taken)
    assert statuses(report)["port"] == "met"


def test_a_strict_set_is_not_audited_when_its_activity_is_unknown(tmp_path: Path) -> None:
    model = folder(tmp_path / "m", vocab("<magic>"))
    report = run_check(["vllm", "serve", str(model)], sets=sets(), environ={}, machine=None)
    assert "port" not in statuses(report)
    # a log's launch (no probe): audited against it only when vLLM raised one of its rules
    config, _ = build_config(["vllm", "serve", str(model)], None, "0.33.0", None, {}, sets())
    assert [r.id for r in audit(config, sets(), "0.33.0").results if r.id == "port"] == []


def test_a_fact_has_one_source() -> None:
    bad = TOY.replace('valid_json = true\nfile = "tokenizer.json"', 'valid_json = true\nhas_token = "x"')
    with pytest.raises(LibraryError, match="exactly one of"):
        constraint_sets_of([("toy-rules.toml", bad)])
