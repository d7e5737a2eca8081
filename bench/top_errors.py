"""Coverage of the error messages vLLM users report most (bench/top-errors.toml) by logdoctor.

Usage: python bench/top_errors.py [--check] [--toml bench/top-errors.toml] [--out docs/top-errors.md]

Each entry's `example` is run through the installed logdoctor in five shapes:

  bare       the example line alone
  traceback  inside a raw Python traceback (two frames, then the line; a log-only message is raised as
             a RuntimeError carrying its text, the way vLLM re-raises worker errors)
  record     every line as a vLLM-logged ERROR record `(EngineCore_DP0 pid=1) ERROR 11-30 19:41:07
             [core.py:1] ...` (a vLLM log prefix the example already has is replaced)
  message    the message without its exception type (and without any log prefix)
  ci         the bare line under an unknown CI-style prefix `2024-05-01T10:00:00.1234567Z   | `

A shape is recognised by a pattern when logdoctor reports a finding for it whose rule is a pattern id
(not `unrecognized`, not an error-surface index hit). If `logdoctor.surface` exists, a shape no pattern
recognises but the vLLM error-surface index explains counts as `index`.

Writes docs/top-errors.md: the ranked table (rank, message, family, issues, covered by, shapes
recognised) and coverage totals for the top 50, 100, 200 and all. `--check` exits 1 if any of the top
200 is not covered by a full pattern (the target the pattern authors work to).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD_PREFIX = "(EngineCore_DP0 pid=1) ERROR 11-30 19:41:07 [core.py:1] "
CI_PREFIX = "2024-05-01T10:00:00.1234567Z   | "
SHAPES = ("bare", "traceback", "record", "message", "ci")
TOPS = (50, 100, 200)

# log prefixes an example may already carry: vLLM's (with or without the process tag), uvicorn's,
# a torch rank tag, Ray's raylet tag
_LOG_PREFIX = re.compile(
    r"^(?:\(\w[\w ]*pid=\d+\)\s+)*"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] "
    r"|(?:INFO|WARNING|ERROR|CRITICAL):\s+"
    r"|\[rank\d+\]:(?:\[[WE]\d+ [\d:.]+ [\w.]+:\d+\] )?"
    r"|\(raylet\) )"
)


def strip_log_prefix(line: str) -> str:
    prev = None
    while prev != line:
        prev, line = line, _LOG_PREFIX.sub("", line, count=1)
    return line


def strip_exception(line: str, exception: str) -> str:
    """The message part: without the log prefix and without `Exc: ` (full dotted name or last part)."""
    text = strip_log_prefix(line).lstrip()
    if exception:
        for name in (exception, exception.rsplit(".", 1)[-1]):
            if text.startswith(name + ": "):
                return text[len(name) + 2 :]
    m = re.match(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Warning)(?:\(\w+\))?: ", text)
    return text[m.end() :] if m else text


def traceback_of(entry: dict) -> str:
    example, exception = entry["example"], entry["exception"]
    body = strip_log_prefix(example).lstrip()
    frames = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py", line 1920, '
        "in run_server",
        "    await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)",
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 710, in run_engine_core',
        "    engine_core = EngineCoreProc(*args, **kwargs)",
    ]
    if body.startswith("assert "):  # a bare assert: the source line, then the class alone
        return "\n".join(frames + ["    " + body, exception or "AssertionError"]) + "\n"
    names = (exception, exception.rsplit(".", 1)[-1]) if exception else ()
    if any(body.startswith(n + ":") for n in names) or re.match(
        r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)(?:\(\w+\))?: ", body
    ):
        last = body
    else:
        last = "RuntimeError: " + strip_exception(example, exception)
    return "\n".join(frames + [last]) + "\n"


def shapes_of(entry: dict) -> dict[str, str]:
    example = entry["example"]
    bare_msg = strip_log_prefix(example).lstrip()
    return {
        "bare": example + "\n",
        "traceback": traceback_of(entry),
        "record": RECORD_PREFIX + bare_msg + "\n",
        "message": strip_exception(example, entry["exception"]) + "\n",
        "ci": CI_PREFIX + example + "\n",
    }


def _is_index_rule(rule: str) -> bool:
    # the index's findings are named `vllm.<area>` (no pattern family is called `vllm`)
    return rule.startswith(("surface", "index", "vllm-surface", "vllm."))


class Surface:
    """The vLLM error-surface index, if this logdoctor has one (it is being built in parallel)."""

    def __init__(self):
        self.module = None
        self.fn = None
        if importlib.util.find_spec("logdoctor.surface") is None:
            return
        try:
            self.module = importlib.import_module("logdoctor.surface")
        except Exception as exc:  # noqa: BLE001 - a half-built module must not stop the bench
            print(f"logdoctor.surface present but not importable: {exc!r}", file=sys.stderr)
            return
        index = getattr(self.module, "default_index", None)
        if callable(index):
            self.fn = index().lookup

    @property
    def available(self) -> bool:
        return self.fn is not None

    def explains(self, text: str) -> bool:
        if self.fn is None:
            return False
        for line in text.splitlines():
            line = strip_exception(line, "")
            if not line.strip() or line.startswith(("Traceback", "  File ", "    ")):
                continue
            try:
                hit = self.fn(line)
            except Exception:  # noqa: BLE001
                continue
            if hit:
                return True
        return False


def recognise(diagnose, surface: Surface, text: str) -> str | None:
    """The pattern id recognising `text`, `index` if only the error-surface index explains it, else None."""
    try:
        findings = diagnose(text)
    except Exception as exc:  # noqa: BLE001 - a crash is reported as not recognised, loudly
        print(f"diagnose_text raised {exc!r} on {text[:80]!r}", file=sys.stderr)
        return None
    rules = [f.rule for f in findings if f.rule and f.rule != "unrecognized"]
    patterns = [r for r in rules if not _is_index_rule(r)]
    if patterns:
        primary = [f.rule for f in findings if f.primary and f.rule in patterns]
        return (primary or patterns)[0]
    if rules or surface.explains(text):
        return "index"
    return None


def evaluate(entries: list[dict]) -> list[dict]:
    from logdoctor.api import diagnose_text

    surface = Surface()
    results = []
    for entry in entries:
        per_shape = {name: recognise(diagnose_text, surface, text) for name, text in shapes_of(entry).items()}
        pattern_hits = [r for r in per_shape.values() if r and r != "index"]
        if per_shape["bare"] and per_shape["bare"] != "index":
            covered = per_shape["bare"]
        elif pattern_hits:
            covered = collections.Counter(pattern_hits).most_common(1)[0][0]
        elif any(r == "index" for r in per_shape.values()):
            covered = "index"
        else:
            covered = "-"
        results.append(
            dict(entry=entry, shapes=per_shape, covered=covered, recognised=sum(1 for r in per_shape.values() if r))
        )
    return results, surface


def _cell(text: str, limit: int = 110) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(results: list[dict], surface: Surface, toml_path: Path) -> str:
    n_queries = None
    for line in toml_path.read_text().splitlines()[:12]:
        m = re.search(r"from (\d+) semantic searches", line)
        if m:
            n_queries = int(m.group(1))
    today = datetime.date.today().isoformat()

    def totals(rows):
        full = sum(1 for r in rows if r["covered"] not in ("-", "index"))
        idx = sum(1 for r in rows if r["covered"] == "index")
        shapes = sum(r["recognised"] for r in rows)
        return full, idx, shapes

    out = [
        "# Top errors vLLM users report, and logdoctor's coverage of them",
        "",
        f"Generated {today} by `bench/top_errors.py` from `bench/top-errors.toml` ({len(results)} messages). "
        "Do not edit by hand; rerun the script.",
        "",
        "**Method.** The ranking comes from semantic searches of GitHub issue and pull-request threads "
        "(vllm-project/vllm, vllm-ascend, production-stack, llm-d, kserve and other projects that run "
        f"vLLM){f', {n_queries} searches out of a budget of 350 look-ups' if n_queries else ''}. Searches "
        "started from error families (memory, parallelism, CUDA, NCCL, Hugging Face hub, model, tokenizer, "
        "quantization, kernels, install, environment, CLI, engine, frontend, LoRA, speculative decoding) "
        "and the catalogue in shared/reference/vllm-logs.md, each with several wordings; every returned "
        "excerpt was read and each distinct error message in it recorded, normalised, with its issue. "
        "`issues` is the number of distinct issues/PRs the message was read in (an issue counts once per "
        "message). The raw observations are in `bench/top-errors-evidence.tsv`.",
        "",
        "**Caveats.** The counts are samples, not totals: search returns at most about a dozen excerpts per "
        "query, ranked by similarity, so a message's count grows with the number of queries aimed at its "
        "family and with how often it sits in long pasted logs; messages nobody searched for are "
        "undercounted, and excerpts are truncated. Only issues in vLLM or projects running vLLM are "
        "counted. Read the ranking as coarse order (head vs tail), not as ratios.",
        "",
        "**Coverage.** Each entry's invented `example` line is run through the installed logdoctor "
        "(`logdoctor.api.diagnose_text`) in five shapes: the bare line; inside a raw Python traceback; as a "
        f"vLLM-logged ERROR record (`{RECORD_PREFIX.strip()} ...`); the message without its exception type; "
        f"under an unknown CI prefix (`{CI_PREFIX.rstrip()} `). `covered by` is the pattern id that "
        "recognises the bare line (else the one recognising most shapes), `index` if only the vLLM "
        "error-surface index explains it, `-` if nothing does. "
        + (
            "The error-surface index (`logdoctor.surface`) was available for this run."
            if surface.available
            else "The error-surface index (`logdoctor.surface`) was not available for this run, so no entry can "
            "be `index` yet."
        ),
        "",
        "| slice | entries | covered by a pattern | index only | not covered | shapes recognised |",
        "|---|---|---|---|---|---|",
    ]
    for label, rows in [(f"top {n}", results[:n]) for n in TOPS] + [("all", results)]:
        full, idx, shapes = totals(rows)
        out.append(
            f"| {label} | {len(rows)} | {full} ({100 * full / max(len(rows), 1):.0f}%) | {idx} | "
            f"{len(rows) - full - idx} | {shapes}/{5 * len(rows)} |"
        )
    out += ["", "| rank | message | family | issues | covered by | shapes recognised |", "|---|---|---|---|---|---|"]
    for r in results:
        e = r["entry"]
        out.append(
            f"| {e['rank']} | `{_cell(e['message'])}` | {e['family']} | {e['issues']} | "
            f"{r['covered']} | {r['recognised']}/5 |"
        )
    missing = [r for r in results[:200] if r["covered"] in ("-", "index")]
    out += ["", f"## Top-200 entries not covered by a pattern ({len(missing)})", ""]
    by_family = collections.defaultdict(list)
    for r in missing:
        by_family[r["entry"]["family"]].append(r["entry"])
    for fam in sorted(by_family, key=lambda f: (-len(by_family[f]), f)):
        ids = ", ".join(f"{e['rank']} `{e['id']}`" for e in by_family[fam])
        out.append(f"- **{fam}** ({len(by_family[fam])}): {ids}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toml", type=Path, default=ROOT / "bench" / "top-errors.toml")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "top-errors.md")
    ap.add_argument("--check", action="store_true", help="exit 1 if any of the top 200 lacks a full pattern")
    args = ap.parse_args(argv)

    entries = tomllib.loads(args.toml.read_text())["error"]
    entries.sort(key=lambda e: e["rank"])
    results, surface = evaluate(entries)
    args.out.write_text(render(results, surface, args.toml))

    top = results[:200]
    missing = [r for r in top if r["covered"] in ("-", "index")]
    full = len(top) - len(missing)
    print(
        f"{len(results)} entries; top 200 covered by a pattern: {full}/{len(top)}; "
        f"all: {sum(1 for r in results if r['covered'] not in ('-', 'index'))}/{len(results)}; "
        f"surface index {'available' if surface.available else 'absent'}; wrote {args.out}"
    )
    if args.check and missing:
        for r in missing:
            print(f"not covered: rank {r['entry']['rank']} {r['entry']['id']} ({r['entry']['family']})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
