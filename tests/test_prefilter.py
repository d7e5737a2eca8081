"""prefilter.py: the lines a trigger fires on, checked against reading every line."""

from __future__ import annotations

import pytest

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.library.matcher import Library
from logdoctor.prefilter import Prefilter, hyperscan_available, triggers_for
from logdoctor.sieve import Sieve

pytestmark = pytest.mark.skipif(not hyperscan_available(), reason="the prefilter needs Hyperscan")

EXTENSION_WARNING = b"Failed to import from vllm._C: ModuleNotFoundError(\"No module named 'vllm._C'\")"


@pytest.fixture(scope="module")
def prefilter(library: Library) -> Prefilter:
    return Prefilter(triggers_for(library))


def rules(library: Library, data: bytes, prefilter: Prefilter | None) -> list[tuple[str, tuple[int, int]]]:
    doctor = Doctor(library)
    sieve = Sieve(doctor, Framer("log"), (lambda: prefilter) if prefilter else None, small=0)
    sieve.feed(data)
    sieve.flush()
    assert doctor.internal_errors == 0
    return [(f.rule, f.lines) for f in doctor.report()]


def test_an_error_drawn_over_an_info_record_by_a_carriage_return_is_read(
    library: Library, prefilter: Prefilter
) -> None:
    # The terminal shows the last segment of a line a carriage return redrew: here an error, though the
    # line's bytes start like a quiet INFO record (found by hypothesis in test_properties).
    line = b"(APIServer pid=11941) INFO 12-01 17:12:16 [startup.py:38] \r" + EXTENSION_WARNING + b"\n"
    data = b"(APIServer pid=1) INFO 12-01 17:12:15 [a.py:1] starting\n" * 3 + line
    assert prefilter.line_starts(data, 0, len(data)) == [data.index(line)]
    assert rules(library, data, prefilter) == rules(library, data, None) != []


def test_a_quiet_record_is_skipped_without_being_read(prefilter: Prefilter) -> None:
    data = b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] " + EXTENSION_WARNING + b"\n"
    assert prefilter.line_starts(data, 0, len(data)) == []


def test_a_crlf_record_is_still_quiet(prefilter: Prefilter) -> None:
    data = b"(APIServer pid=1) INFO 12-01 17:12:16 [startup.py:38] " + EXTENSION_WARNING + b"\r\n"
    assert prefilter.line_starts(data, 0, len(data)) == []


def test_the_same_error_outside_a_quiet_record_is_a_candidate(prefilter: Prefilter) -> None:
    data = b"noise\n" + EXTENSION_WARNING + b"\nmore noise\n"
    assert prefilter.line_starts(data, 0, len(data)) == [len(b"noise\n")]
