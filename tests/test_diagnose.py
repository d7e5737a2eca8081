"""Diagnosis and root-cause ranking, driven with plain lines through the pure core."""

from __future__ import annotations

import pytest

from logdoctor.api import diagnose_lines, diagnose_text
from logdoctor.diagnose import ARGS_TRUNCATED_STEP
from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import MESSAGE_LEAD_WORDS, Library
from logdoctor.model import Finding

ENGINE = "(EngineCore pid=2) ERROR 11-30 19:42:03 [core.py:1584] "
API = "(APIServer pid=1) "
KV_ERROR = (
    "ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache "
    "is needed, which is larger than the available KV cache memory (4.88 GiB). Based on the available "
    "memory, the estimated maximum model length is 39968. Try increasing `gpu_memory_utilization`."
)
WRAPPER = (
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}"
)


def traceback(prefix: str, exception: str, func: str = "f") -> list[str]:
    return [
        prefix + "Traceback (most recent call last):",
        prefix + f'  File "/x/vllm/a.py", line 1, in {func}',
        prefix + "    raise",
        prefix + exception,
    ]


def primary(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.primary]


def test_engine_core_cause_beats_the_api_server_wrapper(library: Library) -> None:
    lines = [ENGINE + "EngineCore failed to start.", *traceback(ENGINE, KV_ERROR), *traceback(API, WRAPPER)]
    findings = diagnose_lines(lines, library)
    (root,) = primary(findings)
    assert root.rule == "memory.kv-cache-too-small" and root.process == "EngineCore pid=2"
    assert "39968" in root.fix.summary
    assert len(findings) == 2


def test_wrapper_alone_is_primary_when_no_cause_was_logged(library: Library) -> None:
    (root,) = primary(diagnose_lines(traceback(API, WRAPPER), library))
    assert root.role == "wrapper"


def test_the_same_error_from_several_ranks_is_one_finding(library: Library) -> None:
    lines = []
    for rank in range(4):
        lines += traceback(
            f"(Worker_TP{rank} pid={10 + rank}) ",
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {rank} "
            "has a total capacity of 15.57 GiB of which 1.06 GiB is free.",
            "load_model",
        )
    findings = diagnose_lines(lines, library)
    assert len(findings) == 1 and findings[0].occurrences == 4 and findings[0].process == "Worker_TP0 pid=10"


def test_chained_exceptions_report_the_original(library: Library) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "ZeroDivisionError: division by zero",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "b.py", line 2, in <module>',
        "RuntimeError: re-raised",
    ]
    (root,) = primary(diagnose_lines(lines, library))
    assert (root.rule, root.error.type) == ("unrecognized", "ZeroDivisionError")


def test_unrecognized_error_names_the_innermost_vllm_frame(library: Library) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/vllm/engine/x.py", line 7, in build',
        "    do_it()",
        '  File "/usr/lib/python3.12/other.py", line 3, in do_it',
        "ZeroDivisionError: boom",
    ]
    (root,) = diagnose_lines(lines, library)
    assert "vllm/engine/x.py, line 7, in build: `do_it()`" in root.explanation


def test_each_launch_has_exactly_one_primary(library: Library) -> None:
    launch = [
        "INFO 11-30 19:41:07 [api_server.py:1] vLLM API server version 0.11.0",
        "INFO 11-30 19:41:07 [utils.py:1] non-default args: {'model': 'm'}",
    ]
    lines = launch + traceback("", KV_ERROR) + launch + traceback("", WRAPPER) + traceback("", KV_ERROR)
    findings = diagnose_lines(lines, library)
    assert sorted((f.launch, f.rule) for f in primary(findings)) == [
        (1, "memory.kv-cache-too-small"),
        (2, "memory.kv-cache-too-small"),
    ]


def test_request_errors_are_warnings_not_a_dead_server(library: Library) -> None:
    header = "ERROR 08-18 19:58:43 [serving_chat.py:203] "
    lines = [header + "Error in preprocessing prompt inputs", *traceback(header, "ValueError: prompt too long")]
    (finding,) = diagnose_lines(lines, library)
    assert finding.severity == "warning"


def test_errors_during_a_requested_shutdown_are_info(library: Library) -> None:
    lines = [
        "INFO:     Application startup complete.",
        "INFO 04-14 08:41:19 [launcher.py:59] Shutting down FastAPI HTTP server.",
        *traceback(
            "",
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
            "See stack trace (above) for the root cause.",
        ),
    ]
    findings = diagnose_lines(lines, library)
    dead = [f for f in findings if f.error.type and "EngineDeadError" in f.error.type]
    assert [(f.severity, f.primary) for f in dead] == [("info", False)]
    assert not primary(findings)


def test_a_crash_before_the_server_was_up_is_not_excused_by_a_shutdown(library: Library) -> None:
    lines = ["INFO 04-14 08:41:19 [launcher.py:59] Shutting down FastAPI HTTP server.", *traceback("", KV_ERROR)]
    (finding,) = [f for f in diagnose_lines(lines, library) if f.severity != "info"]
    assert finding.severity == "error" and finding.primary


def test_unrecognized_error_line_is_a_warning(library: Library) -> None:
    (finding,) = diagnose_lines(["(APIServer pid=1) ERROR 08-01 10:00:00 [x.py:1] Something odd happened"], library)
    assert (finding.rule, finding.severity) == ("unrecognized", "warning")


def test_info_lines_make_no_findings(library: Library) -> None:
    assert diagnose_lines(["INFO 08-01 10:00:00 [x.py:1] Loading weights took 5.61 seconds"], library) == []


def test_streaming_emits_when_the_stream_goes_quiet(library: Library) -> None:
    doctor = Doctor(library, quiet=0.5)
    emitted = []
    for n, text in enumerate(traceback("", KV_ERROR), 1):
        emitted += doctor.feed(Line("-", n, text), now=100.0)
    assert emitted == []
    (finding,) = doctor.tick(100.6)
    assert finding.primary and finding.rule == "memory.kv-cache-too-small"


def test_a_wrapper_never_outranks_the_unknown_exception_it_wraps(library: Library) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "ZeroDivisionError: division by zero",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "b.py", line 2, in <module>',
        WRAPPER,
    ]
    (root,) = primary(diagnose_lines(lines, library))
    assert (root.rule, root.error.type) == ("unrecognized", "ZeroDivisionError")


def test_engine_core_death_line_alone_is_an_error(library: Library) -> None:
    (root,) = primary(diagnose_lines([ENGINE + "EngineCore failed to start."], library))
    assert (root.rule, root.severity) == ("engine.core-failed-to-start", "error")


def test_a_version_line_after_a_failure_is_a_restart(library: Library) -> None:
    lines = [
        "vllm serve: error: unrecognized arguments: --foo",
        "INFO 06-20 20:03:41 [api_server.py:1287] vLLM API server version 0.9.1",
        *traceback("", "OSError: [Errno 98] Address already in use"),
    ]
    roots = sorted((f.launch, f.rule) for f in primary(diagnose_lines(lines, library)))
    assert roots == [(1, "cli.unrecognized-arguments"), (2, "network.port-in-use")]


def test_another_programs_log_line_does_not_continue_an_exception(library: Library) -> None:
    lines = [
        *traceback("", "OSError: [Errno 98] Address already in use"),
        "2025-06-20 20:03:45,362 - __main__ - ERROR - vLLM process terminated unexpectedly",
    ]
    (finding, *_) = diagnose_lines(lines, library)
    assert finding.error.message == "[Errno 98] Address already in use"


def test_an_internal_error_skips_one_event_and_is_reported_once(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logdoctor.doctor as doctor_module

    real = doctor_module.diagnose

    def flaky(event, library, launch):  # type: ignore[no-untyped-def]
        if "boom" in event.record.message:
            raise RuntimeError("bug in a parser")
        return real(event, library, launch)

    monkeypatch.setattr(doctor_module, "diagnose", flaky)
    lines = ["ERROR 11-30 19:42:03 [x.py:1] boom", "ERROR 11-30 19:42:04 [x.py:1] boom again", *traceback("", KV_ERROR)]
    reports: list[str] = []
    doctor = Doctor(library, on_internal_error=reports.append)  # the core prints nothing: its sink gets it
    for number, text in enumerate(lines, 1):
        doctor.feed(Line("-", number, text))
    doctor.flush()
    assert [f.rule for f in doctor.report()] == ["memory.kv-cache-too-small"]
    assert doctor.internal_errors == 2 and len(reports) == 1 and "internal error" in reports[0]


def test_a_warning_that_explains_a_later_error_becomes_its_root_cause(library: Library) -> None:
    log = (
        "WARNING 02-28 20:57:36 _core_ext.py:180] Failed to import from vllm._core_C with "
        "ImportError('libtorch_hip.so: cannot open shared object file: No such file or directory')\n"
        "Traceback (most recent call last):\n"
        '  File "/v/vllm/_core_ext.py", line 182, in <module>\n'
        "    ScalarType = torch.classes._core_C.ScalarType\n"
        "RuntimeError: Tried to instantiate class '_core_C.ScalarType', but it does not exist! Ensure that it "
        "is registered via torch::class_\n"
    )
    warning, error = sorted(diagnose_text(log, library), key=lambda f: f.lines[0])
    assert (warning.rule, warning.severity, warning.primary) == ("install.vllm-extension-import-warning", "error", True)
    assert error.role == "consequence" and not error.primary
    assert warning.lines == (1, 5) and [e.line for e in warning.evidence] == [1, 5]


def test_the_same_warning_alone_stays_a_warning(library: Library) -> None:
    (finding,) = diagnose_text(
        "WARNING 02-28 20:57:36 _custom_ops.py:14] Failed to import from vllm._C with ImportError('x')\n", library
    )
    assert (finding.severity, finding.primary) == ("warning", True)


def test_a_failed_request_is_never_a_launchs_root_cause(library: Library) -> None:
    log = (
        "(APIServer pid=1) ERROR 11-30 10:00:00 [serving_chat.py:1] Error in preprocessing prompt inputs\n"
        "(APIServer pid=1) ERROR 11-30 10:00:00 [serving_chat.py:1] Traceback (most recent call last):\n"
        '(APIServer pid=1) ERROR 11-30 10:00:00 [serving_chat.py:1]   File "/v/vllm/x.py", line 1, in f\n'
        "(APIServer pid=1) ERROR 11-30 10:00:00 [serving_chat.py:1] ValueError: This model's maximum context "
        "length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the "
        "input messages.\n"
        "(APIServer pid=1) INFO 11-30 10:00:01 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s\n"
    )
    findings = diagnose_text(log, library)
    assert findings and all(f.role == "request" and f.severity == "warning" and not f.primary for f in findings)


def test_a_refused_option_gets_the_nearest_real_options_of_its_release() -> None:
    from tests.conftest import make_pattern

    pattern = make_pattern(
        id="t.unknown-option",
        where="line",
        match=r"error: unrecognized arguments: (?P<args>.+?)\s*$",
        fix={"summary": "Remove {args}.", "steps": ["x"], "nearest": "args"},
        examples={"match": ["vllm serve: error: unrecognized arguments: --x"]},
    )
    library = Library([pattern])
    log = (
        "INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version 0.33.0\n"
        "vllm serve: error: unrecognized arguments: --tensor-paralel-size 2 --max_model_len 8\n"
    )
    (finding,) = diagnose_text(log, library)
    assert finding.fix.steps[0].startswith("Did you mean --tensor-parallel-size?")
    assert not any("--max-model-len" in s for s in finding.fix.steps)  # a known option in another spelling


def test_an_exception_without_a_message_yields_to_a_finding_that_names_a_cause(library: Library) -> None:
    log = (
        "ERROR 07-13 15:07:34 async_llm_engine.py:616] Engine iteration timed out. This should never happen!\n"
        "ERROR 07-13 15:07:34 async_llm_engine.py:53] Engine background task failed\n"
        "ERROR 07-13 15:07:34 async_llm_engine.py:53] Traceback (most recent call last):\n"
        'ERROR 07-13 15:07:34 async_llm_engine.py:53]   File "/v/vllm/engine/async_timeout.py", line 178, in _do_exit\n'
        "ERROR 07-13 15:07:34 async_llm_engine.py:53]     raise asyncio.TimeoutError\n"
        "ERROR 07-13 15:07:34 async_llm_engine.py:53] asyncio.exceptions.TimeoutError\n"
    )
    (root,) = primary(diagnose_text(log, library))
    assert root.rule == "engine.v0-iteration-timeout"


def test_a_python_warning_line_is_a_warning_whatever_it_quotes(library: Library) -> None:
    line = (
        "/venv/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python "
        "extension: '/venv/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: "
        "_ZN3c1017RegisterOperatorsD1Ev'If you don't plan on using image functionality from `torchvision.io`, "
        "you can ignore this warning.\n"
    )
    assert {f.severity for f in diagnose_text(line, library)} <= {"warning", "info"}


def test_a_bare_assert_is_explained_by_its_source_line(library: Library) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/v/lib/python3.12/site-packages/vllm/model_executor/layers/rotary_embedding.py", line 80, in get_rope\n'
        '    assert "factor" in rope_scaling\n'
        "AssertionError\n"
    )
    (finding,) = diagnose_text(log, library)
    assert finding.rule.startswith("vllm.") and '`assert "factor" in rope_scaling`' in finding.title


def test_a_statement_vllm_has_in_many_files_is_placed_where_the_traceback_says(library: Library) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/v/lib/python3.12/site-packages/vllm/model_executor/models/mymodel.py", line 7, in forward\n'
        "    assert intermediate_tensors is not None\n"
        "AssertionError\n"
    )
    (finding,) = diagnose_text(log, library)
    assert "vllm/model_executor/models/mymodel.py, line 7, in forward" in finding.explanation


def test_an_error_re_raised_without_its_identifying_frames_yields_to_its_recognised_sighting(
    library: Library,
) -> None:
    # The engine core re-raises the worker's exception (`raise result`): same type and message, but
    # only the worker's traceback passes through the compile-cache frame that identifies it.
    log = (
        "ERROR 04-07 10:56:15 [core.py:390] EngineCore hit an exception: Traceback (most recent call last):\n"
        'ERROR 04-07 10:56:15 [core.py:390]   File "/v/vllm/v1/executor/multiproc_executor.py", line 123, in collective_rpc\n'
        "ERROR 04-07 10:56:15 [core.py:390]     raise result\n"
        "ERROR 04-07 10:56:15 [core.py:390] ValueError: too many values to unpack (expected 12)\n"
        "(VllmWorker rank=1 pid=9198) ERROR 04-07 10:56:15 [multiproc_executor.py:383] Traceback (most recent call last):\n"
        '(VllmWorker rank=1 pid=9198) ERROR 04-07 10:56:15 [multiproc_executor.py:383]   File "/root/.cache/vllm/torch_compile_cache/ea2d/rank_1_0/inductor_cache/7a/c7a.py", line 370, in call\n'
        "(VllmWorker rank=1 pid=9198) ERROR 04-07 10:56:15 [multiproc_executor.py:383]     a, b = args\n"
        "(VllmWorker rank=1 pid=9198) ERROR 04-07 10:56:15 [multiproc_executor.py:383] ValueError: too many values to unpack (expected 12)\n"
    )
    (root,) = primary(diagnose_text(log, library))
    assert root.rule == "compile.cached-graph-no-longer-fits"


def test_a_traceback_no_pattern_knows_is_reported_as_unrecognized_with_its_error(library: Library) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/x/app.py", line 3, in f',
        "    g()",
        "FrobnicatorError: the quux reticulator went sideways 12345",
    ]
    (finding,) = diagnose_lines(lines, library)
    assert (finding.rule, finding.role, finding.primary) == ("unrecognized", "cause", True)
    assert finding.error is not None
    assert (finding.error.type, finding.error.message) == (
        "FrobnicatorError",
        "the quux reticulator went sideways 12345",
    )
    assert finding.lines == (1, 4)


OOM_MESSAGE = "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB"


@pytest.mark.parametrize(
    ("line", "rules"),
    [
        (OOM_MESSAGE, ["memory.cuda-oom"]),  # a pasted message without its type
        (f"ERROR 11-30 10:00:00 [a.py:1] {OOM_MESSAGE}", ["memory.cuda-oom"]),
        (f"CRITICAL 11-30 10:00:00 [a.py:1] {OOM_MESSAGE}", ["memory.cuda-oom"]),
        # vLLM warns in an error's own words when an override lets it carry on: not that error.
        (f"WARNING 11-30 10:00:00 [a.py:1] {OOM_MESSAGE}", []),
        (f"INFO 11-30 10:00:00 [a.py:1] {OOM_MESSAGE}", []),
    ],
)
def test_an_error_message_alone_is_read_on_raw_and_error_lines_only(
    library: Library, line: str, rules: list[str]
) -> None:
    assert [f.rule for f in diagnose_lines([line], library)] == rules


def test_an_unrecognized_error_gets_a_short_title_and_a_twelve_word_issue_search(library: Library) -> None:
    message = "the quux reticulator went sideways " + " ".join(f"word{i}" for i in range(60))
    lines = ["Traceback (most recent call last):", '  File "/x/vllm/engine.py", line 3, in f', "    g()"]
    (finding,) = diagnose_lines([*lines, f"FrobnicatorError: {message}"], library)
    assert len(finding.title) <= 140 and finding.title.endswith("…")
    (search,) = [s for s in finding.fix.steps if "github.com/vllm-project/vllm/issues?q=" in s]
    query = search.split("?q=", 1)[1].split("+", 1)[1]  # after `is:issue`
    assert query.split("+") == ["the", "quux", "reticulator", "went", "sideways", *["word"] * 7]


LAUNCH = "INFO 11-30 19:41:07 [api_server.py:1] vLLM API server version 0.33.0"


def test_a_patterns_flag_change_is_written_into_the_launchs_corrected_command(library: Library) -> None:
    lines = [
        LAUNCH,
        "INFO 11-30 19:41:07 [utils.py:1] non-default args: {'model': 'm', 'max_model_len': 131072}",
        *traceback("", KV_ERROR),
    ]
    (finding,) = diagnose_lines(lines, library)
    assert finding.fix.original_command == "vllm serve m --max-model-len 131072"
    assert finding.fix.command == "vllm serve m --max-model-len 39968"  # the pattern's `set`, from the capture
    assert ARGS_TRUNCATED_STEP not in finding.fix.steps  # the whole arguments line was read


def test_a_cut_arguments_line_warns_that_the_corrected_command_may_be_incomplete(library: Library) -> None:
    # The line ends mid-key: its complete pairs are read, and the fix says what may be missing.
    cut = "INFO 11-30 19:41:07 [utils.py:1] non-default args: {'model': 'm', 'max_model_len': 131072, 'enforce_"
    (finding,) = diagnose_lines([LAUNCH, cut, *traceback("", KV_ERROR)], library)
    assert finding.fix.command == "vllm serve m --max-model-len 39968"
    assert finding.fix.steps[-1] == ARGS_TRUNCATED_STEP


def test_a_cause_logged_as_a_tracebacks_intro_explains_an_exception_no_pattern_knows() -> None:
    from tests.conftest import make_pattern

    intro = make_pattern(
        id="t.reticulator-broke",
        where="line",
        role="cause",
        match=r"The quux reticulator broke",
        examples={"match": ["The quux reticulator broke"]},
    )
    lines = [ENGINE + "The quux reticulator broke", *traceback(ENGINE, "FrobnicatorError: sideways")]
    (finding,) = diagnose_lines(lines, Library([intro]))
    assert (finding.rule, finding.lines) == ("t.reticulator-broke", (1, 5))


UNKNOWN_ERROR = "FrobnicatorError: the quux reticulator went sideways"


@pytest.mark.parametrize(
    ("lines", "severity"),
    [
        # A bare exception line (a pasted last line, a message printed as `Error: ...`) does not show
        # that the exception ended a process.
        ([UNKNOWN_ERROR], "warning"),
        (
            ["Traceback (most recent call last):", '  File "/x/app.py", line 3, in <module>', "    g()", UNKNOWN_ERROR],
            "error",
        ),
    ],
)
def test_an_unknown_exception_is_an_error_only_when_it_ended_the_process(
    library: Library, lines: list[str], severity: str
) -> None:
    (finding,) = diagnose_lines(lines, library)
    assert (finding.rule, finding.severity) == ("unrecognized", severity)


def test_the_evidence_shows_the_innermost_frame_not_every_frame(library: Library) -> None:
    lines = [
        "Traceback (most recent call last):",
        '  File "/x/app.py", line 3, in <module>',
        "    main()",
        '  File "/x/vllm/engine.py", line 9, in main',
        "    frobnicate()",
        UNKNOWN_ERROR,
    ]
    (finding,) = diagnose_lines(lines, library)
    assert [(e.line, e.text) for e in finding.evidence] == [(n, lines[n - 1]) for n in (1, 4, 5, 6)]


# Messages vLLM 0.33 raises (vllm/config/parallel.py) that no pattern of the library covers.
ELASTIC_EP = "Elastic EP is only supported with enable_eplb=True."
NSIGHT = "Unable to use nsight profiling unless workers run with Ray."
RAISED_IN_CONFIG = [
    "Traceback (most recent call last):",
    '  File "/v/lib/python3.12/site-packages/vllm/config/parallel.py", line 970, in __post_init__',
    "    raise ValueError(msg)",
]


def test_a_vllm_message_no_pattern_knows_is_explained_from_vllms_source(library: Library) -> None:
    (finding,) = diagnose_lines([*RAISED_IN_CONFIG, f"ValueError: {ELASTIC_EP}"], library)
    assert finding.rule == "vllm.config" and finding.primary
    assert finding.title == f"vLLM ParallelConfig.__post_init__: {ELASTIC_EP}"
    assert "vllm/config/parallel.py, line 976, in ParallelConfig.__post_init__ (vLLM 0.33.0)" in finding.explanation
    assert "when `self.enable_elastic_ep and not self.enable_eplb`" in finding.explanation
    assert finding.fix.summary.startswith("Change --enable-elastic-ep, --enable-eplb so that")
    assert finding.docs == "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/parallel.py#L976"


def test_two_vllm_messages_of_one_area_are_two_findings(library: Library) -> None:
    lines = [*RAISED_IN_CONFIG, f"ValueError: {ELASTIC_EP}", *RAISED_IN_CONFIG, f"ValueError: {NSIGHT}"]
    findings = diagnose_lines(lines, library)
    assert [(f.rule, f.error.message) for f in findings] == [("vllm.config", ELASTIC_EP), ("vllm.config", NSIGHT)]
    assert [f.occurrences for f in findings] == [1, 1]


def test_a_long_vllm_message_makes_a_title_of_at_most_160_characters(library: Library) -> None:
    message = (
        "The moonep all2all backend does not support EPLB yet: EPLB rearranges expert parameters in a layout "
        "MoonEP's replicated [E+B] weights do not follow. Disable --enable-eplb or use a different --all2all-backend."
    )
    (finding,) = diagnose_lines([*RAISED_IN_CONFIG, f"ValueError: {message}"], library)
    assert finding.rule == "vllm.config"
    assert len(finding.title) == 160 and finding.title.startswith("vLLM VllmConfig.__post_init__: The moonep")
    assert finding.title.endswith("…")


@pytest.mark.parametrize(
    ("words_before", "found"),
    [
        (0, True),  # the message alone, as pasted
        (MESSAGE_LEAD_WORDS, True),  # within the opening words, as for a pattern's message
        (MESSAGE_LEAD_WORDS + 1, False),  # further in: a sentence that quotes it is not that error
    ],
)
def test_a_raw_line_is_a_vllm_message_only_when_the_message_opens_it(
    library: Library, words_before: int, found: bool
) -> None:
    line = " ".join([*(f"word{i}" for i in range(words_before)), ELASTIC_EP])
    assert [f.rule for f in diagnose_lines([line], library)] == (["vllm.config"] if found else [])


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        # vLLM logs this one with logger.error (vllm/device_allocator/cumem.py): its index entry explains it.
        ("CuMemAllocator singleton shutdown failed", "vllm.other"),
        # vLLM only ever warns with this one: at ERROR it is some other program's line, not vLLM's message.
        ("get_scheduler_metadata is not implemented for xpu_ops, returning None.", "unrecognized"),
    ],
)
def test_an_error_line_is_explained_by_vllms_index_only_for_messages_vllm_logs_as_errors(
    library: Library, message: str, rule: str
) -> None:
    (finding,) = diagnose_lines([f"ERROR 11-30 10:00:00 [x.py:1] {message}"], library)
    assert (finding.rule, finding.severity) == (rule, "warning")  # a logged error keeps the record's level


def test_a_statement_in_one_file_is_placed_where_the_newest_release_has_it(library: Library) -> None:
    # The log's release has the assert a few lines higher; the explanation cites the release it names
    # (and links), not a line number of another release.
    log = (
        "Traceback (most recent call last):\n"
        '  File "/v/lib/python3.12/site-packages/vllm/_aiter_ops.py", line 4890, in mhc_pre_delayed\n'
        "    assert sublayer_out is not None\n"
        "AssertionError\n"
    )
    (finding,) = diagnose_text(log, library)
    assert "vllm/_aiter_ops.py, line 4917, in rocm_aiter_ops.mhc_pre_delayed (vLLM 0.33.0)" in finding.explanation
    assert finding.docs is not None and finding.docs.endswith("/vllm/_aiter_ops.py#L4917")


def test_a_statement_vllm_has_in_two_files_is_placed_where_the_traceback_says(library: Library) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/v/lib/python3.12/site-packages/vllm/_custom_ops.py", line 1702, in scaled_fp8_quant\n'
        "    assert output.dtype == out_dtype\n"
        "AssertionError\n"
    )
    (finding,) = diagnose_text(log, library)
    assert "vllm/_custom_ops.py, line 1702, in scaled_fp8_quant (vLLM of the log)" in finding.explanation


@pytest.mark.parametrize(
    ("template", "captures", "text"),
    [
        ("{n:divisors}", {"n": "12"}, "1, 2, 3, 4, 6 or 12"),
        ("{n:divisors}", {"n": "7"}, "1 or 7"),
        ("{n:divisor_at_most:tp}", {"n": "32", "tp": "3"}, "2"),
        ("{n:divisor_at_most:tp}", {"n": "2", "tp": "4"}, "2"),
        ("{n:common_divisor:tp} x {tp:cofactor:n}", {"n": "14", "tp": "4"}, "2 x 2"),
        ("{n:divisors|see config.json}", {}, "see config.json"),
    ],
)
def test_computed_placeholders(template: str, captures: dict[str, str], text: str) -> None:
    from logdoctor.diagnose import render

    assert render(template, captures) == text


def test_a_fix_value_is_written_as_its_argument_is_typed() -> None:
    """`max-model-len exceeds the derived maximum` logs `max_position_embeddings=2048.0`: the fix says 2048."""
    log = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "  Value error, User-specified max_model_len (100000) is greater than the derived max_model_len "
        "(max_position_embeddings=2048.0 or model_max_length=None in model's config.json). To allow overriding "
        "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. [type=value_error, input_value=x, input_type=y]\n"
    )
    (finding,) = [f for f in diagnose_text(log) if f.rule == "memory.max-model-len-exceeds-derived"]
    text = " ".join([finding.fix.summary, *finding.fix.steps])
    assert "2048.0" not in text and "--max-model-len 2048`" in text
