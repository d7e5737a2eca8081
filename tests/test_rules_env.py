"""The environment-variable rules (patterns/env-rules.toml): each broken and kept, as vLLM reads them.

Real vLLM 0.33.0 runs that confirm the boundaries (VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1, model
/work/vllm-models/llama-tiny; `accepted` = reached `Initializing a V1 LLM engine`):
  VLLM_PORT=tcp://10.96.0.12:8000 ... -dp 2      VLLM_PORT 'tcp://10.96.0.12:8000' appears to be a URI. This may be caused by a Kubernetes service discovery issue,check the warning in: ...
  VLLM_PORT=eight-thousand ... -dp 2             VLLM_PORT 'eight-thousand' must be a valid integer
  VLLM_ATTENTION_BACKEND=FLASH_ATTN ... --fail-on-environ-validation   Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND
  VLLM_USE_V1=1 ... --load-format dummy          accepted (only a warning: Unknown vLLM environment variable detected: VLLM_USE_V1)
  VLLM_CPU_KVCACHE_SPACE=4GB ...                 invalid literal for int() with base 10: '4GB'
  VLLM_ALLOW_LONG_MAX_MODEL_LENGTH=1 ... --max-model-len 4096   User-specified max_model_len (4096) is greater than the derived max_model_len ...
(fixtures/battery/env-*.log; bench/battery/scenarios.toml)
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets

SETS = [s for s in load_constraint_sets() if s.id.startswith("env-")]
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "max_position_embeddings": 2048}


@pytest.fixture
def model(tmp_path: Path) -> str:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(LLAMA))
    return str(tmp_path / "m")


def check(args: list[str], environ: dict[str, str], version: str = "0.33.0") -> CheckReport:
    return run_check(["vllm", "serve", *args], sets=SETS, environ=environ, version=version)


def status(report: CheckReport, rule: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule]
    assert found, f"{rule} not in {[r.id for r in report.audit.results]}"
    return found[0]


@pytest.mark.parametrize("version", ["0.27.0", "0.31.0", "0.33.0"])
def test_unknown_vllm_variables_fail_only_with_fail_on_environ_validation(model: str, version: str) -> None:
    environ = {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}
    report = check([model, "--fail-on-environ-validation"], environ, version)
    assert status(report, "known-vllm-variables") == "unmet"
    assert any("VLLM_ATTENTION_BACKEND" in e for r in report.audit.unmet for e in r.evidence)
    after = report.audit.after or ""
    assert after and "--fail-on-environ-validation" not in after
    assert check(shlex.split(after), environ, version).audit.unmet == []
    # without the flag vLLM only warns; a variable it reads is fine with the flag
    assert status(check([model], environ, version), "known-vllm-variables") == "met"
    assert (
        status(check([model, "--fail-on-environ-validation"], {"VLLM_PORT": "8000"}, version), "known-vllm-variables")
        == "met"
    )


def test_a_misspelt_allow_long_max_model_len(model: str) -> None:
    typo = {"VLLM_ALLOW_LONG_MAX_MODEL_LENGTH": "1"}
    report = check([model, "--max-model-len", "4096"], typo)
    assert status(report, "allow-long-max-model-len-spelled-right") == "unmet"
    after = report.audit.after or ""
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in after
    assert check(shlex.split(after), typo).audit.unmet == []
    # within the model's length, or spelled right: nothing to say
    assert status(check([model, "--max-model-len", "1024"], typo), "allow-long-max-model-len-spelled-right") == "met"
    right = {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    assert status(check([model, "--max-model-len", "4096"], right), "allow-long-max-model-len-spelled-right") == "met"


def test_vllm_port(model: str) -> None:
    uri = check([model], {"VLLM_PORT": "tcp://10.96.0.12:8000"})
    assert status(uri, "vllm-port-not-a-uri") == "unmet" and status(uri, "vllm-port-an-integer") == "met"
    word = check([model], {"VLLM_PORT": "eight-thousand"})
    assert status(word, "vllm-port-an-integer") == "unmet" and status(word, "vllm-port-not-a-uri") == "met"
    for fine in ({"VLLM_PORT": "8000"}, {"VLLM_PORT": " 8000 "}, {}):
        report = check([model], fine)
        assert status(report, "vllm-port-an-integer") == "met" and status(report, "vllm-port-not-a-uri") == "met"


def test_cpu_kvcache_space_on_the_cpu_platform(model: str) -> None:
    report = check([model], {"VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "4GB"})
    assert status(report, "cpu-kvcache-space-an-integer") == "unmet"
    assert (
        status(
            check([model], {"VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "4"}), "cpu-kvcache-space-an-integer"
        )
        == "met"
    )
    # on a GPU platform vLLM never reads it there; with no VLLM_TARGET_DEVICE the platform is not known
    assert (
        status(
            check([model], {"VLLM_TARGET_DEVICE": "cuda", "VLLM_CPU_KVCACHE_SPACE": "4GB"}),
            "cpu-kvcache-space-an-integer",
        )
        == "met"
    )


def test_every_int_and_float_variable(model: str) -> None:
    (env,) = [s for s in SETS if s.id == "env-0.33"]
    ints = next(g for g in env.env_group if g.field == "int_variables").names
    floats = next(g for g in env.env_group if g.field == "float_variables").names
    assert "VLLM_BATCH_INVARIANT" in ints and "VLLM_LOG_BATCHSIZE_INTERVAL" in floats
    name = next(n for n in ints if n.startswith("VLLM_") and n not in ("VLLM_CPU_KVCACHE_SPACE", "VLLM_PORT"))
    assert status(check([model], {name: "12x"}), "int-variables-hold-integers") == "unmet"
    assert status(check([model], {name: "-12"}), "int-variables-hold-integers") == "met"
    assert status(check([model], {"VLLM_LOG_BATCHSIZE_INTERVAL": "often"}), "float-variables-hold-numbers") == "unmet"
    for number in ("1.5", "-2", "1e3", ".5", "inf"):
        assert status(check([model], {"VLLM_LOG_BATCHSIZE_INTERVAL": number}), "float-variables-hold-numbers") == "met"


def test_a_variable_with_choices(model: str) -> None:
    bad = check([model], {"VLLM_FLOAT32_MATMUL_PRECISION": "ultra"})
    assert status(bad, "choice-vllm-float32-matmul-precision") == "unmet"
    # case-insensitive for this one (env_with_choices(..., case_sensitive=False))
    assert (
        status(check([model], {"VLLM_FLOAT32_MATMUL_PRECISION": "HIGH"}), "choice-vllm-float32-matmul-precision")
        == "met"
    )


def test_a_plain_environment_meets_every_rule(model: str) -> None:
    report = check([model], {"VLLM_USE_V1": "1"})  # unknown, but only warned about
    assert report.audit.unmet == []
    assert {r.status for r in report.audit.results} <= {"met", "unknown"}
    assert [r.id for r in report.audit.results if r.status == "unknown"] == []


def test_the_cpu_rule_is_unknown_without_the_platform(model: str) -> None:
    report = check([model], {"VLLM_CPU_KVCACHE_SPACE": "4GB"})
    unknown = {r.id: r.reveal or "" for r in report.audit.results if r.status == "unknown"}
    assert "VLLM_TARGET_DEVICE=cpu" in unknown["cpu-kvcache-space-an-integer"]
    assert report.audit.unmet == []
