"""prefilter.py: the lines a trigger fires on, checked against reading every line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.library.matcher import Library
from logdoctor.prefilter import _QUIET_LINE, RUN_GAP, Prefilter, _unquiet_runs, hyperscan_available, triggers_for
from logdoctor.sieve import Sieve

pytestmark = pytest.mark.skipif(not hyperscan_available(), reason="the prefilter needs Hyperscan")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXTENSION_WARNING = b"Failed to import from vllm._C: ModuleNotFoundError(\"No module named 'vllm._C'\")"


@pytest.fixture(scope="module")
def prefilter(library: Library) -> Prefilter:
    return Prefilter(triggers_for(library))


def rules(library: Library, data: bytes, prefilter: Prefilter | None) -> list[tuple[str, tuple[int, int]]]:
    doctor = Doctor(library)
    sieve = Sieve(doctor, Framer("log"), (lambda: prefilter) if prefilter else None, small=0)
    sieve.feed(data)
    sieve.flush()
    assert doctor.internal_errors == 0
    return [(f.rule, f.lines) for f in doctor.report()]


def test_an_error_drawn_over_an_info_record_by_a_carriage_return_is_read(
    library: Library, prefilter: Prefilter
) -> None:
    # The terminal shows the last segment of a line a carriage return redrew: here an error, though the
    # line's bytes start like a quiet INFO record (found by hypothesis in test_properties).
    line = b"(APIServer pid=11941) INFO 12-01 17:12:16 [startup.py:38] \r" + EXTENSION_WARNING + b"\n"
    data = b"(APIServer pid=1) INFO 12-01 17:12:15 [a.py:1] starting\n" * 3 + line
    assert prefilter.line_starts(data, 0, len(data)) == [data.index(line)]
    assert rules(library, data, prefilter) == rules(library, data, None) != []


def test_a_quiet_record_is_skipped_without_being_read(prefilter: Prefilter) -> None:
    data = b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] " + EXTENSION_WARNING + b"\n"
    assert prefilter.line_starts(data, 0, len(data)) == []


def test_a_crlf_record_is_still_quiet(prefilter: Prefilter) -> None:
    data = b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] " + EXTENSION_WARNING + b"\r\n"
    assert prefilter.line_starts(data, 0, len(data)) == []


def test_the_same_error_outside_a_quiet_record_is_a_candidate(prefilter: Prefilter) -> None:
    data = b"noise\n" + EXTENSION_WARNING + b"\nmore noise\n"
    assert prefilter.line_starts(data, 0, len(data)) == [len(b"noise\n")]


# --- the two databases: the level and "alone" triggers read only lines that are not quiet records ------

QUIET_LINES = [
    b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] Started server process",
    b"(APIServer pid=1) DEBUG 12-01 17:12:16 [request_logger.py:40] Request chatcmpl-1: prompt: "
    b"'Why does KeyError: 0 and torch.OutOfMemoryError: CUDA out of memory happen? Traceback "
    b'(most recent call last):  File "x.py", line 3, in f\'',
    b'(APIServer pid=1) INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    b"INFO 12-01 17:12:16 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s",
    b'INFO:     10.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK',
    # Quiet, though the run-finder's narrower prefix does not say so (it is scanned, then confirmed away):
    b"(pid=3, ip=10.0.0.2) INFO 12-01 17:12:16 [ray.py:1] raised KeyError: 0 in a prompt",
    b"(VllmWorker rank=0 pid=4) DEBUG 12-01 17:12:16 [w.py:1] torch.OutOfMemoryError: CUDA out of memory",
]
LOUD_LINES = [
    b"(APIServer pid=1) WARNING 12-01 17:12:16 [serving.py:9] max_tokens 9 is too large",
    b"(EngineCore_DP0 pid=2) ERROR 12-01 17:12:16 [core.py:1] EngineCore failed to start.",
    b"Traceback (most recent call last):",
    b'  File "/usr/lib/python3.12/site-packages/vllm/engine.py", line 10, in run',
    b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] \r" + EXTENSION_WARNING,
    b"(Worker pid=3) " + EXTENSION_WARNING,
    b"(x) INFO 12-01 17:12:16 [a.py:1] no pid in the prefix, so not a quiet record: " + EXTENSION_WARNING,
    b"INFO 12-01 not a time " + EXTENSION_WARNING,
    b"",
]


class _EveryByte(Prefilter):
    """The same triggers, both databases scanning every byte: what the run-finder must not change."""

    def _hits(self, buffer: bytes, start: int, end: int) -> list[tuple[int, int]]:
        view = memoryview(buffer)
        hits = [(t, start + e) for t, e in self._everywhere.matches(view[start:end])]
        hits += [(t, start + e) for t, e in self._unquiet.matches(view[start:end])]
        return sorted(hits, key=lambda hit: hit[1])


@pytest.fixture(scope="module")
def every_byte(library: Library) -> Prefilter:
    return _EveryByte(triggers_for(library))


def _mixes() -> list[bytes]:
    rng = random.Random(7)
    shapes = QUIET_LINES * 8 + LOUD_LINES
    mixes = []
    for size in (1, 2, 5, 40, 400):
        for ending in (b"\n", b"\r\n"):
            lines = [rng.choice(shapes) for _ in range(size)]
            mixes.append(ending.join(lines) + ending)
    mixes.append(b"\n".join(QUIET_LINES * 50) + b"\n" + LOUD_LINES[1] + b"\n" + b"\n".join(QUIET_LINES * 50) + b"\n")
    mixes.append(LOUD_LINES[4] + b"\n" + b"\n".join(QUIET_LINES * 200) + b"\n" + LOUD_LINES[4] + b"\n")
    return mixes


def test_the_run_finder_selects_the_same_lines_as_scanning_every_byte(
    prefilter: Prefilter, every_byte: Prefilter
) -> None:
    for data in _mixes():
        for start in (0, data.find(b"\n") + 1):
            assert prefilter.line_starts(data, start, len(data)) == every_byte.line_starts(data, start, len(data))


def test_the_run_finder_agrees_on_every_fixture(prefilter: Prefilter, every_byte: Prefilter) -> None:
    for path in sorted(FIXTURES.rglob("*.log")):
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        assert prefilter.line_starts(data, 0, end) == every_byte.line_starts(data, 0, end), path.name


def test_unquiet_runs_cover_every_line_that_is_not_a_quiet_record() -> None:
    for data in _mixes():
        runs = _unquiet_runs(data, 0, len(data))
        assert runs == sorted(runs) and all(a < b for a, b in runs)
        assert all(b1 < a2 for (_, b1), (a2, _) in zip(runs, runs[1:], strict=False))
        at = 0
        for line in data.split(b"\n")[:-1]:
            if not _QUIET_LINE.match(line):
                assert any(a <= at and at + len(line) <= b for a, b in runs), line
            at += len(line) + 1


def test_quiet_runs_far_apart_are_scanned_apart() -> None:
    quiet = b"\n".join(line for line in QUIET_LINES if _QUIET_LINE.match(line)) + b"\n"
    gap = quiet * (RUN_GAP // len(quiet) + 1)
    data = LOUD_LINES[0] + b"\n" + gap + LOUD_LINES[1] + b"\n"
    runs = _unquiet_runs(data, 0, len(data))
    assert [data[a:b] for a, b in runs] == [LOUD_LINES[0] + b"\n", LOUD_LINES[1] + b"\n"]
    close = LOUD_LINES[0] + b"\n" + quiet + LOUD_LINES[1] + b"\n"
    assert _unquiet_runs(close, 0, len(close)) == [(0, len(close))]


def test_a_progress_bar_without_a_trigger_is_not_read(prefilter: Prefilter) -> None:
    # A carriage return makes a quiet record's line unquiet (its last segment is what counts), not a
    # candidate by itself: feeding such lines changed what the framer learned and slowed whole files.
    bar = b"(Worker_TP0 pid=7) Loading safetensors checkpoint shards:   0% Completed | 0/16\rLoading 6%\n"
    data = QUIET_LINES[0] + b"\n" + bar + QUIET_LINES[0] + b"\n"
    assert prefilter.line_starts(data, 0, len(data)) == []
