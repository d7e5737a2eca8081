"""Where pattern files are, and their texts: the package's own, then the user's (`--patterns`,
LOGDOCTOR_PATTERNS). Reading them is all a start with a warm cache does with them (stored.py hashes the
texts), so this module imports no parser and no pydantic."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

ENV_VAR = "LOGDOCTOR_PATTERNS"


class LibraryError(Exception):
    """A pattern file that cannot be used: names the file, the pattern and the problem."""


def builtin_folder() -> Path:
    """The shipped library: the top-level `patterns/` of the project. The wheel installs it as the package
    data `logdoctor/patterns/` (pyproject.toml maps it); a source checkout reads it where it is. Looked
    up as paths, not through importlib.resources (a tenth of a start to import it): a wheel installs
    its package data as files."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "patterns"
    if packaged.is_dir():
        return packaged
    return package.parent / "patterns"


def builtin_sources() -> list[tuple[str, bytes]]:
    """(name, bytes) of every shipped pattern file, sorted."""
    entries = [entry for entry in builtin_folder().iterdir() if entry.name.endswith(".toml")]
    return sorted((f"patterns/{entry.name}", entry.read_bytes()) for entry in entries)


def user_dirs(extra: Iterable[str] = ()) -> list[Path]:
    dirs = [Path(p) for p in extra]
    env = os.environ.get(ENV_VAR, "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    return dirs


def user_sources(dirs: Iterable[Path]) -> list[tuple[str, bytes]]:
    """(name, bytes) of the pattern files in the user's folders (a folder's `*.toml`, or a file itself)."""
    found: list[tuple[str, bytes]] = []
    for folder in dirs:
        if folder.is_file():
            paths = [folder]
        elif folder.is_dir():
            paths = sorted(folder.glob("*.toml"))
        else:
            raise LibraryError(f"{folder}: no such pattern file or folder")
        for path in paths:
            try:
                found.append((str(path), path.read_bytes()))
            except OSError as exc:
                raise LibraryError(f"{path}: cannot read: {exc}") from exc
    return found


def decoded(sources: list[tuple[str, bytes]]) -> list[tuple[str, str]]:
    """The texts of pattern files: what the parser reads (a warm start only hashes the bytes)."""
    texts: list[tuple[str, str]] = []
    for name, data in sources:
        try:
            texts.append((name, data.decode("utf-8")))
        except UnicodeDecodeError as exc:
            raise LibraryError(f"{name}: cannot read: {exc}") from exc
    return texts


def builtin_files() -> list[tuple[str, str]]:
    return decoded(builtin_sources())


def user_files(dirs: Iterable[Path]) -> list[tuple[str, str]]:
    return decoded(user_sources(dirs))


def prefilter_enabled() -> bool:
    """$LOGDOCTOR_PREFILTER=off reads every line (benchmarks, bug hunts)."""
    return os.environ.get("LOGDOCTOR_PREFILTER") != "off"
