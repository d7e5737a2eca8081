"""Prometheus metrics and a health check for the sidecar (`watch --metrics-port N`).

prometheus-client writes the exposition format (a dependency that earns its place: the format has
escaping and type rules that are easy to get subtly wrong by hand); a small threaded HTTP server
answers /metrics and /healthz.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from logdoctor.model import Finding

# Finding ids and launches remembered for counting root causes once: the latest, like the state's
# fingerprints; an amendment to an older finding is not counted.
MAX_TRACKED = 10_000

K = TypeVar("K")
V = TypeVar("V")


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.findings = Counter("logdoctor_findings", "Findings reported", ["rule", "severity"], registry=self.registry)
        self.lines = Counter("logdoctor_lines_read", "Log lines read", registry=self.registry)
        self.bytes = Counter("logdoctor_bytes_read", "Log bytes read", registry=self.registry)
        self.files = Gauge("logdoctor_files_followed", "Files being followed", registry=self.registry)
        self.last_finding = Gauge(
            "logdoctor_last_finding_timestamp_seconds", "Unix time of the last finding", registry=self.registry
        )
        # Labels are rule ids and severities only (both bounded by the pattern library), never messages or
        # paths: beside each pod, Prometheus's own target labels say which pod.
        self.root_causes = Counter(
            "logdoctor_root_causes",
            "Findings reported as, or later made, the root cause of their launch (once per finding)",
            ["rule", "severity"],
            registry=self.registry,
        )
        self.failed_launches = Counter(
            "logdoctor_failed_launches",
            "Launches whose root cause is an error (once per launch, however often the root cause moves)",
            registry=self.registry,
        )
        self._root: OrderedDict[str, bool] = OrderedDict()  # finding id -> counted as a root cause
        self._failed: OrderedDict[tuple[str, int], None] = OrderedDict()  # (source, launch) counted as failed

    def finding(self, finding: Finding) -> None:
        """Count a finding as the stream prints it: `findings` when first reported; `root_causes` when it
        is first the root cause of its launch, as printed or by a later update (a stream's root cause can
        move when more of the launch is read); `failed_launches` when its launch first has an error as
        its root cause."""
        if finding.kind == "finding":
            self.findings.labels(rule=finding.rule, severity=finding.severity).inc()
            self.last_finding.set(time.time())
            _remember(self._root, finding.id, False)
        elif finding.kind == "withdrawn" or finding.id not in self._root:
            # Taken back (what was counted stays counted: a counter does not go down), or an update to a
            # finding printed before a restart, which may have been counted as a root cause then: not twice.
            return
        if not finding.primary:
            return
        if not self._root[finding.id]:
            self._root[finding.id] = True
            self.root_causes.labels(rule=finding.rule, severity=finding.severity).inc()
        launch = (finding.source, finding.launch)
        if finding.severity == "error" and launch not in self._failed:
            _remember(self._failed, launch, None)
            self.failed_launches.inc()

    def polled(self, lines: int, data: int, files: int) -> None:
        if lines:
            self.lines.inc(lines)
        if data:
            self.bytes.inc(data)
        self.files.set(files)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _remember(seen: OrderedDict[K, V], key: K, value: V) -> None:
    """Add a key not held yet, forgetting the oldest beyond MAX_TRACKED."""
    if key in seen:
        return
    seen[key] = value
    if len(seen) > MAX_TRACKED:
        seen.popitem(last=False)


def serve(metrics: Metrics, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.split("?")[0] == "/metrics":
                body, kind = metrics.render(), CONTENT_TYPE_LATEST
            elif self.path.split("?")[0] == "/healthz":
                body, kind = b"ok\n", "text/plain"
            else:
                self.send_error(404, "try /metrics or /healthz")
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - silence access logs
            return

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
