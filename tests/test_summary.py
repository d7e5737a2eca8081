"""What a source came to once it ended (Doctor.outcome, scan.summarize): whether it was a vLLM log at all,
its launches, errors and root causes; and the summary line every JSON output ends a source with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.library.matcher import Library
from logdoctor.pipeline import Pipeline
from logdoctor.report import FileSummary, summary_line
from logdoctor.scan import diagnose_file, summarize
from tests.test_doctor import OOM, feed_all, traceback
from tests.test_e2e import ENGINE_FIXTURE, json_lines, run

VLLM_INFO = "(APIServer pid=1) INFO 11-30 19:41:07 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s"
VERSION = "(APIServer pid=1) INFO 11-30 19:41:00 [api_server.py:1] vLLM API server version 0.33.0"


@pytest.mark.parametrize(
    ("texts", "vllm"),
    [
        ([], False),  # an empty file
        (["hello", "world", "CRITICAL: something else entirely"], False),  # another program's log, unrecognized
        (["\x00\x01\x7fELF\x02", "\ufffd\ufffd"], False),  # a binary file
        (["INFO:     127.0.0.1:5 - \"GET /health HTTP/1.1\" 200 OK"], False),  # uvicorn's prefix is not vLLM's
        ([VLLM_INFO], True),  # a vLLM record prefix
        (["INFO 12-27 10:00:01 api_server.py:712] args: Namespace(model='m')"], True),  # vLLM 0.4-0.7's prefix
        (['  File "/usr/lib/python3/site-packages/vllm/engine/arg_utils.py", line 9, in f'], True),  # a vLLM frame
        (traceback(), True),  # a finding (a traceback pasted without any vLLM prefix)
    ],
)
def test_a_source_is_a_vllm_log_when_it_shows_a_vllm_line(library: Library, texts: list[str], vllm: bool) -> None:
    doctor = Doctor(library)
    feed_all(doctor, texts)
    assert doctor.outcome("-").vllm is vllm
    summary = summarize(doctor, "-")
    assert summary.vllm is vllm and summary.lines == len(texts)
    assert (summary.launches == 0) is not vllm  # a source with no vLLM line had no launch


def test_the_outcome_names_each_launchs_root_cause_once_in_order(library: Library) -> None:
    kv = "ValueError: To serve at least one request with the models's max seq len (8192), (1.0 GiB KV cache is needed, which is larger than the available KV cache memory (0.5 GiB)."
    texts = [VERSION, *traceback(OOM), VERSION, *traceback(kv), VERSION, *traceback(OOM)]
    doctor = Doctor(library)
    feed_all(doctor, texts)
    settled = doctor.take_settled()  # the first two launches are forgotten: the outcome still counts them
    assert {f.launch for f in settled} == {1, 2}
    outcome = doctor.outcome("-")
    assert outcome.launches == 3 and outcome.errors == 3 and outcome.findings == 3
    assert outcome.root_causes == ("memory.cuda-oom", "memory.kv-cache-too-small-no-estimate-0-8")


def test_a_healthy_log_is_ok_with_no_root_cause(library: Library) -> None:
    doctor = Doctor(library)
    feed_all(doctor, [VERSION, VLLM_INFO])
    summary = summarize(doctor, "-")
    assert (summary.status, summary.launches, summary.root_causes, summary.vllm) == ("ok", 1, (), True)


def test_the_summary_says_whether_the_last_launch_reached_serving(library: Library) -> None:
    ready = "(APIServer pid=1) INFO:     Application startup complete."
    for texts, serving in (
        ([VERSION, VLLM_INFO, ready], True),
        ([VERSION, "(APIServer pid=1) INFO 11-30 19:41:01 [loader.py:1] Loading weights took 3.1 seconds"], False),
        ([VERSION, ready, VERSION], False),  # a restart still starting
        ([VLLM_INFO], None),  # an excerpt: no API server's header
        (["hello"], None),  # not a vLLM log
    ):
        doctor = Doctor(library)
        feed_all(doctor, texts)
        assert summarize(doctor, "-").serving is serving, texts


def test_vllm_lines_the_sieve_skips_still_count(library: Library, tmp_path: Path) -> None:
    # Over a megabyte the sieve reads only the lines a pattern could match (and a sample for the framing):
    # a long log whose only vLLM line is skipped is still a vLLM log; without it, it is not one.
    other = "2026-12-02 07:00:00 worker: step done, loss 0.1234\n"
    for middle, vllm in ((VLLM_INFO + "\n", True), (other, False)):
        log = tmp_path / "big.log"
        log.write_text(other * 700 + middle + other * 30000)
        assert log.stat().st_size > 1 << 20
        doctor, findings = diagnose_file(log, library)
        assert findings == []
        assert doctor.saw_vllm(str(log)) is vllm, middle


def test_a_stream_and_a_scan_agree_on_the_outcome(library: Library) -> None:
    data = ENGINE_FIXTURE.read_bytes()
    streamed = Doctor(library)
    pipeline = Pipeline(streamed, emit=lambda f: None)
    channel = pipeline.channel("-")
    for at in range(0, len(data), 4096):
        channel.feed(data[at : at + 4096])
    channel.close()
    pipeline.flush()
    scanned, _ = diagnose_file(ENGINE_FIXTURE, library)
    assert streamed.outcome("-").root_causes == scanned.outcome(str(ENGINE_FIXTURE)).root_causes
    assert streamed.outcome("-").root_causes == ("memory.kv-cache-too-small",)


def test_the_summary_line_a_person_reads() -> None:
    def line(**fields: object) -> str:
        base = {"source": "s.log", "lines": 1, "launches": 1, "findings": 0, "errors": 0, "vllm": True, "root_causes": ()}
        return summary_line(FileSummary(**base | fields))  # type: ignore[arg-type]

    assert line() == "s.log: 1 line, 1 launch, 0 findings: ok"
    assert line(lines=0, launches=0, vllm=False) == "s.log: not a vLLM log (empty)"
    assert line(lines=7, launches=0, vllm=False) == "s.log: not a vLLM log (no vLLM line in 7 lines)"
    assert line(lines=7, launches=0, vllm=False, findings=1) == "s.log: not a vLLM log (no vLLM line in 7 lines; 1 finding)"
    starting = line(serving=False)
    assert starting == "s.log: 1 line, 1 launch, 0 findings: ok; the last launch had not reached serving when the log ends"
    problem = line(lines=9, launches=2, findings=3, errors=1, root_causes=("memory.cuda-oom",), serving=False)
    assert problem == "s.log: 9 lines, 2 launches, 3 findings: problem (root cause: memory.cuda-oom)"


# ---- the command line ------------------------------------------------------------------------------


def test_scan_says_a_file_is_not_a_vllm_log_and_exits_0(tmp_path: Path) -> None:
    empty, binary, other = tmp_path / "empty.log", tmp_path / "core.bin", tmp_path / "app.log"
    empty.write_bytes(b"")
    binary.write_bytes(bytes(range(256)) * 64)
    other.write_text("starting app\nlistening on :8080\n")
    proc = run("scan", str(empty), str(binary), str(other))
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert f"== {empty}: not a vLLM log (empty)" in out
    assert f"== {other}: not a vLLM log (no vLLM line in 2 lines)" in out
    assert f"== {binary}: not a vLLM log (no vLLM line in" in out


def test_scan_json_ends_every_file_with_its_summary(tmp_path: Path) -> None:
    other = tmp_path / "app.log"
    other.write_text("starting app\n")
    proc = run("scan", "--format", "json", str(ENGINE_FIXTURE), str(other))
    assert proc.returncode == 1
    lines = json_lines(proc.stdout)
    summaries = [n for n, line in enumerate(lines) if line["kind"] == "summary"]
    assert summaries[-1] == len(lines) - 1 and len(summaries) == 2
    engine, app = (lines[n] for n in summaries)
    assert all(line["source"] == str(ENGINE_FIXTURE) for line in lines[: summaries[0] + 1])
    assert engine == {
        "kind": "summary",
        "source": str(ENGINE_FIXTURE),
        "lines": 131,
        "launches": 1,
        "findings": summaries[0],
        "errors": sum(line["severity"] == "error" for line in lines[: summaries[0]]),
        "status": "problem",
        "vllm": True,
        "root_causes": ["memory.kv-cache-too-small"],
        "serving": False,  # the engine core died while starting
    }
    assert app == {
        "kind": "summary",
        "source": str(other),
        "lines": 1,
        "launches": 0,
        "findings": 0,
        "errors": 0,
        "status": "ok",
        "vllm": False,
        "root_causes": [],
        "serving": None,
    }


def test_a_clean_scan_in_json_is_one_summary(tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text(VERSION + "\n" + VLLM_INFO + "\n")
    proc = run("scan", "--format", "json", str(log))
    assert proc.returncode == 0
    (summary,) = json_lines(proc.stdout)
    assert (summary["kind"], summary["status"], summary["launches"], summary["vllm"]) == ("summary", "ok", 1, True)


def test_the_pipe_ends_its_json_with_the_summary_of_its_input() -> None:
    proc = run("--format", "json", stdin=ENGINE_FIXTURE.read_bytes())
    assert proc.returncode == 1
    *_, last = json_lines(proc.stderr)
    assert (last["kind"], last["source"], last["status"]) == ("summary", "-", "problem")
    assert last["root_causes"] == ["memory.kv-cache-too-small"]


def test_the_pipe_says_when_its_input_is_not_a_vllm_log() -> None:
    proc = run(stdin=b"just some text\n")
    assert (proc.returncode, proc.stdout) == (0, b"just some text\n")
    assert proc.stderr == b"== -: not a vLLM log (no vLLM line in 1 line)\n"


def test_the_schema_describes_the_summary_line() -> None:
    schema = json.loads(run("schema").stdout)
    assert schema["discriminator"]["mapping"]["summary"] == "#/$defs/Summary"
    assert set(schema["$defs"]["Summary"]["required"]) >= {"source", "lines", "launches", "status", "vllm"}
