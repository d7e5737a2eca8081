"""Reporters: turn findings into what a person or a program reads. All output is redacted here."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from logdoctor.redact import redact

if TYPE_CHECKING:  # a reporter of a clean log builds no Finding, and imports no pydantic
    from logdoctor.model import Finding


@dataclass(frozen=True, slots=True)
class FileSummary:
    """What a source came to, once it has ended: a scanned file, or the pipe's and `run`'s input (source
    `-`). Built by scan.summarize() from the Doctor; `--format json` prints it as its `summary` line."""

    source: str
    lines: int  # lines read
    launches: int  # server launches found; 0 when the source holds no vLLM line
    findings: int  # findings reported (updates and withdrawals not counted)
    errors: int  # findings of severity error among them
    vllm: bool  # the source holds a vLLM line (record prefix, traceback frame in vLLM, or a finding)
    root_causes: tuple[str, ...]  # the rule of each launch's root cause, each once, in the order first seen
    serving: bool | None = None  # the last launch reached serving; None: its header shows no API server

    @property
    def status(self) -> Literal["ok", "problem"]:
        return "problem" if self.errors else "ok"


def summary_line(summary: FileSummary) -> str:
    """The line a person reads at the end of a source (the text reporters' file_end)."""
    if not summary.vllm:
        seen = "empty" if summary.lines == 0 else f"no vLLM line in {_count(summary.lines, 'line')}"
        if summary.findings:
            seen += f"; {_count(summary.findings, 'finding')}"
        return f"{summary.source}: not a vLLM log ({seen})"
    counts = ", ".join(
        (_count(summary.lines, "line"), _count(summary.launches, "launch"), _count(summary.findings, "finding"))
    )
    if summary.status == "ok":
        # With no error, a log that ends before its server served is a snapshot of one still starting, or of
        # one that died without a word (the OOM killer's SIGKILL): said, not judged.
        starting = "; the last launch had not reached serving when the log ends" if summary.serving is False else ""
        return f"{summary.source}: {counts}: ok{starting}"
    causes = ", ".join(summary.root_causes)
    return f"{summary.source}: {counts}: problem" + (f" (root cause: {causes})" if causes else "")


def _count(n: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith("ch") else "s")
    return f"{n} {noun if n == 1 else plural}"


class Reporter(Protocol):
    """A sink of findings, the last stage of every mode's pipeline (pipeline.py)."""

    def finding(self, finding: Finding) -> None: ...
    # A scan's files: each file's findings come between these, launch by launch as the file is read.
    # The pipe and `run` call file_end alone, when their input ends; watch never does (a file never ends).
    def file_start(self, source: str) -> None: ...
    def file_end(self, summary: FileSummary) -> None: ...
    def close(self) -> None: ...


def use_color(out: TextIO) -> bool:
    return out.isatty() and not os.environ.get("NO_COLOR")


def _json(out: TextIO, verbose: bool, live: bool) -> Reporter:
    from logdoctor.report.jsonl import JsonReporter

    return JsonReporter(out)


def _text(out: TextIO, verbose: bool, live: bool) -> Reporter:
    # For people, one layout: in colour on a terminal (NO_COLOR keeps the layout), plain elsewhere.
    if out.isatty():
        from logdoctor.report.terminal import TerminalReporter

        return TerminalReporter(out, verbose=verbose, live=live)
    from logdoctor.report.text import TextReporter

    return TextReporter(out, verbose=verbose, live=live)


# The formats `--format` offers; each builds its reporter lazily (rich is only imported for a terminal).
FORMATS: dict[str, Callable[[TextIO, bool, bool], Reporter]] = {"text": _text, "json": _json}


def make_reporter(fmt: str, out: TextIO, verbose: bool = False, live: bool = False) -> Reporter:
    """`live`: findings land as a stream (pipe, run, watch) rather than a launch at a time (scan)."""
    return FORMATS[fmt](out, verbose, live)


def scrub(value: Any) -> Any:
    """Redact every string inside a dumped model."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def redacted(finding: Finding) -> Finding:
    return type(finding).model_validate(scrub(finding.model_dump()))


def print_notice(message: str) -> None:
    """Where the core's own problems (an internal error, a regex that ran out of time) reach the user:
    standard error, redacted like every other output; a closed stderr loses the notice, not the run."""
    import contextlib
    import sys

    with contextlib.suppress(OSError, ValueError):
        print(redact(message), file=sys.stderr)


class UpdateFilter:
    """For people, a stream's amendments are noise (one more rank saw the error) except two: a finding
    reported earlier is now the root cause, or it is now an error (the input ended in a wait that kept the
    server from starting). Says which updates a text reporter shows."""

    def __init__(self) -> None:
        self._shown_as_root: set[str] = set()
        self._shown_as_error: set[str] = set()

    def shows(self, finding: Finding) -> bool:
        if finding.kind == "withdrawn":
            return False  # an early report taken back: text cannot unprint it, and must not print it as new
        became_error = finding.severity == "error" and finding.id not in self._shown_as_error
        if finding.severity == "error":
            self._shown_as_error.add(finding.id)
        if finding.kind != "update":
            if finding.primary:
                self._shown_as_root.add(finding.id)
            return True
        if finding.primary and (finding.id not in self._shown_as_root or became_error):
            self._shown_as_root.add(finding.id)
            return True
        return False
