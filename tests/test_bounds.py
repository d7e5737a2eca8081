"""Inputs past every cap: nothing breaks, and the output says what was cut.

The large versions (a 100 MB line, a million frames, /dev/zero) run in bench/bounds.py, which measures
memory; these are the same shapes just past the caps, fast enough for every test run.
"""

from __future__ import annotations

import io

from logdoctor.api import diagnose_text
from logdoctor.assemble import MAX_EVENT_HEAD, MAX_EVENT_TAIL
from logdoctor.diagnose import ARGS_TRUNCATED_STEP
from logdoctor.framing import MAX_LINE_CHARS
from logdoctor.launch.header import parse_header_line
from logdoctor.library.matcher import Library
from logdoctor.report.text import TextReporter
from tests.conftest import FIXTURES

FRAME = '  File "/x/vllm/model_executor/layer.py", line 12, in forward\n    return self.forward(x)\n'


def test_a_traceback_longer_than_kept_is_reported_and_marked_truncated(library: Library) -> None:
    frames = (MAX_EVENT_HEAD + MAX_EVENT_TAIL) // 2 + 500
    log = "Traceback (most recent call last):\n" + FRAME * frames + "RecursionError: maximum recursion depth exceeded\n"
    (finding,) = diagnose_text(log, library)
    assert finding.error.type == "RecursionError" and finding.truncated
    out = io.StringIO()
    reporter = TextReporter(out)
    reporter.finding(finding)
    reporter.close()  # a scan's launch is printed once it is complete
    assert "truncated: the error was longer than logdoctor keeps" in out.getvalue()


def test_a_line_longer_than_read_still_ends_where_it_ends(library: Library) -> None:
    tail = (FIXTURES / "engine-core-kv-cache-too-small-0.33.log").read_text()
    log = "x" * (MAX_LINE_CHARS * 20) + "\n" + tail
    assert "memory.kv-cache-too-small" in {f.rule for f in diagnose_text(log, library)}


def test_a_cut_arguments_line_says_the_corrected_command_may_lack_arguments(library: Library) -> None:
    lines = (FIXTURES / "replayssm-cache-mode-all-0.28.log").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "non-default args: {" in line)
    padding = ", ".join(f"'extra_{i}': '{'v' * 60}'" for i in range(MAX_LINE_CHARS // 60))
    lines[at] = lines[at].replace("non-default args: {", "non-default args: {" + padding + ", ", 1)
    findings = [f for f in diagnose_text("\n".join(lines) + "\n", library) if f.fix.command]
    assert findings and all(ARGS_TRUNCATED_STEP in f.fix.steps for f in findings)


def test_deep_nesting_in_a_repr_is_refused_not_a_recursion_error() -> None:
    depth = 200_000
    message = "non-default args: {'model': 'm', 'a': " + "[" * depth + "]" * depth + "}"
    fact = parse_header_line(message)
    assert fact is None or fact.get("model") == "m"


def test_binary_garbage_never_raises(library: Library) -> None:
    import random

    from logdoctor.doctor import Doctor
    from logdoctor.framing import frame_bytes

    data = random.Random(0).randbytes(300_000)
    diagnose_text(data, library)  # findings or not: no exception, no hang
    doctor = Doctor(library)  # ... and none swallowed by the core's guard either
    for line in frame_bytes(data, "garbage"):
        doctor.feed(line)
    doctor.flush()
    assert doctor.internal_errors == 0, doctor.internal_error_reports
