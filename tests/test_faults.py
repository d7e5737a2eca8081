"""Faults injected where logdoctor sits in a server's path: the copy goes on, the fault is said once.

Pipe mode runs in-process (pump on real pipes) so a fault can be planted inside the core: a pattern that
raises, a header parser that raises, a reporter that raises. Closed stdout and stderr are real processes.
`run` has its own such tests in test_run.py. `watch` is driven in-process (tests/test_follow.py's
Harness): a file that cannot be read, a folder that is deleted, a state file that cannot be written, a log
truncated in the middle of a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from logdoctor.doctor import Doctor
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.report import print_notice
from logdoctor.sources import state as state_module
from logdoctor.sources.passthrough import pump
from tests.conftest import FIXTURES
from tests.test_e2e import logdoctor_exe
from tests.test_follow import STATS, Harness, crash, expected

LOG = (FIXTURES / "engine-core-kv-cache-too-small-0.33.log").read_bytes()
ROOT_CAUSE = "memory.kv-cache-too-small"


def _pipe(library: Library, data: bytes, emit: object = None) -> tuple[bytes, list[Finding], int]:
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    copied: list[bytes] = []
    writer = threading.Thread(target=lambda: (os.write(stdin_w, data), os.close(stdin_w)))
    reader = threading.Thread(target=lambda: copied.append(os.fdopen(stdout_r, "rb").read()))
    writer.start()
    reader.start()
    found: list[Finding] = []
    doctor = Doctor(library, on_internal_error=print_notice)  # wired as the CLI wires it
    guard = pump(doctor, emit or found.append, stdin_r, stdout_w)  # type: ignore[arg-type]
    os.close(stdout_w)
    os.close(stdin_r)
    writer.join()
    reader.join()
    return copied[0], found, guard.failures


def _raise(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("injected fault")


@pytest.mark.parametrize(
    "target",
    [
        "logdoctor.library.matcher.Library.match_line",  # a pattern that raises
        "logdoctor.launch.tracker.parse_header_line",  # a header parser that raises
        "logdoctor.assemble.Assembler.feed",  # the traceback assembly
    ],
)
def test_a_fault_in_the_core_never_stops_the_pipe(
    library: Library, target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(target, _raise)
    data = LOG * 20
    copy, _, _ = _pipe(library, data)
    assert copy == data
    err = capsys.readouterr().err
    # Said once (by the Doctor, which skips the event, or by the pipe's guard), not once a line.
    assert err.count("logdoctor: internal error") == 1 and "injected fault" in err, err


def test_a_reporter_that_raises_never_stops_the_pipe(library: Library, capsys: pytest.CaptureFixture[str]) -> None:
    def emit(finding: Finding) -> None:
        raise OSError("the terminal is gone")

    data = LOG * 3
    copy, _, failures = _pipe(library, data, emit)
    assert copy == data and failures >= 1
    assert capsys.readouterr().err.count("logdoctor: internal error") == 1


def _closed(fd: int) -> None:
    os.close(fd)


def test_the_pipe_with_stderr_closed_still_copies_everything() -> None:
    proc = subprocess.run(
        [logdoctor_exe()], input=LOG * 50, stdout=subprocess.PIPE, preexec_fn=lambda: _closed(2), check=False
    )
    assert proc.stdout == LOG * 50 and proc.returncode in (0, 1)


def test_the_pipe_with_stdout_closed_drains_and_still_diagnoses() -> None:
    proc = subprocess.run(
        [logdoctor_exe(), "--format", "json"],
        input=LOG * 50,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: _closed(1),
        check=False,
    )
    assert proc.returncode == 1 and ROOT_CAUSE.encode() in proc.stderr
    *lines, last = proc.stderr.splitlines()
    assert all(line.startswith((b'{"kind":"finding"', b'{"kind":"update"')) for line in lines)  # nothing else
    assert last.startswith(b'{"kind":"summary"')  # and the input's summary, last


def test_watch_a_file_that_cannot_be_read_is_said_and_retried(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import builtins

    from logdoctor.sources import follow

    log = tmp_path / "vllm.log"
    log.write_bytes(crash(0))

    def denied(path: object, *args: object, **kwargs: object) -> object:
        if Path(str(path)) == log:
            raise PermissionError(13, "Permission denied")
        return builtins.open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(follow, "open", denied, raising=False)  # (as root, chmod 000 would not stop a read)
    h = Harness(library, [str(log)])
    h.poll()
    h.poll()
    monkeypatch.undo()  # readable again
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(1))
    err = capsys.readouterr().err
    assert err.count("cannot open (Permission denied)") == 1, err  # said once, not every poll


def test_watch_a_deleted_folder_then_recreated(tmp_path: Path, library: Library) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.log").write_bytes(crash(0))
    h = Harness(library, [str(folder)])
    h.poll()
    shutil.rmtree(folder)
    h.poll()
    folder.mkdir()
    (folder / "b.log").write_bytes(crash(1))
    h.poll()
    h.stop()
    assert h.crashes() == expected(range(2))


def test_watch_a_full_disk_for_the_state_file_is_said_and_diagnosis_goes_on(
    tmp_path: Path, library: Library, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log, state = tmp_path / "vllm.log", tmp_path / "state.json"
    log.write_bytes(crash(0))
    real_save = state_module.save_state

    def full_disk(path: Path | None, st: object) -> None:
        raise state_module.StateError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr("logdoctor.sources.follow.save_state", full_disk)
    h = Harness(library, [str(log)], state)
    h.poll()
    with log.open("ab") as f:
        f.write(crash(1))
    h.poll()
    assert h.crashes() == expected(range(2))  # diagnosed all the same
    assert capsys.readouterr().err.count("No space left on device") == 1
    monkeypatch.setattr("logdoctor.sources.follow.save_state", real_save)
    h.stop()  # space again: the state is written
    assert state.exists()


def test_watch_a_log_truncated_in_the_middle_of_a_traceback(
    tmp_path: Path, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "vllm.log"
    whole = STATS * 20 + crash(0)
    log.write_bytes(whole[: whole.index(b"RuntimeError")])  # the traceback without its exception line
    h = Harness(library, [str(log)])
    h.poll()
    with log.open("r+b") as f:
        f.truncate(0)  # copytruncate with no copy to be found...
    log.write_bytes(crash(1) + STATS * 40)  # ... and written past the old end before the next poll
    h.poll()
    h.stop()
    assert "crash number 1" in h.crashes()  # what came after is read
    assert "truncated in place" in capsys.readouterr().err  # and what happened is said
