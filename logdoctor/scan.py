"""Post-mortem: run each file through its own Doctor and report its findings, root cause first.

A file is reported launch by launch, each as soon as it is complete (the next launch has started, or the
file ended), so a crash loop's file of thousands of launches prints its first diagnosis at once and is
read in the memory of one launch."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from logdoctor.doctor import Doctor
from logdoctor.pipeline import Pipeline
from logdoctor.sources.files import InputError, chunks, disk_size

if TYPE_CHECKING:
    from logdoctor.library.matcher import Library
    from logdoctor.model import Finding
    from logdoctor.report import FileSummary, Reporter


class _Advance(Protocol):
    def __call__(self, done: int) -> None: ...


@dataclass
class ScanResult:
    findings: int = 0
    errors: int = 0  # findings of error severity
    unreadable: list[str] = field(default_factory=list)


def stream_file(
    path: Path, library: Library, report: Callable[[list[Finding]], None], advance: _Advance | None = None
) -> Doctor:
    """The pipeline over one whole file, with no clock: each launch's findings, ranked as doctor.report()
    ranks them, go to `report` once the launch is complete, in the file's order."""
    doctor = Doctor(library, on_internal_error=library.on_notice)
    pipeline = Pipeline(doctor)
    channel = pipeline.channel(str(path))
    channel.expect(disk_size(path))  # a big file's first megabyte is sieved too, not read line by line
    try:
        for data, position in chunks(path):
            channel.feed(data)
            if settled := doctor.take_settled():
                report(settled)
            if advance is not None:
                advance(position)
    finally:  # a file that fails to read part way: what was read is reported, then the error
        channel.close()
        pipeline.flush()
        pipeline.end()
        report(doctor.take_settled() + doctor.report())
    return doctor


def summarize(doctor: Doctor, source: str) -> FileSummary:
    """What a source that has ended came to (a scanned file, the pipe's or run's input): what reporters
    print last for it. A source without a vLLM line counts no launch."""
    from logdoctor.report import FileSummary

    outcome = doctor.outcome(source)
    return FileSummary(
        source=source,
        lines=doctor.lines,
        launches=max(outcome.launches, 1) if outcome.vllm else 0,
        findings=outcome.findings,
        errors=outcome.errors,
        vllm=outcome.vllm,
        root_causes=outcome.root_causes,
        serving=outcome.serving if outcome.vllm else None,
    )


def diagnose_file(path: Path, library: Library) -> tuple[Doctor, list[Finding]]:
    """Every finding of the file, in report order (for tests and programs; scan streams them)."""
    findings: list[Finding] = []
    doctor = stream_file(path, library, findings.extend)
    return doctor, findings


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[_Advance | None]:
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress("scanning", BarColumn(), DownloadColumn(), TimeRemainingColumn(), transient=True) as bar:
        task = bar.add_task("scan", total=total)

        def advance(done: int) -> None:
            bar.update(task, completed=done)

        yield advance


def scan_paths(paths: list[Path], library: Library, reporter: Reporter, progress: bool = False) -> ScanResult:
    result = ScanResult()
    for path in paths:
        size = disk_size(path)  # 0 for a stream: no progress bar

        def report(findings: list[Finding]) -> None:
            for finding in sorted(findings, key=lambda f: (f.launch, not f.primary, f.lines[0])):
                reporter.finding(finding)

        reporter.file_start(str(path))
        with _progress(progress and size > 0, size) as advance:
            try:
                doctor = stream_file(path, library, report, advance)
            except InputError as exc:
                print(f"logdoctor: {exc}", file=sys.stderr)
                result.unreadable.append(str(path))
                continue
        summary = summarize(doctor, str(path))
        reporter.file_end(summary)
        result.findings += summary.findings
        result.errors += summary.errors
    return result
