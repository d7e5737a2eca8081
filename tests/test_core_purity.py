"""The core turns lines into findings and nothing else: it prints nothing, reads no environment, opens no
file and reads no clock (time comes in as an argument), and it does not depend on the edges (sources,
reporters, the CLI). Internal errors go to an injected sink; the edge prints them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "logdoctor"
CORE = [
    "framing", "records", "prefixes", "unflatten", "unwrap", "assemble", "diagnose", "doctor", "sieve",
    "audit", "model", "versions",
    "library.matcher", "library.constraints", "library.gate", "library.qualified", "library.rules",
    "library.literals", "library.schema", "library.rules_schema", "library.pattern", "library.details",
    "vocabulary",
    "launch.tracker", "launch.header", "launch.pyrepr", "launch.cmdline", "launch.config", "launch.facts",
]  # fmt: skip
EDGES = ("logdoctor.sources", "logdoctor.report", "logdoctor.cli", "logdoctor.watch", "logdoctor.scan",
         "logdoctor.metrics", "logdoctor.check", "logdoctor.withvllm")  # fmt: skip
# Calls the core must not make, by the name they are called through.
FORBIDDEN = {
    "print", "open", "input", "os.getenv", "os.putenv", "time.time", "time.monotonic", "time.perf_counter",
    "time.sleep", "time.time_ns", "datetime.now", "datetime.datetime.now", "datetime.utcnow", "sys.stderr.write",
    "sys.stdout.write",
}  # fmt: skip
FORBIDDEN_NAMES = {"os.environ", "sys.stderr", "sys.stdout"}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def test_the_core_imports_no_source_reporter_or_cli() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}: importlib.import_module('logdoctor.' + name)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({EDGES!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module", CORE)
def test_the_core_prints_nothing_reads_no_environment_file_or_clock(module: str) -> None:
    path = PACKAGE.joinpath(*module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        name = _dotted(node.func) if isinstance(node, ast.Call) else None
        if name in FORBIDDEN:
            found.append(f"{path.name}:{node.lineno} calls {name}")
        elif isinstance(node, ast.Attribute) and _dotted(node) in FORBIDDEN_NAMES:
            found.append(f"{path.name}:{node.lineno} reads {_dotted(node)}")
    assert not found, "\n".join(found)
