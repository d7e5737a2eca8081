"""Rules as a checklist and a command before/after as a diff: shared by `check` and the finding reporters."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, TextIO, Union

from logdoctor.redact import redact
from logdoctor.report import scrub

if TYPE_CHECKING:
    from logdoctor.audit import RuleResult
    from logdoctor.check import CheckReport
    from logdoctor.model import ConstraintResult

# A finding's rules (pydantic, model.py) or check's (a dataclass, audit.py): the same fields.
Results = Sequence[Union["ConstraintResult", "RuleResult"]]

MARK = {"met": "✔", "unmet": "✘", "unknown": "?"}
STYLE = {"met": "green", "unmet": "bold red", "unknown": "yellow"}


def checklist(results: Results, color: bool = False) -> list[str]:
    """One block per rule: unmet first (the one vLLM raised on top), then unknown, then met."""
    order = {"unmet": 0, "unknown": 1, "met": 2}
    lines: list[str] = []
    for r in sorted(results, key=lambda r: (order[r.status], not r.raised_by_vllm)):
        mark = MARK[r.status]
        if color:
            mark = f"[{STYLE[r.status]}]{mark}[/]"
        raised = " (vLLM raised this one)" if r.raised_by_vllm else ""
        lines.append(f"  {mark} {r.id}: {r.says}{raised}")
        if r.status != "met":
            lines.append(f"      vLLM: {r.vllm_message}")
            lines += [f"      {e}" for e in r.evidence]
        if r.fix:
            lines.append(f"      fix: {r.fix}")
        if r.reveal:
            lines.append(f"      unknown: {r.reveal}")
        if r.note and r.status != "met":
            lines.append(f"      note: {r.note}")
    return [redact(line) for line in lines]


def command_diff(before: str, after: str, color: bool = False) -> list[str]:
    """`- before` / `+ after`, the changed words marked ([-old-] {+new+} without colour)."""
    import difflib  # here, not at the top: a reporter of a clean log never diffs a command
    import shlex

    old, new = shlex.split(redact(before)), shlex.split(redact(after))
    minus, plus = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        removed, added = shlex.join(old[i1:i2]), shlex.join(new[j1:j2])
        if op == "equal":
            minus.append(removed)
            plus.append(added)
            continue
        if removed:
            minus.append(f"[red]{_escape(removed)}[/]" if color else f"[-{removed}-]")
        if added:
            plus.append(f"[green]{_escape(added)}[/]" if color else f"{{+{added}+}}")
    return ["  - " + " ".join(minus), "  + " + " ".join(plus)]


def _escape(text: str) -> str:
    return text.replace("[", r"\[")


def check_summary(results: Results, problems: list[str]) -> str:
    unmet = sum(r.status == "unmet" for r in results)
    unknown = sum(r.status == "unknown" for r in results)
    if not results and not problems:
        return "No constraint set applies to this launch (no feature with known rules is turned on)."
    if unmet == 0 and not problems:
        tail = f"; {unknown} unknown (see what would reveal them)" if unknown else ""
        return f"All {len(results)} rules met{tail}."
    return f"{unmet} rule(s) unmet, {unknown} unknown, {len(problems)} problem(s) vLLM's parser would reject."


def print_check(report: CheckReport, fmt: str, out: TextIO, color: bool = False) -> None:
    audit = report.audit
    if fmt == "json":
        data = {
            "kind": "check",
            "ok": report.ok,
            "vllm_version": report.version,
            "constraints": [asdict(r) for r in audit.results],
            "command": audit.after,
            "original_command": audit.before,
            "problems": report.problems,
            "unresolved": report.audit.unresolved,
            "sets": audit.sets,
        }
        if report.with_vllm is not None:
            data["with_vllm"] = report.with_vllm.as_dict()
        out.write(json.dumps(scrub(data)) + "\n")
        return
    lines = [f"logdoctor check: vLLM {report.version}"]
    for name in audit.sets:
        lines.append(f"rules: {name}")
    lines += checklist(audit.results, color)
    if report.problems:
        lines.append("vLLM's argument parser would reject:")
        lines += [f"  - {redact(p)}" for p in report.problems]
    if audit.before and audit.after:
        lines.append("corrected command:")
        lines += command_diff(audit.before, audit.after, color)
    if audit.unresolved:
        lines.append("no single change meets these together; choose one of their other fixes by hand:")
        lines += [f"  - {item}" for item in audit.unresolved]
    lines.append(check_summary(audit.results, report.problems))
    if report.with_vllm is not None:
        from logdoctor.report.withvllm import with_vllm_lines

        lines += with_vllm_lines(report.with_vllm, color)
    if color:
        from rich.console import Console

        Console(file=out, highlight=False).print("\n".join(lines))
    else:
        out.write("\n".join(lines) + "\n")
