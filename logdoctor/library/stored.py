"""The library as a start finds it: built from the pattern files once, then read from logdoctor's cache.

Building it (parsing the TOML, validating a thousand patterns with pydantic, compiling their regexes to
check them, analysing their literals, indexing them for the gate) takes seconds. The cache holds what
was built, as JSON: the patterns, their required literals and the two literal gates on one line, the
patterns' details (title, explanation, fix, source, examples: three quarters of the bytes) after it,
decoded when a finding first needs one; a first line holds a hash of the rest, so a damaged file is
found at load (not at the first finding, nor as a changed regex). A warm start reads no TOML, imports no pydantic, and
compiles no regex until a line gets as far as a pattern. JSON, not pickle: nothing in logdoctor
unpickles (tests/test_safety.py), so a file planted in the cache folder is data, never code.

* The key hashes what the library is built from: the pattern files' names, sizes and contents (the
  user's too, so `--patterns DIR` is cached like the rest: a changed file is a new key), the code that
  builds and stores it, logdoctor's and Python's versions. A file's content is hashed with SipHash,
  as Python's hash-based .pyc files are (SHA-256 of the library's megabytes cost a tenth of a start).
  A library with user patterns is kept apart from the built-in one, so switching between the two does
  not rebuild each time.
* Anything wrong with the file (missing, unreadable, damaged, stale, of another format) costs only
  the build; an unwritable cache folder costs it at every start. A write is atomic (cache.py), so
  concurrent processes read the old file or the new one.
* Constraint sets are read when a finding or `check` first needs them (a clean log never does): they
  have their own cache file, keyed by the files that hold them. A library is built with its sets, so a
  broken set in a user's folder is still reported when the library loads.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from functools import partial
from importlib.util import source_hash
from pathlib import Path
from typing import TYPE_CHECKING

from logdoctor import __version__, cache
from logdoctor.library import files
from logdoctor.library.files import builtin_sources, decoded, user_dirs, user_sources

if TYPE_CHECKING:  # the matcher's modules are imported by what loads a library: `check` needs none of them
    from logdoctor.library.matcher import Library
    from logdoctor.library.rules import ConstraintSet

FORMAT = 2  # of the stored data; a file of another format is rebuilt
# The modules (paths from this folder) whose code decides what is built and how it is stored.
_LIBRARY_CODE = (
    *("files.py", "schema.py", "qualified.py", "../versions.py", "pattern.py", "loader.py", "literals.py"),
    *("gate.py", "matcher.py", "rules.py", "rules_schema.py", "stored.py"),
)
_SETS_CODE = ("files.py", "loader.py", "rules.py", "rules_schema.py", "../versions.py", "stored.py")

Sources = list[tuple[str, bytes]]  # (name, content) of pattern files (files.py)


def load_library(extra_dirs: Iterable[str] = ()) -> Library:
    users = user_sources(user_dirs(extra_dirs))
    builtins = builtin_sources()
    key = cache.key_of(_hashed(users), _hashed(builtins), _code(*_LIBRARY_CODE), _versions())
    path = cache.path_for("userlibrary" if users else "library", key, ".json")
    library = _read(path)
    if library is None:
        library = _build(users, builtins)
        cache.write(path, _stored(library))
    library.fingerprint = key
    library.set_sets_loader(partial(_sets_of, _holding_sets(users + builtins)))
    library.prefilter_enabled = files.prefilter_enabled()
    return library


def constraint_sets(extra_dirs: Iterable[str] = ()) -> list[ConstraintSet]:
    """Every constraint set (loader.load_constraint_sets), from the cache when its files are unchanged."""
    return _sets_of(_holding_sets(user_sources(user_dirs(extra_dirs)) + builtin_sources()))


def _build(users: Sources, builtins: Sources) -> Library:
    from logdoctor.library.literals import required_literals
    from logdoctor.library.loader import patterns_of
    from logdoctor.library.matcher import Library

    patterns = patterns_of(decoded(users), decoded(builtins))
    sets = _sets_of(_holding_sets(users + builtins))  # validated now: a broken set fails the load
    return Library(patterns, sets, {p.id: required_literals(p.match) for p in patterns})


# --- the library's file ----------------------------------------------------------------------------------


def _stored(library: Library) -> bytes:
    """Three lines: a checksum of the rest, the patterns with their literals and gates, their details."""
    from logdoctor.library.pattern import DetailStore

    found = [library.literals_of(p) for p in library.patterns]
    head = {
        "format": FORMAT,
        "patterns": [p.row() for p in library.patterns],
        "literals": [[sorted(f.texts), f.caseless] if f is not None else None for f in found],
        "gates": [library._line_gate.to_data(), library._exception_gate.to_data()],
    }
    details = DetailStore.text_of(p.details for p in library.patterns)
    return _with_checksum(json.dumps(head).encode() + b"\n" + details)


def _read(path: Path) -> Library | None:
    checked = _checked(cache.read(path))
    if checked is None:
        return None
    try:
        return _parsed(*checked)
    except Exception:  # noqa: BLE001 - a foreign or stale layout (its checksum holds): build again
        return None


def _parsed(stored: bytes, start: int) -> Library | None:
    from logdoctor.library.gate import LiteralGate
    from logdoctor.library.literals import Literals
    from logdoctor.library.matcher import Library
    from logdoctor.library.pattern import DetailStore, Pattern

    details = stored.index(b"\n", start) + 1
    head = json.loads(stored[start:details])
    if head["format"] != FORMAT:
        return None
    store = DetailStore(memoryview(stored)[details:])
    patterns = Pattern.from_rows(head["patterns"], store)
    found = {
        p.id: Literals(frozenset(raw[0]), bool(raw[1])) if raw is not None else None
        for p, raw in zip(patterns, head["literals"], strict=True)
    }
    line_gate, exception_gate = (LiteralGate.from_data(data) for data in head["gates"])
    return Library(patterns, (), found, gates=(line_gate, exception_gate))


# --- the constraint sets' file -------------------------------------------------------------------------


def _holding_sets(sources: Sources) -> Sources:
    return [(name, data) for name, data in sources if b"[[constraint_set]]" in data]


def _sets_of(holding: Sources) -> list[ConstraintSet]:
    from logdoctor.library.rules import set_from_data, set_to_data

    key = cache.key_of(_hashed(holding), _code(*_SETS_CODE), _versions())
    path = cache.path_for("constraintsets", key, ".json")
    checked = _checked(cache.read(path))
    if checked is not None:
        try:
            data = json.loads(checked[0][checked[1] :])
            if data["format"] == FORMAT:
                return [set_from_data(raw) for raw in data["sets"]]
        except Exception:  # noqa: BLE001 - a damaged, foreign or stale file means: build again
            pass
    from logdoctor.library.loader import constraint_sets_of

    sets = constraint_sets_of(decoded(holding))
    cache.write(path, _with_checksum(json.dumps({"format": FORMAT, "sets": [set_to_data(s) for s in sets]}).encode()))
    return sets


# --- integrity and keys --------------------------------------------------------------------------------


def _with_checksum(body: bytes) -> bytes:
    """A first line with a hash of the rest: a file damaged on disk (or cut short) is found at load, not as
    a changed regex or at the first finding."""
    return source_hash(body).hex().encode() + b"\n" + body


def _checked(stored: bytes | None) -> tuple[bytes, int] | None:
    """A file _with_checksum wrote, if it is whole, and where its body starts (an offset, not a copy: the
    copy of a library's megabytes of details cost more than parsing its head)."""
    if stored is None or b"\n" not in stored[:64]:
        return None
    start = stored.index(b"\n") + 1
    return (stored, start) if stored[: start - 1] == source_hash(memoryview(stored)[start:]).hex().encode() else None


def _hashed(sources: Sources) -> list[tuple[str, int, bytes]]:
    return [(name, len(data), source_hash(data)) for name, data in sources]


def _code(*names: str) -> list[bytes]:
    """The source of the modules that build what is cached: changed code is a new key. Read as files, so
    a warm start does not import the validating modules (and pydantic) to find them."""
    return [_source_hash_of(Path(__file__).parent / name) for name in names]


def _source_hash_of(path: Path) -> bytes:
    try:
        return source_hash(path.read_bytes())
    except OSError:  # an install without sources: its code changes only with its version, also in the key
        return b"?" + path.name.encode()


def _versions() -> list[str]:
    return [__version__, sys.version]
