"""A pattern as a documentation page (`logdoctor explain ID`), and the whole library as docs/patterns.md."""

from __future__ import annotations

from logdoctor.library.matcher import Library
from logdoctor.library.pattern import Pattern

_WHERE = {
    "exception": "the message of an exception",
    "line": "a log line",
    "any": "the message of an exception or a log line",
}


def _matches_sentence(pattern: Pattern) -> str:
    target = _WHERE[pattern.where]
    if pattern.exception:
        target += f" of type {' or '.join(pattern.exception)}"
    if pattern.levels:
        target += f" at level {' or '.join(pattern.levels)}"
    frames = f", in a traceback passing through a frame matching `{pattern.frames}`" if pattern.frames else ""
    return f"Searched in {target}{frames}, this regex:"


def pattern_page(pattern: Pattern, rule_sets: list[str] | None = None) -> str:
    """Fixed headings, like ruff's rule pages: what it matches, what it means, the fix, where from."""
    source = pattern.source
    lines = [
        f"## {pattern.id}",
        "",
        f"**{pattern.title}**",
        "",
        f"Severity: {pattern.severity}. Role: {pattern.role}. vLLM versions: {source.versions or 'any'}.",
        "",
        "### What it matches",
        "",
        _matches_sentence(pattern),
        "",
        "```",
        pattern.match,
        "```",
        "",
        "### What it means",
        "",
        pattern.explanation.strip(),
        "",
        "### Fix",
        "",
        pattern.fix.summary,
        "",
    ]
    lines += [f"{n}. {step}" for n, step in enumerate(pattern.fix.steps, 1)]
    if pattern.fix.set or pattern.fix.unset:
        changes = [f"`{k} = {v}`" for k, v in pattern.fix.set.items()] + [f"remove `{k}`" for k in pattern.fix.unset]
        lines += ["", "Flag change: " + ", ".join(changes)]
    lines += [
        "",
        "### Where it comes from",
        "",
        f"`{source.file}`" + (f", `{source.function}`" if source.function else ""),
    ]
    if source.checked:
        lines += ["", f"Checked: {source.checked}"]
    if pattern.docs:
        lines += ["", f"vLLM docs: {pattern.docs}"]
    if rule_sets:
        lines += ["", "Rule of: " + ", ".join(rule_sets) + " (the whole launch is checked against it)"]
    lines += ["", "### Examples", "", "Matches:", ""]
    for example in pattern.examples.match:
        lines += ["```", example.strip("\n"), "```"]
    lines += ["", "Does not match:", ""]
    for example in pattern.examples.no_match:
        lines += ["```", example.strip("\n"), "```"]
    return "\n".join(lines) + "\n"


def rule_sets_of(library: Library, pattern_id: str) -> list[str]:
    return [s.id for s in library.sets if any(pattern_id in r.patterns for r in s.rule)]


def library_table(library: Library) -> list[tuple[str, str, str, str]]:
    return [(p.id, p.severity, p.source.versions or "any", p.title) for p in library.patterns]


def library_markdown(library: Library) -> str:
    """docs/patterns.md: generated; `logdoctor patterns --markdown > docs/patterns.md` rewrites it."""
    head = [
        "# The pattern library",
        "",
        "Generated from `patterns/*.toml` by `logdoctor patterns --markdown > docs/patterns.md`;",
        "a test fails when this file is stale. One section per pattern, in matching order.",
        "",
        f"{len(library.patterns)} patterns.",
        "",
        "| id | severity | vLLM | title |",
        "|---|---|---|---|",
    ]
    head += [f"| [{i}](#{i.replace('.', '')}) | {s} | {v} | {t} |" for i, s, v, t in library_table(library)]
    pages = [pattern_page(p, rule_sets_of(library, p.id)) for p in library.patterns]
    return "\n".join(head) + "\n\n" + "\n".join(pages)
