#!/usr/bin/env python3
"""Differential test of logdoctor's ReplaySSM rules against the real vLLM (run by hand, not in CI).

For many `--use-replayssm` flag combinations it runs the real `vllm serve` (in its own virtual
environment, see bench/vllm_env.sh) and `logdoctor check` on the same command, and reports:

  (a) of the launches where vLLM raised a ReplaySSM error: how often that rule is among logdoctor's
      unmet rules (want 100%);
  (b) launches where logdoctor says every rule is met and vLLM still raises a ReplaySSM error (want 0);
  (c) for every failing launch: `logdoctor scan` on vLLM's real output names the right pattern as the
      root cause, and its corrected command passes vLLM's validation (run again, for real).

It also lists the launches where logdoctor finds a rule unmet that vLLM accepted (a rule raised only
when the model is built, such as the tensor-parallel head rule, cannot show up here: vLLM's validation
passes first, and on a CPU-only machine the engine fails before building the model).

    python bench/differential.py --vllm /work/vllm033/bin/vllm --count 64 --jobs 2

vLLM runs until it either raises or logs `Initializing a V1 LLM engine` (its configuration was
accepted); then it is stopped. Every run sets VLLM_USE_V2_MODEL_RUNNER explicitly: on a CPU-only
machine vLLM's default model runner differs from a GPU machine's, which is what logdoctor models.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.33.0"
ACCEPTED = "Initializing a V1 LLM engine"  # logged by the engine core once the configuration is valid
RUN_TIMEOUT = 300

DIMENSIONS: dict[str, list[str]] = {
    "model": ["nemotron-h-tiny", "nemotron-h-tiny-3mambaheads", "llama-tiny"],
    "backend": ["", "--mamba-backend triton", "--mamba-backend flashinfer", "--mamba-backend cpu"],
    "spec": [
        "",
        """--speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'""",
        """--speculative-config '{"method": "ngram", "num_speculative_tokens": 20, "prompt_lookup_max": 4}'""",
    ],
    "kv": ["", """--kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'"""],
    "prefix": ["", "--enable-prefix-caching", "--no-enable-prefix-caching"],
    "buffer": ["", "--replayssm-buffer-len 2", "--replayssm-buffer-len 32"],
    "tp": ["", "--tensor-parallel-size 2"],
    "runner": ["0", "1"],
}


@dataclass
class Case:
    name: str
    command: str  # without the environment
    runner: str  # VLLM_USE_V2_MODEL_RUNNER
    vllm_outcome: str = ""  # accepted | replayssm:<rule> | other:<message> | timeout
    vllm_message: str = ""
    log: str = ""
    check_unmet: list[str] = field(default_factory=list)
    check_unknown: list[str] = field(default_factory=list)
    check_command: str | None = None
    scan_primary: str | None = None
    scan_command: str | None = None
    fixed_outcome: str | None = None
    fixed_message: str = ""


def sample_cases(count: int, seed: int, models: Path) -> list[Case]:
    keys = list(DIMENSIONS)
    every = list(itertools.product(*DIMENSIONS.values()))
    rng = random.Random(seed)
    chosen = rng.sample(every, min(count, len(every)))
    # Make sure every value of every dimension occurs at least once.
    for position, key in enumerate(keys):
        for value in DIMENSIONS[key]:
            if not any(c[position] == value for c in chosen):
                extra = list(rng.choice(every))
                extra[position] = value
                chosen.append(tuple(extra))
    cases = []
    for n, combo in enumerate(chosen):
        values = dict(zip(keys, combo, strict=True))
        flags = " ".join(v for k, v in values.items() if k not in ("model", "runner") and v)
        command = f"vllm serve {models / values['model']} --use-replayssm --load-format dummy {flags}".strip()
        cases.append(Case(name=f"case{n:03d}", command=command, runner=values["runner"]))
    return cases


def rule_messages(version: str) -> list[tuple[str, re.Pattern[str], list[str]]]:
    """(rule id, regex of its vLLM message, its pattern ids) for the set that applies to `version`."""
    sys.path.insert(0, str(ROOT))
    from logdoctor.library.constraints import message_regex, sets_for
    from logdoctor.library.loader import load_constraint_sets

    return [
        (rule.id, message_regex(rule.vllm_message), rule.patterns)
        for cset in sets_for(load_constraint_sets(), version)
        for rule in cset.rule
    ]


def run_vllm(vllm: str, command: str, runner: str, log_path: Path) -> tuple[str, str]:
    """Run the real vLLM until it raises or accepts its configuration; return (outcome, message)."""
    tokens = shlex.split(command)
    env_assignments = {}
    while tokens and "=" in tokens[0] and tokens[0].split("=", 1)[0].isidentifier():
        name, value = tokens.pop(0).split("=", 1)
        env_assignments[name] = value
    assert tokens[:2] == ["vllm", "serve"], command
    env = {
        **os.environ,
        "VLLM_TARGET_DEVICE": "cpu",
        "HF_HUB_OFFLINE": "1",
        "NO_COLOR": "1",
        "VLLM_USE_V2_MODEL_RUNNER": runner,
        **env_assignments,
    }
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [vllm, *tokens[1:]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        assert proc.stdout is not None
        deadline = time.monotonic() + RUN_TIMEOUT
        accepted = False
        for line in proc.stdout:
            log.write(line)
            if ACCEPTED.encode() in line:
                accepted = True
                break
            if time.monotonic() > deadline:
                break
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    text = log_path.read_text("utf-8", "replace")
    if accepted:
        return "accepted", ""
    return "failed", text


def classify(text: str, rules: list[tuple[str, re.Pattern[str], list[str]]]) -> tuple[str, str]:
    for rule_id, pattern, _ in rules:
        match = pattern.search(text)
        if match:
            return f"replayssm:{rule_id}", match.group(0)
    tail = [line for line in text.splitlines() if line.strip()][-1:] or ["(no output)"]
    return "other", tail[0][-300:]


def logdoctor_json(*args: str, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    exe = Path(sys.executable).with_name("logdoctor")
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"logdoctor {' '.join(args)} failed: {proc.stderr}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [line for line in lines if line.get("kind") != "summary"]  # each file's summary line


def evaluate(case: Case, vllm: str, workdir: Path, rules: list[tuple[str, re.Pattern[str], list[str]]]) -> Case:
    log_path = workdir / f"{case.name}.log"
    outcome, text = run_vllm(vllm, case.command, case.runner, log_path)
    case.log = str(log_path)
    if outcome == "accepted":
        case.vllm_outcome = "accepted"
    else:
        case.vllm_outcome, case.vllm_message = classify(text, rules)
    env = {**os.environ, "VLLM_USE_V2_MODEL_RUNNER": case.runner}
    (check,) = logdoctor_json(
        "check", "--format", "json", "--vllm-version", VERSION, "--", *shlex.split(case.command), env=env
    )
    constraints = check["constraints"]
    assert isinstance(constraints, list)
    case.check_unmet = [c["id"] for c in constraints if c["status"] == "unmet"]
    case.check_unknown = [c["id"] for c in constraints if c["status"] == "unknown"]
    case.check_command = check["command"]  # type: ignore[assignment]
    if case.vllm_outcome.startswith("replayssm:"):
        findings = logdoctor_json("scan", "--format", "json", str(log_path))
        primary = next((f for f in findings if f["primary"]), None)
        if primary is not None:
            case.scan_primary = str(primary["rule"])
            fix = primary["fix"]
            assert isinstance(fix, dict)
            case.scan_command = fix.get("command")
        if case.scan_command:
            runner = case.runner
            fixed_log = workdir / f"{case.name}-fixed.log"
            outcome, text = run_vllm(vllm, case.scan_command, runner, fixed_log)
            case.fixed_outcome, case.fixed_message = (
                ("accepted", "") if outcome == "accepted" else classify(text, rules)
            )
    return case


def summarize(cases: list[Case], rules: list[tuple[str, re.Pattern[str], list[str]]]) -> dict[str, object]:
    patterns_of = {rule_id: pats for rule_id, _, pats in rules}
    raised = [c for c in cases if c.vllm_outcome.startswith("replayssm:")]
    a_hits = [c for c in raised if c.vllm_outcome.split(":", 1)[1] in c.check_unmet]
    b_misses = [c for c in raised if not c.check_unmet]
    c_scan = [c for c in raised if c.scan_primary in patterns_of.get(c.vllm_outcome.split(":", 1)[1], [])]
    c_fixed = [c for c in raised if c.fixed_outcome is not None and not c.fixed_outcome.startswith("replayssm:")]
    over = [c for c in cases if c.vllm_outcome == "accepted" and c.check_unmet]
    return {
        "cases": len(cases),
        "vllm_raised_replayssm": len(raised),
        "vllm_accepted": sum(c.vllm_outcome == "accepted" for c in cases),
        "vllm_other_error": sum(c.vllm_outcome == "other" for c in cases),
        "a_raised_rule_among_unmet": f"{len(a_hits)}/{len(raised)}",
        "b_all_met_but_vllm_raised": len(b_misses),
        "c_scan_names_the_right_pattern": f"{len(c_scan)}/{len(raised)}",
        "c_corrected_command_passes_validation": f"{len(c_fixed)}/{len(raised)}",
        "logdoctor_unmet_but_vllm_accepted": {c.name: c.check_unmet for c in over},
        "disagreements": [asdict(c) for c in raised if c not in a_hits or c not in c_scan or c not in c_fixed],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vllm", required=True, help="the `vllm` executable of a venv with vLLM 0.33.0")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None, help="where logs go (default: a temp folder)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / f"differential-{VERSION}.json")
    args = parser.parse_args()

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="differential-"))
    workdir.mkdir(parents=True, exist_ok=True)
    models = workdir / "models"
    python = Path(args.vllm).with_name("python")
    subprocess.run(
        [str(python), str(ROOT / "fixtures" / "models" / "make_models.py"), str(models)],
        check=True,
        capture_output=True,
    )
    rules = rule_messages(VERSION)
    cases = sample_cases(args.count, args.seed, models)
    print(f"{len(cases)} combinations, logs in {workdir}", file=sys.stderr)
    started = time.monotonic()
    with ThreadPoolExecutor(args.jobs) as pool:
        done = list(pool.map(lambda c: evaluate(c, args.vllm, workdir, rules), cases))
    summary = summarize(done, rules)
    summary["seconds"] = round(time.monotonic() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "cases": [asdict(c) for c in done]}, indent=1))
    for key, value in summary.items():
        if key != "disagreements":
            print(f"{key}: {value}")
    print(f"disagreements: {len(summary['disagreements'])} (details in {args.out})")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
