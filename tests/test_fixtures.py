"""Every fixture log that states its root cause (`primary` in its .meta.toml) is diagnosed that way."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logdoctor.library.matcher import Library
from logdoctor.scan import diagnose_file
from tests.conftest import FIXTURES

CASES = [(meta, tomllib.loads(meta.read_text())) for meta in sorted(FIXTURES.rglob("*.meta.toml"))]


def log_of(meta: Path) -> Path:
    return meta.with_name(meta.name.removesuffix(".meta.toml") + ".log")


@pytest.mark.parametrize(("meta", "info"), CASES, ids=[m.name for m, _ in CASES])
def test_fixture_is_documented(meta: Path, info: dict[str, object]) -> None:
    assert log_of(meta).exists()
    assert info.get("produced_by") and info.get("command")


@pytest.mark.parametrize(
    ("meta", "info"), [c for c in CASES if "primary" in c[1]], ids=[m.name for m, i in CASES if "primary" in i]
)
def test_fixture_primary_finding(library: Library, meta: Path, info: dict[str, object]) -> None:
    _, findings = diagnose_file(log_of(meta), library)
    primary = [f for f in findings if f.primary]
    assert [f.rule for f in primary] == [info["primary"]]
    expected = info.get("expected_message")
    if expected:
        evidence = "\n".join(e.text for e in primary[0].evidence)
        assert str(expected) in evidence
