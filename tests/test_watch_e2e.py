"""`logdoctor watch` as a real process against a writer that rotates every way, killed and restarted
midway: every traceback reported exactly once, every line counted exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.test_e2e import logdoctor_exe

POLL = "0.1"


def crash_lines(n: int) -> list[str]:
    """A crash-looping server: each launch prints its header, serves a little, then dies."""
    return [
        f"(APIServer pid={100 + n}) INFO 11-30 10:00:00 [api_server.py:1839] vLLM API server version 0.11.{n}",
        f"(APIServer pid={100 + n}) INFO 11-30 10:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: "
        "512.3 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs",
        f"(APIServer pid={100 + n}) Traceback (most recent call last):",
        f'(APIServer pid={100 + n})   File "/usr/local/bin/vllm", line 10, in <module>',
        f"(APIServer pid={100 + n})     sys.exit(main())",
        f"(APIServer pid={100 + n}) RuntimeError: crash number {n}",
    ]


def cri(lines: list[str], split_long: bool) -> list[str]:
    """The kubelet's CRI format; long lines arrive as a partial (P) and a final (F) piece."""
    out = []
    for line in lines:
        stream = (
            "stderr" if "Traceback" in line or "File" in line or "Error" in line or "sys.exit" in line else "stdout"
        )
        if split_long and len(line) > 80:
            out.append(f"2026-11-30T10:00:00.000000000Z {stream} P {line[:40]}")
            out.append(f"2026-11-30T10:00:00.000000000Z {stream} F {line[40:]}")
        else:
            out.append(f"2026-11-30T10:00:00.000000000Z {stream} F {line}")
    return out


class Writer:
    def __init__(self, path: Path, framing: str) -> None:
        self.path = path
        self.framing = framing
        self.next = 0
        self.physical = 0  # physical lines written (what logdoctor must count)
        self.rotations = 0

    def crashes(self, count: int) -> None:
        for _ in range(count):
            lines = crash_lines(self.next)
            if self.framing == "cri":
                lines = cri(lines, split_long=True)
            with self.path.open("a") as f:
                f.write("\n".join(lines) + "\n")
            self.physical += len(lines)
            self.next += 1

    def rename(self) -> None:
        self.rotations += 1
        self.path.rename(self.path.with_name(f"{self.path.name}.{self.rotations}"))
        self.path.touch()

    def copytruncate(self) -> None:
        self.rotations += 1
        shutil.copy(self.path, self.path.with_name(f"{self.path.name}.{self.rotations}"))
        with self.path.open("r+") as f:
            f.truncate(0)

    def recreate(self) -> None:
        self.path.unlink()
        self.path.touch()


def start(folder: Path, state: Path, out: Path, metrics_port: int | None = None) -> subprocess.Popen[bytes]:
    args = [logdoctor_exe(), "watch", str(folder), "--state", str(state), "--poll", POLL]
    if metrics_port is not None:
        args += ["--metrics-port", str(metrics_port)]
    return subprocess.Popen(args, stdout=out.open("ab"), stderr=subprocess.PIPE)


def wait_for_offset(state: Path, path: Path, minimum_lines: int, timeout: float = 20.0) -> None:
    """Until logdoctor has read and saved at least this many lines of the path."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            lines = json.loads(state.read_text())["files"][str(path)]["read_lines"]
        except (OSError, ValueError, KeyError):
            lines = -1
        if lines >= minimum_lines:
            return
        time.sleep(0.05)
    pytest.fail(f"logdoctor did not catch up to {minimum_lines} lines of {path}")


def reported(out: Path) -> list[str]:
    return [json.loads(line)["error"]["message"] for line in out.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("framing", ["plain", "cri"])
def test_rotation_kill_and_restart_lose_and_repeat_nothing(tmp_path: Path, framing: str) -> None:
    folder, state = tmp_path / "logs", tmp_path / "state.json"
    out1, out2 = tmp_path / "findings-1.jsonl", tmp_path / "findings-2.jsonl"
    folder.mkdir()
    log = folder / "vllm.log"
    writer = Writer(log, framing)
    writer.crashes(5)
    first = start(folder, state, out1)
    try:
        wait_for_offset(state, log, writer.physical)  # it is up and has read the file
        writer.crashes(20)  # at full speed while it reads
        writer.rename()
        writer.crashes(20)
        wait_for_offset(state, log, writer.physical)
        writer.crashes(5)
        writer.copytruncate()
        writer.crashes(10)
        time.sleep(0.3)
    finally:
        first.send_signal(signal.SIGKILL)  # killed midway: no chance to save anything
        first.wait(timeout=10)
    at_kill = state.read_text()
    writer.crashes(10)  # written while it is down...
    writer.rename()  # ...and rotated away while it is down
    writer.crashes(10)
    second = start(folder, state, out2)
    try:
        wait_for_offset(state, log, writer.physical)
        writer.recreate()  # delete and re-create, while it runs
        writer.crashes(15)
        wait_for_offset(state, log, writer.physical)
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=20) == 0
    by_run = [[int(m.split()[-1]) for m in reported(out)] for out in (out1, out2)]
    messages = [f"crash number {n}" for n in by_run[0] + by_run[1]]
    told = [p.stderr.read().decode() if p.stderr else "" for p in (first, second)]
    why = f"first run: {sorted(by_run[0])}\nsecond run: {sorted(by_run[1])}\nstderr: {told}\nstate at kill: {at_kill[:300]}"
    assert sorted(messages) == sorted(f"crash number {n}" for n in range(writer.next)), why
    assert json.loads(state.read_text())["files"][str(log)]["read_lines"] == writer.physical  # none lost or repeated


def test_metrics_move_as_findings_arrive(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder, state, out = tmp_path / "logs", tmp_path / "state.json", tmp_path / "findings.jsonl"
    folder.mkdir()
    writer = Writer(folder / "vllm.log", "plain")
    writer.crashes(0)
    proc = start(folder, state, out, metrics_port=port)

    def scrape(path: str) -> str:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
                    return str(response.read().decode())
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def findings_total(text: str) -> float:
        return sum(
            float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("logdoctor_findings_total{")
        )

    try:
        assert scrape("/healthz") == "ok\n"
        before = findings_total(scrape("/metrics"))
        writer.crashes(3)
        wait_for_offset(state, writer.path, writer.physical)
        deadline = time.monotonic() + 10
        while findings_total(scrape("/metrics")) < before + 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        text = scrape("/metrics")
        assert findings_total(text) == before + 3
        assert 'rule="unrecognized"' in text and "logdoctor_lines_read_total" in text
        assert "logdoctor_files_followed 1.0" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    assert os.path.exists(state)


# Steady-state lines between the failing launches: a catch-up's bulk, which the sieve reads past.
STATS = (
    b"(APIServer pid=81234) INFO 11-30 19:41:07 [loggers.py:123] Engine 000: Avg prompt throughput: 512.3 "
    b"tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.9%\n"
)


def crash_loop(path: Path, size: int) -> int:
    """A server restarted over and over, each launch failing as a fixture does, with a while of serving
    between: about `size` bytes (some seconds of catch-up). Returns its lines."""
    launches = [
        (FIXTURES / name).read_bytes()
        for name in ("engine-core-kv-cache-too-small-0.33.log", "replayssm-cache-mode-all-0.28.log")
    ]
    unit = b"".join(launch + STATS * 500 for launch in launches)
    data = unit * (size // len(unit) + 1)
    path.write_bytes(data)
    return data.count(b"\n")


def settled(*outputs: Path) -> list[tuple[str, tuple[int, int]]]:
    """What a consumer of the runs' output holds at the end: updates and withdrawals applied by id."""
    held: dict[str, dict[str, object]] = {}
    for out in outputs:
        for finding in map(json.loads, out.read_text().splitlines()):
            if finding["kind"] == "withdrawn":
                held.pop(finding["id"], None)
            else:
                held[finding["id"]] = finding
    return sorted((str(f["rule"]), tuple(f["lines"])) for f in held.values())  # type: ignore[misc]


def poll_until(done: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def read_lines(state: Path, log: Path) -> int:
    try:
        return int(json.loads(state.read_text())["files"][str(log)]["read_lines"])
    except (OSError, ValueError, KeyError):
        return -1


def test_sigterm_during_a_catch_up_stops_it_and_a_restart_reports_the_rest(tmp_path: Path) -> None:
    folder, state = tmp_path / "logs", tmp_path / "state.json"
    folder.mkdir()
    log = folder / "vllm.log"
    total = crash_loop(log, 12 << 20)
    outs = [tmp_path / "findings-1.jsonl", tmp_path / "findings-2.jsonl"]
    procs = [subprocess.Popen([logdoctor_exe(), "scan", "--format", "json", str(log)], stdout=subprocess.PIPE)]

    def watch(out: Path) -> subprocess.Popen[bytes]:
        args = [logdoctor_exe(), "watch", "--format", "json", "--state", str(state), str(log)]
        procs.append(subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.PIPE))
        return procs[-1]

    def stop(proc: subprocess.Popen[bytes]) -> None:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, proc.stderr.read() if proc.stderr else ""

    try:
        first = watch(outs[0])
        poll_until(lambda: b"\n" in outs[0].read_bytes(), "the first finding")  # in the middle of its catch-up
        stop(first)
        assert 0 < read_lines(state, log) < total, "the first run was to be stopped in its catch-up"
        second = watch(outs[1])
        poll_until(lambda: read_lines(state, log) == total, "the second run to read the file", timeout=120)
        stop(second)
        scanned, _ = procs[0].communicate(timeout=120)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    expected = sorted(
        (f["rule"], tuple(f["lines"])) for f in map(json.loads, scanned.decode().splitlines()) if f["kind"] != "summary"
    )
    assert settled(*outs) == expected  # every finding once: none lost at the stop, none repeated after it
    assert 0 < len(settled(outs[0])) < len(expected)  # and the first run had reported a part of them
