"""Plain text for pipes and files: the terminal's layout (report/layout.py), without colour."""

from __future__ import annotations

from typing import TextIO

from logdoctor.report.launches import LaunchReporter
from logdoctor.report.layout import Line, plain


class TextReporter(LaunchReporter):
    def __init__(self, out: TextIO, width: int = 100, verbose: bool = False, live: bool = False) -> None:
        super().__init__(width=width, verbose=verbose, live=live)
        self.out = out

    def write(self, lines: list[Line]) -> None:
        self.out.write("".join(plain(line) + "\n" for line in lines))
        self.out.flush()

    def rule(self, title: str) -> None:
        self.write([[(f"== {title}", "")]])

    def close(self) -> None:
        super().close()
        self.out.flush()
