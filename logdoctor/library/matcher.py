"""Match events against the library, with a time limit on every regex search."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logdoctor.assemble import Event, RaisedException
from logdoctor.library.literals import required_literals
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.schema import Pattern
from logdoctor.records import Record

if TYPE_CHECKING:
    from logdoctor.prefilter import Prefilter

_UNBUILT = object()

# Seconds one regex search may take. A pattern that backtracks catastrophically on some line is stopped
# here and reported once, instead of freezing the pipe.
MATCH_TIMEOUT = 0.05


@dataclass(frozen=True, slots=True)
class Match:
    pattern: Pattern
    captures: dict[str, str]
    exception: RaisedException | None  # the exception it matched, None for a log line
    record: Record  # the line that carries the matched text


class Library:
    def __init__(self, patterns: Sequence[Pattern], sets: Sequence[ConstraintSet] = ()) -> None:
        self.patterns = list(patterns)
        self.sets = list(sets)
        self.by_id = {p.id: p for p in self.patterns}
        self._exception_patterns = [p for p in self.patterns if p.where in ("exception", "any")]
        self.line_patterns = [
            p for p in self.patterns if p.where in ("line", "any") and not p.exception and p.compiled_frames is None
        ]
        # A line pattern is tried only on messages holding one of the literals its regex requires: a
        # substring test costs a fraction of a regex search, and most lines hold none.
        self._line_literals = [(p, required_literals(p.match)) for p in self.line_patterns]
        self._case_literals = sorted({t for _, f in self._line_literals if f and not f.caseless for t in f.texts})
        self._caseless_literals = sorted({t for _, f in self._line_literals if f and f.caseless for t in f.texts})
        self.exception_names = sorted({name.rsplit(".", 1)[-1] for p in self.patterns for name in p.exception})
        self.timed_out: set[str] = set()
        self._prefilter: object = _UNBUILT

    def prefilter(self) -> Prefilter | None:
        """The prefilter for this library, built once; None when it cannot be built or is switched off
        ($LOGDOCTOR_PREFILTER=off reads every line: for benchmarks and bug hunts)."""
        if self._prefilter is _UNBUILT:
            import os

            from logdoctor.prefilter import Prefilter

            off = os.environ.get("LOGDOCTOR_PREFILTER") == "off"
            self._prefilter = None if off else Prefilter.for_library(self)
        return self._prefilter  # type: ignore[return-value]

    @classmethod
    def load(cls, extra_dirs: Iterable[str] = ()) -> Library:
        from logdoctor.library.loader import load_constraint_sets, load_patterns

        return cls(load_patterns(extra_dirs), load_constraint_sets(extra_dirs))

    def _search(self, pattern: Pattern, text: str) -> dict[str, str] | None:
        try:
            found = pattern.compiled.search(text, timeout=MATCH_TIMEOUT)  # type: ignore[attr-defined]
        except TimeoutError:
            if pattern.id not in self.timed_out:
                self.timed_out.add(pattern.id)
                print(
                    f"logdoctor: pattern {pattern.id} ({pattern.origin}) took longer than "
                    f"{MATCH_TIMEOUT}s on one line and was skipped there; its regex backtracks",
                    file=sys.stderr,
                )
            return None
        if found is None:
            return None
        return {k: v for k, v in found.groupdict().items() if v is not None}

    def match_exception(self, exc: RaisedException, event: Event) -> Match | None:
        names = exc.type_names
        text = exc.message
        for pattern in self._exception_patterns:
            if pattern.exception and names.isdisjoint(pattern.exception):
                continue
            if pattern.compiled_frames is not None and not _frames_match(pattern, exc):
                continue
            captures = self._search(pattern, text)
            if captures is not None:
                return Match(pattern, captures, exc, exc.record or event.record)
        return None

    def match_line(self, record: Record) -> Match | None:
        message = record.message
        present = {t for t in self._case_literals if t in message}
        if self._caseless_literals:
            lowered = message.lower()
            present.update(t for t in self._caseless_literals if t in lowered)
        for pattern, literals in self._line_literals:
            if pattern.levels and record.level not in pattern.levels:
                continue
            if literals is not None and present.isdisjoint(literals.texts):
                continue
            captures = self._search(pattern, message)
            if captures is not None:
                return Match(pattern, captures, None, record)
        return None


def _frames_match(pattern: Pattern, exc: RaisedException) -> bool:
    compiled = pattern.compiled_frames
    return any(
        compiled.search(f"{frame.function} {frame.file}")  # type: ignore[attr-defined]
        for frame in exc.frames
    )
