"""What the live modes (pipe, run) share: guarded calls into the core and whole writes to raw descriptors.

A live mode copies a server's bytes first and diagnoses them on the side; nothing the core does may stop
or delay the copy. Every call into it goes through a Guard: the first failure is reported once on stderr,
later ones are counted, and the caller gets a harmless default and goes on.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from logdoctor.model import Finding

CHUNK = 1 << 20
TICK_SECONDS = 0.1  # how often quiet streams are checked while no input arrives

NO_FINDINGS: list[Finding] = []

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


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is out (a pipe may take part of a chunk); OSError is the caller's."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
