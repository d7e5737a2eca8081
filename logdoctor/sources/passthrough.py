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
from functools import partial
from typing import TypeVar

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer, Line
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
                    sys.stderr.write(
                        f"logdoctor: internal error, diagnosis may be incomplete (log copy continues):\n{detail}"
                    )
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
            return default


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


NO_FINDINGS: list[Finding] = []
NO_LINES: list[Line] = []


def pump(
    doctor: Doctor,
    emit: Callable[[Finding], None],
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    source: str = "-",
) -> Guard:
    guard = Guard()
    framer = Framer(source)

    def deliver(produce: Callable[[], list[Finding]]) -> None:
        for finding in guard.call(produce, NO_FINDINGS):
            guard.call(partial(emit, finding), None)

    def analyse(lines: list[Line], now: float) -> None:
        for line in lines:
            deliver(partial(doctor.feed, line, now))

    copying = True
    while True:
        if doctor.pending:
            ready, _, _ = select.select([stdin_fd], [], [], TICK_SECONDS)
            if not ready:
                deliver(partial(doctor.tick, time.monotonic()))
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
            except OSError:  # EPIPE and friends: the reader left; keep draining so the writer lives
                copying = False
        analyse(guard.call(partial(framer.feed, data), NO_LINES), time.monotonic())
    analyse(guard.call(framer.flush, NO_LINES), time.monotonic())
    deliver(doctor.flush)
    return guard
