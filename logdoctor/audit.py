"""Audit a launch against every constraint set that applies: each rule's status, and one corrected
command that meets them all. Used by `logdoctor check` (a command line) and by diagnosis (a log)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from logdoctor.launch.argspec import load_spec
from logdoctor.launch.cmdline import render_command
from logdoctor.launch.config import LaunchConfig, Origin, Setting
from logdoctor.library.constraints import active, check_set, choose_fix, derive, plan_fix, sets_for
from logdoctor.library.rules import ConstraintSet


@dataclass
class RuleResult:
    """One rule's status: the fields of model.ConstraintResult, which a finding carries (`check` prints
    these without building pydantic models: its start should not pay for importing pydantic)."""

    set: str
    id: str
    status: Literal["met", "unmet", "unknown"]
    says: str
    vllm_message: str
    fix: str | None = None
    evidence: list[str] = field(default_factory=list)
    reveal: str | None = None
    note: str | None = None
    raised_by_vllm: bool = False
    after_validation: bool = False  # the rule's stage is `engine`: vLLM raises it after config validation


@dataclass
class Audit:
    results: list[RuleResult] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    before: str | None = None  # the launch as a command line
    after: str | None = None  # the corrected command, when a rule is unmet
    unresolved: list[str] = field(default_factory=list)  # rules the corrected command still breaks
    # What the corrected command gives up or leaves open (flags it drops, values it could not compute,
    # rules left unknown and what would reveal them): Fix.caveats of a finding.
    caveats: list[str] = field(default_factory=list)
    # The rules vLLM raised whose fix needs a value the launch does not reveal (a length config.json
    # gives): the corrected command leaves them as they are.
    raised_unfixed: list[str] = field(default_factory=list)

    @property
    def unmet(self) -> list[RuleResult]:
        return [r for r in self.results if r.status == "unmet"]


def fill_defaults(config: LaunchConfig, version: str | None, why: str, skip: frozenset[str] = frozenset()) -> None:
    """Arguments nobody set are at vLLM's default for the running version (from its own parser): every
    argument, so a rule on any of them reads "left at default" rather than "unknown", with no list of
    the arguments rules read to keep in step with the rules. `skip`: arguments a launch has no default
    for where it is read (a `vllm serve` command without MODEL is refused: it serves no default model)."""
    for dest, setting in _defaults(version, why):
        if dest not in skip:
            config.use_default(dest, setting)


@lru_cache(maxsize=64)
def _defaults(version: str | None, why: str) -> tuple[tuple[str, Setting], ...]:
    """The default Settings of a version, made once: every finding of a launch fills them (a Setting is
    frozen, so configs share them)."""
    spec = load_spec(version)
    origin = Origin(kind="default", where=f"vLLM {spec.vllm_version} default ({why})")
    return tuple((dest, Setting(value=arg.default, origin=origin)) for dest, arg in spec.by_dest.items())


def set_label(cset: ConstraintSet) -> str:
    return f"{cset.feature}, vLLM {cset.versions}"


def audit(
    config: LaunchConfig,
    sets: list[ConstraintSet],
    version: str | None,
    raised_pattern: str | None = None,
    renderable: bool = True,
    raised_message: str | None = None,
) -> Audit:
    result = Audit()
    chosen = sets_for(sets, version, raised_pattern, raised_message)
    fixed = config.copy_deep()
    changed = False
    for cset in chosen:
        raised = frozenset(r.id for r in cset.rule if raised_pattern is not None and raised_pattern in r.patterns)
        state = active(cset, config)
        if (state is False or (cset.strict_active and state is not True)) and not raised:
            continue
        outcomes = check_set(cset, config)
        # A log's error belongs to one feature: its set is listed whole. Another feature's set shows
        # only what the launch breaks there too (one restart fixes all); its met and unknown rules say
        # nothing about this failure. `check` asks about the whole launch: every set, whole.
        whole = bool(raised) or raised_pattern is None
        listed = [o for o in outcomes if whole or o.status == "unmet"]
        if listed:
            result.sets.append(set_label(cset))
        context = derive(cset, config)
        for outcome in listed:
            rule = outcome.rule
            was_raised = rule.id in raised
            status = "unmet" if was_raised else outcome.status
            fix = choose_fix(rule, context).says if status == "unmet" else None
            evidence = list(outcome.evidence)
            if was_raised:
                evidence.insert(0, "vLLM raised this rule's error in the log")
            result.results.append(
                RuleResult(
                    set=set_label(cset),
                    id=rule.id,
                    status=status,  # type: ignore[arg-type]
                    says=rule.says,
                    vllm_message=rule.vllm_message,
                    fix=fix,
                    evidence=evidence,
                    reveal=outcome.reveal if status == "unknown" else None,
                    note=rule.note,
                    raised_by_vllm=was_raised,
                    after_validation=rule.stage == "engine",
                )
            )
        plan = plan_fix(cset, fixed, raised)
        changed = changed or bool(plan.applied)
        fixed = plan.config
        result.raised_unfixed += sorted(raised & plan.uncomputed)
        result.caveats += [c for c in plan.caveats if c not in result.caveats]
        result.unresolved += [f"{set_label(cset)}: {o.rule.id}" for o in plan.outcomes if o.status == "unmet"]
    if renderable and config.get("model") is not None:
        result.before = render_command(config, version)
        after = render_command(fixed, version) if changed else None
        # A plan whose fixes could change nothing (their values unknown) has no corrected command: its
        # caveats say why.
        result.after = after if after != result.before else None
    return result
