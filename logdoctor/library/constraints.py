"""Three-valued evaluation of constraint sets against a LaunchConfig, and the fix that meets them all."""

from __future__ import annotations

import difflib
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
        if op in ("matches", "not_matches"):
            # A regex on the value as text (a parser name, a path's suffix); a value known to be absent
            # matches nothing.
            found = actual is not None and _regex(str(expected)).search(str(actual)) is not None
            return found if op == "matches" else not found
        if op in ("keys_in", "all_match"):
            return _every(op, actual, expected)
        if actual is None or expected is None:
            return False
        if op == "multiple_of":
            return bool(expected) and bool(actual % expected == 0)
        return bool(_ORDER[op](actual, expected))
    except TypeError:
        return None


def _every(op: str, actual: Any, expected: Any) -> bool:
    """`keys_in`: every key of a JSON object (every element of a list) is one of `expected` (a JSON
    option's known fields, the environment variables a release reads); `all_match`: every value of an
    object (element of a list) matches the regex `expected` (a null one as empty text). A value with no
    keys or elements (absent,
    a number, a text) has nothing that could break either."""
    if isinstance(actual, dict):
        items = list(actual) if op == "keys_in" else list(actual.values())
    elif isinstance(actual, list | tuple):
        items = list(actual)
    else:
        return True
    if op == "keys_in":
        return all(item in expected for item in items)
    return all(_regex(str(expected)).search("" if item is None else str(item)) is not None for item in items)


@lru_cache(maxsize=256)
def _regex(text: str) -> re.Pattern[str]:
    return re.compile(text)


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
    expected = condition.value
    if condition.value_from is not None:
        base = lookup(config, condition.value_from)
        if base is _MISSING:
            return None
        # `value_from` alone compares with the other field's value as it is (a string: the checkpoint's
        # quant_method); an `offset` is arithmetic on a number.
        expected = None if base is None else (base + condition.offset if condition.offset else base)
    actual = lookup(config, condition.field)
    if actual is _MISSING:
        return trivially(condition.op, expected)
    return _compare(condition.op, actual, expected)


def trivially(op: str, expected: Any) -> Truth:
    """What a condition on a value nobody revealed is, when it holds whatever that value is: any count is
    a multiple of 1 (`--tensor-parallel-size 1` divides every head count). Otherwise unknown."""
    if op == "multiple_of" and not isinstance(expected, bool) and expected == 1:
        return True
    return None


_VALUE_KEYS = frozenset(
    {"from", "offset", "times", "times_from", "divisor_at_most", "when_unknown", "nearest", "otherwise", "sub"}
    | {"only", "without", "count_ending", "split", "count", "count_in"}
)


def resolve_value(spec: Any, config: LaunchConfig) -> Any:
    """A fix or derivation value: a literal, or computed from the config:
    `{from = field, offset = n}`, or `{from = field, divisor_at_most = other}` (the largest divisor of
    `field` not above `other`: a tensor-parallel size that divides a head count). `when_unknown = v` is
    the value when `field` was not revealed (1, the divisor of any count); the fix plan says so.
    Names: `{from = field, nearest = [names], otherwise = v}` is the listed name nearest to the field's
    text (the same name spelled with `-` or another case first, then difflib's closest), else `otherwise`;
    `{from = field, sub = [regex, replacement]}` is the field's text with the regex replaced.
    JSON options: `{from = option, only = [keys]}` / `{from = option, without = [keys]}` is the option's
    object with only the keys listed, or without them.
    Lists of names: `{from = files, count_ending = [suffixes]}` is how many end with one of the suffixes
    (get_quant_config's test of the model folder's files against a method's config file names).
    Lists in a text: `{from = "env.X", split = "|"}` is the text's parts (each a number where it is one,
    as vLLM's int() reads it); with `count = true` how many there are, with `count_in = field` how many
    are in that field's list (CPU_VISIBLE_MEMORY_NODES against the allowed nodes). `count` also counts a
    list as it is."""
    if not (isinstance(spec, dict) and "from" in spec and set(spec) <= _VALUE_KEYS):
        return spec
    base = lookup(config, spec["from"])
    if base is _MISSING:
        return spec.get("when_unknown", _MISSING)
    if base is None:
        # Known to be absent (no --kv-transfer-config, so no kv_connector); arithmetic on it is unknown.
        plain = not spec.get("offset") and not {"divisor_at_most", "times", "times_from"} & set(spec)
        return None if plain else _MISSING
    if "nearest" in spec:
        return _nearest(base, [str(c) for c in spec["nearest"]], spec.get("otherwise", _MISSING))
    if "sub" in spec:
        pattern, replacement = spec["sub"]
        return _regex(str(pattern)).sub(str(replacement), base) if isinstance(base, str) else _MISSING
    if "split" in spec or "count" in spec or "count_in" in spec:
        return _parts(spec, base, config)
    if "count_ending" in spec:
        if not isinstance(base, list):
            return _MISSING
        suffixes = tuple(str(s) for s in spec["count_ending"])
        return sum(1 for name in base if str(name).endswith(suffixes))
    if "only" in spec or "without" in spec:
        # A JSON option's object with only the keys vLLM knows (`only`), or without some (`without`).
        if not isinstance(base, dict):
            return _MISSING
        kept = {k: v for k, v in base.items() if ("only" not in spec or k in spec["only"])}
        return {k: v for k, v in kept.items() if k not in spec.get("without", [])}
    if "divisor_at_most" in spec:
        limit = lookup(config, spec["divisor_at_most"])
        if limit is _MISSING or not isinstance(limit, int) or not isinstance(base, int) or limit < 1:
            return _MISSING
        return next(d for d in range(min(limit, base), 0, -1) if base % d == 0)
    offset = spec.get("offset", 0)
    factor: Any = spec.get("times", 1)
    if "times_from" in spec:
        factor = lookup(config, spec["times_from"])
        if factor is None:
            factor = 1  # known to be absent (no rope scaling): nothing to multiply by
    if not offset and factor == 1 and "times_from" not in spec:
        return base
    if not _number(base) or not _number(factor):
        return _MISSING  # arithmetic on a value that is not a number (or unknown): vLLM would reject it elsewhere
    result = base * factor + offset
    return int(result) if isinstance(result, float) and result.is_integer() else result


def _parts(spec: dict[str, Any], base: Any, config: LaunchConfig) -> Any:
    if "split" in spec:
        if not isinstance(base, str):
            return _MISSING
        parts: list[Any] = [int(p) if p.strip().isdigit() else p for p in base.split(str(spec["split"]))]
    elif isinstance(base, list):
        parts = base
    else:
        return _MISSING
    if "count_in" in spec:
        within = lookup(config, spec["count_in"])
        return sum(1 for p in parts if p in within) if isinstance(within, list) else _MISSING
    return len(parts) if spec.get("count") else parts


def _nearest(value: Any, choices: list[str], otherwise: Any) -> Any:
    if not isinstance(value, str):
        return otherwise
    spelled = {c.lower().replace("-", "_"): c for c in choices}
    same = spelled.get(value.lower().replace("-", "_"))
    if same is not None:
        return same
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    return close[0] if close else otherwise


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


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
    reveal: str | None = None  # for each unknown field, what would reveal it (the set's reveal texts)


def check_rule(rule: Rule, config: LaunchConfig, cset: ConstraintSet | None = None) -> RuleOutcome:
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
    unknown = unknown if status == "unknown" else []
    reveal = "; ".join(f"{name}: {reveal_text(cset, name)}" for name in unknown) or None
    return RuleOutcome(rule, status, evidence, unknown, reveal)


def reveal_text(cset: ConstraintSet | None, name: str) -> str:
    return cset.reveal_text(name) if cset is not None else "not in the log or command"


def check_set(cset: ConstraintSet, config: LaunchConfig) -> list[RuleOutcome]:
    derived = derive(cset, config)
    return [check_rule(rule, config if rule.stage == "arguments" else derived, cset) for rule in cset.rule]


def _branch_applies(rule: Rule, config: LaunchConfig) -> bool:
    return rule.when is None or evaluate(rule.when, config) is True


def choose_fix(rule: Rule, context: LaunchConfig) -> FixOption:
    """The first fix option whose `when` holds for this launch (unknown counts as not holding)."""
    for option in rule.fix:
        if option.when is None or evaluate(option.when, context) is True:
            return option
    return rule.fix[-1]


def flag_name(name: str) -> str:
    """How a caveat names a field: the option (`--use-replayssm`), or the environment variable."""
    if name.startswith("env."):
        return name[4:]
    return "--" + name.split(".")[0].replace("_", "-")


def apply_fix(
    option: FixOption,
    config: LaunchConfig,
    context: LaunchConfig,
    rule: Rule | None = None,
    cset: ConstraintSet | None = None,
) -> list[str]:
    """Change the launch as the fix says; `{from = ...}` values are read from `context`, the launch as
    vLLM resolves it (derived facts such as num_speculative_tokens live there). Returns the caveats: what
    the change gives up (a flag the launch had that the fix drops or turns off) and what it could not
    compute, so nothing is dropped or left as it was without a word."""
    origin = Origin(kind="command", where=f"logdoctor fix: {option.says}")
    label = f"`{rule.id}`" if rule is not None else "the fix"
    caveats: list[str] = []
    dropped = [n for n in option.unset if n in config.given or (n.startswith("env.") and config.get(n) is not None)]
    for name in option.unset:
        head, _, key = name.partition(".")
        if key and head != "env":
            # A key of a JSON option (`speculative_config.tensor_parallel_size`): the option without it.
            current = config.value(head)
            if isinstance(current, dict) and key in current:
                config.set(head, {k: v for k, v in current.items() if k != key}, origin, given=True)
            continue
        config.unset(name)
    for name, spec in option.set.items():
        value = resolve_value(spec, context)
        if value is _MISSING:
            source = spec.get("from", "") if isinstance(spec, dict) else ""
            why = f"{source} is unknown ({reveal_text(cset, source)})" if source else ""
            caveats.append(f"{label}: not fixed, its value cannot be computed ({option.says}): {why}".rstrip(": "))
            continue
        if isinstance(spec, dict) and "when_unknown" in spec and lookup(context, spec["from"]) is _MISSING:
            source = spec["from"]
            caveats.append(
                f"{label}: {flag_name(name)} {value} holds whatever {source} is, which is unknown "
                f"({reveal_text(cset, source)}); a larger value may fit once it is known"
            )
        head, _, key = name.partition(".")
        if key and head != "env":
            # A key inside a JSON option: `speculative_config.num_speculative_tokens = 15`.
            current = config.value(head)
            value = {**(current if isinstance(current, dict) else {}), key: value}
            name = head
        if value is False and config.value(name) is True and name in config.given:
            dropped.append(name)
        config.set(name, value, origin, given=not name.startswith("env."))
    if dropped:
        others = [o.says.removeprefix("or ") for o in (rule.fix if rule is not None else []) if o is not option]
        alternative = f"; the other way: {'; '.join(others)}" if others else ""
        flags = ", ".join(dict.fromkeys(flag_name(n) for n in dropped))
        why = f" to meet {label} ({rule.says})" if rule is not None else ""
        caveats.insert(0, f"The corrected command drops {flags}{why}{alternative}")
    return caveats


@dataclass
class FixPlan:
    config: LaunchConfig  # the launch with every applied fix
    applied: list[tuple[Rule, FixOption]]
    outcomes: list[RuleOutcome]  # the rules re-checked on the fixed launch
    # What the corrected command gives up or leaves open: flags it drops, values it could not compute,
    # rules it leaves unknown (with what would reveal them).
    caveats: list[str] = field(default_factory=list)
    uncomputed: set[str] = field(default_factory=set)  # rules whose fix needs a value nobody revealed


def plan_fix(cset: ConstraintSet, config: LaunchConfig, broken: frozenset[str] = frozenset()) -> FixPlan:
    """Apply the fix of every unmet rule, re-derive, repeat until nothing more is unmet.

    `broken` names rules known to be unmet whatever the evaluation says (vLLM raised them in the log).
    A rule that is only unknown (it reads a value nobody revealed) gets no fix: the plan's caveats say
    what would reveal it. Fixes whose value cannot be computed change nothing, and say so.
    """
    fixed = config.copy_deep()
    applied: list[tuple[Rule, FixOption]] = []
    caveats: list[str] = []
    uncomputed: set[str] = set()
    outcomes = check_set(cset, fixed)
    for round_number in range(MAX_FIX_ROUNDS):
        unmet = [o for o in outcomes if o.status == "unmet" or (round_number == 0 and o.rule.id in broken)]
        if not unmet:
            break
        # The rule vLLM raised first, then the others one at a time, each only if the changes so far left
        # it unmet: a fix that turns the feature off (drops --use-replayssm) ends the feature's rules, and
        # must not leave the other rules' changes behind in the command.
        unmet.sort(key=lambda o: o.rule.id not in broken)
        for n, outcome in enumerate(unmet):
            if n and (active(cset, fixed) is False or _status(cset, fixed, outcome.rule.id) != "unmet"):
                continue
            context = derive(cset, fixed)
            option = choose_fix(outcome.rule, context)
            said = apply_fix(option, fixed, context, outcome.rule, cset)
            if any(c.startswith(f"`{outcome.rule.id}`: not fixed") for c in said):
                uncomputed.add(outcome.rule.id)
            caveats += said
            applied.append((outcome.rule, option))
        outcomes = check_set(cset, fixed)
    if applied and active(cset, fixed) is not False:  # a fix that turned the feature off leaves no rule of it
        context = derive(cset, fixed)
        fixed_rules = {rule.id for rule, _ in applied}
        caveats += [
            f"`{o.rule.id}` is unknown and left as it is: {o.reveal or 'not in the log or command'}"
            for o in outcomes
            if o.status == "unknown" and o.rule.id not in fixed_rules and _branch_applies(o.rule, context)
        ]
    return FixPlan(fixed, applied, outcomes, list(dict.fromkeys(caveats)), uncomputed)


def _status(cset: ConstraintSet, config: LaunchConfig, rule_id: str) -> str:
    return next(o.status for o in check_set(cset, config) if o.rule.id == rule_id)


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
