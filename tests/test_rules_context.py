"""The context-length rule sets (patterns/context-rules.toml): --max-model-len against the maximum vLLM
derives from config.json (length keys, RoPE scaling, sliding window, sentence-transformers config, the
VLLM_ALLOW_LONG_MAX_MODEL_LEN override), and the scheduler's limits measured against the context length.
Each rule: broken (unmet, fixed, the fix meets every rule), a near-miss (met), unknown without the model.

Real vLLM 0.33.0 on both sides (`VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 vllm serve
/work/vllm-models/llama-tiny --load-format dummy ARGS`; llama-tiny: max_position_embeddings 2048, rope_theta
only; "accepted" = `Initializing a V1 LLM engine`):

    --max-model-len 100000 | 32k | 4K | 4096   User-specified max_model_len (100000 | 32000 | 4096 | 4096) is
        greater than the derived max_model_len (max_position_embeddings=2048.0 or model_max_length=None in
        model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. ...
    --max-model-len 2048 | 2K | 1.5k | auto    accepted
    --max-model-len 4096 with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1     accepted (a warning)
    --max-model-len 4096 with VLLM_ALLOW_LONG_MAX_MODEL_LENGTH=1  refused as above (the variable is not read)
    --max-model-len 0          max_model_len must be a positive integer, got int: 0. Example: max_model_len=2048
    --max-num-batched-tokens 512 --no-enable-chunked-prefill   max_num_batched_tokens (512) is smaller than
        max_model_len (2048). ...
    --max-num-batched-tokens 2K --max-model-len 2K --no-enable-chunked-prefill   accepted
    --max-num-batched-tokens 512 (chunked prefill on by default)                accepted
    --long-prefill-token-threshold 4096   long_prefill_token_threshold (4096) cannot be greater than the
        max_model_len (2048).
    --long-prefill-token-threshold 2048   accepted
    qwen2-tiny-14heads (32768): --max-model-len 64k   ... (64000) is greater than the derived max_model_len
        (max_position_embeddings=32768.0 ...
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
FEATURE = "Context length (--max-model-len and the scheduler's token limits)"

LLAMA: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "rope_theta": 10000.0,
    "max_position_embeddings": 2048,
}


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


def result(report: CheckReport, rule: str):  # type: ignore[no-untyped-def]
    found = [r for r in report.audit.results if r.id == rule and r.set.startswith("Context length")]
    return found[0] if found else None


def status(report: CheckReport, rule: str) -> str:
    found = result(report, rule)
    return found.status if found is not None else "inactive"


def assert_fixed(
    report: CheckReport, model: Path, fixed: str, version: str | None = None, environ: dict[str, str] | None = None
) -> None:
    after = report.audit.after
    assert after is not None and fixed in after, after
    again = check(model, shlex.join(shlex.split(after)[3:]), version, environ)
    assert again.audit.unmet == [], [(r.id, r.evidence) for r in again.audit.unmet]


# (rule, config, broken, fixed, near-miss)
CASES: list[tuple[str, dict[str, Any], str, str, str]] = [
    ("max-model-len-within-derived", LLAMA, "--max-model-len 4K", "--max-model-len 2048", "--max-model-len 2K"),
    ("max-model-len-positive", LLAMA, "--max-model-len 0", "", "--max-model-len 1"),
    (
        "batched-tokens-cover-max-model-len",
        LLAMA,
        "--max-num-batched-tokens 512 --no-enable-chunked-prefill",
        "--max-num-batched-tokens 2048",
        "--max-num-batched-tokens 2K --max-model-len 2K --no-enable-chunked-prefill",
    ),
    (
        "long-prefill-threshold-within-max-model-len",
        LLAMA,
        "--long-prefill-token-threshold 4096",
        "--long-prefill-token-threshold 2048",
        "--long-prefill-token-threshold 2048",
    ),
]


def test_every_rule_has_a_case() -> None:
    rules = {r.id for s in SETS if s.feature == FEATURE for r in s.rule}
    assert rules == {case[0] for case in CASES}


@pytest.mark.parametrize(("rule", "config", "broken", "fixed", "near"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("version", ["0.27.0", "0.33.0"])
def test_a_rule_broken_fixed_and_kept(
    tmp_path: Path, rule: str, config: dict[str, Any], broken: str, fixed: str, near: str, version: str
) -> None:
    model = folder(tmp_path, config)
    report = check(model, broken, version)
    assert status(report, rule) == "unmet"
    assert_fixed(report, model, fixed, version)
    kept = check(model, near, version)
    assert status(kept, rule) == "met" and kept.audit.unmet == []


def test_the_zero_length_fix_drops_the_option(tmp_path: Path) -> None:
    model = folder(tmp_path, LLAMA)
    after = check(model, "--max-model-len 0").audit.after or ""
    assert "--max-model-len" not in after


@pytest.mark.parametrize("value", ["1", "true", " TRUE "])
def test_the_override_variable_lifts_the_limit(tmp_path: Path, value: str) -> None:
    report = check(folder(tmp_path, LLAMA), "--max-model-len 4096", environ={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": value})
    assert status(report, "max-model-len-within-derived") == "met"


@pytest.mark.parametrize("environ", [{"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "0"}, {"VLLM_ALLOW_LONG_MAX_MODEL_LENGTH": "1"}])
def test_only_the_exact_variable_and_value_lift_it(tmp_path: Path, environ: dict[str, str]) -> None:
    report = check(folder(tmp_path, LLAMA), "--max-model-len 4096", environ=environ)
    assert status(report, "max-model-len-within-derived") == "unmet"
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in (result(report, "max-model-len-within-derived").fix or "")


# (config, the derived maximum on 0.33, on 0.27)
DERIVED: list[tuple[str, dict[str, Any], int, int]] = [
    (
        "linear",
        {**LLAMA, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 4.0}},
        16384,
        16384,
    ),
    (
        "legacy-type-key",
        {**LLAMA, "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
        8192,
        8192,
    ),
    (
        "llama3",
        {
            **LLAMA,
            "max_position_embeddings": 131072,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
        },
        131072,
        131072,
    ),
    (
        "yarn",
        {
            **LLAMA,
            "max_position_embeddings": 32768,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
        },
        32768,
        16384,
    ),
    (
        "gemma3",
        {
            **LLAMA,
            "model_type": "gemma3_text",
            "max_position_embeddings": 131072,
            "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        },
        131072,
        131072,
    ),
    ("smallest-key", {**LLAMA, "max_position_embeddings": 4096, "seq_length": 1024}, 1024, 1024),
    ("gpt2", {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_positions": 1024}, 1024, 1024),
    (
        "text-config",
        {
            "architectures": ["LlavaForConditionalGeneration"],
            "model_type": "llava",
            "max_position_embeddings": 999,
            "text_config": {"max_position_embeddings": 4096},
        },
        4096,
        4096,
    ),
]


@pytest.mark.parametrize(("name", "config", "derived", "derived_027"), DERIVED, ids=[d[0] for d in DERIVED])
def test_the_derived_maximum(tmp_path: Path, name: str, config: dict[str, Any], derived: int, derived_027: int) -> None:
    model = folder(tmp_path, config)
    for version, limit in (("0.33.0", derived), ("0.27.0", derived_027)):
        assert status(check(model, f"--max-model-len {limit}", version), "max-model-len-within-derived") == "met"
        over = check(model, f"--max-model-len {limit + 1}", version)
        assert status(over, "max-model-len-within-derived") == "unmet", (version, limit)
        assert f"--max-model-len {limit}" in (over.audit.after or "")


def test_disabling_the_sliding_window_caps_the_length(tmp_path: Path) -> None:
    model = folder(tmp_path, {**LLAMA, "max_position_embeddings": 8192, "sliding_window": 4096})
    assert status(check(model, "--max-model-len 8192"), "max-model-len-within-derived") == "met"
    report = check(model, "--max-model-len 8192 --disable-sliding-window")
    assert status(report, "max-model-len-within-derived") == "unmet"
    assert_fixed(report, model, "--max-model-len 4096")


def test_a_sentence_transformers_config_sets_the_length(tmp_path: Path) -> None:
    model = folder(tmp_path, {"architectures": ["BertModel"], "model_type": "bert", "max_position_embeddings": 512})
    (model / "sentence_bert_config.json").write_text('{"max_seq_length": 256}')
    report = check(model, "--max-model-len 512")
    assert status(report, "max-model-len-within-derived") == "unmet"
    assert_fixed(report, model, "--max-model-len 256")


def test_what_is_not_read_is_not_judged(tmp_path: Path) -> None:
    # model_max_length allows a launch up to it whatever the other keys say: left out
    command_r = folder(tmp_path, {**LLAMA, "model_max_length": 131072, "max_position_embeddings": 8192}, "command-r")
    assert status(check(command_r, "--max-model-len 100000"), "max-model-len-within-derived") == "met"
    # no length key: vLLM takes the user's value
    keyless = folder(tmp_path, {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "keyless")
    assert status(check(keyless, "--max-model-len 100000"), "max-model-len-within-derived") == "met"
    # RoPE parameters per layer type: unknown
    nested = {
        **LLAMA,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 2.0},
            "sliding_attention": {"rope_type": "default"},
        },
    }
    report = check(folder(tmp_path, nested, "nested"), "--max-model-len 3000")
    assert status(report, "max-model-len-within-derived") == "unknown" and report.audit.unmet == []


def test_unknown_without_the_model() -> None:
    report = check("nobody/not-in-any-cache", "--max-model-len 100000 --long-prefill-token-threshold 4096")
    within = result(report, "max-model-len-within-derived")
    assert within.status == "unknown" and "config.json" in (within.reveal or "")
    assert report.audit.unmet == [] and report.audit.after is None
    # what the command itself says is still judged
    short = check("nobody/not-in-any-cache", "--max-model-len 1000 --long-prefill-token-threshold 2000")
    assert status(short, "long-prefill-threshold-within-max-model-len") == "unmet"
    assert (
        status(
            check("nobody/not-in-any-cache", "--long-prefill-token-threshold 2000"),
            "long-prefill-threshold-within-max-model-len",
        )
        == "unknown"
    )


def test_a_plain_launch_has_no_context_set(tmp_path: Path) -> None:
    report = check(folder(tmp_path, LLAMA), "")
    assert not any(s.startswith("Context length") for s in report.audit.sets)
