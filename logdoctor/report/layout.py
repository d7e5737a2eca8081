"""What a person reads of a launch's findings, as lines of styled segments: the terminal reporter prints
them with colour, the plain one without, so both have one layout (NO_COLOR keeps it too).

    root cause    in full: title, the one error line, what it means (three lines at most), the fix, the
                  feature's rules that are unmet or unknown ("N other rules met")
    others        one line each: `↳ engine.core-init-failed, lines 67-131: wrapper of the above`
    warnings      one line each, grouped at the end of the launch
    summary       last on screen, outside any panel: the root cause, the fix, the command's diff and the
                  corrected command alone on its line, so it can be copied as it is

`verbose` gives every detail: the evidence, the whole explanation, every rule, and every finding in full.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logdoctor.redact import redact

if TYPE_CHECKING:
    from logdoctor.audit import RuleResult
    from logdoctor.model import ConstraintResult, EvidenceLine, Finding

Segment = tuple[str, str]  # (text, rich style or "")
MARKER = "marker"  # a segment that says in plain text what colour says on a terminal, which drops it
Line = list[Segment]

MEANING_LINES = 3
EVIDENCE_HEAD = 2
EVIDENCE_TAIL = 10
MARK = {"met": "✔", "unmet": "✘", "unknown": "?"}
MARK_STYLE = {"met": "green", "unmet": "bold red", "unknown": "yellow"}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
TRUNCATED_NOTE = (
    "truncated: the error was longer than logdoctor keeps (64 KiB a line, the first 200 and last 2000 "
    "lines, 200 frames an exception); the middle was dropped"
)
ROLE_NOTE = {
    "wrapper": "wrapper of the above",
    "consequence": "consequence of the above",
    "benign": "harmless",
    "request": "a failed request; the server kept running",
}
# vLLM's record prefix on an evidence line: `(EngineCore pid=81390) ERROR 11-30 19:42:03 [core.py:1584] `.
_RECORD_PREFIX = re.compile(
    r"^(?:\((?:[\w.-]+ )?pid=\d+(?:, ip=[\d.:a-f]+)?\) |\[rank\d+\]: )*"
    r"(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[[^\]]+\] |[\w.]+:\d+\] ))?"
)


def plural(count: int, noun: str) -> str:
    """`1 launch`, `2 launches`, `3 findings`: the reports' counts."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{count} {noun}s"


def plain(line: Line) -> str:
    return "".join(text for text, _ in line)


def span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def ranges(numbers: Sequence[int]) -> str:
    """`3-12`, `1, 4-6`: launch numbers as a person writes them."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def launches_label(numbers: Sequence[int]) -> str:
    return ("launch " if len(numbers) == 1 else "launches ") + ranges(numbers)


def error_text(finding: Finding) -> str:
    error = f"{finding.error.type}: {finding.error.message}" if finding.error.type else finding.error.message
    return " ".join(error.splitlines()[0].split()) if error else ""


def error_line_number(finding: Finding) -> int:
    """The line that says the error: the evidence line within the event that carries the message."""
    first, last = finding.lines
    head = finding.error.message.splitlines()[0][:80] if finding.error.message else ""
    inside = [e for e in finding.evidence if first <= e.line <= last]
    for item in reversed(inside):
        if head and head in item.text:
            return item.line
    return inside[-1].line if inside else last


def without_prefix(text: str) -> str:
    return _RECORD_PREFIX.sub("", text, count=1)


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)].rstrip() + "…"


def wrap_segments(line: Line, width: int, indent: str) -> list[Line]:
    """A styled line cut into rows of `width` at blanks, each row after the first indented. A word may
    span segments (`{+` `--flag` `+}`) and stays whole; one longer than a row (a JSON option) is cut."""
    words: list[Line] = [[]]
    for text, style in line:
        for piece in re.split(r"(?<= )", text):
            if piece:
                words[-1].append((piece, style))
                if piece.endswith(" "):
                    words.append([])
    rows: list[Line] = [[]]
    used = 0
    for word in words:
        if used + len(plain(word).rstrip()) > width and used > len(indent) and rows[-1]:
            rows.append([(indent, "")])
            used = len(indent)
        for text, style in word:
            while used + len(text.rstrip()) > width and width - used > 0 and len(text.rstrip()) > width - len(indent):
                rows[-1].append((text[: width - used], style))
                text = text[width - used :]
                rows.append([(indent, "")])
                used = len(indent)
            rows[-1].append((text, style))
            used += len(text)
    return [_trim(row) if row else row for row in rows]


@dataclass(frozen=True)
class Layout:
    width: int = 100
    verbose: bool = False

    def _wrap(self, text: str, indent: str, first: str = "") -> list[str]:
        wrapper = textwrap.TextWrapper(
            width=max(self.width, 40),
            initial_indent=indent + first,
            subsequent_indent=indent + "  ",
            break_on_hyphens=False,  # `--max-model-len` stays whole
        )
        return wrapper.wrap(text) or [indent + first]

    def headline(self, finding: Finding, tag: str = "") -> Line:
        line: Line = [("logdoctor: ", "dim"), (finding.severity.upper(), SEVERITY_STYLE[finding.severity])]
        line.append((f" {finding.rule}", "bold"))
        line.append((f": {finding.title}", "bold" if finding.primary else ""))
        if tag:
            line.append((f" ({tag})", "dim"))
        return line

    def where(self, finding: Finding) -> str:
        parts = [f"launch {finding.launch}", span(*finding.lines)]
        if finding.process:
            parts.append(finding.process)
        if finding.occurrences > 1:
            parts.append(f"seen {finding.occurrences} times")
        return ", ".join(parts)

    def meaning(self, explanation: str) -> list[str]:
        """What it means, in at most three lines: whole sentences while they fit, else the first cut short."""
        if self.verbose:
            return self._wrap(explanation, "  ", "What it means: ")
        sentences = re.split(r"(?<=[.!?])\s+", explanation.strip())
        kept: list[str] = []
        for sentence in sentences:
            trial = self._wrap(" ".join([*kept, sentence]), "  ", "What it means: ")
            if len(trial) > MEANING_LINES:
                break
            kept.append(sentence)
        if kept:
            return self._wrap(" ".join(kept), "  ", "What it means: ")
        lines = self._wrap(explanation, "  ", "What it means: ")[:MEANING_LINES]
        lines[-1] = shorten(lines[-1], self.width - 1) + ("" if lines[-1].endswith("…") else "…")
        return lines

    def root_cause(self, finding: Finding, tag: str = "root cause") -> list[Line]:
        """The root cause, in full."""
        out: list[Line] = [*self.fit(self.headline(finding, tag), "    "), [("  " + self.where(finding), "dim")]]
        error = error_text(finding)
        if error:  # vLLM's own words: the line they are on, then three lines of them at most
            label = f"line {error_line_number(finding)}: "
            lines = self._wrap(redact(error), "  ", label)
            if len(lines) > MEANING_LINES and not self.verbose:
                lines = [
                    *lines[: MEANING_LINES - 1],
                    shorten(lines[MEANING_LINES - 1] + " " + lines[MEANING_LINES], self.width - 1),
                ]
                lines[-1] = lines[-1] if lines[-1].endswith("…") else lines[-1] + "…"
            out.append([(lines[0][: len(label) + 2], "dim"), (lines[0][len(label) + 2 :], "bold")])
            out += [[(line, "bold")] for line in lines[1:]]
        if self.verbose:
            out += self.evidence(finding.evidence)
        if finding.truncated:
            out += [[(line, "dim")] for line in self._wrap(f"({TRUNCATED_NOTE})", "  ")]
        out += [[(line, "")] for line in self.meaning(finding.explanation)]
        out += self.fix(finding)
        out += self.rules(finding.constraints)
        if finding.docs:
            out.append([("  docs: ", "dim"), (finding.docs, "blue")])
        return out

    def evidence(self, evidence: list[EvidenceLine]) -> list[Line]:
        shown: list[EvidenceLine | None] = list(evidence)
        if len(evidence) > EVIDENCE_HEAD + EVIDENCE_TAIL:
            shown = [*evidence[:EVIDENCE_HEAD], None, *evidence[-EVIDENCE_TAIL:]]
        out: list[Line] = [[("  Evidence:", "underline")]]
        for item in shown:
            if item is None:
                out.append([("         ...", "dim")])
                continue
            label = f"  {item.line:>7} │ "
            out.append([(label, "dim"), (shorten(redact(without_prefix(item.text)), self.width - len(label)), "")])
        return out

    def fix(self, finding: Finding) -> list[Line]:
        out = [
            [(line, "bold green" if n == 0 else "green")]
            for n, line in enumerate(self._wrap(finding.fix.summary, "  ", "Fix: "))
        ]
        for n, step in enumerate(finding.fix.steps, 1):
            out += [[(line, "")] for line in self._wrap(redact(step), "    ", f"{n}. ")]
        return out

    def rules(self, results: Sequence[ConstraintResult | RuleResult]) -> list[Line]:
        """The feature's rules: unmet and unknown in full, the met ones counted (all of them, verbose)."""
        if not results:
            return []
        order = {"unmet": 0, "unknown": 1, "met": 2}
        ranked = sorted(results, key=lambda r: (order[r.status], not r.raised_by_vllm))
        shown = ranked if self.verbose else [r for r in ranked if r.status != "met"]
        met = len(ranked) - len(shown) if not self.verbose else 0
        sets = sorted({r.set for r in results})
        out: list[Line] = [[(f"  Rules of {', '.join(sets)}:", "underline")]]
        for r in shown:
            raised = " (vLLM raised this one)" if r.raised_by_vllm else ""
            says = self._wrap(f"{r.id}: {redact(r.says)}{raised}", "      ")
            out.append([("    ", ""), (MARK[r.status], MARK_STYLE[r.status]), (" " + says[0].lstrip(), "")])
            out += [[(line, "")] for line in says[1:]]
            if r.status != "met":
                out += [[(line, "dim")] for line in self._wrap(redact(r.vllm_message), "        ", "vLLM: ")]
                # The values the rule read, a line each (verbose: whole, with where each came from).
                for value in r.evidence:
                    if self.verbose:
                        out += [[(line, "dim")] for line in self._wrap(redact(value), "        ")]
                    elif not value.startswith("vLLM raised"):
                        out.append([(shorten("        " + redact(value), self.width), "dim")])
            for label, text in (("fix", r.fix), ("unknown", r.reveal), ("note", r.note if r.status != "met" else None)):
                if text:
                    out += [
                        [(line, "dim" if label != "fix" else "")]
                        for line in self._wrap(redact(text), "        ", f"{label}: ")
                    ]
        if met:
            out.append([("    ", ""), (MARK["met"], MARK_STYLE["met"]), (f" {plural(met, 'other rule')} met", "dim")])
        return out

    def one_line(self, finding: Finding) -> Line:
        """A finding that is not the root cause: `↳ rule, lines A-B: what it is`."""
        note = ROLE_NOTE.get(finding.role, "") if finding.role != "cause" else ""
        what = note or finding.title
        if finding.role == "cause" and finding.severity == "error":
            what = f"also: {finding.title}"
        style = SEVERITY_STYLE[finding.severity] if finding.severity != "info" else "dim"
        times = f", seen {finding.occurrences} times" if finding.occurrences > 1 else ""
        return [("  ↳ ", "dim"), (finding.rule, style), (f", {span(*finding.lines)}{times}: {what}", "")]

    def fit(self, line: Line, indent: str) -> list[Line]:
        return wrap_segments(line, max(self.width, 40), indent)

    def warning(self, finding: Finding) -> Line:
        times = f" (seen {finding.occurrences} times)" if finding.occurrences > 1 else ""
        style = SEVERITY_STYLE[finding.severity] if finding.severity != "info" else "dim"
        return [
            ("    ", ""),
            (finding.severity.upper(), style),
            (f" {finding.rule}, {span(*finding.lines)}: {finding.title}{times}", ""),
        ]

    def warnings(self, findings: Sequence[Finding]) -> list[Line]:
        if not findings:
            return []
        counts = {s: sum(f.severity == s for f in findings) for s in ("warning", "info")}
        label = " and ".join(plural(n, "warning" if s == "warning" else "note") for s, n in counts.items() if n)
        out: list[Line] = [[(f"  {label[0].upper()}{label[1:]} in launch {findings[0].launch}:", "underline")]]
        for f in findings:
            out += self.fit(self.warning(f), "      ")
        return out

    def same_failure(self, launches: Sequence[int]) -> Line:
        return [("  ↺ ", "dim"), (f"the same failure in {launches_label(launches)}", "bold")]

    def title(self, title: str) -> Line:
        """`── title ─────` across the width; a title too long for it (a deep path) is not cut, it wraps."""
        fill = self.width - len(title) - 4
        return [(f"── {title}", "bold"), (" " + "─" * fill if fill >= 3 else "", "dim")]

    def summary(
        self, title: str, root: Finding | None, launches: Sequence[int], others: Iterable[str], quiet: str
    ) -> list[Line]:
        """Last on screen: what failed, the fix, and the corrected command alone on its line."""
        out: list[Line] = [self.title(title)]
        if root is None:
            out.append([(quiet, "bold green")])
            return out
        other = list(others)
        if other:
            out += [[(line, "dim")] for line in self._wrap("; ".join(other), "", "Other failures above: ")]
        which = launches_label(launches or [root.launch]) + ("" if len(launches) <= 1 else ", first")
        where = f" [{root.rule}; {which} at line {error_line_number(root)}]"
        lines = self._wrap(root.title + where, "", "Root cause: ")
        out += [[(line, "bold red" if n == 0 else "bold")] for n, line in enumerate(lines)]
        out += [[(line, "green")] for line in self._wrap(redact(root.fix.summary), "", "Fix: ")]
        for caveat in root.fix.caveats:
            out += [[(line, "yellow")] for line in self._wrap(redact(caveat), "", "Note: ")]
        if root.fix.command:
            command = redact(root.fix.command)
            if root.fix.original_command:  # the words that changed; a long command's changes alone
                diff = command_diff(root.fix.original_command, root.fix.command)
                if max(len(plain(line)) for line in diff) > 2 * self.width:
                    diff = command_changes(root.fix.original_command, root.fix.command)
                for line in diff:
                    out += self.fit(line, "    ")
            out.append([("Corrected command:", "underline")])
            out.append([(command, "bold")])
        return out


def command_diff(before: str, after: str) -> list[Line]:
    """`- before` / `+ after` with the changed words marked: struck words in red, new ones in green
    (`[-old-]` and `{+new+}` in plain text, where there is no colour)."""
    import difflib  # here, not at the top: a reporter of a clean log never diffs a command
    import shlex

    old, new = shlex.split(redact(before)), shlex.split(redact(after))
    minus: Line = [("  - ", "red")]
    plus: Line = [("  + ", "green")]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        removed, added = shlex.join(old[i1:i2]), shlex.join(new[j1:j2])
        if op == "equal":
            minus.append((removed + " ", ""))
            plus.append((added + " ", ""))
            continue
        if removed:
            minus += [("[-", MARKER), (removed, "red strike"), ("-]", MARKER), (" ", "")]
        if added:
            plus += [("{+", MARKER), (added, "bold green"), ("+}", MARKER), (" ", "")]
    return [_trim(minus), _trim(plus)]


def command_changes(before: str, after: str) -> list[Line]:
    """The diff of a command too long to read twice: one line per option that changed (`- --use-replayssm`,
    `+ --max-model-len 39968`, `~ --mamba-backend cpu -> flashinfer`), an environment variable likewise."""
    import shlex

    old, new = _options(shlex.split(redact(before))), _options(shlex.split(redact(after)))
    out: list[Line] = []
    for key, words in old.items():
        if key not in new:
            out.append([("  - ", "red"), (shlex.join(words), "red strike")])
        elif new[key] != words and words[0].startswith("-"):
            was, now = shlex.join(words[1:]) or "(on)", shlex.join(new[key][1:]) or "(on)"
            out.append([("  ~ ", "yellow"), (f"{words[0]} {was} -> ", ""), (now, "bold green")])
    out += [[("  + ", "green"), (shlex.join(words), "bold green")] for key, words in new.items() if key not in old]
    return out


def _options(tokens: list[str]) -> dict[str, list[str]]:
    """A command's words by what they set: `--flag` with its values, `VAR=` assignments, the rest by place."""
    options: dict[str, list[str]] = {}
    key = ""
    for token in tokens:
        if token.startswith("-"):
            key = token.split("=", 1)[0]
            options[key] = [token]
        elif key:
            options[key].append(token)
        elif "=" in token and token.split("=", 1)[0].isidentifier():
            options[token.split("=", 1)[0] + "="] = [token]
        else:  # `vllm`, `serve`, the model: by their place among themselves, and by what they are
            options[f"#{sum(k.startswith('#') for k in options)}={token}"] = [token]
    return options


def _trim(line: Line) -> Line:
    text, style = line[-1]
    return [*line[:-1], (text.rstrip(), style)]
