"""vLLM versions and version ranges, without a dependency: `0.23.1rc1.dev1201+gd08eebad1` -> (0, 23, 1).

Ranges are PEP 440-style specifier sets restricted to what pattern and rule files use:
`>=0.27,<0.32`, `==0.33.*`, `*` (any). Pre-releases and local parts compare as their release.
"""

from __future__ import annotations

import re
from functools import lru_cache

Version = tuple[int, ...]
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)")
# A bound may name a post-release or pre-release (`<=0.6.6.post1`): it compares as its release.
_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)(?:\.?(?:post|rc|dev|a|b)\d+)*(\.\*)?\s*")


@lru_cache(maxsize=1024)  # a log names a handful of versions, asked about once per finding and rule set
def parse_version(text: str) -> Version | None:
    match = _RELEASE.match(text.strip())
    if not match:
        return None
    parts = tuple(int(p) for p in match[1].split("."))
    while len(parts) > 1 and parts[-1] == 0:
        parts = parts[:-1]
    return parts


def _pad(a: Version, b: Version) -> tuple[Version, Version]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


@lru_cache(maxsize=512)
def _clauses(spec: str) -> tuple[tuple[str, Version, bool], ...]:
    if spec.strip() in ("", "*"):
        return ()
    clauses = []
    for raw in spec.split(","):
        match = _CLAUSE.fullmatch(raw)
        if not match:
            raise ValueError(f"not a version range: {spec!r} (use e.g. '>=0.27,<0.32')")
        version = parse_version(match[2])
        assert version is not None
        clauses.append((match[1], version, bool(match[3])))
    return tuple(clauses)


def check_range(spec: str) -> None:
    """Raise ValueError for a malformed range (used when pattern files are validated)."""
    _clauses(spec)


@lru_cache(maxsize=4096)
def in_range(version: str | Version, spec: str) -> bool:
    v = parse_version(version) if isinstance(version, str) else version
    if v is None:
        return False
    for op, bound, wildcard in _clauses(spec):
        if wildcard:
            head = v[: len(bound)] + (0,) * max(0, len(bound) - len(v))
            equal = head == bound
            ok = equal if op == "==" else not equal
        else:
            a, b = _pad(v, bound)
            ok = {
                ">=": a >= b,
                "<=": a <= b,
                ">": a > b,
                "<": a < b,
                "==": a == b,
                "!=": a != b,
            }[op]
        if not ok:
            return False
    return True
