"""The server rule sets (patterns/server-rules.toml): for each rule, a launch that breaks it (unmet, the
corrected command, and that command meeting every rule when checked again) and a near miss (met). The
machine facts come from an injected probe: no test binds a port or resolves a name of this machine.

Every run below, with vLLM's words, is in tests/rules_vllm_runs.toml, and
test_check_agrees_with_real_vllm (test_rules_server.py) checks that `check` predicts each verdict. Real
vLLM 0.33.0 agreed (`vllm serve /work/vllm-models/llama-tiny --load-format dummy ARGS`, CPU; the
battery's srv-* captures are the refused side of the socket, headless, keep-alive, metrics and gRPC rules):

  --host 127.0.0.1                                                 accepted
  --headless --api-server-count 0                                  accepted (headless, no API server)
  --sse-keep-alive-interval 5 / --enable-per-request-metrics       accepted
  --data-parallel-external-lb --data-parallel-hybrid-lb            ValueError: Cannot use more than one data
                                                                   parallel load balancing mode. ...
  --data-parallel-multi-port-external-lb --data-parallel-size 4 --data-parallel-size-local 3
                                                                   ValueError: Error: --data-parallel-size must be
                                                                   divisible by --data-parallel-size-local
  --data-parallel-multi-port-external-lb ... --uds x.sock          ValueError: Error: ... does not support --uds
  VLLM_USE_RUST_FRONTEND=1 --grpc-port P --port P                  ValueError: --grpc-port must differ from --port
                                                                   when HTTP uses TCP
  VLLM_USE_RUST_FRONTEND=1 --grpc-port 70000                       ValueError: --grpc-port must be between 0 and 65535
  --grpc --grpc-port 5                                             ValueError: --grpc and --grpc-port are mutually
                                                                   exclusive. ...
  --headless --data-parallel-hybrid-lb                             ValueError: data_parallel_hybrid_lb is not
                                                                   applicable in headless mode
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from logdoctor.probe.machine import probe
from tests.rules_helpers import check, free_machine, llama_folder, own_results, recheck, result, status, unmet


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return llama_folder(tmp_path / "llama")


def taken(*ports: int) -> Any:
    """A machine where `ports` are held by other processes (the next one up is free)."""

    def machine(host: str | None, port: int) -> dict[str, Any]:
        if port in ports:
            return {"host_resolves": True, "host_is_local": True, "port_free": False, "free_port": port + 1}
        return free_machine(host, port)

    return machine


def unresolvable(host: str | None, port: int) -> dict[str, Any]:
    return {"host_resolves": False} if host not in (None, "0.0.0.0") else free_machine(host, port)


def remote(host: str | None, port: int) -> dict[str, Any]:
    return (
        {"host_resolves": True, "host_is_local": False} if host not in (None, "0.0.0.0") else free_machine(host, port)
    )


# ---------------------------------------------------------------------------------------- binding


def test_a_port_in_use_gets_the_next_free_one(model: Path) -> None:
    report = check(f"vllm serve {model} --port 8123", machine=taken(8123))
    assert unmet(report) == ["port-free"]
    assert "--port 8124" in (report.audit.after or "")
    recheck(report, machine=taken(8123))
    assert check(f"vllm serve {model} --port 8123", machine=taken(9000)).ok
    # the default port is probed too
    assert unmet(check(f"vllm serve {model}", machine=taken(8000))) == ["port-free"]


def test_socket_rules_are_not_audited_without_a_probe_or_a_tcp_socket(model: Path) -> None:
    assert own_results(check(f"vllm serve {model} --port 8123", machine=None)) == []
    for flags in ("--uds ./vllm.sock", "--headless"):
        report = check(f"vllm serve {model} --port 8123 {flags}", machine=taken(8123))
        assert status(report, "port-free") is None


def test_a_host_that_does_not_resolve_binds_every_interface_instead(model: Path) -> None:
    report = check(f"vllm serve {model} --host 0.0.0.0.0", machine=unresolvable)
    assert unmet(report) == ["host-resolves"]
    assert "--host 0.0.0.0" in (report.audit.after or "") and "0.0.0.0.0" not in (report.audit.after or "")
    recheck(report, machine=unresolvable)
    assert status(check(f"vllm serve {model} --host localhost", machine=free_machine), "host-resolves") == "met"


def test_an_address_of_another_machine_is_unmet(model: Path) -> None:
    report = check(f"vllm serve {model} --host 10.255.255.1", machine=remote)
    assert unmet(report) == ["host-is-local"]
    assert "--host 0.0.0.0" in (report.audit.after or "")
    recheck(report, machine=remote)
    near = check(f"vllm serve {model} --host 127.0.0.1", machine=free_machine)
    assert status(near, "host-is-local") == "met" and near.ok


def test_the_probe_is_vllms_bind_test() -> None:
    # what the injected probes above stand for, on names no machine resolves or owns (no port is held)
    # (plus the NUMA nodes this process may use, which the CPU rule set reads: not a socket fact)
    without_nodes = {k: v for k, v in probe("0.0.0.0.0", 8123).items() if k != "memory_nodes"}
    assert without_nodes == {"host_resolves": False}
    assert set(probe(None, 70000)) <= {"memory_nodes"}


# ---------------------------------------------------------------------------------------- headless


def test_headless_starts_no_api_server(model: Path) -> None:
    report = check(f"vllm serve {model} --headless --api-server-count 2")
    assert unmet(report) == ["headless-no-api-servers"]
    assert "--api-server-count" not in (report.audit.after or "x")
    recheck(report)
    assert check(f"vllm serve {model} --headless --api-server-count 0").ok
    assert status(check(f"vllm serve {model} --api-server-count 2"), "headless-no-api-servers") is None


def test_headless_refuses_hybrid_load_balancing(model: Path) -> None:
    report = check(f"vllm serve {model} --headless --data-parallel-hybrid-lb")
    assert "headless-no-hybrid-lb" in unmet(report)
    recheck(report)


# ---------------------------------------------------------------------------------------- load balancing


# (load-balancing modes and the multi-port external load balancer: test_rules_parallelism.py)


# ---------------------------------------------------------------------------------------- server options


def test_per_request_metrics_need_the_engine_statistics(model: Path) -> None:
    report = check(f"vllm serve {model} --enable-per-request-metrics --disable-log-stats")
    assert unmet(report) == ["per-request-metrics-need-stats"]
    assert "--disable-log-stats" not in (report.audit.after or "x")
    recheck(report)
    assert check(f"vllm serve {model} --enable-per-request-metrics").ok


def test_the_sse_keep_alive_interval_is_not_negative(model: Path) -> None:
    report = check(f"vllm serve {model} --sse-keep-alive-interval -1")
    assert unmet(report) == ["sse-keep-alive-non-negative"]
    recheck(report)
    assert check(f"vllm serve {model} --sse-keep-alive-interval 5").ok


# ---------------------------------------------------------------------------------------- gRPC port


def test_the_grpc_port_needs_the_rust_frontend(model: Path) -> None:
    report = check(f"vllm serve {model} --grpc-port 50051")
    assert unmet(report) == ["grpc-port-needs-rust-frontend"]
    assert "--grpc-port" not in (report.audit.after or "x")
    recheck(report)
    assert check(f"vllm serve {model} --grpc-port 50051", environ={"VLLM_USE_RUST_FRONTEND": "1"}).ok
    assert unmet(check(f"vllm serve {model} --grpc-port 50051", environ={"VLLM_USE_RUST_FRONTEND": "0"})) == [
        "grpc-port-needs-rust-frontend"
    ]
    # 0.31 has no --grpc-port: no such set
    assert status(check(f"vllm serve {model}", version="0.31.0"), "grpc-port-needs-rust-frontend") is None


RUST = {"VLLM_USE_RUST_FRONTEND": "1"}
# The argspec records --grpc-port's type as vLLM's `_optional_type` without its inner type (int), so the
# command parser keeps the value as text and a comparison with a number is unknown: these rules wait for it.
TEXT_PORT = pytest.mark.xfail(reason="--grpc-port is parsed as text (argspec: _optional_type, inner int not recorded)")


@pytest.mark.parametrize(
    ("flags", "rule", "fixed"),
    [
        ("--grpc --grpc-port 5", "grpc-port-not-with-grpc", None),
        ("--headless --grpc-port 5", "grpc-port-needs-api-server", None),
        ("--api-server-count 0 --grpc-port 5", "grpc-port-needs-api-server", None),
        pytest.param("--grpc-port 70000", "grpc-port-range", "--grpc-port 0", marks=TEXT_PORT),
        pytest.param("--grpc-port 8000", "grpc-port-not-http-port", "--grpc-port 0", marks=TEXT_PORT),
    ],
)
def test_grpc_port_rules(model: Path, flags: str, rule: str, fixed: str | None) -> None:
    report = check(f"vllm serve {model} {flags}", environ=RUST)
    assert rule in unmet(report), report.audit.results
    if fixed:
        assert fixed in (report.audit.after or "")
    recheck(report, environ=RUST)


def test_grpc_port_near_misses(model: Path) -> None:
    assert check(f"vllm serve {model} --grpc-port 8000 --uds ./x.sock", environ=RUST).ok
    assert check(f"vllm serve {model} --grpc-port 0", environ=RUST).ok
    assert (
        result(check(f"vllm serve {model} --grpc-port 8001", environ=RUST), "grpc-port-not-http-port").status != "unmet"
    )


# ---------------------------------------------------------------------------------------- real vLLM's verdicts

RUNS = tomllib.loads((Path(__file__).with_name("rules_vllm_runs.toml")).read_text())["run"]
# Refused by vLLM, not predicted: --grpc-port is read as text (see TEXT_PORT).
NOT_PREDICTED = {("--grpc-port", "8391", "--port", "8391"), ("--grpc-port", "70000")}


@pytest.mark.parametrize("run", RUNS, ids=[" ".join(r["args"]) for r in RUNS])
def test_check_agrees_with_real_vllm(run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path(run["model"]).is_dir():
        pytest.skip(f"{run['model']} is not on this machine")
    monkeypatch.chdir(tmp_path)
    for name in run.get("files", []):
        (tmp_path / name).write_text("{{ messages }}" if name.endswith(".jinja") else "x = 1\n")
    report = check(["vllm", "serve", run["model"], "--load-format", "dummy", *run["args"]], environ=run.get("env", {}))
    if run["accepted"]:
        assert unmet(report) == [], run
    elif tuple(run["args"]) in NOT_PREDICTED:
        pytest.xfail("--grpc-port is parsed as text")
    else:
        assert unmet(report), run
