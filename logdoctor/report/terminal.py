"""Rich panels for a terminal: the same parts as the plain reporter, easier on the eye."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from logdoctor.model import Finding
from logdoctor.report import FileSummary, UpdateFilter, redacted, summary_line
from logdoctor.report.checklist import checklist, command_diff
from logdoctor.report.text import TRUNCATED_NOTE, evidence_excerpt, headline, shorten, where

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class TerminalReporter:
    def __init__(self, out: TextIO) -> None:
        self.console = Console(file=out, highlight=False, soft_wrap=False)
        self._updates = UpdateFilter()

    def file_start(self, source: str) -> None:
        self.console.rule(source)

    def file_end(self, summary: FileSummary) -> None:
        self.console.rule(Text(summary_line(summary), style="bold" if summary.vllm else "bold yellow"))

    def finding(self, finding: Finding) -> None:
        if not self._updates.shows(finding):
            return
        f = redacted(finding)
        if f.kind == "update":
            note = f"Now the root cause: [{f.rule}] {f.title} ({where(f)}, shown above)"
            self.console.print(Text(note, style="bold"))
            return
        parts: list[Text] = [Text(where(f), style="dim")]
        error = f"{f.error.type}: {f.error.message}" if f.error.type else f.error.message
        parts.append(Text(shorten(error.splitlines()[0]) if error else "", style="bold"))
        evidence = Text()
        for item in evidence_excerpt(f.evidence):
            if item is None:
                evidence.append("         ...\n", style="dim")
            else:
                evidence.append(f"{item.line:>8} │ ", style="dim")
                evidence.append(item.text + "\n")
        if f.truncated:
            evidence.append(f"({TRUNCATED_NOTE})\n", style="dim")
        parts += [Text("Evidence", style="underline"), evidence]
        parts += [Text("What it means", style="underline"), Text(f.explanation + "\n")]
        fix = Text()
        fix.append(f.fix.summary + "\n", style="bold green")
        for n, step in enumerate(f.fix.steps, 1):
            fix.append(f"  {n}. {step}\n")
        if f.constraints:
            fix.append("\nEvery rule of the feature, checked against this launch:\n", style="underline")
            fix.append_text(Text.from_markup("\n".join(checklist(f.constraints, color=True)) + "\n"))
        if f.fix.command and f.fix.original_command:
            fix.append("\nCorrected command:\n", style="underline")
            diff = command_diff(f.fix.original_command, f.fix.command, color=True)
            fix.append_text(Text.from_markup("\n".join(diff) + "\n"))
        elif f.fix.command:
            fix.append(f"\n  {f.fix.command}\n", style="green")
        if f.docs:
            fix.append(f"\n  {f.docs}\n", style="blue")
        parts += [Text("Fix", style="underline"), fix]
        self.console.print(Panel(Group(*parts), title=Text(headline(f), style=_STYLE[f.severity]), title_align="left"))

    def close(self) -> None:
        self.console.file.flush()
