from __future__ import annotations

import pytest

from logdoctor.assemble import (
    MAX_EVENT_HEAD,
    MAX_EVENT_TAIL,
    MAX_FRAMES,
    MAX_MESSAGE_CHARS,
    MAX_SILENT_LINES,
    Assembler,
    Event,
    _TracebackReader,
    classify,
)
from logdoctor.framing import Line
from logdoctor.records import parse
from tests.conftest import records

RAW_TB = [
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/vllm", line 10, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "uvloop/loop.pyx", line 1518, in uvloop.loop.Loop.run_until_complete',  # no source line
    '  File "/x/vllm/v1/engine/utils.py", line 1473, in wait_for_engine_startup',
    "    raise RuntimeError(",
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
]


def assemble(*texts: str) -> list[Event]:
    assembler = Assembler()
    events: list[Event] = []
    for record in records(*texts):
        events += assembler.feed(record)
    return events + assembler.flush()


def tracebacks(events: list[Event]) -> list[Event]:
    return [e for e in events if e.exceptions]


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Traceback (most recent call last):", "tb_start"),
        ('  File "a.py", line 1, in f', "frame"),
        ('File "a.py", line 1, in f', "frame"),
        ("    return x", "indented"),
        ("", "blank"),
        ("During handling of the above exception, another exception occurred:", "chain"),
        ("The above exception was the direct cause of the following exception:", "chain"),
        ("ValueError: x", "other"),
    ],
)
def test_classify(message: str, kind: str) -> None:
    assert classify(message) == kind


def test_every_transition_leads_to_a_known_state() -> None:
    states = {"intro", "frames", "exception", "exc_blank", "chain"}
    for (state, _), target in _TracebackReader.TRANSITIONS.items():
        assert state in states and target in states


def test_raw_traceback_frames_carets_and_frames_without_source() -> None:
    (event,) = tracebacks(assemble(*RAW_TB))
    (exc,) = event.exceptions
    assert exc.type == "RuntimeError"
    assert exc.message.startswith("Engine core initialization failed")
    assert [f.function for f in exc.frames] == [
        "<module>",
        "uvloop.loop.Loop.run_until_complete",
        "wait_for_engine_startup",
    ]
    assert exc.frames[0].code == "sys.exit(main())"  # the caret line is not source
    assert exc.frames[1].code is None
    assert exc.innermost_vllm_frame is not None and exc.innermost_vllm_frame.line == 1473
    assert (event.first_line, event.last_line) == (1, len(RAW_TB))


def test_logger_prefixed_traceback_is_one_event_with_its_record() -> None:
    header = "(EngineCore pid=81390) ERROR 11-30 19:42:03 [core.py:1584] "
    lines = [header + "EngineCore failed to start."] + [header + line for line in RAW_TB]
    (event,) = tracebacks(assemble(*lines))
    assert event.logged and event.record.message == "EngineCore failed to start."
    assert event.exceptions[0].type == "RuntimeError"


def test_logger_group_ends_when_the_header_changes() -> None:
    header = "(EngineCore pid=1) ERROR 11-30 19:42:03 [core.py:1584] "
    events = assemble(
        header + "EngineCore failed to start.",
        header + "Traceback (most recent call last):",
        header + '  File "a.py", line 1, in f',
        header + "ValueError: boom",
        "(EngineCore pid=1) INFO 11-30 19:42:04 [core.py:9] next",
    )
    assert [e.kind for e in events] == ["traceback", "record"]


def test_two_records_with_the_same_header_are_two_events() -> None:
    """Two requests fail in the same second at the same place: the header repeats, the records do not."""
    header = "(APIServer pid=7) ERROR 11-30 19:42:03 [serving.py:952] "
    one = [
        "Error in chat completion stream generator.",
        "Traceback (most recent call last):",
        '  File "s.py", line 1, in gen',
        "IndexError: index 151950 is out of bounds",
    ]
    events = tracebacks(assemble(*[header + line for line in one + one]))
    assert [(e.record.message, e.exceptions[0].message, len(e.exceptions)) for e in events] == [
        ("Error in chat completion stream generator.", "index 151950 is out of bounds", 1),
    ] * 2
    assert [e.first_line for e in events] == [1, 5]


def test_chained_exceptions_stay_one_event_original_first() -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "b.py", line 2, in g',
        "RuntimeError: wrapped",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "c.py", line 3, in h',
        "OSError: outer",
    ]
    (event,) = tracebacks(assemble(*lines))
    assert [e.type for e in event.exceptions] == ["KeyError", "RuntimeError", "OSError"]
    assert [e.frames[0].file for e in event.exceptions] == ["a.py", "b.py", "c.py"]


def test_exception_line_without_colon() -> None:
    (event,) = tracebacks(
        assemble("Traceback (most recent call last):", '  File "a.py", line 1, in f', "KeyboardInterrupt")
    )
    assert (event.exceptions[0].type, event.exceptions[0].message) == ("KeyboardInterrupt", "")


def test_pydantic_validation_error_keeps_its_detail_lines() -> None:
    lines = RAW_TB[:3] + [
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
        "  Value error, --use-replayssm requires --mamba-backend triton [type=value_error, input_value=ArgsKwargs((), "
        "{'model_co... 'shutdown_timeout': 0}), input_type=ArgsKwargs]",
        "    For further information visit https://errors.pydantic.dev/2.13/v/value_error",
        "INFO:     next thing",
    ]
    events = assemble(*lines)
    (event,) = tracebacks(events)
    (exc,) = event.exceptions
    assert "ValueError" in exc.type_names
    assert exc.summary == "--use-replayssm requires --mamba-backend triton"
    assert "For further information" in exc.message
    assert [e.record.message for e in events if e.record.kind == "uvicorn"] == ["next thing"]


def test_pydantic_assertion_failed_counts_as_assertion_error() -> None:
    (event,) = tracebacks(
        assemble(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
            "  Assertion failed, Chunked prefill is required for Mamba prefix caching. [type=assertion_error, "
            "input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
        )
    )
    assert "AssertionError" in event.exceptions[0].type_names


def test_pydantic_multi_line_message_continues_until_its_type_suffix() -> None:
    lines = [
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        "  Value error, Invalid repository ID or local directory specified: 'x/y'.",
        "Please verify the following requirements:",
        "1. Provide a valid Hugging Face repository ID.",
        " [type=value_error, input_value=ArgsKwargs((), {'model': ...}), input_type=ArgsKwargs]",
        "    For further information visit https://errors.pydantic.dev/2.13/v/value_error",
    ]
    (event,) = tracebacks(assemble(*lines))
    assert event.exceptions[0].message.count("\n") == 5
    assert event.exceptions[0].summary.startswith("Invalid repository ID")


def test_multi_line_exception_message() -> None:
    (event,) = tracebacks(
        assemble(
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "ValueError: World size (8) is larger than the number of available GPUs (4) in this node. If this is",
            "- ray, set '--distributed-executor-backend ray'.",
            "- multiprocessing, set '--nnodes' appropriately.",
        )
    )
    assert event.exceptions[0].message.endswith("appropriately.")


def test_a_new_traceback_ends_the_previous_one() -> None:
    events = tracebacks(assemble(*RAW_TB, *RAW_TB))
    assert len(events) == 2


def test_process_dump_preamble_attaches_to_its_traceback() -> None:
    (event,) = tracebacks(assemble("Process EngineCore:", *RAW_TB))
    assert event.preamble is not None and event.first_line == 1


def test_interleaved_processes_keep_separate_tracebacks() -> None:
    a = ["(APIServer pid=1) " + line for line in RAW_TB]
    b = ["(EngineCore_DP0 pid=2) " + line.replace("RuntimeError", "ValueError") for line in RAW_TB]
    mixed = [x for pair in zip(a, b, strict=True) for x in pair]
    events = tracebacks(assemble(*mixed))
    assert sorted(e.exceptions[0].type for e in events) == ["RuntimeError", "ValueError"]
    assert all(len(e.exceptions[0].frames) == 3 for e in events)


def test_bare_exception_line_outside_a_traceback() -> None:
    (event,) = tracebacks(assemble("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."))
    assert (event.kind, event.exceptions[0].short_type) == ("exception", "OutOfMemoryError")


def test_error_record_without_traceback_is_a_record_event() -> None:
    (event,) = assemble("(EngineCore_DP0 pid=1) ERROR 08-01 10:00:00 [core.py:1] Engine core proc died unexpectedly")
    assert (event.kind, event.exceptions) == ("record", [])


def test_quiet_stream_completes_on_tick_not_before() -> None:
    assembler = Assembler(quiet=0.5)
    done = []
    for record in records(*RAW_TB):
        done += assembler.feed(record, now=10.0)
    assert done == [] and assembler.tick(10.4) == []
    (event,) = assembler.tick(10.6)
    assert event.exceptions[0].type == "RuntimeError"


def test_stripped_indentation_is_understood() -> None:
    (event,) = tracebacks(
        assemble(
            "Traceback (most recent call last):",
            'File "a.py", line 1, in f',
            "torch._C._cuda_init()",
            'File "b.py", line 2, in g',
            "x",
            'File "c.py", line 3, in h',
            "RuntimeError: No CUDA GPUs are available",
        )
    )
    (exc,) = event.exceptions
    assert exc.type == "RuntimeError" and [f.code for f in exc.frames] == ["torch._C._cuda_init()", "x", None]


def test_huge_traceback_is_capped_and_still_diagnosed() -> None:
    frames = ['  File "a.py", line 1, in f', "    f()"] * 20000
    (event,) = tracebacks(assemble("Traceback (most recent call last):", *frames, "RecursionError: too deep"))
    assert len(event.records) == MAX_EVENT_HEAD + MAX_EVENT_TAIL
    assert event.truncated and event.exceptions[0].type == "RecursionError"
    assert event.last_line == len(frames) + 2


def test_multi_paragraph_message_and_its_chain_stay_one_event() -> None:
    (event,) = tracebacks(
        assemble(
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "huggingface_hub.errors.GatedRepoError: 403 Client Error.",
            "",
            "Cannot access gated repo for url https://example.invalid/config.json.",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "b.py", line 2, in g',
            "OSError: You are trying to access a gated repo.",
        )
    )
    assert [e.short_type for e in event.exceptions] == ["GatedRepoError", "OSError"]
    assert event.exceptions[0].message.endswith("Cannot access gated repo for url https://example.invalid/config.json.")


def test_a_traceback_printed_indented_as_a_whole_keeps_its_exception_line() -> None:
    # Ray prints a remote task's traceback indented; so do pastes of it.
    from logdoctor.api import diagnose_lines

    lines = [
        '            File "/usr/lib/python3.10/concurrent/futures/_base.py", line 451, in result',
        "              return self.__get_result()",
        '            File "/v/vllm/model_executor/layers/quantization/awq.py", line 12, in get_config',
        "              raise ValueError(",
        "          ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]",
    ]
    (finding,) = diagnose_lines(lines)
    assert finding.error.type == "ValueError" and "bfloat16" in finding.error.message


def test_an_exception_line_before_a_frame_is_kept_when_the_user_cut_the_chain_sentence() -> None:
    from logdoctor.api import diagnose_lines

    lines = [
        "Traceback (most recent call last):",
        '  File "/v/vllm/lora/models.py", line 210, in from_local_checkpoint',
        "    with open(lora_config_path) as f:",
        "FileNotFoundError: [Errno 2] No such file or directory: 'org/adapter/adapter_config.json'",
        '  File "/v/vllm/lora/worker_manager.py", line 161, in _load_lora',
        "    raise RuntimeError(",
        "RuntimeError: Loading lora org/adapter failed",
    ]
    types = [f.error.type for f in diagnose_lines(lines) if f.primary]
    assert types == ["FileNotFoundError"]


def test_a_traceback_deeper_than_the_cap_keeps_its_innermost_frames_and_counts_the_rest() -> None:
    depth = MAX_FRAMES + 5
    frames = [line for i in range(depth) for line in (f'  File "a.py", line {i}, in f{i}', f"    f{i + 1}()")]
    (event,) = tracebacks(assemble("Traceback (most recent call last):", *frames, "RecursionError: too deep"))
    (exc,) = event.exceptions
    assert len(exc.frames) == MAX_FRAMES and exc.frames_dropped == 5
    assert (exc.frames[0].function, exc.frames[-1].function) == ("f5", f"f{depth - 1}")


def test_an_event_read_whole_is_not_truncated() -> None:
    (event,) = tracebacks(assemble(*RAW_TB))
    assert event.lines_dropped == 0 and not event.truncated


def test_a_logged_error_whose_message_is_an_exception_line_is_that_exception() -> None:
    (event,) = assemble("(EngineCore_DP0 pid=1) ERROR 08-01 10:00:00 [core.py:1] ValueError: max_model_len too large")
    assert event.kind == "traceback"
    assert [(e.type, e.message) for e in event.exceptions] == [("ValueError", "max_model_len too large")]


def test_a_validation_error_without_a_value_error_detail_is_summarised_by_its_first_line() -> None:
    (event,) = tracebacks(
        assemble(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
            "max_model_len",
            "  Input should be a valid integer [type=int_parsing, input_value='x', input_type=str]",
        )
    )
    assert event.exceptions[0].summary == "1 validation error for ModelConfig"


def test_an_argparse_validation_error_keeps_its_one_detail_line() -> None:
    # Without the docs link (PYDANTIC_ERRORS_INCLUDE_URL=0), pydantic's detail is one line.
    (event,) = assemble(
        "vllm serve: error: argument --compilation-config/-cc: 1 validation error for CompilationConfig",
        "  Invalid JSON: key must be a string at line 1 column 2 [type=json_invalid, input_value=\"{'mode': 3}\"]",
    )
    assert event.record.message.splitlines()[1].startswith("  Invalid JSON: key must be a string")


def test_a_stream_quiet_for_exactly_the_quiet_period_is_complete() -> None:
    assembler = Assembler(quiet=0.5)
    for record in records(*RAW_TB):
        assembler.feed(record, now=10.0)
    (event,) = assembler.tick(10.5)
    assert event.provisional and event.exceptions[0].type == "RuntimeError"


def _quiet_then_continued(first: int, then: int) -> list[Event]:
    """A raw traceback's first two lines (numbered from `first`) at t=0, a quiet period, then its next frame
    as line `then`: the events the assembler completes up to the end of input."""
    assembler = Assembler(quiet=0.5)
    for number, text in enumerate(RAW_TB[:2], first):
        assembler.feed(parse(Line("a.log", number, text)), now=0.0)
    events = assembler.tick(1.0)
    events += assembler.feed(parse(Line("a.log", then, RAW_TB[4])), now=1.0)
    return events + assembler.flush()


def test_a_quiet_traceback_reopens_when_its_stream_goes_on_late_in_a_long_log() -> None:
    start = 3 * MAX_SILENT_LINES
    early, complete = _quiet_then_continued(start, start + 2)
    assert early.provisional and (complete.amends, complete.first_line, complete.last_line) == (True, start, start + 2)


@pytest.mark.parametrize(("gap", "reopens"), [(MAX_SILENT_LINES, True), (MAX_SILENT_LINES + 1, False)])
def test_a_quiet_traceback_reopens_only_within_the_silent_line_limit(gap: int, reopens: bool) -> None:
    # The same limit as for an open event (and as open_streams tells a sieve): up to MAX_SILENT_LINES
    # lines after its last one, the stream's next line may still continue it.
    then = 2 + gap
    early, complete = _quiet_then_continued(1, then)
    assert early.provisional
    assert (complete.amends, complete.first_line) == ((True, 1) if reopens else (False, then))


def test_flush_ends_the_input_so_nothing_closed_before_it_reopens() -> None:
    assembler = Assembler(quiet=0.5)
    for record in records(*RAW_TB[:2]):
        assembler.feed(record, now=0.0)
    (early,) = assembler.tick(1.0)
    assert early.provisional and assembler.flush() == []
    # A next input whose first line could have continued that traceback starts an event of its own.
    assembler.feed(parse(Line("-", 3, RAW_TB[4])), now=2.0)
    (event,) = assembler.flush()
    assert (event.amends, event.first_line) == (False, 3)


def test_a_records_own_message_handed_to_the_next_record_leaves_the_previous_one() -> None:
    # The line `Error in chat completion ...` first reads as the end of the previous exception's message;
    # once the next traceback shows it opens a record of its own, it is no longer the previous event's line.
    header = "(APIServer pid=7) ERROR 11-30 19:42:03 [serving.py:952] "
    one = ["Error in chat completion stream generator.", "Traceback (most recent call last):", "IndexError: x"]
    first, second = tracebacks(assemble(*[header + line for line in one + one]))
    assert [r.line.number for r in first.records] == [1, 2, 3]
    assert [r.line.number for r in second.records] == [4, 5, 6]


def test_a_frame_after_an_exception_and_a_blank_line_starts_another_traceback() -> None:
    # An excerpt of a second traceback that starts at a frame: the blank line ended the first exception's
    # message, and neither the frame nor what follows it belongs to that message.
    events = tracebacks(
        assemble(
            "ValueError: first",
            "",
            '  File "b.py", line 2, in g',
            "    g()",
            "RuntimeError: second",
        )
    )
    assert [[(e.type, e.message) for e in event.exceptions] for event in events] == [
        [("ValueError", "first")],
        [("RuntimeError", "second")],
    ]
    assert [(e.first_line, e.last_line) for e in events] == [(1, 2), (3, 5)]


@pytest.mark.parametrize(("length", "kept"), [(MAX_MESSAGE_CHARS - 1, True), (MAX_MESSAGE_CHARS, False)])
def test_an_exception_message_stops_growing_once_it_reaches_the_cap(length: int, kept: bool) -> None:
    first = "ValueError: " + "a" * (MAX_MESSAGE_CHARS - 100)
    # The second line brings the message to `length` characters (joined with a newline).
    second = "  " + "b" * (length - (MAX_MESSAGE_CHARS - 100) - 3)
    (event,) = tracebacks(assemble(first, second, "  last"))
    (exc,) = event.exceptions
    assert len(exc.message) == (length + len("\n  last") if kept else length)
    assert exc.message.endswith("last") is kept
    assert len(event.records) == 3  # the event still has every line, only its message is capped


def test_an_argparse_validation_errors_details_end_at_a_blank_line() -> None:
    (event, *_, after) = assemble(
        "vllm serve: error: argument --compilation-config/-cc: 1 validation error for CompilationConfig",
        "  Invalid JSON: key must be a string at line 1 column 2 [type=json_invalid, input_value=\"{'mode': 3}\"]",
        "",
        "Shutting down.",
    )
    assert len(event.record.message.splitlines()) == 2
    assert (after.record.message, after.first_line) == ("Shutting down.", 4)


@pytest.mark.parametrize(("indent", "is_exception"), [(7, True), (8, False)])
def test_an_indented_tracebacks_exception_line_stands_left_of_its_frames(indent: int, is_exception: bool) -> None:
    # A traceback printed indented as a whole: frames at 8. An exception-shaped line left of them is its
    # exception line; one at the frames' own indentation is not (Python prints the exception line
    # two columns left of the frames).
    (event,) = tracebacks(
        assemble(
            '        File "a.py", line 1, in f',
            " " * indent + "ValueError: boom",
            '        File "b.py", line 2, in g',
            "      RuntimeError: outer",
        )
    )
    types = [e.type for e in event.exceptions]
    assert types == (["ValueError", "RuntimeError"] if is_exception else ["RuntimeError"])


@pytest.mark.parametrize(("gap", "continues"), [(MAX_SILENT_LINES, True), (MAX_SILENT_LINES + 1, False)])
def test_an_open_traceback_is_continued_only_within_the_silent_line_limit(gap: int, continues: bool) -> None:
    # Its stream's next line comes `gap` lines after its last one (the lines between are other streams').
    assembler = Assembler()
    for number, text in enumerate(RAW_TB[:2], 1):
        assembler.feed(parse(Line("a.log", number, text)))
    then = 2 + gap
    events = assembler.feed(parse(Line("a.log", then, RAW_TB[4]))) + assembler.flush()
    assert [(e.first_line, e.last_line) for e in events] == ([(1, then)] if continues else [(1, 2), (then, then)])


def test_a_logged_group_is_ended_by_its_streams_next_line_while_another_stream_may_resume() -> None:
    # A sieve asks ends_logged_group about the group's next line instead of feeding it; that a quiet
    # traceback of another stream waits to be resumed does not change the answer.
    assembler = Assembler(quiet=0.5)
    assembler.feed(parse(Line("a.log", 1, RAW_TB[0])), now=0.0)
    (early,) = assembler.tick(1.0)
    assert early.provisional
    assembler.feed(parse(Line("a.log", 2, "(APIServer pid=7) ERROR 11-30 10:00:01 [x.py:2] broken")), now=1.0)
    ended = assembler.ends_logged_group(parse(Line("a.log", 3, "(APIServer pid=7) INFO 11-30 10:00:02 [x.py:1] ok")))
    assert ended is not None and [e.record.message for e in ended] == ["broken"]
    # The quiet traceback still reopens when its own stream goes on.
    assembler.feed(parse(Line("a.log", 4, RAW_TB[1])), now=2.0)
    (complete,) = assembler.flush()
    assert (complete.amends, complete.first_line, complete.last_line) == (True, 1, 4)
