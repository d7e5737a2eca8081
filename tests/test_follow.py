"""Following files through rotation and restarts, driven in-process with a manual poll."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.scan import diagnose_file
from logdoctor.sources import follow
from logdoctor.sources.follow import Watcher, expand, kubernetes_labels
from logdoctor.sources.state import load_state
from tests.conftest import FIXTURES


def crash(n: int) -> bytes:
    """A launch that dies: its own header, then an uncaught traceback (one finding per launch)."""
    return (
        f"INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version 0.11.{n}\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/vllm", line 10, in <module>\n'
        "    sys.exit(main())\n"
        f"RuntimeError: crash number {n}\n"
    ).encode()


LINES_PER_CRASH = 5
# A steady-state line: it makes a file longer than the bytes hashed to recognise it.
STATS = (
    b"INFO 11-30 10:00:01 [loggers.py:335] Engine 000: Avg prompt throughput: 512.3 tokens/s, Avg generation "
    b"throughput: 88.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.9%\n"
)


class Harness:
    def __init__(self, library: Library, targets: list[str], state: Path | None = None) -> None:
        self.findings: list[Finding] = []
        self.emitted: list[Finding] = []
        self.lines = 0
        self.state_path = state
        self.watcher = Watcher(
            targets,
            Doctor(library, quiet=0.0),
            self._emit,
            load_state(state),
            state,
            poll_seconds=0,
            on_poll=self._count,
        )

    def _emit(self, finding: Finding) -> None:
        """As a consumer of the stream does: an update replaces the finding of its id, a withdrawal drops it."""
        self.emitted.append(finding)
        if finding.kind == "update":
            self.findings = [finding if f.id == finding.id else f for f in self.findings]
        elif finding.kind == "withdrawn":
            self.findings = [f for f in self.findings if f.id != finding.id]
        else:
            self.findings.append(finding)

    def _count(self, lines: int, data: int, files: int) -> None:
        self.lines += lines

    def poll(self) -> None:
        self.watcher.poll_once()

    def stop(self) -> None:
        self.watcher._report(self.watcher.doctor.flush())
        self.watcher._commit(force=True)

    def crashes(self) -> list[str]:
        return sorted(f.error.message for f in self.findings)


def expected(numbers: range) -> list[str]:
    return sorted(f"crash number {n}" for n in numbers)


def test_rename_rotation_finishes_the_old_file_then_reads_the_new(tmp_path: Path, library: Library) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(crash(0))
    h = Harness(library, [str(log)])
    h.poll()
    with log.open("ab") as f:
        f.write(crash(1))  # written after the last read, before the rename
    log.rename(tmp_path / "vllm.log.1")
    log.write_bytes(crash(2))
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(3)) and h.lines == 3 * LINES_PER_CRASH


def test_copytruncate_reads_the_tail_from_the_copy(tmp_path: Path, library: Library) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(crash(0) + STATS)
    h = Harness(library, [str(log)])
    h.poll()
    with log.open("ab") as f:
        f.write(crash(1))
    shutil.copy(log, tmp_path / "vllm.log.1")
    with log.open("r+b") as f:
        f.truncate(0)
    with log.open("ab") as f:
        f.write(crash(2))
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(3)) and h.lines == 3 * LINES_PER_CRASH + 1


def test_delete_and_recreate_and_a_file_that_appears_later(tmp_path: Path, library: Library) -> None:
    log = tmp_path / "later.log"
    h = Harness(library, [str(log)])
    h.poll()  # not there yet
    log.write_bytes(crash(0))
    h.poll()
    log.unlink()
    h.poll()
    log.write_bytes(crash(1))
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(2))


def test_restart_with_state_resumes_and_reports_nothing_twice(tmp_path: Path, library: Library) -> None:
    log, state = tmp_path / "vllm.log", tmp_path / "state.json"
    log.write_bytes(crash(0) + crash(1))
    first = Harness(library, [str(log)], state)
    first.poll()
    first.stop()
    with log.open("ab") as f:
        f.write(crash(2))  # written while logdoctor was down
    second = Harness(library, [str(log)], state)
    second.poll()
    second.stop()
    assert first.crashes() == expected(range(2)) and second.crashes() == expected(range(2, 3))
    assert first.lines + second.lines == 3 * LINES_PER_CRASH


def test_a_file_rotated_and_gzipped_while_down_is_finished_first(tmp_path: Path, library: Library) -> None:
    log, state = tmp_path / "0.log", tmp_path / "state.json"
    log.write_bytes(crash(0) + STATS)
    first = Harness(library, [str(log)], state)
    first.poll()
    first.stop()
    with log.open("ab") as f:
        f.write(crash(1))
    with gzip.open(tmp_path / "0.log.20261130-101010.gz", "wb") as gz:
        gz.write(log.read_bytes())
    log.unlink()
    log.write_bytes(crash(2))
    second = Harness(library, [str(log)], state)
    second.poll()
    second.stop()
    assert first.crashes() + second.crashes() == expected(range(1)) + expected(range(1, 3))


def test_cri_partial_lines_across_polls(tmp_path: Path, library: Library) -> None:
    log = tmp_path / "0.log"
    text = crash(7).decode().splitlines()
    cri = [f"2026-11-30T10:00:0{i}.000000000Z stderr F {line}" for i, line in enumerate(text)]
    long = cri.pop()  # the exception line arrives as two P/F pieces in two polls
    head, tail = long.split(" F ", 1)
    log.write_text("\n".join(cri) + "\n" + f"{head} P {tail[:10]}\n")
    h = Harness(library, [str(log)])
    h.poll()
    with log.open("a") as f:
        f.write(f"{head} F {tail[10:]}\n")
    h.poll()
    h.stop()
    assert h.crashes() == ["crash number 7"]


def test_folders_globs_and_kubernetes_labels(tmp_path: Path) -> None:
    pod = tmp_path / "pods" / "serving_vllm-0_0f1e2d3c-aaaa-bbbb-cccc-1234567890ab" / "vllm"
    pod.mkdir(parents=True)
    (pod / "0.log").write_text("x\n")
    (pod / "0.log.20261130-101010.gz").write_bytes(b"")
    assert expand([str(tmp_path / "pods")]) == [pod / "0.log"]
    assert expand([str(tmp_path / "pods" / "*" / "*" / "*.log")]) == [pod / "0.log"]
    labels = kubernetes_labels(str(pod / "0.log"))
    assert labels == {"namespace": "serving", "pod": "vllm-0", "container": "vllm"}
    assert os.path.basename(str(pod)) == "vllm"


def test_lines_appended_during_a_read_are_not_mistaken_for_a_truncation(tmp_path: Path, library: Library) -> None:
    # A writer that appends while logdoctor reads: a size looked up before the read is smaller than the
    # offset after it. That must not look like copytruncate (which would read the file again).
    log = tmp_path / "vllm.log"
    log.write_bytes(crash(0) + STATS)
    h = Harness(library, [str(log)])
    real_feed = h.watcher.doctor.feed
    appended = []

    def feed_and_append(line, now=0.0):  # type: ignore[no-untyped-def]
        if not appended:
            appended.append(True)
            with log.open("ab") as f:
                f.write(crash(1) + STATS)
        return real_feed(line, now)

    h.watcher.doctor.feed = feed_and_append  # type: ignore[method-assign]
    h.poll()
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(2)) and h.lines == 2 * (LINES_PER_CRASH + 1)


def raw_traceback(last: str) -> bytes:
    return f'Traceback (most recent call last):\n  File "/x/vllm/worker.py", line 3, in f\n    g()\n{last}\n'.encode()


def test_an_early_report_taken_back_is_withdrawn_under_its_printed_id(tmp_path: Path, library: Library) -> None:
    # The second traceback goes quiet before its exception line: it is reported as far as it goes; when the
    # line comes, it is the first error seen again, and the early report is taken back.
    log = tmp_path / "vllm.log"
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."
    log.write_bytes(raw_traceback(oom) + b"next\n" + raw_traceback(oom).rsplit(b"\n", 2)[0] + b"\n")
    h = Harness(library, [str(log)])
    h.poll()
    with log.open("ab") as f:
        f.write(oom.encode() + b"\n")
    h.poll()
    h.stop()
    withdrawn = [f.id for f in h.emitted if f.kind == "withdrawn"]
    assert withdrawn == ["f2"] and [f.id for f in h.emitted if f.kind == "finding"] == ["f1", "f2"]
    assert [(f.id, f.rule, f.occurrences) for f in h.findings] == [("f1", "memory.cuda-oom", 2)]


def test_after_a_restart_updates_keep_their_ids_and_new_findings_get_new_ones(tmp_path: Path, library: Library) -> None:
    log, state = tmp_path / "vllm.log", tmp_path / "state.json"
    log.write_bytes(crash(0) + crash(1))
    first = Harness(library, [str(log)], state)
    first.poll()
    first.stop()
    assert [(f.id, f.error.message) for f in first.findings] == [("f1", "crash number 0"), ("f2", "crash number 1")]
    with log.open("ab") as f:  # the launch of crash 1 goes on: the same error again, then another one
        f.write(raw_traceback("RuntimeError: crash number 1") + raw_traceback("ValueError: something else"))
    second = Harness(library, [str(log)], state)
    second.poll()
    second.stop()
    # Read again from the start of crash 1's launch: its finding is not printed again, but it is the one
    # the repeat amends, under the id it was printed with; the new error does not reuse an id.
    assert [(f.kind, f.id, f.error.message, f.occurrences) for f in second.emitted] == [
        ("update", "f2", "crash number 1", 2),
        ("finding", "f3", "something else", 1),
    ]


def test_a_catch_up_in_many_steps_and_pieces_reports_what_a_scan_does(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small buffers, pieces and steps, so a file of a few launches is read in hundreds of pieces over many
    # steps with a tick after each, by a Doctor for which any pause is long enough to report an event
    # early. A file being caught up is held: nothing is reported early, nothing amended back; what the
    # stream ends with is a scan's (tests/test_modes_agree.py compares a scan with streams of the core).
    monkeypatch.setattr(follow, "READ_CHUNK", 16 << 10)
    monkeypatch.setattr(follow, "PIECE_BYTES", 1 << 10)
    launches = [FIXTURES / "engine-core-kv-cache-too-small-0.33.log", FIXTURES / "replayssm-cache-mode-all-0.28.log"]
    log = tmp_path / "vllm.log"
    log.write_bytes(b"".join(p.read_bytes() + STATS * 50 for p in launches) * 3)
    h = Harness(library, [str(log)])
    steps = 1
    while not h.watcher.poll_once(0.0):  # one piece a step
        steps += 1
    h.stop()
    _, scanned = diagnose_file(log, library)

    def settled(findings: list[Finding]) -> list[tuple[object, ...]]:
        return sorted((f.rule, f.primary, f.lines, f.process, f.occurrences, f.launch) for f in findings)

    assert steps > 100 and settled(h.findings) == settled(scanned)
    assert [f for f in h.emitted if f.kind == "withdrawn"] == []
    assert len([f for f in h.emitted if f.kind == "finding"]) == len(scanned)


class StopAfter(threading.Event):
    """A stop flag that is set once it has been looked at `looks` times (between pieces, at each step)."""

    def __init__(self, looks: int) -> None:
        super().__init__()
        self.looks = looks

    def is_set(self) -> bool:
        self.looks -= 1
        return self.looks < 0


def test_a_stop_inside_a_rotated_copy_keeps_the_state_from_before_it(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "PIECE_BYTES", 256)
    log, state = tmp_path / "vllm.log", tmp_path / "state.json"
    log.write_bytes(crash(0) + STATS)
    first = Harness(library, [str(log)], state)
    first.poll()
    first.stop()
    with log.open("ab") as f:  # written while logdoctor is down, then rotated away
        f.write(b"".join(crash(n) + STATS * 5 for n in range(1, 6)))
    log.rename(tmp_path / "vllm.log.1")
    log.write_bytes(crash(6))
    before = json.loads(state.read_text())["files"]
    second = Harness(library, [str(log)], state)
    second.watcher.run(StopAfter(12))  # stopped while it reads the rest of vllm.log.1
    assert second.crashes() and second.crashes() != expected(range(1, 7))  # it was stopped part way
    assert json.loads(state.read_text())["files"] == before
    third = Harness(library, [str(log)], state)
    third.poll()
    third.stop()
    assert sorted(first.crashes() + second.crashes() + third.crashes()) == expected(range(7))


def test_a_launch_begun_further_back_than_the_reread_limit_resumes_where_nothing_was_pending(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "PIECE_BYTES", 512)
    monkeypatch.setattr(follow, "REREAD_LIMIT", 4096)
    log, state = tmp_path / "vllm.log", tmp_path / "state.json"
    # A server that logs errors as it serves: after each, its next line, there is nothing pending.
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    errors = [f"ERROR 11-30 10:00:02 [serving.py:12] Request failed: {word} went wrong\n".encode() for word in words]
    one_launch = crash(0).split(b"\n", 1)[0] + b"\n" + b"".join(STATS * 20 + error for error in errors) + STATS
    log.write_bytes(one_launch)
    first = Harness(library, [str(log)], state)
    first.watcher.run(StopAfter(40))
    saved = json.loads(state.read_text())["files"][str(log)]
    assert 4096 < saved["offset"] < len(one_launch)  # not the launch's start: more than the limit back
    assert one_launch[saved["offset"] - 1 : saved["offset"]] == b"\n"
    second = Harness(library, [str(log)], state)
    second.poll()
    second.stop()
    messages = sorted(f.error.message for f in first.findings + second.findings)
    assert messages == sorted(f"Request failed: {word} went wrong" for word in words)  # each once
