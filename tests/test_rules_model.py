"""The model-folder rules (patterns/model-rules.toml): for each rule a launch that breaks it (unmet, the
fix in the corrected command, which meets every rule), one on the other side of the boundary (met), and
unknown with what would reveal it when the model's folder is not here.

Real vLLM 0.33.0 runs that confirm the boundaries (VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1, from a scratch
folder; `accepted` = reached `Initializing a V1 LLM engine`):
  vllm serve /work/vllm-models/no-such-model            Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/work/vllm-models/no-such-model'. ...
  vllm serve ./no-such-model                            Repo id must use alphanumeric chars, '-', '_' or '.'. ... : './no-such-model'.
  vllm serve <empty folder>                             Invalid repository ID or local directory specified: '<folder>'.
  vllm serve Qwen/Qwen2.5-0.5B-Instruct (not cached)    Cannot find an appropriate cached snapshot folder ... outgoing traffic has been disabled. ...
  vllm serve /work/vllm-models/llama-tiny-badconfig     It looks like the config file at '.../config.json' is not a valid JSON file.
  vllm serve /work/vllm-models/llama-tiny-unknown-arch  Model architectures ['FooBarForCausalLM'] are not supported for now. ...
  vllm serve /work/vllm-models/tiny-unknown-model-type  The checkpoint you are trying to load has model type `foobar` but Transformers does not recognize this architecture. ...
  vllm serve /work/vllm-models/tiny-custom-code         The repository /work/vllm-models/tiny-custom-code contains custom code which must be executed ...
  vllm serve /work/vllm-models/bert-tiny --runner generate   Embedding models do not support `--runner generate`. ...
  vllm serve /work/vllm-models/bert-tiny --runner pooling --load-format dummy   accepted
  vllm serve /work/vllm-models/llama-tiny --tokenizer /work/vllm-models/no-such-tokenizer   Repo id must be in the form ... '/work/vllm-models/no-such-tokenizer'. ...
(fixtures/battery/model-*.log, tok-tokenizer-dir-missing.log, and bench/battery/scenarios.toml)
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets

ALL = load_constraint_sets()
SETS = [s for s in ALL if s.id.startswith("model-")]
VERSIONS = ["0.27.0", "0.30.0", "0.33.0"]
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "max_position_embeddings": 2048}


def folder(root: Path, config: dict[str, object] | str | None = None, name: str = "m") -> Path:
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (path / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    return path


def check(args: list[str], environ: dict[str, str] | None = None, version: str = "0.33.0") -> CheckReport:
    return run_check(["vllm", "serve", *args], sets=SETS, environ=environ or {}, version=version)


def status(report: CheckReport, rule: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule]
    assert found, f"{rule} not in {[r.id for r in report.audit.results]}"
    return found[0]


def fixed_meets_all(report: CheckReport, environ: dict[str, str] | None = None, version: str = "0.33.0") -> None:
    assert report.audit.after is not None
    again = run_check(shlex.split(report.audit.after), sets=SETS, environ=environ or {}, version=version)
    assert again.audit.unmet == [], [r.id for r in again.audit.unmet]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_model_path_that_does_not_exist(tmp_path: Path, version: str) -> None:
    report = check([str(tmp_path / "models" / "no-such-model")], version=version)
    assert status(report, "model-path-exists") == "unmet"
    assert status(report, "model-name-valid") == "met"  # the other message's branch
    assert status(check([str(folder(tmp_path, LLAMA))], version=version), "model-path-exists") == "met"


def test_a_name_that_is_no_path_and_no_repo_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert status(check(["./no-such-model"]), "model-name-valid") == "unmet"
    assert status(check(["model."]), "model-name-valid") == "unmet"
    assert status(check(["org--x/model"]), "model-name-valid") == "unmet"
    for fine in ("Qwen/Qwen2.5-0.5B-Instruct", "gpt2", "s3://bucket/model"):
        assert status(check([fine]), "model-name-valid") == "met"


def test_a_repo_id_not_in_the_cache_when_offline(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    offline = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub)}
    report = check(["org/model"], offline)
    assert status(report, "model-cached-when-offline") == "unmet"
    assert "HF_HUB_OFFLINE=0" in (report.audit.after or "")
    assert (
        status(
            check(["org/model"], {"TRANSFORMERS_OFFLINE": "yes", "HF_HUB_CACHE": str(hub)}), "model-cached-when-offline"
        )
        == "unmet"
    )
    # online (or HF_HUB_OFFLINE=0): vLLM downloads it
    assert status(check(["org/model"], {"HF_HUB_CACHE": str(hub)}), "model-cached-when-offline") == "met"
    assert status(check(["org/model"], offline | {"HF_HUB_OFFLINE": "0"}), "model-cached-when-offline") == "met"
    # in the cache: met, and its config.json is read
    snapshot = folder(hub / "models--org--model" / "snapshots", LLAMA, "abc")
    (hub / "models--org--model" / "refs").mkdir()
    (hub / "models--org--model" / "refs" / "main").write_text(snapshot.name)
    report = check(["org/model"], offline)
    assert status(report, "model-cached-when-offline") == "met"
    assert status(report, "architecture-supported") == "met"


def test_a_folder_without_config_json(tmp_path: Path) -> None:
    empty = folder(tmp_path, None, "empty")
    assert status(check([str(empty)]), "model-folder-has-config") == "unmet"
    (empty / "params.json").write_text("{}")  # a Mistral-format folder
    assert status(check([str(empty)]), "model-folder-has-config") == "met"
    assert status(check([str(folder(tmp_path, LLAMA))]), "model-folder-has-config") == "met"


def test_a_config_json_that_is_not_json(tmp_path: Path) -> None:
    bad = folder(tmp_path, '{\n  "architectures": ["LlamaForCausalLM"],\n}', "bad")
    assert status(check([str(bad)]), "config-json-parses") == "unmet"
    assert status(check([str(folder(tmp_path, LLAMA))]), "config-json-parses") == "met"


@pytest.mark.parametrize("version", VERSIONS)
def test_custom_code_needs_trust_remote_code(tmp_path: Path, version: str) -> None:
    custom = folder(tmp_path, LLAMA | {"model_type": "tinycustom", "auto_map": {"AutoConfig": "c.TinyConfig"}})
    report = check([str(custom)], version=version)
    assert status(report, "custom-code-trusted") == "unmet"
    assert "--trust-remote-code" in (report.audit.after or "")
    fixed_meets_all(report, version=version)
    # a model type transformers knows needs no remote code
    known = folder(tmp_path, LLAMA | {"auto_map": {"AutoConfig": "c.LlamaConfig"}}, "known")
    assert status(check([str(known)], version=version), "custom-code-trusted") == "met"


def test_a_model_type_transformers_does_not_know(tmp_path: Path) -> None:
    unknown = folder(tmp_path, LLAMA | {"model_type": "foobar"})
    assert status(check([str(unknown)]), "model-type-known") == "unmet"
    assert status(check([str(folder(tmp_path, LLAMA, "llama"))]), "model-type-known") == "met"
    # vLLM's own config registry counts too
    assert status(check([str(folder(tmp_path, LLAMA | {"model_type": "chatglm"}, "glm"))]), "model-type-known") == "met"


@pytest.mark.parametrize("version", VERSIONS)
def test_an_architecture_the_registry_does_not_have(tmp_path: Path, version: str) -> None:
    foobar = folder(tmp_path, LLAMA | {"architectures": ["FooBarForCausalLM"]})
    assert status(check([str(foobar)], version=version), "architecture-supported") == "unmet"
    # model_impl transformers is another path; custom code with an AutoModel can serve it
    assert (
        status(check([str(foobar), "--model-impl", "transformers"], version=version), "architecture-supported") == "met"
    )
    automodel = LLAMA | {"architectures": ["FooBarForCausalLM"], "auto_map": {"AutoModelForCausalLM": "m.FooBar"}}
    assert status(check([str(folder(tmp_path, automodel, "auto"))], version=version), "architecture-supported") == "met"
    # a registry architecture with another suffix is mapped to it (LlamaForCausalLM -> LlamaForTokenClassification)
    swapped = folder(tmp_path, LLAMA | {"architectures": ["LlamaForTokenClassification"]}, "swap")
    assert status(check([str(swapped)], version=version), "architecture-supported") == "met"
    # --hf-overrides changes it as vLLM applies them
    overridden = [str(foobar), "--hf-overrides", '{"architectures": ["LlamaForCausalLM"]}']
    assert status(check(overridden, version=version), "architecture-supported") == "met"


def test_removed_and_moved_architectures() -> None:
    (model,) = [s for s in SETS if s.id == "model-0.33"]
    removed = next(r for r in model.rule if r.id == "architecture-not-removed")
    assert removed.require.any is not None and "MotifForCausalLM" in removed.require.any[0].value


def test_an_embedding_model_run_with_the_generate_runner(tmp_path: Path) -> None:
    bert = folder(tmp_path, {"architectures": ["BertModel"], "model_type": "bert", "max_position_embeddings": 512})
    report = check([str(bert), "--runner", "generate"])
    assert status(report, "runner-pooling-for-embedding-models") == "unmet"
    assert "--runner pooling" in (report.audit.after or "")
    fixed_meets_all(report)
    for fine in ("pooling", "auto"):
        assert status(check([str(bert), "--runner", fine]), "runner-pooling-for-embedding-models") == "met"
    # a generative model's embedding entry (LlamaModel is LlamaForCausalLM) generates as well
    llama_model = folder(tmp_path, LLAMA | {"architectures": ["LlamaModel"]}, "lm")
    assert status(check([str(llama_model), "--runner", "generate"]), "runner-pooling-for-embedding-models") == "met"


def test_without_the_model_folder_its_rules_are_unknown_and_say_what_would_reveal_them(tmp_path: Path) -> None:
    report = check(["org/not-here"], {"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert report.audit.unmet == []
    unknown = {r.id: r.reveal or "" for r in report.audit.results if r.status == "unknown"}
    assert "the model's config.json" in unknown["architecture-supported"]
    assert "model-type-known" in unknown and "custom-code-trusted" in unknown


def test_a_plain_launch_meets_every_model_rule(tmp_path: Path) -> None:
    report = check([str(folder(tmp_path, LLAMA)), "--load-format", "dummy"])
    assert report.audit.unmet == [] and {r.status for r in report.audit.results} == {"met"}


def test_a_log_does_not_get_the_model_folder_sets() -> None:
    from logdoctor.audit import audit
    from logdoctor.launch.config import LaunchConfig, Origin

    config = LaunchConfig()
    config.set("model", "org/model", Origin(kind="log", where="server.log:1"), given=True)
    assert audit(config, SETS, "0.33.0").sets == []
