"""The parallelism rule sets (patterns/parallelism-rules.toml): for every rule, a launch that breaks it
(unmet, with the fix in the corrected command, which meets every rule when checked again), a near-miss
on the other side of the boundary (met), and unknown when the model's config.json is nowhere to be read.

Real vLLM 0.33.0 agreed on both sides of these boundaries (`VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 vllm
serve /work/vllm-models/<model> --load-format dummy ARGS`; "accepted" = it got past configuration to
`Initializing a V1 LLM engine`, then died in the engine core for lack of vllm._C on this CPU machine):

    llama-tiny (2 heads, 2 KV heads, dense)
      -tp 4            Total number of attention heads (2) must be divisible by tensor parallel size (4).
      -tp 2            accepted (with VLLM_CPU_OMP_THREADS_BIND=0|1)
      -pp 2            accepted (LlamaForCausalLM implements SupportsPP)
      --enable-expert-parallel       Number of experts in the model must be greater than 0 when expert ...
      -dp 2 -dpn 0     Non-MoE models do not support external data parallel mode. ...
      -dpn 0           data_parallel_external_lb can only be set when data_parallel_size > 1
      -dpl 2           data_parallel_size_local (2) must be <= data_parallel_size (1)
      -dp 2 -dpl 2     accepted past the parallel config
      -tp 2 -n 3       Invalid data-parallel launch options: `--nnodes 3` must evenly divide the total ...
      -tp 2 -n 2 -r 2  Invalid data-parallel launch options: `--node-rank` must be between 0 and 1; ...
      -tp 2 -n 2 -dpb ray   Invalid data-parallel launch options: `--nnodes 2` requires ...
      -dcp 2           tp_size=1 must be divisible by dcp_size=2.
      --distributed-executor-backend mpi   not enough values to unpack (expected 2, got 1)
    qwen2-tiny-14heads (14 heads, 2 KV heads)
      -tp 4            Total number of attention heads (14) must be divisible by tensor parallel size (4).
      -tp 2            accepted
      --hf-overrides '{"num_attention_heads": 7}' -tp 2   ... attention heads (7) must be divisible by ... (2).
    qwen3-tiny-32heads: -tp 3  ... attention heads (32) must be divisible by tensor parallel size (3).
    bert-tiny (BertModel): -pp 2   Pipeline parallelism is not supported for this model. ...
    mixtral-tiny (4 experts)
      -dp 2 -dpn 3     data_parallel_rank (3) must be in the range [0, 2)
      -dp 2 --data-parallel-hybrid-lb   Invalid data-parallel launch options: `--data-parallel-hybrid-lb`
                       requires `--data-parallel-size-local`. ...
      -dp 2 --data-parallel-hybrid-lb --data-parallel-external-lb   Cannot use more than one data parallel
                       load balancing mode. ...
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets

SETS = load_constraint_sets()
FEATURE = "Parallelism (tensor, pipeline, expert, data, context; nodes)"

# meta-llama/Llama-3.1-8B-Instruct's config.json, as published.
LLAMA_31_8B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "attention_bias": False,
    "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009],
    "hidden_act": "silu",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 131072,
    "model_type": "llama",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}
MOE: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"],
    "model_type": "mixtral",
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "max_position_embeddings": 32768,
}
MQA: dict[str, Any] = {**LLAMA_31_8B, "num_key_value_heads": 1}
BERT: dict[str, Any] = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "num_attention_heads": 12,
    "max_position_embeddings": 512,
}
GQA_24_2: dict[str, Any] = {**LLAMA_31_8B, "num_attention_heads": 24, "num_key_value_heads": 2}
GQA_48_8: dict[str, Any] = {**LLAMA_31_8B, "num_attention_heads": 48, "num_key_value_heads": 8}


def folder(root: Path, config: dict[str, Any], name: str = "model") -> Path:
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config))
    return path


def check(
    model: Path | str, args: str, version: str | None = None, environ: dict[str, str] | None = None
) -> CheckReport:
    return run_check(
        ["vllm", "serve", str(model), *shlex.split(args)], version=version, sets=SETS, environ=environ or {}
    )


def status(report: CheckReport, rule: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule and r.set.startswith("Parallelism")]
    return found[0] if found else "inactive"


MULTI_PORT = "-dp 4 -dpl 2 --data-parallel-multi-port-external-lb"

# (rule, model config, a launch that breaks it, what the corrected command says, a near-miss, version)
CASES: list[tuple[str, dict[str, Any], str, str, str, str | None]] = [
    ("tp-divides-attention-heads", LLAMA_31_8B, "-tp 3", "--tensor-parallel-size 2", "-tp 4", None),
    ("tp-and-kv-heads", GQA_48_8, "-tp 6", "--tensor-parallel-size 4", "-tp 16", None),
    ("expert-parallel-needs-experts", LLAMA_31_8B, "--enable-expert-parallel", "", "-tp 1", None),
    ("pipeline-parallel-supported", BERT, "-pp 2", "", "-tp 2", None),
    ("dcp-gqa-tp-above-kv-heads", LLAMA_31_8B, "-tp 8 -dcp 2", "-tp 8", "-tp 16 -dcp 2", None),
    ("dcp-at-most-tp-over-kv-heads", LLAMA_31_8B, "-tp 16 -dcp 4", "-tp 16", "-tp 16 -dcp 2", None),
    ("dcp-divides-queries-per-kv-head", GQA_24_2, "-tp 24 -dcp 8", "-tp 24", "-tp 24 -dcp 4", None),
    ("dp-size-local-at-most-dp-size", LLAMA_31_8B, "-dpl 2", "--data-parallel-size 2", "-dp 2 -dpl 2", None),
    ("external-lb-needs-dp", MOE, "-dpn 0", "", "-dp 2 -dpn 0", None),
    ("dcp-divides-tp", MQA, "-dcp 2", "", "-tp 2 -dcp 2", None),
    ("dcp-with-pcp", MQA, "-tp 2 -pcp 2 -dcp 3", "", "-tp 2 -pcp 2 -dcp 2", None),
    ("dp-rank-in-range", MOE, "-dp 2 -dpn 3", "--data-parallel-rank 1", "-dp 2 -dpn 1", None),
    ("dp-start-rank-in-range", MOE, "-dp 2 -dpl 1 -dpr 5", "--data-parallel-start-rank 0", "-dp 2 -dpl 1 -dpr 1", None),
    (
        "nnodes-needs-mp-executor",
        LLAMA_31_8B,
        "-tp 2 -n 2 --distributed-executor-backend ray",
        "mp",
        "-tp 2 -n 2 --distributed-executor-backend mp",
        None,
    ),
    (
        "executor-backend-known",
        LLAMA_31_8B,
        "--distributed-executor-backend mpi",
        "--distributed-executor-backend mp",
        "--distributed-executor-backend my_pkg.executors.MyExecutor",
        None,
    ),
    (
        "hybrid-and-external-lb",
        MOE,
        "-dp 2 -dpl 1 --data-parallel-hybrid-lb --data-parallel-external-lb -dpn 0",
        "",
        "-dp 2 -dpl 1 --data-parallel-hybrid-lb",
        None,
    ),
    ("nnodes-needs-mp-dp-backend", LLAMA_31_8B, "-tp 2 -n 2 -dpb ray", "", "-tp 2 -n 2 -dpb mp", None),
    ("nnodes-divides-world-size", LLAMA_31_8B, "-tp 2 -n 3", "--nnodes 2", "-tp 2 -n 2", None),
    ("node-rank-in-range", LLAMA_31_8B, "-tp 2 -n 2 -r 2", "--node-rank 1", "-tp 2 -n 2 -r 1", None),
    ("external-dp-needs-moe", LLAMA_31_8B, "-dp 2 -dpn 0", "", "-dp 2 -dpn 0 --enable-expert-parallel", "moe"),
    (
        "external-lb-needs-rank",
        MOE,
        "-dp 2 --data-parallel-external-lb",
        "--data-parallel-rank 0",
        "-dp 2 -n 2 --data-parallel-external-lb",
        None,
    ),
    ("external-rank-needs-size-local-1", MOE, "-dp 2 -dpn 0 -dpl 2", "", "-dp 2 -dpn 0 -dpl 1", None),
    (
        "hybrid-lb-needs-size-local",
        MOE,
        "-dp 2 --data-parallel-hybrid-lb",
        "--data-parallel-size-local 2",
        "-dp 2 -dpl 1 --data-parallel-hybrid-lb",
        None,
    ),
    (
        "one-lb-mode",
        MOE,
        "-dp 2 --data-parallel-hybrid-lb --data-parallel-external-lb",
        "",
        "-dp 2 --data-parallel-external-lb -dpn 0",
        None,
    ),
    (
        "external-lb-rank-inferable",
        MOE,
        "-dp 2 -n 3 -pp 3 --data-parallel-external-lb",
        "--data-parallel-rank 0",
        "-dp 3 -n 3 --data-parallel-external-lb",
        None,
    ),
    ("pcp-without-dp", MQA, "-tp 2 -pcp 2 -dp 2", "--data-parallel-size 1", "-tp 2 -pcp 2", "0.27.0"),
    ("multi-port-no-grpc", MOE, f"{MULTI_PORT} --grpc", "", MULTI_PORT, None),
    ("multi-port-no-uds", MOE, f"{MULTI_PORT} --uds /tmp/vllm.sock", "", MULTI_PORT, None),
    (
        "multi-port-ssl-pair",
        MOE,
        f"{MULTI_PORT} --ssl-keyfile key.pem",
        "",
        f"{MULTI_PORT} --ssl-keyfile k --ssl-certfile c",
        None,
    ),
    (
        "multi-port-one-api-server",
        MOE,
        f"{MULTI_PORT} --api-server-count 2",
        "",
        f"{MULTI_PORT} --api-server-count 1",
        None,
    ),
    ("multi-port-no-dp-rank", MOE, f"{MULTI_PORT} -dpn 0", "", MULTI_PORT, None),
    ("multi-port-alone", MOE, f"{MULTI_PORT} --data-parallel-hybrid-lb", "", MULTI_PORT, None),
    ("multi-port-needs-dp", MOE, "--data-parallel-multi-port-external-lb", "", MULTI_PORT, None),
    ("multi-port-needs-size-local", MOE, "-dp 4 -dpm", "--data-parallel-size-local 4", MULTI_PORT, None),
    ("multi-port-size-local-within-dp", MOE, "-dp 2 -dpl 4 -dpm", "--data-parallel-size 4", MULTI_PORT, None),
    (
        "multi-port-dp-multiple-of-size-local",
        MOE,
        "-dp 6 -dpl 4 -dpm",
        "--data-parallel-size-local 3",
        "-dp 6 -dpl 3 -dpm",
        None,
    ),
    ("multi-port-ranks-within-dp", MOE, f"{MULTI_PORT} -r 2", "", f"{MULTI_PORT} -r 1", None),
]


def test_every_rule_of_the_sets_has_a_case() -> None:
    rules = {r.id for s in SETS if s.feature == FEATURE for r in s.rule}
    assert rules == {case[0] for case in CASES} | {"world-size-fits-visible-gpus"}


@pytest.mark.parametrize(("rule", "config", "broken", "fixed", "near", "version"), CASES, ids=[c[0] for c in CASES])
def test_a_rule_broken_fixed_and_kept(
    tmp_path: Path, rule: str, config: dict[str, Any], broken: str, fixed: str, near: str, version: str | None
) -> None:
    model = folder(tmp_path, config)
    report = check(model, broken, "0.27.0" if version == "0.27.0" else None)
    assert status(report, rule) == "unmet", [(r.id, r.status) for r in report.audit.results]
    after = report.audit.after
    assert after is not None and fixed in after
    again = check(model, shlex.join(shlex.split(after)[3:]), "0.27.0" if version == "0.27.0" else None)
    assert again.audit.unmet == [], [(r.id, r.evidence) for r in again.audit.unmet]
    near_config = MOE if version == "moe" else config
    kept = check(folder(tmp_path, near_config, "near"), near, "0.27.0" if version == "0.27.0" else None)
    assert status(kept, rule) in ("met", "inactive"), [(r.id, r.status) for r in kept.audit.results]
    assert kept.audit.unmet == [], [(r.id, r.evidence) for r in kept.audit.unmet]


def test_the_world_size_fits_the_visible_gpus(tmp_path: Path) -> None:
    model = folder(tmp_path, LLAMA_31_8B)
    two = {"CUDA_VISIBLE_DEVICES": "0,1"}
    report = check(model, "-tp 4", environ=two)
    assert status(report, "world-size-fits-visible-gpus") == "unmet"
    after = report.audit.after or ""
    assert "--tensor-parallel-size 2" in after
    assert check(model, shlex.join(shlex.split(after)[3:]), environ=two).audit.unmet == []
    assert status(check(model, "-tp 2", environ=two), "world-size-fits-visible-gpus") == "met"
    assert status(check(model, "-tp 2 -pp 2", environ=two), "world-size-fits-visible-gpus") == "unmet"
    # a backend given, several nodes, or no CUDA_VISIBLE_DEVICES: vLLM does not count them here
    assert (
        status(check(model, "-tp 4 --distributed-executor-backend ray", environ=two), "world-size-fits-visible-gpus")
        == "met"
    )
    assert status(check(model, "-tp 4 -n 2", environ=two), "world-size-fits-visible-gpus") == "met"
    assert status(check(model, "-tp 4"), "world-size-fits-visible-gpus") == "met"
    nothing = check(model, "-tp 2", environ={"CUDA_VISIBLE_DEVICES": ""})
    assert status(nothing, "world-size-fits-visible-gpus") == "unmet"
    assert "make GPUs visible" in (next(r for r in nothing.audit.unmet).fix or "")


def test_the_heads_are_unknown_without_the_model_folder() -> None:
    report = check("nobody/not-in-any-cache", "-tp 3")
    result = next(r for r in report.audit.results if r.id == "tp-divides-attention-heads")
    assert result.status == "unknown" and "num_attention_heads" in (result.reveal or "")
    assert report.audit.unmet == []
    # no fix is computed from what nobody knows
    assert report.audit.after is None


def test_hf_overrides_change_the_head_count(tmp_path: Path) -> None:
    model = folder(tmp_path, {**LLAMA_31_8B, "num_attention_heads": 14, "num_key_value_heads": 2})
    report = check(model, "--hf-overrides '{\"num_attention_heads\": 7}' -tp 2")
    assert status(report, "tp-divides-attention-heads") == "unmet"
    assert "--tensor-parallel-size 1" in (report.audit.after or "")
    assert status(check(model, "-tp 2"), "tp-divides-attention-heads") == "met"


def test_a_multimodal_text_config_gives_the_heads(tmp_path: Path) -> None:
    config = {
        "architectures": ["LlavaForConditionalGeneration"],
        "model_type": "llava",
        "text_config": {"num_attention_heads": 40, "num_key_value_heads": 8},
    }
    report = check(folder(tmp_path, config), "-tp 16")
    assert status(report, "tp-divides-attention-heads") == "unmet"
    assert "--tensor-parallel-size 8" in (report.audit.after or "")


def test_a_model_type_read_its_own_way_is_unknown(tmp_path: Path) -> None:
    config = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "num_attention_heads": 71}
    assert status(check(folder(tmp_path, config), "-tp 2"), "tp-divides-attention-heads") == "unknown"


def test_a_plain_launch_has_no_parallelism_set(tmp_path: Path) -> None:
    report = check(folder(tmp_path, LLAMA_31_8B), "")
    assert not any(s.startswith("Parallelism") for s in report.audit.sets)


def test_each_release_range_has_its_set() -> None:
    labels = {s.id: s.versions for s in SETS if s.feature == FEATURE}
    assert labels == {
        "parallelism-0.27": ">=0.27,<0.30",
        "parallelism-0.30": ">=0.30,<0.31",
        "parallelism-0.31": ">=0.31,<0.33",
        "parallelism-0.33": ">=0.33",
    }


def test_older_releases_name_the_world_size_without_pcp(tmp_path: Path) -> None:
    model = folder(tmp_path, LLAMA_31_8B)
    old = next(r for r in check(model, "-tp 2 -n 3", "0.29.0").audit.results if r.id == "nnodes-divides-world-size")
    new = next(r for r in check(model, "-tp 2 -n 3", "0.30.0").audit.results if r.id == "nnodes-divides-world-size")
    assert "prefill-context-parallel-size" not in old.vllm_message
    assert "prefill-context-parallel-size" in new.vllm_message


# --- the Done-when, end to end: the real `logdoctor check` process ----------------------------------


def logdoctor_exe() -> str:
    beside = Path(sys.executable).with_name("logdoctor")
    return str(beside) if beside.exists() else "logdoctor"


def run_logdoctor(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = ["check", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "3"]
    return subprocess.run(
        [logdoctor_exe(), *command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def base_env(tmp_path: Path) -> dict[str, str]:
    import os

    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LOGDOCTOR_CACHE", "HOME", "LANG", "SYSTEMROOT")}
    return keep | {"HF_HUB_CACHE": str(tmp_path / "empty-hub"), "NO_COLOR": "1"}


def assert_done_when(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode != 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "tp-divides-attention-heads" in out and "✘" in out
    corrected = out.split("Corrected command:", 1)[1].strip().splitlines()[0]
    assert corrected == "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2"


def test_done_when_a_local_folder_named_by_the_model_path(tmp_path: Path) -> None:
    folder(tmp_path / "meta-llama", LLAMA_31_8B, "Llama-3.1-8B-Instruct")
    assert_done_when(run_logdoctor(tmp_path, base_env(tmp_path)))


def test_done_when_the_hugging_face_cache(tmp_path: Path) -> None:
    repo = tmp_path / "hub" / "models--meta-llama--Llama-3.1-8B-Instruct"
    folder(repo / "snapshots", LLAMA_31_8B, "0e9e39f249a16976918f6564b8830bc894c89659")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0e9e39f249a16976918f6564b8830bc894c89659")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = base_env(tmp_path) | {"HF_HUB_CACHE": str(tmp_path / "hub")}
    assert_done_when(run_logdoctor(elsewhere, env))
