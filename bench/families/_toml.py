"""Shared helpers of the family generators: TOML rendering of pattern tables and splicing a generated
block into a pattern file between two marker lines (the rest of the file stays hand-written)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ROOT / "patterns"


def literal(text: str) -> str:
    """A TOML literal string ('''...''' or '...'), which keeps regex backslashes as they are."""
    if "'''" in text:
        raise ValueError(f"cannot write {text!r} as a TOML literal string")
    if "\n" in text or "'" in text:
        return f"'''{text}'''"
    return f"'{text}'"


def basic(text: str) -> str:
    """A TOML basic string with escapes (for prose)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def prose(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""'


def pattern_toml(p: dict) -> str:
    """One [[pattern]] table. `p` holds the fields of docs/pattern-format.md; `comment` (optional) goes above."""
    out: list[str] = []
    if p.get("comment"):
        out += [f"# {line}".rstrip() for line in p["comment"].splitlines()]
    out.append("[[pattern]]")
    out.append(f"id = {basic(p['id'])}")
    out.append(f"title = {basic(p['title'])}")
    out.append(f"severity = {basic(p['severity'])}")
    out.append(f"role = {basic(p.get('role', 'cause'))}")
    if p.get("priority"):
        out.append(f"priority = {p['priority']}")
    out.append(f"where = {basic(p.get('where', 'exception'))}")
    if p.get("exception"):
        out.append("exception = [" + ", ".join(basic(e) for e in p["exception"]) + "]")
    if p.get("levels"):
        out.append("levels = [" + ", ".join(basic(e) for e in p["levels"]) + "]")
    out.append(f"match = {literal(p['match'])}")
    out.append(f"explanation = {prose(p['explanation'])}")
    if p.get("docs"):
        out.append(f"docs = {basic(p['docs'])}")
    out.append("")
    out.append("[pattern.fix]")
    out.append(f"summary = {basic(p['summary'])}")
    out.append("steps = [")
    out += [f"  {basic(s)}," for s in p["steps"]]
    out.append("]")
    if p.get("set"):
        out.append("set = { " + ", ".join(f"{k} = {basic(str(v))}" for k, v in p["set"].items()) + " }")
    if p.get("unset"):
        out.append("unset = [" + ", ".join(basic(u) for u in p["unset"]) + "]")
    out.append("")
    out.append("[pattern.source]")
    for key in ("file", "function", "versions", "checked"):
        if p.get(key):
            out.append(f"{key} = {basic(p[key])}")
    out.append("")
    out.append("[pattern.examples]")
    out.append("match = [")
    out += [f"  {literal(e)}," for e in p["match_examples"]]
    out.append("]")
    out.append("no_match = [")
    out += [f"  {literal(e)}," for e in p["no_match_examples"]]
    out.append("]")
    return "\n".join(out) + "\n"


def splice(path: Path, name: str, block: str) -> None:
    """Replace the lines between `# >>> generated: NAME` and `# <<< generated: NAME` in `path`
    (appending the markers at the end of the file when they are not there yet)."""
    begin, end = f"# >>> generated: {name}", f"# <<< generated: {name}"
    text = path.read_text() if path.exists() else ""
    found = re.search(rf"^{re.escape(begin)}[^\n]*\n.*?^{re.escape(end)}[^\n]*\n", text, re.S | re.M)
    new = f"{begin} (do not edit by hand: run `python bench/families/{name}.py`)\n{block}{end}\n"
    if found:
        text = text[: found.start()] + new + text[found.end() :]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + new
    path.write_text(text)
