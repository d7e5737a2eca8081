"""Generate the `EngineArgs.__init__() got an unexpected keyword argument '<field>'` patterns of
patterns/cli.toml.

    python bench/families/engine_args_fields.py

`vllm serve` checks its options with argparse (cli_removed_flags.py covers `unrecognized arguments`), but
Python callers build the engine arguments directly: `LLM(model=..., **kwargs)` passes every keyword to
`EngineArgs(...)`, and launchers (KServe's huggingfaceserver, Ray Serve, RL frameworks, benchmark
harnesses, a platform's `engine_kwargs`) call `AsyncEngineArgs(**settings)`. EngineArgs is a dataclass,
so a field the installed release does not have is Python's `TypeError: EngineArgs.__init__() got an
unexpected keyword argument 'x'` (`__init__() got ...` without the class before Python 3.10; 3.13 may add
`. Did you mean 'y'?`). Such a field is almost always an option of another release.

The fields of `EngineArgs` and `AsyncEngineArgs` are read from every release under /work/vllm-src/
(engine/arg_utils.py, annotated class attributes). Two families are written:

* one pattern per field that some release had and 0.33.0 does not (removed): which release was the last
  to have it and what replaces it (the advice of cli_removed_flags.REPLACEMENTS for the same flag, or
  FIELD_REPLACEMENTS below);
* one pattern per release for the fields of 0.33.0 that first appeared in it (added): the installed vLLM
  is older than the caller expects.

A field name without an underscore (`device`, `task`, `runner`, ...) is a common word, so for those the
class name must be in the message. What a typo or an unknown field means is said by the hand-written
patterns after the generated block (cli.engine-args-unknown-field, cli.unexpected-keyword-argument).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402
from cli_removed_flags import REPLACEMENTS, _key, minor, releases  # noqa: E402

SRC = Path("/work/vllm-src")
CURRENT = "0.33.0"
CLASSES = ("EngineArgs", "AsyncEngineArgs")

# Fields whose flag has no REPLACEMENTS entry (the flag lives on elsewhere), or whose field history differs
# from the flag's (checked first).
FIELD_REPLACEMENTS: dict[str, dict[str, str]] = {
    "disable_log_requests": {
        "why": "From 0.10 request logging is off by default and switched on with enable_log_requests; disable_log_requests stopped being a field (0.10-0.11 kept it only as a deprecated property, which the constructor does not take).",
        "use": "Drop `disable_log_requests`: requests are not logged unless you pass `enable_log_requests=True` (`--enable-log-requests`).",
    },
    "max_log_len": {
        "why": "It moved from the engine arguments to the API server's own options.",
        "use": "Drop max_log_len from the engine arguments; `vllm serve` still takes `--max-log-len` as a server option.",
    },
}

CLASS_RE = r"(?P<cls>(?:Async)?EngineArgs)"
# The message is Python's: the TypeError of the `__init__` that `dataclasses` generates for EngineArgs
# (vLLM's code never writes it, so the error-surface index does not hold it).
RENDERER = "python: dataclasses-generated __init__ (CPython Python/ceval.c argument binding)"


def fields(version: str) -> set[str]:
    tree = ast.parse((SRC / version / "vllm/engine/arg_utils.py").read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in CLASSES:
            for stmt in node.body:
                named = isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                if named and not stmt.target.id.startswith("_"):  # type: ignore[union-attr]
                    out.add(stmt.target.id)  # type: ignore[union-attr]
    return out


def field_table() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for version in releases():
        for name in fields(version):
            table.setdefault(name, []).append(version)
    return table


def message_re(names: list[str]) -> str:
    """The TypeError's message for these fields; a bare `__init__()` only for names with an underscore."""
    plain = [n for n in names if "_" in n]
    word = [n for n in names if "_" not in n]
    tail = r"\(\) got an unexpected keyword argument '(?P<arg>{})'"
    alts = []
    if plain:
        alts.append(rf"(?:\b{CLASS_RE}\.)?__init__" + tail.format("|".join(plain)))
    if word:
        alts.append(rf"\b{CLASS_RE}\.__init__" + tail.format("|".join(word)))
    return "|".join(alts)


def _plain(text: str) -> str:
    """REPLACEMENTS advice without the `{value|...}` placeholders of the flag patterns (no value here)."""
    text = re.sub(r"\{value\|([^{}]*)\}", r"\1", text)
    return text.replace("{value}", "<value>")


def removed_block(table: dict[str, list[str]], current: set[str], vers: list[str]) -> list[str]:
    removed = sorted((f for f in table if f not in current), key=lambda f: (_key(table[f][-1]), f))
    blocks = []
    for name in removed:
        flag = "--" + name.replace("_", "-")
        entry = FIELD_REPLACEMENTS.get(name) or REPLACEMENTS.get(flag)
        if entry is None:
            raise SystemExit(f"removed engine field {name} has no replacement entry ({flag} not in REPLACEMENTS)")
        first, last = table[name][0], table[name][-1]
        gone = vers[vers.index(last) + 1]
        had = f"vLLM {minor(first)}" if minor(first) == minor(last) else f"vLLM {minor(first)} to {minor(last)}"
        use = _plain(str(entry["use"])).replace("{flag}", f"`{name}` ({flag})")
        cls = "EngineArgs" if "_" in name else "AsyncEngineArgs"
        blocks.append(
            pattern_toml(
                {
                    "id": f"cli.engine-arg-removed-{name.replace('_', '-')}",
                    "title": f"The engine argument {name} no longer exists ({minor(last)} was the last release with it)",
                    "severity": "error",
                    "where": "exception",
                    "exception": ["TypeError"],
                    "match": message_re([name]),
                    "explanation": (
                        f"Code built vLLM's engine arguments with `{name}=...` (LLM(...) keyword arguments, a launcher's "
                        f"engine settings, a script written for an older vLLM), and this release has no such field, so "
                        f"the dataclass refuses it and nothing starts. {had} had it. {entry['why']}"
                    ),
                    "summary": use,
                    "steps": [
                        *[_plain(str(step)).replace("{flag}", f"`{name}` ({flag})") for step in entry.get("steps", [])],  # type: ignore[attr-defined]
                        f"Remove `{name}` where the engine arguments are built: the `LLM(...)` call, the launcher's config (engine_kwargs, InferenceService args, Ray Serve LLMConfig ...), or a wrapper script.",
                        "As a keyword argument an option is its flag name with underscores (`--max-model-len` -> `max_model_len`); `vllm serve --help=all` lists the flags of the installed release.",
                        f"If the launcher itself passes `{name}`, use a launcher release made for this vLLM, or a vLLM release up to {minor(last)}.",
                    ],
                    "set": entry.get("set", {}),
                    "unset": [name],
                    "file": RENDERER,
                    "function": f"{cls}.__init__ (vllm/engine/arg_utils.py, a dataclass)",
                    "versions": f">={minor(gone)}",
                    "checked": (
                        f"field `{name}` of EngineArgs/AsyncEngineArgs in the vLLM {minor(first)}-{minor(last)} sources "
                        f"(engine/arg_utils.py), absent from {minor(gone)} and {CURRENT}; the TypeError text is CPython's "
                        "(Python/ceval.c, `%U() got an unexpected keyword argument '%S'`); generated by "
                        "bench/families/engine_args_fields.py"
                    ),
                    "match_examples": [
                        f"TypeError: {cls}.__init__() got an unexpected keyword argument '{name}'",
                        f"TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument '{name}'",
                    ],
                    "no_match_examples": [
                        f"TypeError: EngineArgs.__init__() got an unexpected keyword argument '{name}_x'",
                        f"vllm serve: error: unrecognized arguments: {flag}",
                    ],
                }
            )
        )
    return blocks


def added_block(table: dict[str, list[str]], current: set[str], vers: list[str]) -> list[str]:
    by_release: dict[str, list[str]] = {}
    for name in current:
        first = table[name][0]
        if first != vers[0]:
            by_release.setdefault(first, []).append(name)
    blocks = []
    for release in sorted(by_release, key=_key):
        names = sorted(by_release[release])
        before = vers[vers.index(release) - 1]
        sample = next((n for n in names if "_" in n), names[0])
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        slug = minor(release).replace(".", "-")
        blocks.append(
            pattern_toml(
                {
                    "id": f"cli.engine-arg-added-in-{slug}",
                    "title": f"The engine argument {{arg}} needs vLLM {minor(release)} or later; this vLLM is older",
                    "severity": "error",
                    "where": "exception",
                    "exception": ["TypeError"],
                    "match": message_re(names),
                    "explanation": (
                        f"Code built vLLM's engine arguments with `{{arg}}=...`, an option that first appeared in vLLM "
                        f"{minor(release)} ({minor(before)} did not have it), so the installed, older release refuses it "
                        f"and nothing starts. The caller (a launcher, a framework, a script or a --config translated by a "
                        f"tool) was written for a newer vLLM. Fields new in {minor(release)}: {shown}."
                    ),
                    "summary": f"Upgrade vLLM to {minor(release)} or later (`pip install -U 'vllm>={minor(release)}'`), or remove `{{arg}}` from the engine arguments.",
                    "steps": [
                        f"Upgrade: `pip install -U 'vllm>={minor(release)}'` (or the launcher image built for that vLLM).",
                        "Or drop `{arg}` where the engine arguments are built (LLM(...) keywords, the launcher's engine settings), and use a launcher release made for the installed vLLM.",
                        "`python -c 'import vllm; print(vllm.__version__)'` shows the installed release.",
                    ],
                    "unset": [],
                    "file": RENDERER,
                    "function": "EngineArgs.__init__ (vllm/engine/arg_utils.py, a dataclass)",
                    "versions": f"<{minor(release)}",
                    "checked": (
                        f"fields of EngineArgs/AsyncEngineArgs first present in the vLLM {minor(release)} sources "
                        f"(engine/arg_utils.py), absent from {minor(before)}, present in {CURRENT}; the TypeError text is "
                        "CPython's (Python/ceval.c, `%U() got an unexpected keyword argument '%S'`); generated by "
                        "bench/families/engine_args_fields.py"
                    ),
                    "match_examples": [
                        f"TypeError: EngineArgs.__init__() got an unexpected keyword argument '{sample}'",
                        f"TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument '{names[-1]}'",
                    ],
                    "no_match_examples": [
                        f"TypeError: EngineArgs.__init__() got an unexpected keyword argument '{sample}_extra'",
                        f"TypeError: EngineArgs.__init__() missing 1 required positional argument: '{sample}'",
                    ],
                }
            )
        )
    return blocks


def build() -> str:
    vers = releases()
    table = field_table()
    current = fields(CURRENT)
    return "\n".join(removed_block(table, current, vers) + added_block(table, current, vers))


def main() -> None:
    splice(PATTERNS / "cli.toml", "engine_args_fields", build())


if __name__ == "__main__":
    main()
