"""Launch by launch: a settled launch's findings are final, handed out once and then forgotten, so a scan
prints as it reads and a long input costs the memory of its current launch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.pipeline import Pipeline
from logdoctor.scan import stream_file
from logdoctor.sources.files import CHUNK
from tests.conftest import FIXTURES
from tests.test_e2e import logdoctor_exe

REAL = FIXTURES / "real"
RESTARTS = [
    REAL / "vllm-0.33.0-replayssm-kv-connector.log",
    REAL / "vllm-0.33.0-replayssm-flashinfer-prefix-caching.log",
    REAL / "vllm-0.33.0-enginecore-worker-missing-cpu-ops.log",
]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def _restarts(times: int) -> list[str]:
    """One file of restarts: the real launches, again and again."""
    return [text for _ in range(times) for log in RESTARTS for text in _lines(log)]


def _snapshot(findings: list) -> list[str]:
    return [json.dumps(f.model_dump(mode="json"), sort_keys=True) for f in findings]


def test_taking_settled_launches_as_they_come_gives_the_report_of_the_whole(library: Library) -> None:
    texts = _restarts(2)
    whole = Doctor(library)
    taken_from = Doctor(library)
    taken = []
    for number, text in enumerate(texts, 1):
        whole.feed(Line("-", number, text))
        taken_from.feed(Line("-", number, text))
        taken += taken_from.take_settled()
    whole.flush()
    taken_from.flush()
    taken += taken_from.take_settled() + taken_from.report()
    assert _snapshot(taken) == _snapshot(whole.report())
    assert {f.launch for f in taken} == set(range(1, 2 * len(RESTARTS) + 1))


def test_a_launch_is_handed_out_once_its_source_has_moved_on_and_then_forgotten(library: Library) -> None:
    first, second = _lines(RESTARTS[0]), _lines(RESTARTS[1])
    doctor = Doctor(library)
    for number, text in enumerate(first, 1):
        doctor.feed(Line("-", number, text))
    assert doctor.take_settled() == []  # the launch may still go on
    number = len(first)
    while doctor.launches.count("-") == 1:  # up to the next launch's banner
        number += 1
        doctor.feed(Line("-", number, second[number - len(first) - 1]))
    settled = doctor.take_settled()
    assert settled and {f.launch for f in settled} == {1}
    assert [f.rule for f in settled if f.primary] == ["replayssm.kv-connector"]
    assert doctor.take_settled() == []  # handed out once
    assert all(f.launch == 2 for f in doctor.findings) and doctor.saw_error  # forgotten, but counted
    assert [launch.index for launch in doctor.launches.launches("-")] == [2]
    assert doctor.launches.count("-") == 2


def test_what_is_held_stays_bounded_over_many_launches(library: Library) -> None:
    doctor = Doctor(library)
    held = []
    for number, text in enumerate(_restarts(6), 1):
        doctor.feed(Line("-", number, text))
        doctor.forget_settled()
        held.append((len(doctor.findings), len(doctor.launches.launches("-")), len(doctor._seen)))
    assert doctor.launches.count("-") == 6 * len(RESTARTS)
    # Never more than one launch's worth, whatever the number of launches behind.
    assert max(h[1] for h in held) <= 2
    assert max(h[0] for h in held) == max(h[0] for h in held[: len(held) // 3])
    assert max(h[2] for h in held) == max(h[2] for h in held[: len(held) // 3])


def test_a_streaming_pipeline_forgets_what_its_sink_had(library: Library) -> None:
    doctor = Doctor(library)
    emitted = []
    pipeline = Pipeline(doctor, emitted.append)
    channel = pipeline.channel("-")
    channel.feed(("\n".join(_restarts(2)) + "\n").encode())
    channel.close()
    pipeline.flush()
    assert {f.launch for f in emitted} == set(range(1, 2 * len(RESTARTS) + 1))
    assert {f.launch for f in doctor.findings} == {2 * len(RESTARTS)}  # only the last is held


def test_a_scan_reports_the_first_launches_before_it_has_read_the_file(tmp_path: Path, library: Library) -> None:
    log = tmp_path / "crash-loop.log"
    one = b"".join(path.read_bytes() for path in RESTARTS)
    log.write_bytes(one * (3 * CHUNK // len(one) + 1))  # a few of the reader's chunks
    read_to: list[int] = []  # how far the reader had got, after each chunk
    reported_at: list[int] = []  # ... when each batch of findings was reported
    doctor = stream_file(log, library, lambda _: reported_at.append(read_to[-1] if read_to else 0), read_to.append)
    assert doctor.lines == log.read_bytes().count(b"\n")
    assert len(read_to) > 2
    assert reported_at[0] < log.stat().st_size  # the first launches were out before the end was read
    assert len(reported_at) >= len(read_to)  # a batch a chunk, and the rest at the end


def test_the_scan_command_prints_each_file_between_its_start_and_its_summary(tmp_path: Path) -> None:
    log = tmp_path / "restarts.log"
    log.write_bytes(b"".join(path.read_bytes() for path in RESTARTS))
    out = subprocess.run([logdoctor_exe(), "scan", str(log)], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    assert lines[0] == f"== {log}"
    (summary,) = [n for n, line in enumerate(lines) if line.startswith("── summary: ")]
    assert f"{len(RESTARTS)} launches" in lines[summary]
    roots = [line for line in lines[:summary] if line.endswith("(root cause)")]
    assert len(roots) == len(RESTARTS)
    assert lines[summary + 1].startswith("Other failures above: launch 1: ")
