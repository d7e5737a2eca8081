"""vLLM's wrappers are wrappers: every message vLLM raises to report an error printed above it (in every
release the index of its error surface holds) is a `wrapper` finding in every shape it is logged in; it
never becomes the root cause while a cause exists, and alone it stays an error that says what would show
the cause."""

from __future__ import annotations

import re

import pytest

from logdoctor.api import diagnose_lines
from logdoctor.diagnose import LONE_WRAPPER_STEP
from logdoctor.library.matcher import Library
from logdoctor.surface import default_index, sample_message

# What vLLM's own wording says when it re-raises or reports an error printed before it.
_POINTS_ABOVE = re.compile(
    r"See (?:the )?(?:root cause|stack ?trace)|root cause above|stack ?trace (?:\(?above\)?|for (?:the )?root cause)"
    r"|check the stack trace above|Inspect the stacktrace|inspect the output to find the stacktrace",
    re.I,
)
# The executors' wrappers that do not say so: a worker failed and printed its traceback first.
EXECUTOR_WRAPPERS = {
    ("RuntimeError", "WorkerProc failed to start."),
    ("RuntimeError", "EngineCoreProc failed to start."),
    ("RuntimeError", "Worker failed"),
    ("RuntimeError", "One or more workers failed"),
    ("RuntimeError", "Worker failed with KV connector output"),
    ("RuntimeError", "Worker {i} failed to initialize: {result}"),
    ("RuntimeError", "Ray workers have not started successfully."),
    ("AssertionError", "Engine process failed to start."),
}


def _wrapper_entries() -> list[tuple[str, str]]:
    entries = []
    for entry in default_index().entries():
        if entry.kind not in ("raise", "assert"):
            continue
        if _POINTS_ABOVE.search(entry.template) or (entry.exception, entry.template) in EXECUTOR_WRAPPERS:
            entries.append((entry.exception or "Exception", entry.template))
    return sorted(set(entries))


WRAPPERS = _wrapper_entries()


def test_the_index_still_holds_every_executor_wrapper() -> None:
    assert set(WRAPPERS) >= EXECUTOR_WRAPPERS  # a message renamed in the index must be looked at again
    assert len(WRAPPERS) >= 15


@pytest.mark.parametrize(("exception", "template"), WRAPPERS)
def test_every_wrapper_vllm_raises_is_a_wrapper(library: Library, exception: str, template: str) -> None:
    # Values as vLLM prints them where a sample number would not do: the process dicts, a status dict.
    real = {"{finished}": "{'EngineCore_DP0': 1}", "{failed_frontend_procs}": "{'ApiServer_1': 1}",
            "{result}": "{'status': 'FAILED', 'handle': None}"}
    entry = next(e for e in default_index().entries() if e.template == template)
    message = sample_message(entry) if not any(k in template for k in real) else template
    for field, value in real.items():
        message = message.replace(field, value).replace("{i}", "1")
    findings = diagnose_lines([f"{exception}: {message}"], library)
    assert [(f.role, f.severity) for f in findings] == [("wrapper", "error")], (template, [f.rule for f in findings])


WORKER_INIT = (
    "WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause."
)


@pytest.mark.parametrize(
    "line",
    [
        f"Exception: {WORKER_INIT}",
        f"(EngineCore_DP0 pid=2211) ERROR 05-14 11:02:37 [core.py:708] Exception: {WORKER_INIT}",
        # The message alone: an ERROR record that lost its `Exception: `, a pasted last line.
        f"(EngineCore_DP0 pid=2211) ERROR 05-14 11:02:37 [core.py:708] {WORKER_INIT}",
        WORKER_INIT,
        "(APIServer pid=1) ERROR 05-14 11:02:37 [utils.py:1] Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {'EngineCore_DP0': 1}",
    ],
)
def test_a_wrapper_in_any_shape_is_a_wrapper_not_unrecognized(library: Library, line: str) -> None:
    (finding,) = diagnose_lines([line], library)
    assert (finding.role, finding.severity) == ("wrapper", "error") and finding.rule.startswith("engine.")


def test_a_wrapper_alone_stays_an_error_that_says_what_would_show_the_cause(library: Library) -> None:
    (finding,) = diagnose_lines([f"Exception: {WORKER_INIT}"], library)
    assert finding.primary and finding.severity == "error"
    assert finding.fix.steps[0] == LONE_WRAPPER_STEP


def test_a_wrapper_never_outranks_the_cause_it_wraps(library: Library) -> None:
    lines = [
        "(Worker_TP0 pid=2301) ERROR 05-14 11:02:37 [multiproc_executor.py:597] WorkerProc failed to start.",
        "(Worker_TP0 pid=2301) ERROR 05-14 11:02:37 [multiproc_executor.py:597] Traceback (most recent call last):",
        '(Worker_TP0 pid=2301) ERROR 05-14 11:02:37 [multiproc_executor.py:597]   File "/v/vllm/worker.py", line 1, in f',
        "(Worker_TP0 pid=2301) ERROR 05-14 11:02:37 [multiproc_executor.py:597] torch.OutOfMemoryError: CUDA out of "
        "memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
        f"(EngineCore_DP0 pid=2211) ERROR 05-14 11:02:38 [core.py:708] {WORKER_INIT}",
    ]
    findings = diagnose_lines(lines, library)
    (primary,) = [f for f in findings if f.primary]
    assert primary.rule == "memory.cuda-oom"
    (wrapper,) = [f for f in findings if f.role == "wrapper"]
    assert LONE_WRAPPER_STEP not in wrapper.fix.steps  # the cause is in the log: nothing to reveal
