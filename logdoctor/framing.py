"""Bytes to text lines.

A source's bytes arrive in chunks of any size. The framer splits them into physical lines, detects the
container framing of each line (CRI, Docker json-file, docker compose prefixes, or plain text), joins
the pieces that container runtimes split, and cleans the text: invalid UTF-8 and NUL bytes are replaced,
ANSI escape sequences and carriage returns are removed. It never raises on input and never drops a line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# Longest text kept for analysis from one physical line. Pass-through output is never cut; only what the
# core looks at is, so a 100 MB line cannot take 100 MB per copy in the pipeline.
MAX_LINE_CHARS = 64 * 1024

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# `<RFC3339 time> <stdout|stderr> <P|F> <message>`: containerd / CRI-O node logs.
_CRI = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) "
    r"(?P<stream>stdout|stderr) (?P<tag>[PF])(?: (?P<msg>.*))?"
)
# `service-1  | message`, as `docker compose up` / `docker compose logs` print it.
_COMPOSE = re.compile(r"(?P<service>[A-Za-z0-9][\w.-]*)\s+\| ?(?P<msg>.*)")
# A timestamp that a collector put in front of the line (`kubectl logs --timestamps`, CI runners, log
# viewers' `| <time> |` tables). vLLM's own lines never start with a year.
_COLLECTOR_TIME = re.compile(
    r"\s*(?:\|\s*)?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s*\|)?\s"
)


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
        return lines

    def skip(self, count: int) -> None:
        """Count `count` complete lines that the caller read past without framing them (sieve.py)."""
        self._number += count

    def peek(self, raw: bytes) -> Line:
        """How one complete plain-text line (no newline) would read if fed now, without taking it: the
        sieve looks at a line it may not need to feed. Only for plain framing, once it is decided."""
        overflow = len(raw) > MAX_LINE_CHARS
        text = decode(raw[:MAX_LINE_CHARS] if overflow else raw)
        out: list[Line] = []
        self._plain(text[:-1] if text.endswith("\r") else text, overflow, out)
        return out[0]

    @property
    def lines_seen(self) -> int:
        return self._number

    @property
    def partial(self) -> bool:
        """Bytes of an unfinished line, or container pieces, wait for more input."""
        return bool(self._pending or self._pending_overflow or self._pieces)

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
        if text[:1].isdigit() or text[:1].isspace() or text[:1] == "|":
            stamp = _COLLECTOR_TIME.match(text)
            if stamp:
                text = text[stamp.end() :]
        origin = None
        if self._compose is None and text.strip():
            self._compose = _COMPOSE.fullmatch(text) is not None
        if self._compose:
            match = _COMPOSE.fullmatch(text)
            if match:
                origin, text = match["service"], match["msg"]
        out.append(Line(self.source, self._number, text, None, origin, overflow))

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
        out.append(Line(self.source, first, clean(text), stream, None, overflow))


def frame_bytes(data: bytes, source: str = "-") -> list[Line]:
    """Frame a whole buffer at once (tests and small inputs)."""
    framer = Framer(source)
    return framer.feed(data) + framer.flush()
