"""The literal strings a regex cannot match without: the raw material of every prefilter.

`required_literals(r"CUDA out of memory\\. Tried to allocate (?P<size>\\S+)")` is {"CUDA out of memory. Tried
to allocate "}: a text holding none of the returned strings cannot match the regex, so a scanner may skip it
after one cheap multi-literal search. The analysis walks the regex's parse tree the way ripgrep and
Hyperscan pick their "required factors":

* a literal character is itself; runs of them in sequence concatenate (across zero-width assertions,
  which consume nothing);
* an alternation is the union of its branches (every branch must yield something, or nothing is required);
* a group or a repetition with a minimum of one requires what its body requires; an optional part
  requires nothing;
* of the candidate sets a sequence offers, the most selective one wins: the longest shortest string.

None means no literal is required (`\\w+: \\d+`): such a regex can match text of any shape, so a prefilter
must treat every line as a candidate for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The parser of `re` itself (Python 3.11+), so the tree is the one the regex engine builds.
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

# Literals shorter than this would make nearly every line a candidate: a line pattern that requires nothing
# longer turns the prefilter off (the scan then reads every line, as it would without one), and an
# exception pattern that requires nothing longer is not tried on a message standing alone.
MIN_LITERAL = 3
MAX_ALTERNATIVES = 64  # cross products of alternations beyond this are cut into separate factors
SMALL_CLASS = 4  # `[Ee]` and friends are expanded; bigger classes break a literal run
_GROUP_NAME = re.compile(r"(?<!\\)\(\?P<\w+>")


@dataclass(frozen=True, slots=True)
class Literals:
    texts: frozenset[str]
    caseless: bool = False


@dataclass(frozen=True, slots=True)
class _Facts:
    """What one node of the parse tree tells: the exact strings it can match (None: too many to list)
    and a set of strings one of which occurs in every match (None: nothing is required)."""

    exact: frozenset[str] | None
    required: frozenset[str] | None


_EMPTY = _Facts(frozenset({""}), None)
_UNKNOWN = _Facts(None, None)


def selective(found: Literals | None, one_line: bool = False) -> bool:
    """Every alternative is long enough to pick out few lines (and, for `one_line`, fits in one line)."""
    if found is None or not found.texts or min(len(t) for t in found.texts) < MIN_LITERAL:
        return False
    return not one_line or not any("\n" in t for t in found.texts)


def required_literals(pattern: str) -> Literals | None:
    """Strings one of which every match of `pattern` contains, or None when there is no such set."""
    try:
        # Group names do not change what matches, and the `regex` module allows one name twice.
        parsed = sre_parse.parse(_GROUP_NAME.sub("(", pattern))
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    caseless = bool(parsed.state.flags & re.IGNORECASE) or "(?i" in pattern
    facts = _sequence(list(parsed))
    found = _best([s for s in (facts.required, facts.exact) if s is not None])
    if found is None or "" in found:
        return None
    return Literals(frozenset(t.lower() for t in found) if caseless else found, caseless)


def _best(candidates: list[frozenset[str]]) -> frozenset[str] | None:
    usable = [c for c in candidates if c and "" not in c]
    if not usable:
        return None
    return max(usable, key=lambda c: (min(len(t) for t in c), -len(c)))


def _sequence(items: list[tuple[Any, Any]]) -> _Facts:
    candidates: list[frozenset[str]] = []
    run: frozenset[str] | None = frozenset({""})  # the exact strings of the items since the last break
    whole_exact: frozenset[str] | None = frozenset({""})
    for op, av in items:
        facts = _node(op, av)
        if facts.required is not None:
            candidates.append(facts.required)
        if facts.exact is None:
            if run is not None:
                candidates.append(run)
            run = frozenset({""})
            whole_exact = None
            continue
        run = _concat(run, facts.exact, candidates)
        whole_exact = _concat(whole_exact, facts.exact, []) if whole_exact is not None else None
    if run is not None:
        candidates.append(run)
    return _Facts(whole_exact, _best(candidates))


def _concat(left: frozenset[str] | None, right: frozenset[str], candidates: list[frozenset[str]]) -> frozenset[str]:
    if left is None:
        return right
    if len(left) * len(right) > MAX_ALTERNATIVES:
        candidates.append(left)
        return right
    return frozenset(a + b for a in left for b in right)


def _node(op: Any, av: Any) -> _Facts:  # noqa: PLR0911 - one case per node type
    if op is sre.LITERAL:
        return _Facts(frozenset({chr(av)}), None)
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return _EMPTY  # zero-width: the characters around it are still adjacent in the match
    if op is sre.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(av))
    if op is sre.BRANCH:
        return _branch([_sequence(list(alt)) for alt in av[1]])
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
        low, high, body = av
        if low == 0:
            return _UNKNOWN
        inner = _sequence(list(body))
        required = _best([s for s in (inner.required, inner.exact) if s is not None])
        return _Facts(inner.exact if low == high == 1 else None, required)
    if op is sre.IN:
        return _small_class(av)
    return _UNKNOWN


def _branch(alternatives: list[_Facts]) -> _Facts:
    exact: frozenset[str] | None = frozenset()
    required: frozenset[str] | None = frozenset()
    for alt in alternatives:
        exact = exact | alt.exact if exact is not None and alt.exact is not None else None
        best = _best([s for s in (alt.required, alt.exact) if s is not None])
        required = required | best if required is not None and best is not None else None
    if exact is not None and len(exact) > MAX_ALTERNATIVES:
        exact = None
    return _Facts(exact, required)


def _small_class(items: list[tuple[Any, Any]]) -> _Facts:
    chars = [chr(av) for op, av in items if op is sre.LITERAL]
    if len(chars) != len(items) or not 0 < len(chars) <= SMALL_CLASS:
        return _UNKNOWN
    return _Facts(frozenset(chars), None)
