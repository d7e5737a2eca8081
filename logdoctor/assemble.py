"""Records to events: tracebacks, bare exception lines and single records, one state per stream.

The API server, the engine core and the workers write into one log at once, so lines of different
processes interleave. Each stream (source x container stream x process x logger-or-raw) has its own
state. Two kinds of stream:

* logger streams: records with vLLM's level header. `logger.exception(...)` repeats the identical header
  on every physical line of the record, so consecutive lines with the same header are one record, and a
  traceback inside it belongs to it (`ERROR ... EngineCore failed to start.` + `Traceback ...`).
* raw streams: everything else (uncaught tracebacks on stderr, multiprocessing dumps, prints). Here a
  small state machine, written as a transition table, decides where a traceback ends.

An event is complete when the next line of its stream cannot continue it, at flush(), or when its stream
has been quiet for `quiet` seconds (tick), so a diagnosis never waits for the next log line.
"""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from logdoctor.records import Record

MAX_EVENT_HEAD = 200  # lines kept from the start of a huge event
MAX_EVENT_TAIL = 2000  # and from its end: the exception lines are at the end of a traceback
MAX_FRAMES = 200  # innermost frames kept per exception
MAX_MESSAGE_CHARS = 64 * 1024
# Raw continuation lines accepted after an exception line that are neither indented nor pydantic's:
# Python prints multi-line messages unindented, but so does whatever prints next.
MAX_UNINDENTED_CONTINUATION = 12
# Lines of other streams after which an open event is complete even though its own stream said nothing
# more: every traceback vLLM's processes print is written at once, so its lines are never this far apart.
MAX_SILENT_LINES = 5000

_TB_START = re.compile(r"Traceback \(most recent call last\):\s*")
_FRAME = re.compile(r'\s*File "(?P<file>.+?)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*')
_CHAIN = re.compile(
    r"(?:During handling of the above exception, another exception occurred"
    r"|The above exception was the direct cause of the following exception):\s*"
)
_EXCEPTION_LINE = re.compile(r"(?P<type>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::(?: ?(?P<msg>.*))?)?")
# An exception line met outside a traceback: the type must look like one: a name ending in Error,
# Exception, ..., or a dotted path ending in an exception class the pattern library names, as in
# `triton.runtime.autotuner.OutOfResources` (any dotted name would make `torch.Size: 3` an exception).
EXCEPTION_SUFFIXES = ("Error", "Exception", "Interrupt", "Exit", "Fault")


def bare_exception_regex(known_names: Iterable[str] = ()) -> str:
    """The shape of a bare exception line's message, `known_names` being exception classes without a
    standard suffix (`OutOfResources`) that may appear at the end of a dotted path."""
    dotted = sorted({n for n in known_names if n.isidentifier() and not n.endswith(EXCEPTION_SUFFIXES)})
    suffixed = r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:" + "|".join(EXCEPTION_SUFFIXES) + ")"
    named = r"|(?:[a-z_]\w*\.)+(?:" + "|".join(dotted) + ")" if dotted else ""
    return rf"(?P<type>{suffixed}{named})(?:: (?P<msg>.*)|:)?"


_BARE_EXCEPTION = re.compile(bare_exception_regex())
_PREAMBLE = re.compile(r"(?:Process [\w.-]+|Exception in thread .+|Exception in callback .+):\s*")
# Lines that start something new, so they never continue an exception message.
_NEW_THING = re.compile(
    r"Traceback \(|Process [\w.-]+:|\[|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b"
    r"|(?:/|[A-Za-z]:\\)?[\w/\\.-]*\.py:\d+: \w*Warning"  # a Python warning, its path absolute or not
    r"|usage: |[\w./-]{1,60}: error: |Exception ignored in"  # argparse's refusal, a finalizer's report
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d"  # a line of another program's log (Python logging's default format),
    r"|- \S+ - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - "  # ... and the same once its timestamp was stripped
)
_PYDANTIC_TYPE = re.compile(r"\[type=[\w.]+")
_PYDANTIC_KIND = {"Value error, ": "ValueError", "Assertion failed, ": "AssertionError"}

LineKind = Literal["tb_start", "frame", "chain", "blank", "indented", "other"]


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def classify(message: str) -> LineKind:
    if not message or message.isspace():
        return "blank"
    first = message[0]
    if first in " \t":
        return "frame" if _FRAME.fullmatch(message) else "indented"
    if first == "F" and _FRAME.fullmatch(message):
        return "frame"  # some log viewers strip the indentation of tracebacks
    if first == "T" and _TB_START.fullmatch(message):
        return "tb_start"
    if first in "DT" and _CHAIN.fullmatch(message):
        return "chain"
    return "other"


@dataclass(slots=True)
class Frame:
    file: str
    line: int
    function: str
    code: str | None = None
    records: list[Record] = field(default_factory=list)  # the `File ...` line and its source line

    @property
    def in_vllm(self) -> bool:
        return "/vllm/" in self.file or self.file.startswith("vllm/")


@dataclass(slots=True)
class RaisedException:
    """One exception of a traceback (a chained traceback has several, the original cause first)."""

    type: str  # as printed: `torch.OutOfMemoryError`; "" when no exception line was seen
    message: str
    record: Record | None = None  # the line that carries `Type: message`
    frames: list[Frame] = field(default_factory=list)
    frames_dropped: int = 0
    records: list[Record] = field(default_factory=list)  # the exception line and its continuation lines

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    @property
    def type_names(self) -> set[str]:
        """Every name a pattern's `exception` list may use for this exception."""
        names = {self.type, self.short_type}
        if self.short_type == "ValidationError":
            # vLLM's configs are pydantic dataclasses: a ValueError or assert in a validator is rendered
            # as a ValidationError whose detail line says which it was.
            for marker, kind in _PYDANTIC_KIND.items():
                if marker in self.message:
                    names.add(kind)
        return names

    @property
    def innermost_vllm_frame(self) -> Frame | None:
        for frame in reversed(self.frames):
            if frame.in_vllm:
                return frame
        return None

    @property
    def summary(self) -> str:
        """The message reduced to what identifies it: for pydantic, the detail line's own message."""
        for line in self.message.splitlines():
            stripped = line.strip()
            for marker in _PYDANTIC_KIND:
                if stripped.startswith(marker):
                    return _PYDANTIC_TYPE.split(stripped[len(marker) :])[0].rstrip(" [")
        return self.message.splitlines()[0] if self.message else ""


EventKind = Literal["traceback", "exception", "record"]


@dataclass(slots=True)
class Event:
    kind: EventKind
    record: Record  # the first line: the log record carrying the traceback, or the single record
    head: list[Record] = field(default_factory=list)
    tail: deque[Record] = field(default_factory=lambda: deque(maxlen=MAX_EVENT_TAIL))
    exceptions: list[RaisedException] = field(default_factory=list)
    preamble: Record | None = None  # `Process EngineCore:` / `Exception in thread ...:`
    lines_dropped: int = 0
    logged: bool = False  # the traceback sits inside a vLLM log record (logger.exception and friends)
    # Reported early because its stream went quiet; the event stays open, and the complete one that
    # follows amends what this one said (a process that flushed its traceback in two writes).
    provisional: bool = False
    amends: bool = False  # this complete event follows a provisional report of itself

    def add(self, record: Record) -> None:
        if len(self.head) < MAX_EVENT_HEAD:
            self.head.append(record)
            return
        if len(self.tail) == self.tail.maxlen:
            self.lines_dropped += 1
        self.tail.append(record)

    def remove(self, record: Record) -> None:
        """Take back the last record added (it turned out to start the next event)."""
        if self.tail and self.tail[-1] is record:
            self.tail.pop()
        elif self.head and self.head[-1] is record:
            self.head.pop()

    @property
    def records(self) -> list[Record]:
        return self.head + list(self.tail)

    @property
    def first_line(self) -> int:
        return (self.preamble or self.record).line.number

    @property
    def last_line(self) -> int:
        return (self.tail[-1] if self.tail else self.head[-1]).line.number

    @property
    def truncated(self) -> bool:
        return self.lines_dropped > 0 or any(r.line.truncated for r in self.head)


class _TracebackReader:
    """Builds the exceptions of one event line by line and says whether a raw line continues it.

    States: intro (the record's own message, before any traceback), frames, exception, exc_blank, chain.
    """

    # (state, line kind) -> next state. Pairs not listed end the event (in raw streams).
    TRANSITIONS: dict[tuple[str, LineKind], str] = {
        ("intro", "tb_start"): "frames",
        # An excerpt that starts in the middle of a traceback: its first line is a frame.
        ("intro", "frame"): "frames",
        ("frames", "frame"): "frames",
        ("frames", "indented"): "frames",  # source lines, 3.11+ carets, "[Previous line repeated ...]"
        ("frames", "blank"): "frames",
        # ("frames", "other") is the exception line, or unindented source code: decided in add().
        ("exception", "indented"): "exception",  # pydantic details, notes, indented message lines
        ("exception", "blank"): "exc_blank",
        ("exception", "chain"): "chain",
        # A frame after the "exception" line: the indentation was stripped and that line was source code.
        ("exception", "frame"): "frames",
        ("exc_blank", "chain"): "chain",
        ("exc_blank", "blank"): "exc_blank",
        ("chain", "blank"): "chain",
        ("chain", "tb_start"): "frames",
    }

    def __init__(self, event: Event, state: str, bare_exception: re.Pattern[str] = _BARE_EXCEPTION) -> None:
        self.event = event
        self.bare_exception = bare_exception
        self.state = state
        self.current: RaisedException | None = None
        self.unindented = 0
        self.pydantic_open = False  # a pydantic detail message is still waiting for its `[type=...]`
        # Frames come before the exception line they belong to; they wait here until it appears.
        self._frames: list[Frame] = []
        self._dropped = 0
        self._last_unindented: Record | None = None  # the message's last line, if it was unindented

    def start_exception(self, record: Record | None, type_name: str, message: str) -> None:
        self.current = RaisedException(type_name, message, record)
        if record is not None:
            self.current.records.append(record)
        self.event.exceptions.append(self.current)
        self.unindented = 0

    def continues(self, record: Record) -> bool:
        """Would this raw line continue the event? (Logger groups do not ask: the header decides.)"""
        kind = classify(record.message)
        if (self.state, kind) in self.TRANSITIONS:
            return True
        if self.state == "frames" and kind == "other":
            return True
        if self.state in ("exception", "exc_blank") and kind == "other":
            # Multi-line (even multi-paragraph) messages print unindented: GatedRepoError's does.
            if self.pydantic_open and self.state == "exception":
                return True
            return self.unindented < MAX_UNINDENTED_CONTINUATION and not _NEW_THING.match(record.message)
        return False

    def add(self, record: Record) -> None:
        message = record.message
        kind = classify(message)
        next_state = self.TRANSITIONS.get((self.state, kind))
        if self.state == "frames" and kind == "other":
            # Some log viewers strip indentation, so a source line can arrive unindented: it is the
            # exception line only if it has the shape of one (`Type` or `Type: message`).
            next_state = "exception" if _EXCEPTION_LINE.fullmatch(message) else "frames"
            if next_state == "frames":
                self._add_code(record)
                return
        if next_state is None:
            # Only reached inside a logger group, or for an accepted unindented continuation line.
            if self.state in ("exception", "exc_blank") and kind == "other":
                if self.state == "exc_blank":
                    self._extend_message(None, indented=True)  # keep the paragraph break
                    self.state = "exception"
                self._extend_message(record, indented=False)
            elif kind == "tb_start":
                self.state = "frames"
            elif self.state == "intro" and kind == "other":
                # `ERROR ... ValueError: msg` logged without a traceback is an exception all the same.
                match = self.bare_exception.fullmatch(message)
                if match:
                    self.start_exception(record, match["type"], match["msg"] or "")
                    self.state = "exception"
            return
        if self.state == "frames" and kind == "indented" and self._dedented_exception(message):
            next_state = "exception"  # the whole traceback is indented (Ray's remote tracebacks, a paste)
        previous, self.state = self.state, next_state
        if previous == "exception" and kind == "frame":
            if not self._real_exception():
                self._retract_exception()
            self._add_frame(record)
        elif next_state == "frames" and kind == "tb_start":
            self.current = None
        elif kind == "frame":
            self._add_frame(record)
        elif kind == "indented" and previous == "frames" and next_state == "frames":
            self._add_code(record)
        elif previous == "frames" and next_state == "exception":
            match = _EXCEPTION_LINE.fullmatch(message.strip())
            if match:
                self.start_exception(record, match["type"], match["msg"] or "")
            else:
                self.start_exception(record, "", message)
            self._carry_frames()
            self.pydantic_open = False
        elif kind == "indented" and next_state == "exception":
            self._extend_message(record, indented=True)

    def _dedented_exception(self, message: str) -> bool:
        """An indented line that stands left of the frames above it and has an exception's shape is the
        exception line of a traceback printed indented as a whole (frames at N+2, code at N+4, the
        exception at N): source code stands right of its frame."""
        frames = self._frames
        if not frames:
            return False
        frame_indent = _indent(frames[-1].records[0].message)
        return _indent(message) < frame_indent and self.bare_exception.fullmatch(message.strip()) is not None

    def _real_exception(self) -> bool:
        """Is the exception line before this frame an exception (`FileNotFoundError: [Errno 2] ...`, a
        traceback the user cut before its chain sentence), not source code a viewer unindented (`raise`)?"""
        record = self.current.record if self.current is not None else None
        return record is not None and self.bare_exception.fullmatch(record.message.strip()) is not None

    def _add_frame(self, record: Record) -> None:
        match = _FRAME.fullmatch(record.message)
        if not match:
            return
        frames = self._frames
        frames.append(Frame(match["file"], int(match["line"]), match["func"] or "", None, [record]))
        if len(frames) > MAX_FRAMES:
            del frames[0]
            self._dropped += 1

    def _add_code(self, record: Record) -> None:
        frames = self._frames
        stripped = record.message.strip()
        if frames and frames[-1].code is None and stripped and not set(stripped) <= {"^", "~"}:
            frames[-1].code = stripped
            frames[-1].records.append(record)

    def _carry_frames(self) -> None:
        if self.current is not None:
            self.current.frames = self._frames
            self.current.frames_dropped = self._dropped
        self._frames, self._dropped = [], 0

    def _retract_exception(self) -> None:
        exc = self.current
        if exc is None:
            return
        self.event.exceptions.remove(exc)
        self._frames, self._dropped = exc.frames, exc.frames_dropped
        if self._frames and exc.record is not None:
            self._add_code(exc.record)
        self.current = None

    def finish(self) -> None:
        """A traceback cut off before its exception line still reports its frames."""
        if self._frames:
            self.start_exception(None, "", "")
            self._carry_frames()

    def starts_another_record(self, record: Record) -> bool:
        """In a logger group: a traceback that starts right after an exception, with no `During handling
        ...` between, is not chained to it. Python prints one traceback per record, so this line opens a
        second record that happens to repeat the header (same process, second and code location: a
        request error hitting many requests at once)."""
        return self.state in ("exception", "exc_blank") and classify(record.message) == "tb_start"

    def take_trailing_intro(self) -> Record | None:
        """The last unindented line read as part of the exception's message, handed back: when another
        record starts, it is that record's own message (`Error in chat completion stream generator.`)."""
        exc, record = self.current, self._last_unindented
        if exc is None or record is None or not exc.records or exc.records[-1] is not record:
            return None
        exc.records.pop()
        exc.message = exc.message[: exc.message.rfind("\n")] if "\n" in exc.message else ""
        return record

    def _extend_message(self, record: Record | None, indented: bool) -> None:
        exc = self.current
        self._last_unindented = None
        if exc is None:
            return
        if record is None:
            exc.message += "\n"
            return
        message = record.message
        if not indented:
            self.unindented += 1
            self._last_unindented = record
        if len(exc.message) < MAX_MESSAGE_CHARS:
            exc.message = f"{exc.message}\n{message}" if exc.message else message
            exc.records.append(record)
        stripped = message.strip()
        if exc.short_type == "ValidationError":
            if any(stripped.startswith(marker) for marker in _PYDANTIC_KIND) or self.pydantic_open:
                self.pydantic_open = _PYDANTIC_TYPE.search(message) is None
            if stripped.startswith("For further information visit"):
                self.pydantic_open = False


# argparse's refusal of a JSON option quotes pydantic's error, whose details (the field's name, `Input
# should be ...`, the docs link) follow on lines of their own: they belong to that line's message.
_PARSER_VALIDATION_ERROR = re.compile(r"(?:usage: .*?)?[\w./-]+(?: [\w-]+)*: error: .*\d+ validation errors? for \w+")
MAX_PARSER_ERROR_LINES = 40


class _ParserErrorReader:
    """The lines of pydantic's details after an argparse `error:` line, joined into its message."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.records = [event.record]

    def continues(self, record: Record) -> bool:
        message = record.message
        if len(self.records) >= MAX_PARSER_ERROR_LINES or not message.strip():
            return False
        return classify(message) not in ("tb_start", "frame") and not _NEW_THING.match(message)

    def add(self, record: Record) -> None:
        self.records.append(record)

    def finish(self) -> None:
        if len(self.records) > 1:
            self.event.record = replace(self.event.record, message="\n".join(r.message for r in self.records))

    def starts_another_record(self, record: Record) -> bool:
        return False  # only a logger group's lines can start another record (see _TracebackReader)

    def take_trailing_intro(self) -> Record | None:
        return None


@dataclass(slots=True)
class _Open:
    event: Event
    reader: _TracebackReader | _ParserErrorReader
    header: tuple[object, ...] | None  # logger groups: the header every line of the group repeats
    last_seen: float
    last_line: int = 0  # the line number of its latest line


StreamKey = tuple[object, ...]


# Logger records at these levels open an event: their next lines may carry a traceback.
EVENT_LEVELS = ("WARNING", "ERROR", "CRITICAL")


class Assembler:
    """feed(record) -> events completed by it; tick(now) / flush() -> events completed by time / EOF."""

    def __init__(self, quiet: float = 0.5, exception_names: Iterable[str] = ()) -> None:
        self.quiet = quiet
        self.bare_exception = re.compile(bare_exception_regex(exception_names))
        self._open: dict[StreamKey, _Open] = {}
        self._preambles: dict[StreamKey, Record] = {}
        self._resumable: dict[StreamKey, _Open] = {}  # closed by a quiet period; the stream's next line decides

    def feed(self, record: Record, now: float = 0.0) -> list[Event]:
        number = record.line.number
        busy = self._open or self._preambles or self._resumable
        done = self._close_silent(record.line.source, number) if busy else []
        logger = record.kind == "vllm"
        key: StreamKey = (record.line.source, record.line.stream, record.process, record.pid, record.kind)
        if not logger and record.level is not None and record.pid is not None:
            done += self._end_logged_group_of(key)
        current = self._open.get(key)
        if current is None and self._resumable:
            current = self._resume(key, record)
        if current is not None and current.header is not None and current.reader.starts_another_record(record):
            intro = current.reader.take_trailing_intro()
            if intro is not None:
                current.event.remove(intro)
            done.append(self._close(key))
            if intro is not None:
                self._start(key, intro, logger, now)
                current = self._open.get(key)
            else:
                current = None
            if current is not None:
                current.event.add(record)
                current.reader.add(record)
                current.last_seen, current.last_line = now, number
                return done
        if current is not None:
            if self._continues(current, record):
                current.event.add(record)
                current.reader.add(record)
                current.last_seen = now
                current.last_line = number
                return done
            done.append(self._close(key))
        started = self._start(key, record, logger, now)
        if started is not None:
            done.append(started)
        return done

    def tick(self, now: float, hold: frozenset[str] = frozenset()) -> list[Event]:
        """Complete the events whose stream has been quiet; `hold` names sources in the middle of a line
        (a container runtime's partial line), whose events wait for the rest."""
        stale = [key for key, item in self._open.items() if now - item.last_seen >= self.quiet and key[0] not in hold]
        return [self._close_provisionally(key) for key in stale]

    def _close_provisionally(self, key: StreamKey) -> Event:
        """A quiet event is complete as far as anyone can tell, and reported; but if the next line of its
        stream would have continued it (a process that flushed its traceback in two writes), it reopens
        as it was and its complete form amends this report, so a pause changes nothing in the end."""
        item = self._open[key]
        event, reader = copy.deepcopy((item.event, item.reader))
        self._resumable[key] = _Open(event, reader, item.header, item.last_seen, item.last_line)
        closed = self._close(key)
        closed.provisional = True
        return closed

    def _resume(self, key: StreamKey, record: Record) -> _Open | None:
        """The provisionally closed event of this stream, reopened if this record continues it."""
        item = self._resumable.pop(key, None)
        if item is None or not self._continues(item, record):
            return None
        item.event.amends = True
        self._open[key] = item
        return item

    def _close_silent(self, source: str, number: int) -> list[Event]:
        """Events of this source whose stream printed nothing for MAX_SILENT_LINES lines are complete:
        the process finished its traceback (or died) long ago. Without this, a dead process's last
        event would stay open to the end of a week-long log."""
        silent = [k for k, item in self._open.items() if k[0] == source and number - item.last_line > MAX_SILENT_LINES]
        for key, item in list(self._resumable.items()):
            if key[0] == source and number - item.last_line > MAX_SILENT_LINES:
                del self._resumable[key]
        for key, preamble in list(self._preambles.items()):
            if key[0] == source and number - preamble.line.number > MAX_SILENT_LINES:
                del self._preambles[key]
        return [self._close(key) for key in silent]

    def flush(self) -> list[Event]:
        self._resumable.clear()
        return [self._close(key) for key in list(self._open)]

    def end_source_streams(self, source: str) -> list[Event]:
        """A new launch started in `source`: the processes of the one before are gone, so what they had
        open is complete (their next line will never come). A crash loop's file otherwise kept every
        launch's streams open until MAX_SILENT_LINES later, and every skipped stretch searched for them."""
        for waiting in (self._resumable, self._preambles):
            for key in [k for k in waiting if k[0] == source]:
                del waiting[key]
        return [self._close(key) for key in [k for k in self._open if k[0] == source]]

    @property
    def pending(self) -> bool:
        return bool(self._open)

    def pending_in(self, source: str) -> bool:
        """An event of this source is still open (its lines are read but not yet diagnosed)."""
        return any(key[0] == source for key in self._open)

    def open_streams(self, source: str, number: int) -> list[Record]:
        """For a reader that skips lines of `source` (sieve.py): the first record of each open event and
        waiting preamble of that source that its line numbered `number` could still continue. The next
        line of its stream decides whether it goes on, so that line must be read: a raw traceback's
        frames, and also the line after a logged traceback (with the same header a later record would
        otherwise merge into it)."""
        if not self._open and not self._preambles and not self._resumable:
            return []
        items = [
            item
            for key, item in [*self._open.items(), *self._resumable.items()]
            if key[0] == source and number - item.last_line <= MAX_SILENT_LINES
        ]
        preambles = [
            r for key, r in self._preambles.items() if key[0] == source and number - r.line.number <= MAX_SILENT_LINES
        ]
        return [item.event.record for item in items] + preambles

    def _end_logged_group_of(self, key: StreamKey) -> list[Event]:
        """A record of another logger (uvicorn's access line) from the process whose vLLM record is open:
        that record is complete, each of its lines having been written before this one. Its next line with
        the same header is a second record (two warnings in the same second), not more of the first."""
        logged: StreamKey = (*key[:4], "vllm")
        self._resumable.pop(logged, None)
        current = self._open.get(logged)
        if current is None or current.header is None or logged in self._preambles:
            return []
        return [self._close(logged)]

    def ends_logged_group(self, record: Record) -> list[Event] | None:
        """For a reader that skips lines (sieve.py), about the next line of a stream with an open event,
        a line that fired no trigger: if that event is a logged group and the line's header differs, the
        line ends the group, as feeding it would, and nothing else (it can open nothing). The group is
        closed here and returned. None when the line must be fed: it may continue the event."""
        key: StreamKey = (record.line.source, record.line.stream, record.process, record.pid, record.kind)
        if record.kind != "vllm":
            # Not the group's own stream: fed, it would end the group only as another logger's record; and
            # it must be fed when its own stream has an event it may continue.
            if key in self._open or key in self._resumable or key in self._preambles:
                return None
            ended = self._end_logged_group_of(key) if record.level is not None and record.pid is not None else []
            return ended or None
        current = self._open.get(key)
        if current is None and self._resumable:
            current = self._resume(key, record)
        if current is None or current.header is None or record.header == current.header or key in self._preambles:
            return None
        return [self._close(key)]

    def _continues(self, current: _Open, record: Record) -> bool:
        if current.header is not None:
            return record.header == current.header
        return current.reader.continues(record)

    def _close(self, key: StreamKey) -> Event:
        item = self._open.pop(key)
        item.reader.finish()
        event = item.event
        if event.kind == "record" and event.exceptions:
            event.kind = "traceback"
        return event

    def _start(self, key: StreamKey, record: Record, logger: bool, now: float) -> Event | None:
        """Open an event for a record that can start one; return single-record events at once."""
        message = record.message
        kind = classify(message)
        preamble = self._preambles.pop(key, None)
        if logger:
            # WARNING and above can carry a traceback on the following lines of the same record.
            if record.level in EVENT_LEVELS or kind == "tb_start":
                event = Event("record", record, logged=True)
                reader = _TracebackReader(event, "intro", self.bare_exception)
                self._open[key] = _Open(event, reader, record.header, now, record.line.number)
                event.add(record)
                reader.add(record)
                return None
            return Event("record", record, [record])
        if kind in ("tb_start", "frame"):
            # A frame with no traceback open: an excerpt that starts mid-traceback, read from there.
            event = Event("traceback", record, preamble=preamble)
            reader = _TracebackReader(event, "intro", self.bare_exception)
        else:
            match = self.bare_exception.fullmatch(message) if kind == "other" else None
            if match is None:
                if _PREAMBLE.fullmatch(message):
                    self._preambles[key] = record
                if kind == "other" and _PARSER_VALIDATION_ERROR.match(message):
                    event = Event("record", record, [record])
                    self._open[key] = _Open(event, _ParserErrorReader(event), None, now, record.line.number)
                    return None
                return Event("record", record, [record])
            event = Event("exception", record, preamble=preamble)
            reader = _TracebackReader(event, "exception", self.bare_exception)
            reader.start_exception(record, match["type"], match["msg"] or "")
            event.add(record)
            self._open[key] = _Open(event, reader, None, now, record.line.number)
            return None
        self._open[key] = _Open(event, reader, None, now, record.line.number)
        event.add(record)
        reader.add(record)
        return None


def opening_messages(exception_names: Iterable[str] = ()) -> tuple[str, ...]:
    """For a reader that skips lines (sieve.py): a raw line opens an event or waits as a preamble only if
    its message starts like one of these (logger records open one by level: EVENT_LEVELS)."""
    return (_TB_START.pattern, _FRAME.pattern, _PREAMBLE.pattern, bare_exception_regex(exception_names))
