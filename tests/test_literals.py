"""library/literals.py: the strings a regex cannot match without."""

from __future__ import annotations

import re

import pytest

from logdoctor.library.literals import required_literals
from logdoctor.library.matcher import Library


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        (r"CUDA out of memory\. Tried to allocate (?P<size>\S+)", {"CUDA out of memory. Tried to allocate "}),
        (r"(?:foo|bar)baz", {"foobaz", "barbaz"}),
        (r"[Ee]rror: x", {"Error: x", "error: x"}),
        (r"Traceback \(most recent call last\):\s*", {"Traceback (most recent call last):"}),
        (r"x(?:abc)+y", {"abc"}),  # a repetition breaks the run; its body is still required
        (r"(?=\d)abc", {"abc"}),  # zero-width: consumes nothing
        (r"(?P<p>a+)died(?P<p>b)|other died", {"diedb", "other died"}),  # a name used twice (regex module)
        (r"\(?P<x>literal", {"P<x>literal"}),  # an escaped paren is not a group
    ],
)
def test_required_literals(regex: str, expected: set[str]) -> None:
    found = required_literals(regex)
    assert found is not None and set(found.texts) == expected


@pytest.mark.parametrize("regex", [r"\w+: \d+x?", r"a?b?", r".*", r"(?:abc)?", r"(?:abc|\d+)z?"])
def test_nothing_required(regex: str) -> None:
    found = required_literals(regex)
    assert found is None or min(len(t) for t in found.texts) <= 2


def test_caseless_literals_are_lowered() -> None:
    found = required_literals(r"(?i)Hello World")
    assert found is not None and found.caseless and set(found.texts) == {"hello world"}


def test_every_example_of_every_pattern_holds_one_of_its_literals(library: Library) -> None:
    """The promise the prefilter rests on, checked on the library's own examples."""
    for pattern in library.patterns:
        found = required_literals(pattern.match)
        if found is None:
            continue
        for example in pattern.examples.match:
            text = example.lower() if found.caseless else example
            assert any(t in text for t in found.texts), (pattern.id, example, found.texts)


@pytest.mark.parametrize("seed", range(20))
def test_literals_of_random_alternations_are_in_every_match(seed: int) -> None:
    """Random regexes built from parts, each with a way to write a text it matches: every text the regex
    matches (50 per regex, made to match, not hoped to) holds one of the literals found required."""
    import random

    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    parts: list[tuple[str, object]] = []
    for _ in range(5):
        kind = rng.randrange(5)
        if kind == 0:
            options = rng.sample(words, 2)
            parts.append((f"(?:{'|'.join(options)})", lambda r, o=options: r.choice(o)))
        elif kind == 1:
            word = rng.choice(words)
            parts.append((re.escape(word), lambda r, w=word: w))
        elif kind == 2:
            parts.append((r"\d+", lambda r: str(r.randrange(1, 10_000))))
        elif kind == 3:
            parts.append((r"\s?", lambda r: r.choice(["", " "])))
        else:
            parts.append(("[Xx]", lambda r: r.choice("Xx")))
    regex = "".join(p for p, _ in parts)
    found = required_literals(regex)
    compiled = re.compile(regex)
    for _ in range(50):
        text = "".join(write(rng) for _, write in parts)  # type: ignore[operator]
        assert compiled.fullmatch(text), (regex, text)
        assert found is None or any(t in text for t in found.texts), (regex, text, found.texts)
    if any(p.startswith(("(?:", *words)) for p, _ in parts):
        assert found is not None, f"{regex} requires a word, but no literal was found"
