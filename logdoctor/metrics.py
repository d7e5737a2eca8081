"""Prometheus metrics and a health check for the sidecar (`watch --metrics-port N`).

prometheus-client writes the exposition format (a dependency that earns its place: the format has
escaping and type rules that are easy to get subtly wrong by hand); a small threaded HTTP server
answers /metrics and /healthz.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from logdoctor.model import Finding


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

    def finding(self, finding: Finding) -> None:
        if finding.kind != "finding":
            return  # the same finding amended or taken back: counted when it was first reported
        self.findings.labels(rule=finding.rule, severity=finding.severity).inc()
        self.last_finding.set(time.time())

    def polled(self, lines: int, data: int, files: int) -> None:
        if lines:
            self.lines.inc(lines)
        if data:
            self.bytes.inc(data)
        self.files.set(files)

    def render(self) -> bytes:
        return generate_latest(self.registry)


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
