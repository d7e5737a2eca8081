"""gate.py: which patterns can match a text, decided by their required literals, missing none."""

from __future__ import annotations

import random

import pytest

from logdoctor.library.gate import LiteralGate
from logdoctor.library.literals import Literals
from logdoctor.library.matcher import Library


def gate_of(**literals: tuple[tuple[str, ...], bool] | None) -> LiteralGate[str]:
    return LiteralGate(
        (key, None if spec is None else Literals(frozenset(spec[0]), spec[1])) for key, spec in literals.items()
    )


def test_a_pattern_without_literals_is_always_a_candidate() -> None:
    assert gate_of(any=None, oom=(("out of memory",), False)).candidates("nothing here") == {"any"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CUDA error: out of memory", {"oom"}),  # filed under a whole word of the literal
        ("RuntimeError: hipErrorNoDevice", {"hip"}),  # a literal that is one word: tested directly
        ("xhipErrorNoDevicey", {"hip"}),  # ... inside a longer word too
        ("hipErrorInvalidValue", {"hip-value"}),  # same first characters, another literal of the group
        ("NCCL WARN", {"nccl"}),  # shorter than the group prefix
        ("a Timeout happened", {"timeout"}),  # caseless: `timeout` finds `Timeout`
        ("nothing", set()),
    ],
)
def test_each_literal_is_found_wherever_it_stands(text: str, expected: set[str]) -> None:
    gate = gate_of(
        oom=(("out of memory",), False),
        hip=(("hipErrorNoDevice",), False),
        **{"hip-value": (("hipErrorInvalidValue",), False)},
        nccl=(("NCCL",), False),
        timeout=(("timeout",), True),
    )
    assert gate.candidates(text) == expected


def test_the_gate_misses_no_pattern_a_plain_substring_test_would_find(library: Library) -> None:
    # Against the obvious definition (a key is a candidate when one of its literals is in the text), on
    # texts made of the library's own literals cut and joined at random.
    gate = library._exception_gate
    literals = {p.id: library.literals_of(p) for p in library.patterns if p.where in ("exception", "any")}
    pieces = sorted({t for found in literals.values() if found for t in found.texts})
    rng = random.Random(5)
    for _ in range(300):
        text = " ".join(rng.choice(pieces)[rng.randrange(0, 3) :] for _ in range(rng.randrange(1, 6)))
        text = text if rng.random() < 0.5 else text.upper()
        obvious = {
            key
            for key, found in literals.items()
            if found is None
            or not found.texts
            or any((t.lower() in text.lower()) if found.caseless else (t in text) for t in found.texts)
        }
        assert gate.candidates(text) == obvious, text


def test_remembered_candidates_are_the_candidates_and_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.library import gate as gate_module

    monkeypatch.setattr(gate_module, "MEMO_TEXTS", 3)
    gate = gate_of(oom=(("out of memory",), False), nccl=(("NCCL",), False))
    texts = ["CUDA out of memory", "NCCL error", "fine", "out of memory NCCL"] * 3
    expected = [{"oom"}, {"nccl"}, set(), {"oom", "nccl"}] * 3
    assert [gate.candidates(t) for t in texts] == expected
    assert len(gate._memo) <= 3
