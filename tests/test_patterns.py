"""Every pattern's own examples, run through the whole pipeline; plus the library's validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.api import diagnose_text
from logdoctor.library.loader import LibraryError, load_patterns, parse_file
from logdoctor.library.matcher import Library
from logdoctor.library.selftest import check_pattern
from tests.conftest import make_pattern

PATTERNS = load_patterns()


def rules_for(library: Library, text: str) -> list[str]:
    return [f.rule for f in diagnose_text(text, library)]


def test_library_is_not_empty_and_ids_are_unique() -> None:
    ids = [p.id for p in PATTERNS]
    assert len(ids) >= 30 and len(ids) == len(set(ids))


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.id)
def test_every_pattern_passes_the_library_self_test(library: Library, pattern) -> None:  # type: ignore[no-untyped-def]
    # Examples through the whole pipeline, collisions, near-misses, source, backtracking: the same
    # check as `logdoctor patterns test`.
    assert [p for p in check_pattern(library, pattern) if not p.is_warning] == []
    assert pattern.examples.match and pattern.examples.no_match and pattern.fix.steps
    assert pattern.explanation.strip() and pattern.fix.summary.strip()


def test_a_collision_is_named(library: Library) -> None:
    greedy = make_pattern(
        id="t.greedy", match="KV cache", examples={"match": ["ValueError: unrelated"], "no_match": ["x"]}
    )
    problems = check_pattern(Library([greedy, *library.patterns]), library.by_id["memory.kv-cache-too-small"])
    assert problems and {p.kind for p in problems} == {"collision"} and "t.greedy" in problems[0].detail


def test_docs_patterns_md_is_current(library: Library) -> None:
    from logdoctor.library.docs import library_markdown

    committed = (Path(__file__).resolve().parent.parent / "docs" / "patterns.md").read_text()
    assert committed == library_markdown(library), "stale: run `logdoctor patterns --markdown > docs/patterns.md`"


def test_broken_file_names_file_pattern_and_problem(tmp_path: Path) -> None:
    broken = tmp_path / "mine.toml"
    broken.write_text(
        '[[pattern]]\nid = "mine.bad"\ntitle = "t"\nseverity = "fatal"\nmatch = "x"\nexplanation = "e"\n'
        '[pattern.fix]\nsummary = "s"\n[pattern.source]\nfile = "f"\n[pattern.examples]\nmatch = ["x"]\n'
    )
    with pytest.raises(LibraryError) as err:
        load_patterns([str(tmp_path)])
    message = str(err.value)
    assert "mine.toml:1:" in message and "mine.bad" in message and "severity" in message


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('match = "(unclosed"', "not a valid regex"),
        ('match = "x"\n[pattern.fix]\nsummary = "use {missing}"', "no such named group"),
        ('match = "x"\nid2 = 1', "Extra inputs are not permitted"),
    ],
)
def test_invalid_patterns_are_refused(body: str, problem: str) -> None:
    text = '[[pattern]]\nid = "t.one"\ntitle = "t"\nseverity = "error"\nexplanation = "e"\n' + body
    if "[pattern.fix]" not in text:
        text += '\n[pattern.fix]\nsummary = "s"'
    text += '\n[pattern.source]\nfile = "f"\n[pattern.examples]\nmatch = ["x"]\n'
    with pytest.raises(LibraryError, match=problem):
        parse_file("t.toml", text)


def test_not_toml_is_refused() -> None:
    with pytest.raises(LibraryError, match="not valid TOML"):
        parse_file("t.toml", "[[pattern]\n")


def test_user_patterns_are_loaded_and_tried_first(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_text(
        '[[pattern]]\nid = "site.custom-boom"\ntitle = "Our boom"\nseverity = "error"\nmatch = "boom"\n'
        'explanation = "Our own error."\n[pattern.fix]\nsummary = "Call the on-call."\n'
        '[pattern.source]\nfile = "our_app.py"\nversions = "*"\nchecked = "test"\n'
        '[pattern.examples]\nmatch = ["ValueError: boom"]\nno_match = ["ValueError: bam"]\n'
    )
    library = Library.load([str(tmp_path)])
    assert library.patterns[0].id == "site.custom-boom"
    assert rules_for(library, "ValueError: boom") == ["site.custom-boom"]


def test_runaway_regex_is_stopped_and_reported_once(tmp_path: Path) -> None:
    (tmp_path / "slow.toml").write_text(
        '[[pattern]]\nid = "slow.backtrack"\ntitle = "t"\nseverity = "error"\nwhere = "line"\n'
        "match = '''(a|aa)+$'''\n"
        'explanation = "e"\n[pattern.fix]\nsummary = "s"\n'
        '[pattern.source]\nfile = "f"\n[pattern.examples]\nmatch = ["aaa"]\n'
    )
    library = Library.load([str(tmp_path)])
    text = "\n".join(["a" * 40 + "!"] * 3)
    diagnose_text(text, library)
    # The library prints nothing itself: its notices go to the sink the edge sets (the CLI prints them).
    (notice,) = library.notices
    assert "slow.backtrack" in notice and "backtracks" in notice


def test_nested_quantifiers_are_warned_about(library: Library) -> None:
    slow = make_pattern(id="t.slow", where="line", match="(a+)+$", examples={"match": ["aaaa"], "no_match": ["b"]})
    problems = check_pattern(Library([slow]), slow)
    # (it requires no literal of three characters either, which the prefilter warning also says)
    assert [(p.kind, p.is_warning) for p in problems] == [("backtracking", True), ("unfilterable", True)]
