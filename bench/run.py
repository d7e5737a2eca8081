"""logdoctor's speed, memory and start-up, against baselines measured in the same run, on the same files.

    python bench/run.py [--data DIR] [--reps 3] [--events 100] [--skip-4g] [--out bench/results/run.json]
                        [--shapes-only | --skip-shapes] [--corpus DIR] [--shape-size 300M] [--launches 100000]

Machines here are noisy, so every figure is the median of several repetitions (the spread is printed
beside it) and is reported as a ratio to its baseline, run alternately with it:

* scan: `logdoctor scan --format json` against `grep -E -c 'Traceback|Error|error'` on a 1 GiB normal log
  and a 100 MiB error-heavy one (bench/genlog.py), with peak RSS; the findings are checked against the
  generator's manifest: every planted traceback found (its rule, launch and number of sightings), no
  other error or warning invented;
* pipe: `cat LOG | logdoctor > /dev/null` against `cat LOG | grep ...`; a separate run checks that the
  copy is byte-identical;
* live latency: a writer appends a traceback at random moments, to a followed file (`watch`) and into
  the pipe; the time from its last line written to its finding printed, p50 and p99;
* start-up: `logdoctor --version`, `logdoctor scan` of a 1 KiB log (one with a finding, one without) and
  `logdoctor check` against `python -c pass`;
* memory: peak RSS of a scan of a 4 GiB log.

Real shapes (real logs are not shaped like the generator's: many short launches, other vLLM versions,
excerpts that start mid-traceback, storms of errors from many processes), each with throughput, its ratio
to grep on the same file, peak RSS, time to first output (process start to the first byte of its stdout,
read on a thread from a pipe) and a correctness check:

* (a) crash loop: every `.log` of the labelled corpus of real logs (--corpus, default ../shared/corpus of
  the repository), each ending in a newline, in sorted order, again and again to --shape-size (300M);
  `logdoctor scan --format json` of it. Each corpus log is also scanned alone; every copy in the big
  scan (its findings found by their first line) must give, launch by launch, the primary rule its log
  gives alone, no rule its log does not give alone, and no finding running into the next copy. Skipped,
  with (b) and (d), when there is no corpus;
* (b) healthy loop: the same with the corpus's healthy logs (sibling .json `"healthy": true`); also no
  error-severity rule the log alone does not give as an error;
* (c) error storm: bench/stormlog.py's log of --shape-size (16 workers interleaving, ~8% error-like lines,
  raw tracebacks spread over thousands of lines, four failure kinds in turn); checked against its
  manifest like genlog's logs, and each launch's primary finding against the root cause it planted;
* (d) watch catching up: `logdoctor watch --format json --state S` started on (a)'s complete file; the
  catch-up lasts until S holds the file's size as its offset (watch saves the offset once nothing before
  it is pending); its findings are compared with the scan's. Then SIGTERM to exit: --sigterm-tries tries,
  each a watch on the file signalled at a seeded random moment of a catch-up, p50, p99 and max; a try
  still running --sigterm-deadline (30 s) after the signal is killed and counted at the deadline;
* (e) launches through watch: a writer appends --launches crash-loop launches (the start of a header and a
  short failing traceback each, four errors in turn) to a file watch follows, a batch at a time once
  watch has diagnosed the last (state offset or findings); watch's VmRSS after every batch, its peak, the
  growth and slope over the last half (flat: at most 5 MiB of growth); --launches-deadline bounds it and
  the figures say how far it got; every launch's finding must be the planted rule.

grep gets its output in a file: with stdout on /dev/null, GNU grep stops at the first match.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from genlog import parse_size
from peak import PeakRss

HERE = Path(__file__).resolve().parent
GREP = ["grep", "-E", "-c", "Traceback|Error|error"]
BIN = Path(sys.executable).parent
LOGDOCTOR = str(BIN / "logdoctor")
MiB = 1 << 20


@dataclass
class Timing:
    seconds: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def spread(self) -> str:
        return f"{min(self.seconds):.2f}-{max(self.seconds):.2f}s"

    @property
    def peak_mib(self) -> float:
        return max(self.rss_kib) / 1024 if self.rss_kib else 0.0


def run_timed(argv: Sequence[str], stdout: int | object = subprocess.DEVNULL) -> tuple[float, int, int]:
    """Wall time, peak RSS (KiB) and exit status of one process."""
    with PeakRss(argv) as (wrapped, peak):
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=stdout, stderr=subprocess.DEVNULL)  # type: ignore[arg-type]
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        return elapsed, peak.kib(usage.ru_maxrss), proc.returncode


def run_piped(log: Path, argv: Sequence[str], out: object) -> tuple[float, int]:
    """`cat log | argv > out`: wall time until the reader is done, and the reader's peak RSS."""
    with PeakRss(argv) as (wrapped, peak):
        start = time.perf_counter()
        cat = subprocess.Popen(["cat", str(log)], stdout=subprocess.PIPE)
        reader = subprocess.Popen(wrapped, stdin=cat.stdout, stdout=out, stderr=subprocess.DEVNULL)  # type: ignore[arg-type]
        assert cat.stdout is not None
        cat.stdout.close()
        _, _, usage = os.wait4(reader.pid, 0)
        cat.wait()
        return time.perf_counter() - start, peak.kib(usage.ru_maxrss)


def into(path: Path, argv: list[str]) -> Callable[[], tuple[float, int]]:
    """A measurement: run argv with its stdout in a file."""

    def run() -> tuple[float, int]:
        with path.open("wb") as out:
            seconds, rss, _ = run_timed(argv, stdout=out)
        return seconds, rss

    return run


def alternate(reps: int, runs: dict[str, Callable[[], tuple[float, int]]]) -> dict[str, Timing]:
    """Run each measurement once per round, rounds `reps` times, so drift hits all of them alike."""
    timings = {name: Timing() for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            seconds, rss = run()
            timings[name].seconds.append(seconds)
            timings[name].rss_kib.append(rss)
    return timings


# --- data --------------------------------------------------------------------------------------------


def generate(data: Path, name: str, size: str, error_heavy: bool = False, seed: int = 0) -> Path:
    """The log (made once, then reused), read through once so every contender starts from the page cache."""
    path = data / name
    manifest = Path(f"{path}.manifest.json")
    if path.exists() and manifest.exists():
        _warm(path)
        return path
    argv = [sys.executable, str(HERE / "genlog.py"), str(path), "--size", size, "--seed", str(seed)]
    subprocess.run(argv + (["--error-heavy"] if error_heavy else []), check=True)
    _warm(path)
    return path


def _warm(path: Path) -> None:
    with path.open("rb") as handle:
        while handle.read(8 * MiB):
            pass


# --- correctness -------------------------------------------------------------------------------------


@dataclass
class Recall:
    planted: int
    found: int
    missing: list[str]
    invented: list[str]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.invented and self.found == self.planted


def check_findings(log: Path, findings_jsonl: str) -> Recall:
    """Every planted traceback is a sighting of a finding with its rule in its launch; nothing else of
    error or warning severity is reported."""
    return recall_of(log, [json.loads(line) for line in findings_jsonl.splitlines()])


def recall_of(log: Path, findings: list[dict[str, Any]]) -> Recall:
    """check_findings of parsed findings."""
    manifest = json.loads(Path(f"{log}.manifest.json").read_text())
    planted = Counter((p["rule"], p["launch"]) for p in manifest["planted"])
    seen: Counter[tuple[str, int]] = Counter()
    for finding in findings:
        if finding.get("kind", "finding") != "finding" or finding["severity"] == "info":
            continue
        seen[(finding["rule"], finding["launch"])] += finding["occurrences"]
    missing = [f"{rule} (launch {launch}): {n} planted, {seen[(rule, launch)]} found"
               for (rule, launch), n in planted.items() if seen[(rule, launch)] < n]
    invented = [f"{rule} (launch {launch}) x{n}" for (rule, launch), n in seen.items()
                if n > planted.get((rule, launch), 0)]
    found = sum(min(seen[key], n) for key, n in planted.items())
    return Recall(sum(planted.values()), found, missing, invented)


# --- live latency ------------------------------------------------------------------------------------

FILLER = "(APIServer pid=4242) INFO 11-30 12:00:00 [loggers.py:283] Engine 000: Avg prompt throughput: 1.0 tokens/s"


def traceback_of(event: int) -> list[str]:
    return [
        "Traceback (most recent call last):",
        '  File "/opt/app/bench.py", line 10, in handler',
        "    run()",
        f"BenchEvent{event}Error: planted event {event}",
    ]


def live_latency(mode: str, events: int, seed: int) -> list[float]:
    """Seconds from the last line of each planted traceback written to its finding printed."""
    rng = random.Random(seed)
    written: dict[int, float] = {}
    seen: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "live.log"
        if mode == "watch":
            proc = subprocess.Popen([LOGDOCTOR, "watch", "--format", "json", str(log)],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            findings = proc.stdout
            time.sleep(1.0)  # let it start watching before the file appears
            out = log.open("w")
        else:
            proc = subprocess.Popen([LOGDOCTOR, "--format", "json"], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            findings = proc.stderr
            out = proc.stdin  # type: ignore[assignment]
        assert findings is not None and out is not None

        def read() -> None:
            for line in findings:
                try:
                    finding = json.loads(line)
                except ValueError:
                    continue
                kind = finding.get("error", {}).get("type", "")
                if kind.startswith("BenchEvent"):
                    seen.setdefault(int(kind[len("BenchEvent"):-len("Error")]), time.monotonic())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        for event in range(events):
            for _ in range(rng.randrange(1, 20)):
                out.write(FILLER + "\n")
            out.flush()
            time.sleep(rng.uniform(0.0, 0.3))
            out.write("\n".join(traceback_of(event)) + "\n")
            out.flush()
            written[event] = time.monotonic()
            # Nothing else until the finding is due: a next line of the same stream would end the
            # traceback at once and hide how long logdoctor itself waits before it speaks.
            time.sleep(rng.uniform(1.0, 1.5))
        time.sleep(1.0)
        out.close()
        proc.terminate() if mode == "watch" else None
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(timeout=5)
    missing = [e for e in written if e not in seen]
    if missing:
        raise SystemExit(f"live {mode}: no finding for events {missing[:10]}")
    return sorted(seen[e] - written[e] for e in written)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- real shapes: helpers -----------------------------------------------------------------------------

KIND = re.compile(rb'\{"kind":\s*"(\w+)"')  # the first field of a finding as logdoctor writes it


class Output:
    """A child's stdout, read on a thread into `sink`: when its first byte came (seconds after `start`),
    how many records of each kind came, and when the last finding did."""

    def __init__(self, stream: BinaryIO, start: float, sink: BinaryIO) -> None:
        self.stream, self.start, self.sink = stream, start, sink
        self.first: float | None = None
        self.last_finding: float | None = None
        self.kinds: Counter[str] = Counter()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        rest = b""
        while chunk := os.read(self.stream.fileno(), 1 << 16):
            now = time.perf_counter() - self.start
            if self.first is None:
                self.first = now
            self.sink.write(chunk)
            *complete, rest = (rest + chunk).split(b"\n")
            for line in complete:
                match = KIND.match(line)
                kind = match[1].decode() if match else "other"
                self.kinds[kind] += 1
                if kind == "finding":
                    self.last_finding = now
        self.stream.close()

    def join(self, timeout: float | None = None) -> None:
        self.thread.join(timeout)
        self.sink.flush()


def run_capture(argv: Sequence[str], out_path: Path) -> tuple[float, int, float | None]:
    """Wall time, peak RSS (KiB), and seconds from its start to the first byte of its stdout, of one
    process whose stdout goes to out_path through a pipe."""
    with PeakRss(argv) as (wrapped, peak), out_path.open("wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        output = Output(proc.stdout, start, sink)
        _, _, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        output.join()
        return elapsed, peak.kib(usage.ru_maxrss), output.first


def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> float | None:
    """perf_counter() when proc exited, waiting at most timeout seconds; None if it is still running."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        fd = None
    try:
        if fd is not None:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(max(0.0, timeout) * 1000):
                return None
            ended = time.perf_counter()
            proc.wait()
            return ended
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                return time.perf_counter()
            time.sleep(0.005)
        return None
    finally:
        if fd is not None:
            os.close(fd)


def proc_kib(pid: int, name: str) -> int:
    """A /proc/PID/status figure in KiB (VmRSS, VmHWM); 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class StateFile:
    """How far `logdoctor watch --state FILE` has read a file: the offset it saves, where a restart
    resumes (the start of the launch in progress, which it reads again), and the lines it has read and
    diagnosed (`read_lines`). Read again only when the file was replaced."""

    def __init__(self, path: Path, followed: Path) -> None:
        self.path, self.key = path, str(followed)
        self.seen: tuple[int, int] | None = None
        self.offset = 0
        self.read_lines = 0

    def caught_up(self, lines: int) -> bool:
        """Has it read and diagnosed all `lines` of the file?"""
        self.read()
        return self.read_lines >= lines

    def read(self) -> int:
        try:
            status = self.path.stat()
        except OSError:
            return self.offset
        if (status.st_ino, status.st_mtime_ns) != self.seen:
            self.seen = (status.st_ino, status.st_mtime_ns)
            try:
                saved = json.loads(self.path.read_text())
                self.offset = int(saved["files"][self.key]["offset"])
                self.read_lines = int(saved["files"][self.key].get("read_lines", 0))
            except (OSError, ValueError, KeyError, TypeError):
                pass
        return self.offset


def watch_argv(log: Path, state: Path) -> list[str]:
    return [LOGDOCTOR, "watch", "--format", "json", "--state", str(state), str(log)]


def stop(proc: subprocess.Popen[bytes], deadline: float) -> tuple[float, bool]:
    """SIGTERM, then seconds until it exited, or (deadline, True) when it had to be killed."""
    sent = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    ended = wait_exit(proc, deadline)
    if ended is not None:
        return ended - sent, False
    proc.kill()
    proc.wait()
    return deadline, True


def parse_findings(path: Path) -> list[dict[str, Any]]:
    """The findings of a --format json output, without the parts no check reads; withdrawn ones dropped."""
    found: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            kind, key = record.get("kind", "finding"), record.get("id") or f"line {number}"
            slim = {k: record.get(k) for k in ("rule", "severity", "primary", "role", "lines", "launch", "occurrences")}
            if kind == "finding":
                found[key] = slim
                order.append(key)
            elif kind == "update" and key in found:
                found[key].update(slim)
            elif kind == "withdrawn":
                found.pop(key, None)
    return [found[key] for key in order if key in found]


Checked = tuple[str, dict[str, object], list[str]]  # verdict, details, problems (none: correct)


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99), "max": max(values)}


# --- real shapes: the corpus loops (a, b) ------------------------------------------------------------


@dataclass
class Copy:
    log: str  # file name in the corpus
    first: int  # its first line in the concatenation (1-based)
    last: int


def corpus_logs(corpus: Path, healthy: bool) -> list[Path]:
    """The corpus's logs in sorted order; with healthy, those whose sibling .json says "healthy": true."""
    logs = sorted(corpus.glob("*.log"))
    if not healthy:
        return logs
    keep = []
    for log in logs:
        try:
            if json.loads(log.with_suffix(".json").read_text()).get("healthy") is True:
                keep.append(log)
        except (OSError, ValueError):
            continue
    return keep


def concatenate(logs: list[Path], path: Path, size: int) -> list[Copy]:
    """The logs one after the other (each ending in a newline), again and again until `size` bytes; made
    once and reused while the logs and the size are the same; read through so it starts from the page cache."""
    meta = Path(f"{path}.copies.json")
    key = {"logs": [[str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in logs], "size": size}
    if path.exists() and meta.exists():
        saved = json.loads(meta.read_text())
        if saved.get("key") == key:
            _warm(path)
            return [Copy(**c) for c in saved["copies"]]
    blobs = []
    for log in logs:
        data = log.read_bytes()
        if data:
            data += b"" if data.endswith(b"\n") else b"\n"
            blobs.append((log.name, data, data.count(b"\n")))
    copies: list[Copy] = []
    written = line = 0
    with path.open("wb") as out:
        while written < size and blobs:
            for name, data, lines in blobs:
                out.write(data)
                copies.append(Copy(name, line + 1, line + lines))
                line += lines
                written += len(data)
                if written >= size:
                    break
    meta.write_text(json.dumps({"key": key, "copies": [asdict(c) for c in copies]}) + "\n")
    _warm(path)
    return copies


def solo_scans(logs: list[Path], data: Path) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """`logdoctor scan --format json` of each log alone: the baseline the concatenation is checked against."""
    solo: dict[str, list[dict[str, Any]]] = {}
    failed = []
    out_path = data / "solo.jsonl"
    for log in logs:
        with out_path.open("wb") as out:
            status = subprocess.run([LOGDOCTOR, "scan", "--format", "json", str(log)], stdout=out,
                                    stderr=subprocess.DEVNULL).returncode
        if status not in (0, 1):
            failed.append(f"{log.name}: exit status {status}")
        solo[log.name] = parse_findings(out_path)
    return solo, failed


@dataclass
class CopyCheck:
    copies: int = 0
    agreed: int = 0  # its root cause found, nothing invented
    same_primary: int = 0  # ... and, launch by launch, the same primary finding as alone
    identical: int = 0  # every finding the same as alone: rule, severity, primary, lines relative to the copy
    disagreements: list[str] = field(default_factory=list)  # the first few, with why
    logs_disagreeing: dict[str, int] = field(default_factory=dict)  # log -> copies that disagreed
    reasons: dict[str, int] = field(default_factory=dict)  # why -> copies
    other_primary: dict[str, int] = field(default_factory=dict)  # log -> copies found right but ranked otherwise

    @property
    def ok(self) -> bool:
        return self.agreed == self.copies


def _primaries(findings: list[dict[str, Any]]) -> list[list[str]]:
    """Per launch with a finding, in order: the rules of its primary findings (one, or none)."""
    launches = sorted({f["launch"] for f in findings})
    return [sorted(f["rule"] for f in findings if f["launch"] == n and f["primary"]) for n in launches]


def check_copies(copies: list[Copy], findings: list[dict[str, Any]], solo: dict[str, list[dict[str, Any]]],
                 healthy: bool) -> CopyCheck:
    """Each copy must give the root cause (primary rule) its log gives alone, and no rule it does not give
    alone (healthy: and no error-severity rule it does not give alone as an error). Findings are given to
    copies by their first line.

    Many corpus logs are excerpts: one that starts without vLLM's banner (at a traceback, say) cannot be
    told from more of the log before it, by logdoctor or by a person, so the two read as one launch, whose
    root cause is the earlier one: the later log's root cause is then found but not primary. That is
    counted apart (same_primary), not as a miss. For the same reason a finding that runs on into the next
    copy (an excerpt that ends inside a traceback, the next starting with more of one) may carry the
    next copy's rule."""
    starts = [c.first for c in copies]
    mine: list[list[dict[str, Any]]] = [[] for _ in copies]
    # What a copy shows, wherever the finding starts: its lines cover the copy, or one of its evidence
    # lines is there (a later sighting of an error, counted on the first one's finding).
    shown: list[set[str]] = [set() for _ in copies]
    for finding in findings:
        first, last = finding["lines"]
        index = bisect.bisect_right(starts, first) - 1
        if index >= 0:
            mine[index].append(finding)
        touched = {bisect.bisect_right(starts, e["line"]) - 1 for e in finding.get("evidence", [])}
        touched |= set(range(max(index, 0), bisect.bisect_right(starts, last)))
        for at in touched:
            if at >= 0:
                shown[at].add(finding["rule"])
    check = CopyCheck(copies=len(copies))
    for index, (copy, got) in enumerate(zip(copies, mine, strict=True)):
        alone = solo[copy.log]
        after = solo[copies[index + 1].log] if index + 1 < len(copies) else []
        why = []
        reasons = []
        wanted_roots = {f["rule"] for f in alone if f["primary"]}
        missing = sorted(wanted_roots - shown[index])
        if missing:
            why.append(f"root cause not found: {missing}")
            reasons.append("root cause not found")
        own = {f["rule"] for f in alone}
        invented = sorted({f["rule"] for f in got if f["rule"] not in own
                           and not (f["lines"][1] > copy.last and f["rule"] in {g["rule"] for g in after})})
        if invented:
            why.append(f"rules it does not give alone: {invented}")
            reasons.append("a rule it does not give alone")
        if healthy:
            errors = sorted({f["rule"] for f in got if f["severity"] == "error"}
                            - {f["rule"] for f in alone if f["severity"] == "error"})
            if errors:
                why.append(f"errors it does not give alone: {errors}")
                reasons.append("an error it does not give alone")
        for reason in reasons:
            check.reasons[reason] = check.reasons.get(reason, 0) + 1
        if why:
            check.logs_disagreeing[copy.log] = check.logs_disagreeing.get(copy.log, 0) + 1
            if len(check.disagreements) < 20:
                check.disagreements.append(f"copy {index} ({copy.log}, lines {copy.first}-{copy.last}): "
                                           + "; ".join(why))
            continue
        check.agreed += 1
        if _primaries(got) == _primaries(alone):
            check.same_primary += 1
        else:
            check.other_primary[copy.log] = check.other_primary.get(copy.log, 0) + 1

        def shape(fs: list[dict[str, Any]], offset: int) -> list[tuple[Any, ...]]:
            return sorted((f["rule"], f["severity"], f["primary"], f["lines"][0] - offset, f["lines"][1] - offset)
                          for f in fs)

        check.identical += shape(got, copy.first - 1) == shape(alone, 0)
    return check


# --- real shapes: the error storm (c) ------------------------------------------------------------------


def storm(data: Path, size: int, seed: int = 0) -> Path:
    """bench/stormlog.py's log (made once, then reused), read through once."""
    path = data / f"storm-{size}.log"
    if not (path.exists() and Path(f"{path}.manifest.json").exists()):
        subprocess.run([sys.executable, str(HERE / "stormlog.py"), str(path), "--size", str(size), "--seed",
                        str(seed)], check=True, stdout=subprocess.DEVNULL)
    _warm(path)
    return path


def check_roots(log: Path, findings: list[dict[str, Any]]) -> list[str]:
    """Each launch's primary finding is the root cause the generator planted."""
    manifest = json.loads(Path(f"{log}.manifest.json").read_text())
    primary: dict[int, list[str]] = {}
    for finding in findings:
        if finding["primary"]:
            primary.setdefault(finding["launch"], []).append(finding["rule"])
    return [f"launch {r['launch']}: primary {primary.get(r['launch'], [])}, planted {r['root']}"
            for r in manifest["roots"] if primary.get(r["launch"]) != [r["root"]]]


# --- real shapes: watch (d, e) -----------------------------------------------------------------------


@dataclass
class CatchUp:
    seconds: float | None  # until the state file said everything was read and diagnosed; None: not in time
    last_finding: float | None  # when its last finding came
    first_output: float | None
    findings: int
    peak_kib: int
    exit_seconds: float  # SIGTERM once caught up, to exit
    killed: bool


def watch_catch_up(log: Path, data: Path, deadline: float, out_path: Path) -> CatchUp:
    """`logdoctor watch` started on a complete file: how long until it has read and diagnosed all of it.
    The signal is its state file, which says how many lines it has read and diagnosed; then it is
    stopped with SIGTERM."""
    state = data / "watch-state.json"
    state.unlink(missing_ok=True)
    with log.open("rb") as handle:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))
    done: float | None = None
    with out_path.open("wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(watch_argv(log, state), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        output = Output(proc.stdout, start, sink)
        saved = StateFile(state, log)
        peak = 0
        while (now := time.perf_counter()) - start < deadline:
            peak = max(peak, proc_kib(proc.pid, "VmHWM"))
            if saved.caught_up(lines):
                done = now - start
                break
            if wait_exit(proc, 0.05) is not None:
                break  # it died: reported as not caught up
        peak = max(peak, proc_kib(proc.pid, "VmHWM"))
        exit_seconds, killed = stop(proc, 30.0) if proc.poll() is None else (0.0, False)
        output.join(10)
    return CatchUp(done, output.last_finding, output.first, output.kinds["finding"], peak, exit_seconds, killed)


def same_findings(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[int, int]:
    """Findings of a not in b and of b not in a, by rule, launch, lines and primary."""
    key = lambda f: (f["rule"], f["launch"], tuple(f["lines"]), f["primary"])  # noqa: E731
    ka, kb = Counter(map(key, a)), Counter(map(key, b))
    return sum((ka - kb).values()), sum((kb - ka).values())


@dataclass
class Termination:
    after: float  # seconds after the start the signal was sent
    seconds: float  # from the signal to exit (the deadline when it had to be killed)
    killed: bool
    status: int | None


def sigterm_latency(log: Path, data: Path, tries: int, window: float, deadline: float, seed: int) -> list[Termination]:
    """Start watch on the file, send SIGTERM at a random moment of its catch-up (seeded), measure the time
    to exit; a try that outlives `deadline` is killed and counted at the deadline."""
    rng = random.Random(seed)
    state = data / "watch-term-state.json"
    results = []
    for _ in range(tries):
        state.unlink(missing_ok=True)
        delay = rng.uniform(0.0, window)
        start = time.perf_counter()
        proc = subprocess.Popen(watch_argv(log, state), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wait_exit(proc, delay) is not None:  # the random moment, unless it exits on its own before
            results.append(Termination(delay, 0.0, False, proc.returncode))
            continue
        after = time.perf_counter() - start
        seconds, killed = stop(proc, deadline)
        results.append(Termination(after, seconds, killed, None if killed else proc.returncode))
    return results


SITE = "/usr/local/lib/python3.12/dist-packages"
# What each streamed launch fails with, in turn, and the rule of its (one) finding.
LAUNCH_RULES = ("network.port-in-use", "memory.max-model-len-exceeds-derived", "distributed.nccl-system-error",
                "memory.oom-loading-weights")


def launch_text(n: int) -> str:
    """Launch n of a crash loop: the start of a header and a short failing traceback; pids and clock vary."""
    api = 1000 + n * 7919 % 60000
    seconds = n * 37
    clock = (f"11-{1 + seconds // 86400 % 28:02d} {seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:"
             f"{seconds % 60:02d}")
    api_prefix = f"(APIServer pid={api}) "
    lines = [
        f"{api_prefix}INFO {clock} [startup.py:38]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0",
        f"{api_prefix}INFO {clock} [startup.py:96] non-default args: {{'model_tag': '/models/m', 'model': "
        f"'/models/m', 'port': {8000 + n % 7}}}",
    ]
    top = ["Traceback (most recent call last):", '  File "/usr/local/bin/vllm", line 8, in <module>',
           "    sys.exit(main())"]
    kind = n % len(LAUNCH_RULES)
    if kind == 0:
        lines += [api_prefix + t for t in top + [
            f'  File "{SITE}/vllm/entrypoints/launchers/api_server/entry.py", line 112, in create_server_socket',
            "    sock.bind(addr)", "OSError: [Errno 98] Address already in use"]]
    elif kind == 1:
        lines += [api_prefix + t for t in top + [
            f'  File "{SITE}/vllm/engine/arg_utils.py", line 1994, in create_model_config', "    return ModelConfig(",
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
            f"  Value error, User-specified max_model_len ({40000 + n % 50000}) is greater than the derived "
            "max_model_len (max_position_embeddings=32768 or model_max_length=None in model's config.json). To allow "
            "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. [type=value_error, "
            "input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
            "    For further information visit https://errors.pydantic.dev/2.12/v/value_error"]]
    elif kind == 2:
        lines += [f"(Worker_TP0 pid={api + 2}) " + t for t in top + [
            f'  File "{SITE}/vllm/distributed/device_communicators/pynccl_wrapper.py", line 464, in NCCL_CHECK',
            '    raise RuntimeError(f"NCCL error: {error_str}")',
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"]]
    else:
        core = f"(EngineCore_DP0 pid={api + 1}) ERROR {clock} [core.py:1050] "
        lines += [core + t for t in [
            "EngineCore failed to start.", "Traceback (most recent call last):",
            f'  File "{SITE}/vllm/v1/worker/gpu_model_runner.py", line 3120, in load_model',
            "    self.model = model_loader.load_model(",
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {64 + n % 900}.00 MiB. GPU 0 has a total "
            "capacity of 79.19 GiB of which 12.31 MiB is free."]]
    return "\n".join(lines) + "\n"


@dataclass
class Streamed:
    launches: int  # asked for
    written: int  # launches written
    read: int  # launches watch had read and diagnosed when it was last sampled
    seconds: float
    out_of_time: bool
    over_cap: bool  # stopped because watch's RSS passed the cap
    samples: list[tuple[int, float]]  # (launches read, VmRSS MiB)
    peak_mib: float
    slope_mib_per_10k: float | None  # over the last half
    growth_mib: float | None  # over the last half
    diagnosed: int  # launches (of those read) whose primary finding is the planted rule
    findings: int
    exit_seconds: float
    killed: bool

    @property
    def flat(self) -> bool | None:
        return None if self.growth_mib is None else self.growth_mib <= 5.0


def stream_launches(data: Path, launches: int, deadline: float, out_path: Path, rss_cap_mib: float) -> Streamed:
    """A writer appends crash-loop launches to a file `logdoctor watch` follows, a batch at a time, each
    batch once watch has diagnosed the one before; watch's VmRSS is sampled after every batch. It stops
    early at the deadline, or when watch's RSS passes rss_cap_mib (the machine is shared)."""
    log, state = data / "launches.log", data / "launches-state.json"
    state.unlink(missing_ok=True)
    log.write_bytes(b"")
    batch = max(100, min(1000, launches // 20))  # about 20 samples at least, one a thousand launches at most
    samples: list[tuple[int, float]] = []
    written = read = 0
    out_of_time = over_cap = False
    with out_path.open("wb") as sink, log.open("a", encoding="utf-8") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(watch_argv(log, state), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        output = Output(proc.stdout, start, sink)
        saved = StateFile(state, log)
        while written < launches and proc.poll() is None:
            n = min(batch, launches - written)
            out.write("".join(launch_text(k) for k in range(written, written + n)))
            out.flush()
            written += n
            size = out.tell()
            # Caught up: the state file has the end of the file (nothing pending), or every launch's finding came.
            while saved.read() < size and output.kinds["finding"] < written:
                if time.perf_counter() - start > deadline or wait_exit(proc, 0.02) is not None:
                    break
            else:
                read = written
                samples.append((read, proc_kib(proc.pid, "VmRSS") / 1024))
                over_cap = samples[-1][1] > rss_cap_mib
                if over_cap:
                    break
                continue
            out_of_time = proc.poll() is None
            break
        seconds = time.perf_counter() - start
        peak = proc_kib(proc.pid, "VmHWM") / 1024
        exit_seconds, killed = stop(proc, 30.0) if proc.poll() is None else (0.0, False)
        output.join(10)
    findings = parse_findings(out_path)
    diagnosed = sum(1 for f in findings if f["primary"] and 1 <= f["launch"] <= read
                    and f["rule"] == LAUNCH_RULES[(f["launch"] - 1) % len(LAUNCH_RULES)])
    half = [(n, mib) for n, mib in samples if n > read / 2]
    slope = growth = None
    if len(half) >= 2:
        slope = statistics.linear_regression([n for n, _ in half], [m for _, m in half]).slope * 10_000
        growth = half[-1][1] - half[0][1]
    return Streamed(launches, written, read, seconds, out_of_time, over_cap, samples, peak, slope, growth,
                    diagnosed, len(findings), exit_seconds, killed)


# --- the run -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "logdoctor-bench")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--skip-4g", action="store_true", help="leave out the 4 GiB memory check")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "run.json")
    shapes = parser.add_argument_group("real shapes")
    shapes.add_argument("--shapes-only", action="store_true", help="run only the real-shape benchmarks")
    shapes.add_argument("--skip-shapes", action="store_true", help="leave out the real-shape benchmarks")
    shapes.add_argument("--corpus", type=Path, default=default_corpus(),
                        help="the labelled corpus of real logs (*.log with a sibling .json); default: "
                        "../shared/corpus from the repository (from the main checkout's, in a git worktree)")
    shapes.add_argument("--shape-size", default="300M", help="size of the crash loop, healthy loop and storm")
    shapes.add_argument("--launches", type=int, default=100_000, help="launches streamed through watch")
    shapes.add_argument("--launches-deadline", type=float, default=900.0,
                        help="seconds the streamed launches may take; the figures say how far they got")
    shapes.add_argument("--launches-rss-cap", type=float, default=2048.0,
                        help="MiB of watch's RSS at which the streamed launches stop (the machine is shared)")
    shapes.add_argument("--catch-up-deadline", type=float, default=1800.0,
                        help="seconds watch may take to catch up on the crash loop")
    shapes.add_argument("--sigterm-tries", type=int, default=20)
    shapes.add_argument("--sigterm-window", type=float, default=None,
                        help="send each SIGTERM within this many seconds of the start (default: the whole catch-up)")
    shapes.add_argument("--sigterm-deadline", type=float, default=30.0,
                        help="seconds after SIGTERM before a try is killed (and counted as this long)")
    args = parser.parse_args()
    if args.shapes_only and args.skip_shapes:
        parser.error("--shapes-only and --skip-shapes exclude each other")
    args.data.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, ...]] = []
    shape_rows: list[tuple[str, ...]] = []
    results: dict[str, object] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    failures: list[str] = []

    if not args.shapes_only:
        genlog_benchmarks(args, rows, results, failures)
    if not args.skip_shapes:
        shape_benchmarks(args, shape_rows, results, failures)

    if rows:
        _print_table(rows, ("measurement", "logdoctor", "against the baseline", "peak RSS", "correctness"))
    if shape_rows:
        print("\nreal shapes:\n" if rows else "real shapes:\n")
        _print_table(shape_rows, ("measurement", "logdoctor", "against the baseline", "peak RSS", "first output",
                                  "correctness"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nresults: {args.out}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        raise SystemExit(1)


def genlog_benchmarks(args: argparse.Namespace, rows: list[tuple[str, ...]], results: dict[str, object],
                      failures: list[str]) -> None:
    """The benchmarks on bench/genlog.py's logs."""
    normal = generate(args.data, "normal-1g.log", "1G")
    heavy = generate(args.data, "error-heavy-100m.log", "100M", error_heavy=True, seed=1)
    tiny = args.data / "tiny-1k.log"
    tiny.write_bytes((HERE.parent / "fixtures" / "engine-core-kv-cache-too-small-0.33.log").read_bytes()[:1024])
    # ... and 1 KiB with nothing to report (a healthy start's first lines): what start-up alone costs
    clean = args.data / "tiny-1k-clean.log"
    clean.write_text("\n".join(f"(APIServer pid=1) INFO 11-30 12:00:{n:02d} [loggers.py:123] Engine 000: Avg prompt "
                                f"throughput: {n}.0 tokens/s" for n in range(11)) + "\n")

    for label, log in (("1 GiB normal", normal), ("100 MiB error-heavy", heavy)):
        size = log.stat().st_size
        out_path = args.data / "scan.jsonl"
        grep_out = args.data / "grep.out"

        timings = alternate(args.reps, {
            "logdoctor": into(out_path, [LOGDOCTOR, "scan", "--format", "json", str(log)]),
            "grep": into(grep_out, [*GREP, str(log)]),
        })
        recall = check_findings(log, out_path.read_text())
        ld, gr = timings["logdoctor"], timings["grep"]
        ratio = gr.median / ld.median
        rows.append((f"scan {label}", f"{size / MiB / ld.median:,.0f} MB/s ({ld.spread})",
                     f"{ratio:.2f}x grep ({size / MiB / gr.median:,.0f} MB/s)", f"{ld.peak_mib:.0f} MiB",
                     f"{recall.found}/{recall.planted} planted, {len(recall.invented)} invented"))
        results[f"scan {label}"] = {"logdoctor": asdict(ld), "grep": asdict(gr), "ratio": ratio,
                                    "mb_per_s": size / MiB / ld.median, "recall": asdict(recall)}
        if not recall.ok:
            failures.append(f"scan {label}: missing {recall.missing}, invented {recall.invented}")

    # pipe
    size = normal.stat().st_size

    def pipe() -> tuple[float, int]:
        return run_piped(normal, [LOGDOCTOR], subprocess.DEVNULL)

    def grep_pipe() -> tuple[float, int]:
        with (args.data / "grep.out").open("wb") as out:
            return run_piped(normal, GREP, out)

    timings = alternate(args.reps, {"logdoctor": pipe, "grep": grep_pipe})
    copy = args.data / "pipe-copy.log"
    with copy.open("wb") as out:
        run_piped(normal, [LOGDOCTOR], out)
    identical = _same_bytes(copy, normal)
    copy.unlink()
    ld, gr = timings["logdoctor"], timings["grep"]
    rows.append(("pipe 1 GiB normal", f"{size / MiB / ld.median:,.0f} MB/s ({ld.spread})",
                 f"{gr.median / ld.median:.2f}x grep in a pipe", f"{ld.peak_mib:.0f} MiB",
                 "copy byte-identical" if identical else "COPY DIFFERS"))
    results["pipe"] = {"logdoctor": asdict(ld), "grep": asdict(gr), "ratio": gr.median / ld.median,
                       "identical": identical}
    if not identical:
        failures.append("pipe: the copy on stdout differs from the input")

    # live latency
    for mode in ("watch", "pipe"):
        latencies = live_latency(mode, args.events, seed=7)
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        rows.append((f"live latency ({mode})", f"p50 {p50:.2f}s", f"p99 {p99:.2f}s", "",
                     f"{len(latencies)}/{args.events} events"))
        results[f"latency {mode}"] = {"p50": p50, "p99": p99, "max": max(latencies), "events": len(latencies)}

    # start-up
    def timed(argv: list[str]) -> Callable[[], tuple[float, int]]:
        def run() -> tuple[float, int]:
            seconds, rss, _ = run_timed(argv)
            return seconds, rss
        return run

    timings = alternate(max(args.reps, 10), {
        "python -c pass": timed([sys.executable, "-c", "pass"]),
        "logdoctor --version": timed([LOGDOCTOR, "--version"]),
        "logdoctor scan 1 KiB": timed([LOGDOCTOR, "scan", str(tiny)]),
        "logdoctor scan 1 KiB, clean": timed([LOGDOCTOR, "scan", str(clean)]),
        "logdoctor check": timed([LOGDOCTOR, "check", "--", "vllm", "serve", "m", "--use-replayssm"]),
    })
    base = timings["python -c pass"].median
    for name in ("logdoctor --version", "logdoctor scan 1 KiB", "logdoctor scan 1 KiB, clean", "logdoctor check"):
        t = timings[name]
        rows.append((f"start-up: {name}", f"{t.median * 1000:.0f} ms ({t.spread})",
                     f"{t.median / base:.1f}x python -c pass ({base * 1000:.0f} ms)", f"{t.peak_mib:.0f} MiB", ""))
        results[name] = {"timing": asdict(t), "ratio_to_python": t.median / base}

    # memory on 4 GiB
    if not args.skip_4g:
        big = generate(args.data, "normal-4g.log", "4G", seed=4)
        out_path = args.data / "scan4g.jsonl"
        with out_path.open("wb") as out:
            seconds, rss, _ = run_timed([LOGDOCTOR, "scan", "--format", "json", str(big)], stdout=out)
        recall = check_findings(big, out_path.read_text())
        verdict = f"{recall.found}/{recall.planted} planted, {len(recall.invented)} invented"
        rows.append(("scan 4 GiB normal", f"{big.stat().st_size / MiB / seconds:,.0f} MB/s", "",
                     f"{rss / 1024:.0f} MiB", verdict))
        results["scan 4 GiB"] = {"seconds": seconds, "peak_mib": rss / 1024, "recall": asdict(recall)}
        if not recall.ok:
            failures.append(f"scan 4 GiB: missing {recall.missing}, invented {recall.invented}")



def default_corpus() -> Path:
    """../shared/corpus beside the repository; in a git worktree elsewhere, beside the main checkout."""
    beside = (HERE.parent.parent / "shared" / "corpus").resolve()
    if beside.is_dir():
        return beside
    try:
        common = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return beside
    main = (Path(common).parent.parent / "shared" / "corpus").resolve()
    return main if main.is_dir() else beside


def shape_benchmarks(args: argparse.Namespace, rows: list[tuple[str, ...]], results: dict[str, object],
                     failures: list[str]) -> None:
    """The benchmarks on real shapes: the corpus as a crash loop and as a healthy loop, the error storm,
    watch catching up on the crash loop and stopping on SIGTERM, and a hundred thousand launches streamed
    through watch."""
    size = parse_size(args.shape_size)
    shapes: dict[str, object] = {"shape_size": size}
    results["shapes"] = shapes
    crash_loop: Path | None = None
    crash_findings: list[dict[str, Any]] = []

    if not args.corpus.is_dir() or not any(args.corpus.glob("*.log")):
        print(f"real shapes: no corpus of real logs at {args.corpus} (give one with --corpus DIR); skipping the "
              "crash loop, the healthy loop and watch's catch-up on the crash loop", flush=True)
        shapes["corpus"] = None
    else:
        shapes["corpus"] = str(args.corpus)
        every, healthy = corpus_logs(args.corpus, healthy=False), corpus_logs(args.corpus, healthy=True)
        print(f"real shapes: scanning the corpus's {len(every)} logs one by one (the baseline of the loops)",
              flush=True)
        solo, failed = solo_scans(every, args.data)
        failures.extend(f"scan of a corpus log alone: {f}" for f in failed)
        for key, logs, is_healthy in (("crash loop", every, False), ("healthy loop", healthy, True)):
            if not logs:
                print(f"real shapes: no logs for the {key}; skipped", flush=True)
                continue
            log = args.data / f"{key.replace(' ', '-')}-{size}.log"
            copies = concatenate(logs, log, size)
            rounds = len(copies) / len(logs)
            label = f"scan {key} {log.stat().st_size / MiB:,.0f} MiB ({len(logs)} logs x{rounds:.1f})"

            def check(findings: list[dict[str, Any]], copies: list[Copy] = copies,
                      is_healthy: bool = is_healthy) -> Checked:
                result = check_copies(copies, findings, solo, is_healthy)
                verdict = (f"{result.agreed}/{result.copies} copies: root cause found, none invented "
                           f"({result.same_primary} also primary, {result.identical} identical)")
                return verdict, asdict(result), result.disagreements

            row, result, problems, findings = scan_shape(label, log, args.reps, args.data, check)
            rows.append(row)
            shapes[key] = result
            if problems:
                failures.append(f"{label}: {row[-1]} with their log scanned alone; e.g. {problems[:3]}")
            if not is_healthy:
                crash_loop, crash_findings = log, findings

    # (c) the error storm
    log = storm(args.data, size)
    manifest = json.loads(Path(f"{log}.manifest.json").read_text())
    label = (f"scan error storm {log.stat().st_size / MiB:,.0f} MiB ({manifest['error_like_fraction']:.1%} "
             f"error-like, {manifest['launches']} launches)")

    def check_storm(findings: list[dict[str, Any]]) -> Checked:
        recall = recall_of(log, findings)
        roots = check_roots(log, findings)
        verdict = (f"{recall.found}/{recall.planted} planted, {len(recall.invented)} invented, "
                   f"{manifest['launches'] - len(roots)}/{manifest['launches']} root causes")
        problems = [f"missing {m}" for m in recall.missing] + [f"invented {i}" for i in recall.invented] + roots
        return verdict, {"recall": asdict(recall), "roots_wrong": roots}, problems

    row, result, problems, _ = scan_shape(label, log, args.reps, args.data, check_storm)
    rows.append(row)
    shapes["error storm"] = result
    if problems:
        failures.append(f"{label}: {row[-1]}: {problems[:5]}")

    # (d) watch catching up on the crash loop, then SIGTERM at random moments of a catch-up
    if crash_loop is not None:
        watch_catch_up_and_stop(args, crash_loop, crash_findings, rows, shapes, failures)

    # (e) a hundred thousand launches through watch
    print(f"real shapes: streaming {args.launches:,} launches through watch", flush=True)
    streamed = stream_launches(args.data, args.launches, args.launches_deadline, args.data / "launches.jsonl",
                               args.launches_rss_cap)
    got = f"{streamed.read:,}/{streamed.launches:,} launches in {streamed.seconds:.0f}s" + (
        " (out of time)" if streamed.out_of_time else "") + (
        f" (stopped: RSS over {args.launches_rss_cap:.0f} MiB)" if streamed.over_cap else "")
    slope = "too few samples for a slope" if streamed.growth_mib is None else (
        f"{streamed.growth_mib:+.1f} MiB over the last half ({streamed.slope_mib_per_10k:+.1f} MiB/10k): "
        f"{'flat' if streamed.flat else 'GROWING'}")
    rows.append((f"watch: {streamed.launches:,} launches streamed", got, slope, f"{streamed.peak_mib:.0f} MiB", "",
                 f"{streamed.diagnosed:,}/{streamed.read:,} diagnosed as planted"))
    shapes["launches"] = {**asdict(streamed), "flat": streamed.flat}
    if streamed.diagnosed != streamed.read:
        failures.append(f"watch, streamed launches: {streamed.read - streamed.diagnosed} of {streamed.read} "
                        f"launches read not diagnosed as planted ({streamed.findings} findings)")


def scan_shape(label: str, log: Path, reps: int, data: Path, check: Callable[[list[dict[str, Any]]], Checked],
               ) -> tuple[tuple[str, ...], dict[str, Any], list[str], list[dict[str, Any]]]:
    """`logdoctor scan --format json` of log against grep, alternately; its time to first output; its
    findings checked."""
    print(f"real shapes: {label}", flush=True)
    size = log.stat().st_size
    out_path, grep_out = data / "shape-scan.jsonl", data / "grep.out"
    firsts: list[float] = []

    def logdoctor() -> tuple[float, int]:
        seconds, rss, first = run_capture([LOGDOCTOR, "scan", "--format", "json", str(log)], out_path)
        if first is not None:
            firsts.append(first)
        return seconds, rss

    timings = alternate(reps, {"logdoctor": logdoctor, "grep": into(grep_out, [*GREP, str(log)])})
    findings = parse_findings(out_path)
    verdict, detail, problems = check(findings)
    ld, gr = timings["logdoctor"], timings["grep"]
    ratio = gr.median / ld.median
    first = statistics.median(firsts) if firsts else None
    row = (label, f"{size / MiB / ld.median:,.1f} MB/s ({ld.spread})",
           f"{ratio:.3g}x grep ({size / MiB / gr.median:,.0f} MB/s)", f"{ld.peak_mib:.0f} MiB",
           f"{first:.1f}s" if first is not None else "none", verdict)
    result = {"bytes": size, "logdoctor": asdict(ld), "grep": asdict(gr), "ratio": ratio,
              "mb_per_s": size / MiB / ld.median, "first_output_seconds": firsts, "findings": len(findings),
              "check": detail, "ok": not problems}
    return row, result, problems, findings


def watch_catch_up_and_stop(args: argparse.Namespace, log: Path, scan_findings: list[dict[str, Any]],
                            rows: list[tuple[str, ...]], shapes: dict[str, object], failures: list[str]) -> None:
    size = log.stat().st_size
    print(f"real shapes: watch catching up on the crash loop ({size / MiB:,.0f} MiB)", flush=True)
    out_path = args.data / "watch-catch-up.jsonl"
    runs: list[CatchUp] = []

    def catch_up() -> tuple[float, int]:
        run = watch_catch_up(log, args.data, args.catch_up_deadline, out_path)
        runs.append(run)
        return (run.seconds if run.seconds is not None else args.catch_up_deadline), run.peak_kib

    timings = alternate(args.reps, {"watch": catch_up, "grep": into(args.data / "grep.out", [*GREP, str(log)])})
    wt, gr = timings["watch"], timings["grep"]
    caught = [r for r in runs if r.seconds is not None]
    missing, extra = same_findings(scan_findings, parse_findings(out_path))
    firsts = [r.first_output for r in runs if r.first_output is not None]
    verdict = (f"{runs[-1].findings} findings; vs scan: {missing} missing, {extra} extra" if caught else
               f"not caught up in {args.catch_up_deadline:.0f}s")
    if len(caught) < len(runs):
        verdict += f" ({len(runs) - len(caught)}/{len(runs)} runs out of time)"
    rows.append(("watch: catch-up on the crash loop", f"{size / MiB / wt.median:,.1f} MB/s ({wt.spread})",
                 f"{gr.median / wt.median:.3g}x grep", f"{wt.peak_mib:.0f} MiB",
                 f"{statistics.median(firsts):.1f}s" if firsts else "none", verdict))
    shapes["watch catch-up"] = {"bytes": size, "watch": asdict(wt), "grep": asdict(gr),
                                "ratio": gr.median / wt.median, "mb_per_s": size / MiB / wt.median,
                                "runs": [asdict(r) for r in runs], "missing_vs_scan": missing,
                                "extra_vs_scan": extra}
    if len(caught) < len(runs) or missing or extra:
        failures.append(f"watch catch-up: {verdict}")

    window = statistics.median([r.seconds for r in caught]) if caught else args.catch_up_deadline
    if args.sigterm_window is not None:  # a slow catch-up: any moment of its first seconds is still in it
        window = min(window, args.sigterm_window)
    print(f"real shapes: watch, SIGTERM at a random moment of the catch-up ({args.sigterm_tries} tries, within "
          f"{window:.1f}s)", flush=True)
    tries = sigterm_latency(log, args.data, args.sigterm_tries, window, args.sigterm_deadline, seed=13)
    seconds = [t.seconds for t in tries]
    stats = percentiles(seconds)
    killed = sum(t.killed for t in tries)
    # Signalled before its handler is installed (during start-up), watch dies of the signal at once.
    default = sum(1 for t in tries if t.status == -signal.SIGTERM)
    verdict = f"{killed} killed at {args.sigterm_deadline:.0f}s" if killed else "all exited"
    rows.append((f"watch: SIGTERM to exit, during catch-up ({len(tries)} tries)",
                 f"p50 {stats['p50']:.2f}s", f"p99 {stats['p99']:.2f}s, max {stats['max']:.2f}s", "", "",
                 verdict + (f", {default} before its handler was set" if default else "")))
    shapes["watch sigterm"] = {**stats, "killed": killed, "died_of_the_signal": default,
                               "deadline": args.sigterm_deadline, "window": window,
                               "tries": [asdict(t) for t in tries]}


def _same_bytes(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            x, y = fa.read(8 * MiB), fb.read(8 * MiB)
            if x != y:
                return False
            if not x:
                return True


def _print_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    shutil.which("grep") or sys.exit("bench/run.py needs grep")
    main()
