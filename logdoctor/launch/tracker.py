"""Launch boundaries and what each launch's header reveals.

A log can hold several launches (restarts appended to one file, several servers in one pipe). A launch
starts at its version line, or at its arguments line when that follows an earlier one; every line
belongs to the launch whose start precedes it, and lines before any marker belong to launch 1. Each
launch collects a LaunchConfig from its header lines, every value with the line it came from.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from logdoctor.launch.argspec import load_spec
from logdoctor.launch.cmdline import option_tokens
from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.launch.header import HeaderFact, parse_header_line
from logdoctor.launch.pyrepr import Call, EnumMember, Opaque, Symbol
from logdoctor.records import Record

# The server is up: what is logged after a later shutdown request is the shutdown, not a failure.
_READY = re.compile(r"Application startup complete|Starting vLLM (?:API )?server|Available routes are")
_SHUTDOWN = re.compile(
    r"Shutting down FastAPI HTTP server|\[shutdown\] API server: shutdown triggered"
    r"|received (?:signal )?SIG(?:TERM|INT)|Shutting down$"
)
# A launch that printed one of these has failed; a version line after it belongs to the next launch.
_FAILURE = re.compile(r"Traceback \(most recent call last\)|[\w./ -]{1,60}?: error: |EngineCore failed to start")
# The server finished shutting down (uvicorn's last line): its processes are gone, so an error after it
# is a new launch's, even without a banner (a container restarted with its header cut, a pasted excerpt).
_STOPPED = re.compile(r"Application shutdown complete")
# Lines only a starting server prints, beside the header facts (version, arguments) header.py reads:
# after a launch was up or stopped, one of them starts the next launch.
# (Two regexes, so the one searched anywhere in every line starts with a literal the engine scans for.)
_STARTING = re.compile(r"Initializing a(?: V1|n) LLM engine")
_STARTING_AT_START = re.compile(
    r"usage: (?:vllm|api_server\.py|python -m vllm)"
    r"|[$#+>] (?:\S+/)?(?:vllm serve|python[\d.]* -m vllm\.entrypoints)"  # the command, at a shell prompt or `set -x`
)
# Every vLLM process prints this when it imports vLLM, workers included: a launch boundary only once the
# server has stopped.
_IMPORTING = re.compile(r"Automatically detected platform \w+")
# After a stop, an error of any shape opens the next launch: a record at ERROR, or a raw error line (an
# exception line, the container runtime's refusal to start the next container).
_ERROR_LINE = re.compile(r"[\w.]*(?:Error|Exception): |[\w.-]+: Error response from daemon")
# Python's report of an exception in a finalizer while the interpreter exits: teardown, not a launch.
_IGNORED = re.compile(r"Exception ignored in")
# For a reader that skips lines (sieve.py): what the tracker looks for anywhere in a message, and at its start.
SEARCHED: tuple[str, ...] = (_READY.pattern, _SHUTDOWN.pattern, _STOPPED.pattern, _STARTING.pattern, _IMPORTING.pattern)
MATCHED_AT_START: tuple[str, ...] = (
    _FAILURE.pattern, _ERROR_LINE.pattern, _STARTING_AT_START.pattern, _IGNORED.pattern
)
# Order of the markers within one launch's header: the version line comes before the arguments line.
_MARKER_ORDER = {"version": 0, "non_default_args": 1, "namespace_args": 1}


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
    config: LaunchConfig = field(default_factory=LaunchConfig)
    args_line: int | None = None  # the `non-default args` / `args: Namespace` line, when seen
    args_truncated: bool = False  # ... and it was cut (longer than a line logdoctor reads): read in part
    failed_line: int | None = None  # the first error or traceback: a version line after it is a restart
    stopped_line: int | None = None  # shutdown complete: what fails after it is the next launch
    processes: set[str] = field(default_factory=set)  # the process labels its records carried
    last_record_line: int = 0  # the last vLLM record read (a reader that skips lines sees fewer)
    server: bool = False  # its header is an API server's (version line, arguments line): it should serve

    def stopping_at(self, line_number: int) -> bool:
        """Was the server, once up, already shutting down on purpose at this line?"""
        return self.shutdown_line is not None and line_number >= self.shutdown_line


class LaunchTracker:
    """Per source: the launches, and which one each line belongs to."""

    def __init__(self) -> None:
        # Per source, the launches still held: the current one is always kept (it numbers the next).
        self._launches: dict[str, list[Launch]] = {}
        self._finalizer_report: set[str] = set()  # sources whose last record was `Exception ignored in`

    def observe(self, record: Record) -> Launch:
        launches = self._launches.setdefault(record.line.source, [Launch(1, 1)])
        current = launches[-1]
        message = record.message
        if not message:
            return current
        if self._starts_after_stop(current, record):
            current = Launch(current.index + 1, record.line.number)
            launches.append(current)
        if record.process_label is not None and current.stopped_line is None:
            current.processes.add(record.process_label)
        self._lifecycle(current, record)
        if current.failed_line is None and _FAILURE.match(message) and (record.level in (None, "ERROR", "CRITICAL")):
            current.failed_line = record.line.number
        if record.kind != "vllm":
            return current
        fact = parse_header_line(message)
        if fact is not None:
            current = self._launch_for_fact(launches, current, fact, record)
            _apply_fact(current, fact, record)
        current.last_record_line = record.line.number
        return current

    def _starts_after_stop(self, current: Launch, record: Record) -> bool:
        """Does this record open the next launch although no version line came: a server that had been up
        prints a start-up line, or one that finished shutting down is followed by a line of a process that
        was not its own, or by an error from no process it had (its processes are gone)."""
        message = record.message
        source = record.line.source
        after_finalizer = source in self._finalizer_report
        if _IGNORED.match(message):
            self._finalizer_report.add(source)
        else:
            self._finalizer_report.discard(source)
        if (current.ready_line is not None or current.stopped_line is not None) and (
            _STARTING.search(message) or _STARTING_AT_START.match(message)
        ):
            return True
        if current.stopped_line is None or after_finalizer:
            return False
        if _IMPORTING.search(message):
            return True
        label = record.process_label
        if label is not None and current.processes and label not in current.processes:
            return True  # a process the stopped server did not have: the next server's
        if not (_FAILURE.match(message) or record.level in ("ERROR", "CRITICAL") or _ERROR_LINE.match(message)):
            return False
        return label is None or label not in current.processes

    @staticmethod
    def _lifecycle(current: Launch, record: Record) -> None:
        message = record.message
        if current.ready_line is None:
            if _READY.search(message):
                current.ready_line = record.line.number
        elif current.shutdown_line is None and _SHUTDOWN.search(message):
            current.shutdown_line = record.line.number
        if current.stopped_line is None and _STOPPED.search(message):
            current.stopped_line = record.line.number

    @staticmethod
    def _launch_for_fact(launches: list[Launch], current: Launch, fact: HeaderFact, record: Record) -> Launch:
        """A version line, or an arguments line after one, starts the next launch (a restart)."""
        order = _MARKER_ORDER.get(fact.kind)
        if order is None or (fact.kind == "version" and "vllm_version" not in fact.values):
            return current
        restarted = fact.kind == "version" and current.failed_line is not None
        if order <= current.last_marker or restarted:
            current = Launch(current.index + 1, record.line.number)
            launches.append(current)
        current.last_marker = order
        current.header_lines.append(record)
        return current

    def launch_of(self, source: str, line_number: int) -> Launch:
        launches = self._launches.get(source) or [Launch(1, 1)]
        if line_number >= launches[-1].first_line:  # nearly always: the event belongs to the current launch
            return launches[-1]
        starts = [launch.first_line for launch in launches]
        return launches[max(bisect_right(starts, line_number) - 1, 0)]

    def launches(self, source: str) -> list[Launch]:
        """The launches held (every one, unless forget() dropped the settled ones)."""
        return list(self._launches.get(source, []))

    def count(self, source: str) -> int:
        """How many launches the source has had."""
        launches = self._launches.get(source)
        return launches[-1].index if launches else 0

    def forget(self, source: str, index: int) -> None:
        """Drop the launches up to `index` but the current one: the reader is done with them."""
        launches = self._launches.get(source)
        if launches:
            self._launches[source] = [launch for launch in launches[:-1] if launch.index > index] + launches[-1:]


# Header kinds whose values the user typed (the rest are what vLLM resolved or derived).
_USER_ARGS = ("non_default_args", "namespace_args")
# Keys of the args lines that are not arguments to put back on a command line.
_NOT_ARGUMENTS = {"model_tag", "subparser", "dispatch_function", "kv_connector", "config"}


def _plain(value: object) -> object:
    """Reprs to the JSON values a command line holds: `KVTransferConfig(...)` becomes its dict, an enum
    member its value, anything else that JSON cannot hold its text."""
    if isinstance(value, Call):
        return {k: _plain(v) for k, v in value.kwargs.items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, EnumMember):
        return _plain(value.value)
    if isinstance(value, Symbol):
        return value.name
    if isinstance(value, Opaque):
        return value.text
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _apply_fact(launch: Launch, fact: HeaderFact, record: Record) -> None:
    line = record.line
    origin = Origin(kind="log", where=f"{line.source}:{line.number} ({fact.kind.replace('_', ' ')})")
    config = launch.config
    values = fact.values
    if fact.kind in ("version", *_USER_ARGS):
        launch.server = True
    if fact.kind == "version":
        launch.version = str(values.get("vllm_version") or launch.version or "") or None
        launch.model = str(values.get("model") or launch.model or "") or None
    if fact.kind == "engine_config" and values.get("vllm_version") and launch.version is None:
        launch.version = str(values["vllm_version"])
    if fact.kind in _USER_ARGS:
        launch.args_line = line.number
        launch.args_truncated = fact.truncated or line.truncated
        spec = load_spec(launch.version)
        for name, value in values.items():
            if name not in _NOT_ARGUMENTS:
                plain = _plain(value)
                config.set(name, plain, origin, given=True)
                # How the user wrote it, kept even when vLLM later resolves the value differently.
                config.written[name] = [str(plain)] if name == "model" else option_tokens(spec, name, plain)
        if "kv_connector" in values:
            config.observe("kv_connector", values["kv_connector"], origin)
        return
    for name, value in values.items():
        if name == "model" and config.get("model") is not None:
            continue
        config.observe(name, _plain(value), origin)
