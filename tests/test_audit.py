"""audit.py: a launch against every constraint set that applies, and one corrected command for all."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from logdoctor.audit import Audit, audit, set_label
from logdoctor.check import build_config
from logdoctor.library.loader import load_constraint_sets
from logdoctor.library.rules import ConstraintSet

SPEC = '{"method":"ngram","num_speculative_tokens":3}'


@pytest.fixture(scope="module")
def sets() -> list[ConstraintSet]:
    return load_constraint_sets()


def _audit(sets: list[ConstraintSet], *flags: str, architecture: str = "NemotronHForCausalLM", **kw: Any) -> Audit:
    config, problems = build_config(["vllm", "serve", "nvidia/Nemotron-H-8B", *flags], None, "0.33.0", architecture, {})
    assert problems == []
    return audit(config, sets, "0.33.0", **kw)


def test_every_broken_rule_is_reported_and_one_command_fixes_them_all(sets: list[ConstraintSet]) -> None:
    result = _audit(sets, "--use-replayssm", "--speculative-config", SPEC)
    # `check` reads the launch where the server runs, so the sets of the environment and the model
    # folder, and the config classes' field ranges, apply to every launch it reads (a log's audit lists
    # them only where the launch breaks them); the launch's speculative
    # decoding has its own set, whose rules it meets
    assert result.sets == [
        "Environment variables (VLLM_*), vLLM >=0.33",
        "The model folder (MODEL, config.json, architecture), vLLM >=0.33",
        "Field ranges of vLLM's config classes, vLLM >=0.33",
        "ReplaySSM (--use-replayssm), vLLM >=0.33",
        "Speculative decoding (--speculative-config), vLLM >=0.33",
    ]
    assert sorted(r.id for r in result.unmet) == ["spec-decode-needs-flashinfer", "spec-decode-no-prefix-caching"]
    assert all(r.fix for r in result.unmet)
    assert result.before == f"vllm serve nvidia/Nemotron-H-8B --use-replayssm --speculative-config '{SPEC}'"
    assert result.after is not None
    assert result.after.startswith(result.before)
    assert "--no-enable-prefix-caching" in result.after and "--mamba-backend flashinfer" in result.after
    assert result.unresolved == []
    # The corrected command, audited again, breaks nothing.
    config, problems = build_config(shlex.split(result.after), None, "0.33.0", "NemotronHForCausalLM", {})
    again = audit(config, sets, "0.33.0")
    assert problems == [] and again.unmet == [] and again.after is None


def test_a_launch_without_the_feature_is_not_audited(sets: list[ConstraintSet]) -> None:
    result = _audit(sets, architecture="LlamaForCausalLM")
    assert "ReplaySSM (--use-replayssm), vLLM >=0.33" not in result.sets
    assert not any(r.set.startswith("ReplaySSM") for r in result.results)
    assert result.unmet == [] and result.after is None


def test_the_rule_vllm_raised_is_unmet_whatever_the_log_lets_logdoctor_see(sets: list[ConstraintSet]) -> None:
    (cset,) = [s for s in sets if set_label(s) == "ReplaySSM (--use-replayssm), vLLM >=0.33"]
    rule = next(r for r in cset.rule if r.patterns)
    result = _audit(sets, "--use-replayssm", raised_pattern=rule.patterns[0])
    raised = [r for r in result.results if r.raised_by_vllm]
    assert [r.id for r in raised] == [rule.id]
    assert raised[0].status == "unmet" and raised[0].evidence[0] == "vLLM raised this rule's error in the log"


def test_a_launch_that_cannot_be_rendered_gets_rules_but_no_command(sets: list[ConstraintSet]) -> None:
    # A log whose arguments were read only in part: the rules still hold, a command would be a guess.
    result = _audit(sets, "--use-replayssm", "--speculative-config", SPEC, renderable=False)
    assert result.unmet and result.before is None and result.after is None
