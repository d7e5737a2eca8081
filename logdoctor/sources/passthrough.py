"""Pipe mode: copy stdin to stdout byte for byte and at once, and diagnose the copy on the side.

Two rules outrank everything else here, because logdoctor sits in the path of a live server's log:
* nothing the core does may stop or delay the copy: every call into it is guarded, a failure is
  reported once on stderr, and the copy goes on;
* when the reader of stdout goes away, keep reading stdin (and diagnosing), so the server writing into
  the pipe is not killed by SIGPIPE / EPIPE.

The guard and the helpers are shared with run mode (`logdoctor run`): logdoctor.sources.live.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable

from logdoctor.doctor import Doctor
from logdoctor.model import Finding
from logdoctor.pipeline import Pipeline
from logdoctor.sources.live import CHUNK, TICK_SECONDS, Guard, write_all

__all__ = ["CHUNK", "TICK_SECONDS", "Guard", "pump"]


def pump(
    doctor: Doctor,
    emit: Callable[[Finding], None],
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    source: str = "-",
) -> Guard:
    guard = Guard()
    pipeline = Pipeline(doctor, emit, guard)
    channel = pipeline.channel(source)
    _widen_pipe(stdin_fd)

    copying = True
    while True:
        if pipeline.pending():
            ready, _, _ = select.select([stdin_fd], [], [], TICK_SECONDS)
            if not ready:
                pipeline.tick(time.monotonic())
                continue
        try:
            data = os.read(stdin_fd, CHUNK)
        except InterruptedError:
            continue
        if not data:
            break
        if copying:
            try:
                write_all(stdout_fd, data)
            except OSError:  # EPIPE and friends: the reader left; keep draining so the writer lives
                copying = False
        channel.feed(data, time.monotonic())
    channel.close()
    pipeline.flush()
    pipeline.end()
    return guard


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux): a fast writer then hands over bigger chunks, and both sides
    make fewer system calls. Not a pipe, not Linux, or not allowed: nothing changes."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError, ValueError):
        pass
