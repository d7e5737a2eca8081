"""Shared by tests/test_rules_{quantization,dtype,speculative,lora}.py: tiny model folders, a check against
one rule file's sets, and the round trip a rule's test makes (broken -> unmet with its fix; the corrected
command meets every rule)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets
from logdoctor.library.rules import ConstraintSet

ALL_SETS = load_constraint_sets()


def family_sets(rules_file: str) -> list[ConstraintSet]:
    return [s for s in ALL_SETS if s.origin.endswith(rules_file)]


def model_dir(root: Path, **config: Any) -> Path:
    """A model folder with just a config.json (a Llama unless the test says otherwise)."""
    data: dict[str, Any] = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16"}
    data.update(config)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(data))
    return root


def check(
    sets: list[ConstraintSet], command: str, version: str = "0.33.0", env: dict[str, str] | None = None
) -> CheckReport:
    return run_check(shlex.split(command), version=version, environ=env or {}, sets=sets)


def status(report: CheckReport, rule_id: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule_id]
    assert found, f"{rule_id} not among {[r.id for r in report.audit.results]}"
    return found[0]


def assert_broken_and_fixed(
    sets: list[ConstraintSet], command: str, rule_id: str, fixed_part: str | None, version: str = "0.33.0"
) -> str:
    """The rule is unmet, the corrected command carries `fixed_part` (when given), and checked again it
    meets every rule of the family."""
    report = check(sets, command, version)
    assert status(report, rule_id) == "unmet", [(r.id, r.status, r.evidence) for r in report.audit.results]
    after = report.audit.after
    if fixed_part is not None:
        assert after is not None and fixed_part in after, after
    if after is not None:
        again = check(sets, after, version)
        assert not again.audit.unmet, [(r.id, r.evidence) for r in again.audit.unmet]
    return after or ""
