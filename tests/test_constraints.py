"""Every ReplaySSM rule of every released wording: a launch that breaks it is told so, a launch that
keeps it is not, and the corrected command meets every rule."""

from __future__ import annotations

import shlex

import pytest

from logdoctor.check import CheckReport, run_check
from logdoctor.launch.config import LaunchConfig, Origin, Setting
from logdoctor.library.constraints import _MISSING, apply_fix, evaluate, plan_fix, resolve_value
from logdoctor.library.loader import load_constraint_sets
from logdoctor.library.rules import Condition, ConstraintSet, FixOption, Rule

SETS = [s for s in load_constraint_sets() if s.id.startswith("replayssm-")]  # the ReplaySSM sets alone
VERSIONS = {
    "replayssm-0.27": "0.27.0",
    "replayssm-0.28": "0.28.0",
    "replayssm-0.29": "0.29.0",
    "replayssm-0.30": "0.30.0",
    "replayssm-0.32": "0.32.0",
    "replayssm-0.33": "0.33.0",
}
NEMOTRON = "nvidia/Nemotron-H-8B-Base-8K"
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"
NGRAM = '--speculative-config \'{"method": "ngram", "num_speculative_tokens": 3}\''
NO_PC = "--no-enable-prefix-caching"

# A launch that keeps every rule, per set: (command flags, environment, architecture of the model).
GOOD = {
    "replayssm-0.27": (f"vllm serve {NEMOTRON} --use-replayssm", {}),
    "replayssm-0.28": (f"vllm serve {NEMOTRON} --use-replayssm", {}),
    "replayssm-0.29": (f"vllm serve {NEMOTRON} --use-replayssm", {}),
    "replayssm-0.30": (f"vllm serve {NEMOTRON} --use-replayssm", {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
    "replayssm-0.32": (f"vllm serve {NEMOTRON} --use-replayssm", {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
    "replayssm-0.33": (f"vllm serve {NEMOTRON} --use-replayssm", {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
}

# For each rule: a launch that breaks it (when one can on that release), as (command, environment).
BREAK: dict[str, tuple[str, dict[str, str]]] = {
    "architecture": ("vllm serve meta-llama/Llama-3.1-8B-Instruct --use-replayssm", {}),
    "cache-mode-not-all": (f"vllm serve {NEMOTRON} --use-replayssm --enable-prefix-caching --mamba-cache-mode all", {}),
    "no-speculative-decoding": (f"vllm serve {NEMOTRON} --use-replayssm {NGRAM}", {}),
    "mamba-backend": (f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend cpu", {}),
    "no-kv-connector": (
        f"vllm serve {NEMOTRON} --use-replayssm --kv-transfer-config "
        '\'{"kv_connector": "NixlConnector", "kv_role": "kv_both"}\'',
        {},
    ),
    "mamba-cache-mode-choice": (f"vllm serve {NEMOTRON} --use-replayssm --mamba-cache-mode sometimes", {}),
    "recoverssm-kimi-only": (f"vllm serve {NEMOTRON} --use-replayssm {NGRAM}", {}),
    "recoverssm-no-stochastic-rounding": (
        f"vllm serve {KIMI} --use-replayssm {NGRAM} --enable-mamba-cache-stochastic-rounding",
        {"VLLM_USE_V2_MODEL_RUNNER": "1"},
    ),
    "recoverssm-cache-modes": (f"vllm serve {NEMOTRON} --use-replayssm {NGRAM} --mamba-cache-mode all", {}),
    "recoverssm-align-needs-v2-runner": (
        f"vllm serve {KIMI} --use-replayssm {NGRAM}",
        {"VLLM_USE_V2_MODEL_RUNNER": "0"},
    ),
    "recoverssm-pipeline-parallel": (
        f"vllm serve {KIMI} --use-replayssm {NGRAM} -pp 2",
        {"VLLM_USE_V2_MODEL_RUNNER": "1"},
    ),
    "kimi-needs-speculative-decoding": (f"vllm serve {KIMI} --use-replayssm", {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
    "recoverssm-backend-triton": (
        f"vllm serve {KIMI} --use-replayssm {NGRAM} --mamba-backend flashinfer",
        {"VLLM_USE_V2_MODEL_RUNNER": "1"},
    ),
    "flashinfer-no-prefix-caching": (f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer", {}),
    "triton-needs-v1-runner": (f"vllm serve {NEMOTRON} --use-replayssm", {"VLLM_USE_V2_MODEL_RUNNER": "1"}),
    "flashinfer-buffer-len-max": (
        f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer {NO_PC} --replayssm-buffer-len 32",
        {},
    ),
    "spec-decode-no-prefix-caching": (f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer {NGRAM}", {}),
    "spec-decode-buffer-len": (
        f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer {NO_PC} {NGRAM} --replayssm-buffer-len 2",
        {},
    ),
    "spec-decode-needs-flashinfer": (f"vllm serve {NEMOTRON} --use-replayssm {NO_PC} {NGRAM}", {}),
}
# Rules that need a value a command line cannot carry: checked with a model folder below.
NEEDS_MODEL_FOLDER = {"tp-divides-mamba-heads"}

CASES = [
    (cset.id, rule.id)
    for cset in SETS
    if cset.id in VERSIONS
    for rule in cset.rule
    if rule.id not in NEEDS_MODEL_FOLDER
]


def check(command: str, env: dict[str, str], set_id: str) -> CheckReport:
    # machine=None: no bind test of this machine (its ports are no part of these rules)
    return run_check(shlex.split(command), version=VERSIONS[set_id], environ=env, sets=SETS, machine=None)


def statuses(report: CheckReport) -> dict[str, str]:
    return {r.id: r.status for r in report.audit.results}


@pytest.mark.parametrize("set_id", list(VERSIONS))
def test_a_good_launch_meets_every_rule(set_id: str) -> None:
    report = check(*GOOD[set_id], set_id)
    assert "unmet" not in statuses(report).values(), report.audit.results


@pytest.mark.parametrize(("set_id", "rule_id"), CASES, ids=[f"{s}:{r}" for s, r in CASES])
def test_each_rule_in_each_version_is_unmet_when_broken_and_the_fix_meets_all(set_id: str, rule_id: str) -> None:
    command, env = BREAK[rule_id]
    report = check(command, env, set_id)
    assert statuses(report)[rule_id] == "unmet", report.audit.results
    assert report.audit.after is not None
    fixed = check(report.audit.after, env, set_id)
    assert "unmet" not in statuses(fixed).values(), (report.audit.after, fixed.audit.results)


@pytest.mark.parametrize("set_id", list(VERSIONS))
def test_tensor_parallel_heads_rule_reads_the_model_folder(tmp_path, set_id: str) -> None:  # type: ignore[no-untyped-def]
    model = tmp_path / "nemotron"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["NemotronHForCausalLM"], "mamba_num_heads": 12}')
    env = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
    report = check(f"vllm serve {model} --use-replayssm -tp 8", env, "replayssm-0.33")
    assert statuses(report)["tp-divides-mamba-heads"] == "unmet"
    assert report.audit.after is not None and "--tensor-parallel-size 6" in report.audit.after
    assert (
        statuses(check(f"vllm serve {model} --use-replayssm -tp 4", env, "replayssm-0.33"))["tp-divides-mamba-heads"]
        == "met"
    )


def test_unknown_values_say_what_would_reveal_them() -> None:
    report = check("vllm serve my-org/custom-model --use-replayssm", {}, "replayssm-0.33")
    architecture = next(r for r in report.audit.results if r.id == "architecture")
    assert architecture.status == "unknown" and "architecture" in (architecture.reveal or "")


def test_a_launch_without_the_feature_has_no_rules() -> None:
    report = check(f"vllm serve {NEMOTRON} --mamba-backend cpu", {}, "replayssm-0.33")
    assert report.audit.results == [] and report.ok


def test_vllm_resolves_the_cache_mode_before_validating() -> None:
    # 0.30: `--mamba-cache-mode none` does not help while prefix caching is on: vLLM makes it 'align'.
    report = check(
        f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer --mamba-cache-mode none",
        {},
        "replayssm-0.30",
    )
    assert statuses(report)["flashinfer-no-prefix-caching"] == "unmet"
    assert report.audit.after is not None and "--no-enable-prefix-caching" in report.audit.after
    # 0.27: --enable-prefix-caching alone gives Nemotron-H mode 'all'.
    assert (
        statuses(check(f"vllm serve {NEMOTRON} --use-replayssm --enable-prefix-caching", {}, "replayssm-0.27"))[
            "cache-mode-not-all"
        ]
        == "unmet"
    )
    assert (
        statuses(check(f"vllm serve {NEMOTRON} --use-replayssm --enable-prefix-caching", {}, "replayssm-0.28"))[
            "cache-mode-not-all"
        ]
        == "met"
    )


def test_conflicting_fixes_are_reported_not_hidden() -> None:
    big = '--speculative-config \'{"method": "ngram", "num_speculative_tokens": 20}\''
    report = check(
        f"vllm serve {NEMOTRON} --use-replayssm --mamba-backend flashinfer {NO_PC} {big}", {}, "replayssm-0.33"
    )
    assert report.audit.after is not None and '"num_speculative_tokens": 15' in report.audit.after
    assert "--replayssm-buffer-len 16" in report.audit.after and report.audit.unresolved == []


def test_the_documented_028_example() -> None:
    command = (
        f"vllm serve {NEMOTRON} --use-replayssm --mamba-cache-mode all --speculative-config "
        '\'{"method": "ngram", "num_speculative_tokens": 3}\' --mamba-backend flashinfer'
    )
    report = check(command, {}, "replayssm-0.28")
    assert sorted(r.id for r in report.audit.unmet) == [
        "cache-mode-not-all",
        "mamba-backend",
        "no-speculative-decoding",
    ]
    assert report.audit.after is not None and check(report.audit.after, {}, "replayssm-0.28").ok


@pytest.mark.parametrize(
    ("message", "expected_set"),
    [
        ("FlashInfer ReplaySSM does not support --mamba-cache-mode align yet; use none", "vLLM >=0.32,<0.33"),
        ("FlashInfer ReplaySSM does not support prefix caching yet; use --disable-prefix-caching", "vLLM >=0.33"),
        (
            "--use-replayssm is only supported for Nemotron-H models (got architecture 'JambaForCausalLM')",
            "vLLM >=0.28,<0.29",
        ),
    ],
)
def test_without_a_version_line_the_wording_picks_the_set(message: str, expected_set: str) -> None:
    from logdoctor.api import diagnose_lines

    lines = [
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
        f"  Value error, {message} [type=value_error, input_value=ArgsKwargs((), {{}}), input_type=ArgsKwargs]",
    ]
    (finding,) = diagnose_lines(lines)
    assert finding.constraints and all(c.set.endswith(expected_set) for c in finding.constraints)


# The evaluation's pieces, on small launches written out here.
FROM_COMMAND = Origin(kind="command", where="command line")


def launch(**values: object) -> LaunchConfig:
    config = LaunchConfig()
    for name, value in values.items():
        config.set(name, value, FROM_COMMAND, given=True)
    return config


def test_a_comparison_with_a_value_known_to_be_absent_is_false_not_unknown() -> None:
    # No --speculative-config: there is no number of speculative tokens, so none is above 0.
    without = launch(speculative_config=None)
    more_than_none = Condition(field="speculative_config.num_speculative_tokens", op="gt", value=0)
    assert evaluate(more_than_none, without) is False
    assert evaluate(Condition(not_=more_than_none), without) is True
    assert evaluate(more_than_none, launch()) is None  # the launch did not say: unknown


@pytest.mark.parametrize(("offset", "expected"), [(1, 4), (1.0, 4), (0.5, 3.5), (-3, 0)])
def test_a_value_from_another_field_with_an_offset(offset: float, expected: float) -> None:
    config = launch(speculative_config={"num_speculative_tokens": 3})
    value = resolve_value({"from": "speculative_config.num_speculative_tokens", "offset": offset}, config)
    assert value == expected and type(value) is type(expected)  # a whole float reads as an int, as vLLM's


@pytest.mark.parametrize(("limit", "expected"), [(8, 6), (12, 12), (5, 4), (1, 1)])
def test_the_largest_divisor_not_above_a_limit(limit: int, expected: int) -> None:
    config = launch(mamba_num_heads=12, tensor_parallel_size=limit)
    spec = {"from": "mamba_num_heads", "divisor_at_most": "tensor_parallel_size"}
    assert resolve_value(spec, config) == expected


@pytest.mark.parametrize(
    "spec",
    [
        {"from": "num_attention_heads"},  # never revealed
        {"from": "num_attention_heads", "offset": 1},
        {"from": "mamba_num_heads", "divisor_at_most": "num_attention_heads"},
        {"from": "mamba_num_heads", "divisor_at_most": "pipeline_parallel_size"},  # 0: no divisor
    ],
)
def test_a_fix_whose_value_cannot_be_computed_changes_nothing(spec: dict[str, object]) -> None:
    config = launch(mamba_num_heads=12, tensor_parallel_size=8, pipeline_parallel_size=0)
    option = FixOption(says="fit the heads", set={"tensor_parallel_size": spec})
    apply_fix(option, config, config.copy_deep())
    assert config.get("tensor_parallel_size") == Setting(value=8, origin=FROM_COMMAND)


def test_a_rule_vllm_raised_is_fixed_although_it_reads_as_met() -> None:
    """The log shows vLLM refused the launch for this rule, whatever the evaluation of what the log
    revealed says: its fix is applied (once, in the first round)."""
    rule = Rule(
        id="eager",
        says="needs eager mode",
        require=Condition(field="enforce_eager", op="eq", value=True),
        vllm_message="x",
        fix=[FixOption(says="set --enforce-eager", set={"enforce_eager": True})],
    )
    cset = ConstraintSet(
        id="t", feature="f", versions="*", active=Condition(field="enforce_eager", op="not_null"), rule=[rule]
    )
    config = launch(enforce_eager=True)
    plan = plan_fix(cset, config, broken=frozenset({"eager"}))
    assert [(r.id, o.says) for r, o in plan.applied] == [("eager", "set --enforce-eager")]
    assert plan_fix(cset, config).applied == []


def test_a_divisibility_by_one_holds_whatever_the_count() -> None:
    """`? tp-divides-mamba-heads` with --tensor-parallel-size 1: 1 divides any head count."""
    from logdoctor.library.rules import Condition

    divides = Condition(field="mamba_num_heads", op="multiple_of", value_from="tensor_parallel_size")
    assert evaluate(divides, launch(tensor_parallel_size=1)) is True
    assert evaluate(divides, launch(tensor_parallel_size=2)) is None


@pytest.mark.parametrize(
    ("op", "value", "expected", "holds"),
    [
        ("keys_in", {"mode": 3}, ["mode", "backend"], True),
        ("keys_in", {"levle": 3, "mode": 3}, ["mode", "backend"], False),
        ("keys_in", ["VLLM_PORT"], ["VLLM_PORT"], True),
        ("keys_in", None, ["mode"], True),  # absent: no keys that could be unknown
        ("keys_in", "CompilationConfig(mode=None)", ["mode"], True),  # a default's text has no keys
        ("all_match", {"VLLM_A": "12", "VLLM_B": " -3 "}, r"^\s*[+-]?\d+\s*$", True),
        ("all_match", {"VLLM_A": "12", "VLLM_B": "4GB"}, r"^\s*[+-]?\d+\s*$", False),
        ("all_match", {}, r"^\d+$", True),
    ],
)
def test_every_key_or_value_of_a_mapping(op: str, value: object, expected: object, holds: bool) -> None:
    config = LaunchConfig()
    config.set("thing", value, Origin(kind="command", where="test"))
    assert evaluate(Condition(field="thing", op=op, value=expected), config) is holds  # type: ignore[arg-type]


def test_a_json_options_object_with_only_or_without_some_keys() -> None:
    config = launch(kv_transfer_config={"kv_connector": "NixlConnector", "kv_role": "both", "levle": 1})
    only = resolve_value({"from": "kv_transfer_config", "only": ["kv_connector", "kv_role"]}, config)
    assert only == {"kv_connector": "NixlConnector", "kv_role": "both"}
    assert resolve_value({"from": "kv_transfer_config", "without": ["kv_role"]}, config) == {
        "kv_connector": "NixlConnector",
        "levle": 1,
    }
    assert resolve_value({"from": "kv_transfer_config", "only": []}, launch(kv_transfer_config="X()")) is not None


def test_a_condition_compares_with_another_fields_text_as_it_is() -> None:
    # `value_from` without an offset: the checkpoint's quant_method against --quantization, as strings.
    same = Condition(field="quantization", op="eq", value_from="checkpoint_quantization")
    assert evaluate(same, launch(quantization="gptq", checkpoint_quantization="gptq")) is True
    assert evaluate(same, launch(quantization="awq", checkpoint_quantization="gptq")) is False


def test_a_fix_can_drop_one_key_of_a_json_option() -> None:
    config = launch(speculative_config={"model": "draft", "tensor_parallel_size": 2})
    option = FixOption(
        says="rename the key",
        set={"speculative_config.draft_tensor_parallel_size": {"from": "speculative_config.tensor_parallel_size"}},
        unset=["speculative_config.tensor_parallel_size"],
    )
    apply_fix(option, config, config.copy_deep())
    assert config.value("speculative_config") == {"model": "draft", "draft_tensor_parallel_size": 2}


def test_how_many_names_end_with_one_of_the_suffixes() -> None:
    # get_quant_config's test: a file counts when its name ends with one of the method's file names
    config = launch(files=["config.json", "hf_quant_config.json", "quantize_config.json", "tokenizer.json"])
    assert resolve_value({"from": "files", "count_ending": ["quant_config.json"]}, config) == 1
    assert resolve_value({"from": "files", "count_ending": ["quantize_config.json", "quant_config.json"]}, config) == 2
    assert resolve_value({"from": "files", "count_ending": ["quantization_config.json"]}, config) == 0
    assert resolve_value({"from": "files", "count_ending": ["x.json"]}, launch(files="not a list")) is _MISSING
