"""patterns/dtype-rules.toml: the model types vLLM refuses in float16, and the KV cache dtype (0.33).

Real vLLM 0.33.0 (VLLM_TARGET_DEVICE=cpu) agreed on:
  gemma2-tiny --dtype float16          The model type 'gemma2' does not support float16. Reason: Numerical instability. ...
  glm4-tiny --dtype half               The model type 'glm4' does not support float16. ...
  gemma2-tiny --dtype bfloat16 / float32 / auto     accepted
  llama-tiny --kv-cache-dtype fp4      Invalid kv_cache_dtype: 'fp4'. Valid values are: ['auto', 'float16', ...
  llama-tiny --kv-cache-dtype fp8_e4m3fn   Invalid kv_cache_dtype: 'fp8_e4m3fn'. ...
  llama-tiny --kv-cache-dtype fp8 / fp8_e5m2        accepted
  llama-tiny --kv-cache-dtype float16  kv_cache_dtype="float16" is incompatible with dtype="bfloat16". Please set `--kv-cache-dtype` to `auto` or `bfloat16`.
  llama-tiny --kv-cache-dtype bfloat16 accepted; --dtype float16 --kv-cache-dtype float16 accepted
  llama-tiny --dtype float32 --kv-cache-dtype bfloat16   kv_cache_dtype="bfloat16" is incompatible with dtype="float32". Please set `--kv-cache-dtype` to `auto`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.family_helpers import assert_broken_and_fixed, check, family_sets, model_dir, status

SETS = family_sets("dtype-rules.toml")


@pytest.mark.parametrize("model_type", ["gemma2", "gemma3", "gemma3_text", "glm4"])
@pytest.mark.parametrize("dtype", ["float16", "half"])
def test_float16_refused_model_types(tmp_path: Path, model_type: str, dtype: str) -> None:
    model = model_dir(tmp_path / "m", model_type=model_type, architectures=["Gemma2ForCausalLM"])
    assert_broken_and_fixed(
        SETS, f"vllm serve {model} --dtype {dtype}", "float16-refused", "--dtype bfloat16", "0.27.0"
    )
    assert_broken_and_fixed(SETS, f"vllm serve {model} --dtype {dtype}", "float16-refused", "--dtype bfloat16")


def test_float16_is_fine_for_other_models_and_other_dtypes_for_gemma2(tmp_path: Path) -> None:
    llama = model_dir(tmp_path / "l")
    assert status(check(SETS, f"vllm serve {llama} --dtype float16"), "float16-refused") == "met"
    gemma = model_dir(tmp_path / "g", model_type="gemma2")
    for dtype in ("bfloat16", "float32", "auto"):
        assert not check(SETS, f"vllm serve {gemma} --dtype {dtype}").audit.unmet


def test_float16_refusal_unknown_without_the_folder() -> None:
    report = check(SETS, "vllm serve google/not-cached --dtype float16")
    assert status(report, "float16-refused") == "unknown"
    assert "model_type" in (report.audit.results[0].reveal or "")


@pytest.mark.parametrize(
    ("given", "fixed"),
    [("fp4", "--kv-cache-dtype auto"), ("fp8_e4m3fn", "--kv-cache-dtype fp8_e4m3"), ("int4", "--kv-cache-dtype auto")],
)
def test_kv_cache_dtype_choices(tmp_path: Path, given: str, fixed: str) -> None:
    model = model_dir(tmp_path / "m")
    assert_broken_and_fixed(SETS, f"vllm serve {model} --kv-cache-dtype {given}", "kv-cache-dtype-known", fixed)


@pytest.mark.parametrize("given", ["fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "turboquant_k8v4"])
def test_kv_cache_dtypes_vllm_knows(tmp_path: Path, given: str) -> None:
    model = model_dir(tmp_path / "m")
    assert status(check(SETS, f"vllm serve {model} --kv-cache-dtype {given}"), "kv-cache-dtype-known") == "met"


def test_kv_cache_dtype_is_the_parsers_before_033(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    report = check(SETS, f"vllm serve {model} --kv-cache-dtype fp8", "0.32.0")
    assert report.audit.results == []


@pytest.mark.parametrize(("flags", "config_dtype", "expected"), [
    ("--kv-cache-dtype float16", "bfloat16", "unmet"),
    ("--kv-cache-dtype bfloat16", "float16", "unmet"),
    ("--dtype float32 --kv-cache-dtype bfloat16", "bfloat16", "unmet"),
    ("--dtype float16 --kv-cache-dtype bfloat16", "bfloat16", "unmet"),
    ("--kv-cache-dtype bfloat16", "bfloat16", "met"),
    ("--dtype float16 --kv-cache-dtype float16", "bfloat16", "met"),
    ("--dtype half --kv-cache-dtype float16", "bfloat16", "met"),
    ("--kv-cache-dtype fp8", "bfloat16", "met"),
])  # fmt: skip
def test_a_float_kv_cache_is_the_models_dtype(tmp_path: Path, flags: str, config_dtype: str, expected: str) -> None:
    model = model_dir(tmp_path / "m", torch_dtype=config_dtype)
    command = f"vllm serve {model} {flags}"
    if expected == "met":
        assert status(check(SETS, command), "float-kv-cache-is-model-dtype") == "met"
    else:
        assert_broken_and_fixed(SETS, command, "float-kv-cache-is-model-dtype", "--kv-cache-dtype auto")


def test_a_float32_checkpoint_under_auto_is_unknown(tmp_path: Path) -> None:
    # vLLM casts a float32 checkpoint to the platform's preferred dtype: not known before the launch
    model = model_dir(tmp_path / "m", torch_dtype="float32")
    report = check(SETS, f"vllm serve {model} --kv-cache-dtype float16")
    assert status(report, "float-kv-cache-is-model-dtype") == "unknown"
    assert (
        status(check(SETS, "vllm serve org/not-cached --kv-cache-dtype float16"), "float-kv-cache-is-model-dtype")
        == "unknown"
    )
