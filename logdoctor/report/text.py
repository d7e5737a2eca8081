"""Plain text for pipes, files and NO_COLOR; the rich terminal reporter shows the same parts."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, TextIO

from logdoctor.report import FileSummary, UpdateFilter, redacted, summary_line
from logdoctor.report.checklist import checklist, command_diff

if TYPE_CHECKING:
    from logdoctor.model import EvidenceLine, Finding

ERROR_LINE_CHARS = 240
EVIDENCE_HEAD = 2
EVIDENCE_TAIL = 10


TRUNCATED_NOTE = (
    "truncated: the error was longer than logdoctor keeps (64 KiB a line, the first 200 and last 2000 "
    "lines, 200 frames an exception); the middle was dropped"
)


def evidence_excerpt(evidence: list[EvidenceLine]) -> list[EvidenceLine | None]:
    """The evidence a person reads: its first lines and its last ones; None marks the gap."""
    if len(evidence) <= EVIDENCE_HEAD + EVIDENCE_TAIL:
        return list(evidence)
    return [*evidence[:EVIDENCE_HEAD], None, *evidence[-EVIDENCE_TAIL:]]


def shorten(text: str, width: int = ERROR_LINE_CHARS) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def where(finding: Finding) -> str:
    first, last = finding.lines
    lines = f"line {first}" if first == last else f"lines {first}-{last}"
    parts = [f"{finding.source} {lines}", f"launch {finding.launch}"]
    if finding.process:
        parts.append(finding.process)
    if finding.occurrences > 1:
        parts.append(f"seen {finding.occurrences} times")
    return ", ".join(parts)


def headline(finding: Finding) -> str:
    tag = " (root cause)" if finding.primary else ""
    if finding.role == "wrapper":
        tag = " (reports an error logged above)"
    return f"{finding.severity.upper()} [{finding.rule}] {finding.title}{tag}"


class TextReporter:
    def __init__(self, out: TextIO, width: int = 100) -> None:
        self.out = out
        self.width = width
        self._updates = UpdateFilter()

    def file_start(self, source: str) -> None:
        self.out.write(f"== {source}\n")
        self.out.flush()

    def file_end(self, summary: FileSummary) -> None:
        self.out.write(f"== {summary_line(summary)}\n")
        self.out.flush()

    def finding(self, finding: Finding) -> None:
        if not self._updates.shows(finding):
            return
        f = redacted(finding)
        if f.kind == "update":
            self.out.write(f"logdoctor: now the root cause: [{f.rule}] {f.title} ({where(f)}, reported above)\n")
            return
        wrap = textwrap.TextWrapper(width=self.width, initial_indent="    ", subsequent_indent="    ")
        out = [f"logdoctor: {headline(f)}", f"  where: {where(f)}"]
        error = f"{f.error.type}: {f.error.message}" if f.error.type else f.error.message
        out.append(f"  error: {error.splitlines()[0] if error else ''}")
        out.append("  evidence:")
        for item in evidence_excerpt(f.evidence):
            out.append("    ..." if item is None else f"    {item.line:>6} | {item.text}")
        if f.truncated:
            out.append(f"    ({TRUNCATED_NOTE})")
        out.append("  what it means:")
        out += wrap.wrap(f.explanation)
        out.append(f"  fix: {f.fix.summary}")
        out += [f"    {n}. {step}" for n, step in enumerate(f.fix.steps, 1)]
        if f.constraints:
            out.append("  every rule of the feature, checked against this launch:")
            out += ["  " + line for line in checklist(f.constraints)]
        if f.fix.command and f.fix.original_command:
            out.append("  corrected command:")
            out += ["  " + line for line in command_diff(f.fix.original_command, f.fix.command)]
        elif f.fix.command:
            out.append(f"  corrected command: {f.fix.command}")
        if f.docs:
            out.append(f"  docs: {f.docs}")
        self.out.write("\n".join(out) + "\n\n")
        self.out.flush()

    def close(self) -> None:
        self.out.flush()
