"""A constraint set for a new feature is data alone: what its rules read (arguments, environment
variables, model facts from config.json or the Hugging Face cache), what would reveal what is unknown,
and the lists its conditions name are declared in the TOML, with no change to logdoctor's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor.check import run_check
from logdoctor.library.loader import LibraryError, constraint_sets_of

# A feature logdoctor's code has never heard of: every name below appears only in this data.
TOY = """
[lists]
toy_archs = ["ToyForCausalLM", "OtherToyForCausalLM"]

[[constraint_set]]
id = "toy-0.33"
feature = "Toy all-reduce"
versions = ">=0.33"
active = { field = "toy_layers", op = "gt", value = 0 }

[[constraint_set.fact]]
name = "toy_layers"
config_json = ["text_config.num_hidden_layers", "num_hidden_layers"]
reveal = "the toy model's config.json"

[[constraint_set.fact]]
name = "toy_context"
config_json = ["max_position_embeddings", "n_positions"]
pick = "min"

[[constraint_set.env]]
name = "TOY_MODE"
reveal = "TOY_MODE where the server runs"

[constraint_set.reveal]
architecture = "the toy model's folder"

[[constraint_set.rule]]
id = "custom-all-reduce-off"
says = "Toy models need the custom all-reduce off"
when = { field = "architecture", op = "in", value = "@toy_archs" }
require = { field = "disable_custom_all_reduce", op = "eq", value = true }
vllm_message = "Toy models need --disable-custom-all-reduce"
[[constraint_set.rule.fix]]
says = "pass --disable-custom-all-reduce"
set = { disable_custom_all_reduce = true }

[[constraint_set.rule]]
id = "toy-mode"
says = "TOY_MODE is set to fast"
require = { field = "env.TOY_MODE", op = "eq", value = "fast" }
vllm_message = "TOY_MODE must be fast"
[[constraint_set.rule.fix]]
says = "set TOY_MODE=fast"
set = { "env.TOY_MODE" = "fast" }

[[constraint_set.rule]]
id = "context-fits"
says = "--max-model-len fits the toy context"
require = { field = "max_model_len", op = "le", value_from = "toy_context" }
vllm_message = "too long"
[[constraint_set.rule.fix]]
says = "lower --max-model-len"
set = { max_model_len = { from = "toy_context" } }
"""


def toy_sets(text: str = TOY):  # type: ignore[no-untyped-def]
    return constraint_sets_of([("toy-rules.toml", text)])


def model_dir(root: Path, config: dict[str, object]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config))
    return root


def statuses(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.id: r.status for r in report.audit.results}


TOY_CONFIG = {
    "architectures": ["OtherToyForCausalLM"],
    "text_config": {"num_hidden_layers": 4},
    "max_position_embeddings": 4096,
    "n_positions": 2048,
}


def test_a_new_feature_set_is_checked_from_data_alone(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "toy", TOY_CONFIG)
    report = run_check(["vllm", "serve", str(model), "--max-model-len", "3000"], sets=toy_sets(), environ={})
    # the argument's default comes from vLLM's parser (False), so the rule is unmet, not unknown
    assert statuses(report) == {"custom-all-reduce-off": "unmet", "toy-mode": "unmet", "context-fits": "unmet"}
    after = report.audit.after or ""
    assert "--disable-custom-all-reduce" in after and "TOY_MODE=fast" in after and "--max-model-len 2048" in after
    evidence = {r.id: r.evidence for r in report.audit.results}
    assert any("default" in e for e in evidence["custom-all-reduce-off"])
    assert any("TOY_MODE not set" in e for e in evidence["toy-mode"])


def test_the_fixed_launch_meets_the_toy_rules(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "toy", TOY_CONFIG)
    command = ["vllm", "serve", str(model), "--disable-custom-all-reduce", "--max-model-len", "2k"]
    report = run_check(command, sets=toy_sets(), environ={"TOY_MODE": "fast"})
    assert set(statuses(report).values()) == {"met"}


def test_unknown_facts_say_what_the_set_says_would_reveal_them() -> None:
    report = run_check(["vllm", "serve", "nobody/knows-this-model"], sets=toy_sets(), environ={})
    # without the model's config.json the feature's activity is unknown: its rules are listed as unknown
    unknown = {r.id: r.reveal for r in report.audit.results if r.status == "unknown"}
    assert "the toy model's folder" in (unknown["custom-all-reduce-off"] or "")
    assert "the toy model's config.json" not in (unknown["custom-all-reduce-off"] or "")


def test_model_facts_come_from_the_hugging_face_cache(tmp_path: Path) -> None:
    snapshot = tmp_path / "hub" / "models--toy-org--toy-7b" / "snapshots" / "abc123"
    model_dir(snapshot, TOY_CONFIG)
    (tmp_path / "hub" / "models--toy-org--toy-7b" / "refs").mkdir()
    (tmp_path / "hub" / "models--toy-org--toy-7b" / "refs" / "main").write_text("abc123")
    report = run_check(
        ["vllm", "serve", "toy-org/toy-7b", "--max-model-len", "1024"],
        sets=toy_sets(),
        environ={"HF_HUB_CACHE": str(tmp_path / "hub"), "TOY_MODE": "fast"},
    )
    assert statuses(report) == {"custom-all-reduce-off": "unmet", "toy-mode": "met", "context-fits": "met"}
    assert report.config is not None and report.config.value("toy_layers") == 4


def test_hf_overrides_change_the_facts_as_vllm_applies_them(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "toy", TOY_CONFIG)
    overrides = json.dumps({"architectures": ["PlainForCausalLM"], "n_positions": 8192})
    report = run_check(
        ["vllm", "serve", str(model), "--hf-overrides", overrides, "--max-model-len", "3000"],
        sets=toy_sets(),
        environ={"TOY_MODE": "fast"},
    )
    # no longer a toy architecture; the smallest context key is now max_position_embeddings (4096)
    assert statuses(report) == {"custom-all-reduce-off": "met", "toy-mode": "met", "context-fits": "met"}


def test_a_list_name_the_file_does_not_define_is_an_error() -> None:
    with pytest.raises(LibraryError, match="@toy_arches names no list"):
        toy_sets(TOY.replace('value = "@toy_archs"', 'value = "@toy_arches"'))


def test_named_lists_are_spliced_into_arrays() -> None:
    text = TOY.replace('value = "@toy_archs"', 'value = ["@toy_archs", "ThirdToyForCausalLM"]')
    rule = next(r for r in toy_sets(text)[0].rule if r.id == "custom-all-reduce-off")
    assert rule.when is not None
    assert rule.when.value == ["ToyForCausalLM", "OtherToyForCausalLM", "ThirdToyForCausalLM"]


def test_a_child_set_inherits_the_declarations() -> None:
    child = TOY + '\n[[constraint_set]]\nid = "toy-0.34"\nextends = "toy-0.33"\nfeature = "Toy all-reduce"\nversions = ">=0.34"\nactive = { field = "toy_layers", op = "gt", value = 0 }\n'
    sets = toy_sets(child)
    assert [f.name for f in sets[1].fact] == ["toy_layers", "toy_context"]
    assert sets[1].reveal_text("env.TOY_MODE") == "TOY_MODE where the server runs"


OPS = """
[[constraint_set]]
id = "ops-0.33"
feature = "Operations"
versions = ">=0.33"
active = { field = "model", op = "not_null" }

[[constraint_set.fact]]
name = "template_exists"
exists_of = "chat_template"
reveal = "the --chat-template path where the server runs"

[[constraint_set.fact]]
name = "checkpoint_quantization"
config_json = ["quantization_config.quant_method"]
absent = "none"

[[constraint_set.fact]]
name = "rope_factor"
config_json = ["rope_scaling.factor"]

[[constraint_set.fact]]
name = "context"
config_json = ["max_position_embeddings"]

[[constraint_set.fact]]
name = "template_in_tokenizer"
file = "tokenizer_config.json"
config_json = ["chat_template"]
absent = ""

[[constraint_set.derive]]
field = "scaled_context"
value = { from = "context", times_from = "rope_factor" }
says = "vLLM scales the context by the rope scaling factor"

[[constraint_set.rule]]
id = "template-file"
says = "The chat template file exists"
when = { field = "chat_template", op = "matches", value = "\\\\.jinja$" }
require = { field = "template_exists", op = "eq", value = true }
vllm_message = "The supplied chat template ({chat_template}) looks like a file path, but it failed to be opened."
[[constraint_set.rule.fix]]
says = "give the path of an existing file"

[[constraint_set.rule]]
id = "fits"
says = "--max-model-len fits the scaled context"
require = { field = "max_model_len", op = "le", value_from = "scaled_context" }
vllm_message = "too long"
[[constraint_set.rule.fix]]
says = "lower it"
set = { max_model_len = { from = "scaled_context" } }
"""


def test_paths_regexes_other_files_and_products(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m", {"max_position_embeddings": 4096, "rope_scaling": {"factor": 4.0}})
    (model / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}')
    sets = constraint_sets_of([("ops-rules.toml", OPS)])
    missing = str(tmp_path / "absent.jinja")
    command = ["vllm", "serve", str(model), "--chat-template", missing, "--max-model-len", "20000"]
    report = run_check(command, sets=sets, environ={})
    assert statuses(report) == {"template-file": "unmet", "fits": "unmet"}
    assert report.config is not None
    assert report.config.value("checkpoint_quantization") == "none"
    assert report.config.value("template_in_tokenizer") == "{{ messages }}"
    assert "--max-model-len 16384" in (report.audit.after or "")
    present = tmp_path / "t.jinja"
    present.write_text("{{ x }}")
    command = ["vllm", "serve", str(model), "--chat-template", str(present), "--max-model-len", "16k"]
    assert statuses(run_check(command, sets=sets, environ={})) == {"template-file": "met", "fits": "met"}


def test_a_fact_needs_exactly_one_source() -> None:
    bad = OPS.replace('exists_of = "chat_template"', 'exists_of = "chat_template"\nconfig_json = ["x"]')
    with pytest.raises(LibraryError, match="exactly one of"):
        constraint_sets_of([("ops-rules.toml", bad)])


GROUPS = """
[lists]
known = ["TOY_PORT", "TOY_LEVEL"]

[[constraint_set]]
id = "groups-0.33"
feature = "Environment groups and file probes"
versions = ">=0.33"
active = { field = "model", op = "not_null" }

[[constraint_set.env_group]]
field = "toy_env"
prefix = "TOY_"
reveal = "the TOY_* variables where the server runs"

[[constraint_set.env_group]]
field = "toy_ints"
names = ["TOY_PORT", "OTHER_COUNT"]

[[constraint_set.env_group]]
field = "toy_unknown"
prefix = "TOY_"
known = "@known"

[[constraint_set.fact]]
name = "config_found"
probe = "found"

[[constraint_set.fact]]
name = "config_parses"
probe = "parses"

[[constraint_set.fact]]
name = "json_names"
probe = "json_files"

[[constraint_set.rule]]
id = "known-toy-vars"
says = "Every TOY_* variable is one the toy reads"
require = { field = "toy_env", op = "keys_in", value = "@known" }
vllm_message = "Unknown toy variable"
[[constraint_set.rule.fix]]
says = "unset it"

[[constraint_set.rule]]
id = "int-vars"
says = "The toy's integer variables hold integers"
require = { field = "toy_ints", op = "all_match", value = "^\\\\s*[+-]?\\\\d+\\\\s*$" }
vllm_message = "invalid literal for int() with base 10: {value!r}"
[[constraint_set.rule.fix]]
says = "give an integer"

[[constraint_set.rule]]
id = "config-there"
says = "The folder has a config.json that parses"
require = { all = [{ field = "config_found", op = "eq", value = true }, { field = "config_parses", op = "eq", value = true }] }
vllm_message = "no config"
[[constraint_set.rule.fix]]
says = "give the model's folder"
"""


def test_environment_groups_and_file_probes(tmp_path: Path) -> None:
    sets = constraint_sets_of([("groups-rules.toml", GROUPS)])
    model = model_dir(tmp_path / "m", {"architectures": ["X"]})
    environ = {"TOY_PORT": "8000", "TOY_LEVELL": "2", "OTHER_COUNT": "4GB", "UNRELATED": "x"}
    report = run_check(["vllm", "serve", str(model)], sets=sets, environ=environ)
    assert statuses(report) == {"known-toy-vars": "unmet", "int-vars": "unmet", "config-there": "met"}
    assert report.config is not None and report.config.value("toy_env") == {"TOY_LEVELL": "2", "TOY_PORT": "8000"}
    # the variables the toy does not read, each with the known name nearest its spelling
    assert report.config.value("toy_unknown") == {"TOY_LEVELL": "TOY_LEVEL"}
    # the command's own VAR=value words are part of the environment
    command = ["TOY_LEVEL=3", "vllm", "serve", str(model)]
    report = run_check(command, sets=sets, environ={"TOY_PORT": "1"})
    assert statuses(report) == {"known-toy-vars": "met", "int-vars": "met", "config-there": "met"}
    (model / "tokenizer.json").write_text("{}")
    (model / "notes.txt").write_text("")
    report = run_check(["vllm", "serve", str(model)], sets=sets, environ={})
    assert report.config is not None and report.config.value("json_names") == ["config.json", "tokenizer.json"]
    (model / "config.json").write_text('{"architectures": ["X"],}')
    report = run_check(["vllm", "serve", str(model)], sets=sets, environ={})
    assert report.config is not None and report.config.value("config_parses") is False
    assert statuses(report)["config-there"] == "unmet"
    (model / "config.json").unlink()
    report = run_check(["vllm", "serve", str(model)], sets=sets, environ={})
    assert report.config is not None and report.config.value("config_found") is False
    assert report.config.value("config_parses") is None
    # a repo id with no snapshot in the cache: not found here; a file (GGUF): unknown
    report = run_check(["vllm", "serve", "org/none"], sets=sets, environ={"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert report.config is not None and report.config.value("config_found") is False
    assert "json_names" not in report.config.settings  # no folder to list: unknown
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    report = run_check(["vllm", "serve", str(gguf)], sets=sets, environ={})
    assert statuses(report)["config-there"] == "unknown"


def test_a_list_may_name_other_lists_and_not_itself() -> None:
    text = TOY.replace('toy_archs = [', 'toy_all = ["@toy_archs", "ThirdToyForCausalLM"]\ntoy_archs = [', 1)
    text = text.replace('value = "@toy_archs"', 'value = "@toy_all"')
    rule = next(r for r in toy_sets(text)[0].rule if r.id == "custom-all-reduce-off")
    assert rule.when is not None
    assert rule.when.value == ["ToyForCausalLM", "OtherToyForCausalLM", "ThirdToyForCausalLM"]
    looped = text.replace('toy_all = ["@toy_archs"', 'toy_all = ["@toy_all"')
    with pytest.raises(LibraryError, match="toy_all -> toy_all names itself"):
        toy_sets(looped)
