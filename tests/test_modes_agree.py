"""Same input, same findings: a log read whole (`scan`) and the same log arriving as a stream (the pipe,
`run`, `watch`: in chunks, with quiet periods of up to 2 s at random points, some inside a traceback)
end with identical findings once the stream's updates are applied by id (rule, primary, lines, process,
occurrences). The clock is simulated (the core takes time as an argument), so the test is exact and fast."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.scan import diagnose_file
from logdoctor.sieve import Sieve

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
LOGS = sorted(p for p in (ROOT / "fixtures").rglob("*.log") if "battery" not in p.parts) + sorted(
    CORPUS.glob("*.log")
)
CHUNKINGS = {"whole": None, "lines-and-pauses-1": 1, "lines-and-pauses-2": 2, "bytes-and-pauses": 3}


def settled(findings: list[Finding]) -> list[tuple[object, ...]]:
    return sorted((f.rule, f.primary, tuple(f.lines), f.process, f.occurrences, f.launch) for f in findings)


def streamed(path: Path, library: Library, seed: int | None) -> list[Finding]:
    """What a consumer of a live stream holds at the end: every finding, each update applied by id."""
    data = path.read_bytes()
    doctor = Doctor(library)
    sieve = Sieve(doctor, Framer(str(path)), library.prefilter)
    held: dict[str, Finding] = {}

    def take(found: list[Finding]) -> None:
        for finding in found:
            if finding.kind == "withdrawn":
                held.pop(finding.id, None)
            else:
                held[finding.id] = finding

    if seed is None:
        take(sieve.feed(data))
    else:
        rng = random.Random(seed * 7919 + len(data))
        now, pos = 0.0, 0
        # seeds 1 and 2 cut at line ends (a process's writes), seed 3 anywhere (a pipe's reads)
        cuts = [i + 1 for i, b in enumerate(data) if b == 0x0A] if seed < 3 else list(range(1, len(data)))
        picks = sorted(rng.sample(cuts, min(len(cuts), 40)))
        for cut in [*picks, len(data)]:
            take(sieve.feed(data[pos:cut], now))
            pos = cut
            if rng.random() < 0.5:
                now += rng.uniform(0.0, 2.0)  # a quiet period: the stream reports what it has
                take(doctor.tick(now))
    take(sieve.flush())
    return list(held.values())


@pytest.mark.parametrize("chunking", list(CHUNKINGS), ids=list(CHUNKINGS))
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_stream_ends_with_the_findings_of_a_scan(library: Library, path: Path, chunking: str) -> None:
    _, scanned = diagnose_file(path, library)
    assert settled(streamed(path, library, CHUNKINGS[chunking])) == settled(scanned)
