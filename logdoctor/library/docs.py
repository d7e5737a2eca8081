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


# `logdoctor explain unrecognized`: the rule of every error nothing in the library knows (diagnose.py).
UNRECOGNIZED_PAGE = """## unrecognized

**An error that no pattern knows**

Severity: error when the error stopped the server (a traceback that ended a process, or one a known fatal
wrapper points at), warning otherwise. Role: cause, or request for a failed request's error.

### What it means

logdoctor found an error (a traceback, or an ERROR line) that no pattern of the library matches and that
vLLM's error surface index does not place either (when it does, the finding's rule is `vllm.<area>`, with
where vLLM raises the message and why). The finding still says what is known: the exception's type and
message, the innermost frame in vLLM's code when there is a traceback, and the lines of the log it spans.
A traceback cut off before its exception line is reported the same way, as a consequence.

### Fix

There is no known fix yet; these find one:

1. Read the error the finding quotes and the lines just above it in the log: a cause is often logged
   first (a warning, a failed download, a killed worker).
2. Search vLLM's issues for the message: the finding's fix has the search prefilled.
3. Run the server again with `VLLM_LOGGING_LEVEL=DEBUG` for the context around the failure.
4. Once the cause is known, write a pattern for it (docs/pattern-format.md), check it with
   `logdoctor patterns test DIR` and use it with `--patterns DIR`; a pull request adding it helps the next
   person.

### Where it comes from

`logdoctor/diagnose.py`: the finding every unmatched error gets, never an empty message or vLLM's own
wrapper as the root cause.
"""


def families(library: Library) -> list[str]:
    """The families of the library: a pattern id's part before its first dot (`memory`, `cuda`), sorted."""
    return sorted({p.id.split(".", 1)[0] for p in library.patterns})


def select(library: Library, family: str | None = None, grep: str | None = None) -> list[Pattern]:
    """The patterns of a family (None: every one) whose id or title contains `grep` (any case), in order."""
    needle = (grep or "").casefold()
    return [
        p
        for p in library.patterns
        if (family is None or p.id.split(".", 1)[0] == family)
        and (not needle or needle in p.id.casefold() or needle in p.title.casefold())
    ]


def pattern_record(library: Library, pattern: Pattern) -> dict[str, object]:
    """`logdoctor patterns --format json`: one pattern as a JSON object (the columns of the table, and more)."""
    return {
        "id": pattern.id,
        "family": pattern.id.split(".", 1)[0],
        "severity": pattern.severity,
        "role": pattern.role,
        "versions": pattern.source.versions or "any",
        "title": pattern.title,
        "fix": pattern.fix.summary,
        "source": pattern.source.file,
        "docs": pattern.docs,
        "rule_sets": rule_sets_of(library, pattern.id),
    }


def surface_page(area: str, messages: int) -> str:
    """`logdoctor explain vllm.AREA`: the rule of a vLLM message no pattern knows and the index of vLLM's
    error surface places (diagnose.py's _surface_finding)."""
    return f"""## vllm.{area}

**A vLLM message that no pattern knows, placed by vLLM's own source ({area})**

Severity: as for `unrecognized`, error when the error stopped the server. Role: cause (request for a
request handler's error).

### What it means

No pattern of the library knows this error, but the index of vLLM's error surface does: every `raise` and
error log of the released wheels (`logdoctor/surface/vllm-surface.json.gz`, built by
`bench/surface/build_index.py`). The finding says where vLLM raises or logs the message (file, line,
function), the `if` that guards it, the `vllm serve` flags and environment variables it reads, and the
releases that have it ("removed in 0.20"). `{area}` is the part of vLLM it comes from; the index holds
{messages} messages of that area.

### Fix

1. The finding's fix names the flags and the condition to change, and links vLLM's check in its source.
2. When a later release no longer has the message, the finding says so: upgrading may avoid it.
3. Otherwise as for any unknown error (`logdoctor explain unrecognized`): search vLLM's issues for the
   message, rerun with `VLLM_LOGGING_LEVEL=DEBUG`, and once the cause is known, add a pattern.

### Where it comes from

`logdoctor/diagnose.py`, from the index's entry for the message.
"""
