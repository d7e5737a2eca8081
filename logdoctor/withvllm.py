"""`logdoctor check --with-vllm`: ask the user's own vLLM whether it accepts the launch, and fix it in a loop.

The vLLM installed where the server will run is the authority on what it accepts. Its interpreter runs
logdoctor/probe/vllm_probe.py (by path: it imports nothing of logdoctor) as one long-lived child that
imports vLLM once and then answers one JSON line per launch: vLLM's own argument parser and config
construction (`EngineArgs.create_engine_config`), no engine, no weights, no GPU memory.

The loop: validate; on a refusal, diagnose vLLM's error with the library (the error as it would appear
in the log), apply the finding's corrected command, validate again; until vLLM accepts, no fix is known,
the fix changes nothing, or a command comes back. The rounds are the errors that one restart at a time
would have shown, and the last command is one vLLM itself accepted.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logdoctor.audit import Audit
    from logdoctor.launch.config import LaunchConfig
    from logdoctor.library.matcher import Library
    from logdoctor.library.rules import ConstraintSet
    from logdoctor.model import Finding
    from logdoctor.probe.machine import MachineProbe

PROBE = Path(__file__).resolve().parent / "probe" / "vllm_probe.py"
# Importing vLLM takes 10-20 s on a quiet machine, and the first launch of an architecture longer: vLLM
# inspects the model class in a subprocess once (cached under ~/.cache/vllm). Generous, for busy hosts.
READY_TIMEOUT = float(os.environ.get("LOGDOCTOR_VLLM_TIMEOUT", 600))
ROUND_TIMEOUT = READY_TIMEOUT
MAX_ROUNDS = 10
NO_FIX = "no fix is known for vLLM's error"


class WithVllmError(Exception):
    """A one-line reason `--with-vllm` cannot ask vLLM (exit status 2)."""


# --- which interpreter ------------------------------------------------------------------------------


def find_python(given: str | None, environ: dict[str, str] | None = None) -> str:
    """The interpreter to ask: PYTHON as given (a path or a name on PATH), else the one the `vllm` on
    PATH runs (its shebang)."""
    path = (environ if environ is not None else os.environ).get("PATH")
    if given:
        found = shutil.which(given, path=path) if os.sep not in given else given
        if found is None or not os.access(found, os.X_OK) or os.path.isdir(found):
            raise WithVllmError(f"--with-vllm {given}: no such interpreter")
        return found
    vllm = shutil.which("vllm", path=path)
    if vllm is None:
        raise WithVllmError(
            "--with-vllm: no `vllm` on PATH; give the interpreter of the environment vLLM is installed in, "
            "e.g. `--with-vllm /path/to/venv/bin/python`"
        )
    python = shebang_python(Path(vllm), path)
    if python is None:
        raise WithVllmError(
            f"--with-vllm: cannot tell which Python {vllm} runs (no Python shebang); give it, "
            "e.g. `--with-vllm /path/to/venv/bin/python`"
        )
    return python


def shebang_python(script: Path, path: str | None = None) -> str | None:
    """The interpreter of a console script: `#!/venv/bin/python`, `#!/usr/bin/env python3`, or pip's
    `#!/bin/sh` trampoline for long paths (`'''exec' "/venv/bin/python" "$0" "$@"`)."""
    try:
        with open(script, "rb") as f:
            head = f.read(1024).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    words = shlex.split(head[0][2:].strip() or "-")
    if Path(words[0]).name in ("sh", "bash") and len(head) > 1 and head[1].startswith("'''exec' "):
        words = shlex.split(head[1][len("'''exec' ") :])[:1]
    if Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")][:1]
        found = shutil.which(words[0], path=path) if words else None
        words = [found] if found else []
    if not words or not Path(words[0]).name.startswith("python"):
        return None
    return words[0]


# --- the probe ----------------------------------------------------------------------------------------


@dataclass
class Answer:
    """vLLM's verdict on one launch."""

    ok: bool
    stage: str | None = None  # parser | validate | serve | config
    type: str | None = None
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0
    log: str = ""  # what vLLM logged while it answered

    @classmethod
    def of(cls, data: dict[str, Any]) -> Answer:
        return cls(
            ok=bool(data.get("ok")),
            stage=data.get("stage"),
            type=data.get("type"),
            message=str(data.get("message", "")),
            traceback=str(data.get("traceback") or data.get("traceback_tail") or ""),
            seconds=float(data.get("seconds", 0.0)),
            log=str(data.get("log") or ""),
        )


class Probe:
    """The user's interpreter running vllm_probe.py: started once, asked many times."""

    def __init__(self, python: str, environ: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.python = python
        self.environ = dict(os.environ if environ is None else environ)
        self.cwd = cwd
        self.vllm_version: str | None = None
        self.import_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stderr: IO[bytes] | None = None

    def __enter__(self) -> Probe:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the interpreter (it imports vLLM meanwhile: wait_ready() waits for it)."""
        # vLLM's own log; its last line says why a probe died. Closed by close().
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                [self.python, str(PROBE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=self.environ,
                cwd=self.cwd,
            )
        except OSError as exc:
            raise WithVllmError(f"--with-vllm: cannot run {self.python}: {exc.strerror or exc}") from None
        stdout = self._proc.stdout
        assert stdout is not None
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    def wait_ready(self) -> None:
        ready = self._receive(READY_TIMEOUT, "to import vllm")
        if not ready.get("ready"):
            first = str(ready.get("message", "")).strip().splitlines()
            error = f"{ready.get('type')}: {first[0]}" if first else str(ready.get("type"))
            self.close()
            raise WithVllmError(f"--with-vllm: {self.python} cannot import vllm ({error})")
        self.vllm_version = str(ready.get("vllm_version"))
        self.import_seconds = float(ready.get("import_seconds", 0.0))

    def ask(self, argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> Answer:
        """vLLM's verdict on `vllm serve ARGV` (with `env` set for this launch only)."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise WithVllmError("--with-vllm: the probe is not running")
        request = {"argv": argv, "env": env or {}, "cwd": cwd}
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
        except OSError:
            raise WithVllmError(self._died()) from None
        data = self._receive(ROUND_TIMEOUT, "to validate the launch")
        if data.get("died"):  # the fork asking vLLM ended without an answer
            raise WithVllmError(self._died(data.get("status")))
        return Answer.of(data)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                proc.wait(5 if self.vllm_version is not None else 0)  # still importing: nothing to finish
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output: the probe exited

    def _receive(self, timeout: float, doing: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            message = f"--with-vllm: {self.python} took more than {timeout:.0f} s {doing}"
            self.close()
            raise WithVllmError(message) from None
        if not line:
            raise WithVllmError(self._died())
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise WithVllmError(f"--with-vllm: the probe answered {line[:200]!r}, not a JSON object")
        return data

    def _died(self, status: int | None = None) -> str:
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                exited = proc.wait(5)
                status = exited if status is None else status
        last = self._last_stderr_line()
        how = f" (exit status {status})" if status is not None else ""
        self.close()
        return f"--with-vllm: the probe ({self.python}) died{how}" + (f": {last}" if last else "")

    def _last_stderr_line(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [line.strip() for line in self._stderr.read().decode("utf-8", "replace").splitlines()]
        return next((line for line in reversed(lines) if line), "")


# --- the loop -----------------------------------------------------------------------------------------


@dataclass
class Round:
    """One launch vLLM was asked about: what it said, what logdoctor made of it, and the change made."""

    number: int
    command: str
    ok: bool
    seconds: float
    stage: str | None = None
    error_type: str | None = None
    error: str | None = None  # vLLM's message, first lines
    message: str | None = None  # vLLM's whole message (an argparse refusal: what the parser printed)
    rule: str | None = None  # the library's pattern for it
    title: str | None = None
    fix: str | None = None  # the finding's fix, in words
    fixed_command: str | None = None  # the command the next round asks about
    fix_from: str | None = None  # "finding" (the pattern or its rule set) | "rules" (check's own audit)
    predicted_by: list[str] = field(default_factory=list)  # check's unmet rules / parser problems for it
    dropped: list[str] = field(default_factory=list)  # options vLLM took, logdoctor did not know, the fix left out
    # vLLM's validation accepted the launch, but check's rules of stage `engine` (raised after validation:
    # the engine core, the workers) are unmet: the launch still fails, later than this probe looks.
    fails_later: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "round": self.number,
            "command": self.command,
            "ok": self.ok,
            "seconds": self.seconds,
            "stage": self.stage,
            "error_type": self.error_type,
            "error": self.error,
            "message": self.message,
            "rule": self.rule,
            "title": self.title,
            "fix": self.fix,
            "fixed_command": self.fixed_command,
            "fix_from": self.fix_from,
            "predicted_by": self.predicted_by,
            "dropped": self.dropped,
            "fails_later": self.fails_later,
        }


@dataclass
class WithVllm:
    python: str
    vllm_version: str | None
    import_seconds: float | None
    rounds: list[Round] = field(default_factory=list)
    stopped: str = ""  # why the loop ended, in words

    @property
    def accepted(self) -> bool:
        """vLLM accepted the last command asked about, and no rule of check says it fails after validation."""
        return bool(self.rounds) and self.rounds[-1].ok and not self.rounds[-1].fails_later

    @property
    def accepted_original(self) -> bool:
        return bool(self.rounds) and self.rounds[0].ok and not self.rounds[0].fails_later

    @property
    def command(self) -> str | None:
        """The corrected command vLLM accepted (None when it accepted none, or the original as it was)."""
        return self.rounds[-1].command if self.accepted and len(self.rounds) > 1 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "python": self.python,
            "vllm_version": self.vllm_version,
            "import_seconds": self.import_seconds,
            "accepted": self.accepted,
            "accepted_original": self.accepted_original,
            "command": self.command,
            "stopped": self.stopped,
            "rounds": [r.as_dict() for r in self.rounds],
        }


def validate_loop(
    probe: Probe,
    words: list[str],
    version: str,
    architecture: str | None = None,
    environ: dict[str, str] | None = None,
    library: Library | None = None,
    sets: list[ConstraintSet] | None = None,
    cwd: str | None = None,
    max_rounds: int = MAX_ROUNDS,
    machine: MachineProbe | None = None,
) -> WithVllm:
    """Ask vLLM about `words` (a whole `vllm serve ...` command), fix what it refuses, ask again.
    `machine` probes this machine for the rules vLLM raises after validation (check's own probe)."""
    from logdoctor.api import default_library
    from logdoctor.launch.cmdline import _split_program
    from logdoctor.library.stored import constraint_sets

    library = library or default_library()
    sets = constraint_sets() if sets is None else sets
    environ = dict(os.environ) if environ is None else environ
    result = WithVllm(probe.python, probe.vllm_version, probe.import_seconds)
    seen: set[tuple[str, ...]] = set()
    while True:
        seen.add(tuple(words))
        env, _program, args = _split_program(words)
        answer = probe.ask(args, env, cwd)
        round_ = Round(len(result.rounds) + 1, shlex.join(words), answer.ok, answer.seconds)
        result.rounds.append(round_)
        if answer.ok:
            fixed = _after_validation(round_, words, version, architecture, environ, sets, machine)
            if not round_.fails_later:
                result.stopped = "vLLM accepted the launch"
                return result
            result.stopped = "vLLM's validation accepted the launch; check's rules say it fails after: " + ", ".join(
                round_.fails_later
            )
            if fixed is None or tuple(fixed) in seen or len(result.rounds) >= max_rounds:
                return result
            words = fixed
            continue
        round_.stage, round_.error_type = answer.stage, answer.type
        round_.error, round_.message = _first_lines(answer.message), answer.message
        fixed, why_not = _fix(round_, answer, words, version, architecture, environ, library, sets)
        if fixed is None:
            result.stopped = why_not
            return result
        if tuple(fixed) in seen:
            result.stopped = "the library's fix gives back a command vLLM already refused"
            return result
        if len(result.rounds) >= max_rounds:
            result.stopped = f"stopped after {max_rounds} rounds"
            return result
        words = fixed


def _fix(
    round_: Round,
    answer: Answer,
    words: list[str],
    version: str,
    architecture: str | None,
    environ: dict[str, str],
    library: Library,
    sets: list[ConstraintSet],
) -> tuple[list[str] | None, str]:
    """Diagnose vLLM's refusal as the log would show it; the command its fix gives, or None and why not.
    The finding's own corrected command first (its rule set's, or its pattern's flag change), else the
    one check's rules give for the launch."""
    from logdoctor.api import diagnose_text
    from logdoctor.diagnose import attach_launch_fix
    from logdoctor.launch.tracker import Launch

    why_not = NO_FIX
    # What vLLM logged, then its exception: the log a restart would have shown, up to where it stopped.
    text = "\n".join(part for part in (answer.log.rstrip("\n"), answer.traceback or answer.message) if part)
    findings = [f for f in diagnose_text(text, library) if f.severity == "error"]
    finding = next((f for f in findings if f.primary), findings[0] if findings else None)
    if finding is not None:
        round_.rule, round_.title, round_.fix = finding.rule, finding.title, finding.fix.summary
    checked = _own_audit(words, version, architecture, environ, sets)
    if checked is None:  # e.g. a --config file logdoctor cannot read: vLLM's word is all there is
        return None, NO_FIX
    config, problems, own = checked
    if finding is not None:
        round_.predicted_by = _predicted_by(finding, answer, config, own, problems, sets, version)
        launch = Launch(1, 1, version=version, config=config.copy_deep(), args_line=1)
        attach_launch_fix(finding, launch, library)
        if finding.fix.command and finding.fix.command != finding.fix.original_command:
            round_.fixed_command, round_.fix_from = finding.fix.command, "finding"
        elif finding.fix.command or finding.fix.original_command:  # its changes are already in the command
            why_not = "the library's fix does not change the command"
    if round_.fixed_command is None and own.after and own.after != own.before:
        round_.fixed_command, round_.fix_from = own.after, "rules"
    if round_.fixed_command is None:
        return None, why_not
    fixed = shlex.split(round_.fixed_command)
    if answer.stage != "parser":  # vLLM's parser took every option: one logdoctor's did not know is real
        round_.dropped = [o for o in _unknown_options(problems) if not _mentions(fixed, o)]
    return fixed, ""


def _after_validation(
    round_: Round,
    words: list[str],
    version: str,
    architecture: str | None,
    environ: dict[str, str],
    sets: list[ConstraintSet],
    machine: MachineProbe | None,
) -> list[str] | None:
    """For a launch vLLM's validation accepted: check's unmet rules vLLM raises only after it (stage
    `engine`, e.g. the CPU workers' NUMA binding) go in `fails_later`; the command their fix gives, or None."""
    checked = _own_audit(words, version, architecture, environ, sets, machine)
    if checked is None:
        return None
    own = checked[2]
    round_.fails_later = [f"{r.set}: {r.id}" for r in own.unmet if r.after_validation]
    if not round_.fails_later or not own.after or own.after == own.before:
        return None
    round_.fixed_command, round_.fix_from = own.after, "rules"
    return shlex.split(own.after)


def _own_audit(
    words: list[str],
    version: str,
    architecture: str | None,
    environ: dict[str, str],
    sets: list[ConstraintSet],
    machine: MachineProbe | None = None,
) -> tuple[LaunchConfig, list[str], Audit] | None:
    """check's own reading of the launch (its config, parser problems and audit), with the machine facts
    `machine` probes; None when logdoctor cannot read the command (a --config file it cannot open)."""
    from logdoctor.audit import audit
    from logdoctor.check import add_machine_facts, build_config
    from logdoctor.launch.cmdline import CommandError

    try:
        config, problems = build_config(words, None, version, architecture, environ)
    except CommandError:
        return None
    add_machine_facts(config, sets, machine)
    return config, problems, audit(config, sets, version)


def _unknown_options(problems: list[str]) -> list[str]:
    """The options check's parser called unknown (a corrected command is rendered without them)."""
    return [m.group(1) for p in problems if (m := re.match(r"unknown option (\S+):", p))]


def _mentions(words: list[str], option: str) -> bool:
    return any(w == option or w.startswith(option + "=") for w in words)


def _predicted_by(
    finding: Finding,
    answer: Answer,
    config: Any,
    own: Any,
    problems: list[str],
    sets: list[ConstraintSet],
    version: str,
) -> list[str]:
    """What `check` without vLLM said about this error: its unmet rules that own the finding's pattern,
    or, for a refusal of vLLM's parser, the problems it found naming the same option."""
    from logdoctor.audit import audit

    raised = audit(config, sets, version, finding.rule, raised_message=finding.error.message)
    owning = {(r.set, r.id) for r in raised.results if r.raised_by_vllm}
    found = [f"{r.set}: {r.id}" for r in own.unmet if (r.set, r.id) in owning]
    if answer.stage == "parser" and problems:
        found += [p for p in problems if names_same_option(answer.message, p)]
    return found


def names_same_option(refusal: str, problem: str) -> bool:
    """Does check's parser problem name an option vLLM's parser refused (`--max_model_len` is
    `--max-model-len`, a YAML key `max-model-len` too)? A refusal naming no option matches any problem."""
    refused = {
        o.split("=", 1)[0].lstrip("-").replace("_", "-") for o in re.findall(r"(?<![\w-])--?[A-Za-z][\w.-]*", refusal)
    }
    spelled = problem.replace("_", "-")
    return not refused or any(re.search(rf"(?<![\w.-])-*{re.escape(name)}(?![\w-])", spelled) for name in refused)


def _first_lines(text: str, limit: int = 3) -> str:
    """vLLM's message without pydantic's trimmings (` [type=..., input_value=...]`, the docs link)."""
    lines = [re.sub(r"\s*\[type=[^\]]*\]?$", "", line.rstrip()) for line in text.strip().splitlines()]
    lines = [line for line in lines if line.strip() and "errors.pydantic.dev" not in line]
    return "\n".join(lines[:limit])
