"""Lines to records: the vLLM record prefix in every shape vLLM has printed (0.4 to 0.33).

    style A (<= 0.7)        INFO 12-27 10:00:01 api_server.py:712] message
    style B (0.8 - 0.30)    INFO 05-02 09:12:03 [api_server.py:1043] message
    style C (0.10.1 - 0.30) (APIServer pid=12047) INFO 10-13 17:38:38 [api_server.py:1839] message
                            (the prefix comes from a stdout/stderr wrapper, so raw lines carry it too)
    style D (0.31+)         (EngineCore pid=81390) ERROR 11-30 19:41:07 [core.py:1584] message
    Ray                     (RayWorkerWrapper pid=123, ip=10.0.0.2) INFO ...  /  (pid=123) ...
    torch elastic           [rank0]: Traceback (most recent call last):
    uvicorn                 INFO:     Started server process [81234]

Anything else is a raw line: its whole text is the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from logdoctor import grammar
from logdoctor.framing import Line

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# The rules are grammar.py's; a record's message follows them after one blank.
_PROCESS = re.compile(grammar.PROCESS.regex + r"\s?")
_RANK = re.compile(grammar.RANK.regex + r"\s?")
_HEADER = re.compile(grammar.LOGGER_HEADER.regex + r"(?: (?P<msg>.*))?")
_UVICORN = re.compile(grammar.UVICORN_LEVEL.regex + r"(?P<msg>.*)")

RecordKind = Literal["vllm", "uvicorn", "raw"]


@dataclass(frozen=True, slots=True)
class Record:
    line: Line
    message: str
    kind: RecordKind
    process: str | None = None
    pid: int | None = None
    level: str | None = None
    time: str | None = None
    location: str | None = None  # "core.py:1584"; informational only, it drifts every release

    @property
    def process_label(self) -> str | None:
        """How the record names its process in output: `EngineCore pid=81390`, `rank0`, or None."""
        if self.process is None:
            return None
        if self.pid is None:
            return self.process
        return f"{self.process} pid={self.pid}".strip()

    @property
    def header(self) -> tuple[object, ...]:
        """What vLLM's NewLineFormatter repeats on every physical line of one multi-line record."""
        return (self.process, self.pid, self.level, self.time, self.location)


def parse(line: Line) -> Record:
    text = line.text
    process: str | None = None
    pid: int | None = None
    pos = 0
    # At most two process prefixes: the 0.10.1-0.30 wrapper, then (rarely) one from the format itself.
    for _ in range(2):
        if text.startswith("(", pos):
            match = _PROCESS.match(text, pos)
            if not match:
                break
            process, pid = match["proc"].strip() or "ray", int(match["pid"])
            pos = match.end()
        elif text.startswith("[rank", pos):
            match = _RANK.match(text, pos)
            if not match:
                break
            process, pid = f"rank{match['rank']}", None
            pos = match.end()
        else:
            break
    head = text[pos : pos + 1]
    if head in ("D", "I", "W", "E", "C"):
        match = _HEADER.match(text, pos)
        if match:
            level = match["level"]
            return Record(
                line,
                match["msg"] or "",
                "vllm",
                process,
                pid,
                "WARNING" if level == "WARN" else level,
                match["time"],
                match["loc"] or match["loc_a"],
            )
        match = _UVICORN.match(text, pos)
        if match:
            return Record(line, match["msg"], "uvicorn", process, pid, match["level"])
    return Record(line, text[pos:], "raw", process, pid)
