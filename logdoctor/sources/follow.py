"""Sidecar mode: follow log files by name, through rotation, for weeks, without losing a line.

Each followed path is a `Tail`: the file open now, how far it has been read, and its channel of the
pipeline (pipeline.py: a Framer and a Sieve, feeding the one Doctor of the sidecar) whose line
count goes on across rotations (so a finding's line number is unique within the path). On every poll a
tail reads what is new and then looks at the path again:

* renamed away or deleted (and maybe re-created): the open descriptor still reads the old file, so it
  is finished first, then the new file is read from its start;
* shorter than what was read (copytruncate): the lines written between the last read and the copy
  are in the copy, so a sibling whose first bytes match (`x.log.1`, `x.log-20261130`, `.gz`) is read
  from the old offset, then the truncated file from its start;
* not there yet: nothing to do until it appears.

watchdog wakes the loop when something changes; a timer poll (about a second) catches what its
events miss (network file systems, a full inotify watch table). A file far behind (the catch-up of a
restart, or of a sidecar started beside a server that has run for days) is read in steps of a quarter of a
second and fed in pieces, so a stop is never more than a piece away. The state file records, per path,
the file's identity and the offset of the start of the launch in progress (Tail.checkpoint), plus the
fingerprints of the findings reported, so a restarted sidecar resumes there, reports what was written
while it was down (in the current file or in the one rotated away meanwhile) and never reports a finding
twice.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer
from logdoctor.model import Finding
from logdoctor.pipeline import Channel, Emit, Pipeline
from logdoctor.sources.files import CHUNK, InputError, is_gzip, log_files, open_log, rotated_copies
from logdoctor.sources.state import (
    HEAD_BYTES,
    MAX_FINGERPRINTS,
    FileState,
    State,
    StateError,
    head_hash,
    save_state,
)

PENDING_TICK_SECONDS = 0.1
POLL_SECONDS = 1.0
STATE_SAVE_SECONDS = 1.0
# A file is read as scan reads it (the same buffers, so the sieve does the same work) and fed to the
# pipeline in pieces cut at a line's end, so that a stop is never further away than one piece. The slowest
# shape the core knows (a crash loop whose every line is read) takes up to about 0.3 s for 64 KiB on a shared
# two-core machine; a quiet log well under a millisecond, and pieces cost the sieve nothing measurable.
READ_CHUNK = CHUNK
PIECE_BYTES = 64 << 10
# How long one file is read in one step of the loop; between steps the loop ticks, saves the state,
# serves the other files and looks for new ones. A file further behind is read on in the next step at once.
STEP_SECONDS = 0.25
# At a stop with every file read to its end: how long the lines written in the last moments may be read.
LAST_READ_SECONDS = 0.25
# A restart reads the launch in progress again from its start, unless that is further back than this;
# then it reads from the last point where nothing was pending (see Tail.checkpoint).
REREAD_LIMIT = 256 << 20
# /var/log/pods/<namespace>_<pod>_<uid>/<container>/<n>.log: the kubelet's node log layout.
_POD_LOG = re.compile(r"/pods/(?P<namespace>[^_/]+)_(?P<pod>[^/]+)_(?P<uid>[0-9a-f-]{8,})/(?P<container>[^/]+)/[^/]+$")

Feed = Callable[[bytes], None]  # a followed file's bytes, in order, to its channel of the pipeline
ChannelFactory = Callable[[str, int], Channel]  # (source, lines already read) -> its channel


class Interrupted(Exception):
    """The watcher is stopping while a rotated copy is being read (the state from before it stands)."""


@dataclass
class Budget:
    """How long a file may be read in one step, and the stop flag, looked at between pieces."""

    deadline: float | None = None  # None: no limit
    stop: threading.Event | None = None

    def stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def more(self) -> bool:
        return not self.stopping() and (self.deadline is None or time.monotonic() < self.deadline)


def _piece_end(data: bytes, pos: int) -> int:
    """Where the piece of data that starts at `pos` ends: after the last line that ends within PIECE_BYTES,
    after the one line that is longer, or at the end of the data (an unfinished line)."""
    end = pos + PIECE_BYTES
    if end >= len(data):
        return len(data)
    cut = data.rfind(b"\n", pos, end) + 1
    if cut > pos:
        return cut
    return data.find(b"\n", end) + 1 or len(data)


def kubernetes_labels(path: str) -> dict[str, str]:
    match = _POD_LOG.search(path)
    return {k: match[k] for k in ("namespace", "pod", "container")} if match else {}


def fingerprint(finding: Finding) -> str:
    """The same failure, however often its lines are read again after a restart."""
    first = finding.error.message.splitlines()[0] if finding.error.message else ""
    key = f"{finding.source}\0{finding.rule}\0{finding.lines[0]}\0{first}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24]


@dataclass
class Identity:
    device: int
    inode: int
    head: str

    def same_file(self, saved: FileState) -> bool:
        if (self.device, self.inode) != (saved.device, saved.inode):
            return False
        return not saved.head or not self.head or saved.head == self.head


@dataclass(frozen=True)
class _Point:
    """A place to read from again: a file, an offset in it at a line's start, the lines of the path
    before it, and how many bytes the tail had fed when it got there (the distance to read again)."""

    identity: Identity
    offset: int
    lines: int
    fed: int


def read_head(path: Path) -> str:
    """Hash of a file's first bytes (decompressed for gzip), "" when it is shorter than that."""
    try:
        with open_log(path) as handle:
            data = handle.read(HEAD_BYTES)
    except (OSError, EOFError, InputError):
        return ""
    return head_hash(data) if len(data) >= HEAD_BYTES else ""


class Tail:
    def __init__(
        self,
        path: Path,
        saved: FileState | None,
        warn: Callable[[str], None],
        channel: ChannelFactory,
        doctor: Doctor,
    ) -> None:
        self.path = path
        self.name = str(path)
        self.channel = channel(self.name, saved.lines if saved else 0)
        self.doctor = doctor
        self.saved = saved  # where a previous run stopped; used once, when the file is first opened
        self.handle: BinaryIO | None = None
        self.identity: Identity | None = None
        self.offset = 0
        self.committed: FileState | None = saved
        self.bytes_read = 0
        self.rotated = False  # since the last commit: save the state at once
        self.interrupted = False  # stopped inside a rotated copy: nothing of this tail may be committed
        self.warn = warn
        # Read from the open file and not fed yet (a catch-up cut short by its budget): self.offset counts
        # the bytes fed, the descriptor's position is past them.
        self._buffer = b""
        self._at = 0
        # Where a restart is to read from (checkpoint): the start of the launch in progress, and the last
        # point where nothing was pending. A previous run's point is where this one started: the start of
        # its launch 1 in the Doctor's count.
        self._fed = 0  # bytes fed, from every file this tail read
        # Where the line being fed began (file, offset), when a piece ended inside it; None at a line's end.
        self._line_at: tuple[Identity, int] | None = None
        self._launch_line = 1 if saved else 0  # the first line of the launch whose start is _launch
        self._launch = (
            _Point(Identity(saved.device, saved.inode, saved.head), saved.offset, saved.lines, 0) if saved else None
        )
        self._safe: _Point | None = None
        self._lines_read_before = saved.read_lines if saved else 0  # by the previous runs

    @property
    def framer(self) -> Framer:
        return self.channel.framer

    # --- reading -------------------------------------------------------------------------------

    def poll(self, feed: Feed, budget: Budget) -> bool:
        """Read what is new while the budget lasts; True once the file is read to its end, False when the
        budget ran out first (the next poll reads on)."""
        if self.handle is None:
            status = _stat(self.path)
            if status is None:
                return True
            self._open(status, feed, budget)
            if self.handle is None:  # it could not be opened (said once): try again next poll
                return True
        elif self._rewritten():
            self._start_over(feed, budget)  # before reading on from the old offset into the new file's middle
        if not self._drain(feed, budget):
            return False  # the path is looked at once what the open file holds is read
        # Look at the path only after reading: a size taken before the read could be older than what
        # the read found, and look like a truncation.
        status = _stat(self.path)
        if status is None:
            self._close()  # renamed away or deleted: finished above; wait for the next file
            return True
        assert self.identity is not None
        if (status.st_dev, status.st_ino) != (self.identity.device, self.identity.inode):
            self._close()  # rotated by rename, or deleted and re-created
            self._open(status, feed, budget)
            self.rotated = True
            return self._drain(feed, budget)
        if status.st_size < self.offset:
            self._start_over(feed, budget)
            self.rotated = True
            return self._drain(feed, budget)
        return True

    def _open(self, status: os.stat_result, feed: Feed, budget: Budget) -> None:
        try:
            self.handle = open(self.path, "rb")  # noqa: SIM115 - kept open across polls on purpose
        except OSError as exc:
            self.warn(f"{self.path}: cannot open ({exc.strerror or exc}); will try again")
            self.handle = None
            return
        # Who we opened, from the descriptor itself: the path may have been replaced since it was stat'ed.
        opened = os.fstat(self.handle.fileno())
        self.identity = Identity(opened.st_dev, opened.st_ino, _fd_head(self.handle))
        self.offset = 0
        self._buffer, self._at = b"", 0
        saved, self.saved = self.saved, None
        if saved is not None:
            self._resume(saved, opened, feed, budget)

    def _resume(self, saved: FileState, opened: os.stat_result, feed: Feed, budget: Budget) -> None:
        """Continue where a previous run stopped, reading first what it missed while down."""
        assert self.handle is not None and self.identity is not None
        if self.identity.same_file(saved) and opened.st_size >= saved.offset:
            self.offset = saved.offset
            self.handle.seek(saved.offset)
            return
        same_inode = (self.identity.device, self.identity.inode) == (saved.device, saved.inode)
        original = None if same_inode else self._find_sibling_inode(saved)
        if original is not None and (not saved.head or read_head(original) == saved.head):
            self._read_from(original, saved.offset, feed, budget)  # rotated by rename while we were down
            return
        # Truncated (copytruncate) while we were down: the rest of what we had been reading is in its
        # copy; what the writer wrote after the truncation is in the original file (or its successor).
        copy = self._find_sibling(saved.head, saved.offset)
        if copy is not None:
            self._read_from(copy, saved.offset, feed, budget)
        elif saved.offset:
            self.warn(
                f"{self.path}: the file read before the restart is gone; lines after byte {saved.offset} of "
                "it could not be read"
            )
        if original is not None:
            self._read_from(original, 0, feed, budget)

    def _find_sibling_inode(self, saved: FileState) -> Path | None:
        for candidate in rotated_copies(self.path):
            status = _stat(candidate)
            if status is not None and (status.st_dev, status.st_ino) == (saved.device, saved.inode):
                return candidate
        return None

    def _drain(self, feed: Feed, budget: Budget) -> bool:
        """Feed the open file from where it was fed to its end, a piece at a time while the budget lasts:
        True once the end is reached, False when the budget ran out first."""
        if self.handle is None:
            return True
        while True:
            if budget.stopping():
                return False
            if self._at >= len(self._buffer):
                try:
                    data = self.handle.read(READ_CHUNK)
                except OSError as exc:
                    self.warn(f"{self.path}: read failed ({exc.strerror or exc}); will try again")
                    return True
                if not data:
                    break
                self.bytes_read += len(data)
                self._buffer, self._at = data, 0
                self.channel.expect(len(data))
            end = _piece_end(self._buffer, self._at)
            piece = self._buffer[self._at : end]
            self._at = end
            assert self.identity is not None
            self._feed_piece(feed, piece, self.identity, self.offset)
            self.offset += len(piece)
            if not budget.more():  # after a piece, not before: every step reads on, however slow the machine
                return False
        self._buffer, self._at = b"", 0
        if self.identity is not None and not self.identity.head:
            self.identity.head = _fd_head(self.handle)
        return True

    def _start_over(self, feed: Feed, budget: Budget) -> None:
        """Truncated in place (copytruncate): finish what was being read from the copy (what was read and
        not fed yet is in it too), then read the file again from its start."""
        self._read_copy(feed, budget)
        self.offset = 0
        self._buffer, self._at = b"", 0
        assert self.identity is not None and self.handle is not None
        # A new identity, not this one with its head cleared: the points taken so far are in the old content.
        self.identity = Identity(self.identity.device, self.identity.inode, "")
        self.handle.seek(0)

    def _rewritten(self) -> bool:
        """Truncated and written past the old end between two polls: the size alone cannot tell, the
        first bytes can (they are the new file's)."""
        if self.identity is None or not self.identity.head or self.handle is None:
            return False
        head = _fd_head(self.handle)
        return bool(head) and head != self.identity.head

    def _read_copy(self, feed: Feed, budget: Budget) -> None:
        assert self.identity is not None
        copy = self._find_sibling(self.identity.head, self.offset)
        if copy is None:
            self.warn(
                f"{self.path}: truncated in place (copytruncate) and no rotated copy was found; lines written "
                "just before the truncation may be missing"
            )
            return
        self._read_from(copy, self.offset, feed, budget)

    def _find_sibling(self, head: str, offset: int) -> Path | None:
        """The rotated copy of the file we were reading: same first bytes, at least as long."""
        if not head:
            return None
        for candidate in rotated_copies(self.path):
            if read_head(candidate) == head and _content_size(candidate) >= offset:
                return candidate
        return None

    def _read_from(self, path: Path, offset: int, feed: Feed, budget: Budget) -> None:
        """A rotated copy from `offset` to its end, in one go (it is rare: the lines written just before a
        rotation, or while logdoctor was down). A stop interrupts it between pieces (Interrupted); the
        state then keeps the point from before the copy, which a restart finds the copy from again."""
        try:
            with open_log(path) as handle:
                opened = os.fstat(handle.fileno())  # a gzip copy is known by its own inode, its head decompressed
                origin = Identity(opened.st_dev, opened.st_ino, read_head(path))
                handle.seek(offset)
                while data := handle.read(READ_CHUNK):
                    self.bytes_read += len(data)
                    self.channel.expect(len(data))
                    pos = 0
                    while pos < len(data):
                        if budget.stopping():
                            self.interrupted = True
                            raise Interrupted
                        end = _piece_end(data, pos)
                        self._feed_piece(feed, data[pos:end], origin, offset)
                        offset += end - pos
                        pos = end
        except (OSError, EOFError, InputError) as exc:
            self.warn(f"{path}: reading the rotated copy failed ({exc})")

    def _close(self) -> None:
        if self.handle is not None:
            self.handle.close()
        self.handle = None

    # --- state -----------------------------------------------------------------------------------

    def _feed_piece(self, feed: Feed, piece: bytes, origin: Identity, offset: int) -> None:
        """Feed a piece read at `offset` of the file `origin`, and note the points it passed: where a
        launch began in it, and its end when nothing is pending there."""
        lines_before, line_at = self.framer.lines_seen, self._line_at or (origin, offset)
        feed(piece)
        self._fed += len(piece)
        end = offset + len(piece)
        last_newline = piece.rfind(b"\n")
        if last_newline == len(piece) - 1:
            self._line_at = None
        elif last_newline >= 0:
            self._line_at = (origin, offset + last_newline + 1)
        else:
            self._line_at = line_at
        first = self.doctor.launches.launch_of(self.name, sys.maxsize).first_line
        if first > self._launch_line:
            self._launch_line = first
            self._launch = self._line_start(first, piece, origin, offset, lines_before, line_at)
        if not self.framer.partial and not self.doctor.pending_in(self.name):
            self._safe = _Point(origin, end, self.framer.lines_seen, self._fed)

    def _line_start(
        self, number: int, piece: bytes, origin: Identity, offset: int, lines_before: int, line_at: tuple[Identity, int]
    ) -> _Point | None:
        """Where the line `number`, fed in this piece, began (`line_at`: where its first line did); None
        when the framer held it from an earlier piece (container pieces, a wrapped line's first part):
        where it began is not known here."""
        newlines = number - 1 - lines_before  # of the piece, before the line
        if newlines < 0:
            return None
        if newlines == 0:  # the piece's first line, begun in it or in the piece before
            at_file, at = line_at
        else:
            at_file, found = origin, -1
            for _ in range(newlines):
                found = piece.find(b"\n", found + 1)
                if found < 0:
                    return None
            at = offset + found + 1
        ahead = offset + len(piece) - at if at_file is origin else 0  # bytes of this piece after it
        return _Point(at_file, at, number - 1, self._fed - ahead)

    def checkpoint(self) -> FileState | None:
        """Where a restart is to read from, and how many lines have been read.

        The start of the launch in progress: its header is read again, so its later errors are
        diagnosed with its version and configuration, as a scan of the whole file does, and so are the
        events pending now, read whole. What was reported from those lines is not reported again (the
        fingerprints in the state), and their lines are not counted again (read_lines). The last point
        where nothing was pending would lose all of that (an error seen again in the same launch would
        even be reported as new). Only when the launch began further back than REREAD_LIMIT, or where
        this tail cannot tell (a line held across pieces), is the later of the two points used."""
        point = self._launch
        if point is None or self._fed - point.fed > REREAD_LIMIT:
            candidates = [p for p in (self._launch, self._safe) if p is not None]
            point = max(candidates, key=lambda p: p.fed) if candidates else None
        if point is None:
            return None
        ident = point.identity
        return FileState(ident.device, ident.inode, ident.head, point.offset, point.lines, self.lines_read)

    @property
    def lines_read(self) -> int:
        """Lines of this path read, by this run and the ones before, each counted once."""
        return max(self.framer.lines_seen, self._lines_read_before)


def _feed_now(channel: Channel, data: bytes) -> None:
    """Feed a piece at the time it is fed (a catch-up's pieces span many seconds)."""
    channel.feed(data, time.monotonic())


def _fd_head(handle: BinaryIO) -> str:
    """read_head for an open file, without moving its position."""
    try:
        data = os.pread(handle.fileno(), HEAD_BYTES, 0)
    except OSError:
        return ""
    return head_hash(data) if len(data) >= HEAD_BYTES else ""


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _content_size(path: Path) -> int:
    if not is_gzip(path):
        return path.stat().st_size
    size = 0
    with open_log(path) as handle:
        while chunk := handle.read(READ_CHUNK):
            size += len(chunk)
    return size


def expand(targets: list[str]) -> list[Path]:
    """Files to follow now: named files (even not there yet), `*.log` under folders, glob matches."""
    found: dict[str, Path] = {}
    for target in targets:
        if any(ch in target for ch in "*?["):
            for match in sorted(glob.glob(target, recursive=True)):
                if os.path.isfile(match):
                    found.setdefault(match, Path(match))
        elif os.path.isdir(target):
            for log in log_files(Path(target), rotated=False):
                found.setdefault(str(log), log)
        else:
            found.setdefault(target, Path(target))
    return list(found.values())


class Watcher:
    def __init__(
        self,
        targets: list[str],
        doctor: Doctor,
        emit: Emit,
        state: State,
        state_path: Path | None = None,
        poll_seconds: float = POLL_SECONDS,
        on_poll: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.targets = targets
        self.doctor = doctor
        self.emit = emit
        self.state = state
        self.state_path = state_path
        self.poll_seconds = poll_seconds
        self.on_poll = on_poll  # (lines read, bytes read, files open) after each poll, for metrics
        self.tails: dict[str, Tail] = {}
        self.wake = threading.Event()
        self._warned: set[str] = set()
        self._state_dirty = False
        self._reported_since_save = False  # a reported finding is saved at once: a restart must know it
        # The core's id of each finding -> the id it was printed with (by this run, or, for a finding read
        # again after a restart, by the run before): its updates and withdrawal go out under that id. The
        # latest MAX_FINGERPRINTS, like the state's fingerprints: an amendment to an older one is dropped.
        self._printed: dict[str, str] = {}
        # What this step is to print, by printed id, in the order first reported. A step's output goes out
        # at its end (before the state that records it is saved), each finding as it stands then: one
        # amended in the same step is printed once, amended; one withdrawn in it is not printed. A
        # catch-up so prints about what a scan does, not every finding and then every amendment to it.
        self._out: dict[str, Finding] = {}
        self._last_save = 0.0
        self.pipeline = Pipeline(doctor, self._report_one)

    def warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            print(f"logdoctor watch: {message}", file=sys.stderr, flush=True)

    def _report_one(self, finding: Finding) -> None:
        self._report([finding])

    def _report(self, findings: list[Finding]) -> None:
        for finding in findings:
            labels = kubernetes_labels(finding.source)
            if labels:
                finding.namespace, finding.pod, finding.container = (
                    labels["namespace"],
                    labels["pod"],
                    labels["container"],
                )
            if finding.kind != "finding":  # an update or a withdrawal: of a finding printed, now or before
                printed = self._printed.get(finding.id)
                if printed:
                    self._queue(printed, finding)
                continue
            mark = fingerprint(finding)
            earlier = self.state.reported_as(mark)
            if earlier is not None:
                self._note_printed(finding.id, earlier)
                continue  # reported before a restart: the lines were read again from the start of its launch
            printed = self.state.issue()
            self.state.remember(mark, printed)
            self._state_dirty = True
            self._reported_since_save = True
            self._note_printed(finding.id, printed)
            self._queue(printed, finding)

    def _queue(self, printed: str, finding: Finding) -> None:
        if finding.id != printed:
            finding = finding.model_copy(update={"id": printed})
        held = self._out.get(printed)
        if held is not None and held.kind == "finding":  # not printed yet: it goes out as it stands now
            if finding.kind == "withdrawn":
                del self._out[printed]
                return
            if finding.kind != "finding":
                finding = finding.model_copy(update={"kind": "finding"})
        self._out[printed] = finding

    def _print(self) -> None:
        out, self._out = self._out, {}
        for finding in out.values():
            self.emit(finding)

    def _note_printed(self, core_id: str, printed: str) -> None:
        self._printed[core_id] = printed
        if len(self._printed) > MAX_FINGERPRINTS:
            del self._printed[next(iter(self._printed))]

    def poll_once(self, seconds: float | None = STEP_SECONDS, stop: threading.Event | None = None) -> bool:
        """One step: each file is read for up to `seconds` (None: to its end), or until `stop` is set;
        True when every file was read to its end."""
        lines = 0
        data = 0
        behind: set[str] = set()
        for path in expand(self.targets):
            name = str(path)
            tail = self.tails.get(name)
            if tail is None:
                saved = self.state.files.get(name)
                tail = self.tails[name] = Tail(path, saved, self.warn, self.pipeline.channel, self.doctor)
            before, lines_before = tail.bytes_read, tail.lines_read
            budget = Budget(None if seconds is None else time.monotonic() + seconds, stop)
            if budget.stopping() or not tail.poll(partial(_feed_now, tail.channel), budget):
                behind.add(name)  # stopping: the files not read yet are left as they are
            data += tail.bytes_read - before
            lines += tail.lines_read - lines_before
        # A file being caught up is not quiet, however long its catch-up takes: its events wait for
        # their next lines (as in a scan), not for the clock.
        hold = frozenset(name for name, tail in self.tails.items() if tail.framer.partial or name in behind)
        self.pipeline.tick(time.monotonic(), hold)
        self._commit()
        if self.on_poll is not None:
            self.on_poll(lines, data, sum(1 for t in self.tails.values() if t.handle is not None))
        return not behind

    def _commit(self, force: bool = False) -> None:
        self._print()  # before the state that says they were reported
        for name, tail in self.tails.items():
            point = None if tail.interrupted else tail.checkpoint()
            if point is not None and point != tail.committed:
                tail.committed = self.state.files[name] = point
                self._state_dirty = True
                force = force or tail.rotated
                tail.rotated = False
        now = time.monotonic()
        force = force or self._reported_since_save
        if self._state_dirty and (force or now - self._last_save >= STATE_SAVE_SECONDS):
            try:
                save_state(self.state_path, self.state)
            except StateError as exc:  # a full disk must not stop the diagnosis: say so, retry later
                self.warn(str(exc))
                return
            self._state_dirty = False
            self._reported_since_save = False
            self._last_save = now

    def run(self, stop: threading.Event) -> None:
        observer = self._start_observer()
        try:
            caught_up = True
            while not stop.is_set():
                try:
                    caught_up = self.poll_once(STEP_SECONDS, stop)
                except Interrupted:
                    caught_up = False
                    break
                if not caught_up:
                    continue  # catching up: read on at once (the stop flag is looked at between pieces)
                # An event waiting for its stream to fall quiet is due within the quiet period: look
                # again soon, not at the next poll, or its finding would come up to a poll late.
                self.wake.wait(PENDING_TICK_SECONDS if self.doctor.pending else self.poll_seconds)
                self.wake.clear()
            # Stopping (SIGTERM, SIGINT), within a piece of input.
            # Every file read to its end: read what the last moments added, diagnose what is pending (it is
            # as complete as the file), save the state. An unfinished last line is left for the next run:
            # the writer may still complete it.
            # Stopped in the middle of a catch-up: nothing is flushed. What is pending was cut by where the
            # reading stopped, not by the writer: reported now it would be a diagnosis a scan does not make
            # (a traceback without its exception line), and the next run would report the complete one
            # too. The point saved, the start of the launch in progress (Tail.checkpoint), is before every
            # pending event, so the next run reads each of them whole, with its launch's header.
            if caught_up:
                caught_up = self.poll_once(LAST_READ_SECONDS)
            if caught_up:
                self.pipeline.flush()
            self._commit(force=True)
        finally:
            if observer is not None:
                # Not joined: its threads are daemons, and joining waits up to its one-second timeout,
                # which would make a stop on SIGTERM that late.
                observer.stop()

    def _start_observer(self) -> Any:
        """watchdog wakes the loop on any change under the watched folders (best effort)."""
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            return None
        # watchdog logs a harmless race at shutdown ("queue_events() called when the thread is
        # inactive") at ERROR; the timer poll covers anything its events miss, so keep it quiet.
        logging.getLogger("watchdog").setLevel(logging.CRITICAL)
        wake = self.wake

        class Wake(FileSystemEventHandler):
            def on_any_event(self, event):  # type: ignore[no-untyped-def]
                wake.set()

        # A folder or a glob is watched with its subfolders (files appear below it); a named file only in
        # its own folder: a log in /tmp or /var/log must not put an inotify watch on every folder below.
        folders: dict[str, bool] = {}  # folder -> recursive
        for target in self.targets:
            base = target.split("*")[0].split("?")[0].split("[")[0]
            named_file = base == target and not os.path.isdir(target)
            folder = base if os.path.isdir(base) else os.path.dirname(base) or "."
            if os.path.isdir(folder):
                folders[folder] = folders.get(folder, False) or not named_file
        observer = Observer()
        try:
            for folder, recursive in sorted(folders.items()):
                observer.schedule(Wake(), folder, recursive=recursive)
            observer.start()
        except OSError as exc:  # inotify watch table full and the like: the timer poll carries on
            self.warn(f"file events unavailable ({exc}); polling every {self.poll_seconds:g}s")
            return None
        return observer
