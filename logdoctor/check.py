"""Preflight: read a `vllm serve` command (or vLLM `--config` YAML) the way vLLM would and check it
against every constraint set that applies, before anything is launched."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logdoctor.audit import Audit, audit, fill_defaults
from logdoctor.launch.argspec import outside_note
from logdoctor.launch.cmdline import CommandError, ParsedCommand, parse_command, read_config_file, render_command
from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.launch.facts import add_model_facts
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.stored import constraint_sets
from logdoctor.probe import machine as machine_probe
from logdoctor.versions import parse_version

if TYPE_CHECKING:
    from logdoctor.withvllm import WithVllm


@dataclass
class CheckReport:
    version: str
    audit: Audit
    problems: list[str] = field(default_factory=list)
    config: LaunchConfig | None = None
    # Keys of the --config YAML vLLM would refuse, as the diff of the file that fixes them (`- x: v`,
    # `+ y: v`): the fix is in the file, not on the command line.
    yaml_diff: list[str] = field(default_factory=list)
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
    tokens: list[str],
    config_file: str | None,
    version: str,
    architecture: str | None,
    environ: dict[str, str],
    sets: list[ConstraintSet] | None = None,
) -> tuple[LaunchConfig, list[str]]:
    parsed = read_launch(tokens, config_file, version, architecture, environ, sets)
    return parsed.config, parsed.problems


def read_launch(
    tokens: list[str],
    config_file: str | None,
    version: str,
    architecture: str | None,
    environ: dict[str, str],
    sets: list[ConstraintSet] | None = None,
) -> ParsedCommand:
    """The launch as `check` reads it: the command (and --config file), vLLM's defaults, and what the
    rule sets declare they read: environment variables and the model's facts."""
    sets = constraint_sets() if sets is None else sets
    parsed = parse_command(command_words(tokens, config_file), version)
    config = parsed.config
    config.set("vllm_version", version, Origin(kind="command", where="--vllm-version"))
    # `check` runs where the server will run: a variable's value, or its absence (vLLM's default), is known.
    for name in dict.fromkeys(v.name for cset in sets for v in cset.env):
        if config.get(f"env.{name}") is None:
            value = environ.get(name)
            where = f"environment: {name}={value}" if value is not None else f"environment: {name} not set"
            config.set(f"env.{name}", value, Origin(kind="command", where=where))
    # The command's own VAR=value words count as the environment, as they do for one variable.
    here = dict(environ) | {n: s.value for n, s in config.env.items() if isinstance(s.value, str)}
    for group in {g.field: g for cset in sets for g in cset.env_group}.values():
        if config.get(group.field) is None:
            members = group.members(here)
            where = "environment: " + (", ".join(members) if members else "none set")
            config.set(group.field, members, Origin(kind="command", where=where))
    # `vllm serve` without MODEL is refused by vLLM itself (the parser problem says so): no rule may read
    # EngineArgs' default model, nor a corrected command name it.
    fill_defaults(config, version, "not on the command line", skip=frozenset({"model"}))
    add_model_facts(config, [f for cset in sets for f in cset.fact], architecture, environ)
    return parsed


def run_check(
    tokens: list[str],
    config_file: str | None = None,
    version: str | None = None,
    architecture: str | None = None,
    environ: dict[str, str] | None = None,
    sets: list[ConstraintSet] | None = None,
    machine: machine_probe.MachineProbe | None = machine_probe.probe,
) -> CheckReport:
    """`machine` tests the machine the server will run on (this one: `check` runs there) for the facts
    the sets declare (`machine = "port_free"`); None leaves them unknown. Tests inject their own."""
    sets = constraint_sets() if sets is None else sets
    version = version or newest_version()
    if parse_version(version) is None:
        raise CommandError(f"unknown vLLM version {version!r}: {carried_versions()}")
    environ = dict(os.environ) if environ is None else environ
    parsed = read_launch(tokens, config_file, version, architecture, environ, sets)
    config = parsed.config
    add_machine_facts(config, sets, machine)
    result = audit(config, sets, version)
    report = CheckReport(version, result, parsed.problems, config)
    report.yaml_diff = list(parsed.yaml_diff)
    note = outside_note(version)
    if note is not None:
        result.caveats.append(note + _unvouched(config, version))
        result.caveats.append(rules_note(version, sets))
    if parsed.renames or parsed.unknown:
        # Options vLLM would refuse: the nearest real one when there is exactly one, else left out (said).
        fixed_tokens = correct_options(tokens, parsed.renames, parsed.unknown)
        fixed, _ = build_config(fixed_tokens, config_file, version, architecture, environ, sets)
        corrected = audit(fixed, sets, version)
        result.before = shlex.join(tokens if tokens else ["vllm", "serve"])
        result.after = corrected.after or render_command(fixed, version)
        result.caveats += [
            f"replaces {old} with {new} (the nearest option of vLLM {version})" for old, new in parsed.renames.items()
        ]
        result.caveats += [
            f"drops {option}: vLLM {version} has no such option and none near it" for option in parsed.unknown
        ]
        result.caveats += [c for c in corrected.caveats if c not in result.caveats]
    return report


def rules_note(version: str, sets: list[ConstraintSet]) -> str:
    """Which rules checked a version outside the releases logdoctor's sets were verified against: the
    newest release's (the sets open to newer ones), or none."""
    from logdoctor.library.constraints import sets_for

    used = sets_for(sets, version)
    if not used:
        return (
            f"no rule set of logdoctor covers vLLM {version}: no rule was checked (they start at {oldest_floor(sets)})"
        )
    ranges = sorted({s.versions for s in used})
    return f"vLLM {version} was checked with the rules verified for vLLM {', '.join(ranges)}"


def oldest_floor(sets: list[ConstraintSet]) -> str:
    """The oldest release any set covers, as its range starts (`0.27`)."""
    floors = sorted(
        {m.group(1) for s in sets if (m := re.match(r">=([\d.]+)", s.versions))}, key=lambda v: parse_version(v) or ()
    )
    return floors[0] if floors else "?"


def carried_versions() -> str:
    """The releases whose parsers logdoctor carries, for an error that names them."""
    from logdoctor.launch.argspec import available_versions

    return "logdoctor carries the parsers of vLLM " + ", ".join(available_versions())


def _unvouched(config: LaunchConfig, version: str) -> str:
    """The options of the command read with another release's parser: whether `version` has them (or
    takes their values alike) logdoctor cannot tell."""
    options = [words[0].partition("=")[0] for dest, words in config.written.items() if dest != "model" and words]
    options = [o for o in dict.fromkeys(options) if o.startswith("-")]
    if not options:
        return ""
    return f"; whether vLLM {version} takes {', '.join(options)} logdoctor cannot tell"


def add_machine_facts(
    config: LaunchConfig, sets: list[ConstraintSet], machine: machine_probe.MachineProbe | None
) -> None:
    """The machine facts the sets declare, from one probe of the launch's --host and --port (vLLM's own
    bind test, closed at once); left unknown when there is no probe or nothing to bind."""
    wanted = {f.name: f.machine for cset in sets for f in cset.fact if f.machine is not None}
    host, port = config.value("host"), config.value("port")
    if not wanted or machine is None or not (host is None or isinstance(host, str)) or type(port) is not int:
        return
    found: dict[str, Any] = {**machine(host, port), "probed_host": host, "probed_port": port}
    where = f"bind test of {host or '*'}:{port} where check runs"
    for name, kind in wanted.items():
        if kind in found:
            config.set(name, found[kind], Origin(kind="derived", where=where))


def correct_options(tokens: list[str], renames: dict[str, str], unknown: list[str]) -> list[str]:
    """The command with each refused option renamed to its nearest real one, or removed with its value."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        option, has_inline, inline = token.partition("=")
        i += 1
        if option in renames:
            out.append(renames[option] + (f"={inline}" if has_inline else ""))
            continue
        if option in unknown:
            if not has_inline and i < len(tokens) and not tokens[i].startswith("-"):
                i += 1  # its value goes with it
            continue
        out.append(token)
    return out
