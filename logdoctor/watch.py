"""`logdoctor watch PATH ...`: the sidecar. Wiring of the follower, the reporters, state and metrics."""

from __future__ import annotations

import gc
import signal
import sys
import threading
from pathlib import Path
from typing import TextIO

from logdoctor.doctor import Doctor
from logdoctor.exits import EXIT_OK, EXIT_USAGE
from logdoctor.library.matcher import Library
from logdoctor.model import Finding
from logdoctor.sources.follow import Watcher
from logdoctor.sources.state import StateError, load_state


def watch(
    targets: list[str],
    library: Library,
    out: TextIO,
    fmt: str = "json",
    state_file: str | None = None,
    metrics_port: int | None = None,
    poll_seconds: float = 1.0,
    verbose: bool = False,
) -> int:
    from logdoctor.report import make_reporter

    state_path = Path(state_file) if state_file else None
    try:
        state = load_state(state_path)
    except StateError as exc:
        print(f"logdoctor watch: {exc}", file=sys.stderr)
        return EXIT_USAGE
    reporter = make_reporter(fmt, out, verbose=verbose, live=True)
    metrics = None
    if metrics_port is not None:
        from logdoctor.metrics import Metrics, serve

        metrics = Metrics()
        try:
            serve(metrics, metrics_port)
        except OSError as exc:
            print(
                f"logdoctor watch: cannot serve metrics on port {metrics_port}: {exc.strerror or exc};"
                " give another --metrics-port",
                file=sys.stderr,
            )
            return EXIT_USAGE

    def emit(finding: Finding) -> None:
        try:
            reporter.finding(finding)
        except (OSError, ValueError) as exc:
            print(f"logdoctor watch: cannot write a finding ({exc})", file=sys.stderr)
        if metrics is not None:
            metrics.finding(finding)

    watcher = Watcher(
        targets,
        Doctor(library, on_internal_error=library.on_notice),
        emit,
        state,
        state_path,
        poll_seconds,
        on_poll=metrics.polled if metrics is not None else None,
    )
    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()
        watcher.wake.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    watcher.run(stop)
    reporter.close()
    # Python's last collections at exit walk every object the diagnosis holds: 0.7 s after the catch-up of
    # a 12 MB crash loop, ten times what the stop itself takes. Everything is written and saved by now, and
    # the end of the process frees what they would collect.
    gc.freeze()
    return EXIT_OK
