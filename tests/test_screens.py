"""The report as a person sees it on a terminal: golden screens at 80x24 and 160x50, and the summary last.

A screen is what the terminal shows once the report has been printed: its last HEIGHT rows, long lines
wrapped at WIDTH cells as the terminal wraps them (the reporter itself never wraps a command). To accept
a deliberate change of layout: `LOGDOCTOR_REGOLDEN=1 pytest tests/test_screens.py`, then read the diff.
"""

from __future__ import annotations

import io
import os
import shlex
from pathlib import Path

import pytest
from rich.cells import cell_len, chop_cells
from rich.console import Console

from logdoctor.library.matcher import Library
from logdoctor.redact import redact
from logdoctor.report.terminal import TerminalReporter
from logdoctor.report.text import TextReporter
from logdoctor.scan import diagnose_file, scan_paths

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"
README_LOG = "fixtures/engine-core-kv-cache-too-small-0.33.log"
REPLAYSSM_LOG = "fixtures/real/vllm-0.33.0-replayssm-multi-rule-arch.log"
CRASH_LOOP_COPIES = 10
SIZES = [(80, 24), (160, 50)]


def _crash_loop(folder: Path) -> str:
    """Ten restarts of the same failing server, one file (what `docker logs` of a restarting container gives)."""
    (folder / "crash-loop.log").write_bytes((ROOT / README_LOG).read_bytes() * CRASH_LOOP_COPIES)
    return "crash-loop.log"


def _render(library: Library, path: str, width: int) -> str:
    """`logdoctor scan PATH` on a terminal WIDTH cells wide, as text (the colours dropped)."""
    console = Console(file=io.StringIO(), width=width, record=True, force_terminal=True, soft_wrap=True)
    reporter = TerminalReporter(console.file, console=console)
    scan_paths([Path(path)], library, reporter)
    reporter.close()
    return console.export_text(styles=False)


def screen(text: str, width: int, height: int) -> list[str]:
    rows: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        rows += [row.rstrip() for row in chop_cells(line, width)] if cell_len(line) > width else [line.rstrip()]
    return rows[-height:]


CASES = {"readme": lambda tmp: README_LOG, "replayssm-multi-rule": lambda tmp: REPLAYSSM_LOG, "crash-loop": _crash_loop}


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("case", list(CASES))
def test_the_screen_is_the_golden_one(
    case: str, width: int, height: int, library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT if case != "crash-loop" else tmp_path)
    path = CASES[case](tmp_path)
    shown = "\n".join(screen(_render(library, path, width), width, height)) + "\n"
    golden = GOLDEN / f"{case}-{width}x{height}.txt"
    if os.environ.get("LOGDOCTOR_REGOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(shown, encoding="utf-8")
    assert shown == golden.read_text(encoding="utf-8"), f"{golden} differs (LOGDOCTOR_REGOLDEN=1 to accept)"


def test_at_80x24_the_root_cause_its_fix_and_the_command_are_on_the_last_screen(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    _, findings = diagnose_file(Path(README_LOG), library)
    root = next(f for f in findings if f.primary)
    assert root.fix.command
    rows = screen(_render(library, README_LOG, 80), 80, 24)
    text = "\n".join(rows)
    assert root.rule in text and "Fix: Set --max-model-len to at most 39968" in text
    start = rows.index("Corrected command:")
    assert "".join(rows[start + 1 :]) == redact(root.fix.command)  # the terminal wraps it; it is one line


def test_a_crash_loop_is_one_report(library: Library, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = _render(library, _crash_loop(tmp_path), 160)
    assert text.count("(root cause)") == 1
    assert f"the same failure in launches 2-{CRASH_LOOP_COPIES}" in text
    assert f"launches 1-{CRASH_LOOP_COPIES}, first at line 36" in text


def _reports() -> list[Path]:
    return sorted(p for p in (ROOT / "fixtures").rglob("*.log"))


@pytest.mark.parametrize("log", _reports(), ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_every_report_ends_with_its_summary(log: Path, library: Library) -> None:
    out = io.StringIO()
    reporter = TextReporter(out)
    scan_paths([log], library, reporter)
    reporter.close()
    lines = out.getvalue().rstrip("\n").split("\n")
    starts = [n for n, line in enumerate(lines) if line.startswith("── summary: ")]
    assert len(starts) == 1, out.getvalue()
    summary = lines[starts[0] :]
    assert not any(line.startswith("logdoctor: ") for line in summary)  # no finding after it
    _, findings = diagnose_file(log, library)
    root = next((f for f in findings if f.primary), None)
    if root is None:
        assert len(summary) == 2 and summary[1].startswith("No error found")
        return
    assert summary[1].startswith("Root cause: ") or summary[1].startswith("Other failures above: ")
    if root.fix.command:  # copy-pasteable: alone on the last line, whole, and a command a shell splits
        assert summary[-2] == "Corrected command:"
        assert shlex.split(summary[-1])[:2] == shlex.split(root.fix.command)[:2]
    else:
        assert any(line.startswith("Fix: ") for line in summary)


def test_the_pipe_ends_with_the_summary_too(library: Library) -> None:
    _, findings = diagnose_file(ROOT / README_LOG, library)
    out = io.StringIO()
    reporter = TextReporter(out, live=True)
    for finding in findings:
        reporter.finding(finding)
    reporter.close()
    lines = out.getvalue().rstrip("\n").split("\n")
    assert lines[-1].startswith("vllm serve ") and lines[-2] == "Corrected command:"
    assert any(line.startswith("── logdoctor summary") for line in lines)


def test_the_readme_shows_the_report_its_first_command_prints(library: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    """README's example is this reporter's real output at 80 columns, not a picture of an older one."""
    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- report:begin -->\n```text\n", 1)[1].split("```\n<!-- report:end -->", 1)[0]
    rows = screen(_render(library, README_LOG, 80), 80, 10_000)
    assert shown == "\n".join(rows) + "\n", "README's report is stale: paste `screen(...)` of the README log"
