"""Bounded memos for answers that repeat: a crash loop prints the same lines, raises the same messages,
every launch. A memo keeps up to its count of answers, then starts again (no LRU bookkeeping on a hot
path), and only for texts short enough to be worth it (4,096 remembered 64 KiB lines would be 256 MiB)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

TEXT_CHARS = 2048  # the longest text whose answer is kept

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, text: str, value: V, entries: int) -> V:
    """Keep `value` under `key` (its answer about `text`) in a memo of at most `entries`; return it."""
    if len(text) <= TEXT_CHARS:
        if len(memo) >= entries:
            memo.clear()
        memo[key] = value
    return value
