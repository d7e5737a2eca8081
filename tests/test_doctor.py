"""doctor.py: events to findings, one finding per error, one root cause per launch, amended as it goes."""

from __future__ import annotations

from logdoctor.doctor import MAX_REPEATS_SHOWN, Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB"


def traceback(last: str = OOM, prefix: str = "") -> list[str]:
    return [
        f"{prefix}Traceback (most recent call last):",
        f'{prefix}  File "/x/vllm/worker.py", line 3, in f',
        f"{prefix}    g()",
        f"{prefix}{last}",
    ]


def feed_all(doctor: Doctor, texts: list[str], source: str = "-") -> list[Finding]:
    out: list[Finding] = []
    for number, text in enumerate(texts, 1):
        out += doctor.feed(Line(source, number, text))
    return out + doctor.flush()


def test_every_line_fed_or_skipped_is_counted(library: Library) -> None:
    doctor = Doctor(library)
    feed_all(doctor, ["a", "b", "c"])
    doctor.skip(5)
    assert doctor.lines == 8


def test_an_error_seen_again_is_one_finding_counted_with_its_first_repeats_shown(library: Library) -> None:
    doctor = Doctor(library)
    texts = traceback() + ["noise"] + traceback() + ["noise"] + traceback() + ["noise"] + traceback()
    feed_all(doctor, texts)
    (finding,) = doctor.report()
    assert finding.rule == "memory.cuda-oom" and finding.occurrences == 4 and finding.primary
    assert finding.lines == (1, 5)  # its own event: the next line closed it
    repeats = [e.line for e in finding.evidence if e.line > 5]
    # The error line of the earliest MAX_REPEATS_SHOWN - 1 other sightings, in line order.
    assert repeats == [9, 14][: MAX_REPEATS_SHOWN - 1]
    assert [e.line for e in finding.evidence] == sorted(e.line for e in finding.evidence)


def test_a_stream_reports_a_finding_once_and_then_amends_it(library: Library) -> None:
    doctor = Doctor(library)
    emitted = []  # what a reporter would write at the time: (kind, id, occurrences)
    for number, text in enumerate(traceback() + ["noise"] + traceback() + ["noise"], 1):
        emitted += [(f.kind, f.id, f.occurrences) for f in doctor.feed(Line("-", number, text))]
    emitted += [(f.kind, f.id, f.occurrences) for f in doctor.flush()]  # the end closes the second
    assert emitted[0] == ("finding", "f1", 1)
    assert emitted[1:] and all(kind == "update" and ident == "f1" for kind, ident, _ in emitted[1:])
    assert emitted[-1][2] == 2
    # Nothing is pending any more: a later call amends nothing and repeats nothing.
    assert doctor.flush() == [] and doctor.tick(100.0) == []
    assert not doctor.pending


def test_the_earliest_sighting_is_the_finding_even_when_it_completes_last(library: Library) -> None:
    # A logged traceback waits for the next line of its own stream; a raw one of another process ends first.
    first = ["(EngineCore pid=1) ERROR 11-30 10:00:00 [core.py:1] EngineCore failed:"] + [
        "(EngineCore pid=1) ERROR 11-30 10:00:00 [core.py:1] " + t for t in traceback()
    ]
    second = traceback(prefix="(Worker pid=2) ")
    texts = (
        first
        + second
        + ["(Worker pid=2) INFO 11-30 10:00:01 [a.py:1] next", "(EngineCore pid=1) INFO 11-30 10:00:02 [a.py:1] next"]
    )
    doctor = Doctor(library)
    feed_all(doctor, texts)
    oom = [f for f in doctor.report() if f.rule == "memory.cuda-oom"]
    assert len(oom) == 1
    # The worker's copy completed first and was reported as f1; the engine's, earlier in the log, took over
    # and shows the worker's error line as a repeat.
    assert (oom[0].occurrences, oom[0].lines, oom[0].id, oom[0].process) == (2, (1, 5), "f1", "EngineCore pid=1")
    assert len(first) + len(second) in {e.line for e in oom[0].evidence}


def test_report_is_a_ranked_copy_in_line_order(library: Library) -> None:
    doctor = Doctor(library)
    feed_all(doctor, ["RuntimeError: Engine core initialization failed. See root cause above."] + traceback())
    report = doctor.report()
    assert [f.lines[0] for f in report] == sorted(f.lines[0] for f in report)
    assert sum(f.primary for f in report) == 1
    report[0].primary = not report[0].primary
    assert [f.primary for f in doctor.report()] != [f.primary for f in report]  # the doctor's own are untouched


def test_pending_names_the_source_with_an_open_event(library: Library) -> None:
    doctor = Doctor(library)
    for number, text in enumerate(traceback()[:3], 1):
        doctor.feed(Line("a.log", number, text))
    assert doctor.pending and doctor.pending_in("a.log") and not doctor.pending_in("b.log")
    doctor.flush()
    assert not doctor.pending and not doctor.pending_in("a.log")


def test_a_warning_that_explains_a_later_error_becomes_its_cause(library: Library) -> None:
    warning = library.by_id["install.vllm-extension-import-warning"]
    error = library.by_id["install.vllm-op-not-registered"]
    assert error.id in warning.explains
    doctor = Doctor(library)
    texts = [warning.examples.match[0], "noise"] + [error.examples.match[0]]
    feed_all(doctor, texts)
    by_rule = {f.rule: f for f in doctor.report()}
    cause, consequence = by_rule[warning.id], by_rule[error.id]
    assert (cause.role, consequence.role) == ("cause", "consequence")
    assert cause.severity == "error" and cause.primary and not consequence.primary
    assert cause.lines[1] >= consequence.lines[0]  # the cause shows the error's line
    assert consequence.lines[0] in {e.line for e in cause.evidence}


def test_an_error_before_the_warning_is_not_explained_by_it(library: Library) -> None:
    warning = library.by_id["install.vllm-extension-import-warning"]
    error = library.by_id["install.vllm-op-not-registered"]
    doctor = Doctor(library)
    feed_all(doctor, [error.examples.match[0], "noise", warning.examples.match[0]])
    by_rule = {f.rule: f for f in doctor.report()}
    assert by_rule[warning.id].severity == "warning" and by_rule[error.id].primary


def test_an_internal_error_is_reported_once_to_the_sink_and_the_rest_goes_on(library: Library) -> None:
    reports: list[str] = []
    doctor = Doctor(library, on_internal_error=reports.append)
    import logdoctor.doctor as doctor_module

    real = doctor_module.diagnose
    calls = 0

    def flaky(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise RuntimeError("boom")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    doctor_module.diagnose = flaky  # type: ignore[assignment]
    try:
        feed_all(doctor, traceback() + ["x"] + traceback(last="ValueError: a") + ["x"] + traceback())
    finally:
        doctor_module.diagnose = real
    assert doctor.internal_errors == 2 and len(reports) == 1 and "-:1" in reports[0]
    assert [f.rule for f in doctor.report()] == ["memory.cuda-oom"]


def _emit(doctor: Doctor, found: list[Finding]) -> list[tuple[str, str, str, bool, int]]:
    return [(f.kind, f.id, f.rule, f.primary, f.occurrences) for f in found]


def test_a_root_cause_arriving_after_the_wrapper_takes_primary_and_the_wrapper_is_updated(library: Library) -> None:
    doctor = Doctor(library)
    texts = ["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
    texts += traceback()
    emitted = []
    for number, text in enumerate(texts, 1):
        emitted += _emit(doctor, doctor.feed(Line("-", number, text)))
    emitted += _emit(doctor, doctor.flush())
    assert emitted == [
        ("finding", "f1", "engine.core-init-failed", True, 1),
        ("finding", "f2", "memory.cuda-oom", True, 1),
        ("update", "f1", "engine.core-init-failed", False, 1),
    ]


def test_an_early_report_that_turns_out_to_be_a_repeat_is_withdrawn_once(library: Library) -> None:
    doctor = Doctor(library)
    emitted = []
    lines = [*traceback(), "next", *traceback()[:3]]
    for number, text in enumerate(lines, 1):
        emitted += _emit(doctor, doctor.feed(Line("-", number, text), now=0.0))
    emitted += _emit(doctor, doctor.tick(5.0))  # quiet: the open traceback is reported as far as it goes
    assert emitted[-1][:3] == ("finding", "f2", "unrecognized")
    emitted += _emit(doctor, doctor.feed(Line("-", len(lines) + 1, OOM), now=5.1))
    emitted += _emit(doctor, doctor.flush())
    # The complete event is the first error seen again: the early report is taken back, the first counted.
    assert [e[:3] for e in emitted if e[0] == "withdrawn"] == [("withdrawn", "f2", "unrecognized")]
    assert doctor.tick(10.0) == [] and doctor.flush() == []  # nothing is withdrawn twice
    (finding,) = doctor.report()
    assert (finding.id, finding.rule, finding.occurrences) == ("f1", "memory.cuda-oom", 2)


def _final_view(emitted: list[tuple[str, str, str, bool, int]]) -> dict[str, bool]:
    """What a reader that applies a stream's findings, updates and withdrawals (as `_emit` recorded them
    when they were returned) ends with: id -> primary."""
    view: dict[str, bool] = {}
    for kind, ident, _, primary, _ in emitted:
        if kind == "withdrawn":
            view.pop(ident, None)
        else:
            view[ident] = primary
    return view


def test_a_provisional_root_cause_that_completes_as_harmless_hands_primary_on_in_the_stream(library: Library) -> None:
    # The engine's logged traceback goes quiet after its first frame and is reported as far as it goes (an
    # error, the launch's root cause); its last line shows it was only the ZMQ context closing.
    header = "(EngineCore pid=1) ERROR 11-30 10:00:00 [core.py:1] "
    doctor = Doctor(library)
    emitted = _emit(doctor, doctor.feed(Line("-", 1, header + 'File "/x/vllm/engine.py", line 3, in f'), now=0.0))
    emitted += _emit(doctor, doctor.feed(Line("-", 2, "(Worker pid=3) KeyError: 'x'"), now=0.0))
    emitted += _emit(doctor, doctor.tick(1.0))
    last = header + "zmq.error.ContextTerminated: Context was terminated"
    emitted += _emit(doctor, doctor.feed(Line("-", 3, last), now=1.0))
    emitted += _emit(doctor, doctor.flush())
    report = doctor.report()
    assert [(f.rule, f.primary) for f in report] == [("network.zmq-context-terminated", False), ("unrecognized", True)]
    # A stream that applies the updates ends where a scan of the same input starts.
    assert _final_view(emitted) == {f.id: f.primary for f in report}


def test_a_stream_demotes_the_old_root_cause_before_it_promotes_the_new_one(library: Library) -> None:
    doctor = Doctor(library)
    emitted = doctor.feed(Line("-", 1, "ValueError: b"), now=0.0)
    for number, text in enumerate(traceback(prefix="(Worker pid=2) ")[:2], 2):
        emitted += doctor.feed(Line("-", number, text), now=0.0)
    emitted += doctor.tick(1.0)  # quiet: the worker's traceback is reported as far as it goes
    assert [(f.id, f.primary) for f in emitted] == [("f1", True), ("f2", False)]
    # The rest of it arrives: it is a CUDA OOM, the launch's root cause now.
    emitted = []
    for number, text in enumerate(traceback(prefix="(Worker pid=2) ")[2:], 4):
        emitted += doctor.feed(Line("-", number, text), now=1.0)
    emitted += doctor.flush()
    updates = [(f.kind, f.id, f.rule, f.primary) for f in emitted]
    # Read in order, the updates never show two root causes of one launch.
    assert updates == [("update", "f1", "unrecognized", False), ("update", "f2", "memory.cuda-oom", True)]


def test_an_error_already_being_printed_when_the_warning_arrives_is_not_explained_by_it(library: Library) -> None:
    warning = library.by_id["install.vllm-extension-import-warning"]
    error = library.by_id["install.vllm-op-not-registered"]
    doctor = Doctor(library)
    # A worker's traceback starts, the warning lands in the middle of it, then the worker's error line.
    texts = [
        "(Worker pid=3) Traceback (most recent call last):",
        warning.examples.match[0],
        "(Worker pid=3) AttributeError: '_OpNamespace' '_C' object has no attribute 'rms_norm'",
    ]
    feed_all(doctor, texts)
    by_rule = {f.rule: f for f in doctor.report()}
    assert by_rule[error.id].lines == (1, 3)
    assert (by_rule[warning.id].role, by_rule[warning.id].severity) == ("cause", "warning")
    assert by_rule[error.id].role != "consequence" and by_rule[error.id].primary


def test_report_orders_findings_by_their_first_line_even_when_one_spans_another(library: Library) -> None:
    doctor = Doctor(library)
    worker = traceback(prefix="(Worker pid=2) ")
    feed_all(doctor, [*worker[:3], "ValueError: a", worker[3]])  # the main process's error inside the worker's
    assert [(f.rule, f.lines) for f in doctor.report()] == [("memory.cuda-oom", (1, 5)), ("unrecognized", (4, 4))]


def test_the_repeats_shown_are_the_sightings_that_started_first(library: Library) -> None:
    doctor = Doctor(library)
    first, long, second, third = (traceback(prefix=f"(Worker pid={pid}) ") for pid in (1, 2, 3, 4))
    # Worker 2 starts its traceback before workers 3 and 4 print theirs, and ends it after them.
    texts = first + long[:3] + second + third + long[3:]
    feed_all(doctor, texts)
    (finding,) = doctor.report()
    assert finding.occurrences == 4 and finding.lines == (1, 4)
    assert [e.line for e in finding.evidence if e.line > 4] == [11, 16]  # worker 3's error line, then worker 2's


def test_the_sighting_an_earlier_one_took_over_from_stays_among_the_repeats_by_where_it_started(
    library: Library,
) -> None:
    doctor = Doctor(library)
    header = "(EngineCore pid=1) ERROR 11-30 10:00:00 [core.py:1] "
    engine = [header + text for text in traceback()]  # complete when the engine's next record starts
    earliest, second, third = (traceback(prefix=f"(Worker pid={pid}) ") for pid in (2, 3, 4))
    texts = earliest + engine[:3] + second + third + engine[3:] + ["(EngineCore pid=1) INFO 11-30 10:00:01 [a.py:1] x"]
    # The engine's traceback (lines 5-16) completes first and is the finding until worker 2's (lines 1-4,
    # complete at the end of input) takes over; workers 3 and 4 started after the engine.
    feed_all(doctor, texts)
    (finding,) = doctor.report()
    assert (finding.occurrences, finding.lines, finding.process) == (4, (1, 4), "Worker pid=2")
    assert [e.line for e in finding.evidence if e.line > 4] == [11, 16]  # worker 3's error line, the engine's


# --- a pause changes nothing in the end: several workers' copies of one error, some reported early ------

Step = tuple[str, float]  # (a line's text, or TICK, and the time it arrives)
TICK = "<tick>"


def _snapshot(finding: Finding) -> tuple[object, ...]:
    """What a stream's reader keeps of a finding when it is printed (the object goes on changing)."""
    return (
        finding.rule,
        finding.lines,
        finding.process,
        finding.occurrences,
        tuple(e.line for e in finding.evidence),
        finding.primary,
        finding.severity,
        finding.role,
    )


def _streamed_and_reported(library: Library, steps: list[Step]) -> tuple[list[tuple[object, ...]], list]:
    """Feed the steps; return what a reader applying the stream ends with, and report()'s view."""
    doctor = Doctor(library)
    view: dict[str, tuple[object, ...]] = {}
    number = 0

    def apply(found: list[Finding]) -> None:
        for finding in found:
            if finding.kind == "withdrawn":
                view.pop(finding.id, None)
            else:
                view[finding.id] = _snapshot(finding)

    for text, now in steps:
        if text == TICK:
            apply(doctor.tick(now))
        else:
            number += 1
            apply(doctor.feed(Line("-", number, text), now))
    apply(doctor.flush())
    assert doctor.internal_errors == 0
    return sorted(view.values(), key=repr), sorted((_snapshot(f) for f in doctor.report()), key=repr)


def _without_pauses(steps: list[Step]) -> list[Step]:
    return [(text, 0.0) for text, _ in steps if text != TICK]


def _agree(library: Library, steps: list[Step]) -> list[tuple[object, ...]]:
    streamed, reported = _streamed_and_reported(library, steps)
    _, unpaused = _streamed_and_reported(library, _without_pauses(steps))
    assert reported == unpaused  # the pause changed nothing in the end ...
    assert streamed == reported  # ... and a reader of the stream ends there too
    return reported


W2, W3 = "(Worker pid=2) ", "(Worker pid=3) "


def test_a_sighting_counted_on_an_early_report_survives_its_completion(library: Library) -> None:
    steps: list[Step] = [(t, 0.0) for t in traceback(prefix=W2)] + [(TICK, 1.0)]
    steps += [(t, 1.0) for t in [*traceback(prefix=W3), W3 + "[done]"]]
    steps += [(W2 + "    more detail", 1.0), (W2 + "[done]", 1.0)]
    (finding,) = _agree(library, steps)
    assert finding[3] == 2  # both workers' copies counted


def test_an_early_report_that_takes_over_as_the_earliest_sighting_is_amended_not_recounted(
    library: Library,
) -> None:
    steps: list[Step] = [(t, 0.0) for t in traceback(prefix=W2)]
    steps += [(t, 0.0) for t in [*traceback(prefix=W3), W3 + "[done]"]] + [(TICK, 1.0)]
    steps += [(W2 + "    more detail", 1.0), (W2 + "[done]", 1.0)]
    (finding,) = _agree(library, steps)
    assert finding[3] == 2


def test_a_finding_replaced_by_an_earlier_sighting_in_the_same_call_is_sent_as_replaced(library: Library) -> None:
    steps: list[Step] = [(W2 + "Traceback (most recent call last):", 0.0)]
    steps += [(W2 + '  File "/x/vllm/worker.py", line 3, in f', 0.0), (TICK, 1.0)]
    steps += [(t, 1.0) for t in traceback(prefix=W3)]
    steps += [(W2 + "    g()", 1.0), (W2 + OOM, 1.0)]
    (finding,) = _agree(library, steps)
    assert finding[1][0] == 1 and finding[2] == "Worker pid=2"


def test_a_stream_reader_sees_a_warning_become_the_cause_of_a_later_error(library: Library) -> None:
    warning = library.by_id["install.vllm-extension-import-warning"]
    error = library.by_id["install.vllm-op-not-registered"]
    steps: list[Step] = [(warning.examples.match[0], 0.0), ("noise", 0.0), (error.examples.match[0], 0.0)]
    by_rule = {f[0]: f for f in _agree(library, steps)}
    assert by_rule[warning.id][6:] == ("error", "cause") and by_rule[error.id][6:] == ("error", "consequence")


def test_an_error_reported_early_and_completed_stays_explained_by_the_warning_before_it(library: Library) -> None:
    warning = library.by_id["install.vllm-extension-import-warning"]
    error = library.by_id["install.vllm-op-not-registered"]
    steps: list[Step] = [(warning.examples.match[0], 0.0)]
    steps += [(t, 0.0) for t in traceback(error.examples.match[0], prefix=W2)] + [(TICK, 1.0)]
    # Quiet, then the exception's message goes on: the event completes as the same error.
    steps += [(W2 + "    more detail", 1.0), (W2 + "[done]", 1.0)]
    findings = _agree(library, steps)
    (cause,) = [f for f in findings if f[0] == warning.id]
    (consequence,) = [f for f in findings if f[0] != warning.id]  # in a traceback its frames decide the rule
    assert (cause[7], consequence[7]) == ("cause", "consequence") and cause[5] and not consequence[5]


def test_the_line_after_a_logged_error_ends_its_group_without_being_fed(library: Library) -> None:
    # The sieve's shortcut: a line of the same stream with another header closes the logged group, and
    # the Doctor hands back its findings instead of asking for the line to be fed.
    doctor = Doctor(library)
    record = "(APIServer pid=7) ERROR 11-30 10:00:01 [x.py:2] "
    assert doctor.feed(Line("-", 1, record + OOM)) == []
    found = doctor.end_logged_group(Line("-", 2, "(APIServer pid=7) INFO 11-30 10:00:02 [x.py:3] next"))
    assert found is not None and [f.rule for f in found] == ["memory.cuda-oom"]
    assert doctor.end_logged_group(Line("-", 3, "(APIServer pid=7) INFO 11-30 10:00:02 [x.py:3] more")) is None


def test_an_early_repeat_that_completes_is_counted_once(library: Library) -> None:
    # Worker 3's copy is reported when it goes quiet (one more sighting of worker 2's error), then goes on:
    # taken back and counted again, it is still one sighting.
    steps: list[Step] = [(t, 0.0) for t in [*traceback(prefix=W2), W2 + "[done]"]]
    steps += [(t, 0.0) for t in traceback(prefix=W3)] + [(TICK, 1.0)]
    steps += [(W3 + "    more detail", 1.0), (W3 + "[done]", 1.0)]
    (finding,) = _agree(library, steps)
    assert finding[3] == 2


def test_an_early_report_completed_at_the_end_does_not_hide_the_events_closed_with_it(library: Library) -> None:
    # At flush worker 2's reopened traceback and worker 3's close together: both are counted.
    steps: list[Step] = [(t, 0.0) for t in traceback(prefix=W2)] + [(TICK, 1.0)]
    steps += [(W2 + "    more detail", 1.0)] + [(t, 1.0) for t in traceback(prefix=W3)]
    (finding,) = _agree(library, steps)
    assert finding[3] == 2


def test_a_withdrawal_is_sent_once_even_when_more_findings_follow(library: Library) -> None:
    doctor = Doctor(library)
    lines = [*traceback(), "next", *traceback()[:3]]
    emitted = []
    for number, text in enumerate(lines, 1):
        emitted += _emit(doctor, doctor.feed(Line("-", number, text), now=0.0))
    emitted += _emit(doctor, doctor.tick(5.0))
    emitted += _emit(doctor, doctor.feed(Line("-", len(lines) + 1, OOM), now=5.1))
    emitted += _emit(doctor, doctor.flush())
    later = [*traceback("ValueError: something else entirely", prefix=W3)]
    for number, text in enumerate(later, len(lines) + 2):
        emitted += _emit(doctor, doctor.feed(Line("-", number, text), now=6.0))
    emitted += _emit(doctor, doctor.flush())
    assert [e[:2] for e in emitted if e[0] == "withdrawn"] == [("withdrawn", "f2")]


def test_two_warnings_of_one_second_around_another_loggers_line_are_two_sightings(library: Library) -> None:
    # Found by bench/stormlog.py: uvicorn's access line between two identical-header preemption warnings
    # of the API server. The first record was complete before uvicorn wrote; the second is another record.
    warning = (
        "(APIServer pid=7) WARNING 11-01 21:08:38 [scheduler.py:412] Sequence group chatcmpl-{} is preempted by "
        "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space."
    )
    access = '(APIServer pid=7) INFO:     10.0.0.1:6093 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    doctor = Doctor(library)
    feed_all(doctor, [warning.format("a"), access, warning.format("b"), access])
    (finding,) = doctor.report()
    assert finding.rule == "memory.v0-kv-cache-preemption" and finding.occurrences == 2
    # Without the other logger's line between, the same header goes on: one record of two lines.
    doctor = Doctor(library)
    feed_all(doctor, [warning.format("a"), warning.format("b"), access])
    assert [f.occurrences for f in doctor.report()] == [1]


def test_logdoctors_own_json_lines_are_not_a_servers_errors(library: Library) -> None:
    """A DaemonSet follows every container's log, its own too: the findings it printed are not read back."""
    from pathlib import Path

    from logdoctor.api import diagnose_text

    log = (Path(__file__).parent.parent / "fixtures" / "engine-core-kv-cache-too-small-0.33.log").read_text()
    printed = "".join(f.model_dump_json() + "\n" for f in diagnose_text(log, library))
    assert printed.count('"kind":"finding"') == 2
    assert diagnose_text(printed, library) == []
