"""Bytes of one source to a Doctor, reading only the lines that can matter.

The Doctor costs tens of microseconds a line; a week of request logs is tens of millions of lines, of
which a few hundred matter. The sieve runs the prefilter (prefilter.py) over each buffer once and hands the
framer and the Doctor only:

* the lines a trigger fires on;
* the next line of every stream with an open event (it decides whether the event goes on: a raw
  traceback's frames, the line after a logged traceback, a preamble's traceback), found by the stream's
  own marker (`pid=81390)`, `[rank0]`, or "no process prefix"), so the lines of other processes in
  between are still skipped;

and counts the rest, so line numbers stay exact. The result is the same as feeding every line (the tests
compare both on every fixture, on generated logs and on hypothesis' torn logs). Every line is read where
no prefilter can be built (Hyperscan is missing, or a user pattern requires no literal), in files whose
first line is CRI or Docker JSON (their escaping hides literals), and once the framer has found that the
source's lines are not as vLLM wrote them (an unknown prefix, a terminal's wrapping: framing.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from logdoctor import grammar
from logdoctor.doctor import Doctor
from logdoctor.framing import Framer, Line
from logdoctor.records import Record

if TYPE_CHECKING:  # a small source builds no prefilter (and imports no Hyperscan), a clean one no finding
    from logdoctor.model import Finding
    from logdoctor.prefilter import Prefilter

# A process prefix exactly as records.py reads one (`(APIServer pid=1) `, Ray's `(pid=1, ip=...) `, torch's
# `[rank0]: `): the grammar's rules, kept within the line (a `\s` that crossed newlines was found by
# fuzzing). A line that only looks like one (`(APIServer pid=1133r)`, `(APIServer ` cut short) has none, so
# it belongs to the unprefixed stream.
_PREFIX = grammar.within_line(grammar.either(grammar.PROCESS, grammar.RANK))
_PREFIXED = re.compile(_PREFIX)
_UNPREFIXED_AFTER_NEWLINE = re.compile(rb"\n(?!" + _PREFIX + rb")")
_CARRIAGE_RETURN = re.compile(rb"\r(?!\n)")
# A vLLM record at a line's start (its process prefixes, then the logger's header): whether lines the sieve
# skips hold one decides whether a source without a finding is a vLLM log (Doctor.saw_vllm).
_VLLM_RECORD = re.compile(
    rb"(?m)^(?:" + _PREFIX + rb" ?){0,2}" + grammar.within_line(grammar.anonymous(grammar.LOGGER_HEADER.regex))
)


# Below this many bytes a source is read line by line: building the prefilter would cost more than it saves.
SMALL_SOURCE = 1 << 20


class Sieve:
    def __init__(
        self,
        doctor: Doctor,
        framer: Framer,
        prefilter: Callable[[], Prefilter | None] | None = None,
        small: int = SMALL_SOURCE,
        relabel: Callable[[Line], Line] | None = None,
    ) -> None:
        self.doctor = doctor
        self.framer = framer
        # Rewrites each line before the Doctor sees it (run mode: the stream's name, numbers across both
        # of a child's streams). Only without a prefilter: a skipped line cannot be renumbered.
        assert relabel is None or prefilter is None, "a relabelled channel reads every line"
        self._relabel = relabel
        self._build_prefilter = prefilter  # called once the source has passed `small` bytes
        self.prefilter: Prefilter | None = None
        self._small = small
        self._bytes = 0

    def feed(self, data: bytes, now: float = 0.0) -> list[Finding]:
        found: list[Finding] = []
        pos = 0
        self._bytes += len(data)
        if self._build_prefilter is not None and self._bytes >= self._small:
            self.prefilter, self._build_prefilter = self._build_prefilter(), None
        if self.framer.partial:  # the previous chunk ended inside a line: its rest goes to the framer
            newline = data.find(b"\n")
            if newline < 0:
                return self._frame(data, now)
            found += self._frame(data[: newline + 1], now)
            pos = newline + 1
        last = data.rfind(b"\n", pos) + 1  # the end of the last complete line
        if last > pos:
            found += self._lines(data, pos, last, now)
            pos = last
        if pos < len(data):
            found += self._frame(data[pos:], now)  # an unfinished line waits in the framer
        return found

    def expect(self, size: int) -> None:
        """`size` more bytes of this source are at hand and will be fed in pieces (watch's catch-up): the
        prefilter is decided as for a reader that fed them at once (scan), not after the first megabyte
        has been read line by line."""
        if self._build_prefilter is not None and self._bytes + size >= self._small:
            self.prefilter, self._build_prefilter = self._build_prefilter(), None

    def flush(self) -> list[Finding]:
        """The end of the only source of this Doctor: its last line, then every open event."""
        return self.finish_lines() + self.doctor.flush()

    def finish_lines(self, now: float = 0.0) -> list[Finding]:
        """The end of this source: an unfinished last line is a line. Events stay open (other sources may
        share the Doctor; its flush closes them)."""
        return self._fed(self.framer.flush(), now)

    def _frame(self, data: bytes, now: float) -> list[Finding]:
        return self._fed(self.framer.feed(data), now)

    def _fed(self, lines: list[Line], now: float) -> list[Finding]:
        found: list[Finding] = []
        for line in lines:
            found += self.doctor.feed(line if self._relabel is None else self._relabel(line), now)
        return found

    def _lines(self, data: bytes, pos: int, end: int, now: float) -> list[Finding]:
        """The complete lines data[pos:end]."""
        found: list[Finding] = []
        while self.framer.framing is None and pos < end:  # the first non-empty line tells the framing
            newline = data.find(b"\n", pos) + 1
            found += self._frame(data[pos:newline], now)
            pos = newline
        if self.prefilter is None or self.framer.framing != "plain" or self.framer.irregular:
            return found + self._frame(data[pos:end], now)
        candidates = self.prefilter.line_starts(data, pos, end)
        next_candidate = 0
        while pos < end:
            while next_candidate < len(candidates) and candidates[next_candidate] < pos:
                next_candidate += 1
            target = candidates[next_candidate] if next_candidate < len(candidates) else end
            target = self._next_line_of_open_streams(data, pos, target, found)
            if target > pos:
                if not self.doctor.saw_vllm(self.framer.source) and _VLLM_RECORD.search(data, pos, target):
                    self.doctor.mark_vllm(self.framer.source)
                skipped = data.count(b"\n", pos, target)
                for line in self.framer.skip(skipped):
                    found += self.doctor.feed(line, now)
                self.doctor.skip(skipped)
                pos = target
                if pos >= end:
                    break
            newline = data.find(b"\n", pos) + 1
            found += self._frame(data[pos:newline], now)
            pos = newline
        return found

    def _next_line_of_open_streams(self, data: bytes, pos: int, limit: int, found: list[Finding]) -> int:
        """The start of the first line before `limit` that may belong to a stream with an open event.

        A logged group (a traceback at WARNING or above) only waits for the next line of its stream to
        end it: when that line's header differs, the group is closed here (its findings go to `found`)
        and the line stays skipped, which saves feeding one line per warning."""
        while True:
            streams = self.doctor.assembler.open_streams(self.framer.source, self.framer.lines_seen + 1)
            first, owner = _earliest_line(streams, data, pos, limit)
            if owner is None or owner.kind != "vllm":
                return first
            stop = data.find(b"\n", first, limit)
            ended = self.doctor.end_logged_group(self.framer.peek(data[first : stop if stop >= 0 else limit]))
            if ended is None:
                return first
            found += ended


def _earliest_line(streams: list[Record], data: bytes, pos: int, limit: int) -> tuple[int, Record | None]:
    """The start of the first line in data[pos:limit] that may belong to one of `streams`, and the first
    of them (in their order) whose line it is; (limit, None) when there is none.

    A crash loop's file keeps a few dozen streams open at once (every launch's processes, until they
    have been silent for MAX_SILENT_LINES), so the prefixed ones are found by one search for all their
    markers, not one search each over the same bytes."""
    keys = {_stream_key(r) for r in streams}
    unprefixed = (None, None) in keys
    keys.discard((None, None))
    markers = _markers(frozenset(keys)) if keys else None
    first = limit
    if markers is not None:
        hit = markers.search(data, pos, limit)
        if hit is not None:
            first = data.rfind(b"\n", pos, hit.start()) + 1 or pos
    unprefixed_at = _next_line_of(data, pos, limit) if unprefixed else limit
    first = min(first, unprefixed_at)
    if first >= limit:
        return limit, None
    stop = data.find(b"\n", first, limit)
    end = stop if stop >= 0 else limit
    # Whose line it is: every stream whose marker the line holds (a message can name another pid).
    present = {_stream_of(m[0]) for m in markers.finditer(data, first, end)} if markers is not None else set()
    if unprefixed_at == first:
        present.add((None, None))
    owner = next((r for r in streams if _stream_key(r) in present), None)
    return first, owner


def _stream_key(record: Record) -> tuple[int | None, str | None]:
    """What its stream's lines are found by: the pid when the prefix has one, else the process name
    (`[rank0]`); (None, None) for the unprefixed stream."""
    return (record.pid, None) if record.pid is not None else (None, record.process)


def _stream_of(marker: bytes) -> tuple[int | None, str | None]:
    """`pid=81390)` -> (81390, None); `[rank0]` -> (None, "rank0")."""
    if marker.startswith(b"pid="):
        return int(marker[4:-1]), None
    return None, marker[1:-1].decode()


@lru_cache(maxsize=256)
def _markers(streams: frozenset[tuple[int | None, str | None]]) -> re.Pattern[bytes]:
    """What every line of these prefixed streams holds: `pid=81390)` (or `pid=81390,` in Ray's), `[rank0]`."""
    return re.compile(
        b"|".join(
            rb"pid=%d[,)]" % pid if pid is not None else re.escape(f"[{process}]".encode())
            for pid, process in sorted(streams, key=repr)
        )
    )


def _next_line_of(data: bytes, pos: int, limit: int) -> int:
    """The first line of the unprefixed stream in data[pos:limit] (`limit` when there is none)."""
    if pos == 0 and not _PREFIXED.match(data, 0):
        return 0
    match = _UNPREFIXED_AFTER_NEWLINE.search(data, max(pos - 1, 0), limit)
    found = limit if match is None else match.start() + 1
    # A progress bar's carriage return: the line reads as its last segment, whatever it starts with.
    carriage = _CARRIAGE_RETURN.search(data, pos, found)
    return found if carriage is None else data.rfind(b"\n", pos, carriage.start()) + 1 or pos
