"""The sidecar's memory across restarts: where it stopped in each file, and what it already reported.

Saved as JSON, atomically (write a temporary file, then rename), so a crash while saving leaves the
previous state intact. A file is known by its identity (device, inode, and a hash of its first bytes,
since inodes are reused), so a rotated or re-created file is never mistaken for the one read before.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

HEAD_BYTES = 256  # bytes hashed to recognise a file again
STATE_VERSION = 2  # 2: read_lines, ids, issued (version 1 files load: see FileState and State)
MAX_FINGERPRINTS = 10_000  # remembered findings; the oldest are forgotten first


def head_hash(data: bytes) -> str:
    return hashlib.sha256(data[:HEAD_BYTES]).hexdigest()[:32]


@dataclass
class FileState:
    """Where a restart reads a followed path from: a file (it may be the one rotated away since), an offset
    in it at a line's start (the start of the launch in progress: follow.Tail.checkpoint), the lines of the
    path before it, and how many lines had been read (those between are read again, not counted again)."""

    device: int
    inode: int
    head: str  # head_hash of the file's first bytes ("" while it is empty)
    offset: int  # bytes of the file before the point to read from
    lines: int  # lines of this followed path before that point (across rotations)
    read_lines: int = -1  # lines of this followed path read so far (-1 in version 1: as many as `lines`)

    def __post_init__(self) -> None:
        self.read_lines = max(self.read_lines, self.lines)


@dataclass
class State:
    files: dict[str, FileState] = field(default_factory=dict)
    reported: list[str] = field(default_factory=list)  # fingerprints of findings already reported
    # The id each of them was printed with (version 1 kept none), so that a finding read again after a
    # restart is amended under that id, and how many ids were printed: the next run's go on from there,
    # so no two findings printed under one state share an id.
    ids: dict[str, str] = field(default_factory=dict)
    issued: int = 0

    def reported_as(self, fingerprint: str) -> str | None:
        """The id the finding was printed with ("" when the state did not keep it); None: never printed."""
        return self.ids.get(fingerprint, "") if fingerprint in self._reported_set else None

    def issue(self) -> str:
        self.issued += 1
        return f"f{self.issued}"

    def remember(self, fingerprint: str, ident: str = "") -> None:
        if fingerprint not in self._reported_set:
            self.reported.append(fingerprint)
            self._reported_set.add(fingerprint)
            if ident:
                self.ids[fingerprint] = ident
            if len(self.reported) > MAX_FINGERPRINTS:
                oldest = self.reported.pop(0)
                self._reported_set.discard(oldest)
                self.ids.pop(oldest, None)

    def __post_init__(self) -> None:
        self._reported_set = set(self.reported)


class StateError(Exception):
    """The state file cannot be read or written; the message names it and says why."""


def load_state(path: Path | None) -> State:
    if path is None or not path.exists():
        return State()
    try:
        data = json.loads(path.read_text("utf-8"))
        files = {name: FileState(**entry) for name, entry in data.get("files", {}).items()}
        reported = list(data.get("reported", []))
        return State(files, reported, dict(data.get("ids", {})), int(data.get("issued", 0)))
    except (OSError, ValueError, TypeError) as exc:
        raise StateError(f"{path}: cannot read the state file ({exc}); move it away to start afresh") from exc


def save_state(path: Path | None, state: State) -> None:
    if path is None:
        return
    data = {
        "version": STATE_VERSION,
        "files": {k: asdict(v) for k, v in state.files.items()},
        "reported": state.reported,
        "ids": state.ids,
        "issued": state.issued,
    }
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data), "utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise StateError(f"{path}: cannot write the state file ({exc.strerror or exc})") from exc
