"""Pipe mode: copy stdin to stdout byte for byte and at once, and diagnose the copy on the side.

Two rules outrank everything else here, because logdoctor sits in the path of a live server's log:
* nothing the core does may stop or delay the copy: every call into it is guarded, a failure is
  reported once on stderr, and the copy goes on;
* when the reader of stdout goes away, keep reading stdin (and diagnosing), so the server writing into
  the pipe is not killed by SIGPIPE / EPIPE.
"""

from __future__ import annotations

import os
import select
import sys
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.model import Finding

CHUNK = 1 << 16
TICK_SECONDS = 0.1  # how often quiet streams are checked while no input arrives

T = TypeVar("T")


class Guard:
    """Runs core calls; the first failure is reported on stderr, later ones are counted silently."""

    def __init__(self) -> None:
        self.failures = 0

    def call(self, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except Exception:  # noqa: BLE001 - the pass-through must survive any bug in the core
            self.failures += 1
            if self.failures == 1:
                detail = traceback.format_exc(limit=3)
                try:
                    sys.stderr.write(f"logdoctor: internal error, diagnosis may be incomplete (log copy continues):\n{detail}")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
            return default


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def pump(
    doctor: Doctor,
    emit: Callable[[Finding], None],
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    source: str = "-",
) -> Guard:
    guard = Guard()
    framer = Framer(source)
    copying = True
    while True:
        if doctor.pending:
            ready, _, _ = select.select([stdin_fd], [], [], TICK_SECONDS)
            if not ready:
                now = time.monotonic()
                for finding in guard.call(lambda: doctor.tick(now), []):
                    guard.call(lambda f=finding: emit(f), None)  # type: ignore[misc]
                continue
        try:
            data = os.read(stdin_fd, CHUNK)
        except InterruptedError:
            continue
        if not data:
            break
        if copying:
            try:
                _write_all(stdout_fd, data)
            except BrokenPipeError:
                copying = False  # the reader left; keep draining so the writer is not killed
            except OSError:
                copying = False
        now = time.monotonic()
        lines = guard.call(lambda: framer.feed(data), [])
        for line in lines:
            for finding in guard.call(lambda ln=line: doctor.feed(ln, now), []):  # type: ignore[misc]
                guard.call(lambda f=finding: emit(f), None)  # type: ignore[misc]
    for line in guard.call(framer.flush, []):
        for finding in guard.call(lambda ln=line: doctor.feed(ln, time.monotonic()), []):  # type: ignore[misc]
            guard.call(lambda f=finding: emit(f), None)  # type: ignore[misc]
    for finding in guard.call(doctor.flush, []):
        guard.call(lambda f=finding: emit(f), None)  # type: ignore[misc]
    return guard
