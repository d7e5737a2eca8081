"""Post-mortem input: plain and gzip files, streams (`-`, pipes, FIFOs), and folders of log files.

The one definition, for `scan` and `watch` alike, of which files in a folder are logs (log_files) and
of what is gzip (by its first bytes, never by its name: open_log)."""

from __future__ import annotations

import io
import re
import stat
import sys
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
STDIN = "-"  # the name of standard input, as a path and as a finding's source

# A log file: `x.log`, and its rotated copies as logrotate, Docker and the kubelet name them: `x.log.1`,
# `x.log.2.gz`, `x.log-20261130`, `0.log.20261130-101010`. Not `x.logger.py`, `x.login`, `notes.txt`.
_LOG_NAME = re.compile(r"\.log(?:[._-][^/]*)?$")
_CURRENT_LOG_NAME = re.compile(r"\.log$")


class InputError(Exception):
    """A path the user gave that cannot be read; the message says which and why."""


def is_log_name(name: str, rotated: bool = True) -> bool:
    """Whether a file of this name in a folder is a log (with `rotated`, its rotated copies too)."""
    return bool((_LOG_NAME if rotated else _CURRENT_LOG_NAME).search(name))


def log_files(folder: Path, rotated: bool = True) -> list[Path]:
    """The log files below a folder, at any depth, sorted: `*.log`, and with `rotated` (scan) their rotated
    copies as well; `watch` follows the current files and reads a rotated copy only as the continuation
    of its file (follow.py)."""
    candidates = folder.rglob("*.log*" if rotated else "*.log")
    return sorted(p for p in candidates if is_log_name(p.name, rotated) and p.is_file())


def rotated_copies(path: Path) -> list[Path]:
    """The siblings that may be rotated copies of `path` (`x.log.1`, `x.log-20261130`, `x.log.2.gz`), sorted."""
    prefix = path.name
    return sorted(
        p
        for p in path.parent.glob(glob_escape(prefix) + "*")
        if p.name != prefix and p.name[len(prefix)] in "._-" and p.is_file()
    )


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def is_stream(path: Path) -> bool:
    """Standard input, a pipe, a FIFO, a character device: read once, front to back, with no size."""
    if str(path) == STDIN:
        return True
    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def disk_size(path: Path) -> int:
    """Bytes on disk of a regular file; 0 for a stream (it has no size before it is read)."""
    if is_stream(path):
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


def expand(paths: list[str]) -> list[Path]:
    """Files as given (`-` is standard input, once); a folder means its log files at any depth (log_files)."""
    found: list[Path] = []
    for raw in paths:
        if raw == STDIN:
            if Path(STDIN) in found:
                raise InputError("-: standard input can be read only once")
            if sys.stdin is None:
                raise InputError("-: standard input is closed")
            if sys.stdin.isatty():
                raise InputError("-: standard input is a terminal; pipe a log in: `cat server.log | logdoctor scan -`")
            found.append(Path(STDIN))
            continue
        path = Path(raw)
        if str(path) == STDIN:  # `./-`, a file named `-`: Path drops the `./`, and `-` is standard input
            path = path.absolute()
        if path.is_dir():
            logs = log_files(path)
            if not logs:
                raise InputError(f"{path}: folder holds no log files (*.log, *.log.1, *.log.gz, ... at any depth)")
            found += logs
        elif path.exists():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


class _Rejoined(io.RawIOBase):
    """A stream whose first bytes were read to look at them, put back in front of the rest."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read1(len(buffer)) if hasattr(self._rest, "read1") else self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._rest.close()
        finally:
            super().close()


def _gzip(handle: BinaryIO) -> BinaryIO:
    import gzip  # here: most logs are plain, and the module costs a start a millisecond

    class Owning(gzip.GzipFile):
        """Closes the file it reads (a GzipFile given a file object leaves it open)."""

        def close(self) -> None:
            try:
                super().close()
            finally:
                handle.close()

    return Owning(fileobj=handle, mode="rb")  # type: ignore[return-value]


def open_log(path: Path) -> BinaryIO:
    """The file's bytes, decompressed when its first bytes are gzip's (whatever its name). A stream is
    read front to back, never seeked."""
    try:
        if str(path) == STDIN:
            handle: BinaryIO = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115 - the caller closes
        else:
            handle = path.open("rb")
        if is_stream(path):
            magic = handle.read(len(GZIP_MAGIC))  # a pipe may deliver them one at a time: read waits for both
            handle = io.BufferedReader(_Rejoined(magic, handle), CHUNK)
        else:
            magic = handle.read(len(GZIP_MAGIC))
            handle.seek(0)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return _gzip(handle) if magic == GZIP_MAGIC else handle


def is_gzip(path: Path) -> bool:
    """Whether a regular file is gzip, by its first bytes."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    except OSError:
        return False


def chunks(path: Path) -> Iterator[tuple[bytes, int]]:
    """The file's bytes (decompressed) and, with each chunk, how far into the file on disk it has read
    (for a stream: how many bytes it has read). A stream's chunk is what has arrived, up to the chunk size:
    a slow writer's lines are diagnosed as they come, not once a megabyte has."""
    size = FIRST_CHUNK
    stream = is_stream(path)
    done = 0
    with open_log(path) as handle:
        raw = getattr(handle, "fileobj", handle)
        read = handle.read1 if stream else handle.read  # type: ignore[attr-defined]
        while True:
            try:
                data = read(size)
                size = min(size * 2, CHUNK)
            except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
                raise InputError(f"{path}: read failed after some data: {exc}") from exc
            if not data:
                return
            done += len(data)
            yield data, done if stream else raw.tell()
