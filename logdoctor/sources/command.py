"""Run mode: start a command, pass its stdout and stderr through unchanged, diagnose both on the side.

`logdoctor run -- vllm serve MODEL ...` is the pipe (`vllm serve ... 2>&1 | logdoctor`) without merging the
two streams and without losing the server's exit status. The pipe's rules hold here too:
* the child's bytes are copied to logdoctor's stdout and stderr with os.read/os.write as they arrive;
  every call into the core is guarded (passthrough's Guard), a failure is reported once and the copy goes on;
* when the reader of stdout (or stderr) goes away, that pipe is still drained, so the child is not killed by
  SIGPIPE; logdoctor's exit status is the child's (128+N for a child killed by signal N) whatever the core did.

Both streams feed one Doctor under one source (`-`). Each has its own Framer and its own `Line.stream`, so a
traceback on stderr and log records on stdout that interleave stay apart, and lines are numbered in the
order they arrived over both streams (as `2>&1` would have them), which keeps launch boundaries in order.

Findings are written to stderr between whole chunks of the child's stderr, and while the child's stderr
stands in the middle of a line they wait for its end (at most HOLD_SECONDS; then a newline goes first).

SIGINT, SIGTERM and SIGHUP sent to logdoctor go to the child, and logdoctor waits for it. A Ctrl-C typed on
the terminal already reached the child (same foreground process group), so that one is not sent twice.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from types import FrameType

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.model import Finding
from logdoctor.pipeline import Pipeline
from logdoctor.sources.live import CHUNK, TICK_SECONDS, Guard, write_all

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
HOLD_SECONDS = 0.5  # longest a finding waits for the child's stderr to finish its line
DRAIN_SECONDS = 1.0  # after the child exits, how long pipes its children still hold may stay quiet
EXIT_CANNOT_START = 127  # what a shell reports for a command it could not run


class CannotStart(Exception):
    """The command could not be started (not found, not executable, ...)."""

    def __init__(self, command: str, reason: str) -> None:
        super().__init__(f"cannot start {command!r}: {reason}")
        self.command = command
        self.reason = reason


def exit_status(returncode: int) -> int:
    """Popen's returncode as a shell reports it: 128+N for a process killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass
class RunResult:
    returncode: int  # as Popen reports it: -N when the child was killed by signal N
    guard: Guard

    @property
    def exit_status(self) -> int:
        return exit_status(self.returncode)


class _Forwarder:
    """Signal handlers that pass SIGINT/SIGTERM/SIGHUP on to the child (held until it exists)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.early: list[int] = []  # arrived before the child was started
        self.after_exit = False  # a signal arrived after the child had exited: stop draining

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = {signum: signal.signal(signum, self._handle) for signum in FORWARDED}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def attach(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        for signum in self.early:
            self._send(signum, early=True)  # the child was not there for the terminal to reach it
        self.early.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.proc is None:
            self.early.append(signum)
        elif self.proc.poll() is not None:
            self.after_exit = True
        else:
            self._send(signum)

    def _send(self, signum: int, early: bool = False) -> None:
        assert self.proc is not None
        if signum == signal.SIGINT and not early and _terminal_sent_it_too(self.proc.pid):
            return
        with contextlib.suppress(OSError):
            self.proc.send_signal(signum)


def _terminal_sent_it_too(pid: int) -> bool:
    """Is the child in logdoctor's process group, and is that the foreground group of the terminal?

    Then a Ctrl-C reached the child directly, and forwarding it would deliver a second SIGINT (which many
    servers, uvicorn's included, take as "force quit"). `kill -INT` from elsewhere is forwarded otherwise.
    """
    try:
        if os.getpgid(pid) != os.getpgrp():
            return False
        tty = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.tcgetpgrp(tty) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(tty)


def start(argv: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start the command with stdout and stderr on pipes (stdin is logdoctor's)."""
    if not argv:
        raise CannotStart("", "no command given")
    try:
        return subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise CannotStart(argv[0], exc.strerror or str(exc)) from exc


class _Stream:
    """One of the child's pipes: where its bytes go, and its channel of the pipeline."""

    def __init__(self, name: str, fd: int, out_fd: int) -> None:
        self.name = name
        self.fd = fd
        self.out_fd = out_fd
        self.copying = True
        self.at_line_start = True  # the last byte copied out was a newline (or nothing was copied)

    def copy(self, data: bytes) -> None:
        if not self.copying:
            return
        try:
            write_all(self.out_fd, data)
        except OSError:  # EPIPE and friends: the reader left; keep draining so the child lives
            self.copying = False
            return
        self.at_line_start = data.endswith(b"\n")

    def label(self, line: Line) -> Line:
        # A container framing inside the stream (CRI, Docker json) keeps its own stream name below ours.
        return replace(line, stream=self.name if line.stream is None else f"{self.name}/{line.stream}")


def pump_command(
    proc: subprocess.Popen[bytes],
    doctor: Doctor,
    emit: Callable[[Finding], None],
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    source: str = "-",
    forwarder: _Forwarder | None = None,
) -> Guard:
    """Copy and diagnose the child's two pipes until both end (or stay quiet after the child exited)."""
    assert proc.stdout is not None and proc.stderr is not None
    guard = Guard()
    held: list[Finding] = []  # completed findings waiting for the child's stderr to end its line
    held_since = 0.0

    def hold(finding: Finding) -> None:
        nonlocal held_since
        if not held:
            held_since = time.monotonic()
        held.append(finding)

    pipeline = Pipeline(doctor, hold, guard)
    out = _Stream("stdout", proc.stdout.fileno(), stdout_fd)
    err = _Stream("stderr", proc.stderr.fileno(), stderr_fd)
    streams = {out.fd: out, err.fd: err}
    number = 0

    def in_arrival_order(stream: _Stream, line: Line) -> Line:
        nonlocal number
        number += 1
        return replace(stream.label(line), number=number)

    channels = {
        stream.fd: pipeline.channel(source, relabel=partial(in_arrival_order, stream), skip_lines=False)
        for stream in (out, err)
    }

    def release(now: float, force: bool = False) -> None:
        if not held:
            return
        if err.copying and not err.at_line_start:
            if not force and now - held_since < HOLD_SECONDS:
                return
            try:
                write_all(stderr_fd, b"\n")  # the finding must not continue the child's unfinished line
                err.at_line_start = True
            except OSError:
                err.copying = False
        findings = list(held)
        held.clear()
        for finding in findings:
            guard.call(partial(emit, finding), None)

    last_tick = last_data = time.monotonic()
    exited_at: float | None = None
    while streams:
        if forwarder is not None and forwarder.after_exit:
            break
        try:
            ready, _, _ = select.select(list(streams), [], [], TICK_SECONDS)
        except InterruptedError:
            continue
        now = time.monotonic()
        for fd in sorted(ready, key=lambda fd: fd != err.fd):  # stderr first: a finding waits for its line end
            stream = streams[fd]
            try:
                data = os.read(fd, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:
                del streams[fd]
                continue
            last_data = now
            stream.copy(data)
            channels[fd].feed(data, now)
        if now - last_tick >= TICK_SECONDS:
            last_tick = now
            if pipeline.pending():
                pipeline.tick(now)
            if exited_at is None and proc.poll() is not None:
                exited_at = now
        release(now)
        # The child is gone but something it started still holds a pipe: wait for quiet, not for EOF.
        if exited_at is not None and now - max(last_data, exited_at) >= DRAIN_SECONDS:
            break
    now = time.monotonic()
    for channel in channels.values():
        channel.close(now)
    pipeline.flush()
    pipeline.end()
    release(now, force=True)
    return guard


def run(
    argv: Sequence[str],
    doctor: Doctor,
    emit: Callable[[Finding], None],
    stdout_fd: int = 1,
    stderr_fd: int = 2,
    source: str = "-",
) -> RunResult:
    """Start argv, pass its output through while diagnosing it, wait for it. Raises CannotStart."""
    forwarder = _Forwarder()
    with forwarder.installed():
        proc = start(argv)
        with proc:
            forwarder.attach(proc)
            guard = pump_command(proc, doctor, emit, stdout_fd, stderr_fd, source, forwarder)
            returncode = proc.wait()
    return RunResult(returncode, guard)
