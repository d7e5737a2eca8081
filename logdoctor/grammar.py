"""The record grammar: everything that stands before a vLLM message on its line, written once, as data.

    collector time   2024-05-01T10:00:00.123Z                  kubectl --timestamps, CI runners, viewers
    compose service  vllm-1  |                                 docker compose up / logs
    process          (EngineCore pid=81390)                    vLLM's wrapper (0.10.1-0.30), its format (0.31+),
                     (RayWorkerWrapper pid=1, ip=10.0.0.2)     V0 workers, Ray (whose may have no name)
    rank             [rank0]:                                  torch elastic
    logger header    INFO 11-30 19:41:07 [core.py:1584]        style B-D (0.8+); `core.py:1584]` style A (<= 0.7)
    uvicorn level    INFO:                                     uvicorn's own records

(the container runtimes' whole-line framings, CRI and Docker json-file, are in framing.py: they wrap a
line rather than stand before its message). Each reader derives its regex from these rules instead of
writing its own: records.py parses a line with the named groups; framing.py strips the collector's
framings; the sieve and the prefilter scan buffers of many lines, so they take `within_line()` byte forms,
which cannot run across a newline (a `\\s` that crossed one was a fuzz-found sieve bug). A rule's examples
are checked by tests/test_grammar.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEVEL_NAMES = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL")  # WARN: some 0.4-0.6 lines


@dataclass(frozen=True)
class Rule:
    name: str
    regex: str  # named groups carry the fields a reader wants; `anonymous()` drops them
    examples: tuple[str, ...]


LEVEL = Rule("level", r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)", ("INFO", "WARN"))
TIME = Rule("time", r"(?P<time>\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)?", ("11-30 19:41:07", "05-02 09:12:03.123"))
LOCATION = Rule(
    "location",
    r"(?:\[(?P<loc>[^\]\s]*:\d+)\]|(?P<loc_a>[\w.<>-]+:\d+)\])",  # `[core.py:1584]`; `api_server.py:712]` up to 0.7
    ("[core.py:1584]", "api_server.py:712]", "[utils.py:2]"),
)
LOGGER_HEADER = Rule(
    "logger header",
    f"{LEVEL.regex} {TIME.regex} {LOCATION.regex}",
    ("ERROR 11-30 19:41:07 [core.py:1584]", "INFO 12-27 10:00:01 api_server.py:712]"),
)
UVICORN_LEVEL = Rule(
    "uvicorn level", r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+", ("INFO:     ", "ERROR:    ")
)
# Names can hold a space (`VllmWorker TP0`, 0.10.1.x) and Ray's has none at all (`(pid=1, ip=...)`).
PROCESS = Rule(
    "process",
    r"\((?P<proc>[^()]*?)\s*pid=(?P<pid>\d+)(?:,\s*ip=[^)]*)?\)",
    ("(APIServer pid=12047)", "(VllmWorker TP0 pid=3)", "(RayWorkerWrapper pid=123, ip=10.0.0.2)", "(pid=9)"),
)
RANK = Rule("rank", r"\[rank(?P<rank>\d+)\]:", ("[rank0]:", "[rank12]:"))
# vLLM's own lines never start with a year; a `| <time> |` table is what log viewers export.
COLLECTOR_TIME = Rule(
    "collector time",
    r"\s*(?:\|\s*)?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s*\|)?\s",
    ("2024-05-01T10:00:00.123Z ", "| 2024-05-01 10:00:00 | ", "2024-05-01T10:00:00+02:00 "),
)
COMPOSE_SERVICE = Rule("compose service", r"(?P<service>[A-Za-z0-9][\w.-]*)\s+\| ?", ("vllm-1  | ", "api |"))

RULES = (LEVEL, TIME, LOCATION, LOGGER_HEADER, UVICORN_LEVEL, PROCESS, RANK, COLLECTOR_TIME, COMPOSE_SERVICE)

_GROUP_NAME = re.compile(r"(?<!\\)\(\?P<\w+>")


def anonymous(regex: str) -> str:
    """The regex without its group names (to combine rules, or to repeat one, in a bigger regex)."""
    return _GROUP_NAME.sub("(?:", regex)


def either(*rules: Rule) -> str:
    return "(?:" + "|".join(anonymous(r.regex) for r in rules) + ")"


def within_line(regex: str) -> bytes:
    """The regex for bytes, unable to match a newline: `\\s` outside a class becomes `[^\\S\\n]`, and every
    negated class leaves the newline out. For scanning a buffer of many lines at once."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            escape = regex[i : i + 2]
            out.append(r"[^\S\n]" if escape == r"\s" else escape)
            i += 2
        elif c == "[":
            end = _class_end(regex, i)
            body = regex[i + 1 : end]
            if body.startswith("^"):
                out.append("[^\\n" + body[1:] + "]")
            elif r"\s" in body or r"\S" in body or "\n" in body:
                raise ValueError(f"a positive class that may hold a newline: {regex[i : end + 1]!r}")
            else:
                out.append(regex[i : end + 1])
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out).encode()


def _class_end(regex: str, start: int) -> int:
    """The index of the `]` that closes the class opened at `start`."""
    i = start + 1
    if regex[i : i + 1] == "^":
        i += 1
    if regex[i : i + 1] == "]":  # a `]` first in a class is a literal
        i += 1
    while regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i
