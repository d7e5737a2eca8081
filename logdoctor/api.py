"""Convenience entry points over the pure core, for tests and for programs embedding logdoctor."""

from __future__ import annotations

from collections.abc import Iterable

from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.model import Finding

_default_library: Library | None = None


def default_library() -> Library:
    global _default_library
    if _default_library is None:
        _default_library = Library.load()
    return _default_library


def diagnose_lines(lines: Iterable[str], library: Library | None = None, source: str = "-") -> list[Finding]:
    """Findings for already-split text lines (no framing), ranked with the whole input known."""
    doctor = Doctor(library or default_library())
    for number, text in enumerate(lines, 1):
        doctor.feed(Line(source, number, text))
    doctor.flush()
    return doctor.report()


def diagnose_text(text: str | bytes, library: Library | None = None, source: str = "-") -> list[Finding]:
    """Findings for a whole log given as text or raw bytes: scan's pipeline, as for a file."""
    from logdoctor.pipeline import Pipeline

    data = text.encode("utf-8") if isinstance(text, str) else text
    doctor = Doctor(library or default_library())
    pipeline = Pipeline(doctor)
    channel = pipeline.channel(source)
    channel.feed(data)
    channel.close()
    pipeline.flush()
    return doctor.report()
