"""patterns/quantization-rules.toml: every rule broken (unmet, its fix in the corrected command, which then
meets every rule) and kept on the other side of its boundary (met); unknown without the model's folder.

Real vLLM 0.33.0 (VLLM_TARGET_DEVICE=cpu, tiny folders of fixtures/models/make_models.py) agreed on:
  llama-tiny --quantization int4            Unknown quantization method: int4. Must be one of ['awq', ...
  llama-tiny-gptq --quantization awq        ... model config (gptq) does not match ... argument (awq).
  llama-tiny-gptq --quantization gptq_marlin   accepted (AutoGPTQ's override takes gptq_marlin)
  llama-tiny-gptq --quantization humming       accepted (humming overrides any checkpoint)
  llama-tiny-awq -q fp8                     ... model config (awq) does not match ... argument (fp8).
  llama-tiny-awq --quantization awq         accepted
  llama-tiny-awq --dtype float32            torch.float32 is not supported for quantization method awq. ...
  llama-tiny-awq --dtype float16            accepted
  llama-tiny-gptq --dtype float32           torch.float32 is not supported for quantization method auto_gptq ...
  llama-tiny-fp8 --dtype float32            torch.float32 is not supported for quantization method fp8. ...
  llama-tiny-fp8 --dtype float16            accepted
  llama-tiny-gptq-5bit                      Unsupported quantization config: bits=5, sym=True
  llama-tiny --quantization fbgemm_fp8      ('The quantization method %s is deprecated ...', 'fbgemm_fp8')
  llama-tiny --quantization fp_quant        ('The quantization method %s is deprecated ...', 'fp_quant')
  llama-tiny --quantization fp8             accepted (online fp8)
  llama-tiny --quantization gptq            Cannot find the config file for gptq
  llama-tiny + quantize_config.json + quant_config.json --quantization awq
                                            Found multiple config files for awq: [...]
  llama-tiny --quantization mxfp8           accepted (0.30+: an online shorthand without its file)
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logdoctor.versions import in_range
from tests.family_helpers import assert_broken_and_fixed, check, family_sets, model_dir, status

SETS = family_sets("quantization-rules.toml")
GPTQ = {"quant_method": "gptq", "bits": 4, "sym": True, "group_size": 128, "desc_act": False}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


def test_the_sets_cover_every_release() -> None:
    assert [s.versions for s in SETS] == [">=0.27,<0.28", ">=0.28,<0.30", ">=0.30"]


def test_an_unknown_method(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    after = assert_broken_and_fixed(SETS, f"vllm serve {model} --quantization int4", "known-method", None)
    assert "--quantization" not in after
    assert status(check(SETS, f"vllm serve {model} --quantization fp8"), "known-method") == "met"


def test_bitsandbytes_is_a_method_of_027_only(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert status(check(SETS, f"vllm serve {model} -q bitsandbytes", "0.27.0"), "known-method") == "met"
    assert status(check(SETS, f"vllm serve {model} -q bitsandbytes", "0.28.0"), "known-method") == "unmet"


@pytest.mark.parametrize(("checkpoint", "given", "expected"), [
    (GPTQ, "awq", "unmet"),
    (AWQ, "fp8", "unmet"),
    (GPTQ, "gptq", "met"),
    (GPTQ, "gptq_marlin", "met"),
    (GPTQ, "humming", "met"),
    (AWQ, "awq_marlin", "met"),
    ({"quant_method": "fp8"}, "fp8", "met"),
    ({"quant_method": "auto-round"}, "gptq", "met"),
])  # fmt: skip
def test_the_method_against_the_checkpoint(
    tmp_path: Path, checkpoint: dict[str, object], given: str, expected: str
) -> None:
    model = model_dir(tmp_path / "m", quantization_config=checkpoint)
    command = f"vllm serve {model} --quantization {given}"
    if expected == "met":
        assert status(check(SETS, command), "method-matches-checkpoint") == "met"
    else:
        assert_broken_and_fixed(
            SETS, command, "method-matches-checkpoint", f"--quantization {checkpoint['quant_method']}"
        )


def test_a_checkpoint_without_quantization_config_has_nothing_to_match(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert status(check(SETS, f"vllm serve {model} --quantization fp8"), "method-matches-checkpoint") == "met"


def test_deprecated_methods_need_the_flag(tmp_path: Path) -> None:
    # an unquantized checkpoint: the deprecated method would need its own checkpoint format (real vLLM,
    # given --allow-deprecated-quantization, then fails building FBGEMMFp8Config), so the fix is online fp8
    model = model_dir(tmp_path / "m")
    command = f"vllm serve {model} --quantization fbgemm_fp8"
    after = assert_broken_and_fixed(SETS, command, "not-deprecated", "--quantization fp8")
    assert "fbgemm_fp8" not in after
    allowed = check(SETS, f"vllm serve {model} --quantization fbgemm_fp8 --allow-deprecated-quantization")
    assert status(allowed, "not-deprecated") == "met"
    # a checkpoint of the deprecated method: the flag
    fbgemm = model_dir(tmp_path / "f", quantization_config={"quant_method": "fbgemm_fp8"})
    assert_broken_and_fixed(SETS, f"vllm serve {fbgemm}", "not-deprecated", "--allow-deprecated-quantization")


@pytest.mark.parametrize(
    ("checkpoint", "dtype"), [(AWQ, "float32"), ({"quant_method": "fp8"}, "float32"), (GPTQ, "float")]
)
def test_float32_activations_are_refused(tmp_path: Path, checkpoint: dict[str, object], dtype: str) -> None:
    model = model_dir(tmp_path / "m", quantization_config=checkpoint, torch_dtype="float16")
    assert_broken_and_fixed(SETS, f"vllm serve {model} --dtype {dtype}", "dtype-not-float32", "--dtype auto")
    for fine in ("float16", "bfloat16", "auto"):
        assert status(check(SETS, f"vllm serve {model} --dtype {fine}"), "dtype-not-float32") == "met"


def test_a_float32_checkpoint_is_fixed_with_bfloat16(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m", quantization_config=AWQ, torch_dtype="float32")
    assert_broken_and_fixed(SETS, f"vllm serve {model} --dtype float32", "dtype-not-float32", "--dtype bfloat16")


def test_mxfp4_does_not_take_float16(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert_broken_and_fixed(SETS, f"vllm serve {model} -q mxfp4 --dtype half", "dtype-not-float16", "--dtype bfloat16")
    assert status(check(SETS, f"vllm serve {model} -q mxfp4 --dtype bfloat16"), "dtype-not-float16") == "met"
    # with --dtype auto the checkpoint's float16 is what vLLM runs
    half = model_dir(tmp_path / "h", torch_dtype="float16")
    assert status(check(SETS, f"vllm serve {half} -q mxfp4"), "dtype-not-float16") == "unmet"


@pytest.mark.parametrize(
    ("bits", "sym", "expected"),
    [(5, True, "unmet"), (3, True, "unmet"), (4, False, "unmet"), (4, True, "met"), (8, True, "met")],
)
def test_gptq_bit_widths(tmp_path: Path, bits: int, sym: bool, expected: str) -> None:
    model = model_dir(tmp_path / "m", quantization_config={**GPTQ, "bits": bits, "sym": sym})
    report = check(SETS, f"vllm serve {model}")
    assert status(report, "gptq-bits") == expected
    if expected == "unmet":
        assert report.audit.after is None  # no flag fixes a checkpoint's bit width
        assert any("re-quantize" in (r.fix or "") for r in report.audit.unmet)


def test_unknown_without_the_model_folder() -> None:
    report = check(SETS, "vllm serve some-org/not-cached --quantization gptq")
    assert status(report, "method-matches-checkpoint") == "unknown"
    assert status(report, "gptq-bits") == "unknown"
    reveal = next(r.reveal for r in report.audit.results if r.id == "method-matches-checkpoint") or ""
    assert "quantization_config" in reveal
    assert not report.audit.unmet
    # without --quantization, a checkpoint nobody can read is taken as unquantized: no rule listed
    assert check(SETS, "vllm serve some-org/not-cached --dtype float32").audit.results == []
    # an unread checkpoint may be one another method claims (auto-round is served by inc): unknown
    assert status(check(SETS, "vllm serve some-org/not-cached -q awq --dtype float32"), "dtype-not-float32") == "unknown"


def test_an_unquantized_model_without_the_flag_has_no_set(tmp_path: Path) -> None:
    assert check(SETS, f"vllm serve {model_dir(tmp_path / 'm')}").audit.results == []


@pytest.mark.parametrize(("method", "files"), [
    ("gptq", ["quantize_config.json"]),
    ("gptq_marlin", ["quantize_config.json"]),
    ("moe_wna16", ["quantize_config.json"]),
    ("awq", ["quant_config.json"]),
    ("awq", ["quantize_config.json"]),
    ("modelopt", ["hf_quant_config.json"]),
    ("inc", ["quantization_config.json"]),
])  # fmt: skip
def test_a_method_finds_its_own_config_file(tmp_path: Path, method: str, files: list[str]) -> None:
    bare = model_dir(tmp_path / "bare")
    after = assert_broken_and_fixed(SETS, f"vllm serve {bare} --quantization {method}", "method-config-file-found", None)
    assert "--quantization" not in after  # not a checkpoint of that method: served as it is
    with_file = model_dir(tmp_path / "file")
    for name in files:
        (with_file / name).write_text("{}")
    report = check(SETS, f"vllm serve {with_file} --quantization {method}")
    assert status(report, "method-config-file-found") == "met"
    assert status(report, "method-config-file-single") == "met"


def test_a_quantization_config_in_config_json_needs_no_file(tmp_path: Path) -> None:
    for key, config in (("quantization_config", GPTQ), ("compression_config", {"quant_method": "gptq"})):
        model = model_dir(tmp_path / key, **{key: config})
        assert status(check(SETS, f"vllm serve {model} -q gptq"), "method-config-file-found") == "met"
    nested = model_dir(tmp_path / "vlm", text_config={"quantization_config": GPTQ})
    assert status(check(SETS, f"vllm serve {nested} -q gptq"), "method-config-file-found") == "met"
    # --hf-overrides can name the file instead
    bare = model_dir(tmp_path / "bare")
    named = check(SETS, f"""vllm serve {bare} -q gptq --hf-overrides '{{"quantization_config_file": "/q.json"}}'""")
    assert status(named, "method-config-file-found") == "met"


def test_two_files_of_the_method_are_refused(tmp_path: Path) -> None:
    # vLLM matches names by their ending: hf_quant_config.json counts for AWQ's quant_config.json
    for extra in ("quantize_config.json", "hf_quant_config.json"):
        model = model_dir(tmp_path / extra)
        (model / "quant_config.json").write_text("{}")
        (model / extra).write_text("{}")
        report = check(SETS, f"vllm serve {model} --quantization awq")
        assert status(report, "method-config-file-single") == "unmet"
        assert report.audit.after is None  # no flag removes a file
    gptq = model_dir(tmp_path / "g")
    (gptq / "quantize_config.json").write_text("{}")
    (gptq / "quant_config.json").write_text("{}")  # not a GPTQ file name
    assert status(check(SETS, f"vllm serve {gptq} -q gptq"), "method-config-file-single") == "met"


def test_online_shorthands_quantize_without_a_file_from_030(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "m")
    assert status(check(SETS, f"vllm serve {model} -q mxfp8", "0.33.0"), "method-config-file-found") == "met"
    assert status(check(SETS, f"vllm serve {model} -q mxfp8", "0.30.0"), "method-config-file-found") == "met"
    assert status(check(SETS, f"vllm serve {model} -q mxfp8", "0.29.0"), "method-config-file-found") == "unmet"
    # methods that read no file at all
    for online in ("fp8", "experts_int8", "compressed-tensors"):
        report = check(SETS, f"vllm serve {model} -q {online}")
        assert "method-config-file-found" not in [r.id for r in report.audit.unmet]


def test_every_file_group_of_the_source_is_counted() -> None:
    """bench/rules_source.py writes one `quantization_reading_<files>` list per group of file names a
    release's get_config_filenames returns: each must be counted by a derivation of the set covering
    that release, with the same file names, or a method of a new group would go unchecked."""
    lists = tomllib.loads((Path(__file__).parent.parent / "patterns" / "quantization-rules.toml").read_text())["lists"]
    for name, methods in lists.items():
        if not name.startswith("quantization_reading_"):
            continue
        group, version = name.removeprefix("quantization_reading_").rsplit("_0_", 1)
        files = lists[f"quantization_files_{group}_0_{version}"]
        cset = next(s for s in SETS if in_range(f"0.{version}.0", s.versions))
        counting = [
            d for d in cset.derive
            if d.field == "quantization_config_files" and d.when is not None and set(d.when.value) == set(methods)
        ]  # fmt: skip
        assert counting, f"{name}: no derivation of {cset.id} counts {files}"
        assert all(isinstance(d.value, dict) and d.value["count_ending"] == files for d in counting), name
