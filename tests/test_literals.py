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


@pytest.mark.parametrize("seed", range(5))
def test_literals_of_random_alternations_are_in_every_match(seed: int) -> None:
    import random

    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    regex = "".join(
        rng.choice([f"(?:{'|'.join(rng.sample(words, 2))})", re.escape(rng.choice(words)), r"\d+", r"\s?", "[Xx]"])
        for _ in range(5)
    )
    found = required_literals(regex)
    compiled = re.compile(regex)
    for _ in range(50):
        sample = "".join(rng.choice(words + ["1", "23", " ", "X", "x"]) for _ in range(12))
        for match in compiled.finditer(sample):
            assert found is None or any(t in match.group(0) for t in found.texts), (regex, match.group(0))
