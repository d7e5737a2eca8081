"""Three-valued evaluation of constraint sets against a LaunchConfig, and the fix that meets them all."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.library.rules import Condition, ConstraintSet, Derivation, FixOption, Rule
from logdoctor.versions import in_range, parse_version

Truth = bool | None  # None: unknown

_MISSING = object()
_ORDER = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le}
MAX_FIX_ROUNDS = 6

# What would reveal a value the log did not show (said with every "unknown").
REVEALED_BY: dict[str, str] = {
    "architecture": "the log's `Resolved architecture:` line, `--architecture`, or a local model folder",
    "vllm_version": "the log's version line, or `--vllm-version`",
    "use_v2_model_runner": "VLLM_USE_V2_MODEL_RUNNER in the environment, or a log line naming the model runner",
    "num_attention_heads": "the model's config.json (a local model folder)",
    "mamba_num_heads": "the model's config.json: pass a local model folder as MODEL",
    "kv_connector": "the launch's --kv-transfer-config (the log's `non-default args` line)",
    "kv_role": "the launch's --kv-transfer-config (the log's `non-default args` line)",
    "num_speculative_tokens": "the launch's --speculative-config (the log's `non-default args` line)",
}


def lookup(config: LaunchConfig, name: str) -> Any:
    """A field's value, `_MISSING` when unknown. Dotted names read into dict values."""
    head, _, rest = name.partition(".")
    if head == "env":
        setting = config.env.get(rest)
        return _MISSING if setting is None else setting.value
    setting = config.get(head)
    if setting is None:
        return _MISSING
    value = setting.value
    for key in rest.split(".") if rest else []:
        if value is None:
            return None
        if not isinstance(value, dict):
            return _MISSING
        value = value.get(key)
    return value


def _compare(op: str, actual: Any, expected: Any) -> Truth:
    try:
        if op == "eq":
            return bool(actual == expected)
        if op == "ne":
            return bool(actual != expected)
        if op == "in":
            return bool(actual in expected)
        if op == "not_in":
            return bool(actual not in expected)
        if op == "is_null":
            return actual is None
        if op == "not_null":
            return actual is not None
        if actual is None or expected is None:
            return False
        if op == "multiple_of":
            return bool(expected) and bool(actual % expected == 0)
        return bool(_ORDER[op](actual, expected))
    except TypeError:
        return None


def evaluate(condition: Condition, config: LaunchConfig) -> Truth:
    if condition.all is not None:
        results = [evaluate(c, config) for c in condition.all]
        return False if False in results else (None if None in results else True)
    if condition.any is not None:
        results = [evaluate(c, config) for c in condition.any]
        return True if True in results else (None if None in results else False)
    if condition.not_ is not None:
        inner = evaluate(condition.not_, config)
        return None if inner is None else not inner
    assert condition.field is not None and condition.op is not None
    actual = lookup(config, condition.field)
    if actual is _MISSING:
        return None
    expected = condition.value
    if condition.value_from is not None:
        base = lookup(config, condition.value_from)
        if base is _MISSING:
            return None
        expected = None if base is None else base + condition.offset
    return _compare(condition.op, actual, expected)


def resolve_value(spec: Any, config: LaunchConfig) -> Any:
    """A fix or derivation value: a literal, or computed from the config:
    `{from = field, offset = n}`, or `{from = field, divisor_at_most = other}` (the largest divisor of
    `field` not above `other`: a tensor-parallel size that divides a head count)."""
    if not (isinstance(spec, dict) and "from" in spec and set(spec) <= {"from", "offset", "divisor_at_most"}):
        return spec
    base = lookup(config, spec["from"])
    if base is _MISSING:
        return _MISSING
    if base is None:
        # Known to be absent (no --kv-transfer-config, so no kv_connector); arithmetic on it is unknown.
        plain = not spec.get("offset") and "divisor_at_most" not in spec
        return None if plain else _MISSING
    if "divisor_at_most" in spec:
        limit = lookup(config, spec["divisor_at_most"])
        if limit is _MISSING or not isinstance(limit, int) or not isinstance(base, int) or limit < 1:
            return _MISSING
        return next(d for d in range(min(limit, base), 0, -1) if base % d == 0)
    offset = spec.get("offset", 0)
    if not offset:
        return base
    if isinstance(base, bool) or not isinstance(base, int | float):
        return _MISSING  # arithmetic on a value that is not a number: vLLM would reject it elsewhere
    result = base + offset
    return int(result) if isinstance(result, float) and result.is_integer() else result


def derive(cset: ConstraintSet, config: LaunchConfig) -> LaunchConfig:
    """What vLLM resolves before it validates, applied to a copy of the launch."""
    derived = config.copy_deep()
    for step in cset.derive:
        _apply_derivation(step, derived)
    return derived


def _apply_derivation(step: Derivation, config: LaunchConfig) -> None:
    if step.only_if_unknown and lookup(config, step.field) is not _MISSING:
        return
    holds = True if step.when is None else evaluate(step.when, config)
    if holds is False:
        return
    spec = step.value_from.spec() if step.value_from is not None else step.value
    value = resolve_value(spec, config)
    if holds is None or value is _MISSING:
        if lookup(config, step.field) != value:
            config.unset(step.field)  # vLLM may or may not change it: unknown from here on
        return
    config.set(step.field, value, Origin(kind="derived", where=step.says))


def active(cset: ConstraintSet, config: LaunchConfig) -> Truth:
    return evaluate(cset.active, derive(cset, config))


@dataclass
class RuleOutcome:
    rule: Rule
    status: str  # met | unmet | unknown
    evidence: list[str] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)

    @property
    def reveal(self) -> str | None:
        if not self.unknown_fields:
            return None
        return "; ".join(
            f"{name}: {REVEALED_BY.get(name, 'not in the log or command')}" for name in self.unknown_fields
        )


def check_rule(rule: Rule, config: LaunchConfig) -> RuleOutcome:
    branch = True if rule.when is None else evaluate(rule.when, config)
    names = sorted(rule.require.fields() | (rule.when.fields() if rule.when else set()))
    evidence, unknown = [], []
    for name in names:
        value = lookup(config, name)
        if value is _MISSING:
            unknown.append(name)
            continue
        setting = config.get(name.split(".")[0]) if not name.startswith("env.") else config.env.get(name[4:])
        where = f" ({setting.origin.where})" if setting is not None else ""
        evidence.append(f"{name} = {value!r}{where}")
    if branch is False:
        return RuleOutcome(rule, "met", ["does not apply: " + ", ".join(evidence)] if evidence else [], [])
    required = evaluate(rule.require, config)
    if required is True:
        status = "met"
    elif required is False:
        status = "unmet" if branch is True else "unknown"
    else:
        status = "unknown"
    return RuleOutcome(rule, status, evidence, unknown if status == "unknown" else [])


def check_set(cset: ConstraintSet, config: LaunchConfig) -> list[RuleOutcome]:
    derived = derive(cset, config)
    return [check_rule(rule, config if rule.stage == "arguments" else derived) for rule in cset.rule]


def _branch_applies(rule: Rule, config: LaunchConfig) -> bool:
    return rule.when is None or evaluate(rule.when, config) is True


def choose_fix(rule: Rule, context: LaunchConfig) -> FixOption:
    """The first fix option whose `when` holds for this launch (unknown counts as not holding)."""
    for option in rule.fix:
        if option.when is None or evaluate(option.when, context) is True:
            return option
    return rule.fix[-1]


def apply_fix(option: FixOption, config: LaunchConfig, context: LaunchConfig) -> None:
    """Change the launch as the fix says; `{from = ...}` values are read from `context`, the launch as
    vLLM resolves it (derived facts such as num_speculative_tokens live there)."""
    origin = Origin(kind="command", where=f"logdoctor fix: {option.says}")
    for name in option.unset:
        config.unset(name)
    for name, spec in option.set.items():
        value = resolve_value(spec, context)
        if value is _MISSING:
            continue
        head, _, key = name.partition(".")
        if key and head != "env":
            # A key inside a JSON option: `speculative_config.num_speculative_tokens = 15`.
            current = config.value(head)
            value = {**(current if isinstance(current, dict) else {}), key: value}
            name = head
        config.set(name, value, origin, given=not name.startswith("env."))


@dataclass
class FixPlan:
    config: LaunchConfig  # the launch with every applied fix
    applied: list[tuple[Rule, FixOption]]
    outcomes: list[RuleOutcome]  # the rules re-checked on the fixed launch


def plan_fix(cset: ConstraintSet, config: LaunchConfig, broken: frozenset[str] = frozenset()) -> FixPlan:
    """Apply the fix of every unmet rule, re-derive, repeat until nothing more is unmet.

    `broken` names rules known to be unmet whatever the evaluation says (vLLM raised them in the log).
    A rule that applies to the launch but reads a value nobody revealed (the environment's model
    runner, when reading a log) is pinned by its fix as well, once something has to change anyway, so
    the corrected command does not trade one error for the next. Fixes whose value cannot be computed
    change nothing.
    """
    fixed = config.copy_deep()
    applied: list[tuple[Rule, FixOption]] = []
    pinned: set[str] = set()
    outcomes = check_set(cset, fixed)
    for round_number in range(MAX_FIX_ROUNDS):
        unmet = [o for o in outcomes if o.status == "unmet" or (round_number == 0 and o.rule.id in broken)]
        context = derive(cset, fixed)
        if unmet or applied:
            unmet += [
                o
                for o in outcomes
                if o.status == "unknown" and o.rule.id not in pinned and _branch_applies(o.rule, context)
            ]
        if not unmet:
            break
        for outcome in unmet:
            if outcome.status == "unknown":
                pinned.add(outcome.rule.id)
            option = choose_fix(outcome.rule, context)
            apply_fix(option, fixed, context)
            applied.append((outcome.rule, option))
        outcomes = check_set(cset, fixed)
    return FixPlan(fixed, applied, outcomes)


@lru_cache(maxsize=512)
def message_regex(template: str) -> re.Pattern[str]:
    """A rule's `vllm_message` as a regex: its `{placeholders}` match any text."""
    parts = re.split(r"\{[^{}]*\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def sets_for(
    sets: list[ConstraintSet], version: str | None, pattern_id: str | None = None, message: str | None = None
) -> list[ConstraintSet]:
    """The sets that apply: by the running version; when the log did not say, by the error's wording
    (the newest set with a rule for this pattern whose exact message is the one in the log)."""
    if version is not None and parse_version(version) is not None:
        return [s for s in sets if in_range(version, s.versions)]
    if pattern_id is None:
        return []
    owning = [s for s in sets if any(pattern_id in r.patterns for r in s.rule)]
    if message:
        worded = [
            s
            for s in owning
            if any(pattern_id in r.patterns and message_regex(r.vllm_message).search(message) for r in s.rule)
        ]
        owning = worded or owning
    by_feature: dict[str, ConstraintSet] = {}
    for cset in owning:  # files list sets oldest first; keep the newest per feature
        by_feature[cset.feature] = cset
    return list(by_feature.values())
