"""Launch boundaries: a log can hold several launches (restarts appended to one file, several servers
in one pipe). A launch starts at its version line or its arguments line; every line belongs to the
launch whose start precedes it, and lines before any marker belong to launch 1."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from logdoctor.records import Record

# marker kind -> order within one launch's header: the version line comes before the arguments line.
_MARKERS: list[tuple[int, re.Pattern[str]]] = [
    (0, re.compile(r"vLLM (?:API )?server version (?P<version>\S+?)(?:, serving model (?P<model>\S+))?\s*")),
    # The ASCII logo (0.13+): `█ ▀▄▀ █  version 0.28.0` then `█     █  model   org/name`.
    (0, re.compile(r".*█\s+version (?P<version>\S+)\s*")),
    (1, re.compile(r"(?:args: Namespace\(|non-default args: \{).*")),
]
# The server is up: what is logged after a later shutdown request is the shutdown, not a failure.
_READY = re.compile(r"Application startup complete|Starting vLLM (?:API )?server|Available routes are")
_SHUTDOWN = re.compile(
    r"Shutting down FastAPI HTTP server|\[shutdown\] API server: shutdown triggered"
    r"|received (?:signal )?SIG(?:TERM|INT)|Shutting down$"
)
_LOGO_MODEL = re.compile(r".*█\s+model\s+(?P<model>\S+)\s*")
_ENGINE_VERSION = re.compile(r"Initializing an? (?:V[01] )?LLM engine \(v(?P<version>[^)]+)\)")


@dataclass
class Launch:
    index: int
    first_line: int
    version: str | None = None
    model: str | None = None
    last_marker: int = -1
    header_lines: list[Record] = field(default_factory=list)
    ready_line: int | None = None  # the server reported it was serving
    shutdown_line: int | None = None  # then it was asked to stop

    def stopping_at(self, line_number: int) -> bool:
        """Was the server, once up, already shutting down on purpose at this line?"""
        return self.shutdown_line is not None and line_number >= self.shutdown_line


class LaunchTracker:
    """Per source: which launch each line belongs to."""

    def __init__(self) -> None:
        self._launches: dict[str, list[Launch]] = {}

    def observe(self, record: Record) -> Launch:
        launches = self._launches.setdefault(record.line.source, [Launch(1, 1)])
        current = launches[-1]
        message = record.message
        if not message:
            return current
        self._lifecycle(current, record)
        if record.kind != "vllm":
            return current
        if "version" not in message and "args: " not in message:
            return self._engine_facts(current, message)
        for order, marker in _MARKERS:
            match = marker.fullmatch(message)
            if match is None:
                continue
            if order <= current.last_marker:
                current = Launch(len(launches) + 1, record.line.number)
                launches.append(current)
            current.last_marker = order
            current.header_lines.append(record)
            groups = match.groupdict()
            current.version = groups.get("version") or current.version
            current.model = groups.get("model") or current.model
            return current
        return self._engine_facts(current, message)

    @staticmethod
    def _lifecycle(current: Launch, record: Record) -> None:
        message = record.message
        if current.ready_line is None:
            if _READY.search(message):
                current.ready_line = record.line.number
        elif current.shutdown_line is None and _SHUTDOWN.search(message):
            current.shutdown_line = record.line.number

    @staticmethod
    def _engine_facts(current: Launch, message: str) -> Launch:
        if current.model is None and "█" in message:
            logo = _LOGO_MODEL.fullmatch(message)
            if logo:
                current.model = logo["model"]
        if current.version is None and message.startswith("Initializing a"):
            engine = _ENGINE_VERSION.match(message)
            if engine:
                current.version = engine["version"]
        return current

    def launch_of(self, source: str, line_number: int) -> Launch:
        launches = self._launches.get(source) or [Launch(1, 1)]
        starts = [launch.first_line for launch in launches]
        return launches[max(bisect_right(starts, line_number) - 1, 0)]

    def launches(self, source: str) -> list[Launch]:
        return list(self._launches.get(source, []))
