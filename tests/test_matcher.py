"""library/matcher.py: how patterns are searched, and what bounds their work."""

from __future__ import annotations

import pytest

from logdoctor.api import diagnose_lines
from logdoctor.library.matcher import MAX_SEARCH_CHARS, Library
from tests.conftest import make_pattern


def _library() -> Library:
    boom = make_pattern(id="t.boom", where="line", match=r"boom (?P<n>\d+)", examples={"match": ["boom 1"]})
    return Library([boom])


def test_a_pattern_reads_a_bounded_length_of_each_message_whatever_the_machine_does() -> None:
    # The budget is a length: the same line gives the same answer on an idle and on a loaded machine.
    library = _library()
    near = "x" * (MAX_SEARCH_CHARS - 20) + " boom 7"
    far = "x" * MAX_SEARCH_CHARS + " boom 7"
    assert [f.rule for f in diagnose_lines([near], library)] == ["t.boom"]
    assert [f.rule for f in diagnose_lines([far], library)] == []
    assert library.notices == [] and library.timed_out == set()


def test_a_pattern_stopped_by_the_hang_guard_stays_off_for_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.library import matcher

    monkeypatch.setattr(matcher, "HANG_SECONDS", 0.001)
    slow = make_pattern(id="t.slow", where="line", match="(a|aa)+$", examples={"match": ["aaa"]})
    library = Library([slow])
    findings = diagnose_lines(["a" * 60 + "!", "aaa"], library)
    # Once off, it is off: "aaa", which it would match, is not claimed, and it is reported once.
    assert [f.rule for f in findings] == []
    assert library.timed_out == {"t.slow"}
    (notice,) = library.notices
    assert "t.slow" in notice and "switched off" in notice


def test_a_remembered_match_is_the_same_match_for_the_line_at_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.framing import Line
    from logdoctor.library import matcher
    from logdoctor.records import parse

    library = _library()
    first, second = parse(Line("-", 1, "boom 1")), parse(Line("-", 9, "boom 1"))
    one, again = library.match_line(first), library.match_line(second)
    assert one is not None and again is not None
    assert (one.pattern, one.captures, one.record) == (again.pattern, again.captures, first)
    assert again.record is second  # the line at hand, not the one first seen
    one.captures["n"] = "changed"  # what a caller does with its match stays its own
    assert library.match_line(second).captures == {"n": "1"}  # type: ignore[union-attr]
    assert library.match_record(first) is not None and library.match_record(second).record is second  # type: ignore[union-attr]
    # Bounded: past MEMO_ENTRIES distinct lines the memo starts again, and answers stay right.
    monkeypatch.setattr(matcher, "MEMO_ENTRIES", 4)
    for n in range(10):
        found = library.match_line(parse(Line("-", n, f"boom {n}")))
        assert found is not None and found.captures == {"n": str(n)}
        assert library.match_line(parse(Line("-", n, f"no {n}"))) is None
    assert len(library._line_memo) <= 4
