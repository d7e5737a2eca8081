"""What `check` prints: the rules, what vLLM's parser would refuse, and the corrected command last, in the
reports' layout (report/layout.py)."""

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

def check_summary(results: Results, problems: list[str]) -> str:
    from logdoctor.report.layout import plural

    unmet = sum(r.status == "unmet" for r in results)
    unknown = sum(r.status == "unknown" for r in results)
    if not results and not problems:
        return "No constraint set applies to this launch (no feature with known rules is turned on)."
    if unmet == 0 and not problems:
        tail = f"; {unknown} unknown (see what would reveal them)" if unknown else ""
        return f"All {plural(len(results), 'rule')} met{tail}."
    rejected = f"{plural(len(problems), 'problem')} vLLM's parser would reject"
    return f"{plural(unmet, 'rule')} unmet, {unknown} unknown, {rejected}."


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
            "caveats": audit.caveats,
            "yaml_diff": report.yaml_diff,
        }
        if report.with_vllm is not None:
            data["with_vllm"] = report.with_vllm.as_dict()
        out.write(json.dumps(scrub(data)) + "\n")
        return
    from logdoctor.report.layout import Layout, Line, command_changes, command_diff, plain

    layout = Layout(width=100)
    lines: list[Line] = [[(f"logdoctor check: vLLM {report.version}", "bold")]]
    lines += layout.rules(audit.results)
    if report.problems:
        lines.append([("vLLM's argument parser would reject:", "underline")])
        lines += [[(f"  - {redact(p)}", "")] for p in report.problems]
    if report.yaml_diff:
        lines.append([("the --config file, corrected:", "underline")])
        lines += [[(f"  {line}", "red" if line.startswith("-") else "green")] for line in report.yaml_diff]
    for caveat in audit.caveats:
        lines += [[(row, "yellow")] for row in layout._wrap(redact(caveat), "", "Note: ")]
    if audit.unresolved:
        lines.append([("no single change meets these together; choose one of their other fixes by hand:", "")])
        lines += [[(f"  - {item}", "")] for item in audit.unresolved]
    lines.append([(check_summary(audit.results, report.problems), "bold")])
    after = audit.after
    if report.with_vllm is not None:
        from logdoctor.report.withvllm import with_vllm_lines

        lines += [row for line in with_vllm_lines(report.with_vllm) for row in layout.fit(line, "       ")]
        if report.with_vllm.accepted and report.with_vllm.command:
            after = report.with_vllm.command  # the command vLLM itself accepted
    if audit.before and after and after != audit.before:  # last, as in a report: diff, then the command
        diff = command_diff(audit.before, after)
        if max(len(plain(line)) for line in diff) > 2 * layout.width:
            diff = command_changes(audit.before, after)
        lines += [row for line in diff for row in layout.fit(line, "    ")]
        lines += [[("Corrected command:", "underline")], [(redact(after), "bold")]]
    if color:
        from rich.console import Console

        from logdoctor.report.terminal import styled

        console = Console(file=out, highlight=False, soft_wrap=True)
        for line in lines:
            console.print(styled(line))
    else:
        out.write("".join(plain(line) + "\n" for line in lines))
