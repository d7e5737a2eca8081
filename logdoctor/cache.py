"""What logdoctor builds from its own data and keeps between runs: the prefilter's compiled Hyperscan
database, the validated pattern library. Never log content.

Files live in $LOGDOCTOR_CACHE (default $XDG_CACHE_HOME/logdoctor or ~/.cache/logdoctor), named by a key
that hashes everything they were built from, so a changed input simply misses. A cache that is missing,
unreadable, read-only or corrupt only costs the build; a write is atomic (a temporary file, then a
rename), so a concurrent reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
from importlib.util import source_hash
from pathlib import Path


def cache_dir() -> Path:
    configured = os.environ.get("LOGDOCTOR_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "logdoctor"


def key_of(*parts: object) -> str:
    """A hash of strings, bytes, numbers and nested sequences of them, each written with its length (so
    where one ends and the next begins is part of what is hashed; their repr() of megabytes cost a tenth
    of a start). The hash is SipHash, what Python's hash-based .pyc files are checked with: importing
    hashlib (OpenSSL) cost more than hashing the inputs, and a key only has to tell builds apart."""
    encoded = bytearray()
    _feed(encoded, parts)
    return source_hash(encoded).hex()


def _feed(encoded: bytearray, part: object) -> None:
    if isinstance(part, str):
        part = part.encode("utf-8", "surrogatepass")
    if isinstance(part, bytes | bytearray):
        encoded += b"b%d:" % len(part)
        encoded += part
    elif isinstance(part, list | tuple):
        encoded += b"(%d:" % len(part)
        for item in part:
            _feed(encoded, item)
        encoded += b")"
    else:  # numbers, None, booleans
        encoded += repr(part).encode()
        encoded += b";"


def path_for(kind: str, key: str, suffix: str) -> Path:
    return cache_dir() / f"{kind}-{key}{suffix}"


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def write(path: Path, data: bytes) -> None:
    """Store `data` at `path` and remove the files of the same kind built from other inputs."""
    kind = path.name.split("-", 1)[0]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(path)
        for stale in path.parent.glob(f"{kind}-*{path.suffix}"):
            if stale != path:
                stale.unlink(missing_ok=True)
    except OSError:
        pass
