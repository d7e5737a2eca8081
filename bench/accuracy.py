#!/usr/bin/env python3
"""Score logdoctor on a labelled folder of logs (the format of shared/corpus: NNN-slug.log + NNN-slug.json).

For each failed log (`healthy: false`), with the primary finding of its last launch:
  located  - the primary finding's evidence contains the label's `root_error_substring`
  fixed    - located and recognised (a pattern's, not `unrecognized`), and its fix mentions one of the
             label's `fix_keywords`
For each healthy log: error-severity findings are false alarms.

It runs the installed `logdoctor scan --format json` on each file, as a user would.

    python bench/accuracy.py ../shared/corpus [--verbose]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def scan(log: Path) -> list[dict[str, object]]:
    proc = subprocess.run(
        ["logdoctor", "scan", "--format", "json", str(log)], capture_output=True, text=True, check=False
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"logdoctor failed on {log} (exit {proc.returncode}):\n{proc.stderr}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [line for line in lines if line.get("kind", "finding") != "summary"]  # the file's summary line


def fix_text(finding: dict[str, object]) -> str:
    fix = finding.get("fix") or {}
    assert isinstance(fix, dict)
    parts = [str(fix.get("summary", "")), *map(str, fix.get("steps", [])), str(fix.get("command") or "")]
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per log")
    args = parser.parse_args()

    failed = located = fixed = healthy = false_alarms = 0
    rows = []
    for label_path in sorted(args.folder.glob("*.json")):
        log = label_path.with_suffix(".log")
        if not log.exists():
            continue
        label = json.loads(label_path.read_text())
        findings = scan(log)
        errors = [f for f in findings if f["severity"] == "error"]
        # A file can hold several launches (restarts); its outcome is the last launch's root cause.
        primaries = [f for f in findings if f["primary"]]
        primary = max(primaries, key=lambda f: f["launch"], default=None)
        if label["healthy"]:
            healthy += 1
            false_alarms += len(errors)
            rows.append((log.name, "healthy", f"{len(errors)} error finding(s)", ""))
            continue
        failed += 1
        needle = label["root_error_substring"]
        evidence = "\n".join(e["text"] for e in (primary or {}).get("evidence", []))  # type: ignore[union-attr]
        hit = primary is not None and needle in evidence
        keywords = [k.lower() for k in label.get("fix_keywords", [])]
        recognised = primary is not None and primary["rule"] != "unrecognized"
        good_fix = hit and recognised and any(k in fix_text(primary).lower() for k in keywords)
        located += hit
        fixed += good_fix
        rule = primary["rule"] if primary else "-"
        rows.append((log.name, "located" if hit else "MISSED", str(rule), "fix ok" if good_fix else "no fix"))

    if args.verbose:
        for row in rows:
            print("  ".join(str(c) for c in row))
        print()
    share = lambda n, d: f"{n}/{d} = {100 * n / d:.1f}%" if d else "n/a"  # noqa: E731
    print(f"failed logs:           {failed}")
    print(f"root cause located:    {share(located, failed)}")
    print(f"recognized, fix keyword: {share(fixed, failed)}")
    print(f"healthy logs:          {healthy}")
    print(f"false alarms (error findings on healthy logs): {false_alarms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
