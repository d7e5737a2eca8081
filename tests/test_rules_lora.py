"""patterns/lora-rules.toml: LoRA's sizes, --default-mm-loras, and architectures without SupportsLoRA.

Real vLLM 0.33.0 (VLLM_TARGET_DEVICE=cpu) agreed on:
  gpt2-tiny --enable-lora                  LoRA is not supported for GPT2LMHeadModel (...). Supported models implement the `SupportsLoRA` interface. ...
  mixtral-tiny / bert-tiny --enable-lora   accepted
  llama-tiny --enable-lora --max-loras 4 --max-cpu-loras 2   max_cpu_loras (2) must be >= max_loras (4).
  llama-tiny --enable-lora --max-loras 2 --max-cpu-loras 2   accepted; --max-cpu-loras 0 accepted (0 means not given)
  llama-tiny --enable-lora --max-loras 0   max_loras / Input should be greater than or equal to 1
  llama-tiny [--enable-lora] --default-mm-loras '{"image": ...}'   Default modality-specific LoRA(s) were provided for a non multimodal model
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.check import run_check
from tests.family_helpers import assert_broken_and_fixed, check, family_sets, model_dir, status

SETS = family_sets("lora-rules.toml")
MM = """'{"image": "/tmp/vision-lora"}'"""


def test_every_release_has_a_set() -> None:
    assert [s.versions for s in SETS][0] == ">=0.27,<0.28" and SETS[-1].versions == ">=0.33"


@pytest.mark.parametrize("version", ["0.27.0", "0.30.0", "0.33.0"])
def test_an_architecture_without_lora(tmp_path: Path, version: str) -> None:
    gpt2 = model_dir(tmp_path / "g", architectures=["GPT2LMHeadModel"], model_type="gpt2")
    after = assert_broken_and_fixed(
        SETS, f"vllm serve {gpt2} --enable-lora", "architecture-supports-lora", None, version
    )
    assert "--enable-lora" not in after
    llama = model_dir(tmp_path / "l")
    assert status(check(SETS, f"vllm serve {llama} --enable-lora", version), "architecture-supports-lora") == "met"
    # the Transformers backend, and an architecture the registry does not name, are not refused here
    assert (
        status(
            check(SETS, f"vllm serve {gpt2} --enable-lora --model-impl transformers", version),
            "architecture-supports-lora",
        )
        == "met"
    )
    odd = model_dir(tmp_path / "o", architectures=["NoSuchForCausalLM"])
    assert status(check(SETS, f"vllm serve {odd} --enable-lora", version), "architecture-supports-lora") == "met"


def test_the_033_message_is_raised_at_config_validation(tmp_path: Path) -> None:
    gpt2 = model_dir(tmp_path / "g", architectures=["GPT2LMHeadModel"])
    rule = next(
        r for r in check(SETS, f"vllm serve {gpt2} --enable-lora").audit.results if r.id == "architecture-supports-lora"
    )
    assert rule.vllm_message.startswith("LoRA is not supported for {architecture}")


def test_the_architecture_is_unknown_without_the_folder() -> None:
    report = check(SETS, "vllm serve org/not-cached --enable-lora")
    assert status(report, "architecture-supports-lora") == "unknown" and not report.audit.unmet


@pytest.mark.parametrize(
    ("max_loras", "max_cpu", "expected"), [(4, 2, "unmet"), (4, 4, "met"), (2, 8, "met"), (4, 0, "met")]
)
def test_max_cpu_loras(tmp_path: Path, max_loras: int, max_cpu: int, expected: str) -> None:
    # From a --config YAML, whose numbers are numbers (on the command line --max-cpu-loras is an
    # `_optional_type` the argspec does not say the inner type of, so its text compares with nothing yet).
    model = model_dir(tmp_path / "m")
    yaml = tmp_path / "lora.yaml"
    yaml.write_text(f"enable-lora: true\nmax-loras: {max_loras}\nmax-cpu-loras: {max_cpu}\n")
    report = run_check(["vllm", "serve", str(model)], config_file=str(yaml), version="0.33.0", environ={}, sets=SETS)
    assert status(report, "max-cpu-loras-holds-max-loras") == expected
    if expected == "unmet":
        assert f"max-cpu-loras: {max_loras}" in "\n".join(report.yaml_diff) or f"--max-cpu-loras {max_loras}" in (
            report.audit.after or ""
        )


def test_max_loras_at_least_one(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert_broken_and_fixed(
        SETS, f"vllm serve {model} --enable-lora --max-loras 0", "max-loras-positive", "--max-loras 1"
    )
    assert status(check(SETS, f"vllm serve {model} --enable-lora --max-loras 1"), "max-loras-positive") == "met"


@pytest.mark.parametrize("lora", ["--enable-lora ", ""])
def test_default_mm_loras_on_a_text_model(tmp_path: Path, lora: str) -> None:
    model = model_dir(tmp_path / "m")
    after = assert_broken_and_fixed(
        SETS, f"vllm serve {model} {lora}--default-mm-loras {MM}", "default-mm-loras-multimodal", None
    )
    assert "--default-mm-loras" not in after
    vision = model_dir(tmp_path / "v", architectures=["Qwen2VLForConditionalGeneration"])
    assert (
        status(check(SETS, f"vllm serve {vision} {lora}--default-mm-loras {MM}"), "default-mm-loras-multimodal")
        == "met"
    )


def test_no_lora_no_set(tmp_path: Path) -> None:
    assert check(SETS, f"vllm serve {model_dir(tmp_path / 'm')} --max-loras 0").audit.results == []
