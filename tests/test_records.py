from __future__ import annotations

import pytest

from logdoctor.framing import Line
from logdoctor.records import parse
from tests.conftest import records


@pytest.mark.parametrize(
    ("text", "process", "pid", "level", "location", "message"),
    [
        # style A (<= 0.7): file:line] without the opening bracket
        (
            "INFO 12-27 10:00:01 api_server.py:712] vLLM API server version 0.6.6.post1",
            None,
            None,
            "INFO",
            "api_server.py:712",
            "vLLM API server version 0.6.6.post1",
        ),
        # style B (0.8 - 0.30)
        (
            "ERROR 05-02 09:12:03 [core.py:396] EngineCore hit an exception.",
            None,
            None,
            "ERROR",
            "core.py:396",
            "EngineCore hit an exception.",
        ),
        # style C (0.10.1 - 0.30): wrapper prefix; 0.10.1 names hold a space
        ("(VllmWorker TP0 pid=7) WARNING 08-20 10:00:00 [x.py:1] w", "VllmWorker TP0", 7, "WARNING", "x.py:1", "w"),
        (
            "(Worker_TP0 pid=12390) INFO 10-13 17:38:53 [cuda.py:325] Using Flash Attention backend on V1 engine.",
            "Worker_TP0",
            12390,
            "INFO",
            "cuda.py:325",
            "Using Flash Attention backend on V1 engine.",
        ),
        # style D (0.31+) with DEBUG's shortened path
        (
            "(EngineCore_DP0 pid=81390) DEBUG 11-30 19:41:07 [v1/engine/core.py:139] x",
            "EngineCore_DP0",
            81390,
            "DEBUG",
            "v1/engine/core.py:139",
            "x",
        ),
        # Ray prefixes, with and without a name
        (
            "(RayWorkerWrapper pid=5, ip=10.0.0.2) INFO 02-19 03:45:16 [x.py:2] y",
            "RayWorkerWrapper",
            5,
            "INFO",
            "x.py:2",
            "y",
        ),
        ("(pid=9, ip=10.0.0.2) ERROR 02-19 03:45:16 [x.py:2] z", "ray", 9, "ERROR", "x.py:2", "z"),
        # empty message (the first line of the ASCII logo)
        ("(APIServer pid=1) INFO 11-30 19:41:07 [startup.py:38] ", "APIServer", 1, "INFO", "startup.py:38", ""),
    ],
)
def test_vllm_record_prefixes(
    text: str, process: str | None, pid: int | None, level: str, location: str, message: str
) -> None:
    (record,) = records(text)
    assert record.kind == "vllm"
    assert (record.process, record.pid, record.level, record.location, record.message) == (
        process,
        pid,
        level,
        location,
        message,
    )


def test_wrapper_prefix_on_raw_lines() -> None:
    (record,) = records('(APIServer pid=51234)   File "/x/vllm/cli/main.py", line 97, in main')
    assert (record.kind, record.process, record.level) == ("raw", "APIServer", None)
    assert record.message == '  File "/x/vllm/cli/main.py", line 97, in main'


def test_torch_rank_prefix() -> None:
    (record,) = records("[rank0]: RuntimeError: NCCL error")
    assert (record.process, record.message) == ("rank0", "RuntimeError: NCCL error")


def test_uvicorn_lines() -> None:
    (record,) = records("(APIServer pid=1) INFO:     Started server process [1]")
    assert (record.kind, record.level, record.message) == ("uvicorn", "INFO", "Started server process [1]")


def test_raw_lines_keep_their_whole_text() -> None:
    (record,) = records("Traceback (most recent call last):")
    assert (record.kind, record.process, record.message) == ("raw", None, "Traceback (most recent call last):")


def test_a_level_word_alone_is_not_a_record() -> None:
    (record,) = records("INFO is a word")
    assert record.kind == "raw"


def test_process_labels_name_the_process_as_output_shows_it() -> None:
    def label(text: str) -> str | None:
        return parse(Line("-", 1, text)).process_label

    assert label("(EngineCore pid=81390) ERROR 11-30 19:41:07 [core.py:1584] x") == "EngineCore pid=81390"
    assert label("(pid=5, ip=10.0.0.2) INFO 11-30 19:41:07 [a.py:1] x") == "ray pid=5"
    assert label("[rank3]: Traceback (most recent call last):") == "rank3"
    assert label("Traceback (most recent call last):") is None


def test_at_most_two_process_prefixes_are_read() -> None:
    # vLLM's wrapper and its own format give two; a third is text of the message.
    two = parse(Line("-", 1, "(A pid=1) (B pid=2) INFO 11-30 19:41:07 [a.py:1] m"))
    assert (two.kind, two.process, two.pid, two.message) == ("vllm", "B", 2, "m")
    three = parse(Line("-", 1, "(A pid=1) (B pid=2) (C pid=3) INFO 11-30 19:41:07 [a.py:1] m"))
    assert (three.kind, three.process, three.message) == ("raw", "B", "(C pid=3) INFO 11-30 19:41:07 [a.py:1] m")


def test_a_cut_prefix_leaves_the_line_raw_with_its_whole_text() -> None:
    record = parse(Line("-", 1, "(APIServer pid=12 INFO 11-30 19:41:07 [a.py:1] m"))
    assert (record.kind, record.process, record.message) == (
        "raw",
        None,
        "(APIServer pid=12 INFO 11-30 19:41:07 [a.py:1] m",
    )
    rank = parse(Line("-", 1, "[rankX]: Traceback"))
    assert (rank.kind, rank.process, rank.message) == ("raw", None, "[rankX]: Traceback")
