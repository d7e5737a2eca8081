"""metrics.py: what `watch --metrics-port` exposes, counted from the stream as it is printed (findings,
updates, withdrawals), with labels that stay bounded (rule ids and severities)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from logdoctor import metrics as metrics_module
from logdoctor.doctor import Doctor
from logdoctor.framing import Line
from logdoctor.library.matcher import Library
from logdoctor.metrics import Metrics
from logdoctor.model import ErrorInfo, Finding, Fix
from logdoctor.pipeline import Pipeline
from tests.conftest import FIXTURES
from tests.test_doctor import traceback


def finding(
    ident: str,
    kind: str = "finding",
    primary: bool = True,
    rule: str = "memory.cuda-oom",
    severity: str = "error",
    launch: int = 1,
    source: str = "/var/log/vllm/vllm.log",
) -> Finding:
    return Finding.model_validate(
        {
            "kind": kind,
            "id": ident,
            "rule": rule,
            "severity": severity,
            "title": "t",
            "primary": primary,
            "source": source,
            "lines": (1, 2),
            "launch": launch,
            "process": None,
            "error": ErrorInfo(type="E", message="a message that must never become a label"),
            "explanation": "e",
            "fix": Fix(summary="s"),
        }
    )


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition: (name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def root_causes(metrics: Metrics) -> dict[str, float]:
    return {
        dict(labels)["rule"]: value
        for (name, labels), value in samples(metrics).items()
        if name == "logdoctor_root_causes_total"
    }


def failed_launches(metrics: Metrics) -> float:
    return samples(metrics)[("logdoctor_failed_launches_total", ())]


def test_every_metric_is_exposed_and_the_unlabelled_counters_start_at_zero() -> None:
    names = {name for name, _ in samples(Metrics())}
    assert {
        "logdoctor_lines_read_total",
        "logdoctor_bytes_read_total",
        "logdoctor_files_followed",
        "logdoctor_last_finding_timestamp_seconds",
        "logdoctor_failed_launches_total",
    } <= names
    assert failed_launches(Metrics()) == 0  # there before the first failure: increase() sees the first one


def test_a_root_cause_is_counted_once_however_often_it_is_updated() -> None:
    metrics = Metrics()
    metrics.finding(finding("f1"))
    metrics.finding(finding("f1", kind="update"))  # another rank saw it
    metrics.finding(finding("f1", kind="update"))
    assert root_causes(metrics) == {"memory.cuda-oom": 1}
    assert failed_launches(metrics) == 1
    assert samples(metrics)[("logdoctor_findings_total", (("rule", "memory.cuda-oom"), ("severity", "error")))] == 1


def test_a_finding_that_becomes_the_root_cause_later_is_counted_when_it_does() -> None:
    metrics = Metrics()
    metrics.finding(finding("f1", primary=False, rule="engine.core-init-failed"))
    metrics.finding(finding("f2", primary=False))
    assert root_causes(metrics) == {} and failed_launches(metrics) == 0
    metrics.finding(finding("f2", kind="update", primary=True))
    metrics.finding(finding("f2", kind="update", primary=True))
    assert root_causes(metrics) == {"memory.cuda-oom": 1}
    assert failed_launches(metrics) == 1


def test_a_root_cause_that_moves_counts_each_finding_once_and_the_launch_once() -> None:
    metrics = Metrics()
    metrics.finding(finding("f1", rule="engine.core-init-failed"))  # the wrapper first, alone
    metrics.finding(finding("f2"))  # the real cause arrives
    metrics.finding(finding("f1", kind="update", primary=False, rule="engine.core-init-failed"))
    metrics.finding(finding("f1", kind="update", primary=True, rule="engine.core-init-failed"))  # and back
    assert root_causes(metrics) == {"engine.core-init-failed": 1, "memory.cuda-oom": 1}
    assert failed_launches(metrics) == 1


def test_each_failed_launch_is_counted_in_each_file() -> None:
    metrics = Metrics()
    for number in range(1, 4):
        metrics.finding(finding(f"a{number}", launch=number))
        metrics.finding(finding(f"w{number}", launch=number, primary=False, rule="engine.core-init-failed"))
    metrics.finding(finding("b1", source="/var/log/vllm/other.log"))
    assert root_causes(metrics) == {"memory.cuda-oom": 4}
    assert failed_launches(metrics) == 4


def test_a_warning_root_cause_is_a_root_cause_but_not_a_failed_launch() -> None:
    metrics = Metrics()
    metrics.finding(finding("f1", rule="install.glibc", severity="warning"))
    assert root_causes(metrics) == {"install.glibc": 1} and failed_launches(metrics) == 0
    metrics.finding(finding("f1", kind="update", severity="error", rule="install.glibc"))
    assert failed_launches(metrics) == 1


def test_withdrawals_and_updates_to_findings_printed_before_a_restart_count_nothing() -> None:
    metrics = Metrics()
    metrics.finding(finding("f7", kind="update"))  # printed (and counted) by the run before the restart
    metrics.finding(finding("f8", kind="withdrawn"))
    assert root_causes(metrics) == {} and failed_launches(metrics) == 0
    metrics.finding(finding("f9"))
    metrics.finding(finding("f9", kind="withdrawn"))  # a counter does not go down
    assert root_causes(metrics) == {"memory.cuda-oom": 1}
    assert ("logdoctor_findings_total", (("rule", "memory.cuda-oom"), ("severity", "error"))) in samples(metrics)


def test_what_is_remembered_to_count_once_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_module, "MAX_TRACKED", 5)
    metrics = Metrics()
    for number in range(50):
        metrics.finding(finding(f"f{number}", launch=number))
    assert len(metrics._root) == 5 and len(metrics._failed) == 5
    assert root_causes(metrics) == {"memory.cuda-oom": 50} and failed_launches(metrics) == 50


def test_labels_are_rule_ids_and_severities_only() -> None:
    metrics = Metrics()
    metrics.finding(finding("f1"))
    metrics.finding(finding("f2", primary=False, rule="engine.core-init-failed"))
    for (name, labels), _ in samples(metrics).items():
        assert {key for key, _ in labels} <= {"rule", "severity"}, name
        assert "message" not in str(labels) and "/var/log" not in str(labels), name


def _stream(library: Library, texts: list[str]) -> Metrics:
    metrics = Metrics()
    doctor = Doctor(library)
    for number, text in enumerate(texts, 1):
        for found in doctor.feed(Line("-", number, text)):
            metrics.finding(found)
    for found in doctor.flush():
        metrics.finding(found)
    return metrics


def test_the_doctors_stream_of_a_wrapper_then_its_cause(library: Library) -> None:
    # The wrapper is the root cause until the engine's traceback arrives: both were the root cause once,
    # the launch failed once.
    texts = ["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
    metrics = _stream(library, texts + traceback())
    assert root_causes(metrics) == {"engine.core-init-failed": 1, "memory.cuda-oom": 1}
    assert failed_launches(metrics) == 1


def test_a_crash_loop_read_as_watch_reads_it(library: Library) -> None:
    launch = (FIXTURES / "engine-core-kv-cache-too-small-0.33.log").read_bytes()
    metrics = Metrics()
    pipeline = Pipeline(Doctor(library), metrics.finding)
    channel = pipeline.channel("/var/log/vllm/vllm.log")
    channel.feed(launch * 3)
    channel.close()
    pipeline.flush()
    assert root_causes(metrics) == {"memory.kv-cache-too-small": 3}
    assert failed_launches(metrics) == 3
    findings = {
        dict(labels)["rule"]: value
        for (name, labels), value in samples(metrics).items()
        if name == "logdoctor_findings_total"
    }
    assert findings == {"memory.kv-cache-too-small": 3, "engine.core-init-failed": 3}
