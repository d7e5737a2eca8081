"""The pattern file format as pydantic models (see docs/pattern-format.md): what checks an entry of a
pattern file. A valid entry becomes a plain Pattern (library/pattern.py), which is what the rest of
logdoctor uses; only building the library (and its cache) imports this module."""

from __future__ import annotations

import re as std_re
from typing import Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from logdoctor.library import qualified
from logdoctor.library.details import PatternDetails, PatternExamples, PatternFix, PatternSource
from logdoctor.library.pattern import Pattern
from logdoctor.versions import check_range
from logdoctor.vocabulary import Severity

# `{name}`, `{name|fallback}`, `{name:divisors}`, `{name:divisor_at_most:other}` (diagnose.render).
_FUNCTIONS = "divisors|divisor_at_most|common_divisor|cofactor"
_PLACEHOLDER = std_re.compile(r"\{(\w+)(?::(" + _FUNCTIONS + r")(?::(\w+))?)?(?:\|[^{}]*)?\}")
_ID = std_re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)+")


def placeholders(text: str) -> set[str]:
    """The captures a text reads (a computed placeholder reads its argument capture too)."""
    found: set[str] = set()
    for match in _PLACEHOLDER.finditer(text):
        found.add(match[1])
        if match[3]:
            found.add(match[3])
    return found


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FixEntry(_Strict):
    summary: str
    # A step may hold for some releases only: `[>=0.13] ...` (library/qualified.py).
    steps: list[str] = Field(default_factory=list)
    set: dict[str, str | int | float | bool] = Field(default_factory=dict)
    unset: list[str] = Field(default_factory=list)
    # A capture holding options the parser refused (`--tensor-paralel-size 2`): the finding names the
    # nearest real options of the launch's release ("did you mean --tensor-parallel-size?").
    nearest: str | None = None

    @field_validator("steps")
    @classmethod
    def _ranges_readable(cls, steps: list[str]) -> list[str]:
        for step in steps:
            qualified.validate(step)
        return steps

    def texts(self) -> list[str]:
        return [self.summary, *self.steps, *(str(v) for v in self.set.values())]


class SourceEntry(_Strict):
    file: str
    function: str | None = None
    versions: str | None = None
    checked: str | None = None

    @field_validator("versions")
    @classmethod
    def _range_readable(cls, versions: str | None) -> str | None:
        if versions is not None:
            check_range(versions)
        return versions


class ExamplesEntry(_Strict):
    match: list[str] = Field(min_length=1)
    no_match: list[str] = Field(default_factory=list)


class PatternEntry(_Strict):
    """One `[[pattern]]` table."""

    id: str
    title: str
    severity: Severity
    role: Literal["cause", "consequence", "wrapper", "benign", "request"] = "cause"
    priority: int = 0
    where: Literal["exception", "line", "any"] = "exception"
    exception: list[str] = Field(default_factory=list)
    levels: list[Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]] = Field(default_factory=list)
    match: str
    # Optional: the traceback must pass through a frame whose function or file matches (e.g. the phase
    # of a CUDA out-of-memory error: model loading, profiling, CUDA graph capture).
    frames: str | None = None
    # False when the message alone does not identify the error, its exception type does (a generic
    # `401 Client Error` is a GatedRepoError's only when the type says so): the pattern is then never
    # tried on a message without its type, nor on another type with the same message.
    alone: bool = True
    # Rule ids of later errors in the same launch that this finding explains (a warning vLLM logged and
    # carried on from, and the error it led to): with one of them present this becomes the root cause at
    # that error's severity, and the error its consequence.
    explains: list[str] = Field(default_factory=list)
    # Context of the error its process logs next (vLLM's dump of the failed step before the engine core's
    # traceback): it joins that error's finding as evidence instead of being a finding of its own, and is
    # reported as itself only when no error of its process follows in its launch.
    joins_next: bool = False
    # A wait the server cannot leave by itself (Ray's placement group): when the input ends (scan, the pipe,
    # run; not watch, whose files may grow) in a launch that never served and logged no error, with no vLLM
    # record after its last sighting, the finding becomes an error: the server never started.
    blocks_start: bool = False
    explanation: str
    docs: str | None = None
    fix: FixEntry
    source: SourceEntry
    examples: ExamplesEntry

    # Compiled once to check them (and their named groups); the Pattern compiles its own on first use.
    _compiled: Any = PrivateAttr(default=None)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError(f"id {value!r} must look like `family.slug` (lowercase letters, digits, . and -)")
        return value

    @model_validator(mode="after")
    def _compile(self) -> PatternEntry:
        try:
            self._compiled = regex.compile(self.match, regex.V0)
        except regex.error as exc:
            raise ValueError(f"`match` is not a valid regex: {exc}") from exc
        if self.frames is not None:
            try:
                regex.compile(self.frames)
            except regex.error as exc:
                raise ValueError(f"`frames` is not a valid regex: {exc}") from exc
        groups = set(self._compiled.groupindex)
        used = set().union(*(placeholders(text) for text in [self.title, *self.fix.texts()]))
        if self.fix.nearest is not None:
            used.add(self.fix.nearest)
        missing = used - groups
        if missing:
            raise ValueError(f"fix text uses {sorted(missing)} but `match` has no such named group")
        if self.where == "exception" and self.levels:
            raise ValueError("`levels` applies to log lines; use where = 'line' or 'any'")
        if self.role == "benign" and self.severity != "info":
            raise ValueError("a benign pattern must have severity 'info'")
        if self.joins_next and self.severity == "error":
            raise ValueError("a pattern that joins the next error (joins_next) is context: a warning or info")
        if self.role == "request" and self.severity == "error":
            raise ValueError("a request pattern (one failed request; the server lives on) is a warning, not an error")
        return self

    def to_pattern(self, origin: str = "") -> Pattern:
        fix, source, examples = self.fix, self.source, self.examples
        details = PatternDetails(
            title=self.title,
            explanation=self.explanation,
            docs=self.docs,
            fix=PatternFix(fix.summary, list(fix.steps), dict(fix.set), list(fix.unset), fix.nearest),
            source=PatternSource(source.file, source.function, source.versions, source.checked),
            examples=PatternExamples(list(examples.match), list(examples.no_match)),
        )
        return Pattern(
            id=self.id,
            severity=self.severity,
            role=self.role,
            priority=self.priority,
            where=self.where,
            exception=list(self.exception),
            levels=list(self.levels),
            match=self.match,
            frames=self.frames,
            alone=self.alone,
            explains=list(self.explains),
            joins_next=self.joins_next,
            blocks_start=self.blocks_start,
            details=details,
            origin=origin,
            compiled=self._compiled,
        )


def validate_pattern(raw: object, origin: str = "") -> Pattern:
    """A Pattern from one `[[pattern]]` table; pydantic's ValidationError when the table is not valid."""
    return PatternEntry.model_validate(raw).to_pattern(origin)
