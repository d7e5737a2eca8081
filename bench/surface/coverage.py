"""Is every startup-time error of vLLM 0.33.0 recognised, in every shape real input gives it?

The areas the issue names (config, engine arguments, entrypoints, platforms, model loading, KV cache
sizing, worker start-up): every message of the 0.33.0 index in them that stops a launch or is logged as
an error (raise, assert, argparse, ERROR/CRITICAL log calls; warnings are not failures and are left out)
is rendered with plausible values, then in each shape of tests/shapes.py (a traceback in 14 shapes for an
exception; the usage block and its shapes for a parser error; logged records of two eras, under an
unknown prefix, and alone for a log call), and must come out as a finding other than `unrecognized`
(a pattern's or the index's). tests/test_surface_coverage.py asserts it; this prints the counts.

    python3 -m bench.surface.coverage
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field

from logdoctor.library.matcher import Library
from logdoctor.surface import SurfaceEntry, SurfaceIndex, default_index, sample_message
from tests.shapes import rules_by_source, shapes

RELEASE = "0.33.0"
AREAS = ("config", "engine-args", "entrypoints", "platforms", "model-loading", "kv-cache", "worker")
ERROR_LEVELS = ("ERROR", "CRITICAL", "EXCEPTION", "FATAL")


def _is_error(entry: SurfaceEntry) -> bool:
    return entry.kind in ("raise", "assert", "argparse") or (
        entry.kind == "log" and (entry.exception or "").upper() in ERROR_LEVELS
    )


def startup_errors(index: SurfaceIndex) -> list[SurfaceEntry]:
    return [e for e in index.entries() if RELEASE in e.versions and e.area in AREAS and e.startup and _is_error(e)]


def entry_shapes(entry: SurfaceEntry) -> dict[str, str]:
    message = sample_message(entry)
    if entry.kind == "argparse":
        usage = f"usage: vllm serve [model_tag] [options]\nvllm serve: error: {message}"
        return {
            "usage": usage + "\n",
            "ci-gutter": "\n".join("  | " + line for line in usage.splitlines()) + "\n",
            "collector-time": "\n".join("2024-05-01T12:00:00.123Z " + line for line in usage.splitlines()) + "\n",
            "message-alone": message + "\n",
        }
    if entry.kind == "log":
        return {
            "logged-0.31": f"(EngineCore_DP0 pid=1) ERROR 11-30 19:41:07 [core.py:1] {message}\n",
            "logged-0.8": f"ERROR 11-30 19:41:07 [core.py:1] {message}\n",
            "ci-gutter": f"  | (APIServer pid=1) ERROR 11-30 19:41:07 [api_server.py:1] {message}\n",
            "message-alone": message + "\n",
        }
    exception = "AssertionError" if entry.kind == "assert" else (entry.exception or "ValueError")
    return shapes(exception, message)


@dataclass
class Coverage:
    checked: Counter[str] = field(default_factory=Counter)
    missed: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)


def coverage(library: Library, index: SurfaceIndex) -> Coverage:
    result = Coverage()
    for entry in startup_errors(index):
        found = rules_by_source(entry_shapes(entry), library)
        for shape, rules in found.items():
            result.checked[entry.area] += 1
            if not rules or rules[0] == "unrecognized":
                result.missed[entry.area] += 1
                result.misses.append(f"{entry.area} {entry.file}:{entry.line} {shape}: {sample_message(entry)[:100]!r}")
    return result


def main() -> int:
    index = default_index()
    result = coverage(Library.load(), index)
    entries = Counter(e.area for e in startup_errors(index))
    print(f"vLLM {RELEASE} startup-time errors, recognised in every shape (a pattern's or the index's finding):")
    print(f"{'area':14} {'messages':>8} {'renderings':>10} {'recognised':>10}")
    for area in AREAS:
        n, m = result.checked[area], result.missed[area]
        print(f"{area:14} {entries[area]:8} {n:10} {n - m:10}")
    total, missed = sum(result.checked.values()), sum(result.missed.values())
    print(f"{'all':14} {sum(entries.values()):8} {total:10} {total - missed:10}")
    for miss in result.misses:
        print("  missed:", miss)
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
