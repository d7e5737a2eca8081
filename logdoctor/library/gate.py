"""Which of many regexes can match a text, decided by their required literals in one cheap pass.

Trying hundreds of patterns on every line would cost milliseconds a line. Each pattern requires one of a
few literal strings (library/literals.py); a text that holds none of them cannot match, so only the
patterns whose literals are present are tried. Testing every literal with `in` would itself cost a
hundred microseconds; instead each literal is filed under one word it contains whole (a word with
non-word characters on both sides inside the literal, so any text holding the literal holds that word
as a token too), the text's words are looked up, and only those literals are tested. Literals without
such a word (`NCCL`, `OOM`) are tested directly. Nothing that could match is missed.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

from logdoctor.library.literals import Literals
from logdoctor.memo import remember

K = TypeVar("K", bound=Hashable)
_WORD = re.compile(r"\w+")
DIRECT_PREFIX = 8
MEMO_TEXTS = 4096


def _inner_word(text: str) -> str | None:
    """The longest word of `text` bounded by non-word characters inside it (or the text's ends when
    those are non-word characters), or None."""
    words = [(m.start(), m.end(), m[0]) for m in _WORD.finditer(text)]
    whole = [
        w
        for s, e, w in words
        if (s > 0 or not text[:1].isalnum() and text[:1] != "_")
        and (e < len(text) or not (text[-1:].isalnum() or text[-1:] == "_"))
    ]
    return max(whole, key=len) if whole else None


class LiteralGate(Generic[K]):
    """candidates(text) -> the keys whose required literals occur in text (keys without any: always)."""

    def __init__(self, items: Iterable[tuple[K, Literals | None]]) -> None:
        self.always: list[K] = []
        self._memo: dict[str, frozenset[K]] = {}
        self._by_word: dict[str, list[tuple[K, str]]] = {}
        self._by_word_caseless: dict[str, list[tuple[K, str]]] = {}
        direct: list[tuple[K, str, bool]] = []
        # The literals without a whole word, grouped by their first DIRECT_PREFIX characters: one `in` per
        # group, and the group's literals only where it is present (the CUDA, HIP and Neuron error names
        # share a few prefixes: 400 tests a text became about 130).
        self._direct_groups: list[tuple[str, bool, list[tuple[K, str]]]] = []
        for key, literals in items:
            if literals is None or not literals.texts:
                self.always.append(key)
                continue
            for text in literals.texts:
                folded = text.lower() if literals.caseless else text
                word = _inner_word(folded)
                if word is None:
                    direct.append((key, folded, literals.caseless))
                elif literals.caseless:
                    self._by_word_caseless.setdefault(word, []).append((key, folded))
                else:
                    self._by_word.setdefault(word, []).append((key, folded))

        groups: dict[tuple[str, bool], list[tuple[K, str]]] = {}
        for key, literal, caseless in direct:
            groups.setdefault((literal[:DIRECT_PREFIX], caseless), []).append((key, literal))
        self._direct_groups = [(prefix, caseless, members) for (prefix, caseless), members in groups.items()]
        self._any_caseless = bool(self._by_word_caseless) or any(caseless for _, _, caseless in direct)

    def candidates(self, text: str) -> frozenset[K]:
        """(Remembered for the last MEMO_TEXTS texts: an exception's message is read in several forms,
        and a crash loop raises the same ones every launch.)"""
        known = self._memo.get(text)
        if known is None:
            known = remember(self._memo, text, text, frozenset(self._candidates(text)), MEMO_TEXTS)
        return known

    def _candidates(self, text: str) -> set[K]:
        found: set[K] = set(self.always)
        words = set(_WORD.findall(text))
        for word in words & self._by_word.keys():
            found.update(key for key, literal in self._by_word[word] if literal in text)
        lowered = text
        if self._any_caseless:
            lowered = text.lower()
            for word in set(_WORD.findall(lowered)) & self._by_word_caseless.keys():
                found.update(key for key, literal in self._by_word_caseless[word] if literal in lowered)
        for prefix, caseless, members in self._direct_groups:
            hay = lowered if caseless else text
            if prefix in hay:
                found.update(key for key, literal in members if literal in hay)
        return found

    # The library cache (library/stored.py) keeps a gate as JSON: filing five thousand literals under their
    # words again would cost a third of a clean scan's start. Keys must be strings (pattern ids) there.
    def to_data(self) -> dict[str, Any]:
        return {
            "always": self.always,
            "by_word": self._by_word,
            "by_word_caseless": self._by_word_caseless,
            "direct_groups": self._direct_groups,
            "any_caseless": self._any_caseless,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LiteralGate[Any]:
        """The gate to_data() described (JSON made its tuples lists)."""
        gate: LiteralGate[Any] = cls.__new__(cls)
        gate.always = list(data["always"])
        gate._by_word = {word: [(k, t) for k, t in entries] for word, entries in data["by_word"].items()}
        gate._by_word_caseless = {w: [(k, t) for k, t in entries] for w, entries in data["by_word_caseless"].items()}
        gate._direct_groups = [
            (prefix, caseless, [(k, t) for k, t in members]) for prefix, caseless, members in data["direct_groups"]
        ]
        gate._any_caseless = bool(data["any_caseless"])
        gate._memo = {}
        return gate
