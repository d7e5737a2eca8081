"""The library checks itself: every pattern's examples through the whole pipeline, and collisions.

`logdoctor patterns test` and the test suite run the same checks. A `match` example must produce a
finding of its own pattern: if a pattern tried earlier claims it instead, that is a collision (the
example belongs to the other pattern, or one of the two regexes is too wide). A `no_match` example
must not produce a finding of the pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from logdoctor.library.literals import MIN_LITERAL, required_literals
from logdoctor.library.matcher import Library
from logdoctor.library.pattern import Pattern

# Nested quantifiers such as (a+)+ or (\w+\s?)* backtrack catastrophically on some inputs.
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*](?:[^()\\]|\\.)*\)[+*{]")


# Reported, but not failures: the time limit stops a runaway regex, and without a prefilter logdoctor
# still reads every line, only slower.
WARNING_KINDS = frozenset({"backtracking", "unfilterable"})


@dataclass(frozen=True)
class Problem:
    pattern: str
    kind: str  # no-match | collision | false-match | incomplete | backtracking, unfilterable (warnings)
    detail: str

    @property
    def is_warning(self) -> bool:
        return self.kind in WARNING_KINDS

    def __str__(self) -> str:
        return f"{self.pattern}: {self.kind}: {self.detail}"


def _rules(library: Library, example: str) -> list[str]:
    from logdoctor.api import diagnose_text

    return [f.rule for f in diagnose_text(example, library)]


def check_pattern(library: Library, pattern: Pattern) -> list[Problem]:
    problems: list[Problem] = []
    if not pattern.examples.no_match:
        problems.append(Problem(pattern.id, "incomplete", "no near-miss examples (examples.no_match)"))
    if not (pattern.source.file and pattern.source.versions and pattern.source.checked):
        problems.append(Problem(pattern.id, "incomplete", "source needs file, versions and checked"))
    if _NESTED_QUANTIFIER.search(pattern.match):
        problems.append(
            Problem(pattern.id, "backtracking", "nested quantifier in `match`: make sure it cannot backtrack")
        )
    if pattern in library.line_patterns:
        found = required_literals(pattern.match)
        if found is None or min(len(t) for t in found.texts) < MIN_LITERAL:
            problems.append(
                Problem(
                    pattern.id,
                    "unfilterable",
                    f"`match` requires no literal of {MIN_LITERAL}+ characters: while this pattern is loaded, "
                    "scans read every line (about 100x slower on big logs)",
                )
            )
    for n, example in enumerate(pattern.examples.match, 1):
        rules = _rules(library, example)
        if pattern.id in rules:
            continue
        others = [r for r in rules if r != "unrecognized"]
        if others:
            problems.append(Problem(pattern.id, "collision", f"match example {n} is claimed by {others[0]}"))
        else:
            problems.append(Problem(pattern.id, "no-match", f"match example {n} is not recognised"))
    for n, example in enumerate(pattern.examples.no_match, 1):
        if pattern.id in _rules(library, example):
            problems.append(Problem(pattern.id, "false-match", f"no_match example {n} matches"))
    return problems


def check_library(library: Library) -> list[Problem]:
    return [problem for pattern in library.patterns for problem in check_pattern(library, pattern)]
