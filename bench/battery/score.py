#!/usr/bin/env python3
"""Score logdoctor on the launch battery (fixtures/battery/, captured by bench/battery/run.py).

Runs the installed `logdoctor scan --format json` (the one on PATH, else /tmp/venv/bin/logdoctor) on
every capture and prints one row per scenario:

  id, expect, primary   logdoctor's primary finding of the last launch in the log
  recognised            the primary is not `unrecognized` (failing scenarios)
  fix right             the primary's fix (summary, steps, command) mentions every `right_fix.flags`
                        entry (or an alias of it in 0.33.0's argspec, or the flag that replaces it in
                        0.33.0) and at least one of `right_fix.values` (when there are any)
  silent                a failing launch with no error-severity finding, or logdoctor exiting 0
  config findings       passing scenarios: error/warning findings beyond those logdoctor reports on
                        the plain baseline launch (`base-plain-pass`: this machine's `vllm._C` death)

Totals over the failing scenarios: recognised %, fix right %, silent count. It is a measurement:
it always exits 0. `--json` prints the rows and totals as JSON instead.

    python bench/battery/score.py [--json] [--only ID ...]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures" / "battery"
ARGSPEC = ROOT / "logdoctor" / "launch" / "argspecs" / "0.33.0.json"
SCENARIOS = ROOT / "bench" / "battery" / "scenarios.toml"
BASELINE = "base-plain-pass"

# Flags removed before 0.33.0 and what replaces them in 0.33.0: a fix that names the replacement
# satisfies a right_fix entry naming either.
REPLACED_BY: dict[str, list[str]] = {
    "--speculative-config": ["--spec-model", "--spec-method", "--spec-tokens"],
    "--speculative-model": ["--speculative-config", "--spec-model"],
    "--num-speculative-tokens": ["--speculative-config", "--spec-tokens"],
    "--guided-decoding-backend": ["--structured-outputs-config"],
    "--worker-use-ray": ["--distributed-executor-backend"],
    "--rope-scaling": ["--hf-overrides"],
    "--override-pooler-config": ["--pooler-config"],
    "--task": ["--runner", "--convert"],
    "--max-seq-len-to-capture": ["--max-cudagraph-capture-size"],
}


def logdoctor_exe() -> str:
    return shutil.which("logdoctor") or "/tmp/venv/bin/logdoctor"


def aliases() -> dict[str, set[str]]:
    """flag -> every spelling of the same option in 0.33.0 (its option strings, underscores)."""
    spec = json.loads(ARGSPEC.read_text())
    out: dict[str, set[str]] = {}
    for opt in spec["options"]:
        names = set(opt["options"])
        names |= {n.replace("-", "_").replace("__", "--", 1) for n in names if n.startswith("--")}
        for n in opt["options"]:
            out[n] = names
    return out


def mentions_flag(text: str, flag: str, alias: dict[str, set[str]]) -> bool:
    spellings = set(alias.get(flag, {flag})) | {flag}
    for repl in REPLACED_BY.get(flag, []):
        spellings |= alias.get(repl, {repl})
    return any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text) for s in spellings)


def mentions_value(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", text) is not None


class ScanError(Exception):
    pass


def scan(log: Path, attempts: int = 3) -> tuple[int, list[dict]]:
    """logdoctor's exit status and findings for one log. logdoctor exits 0 (no error found) or 1
    (errors found); anything else, a traceback on stderr, or output that is not JSON is a failed
    scan: retried, then reported as such rather than counted as "logdoctor found nothing"."""
    last = ""
    for _ in range(attempts):
        proc = subprocess.run(
            [logdoctor_exe(), "scan", "--format", "json", str(log)], capture_output=True, text=True
        )
        try:
            findings = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
        except json.JSONDecodeError:
            findings = None
        crashed = "Traceback (most recent call last)" in proc.stderr  # a crash also exits 1
        if proc.returncode in (0, 1) and findings is not None and not crashed:
            return proc.returncode, [f for f in findings if f.get("kind", "finding") == "finding"]
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    raise ScanError(last)


def fix_text(finding: dict) -> str:
    fix = finding.get("fix") or {}
    parts = [fix.get("summary") or "", *(fix.get("steps") or []), fix.get("command") or ""]
    return "\n".join(parts)


def score_one(meta: dict, rc: int, findings: list[dict], alias: dict, baseline: set[str]) -> dict:
    last = max((f.get("launch") or 0 for f in findings), default=0)
    in_last = [f for f in findings if (f.get("launch") or 0) == last]
    primary = next((f for f in in_last if f.get("primary")), None)
    rule = primary["rule"] if primary else "(none)"
    row: dict = {"id": meta["id"], "category": meta["category"], "expect": meta["expect"], "primary": rule}
    if meta["expect"] == "fail":
        fix = meta.get("right_fix", {})
        text = fix_text(primary) if primary else ""
        missing = [f for f in fix.get("flags", []) if not mentions_flag(text, f, alias)]
        values = fix.get("values", [])
        value_ok = not values or any(mentions_value(text, v) for v in values)
        row["recognised"] = primary is not None and rule != "unrecognized"
        row["fix_right"] = row["recognised"] and not missing and value_ok
        row["missing"] = missing + ([] if value_ok else [f"one of values {values}"])
        row["silent"] = rc == 0 or not any(f.get("severity") == "error" for f in in_last)
        row["expected_message"] = meta.get("expected_message", "")
    else:
        extra = sorted(
            {f["rule"] for f in in_last if f.get("severity") in ("error", "warning")} - baseline
        )
        row["config_findings"] = extra
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="machine output")
    ap.add_argument("--only", nargs="+", metavar="ID")
    ap.add_argument("--dir", type=Path, default=FIXTURES)
    args = ap.parse_args()

    metas = []
    for p in sorted(args.dir.glob("*.meta.toml")):
        with open(p, "rb") as f:
            metas.append(tomllib.load(f))
    if SCENARIOS.exists():  # the scenario file's order (categories together), captures not in it last
        with open(SCENARIOS, "rb") as f:
            order = {s["id"]: i for i, s in enumerate(tomllib.load(f)["scenario"])}
        metas.sort(key=lambda m: order.get(m["id"], len(order)))
    alias = aliases()
    baseline: set[str] = set()
    if (args.dir / f"{BASELINE}.log").exists():
        _, fs = scan(args.dir / f"{BASELINE}.log")
        baseline = {f["rule"] for f in fs}
    if args.only:
        metas = [m for m in metas if m["id"] in args.only]

    rows = []
    scan_errors = []
    for m in metas:
        try:
            rc, findings = scan(args.dir / f"{m['id']}.log")
        except ScanError as e:
            scan_errors.append((m["id"], str(e)))
            continue
        rows.append(score_one(m, rc, findings, alias, baseline))

    fails = [r for r in rows if r["expect"] == "fail"]
    passes = [r for r in rows if r["expect"] == "pass"]
    n = len(fails) or 1
    totals = {
        "failing": len(fails),
        "passing": len(passes),
        "recognised": sum(r["recognised"] for r in fails),
        "recognised_pct": round(100 * sum(r["recognised"] for r in fails) / n, 1),
        "fix_right": sum(r["fix_right"] for r in fails),
        "fix_right_pct": round(100 * sum(r["fix_right"] for r in fails) / n, 1),
        "silent": sum(r["silent"] for r in fails),
        "passing_with_config_findings": sum(bool(r["config_findings"]) for r in passes),
        "baseline_rules": sorted(baseline),
        "scan_errors": [{"id": i, "error": e} for i, e in scan_errors],
        "logdoctor": logdoctor_exe(),
    }
    if args.json:
        json.dump({"rows": rows, "totals": totals}, sys.stdout, indent=1)
        print()
        return 0

    w = max((len(r["id"]) for r in rows), default=10)
    pw = max((len(r["primary"]) for r in rows), default=10)
    print(f"{'id':<{w}}  {'expect':<6}  {'primary':<{pw}}  recognised  fix right  silent  notes")
    yn = {True: "yes", False: "no"}
    for r in rows:
        if r["expect"] == "fail":
            note = ("missing: " + ", ".join(r["missing"])) if r["recognised"] and not r["fix_right"] else ""
            print(
                f"{r['id']:<{w}}  {'fail':<6}  {r['primary']:<{pw}}  {yn[r['recognised']]:<10}  "
                f"{yn[r['fix_right']]:<9}  {yn[r['silent']]:<6}  {note}"
            )
        else:
            cf = ", ".join(r["config_findings"]) or "-"
            blank = ""
            print(f"{r['id']:<{w}}  {'pass':<6}  {r['primary']:<{pw}}  {blank:<27}  config findings: {cf}")
    print()
    print(
        f"failing scenarios: {totals['failing']}  recognised: {totals['recognised']} ({totals['recognised_pct']}%)  "
        f"fix right: {totals['fix_right']} ({totals['fix_right_pct']}%)  silent: {totals['silent']}"
    )
    for sid, err in scan_errors:
        print(f"{sid}: logdoctor scan failed (not scored): {err}")
    print(
        f"passing scenarios: {totals['passing']}  with findings about the configuration: "
        f"{totals['passing_with_config_findings']}  (baseline rules: {', '.join(sorted(baseline)) or '-'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
