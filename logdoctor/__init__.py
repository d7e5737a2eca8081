"""logdoctor: reads vLLM server logs and says what failed, why, and the exact fix.

The core is pure: `Doctor(library).feed(line)` / `.tick(now)` / `.flush()` turn lines into findings.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["Doctor", "Finding", "Library", "diagnose_lines", "diagnose_text", "__version__"]


def __getattr__(name: str) -> object:
    # Lazy, so `logdoctor --version` does not pay for pydantic and the pattern library.
    if name == "Doctor":
        from logdoctor.doctor import Doctor

        return Doctor
    if name == "Finding":
        from logdoctor.model import Finding

        return Finding
    if name == "Library":
        from logdoctor.library.matcher import Library

        return Library
    if name in ("diagnose_lines", "diagnose_text"):
        from logdoctor import api

        return getattr(api, name)
    raise AttributeError(name)
