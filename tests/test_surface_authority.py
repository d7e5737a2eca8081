"""The error-surface index keeps the pattern library honest about vLLM's releases and flags.

(a) A pattern that says vLLM raises its message (`source.file = "vllm/..."`) must have the exception
    message of each of its match examples in the index, in every indexed release inside its
    `source.versions` range.
(b) Every `vllm serve` flag a pattern's fix recommends must exist in every indexed release inside its range
    (a qualified step `[>=0.13] ...` inside its own range; a flag it says to remove, drop or replace need not).

The checks live in bench/surface/authority.py, which also writes the current list of failures
(`python3 -m bench.surface.authority --out /work/helpers/authority-failures.md`).
"""

from __future__ import annotations

import pytest

from bench.surface.authority import FLAG, flag_problems, message_problems, says_vllm_writes_it
from logdoctor.library.loader import load_patterns
from logdoctor.library.pattern import Pattern
from logdoctor.surface import SurfaceIndex, default_index

PATTERNS = load_patterns()
VLLM_PATTERNS = [p for p in PATTERNS if says_vllm_writes_it(p)]
FLAG_PATTERNS = [p for p in PATTERNS if FLAG.search(" ".join([p.fix.summary, *p.fix.steps]))]


@pytest.fixture(scope="module")
def index() -> SurfaceIndex:
    return default_index()


@pytest.mark.parametrize("pattern", VLLM_PATTERNS, ids=lambda p: p.id)
def test_vllm_messages_exist_in_their_releases(index: SurfaceIndex, pattern: Pattern) -> None:
    problems = message_problems(index, pattern)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("pattern", FLAG_PATTERNS, ids=lambda p: p.id)
def test_fix_flags_exist_in_their_releases(index: SurfaceIndex, pattern: Pattern) -> None:
    problems = flag_problems(index, pattern)
    assert not problems, "\n".join(problems)
