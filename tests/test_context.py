"""Context joins the error it is context of (library `joins_next`): vLLM's dump of the failed step
(dump_input.py) is evidence of the engine core's traceback that follows it, not findings of its own."""

from __future__ import annotations

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from tests.test_doctor import feed_all

CORE = "(EngineCore_DP0 pid=7) ERROR 11-30 19:41:07"
DUMP = [
    f"{CORE} [dump_input.py:72] Dumping input data for V1 LLM engine (v0.11.0) with config: model='m', "
    "speculative_config=None, tokenizer='m',",
    f"{CORE} [dump_input.py:79] Dumping scheduler output for model execution: SchedulerOutput(scheduled_new_reqs=[])",
    f"{CORE} [dump_input.py:81] Dumping scheduler stats: SchedulerStats(num_running_reqs=1, num_waiting_reqs=0)",
]
CRASH = [
    f"{CORE} [core.py:781] EngineCore encountered a fatal error.",
    f"{CORE} [core.py:781] Traceback (most recent call last):",
    f'{CORE} [core.py:781]   File "/x/vllm/v1/engine/core.py", line 774, in run_engine_core',
    f"{CORE} [core.py:781]     engine_core.run_busy_loop()",
    f"{CORE} [core.py:781] torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
]
VERSION = "(APIServer pid=1) INFO 11-30 19:40:00 [api_server.py:1] vLLM API server version 0.11.0"


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


def test_the_dump_joins_the_crash_it_precedes(library: Library) -> None:
    doctor = Doctor(library)
    emitted = feed_all(doctor, [VERSION, *DUMP, *CRASH])
    assert "engine.dump-input" not in rules(emitted)  # a stream never shows it either
    (crash,) = doctor.report()
    assert crash.severity == "error" and crash.primary
    assert [e.line for e in crash.evidence][:3] == [2, 3, 4]  # the dump's lines lead its evidence
    assert crash.lines == (5, 9)  # the crash's own event


def test_a_dump_no_crash_follows_is_reported_once_as_itself(library: Library) -> None:
    doctor = Doctor(library)
    feed_all(doctor, [VERSION, *DUMP])
    (dump,) = doctor.report()
    assert (dump.rule, dump.severity, dump.occurrences) == ("engine.dump-input", "info", 3)


def test_a_dump_of_another_process_does_not_join(library: Library) -> None:
    other = [line.replace("EngineCore_DP0 pid=7", "EngineCore_DP1 pid=8") for line in DUMP]
    doctor = Doctor(library)
    feed_all(doctor, [VERSION, *other, *CRASH])
    dump, crash = doctor.report()
    assert (dump.rule, crash.rule) == ("engine.dump-input", "device.cuda-illegal-memory-access")
    assert [e.line for e in crash.evidence] == [5, 7, 8, 9]


def test_a_dump_left_by_a_launch_that_ended_stays_in_that_launch(library: Library) -> None:
    doctor = Doctor(library)
    feed_all(doctor, [VERSION, *DUMP, VERSION, *CRASH])
    settled = doctor.take_settled() + doctor.report()
    by_launch = {(f.launch, f.rule) for f in settled}
    assert (1, "engine.dump-input") in by_launch
    assert all(f.launch == 2 for f in settled if f.severity == "error")
    (crash,) = [f for f in settled if f.severity == "error"]
    assert all(e.line > 5 for e in crash.evidence)  # no dump of launch 1 in launch 2's crash


def test_a_stream_shows_the_dump_with_its_crash_and_agrees_with_the_scan(library: Library) -> None:
    lines = [VERSION, *DUMP, *CRASH]
    streamed = Doctor(library)
    emitted: list[Finding] = []
    for number, text in enumerate(lines, 1):
        emitted += streamed.feed(Line("-", number, text), now=float(number))
        emitted += streamed.tick(float(number) + 0.6)  # every record falls quiet before the next
    emitted += streamed.flush()
    assert "engine.dump-input" not in rules(emitted)
    scanned = Doctor(library)
    feed_all(scanned, lines)
    assert [(f.rule, f.lines, [e.line for e in f.evidence]) for f in streamed.report()] == [
        (f.rule, f.lines, [e.line for e in f.evidence]) for f in scanned.report()
    ]
