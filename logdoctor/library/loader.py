"""Parse and validate pattern files (schema.py) and constraint sets (rules.py): what building the library
costs, and what its cache (stored.py) spares a start. Finding and reading the files is files.py's."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable
from typing import TypeVar

from pydantic import ValidationError

from logdoctor.library.files import ENV_VAR as ENV_VAR
from logdoctor.library.files import LibraryError as LibraryError
from logdoctor.library.files import builtin_files, user_dirs, user_files
from logdoctor.library.files import prefilter_enabled as prefilter_enabled
from logdoctor.library.pattern import Pattern
from logdoctor.library.rules import ConstraintSet
from logdoctor.library.rules_schema import validate_set
from logdoctor.library.schema import validate_pattern


def _toml(name: str, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LibraryError(f"{name}: not valid TOML: {exc}") from exc


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors())


T = TypeVar("T", Pattern, ConstraintSet)


def _table_lines(text: str, key: str) -> list[int]:
    """1-based line numbers of the `[[key]]` headers, in order: where each entry starts."""
    header = f"[[{key}]]"
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith(header)]


def _tables(
    name: str, text: str, data: dict[str, object], key: str, build: Callable[[object, str], T], label: str
) -> list[T]:
    """Validate every `[[key]]` table of one file (`build` raises pydantic's ValidationError); the error
    names the file, its line, the entry and the problem."""
    starts = _table_lines(text, key)
    raw_entries = data.get(key, [])
    if not isinstance(raw_entries, list):
        raise LibraryError(f"{name}: `{key}` must be an array of tables ([[{key}]])")
    entries: list[T] = []
    for index, raw in enumerate(raw_entries, 1):
        ident = raw.get("id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        try:
            entries.append(build(raw, name))
        except ValidationError as exc:
            where = f"{name}:{starts[index - 1]}" if index <= len(starts) else name
            raise LibraryError(f"{where}: {label} {ident}: {_problems(exc)}") from exc
    return entries


def parse_sets(name: str, text: str) -> list[ConstraintSet]:
    data = _toml(name, text)
    lists = data.get("lists", {})
    if not isinstance(lists, dict) or not all(isinstance(v, list) for v in lists.values()):
        raise LibraryError(f"{name}: [lists] must map names to arrays (`hybrid_models = [...]`)")
    data["constraint_set"] = expand_lists(name, data.get("constraint_set", []), lists)
    return _tables(name, text, data, "constraint_set", validate_set, "constraint set")


def expand_lists(name: str, value: object, lists: dict[str, list[object]]) -> object:
    """The file's named lists written in: `value = "@hybrid_models"` is that list, and an `"@name"`
    element of an array is spliced in (`["@kimi_models", "X"]`). A name the file does not define is an
    error naming it, not a literal string that would silently never match."""
    if isinstance(value, dict):
        return {k: expand_lists(name, v, lists) for k, v in value.items()}
    if isinstance(value, list):
        out: list[object] = []
        for item in value:
            if _list_name(item) is not None:
                out.extend(_named(name, item, lists))
            else:
                out.append(expand_lists(name, item, lists))
        return out
    if _list_name(value) is not None:
        return list(_named(name, value, lists))  # type: ignore[arg-type]
    return value


def _list_name(value: object) -> str | None:
    if isinstance(value, str) and value.startswith("@") and value[1:].isidentifier():
        return value[1:]
    return None


def _named(name: str, ref: str, lists: dict[str, list[object]], within: tuple[str, ...] = ()) -> list[object]:
    """The list `ref` names, with the lists it names in turn spliced in (a union of generated lists)."""
    key = ref[1:]
    if key not in lists:
        raise LibraryError(f"{name}: {ref} names no list of the file's [lists] (it has: {sorted(lists) or 'none'})")
    if key in within:
        raise LibraryError(f"{name}: [lists] {' -> '.join((*within, key))} names itself")
    out: list[object] = []
    for item in lists[key]:
        out.extend(_named(name, item, lists, (*within, key)) if isinstance(item, str) and _list_name(item) else [item])
    return out


def load_constraint_sets(extra_dirs: Iterable[str] = ()) -> list[ConstraintSet]:
    """Every constraint set, oldest first within a file, with `extends` resolved."""
    return constraint_sets_of(user_files(user_dirs(extra_dirs)) + builtin_files())


def constraint_sets_of(files: list[tuple[str, str]]) -> list[ConstraintSet]:
    """The constraint sets of these (name, text) files, the user's first."""
    resolved: dict[str, ConstraintSet] = {}
    ordered: list[ConstraintSet] = []
    for name, text in files:
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
    extra = set(data) - {"pattern", "constraint_set", "lists"}
    if extra:
        raise LibraryError(
            f"{name}: unknown top-level keys {sorted(extra)}; only [[pattern]], [[constraint_set]] and [lists]"
        )
    return _tables(name, text, data, "pattern", validate_pattern, "pattern")


def load_patterns(extra_dirs: Iterable[str] = ()) -> list[Pattern]:
    """Every pattern in matching order, ids unique.

    A user's own patterns are tried before the built-in ones (they know their site's errors best); within
    each group, higher `priority` first, then the order of the files and of the patterns in them.
    """
    return patterns_of(user_files(user_dirs(extra_dirs)), builtin_files())


def patterns_of(users: list[tuple[str, str]], builtins: list[tuple[str, str]]) -> list[Pattern]:
    """The patterns of these (name, text) files, in matching order (see load_patterns)."""
    groups = [(0, users), (1, builtins)]
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
