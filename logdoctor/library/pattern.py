"""A pattern as the matcher and the reporters use it: plain data, validated before it gets here.

schema.py checks a pattern file's entries (pydantic) and turns each into a Pattern; the library cache
(library/stored.py) keeps Patterns between runs, so a start validates nothing and imports no pydantic.
What a scan reads on every line (id, where, levels, match, ...) is in the object; what only a finding or
a documentation page reads (title, explanation, fix, source, examples: details.py) is its `details`,
which a cached library decodes on first use (a clean log never does; most of a pattern's bytes are its
examples).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from logdoctor.vocabulary import Role, Severity

if TYPE_CHECKING:
    from logdoctor.library.details import PatternDetails, PatternExamples, PatternFix, PatternSource

Where = Literal["exception", "line", "any"]


class DetailStore:
    """The details of every pattern of a cached library, as the JSON text the cache holds, decoded on first
    use: they are three quarters of the library's bytes, and a clean log never reads them."""

    def __init__(self, text: bytes | memoryview) -> None:
        self._text = text
        self._decoded: list[list[Any]] | None = None

    @staticmethod
    def text_of(details: Iterable[PatternDetails]) -> bytes:
        return json.dumps([d.as_plain() for d in details]).encode()

    def get(self, index: int) -> PatternDetails:
        from logdoctor.library.details import PatternDetails

        if self._decoded is None:
            self._decoded = json.loads(bytes(self._text))
            self._text = b""
        return PatternDetails.from_plain(self._decoded[index])


class Pattern:
    """One pattern of the library. `compiled` is built on first use: a scan tries few of the library's
    patterns (the literal gate, gate.py), and compiling them all would cost seconds at every start."""

    def __init__(
        self,
        *,
        id: str,
        severity: Severity,
        match: str,
        details: PatternDetails,
        role: Role = "cause",
        priority: int = 0,
        where: Where = "exception",
        exception: list[str] | None = None,
        levels: list[str] | None = None,
        frames: str | None = None,
        alone: bool = True,
        explains: list[str] | None = None,
        joins_next: bool = False,
        blocks_start: bool = False,
        origin: str = "",
        order: int = 0,
        compiled: Any = None,  # `match` compiled already (validation compiles it to check it)
    ) -> None:
        self.id = id
        self.severity: Severity = severity
        self.role: Role = role
        self.priority = priority
        self.where: Where = where
        self.exception = exception or []
        self.levels = levels or []
        self.match = match
        # The traceback must pass through a frame whose function or file matches this, when set.
        self.frames = frames
        # False: the message alone does not identify the error, its exception type does.
        self.alone = alone
        # Rule ids of later errors in the same launch that this finding explains.
        self.explains = explains or []
        # Context of the next error of its process: joins that finding's evidence (doctor.py).
        self.joins_next = joins_next
        # A wait that keeps the server from starting: an error when the input ends in it (doctor.py).
        self.blocks_start = blocks_start
        self.origin = origin  # the file the pattern came from
        self.order = order  # position in the library
        self._details: PatternDetails | int = details  # an index into _store once cached
        self._store: DetailStore | None = None
        self._compiled: Any = compiled
        self._compiled_frames: Any = None

    def __repr__(self) -> str:
        return f"Pattern({self.id!r})"

    @property
    def details(self) -> PatternDetails:
        details = self._details
        if isinstance(details, int):
            assert self._store is not None
            details = self._details = self._store.get(details)
        return details

    @property
    def title(self) -> str:
        return self.details.title

    @property
    def explanation(self) -> str:
        return self.details.explanation

    @property
    def docs(self) -> str | None:
        return self.details.docs

    @property
    def fix(self) -> PatternFix:
        return self.details.fix

    @property
    def source(self) -> PatternSource:
        return self.details.source

    @property
    def examples(self) -> PatternExamples:
        return self.details.examples

    @property
    def compiled(self) -> Any:
        if self._compiled is None:
            import regex  # its import costs a tenth of a clean scan's start

            self._compiled = regex.compile(self.match, regex.V0)
        return self._compiled

    @property
    def compiled_frames(self) -> Any:
        if self.frames is None:
            return None
        if self._compiled_frames is None:
            import regex

            self._compiled_frames = regex.compile(self.frames)
        return self._compiled_frames

    # What the library cache (stored.py) keeps of a pattern beside its details, in this order.
    ROW = (
        *("id", "severity", "role", "priority", "where", "exception", "levels", "match", "frames", "alone"),
        *("explains", "joins_next", "blocks_start", "origin", "order"),
    )

    def row(self) -> list[Any]:
        return [getattr(self, name) for name in self.ROW]

    @classmethod
    def from_rows(cls, rows: list[list[Any]], store: DetailStore) -> list[Pattern]:
        """The patterns row() described, the nth's details the store's nth. Their attributes are set as one
        dict each, without __init__: a warm start makes a thousand of these."""
        names, new = cls.ROW, cls.__new__
        patterns = []
        for index, row in enumerate(rows):
            pattern = new(cls)
            fields = dict(zip(names, row, strict=True))  # a row of another layout: ValueError
            fields.update(_details=index, _store=store, _compiled=None, _compiled_frames=None)
            pattern.__dict__ = fields
            patterns.append(pattern)
        return patterns
