"""The scheduler and cache limit rule sets (patterns/scheduler-rules.toml): the ranges of SchedulerConfig's
and CacheConfig's fields, --max-num-batched-tokens against --max-num-seqs, and --sse-keep-alive-interval.
Each rule: broken (unmet, fixed, the fix meets every rule), a near-miss (met).

Real vLLM 0.33.0 (`VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 vllm serve /work/vllm-models/llama-tiny
--load-format dummy ARGS`):

    --gpu-memory-utilization 1.5 | 90   1 validation error for CacheConfig / gpu_memory_utilization /
                                         Input should be less than or equal to 1
    --gpu-memory-utilization 0          ... Input should be greater than 0
    --gpu-memory-utilization 0.5 --block-size 32   accepted
    --block-size 0                      1 validation error for CacheConfig / block_size / Input should be
                                         greater than 0
    --max-num-batched-tokens 64 --max-num-seqs 128   max_num_batched_tokens (64) must be greater than or
                                         equal to max_num_seqs (128).
    --sse-keep-alive-interval -1        Error: --sse-keep-alive-interval must be a non-negative integer (0
                                         disables keep-alive comments).
(the launches beyond the battery are in tests/data/rules_par_vllm_runs.toml)
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets

SETS = load_constraint_sets()
FEATURE = (
    "Scheduler and cache limits (--max-num-seqs, --max-num-batched-tokens, --gpu-memory-utilization, --block-size)"
)
LLAMA: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_attention_heads": 2,
    "max_position_embeddings": 2048,
}


def check(model: Path | str, args: str, version: str | None = None) -> CheckReport:
    return run_check(["vllm", "serve", str(model), *shlex.split(args)], version=version, sets=SETS, environ={})


def status(report: CheckReport, rule: str) -> str:
    found = [r.status for r in report.audit.results if r.id == rule and r.set.startswith("Scheduler")]
    return found[0] if found else "inactive"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    return tmp_path


# (rule, broken, what the corrected command says (or lacks: "-flag"), near-miss, versions)
CASES: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    (
        "batched-tokens-at-least-num-seqs",
        "--max-num-batched-tokens 64 --max-num-seqs 128",
        "--max-num-batched-tokens 128",
        "--max-num-batched-tokens 128 --max-num-seqs 128",
        ("0.27.0", "0.33.0"),
    ),
    (
        "max-num-batched-tokens-positive",
        "--max-num-batched-tokens 0",
        "-max-num-batched-tokens",
        "--max-num-batched-tokens 1",
        ("0.33.0",),
    ),
    ("max-num-seqs-positive", "--max-num-seqs 0", "-max-num-seqs", "--max-num-seqs 1", ("0.33.0",)),
    (
        "long-prefill-threshold-not-negative",
        "--long-prefill-token-threshold -1",
        "-long-prefill-token-threshold",
        "--long-prefill-token-threshold 0",
        ("0.33.0",),
    ),
    ("stream-interval-positive", "--stream-interval 0", "-stream-interval", "--stream-interval 1", ("0.33.0",)),
    (
        "prefill-schedule-interval-positive",
        "--prefill-schedule-interval 0",
        "-prefill-schedule-interval",
        "--prefill-schedule-interval 2",
        ("0.33.0",),
    ),
    # `--watermark -0.1` never reaches the rule: vLLM's parser takes -0.1 for an option (IndexError, real 0.33.0)
    ("watermark-not-negative", "--watermark=-0.1", "-watermark", "--watermark 0", ("0.33.0",)),
    ("watermark-below-1", "--watermark 1", "-watermark", "--watermark 0.99", ("0.33.0",)),
    (
        "gpu-memory-utilization-at-most-1",
        "--gpu-memory-utilization 90",
        "-gpu-memory-utilization",
        "--gpu-memory-utilization 1",
        ("0.27.0", "0.33.0"),
    ),
    (
        "gpu-memory-utilization-positive",
        "--gpu-memory-utilization 0",
        "-gpu-memory-utilization",
        "--gpu-memory-utilization 0.01",
        ("0.33.0",),
    ),
    ("block-size-positive", "--block-size 0", "-block-size", "--block-size 32", ("0.27.0", "0.33.0")),
]


def test_every_rule_has_a_case() -> None:
    rules = {r.id for s in SETS if s.feature == FEATURE for r in s.rule}
    assert rules == {case[0] for case in CASES} | {"default-batched-tokens-at-least-num-seqs"}


@pytest.mark.parametrize(("rule", "broken", "fixed", "near", "versions"), CASES, ids=[c[0] for c in CASES])
def test_a_rule_broken_fixed_and_kept(
    model: Path, rule: str, broken: str, fixed: str, near: str, versions: tuple[str, ...]
) -> None:
    for version in versions:
        report = check(model, broken, version)
        assert status(report, rule) == "unmet", version
        after = report.audit.after
        assert after is not None
        if fixed.startswith("-") and not fixed.startswith("--"):
            assert f"-{fixed}" not in after
        else:
            assert fixed in after
        again = check(model, shlex.join(shlex.split(after)[3:]), version)
        assert again.audit.unmet == [], [(r.id, r.evidence) for r in again.audit.unmet]
        kept = check(model, near, version)
        assert status(kept, rule) in ("met", "inactive") and kept.audit.unmet == [], version


def test_the_sse_check_is_0_29_and_later(model: Path) -> None:
    assert status(check(model, "--max-num-seqs 8", "0.28.0"), "sse-keep-alive-not-negative") == "inactive"


def test_a_device_default_budget_is_unknown(model: Path) -> None:
    report = check(model, "--max-num-seqs 3000")
    result = next(r for r in report.audit.results if r.id == "default-batched-tokens-at-least-num-seqs")
    assert result.status == "unknown" and "GPU" in (result.reveal or "")
    assert report.audit.unmet == []
    # at most the smallest default budget: met whatever the device
    assert status(check(model, "--max-num-seqs 2048"), "default-batched-tokens-at-least-num-seqs") == "met"


def test_a_plain_launch_has_no_scheduler_set(model: Path) -> None:
    assert not any(s.startswith("Scheduler") for s in check(model, "").audit.sets)
