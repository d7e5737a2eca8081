"""The sieve and its prefilter: a sieved read reports exactly what reading every line reports."""

from __future__ import annotations

import io
import itertools
import json
import random
import re
from pathlib import Path

import pytest

from bench.genlog import generate
from logdoctor.assemble import MAX_SILENT_LINES
from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.library.matcher import Library
from logdoctor.library.pattern import Pattern
from logdoctor.prefilter import Prefilter, hyperscan_available, triggers_for
from logdoctor.sieve import Sieve
from tests.conftest import FIXTURES, make_pattern


def report(
    data: bytes, library: Library, prefilter: Prefilter | None, chunk: int | None = None, by_line: bool = False
) -> list[str]:
    """Findings as JSON, with every chunk boundary the reader might meet when `chunk` is given, or with one
    read per line (`by_line`)."""
    doctor = Doctor(library)
    sieve = Sieve(doctor, Framer("log"), (lambda: prefilter) if prefilter else None, small=0)
    for piece in re.findall(rb"[^\n]*\n|[^\n]+\Z", data) if by_line else _chunks(data, chunk):
        sieve.feed(piece)
    sieve.flush()
    lines = doctor.lines
    return [f"lines={lines}"] + [json.dumps(f.model_dump(mode="json"), sort_keys=True) for f in doctor.report()]


def _chunks(data: bytes, chunk: int | None) -> list[bytes]:
    """`data` in pieces of random sizes below `chunk` (seeded by the data), or whole."""
    rng = random.Random(len(data))
    pieces, pos = [], 0
    while pos < len(data):
        size = rng.randrange(1, chunk) if chunk else len(data)
        pieces.append(data[pos : pos + size])
        pos += size
    return pieces


def _synthetic(error_heavy: bool, seed: int) -> bytes:
    out = io.StringIO()
    generate(out, 300_000, seed, error_heavy)
    return out.getvalue().encode()


def _variants(data: bytes) -> dict[str, bytes]:
    """The framings and shapes a sieve must see through."""
    lines = data.split(b"\n")
    return {
        "plain": data,
        "crlf": data.replace(b"\n", b"\r\n"),
        "compose": b"\n".join(b"vllm-1  | " + line if line else line for line in lines),
        "collector": b"\n".join(b"2025-01-02T03:04:05.678Z " + line if line else line for line in lines),
        "ansi": data.replace(b") ERROR ", b") \x1b[31mERROR\x1b[0m ").replace(b"Traceback", b"\x1b[1mTraceback"),
        "no-prefix": b"\n".join(line.split(b") ", 1)[-1] if line.startswith(b"(") else line for line in lines),
    }


LOGS = sorted(p for p in FIXTURES.rglob("*.log") if p.stat().st_size < 2_000_000)


pytestmark = pytest.mark.skipif(not hyperscan_available(), reason="without Hyperscan there is no prefilter")


@pytest.fixture(scope="module")
def prefilter(library: Library) -> Prefilter:
    return Prefilter(triggers_for(library))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_reads_the_same_sieved(path: Path, library: Library, prefilter: Prefilter) -> None:
    data = path.read_bytes()
    assert report(data, library, prefilter) == report(data, library, None)


@pytest.mark.parametrize("error_heavy", [False, True])
@pytest.mark.parametrize("variant", ["plain", "crlf", "compose", "collector", "ansi", "no-prefix"])
def test_generated_logs_read_the_same_sieved(
    variant: str, error_heavy: bool, library: Library, prefilter: Prefilter
) -> None:
    data = _variants(_synthetic(error_heavy, seed=3))[variant]
    full = report(data, library, None)
    assert any('"rule"' in f for f in full[1:]), "the generated log must hold findings to compare"
    assert report(data, library, prefilter, chunk=70_000) == full


HAND_MADE = """\
(APIServer pid=7) INFO 11-30 10:00:00 [logger.py:1] Request 1: prompt: 'why KeyError: x? Traceback (most recent call last):'
(APIServer pid=7) INFO 11-30 10:00:00 [x.py:2] Traceback (most recent call last):
(APIServer pid=7) INFO 11-30 10:00:00 [x.py:2]   File "a.py", line 1, in f
(APIServer pid=7) INFO 11-30 10:00:00 [x.py:2] ValueError: logged at INFO
(APIServer pid=7) INFO 11-30 10:00:01 [x.py:3] served
(EngineCore pid=9) Process EngineCore:
(EngineCore pid=9) Traceback (most recent call last):
(APIServer pid=7) INFO 11-30 10:00:02 [x.py:3] served
(EngineCore pid=9)   File "/x/vllm/v1/engine/core.py", line 5, in run
(EngineCore pid=9)     boom()
(APIServer pid=7) INFO 11-30 10:00:03 [x.py:3] served
(EngineCore pid=9) RuntimeError: CUDA error: an illegal memory access was encountered
(EngineCore pid=9) CUDA kernel errors might be asynchronously reported
(APIServer pid=7) INFO 11-30 10:00:04 [x.py:3] served
[rank1]: Traceback (most recent call last):
[rank1]:   File "b.py", line 2, in g
[rank0]: nothing
[rank1]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled cuda error
KeyError: 'bare'
triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 1, Hardware limit: 0.
(APIServer pid=7) ERROR 11-30 10:00:05 [x.py:9] something went wrong
"""


def test_hand_made_corner_cases_read_the_same(library: Library, prefilter: Prefilter) -> None:
    data = HAND_MADE.encode()
    full = report(data, library, None)
    assert len(full) > 4
    for chunk in (None, 7, 64):
        assert report(data, library, prefilter, chunk) == full, chunk


def test_a_prompt_quoting_an_error_is_not_a_candidate(prefilter: Prefilter) -> None:
    data = (
        b"(APIServer pid=7) DEBUG 11-30 10:00:00 [logger.py:1] prompt: 'My code fails with KeyError: x, "
        b"see: Traceback (most recent call last): ... ERROR 404'\n"
        b"(APIServer pid=7) WARNING 11-30 10:00:00 [x.py:1] slow\n"
    )
    assert prefilter.line_starts(data, 0, len(data)) == [data.index(b"(APIServer pid=7) WARNING")]


def test_every_line_pattern_example_is_a_candidate(library: Library, prefilter: Prefilter) -> None:
    for pattern in library.line_patterns:
        for example in pattern.examples.match:
            raw = example.encode() + b"\n"  # (an example may hold several lines: one is enough)
            assert prefilter.line_starts(raw, 0, len(raw)), (pattern.id, example)


def _vague_pattern() -> Pattern:
    """A user's line pattern that requires no literal: nothing can tell its lines from the others."""
    return make_pattern(
        id="user.vague", where="line", match=r"\w+ \d+", examples={"match": ["port 80"], "no_match": ["x"]}
    )


def test_a_pattern_without_literals_turns_the_prefilter_off(library: Library) -> None:
    vague = _vague_pattern()
    assert Library([vague, *library.patterns]).prefilter() is None
    assert Library(library.patterns).prefilter() is not None


def test_sieve_skips_lines_but_counts_them(library: Library, prefilter: Prefilter) -> None:
    filler = b"(APIServer pid=7) INFO 11-30 10:00:00 [x.py:1] served request\n" * 10_000
    data = filler + b"(APIServer pid=7) ERROR 11-30 10:00:01 [x.py:2] broken: no KV cache\n" + filler
    doctor = Doctor(library)
    fed: list[int] = []
    original = doctor.feed
    doctor.feed = lambda line, now=0.0: fed.append(line.number) or original(line, now)  # type: ignore[method-assign]
    sieve = Sieve(doctor, Framer("log"), lambda: prefilter, small=0)
    sieve.feed(data)
    sieve.flush()
    assert doctor.lines == 20_001
    # The first line (it tells the framing) and the error line. The next line of its stream ends the
    # logged record (another header): the sieve closes it there without feeding that line.
    assert fed == [1, 10_001]
    assert [f.lines[0] for f in doctor.report()] == [10_001]


def test_patterns_test_warns_about_a_pattern_the_prefilter_cannot_find(library: Library) -> None:
    from logdoctor.library.selftest import check_pattern

    vague = _vague_pattern()
    problems = check_pattern(Library([vague, *library.patterns]), vague)
    assert [(p.kind, p.is_warning) for p in problems if p.kind == "unfilterable"] == [("unfilterable", True)]


def test_a_broken_or_unwritable_cache_only_costs_the_build(
    library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = HAND_MADE.encode()
    monkeypatch.setenv("LOGDOCTOR_CACHE", str(tmp_path))
    expected = Prefilter(triggers_for(library)).line_starts(data, 0, len(data))
    (cached,) = tmp_path.glob("prefilter-*.hsdb")
    cached.write_bytes(b"not a database")
    assert Prefilter(triggers_for(library)).line_starts(data, 0, len(data)) == expected
    monkeypatch.setenv("LOGDOCTOR_CACHE", "/proc/no-such-place")
    assert Prefilter(triggers_for(library)).line_starts(data, 0, len(data)) == expected


def test_without_hyperscan_every_line_is_read(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    import logdoctor.prefilter

    monkeypatch.setattr(logdoctor.prefilter, "hyperscan_available", lambda: False)
    assert Prefilter.for_library(library) is None
    data = HAND_MADE.encode()
    assert report(data, library, None)[1:]  # (the full read still finds everything)


def test_a_progress_bar_segment_can_continue_an_unprefixed_traceback(library: Library, prefilter: Prefilter) -> None:
    """Found by fuzzing: the line reads as its last carriage-return segment, which has no process prefix,
    so it belongs to the open unprefixed traceback although its raw bytes start with one."""
    data = (
        b"Traceback (most recent call last):\n"
        b'  File "/x/vllm/entrypoints/cli/main.py", line 1, in main\n'
        b"(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:38] logo\r    main()\n"
        b"(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:38] more\n"
        b"ValueError: boom\n"
    )
    assert report(data, library, prefilter) == report(data, library, None)


def test_a_line_that_only_looks_prefixed_belongs_to_the_unprefixed_stream(
    library: Library, prefilter: Prefilter
) -> None:
    """Found by fuzzing: `(APIServer pid=1133r)` is no process prefix, so the line is raw and continues
    the open pydantic error above it."""
    data = (
        b"pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig\n"
        b"  Value error, FlashInfer ReplaySSM requires --replayssm-buffer-len <= 16 [type=value_error\n"
        b"(APIServer pid=1133r) INFO 11-30 21:43:17 [kernel.py:480] priority\n"
        b"(APIServer pid=1133) INFO 11-30 21:43:17 [kernel.py:480] priority\n"
    )
    assert report(data, library, prefilter) == report(data, library, None)


def test_container_lines_in_a_plain_file_are_read(library: Library, prefilter: Prefilter) -> None:
    """Found by hypothesis: a plain file holding a Docker json-file line (a log pasted together)."""
    data = (
        b"(APIServer pid=81234) INFO 11-30 19:41:07 [startup.py:38] \n"
        b'{"log": "(APIServer pid=1) ERROR 11-02 09:14:41 [async_llm.py:480] AsyncLLM output_handler failed.\\n",'
        b' "stream": "stdout", "time": "2026-11-02T09:14:07.000000000Z"}\n'
        b"2026-11-02T09:14:07.1Z stderr P (APIServer pid=1) ERROR 11-02 09:14:41 [x.py:1] Engine core \n"
        b"2026-11-02T09:14:07.2Z stderr F initialization failed. See root cause above.\n"
    )
    full = report(data, library, None)
    assert len(full) == 3 and report(data, library, prefilter) == full


def test_a_prefix_cut_short_does_not_reach_into_later_lines(library: Library, prefilter: Prefilter) -> None:
    """Found by fuzzing: `(APIServer ` cut at the end of a line, blank lines, then `pid=1) ...`: the
    prefix pattern crossed the newlines and the unprefixed line looked prefixed to the sieve."""
    data = (
        b"pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig\n"
        b"  Value error, FlashInfer ReplaySSM requires --replayssm-buffer-len <= 16 [type=value_error\n"
        b"(APIServer pid=7) INFO 11-30 21:50:27 [kernel.py:480] priority\n"
        b"(APIServer \n\n\n"
        b"pid=10887) WARNING 11-30 21:50:27 [nixl_utils.py:65] NIXL is not available\n"
    )
    assert report(data, library, prefilter) == report(data, library, None)


def test_a_sieved_read_still_sees_the_lifecycle_lines_that_excuse_shutdown_errors(
    library: Library, prefilter: Prefilter
) -> None:
    # The server came up, served, was asked to stop, and the dying engine's EngineDeadError followed:
    # shutdown noise, exit 0. Every lifecycle line is an INFO record that no pattern asks for, so only
    # the tracker's own triggers keep the sieve from dropping them.
    serving = "".join(
        f"(APIServer pid=7) INFO 11-30 10:00:{i % 60:02d} [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s\n"
        for i in range(2000)
    )
    log = (
        "(APIServer pid=7) INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version 0.33.0\n"
        "(APIServer pid=7) INFO 11-30 10:00:00 [api_server.py:2] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
        "(APIServer pid=7) INFO:     Application startup complete.\n"
        + serving
        + "(APIServer pid=7) INFO 11-30 10:01:00 [launcher.py:3] Shutting down FastAPI HTTP server.\n"
        "(APIServer pid=7) ERROR 11-30 10:01:00 [async_llm.py:4] AsyncLLM output_handler failed.\n"
        "(APIServer pid=7) ERROR 11-30 10:01:00 [async_llm.py:4] Traceback (most recent call last):\n"
        '(APIServer pid=7) ERROR 11-30 10:01:00 [async_llm.py:4]   File "/v/vllm/v1/engine/async_llm.py", line 5, in output_handler\n'
        "(APIServer pid=7) ERROR 11-30 10:01:00 [async_llm.py:4]     outputs = await engine_core.get_output_async()\n"
        "(APIServer pid=7) ERROR 11-30 10:01:00 [async_llm.py:4] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
        "(APIServer pid=7) INFO:     Application shutdown complete.\n"
    ).encode()
    sieved = report(log, library, prefilter)
    assert sieved == report(log, library, None)
    assert not [f for f in sieved[1:] if '"primary": true' in f and '"severity": "error"' in f]


SERVED = b"(APIServer pid=7) INFO 11-30 10:00:00 [x.py:1] served request\n"
BROKEN = b"(APIServer pid=7) ERROR 11-30 10:00:01 [x.py:2] broken: no KV cache\n"


def fed_lines(
    data: bytes, library: Library, prefilter: Prefilter, small: int = 0, cuts: tuple[int, ...] = ()
) -> tuple[list[int], Doctor]:
    """The numbers of the lines the Doctor was fed, reading `data` in reads that end at `cuts`, and the
    Doctor."""
    doctor = Doctor(library)
    fed: list[int] = []
    original = doctor.feed
    doctor.feed = lambda line, now=0.0: fed.append(line.number) or original(line, now)  # type: ignore[method-assign]
    sieve = Sieve(doctor, Framer("log"), lambda: prefilter, small=small)
    bounds = [0, *cuts, len(data)]
    for start, end in itertools.pairwise(bounds):
        sieve.feed(data[start:end])
    sieve.flush()
    return fed, doctor


def test_a_source_of_exactly_the_small_size_is_sieved(library: Library, prefilter: Prefilter) -> None:
    # Sieved: the first line (it tells the framing) and the error line are all the Doctor reads.
    data = SERVED * 1000 + BROKEN + SERVED * 1000
    fed, doctor = fed_lines(data, library, prefilter, small=len(data))
    assert fed == [1, 1001] and doctor.lines == 2001
    # One byte smaller than `small`: every line is read (building the prefilter would not pay).
    fed, doctor = fed_lines(data, library, prefilter, small=len(data) + 1)
    assert fed == list(range(1, 2002))


def test_a_chunk_that_starts_by_ending_the_previous_line_is_still_sieved(
    library: Library, prefilter: Prefilter
) -> None:
    data = SERVED * 1000 + BROKEN + SERVED * 1000
    # The first read ends just before a newline: the second starts by finishing that line.
    fed, doctor = fed_lines(data, library, prefilter, cuts=(len(SERVED) - 1,))
    assert fed == [1, 1001] and doctor.lines == 2001


def test_other_processes_lines_between_an_open_streams_lines_are_skipped(
    library: Library, prefilter: Prefilter
) -> None:
    data = (
        SERVED
        + b"(EngineCore pid=9) Traceback (most recent call last):\n"
        + b'(EngineCore pid=9)   File "/x/vllm/v1/engine/core.py", line 5, in run\n'
        + SERVED * 500
        + b"(EngineCore pid=9)     boom()\n"  # no trigger: read because the traceback of its stream is open
        + SERVED * 500
        + b"(EngineCore pid=9) RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    fed, _ = fed_lines(data, library, prefilter)
    assert fed == [1, 2, 3, 504, 1005]
    assert report(data, library, prefilter) == report(data, library, None)


def test_reads_that_end_at_line_ends_read_the_same(library: Library, prefilter: Prefilter) -> None:
    """A follower's reads often end exactly at a newline: the next read then starts at a line of the open
    unprefixed traceback, which must reach the Doctor whole."""
    data = (
        b"Traceback (most recent call last):\n"
        b'  File "/x/vllm/entrypoints/cli/main.py", line 1, in main\n'
        b"    raise ValueError('boom')\n"
        b"ValueError: boom\n"
    ) + HAND_MADE.encode()
    full = report(data, library, None)
    assert report(data, library, prefilter, by_line=True) == full
    assert '"text": "    raise ValueError(\'boom\')"' in full[1]


def test_a_progress_bar_segment_after_other_lines_continues_the_traceback(
    library: Library, prefilter: Prefilter
) -> None:
    """The progress bar's line reads as its unprefixed last segment, and a line of another stream that the
    sieve skips stands between it and the open traceback."""
    data = (
        b"Traceback (most recent call last):\n"
        b'  File "/x/vllm/entrypoints/cli/main.py", line 1, in main\n'
        b"(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:38] served\n"
        b"(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:38] logo\r    main()\n"
        b"(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:38] more\n"
        b"ValueError: boom\n"
    )
    assert report(data, library, prefilter) == report(data, library, None)


@pytest.mark.parametrize("silent", [MAX_SILENT_LINES, MAX_SILENT_LINES + 1])
def test_an_open_streams_next_line_far_away_reads_the_same(silent: int, library: Library, prefilter: Prefilter) -> None:
    """The traceback's next line comes `silent` lines after its last: at MAX_SILENT_LINES it still
    continues the traceback, one later the traceback was complete. A trigger of another process stands
    just before it, so the sieve looks for the stream's next line right there."""
    data = (
        b"(EngineCore pid=9) Traceback (most recent call last):\n"
        b'(EngineCore pid=9)   File "/x/vllm/v1/engine/core.py", line 5, in run\n'
        + SERVED * (silent - 2)
        + BROKEN
        + b"(EngineCore pid=9)     boom()\n"
        + b"(EngineCore pid=9) RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    assert report(data, library, prefilter) == report(data, library, None)


def follow(
    reads: list[bytes], library: Library, prefilter: Prefilter | None, pauses: set[int]
) -> tuple[list[str], list[str]]:
    """A followed log: the findings as they were streamed, then as reported at the end. After the reads
    numbered in `pauses` the log was quiet (a tick), which closes quiet events provisionally."""
    doctor = Doctor(library)
    sieve = Sieve(doctor, Framer("log"), (lambda: prefilter) if prefilter else None, small=0)
    streamed = []
    for i, data in enumerate(reads):
        streamed += sieve.feed(data, now=10.0 * i)
        if i in pauses:
            streamed += doctor.tick(10.0 * i + 5)
    streamed += sieve.flush()
    as_json = [json.dumps(f.model_dump(mode="json"), sort_keys=True) for f in streamed]
    return as_json, [json.dumps(f.model_dump(mode="json"), sort_keys=True) for f in doctor.report()]


ARGPARSE_ERROR = b"vllm serve: error: argument --speculative-config: 1 validation error for SpeculativeConfig\n"
PYDANTIC_DETAIL = b"  Input should be a valid integer [type=int_type]\n"

PAUSED_READS = {
    # Both events of the first read close provisionally; the argparse error's detail then comes after a
    # trigger of a third process, and the sieve must still look for it.
    "detail-after-another-trigger": (
        [
            SERVED.replace(b"pid=7", b"pid=8") + ARGPARSE_ERROR + BROKEN,
            SERVED.replace(b"pid=7", b"pid=8") * 3
            + b"(APIServer pid=8) ERROR 11-30 10:00:02 [x.py:2] other failure\n"
            + PYDANTIC_DETAIL,
        ],
        {0, 1},
    ),
    # A log without process prefixes: a logged error is open and the read after it starts with a blank.
    "blank-line-after-an-unprefixed-error": (
        [
            b"INFO 11-30 10:00:00 [x.py:1] served request\n" + ARGPARSE_ERROR,
            b"ERROR 11-30 10:00:01 [x.py:2] broken: no KV cache\n",
            b"\n" + PYDANTIC_DETAIL + b"INFO 11-30 10:00:00 [x.py:1] served request\n",
        ],
        {0},
    ),
}


@pytest.mark.parametrize("case", list(PAUSED_READS))
def test_a_followed_log_with_pauses_streams_the_same_sieved(case: str, library: Library, prefilter: Prefilter) -> None:
    reads, pauses = PAUSED_READS[case]
    assert follow(reads, library, prefilter, pauses) == follow(reads, library, None, pauses)


def test_a_rank_prefixed_logged_error_is_ended_by_its_streams_next_line_unfed(
    library: Library, prefilter: Prefilter
) -> None:
    # torch elastic's `[rank0]:` streams are found by their name, as `pid=` streams by their number.
    served = b"[rank0]: INFO 11-30 10:00:00 [x.py:1] served request\n"
    broken = b"[rank0]: ERROR 11-30 10:00:01 [x.py:2] broken: no KV cache\n"
    data = served * 1000 + broken + served * 1000
    fed, doctor = fed_lines(data, library, prefilter)
    assert fed == [1, 1001] and doctor.lines == 2001
    assert report(data, library, prefilter) == report(data, library, None)


def test_the_open_stream_whose_line_comes_first_decides_not_another_listed_before_it(
    library: Library, prefilter: Prefilter
) -> None:
    # An unprefixed raw traceback is open (its next line is far away) while a logged error of pid=7
    # waits for its stream's next line: that line, which comes first, ends the logged group unfed.
    data = (
        b"Traceback (most recent call last):\n"
        + b'  File "/x/vllm/entrypoints/cli/main.py", line 1, in main\n'
        + BROKEN
        + SERVED * 300
        + b"    raise ValueError('boom')\n"
        + b"ValueError: boom\n"
        + SERVED * 300
    )
    fed, _ = fed_lines(data, library, prefilter)
    assert 4 not in fed  # pid=7's next line, after its ERROR record at line 3
    assert report(data, library, prefilter) == report(data, library, None)


def test_a_read_that_starts_with_a_blank_line_inside_a_raw_traceback_reads_the_same(
    library: Library, prefilter: Prefilter
) -> None:
    # A chained traceback's blank line starts a read; the unprefixed line right after it belongs to the
    # open traceback and must be found from the read's first newline on.
    first = (
        b"Traceback (most recent call last):\n"
        b'  File "/x/vllm/entrypoints/cli/main.py", line 1, in main\n'
        b"    raise ValueError('boom')\n"
        b"ValueError: boom\n"
    )
    rest = b"\nDuring handling of the above exception, another exception occurred:\n\n" + first.replace(
        b"ValueError: boom", b"RuntimeError: wrapped"
    )
    data = first + rest + SERVED * 50
    whole = [f.model_dump(mode="json") for f in fed_lines(data, library, prefilter)[1].report()]
    cut = [f.model_dump(mode="json") for f in fed_lines(data, library, prefilter, cuts=(len(first),))[1].report()]
    assert cut == whole
