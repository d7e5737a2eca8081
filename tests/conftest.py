from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.library.pattern import Pattern
from logdoctor.library.schema import validate_pattern
from logdoctor.records import Record, parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(scope="session")
def library() -> Library:
    return Library.load()


def make_pattern(**fields: object) -> Pattern:
    """A valid pattern for a test: the required fields filled in, `fields` on top."""
    base: dict[str, object] = {
        "title": "t",
        "severity": "error",
        "explanation": "e",
        "fix": {"summary": "s", "steps": ["x"]},
        "source": {"file": "f", "versions": "*", "checked": "c"},
    }
    return validate_pattern(base | fields)


def records(*texts: str, source: str = "-") -> list[Record]:
    return [parse(Line(source, n, t)) for n, t in enumerate(texts, 1)]


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the prefilter's compiled cache (and the logdoctor processes the tests start) out of ~/.cache."""
    import os

    # bench/mutate.py runs the tests hundreds of times: it names one cache they may share.
    os.environ["LOGDOCTOR_CACHE"] = os.environ.get("LOGDOCTOR_TEST_CACHE") or str(tmp_path_factory.mktemp("cache"))
