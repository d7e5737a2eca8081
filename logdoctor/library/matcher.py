"""Match events against the library, with a time limit on every regex search."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from logdoctor.assemble import Event, RaisedException
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.schema import Pattern
from logdoctor.records import Record

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
        self._line_patterns = [p for p in self.patterns if p.where in ("line", "any")]
        self.timed_out: set[str] = set()

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
        for pattern in self._line_patterns:
            if pattern.levels and record.level not in pattern.levels:
                continue
            if pattern.exception or pattern.compiled_frames is not None:
                continue
            captures = self._search(pattern, record.message)
            if captures is not None:
                return Match(pattern, captures, None, record)
        return None


def _frames_match(pattern: Pattern, exc: RaisedException) -> bool:
    compiled = pattern.compiled_frames
    return any(
        compiled.search(f"{frame.function} {frame.file}")  # type: ignore[attr-defined]
        for frame in exc.frames
    )
