"""The installed `logdoctor` as a real process: pipes, files, exit codes."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.markers import strip_markers

ENGINE_FIXTURE = FIXTURES / "engine-core-kv-cache-too-small-0.33.log"
ROOT_CAUSE = "memory.kv-cache-too-small"


def logdoctor_exe() -> str:
    beside = Path(sys.executable).with_name("logdoctor")
    found = str(beside) if beside.exists() else shutil.which("logdoctor")
    if found is None:
        pytest.fail("the logdoctor console script is not installed (pip install '.[test]')")
    return found


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([logdoctor_exe(), *args], input=stdin, capture_output=True, timeout=60, env=env, check=False)


def json_lines(out: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def json_findings(out: bytes) -> list[dict[str, object]]:
    """The findings of `--format json` output (its summary lines left out)."""
    return [line for line in json_lines(out) if line.get("kind") != "summary"]


def test_pipe_copies_input_byte_for_byte_and_reports_on_stderr() -> None:
    data = ENGINE_FIXTURE.read_bytes() + b"bad utf-8 \xff\xfe\x00 here\r\nlast line without newline"
    proc = run(stdin=data)
    assert proc.stdout == data
    assert ROOT_CAUSE in proc.stderr.decode()
    assert proc.returncode == 1


def test_pipe_json_findings_on_stderr() -> None:
    proc = run("--format", "json", stdin=ENGINE_FIXTURE.read_bytes())
    findings = json_findings(proc.stderr)
    assert [f["rule"] for f in findings if f["primary"]][:1] == [ROOT_CAUSE]


def test_pipe_of_a_healthy_log_exits_0() -> None:
    data = b"(APIServer pid=1) INFO 11-30 19:41:07 [entry.py:139] Starting vLLM server on http://0.0.0.0:8000\n"
    proc = run(stdin=data)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, data, b"")


def test_pipe_keeps_draining_when_its_reader_goes_away() -> None:
    # A writer that would die of EPIPE if logdoctor stopped reading; the reader closes after 100 bytes.
    body = ENGINE_FIXTURE.read_bytes()
    writer_code = (
        "import sys\n"
        f"chunk = open({str(ENGINE_FIXTURE)!r}, 'rb').read()\n"
        "for _ in range(300):\n"
        "    sys.stdout.buffer.write(chunk)\n"
        "sys.stdout.buffer.flush()\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", writer_code], stdout=subprocess.PIPE)
    doctor = subprocess.Popen(
        [logdoctor_exe()],
        stdin=writer.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert writer.stdout is not None and doctor.stdout is not None and doctor.stderr is not None
    writer.stdout.close()
    assert doctor.stdout.read(100) == body[:100]
    doctor.stdout.close()
    stderr = doctor.stderr.read()
    assert writer.wait(timeout=60) == 0
    assert doctor.wait(timeout=60) == 1
    assert ROOT_CAUSE in stderr.decode()


@pytest.mark.parametrize(
    "fixture",
    [
        ENGINE_FIXTURE,
        FIXTURES / "framings" / "engine-core-kv-cache-too-small-0.33.log.gz",
        FIXTURES / "framings" / "engine-core-kv-cache-too-small-0.33-cri.log",
        FIXTURES / "framings" / "engine-core-kv-cache-too-small-0.33-docker-json.log",
        FIXTURES / "framings" / "engine-core-kv-cache-too-small-0.33-compose.log",
    ],
    ids=lambda p: p.name,
)
def test_scan_each_framing_finds_the_engine_core_root_cause(fixture: Path) -> None:
    proc = run("scan", "--format", "json", str(fixture))
    assert proc.returncode == 1, proc.stderr
    findings = json_findings(proc.stdout)
    primary = [f for f in findings if f["primary"]]
    assert [f["rule"] for f in primary] == [ROOT_CAUSE]
    assert primary[0]["process"] == "EngineCore pid=81390"
    wrapper = [f for f in findings if "Engine core initialization failed" in str(f["error"])]
    assert wrapper and not wrapper[0]["primary"]


def test_scan_text_report_names_file_cause_and_fix() -> None:
    proc = run("scan", str(ENGINE_FIXTURE))
    out = proc.stdout.decode()
    assert str(ENGINE_FIXTURE) in out and ROOT_CAUSE in out and "--max-model-len 39968" in out


def test_scan_a_folder_reads_its_log_files(tmp_path: Path) -> None:
    shutil.copy(ENGINE_FIXTURE, tmp_path / "a.log")
    (tmp_path / "b.log.1").write_bytes(b"INFO 11-30 19:41:07 [x.py:1] fine\n")
    (tmp_path / "notes.txt").write_bytes(b"ValueError: not a log\n")
    proc = run("scan", "--format", "json", str(tmp_path))
    sources = {Path(str(f["source"])).name for f in json_findings(proc.stdout)}
    assert sources == {"a.log"}


def test_scan_missing_file_is_a_usage_error() -> None:
    proc = run("scan", "/no/such/file.log")
    assert proc.returncode == 2 and b"/no/such/file.log" in proc.stderr


def test_unknown_option_is_a_usage_error() -> None:
    assert run("scan", "--frobnicate", str(ENGINE_FIXTURE)).returncode == 2


def test_broken_user_pattern_stops_with_its_file_and_id(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('[[pattern]]\nid = "mine.bad"\ntitle = "t"\n')
    proc = run("scan", "--patterns", str(tmp_path), str(ENGINE_FIXTURE))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "bad.toml" in err and "mine.bad" in err


def test_truncated_gzip_still_reports_what_was_read(tmp_path: Path) -> None:
    whole = (FIXTURES / "framings" / "engine-core-kv-cache-too-small-0.33.log.gz").read_bytes()
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) - 40])
    proc = run("scan", "--format", "json", str(cut))
    assert b"cut.log.gz" in proc.stderr  # says which file was cut short
    assert proc.returncode in (1, 2)


def test_schema_command_prints_the_finding_schema() -> None:
    schema = json.loads(run("schema").stdout)
    finding, summary = (schema["$defs"][name]["properties"] for name in ("Finding", "Summary"))
    assert {"rule", "severity", "primary", "lines", "launch", "fix", "constraints"} <= set(finding)
    assert {"kind", "source", "launches", "status", "root_causes", "vllm"} <= set(summary)
    assert schema["discriminator"]["propertyName"] == "kind"  # a line is a finding or a summary, by `kind`


def test_readme_documents_the_current_schema() -> None:
    readme = (FIXTURES.parent / "README.md").read_text()
    schema = run("schema").stdout.decode().strip()
    assert schema in readme, "README's schema block is stale: paste the output of `logdoctor schema`"


def _run_on_terminal(*args: str) -> tuple[int, bytes]:
    """Run with stdout and stderr on a pseudo-terminal; return the exit status and what it showed."""
    import pty

    main, secondary = pty.openpty()
    env = {**os.environ, "LOGDOCTOR_PROGRESS_MIN_BYTES": "0", "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([logdoctor_exe(), *args], stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    return proc.wait(timeout=60), shown


def test_terminal_gets_panels_and_a_progress_bar() -> None:
    status, shown = _run_on_terminal("scan", str(ENGINE_FIXTURE))
    assert status == 1 and b"scanning" in shown and b"\x1b[" in shown and ROOT_CAUSE.encode() in shown


def test_json_on_a_terminal_has_no_progress_bar_or_colour() -> None:
    status, shown = _run_on_terminal("scan", "--format", "json", str(ENGINE_FIXTURE))
    assert status == 1 and b"scanning" not in shown and b"\x1b[" not in shown


def test_patterns_lists_the_library() -> None:
    proc = run("patterns")
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "replayssm.cache-mode-all" in out and "patterns," in out.splitlines()[-1]


def test_patterns_test_passes_and_checks_a_users_folder(tmp_path: Path) -> None:
    assert run("patterns", "test").returncode == 0
    (tmp_path / "mine.toml").write_text(
        '[[pattern]]\nid = "mine.boom"\ntitle = "t"\nseverity = "error"\nmatch = "boom"\nexplanation = "e"\n'
        '[pattern.fix]\nsummary = "s"\nsteps = ["x"]\n[pattern.source]\nfile = "f"\nversions = "*"\nchecked = "c"\n'
        '[pattern.examples]\nmatch = ["ValueError: bang"]\nno_match = ["ValueError: boom"]\n'
    )
    proc = run("patterns", "test", str(tmp_path))
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "mine.boom: no-match" in out and "mine.boom: false-match" in out


def test_explain_prints_a_page_and_suggests_on_typos() -> None:
    page = run("explain", "replayssm.cache-mode-all")
    text = page.stdout.decode()
    assert page.returncode == 0
    assert all(h in text for h in ("### What it means", "### Fix", "### Where it comes from", "replayssm-0.28"))
    typo = run("explain", "replayssm.cache-mode")
    assert typo.returncode == 2 and b"replayssm.cache-mode-all" in typo.stderr


def test_scan_into_a_reader_that_closes_early_exits_quietly() -> None:
    proc = subprocess.run(
        f"{shlex.quote(logdoctor_exe())} scan {shlex.quote(str(ENGINE_FIXTURE))} | head -c 10",
        shell=True,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=60,
    )
    assert proc.stdout == b"== " + str(ENGINE_FIXTURE).encode()[:7]
    assert b"Traceback" not in proc.stderr and b"BrokenPipe" not in proc.stderr


# The last line of a crash often has no newline (the process died mid-write, or `echo -n`): it must still
# reach the diagnosis, so ending the input flushes the framer and the sieve, not only the core.
UNTERMINATED = (
    b"Traceback (most recent call last):\n"
    b'  File "/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 1, in run_server\n'
    b"    sock.bind(addr)\n"
    b"OSError: [Errno 98] Address already in use"
)


@pytest.mark.parametrize("mode", ["pipe", "scan"])
def test_an_error_on_a_last_line_without_newline_is_recognised(mode: str, tmp_path: Path) -> None:
    if mode == "pipe":
        proc = run("--format", "json", stdin=UNTERMINATED)
        out = proc.stderr
    else:
        log = tmp_path / "cut.log"
        log.write_bytes(UNTERMINATED)
        proc = run("--format", "json", "scan", str(log))
        out = proc.stdout
    primaries = [f["rule"] for f in json_findings(out) if f["primary"]]
    assert primaries == ["network.port-in-use"]
    assert proc.returncode == 1


# The real processes, each mode wired as a user runs it, on real-shaped fixtures: the stream's findings,
# updates applied by id, are the scan's (tests/test_modes_agree.py does the same in-process for every
# fixture and chunking, with a simulated clock).
MODE_FIXTURES = [
    ENGINE_FIXTURE,
    FIXTURES / "families" / "network-port-in-use-0.8.log",
    FIXTURES / "real" / "vllm-0.33.0-replayssm-multi-rule.log",
]


def _settled(lines: bytes) -> list[tuple[object, ...]]:
    held: dict[str, dict[str, object]] = {}
    for finding in json_findings(lines):
        if finding["kind"] == "withdrawn":
            held.pop(str(finding["id"]), None)
        else:
            held[str(finding["id"])] = finding
    return sorted(
        (f["rule"], f["primary"], tuple(f["lines"]), f["process"], f["occurrences"])  # type: ignore[arg-type]
        for f in held.values()
    )


@pytest.mark.parametrize("path", MODE_FIXTURES, ids=lambda p: p.name)
def test_scan_pipe_and_run_agree_on_a_log(path: Path, tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(strip_markers(path.read_bytes())[0])
    scanned = _settled(run("--format", "json", "scan", str(log)).stdout)
    piped = _settled(run("--format", "json", stdin=log.read_bytes()).stderr)
    ran = _settled(run("--format", "json", "run", "--", "cat", str(log)).stderr)
    assert piped == scanned and ran == scanned


def test_a_traceback_written_in_two_bursts_ends_as_one_finding() -> None:
    # A worker flushes half its traceback, pauses longer than the quiet period, then the rest: the early
    # report is amended, never left as an `Unrecognized error` beside the real one.
    lines = FIXTURES.joinpath("families", "network-port-in-use-0.8.log").read_bytes().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(b"Traceback"))
    first, rest = b"".join(lines[: start + 3]), b"".join(lines[start + 3 :])
    writer = (
        "import sys, time; out = sys.stdout.buffer; "
        f"out.write({first!r}); out.flush(); time.sleep(1.2); out.write({rest!r}); out.flush()"
    )
    piped = _settled(run("--format", "json", "run", "--", sys.executable, "-c", writer).stderr)
    assert [r for r in piped if r[1]] and [r[0] for r in piped if r[1]] == ["network.port-in-use"]
    assert "unrecognized" not in [r[0] for r in piped]
