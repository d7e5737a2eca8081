"""End to end with a real Prometheus: `logdoctor watch --metrics-port` scraped every second, the shipped
alerting rules (examples/prometheus/logdoctor-alerts.yml; only LogdoctorSidecarDown's `for: 5m` made 2s)
loaded, a failure planted in the watched folder, and Prometheus's own API asked until the alerts fire.

    .venv/bin/python bench/prometheus_e2e.py          # needs `prometheus` on PATH (Debian: apt-get install prometheus)

1. starts `logdoctor watch DIR --metrics-port P` (this interpreter's logdoctor) on an empty folder and a
   `prometheus` whose generated configuration scrapes it every second as job `logdoctor` with the
   target labels namespace/pod that examples/prometheus/scrape-config.yml's relabelling gives in a
   cluster, and evaluates the rules every second;
2. waits until Prometheus has scraped the sidecar once (so the failed-launches counter is seen at 0);
3. writes the bundled KV-cache failure (fixtures/engine-core-kv-cache-too-small-0.33.log) to DIR/vllm.log
   and polls /api/v1/alerts until LogdoctorRootCause fires for memory.kv-cache-too-small;
4. appends the same failing launch twice more (a crash loop) and polls until LogdoctorCrashLoop fires;
5. stops the sidecar and polls until LogdoctorSidecarDown fires.

Every wait polls with a deadline; nothing sleeps a fixed time. Both processes are stopped and the
temporary folder removed at the end, whatever happened. Exit status: 0 when the three alerts fired, 1
when one did not (what was seen is printed), 77 (skipped) when `prometheus` is not installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "examples" / "prometheus" / "logdoctor-alerts.yml"
FIXTURE = ROOT / "fixtures" / "engine-core-kv-cache-too-small-0.33.log"
RULE = "memory.kv-cache-too-small"
SKIPPED = 77  # the automake convention for a test that could not run
DEADLINE = 90.0  # seconds for each wait; on an idle machine each takes a few
T = TypeVar("T")
STARTED = time.monotonic()


def say(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


def wait_for(what: str, check: Callable[[], T | None], procs: dict[str, subprocess.Popen[bytes]]) -> T:
    """Poll `check` every 0.2 s until it returns something, a process dies or the deadline passes."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            result = check()
        except (OSError, ValueError):  # not listening yet, or an answer cut short
            result = None
        if result is not None:
            return result
        for name, proc in procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with status {proc.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} after {DEADLINE:.0f} s")
        time.sleep(0.2)


def rules(folder: Path) -> Path:
    """The shipped rules, but for the 5 minutes the sidecar must be down before it is alerted on."""
    text = RULES.read_text()
    if text.count("for: 5m") != 1:
        raise RuntimeError(f"{RULES}: expected one `for: 5m` (LogdoctorSidecarDown's) to shorten")
    path = folder / "logdoctor-alerts.yml"
    path.write_text(text.replace("for: 5m", "for: 2s"))
    return path


def prometheus_config(folder: Path, metrics_port: int) -> Path:
    # JSON is YAML: no YAML writer needed. The static labels stand for the cluster's relabelling.
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules(folder))],
        "scrape_configs": [
            {
                "job_name": "logdoctor",
                "static_configs": [
                    {"targets": [f"127.0.0.1:{metrics_port}"], "labels": {"namespace": "e2e", "pod": "vllm-0"}}
                ],
            }
        ],
    }
    path = folder / "prometheus.yml"
    path.write_text(json.dumps(config, indent=2))
    return path


def alerts(api: str) -> list[dict[str, Any]]:
    answer = json.loads(get(f"{api}/api/v1/alerts"))
    found: list[dict[str, Any]] = answer["data"]["alerts"]
    return found


def firing(api: str, name: str, **labels: str) -> dict[str, Any] | None:
    for alert in alerts(api):
        if (
            alert["labels"].get("alertname") == name
            and alert["state"] == "firing"
            and all(alert["labels"].get(k) == v for k, v in labels.items())
        ):
            return alert
    return None


def query(api: str, promql: str) -> list[dict[str, Any]]:
    answer = json.loads(get(f"{api}/api/v1/query?" + urllib.parse.urlencode({"query": promql})))
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def show_alert(alert: dict[str, Any]) -> None:
    labels = ", ".join(f"{k}={v}" for k, v in sorted(alert["labels"].items()))
    say(f"  {alert['state'].upper()}: {labels}")
    say(f"    active since {alert['activeAt']}, value {alert['value']}")
    say(f"    summary: {alert['annotations'].get('summary')}")


def show_findings(out: Path) -> None:
    for line in out.read_text().splitlines():
        f = json.loads(line)
        say(f"  {f['kind']} {f['id']}: {f['rule']} ({f['severity']}) primary={f['primary']} launch {f['launch']}")


def stop(name: str, proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    say(f"{name} stopped (exit status {proc.returncode})")


def main() -> int:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        print("SKIPPED: `prometheus` is not on PATH (Debian/Ubuntu: apt-get install prometheus)", flush=True)
        return SKIPPED
    version = subprocess.run([prometheus, "--version"], capture_output=True, text=True).stdout.splitlines()
    say(f"{prometheus}: {version[0] if version else '?'}")
    work = Path(tempfile.mkdtemp(prefix="logdoctor-prom-e2e-"))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    metrics_port, web_port = free_port(), free_port()
    api = f"http://127.0.0.1:{web_port}"
    try:
        logs = work / "logs"
        logs.mkdir()
        out = work / "findings.jsonl"
        env = dict(os.environ)
        env.setdefault("LOGDOCTOR_CACHE", str(work / "cache"))
        watch = [sys.executable, "-m", "logdoctor", "watch", str(logs), "--state", str(work / "state.json")]
        watch += ["--metrics-port", str(metrics_port)]
        with out.open("wb") as sink, (work / "watch.err").open("wb") as err:
            procs["logdoctor"] = subprocess.Popen(watch, stdout=sink, stderr=err, env=env, cwd=work)
        say(f"started: logdoctor watch {logs} --metrics-port {metrics_port}")
        config = prometheus_config(work, metrics_port)
        with (work / "prometheus.err").open("wb") as err:
            procs["prometheus"] = subprocess.Popen(
                [
                    prometheus,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={work / 'data'}",
                    f"--web.listen-address=127.0.0.1:{web_port}",
                    "--log.level=warn",
                ],
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=work,
            )
        say(f"started: prometheus on {api}, scraping 127.0.0.1:{metrics_port} every 1s, rules from {RULES.name}")

        wait_for("/healthz", lambda: get(f"http://127.0.0.1:{metrics_port}/healthz") == "ok\n" or None, procs)
        wait_for("ready Prometheus", lambda: "Ready" in get(f"{api}/-/ready") or None, procs)
        baseline = wait_for(
            "first scrape of the sidecar",
            lambda: query(api, 'logdoctor_failed_launches_total{job="logdoctor"}') or None,
            procs,
        )
        say(f"scraped: logdoctor_failed_launches_total = {baseline[0]['value'][1]}, up = 1; alerts: {alerts(api)}")

        launch = FIXTURE.read_bytes()
        with (logs / "vllm.log").open("ab") as log:
            log.write(launch)
        planted = time.monotonic()
        say(f"planted: {FIXTURE.name} ({len(launch)} bytes) -> {logs / 'vllm.log'}")
        alert = wait_for("firing LogdoctorRootCause", lambda: firing(api, "LogdoctorRootCause", rule=RULE), procs)
        say(f"LogdoctorRootCause fired {time.monotonic() - planted:.1f}s after the failure was written:")
        show_alert(alert)

        with (logs / "vllm.log").open("ab") as log:
            log.write(launch + launch)
        planted = time.monotonic()
        say("planted: the same failing launch twice more (3 failed launches: a crash loop)")
        alert = wait_for("firing LogdoctorCrashLoop", lambda: firing(api, "LogdoctorCrashLoop"), procs)
        say(f"LogdoctorCrashLoop fired {time.monotonic() - planted:.1f}s after the second and third failures:")
        show_alert(alert)

        say("what the sidecar printed (its JSON lines, abridged):")
        show_findings(out)
        say("what Prometheus holds:")
        for promql in ("logdoctor_root_causes_total", "logdoctor_failed_launches_total", "up"):
            for series in query(api, promql + '{job="logdoctor"}'):
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(series["metric"].items()) if k != "__name__")
                say(f"  {promql}{{{labels}}} {series['value'][1]}")
        stop("logdoctor", procs.pop("logdoctor"))
        stopped = time.monotonic()
        alert = wait_for("firing LogdoctorSidecarDown", lambda: firing(api, "LogdoctorSidecarDown"), procs)
        say(f"LogdoctorSidecarDown fired {time.monotonic() - stopped:.1f}s after the sidecar stopped (`for` 2s here):")
        show_alert(alert)
        say("all alerts:")
        for alert in alerts(api):
            show_alert(alert)
        say("PASS: the rules fired on the planted failure, on the crash loop and on the stopped sidecar")
        return 0
    except (RuntimeError, TimeoutError) as exc:
        say(f"FAIL: {exc}")
        for name in ("watch.err", "prometheus.err", "findings.jsonl"):
            path = work / name
            if path.exists() and path.stat().st_size:
                say(f"--- {name} (last 2000 bytes):\n{path.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError, ValueError):
            say(f"alerts: {alerts(api)}")
        return 1
    finally:
        for name, proc in procs.items():
            stop(name, proc)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
