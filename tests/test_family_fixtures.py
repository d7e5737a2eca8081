"""Every family fixture's root causes, marked in-band (see tests/markers.py; re-bless with
`python -m tests.markers --bless`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.library.matcher import Library
from tests.markers import FAMILIES, primaries, strip_markers

FILES = sorted(FAMILIES.glob("*.log"))


def test_every_pattern_family_has_a_fixture(library: Library) -> None:
    families = {p.id.split(".")[0] for p in library.patterns}
    covered = {name.split("-")[0] for name in (f.name for f in FILES)}
    assert families <= covered, f"families without a full-log fixture: {sorted(families - covered)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_marked_root_causes(library: Library, path: Path) -> None:
    raw, expected = strip_markers(path.read_bytes())
    assert expected, "the fixture has no #=PRIMARY=# marker"
    assert primaries(raw, library, str(path)) == expected
