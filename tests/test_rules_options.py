"""The JSON config option rules (patterns/options-rules.toml): unknown keys, Literal choices, kv_role with
a kv_connector, the attention backend, each broken and kept, as vLLM's pydantic dataclasses take them.

Real vLLM 0.33.0 runs that confirm the boundaries (VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1, model
/work/vllm-models/llama-tiny; `accepted` = reached `Initializing a V1 LLM engine`):
  --compilation-config '{"levle": 3}'                     1 validation error for CompilationConfig / levle / Unexpected keyword argument
  --compilation-config.mode 7                             mode / Input should be 0, 1, 2 or 3
  -cc.mode 0 --load-format dummy                          accepted
  --kv-transfer-config '{"kv_connector": "NixlConnector"}'   Please specify kv_role when kv_connector is set, supported roles are ('kv_producer', 'kv_both', 'kv_consumer')
  --kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "both"}'   kv_role / Input should be 'kv_producer', 'kv_both' or 'kv_consumer'
  --structured-outputs-config '{"backend": "outlines2"}'  backend / Input should be 'auto', 'xgrammar', 'guidance', 'outlines' or 'lm-format-enforcer'
  --attention-backend FLASH_ATTN_V3                       Unknown attention backend: 'FLASH_ATTN_V3'. Valid options are: FLASH_ATTN, ...
(fixtures/battery/json-*.log; bench/battery/scenarios.toml)
"""

from __future__ import annotations

import json
import shlex

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets

SETS = [s for s in load_constraint_sets() if s.id.startswith("options-")]
MODEL = "org/model"


def check(args: list[str], version: str = "0.33.0") -> CheckReport:
    return run_check(["vllm", "serve", MODEL, *args], sets=SETS, environ={}, version=version)


def status(report: CheckReport, rule: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule]
    assert found, f"{rule} not in {[r.id for r in report.audit.results]}"
    return found[0]


def fixed_meets_all(report: CheckReport, version: str = "0.33.0") -> str:
    after = report.audit.after
    assert after is not None
    again = run_check(shlex.split(after), sets=SETS, environ={}, version=version)
    assert again.audit.unmet == [], [r.id for r in again.audit.unmet]
    return after


@pytest.mark.parametrize("version", ["0.27.0", "0.30.0", "0.33.0"])
def test_an_unknown_key_of_a_json_option(version: str) -> None:
    report = check(["--compilation-config", '{"levle": 3, "mode": 3}'], version)
    assert status(report, "compilation-config-known-keys") == "unmet"
    after = fixed_meets_all(report, version)
    assert "levle" not in after and '"mode": 3' in after.replace("'", '"')
    assert status(check(["--compilation-config", '{"mode": 3}'], version), "compilation-config-known-keys") == "met"


def test_the_compilation_mode() -> None:
    report = check(["--compilation-config", '{"mode": 7}'])
    assert status(report, "compilation-config-mode-choice") == "unmet"
    fixed_meets_all(report)
    for fine in ('{"mode": 0}', '{"mode": 3}', '{"mode": "VLLM_COMPILE"}', '{"mode": "none"}'):
        assert status(check(["--compilation-config", fine]), "compilation-config-mode-choice") == "met"
    assert status(check(["--compilation-config.mode", "7"]), "compilation-config-mode-choice") == "unmet"


def test_kv_role_is_required_with_a_kv_connector_and_one_of_the_roles() -> None:
    missing = check(["--kv-transfer-config", '{"kv_connector": "NixlConnector"}'])
    assert status(missing, "kv-transfer-config-kv-role-given") == "unmet"
    assert "kv_both" in fixed_meets_all(missing)
    wrong = check(["--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "both"}'])
    assert status(wrong, "kv-transfer-config-kv-role-choice") == "unmet"
    assert "kv_both" in fixed_meets_all(wrong)
    right = check(["--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_consumer"}'])
    assert right.audit.unmet == []


def test_a_literal_choice_of_another_option() -> None:
    report = check(["--structured-outputs-config", '{"backend": "outlines2"}'])
    assert status(report, "structured-outputs-config-backend-choice") == "unmet"
    (rule,) = [r for r in report.audit.results if r.id == "structured-outputs-config-backend-choice"]
    assert "Input should be 'auto', 'xgrammar', 'guidance', 'outlines' or 'lm-format-enforcer'" in rule.vllm_message
    fixed_meets_all(report)
    assert check(["--structured-outputs-config", '{"backend": "outlines"}']).audit.unmet == []


def test_the_attention_backend() -> None:
    report = check(["--attention-backend", "FLASH_ATTN_V3"])
    assert status(report, "attention-backend-known") == "unmet"
    assert "--attention-backend" not in fixed_meets_all(report)
    for fine in ("FLASH_ATTN", "flash_attn", "auto", "TRITON_ATTN"):
        assert status(check(["--attention-backend", fine]), "attention-backend-known") == "met"
    config = check(["--attention-config", json.dumps({"backend": "NOPE"})])
    assert status(config, "attention-config-backend-known") == "unmet"
    fixed_meets_all(config)


def test_a_launch_without_json_options_is_not_audited() -> None:
    report = check(["--load-format", "dummy"])
    assert report.audit.sets == [] and report.audit.results == []


def test_a_log_does_not_get_the_option_sets() -> None:
    from logdoctor.audit import audit, fill_defaults
    from logdoctor.launch.config import LaunchConfig, Origin

    config = LaunchConfig()
    where = Origin(kind="log", where="server.log:1")
    config.set("model", MODEL, where, given=True)
    config.set("compilation_config", {"levle": 3}, where, given=True)
    fill_defaults(config, "0.33.0", "absent from the log's non-default args")
    assert audit(config, SETS, "0.33.0").sets == []
    # unless vLLM raised one of their rules: then the set is checked, that rule unmet
    raised = audit(config, SETS, "0.33.0", raised_pattern="config.field-unknown-key")
    assert "compilation-config-known-keys" in {r.id for r in raised.unmet}
