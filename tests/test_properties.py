"""Property-based tests (hypothesis): what must hold for any input, not only for the logs we have seen.

Inputs are arbitrary bytes, and real log lines from the fixtures cut, spliced, interleaved and mutated:
the shapes a torn or garbled log takes. The properties are the ones the tool promises its users: no
exception escapes the core; the pipe's copy equals its input byte for byte; every line is counted once;
the same input gives the same findings; reading in any chunks, sieved or not, gives the same findings.
Example counts are kept small so the suite stays fast; bench/fuzz.py runs the coverage-guided fuzzer.
"""

from __future__ import annotations

import contextlib
import os
import threading
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.launch.cmdline import CommandError, parse_command
from logdoctor.launch.header import parse_header_line
from logdoctor.launch.pyrepr import ReprError, parse_prefix
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.prefilter import Prefilter, hyperscan_available, triggers_for
from logdoctor.records import parse
from logdoctor.sieve import Sieve
from tests.conftest import FIXTURES

# derandomize: the same examples on every run, so CI is deterministic (a new failure shows up when the
# strategies or the code change, and fuzz/run.py is where inputs are searched for at length).
SETTINGS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@lru_cache(maxsize=1)
def real_lines() -> tuple[bytes, ...]:
    lines: list[bytes] = []
    for path in sorted(FIXTURES.rglob("*.log"))[:40]:
        lines += path.read_bytes().splitlines()[:400]
    return tuple(lines)


@lru_cache(maxsize=1)
def header_messages() -> tuple[str, ...]:
    wanted = ("non-default args", "args: Namespace", "with config:", "version", "Resolved architecture")
    found = []
    for line in real_lines():
        text = line.decode("utf-8", "replace")
        for marker in wanted:
            if marker in text:
                found.append(parse_record_message(text))
    return tuple(found)


def parse_record_message(text: str) -> str:
    from logdoctor.framing import Line

    return parse(Line("-", 1, text)).message


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """A real line cut, with a span deleted, duplicated, or replaced by arbitrary bytes."""
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 3))):
        if not data:
            break
        i = draw(st.integers(0, len(data)))
        j = draw(st.integers(i, min(len(data), i + 40)))
        action = draw(st.sampled_from(["cut", "delete", "duplicate", "replace"]))
        if action == "cut":
            del data[i:]
        elif action == "delete":
            del data[i:j]
        elif action == "duplicate":
            data[i:i] = data[i:j]
        else:
            data[i:j] = draw(st.binary(max_size=12))
    return bytes(data)


@st.composite
def torn_logs(draw: st.DrawFn) -> bytes:
    """Real lines, mutated, interleaved with garbage and joined with assorted line ends."""
    pool = real_lines()
    parts: list[bytes] = []
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["real", "real", "real", "mutated", "bytes"]))
        if kind == "bytes":
            parts.append(draw(st.binary(max_size=80)))
        else:
            line = pool[draw(st.integers(0, len(pool) - 1))]
            parts.append(draw(mutated(line)) if kind == "mutated" else line)
    ends = draw(st.lists(st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n"]), min_size=len(parts), max_size=len(parts)))
    return b"".join(p + e for p, e in zip(parts, ends, strict=True)) + draw(st.binary(max_size=20))


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def findings_of(library: Library, chunks: list[bytes], prefilter: Prefilter | None = None) -> tuple[int, list[str]]:
    doctor, framer = Doctor(library), Framer("log")
    sieve = Sieve(doctor, framer, (lambda: prefilter) if prefilter else None, small=0)
    for chunk in chunks:
        sieve.feed(chunk)
    sieve.flush()
    assert doctor.internal_errors == 0
    # Physical lines read (a container runtime's pieces of one line are one line for the core).
    return framer.lines_seen, [f.model_dump_json() for f in doctor.report()]


def physical_lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


@SETTINGS
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=6))
def test_framing_any_bytes_any_chunks_counts_every_line(data: bytes, cuts: list[int]) -> None:
    whole = Framer("x")
    expected = whole.feed(data) + whole.flush()
    pieces = Framer("x")
    got = []
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        got += pieces.feed(data[a:b])
    got += pieces.flush()
    assert got == expected
    assert whole.lines_seen == physical_lines(data)
    numbers = [line.number for line in expected]
    assert numbers == sorted(numbers) and all(1 <= n <= whole.lines_seen for n in numbers)


@SETTINGS
@given(data=torn_logs())
def test_the_core_survives_torn_logs_and_counts_every_line(library: Library, data: bytes) -> None:
    lines, findings = findings_of(library, [data])
    assert lines == physical_lines(data)
    assert findings_of(library, [data]) == (lines, findings)  # the same input, the same findings


@SETTINGS
@given(st.data())
def test_chunks_and_the_sieve_do_not_change_the_findings(library: Library, data: st.DataObject) -> None:
    log = data.draw(torn_logs())
    chunks = data.draw(chunked(log))
    expected = findings_of(library, [log])
    assert findings_of(library, chunks) == expected
    if hyperscan_available():
        assert findings_of(library, chunks, sieve_prefilter(library)) == expected


@lru_cache(maxsize=1)
def sieve_prefilter(library: Library) -> Prefilter:
    return Prefilter(triggers_for(library))


@SETTINGS
@given(st.data())
def test_header_parsers_never_raise(data: st.DataObject) -> None:
    messages = header_messages()
    base = messages[data.draw(st.integers(0, len(messages) - 1))].encode()
    message = data.draw(mutated(base)).decode("utf-8", "replace")
    parse_header_line(message)  # returns a fact or None, whatever the text
    for start in ("non-default args: ", "args: "):
        if message.startswith(start):
            with contextlib.suppress(ReprError):
                parse_prefix(message[len(start) :])


@SETTINGS
@given(text=st.text(max_size=300))
def test_header_parsers_never_raise_on_any_text(text: str) -> None:
    parse_header_line(text)
    parse_header_line("non-default args: {" + text)
    parse_header_line("args: Namespace(" + text)
    parse_header_line("Initializing a V1 LLM engine (v0.33.0) with config: model=" + text)
    with contextlib.suppress(ReprError):
        parse_prefix(text)


@SETTINGS
@given(
    tokens=st.lists(
        st.one_of(
            st.sampled_from(["vllm", "serve", "--model", "--tensor-parallel-size", "2", "--api-key", "k", "--",
                             "--use-replayssm", "--max-model-len=4096", "-tp", "VAR=1", "--config"]),
            st.text(max_size=12),
        ),
        max_size=12,
    )
)
def test_the_command_line_parser_never_raises_unexpectedly(tokens: list[str]) -> None:
    with contextlib.suppress(CommandError):  # a --config file it cannot read: a usage error, with its message
        parse_command(tokens)


@settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=20_000), torn_logs()))
def test_the_pipe_copies_any_bytes_unchanged(library: Library, data: bytes) -> None:
    assert pipe_through(data, library) == data


def pipe_through(data: bytes, library: Library) -> bytes:
    from logdoctor.sources.passthrough import pump

    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    out: list[bytes] = []

    def write() -> None:
        with os.fdopen(stdin_w, "wb") as writer:
            writer.write(data)

    def read() -> None:
        with os.fdopen(stdout_r, "rb") as reader:
            out.append(reader.read())

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    found: list[Finding] = []
    pump(Doctor(library), found.append, stdin_r, stdout_w)
    os.close(stdout_w)
    os.close(stdin_r)
    for thread in threads:
        thread.join()
    return out[0]


@pytest.mark.parametrize("size", [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20])
def test_the_pipe_copies_chunk_boundaries_unchanged(library: Library, size: int) -> None:
    data = (bytes(range(256)) * (size // 256 + 1))[:size]
    assert pipe_through(data, library) == data
