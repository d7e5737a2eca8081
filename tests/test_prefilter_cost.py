"""The prefilter stays selective as the library grows: no pattern may make a normal log's lines candidates.

A pattern's required literals are the prefilter's triggers for it (prefilter.py). A literal that most
lines hold (` HTTP/` of every access line, `at ` of any sentence) makes the sieve feed the core those
lines, and a long scan falls from hundreds of MB/s to a few. Measured on a generated normal serving log
(bench/genlog.py: access lines, request logs quoting errors, throughput lines, warnings): the lines a
pattern's literals fire on, not counting the INFO/DEBUG records that step 2 confirms away for patterns
that do not read them.
"""

from __future__ import annotations

import io
import re

from bench.genlog import generate
from logdoctor.library.matcher import QUIET_LEVELS, Library

MAX_SHARE = 0.01  # of the sample's lines
_QUIET = re.compile(r"(?:\([^()]*pid=\d+[^()]*\) )?(?:" + "|".join(QUIET_LEVELS) + r")(?: \d\d-\d\d |:\s)")


def test_no_pattern_makes_normal_lines_candidates(library: Library) -> None:
    out = io.StringIO()
    generate(out, 1_000_000, 7, False)
    lines = out.getvalue().splitlines()
    loud = [line for line in lines if not _QUIET.match(line)]
    costly = []
    line_ids = {p.id for p in library.line_patterns}
    for pattern in [*library.line_patterns, *library.message_patterns]:
        found = library.literals_of(pattern)
        if found is None:
            continue
        texts = [t.lower() for t in found.texts] if found.caseless else list(found.texts)
        reads_quiet = pattern.id in line_ids and (pattern.severity == "info" or set(pattern.levels) & QUIET_LEVELS)
        sample = lines if reads_quiet else loud
        hits = sum(1 for line in sample if any(t in (line.lower() if found.caseless else line) for t in texts))
        if hits > MAX_SHARE * len(lines):
            costly.append(f"{pattern.id}: {hits} of {len(lines)} lines hold one of {sorted(texts)[:5]}")
    assert costly == []
