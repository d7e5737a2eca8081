"""Post-mortem input: plain and gzip files, and folders of `*.log*` files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

# Read 1 MiB at a time: big enough that the prefilter runs at its speed, small enough that a scan
# reports the launches of each chunk (and checks a stop) well within a second. The first reads are
# smaller (FIRST_CHUNK, doubling): the first launch of a crash loop is reported before a megabyte of
# its file has been read.
CHUNK = 1 << 20
FIRST_CHUNK = 64 << 10
GZIP_MAGIC = b"\x1f\x8b"


class InputError(Exception):
    """A path the user gave that cannot be read; the message says which and why."""


def expand(paths: list[str]) -> list[Path]:
    """Files as given; a folder means its `*.log*` files, sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            logs = sorted(p for p in path.glob("*.log*") if p.is_file())
            if not logs:
                raise InputError(f"{path}: folder holds no *.log* files")
            found += logs
        elif path.exists():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


def open_log(path: Path) -> BinaryIO:
    try:
        handle = path.open("rb")
        magic = handle.read(2)
        handle.seek(0)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if magic == GZIP_MAGIC:
        import gzip  # here: most logs are plain, and the module costs a start a millisecond

        return gzip.open(handle, "rb")  # type: ignore[return-value]
    return handle


def chunks(path: Path) -> Iterator[tuple[bytes, int]]:
    """The file's bytes (decompressed) and, with each chunk, how far into the file on disk it has read."""
    size = FIRST_CHUNK
    with open_log(path) as handle:
        raw = getattr(handle, "fileobj", handle)
        while True:
            try:
                data = handle.read(size)
                size = min(size * 2, CHUNK)
            except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
                raise InputError(f"{path}: read failed after some data: {exc}") from exc
            if not data:
                return
            yield data, raw.tell()
