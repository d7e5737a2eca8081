"""What a log's header reveals about its launch, checked on real vLLM logs: the LaunchConfig read from
the header agrees with the command that produced the log."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from logdoctor.launch.cmdline import parse_command
from logdoctor.library.matcher import Library
from logdoctor.scan import diagnose_file
from tests.conftest import FIXTURES
from tests.test_e2e import logdoctor_exe

REAL = sorted(p for p in (FIXTURES / "real").glob("vllm-0.33.0-*.log") if "argparse" not in p.name)


@pytest.mark.parametrize("log", REAL, ids=lambda p: p.name)
def test_header_config_matches_the_command_that_made_the_log(library: Library, log: Path) -> None:
    meta = tomllib.loads(log.with_name(log.name.removesuffix(".log") + ".meta.toml").read_text())
    command = parse_command(shlex.split(meta["command"]), "0.33.0").config
    doctor, _ = diagnose_file(log, library)
    (launch,) = doctor.launches.launches(str(log))
    assert launch.version == "0.33.0"
    config = launch.config
    assert sorted(config.given) == sorted(command.given)
    for dest in command.given:
        expected = command.value(dest)
        # What the user wrote, as the header shows it (vLLM may resolve the value differently later).
        written = parse_command(["vllm", "serve", *config.written[dest]], "0.33.0").config.value(dest)
        if isinstance(expected, dict) and isinstance(written, dict):
            written = {k: v for k, v in written.items() if k in expected}  # vLLM prints the dataclass's defaults
        assert written == expected, dest
        assert config.get(dest).origin.where.startswith(f"{log}:")  # type: ignore[union-attr]


def test_several_launches_in_one_file_each_carry_their_own_config(tmp_path: Path, library: Library) -> None:
    first = FIXTURES / "real" / "vllm-0.33.0-replayssm-kv-connector.log"
    second = FIXTURES / "real" / "vllm-0.33.0-replayssm-flashinfer-prefix-caching.log"
    joined = tmp_path / "restarts.log"
    joined.write_bytes(first.read_bytes() + second.read_bytes())
    doctor, findings = diagnose_file(joined, library)
    assert doctor.launches.count(str(joined)) == 2
    primaries = {f.launch: f for f in findings if f.primary}
    assert primaries[1].rule == "replayssm.kv-connector"
    assert primaries[2].rule == "replayssm.flashinfer-prefix-caching"
    assert "--kv-transfer-config" in (primaries[1].fix.original_command or "")
    assert "--kv-transfer-config" not in (primaries[2].fix.original_command or "")


def test_multi_rule_launch_every_broken_rule_and_a_command_that_passes(tmp_path: Path) -> None:
    log = FIXTURES / "real" / "vllm-0.33.0-replayssm-multi-rule.log"
    out = subprocess.run([logdoctor_exe(), "scan", "--format", "json", str(log)], capture_output=True, text=True)
    (primary,) = [f for f in map(json.loads, out.stdout.splitlines()) if f.get("primary")]
    assert primary["rule"] == "replayssm.flashinfer-spec-decode-prefix-caching"
    unmet = {c["id"] for c in primary["constraints"] if c["status"] == "unmet"}
    assert unmet == {"spec-decode-no-prefix-caching", "no-kv-connector"}
    raised = [c["id"] for c in primary["constraints"] if c["raised_by_vllm"]]
    assert raised == ["spec-decode-no-prefix-caching"]
    # The model folder named in the log is gone on this machine; give `check` one with the same config.
    folder = tmp_path / "nemotron-h-tiny"
    folder.mkdir()
    (folder / "config.json").write_bytes((FIXTURES / "models" / "nemotron-h-tiny" / "config.json").read_bytes())
    command = primary["fix"]["command"].replace("/work/vllm-models/nemotron-h-tiny", str(folder))
    check = subprocess.run(
        [logdoctor_exe(), "check", "--format", "json", "--vllm-version", "0.33.0", "--", *shlex.split(command)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin", "LOGDOCTOR_CACHE": os.environ["LOGDOCTOR_CACHE"]},  # the tests' cache
    )
    report = json.loads(check.stdout)
    assert check.returncode == 0 and report["ok"], report
    assert not [c for c in report["constraints"] if c["status"] == "unmet"]


def test_options_absent_from_the_args_line_are_checked_at_the_releases_defaults(library: Library) -> None:
    # The log's `non-default args` omit --mamba-backend: the rule on it is judged at 0.33.0's default
    # (triton), not left unknown for want of a value.
    log = FIXTURES / "real" / "vllm-0.33.0-replayssm-triton-model-runner-v2.log"
    _, findings = diagnose_file(log, library)
    (primary,) = [f for f in findings if f.primary]
    statuses = {c.id: c.status for c in primary.constraints}
    assert statuses["mamba-backend"] == statuses["no-kv-connector"] == "met"
    (backend,) = [c for c in primary.constraints if c.id == "mamba-backend"]
    assert "mamba_backend = 'triton' (vLLM 0.33.0 default (absent from the log's non-default args))" in backend.evidence
