"""library/stored.py: the cached library is the library the files build, and a bad cache only costs a build.

The built-in patterns are swapped for three of their files (memory, ReplaySSM and its rules) so that each
test can build its library from nothing in a fraction of a second; every test has its own cache folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib.util import source_hash
from pathlib import Path
from typing import Any

import pytest

from logdoctor.api import diagnose_text
from logdoctor.library import files, stored
from logdoctor.library.files import LibraryError
from logdoctor.library.loader import load_constraint_sets
from logdoctor.library.matcher import Library

PATTERNS = Path(__file__).resolve().parent.parent / "patterns"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SMALL = ("memory.toml", "replayssm.toml", "replayssm-rules.toml")
SITE_PATTERN = (
    '[[pattern]]\nid = "site.boom"\ntitle = "t"\nseverity = "error"\nmatch = "boom (?P<n>\\\\d+)"\n'
    'explanation = "e"\n[pattern.fix]\nsummary = "s {n}"\n'
    '[pattern.source]\nfile = "f"\n[pattern.examples]\nmatch = ["ValueError: boom 1"]\n'
)


@pytest.fixture
def small_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder, and a built-in library of three files; returns the cache folder."""
    builtin = tmp_path / "patterns"
    builtin.mkdir()
    for name in SMALL:
        shutil.copy(PATTERNS / name, builtin / name)
    monkeypatch.setattr(files, "builtin_folder", lambda: builtin)
    monkeypatch.setenv("LOGDOCTOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(files.ENV_VAR, raising=False)
    return tmp_path / "cache"


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the libraries built from files (not read from the cache) from here on."""
    built: list[int] = []
    build = stored._build

    def counting(*args: object) -> Library:
        built.append(1)
        return build(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stored, "_build", counting)
    return built


def _examples(library: Library) -> list[str]:
    return [example for p in library.patterns for example in p.examples.match[:1] + p.examples.no_match[:1]]


def test_the_cached_library_is_the_one_its_files_build(small_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = _builds(monkeypatch)
    fresh = Library.load()
    cached = Library.load()
    assert built == [1]  # the second came from the cache
    assert [p.id for p in cached.patterns] == [p.id for p in fresh.patterns]
    assert [(p.order, p.origin, p.match, p.where, p.levels) for p in cached.patterns] == [
        (p.order, p.origin, p.match, p.where, p.levels) for p in fresh.patterns
    ]
    assert [p.details for p in cached.patterns] == [p.details for p in fresh.patterns]
    assert all(cached.literals_of(p) == fresh.literals_of(fresh.by_id[p.id]) for p in cached.patterns)
    assert [p.id for p in cached.line_patterns] == [p.id for p in fresh.line_patterns]
    assert [p.id for p in cached.message_patterns] == [p.id for p in fresh.message_patterns]
    assert cached.fingerprint == fresh.fingerprint is not None
    examples = _examples(fresh)
    assert len(examples) > 100
    for example in examples:
        assert [f.model_dump() for f in diagnose_text(example, cached)] == [
            f.model_dump() for f in diagnose_text(example, fresh)
        ]


def test_a_cached_library_reads_its_constraint_sets_only_when_asked(
    small_library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Library.load()
    cached = Library.load()
    assert cached._sets is None  # a clean scan never needs them
    fresh = load_constraint_sets()
    assert [s.id for s in fresh] != [] and any(s.origin for s in fresh)
    assert cached.sets == fresh  # every field of every rule, condition and fix, read back from the cache
    assert stored.constraint_sets() == fresh


def _truncated(text: bytes) -> bytes:
    return text[: len(text) // 2]


def _flipped(text: bytes) -> bytes:
    middle = len(text) // 2
    return text[:middle] + bytes([text[middle] ^ 1]) + text[middle + 1 :]


def _rehashed(change: Callable[[Any], object]) -> Callable[[bytes], bytes]:
    """A file whose checksum holds but whose patterns are not as this code writes them: by hand, or by a
    logdoctor of another layout."""

    def damage(text: bytes) -> bytes:
        head, _, details = text.partition(b"\n")[2].partition(b"\n")
        data = json.loads(head)
        change(data)
        body = json.dumps(data).encode() + b"\n" + details
        return source_hash(body).hex().encode() + b"\n" + body

    return damage


@pytest.mark.parametrize(
    "damage",
    [
        lambda _: b"",
        lambda _: b"\x00\xff not json",
        _truncated,
        _flipped,
        _rehashed(lambda data: data.update(format=stored.FORMAT + 1)),
        _rehashed(lambda data: data.update(patterns=[row[:-1] for row in data["patterns"]])),
        _rehashed(lambda data: data.pop("gates")),
    ],
)
def test_a_damaged_or_foreign_cache_file_is_rebuilt(
    small_library: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[bytes], bytes]
) -> None:
    expected = [p.id for p in Library.load().patterns]
    (path,) = small_library.glob("library-*.json")
    path.write_bytes(damage(path.read_bytes()))
    built = _builds(monkeypatch)
    assert [p.id for p in Library.load().patterns] == expected
    assert [p.id for p in Library.load().patterns] == expected
    assert built == [1]  # rebuilt once, and the rebuilt file is read the next time


def test_a_damaged_constraint_set_cache_is_rebuilt(small_library: Path) -> None:
    expected = [s.id for s in load_constraint_sets()]
    stored.constraint_sets()
    (path,) = small_library.glob("constraintsets-*.json")
    path.write_bytes(b'{"format": 1, "sets": [{"id": 3}]}')
    assert [s.id for s in stored.constraint_sets()] == expected
    assert [s.id for s in Library.load().sets] == expected


def test_an_unwritable_cache_folder_only_costs_the_build(small_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = small_library.parent / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("LOGDOCTOR_CACHE", str(blocked))
    built = _builds(monkeypatch)
    first, second = Library.load(), Library.load()
    assert built == [1, 1]
    assert [p.id for p in first.patterns] == [p.id for p in second.patterns] != []
    assert [s.id for s in second.sets] == [s.id for s in load_constraint_sets()]


def test_user_patterns_are_cached_by_their_content(
    small_library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "site.toml").write_text(SITE_PATTERN)
    built = _builds(monkeypatch)
    Library.load()
    first = Library.load([str(mine)])
    again = Library.load([str(mine)])
    assert built == [1, 1]  # one built-in library, one with the user's patterns: both kept
    assert {p.name.split("-")[0] for p in small_library.glob("*library-*.json")} == {"library", "userlibrary"}
    assert again.patterns[0].id == first.patterns[0].id == "site.boom"
    assert again.patterns[0].compiled.search("boom 7")["n"] == "7"
    assert again.patterns[0].origin == first.patterns[0].origin == str(mine / "site.toml")
    (mine / "site.toml").write_text(SITE_PATTERN.replace("site.boom", "site.bang"))
    assert Library.load([str(mine)]).patterns[0].id == "site.bang"
    assert len(built) == 3


def test_a_broken_user_file_is_an_error_at_load_cache_or_not(
    small_library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "site.toml").write_text(SITE_PATTERN.replace('severity = "error"', 'severity = "fatal"'))
    for _ in range(2):
        with pytest.raises(LibraryError, match="site.boom"):
            Library.load([str(mine)])
    (mine / "sets.toml").write_bytes(b"[[constraint_set]]\nid = \xff\n")
    (mine / "site.toml").write_text(SITE_PATTERN)
    with pytest.raises(LibraryError, match="sets.toml"):
        Library.load([str(mine)])


def test_check_imports_no_pydantic(library: Library) -> None:
    """`check` reads the constraint sets from the cache as plain data, and reports plain results."""
    env = {k: v for k, v in os.environ.items() if k != files.ENV_VAR}
    code = (
        "import sys\nfrom logdoctor.cli import main\n"
        "status = main(['check', '--', 'vllm', 'serve', 'm', '--use-replayssm'])\n"
        "print(status, 'pydantic' in sys.modules)\n"
    )
    for _ in range(2):  # the first run may build the sets' cache (and validate them with pydantic)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "triton-needs-v1-runner" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "1 False"


def test_a_clean_scan_imports_neither_pydantic_nor_regex(library: Library, tmp_path: Path) -> None:
    """What a warm start of `logdoctor scan` costs is mostly what it imports: a log with no finding needs
    no finding model (pydantic), no validation and no compiled pattern (regex). (`library` fills the
    tests' cache folder, which the child process shares.)"""
    log = tmp_path / "clean.log"
    log.write_bytes((FIXTURES / "engine-core-kv-cache-too-small-0.33.log").read_bytes()[:1024].rsplit(b"\n", 1)[0])
    env = {k: v for k, v in os.environ.items() if k != files.ENV_VAR}
    code = (
        "import sys\nfrom logdoctor.cli import main\n"
        f"main(['scan', {str(log)!r}])\n"
        "print(sorted(m for m in ('pydantic', 'regex', 'rich', 'hyperscan', 'tomllib') if m in sys.modules))\n"
    )
    for _ in range(2):  # the first run builds the cache (and validates); the second is a warm start
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "0 findings" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]"
