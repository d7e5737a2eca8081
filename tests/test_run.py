"""`logdoctor run -- COMMAND`: pass-through of both streams, live diagnosis, signals, exit status."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.sources import command
from tests.test_e2e import ROOT_CAUSE, logdoctor_exe

PY = sys.executable
ENV = {**os.environ, "NO_COLOR": "1"}
KV_MESSAGE = (
    "To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is "
    "larger than the available KV cache memory (4.88 GiB). Based on the available memory, the estimated maximum "
    "model length is 39968. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine."
)
STDOUT_BYTES = b"INFO 11-30 19:41:07 [x.py:1] starting\nbad utf-8 \xff\xfe\x00 here\r\nlast line without newline"
# Writes STDOUT_BYTES, some raw bytes and a real traceback to stderr, exits 3.
CHILD = f"""
import sys, traceback
sys.stdout.buffer.write({STDOUT_BYTES!r}); sys.stdout.flush()
sys.stderr.buffer.write(b"child stderr \\xff\\n"); sys.stderr.flush()
try:
    raise ValueError({KV_MESSAGE!r})
except ValueError:
    traceback.print_exc()
sys.exit(3)
"""


def run_logdoctor(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [logdoctor_exe(), *args], capture_output=True, stdin=subprocess.DEVNULL, env=ENV, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def child_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    """One `logdoctor run --report FILE` of CHILD, shared by the tests that read its output and its report."""
    report = tmp_path_factory.mktemp("run") / "findings.jsonl"
    return run_logdoctor("run", "--report", str(report), "--", PY, "-c", CHILD), report


def test_both_streams_pass_through_and_the_child_status_is_kept(
    child_run: tuple[subprocess.CompletedProcess[bytes], Path],
) -> None:
    proc, _ = child_run
    direct = subprocess.run([PY, "-c", CHILD], capture_output=True, check=False)
    assert proc.returncode == 3 == direct.returncode
    assert proc.stdout == STDOUT_BYTES
    # The child's stderr comes first and whole; the diagnosis follows it.
    assert proc.stderr.startswith(direct.stderr)
    diagnosis = proc.stderr[len(direct.stderr) :].decode()
    assert diagnosis.startswith("logdoctor: ERROR") and ROOT_CAUSE in diagnosis and "--max-model-len 39968" in diagnosis


def test_report_file_holds_the_ranked_findings_as_json_lines(
    child_run: tuple[subprocess.CompletedProcess[bytes], Path],
) -> None:
    _, report = child_run
    *findings, summary = [json.loads(line) for line in report.read_text().splitlines()]
    assert summary["kind"] == "summary" and summary["source"] == "-" and summary["root_causes"] == [ROOT_CAUSE]
    primary = [f for f in findings if f["primary"]]
    assert [f["rule"] for f in primary] == [ROOT_CAUSE]
    assert primary[0]["source"] == "-" and primary[0]["fix"]["summary"].startswith(
        "Set --max-model-len to at most 39968"
    )


def test_interleaved_streams_are_framed_apart() -> None:
    # Plain stdout lines land between the lines of a traceback on stderr: they must not cut it short.
    lines = ["Traceback (most recent call last):", '  File "core.py", line 1, in <module>', f"ValueError: {KV_MESSAGE}"]
    child = (
        "import sys, time\n"
        f"for n, line in enumerate({lines!r}):\n"
        "    sys.stderr.write(line + '\\n'); sys.stderr.flush(); time.sleep(0.02)\n"
        "    print(f'step {n}', flush=True); time.sleep(0.02)\n"
    )
    proc = run_logdoctor("run", "--format", "json", "--", PY, "-c", child)
    assert proc.returncode == 0 and proc.stdout.count(b"step") == 3
    findings = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith(b'{"kind":"finding"')]
    assert [f["rule"] for f in findings if f["primary"]] == [ROOT_CAUSE]
    evidence = [e["text"] for e in findings[0]["evidence"]]
    assert evidence[0] == lines[0] and evidence[-1].startswith("ValueError") and not any("step" in t for t in evidence)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_signals_are_forwarded_and_the_child_decides_the_status(signum: signal.Signals) -> None:
    child = (
        "import signal, sys, time\n"
        "def stop(n, frame):\n"
        "    print('GOT-' + signal.Signals(n).name, flush=True)\n"
        "    sys.exit(7)\n"
        "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
        "    signal.signal(s, stop)\n"
        "print('READY', flush=True)\n"
        "time.sleep(30)\n"
    )
    # Its own session: no controlling terminal, so a SIGINT cannot have reached the child already.
    proc = subprocess.Popen(
        [logdoctor_exe(), "run", "--", PY, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=ENV,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"READY\n"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert out == f"GOT-{signum.name}\n".encode()
    assert (proc.returncode, err) == (7, b"")


def test_ctrl_c_on_a_terminal_reaches_the_child_once() -> None:
    # The terminal sends SIGINT to the whole foreground process group: forwarding it too would make it two
    # (which uvicorn, among others, takes as "force quit").
    import pty

    child = (
        "import signal, time\n"
        "seen = []\n"
        "signal.signal(signal.SIGINT, lambda n, f: seen.append(n))\n"
        "print('READY', flush=True)\n"
        "time.sleep(0.3)\n"
        "print('SIGINTS', len(seen), flush=True)\n"
    )
    pid, terminal = pty.fork()  # logdoctor leads a new session whose controlling terminal is this pty
    if pid == 0:  # pragma: no cover - the forked child
        try:
            os.execve(logdoctor_exe(), [logdoctor_exe(), "run", "--", PY, "-c", child], ENV)
        finally:
            os._exit(127)
    shown = b""
    try:
        while b"READY" not in shown:
            assert select.select([terminal], [], [], 20)[0], shown
            shown += os.read(terminal, 1024)
        os.write(terminal, b"\x03")  # Ctrl-C
        while True:
            assert select.select([terminal], [], [], 20)[0], shown
            try:
                chunk = os.read(terminal, 1024)
            except OSError:  # EIO: every process on the terminal has exited
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(terminal)
        _, status = os.waitpid(pid, 0)
    assert b"SIGINTS 1" in shown and os.waitstatus_to_exitcode(status) == 0


def test_a_child_killed_by_a_signal_gives_128_plus_n() -> None:
    proc = run_logdoctor("run", "--", PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.returncode == 128 + signal.SIGKILL


def test_a_pipe_held_by_what_the_child_left_behind_does_not_keep_logdoctor_waiting() -> None:
    # vLLM can leave engine processes behind that still hold its stdout: logdoctor ends with the child.
    started = time.monotonic()
    proc = run_logdoctor("run", "--", "sh", "-c", "sleep 8 & echo started; exit 5")
    assert (proc.returncode, proc.stdout) == (5, b"started\n")
    assert time.monotonic() - started < 5


def test_a_command_that_cannot_start_exits_127_naming_it(tmp_path: Path) -> None:
    not_executable = tmp_path / "server.sh"
    not_executable.write_text("#!/bin/sh\necho hi\n")
    runs = [
        subprocess.Popen(
            [logdoctor_exe(), "run", "--", name, "--port", "8000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for name in ("no-such-program", str(not_executable))
    ]
    for proc, name in zip(runs, ("no-such-program", str(not_executable)), strict=True):
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 127 and out == b""
        assert len(err.splitlines()) == 1 and name.encode() in err and err.startswith(b"logdoctor run: ")


def test_no_command_is_a_usage_error() -> None:
    proc = run_logdoctor("run")
    assert proc.returncode == 2 and b"--" in proc.stderr


def test_child_lives_on_when_the_reader_of_stdout_goes_away() -> None:
    child = (
        "import sys\n"
        "for _ in range(40):\n"
        "    sys.stdout.buffer.write(b'x' * 65535 + b'\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write('child finished\\n')\n"
    )
    proc = subprocess.Popen(
        [logdoctor_exe(), "run", "--", PY, "-c", child], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100) == b"x" * 100
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0  # not 141 (SIGPIPE) or 1 (BrokenPipeError) from the child
    assert err == b"child finished\n"


def test_stderr_gone_changes_nothing_for_stdout_or_the_status() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # logdoctor's stderr has no reader: every write to it fails with EPIPE
    try:
        proc = subprocess.run(
            [logdoctor_exe(), "run", "--", PY, "-c", CHILD],
            stdout=subprocess.PIPE,
            stderr=write_end,
            env=ENV,
            timeout=30,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stdout) == (3, STDOUT_BYTES)


def test_a_finding_never_lands_in_the_middle_of_a_stderr_line() -> None:
    # stderr stands mid-line ("loading 50%") when the stdout traceback completes (after 0.5 s of quiet): the
    # finding waits for the line's end.
    traceback_text = f'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: {KV_MESSAGE}'
    child = (
        "import sys, time\n"
        "sys.stderr.write('loading 50%'); sys.stderr.flush(); time.sleep(0.05)\n"
        f"print({traceback_text!r})\n"
        "sys.stdout.flush(); time.sleep(0.7)\n"
        "sys.stderr.write(' done\\n')\n"
    )
    proc = run_logdoctor("run", "--", PY, "-c", child)
    assert proc.returncode == 0 and ROOT_CAUSE.encode() in proc.stderr
    assert proc.stderr.startswith(b"loading 50%")
    assert b"%logdoctor" not in proc.stderr and b"\nlogdoctor: ERROR" in proc.stderr
    assert proc.stderr.replace(b"\n", b"").startswith(b"loading 50% done")  # the line was not split by it


# The core failing inside the pass-through cannot be injected across processes: run the module in-process.


class BrokenDoctor(Doctor):
    def feed(self, line: Line, now: float = 0.0) -> list[Finding]:
        raise RuntimeError("pattern exploded")


def _run_in_process(doctor: Doctor, emit: object, tmp_path: Path) -> tuple[int, bytes, bytes]:
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        result = command.run([PY, "-c", CHILD], doctor, emit, out.fileno(), err.fileno())  # type: ignore[arg-type]
    return result.exit_status, out_path.read_bytes(), err_path.read_bytes()


def test_a_failing_core_never_stops_the_copy_or_changes_the_status(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    direct = subprocess.run([PY, "-c", CHILD], capture_output=True, check=False)
    found: list[Finding] = []
    status, out, err = _run_in_process(BrokenDoctor(library), found.append, tmp_path)
    assert (status, out, err) == (3, STDOUT_BYTES, direct.stderr)
    assert found == []
    assert capsys.readouterr().err.count("logdoctor: internal error") == 1  # reported once, not per line


def test_a_failing_reporter_never_stops_the_copy_or_changes_the_status(
    library: Library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def emit(finding: Finding) -> None:
        raise OSError("stderr is gone")

    doctor = Doctor(library)
    status, out, _ = _run_in_process(doctor, emit, tmp_path)
    assert (status, out) == (3, STDOUT_BYTES)
    assert [f.rule for f in doctor.findings] == [ROOT_CAUSE]  # diagnosed all the same
    assert "internal error" in capsys.readouterr().err
