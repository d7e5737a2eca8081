"""cache.py: keys that change with every input they hash, files that only ever cost a rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import cache


def test_a_key_is_the_same_for_the_same_inputs() -> None:
    files = [("a.toml", "x = 1"), ("b.toml", "y = 2")]
    assert cache.key_of(files, [b"code"], 3) == cache.key_of(list(files), [b"code"], 3)


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        ((("ab", "c"),), (("a", "bc"),), False),  # where one text ends and the next begins
        ((["a", "b"],), (["a"], ["b"]), False),  # how the parts nest
        ((1,), ("1",), False),
        ((None,), ("None",), False),
        (("é",), ("e",), False),
        (("x",), (b"x",), True),  # a text and its UTF-8 bytes are one input
    ],
)
def test_keys_tell_apart_what_their_inputs_tell_apart(
    one: tuple[object, ...], other: tuple[object, ...], same: bool
) -> None:
    assert (cache.key_of(*one) == cache.key_of(*other)) is same


def test_a_write_replaces_the_files_of_the_same_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGDOCTOR_CACHE", str(tmp_path))
    old = cache.path_for("library", cache.key_of("v1"), ".json")
    new = cache.path_for("library", cache.key_of("v2"), ".json")
    other = cache.path_for("prefilter", cache.key_of("v1"), ".hsdb")
    cache.write(old, b"1")
    cache.write(other, b"x")
    cache.write(new, b"2")
    assert cache.read(new) == b"2" and cache.read(old) is None and cache.read(other) == b"x"


def test_an_unwritable_cache_costs_only_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("LOGDOCTOR_CACHE", str(blocked))
    path = cache.path_for("library", cache.key_of("v1"), ".json")
    cache.write(path, b"data")  # no exception
    assert cache.read(path) is None
