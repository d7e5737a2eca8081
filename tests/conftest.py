from __future__ import annotations

import os
import shutil
import tempfile
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


def pytest_configure(config: pytest.Config) -> None:
    """Keep logdoctor's caches (the library, the constraint sets, the prefilter) out of ~/.cache, for the
    tests and the logdoctor processes they start. Set here, before the test modules are imported: some
    build a child's environment from os.environ then (test_run.py's ENV), and a session fixture came
    too late for them."""
    # bench/mutate.py runs the tests hundreds of times: it names one cache they may share.
    shared = os.environ.get("LOGDOCTOR_TEST_CACHE")
    os.environ["LOGDOCTOR_CACHE"] = shared or tempfile.mkdtemp(prefix="logdoctor-test-cache-")
    config.stash[_OWN_CACHE] = None if shared else os.environ["LOGDOCTOR_CACHE"]


def pytest_unconfigure(config: pytest.Config) -> None:
    own = config.stash.get(_OWN_CACHE, None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


_OWN_CACHE = pytest.StashKey[str | None]()
