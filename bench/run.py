"""logdoctor's speed, memory and start-up, against baselines measured in the same run, on the same files.

    python bench/run.py [--data DIR] [--reps 3] [--events 100] [--skip-4g] [--out bench/results/run.json]

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
* start-up: `logdoctor --version` and `logdoctor scan` of a 1 KiB log against `python -c pass`;
* memory: peak RSS of a scan of a 4 GiB log.

grep gets its output in a file: with stdout on /dev/null, GNU grep stops at the first match.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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
    manifest = json.loads(Path(f"{log}.manifest.json").read_text())
    planted = Counter((p["rule"], p["launch"]) for p in manifest["planted"])
    seen: Counter[tuple[str, int]] = Counter()
    for line in findings_jsonl.splitlines():
        finding = json.loads(line)
        if finding.get("kind") != "finding" or finding["severity"] == "info":
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


# --- the run -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "logdoctor-bench")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--skip-4g", action="store_true", help="leave out the 4 GiB memory check")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "run.json")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str, str, str]] = []
    results: dict[str, object] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    failures: list[str] = []

    normal = generate(args.data, "normal-1g.log", "1G")
    heavy = generate(args.data, "error-heavy-100m.log", "100M", error_heavy=True, seed=1)
    tiny = args.data / "tiny-1k.log"
    tiny.write_bytes((HERE.parent / "fixtures" / "engine-core-kv-cache-too-small-0.33.log").read_bytes()[:1024])

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
    })
    base = timings["python -c pass"].median
    for name in ("logdoctor --version", "logdoctor scan 1 KiB"):
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

    _print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nresults: {args.out}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        raise SystemExit(1)


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


def _print_table(rows: list[tuple[str, str, str, str, str]]) -> None:
    header = ("measurement", "logdoctor", "against the baseline", "peak RSS", "correctness")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    shutil.which("grep") or sys.exit("bench/run.py needs grep")
    main()
