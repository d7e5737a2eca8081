"""patterns/speculative-rules.toml: --speculative-config and the --spec-* flags, each rule broken and kept.

Real vLLM 0.33.0 (VLLM_TARGET_DEVICE=cpu, llama-tiny) agreed on:
  {"method": "lookahead", "num_speculative_tokens": 3}     method / Input should be 'ngram', 'draft_model', ...
  {"num_speculative_tokens": 3}                            num_speculative_tokens was provided but without speculative model.
  {"method": "mtp", "num_speculative_tokens": 1}           (passes this check: mtp uses the target model)
  {"method": "custom_class", "num_speculative_tokens": 3}  method='custom_class' requires 'model' to contain ...
  {"model": DRAFT}                                         A speculative model was provided, but `num_speculative_tokens` was not provided
  {"model": DRAFT, "num_speculative_tokens": 2, "draft_tensor_parallel_size": 2}
                                                           speculative_draft_tensor_parallel_size=2 cannot be other value than 1 or target model tensor_parallel_size
  ... "draft_tensor_parallel_size": 1                      accepted
  {"model": DRAFT, "num_speculative_tokens": 2, "tensor_parallel_size": 1}
                                                           'tensor_parallel_size' is not a valid argument in the speculative_config. ...
  {"method": "ngram"}                                      num_speculative_tokens must be provided with speculative model unless ...
  {"method": "ngram", "num_speculative_tokens": 0}         num_speculative_tokens / Input should be greater than 0
  {"method": "ngram", ..., "prompt_lookup_min": 5, "prompt_lookup_max": 2}   prompt_lookup_min=5 must be <= prompt_lookup_max=2
  {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2}   accepted (max defaults to min)
  --spec-method ngram + {"method": "ngram", ...}           --spec-method and --speculative-config['method'] are mutually exclusive
  --spec-tokens 3 + {"method": "ngram", "num_speculative_tokens": 3}   --spec-tokens and --speculative-config['num_speculative_tokens'] ...
  --spec-tokens 3 --spec-method ngram                      accepted
  --enable-lora --max-num-seqs 64 --max-num-batched-tokens 128 + ngram 3    Consider increasing max_num_batched_tokens ...
  ... --max-num-batched-tokens 256                         accepted
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.family_helpers import assert_broken_and_fixed, check, family_sets, model_dir, status

SETS = family_sets("speculative-rules.toml")
VERSIONS = ["0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]


def spec(**fields: object) -> str:
    return "'" + json.dumps(fields) + "'"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return model_dir(tmp_path / "m")


def test_every_release_has_a_set() -> None:
    for version in VERSIONS:
        assert len(check(SETS, "vllm serve x --speculative-config '{}'", version).audit.sets) == 1, version


@pytest.mark.parametrize("version", VERSIONS)
def test_an_unknown_method(model: Path, version: str) -> None:
    command = f"vllm serve {model} --speculative-config {spec(method='lookahead', num_speculative_tokens=3)}"
    assert_broken_and_fixed(SETS, command, "method-known", '"method": "ngram"', version)
    ok = f"vllm serve {model} --speculative-config {spec(method='eagle3', model='org/eagle', num_speculative_tokens=3)}"
    assert status(check(SETS, ok, version), "method-known") == "met"


def test_medusa_is_a_method_until_032(model: Path) -> None:
    command = (
        f"vllm serve {model} --speculative-config {spec(method='medusa', model='org/m', num_speculative_tokens=3)}"
    )
    assert status(check(SETS, command, "0.32.0"), "method-known") == "met"
    assert status(check(SETS, command, "0.33.0"), "method-known") == "unmet"


def test_tokens_without_a_proposer(model: Path) -> None:
    command = f"vllm serve {model} --speculative-config {spec(num_speculative_tokens=3)}"
    assert_broken_and_fixed(SETS, command, "tokens-need-a-proposer", '"method": "ngram"')
    for method in ("ngram", "mtp", "deepseek_mtp", "suffix"):
        near = f"vllm serve {model} --speculative-config {spec(method=method, num_speculative_tokens=3)}"
        assert status(check(SETS, near), "tokens-need-a-proposer") == "met", method


def test_custom_class_needs_its_module_path(model: Path) -> None:
    command = f"vllm serve {model} --speculative-config {spec(method='custom_class', num_speculative_tokens=3)}"
    report = check(SETS, command)
    assert status(report, "custom-class-needs-model") == "unmet" and report.audit.after is None
    inferred = f"vllm serve {model} --speculative-config {spec(model='my_pkg.MyProposer', num_speculative_tokens=3)}"
    assert status(check(SETS, inferred), "custom-class-needs-model") == "met"
    assert status(check(SETS, inferred), "draft-model-needs-tokens") == "met"  # a class path is no draft model


def test_a_draft_model_needs_a_token_count(model: Path) -> None:
    command = f"vllm serve {model} --speculative-config {spec(model=str(model))}"
    assert_broken_and_fixed(SETS, command, "draft-model-needs-tokens", '"num_speculative_tokens": 3')
    near = f"vllm serve {model} --speculative-config {spec(model=str(model), num_speculative_tokens=2)}"
    assert status(check(SETS, near), "draft-model-needs-tokens") == "met"
    flags = f"vllm serve {model} --spec-model {model} --spec-tokens 2"
    assert status(check(SETS, flags), "draft-model-needs-tokens") == "met"


def test_ngram_needs_a_token_count(model: Path) -> None:
    command = f"vllm serve {model} --speculative-config {spec(method='ngram')}"
    assert_broken_and_fixed(SETS, command, "proposer-needs-tokens", '"num_speculative_tokens": 3')
    assert (
        status(check(SETS, f"vllm serve {model} --spec-method ngram --spec-tokens 3"), "proposer-needs-tokens") == "met"
    )


@pytest.mark.parametrize("count", [0, -1])
def test_the_token_count_is_positive(model: Path, count: int) -> None:
    command = f"vllm serve {model} --speculative-config {spec(method='ngram', num_speculative_tokens=count)}"
    assert_broken_and_fixed(SETS, command, "tokens-positive", '"num_speculative_tokens": 3')
    assert (
        status(
            check(SETS, f"vllm serve {model} --speculative-config {spec(method='ngram', num_speculative_tokens=1)}"),
            "tokens-positive",
        )
        == "met"
    )


@pytest.mark.parametrize(("lookup", "expected"), [
    ({"prompt_lookup_min": 5, "prompt_lookup_max": 2}, "unmet"),
    ({"prompt_lookup_min": 6}, "met"),  # max defaults to min
    ({"prompt_lookup_max": 2}, "met"),  # min defaults to max
    ({}, "met"),  # both 5
    ({"prompt_lookup_min": 2, "prompt_lookup_max": 2}, "met"),
])  # fmt: skip
def test_the_ngram_window(model: Path, lookup: dict[str, int], expected: str) -> None:
    command = f"vllm serve {model} --speculative-config {spec(method='ngram', num_speculative_tokens=3, **lookup)}"
    if expected == "met":
        assert status(check(SETS, command), "ngram-window") == "met"
    else:
        assert_broken_and_fixed(SETS, command, "ngram-window", '"prompt_lookup_min": 2')


@pytest.mark.parametrize(
    ("draft_tp", "tp", "expected"), [(2, 1, "unmet"), (3, 2, "unmet"), (1, 1, "met"), (1, 4, "met"), (4, 4, "met")]
)
def test_the_draft_tensor_parallel_size(model: Path, draft_tp: int, tp: int, expected: str) -> None:
    command = f"vllm serve {model} -tp {tp} --speculative-config {spec(model=str(model), num_speculative_tokens=2, draft_tensor_parallel_size=draft_tp)}"
    if expected == "met":
        assert status(check(SETS, command), "draft-tensor-parallel") == "met"
    else:
        assert_broken_and_fixed(SETS, command, "draft-tensor-parallel", '"draft_tensor_parallel_size": 1')


def test_tensor_parallel_size_is_spelled_draft_tensor_parallel_size(model: Path) -> None:
    command = f"vllm serve {model} --speculative-config {spec(model=str(model), num_speculative_tokens=2, tensor_parallel_size=1)}"
    after = assert_broken_and_fixed(SETS, command, "no-tensor-parallel-size-key", '"draft_tensor_parallel_size": 1')
    assert '"tensor_parallel_size"' not in after


@pytest.mark.parametrize(("flag", "key", "value", "rule"), [
    ("--spec-method", "method", "ngram", "spec-method-flag-once"),
    ("--spec-tokens", "num_speculative_tokens", 3, "spec-tokens-flag-once"),
    ("--spec-model", "model", "org/draft", "spec-model-flag-once"),
])  # fmt: skip
def test_a_flag_and_the_jsons_key(model: Path, flag: str, key: str, value: object, rule: str) -> None:
    fields: dict[str, object] = {"method": "ngram", "num_speculative_tokens": 3}
    fields[key] = value
    command = f"vllm serve {model} {flag} {value} --speculative-config {spec(**fields)}"
    after = assert_broken_and_fixed(SETS, command, rule, None)
    assert flag not in after
    del fields[key]
    assert (
        status(check(SETS, f"vllm serve {model} {flag} {value} --speculative-config {spec(**fields)}"), rule) == "met"
    )


def test_the_lora_token_budget(model: Path) -> None:
    ngram = spec(method="ngram", num_speculative_tokens=3, prompt_lookup_max=4)
    command = (
        f"vllm serve {model} --enable-lora --max-num-seqs 64 --max-num-batched-tokens 128 --speculative-config {ngram}"
    )
    assert_broken_and_fixed(SETS, command, "lora-token-budget", "--max-num-batched-tokens 256")
    near = command.replace("128", "256")
    assert status(check(SETS, near), "lora-token-budget") == "met"
    assert status(check(SETS, near.replace("--enable-lora ", "")), "lora-token-budget") == "met"
    # vLLM's scheduler defaults depend on the device: unknown, with what would reveal them
    unknown = check(SETS, f"vllm serve {model} --enable-lora --speculative-config {ngram}")
    assert status(unknown, "lora-token-budget") == "unknown"
    assert "max-num-batched-tokens" in (
        next(r.reveal for r in unknown.audit.results if r.id == "lora-token-budget") or ""
    )


def test_suffix_decoding_counts_its_tree_depth(model: Path) -> None:
    command = f"vllm serve {model} --enable-lora --max-num-seqs 4 --max-num-batched-tokens 64 --speculative-config {spec(method='suffix')}"
    assert_broken_and_fixed(SETS, command, "lora-token-budget", "--max-num-batched-tokens 100")


def test_a_plain_launch_has_no_speculative_rules(model: Path) -> None:
    assert check(SETS, f"vllm serve {model} --enable-lora").audit.results == []
