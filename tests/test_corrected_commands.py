"""Every corrected command logdoctor writes, for every fixture log (and every corpus log, when the labelled
corpus is on this machine: /work/shared/corpus or $LOGDOCTOR_CORPUS; CI has none), is one vLLM accepts:

1. it parses with the argument parser of the launch's release (logdoctor/launch/argspecs, dumped from the
   real vLLM): no unknown option, every value converts as vLLM converts it (`--max-model-len 2048.0` is
   refused), every choice valid. For a launch whose release logdoctor has no parser of (unknown, or older
   than the oldest dumped one), the correction may add no refusal the launch as logged did not have: the
   launch ran, so what the spec refuses in it is the spec's age, not the fix;
2. re-reading the fixed launch (the corrected command with the facts the log revealed: architecture, head
   counts, environment) the way `logdoctor check` does reports none of the rules the fix changed as unmet.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from logdoctor.audit import audit, fill_defaults
from logdoctor.doctor import Doctor
from logdoctor.launch.argspec import available_versions, load_spec
from logdoctor.launch.cmdline import parse_command
from logdoctor.launch.config import LaunchConfig
from logdoctor.launch.tracker import Launch
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.pipeline import Pipeline
from logdoctor.versions import parse_version
from tests.conftest import FIXTURES

CORPUS = Path(os.environ.get("LOGDOCTOR_CORPUS", "/work/shared/corpus"))
FIXTURE_LOGS = sorted(FIXTURES.rglob("*.log"))
CORPUS_LOGS = sorted(CORPUS.glob("*.log")) if CORPUS.is_dir() else []
OLDEST = parse_version(available_versions()[0]) or ()


def corrected(path: Path, library: Library) -> list[tuple[Finding, Launch]]:
    """The findings of a log that carry a corrected command, with the launch each belongs to."""
    doctor = Doctor(library)
    pipeline = Pipeline(doctor)
    channel = pipeline.channel(str(path))
    channel.feed(path.read_bytes())
    channel.close()
    pipeline.flush()
    launches = {launch.index: launch for launch in doctor.launches.launches(str(path))}
    return [(f, launches[f.launch]) for f in doctor.report() if f.fix.command and f.launch in launches]


def covered(version: str | None) -> bool:
    parsed = parse_version(version) if version else None
    return parsed is not None and parsed >= OLDEST


def reread(command: str, launch: Launch) -> LaunchConfig:
    """The fixed launch as `check` reads it, with the facts only the log knew (not command-line arguments)."""
    spec = load_spec(launch.version)
    config = parse_command(shlex.split(command), launch.version).config
    for name, setting in launch.config.settings.items():
        if name not in spec.by_dest and name not in config.settings:
            config.settings[name] = setting
    for name, setting in launch.config.env.items():
        config.env.setdefault(name, setting)
    fill_defaults(config, launch.version, "not on the corrected command")
    return config


def check_log(path: Path, library: Library) -> None:
    for finding, launch in corrected(path, library):
        command = finding.fix.command
        assert command is not None
        where = f"{path.name} launch {launch.index} ({finding.rule}): {command}"
        problems = parse_command(shlex.split(command), launch.version).problems
        if not covered(launch.version) and finding.fix.original_command:
            logged = parse_command(shlex.split(finding.fix.original_command), launch.version).problems
            problems = [p for p in problems if p not in logged]
        assert problems == [], f"vLLM {launch.version or '(unknown)'} would refuse {where}: {problems}"
        fixed = {c.id for c in finding.constraints if c.status == "unmet"}
        if not fixed:
            continue
        result = audit(reread(command, launch), library.sets, launch.version, renderable=False)
        still = sorted({r.id for r in result.results if r.status == "unmet"} & fixed)
        assert still == [], f"the fixed launch still breaks {still}: {where}"


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=[str(p.relative_to(FIXTURES)) for p in FIXTURE_LOGS])
def test_fixture_corrected_commands(library: Library, path: Path) -> None:
    check_log(path, library)


@pytest.mark.skipif(not CORPUS_LOGS, reason="the labelled corpus is not on this machine")
@pytest.mark.parametrize("path", CORPUS_LOGS, ids=[p.name for p in CORPUS_LOGS])
def test_corpus_corrected_commands(library: Library, path: Path) -> None:
    check_log(path, library)


def test_the_check_catches_what_vllm_refuses() -> None:
    """The test's own parser refuses what vLLM's refuses (so passing means something)."""
    assert parse_command(shlex.split("vllm serve m --max-model-len 2048.0"), "0.33.0").problems
    assert parse_command(shlex.split("vllm serve m --max-model-length 2048"), "0.33.0").problems
    assert parse_command(shlex.split("vllm serve m --mamba-cache-mode all"), "0.33.0").problems


def test_a_fix_that_drops_the_feature_leaves_none_of_its_other_rules_changes(library: Library) -> None:
    """vLLM raised `architecture` (no ReplaySSM kernel for Llama): dropping --use-replayssm ends every
    ReplaySSM rule, so the flashinfer backend and prefix caching off that three of them asked for are
    not in the command, and the summary says the feature was dropped."""
    log = FIXTURES / "real" / "vllm-0.33.0-replayssm-multi-rule-arch.log"
    (finding,) = [f for f, _ in corrected(log, library) if f.primary]
    assert finding.fix.command is not None and finding.fix.original_command is not None
    before, after = shlex.split(finding.fix.original_command), shlex.split(finding.fix.command)
    assert "--use-replayssm" in before and "--use-replayssm" not in after
    assert [t for t in after if t not in before] == []  # nothing added
    assert any("--use-replayssm" in caveat for caveat in finding.fix.caveats)
