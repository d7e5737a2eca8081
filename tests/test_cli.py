"""The command line as people type it: global options in any position, every bad input one line and exit
2, scan of streams and folders, explain, patterns' filters, shell completion. Real processes, as in
tests/test_e2e.py, except for the parser's own table (parse_args, in-process)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from logdoctor import cli
from logdoctor.sources import files
from tests.test_e2e import ENGINE_FIXTURE, ROOT_CAUSE, json_findings, logdoctor_exe, run

USER_PATTERN = (
    '[[pattern]]\nid = "mine.zebra"\ntitle = "A zebra exploded"\nseverity = "error"\nmatch = "zebra exploded"\n'
    'explanation = "e"\n[pattern.fix]\nsummary = "s"\nsteps = ["x"]\n'
    '[pattern.source]\nfile = "f"\nversions = "*"\nchecked = "c"\n'
    '[pattern.examples]\nmatch = ["ValueError: zebra exploded"]\nno_match = ["ValueError: bang"]\n'
)
ZEBRA_LOG = b"INFO 11-30 19:41:07 [x.py:1] starting\nERROR 11-30 19:41:08 [x.py:2] ValueError: zebra exploded\n"


def user_patterns(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    (folder / "mine.toml").write_text(USER_PATTERN)
    return folder


def one_line_usage_error(proc: subprocess.CompletedProcess[bytes], *words: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr (naming `words`), and no traceback."""
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.returncode, err)
    assert proc.stdout == b"", proc.stdout[:200]
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)
    return err


# --- global options, before or after the command ------------------------------------------------------


def _parsed(argv: list[str]) -> dict[str, object]:
    return {k: v for k, v in vars(cli.parse_args(argv)).items() if not k.startswith("sub_")}


# Every command with each global option it takes: given before the command or after it, the same.
GLOBALS = [("--format", ["json"], "format", "json"), ("--patterns", ["DIR"], "patterns", ["DIR"])]
GLOBALS += [("--verbose", [], "verbose", True)]
COMMANDS = [
    ("scan", ["x.log"]),
    ("run", ["--", "true"]),
    ("watch", ["x.log"]),
    ("check", ["--", "vllm", "serve", "m"]),
    ("patterns", []),
    ("explain", ["memory.kv-cache-too-small"]),
    ("schema", []),
    ("completion", ["bash"]),
]
ACCEPTED = [
    (command, option, value, rest, dest, expected)
    for command, rest in COMMANDS
    for option, value, dest, expected in GLOBALS
    if option in cli.COMMAND_GLOBALS[command]
]


@pytest.mark.parametrize(("command", "option", "value", "rest", "dest", "expected"), ACCEPTED, ids=lambda x: str(x))
def test_a_global_option_means_the_same_before_and_after_the_command(
    command: str, option: str, value: list[str], rest: list[str], dest: str, expected: object
) -> None:
    text = ["--format", "text"] if option == "--verbose" else []  # --verbose is for text (watch's default is json)
    before = _parsed([option, *value, command, *text, *rest])
    after = _parsed([command, *text, option, *value, *rest])
    assert before == after
    assert before[dest] == expected


def test_the_pipe_takes_every_global_option() -> None:
    args = cli.parse_args(["--format", "text", "--patterns", "DIR", "--verbose"])
    assert (args.command, args.format, args.patterns, args.verbose) == (None, "text", ["DIR"], True)


def test_patterns_given_before_and_after_the_command_are_both_read() -> None:
    args = cli.parse_args(["--patterns", "A", "watch", "--patterns", "B", "x.log"])
    assert args.patterns == ["A", "B"]
    assert cli.parse_args(["watch", "x.log"]).format == "json"  # watch's own default stands
    assert cli.parse_args(["--format", "text", "watch", "x.log"]).format == "text"


def test_paths_may_come_on_both_sides_of_an_option() -> None:
    assert cli.parse_args(["scan", "a.log", "--format", "json", "b.log", "-"]).paths == ["a.log", "b.log", "-"]


# Every command that has no use for a global option refuses it, in either position.
REFUSED = [
    (command, option, value, rest)
    for command, rest in COMMANDS
    for option, value, _, _ in GLOBALS
    if option not in cli.COMMAND_GLOBALS[command]
]


@pytest.mark.parametrize("position", ["before", "after"])
@pytest.mark.parametrize(("command", "option", "value", "rest"), REFUSED, ids=lambda x: str(x))
def test_a_global_option_a_command_does_not_take_is_refused_in_either_position(
    command: str, option: str, value: list[str], rest: list[str], position: str
) -> None:
    if position == "before":
        argv = [option, *value, command, *rest]
    elif rest[:1] == ["--"]:
        argv = [command, option, *value, *rest]
    else:
        argv = [command, *rest, option, *value]
    one_line_usage_error(run(*argv), f"logdoctor {command}: error:", f"{option} does not apply to {command}")


def test_every_command_is_in_the_table_of_global_options() -> None:
    assert set(cli.build_parser().commands) | {None} == set(cli.COMMAND_GLOBALS)


@pytest.mark.parametrize("option", ["--format", "--patterns", "--verbose"])
def test_scan_reads_a_global_option_the_same_in_either_position(option: str, tmp_path: Path) -> None:
    log = tmp_path / "z.log"
    log.write_bytes(ZEBRA_LOG + ENGINE_FIXTURE.read_bytes())
    value = {"--format": ["json"], "--patterns": [str(user_patterns(tmp_path))], "--verbose": []}[option]
    before = run(option, *value, "scan", str(log))
    after = run("scan", option, *value, str(log))
    assert (before.returncode, before.stdout) == (after.returncode, after.stdout) == (1, after.stdout)
    expected = {"--format": b'"rule":"memory.kv-cache-too-small"', "--patterns": b"mine.zebra", "--verbose": b""}
    assert expected[option] in after.stdout
    if option == "--verbose":
        assert len(after.stdout) > len(run("scan", str(log)).stdout)  # more detail than without it


@pytest.mark.parametrize(
    ("command", "rest"),
    [
        ("run", ["--", "cat", str(ENGINE_FIXTURE)]),
        ("check", ["--", "vllm", "serve", "m", "--tensor-parallel-size", "1"]),
        ("patterns", ["--family", "memory"]),
    ],
)
def test_other_commands_read_format_the_same_in_either_position(command: str, rest: list[str]) -> None:
    before = run("--format", "json", command, *rest)
    after = run(command, "--format", "json", *rest)
    assert (before.returncode, before.stdout, before.stderr) == (after.returncode, after.stdout, after.stderr)
    out = after.stderr if command == "run" else after.stdout
    assert out.strip() and all(json.loads(line) for line in out.decode().splitlines() if line.strip())


def test_explain_reads_patterns_the_same_in_either_position(tmp_path: Path) -> None:
    mine = str(user_patterns(tmp_path))
    before = run("--patterns", mine, "explain", "mine.zebra")
    after = run("explain", "mine.zebra", "--patterns", mine)
    assert before.returncode == after.returncode == 0 and before.stdout == after.stdout
    assert b"A zebra exploded" in after.stdout


@pytest.mark.parametrize("position", ["before", "after"])
def test_watch_reads_patterns_given_on_either_side_of_the_command(position: str, tmp_path: Path) -> None:
    # watch used to drop a --patterns given before it (its own copy of the option replaced the top level's).
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "vllm.log").write_bytes(ZEBRA_LOG)
    mine = ["--patterns", str(user_patterns(tmp_path))]
    argv = [*mine, "watch", str(logs)] if position == "before" else ["watch", str(logs), *mine]
    out = tmp_path / "out.jsonl"
    with out.open("wb") as sink:
        proc = subprocess.Popen([logdoctor_exe(), *argv, "--poll", "0.05"], stdout=sink, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while b"mine.zebra" not in out.read_bytes():
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
                assert time.monotonic() < deadline, "watch did not report the user's pattern"
                time.sleep(0.02)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert proc.returncode == 0


# --- every bad input: one line, exit 2 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["watch", "--metrics-port", "99999", "x.log"], ["--metrics-port", "1 to 65535"]),
        (["watch", "--metrics-port", "0", "x.log"], ["--metrics-port", "1 to 65535"]),
        (["watch", "--metrics-port", "-1", "x.log"], ["--metrics-port"]),
        (["watch", "--metrics-port", "9400.5", "x.log"], ["--metrics-port"]),
        (["watch", "--metrics-port", "http", "x.log"], ["--metrics-port"]),
        (["watch", "--poll", "1e309", "x.log"], ["--poll", "0.01"]),
        (["watch", "--poll", "0", "x.log"], ["--poll", "0.01"]),
        (["watch", "--poll", "-1", "x.log"], ["--poll"]),
        (["watch", "--poll", "nan", "x.log"], ["--poll"]),
        (["watch", "--poll", "inf", "x.log"], ["--poll"]),
        (["watch", "--poll", "1e9", "x.log"], ["--poll", "86400"]),
        (["watch", "--poll", "soon", "x.log"], ["--poll"]),
        (["watch", "--state", "/no/such/folder/state.json", "x.log"], ["--state", "/no/such/folder"]),
        (["watch"], ["logdoctor watch: error:", "PATH"]),
        (["scan"], ["logdoctor scan: error:"]),
        (["scan", "--frobnicate", "x.log"], ["logdoctor scan: error:", "--frobnicate"]),
        (["--frobnicate"], ["logdoctor: error:", "--frobnicate"]),
        (["frobnicate"], ["logdoctor: error:", "frobnicate"]),
        (["--format", "yaml", "scan", "x.log"], ["--format", "yaml"]),
        (["scan", "--format", "yaml", "x.log"], ["--format", "yaml"]),
        (["scan", "/no/such/file.log"], ["/no/such/file.log"]),
        (["--patterns", "/no/such/dir", "scan", str(ENGINE_FIXTURE)], ["/no/such/dir"]),
        (["check", "--vllm-version", "banana", "--", "vllm", "serve", "m"], ["--vllm-version", "banana"]),
        (["explain", "no.such-pattern"], ["no.such-pattern"]),
        (["explain", "unrecognised"], ["did you mean unrecognized"]),
        (["patterns", "--family", "memry"], ["memry", "memory"]),
        (["completion", "tcsh"], ["tcsh", "bash"]),
        (["patterns", "test", "--format", "json"], ["--format json", "patterns test"]),
        (["patterns", "--markdown", "--family", "memory"], ["--family", "patterns --markdown"]),
        (["--format", "json", "explain", "memory.kv-cache-too-small"], ["--format does not apply to explain"]),
        (["--format", "json", "schema"], ["--format does not apply to schema"]),
        (["--verbose", "--format", "json", "scan", "x.log"], ["--verbose applies to --format text"]),
        (["watch", "--verbose", "x.log"], ["--verbose applies to --format text"]),
    ],
    ids=lambda x: " ".join(x) if isinstance(x, list) and x and x[0] != "logdoctor" else None,
)
def test_a_bad_input_is_one_line_and_exit_2(argv: list[str], words: list[str]) -> None:
    one_line_usage_error(run(*argv), *words)


@pytest.mark.parametrize("text", ['[[pattern]]\nid = "mine.bad"\ntitle = "t"\n', "[[pattern]\nid =\n"])
@pytest.mark.parametrize("command", [["scan", str(ENGINE_FIXTURE)], ["patterns"], ["explain", "mine.bad"]])
def test_a_broken_pattern_file_is_one_line_and_exit_2(text: str, command: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(text)
    one_line_usage_error(run("--patterns", str(tmp_path), *command), "bad.toml")


def test_scan_of_standard_input_twice_is_one_line_and_exit_2() -> None:
    one_line_usage_error(run("scan", "-", "-", stdin=b"x\n"), "only once")


def test_a_metrics_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run("watch", "--metrics-port", str(port), str(tmp_path / "x.log"))
    one_line_usage_error(proc, str(port), "--metrics-port")


def test_scan_of_standard_input_on_a_terminal_says_to_pipe_a_log() -> None:
    status, shown = _run_on_terminal_with("scan", "-", no_color=True)
    assert status == 2 and b"standard input is a terminal" in shown and shown.count(b"\n") == 1


# --- scan: standard input, pipes, FIFOs, folders, gzip by content --------------------------------------


def _primary(out: bytes) -> list[tuple[object, object]]:
    return [(f["rule"], f["source"]) for f in json_findings(out) if f.get("primary")]


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_scan_reads_standard_input_as_dash(compressed: bool) -> None:
    data = ENGINE_FIXTURE.read_bytes()
    proc = run("scan", "--format", "json", "-", stdin=gzip.compress(data) if compressed else data)
    assert proc.returncode == 1, proc.stderr
    assert _primary(proc.stdout) == [(ROOT_CAUSE, "-")]


def test_scan_reads_a_pipe_and_dev_stdin() -> None:
    for target in ("-", "/dev/stdin"):
        cat = subprocess.Popen(["cat", str(ENGINE_FIXTURE)], stdout=subprocess.PIPE)
        proc = subprocess.run(
            [logdoctor_exe(), "scan", "--format", "json", target],
            stdin=cat.stdout,
            capture_output=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
            check=False,
        )
        assert cat.stdout is not None
        cat.stdout.close()
        cat.wait(timeout=10)
        assert proc.returncode == 1, proc.stderr
        assert _primary(proc.stdout) == [(ROOT_CAUSE, target)]


def test_scan_reads_a_fifo_its_writer_fills_slowly(tmp_path: Path) -> None:
    fifo = tmp_path / "vllm.fifo"
    os.mkfifo(fifo)
    data = gzip.compress(ENGINE_FIXTURE.read_bytes())  # gzip is told by its first bytes on a stream too
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with open(fifo, "wb", buffering=0) as out:  # opening waits for the reader
                out.write(data[:1])  # the magic split across writes
                time.sleep(0.05)
                for start in range(1, len(data), 4096):
                    out.write(data[start : start + 4096])
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    proc = run("scan", "--format", "json", str(fifo))
    writer.join(timeout=30)
    assert not writer.is_alive() and not errors
    assert proc.returncode == 1, proc.stderr
    assert _primary(proc.stdout) == [(ROOT_CAUSE, str(fifo))]


def test_scan_walks_a_folder_as_watch_does(tmp_path: Path) -> None:
    nested = tmp_path / "pods" / "ns_pod_0123456789ab" / "vllm"
    nested.mkdir(parents=True)
    shutil.copy(ENGINE_FIXTURE, nested / "0.log")
    (nested / "0.log.20261130-101010").write_bytes(gzip.compress(ENGINE_FIXTURE.read_bytes()))  # gzip, no .gz
    (tmp_path / "old.log.2.gz").write_bytes(gzip.compress(ENGINE_FIXTURE.read_bytes()))
    (tmp_path / "notes.txt").write_bytes(b"ValueError: not a log\n")
    (tmp_path / "tool.logger.py").write_bytes(b"ValueError: not a log\n")
    proc = run("scan", "--format", "json", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    sources = [Path(str(s)).relative_to(tmp_path).as_posix() for _, s in _primary(proc.stdout)]
    assert sources == [
        "old.log.2.gz",
        "pods/ns_pod_0123456789ab/vllm/0.log",
        "pods/ns_pod_0123456789ab/vllm/0.log.20261130-101010",
    ]
    from logdoctor.sources.follow import expand as watch_expand

    assert watch_expand([str(tmp_path)]) == [nested / "0.log"]  # watch follows the current file


def test_scan_reads_a_gzip_file_without_a_gz_name(tmp_path: Path) -> None:
    packed = tmp_path / "server.log.1"
    packed.write_bytes(gzip.compress(ENGINE_FIXTURE.read_bytes()))
    proc = run("scan", "--format", "json", str(packed))
    assert _primary(proc.stdout) == [(ROOT_CAUSE, str(packed))]


@pytest.mark.parametrize(
    ("name", "is_log", "is_current"),
    [
        ("vllm.log", True, True),
        ("vllm.log.1", True, False),
        ("vllm.log.2.gz", True, False),
        ("vllm.log-20261130", True, False),
        ("0.log.20261130-101010", True, False),
        ("vllm-json.log", True, True),
        ("tool.logger.py", False, False),
        ("x.login", False, False),
        ("notes.txt", False, False),
        ("vllm.gz", False, False),
    ],
)
def test_which_files_of_a_folder_are_logs(name: str, is_log: bool, is_current: bool) -> None:
    assert (files.is_log_name(name), files.is_log_name(name, rotated=False)) == (is_log, is_current)


def test_rotated_copies_are_the_siblings_named_after_the_file(tmp_path: Path) -> None:
    for name in ("vllm.log", "vllm.log.1", "vllm.log-20261130", "vllm.log.2.gz", "vllm.logger", "other.log.1"):
        (tmp_path / name).write_bytes(b"x\n")
    got = [p.name for p in files.rotated_copies(tmp_path / "vllm.log")]
    assert got == ["vllm.log-20261130", "vllm.log.1", "vllm.log.2.gz"]


def test_a_stream_is_read_without_seeking_and_gzip_is_told_by_its_first_bytes(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    payload = b"line one\nline two\n" * 1000

    def write() -> None:
        with open(fifo, "wb", buffering=0) as out:
            packed = gzip.compress(payload)
            out.write(packed[:1])
            out.write(packed[1:])

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert files.is_stream(fifo) and files.disk_size(fifo) == 0
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    got = b"".join(data for data, _ in files.chunks(fifo))
    writer.join(timeout=10)
    assert got == payload


# --- explain -------------------------------------------------------------------------------------------


def test_explain_knows_unrecognized() -> None:
    proc = run("explain", "unrecognized")
    out = proc.stdout.decode()
    assert proc.returncode == 0 and out.startswith("## unrecognized")
    assert "VLLM_LOGGING_LEVEL=DEBUG" in out and "--patterns" in out


def test_explain_knows_the_rules_of_the_surface_index() -> None:
    proc = run("explain", "vllm.kv-cache")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("## vllm.kv-cache")
    one_line_usage_error(run("explain", "vllm.kvcache"), "did you mean vllm.kv-cache")


def test_explain_prints_markdown_text_off_a_terminal() -> None:
    out = run("explain", ROOT_CAUSE).stdout.decode()
    assert out.startswith(f"## {ROOT_CAUSE}") and "### Fix" in out and "\x1b[" not in out


def _plain(shown: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", shown.decode())


def test_explain_renders_markdown_on_a_terminal_and_no_color_keeps_the_layout() -> None:
    status, coloured = _run_on_terminal_with("explain", ROOT_CAUSE, no_color=False)
    assert status == 0 and b"\x1b[" in coloured
    text = _plain(coloured)
    assert "### Fix" not in text and "**" not in text and "Fix" in text and ROOT_CAUSE in text
    status, plain = _run_on_terminal_with("explain", ROOT_CAUSE, no_color=True)
    assert status == 0
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|9[0-7]|4[0-9])[;m]", plain.decode())  # no colour codes
    assert _plain(plain) == text  # the same layout


def _run_on_terminal_with(*args: str, no_color: bool) -> tuple[int, bytes]:
    import pty

    main, secondary = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    if no_color:
        env["NO_COLOR"] = "1"
    proc = subprocess.Popen([logdoctor_exe(), *args], stdin=secondary, stdout=secondary, stderr=secondary, env=env)
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


# --- patterns ------------------------------------------------------------------------------------------


def test_patterns_filters_by_family() -> None:
    lines = run("patterns", "--family", "memory").stdout.decode().splitlines()
    ids = [line.split()[0] for line in lines[:-1]]
    assert ids and all(i.startswith("memory.") for i in ids) and ROOT_CAUSE in ids
    assert lines[-1].startswith(f"{len(ids)} of ")


def test_patterns_filters_by_text_in_any_case() -> None:
    lines = run("patterns", "--grep", "KV CACHE CANNOT").stdout.decode().splitlines()
    assert ROOT_CAUSE in [line.split()[0] for line in lines[:-1]]


def test_patterns_as_json_lines() -> None:
    proc = run("patterns", "--format", "json", "--family", "cuda", "--grep", "driver")
    records = json_findings(proc.stdout)
    assert proc.returncode == 0 and records
    for record in records:
        assert record["family"] == "cuda" and str(record["id"]).startswith("cuda.")
        assert "driver" in (str(record["id"]) + str(record["title"])).lower()
        assert {"severity", "versions", "title", "fix", "role", "rule_sets"} <= set(record)
    every = json_findings(run("patterns", "--format", "json").stdout)
    table = run("patterns").stdout.decode().splitlines()
    assert len(every) == len(table) - 1


def test_patterns_filter_that_matches_nothing_says_so() -> None:
    proc = run("patterns", "--grep", "no pattern says this zzz")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("0 of ")


# --- shell completion ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_printed_and_parse(shell: str, tmp_path: Path) -> None:
    proc = run("completion", shell)
    assert proc.returncode == 0 and b"logdoctor" in proc.stdout
    for word in (b"scan", b"watch", b"metrics-port", b"family", b"completion", b"unrecognized"):
        assert word in proc.stdout
    script = tmp_path / f"logdoctor.{shell}"
    script.write_bytes(proc.stdout)
    binary = shutil.which(shell)
    if binary is None:
        pytest.skip(f"{shell} is not installed: the script is printed, its syntax not checked")
    check = {"bash": [binary, "-n"], "zsh": [binary, "-n"], "fish": [binary, "--no-execute"]}[shell]
    syntax = subprocess.run([*check, str(script)], capture_output=True, timeout=30, check=False)
    assert syntax.returncode == 0, syntax.stderr


def _bash_complete(script: Path, words: list[str]) -> list[str]:
    """What the bash completion offers for `words` (the last one being completed)."""
    bin_dir = str(Path(logdoctor_exe()).parent)
    program = (
        f"source {script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        "_logdoctor; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run(["bash", "-c", program], capture_output=True, timeout=60, env=env, check=True)
    return [line for line in proc.stdout.decode().splitlines() if line]


def test_bash_completion_offers_commands_options_and_values(tmp_path: Path) -> None:
    script = tmp_path / "logdoctor.bash"
    script.write_bytes(run("completion", "bash").stdout)
    assert _bash_complete(script, ["logdoctor", "sc"]) == ["scan", "schema"]
    assert _bash_complete(script, ["logdoctor", "watch", "--po"]) == ["--poll"]
    assert _bash_complete(script, ["logdoctor", "--format", ""]) == ["text", "json"]
    assert _bash_complete(script, ["logdoctor", "scan", "--format", "j"]) == ["json"]
    assert _bash_complete(script, ["logdoctor", "completion", "z"]) == ["zsh"]
    assert "unrecognized" in _bash_complete(script, ["logdoctor", "explain", "unr"])
    assert ROOT_CAUSE in _bash_complete(script, ["logdoctor", "explain", "memory.kv-cache-too"])


def test_fish_completion_offers_commands_options_and_values(tmp_path: Path) -> None:
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    script = tmp_path / "logdoctor.fish"
    script.write_bytes(run("completion", "fish").stdout)
    env = {**os.environ, "PATH": str(Path(logdoctor_exe()).parent) + os.pathsep + os.environ.get("PATH", "")}

    def offered(line: str) -> list[str]:
        program = f"source {script}; complete -C '{line}'"
        out = subprocess.run([fish, "-c", program], capture_output=True, timeout=60, env=env, check=True).stdout
        return [entry.split("\t")[0] for entry in out.decode().splitlines()]

    assert offered("logdoctor sc") == ["scan", "schema"]
    assert offered("logdoctor watch --po") == ["--poll"]
    assert sorted(offered("logdoctor scan --format ")) == ["json", "text"]
    assert ROOT_CAUSE in offered("logdoctor explain memory.kv-cache-too")


def test_the_completion_module_reads_every_command_of_the_parser() -> None:
    from logdoctor.completion import commands_of

    names = [c.name for c in commands_of(cli.build_parser())]
    assert names == ["", *cli.build_parser().commands]
