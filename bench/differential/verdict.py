"""Per-case verdicts of bench/differential.py, decided by the battery's own scorer (check_score.score_check).

Run by the harness with the interpreter of the logdoctor being tested (`--logdoctor CHECKOUT`: with
PYTHONPATH=CHECKOUT), so the rules, audit and scorer are that checkout's: it reads one JSON object on
stdin, {"version", "root", "cases": [...]}, and writes one JSON list, an entry per case:

  agree        check_score.score_check: for a launch vLLM accepted, no unmet rule and no parser problem;
               for one vLLM refused, an unmet rule whose patterns own the pattern `logdoctor scan` names
               as the primary root cause of vLLM's output (audit marks it raised_by_vllm), or a parser
               problem naming the option vLLM's parser refused; null when vLLM timed out
  prediction   ok | unmet | parser | error, and its detail
  owning       the (set, rule) pairs that own scan's primary pattern
  message_rule the rule whose vllm_message matches vLLM's output (any set for the version), and its patterns

Importable too (tests/test_differential.py): `verdict` is the pure part.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

PARSER_REFUSAL = re.compile(r"^vllm(?: serve)?: error: .*$", re.M)


def load_check_score(root: Path, version: str) -> ModuleType:
    """bench/battery/check_score.py of `root` (its own scorer for its own logdoctor), set to `version`."""
    battery = root / "bench" / "battery"
    if not (battery / "check_score.py").exists():
        battery = Path(__file__).resolve().parent.parent / "battery"
    sys.path.insert(0, str(battery))
    import check_score  # type: ignore[import-not-found]

    check_score.VERSION = version  # owning_rules reads it when called
    module: ModuleType = check_score
    return module


def parser_refusal(text: str) -> str:
    """vLLM's argparse refusal line (`vllm serve: error: ...`), or ""."""
    match = PARSER_REFUSAL.search(text)
    return match.group(0) if match else ""


def verdict(
    check_score: ModuleType,
    vllm_outcome: str,
    check_result: dict[str, Any],
    refusal: str,
    scan_rule: str | None,
    owning: set[tuple[str, str]],
) -> dict[str, Any]:
    """score_check's verdict for one case; vllm_outcome is accepted | refused | timeout | machine."""
    if vllm_outcome in ("timeout", "machine"):
        detail = "vLLM timed out" if vllm_outcome == "timeout" else "vLLM refused for this machine"
        return {"prediction": "-", "detail": detail, "agree": None}
    expect = "pass" if vllm_outcome == "accepted" else "fail"
    return dict(
        check_score.score_check({"expect": expect}, {"expected_message": refusal}, check_result, scan_rule, owning)
    )


def rule_messages(version: str) -> list[tuple[str, str, re.Pattern[str], list[str]]]:
    """(set, rule, regex of its vLLM message, its patterns) of every set that applies to `version`."""
    from logdoctor.library.constraints import message_regex, sets_for
    from logdoctor.library.loader import load_constraint_sets

    found = []
    for cset in sets_for(load_constraint_sets(), version):
        for rule in cset.rule:
            if rule.vllm_message:
                found.append((cset.id, rule.id, message_regex(rule.vllm_message), list(rule.patterns)))
    return found


def main() -> int:
    request = json.load(sys.stdin)
    version = request["version"]
    check_score = load_check_score(Path(request["root"]), version)
    try:
        messages = rule_messages(version)
    except Exception as exc:  # noqa: BLE001 - another checkout's API may differ; the verdicts do not need it
        print(f"verdict: no rule messages ({type(exc).__name__}: {exc})", file=sys.stderr)
        messages = []
    out = []
    for case in request["cases"]:
        text = Path(case["log"]).read_text("utf-8", "replace") if case.get("log") else ""
        owning: set[tuple[str, str]] = set()
        if case["vllm_outcome"] == "refused" and case.get("scan_rule"):
            owning = check_score.owning_rules(
                case["scan_rule"], case.get("scan_message"), case["words"], Path(case["cwd"]), case["env"]
            )
        message_rule = next(((s, r, p) for s, r, rx, p in messages if rx.search(text)), None)
        v = verdict(
            check_score, case["vllm_outcome"], case["check"], parser_refusal(text), case.get("scan_rule"), owning
        )
        v["owning"] = sorted(f"{s}/{r}" for s, r in owning)
        v["refusal"] = parser_refusal(text)
        v["message_rule"] = f"{message_rule[0]}/{message_rule[1]}" if message_rule else None
        v["message_rule_patterns"] = message_rule[2] if message_rule else []
        out.append(v)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
