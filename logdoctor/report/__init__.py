"""Reporters: turn findings into what a person or a program reads. All output is redacted here."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from logdoctor.redact import redact

if TYPE_CHECKING:  # a reporter of a clean log builds no Finding, and imports no pydantic
    from logdoctor.model import Finding


class Reporter(Protocol):
    """A sink of findings, the last stage of every mode's pipeline (pipeline.py)."""

    def finding(self, finding: Finding) -> None: ...
    # A scan's files: each file's findings come between these, launch by launch as the file is read.
    def file_start(self, source: str) -> None: ...
    def file_end(self, source: str, lines: int, launches: int, findings: int) -> None: ...
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
    """For people, a stream's amendments are noise (one more rank saw the error) except one: a finding
    reported earlier is now the root cause. Says which updates a text reporter shows."""

    def __init__(self) -> None:
        self._shown_as_root: set[str] = set()

    def shows(self, finding: Finding) -> bool:
        if finding.kind == "withdrawn":
            return False  # an early report taken back: text cannot unprint it, and must not print it as new
        if finding.kind != "update":
            if finding.primary:
                self._shown_as_root.add(finding.id)
            return True
        if finding.primary and finding.id not in self._shown_as_root:
            self._shown_as_root.add(finding.id)
            return True
        return False
