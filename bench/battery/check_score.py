#!/usr/bin/env python3
"""Score `logdoctor check` on the launch battery: does the preflight predict what real vLLM 0.33.0 did?

For every scenario of scenarios.toml (what real vLLM did is in fixtures/battery/<id>.meta.toml and
<id>.log, captured by run.py) it runs, from a fresh scratch directory with the scenario's setup and
environment, as the capture did:

  check        `logdoctor check --format json -- vllm serve ARGS` (no vLLM): its prediction is
               `unmet` (a rule unmet: which), `parser` (a problem vLLM's parser would reject) or
               `ok` (all rules met, or no set applies)
  with vLLM    `check --with-vllm PYTHON`'s loop (logdoctor.withvllm, in this process: one probe for
               every scenario, so vLLM is imported once): rounds, and whether vLLM accepted the last

and prints one row per scenario:

  expect       fail / pass, and the library's rule for the error the capture shows (scan's primary
               finding of its last launch)
  check        the prediction; `agree` for a failure: an unmet rule that owns that error's pattern,
               or a parser problem naming the option vLLM's parser refused (where vLLM's parser raised
               instead, one carrying its words); for a pass: nothing unmet and no parser problem
  with-vllm    `agree`: round 1 is refused with the capture's error (its expected_message, or the
               same rule), or accepted by vLLM's validation with a rule of that error which vLLM raises
               after it (stage `engine`, in the round's fails_later), for a failure; accepted for a pass;
               rounds; `accepted` (the last round);
               `fixed` when the library had a fix for round 1 and vLLM accepted the corrected command

Totals: the issue's Done-when ("check without vLLM predicts the failure vLLM hit in >= 80% and
reports no unmet rule on any passing launch; check --with-vllm predicts 100% and its corrected command
passes vLLM's validation wherever the library has a fix"), and the probe's timings. A measurement: it
always exits 0.

    /tmp/venv/bin/python bench/battery/check_score.py --vllm-python /work/vllm033/bin/python [--json] [--only ID ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "fixtures" / "battery"
BASE_ENV = {"VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
VERSION = "0.33.0"
PARSER_REFUSAL = re.compile(r"^vllm(?: serve)?: error: ", re.M)

sys.path.insert(0, str(HERE))
# run.py's scenario file, setup entries and scratch folders (the args name them), not repeated here
from run import SCRATCH, load, prepare  # noqa: E402


def logdoctor_exe() -> str:
    near = Path(sys.executable).with_name("logdoctor")
    return str(near) if near.exists() else (shutil.which("logdoctor") or "logdoctor")


def normal(text: str) -> str:
    """For comparing vLLM's words across runs: no addresses, single spaces."""
    return " ".join(re.sub(r" at 0x[0-9a-f]+", " at 0x", text).split())


def capture_rule(sid: str) -> tuple[str | None, str | None]:
    """The library's primary finding of the capture's last launch: (rule, the error's message)."""
    from logdoctor.api import diagnose_text

    log = FIXTURES / f"{sid}.log"
    if not log.exists():
        return None, None
    findings = diagnose_text(log.read_bytes(), source=str(log))
    last = max((f.launch or 0 for f in findings), default=0)
    primary = next((f for f in findings if (f.launch or 0) == last and f.primary), None)
    return (primary.rule, primary.error.message) if primary else (None, None)


def run_check(words: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [logdoctor_exe(), "check", "--format", "json", "--", *words],
        cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if proc.returncode not in (0, 1):
        return {"error": (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]}
    return dict(json.loads(proc.stdout))


def owning_rules(rule: str | None, message: str | None, words: list[str], cwd: Path, env: dict[str, str]) -> set:
    """(set, id) of the rules whose patterns include the capture's rule, as audit marks them."""
    from logdoctor.audit import audit
    from logdoctor.check import build_config
    from logdoctor.launch.cmdline import CommandError
    from logdoctor.library.stored import constraint_sets

    if rule is None:
        return set()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        config, _ = build_config(words, None, VERSION, None, {**os.environ, **env})
    except CommandError:
        return set()
    finally:
        os.chdir(here)
    raised = audit(config, constraint_sets(), VERSION, rule, raised_message=message)
    return {(r.set, r.id) for r in raised.results if r.raised_by_vllm}


def score_check(s: dict, meta: dict, result: dict, rule: str | None, owning: set) -> dict[str, Any]:
    from logdoctor.withvllm import names_same_option

    if "error" in result:
        return {"prediction": "error", "detail": result["error"], "agree": False}
    unmet = [c for c in result["constraints"] if c["status"] == "unmet"]
    problems = result["problems"]
    if unmet:
        prediction, detail = "unmet", ", ".join(c["id"] for c in unmet)
    elif problems:
        prediction, detail = "parser", problems[0]
    else:
        prediction, detail = "ok", f"{len(result['constraints'])} rules met" if result["constraints"] else "no set"
    if s["expect"] == "pass":
        agree = prediction == "ok"
    else:
        expected = meta.get("expected_message", "")
        agree = any((c["set"], c["id"]) in owning for c in unmet)
        if not agree and problems and PARSER_REFUSAL.search(expected):
            refusal = PARSER_REFUSAL.split(expected, 1)[-1].splitlines()[0]
            agree = any(names_same_option(refusal, p) for p in problems)
        elif not agree and problems and expected.strip():
            # vLLM's parser raised rather than exited (FlexibleArgumentParser's ValueErrors, a --config
            # file it cannot open), or the capture keeps the words inside its refusal (pydantic's):
            # a problem that carries those words.
            words = normal(expected.strip().splitlines()[0])
            agree = any(words in normal(p) for p in problems)
    return {"prediction": prediction, "detail": detail, "agree": agree}


def score_with_vllm(s: dict, meta: dict, loop: Any, rule: str | None, owning: set = frozenset()) -> dict[str, Any]:
    first = loop.rounds[0]
    if s["expect"] == "pass":
        agree = first.ok
    else:
        expected = [normal(line) for line in meta.get("expected_message", "").splitlines() if line.strip()]
        said = normal(first.message or "")
        agree = not first.ok and (bool(expected) and all(e in said for e in expected) or first.rule == rule)
        # vLLM's validation accepted it, and check's rules of stage `engine` say it fails after: predicted
        # when one of them is a rule of the pattern vLLM's real run raised
        agree = agree or (first.ok and any(f"{s_}: {i}" in first.fails_later for s_, i in owning))
    fixed = None
    if first.fixed_command is not None:
        fixed = loop.accepted
    return {
        "agree": agree,
        "rounds": len(loop.rounds),
        "accepted": loop.accepted,
        "fixed": fixed,
        "first": "accepted" if first.ok else f"{first.rule or '(no rule)'}: {(first.error or '').splitlines()[0:1]}",
        "stopped": loop.stopped,
        "command": loop.command,
        "seconds": [r.seconds for r in loop.rounds],
        "chain": [r.as_dict() for r in loop.rounds],
    }


def machine_probe(host: str | None, port: int) -> dict[str, Any]:
    """check's own probe of this machine (the scenarios' vLLM runs here)."""
    from logdoctor.probe.machine import probe

    return probe(host, port)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm-python", default="/work/vllm033/bin/python", help="the interpreter of real vLLM")
    ap.add_argument("--no-vllm", action="store_true", help="score check without vLLM only")
    ap.add_argument("--json", action="store_true", help="machine output (rows, with each chain, and totals)")
    ap.add_argument("--only", nargs="+", metavar="ID")
    args = ap.parse_args()

    from logdoctor.withvllm import Probe, validate_loop

    scenarios = [s for s in load(HERE / "scenarios.toml") if not args.only or s["id"] in args.only]
    probe = None
    if not args.no_vllm:
        probe = Probe(args.vllm_python, environ={**os.environ, **BASE_ENV})
        probe.start()
    rows = []
    started = time.monotonic()
    try:
        for s in scenarios:
            sid = s["id"]
            meta_path = FIXTURES / f"{sid}.meta.toml"
            meta = tomllib.loads(meta_path.read_text()) if meta_path.exists() else dict(s)
            cwd = SCRATCH / sid
            shutil.rmtree(cwd, ignore_errors=True)
            cwd.mkdir(parents=True)
            held = prepare(s, cwd)
            try:
                env = {**BASE_ENV, **s.get("env", {})}
                words = ["vllm", "serve", *s["args"]]
                rule, message = capture_rule(sid)
                row: dict[str, Any] = {"id": sid, "category": s["category"], "expect": s["expect"], "rule": rule}
                row["expected_message"] = meta.get("expected_message", "")
                owning = owning_rules(rule, message, words, cwd, env) if s["expect"] == "fail" else set()
                row["check"] = score_check(s, meta, run_check(words, cwd, env), rule, owning)
                if probe is not None:
                    # The scenario's own variables as the command's assignments: the probe sets them per launch.
                    assignments = [f"{k}={v}" for k, v in s.get("env", {}).items()]
                    here = os.getcwd()
                    os.chdir(cwd)  # a relative --config is read by logdoctor here, by vLLM in the probe's cwd
                    try:
                        loop = validate_loop(
                            probe, assignments + words, VERSION, environ={**os.environ, **env}, cwd=str(cwd),
                            machine=machine_probe,
                        )
                    finally:
                        os.chdir(here)
                    row["with_vllm"] = score_with_vllm(s, meta, loop, rule, owning)
            finally:
                for sock in held:
                    with contextlib.suppress(OSError):
                        sock.close()
            rows.append(row)
            if not args.json:
                print(line(row), flush=True)
    finally:
        if probe is not None:
            probe.close()
    totals = summarize(rows, probe, time.monotonic() - started)
    if args.json:
        json.dump({"rows": rows, "totals": totals}, sys.stdout, indent=1)
        print()
    else:
        print()
        for text in totals["text"]:
            print(text)
    return 0


def line(row: dict[str, Any]) -> str:
    yn = {True: "yes", False: "no", None: "-"}
    c = row["check"]
    expect = f"{row['expect']} {row['rule'] or '-'}" if row["expect"] == "fail" else "pass"
    text = f"{row['id']:<52} {expect:<58} check {c['prediction']:<6} {yn[c['agree']]:<4}"
    w = row.get("with_vllm")
    if w is not None:
        text += f" | with-vllm {yn[w['agree']]:<4} rounds {w['rounds']}  accepted {yn[w['accepted']]:<4}"
        text += f" fixed {yn[w['fixed']]}"
    return text


def summarize(rows: list[dict[str, Any]], probe: Any, seconds: float) -> dict[str, Any]:
    fails = [r for r in rows if r["expect"] == "fail"]
    passes = [r for r in rows if r["expect"] == "pass"]

    def pct(n: int, d: int) -> float:
        return round(100 * n / d, 1) if d else 0.0

    check_fail = sum(r["check"]["agree"] for r in fails)
    check_flagged = sum(r["check"]["prediction"] in ("unmet", "parser") for r in fails)
    pass_unmet = [r["id"] for r in passes if r["check"]["prediction"] == "unmet"]
    pass_parser = [r["id"] for r in passes if r["check"]["prediction"] == "parser"]
    totals: dict[str, Any] = {
        "failing": len(fails),
        "passing": len(passes),
        "check_predicts_failure": check_fail,
        "check_predicts_failure_pct": pct(check_fail, len(fails)),
        "check_flags_failing_launch": check_flagged,
        "check_unmet_on_passing": pass_unmet,
        "check_parser_problem_on_passing": pass_parser,
        "seconds": round(seconds, 1),
    }
    text = [
        f"failing launches: {len(fails)}, passing: {len(passes)}",
        f"check without vLLM: predicts the failure vLLM hit in {check_fail}/{len(fails)} "
        f"({totals['check_predicts_failure_pct']}%; target >= 80%); flags something on {check_flagged}; "
        f"an unmet rule on {len(pass_unmet)} passing launch(es) {pass_unmet or ''}, a parser problem on "
        f"{len(pass_parser)} {pass_parser or ''}",
    ]
    with_rows = [r for r in rows if "with_vllm" in r]
    if with_rows:
        wf = [r for r in fails if "with_vllm" in r]
        wp = [r for r in passes if "with_vllm" in r]
        agree_f = sum(r["with_vllm"]["agree"] for r in wf)
        agree_p = sum(r["with_vllm"]["agree"] for r in wp)
        refused_at_config = [r for r in wf if r["with_vllm"]["chain"][0]["ok"] is False]
        with_fix = [r for r in wf if r["with_vllm"]["fixed"] is not None]
        fixed = [r for r in with_fix if r["with_vllm"]["fixed"]]
        later = [r["id"] for r in wf if r["with_vllm"]["chain"][0]["ok"]]
        rounds = [s for r in with_rows for s in r["with_vllm"]["seconds"]]
        totals.update(
            {
                "with_vllm_predicts_failure": agree_f,
                "with_vllm_predicts_failure_pct": pct(agree_f, len(wf)),
                "with_vllm_accepts_passing": agree_p,
                "with_vllm_refused_failing": len(refused_at_config),
                "with_vllm_failing_vllm_accepted": later,
                "with_vllm_library_had_fix": len(with_fix),
                "with_vllm_fix_accepted": len(fixed),
                "with_vllm_fix_not_accepted": [r["id"] for r in with_fix if not r["with_vllm"]["fixed"]],
                "import_seconds": probe.import_seconds if probe else None,
                "round_seconds_median": round(statistics.median(rounds), 3) if rounds else None,
                "round_seconds_p90": round(statistics.quantiles(rounds, n=10, method="inclusive")[-1], 3)
                if len(rounds) > 1
                else None,
                "round_seconds_max": max(rounds, default=None),
                "rounds": len(rounds),
            }
        )
        text += [
            f"check --with-vllm: predicts the failure in {agree_f}/{len(wf)} "
            f"({totals['with_vllm_predicts_failure_pct']}%; target 100%); accepts {agree_p}/{len(wp)} passing "
            f"launches; vLLM's validation accepted {len(later)} "
            f"failing launch(es) (they fail later, in the engine or the server)",
            f"  the library had a fix for round 1 on {len(with_fix)} of the {len(refused_at_config)} refused and the "
            f"{sum(bool(r['with_vllm']['chain'][0]['fails_later']) for r in wf)} check says fail later; vLLM "
            f"accepted the corrected command on {len(fixed)} ({pct(len(fixed), len(with_fix))}%)",
            f"  timings: import {totals['import_seconds']} s; {len(rounds)} rounds, "
            f"median {totals['round_seconds_median']} s, p90 {totals['round_seconds_p90']} s, "
            f"max {totals['round_seconds_max']} s "
            "(the first launch of an architecture: vLLM inspects the model class once, cached in ~/.cache/vllm)",
        ]
    totals["text"] = text
    return totals


if __name__ == "__main__":
    sys.exit(main())
