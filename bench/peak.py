"""Peak RSS of one child process, measured the way `/usr/bin/time -f %M` does, from a small parent.

Linux keeps a process's peak RSS across fork and exec, so a child started straight from a benchmark
script that holds a few hundred MB (a generated log, a results list) reports the script's peak, not its
own. `/usr/bin/time` is a small process in between: its child's peak is the command's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

TIME = "/usr/bin/time"


class PeakRss:
    """with PeakRss(argv) as (wrapped, peak): run `wrapped`; peak() is then the command's peak RSS (KiB)."""

    def __init__(self, argv: Sequence[str]) -> None:
        fd, self.path = tempfile.mkstemp(prefix="logdoctor-rss-")
        os.close(fd)
        self.argv = [TIME, "-f", "%M", "-o", self.path, *argv] if os.access(TIME, os.X_OK) else list(argv)

    def __enter__(self) -> tuple[list[str], PeakRss]:
        return self.argv, self

    def __exit__(self, *_exc: object) -> None:
        os.unlink(self.path)

    def kib(self, fallback: int = 0) -> int:
        """The command's peak RSS, or `fallback` (wait4's figure) without /usr/bin/time."""
        try:
            with open(self.path) as handle:
                lines = [line for line in handle.read().splitlines() if line.strip().isdigit()]
        except OSError:
            return fallback
        return int(lines[-1]) if lines else fallback
