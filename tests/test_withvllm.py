"""`check --with-vllm`: the probe's protocol, the validate-fix-validate loop, the CLI's errors.

Driven by the fake vLLM in tests/fakevllm/ (real vLLM 0.33.0's module layout and messages, in
milliseconds); the tests against a real vLLM at the end run only where one is installed
($LOGDOCTOR_TEST_VLLM_PYTHON, or the battery's /work/vllm033)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor.withvllm import Probe, WithVllmError, find_python, shebang_python, validate_loop

TESTS = Path(__file__).resolve().parent
FAKE = TESTS / "fakevllm"
FAKE_ENV = {**os.environ, "PYTHONPATH": str(FAKE)}
REAL = os.environ.get("LOGDOCTOR_TEST_VLLM_PYTHON") or "/work/vllm033/bin/python"
OWN_VLLM = subprocess.run([sys.executable, "-c", "import vllm"], capture_output=True, check=False).returncode == 0


@pytest.fixture(scope="module")
def probe() -> Probe:
    with Probe(sys.executable, environ=FAKE_ENV) as p:
        yield p


def words(command: str) -> list[str]:
    return shlex.split(command)


# --- the probe's protocol -----------------------------------------------------------------------------


def test_the_probe_says_ready_with_vllms_version(probe: Probe) -> None:
    assert probe.vllm_version == "0.33.0"
    assert probe.import_seconds is not None


def test_a_launch_vllm_accepts(probe: Probe) -> None:
    answer = probe.ask(["m", "--tensor-parallel-size", "2"])
    assert answer.ok and answer.stage is None


def test_an_argparse_refusal_is_the_parsers_own_message(probe: Probe) -> None:
    answer = probe.ask(["m", "--tensor-parallel-size", "abc"])
    assert not answer.ok
    assert (answer.stage, answer.type) == ("parser", "SystemExit")
    assert answer.message == "vllm serve: error: argument --tensor-parallel-size/-tp: invalid int value: 'abc'"
    unknown = probe.ask(["m", "--no-such-flag"])
    assert unknown.message == "vllm: error: unrecognized arguments: --no-such-flag"


def test_a_value_error_of_the_config_construction(probe: Probe) -> None:
    answer = probe.ask(["m", "--max-model-len", "4096"])
    assert (answer.ok, answer.stage, answer.type) == (False, "config", "ValueError")
    assert answer.message.startswith("User-specified max_model_len (4096) is greater than the derived")
    assert answer.traceback.startswith("Traceback (most recent call last):")
    assert answer.traceback.rstrip().endswith(answer.message.splitlines()[-1])


def test_serve_checks_before_the_config(probe: Probe) -> None:
    answer = probe.ask(["m", "--enable-auto-tool-choice"])
    assert (answer.stage, answer.type) == ("validate", "TypeError")


def test_env_and_cwd_hold_for_one_request(probe: Probe, tmp_path: Path) -> None:
    (tmp_path / "local-model").mkdir()
    allowed = probe.ask(
        ["./local-model", "--max-model-len", "4096"], env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}, cwd=str(tmp_path)
    )
    assert allowed.ok
    refused = probe.ask(["./local-model", "--max-model-len", "4096"])  # both were put back
    assert "local directory" in refused.message
    assert "max_model_len" in probe.ask(["m", "--max-model-len", "4096"]).message


def test_what_vllm_prints_on_stdout_does_not_break_the_protocol(probe: Probe) -> None:
    # The fake's create_engine_config prints a log line on stdout, as vLLM's logger does.
    assert all(probe.ask(["m"]).ok for _ in range(3))


def test_a_probe_that_dies_says_its_last_words() -> None:
    with Probe(sys.executable, environ=FAKE_ENV) as p, pytest.raises(WithVllmError) as err:
        p.ask(["m"], env={"FAKE_VLLM_CRASH": "1"})
    message = str(err.value)
    assert "died (exit status 7)" in message and message.endswith("fatal: the fake engine crashed")
    assert "\n" not in message


def test_an_interpreter_without_vllm(tmp_path: Path) -> None:
    broken = tmp_path / "vllm"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('this vllm is broken')\n")
    with pytest.raises(WithVllmError, match=r"cannot import vllm \(ImportError: this vllm is broken\)$"):
        Probe(sys.executable, environ={**os.environ, "PYTHONPATH": str(tmp_path)}).start()


# --- which interpreter --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("#!/venv/bin/python3\n", "/venv/bin/python3"),
        ("#!/bin/sh\n'''exec' \"/very/long path/bin/python\" \"$0\" \"$@\"\n' '''\n", "/very/long path/bin/python"),
        ("#!/bin/bash\necho not python\n", None),
        ("ELF", None),
    ],
)
def test_the_interpreter_of_a_console_script(tmp_path: Path, head: str, expected: str | None) -> None:
    script = tmp_path / "vllm"
    script.write_text(head)
    assert shebang_python(script) == expected


def test_env_shebang_is_looked_up_on_path(tmp_path: Path) -> None:
    script = tmp_path / "vllm"
    script.write_text("#!/usr/bin/env python3\n")
    (tmp_path / "python3").symlink_to(sys.executable)
    assert shebang_python(script, str(tmp_path)) == str(tmp_path / "python3")


def test_find_python_without_vllm_on_path(tmp_path: Path) -> None:
    with pytest.raises(WithVllmError, match="no `vllm` on PATH"):
        find_python(None, {"PATH": str(tmp_path)})
    with pytest.raises(WithVllmError, match="no such interpreter"):
        find_python(str(tmp_path / "python"), {"PATH": str(tmp_path)})


# --- the loop -----------------------------------------------------------------------------------------


def test_each_fix_is_validated_again_until_vllm_accepts(probe: Probe) -> None:
    result = validate_loop(probe, words("vllm serve m --max-model-len 4096 --gpu-memory-utilization 1.5"), "0.33.0")
    # What the first restart would have shown; its fix also meets the rule the second restart would have
    # shown (check's scheduler set bounds --gpu-memory-utilization), so one round fixes both.
    assert [r.rule for r in result.rounds] == ["memory.max-model-len-exceeds-derived", None]
    assert [r.ok for r in result.rounds] == [False, True]
    assert result.accepted and not result.accepted_original
    assert result.command == "vllm serve m --max-model-len 2048"
    assert result.rounds[0].fixed_command == result.rounds[1].command
    assert result.rounds[0].fix_from == "finding"


def test_a_launch_vllm_accepts_as_it_is(probe: Probe) -> None:
    result = validate_loop(probe, words("vllm serve m"), "0.33.0")
    assert len(result.rounds) == 1 and result.accepted_original and result.command is None


def test_a_launch_validation_accepts_but_check_says_fails_later(probe: Probe) -> None:
    # the CPU workers' NUMA binding is asserted in the engine core, after validation: check's rule of
    # stage `engine` says so, and its fix is asked about next
    one_node = lambda host, port: {"memory_nodes": [0]}  # noqa: E731
    result = validate_loop(
        probe, words("vllm serve m --tensor-parallel-size 2"), "0.33.0",
        environ={"VLLM_TARGET_DEVICE": "cpu"}, machine=one_node,
    )  # fmt: skip
    first = result.rounds[0]
    assert first.ok and [f.rsplit(": ", 1)[1] for f in first.fails_later] == ["numa-node-per-worker"]
    assert not result.accepted_original and result.accepted
    assert result.command is not None and result.command.endswith("vllm serve m --tensor-parallel-size 1")
    # nothing probed: nothing said
    cpu = {"VLLM_TARGET_DEVICE": "cpu"}
    unprobed = validate_loop(probe, words("vllm serve m --tensor-parallel-size 2"), "0.33.0", environ=cpu)
    assert unprobed.accepted_original


def test_the_loop_stops_when_no_fix_is_known(probe: Probe) -> None:
    result = validate_loop(probe, words("FAKE_VLLM_REFUSE=1 vllm serve m"), "0.33.0")
    assert len(result.rounds) == 1 and not result.accepted
    assert result.rounds[0].error == "the fake vLLM refuses this launch for a reason nobody knows"
    assert result.stopped == "no fix is known for vLLM's error"


def test_the_loop_stops_after_max_rounds(probe: Probe) -> None:
    result = validate_loop(
        probe, words("vllm serve m --max-model-len 4096 --gpu-memory-utilization 1.5"), "0.33.0", max_rounds=1
    )
    assert len(result.rounds) == 1 and result.stopped == "stopped after 1 rounds"


def test_the_loop_stops_when_the_fix_changes_nothing(probe: Probe) -> None:
    # This vLLM refuses its own default too, in the words it uses for 1.5: the library's fix (drop the
    # flag for the default) gives the same command again.
    result = validate_loop(probe, words("FAKE_VLLM_GPU_LIMIT=0.5 vllm serve m --gpu-memory-utilization 1.5"), "0.33.0")
    assert [r.command for r in result.rounds] == [
        "FAKE_VLLM_GPU_LIMIT=0.5 vllm serve m --gpu-memory-utilization 1.5",
        "FAKE_VLLM_GPU_LIMIT=0.5 vllm serve m",
    ]
    assert not result.accepted
    assert result.stopped == "the library's fix does not change the command"


def test_a_fix_keeps_an_abbreviated_option_vllm_takes(probe: Probe) -> None:
    # vLLM's parser takes the unique prefix --max-num-seq (argparse's allow_abbrev); so does logdoctor's
    # (issue 15 part 2: it once dropped it from the fix, saying so), and the fix keeps it as written.
    result = validate_loop(probe, words("vllm serve m --max-num-seq 8 --gpu-memory-utilization 1.5"), "0.33.0")
    assert result.rounds[0].fixed_command == "vllm serve m --max-num-seq 8"
    assert result.rounds[0].dropped == []


# Where the data-defined rule sets (check without vLLM) and vLLM itself agree, and where they differ
# today. A row that changes side is news: when check learns what it lacks, move the row (and say so).
AGREEMENT = [
    # agree: check's ReplaySSM rule `mamba-backend` is unmet, and vLLM raises that rule's error.
    ("vllm serve m --use-replayssm --mamba-backend cutlass", "NemotronHForCausalLM", True),
    # agree: check's parser and vLLM's refuse the same unknown option.
    ("vllm serve m --no-such-flag", None, True),
    # agree (moved, issue 15 part 3): vLLM's parser takes the prefix --gpu-memory-util and refuses the
    # value at config construction; check's parser takes the prefix too, and its scheduler set bounds it.
    ("vllm serve m --gpu-memory-util 1.5", None, True),
    # differ: the model's context length is a model fact; without its config.json, check's rule is unknown.
    ("vllm serve m --max-model-len 4096", None, False),
    # agree (moved, issue 14 part 2): check's parser types values as vLLM's does.
    ("vllm serve m --tensor-parallel-size abc", None, True),
]


@pytest.mark.parametrize(("command", "architecture", "agree"), AGREEMENT)
def test_where_check_and_vllm_agree_and_differ(
    probe: Probe, command: str, architecture: str | None, agree: bool
) -> None:
    result = validate_loop(probe, words(command), "0.33.0", architecture=architecture, max_rounds=1)
    first = result.rounds[0]
    assert not first.ok, "vLLM refuses every row"
    assert bool(first.predicted_by) is agree, first.predicted_by


# --- the command --------------------------------------------------------------------------------------


def logdoctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("logdoctor")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=120, env=env or FAKE_ENV, check=False
    )


def fake_vllm_on_path(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "vllm"
    script.write_text(f"#!{sys.executable}\nraise SystemExit('not run by these tests')\n")
    script.chmod(0o755)
    return {**FAKE_ENV, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_cli_finds_the_vllm_on_path_and_prints_the_chain(tmp_path: Path) -> None:
    proc = logdoctor(
        "check", "--with-vllm", "--", "vllm", "serve", "m", "--max-model-len", "4096", env=fake_vllm_on_path(tmp_path)
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert f"vLLM 0.33.0 itself ({sys.executable}): asked 2 times" in out
    assert "1. refused by its config construction" in out and "memory.max-model-len-exceeds-derived" in out
    assert "2. accepted" in out
    assert "vLLM accepted the corrected command after 1 fix: vllm serve m --max-model-len 2048" in out
    assert out.rstrip().endswith("Corrected command:\nvllm serve m --max-model-len 2048")  # last, as in a report


def test_cli_json_has_the_chain(tmp_path: Path) -> None:
    proc = logdoctor(
        "check",
        "--format",
        "json",
        "--with-vllm",
        sys.executable,
        "--",
        "vllm",
        "serve",
        "m",
        "--max-model-len",
        "4096",
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kind"] == "check" and "constraints" in data  # check's own object, unchanged
    ask = data["with_vllm"]
    assert (ask["accepted"], ask["accepted_original"]) == (True, False)
    assert ask["command"] == "vllm serve m --max-model-len 2048"
    assert [r["ok"] for r in ask["rounds"]] == [False, True]
    assert ask["rounds"][0]["rule"] == "memory.max-model-len-exceeds-derived"


def test_cli_exits_0_when_vllm_accepts_the_launch_as_given() -> None:
    proc = logdoctor("check", "--with-vllm", sys.executable, "--", "vllm", "serve", "m")
    assert proc.returncode == 0, proc.stderr
    assert "vLLM accepted the launch as it is." in proc.stdout


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--with-vllm"], {"PATH": "/nonexistent"}, "logdoctor check: --with-vllm: no `vllm` on PATH"),
        (
            ["--with-vllm", "/nonexistent/python"],
            {},
            "logdoctor check: --with-vllm /nonexistent/python: no such interpreter",
        ),
        (
            ["--with-vllm", sys.executable],
            {"PYTHONPATH": "/nonexistent"},
            "import vllm (ModuleNotFoundError: No module named 'vllm')",
        ),
        (
            ["--with-vllm", sys.executable],
            {"FAKE_VLLM_CRASH": "1"},
            "died (exit status 7): fatal: the fake engine crashed",
        ),
        (["--with-vllm", sys.executable, "--config", "/nonexistent/serve.yaml"], {}, "serve.yaml: cannot read"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(args: list[str], env: dict[str, str], says: str) -> None:
    if "import vllm" in says and OWN_VLLM:
        pytest.skip("this interpreter has a vllm of its own")
    proc = logdoctor("check", *args, "--", "vllm", "serve", "m", env={**FAKE_ENV, **env})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr


# --- against a real vLLM ------------------------------------------------------------------------------

real_vllm = pytest.mark.skipif(not Path(REAL).exists(), reason=f"no real vLLM at {REAL} ($LOGDOCTOR_TEST_VLLM_PYTHON)")


@pytest.fixture(scope="module")
def real_probe() -> Probe:
    environ = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    with Probe(REAL, environ=environ) as p:
        yield p


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """A model folder with only a config.json (vLLM builds its config from it; no weights, no tokenizer)."""
    folder = tmp_path / "qwen2-tiny-14heads"
    folder.mkdir()
    config = TESTS.parent / "fixtures" / "models" / "qwen2-tiny-14heads" / "config.json"
    (folder / "config.json").write_text(config.read_text())
    return folder


@real_vllm
def test_real_vllm_accepts_a_plain_launch_and_refuses_tp_4_of_14_heads(real_probe: Probe, model_dir: Path) -> None:
    assert real_probe.ask([str(model_dir), "--load-format", "dummy"]).ok
    answer = real_probe.ask([str(model_dir), "--tensor-parallel-size", "4"])
    assert (answer.stage, answer.type) == ("config", "ValidationError")
    assert "Total number of attention heads (14) must be divisible by tensor parallel size (4)." in answer.message
    assert answer.seconds < 1.0  # once vLLM is imported, a round is well under a second


@real_vllm
def test_real_vllm_chain_fixes_gpu_memory_utilization(real_probe: Probe, model_dir: Path) -> None:
    # vLLM's parser takes the prefix --gpu-memory-util; its config refuses 1.5; the library's fix passes.
    result = validate_loop(real_probe, ["vllm", "serve", str(model_dir), "--gpu-memory-util", "1.5"], "0.33.0")
    first = result.rounds[0]
    assert (first.stage, first.rule) == ("config", "config.gpu-memory-utilization-field")
    assert result.accepted and result.command is not None and "--gpu-memory-util" not in result.command
