"""pipeline.py: the one path from a source's bytes to a reporter, which every mode uses."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.pipeline import Pipeline
from logdoctor.sources.live import Guard

PACKAGE = Path(__file__).resolve().parent.parent / "logdoctor"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB"
TRACEBACK = b'Traceback (most recent call last):\n  File "/x/vllm/w.py", line 3, in f\n    g()\n' + OOM.encode()


def test_no_mode_frames_sieves_or_feeds_the_doctor_itself() -> None:
    # Framing, sieving and feeding happen in pipeline.py only; the modes hand it bytes.
    allowed = {"pipeline.py", "sieve.py", "framing.py", "api.py"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in {"Sieve", "Framer", "frame_bytes"} or (
                    name == "feed" and isinstance(node.func, ast.Attribute) and "doctor" in ast.unparse(node.func.value)
                ):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)[:60]}")
    assert offenders == []


def test_the_modes_do_not_import_the_command_line() -> None:
    # The CLI wires the modes; a mode that imported it back made a cycle (cli -> watch -> cli).
    code = (
        "import sys; import logdoctor.scan, logdoctor.watch, logdoctor.sources.passthrough, "
        "logdoctor.sources.command, logdoctor.sources.follow; print('logdoctor.cli' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_channels_of_one_pipeline_share_its_doctor_and_close_without_ending_the_others(library: Library) -> None:
    emitted: list[Finding] = []
    doctor = Doctor(library)
    pipeline = Pipeline(doctor, emitted.append)
    a, b = pipeline.channel("a.log"), pipeline.channel("b.log")
    a.feed(TRACEBACK)  # no newline at the end: the last line waits in a's framer
    b.feed(b"INFO 11-30 10:00:00 [a.py:1] hello\n")
    assert a.framer.partial and not emitted
    a.close()  # a's last line is a line now; its event is still open (b may go on)
    assert not a.framer.partial and doctor.pending_in("a.log")
    pipeline.flush()
    assert [(f.source, f.rule) for f in emitted] == [("a.log", "memory.cuda-oom")]


def test_a_relabelled_channel_reads_every_line_renumbered(library: Library) -> None:
    doctor = Doctor(library)
    pipeline = Pipeline(doctor, lambda f: None)
    seen: list[Line] = []

    def label(line: Line) -> Line:
        seen.append(replace(line, number=line.number + 100, stream="stderr"))
        return seen[-1]

    channel = pipeline.channel("-", relabel=label, skip_lines=False)
    channel.feed(TRACEBACK + b"\n")
    channel.close()
    pipeline.flush()
    assert [line.number for line in seen] == [101, 102, 103, 104]
    (finding,) = doctor.report()
    assert finding.lines == (101, 104)


def test_a_guarded_pipeline_survives_a_failing_sink_and_counts_it(library: Library) -> None:
    guard = Guard()

    def broken(finding: Finding) -> None:
        raise OSError("reader went away")

    pipeline = Pipeline(Doctor(library), broken, guard)
    channel = pipeline.channel("-")
    channel.feed(TRACEBACK + b"\nnext\n")
    channel.close()
    pipeline.flush()
    assert guard.failures >= 1
