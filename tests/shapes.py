"""One error, written in every shape real input gives it (issue: "Find a known error wherever it stands").

A tidy error (an exception type and its message) is rendered as a plain traceback, then as the shapes
users paste or collectors produce: the bare `Type: message` line, the message alone, a pydantic detail
alone, under prefixes logdoctor was never told about (a CI gutter, a build log's bracketed time, a
launcher's `[Error] (Process)`, syslog's `#033[` escapes, ANSI in caret notation, a collector's time),
flattened onto one line (with and without vLLM's repeated prefixes), hard-wrapped by an 80-column
terminal, and cut (starting mid-traceback; ending right after the exception line). Each shape must give
the finding the tidy form gives.
"""

from __future__ import annotations

from collections.abc import Callable

from logdoctor.assemble import RaisedException
from logdoctor.diagnose import rank_key
from logdoctor.doctor import Doctor
from logdoctor.framing import frame_bytes
from logdoctor.library.matcher import Library
from logdoctor.library.pattern import Pattern

FRAMES = [
    ("/usr/local/lib/python3.12/site-packages/vllm/entrypoints/cli/main.py", 73, "main", "args.dispatch_function(args)"),
    ("/usr/local/lib/python3.12/site-packages/vllm/entrypoints/cli/serve.py", 112, "cmd", "uvloop.run(run_server(args))"),
    ("/usr/local/lib/python3.12/site-packages/vllm/engine/arg_utils.py", 1400, "create_engine_config", "raise exc"),
]
WRAP_WIDTH = 80


def traceback_lines(type_name: str, message: str) -> list[str]:
    lines = ["Traceback (most recent call last):"]
    for file, number, function, code in FRAMES:
        lines += [f'  File "{file}", line {number}, in {function}', f"    {code}"]
    head, *rest = message.split("\n")
    lines.append(f"{type_name}: {head}" if head or not rest else type_name)
    return lines + rest


def _pydantic_detail(message: str) -> str | None:
    for line in message.splitlines():
        if line.strip().startswith(("Value error, ", "Assertion failed, ")):
            return line.strip()
    return None


def _wrap(line: str, width: int = WRAP_WIDTH) -> list[str]:
    return [line[i : i + width] for i in range(0, len(line), width)] or [""]


def _under(prefix: Callable[[int], str], lines: list[str]) -> str:
    return "\n".join(prefix(n) + line for n, line in enumerate(lines))


def shapes(type_name: str, message: str) -> dict[str, str]:
    """Every shape of one exception, by name. Shapes that need a one-line message are left out when the
    message has several lines."""
    tb = traceback_lines(type_name, message)
    out = {
        "tidy": "\n".join(tb),
        "bare": "\n".join(tb[-1 - message.count("\n") :]),
        "ci-gutter": _under(lambda n: "  | ", tb),
        "build-log-time": _under(lambda n: f"> [2024-05-01T10:00:{n:02d}.123Z] ", tb),
        "launcher-wrapper": _under(lambda n: f"2024-05-01 12:00:{n:02d} [Error] (Process) ", tb),
        "syslog-escapes": _under(lambda n: f"May  1 12:00:{n:02d} node7 vllm[812]: #033[0;36m", tb),
        "caret-ansi": _under(lambda n: "^[[1;31m", tb).replace("\n", "^[[0m\n") + "^[[0m",
        "collector-time": _under(lambda n: f"2024-05-01T12:00:{n:02d}.123456789Z ", tb),
        "flattened": " ".join(line.strip() if i else line for i, line in enumerate(tb)),
        "flattened-prefixed": " ".join(f"(APIServer pid=8123) {line}" for line in tb),
        "hard-wrapped": "\n".join(part for line in tb for part in _wrap(line)),
        "mid-traceback": "\n".join(tb[3:]),
        "ends-cut": "\n".join(tb),  # no newline after the last line, nothing after it
    }
    if "\n" not in message:
        out["message-alone"] = message
    else:
        out.pop("flattened")  # a flattened multi-line message reads as one line: other patterns
        out.pop("flattened-prefixed")
    detail = _pydantic_detail(message)
    if detail is not None:
        out["pydantic-detail-alone"] = detail
    return {name: text + ("\n" if name != "ends-cut" else "") for name, text in out.items()}


def rules_by_source(texts: dict[str, str], library: Library) -> dict[str, list[str]]:
    """The rules of each text's findings, the one that ranks first (the root cause, or the most serious
    finding where none can be one) first; all texts diagnosed by one Doctor, each its own source."""
    doctor = Doctor(library)
    for name, text in texts.items():
        for line in frame_bytes(text.encode(), name):
            doctor.feed(line)
    doctor.flush()
    found: dict[str, list[str]] = {name: [] for name in texts}
    for finding in sorted(doctor.report(), key=rank_key):
        found[finding.source].append(finding.rule)
    return found


def tidy_exception(pattern: Pattern, library: Library) -> RaisedException | None:
    """The exception a pattern's first example raises, as the pattern matched it (None for a pattern of
    log lines)."""
    from logdoctor.assemble import Assembler
    from logdoctor.records import parse

    assembler = Assembler(exception_names=library.exception_names)
    events = []
    for line in frame_bytes(pattern.examples.match[0].encode(), "example"):
        events += assembler.feed(parse(line))
    events += assembler.flush()
    for event in events:
        for exc in event.exceptions:
            match = library.match_exception(exc, event)
            if match is not None and match.pattern.id == pattern.id and exc.type:
                return exc
    return None
