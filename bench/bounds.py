"""Peak memory and time of logdoctor on hostile inputs: the bounds SECURITY.md and the README state.

    python bench/bounds.py [--data DIR] [--bound-mib 100]

Each case is written to a file, then read by `logdoctor scan --format json` and by the pipe
(`logdoctor < FILE > /dev/null`), each in its own process; the table gives wall time, peak RSS and what the
findings say was truncated. /dev/zero never ends: it is read for a fixed time through the pipe and by
scan, then stopped, and only memory is judged. Exit status 1 if any peak RSS passes the bound.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from peak import PeakRss

LOGDOCTOR = str(Path(sys.executable).parent / "logdoctor")
MiB = 1 << 20
HEADER = "(APIServer pid=1) INFO 11-30 12:00:00 [utils.py:1] "
TAIL = (
    b"(EngineCore pid=2) ERROR 11-30 12:00:01 [core.py:1] EngineCore failed to start.\n"
    b"(EngineCore pid=2) ERROR 11-30 12:00:01 [core.py:1] Traceback (most recent call last):\n"
    b'(EngineCore pid=2) ERROR 11-30 12:00:01 [core.py:1]   File "/x/vllm/v1/engine/core.py", line 1, in run\n'
    b"(EngineCore pid=2) ERROR 11-30 12:00:01 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. "
    b"Tried to allocate 2.00 GiB.\n"
)


def write_chunks(path: Path, chunks: Callable[[], Iterable[bytes]]) -> Path:
    with path.open("wb") as out:
        for chunk in chunks():
            out.write(chunk)
    return path


def long_line(path: Path) -> Path:
    def chunks() -> Iterator[bytes]:
        yield HEADER.encode()
        for _ in range(100):
            yield b"x" * MiB
        yield b"\n" + TAIL

    return write_chunks(path, chunks)


def frames(thousands: int) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        def chunks() -> Iterator[bytes]:
            yield b"Traceback (most recent call last):\n"
            frame = b'  File "/x/vllm/model_executor/layer.py", line 12, in forward\n    return self.forward(x)\n'
            for _ in range(thousands):
                yield frame * 1000
            yield b"RecursionError: maximum recursion depth exceeded\n" + TAIL

        return write_chunks(path, chunks)

    return make


def huge_arguments(path: Path) -> Path:
    def chunks() -> Iterator[bytes]:
        yield (HEADER + "non-default args: {'model': '/models/x', ").encode()
        item = ", ".join(f"'extra_{i}': '{'v' * 90}'" for i in range(100)).encode()
        for n in range(10 * MiB // len(item)):
            yield item.replace(b"'extra_", b"'x%d_" % n) + b", "
        yield b"'tensor_parallel_size': 2}\n" + TAIL

    return write_chunks(path, chunks)


def deep_nesting(path: Path) -> Path:
    depth = 2_000_000
    line = (HEADER + "non-default args: {'model': '/models/x', 'a': " + "[" * depth + "]" * depth + "}\n").encode()
    return write_chunks(path, lambda: [line, TAIL])


def binary(path: Path) -> Path:
    rng = random.Random(0)
    return write_chunks(path, lambda: [rng.randbytes(MiB) for _ in range(50)] + [b"\n" + TAIL])


CASES: dict[str, Callable[[Path], Path]] = {
    "a 100 MB single line": long_line,
    "a traceback of 250 thousand frames": frames(250),  # (beside the next: time grows linearly)
    "a traceback of a million frames": frames(1000),
    "a 10 MB non-default args line": huge_arguments,
    "a repr nested 2 million deep": deep_nesting,
    "50 MB of random bytes": binary,
}


def run(argv: list[str], stdin_path: str | None = None, limit: float | None = None) -> tuple[float, float, bytes, bool]:
    """Seconds, peak RSS in MiB (from wait4), stdout, and whether it had to be stopped at `limit`."""
    stdin = open(stdin_path, "rb") if stdin_path else None  # noqa: SIM115 - closed below
    peak = PeakRss(argv)
    start = time.perf_counter()
    # The pipe's copy goes to /dev/null: read back through a pipe, it would time this script's reading.
    out = subprocess.DEVNULL if stdin_path else subprocess.PIPE
    proc = subprocess.Popen(peak.argv, stdin=stdin, stdout=out, stderr=subprocess.DEVNULL)
    stopped = False
    chunks: list[bytes] = []
    deadline = None if limit is None else start + limit
    if proc.stdout is not None:
        os.set_blocking(proc.stdout.fileno(), False)
    while True:
        try:
            data = proc.stdout.read() if proc.stdout is not None else None
        except BlockingIOError:
            data = None
        if data:
            chunks.append(data)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline is not None and time.perf_counter() > deadline:
            _stop_command(proc.pid)
            stopped = True
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    rest = (proc.stdout.read() or b"") if proc.stdout is not None else b""
    proc.returncode = 0
    if stdin:
        stdin.close()
    rss = peak.kib(usage.ru_maxrss)
    peak.__exit__()
    return time.perf_counter() - start, rss / 1024, b"".join(chunks) + rest, stopped


def _stop_command(pid: int) -> None:
    """SIGTERM to the command under /usr/bin/time (which then writes its peak), or to pid itself."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for child in children or [str(pid)]:
        os.kill(int(child), signal.SIGTERM)


def truncated_findings(out: bytes) -> str:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith(b"{")]
    findings = [f for f in lines if f.get("kind") != "summary"]
    cut = sum(1 for f in findings if f.get("truncated"))
    return f"{len(findings)} findings, {cut} marked truncated"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "logdoctor-bounds")
    parser.add_argument("--bound-mib", type=float, default=100.0)
    parser.add_argument("--zero-seconds", type=float, default=10.0)
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str, str, str]] = []
    worst = 0.0
    for name, make in CASES.items():
        path = args.data / (name.replace(" ", "-") + ".log")
        if not path.exists():
            make(path)
        size = path.stat().st_size / MiB
        seconds, rss, out, _ = run([LOGDOCTOR, "scan", "--format", "json", str(path)])
        rows.append((f"scan: {name}", f"{size:,.0f} MiB", f"{seconds:.1f}s", f"{rss:.0f} MiB", truncated_findings(out)))
        worst = max(worst, rss)
        seconds, rss, _, _ = run([LOGDOCTOR, "--format", "json"], stdin_path=str(path))
        rows.append((f"pipe: {name}", f"{size:,.0f} MiB", f"{seconds:.1f}s", f"{rss:.0f} MiB", ""))
        worst = max(worst, rss)
    for argv, stdin in (([LOGDOCTOR, "scan", "/dev/zero"], None), ([LOGDOCTOR], "/dev/zero")):
        seconds, rss, _, stopped = run(argv, stdin_path=stdin, limit=args.zero_seconds)
        label = "scan /dev/zero" if stdin is None else "pipe < /dev/zero"
        rows.append((label, "endless", f"stopped at {seconds:.0f}s" if stopped else f"{seconds:.1f}s",
                     f"{rss:.0f} MiB", ""))
        worst = max(worst, rss)
    header = ("case", "input", "time", "peak RSS", "output")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(f"\nworst peak RSS {worst:.0f} MiB; bound {args.bound_mib:.0f} MiB")
    if worst > args.bound_mib:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
