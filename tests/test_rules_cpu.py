"""patterns/cpu-rules.toml: the CPU backend's thread binding, raised in the engine core after vLLM's
config validation (rules of stage `engine`), against the NUMA nodes an injected machine probe reports.

Real vLLM 0.33.0 (VLLM_TARGET_DEVICE=cpu, llama-tiny, a host whose Mems_allowed_list is `0`):
  --tensor-parallel-size 2                                  Not enough allowed NUMA nodes to bind threads of
                                                            2 local CPUWorkers. Allowed NUMA nodes are [0]. ...
  VLLM_CPU_OMP_THREADS_BIND=0|1 --tensor-parallel-size 2    accepted (fixtures/battery: par-tp2-llama-pass)
  VLLM_CPU_OMP_THREADS_BIND=0 --tensor-parallel-size 2      Given number of CPU id list ['0'] doesn't match
                                                            local world size 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logdoctor.check import run_check
from logdoctor.probe.machine import memory_nodes, parse_id_list
from tests.family_helpers import family_sets, model_dir

SETS = family_sets("cpu-rules.toml")
CPU = {"VLLM_TARGET_DEVICE": "cpu"}


def nodes(*ids: int) -> Any:
    return lambda host, port: {"memory_nodes": list(ids)}


def statuses(command: str, env: dict[str, str], machine: Any) -> dict[str, str]:
    report = run_check(command.split(), version="0.33.0", environ=env, sets=SETS, machine=machine)
    return {r.id: r.status for r in report.audit.results}


def test_auto_binding_needs_a_numa_node_per_worker(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    report = run_check(
        f"vllm serve {model} --tensor-parallel-size 2".split(), version="0.33.0", environ=CPU, sets=SETS,
        machine=nodes(0),
    )  # fmt: skip
    unmet = [r for r in report.audit.results if r.status == "unmet"]
    assert [r.id for r in unmet] == ["numa-node-per-worker"] and unmet[0].after_validation
    assert report.audit.after is not None and report.audit.after.endswith("--tensor-parallel-size 1")
    assert statuses(f"vllm serve {model} --tensor-parallel-size 2", CPU, nodes(0, 1))["numa-node-per-worker"] == "met"
    # TP x PP counts
    assert statuses(f"vllm serve {model} -tp 2 -pp 2", CPU, nodes(0, 1))["numa-node-per-worker"] == "unmet"
    # CPU_VISIBLE_MEMORY_NODES keeps the allowed nodes it names
    hidden = {**CPU, "CPU_VISIBLE_MEMORY_NODES": "1,5"}
    assert statuses(f"vllm serve {model} -tp 2", hidden, nodes(0, 1))["numa-node-per-worker"] == "unmet"
    assert statuses(f"vllm serve {model} -tp 2", {**CPU, "CPU_VISIBLE_MEMORY_NODES": ""}, nodes(0, 1))[
        "numa-node-per-worker"
    ] == "met"


def test_a_manual_binding_gives_one_list_per_worker(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    one = {**CPU, "VLLM_CPU_OMP_THREADS_BIND": "0"}
    assert statuses(f"vllm serve {model} -tp 2", one, nodes(0)) == {
        "numa-node-per-worker": "met", "binding-list-per-worker": "unmet"
    }
    two = {**CPU, "VLLM_CPU_OMP_THREADS_BIND": "0-3|4-7"}
    assert statuses(f"vllm serve {model} -tp 2", two, nodes(0))["binding-list-per-worker"] == "met"
    assert "unmet" not in statuses(f"vllm serve {model} -tp 2", {**CPU, "VLLM_CPU_OMP_THREADS_BIND": "nobind"}, nodes(0)).values()


def test_not_the_cpu_platform_or_nothing_probed_audits_nothing(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert statuses(f"vllm serve {model} -tp 2", {}, nodes(0)) == {}
    # a log's launch (no probe): the nodes are unknown, the rule is not listed as unmet
    assert "unmet" not in statuses(f"vllm serve {model} -tp 2", CPU, None).values()


def test_the_allowed_nodes_are_read_as_vllm_reads_them(tmp_path: Path) -> None:
    assert parse_id_list("0-1,3") == [0, 1, 3]
    assert parse_id_list("0") == [0]
    status = tmp_path / "status"
    status.write_text("Name:\tpython\nMems_allowed:\t00000003\nMems_allowed_list:\t0-1\n")
    assert memory_nodes(status) == [0, 1]
    assert memory_nodes(tmp_path / "absent") is None
