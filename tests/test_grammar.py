"""grammar.py: the record grammar's rules, and the forms the readers derive from them."""

from __future__ import annotations

import re

import pytest

from logdoctor import grammar
from logdoctor.framing import Line
from logdoctor.records import parse


@pytest.mark.parametrize("rule", grammar.RULES, ids=lambda r: r.name)
def test_every_rule_matches_its_examples_whole(rule: grammar.Rule) -> None:
    for example in rule.examples:
        assert re.fullmatch(rule.regex, example), (rule.name, example)
        assert re.fullmatch(grammar.anonymous(rule.regex), example)
        assert re.fullmatch(grammar.within_line(rule.regex), example.encode())


@pytest.mark.parametrize("rule", grammar.RULES, ids=lambda r: r.name)
def test_the_byte_forms_never_cross_a_newline(rule: grammar.Rule) -> None:
    for example in rule.examples:
        for cut in range(1, len(example)):
            torn = (example[:cut] + "\n" + example[cut:]).encode()
            for match in re.finditer(grammar.within_line(rule.regex), torn):
                assert b"\n" not in match.group(), (rule.name, torn)


def test_anonymous_drops_names_and_keeps_escaped_parentheses() -> None:
    assert grammar.anonymous(r"(?P<a>x)\(?P<b>") == r"(?:x)\(?P<b>"
    assert re.compile(grammar.anonymous(grammar.LOGGER_HEADER.regex)).groupindex == {}


def test_within_line_rewrites_blanks_and_negated_classes_only() -> None:
    assert grammar.within_line(r"a\s+b") == rb"a[^\S\n]+b"
    assert grammar.within_line(r"[^()]*") == rb"[^\n()]*"
    assert grammar.within_line(r"[]a]\[x\]") == rb"[]a]\[x\]"
    with pytest.raises(ValueError, match="newline"):
        grammar.within_line(r"[\s]")


def test_records_read_the_fields_the_rules_name() -> None:
    record = parse(Line("-", 1, "(RayWorkerWrapper pid=123, ip=10.0.0.2) WARN 11-30 19:41:07.5 [core.py:1584] m"))
    assert (record.kind, record.process, record.pid, record.level, record.time, record.location, record.message) == (
        "vllm",
        "RayWorkerWrapper",
        123,
        "WARNING",
        "11-30 19:41:07",
        "core.py:1584",
        "m",
    )
