"""A terminal: the plain reporter's layout (report/layout.py) in colour. NO_COLOR keeps the layout and
drops the colour (rich reads it); nothing is wrapped by rich, so a corrected command is one line to copy."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.text import Text

from logdoctor.report.launches import LaunchReporter
from logdoctor.report.layout import MARKER, Line


def styled(line: Line) -> Text:
    text = Text()
    for part, style in line:
        if style != MARKER:  # the plain layout's [-old-] and {+new+}: colour says it here
            text.append(part, style=style or None)
    return text


class TerminalReporter(LaunchReporter):
    def __init__(self, out: TextIO, verbose: bool = False, live: bool = False, console: Console | None = None) -> None:
        self.console = console or Console(file=out, highlight=False, soft_wrap=True)
        super().__init__(width=self.console.width, verbose=verbose, live=live)

    def write(self, lines: list[Line]) -> None:
        for line in lines:
            self.console.print(styled(line))
        self.console.file.flush()

    def rule(self, title: str) -> None:
        self.console.rule(Text(title), align="left")
        self.console.file.flush()
