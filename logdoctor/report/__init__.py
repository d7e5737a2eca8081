"""Reporters: turn findings into what a person or a program reads. All output is redacted here."""

from __future__ import annotations

from typing import Any

from logdoctor.model import Finding
from logdoctor.redact import redact


def scrub(value: Any) -> Any:
    """Redact every string inside a dumped model."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def redacted(finding: Finding) -> Finding:
    return Finding.model_validate(scrub(finding.model_dump()))
