"""Bytes to text lines.

A source's bytes arrive in chunks of any size. The framer splits them into physical lines, detects the
container framing of each line (CRI, Docker json-file, docker compose prefixes, or plain text), joins
the pieces that container runtimes split, and cleans the text: invalid UTF-8 and NUL bytes are replaced,
ANSI escape sequences (also written out as text: `^[[0;36m`, `#033[0;36m`, or with the ESC lost) and
carriage returns are removed. What other programs did to the lines is undone per source: a prefix they
put before every line (prefixes.py), a traceback they flattened onto one line (unflatten.py), lines a
terminal hard-wrapped (unwrap.py). It never raises on input and never drops a line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from logdoctor import grammar, unflatten
from logdoctor.prefixes import PrefixLearner
from logdoctor.unwrap import Unwrapper, continues, joins

# Longest text kept for analysis from one physical line. Pass-through output is never cut; only what the
# core looks at is, so a 100 MB line cannot take 100 MB per copy in the pipeline.
MAX_LINE_CHARS = 64 * 1024

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# ANSI written out as text: caret notation (`^[[0;36m`, what `cat -v` and some pagers print), syslog's octal
# escape of the control character (`#033[0;36m`), a source-code escape (`\033[`, `\x1b[`, `\u001b[`), and
# a colour code whose ESC a web viewer dropped (`[1;36m(APIServer pid=1)[0;0m`: SGR codes only, the one
# kind logs carry, so `[1]` or `[32]` in a message stays).
_ANSI_AS_TEXT = re.compile(
    r"(?:\^\[|#033|\\033|\\x1[bB]|\\u001[bB]|\\e)\[[0-?]*[ -/]*[@-~]|\[(?:\d{1,3};)*\d{1,3}m"
)
# `<RFC3339 time> <stdout|stderr> <P|F> <message>`: containerd / CRI-O node logs.
_CRI = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) "
    r"(?P<stream>stdout|stderr) (?P<tag>[PF])(?: (?P<msg>.*))?"
)
# `service-1  | message`, as `docker compose up` / `docker compose logs` print it (grammar.py).
_COMPOSE = re.compile(grammar.COMPOSE_SERVICE.regex + r"(?P<msg>.*)")
# A timestamp that a collector put in front of the line (`kubectl logs --timestamps`, CI runners, log
# viewers' `| <time> |` tables).
_COLLECTOR_TIME = re.compile(grammar.COLLECTOR_TIME.regex)


@dataclass(frozen=True, slots=True)
class Line:
    """One logical line of a source, cleaned, with where it came from."""

    source: str
    number: int  # 1-based physical line number in the source (the first one, for joined pieces)
    text: str
    stream: str | None = None  # "stdout" / "stderr" when the container framing says so
    origin: str | None = None  # the compose service name, when there is one
    truncated: bool = False


def clean(text: str) -> str:
    """Strip ANSI sequences and carriage returns the way a terminal would show the line."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "[" in text:
        text = _ANSI_AS_TEXT.sub("", text)
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:
            # A progress bar redraws itself with bare CRs: the terminal shows the last non-empty segment.
            segments = [s for s in text.split("\r") if s.strip()]
            text = segments[-1] if segments else ""
    return text


def decode(raw: bytes) -> str:
    """UTF-8 with replacement; NUL bytes become U+FFFD so no later step trips on them."""
    text = raw.decode("utf-8", "replace")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text


class Framer:
    """Incremental framing for one source: feed(bytes) -> complete lines, flush() -> the rest."""

    def __init__(self, source: str, lines_before: int = 0) -> None:
        self.source = source
        self._pending = bytearray()  # the unfinished physical line
        self._pending_overflow = False
        self._number = lines_before  # physical lines seen (a followed file resumes its count)
        # Container runtimes split long messages; the pieces of one stream are joined here.
        self._pieces: dict[str, tuple[int, list[str]]] = {}
        self._compose: bool | None = None  # decided on the first non-empty line of the source
        # How the first non-empty line was framed: "plain" (compose included), "cri" or "docker-json".
        self.framing: str | None = None
        self._prefixes = PrefixLearner()
        self._unwrap = Unwrapper()
        self._held: tuple[int, str, bool] | None = None  # a line of the wrap width, waiting for its rest

    def feed(self, data: bytes) -> list[Line]:
        lines: list[Line] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._keep(data[start:])
                return lines
            if self._pending or self._pending_overflow:
                self._keep(data[start:end])
                raw = bytes(self._pending)
                overflow = self._pending_overflow
                self._pending.clear()
                self._pending_overflow = False
            else:
                raw = data[start:end]
                overflow = len(raw) > MAX_LINE_CHARS
                if overflow:
                    raw = raw[:MAX_LINE_CHARS]
            self._number += 1
            self._frame(raw, overflow, lines)
            start = end + 1

    def flush(self) -> list[Line]:
        lines: list[Line] = []
        if self._pending or self._pending_overflow:
            self._number += 1
            raw = bytes(self._pending)
            overflow = self._pending_overflow
            self._pending.clear()
            self._pending_overflow = False
            self._frame(raw, overflow, lines)
        for stream in list(self._pieces):
            self._emit_pieces(stream, lines)
        self._release(lines)
        return lines

    def skip(self, count: int) -> list[Line]:
        """Count `count` complete lines that the caller read past without framing them (sieve.py). A line
        held for its wrapped rest is complete then: it is returned."""
        lines: list[Line] = []
        if count:
            self._release(lines)
        self._number += count
        return lines

    @property
    def irregular(self) -> bool:
        """This source's lines are not as vLLM wrote them (an unknown prefix, a wrap width): a reader must
        not skip lines by their bytes, which the prefilter reads as vLLM's."""
        return self._prefixes.learned or self._unwrap.width is not None

    def peek(self, raw: bytes) -> Line:
        """How one complete plain-text line (no newline) would read if fed now, without taking it: the
        sieve looks at a line it may not need to feed. Only for plain framing, once it is decided."""
        overflow = len(raw) > MAX_LINE_CHARS
        text = decode(raw[:MAX_LINE_CHARS] if overflow else raw)
        text = self._strip_framing(clean(text[:-1] if text.endswith("\r") else text))[1]
        return Line(self.source, self._number + 1, text, None, None, overflow)

    @property
    def lines_seen(self) -> int:
        return self._number

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished line, container pieces, or a wrapped line's first part wait for more."""
        return bool(self._pending or self._pending_overflow or self._pieces or self._held)

    def _keep(self, chunk: bytes) -> None:
        room = MAX_LINE_CHARS - len(self._pending)
        if len(chunk) > room:
            self._pending_overflow = True
            chunk = chunk[: max(room, 0)]
        self._pending += chunk

    def _frame(self, raw: bytes, overflow: bool, out: list[Line]) -> None:
        text = decode(raw)
        if text.endswith("\r"):
            text = text[:-1]
        first = text[:1]
        if first == "{" and text.startswith('{"'):
            if self._docker_json(text, overflow, out):
                self.framing = self.framing or "docker-json"
                return
        elif first.isdigit():
            match = _CRI.fullmatch(text)
            if match:
                self.framing = self.framing or "cri"
                self._cri(match, overflow, out)
                return
        if self.framing is None and text.strip():
            self.framing = "plain"
        self._plain(text, overflow, out)

    def _plain(self, text: str, overflow: bool, out: list[Line]) -> None:
        text = clean(text)
        number, physical = self._number, len(text)
        could_continue = continues(text) and continues(self._strip_framing(text)[1])
        self._unwrap.observe(text, could_continue)
        if self._held is not None:
            first, before, before_overflow = self._held
            self._held = None
            if could_continue and joins(before, text):
                number, text, overflow = first, before + text, before_overflow or overflow
            else:
                self._finish(before, first, before_overflow, out)
        if self._unwrap.holds(physical):
            self._held = (number, text, overflow)
            return
        self._finish(text, number, overflow, out)

    def _release(self, out: list[Line]) -> None:
        if self._held is not None:
            number, text, overflow = self._held
            self._held = None
            self._finish(text, number, overflow, out)

    def _strip_framing(self, text: str, learn: bool = False) -> tuple[str | None, str]:
        """A collector's timestamp, a compose service, an unknown program's prefix: (service, text)."""
        if text[:1].isdigit() or text[:1].isspace() or text[:1] == "|":
            stamp = _COLLECTOR_TIME.match(text)
            if stamp:
                text = text[stamp.end() :]
        origin = None
        if self._compose is None and text.strip() and learn:
            self._compose = _COMPOSE.fullmatch(text) is not None
        if self._compose:
            match = _COMPOSE.fullmatch(text)
            if match:
                origin, text = match["service"], match["msg"]
        if learn:
            text = self._prefixes.strip(text)
        elif self._prefixes.learned:
            text = self._prefixes.strip_learned(text)
        return origin, text

    def _finish(self, text: str, number: int, overflow: bool, out: list[Line], stream: str | None = None) -> None:
        origin, text = self._strip_framing(text, learn=True) if stream is None else (None, self._prefixes.strip(text))
        for piece in unflatten.split(text):
            out.append(Line(self.source, number, piece, stream, origin, overflow))

    def _cri(self, match: re.Match[str], overflow: bool, out: list[Line]) -> None:
        stream = match["stream"]
        self._add_piece(stream, match["msg"] or "")
        if match["tag"] == "F" or overflow:
            self._emit_pieces(stream, out, overflow)

    def _docker_json(self, text: str, overflow: bool, out: list[Line]) -> bool:
        try:
            record = json.loads(text)
        except ValueError:
            return False
        if not isinstance(record, dict) or not isinstance(record.get("log"), str):
            return False
        stream = record.get("stream") if isinstance(record.get("stream"), str) else "stdout"
        message: str = record["log"]
        complete = message.endswith("\n")
        self._add_piece(str(stream), message[:-1] if complete else message)
        # json-file splits lines longer than 16 KiB into pieces without a trailing newline.
        if complete:
            self._emit_pieces(str(stream), out, overflow)
        return True

    def _add_piece(self, stream: str, piece: str) -> None:
        first, pieces = self._pieces.setdefault(stream, (self._number, []))
        if sum(len(p) for p in pieces) < MAX_LINE_CHARS:
            pieces.append(piece)

    def _emit_pieces(self, stream: str, out: list[Line], overflow: bool = False) -> None:
        first, pieces = self._pieces.pop(stream, (self._number, []))
        text = "".join(pieces)
        if len(text) > MAX_LINE_CHARS:
            text, overflow = text[:MAX_LINE_CHARS], True
        self._finish(clean(text), first, overflow, out, stream)


def frame_bytes(data: bytes, source: str = "-") -> list[Line]:
    """Frame a whole buffer at once (tests and small inputs)."""
    framer = Framer(source)
    return framer.feed(data) + framer.flush()
