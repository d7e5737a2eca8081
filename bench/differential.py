#!/usr/bin/env python3
"""Differential test of `logdoctor check` against the real vLLM, for any rule family (run by hand, not in CI).

The dimensions of each family are data: bench/differential/families.toml (replayssm, parallelism,
context, quantization, scheduler, speculative, lora, frontend). For `--count` sampled launches of a
family (every value of every dimension at least once), or of `all` (each launch: one random value per
dimension of 1-3 random families, so their rules interact), it runs the real `vllm serve` (a venv made
by bench/vllm_env.sh) and `logdoctor check` on the same command, and compares verdicts, per launch:

  agree    vLLM accepted its configuration (it logged `Initializing a V1 LLM engine`, the EngineCore's
           first line, in 0.28.0 as in 0.33.0) and check reports no unmet rule and no parser problem;
           or vLLM refused and check predicted it: an unmet rule whose patterns include the pattern
           `logdoctor scan` names as the primary root cause of vLLM's real output, or a parser problem
           naming the option vLLM's parser refused. Decided by bench/battery/check_score.py's
           score_check (via bench/differential/verdict.py, in the tested logdoctor's interpreter).

and, for every launch vLLM refused (c): scan on vLLM's real output names the pattern of the rule whose
vllm_message the output matches (where one does), and its corrected command passes vLLM when re-run.

It prints a table (one row a launch) and the agreement, and writes
bench/results/differential-<family>-<version>.json (`--out` to change). Examples:

    python bench/differential.py --family replayssm --vllm /work/vllm033/bin/vllm --count 64 --seed 33 --jobs 2
    python bench/differential.py --family replayssm --vllm /work/vllm028/bin/vllm --count 64
    python bench/differential.py --family all --vllm /work/vllm033/bin/vllm --count 64
    python bench/differential.py --family context --vllm /work/vllm033/bin/vllm --logdoctor /work/main

A launch vLLM refuses for a reason of this CPU-only machine (MACHINE_REFUSALS: 0.28.0 refuses
VLLM_USE_V2_MODEL_RUNNER=1 without Triton) is counted apart, not as agreement or disagreement;
`--pin runner=VLLM_USE_V2_MODEL_RUNNER=0` keeps one value of a dimension. `--rescore RESULTS --workdir
LOGS` decides the verdicts of a stored run again without running vLLM (with `--logdoctor`: another
checkout's rules and scorer on the same vLLM outcomes).

`--logdoctor CHECKOUT` tests another checkout's logdoctor without installing it (`--check-python`
runs it: `PYTHON -m logdoctor` with PYTHONPATH=CHECKOUT, its own patterns/ and battery scorer); by
default, the logdoctor of this interpreter. Rule sets are picked by the version of the vLLM given.

Speed: vLLM is imported once (bench/differential/serve_zygote.py, in vLLM's interpreter) and each
launch is a fork running vLLM's own CLI entry point, stopped as soon as vLLM accepted (the marker line)
or exited; a refused configuration takes about a second, an accepted one the EngineCore's start
(~10 s: vLLM's CPU platform spawns it). `--no-zygote` runs the `vllm` executable once per launch
instead. Models are the dirs of /work/vllm-models (`--models`; build them with
fixtures/models/make_models.py). Every launch sets VLLM_USE_V2_MODEL_RUNNER (0 unless a dimension
says): on a CPU-only machine vLLM's default model runner differs from a GPU machine's, which is what
logdoctor models.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "differential"
FAMILIES = HERE / "families.toml"
ACCEPTED = "Initializing a V1 LLM engine"  # the EngineCore's first line: the configuration was accepted
RUN_TIMEOUT = 300
BASE_ENV = {"VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
DEFAULT_ENV = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
# Refusals that come from this CPU-only machine, not from the launch: on a GPU machine vLLM would get past
# them to the checks under test, so such a launch says nothing about check (counted apart, as `machine`).
# vLLM 0.28.0 refuses VLLM_USE_V2_MODEL_RUNNER=1 without a working Triton (0.33.0 warns and uses V1).
MACHINE_REFUSALS = [re.compile(r"Model Runner V2 requires Triton")]
TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


# --- sampling (pure) ------------------------------------------------------------------------------------


@dataclass
class Family:
    name: str
    about: str
    base: str
    dims: dict[str, list[str]]


def load_families(path: Path = FAMILIES) -> dict[str, Family]:
    data = tomllib.loads(path.read_text())
    families = {}
    for name, table in data.items():
        dims = {k: list(v) for k, v in table["dims"].items()}
        if "model" not in dims or not all(dims.values()):
            raise ValueError(f"{path}: family {name} needs a `model` dimension and values in every dimension")
        families[name] = Family(name, table.get("about", ""), table.get("base", ""), dims)
    return families


Pick = tuple[str, str, str]  # (family, dimension, value)


def sample_family(family: Family, count: int, rng: random.Random) -> list[list[Pick]]:
    """`count` distinct combinations of the family's dimensions (fewer if there are fewer), then one more
    for every value no combination has, so that each value of each dimension occurs at least once."""
    keys = list(family.dims)
    sizes = [len(family.dims[k]) for k in keys]
    total = 1
    for size in sizes:
        total *= size
    # Sample indices into the product without building it (some families have 10^5 combinations).
    chosen = [_unrank(i, sizes) for i in rng.sample(range(total), min(count, total))]
    for position, _key in enumerate(keys):
        for index in range(sizes[position]):
            if not any(c[position] == index for c in chosen):
                extra = list(_unrank(rng.randrange(total), sizes))
                extra[position] = index
                chosen.append(tuple(extra))
    return [[(family.name, k, family.dims[k][i]) for k, i in zip(keys, combo, strict=True)] for combo in chosen]


def _unrank(n: int, sizes: list[int]) -> tuple[int, ...]:
    out = []
    for size in reversed(sizes):
        n, r = divmod(n, size)
        out.append(r)
    return tuple(reversed(out))


def sample_mixed(families: dict[str, Family], count: int, rng: random.Random) -> list[list[Pick]]:
    """`count` launches, each one random value per dimension of 1-3 random families."""
    names = sorted(families)
    cases = []
    for _ in range(count):
        chosen = rng.sample(names, rng.randint(1, min(3, len(names))))
        cases.append([(name, k, rng.choice(values)) for name in chosen for k, values in families[name].dims.items()])
    return cases


def option_names(words: list[str]) -> set[str]:
    """The options these words set, `--no-X` counted as `--X` (one option either way)."""
    names = set()
    for word in words:
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            names.add("--" + name[5:] if name.startswith("--no-") else name)
    return names


def compose(
    picks: list[Pick], families: dict[str, Family], models: Path, files: Path
) -> tuple[list[str], dict[str, str], list[Pick]]:
    """(argv, environment, the picks kept) of a launch: `vllm serve MODEL --load-format dummy`, then each
    family's base and values. The model is the first family's; a later value that sets an option (or a
    variable) already set is dropped, so the launch names each once."""
    model = next(v for _, k, v in picks if k == "model")
    argv = ["vllm", "serve", str(models / model), "--load-format", "dummy"]
    env: dict[str, str] = {}
    kept: list[Pick] = []
    seen_families: list[str] = []
    for fam, key, value in picks:
        if fam not in seen_families:
            seen_families.append(fam)
            base = shlex.split(families[fam].base)
            argv += [w for w in base if w not in argv]
        if key == "model":
            kept.append((fam, key, value if value == model else "(" + value + ")"))
            continue
        words = shlex.split(value.replace("{models}", str(models)).replace("{files}", str(files)))
        assignments = {}
        while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
            name, val = words.pop(0).split("=", 1)
            assignments[name] = val
        if option_names(words) & option_names(argv) or set(assignments) & set(env):
            continue
        env.update(assignments)
        argv += words
        kept.append((fam, key, value))
    for name, value in DEFAULT_ENV.items():
        env.setdefault(name, value)
    return argv, env, kept


# --- one launch ------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    families: list[str]
    picks: list[list[str]]
    words: list[str]  # vllm serve ...
    env: dict[str, str]
    command: str = ""  # with the environment, as a user would type it
    vllm_outcome: str = ""  # accepted | refused | timeout | machine (MACHINE_REFUSALS)
    vllm_status: int | None = None
    log: str = ""
    check: dict[str, Any] = field(default_factory=dict)
    check_unmet: list[str] = field(default_factory=list)
    check_problems: list[str] = field(default_factory=list)
    check_command: str | None = None
    scan_primary: str | None = None
    scan_message: str | None = None
    scan_command: str | None = None
    fixed_outcome: str | None = None
    fixed_log: str = ""
    verdict: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class Zygote:
    """serve_zygote.py in vLLM's interpreter: vLLM imported once, a fork per launch."""

    def __init__(self, python: str) -> None:
        self.proc = subprocess.Popen(
            [python, str(HERE / "serve_zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **BASE_ENV},
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        ready = json.loads(self.proc.stdout.readline() or '{"ready": false, "error": "exited"}')
        if not ready.get("ready"):
            raise SystemExit(f"vLLM did not import in {python}: {ready.get('error')}")
        self.version = str(ready["version"])
        self.lock = threading.Lock()
        self.waiting: dict[int, Future[dict[str, Any]]] = {}
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            answer = json.loads(line)
            with self.lock:
                future = self.waiting.pop(answer["id"])
            future.set_result(answer)

    def run(self, words: list[str], env: dict[str, str], cwd: Path, log: Path) -> tuple[str, int | None]:
        future: Future[dict[str, Any]] = Future()
        with self.lock:
            self.next_id += 1
            rid = self.next_id
            self.waiting[rid] = future
            request = {"id": rid, "argv": words, "env": env, "cwd": str(cwd), "log": str(log)}
            request.update({"accepted": ACCEPTED, "timeout": RUN_TIMEOUT})
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        answer = future.result(timeout=RUN_TIMEOUT + 60)
        return answer["outcome"], answer["status"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


def run_direct(vllm: str, words: list[str], env: dict[str, str], cwd: Path, log_path: Path) -> tuple[str, int | None]:
    """The `vllm` executable itself, until it accepts (the marker line), exits, or times out."""
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [vllm, *words[1:]],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, **BASE_ENV, **env},
            cwd=cwd,
            start_new_session=True,
        )
        assert proc.stdout is not None
        deadline = time.monotonic() + RUN_TIMEOUT
        outcome = "exited"
        for line in proc.stdout:
            log.write(line)
            if ACCEPTED.encode() in line:
                outcome = "accepted"
                break
            if time.monotonic() > deadline:
                outcome = "timeout"
                break
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        status = proc.wait()
    return outcome, status if outcome == "exited" else None


class Logdoctor:
    """The logdoctor under test: `PYTHON -m logdoctor`, with PYTHONPATH=CHECKOUT when one is given."""

    def __init__(self, python: str, checkout: Path | None) -> None:
        self.python = python
        self.checkout = checkout
        self.env = dict(os.environ)
        if checkout is not None:
            self.env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [os.environ.get("PYTHONPATH")])])

    @property
    def root(self) -> Path:
        return self.checkout or ROOT

    def json_lines(self, args: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]] | str:
        proc = subprocess.run(
            [self.python, "-m", "logdoctor", *args],
            capture_output=True, text=True, env={**self.env, **env}, cwd=cwd, check=False, timeout=300,
        )  # fmt: skip
        if proc.returncode not in (0, 1):
            return (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]

    def verdicts(self, version: str, cases: list[Case], cwd: Path) -> list[dict[str, Any]]:
        request = {
            "version": version,
            "root": str(self.root),
            "cases": [
                {
                    "vllm_outcome": c.vllm_outcome, "log": c.log, "words": c.words, "env": {**BASE_ENV, **c.env},
                    "cwd": str(cwd), "check": c.check, "scan_rule": c.scan_primary, "scan_message": c.scan_message,
                }
                for c in cases
            ],
        }  # fmt: skip
        proc = subprocess.run(
            [self.python, str(HERE / "verdict.py")],
            input=json.dumps(request), capture_output=True, text=True, env=self.env, cwd=cwd, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(f"verdict.py failed: {proc.stderr[-2000:]}")
        return list(json.loads(proc.stdout))


def machine_refusal(text: str) -> bool:
    return any(p.search(text) for p in MACHINE_REFUSALS)


class Memo:
    """Corrected commands repeat across launches (many launches break the same rule): each distinct
    (command, environment) is run once; later launches wait for it and share its outcome and log."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[tuple[str, ...], Future[tuple[str, Path]]] = {}

    def run(self, runner: Any, words: list[str], env: dict[str, str], cwd: Path, log: Path) -> tuple[str, Path]:
        key = (*words, "\0", *(f"{k}={v}" for k, v in sorted(env.items())))
        with self.lock:
            future = self.runs.get(key)
            first = future is None
            if future is None:
                future = self.runs[key] = Future()
        if first:
            try:
                outcome, _ = runner(words, env, cwd, log)
                future.set_result((outcome, log))
            except BaseException as exc:
                future.set_exception(exc)
        return future.result()


FIXED_RUNS = Memo()


def evaluate(case: Case, runner: Any, doctor: Logdoctor, version: str, workdir: Path) -> Case:
    started = time.monotonic()
    log_path = workdir / f"{case.name}.log"
    outcome, case.vllm_status = runner(case.words, case.env, workdir, log_path)
    case.vllm_outcome = "refused" if outcome == "exited" else outcome
    if case.vllm_outcome == "refused" and machine_refusal(log_path.read_text("utf-8", "replace")):
        case.vllm_outcome = "machine"
    case.log = str(log_path)
    check_env = {**BASE_ENV, **case.env}
    check = doctor.json_lines(
        ["check", "--format", "json", "--vllm-version", version, "--", *case.words], check_env, workdir
    )
    if isinstance(check, str):
        case.check = {"error": check}
    else:
        case.check = next((c for c in check if c.get("kind") == "check"), {"error": "no check line"})
        constraints = case.check.get("constraints", [])
        case.check_unmet = [f"{c['set']}/{c['id']}" for c in constraints if c["status"] == "unmet"]
        case.check_problems = list(case.check.get("problems", []))
        case.check_command = case.check.get("command")
    if case.vllm_outcome == "refused":
        scan = doctor.json_lines(["scan", "--format", "json", str(log_path)], {}, workdir)
        findings = [f for f in scan if f.get("kind") == "finding"] if isinstance(scan, list) else []
        primary = next((f for f in findings if f.get("primary")), None)
        if primary is not None:
            case.scan_primary = str(primary["rule"])
            error = primary.get("error") or {}
            case.scan_message = error.get("message") if isinstance(error, dict) else None
            fix = primary.get("fix") or {}
            case.scan_command = fix.get("command") if isinstance(fix, dict) else None
        if case.scan_command:
            words = shlex.split(case.scan_command)
            env = dict(case.env)
            while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
                name, value = words.pop(0).split("=", 1)
                env[name] = value
            if words[:2] == ["vllm", "serve"]:
                fixed, fixed_log = FIXED_RUNS.run(runner, words, env, workdir, workdir / f"{case.name}-fixed.log")
                case.fixed_outcome = "refused" if fixed == "exited" else fixed
                case.fixed_log = str(fixed_log)
            else:
                case.fixed_outcome = "not a vllm serve command"
    case.seconds = round(time.monotonic() - started, 1)
    return case


# --- summary ---------------------------------------------------------------------------------------------


def summarize(cases: list[Case]) -> dict[str, Any]:
    def pct(n: int, d: int) -> float:
        return round(100 * n / d, 1) if d else 0.0

    decided = [c for c in cases if c.verdict.get("agree") is not None]
    agree = [c for c in decided if c.verdict["agree"]]
    accepted = [c for c in cases if c.vllm_outcome == "accepted"]
    refused = [c for c in cases if c.vllm_outcome == "refused"]
    with_message = [c for c in refused if c.verdict.get("message_rule")]
    scan_right = [c for c in with_message if c.scan_primary in c.verdict.get("message_rule_patterns", [])]
    with_fix = [c for c in refused if c.scan_command]
    fixed = [c for c in with_fix if c.fixed_outcome == "accepted"]
    return {
        "cases": len(cases),
        "vllm_accepted": len(accepted),
        "vllm_refused": len(refused),
        "vllm_timeout": sum(c.vllm_outcome == "timeout" for c in cases),
        "vllm_refused_for_this_machine": [c.name for c in cases if c.vllm_outcome == "machine"],
        "agreement": f"{len(agree)}/{len(decided)}",
        "agreement_pct": pct(len(agree), len(decided)),
        "agree_on_accepted": f"{sum(c in agree for c in accepted)}/{len(accepted)}",
        "agree_on_refused": f"{sum(c in agree for c in refused)}/{len(refused)}",
        "check_flags_accepted": {c.name: c.check_unmet + c.check_problems for c in accepted if c not in agree},
        "check_misses_refused": {
            c.name: f"{c.scan_primary or '(scan: no primary)'}; "
            f"check: {c.verdict.get('prediction')} {c.verdict.get('detail')}"
            for c in refused
            if c not in agree
        },
        "c_refusals_matching_a_rule_message": len(with_message),
        "c_scan_names_that_rules_pattern": f"{len(scan_right)}/{len(with_message)}",
        "c_scan_had_a_corrected_command": f"{len(with_fix)}/{len(refused)}",
        "c_corrected_command_accepted": f"{len(fixed)}/{len(with_fix)}",
        "c_corrected_command_not_accepted": [c.name for c in with_fix if c not in fixed],
    }


def slim(case: dict[str, Any]) -> dict[str, Any]:
    """A case as stored: check's answer without its prose (each rule: set, id, status)."""
    check = dict(case.get("check") or {})
    if "constraints" in check:
        keep = ("set", "id", "status")
        check["constraints"] = [{k: c.get(k) for k in keep} for c in check["constraints"]]
        for key in ("sets", "caveats", "yaml_diff", "unresolved"):
            check.pop(key, None)
    return {**case, "check": check}


def dump(summary: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    """The results file: the summary indented, then one case a line."""
    lines = ",\n".join(json.dumps(c) for c in cases)
    return f'{{"summary": {json.dumps(summary, indent=1)},\n"cases": [\n{lines}\n]}}\n'


def row(case: Case) -> str:
    yn = {True: "yes", False: "NO", None: "-"}
    vllm = case.vllm_outcome if case.vllm_outcome != "refused" else f"refused {case.scan_primary or '?'}"
    v = case.verdict
    check = v.get("prediction", "?")
    if check in ("unmet", "parser"):
        check += " " + str(v.get("detail", ""))[:60]
    fixed = "" if case.fixed_outcome is None else f" fix:{case.fixed_outcome}"
    return f"{case.name} {','.join(case.families):<24} {vllm[:58]:<58} {check[:70]:<70} {yn[v.get('agree')]:<4}{fixed}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vllm", required=True, help="the `vllm` executable of a venv made by bench/vllm_env.sh")
    parser.add_argument("--family", default="replayssm", help="a family of families.toml, or `all`")
    parser.add_argument("--families", type=Path, default=FAMILIES, help="the dimensions file")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--models", type=Path, default=Path("/work/vllm-models"), help="the tiny model dirs")
    parser.add_argument("--logdoctor", type=Path, default=None, metavar="CHECKOUT", help="test this checkout")
    parser.add_argument("--check-python", default=sys.executable, help="the interpreter that runs logdoctor")
    parser.add_argument("--no-zygote", action="store_true", help="run the vllm executable once per launch")
    parser.add_argument("--workdir", type=Path, default=None, help="where logs go (default: a temp folder)")
    parser.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="DIM=VALUE",
        help="keep one value of a dimension (repeatable), e.g. runner=VLLM_USE_V2_MODEL_RUNNER=0",
    )
    parser.add_argument(
        "--rescore",
        type=Path,
        default=None,
        metavar="RESULTS",
        help="no runs: decide the verdicts of a results file again (its logs in --workdir), e.g. with --logdoctor",
    )
    parser.add_argument("--out", type=Path, default=None, help="default bench/results/differential-FAMILY-VERSION.json")
    args = parser.parse_args()

    if args.rescore is not None:
        return rescore(args)
    families = load_families(args.families)
    for pin in args.pin:
        dim, _, value = pin.partition("=")
        holders = [f for f in families.values() if value in f.dims.get(dim, [])]
        if not holders:
            parser.error(f"--pin {pin}: no family has {value!r} among the values of {dim!r}")
        for family in holders:
            family.dims[dim] = [value]
    rng = random.Random(args.seed)
    if args.family == "all":
        sampled = sample_mixed(families, args.count, rng)
    elif args.family in families:
        sampled = sample_family(families[args.family], args.count, rng)
    else:
        parser.error(f"--family: one of {', '.join(families)}, or all")
    missing = {v for picks in sampled for _, k, v in picks if k == "model" and not (args.models / v).is_dir()}
    if missing:
        raise SystemExit(f"model dirs missing under {args.models}: {sorted(missing)} (fixtures/models/make_models.py)")

    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="differential-"))).resolve()
    files = workdir / "files"
    files.mkdir(parents=True, exist_ok=True)
    (files / "template.jinja").write_text(TEMPLATE)
    cases = []
    for n, picks in enumerate(sampled):
        words, env, kept = compose(picks, families, args.models, files)
        command = shlex.join(words)
        if env:
            command = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + command
        cases.append(
            Case(f"case{n:03d}", sorted({f for f, _, _ in kept}), [list(p) for p in kept], words, env, command)
        )

    python = str(Path(args.vllm).with_name("python"))
    zygote = None if args.no_zygote else Zygote(python)
    if zygote is not None:
        version = zygote.version
        runner = zygote.run
    else:
        version = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('vllm'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip

        def runner(words: list[str], env: dict[str, str], cwd: Path, log: Path) -> tuple[str, int | None]:
            return run_direct(args.vllm, words, env, cwd, log)

    doctor = Logdoctor(args.check_python, args.logdoctor.resolve() if args.logdoctor else None)
    print(
        f"{len(cases)} launches of {args.family} against vLLM {version}, logdoctor of {doctor.root}; logs in {workdir}"
    )
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(evaluate, c, runner, doctor, version, workdir) for c in cases]
            done = []
            for future in futures:
                case = future.result()
                done.append(case)
                print(f"  {case.name} {case.vllm_outcome:<8} {case.seconds:>6}s  {case.command}", flush=True)
    finally:
        if zygote is not None:
            zygote.close()
    seconds = round(time.monotonic() - started)
    out = args.out or ROOT / "bench" / "results" / f"differential-{args.family}-{version}.json"
    return report(done, doctor, version, workdir, out, {"family": args.family, "seed": args.seed, "seconds": seconds})


def rescore(args: argparse.Namespace) -> int:
    """The verdicts of a results file decided again from its stored outcomes and logs (no vLLM runs)."""
    if args.workdir is None:
        raise SystemExit("--rescore needs --workdir: the folder with the run's logs")
    data = json.loads(args.rescore.read_text())
    workdir = args.workdir.resolve()
    done = []
    for stored in data["cases"]:
        case = Case(**{k: v for k, v in stored.items() if k in Case.__dataclass_fields__})
        case.log = str(workdir / stored["log"])
        if case.vllm_outcome == "refused" and machine_refusal(Path(case.log).read_text("utf-8", "replace")):
            case.vllm_outcome = "machine"
        done.append(case)
    doctor = Logdoctor(args.check_python, args.logdoctor.resolve() if args.logdoctor else None)
    old = data["summary"]
    extra = {"family": old.get("family"), "seed": old.get("seed"), "seconds": old.get("seconds"), "rescored": True}
    return report(done, doctor, old["vllm_version"], workdir, args.out or args.rescore, extra)


def report(done: list[Case], doctor: Logdoctor, version: str, workdir: Path, out: Path, extra: dict[str, Any]) -> int:
    for case, v in zip(done, doctor.verdicts(version, done, workdir), strict=True):
        case.verdict = v
    summary = summarize(done)
    summary.update({"vllm_version": version, "logdoctor": str(doctor.root), **extra})
    out.parent.mkdir(parents=True, exist_ok=True)
    stored = [
        {**asdict(c), "log": Path(c.log).name, "fixed_log": Path(c.fixed_log).name if c.fixed_log else ""} for c in done
    ]
    stored = [slim(c) for c in stored]
    out.write_text(dump(summary, stored))
    print()
    print(f"{'case':<7} {'families':<24} {'vLLM':<58} {'check':<70} agree")
    for case in done:
        print(row(case))
    print()
    for key, value in summary.items():
        print(f"{key}: {value}")
    print(f"details in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
