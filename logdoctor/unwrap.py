"""Lines that a terminal hard-wrapped, joined back, per source.

Output copied from some terminals, screen sessions and web consoles is cut at the window's width: every
line longer than W characters continues on the next physical line, which lacks the record prefix of its
first part, so a logged exception message ends mid-word and its rest reads as another program's line.

A wrap leaves marks that normal output does not: no line is longer than the width, and many different
lines have exactly that length, each followed by a line that starts like nothing a record starts with.
Once two different lines have shown that mark and nothing longer has been seen, a line of that width is
held until the next line says whether it continues, and joined to it (without a space: the terminal cut
where the width ended, in a word or not). A longer line later ends it: the source is not wrapped.
A normal vLLM log never qualifies (its header lines are far longer than any other), so nothing is held.
"""

from __future__ import annotations

import re

MIN_WIDTH = 60  # no terminal is narrower; shorter lines of equal length are a coincidence
REPEATS_TO_LEARN = 2

# How a line starts when it is not the rest of the line before it: a record prefix, a traceback's lines,
# indentation, an exception line, a blank.
_STARTS_SOMETHING = re.compile(
    r"\s|$|\(|\[rank\d|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b|Traceback \(|File \"|During handling"
    r"|The above exception|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)\b|\d{4}-\d\d-\d\d"
)


# Pydantic's header (`1 validation error for ModelConfig`) is followed by the failing field's name, a lone
# snake_case word that would read as the header's wrapped rest; a wrapped class name goes on in CamelCase.
_PYDANTIC_HEADER = re.compile(r"\d+ validation errors? for [\w.]+$")
_FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*(?:\.[\w.]+)?")


def joins(before: str, after: str) -> bool:
    """Is `after` the wrapped rest of `before` (a line of the wrap width)?"""
    if not continues(after):
        return False
    return not (_PYDANTIC_HEADER.search(before) and _FIELD_NAME.fullmatch(after))


def continues(text: str) -> bool:
    """Could this line be the rest of a wrapped line?"""
    return _STARTS_SOMETHING.match(text) is None


class Unwrapper:
    """Learns a source's wrap width from the lines it sees and joins wrapped lines of that width."""

    def __init__(self) -> None:
        self.width: int | None = None
        self._candidates: dict[int, set[int]] = {}  # length -> hashes of the different lines seen wrapped
        self._previous: tuple[int, int] = (0, 0)  # the line before: its length and hash
        self._longest = 0

    def observe(self, text: str, could_continue: bool) -> None:
        """Every physical line, in order, and whether it could be the rest of the line before (see
        `continues`; the caller asks it of the line with and without its framing)."""
        length, digest = self._previous
        if could_continue and length >= MIN_WIDTH and length >= self._longest and self.width is None:
            seen = self._candidates.setdefault(length, set())
            seen.add(digest)
            if len(seen) >= REPEATS_TO_LEARN:
                self.width = length
        self._previous = (len(text), hash(text))
        if len(text) > self._longest:
            self._longest = len(text)
            self._candidates = {k: v for k, v in self._candidates.items() if k >= self._longest}
            if self.width is not None and len(text) > self.width:
                self.width = None  # a line longer than the width: nothing here was wrapped

    def holds(self, length: int) -> bool:
        """Is a physical line of this length to wait for the next one (it may be wrapped)?"""
        return length == self.width
