"""`check --with-vllm`: the chain of vLLM's own verdicts, one round a line block, and the command it accepted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logdoctor.redact import redact
from logdoctor.report.layout import Line, command_diff

if TYPE_CHECKING:
    from logdoctor.withvllm import WithVllm

STAGE = {
    "parser": "its argument parser",
    "validate": "its serve-argument checks",
    "serve": "`vllm serve`'s checks",
    "server": "the API server's checks",
    "config": "its config construction",
    "renderer": "its tokenizer",
}


def with_vllm_lines(result: WithVllm) -> list[Line]:
    def text(line: str, style: str = "") -> Line:
        return [(redact(line), style)]

    asked = len(result.rounds)
    lines = [
        text(
            f"vLLM {result.vllm_version} itself ({result.python}): asked {asked} time{'s' if asked != 1 else ''}, "
            f"imported in {result.import_seconds:.1f} s",
            "underline",
        )
    ]
    for r in result.rounds:
        if r.ok and r.fails_later:
            said = f"  {r.number}. accepted by vLLM's validation ({r.seconds:.2f} s), but it fails later:"
            lines.append(text(said, "yellow"))
            lines += [text(f"     check: {rule} (vLLM raises it after validation)") for rule in r.fails_later]
            if r.fixed_command is not None:
                lines.append(text("     fix (from check's rules):"))
                lines += [[("  ", ""), *line] for line in command_diff(r.command, r.fixed_command)]
            continue
        if r.ok:
            lines.append(text(f"  {r.number}. accepted ({r.seconds:.2f} s)", "green"))
            continue
        error = (r.error or "").splitlines() or [""]
        stage = STAGE.get(r.stage or "", r.stage)
        lines.append(text(f"  {r.number}. refused by {stage} ({r.seconds:.2f} s): {r.error_type}: {error[0]}", "red"))
        lines += [text(f"       {line}") for line in error[1:]]
        if r.rule is not None:
            lines.append(text(f"     logdoctor: {r.rule}: {r.title}"))
        else:
            lines.append(text("     logdoctor: no pattern knows this error", "dim"))
        if r.predicted_by:
            lines += [text(f"     check without vLLM saw it: {p}", "dim") for p in r.predicted_by]
        else:
            lines.append(text("     check without vLLM did not predict it", "dim"))
        if r.fixed_command is not None:
            source = "" if r.fix_from == "finding" else " (from check's rules, not from this error's fix)"
            lines.append(text(f"     fix{source}:"))
            lines += [[("  ", ""), *line] for line in command_diff(r.command, r.fixed_command)]
            if r.dropped:
                lines.append(
                    text(
                        f"     note: the corrected command leaves out {', '.join(r.dropped)}: vLLM's parser took "
                        "it, logdoctor's does not know it; put back what you meant",
                        "yellow",
                    )
                )
        elif r.fix:
            lines.append(text(f"     fix (by hand): {r.fix}"))
    lines.append(text(summary(result), "bold"))
    return lines


def summary(result: WithVllm) -> str:
    if result.accepted_original:
        return "vLLM accepted the launch as it is."
    if not result.accepted and result.rounds and result.rounds[-1].fails_later:
        return f"vLLM's validation accepted the launch, but it will fail after: {result.stopped}."
    fixes = len(result.rounds) - 1
    if result.accepted:
        return f"vLLM accepted the corrected command after {fixes} fix{'es' if fixes != 1 else ''}: {result.command}"
    return f"vLLM refused the launch: {result.stopped}."
