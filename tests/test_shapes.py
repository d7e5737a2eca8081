"""Every pattern's error gives the same finding in every shape real input gives it (tests/shapes.py).

The tidy form is the pattern's first example's exception, re-rendered as a plain traceback; each shape
of it must be diagnosed with the same first-ranked rule. A message standing alone (no `Type: `) is only
required of patterns whose regex alone picks out the error (library.message_patterns) and that are root
causes: a wrapper's message quotes another error, which may then be the better reading.
"""

from __future__ import annotations

import pytest

from logdoctor.library.matcher import Library
from tests.shapes import rules_by_source, shapes, tidy_exception

ALONE = ("message-alone", "pydantic-detail-alone")
FRAMELESS = (*ALONE, "bare")


def _cases(library: Library) -> list[tuple[str, str, str]]:
    cases = []
    for pattern in library.patterns:
        exc = tidy_exception(pattern, library)
        if exc is not None:
            cases.append((pattern.id, exc.type, exc.message))
    return cases


@pytest.fixture(scope="module")
def cases(library: Library) -> list[tuple[str, str, str]]:
    return _cases(library)


def test_most_patterns_have_a_tidy_exception(cases: list[tuple[str, str, str]], library: Library) -> None:
    assert len(cases) >= 0.6 * len(library.patterns)


def test_every_shape_gives_the_tidy_finding(cases: list[tuple[str, str, str]], library: Library) -> None:
    wrong: list[str] = []
    checked = 0
    for pattern_id, type_name, message in cases:
        pattern = library.by_id[pattern_id]
        texts = shapes(type_name, message)
        if pattern not in library.message_patterns or pattern.role != "cause":
            for name in ALONE:
                texts.pop(name, None)
        if pattern.frames is not None:
            for name in FRAMELESS:
                texts.pop(name, None)  # the frames the pattern needs are gone from these shapes
        found = rules_by_source(texts, library)
        expected = found.pop("tidy")[:1]
        assert expected, f"{pattern_id}: the tidy traceback gives no finding"
        for name, rules in found.items():
            checked += 1
            if rules[:1] != expected:
                wrong.append(f"{pattern_id} as {name}: {rules} (tidy: {expected})")
    assert checked > 5000
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        # The message alone, as pasted from the end of a log.
        ("Total number of attention heads (32) must be divisible by tensor parallel size (3).\n", "model.tp-heads-not-divisible"),
        # A CI web log's gutter before real vLLM 0.33 lines (the prefix is known after an unknown one).
        (
            "  | (APIServer pid=9) ERROR 11-30 19:41:07 [core.py:1] EngineCore failed to start.\n"
            "  | Traceback (most recent call last):\n"
            '  |   File "/v/vllm/v1/engine/core.py", line 1, in run_engine_core\n'
            "  |     raise ValueError(msg)\n"
            "  | ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3).\n",
            "model.tp-heads-not-divisible",
        ),
    ],
)
def test_hand_made_shapes(library: Library, text: str, rule: str) -> None:
    assert rules_by_source({"x": text}, library)["x"][:1] == [rule]


def test_a_line_only_quoting_a_message_is_not_it(library: Library) -> None:
    quoted = (
        "2024-05-01 10:00:00,000 - myapp - INFO - the docs say that an error like 'Total number of attention "
        "heads (32) must be divisible by tensor parallel size (3).' means the TP size is wrong\n"
    )
    assert rules_by_source({"x": quoted}, library)["x"] == []


def test_a_traceback_cut_before_its_exception_line_says_so(library: Library) -> None:
    from logdoctor.api import diagnose_text

    text = (
        "Traceback (most recent call last):\n"
        '  File "/v/vllm/entrypoints/cli/main.py", line 73, in main\n'
        "    args.dispatch_function(args)\n"
        '  File "/v/vllm/engine/arg_utils.py", line 1400, in create_engine_config\n'
        "    raise exc\n"
    )
    (finding,) = diagnose_text(text, library)
    assert finding.role == "consequence" and "cut off" in finding.title and "arg_utils.py" in finding.title
    assert "(empty message)" not in finding.title
