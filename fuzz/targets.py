"""Fuzz targets: bytes in, and the properties logdoctor promises checked on every input.

Each target raises (an AssertionError, or whatever escaped the code under test) only when a property
fails; atheris reports that input as a crash and saves it. fuzz/run.py runs them.
"""

from __future__ import annotations

import contextlib

import atheris

with atheris.instrument_imports(include=["logdoctor"]):
    from logdoctor.doctor import Doctor
    from logdoctor.framing import Framer
    from logdoctor.launch.cmdline import CommandError, parse_command, render_command
    from logdoctor.launch.header import parse_header_line
    from logdoctor.launch.pyrepr import ReprError, parse_prefix
    from logdoctor.library.matcher import Library
    from logdoctor.prefilter import Prefilter, triggers_for
    from logdoctor.sieve import Sieve

LIBRARY = Library.load()
PREFILTER = Prefilter(triggers_for(LIBRARY))


def _read(chunks: list[bytes], prefilter: Prefilter | None) -> tuple[int, list[str], int]:
    doctor, framer = Doctor(LIBRARY), Framer("fuzz")
    sieve = Sieve(doctor, framer, (lambda: prefilter) if prefilter else None, small=0)
    for chunk in chunks:
        sieve.feed(chunk)
    sieve.flush()
    # Physical lines read (a container runtime's pieces of one line are one line for the core).
    return framer.lines_seen, [f.model_dump_json() for f in doctor.report()], doctor.internal_errors


def pipeline(data: bytes) -> None:
    """Framing, records, assembly, diagnosis, sieve: no internal error; every line counted; the same
    findings whole or in chunks (cut where the input's first byte says), sieved or not."""
    cut = (data[0] * 37 % len(data)) if data else 0
    lines, findings, errors = _read([data], None)
    assert errors == 0, "an exception escaped into the core's guard"
    assert lines == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert _read([data[:cut], data[cut:]], PREFILTER) == (lines, findings, 0)


def framing(data: bytes) -> None:
    """Any bytes in any chunks: the same lines as all at once."""
    whole = Framer("x")
    expected = whole.feed(data) + whole.flush()
    pieces = Framer("x")
    step = 1 + (data[-1] if data else 0)
    got = []
    for start in range(0, len(data), step):
        got += pieces.feed(data[start : start + step])
    assert got + pieces.flush() == expected


def header(data: bytes) -> None:
    """The header parsers (version, non-default args, Namespace, engine summary, notices) never raise."""
    text = data.decode("utf-8", "replace")
    engine = "Initializing a V1 LLM engine (v0.33.0) with config: "
    for prefix in ("", "non-default args: {", "args: Namespace(", engine):
        parse_header_line(prefix + text)
    with contextlib.suppress(ReprError):
        parse_prefix(text)


def cmdline(data: bytes) -> None:
    """`vllm serve` command lines: parsed or refused with a CommandError, and what parses renders."""
    # (--config names a file to read: a fuzzer-made path could be /dev/zero; files are not under test here)
    words = [w for w in data.decode("utf-8", "replace").split("\x00") if not w.startswith("--config")]
    tokens = ["vllm", "serve", *words]
    try:
        parsed = parse_command(tokens)
    except CommandError:
        return
    render_command(parsed.config)


TARGETS = {"pipeline": pipeline, "framing": framing, "header": header, "cmdline": cmdline}
