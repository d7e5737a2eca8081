"""Post-mortem: run each file through its own Doctor and report its findings, root cause first."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from logdoctor.doctor import Doctor
from logdoctor.pipeline import Pipeline
from logdoctor.sources.files import InputError, chunks

if TYPE_CHECKING:
    from logdoctor.library.matcher import Library
    from logdoctor.model import Finding
    from logdoctor.report import Reporter


class _Advance(Protocol):
    def __call__(self, done: int) -> None: ...


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def diagnose_file(path: Path, library: Library, advance: _Advance | None = None) -> tuple[Doctor, list[Finding]]:
    """The pipeline over one whole file, with no clock: what a stream would report as it went, a scan
    reports at the end, ranked (doctor.report())."""
    doctor = Doctor(library, on_internal_error=library.on_notice)
    pipeline = Pipeline(doctor)
    channel = pipeline.channel(str(path))
    try:
        for data, position in chunks(path):
            channel.feed(data)
            if advance is not None:
                advance(position)
    finally:
        channel.close()
        pipeline.flush()
    return doctor, doctor.report()


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
        size = path.stat().st_size
        with _progress(progress and size > 0, size) as advance:
            try:
                doctor, findings = diagnose_file(path, library, advance)
            except InputError as exc:
                print(f"logdoctor: {exc}", file=sys.stderr)
                result.unreadable.append(str(path))
                continue
        launches = max((f.launch for f in findings), default=1)
        launches = max(launches, len(doctor.launches.launches(str(path))))
        reporter.file_header(str(path), doctor.lines, launches, len(findings))
        ordered = sorted(findings, key=lambda f: (f.launch, not f.primary, f.lines[0]))
        for finding in ordered:
            reporter.finding(finding)
        result.findings += findings
    return result
