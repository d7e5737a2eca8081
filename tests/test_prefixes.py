"""prefixes.py: unknown programs' prefixes, learned per source from where a known record starts."""

from __future__ import annotations

import re

import pytest

from logdoctor.prefixes import MAX_PREFIX, PrefixLearner, shape_of


def test_a_prefix_before_a_record_is_learned_at_once_and_stripped_from_later_lines() -> None:
    learner = PrefixLearner()
    assert learner.strip("ci-7 | (APIServer pid=1) INFO 11-30 10:00:00 [a.py:1] up") == (
        "(APIServer pid=1) INFO 11-30 10:00:00 [a.py:1] up"
    )
    assert learner.learned
    # A line holding nothing known loses the same prefix: a traceback's source line under the gutter.
    assert learner.strip("ci-8 |     return fn()") == "    return fn()"


def test_a_prefix_before_a_traceback_is_learned_only_when_it_repeats() -> None:
    learner = PrefixLearner()
    assert learner.strip("[job 12] Traceback (most recent call last):") == "Traceback (most recent call last):"
    assert not learner.learned
    assert learner.strip('[job 12] File "a.py", line 3, in f') == 'File "a.py", line 3, in f'
    assert learner.learned


def test_a_sentence_naming_an_error_is_not_a_prefix() -> None:
    learner = PrefixLearner()
    assert learner.strip("Caused by: ValueError: x") == "Caused by: ValueError: x"
    assert learner.strip("Caused by: ValueError: y") == "Caused by: ValueError: y"
    assert not learner.learned


def test_a_line_that_starts_with_a_record_is_never_stripped_by_a_learned_shape() -> None:
    # A stray `((APIServer` teaches the shape `\(`: the parenthesis of every later record must survive.
    learner = PrefixLearner()
    learner.strip("((APIServer pid=11941) INFO 12-01 17:12:16 [startup.py:38] up")
    assert learner.learned
    record = "(VllmWorker-0 pid=12398) ERROR 12-01 17:12:30 [multiproc_executor.py:1057] WorkerProc failed to start."
    assert learner.strip(record) == record
    assert learner.strip_learned(record) == record
    assert (
        learner.strip_learned("[rank0]: Traceback (most recent call last):")
        == "[rank0]: Traceback (most recent call last):"
    )


def test_a_line_already_starting_with_something_known_keeps_its_text() -> None:
    learner = PrefixLearner()
    text = "INFO 11-30 10:00:00 [a.py:1] saw (APIServer pid=1) INFO in a message"
    assert learner.strip(text) == text
    assert not learner.learned


@pytest.mark.parametrize(
    ("prefix", "other", "not_it"),
    [
        ("ci-7 | ", "ci-12 | ", "ci_7 | "),
        ("[2024-05-01T10:00:00Z] ", "[2025-12-31T23:59:59Z] ", "(2024-05-01T10:00:00Z) "),
    ],
)
def test_shapes_generalise_digits_and_letters_and_keep_punctuation(prefix: str, other: str, not_it: str) -> None:
    shape = shape_of(prefix)
    assert shape is not None
    assert re.fullmatch(shape, prefix) and re.fullmatch(shape, other)
    assert re.match(shape, not_it) is None


@pytest.mark.parametrize("prefix", ["", "   ", "just words ", "x" * (MAX_PREFIX + 1) + "|"])
def test_what_cannot_be_a_prefix_has_no_shape(prefix: str) -> None:
    assert shape_of(prefix) is None
