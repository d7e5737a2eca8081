"""Load and validate pattern files: the package's own, then the user's (`--patterns`, LOGDOCTOR_PATTERNS)."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from logdoctor import cache
from logdoctor.library import literals, schema
from logdoctor.library.literals import Literals
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.schema import Pattern, construct_pattern, dump_pattern

ENV_VAR = "LOGDOCTOR_PATTERNS"


class LibraryError(Exception):
    """A pattern file that cannot be used: names the file, the pattern and the problem."""


def builtin_folder() -> Traversable:
    """The shipped library: the top-level `patterns/` of the project. The wheel installs it as the package
    data `logdoctor/patterns/` (pyproject.toml maps it); a source checkout reads it where it is."""
    packaged = resources.files("logdoctor").joinpath("patterns")
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "patterns"


def builtin_files() -> list[tuple[str, str]]:
    folder = builtin_folder()
    found = [
        (f"patterns/{entry.name}", entry.read_text("utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    ]
    return sorted(found)


def user_dirs(extra: Iterable[str] = ()) -> list[Path]:
    dirs = [Path(p) for p in extra]
    env = os.environ.get(ENV_VAR, "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    return dirs


def user_files(dirs: Iterable[Path]) -> list[tuple[str, str]]:
    files: list[tuple[str, str]] = []
    for folder in dirs:
        if folder.is_file():
            paths = [folder]
        elif folder.is_dir():
            paths = sorted(folder.glob("*.toml"))
        else:
            raise LibraryError(f"{folder}: no such pattern file or folder")
        for path in paths:
            try:
                files.append((str(path), path.read_text("utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                raise LibraryError(f"{path}: cannot read: {exc}") from exc
    return files


def _toml(name: str, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LibraryError(f"{name}: not valid TOML: {exc}") from exc


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors())


M = TypeVar("M", Pattern, ConstraintSet)


def _table_lines(text: str, key: str) -> list[int]:
    """1-based line numbers of the `[[key]]` headers, in order: where each entry starts."""
    header = f"[[{key}]]"
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith(header)]


def _tables(name: str, text: str, data: dict[str, object], key: str, model: type[M], label: str) -> list[M]:
    """Validate every `[[key]]` table of one file; the error names the file, its line, the entry and the
    problem."""
    starts = _table_lines(text, key)
    raw_entries = data.get(key, [])
    if not isinstance(raw_entries, list):
        raise LibraryError(f"{name}: `{key}` must be an array of tables ([[{key}]])")
    entries: list[M] = []
    for index, raw in enumerate(raw_entries, 1):
        ident = raw.get("id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        try:
            entry = model.model_validate(raw)
        except ValidationError as exc:
            where = f"{name}:{starts[index - 1]}" if index <= len(starts) else name
            raise LibraryError(f"{where}: {label} {ident}: {_problems(exc)}") from exc
        entry.origin = name
        entries.append(entry)
    return entries


def parse_sets(name: str, text: str) -> list[ConstraintSet]:
    return _tables(name, text, _toml(name, text), "constraint_set", ConstraintSet, "constraint set")


def load_constraint_sets(extra_dirs: Iterable[str] = ()) -> list[ConstraintSet]:
    """Every constraint set, oldest first within a file, with `extends` resolved."""
    resolved: dict[str, ConstraintSet] = {}
    ordered: list[ConstraintSet] = []
    for name, text in user_files(user_dirs(extra_dirs)) + builtin_files():
        if "[[constraint_set]]" not in text:
            continue  # a pattern file: parsing its TOML again would find nothing
        for cset in parse_sets(name, text):
            if cset.id in resolved:
                raise LibraryError(
                    f"{name}: constraint set {cset.id}: id already defined in {resolved[cset.id].origin}"
                )
            if cset.extends is not None:
                parent = resolved.get(cset.extends)
                if parent is None:
                    raise LibraryError(
                        f"{name}: constraint set {cset.id}: extends {cset.extends!r}, which is not defined above it"
                    )
                missing = set(cset.drop) - {r.id for r in parent.rule}
                if missing:
                    raise LibraryError(f"{name}: constraint set {cset.id}: drops unknown rules {sorted(missing)}")
                cset = cset.inherit(parent)
                cset.origin = name
            resolved[cset.id] = cset
            ordered.append(cset)
    return ordered


def parse_file(name: str, text: str) -> list[Pattern]:
    data = _toml(name, text)
    extra = set(data) - {"pattern", "constraint_set"}
    if extra:
        raise LibraryError(
            f"{name}: unknown top-level keys {sorted(extra)}; only [[pattern]] and [[constraint_set]] tables"
        )
    return _tables(name, text, data, "pattern", Pattern, "pattern")


def load_patterns(extra_dirs: Iterable[str] = ()) -> list[Pattern]:
    """Every pattern in matching order, ids unique.

    A user's own patterns are tried before the built-in ones (they know their site's errors best); within
    each group, higher `priority` first, then the order of the files and of the patterns in them.
    """
    groups = [(0, user_files(user_dirs(extra_dirs))), (1, builtin_files())]
    patterns: list[tuple[int, Pattern]] = []
    seen: dict[str, str] = {}
    for group, files in groups:
        for name, text in files:
            for pattern in parse_file(name, text):
                if pattern.id in seen:
                    raise LibraryError(f"{name}: pattern {pattern.id}: id already defined in {seen[pattern.id]}")
                seen[pattern.id] = name
                patterns.append((group, pattern))
    ordered = sorted(enumerate(patterns), key=lambda item: (item[1][0], -item[1][1].priority, item[0]))
    result = []
    for position, (_, (_, pattern)) in enumerate(ordered):
        pattern.order = position
        result.append(pattern)
    return result


def load_cached_patterns(
    extra_dirs: Iterable[str] = (),
) -> tuple[list[Pattern], dict[str, Literals | None], str]:
    """load_patterns(), and each pattern's required literals, from logdoctor's cache when the pattern files
    (and the code that validates them) are unchanged: parsing and validating a thousand patterns, and
    analysing their regexes, costs a second and more at every start; reading the cache, a few hundredths.
    The cache holds what this function built from the files, keyed by their names and texts; the key is
    returned as the library's fingerprint (what the prefilter's own cache is keyed by)."""
    files = user_files(user_dirs(extra_dirs)) + builtin_files()
    code = [Path(module.__file__ or "").read_bytes() for module in (schema, literals)]
    key = cache.key_of(files, code)
    path = cache.path_for("library", key, ".json")
    stored = cache.read(path)
    if stored is not None:
        try:
            data = json.loads(stored)
            patterns = [construct_pattern(raw) for raw in data["patterns"]]
            found = {k: Literals(frozenset(v[0]), v[1]) if v else None for k, v in data["literals"].items()}
            return patterns, found, key
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # an older or damaged cache: build again
    patterns = load_patterns(extra_dirs)
    found = {p.id: literals.required_literals(p.match) for p in patterns}
    data = {
        "patterns": [dump_pattern(p) for p in patterns],
        "literals": {k: [sorted(v.texts), v.caseless] if v else None for k, v in found.items()},
    }
    cache.write(path, json.dumps(data).encode())
    return patterns, found, key


def prefilter_enabled() -> bool:
    """$LOGDOCTOR_PREFILTER=off reads every line (benchmarks, bug hunts)."""
    return os.environ.get("LOGDOCTOR_PREFILTER") != "off"
