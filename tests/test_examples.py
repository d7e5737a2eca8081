"""examples/: the fleet's configurations agree with what logdoctor exposes.

Every file parses; the Prometheus rules' unit tests pass under `promtool` (when it is installed) and
name only metrics `Metrics().render()` exposes and labels the metrics or the scrape targets carry; the
Fluent Bit and Vector snippets (neither tool runs here) read the containers the Kubernetes examples
name and only fields of the finding's JSON schema.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from logdoctor.metrics import Metrics
from logdoctor.model import ErrorInfo, Finding, Fix
from tests.test_deploy import manifests, sidecars

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROMETHEUS = EXAMPLES / "prometheus"
RULES = PROMETHEUS / "logdoctor-alerts.yml"
RULE_TESTS = PROMETHEUS / "logdoctor-alerts.test.yml"
SCRAPE = PROMETHEUS / "scrape-config.yml"
FLUENT_BIT = EXAMPLES / "fluent-bit" / "logdoctor.yaml"
VECTOR = EXAMPLES / "vector" / "logdoctor.toml"
FIELDS = set(Finding.model_fields)
# What the log agents must keep as labels (issue 14): bounded values only.
AGENT_LABELS = {"rule", "severity", "namespace", "pod"}
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (Debian: apt-get install prometheus)"
)


def load(path: Path) -> list[Any]:
    """The file's documents (a TOML file is one)."""
    if path.suffix == ".toml":
        with path.open("rb") as handle:
            return [tomllib.load(handle)]
    with path.open(encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def one(path: Path) -> Any:
    (doc,) = load(path)
    return doc


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in one(RULES)["groups"] for rule in group["rules"] if "alert" in rule]


def promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# --- every file ------------------------------------------------------------------------------------


def example_files() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", example_files(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_every_example_parses(path: Path) -> None:
    assert path.suffix in {".yml", ".yaml", ".toml"}, f"{path}: no test reads this kind of file"
    assert load(path), f"{path} is empty"


def test_the_fleet_examples_are_there() -> None:
    assert {RULES, RULE_TESTS, SCRAPE, FLUENT_BIT, VECTOR} <= set(example_files())


# --- Prometheus ------------------------------------------------------------------------------------


@needs_promtool
def test_promtool_runs_the_rules_unit_tests() -> None:
    tests = sorted(PROMETHEUS.glob("*.test.yml"))
    assert tests
    done = promtool("test", "rules", *(str(t.relative_to(ROOT)) for t in tests))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@needs_promtool
def test_promtool_accepts_the_rules() -> None:
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in done.stdout


@needs_promtool
def test_promtool_accepts_the_scrape_config(tmp_path: Path) -> None:
    # Debian's prometheus is built without Kubernetes service discovery: the same job with a static
    # target instead checks everything else (the relabelling, the rule file it loads).
    config = one(SCRAPE)
    for job in config["scrape_configs"]:
        assert job.pop("kubernetes_sd_configs") == [{"role": "pod"}]
        job["static_configs"] = [{"targets": ["127.0.0.1:9400"]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    shutil.copy(RULES, tmp_path / RULES.name)
    done = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def exposed_names() -> set[str]:
    """Every sample name a sidecar exposes, once it has reported a root cause."""
    metrics = Metrics()
    metrics.finding(
        Finding(
            id="f1",
            rule="memory.cuda-oom",
            severity="error",
            title="t",
            primary=True,
            source="/var/log/vllm/vllm.log",
            lines=(1, 2),
            launch=1,
            process=None,
            error=ErrorInfo(type="E", message="m"),
            explanation="e",
            fix=Fix(summary="s"),
        )
    )
    names = set()
    for line in metrics.render().decode().splitlines():
        if line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def test_the_rules_use_only_metrics_the_sidecar_exposes() -> None:
    exposed = exposed_names()
    used = {name for rule in alert_rules() for name in re.findall(r"\blogdoctor_\w+", rule["expr"])}
    assert used, "no rule reads logdoctor's metrics"
    assert used <= exposed, f"not exposed by Metrics().render(): {sorted(used - exposed)}"
    # Every series selector (a name before `{`) is logdoctor's or Prometheus's own `up`.
    selected = {name for rule in alert_rules() for name in re.findall(r"\b(\w+)\{", rule["expr"])}
    assert selected - used <= {"up"}, selected - used


def test_the_rules_name_only_labels_the_series_carry() -> None:
    # The sidecar's labels, and the target's: job and instance, plus what scrape-config.yml relabels.
    targets = {"job", "instance"} | {
        step["target_label"]
        for job in one(SCRAPE)["scrape_configs"]
        for step in job["relabel_configs"]
        if "target_label" in step
    }
    for rule in alert_rules():
        text = " ".join(rule.get("annotations", {}).values())
        named = set(re.findall(r"\$labels\.(\w+)", text))
        carried = targets | ({"rule", "severity"} if "logdoctor_root_causes_total" in rule["expr"] else set())
        assert named <= carried, f"{rule['alert']}: {sorted(named - carried)} are on no series it reads"
        assert set(re.findall(r"job=\"(\w+)\"", rule["expr"])) == {
            job["job_name"] for job in one(SCRAPE)["scrape_configs"]
        }, f"{rule['alert']} selects another job than scrape-config.yml scrapes"


def test_the_metric_labels_stay_bounded() -> None:
    # Rule ids and severities, never messages, paths or pods: in Prometheus's series the target gives the pod.
    metrics = Metrics()
    metrics.finding(
        Finding(
            id="f1",
            rule="unrecognized",
            severity="error",
            title="t",
            primary=True,
            source="/var/log/pods/ns_pod_0123456789ab/vllm/0.log",
            lines=(1, 2),
            launch=1,
            process="EngineCore pid=1",
            error=ErrorInfo(type="ValueError", message="a message"),
            explanation="e",
            fix=Fix(summary="s"),
            namespace="ns",
            pod="pod",
            container="vllm",
        )
    )
    labels = set(re.findall(r"[{,](\w+)=", metrics.render().decode()))
    assert labels == {"rule", "severity"}


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    cases: dict[str, set[bool]] = {}
    for test in one(RULE_TESTS)["tests"]:
        for case in test.get("alert_rule_test", []):
            cases.setdefault(case["alertname"], set()).add(bool(case.get("exp_alerts")))
    for rule in alert_rules():
        assert cases.get(rule["alert"]) == {True, False}, f"{rule['alert']}: tested {cases.get(rule['alert'])}"
    assert one(RULE_TESTS)["rule_files"] == [RULES.name]


def test_the_scrape_config_keeps_the_containers_and_ports_the_manifests_declare() -> None:
    (job,) = one(SCRAPE)["scrape_configs"]
    (keep,) = [step for step in job["relabel_configs"] if step.get("action") == "keep"]
    assert keep["source_labels"] == [
        "__meta_kubernetes_pod_container_name",
        "__meta_kubernetes_pod_container_port_name",
    ]
    assert one(SCRAPE)["rule_files"] == [RULES.name]
    for manifest in manifests():
        for sidecar in sidecars(manifest):
            ports = [p.get("name", "") for p in sidecar.container.get("ports", [])]
            assert any(re.fullmatch(keep["regex"], f"{sidecar.container['name']};{p}") for p in ports), sidecar.where


# --- the log agents --------------------------------------------------------------------------------


def logdoctor_containers() -> set[str]:
    return {s.container["name"] for m in manifests() for s in sidecars(m)}


def test_fluent_bit_tails_the_logdoctor_containers_and_only_them() -> None:
    pipeline = one(FLUENT_BIT)["pipeline"]
    (tail,) = pipeline["inputs"]
    assert tail["name"] == "tail" and "cri" in tail["multiline.parser"]
    for container in logdoctor_containers():  # /var/log/containers/<pod>_<namespace>_<container>-<id>.log
        assert fnmatch.fnmatch(f"/var/log/containers/vllm-0_serving_{container}-{'a' * 64}.log", tail["path"])
    assert not fnmatch.fnmatch(f"/var/log/containers/vllm-0_serving_vllm-{'a' * 64}.log", tail["path"])
    (kubernetes,) = [f for f in pipeline["filters"] if f["name"] == "kubernetes"]
    # The tail's tag is its tag prefix plus the path with / as .: the filter must strip exactly that.
    assert kubernetes["kube_tag_prefix"] == tail["tag"].rstrip("*") + "var.log.containers."
    assert kubernetes["merge_log"] is True


def test_fluent_bit_keeps_rule_severity_namespace_and_pod_as_loki_labels() -> None:
    pipeline = one(FLUENT_BIT)["pipeline"]
    (loki,) = [o for o in pipeline["outputs"] if o["name"] == "loki"]
    labels = dict(pair.strip().split("=", 1) for pair in loki["labels"].split(","))
    from_record = {k: v[1:] for k, v in labels.items() if v.startswith("$")}
    assert set(from_record) == AGENT_LABELS and all(k == v for k, v in from_record.items())
    assert set(from_record.values()) <= FIELDS
    # Findings only, and namespace/pod filled from the pod when the finding has none (the sidecar).
    (grep,) = [f for f in pipeline["filters"] if f["name"] == "grep"]
    assert grep["regex"].split()[0] in FIELDS
    (lua,) = [f for f in pipeline["filters"] if f["name"] == "lua"]
    assert f"function {lua['call']}(" in lua["code"]
    assert set(re.findall(r'record\["(\w+)"\]', lua["code"])) - {"kubernetes"} <= FIELDS
    assert {"namespace", "pod"} <= set(re.findall(r'record\["(\w+)"\] = ', lua["code"]))
    assert {o["name"] for o in pipeline["outputs"]} == {"loki", "es"}


def test_vector_reads_the_logdoctor_containers_and_only_them() -> None:
    source = one(VECTOR)["sources"]["logdoctor"]
    assert source["type"] == "kubernetes_logs"
    (glob,) = source["include_paths_glob_patterns"]
    for container in logdoctor_containers():  # /var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log
        assert fnmatch.fnmatch(f"/var/log/pods/serving_vllm-0_{'0' * 8}-1111-2222/{container}/0.log", glob)
    assert not fnmatch.fnmatch(f"/var/log/pods/serving_vllm-0_{'0' * 8}-1111-2222/vllm/0.log", glob)


def test_vector_keeps_rule_severity_namespace_and_pod_as_loki_labels() -> None:
    config = one(VECTOR)
    remap = config["transforms"]["logdoctor_findings"]
    assert remap["type"] == "remap" and remap["inputs"] == ["logdoctor"]
    vrl = remap["source"]
    # After `. = finding` the event is the finding: every path it reads or sets is a finding field.
    after = vrl.split(". = finding", 1)[1]
    assert set(re.findall(r"(?<![\w.])\.(\w+)", after)) - {"timestamp"} <= FIELDS
    assert {"namespace", "pod"} <= set(re.findall(r"\.(\w+) = pod_", after))
    assert "exists(finding.rule)" in vrl and "rule" in FIELDS
    loki = config["sinks"]["loki"]
    assert loki["inputs"] == ["logdoctor_findings"] and loki["encoding"]["codec"] == "json"
    templated = {k: re.fullmatch(r"\{\{ (\w+) \}\}", v) for k, v in loki["labels"].items()}
    from_event = {k: m[1] for k, m in templated.items() if m}
    assert set(from_event) == AGENT_LABELS and all(k == v for k, v in from_event.items())
    assert set(from_event.values()) <= FIELDS
    assert config["sinks"]["elasticsearch"]["inputs"] == ["logdoctor_findings"]


def test_a_real_finding_line_has_the_fields_the_agents_read() -> None:
    # What `watch` prints: every field is there, null when unknown (the sidecar's namespace and pod).
    line = Finding(
        id="f1",
        rule="memory.cuda-oom",
        severity="error",
        title="t",
        primary=True,
        source="/var/log/vllm/vllm.log",
        lines=(1, 2),
        launch=1,
        process=None,
        error=ErrorInfo(type="E", message="m"),
        explanation="e",
        fix=Fix(summary="s"),
    ).model_dump_json()
    assert all(f'"{field}":' in line for field in AGENT_LABELS | {"kind", "id", "primary"})
    assert '"namespace":null' in line and '"pod":null' in line


def test_the_readme_lists_every_metric() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`(logdoctor_\w+)", readme))
    exposed = {name for name in exposed_names() if not name.endswith("_created")}
    assert exposed <= documented, f"README's metrics table misses {sorted(exposed - documented)}"
    assert documented <= exposed, f"README names metrics that do not exist: {sorted(documented - exposed)}"
