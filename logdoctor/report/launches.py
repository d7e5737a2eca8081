"""The people's reporter, shared by the plain and the terminal one: findings in, a launch's report out,
and the summary last.

A scan hands over each launch's findings together, root cause first (scan.py), so a launch is held until
the next one starts: its warnings go at its end, and a crash loop's identical launches become one report
("the same failure in launches 3-12"). The live modes (pipe, run) print each finding as it lands, since
the server may hang rather than exit, and the summary when the input ends.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING

from logdoctor.report import FileSummary, UpdateFilter, redacted, summary_line
from logdoctor.report.layout import Layout, Line, launches_label, plural

if TYPE_CHECKING:
    from logdoctor.model import Finding

# What may differ between two sightings of the same failure: numbers and addresses (pids, ports, sizes).
_VARIABLE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


def failure_signature(findings: Sequence[Finding]) -> tuple[object, ...] | None:
    """Two launches with the same signature failed the same way and take the same fix."""
    root = next((f for f in findings if f.primary), None)
    if root is None:
        return None
    others = tuple(sorted({(f.rule, f.role) for f in findings if f is not root and f.severity == "error"}))
    return (root.rule, _VARIABLE.sub("#", root.error.message), root.fix.command, others)


@dataclass
class _Launch:
    source: str
    number: int
    findings: list[Finding] = field(default_factory=list)


@dataclass
class _Failure:
    """A root cause as the summary names it, and the launches that failed that way."""

    root: Finding
    launches: list[int]


class LaunchReporter(ABC):
    def __init__(self, width: int = 100, verbose: bool = False, live: bool = False) -> None:
        self.layout = Layout(width=width, verbose=verbose)
        self.live = live
        self._updates = UpdateFilter()
        self._launch: _Launch | None = None
        self._printed_signature: tuple[object, ...] | None = None
        self._repeats: list[int] = []
        self._failures: list[_Failure] = []  # of the current file (scan) or the whole stream (live)
        self._any_warning = False

    @abstractmethod
    def write(self, lines: list[Line]) -> None:
        """Print these lines, then flush: they may be all a dying server's user ever sees."""

    @abstractmethod
    def rule(self, title: str) -> None:
        """A separator naming what follows."""

    # -- the Reporter protocol

    def file_start(self, source: str) -> None:
        self.rule(source)

    def file_end(self, summary: FileSummary) -> None:
        self._end_launch()
        self._end_repeats()
        if not summary.vllm:  # an empty, binary or foreign file: said on its own line, nothing to sum up
            self.rule(summary_line(summary))
        else:
            source, lines, launches, findings = summary.source, summary.lines, summary.launches, summary.findings
            counts = f"{plural(lines, 'line')}, {plural(launches, 'launch')}, {plural(findings, 'finding')}"
            title = f"summary: {source}: {counts}"
            if len(title) + 4 > self.layout.width:  # the file's first line names it
                title = f"summary: {PurePath(source).name}: {counts}"
            if len(title) + 4 > self.layout.width:
                title = f"summary: {counts}"
            self._summary(title, summary.serving is False)
        self._failures = []
        self._printed_signature = None
        self._any_warning = False

    def finding(self, finding: Finding) -> None:
        if self.live:
            self._amend(finding)
        if not self._updates.shows(finding):
            return
        f = redacted(finding)
        if self.live:
            self._live(f)
            return
        if self._launch is None or (self._launch.source, self._launch.number) != (f.source, f.launch):
            self._end_launch()
            self._launch = _Launch(f.source, f.launch)
        self._launch.findings.append(f)

    def close(self) -> None:
        if self.live:
            if self._failures:
                self.write([[]])
                self._summary("logdoctor summary")
        else:
            self._end_launch()
            self._end_repeats()

    # -- batch: a launch at a time

    def _end_launch(self) -> None:
        launch, self._launch = self._launch, None
        if launch is None or not launch.findings:
            return
        signature = failure_signature(launch.findings)
        if signature is not None and signature == self._printed_signature and not self.layout.verbose:
            self._repeats.append(launch.number)
            self._failures[-1].launches.append(launch.number)
            return
        self._end_repeats()
        self._printed_signature = signature
        self.write(self._launch_lines(launch.findings))
        root = next((f for f in launch.findings if f.primary), None)
        if root is not None:
            self._failures.append(_Failure(root, [launch.number]))

    def _end_repeats(self) -> None:
        if self._repeats:
            self.write([self.layout.same_failure(self._repeats), []])
            self._repeats = []

    def _launch_lines(self, findings: list[Finding]) -> list[Line]:
        root = next((f for f in findings if f.primary), None)
        warnings = [f for f in findings if f.severity != "error" and f is not root]
        others = [f for f in findings if f.severity == "error" and f is not root]
        out: list[Line] = []
        if root is not None:
            out += self.layout.root_cause(root)
        for f in others:
            out += (
                self.layout.root_cause(f, tag=self._tag(f))
                if self.layout.verbose
                else self.layout.fit(self.layout.one_line(f), "      ")
            )
        rules_shown = root is not None and bool(root.constraints)
        if not rules_shown:  # a feature's rules carried by a finding that is not the root cause: once
            carrier = next((f for f in findings if f.constraints), None)
            if carrier is not None and not self.layout.verbose:
                out += self.layout.rules(carrier.constraints)
        if self.layout.verbose:
            for f in warnings:
                out += self.layout.root_cause(f, tag="")
        else:
            out += self.layout.warnings(warnings)
        self._any_warning = self._any_warning or bool(warnings)
        return [*out, []]

    @staticmethod
    def _tag(finding: Finding) -> str:
        return {"wrapper": "reports an error logged above", "consequence": "follows from the above"}.get(
            finding.role, ""
        )

    # -- live: each finding as it lands

    def _amend(self, finding: Finding) -> None:
        """The summary names a root cause as the stream last described it (its lines, its sightings)."""
        for failure in self._failures:
            if failure.root.id == finding.id and finding.id:
                if finding.kind == "withdrawn" or not finding.primary:
                    self._failures.remove(failure)
                else:
                    failure.root = redacted(finding)
                return

    def _live(self, f: Finding) -> None:
        if f.kind == "update":  # shown only when it makes an earlier finding the root cause (UpdateFilter)
            self.write([*self.layout.root_cause(f, tag="now the root cause"), []])
            # A root cause shown already that is now an error (the input ended in its wait) is one failure.
            self._failures = [failure for failure in self._failures if failure.root.id != f.id]
            self._failures.append(_Failure(f, [f.launch]))
            return
        if f.primary:
            self.write([*self.layout.root_cause(f), []])
            self._failures.append(_Failure(f, [f.launch]))
        elif f.severity == "error":
            self.write(self.layout.fit([("logdoctor: ↳ ", "dim"), *self.layout.one_line(f)[1:]], "      "))
        else:  # a warning as it lands: one line (a scan groups them at the end of their launch)
            self.write(self.layout.fit([("logdoctor: ", "dim"), *self.layout.warning(f)[1:]], "      "))
            self._any_warning = True

    # -- the summary, last on screen

    def _summary(self, title: str, not_serving: bool = False) -> None:
        if not self._failures:
            quiet = "No error found" + ("; the warnings are above." if self._any_warning else ".")
            if not_serving:  # a snapshot of a server still starting, or one killed without a word
                quiet += " The last launch had not reached serving when the log ends."
            self.write(self.layout.summary(title, None, [], [], quiet))
            return
        last = self._failures[-1]
        others = [f"{launches_label(f.launches)}: {f.root.rule}" for f in self._failures[:-1]]
        self.write(self.layout.summary(title, last.root, last.launches, others, ""))
