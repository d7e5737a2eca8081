"""What a finding or a documentation page says about a pattern (title, explanation, fix, source,
examples); matching never reads it. Its own module, imported when the first finding or page needs one:
four frozen dataclasses cost a clean scan's start two milliseconds to create."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class PatternFix:
    summary: str
    steps: list[str] = field(default_factory=list)  # a step may hold for some releases only (qualified.py)
    set: dict[str, str | int | float | bool] = field(default_factory=dict)
    unset: list[str] = field(default_factory=list)
    # A capture holding options the parser refused: the finding names the nearest real options.
    nearest: str | None = None


@dataclass(frozen=True, slots=True)
class PatternSource:
    file: str
    function: str | None = None
    versions: str | None = None
    checked: str | None = None


@dataclass(frozen=True, slots=True)
class PatternExamples:
    match: list[str]
    no_match: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PatternDetails:
    """What a finding or a documentation page says about a pattern; matching never reads it."""

    title: str
    explanation: str
    docs: str | None
    fix: PatternFix
    source: PatternSource
    examples: PatternExamples

    def as_plain(self) -> tuple[Any, ...]:
        """JSON values only: DetailStore's format."""
        fix, source, examples = self.fix, self.source, self.examples
        return (
            self.title,
            self.explanation,
            self.docs,
            (fix.summary, fix.steps, fix.set, fix.unset, fix.nearest),
            (source.file, source.function, source.versions, source.checked),
            (examples.match, examples.no_match),
        )

    @classmethod
    def from_plain(cls, plain: list[Any]) -> PatternDetails:
        title, explanation, docs, fix, source, examples = plain
        return cls(title, explanation, docs, PatternFix(*fix), PatternSource(*source), PatternExamples(*examples))
