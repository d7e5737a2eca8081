"""Preflight: read a `vllm serve` command (or vLLM `--config` YAML) the way vLLM would and check it
against every constraint set that applies, before anything is launched."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from logdoctor.audit import Audit, audit, fill_defaults
from logdoctor.launch.cmdline import parse_command, read_config_file
from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.launch.facts import add_model_facts
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.stored import constraint_sets

if TYPE_CHECKING:
    from logdoctor.withvllm import WithVllm

# Environment variables that rules read. `check` runs where the server will run, so their values (or
# their absence, which selects vLLM's default) are known.
RULE_ENV_VARS = ("VLLM_USE_V2_MODEL_RUNNER",)


@dataclass
class CheckReport:
    version: str
    audit: Audit
    problems: list[str] = field(default_factory=list)
    config: LaunchConfig | None = None
    with_vllm: WithVllm | None = None  # what vLLM itself said (`check --with-vllm`)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.audit.unmet


def newest_version() -> str:
    """The newest vLLM whose argument parser logdoctor carries: what `check` assumes by default."""
    from logdoctor.launch.argspec import available_versions

    return available_versions()[-1]


def command_words(tokens: list[str], config_file: str | None) -> list[str]:
    """The launch as one command line: `check --config FILE` is `vllm serve --config FILE`."""
    argv = list(tokens)
    if config_file is not None:
        if not argv:
            argv = ["vllm", "serve"]
        # vLLM reads `model` from the file too: lift it to the positional so it renders first.
        data = read_config_file(Path(config_file))
        if "model" in data and not any(not t.startswith("-") for t in argv[2:]):
            argv.insert(2, str(data["model"]))
        argv += ["--config", config_file]
    return argv


def build_config(
    tokens: list[str], config_file: str | None, version: str, architecture: str | None, environ: dict[str, str]
) -> tuple[LaunchConfig, list[str]]:
    argv = command_words(tokens, config_file)
    parsed = parse_command(argv, version)
    config = parsed.config
    config.set("vllm_version", version, Origin(kind="command", where="--vllm-version"))
    for name in RULE_ENV_VARS:
        if config.get(f"env.{name}") is None:
            value = environ.get(name)
            where = f"environment: {name}={value}" if value is not None else f"environment: {name} not set"
            config.set(f"env.{name}", value, Origin(kind="command", where=where))
    fill_defaults(config, version, "not on the command line")
    add_model_facts(config, architecture)
    return config, parsed.problems


def run_check(
    tokens: list[str],
    config_file: str | None = None,
    version: str | None = None,
    architecture: str | None = None,
    environ: dict[str, str] | None = None,
    sets: list[ConstraintSet] | None = None,
) -> CheckReport:
    sets = constraint_sets() if sets is None else sets
    version = version or newest_version()
    config, problems = build_config(
        tokens, config_file, version, architecture, dict(os.environ) if environ is None else environ
    )
    return CheckReport(version, audit(config, sets, version), problems, config)
