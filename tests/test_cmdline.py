"""Command lines read the way vLLM's parser reads them, and rendered back without losing anything."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from logdoctor.launch.cmdline import CommandError, parse_command, read_config_file, render_command


def parse(command: str, version: str = "0.33.0"):  # type: ignore[no-untyped-def]
    return parse_command(shlex.split(command), version)


@pytest.mark.parametrize(
    ("command", "dest", "value"),
    [
        ("vllm serve m --tensor-parallel-size 2", "tensor_parallel_size", 2),
        ("vllm serve m --tensor_parallel_size=4", "tensor_parallel_size", 4),
        ("vllm serve m -tp 8", "tensor_parallel_size", 8),
        ("vllm serve m --use-replayssm", "use_replayssm", True),
        ("vllm serve m --use_replayssm", "use_replayssm", True),
        ("vllm serve m --no-use-replayssm", "use_replayssm", False),
        ("vllm serve m --no-enable-prefix-caching", "enable_prefix_caching", False),
        ("vllm serve m --disable-prefix-caching", "enable_prefix_caching", False),
        ("vllm serve m --gpu-memory-utilization 0.95", "gpu_memory_utilization", 0.95),
        (
            'vllm serve m --speculative-config \'{"method": "ngram", "num_speculative_tokens": 3}\'',
            "speculative_config",
            {"method": "ngram", "num_speculative_tokens": 3},
        ),
        ('vllm serve m -sc \'{"method": "mtp"}\'', "speculative_config", {"method": "mtp"}),
        (
            "vllm serve m --kv-transfer-config.kv_connector NixlConnector --kv-transfer-config.kv_role kv_both",
            "kv_transfer_config",
            {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
        ),
        ("vllm serve m --api-key one two", "api_key", ["one", "two"]),
        ("vllm serve m", "model", "m"),
    ],
)
def test_parse_forms(command: str, dest: str, value: object) -> None:
    parsed = parse(command)
    assert parsed.problems == []
    assert parsed.config.value(dest) == value


def test_environment_assignments_before_the_program() -> None:
    config = parse("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve m").config
    assert config.value("env.VLLM_USE_V2_MODEL_RUNNER") == "0" and config.value("model") == "m"


def test_what_vllm_would_reject_is_reported() -> None:
    problems = parse("vllm serve m --foo-bar 1 --mamba-cache-mode all --max-model-len").problems
    assert any("--foo-bar" in p for p in problems)
    assert any("invalid choice: 'all'" in p for p in problems)
    assert "argument --max-model-len: expected one argument" in problems  # argparse's words
    # Found by fuzzing: a list option with a sub-key and no value raised IndexError. vLLM takes the word
    # after a dotted option as its value whatever it is (`--enforce-eager` here), so only the bare
    # `--api-key` lacks one (checked against vLLM 0.33.0's parser).
    problems = parse("vllm serve m --api-key.3 --enforce-eager --api-key").problems
    assert problems == ["argument --api-key: expected at least one argument"]


def test_choices_and_spellings_follow_the_version() -> None:
    assert parse("vllm serve m --mamba-cache-mode all", "0.28.0").problems == []
    assert parse("vllm serve m --mamba-cache-mode all", "0.32.0").problems
    # --disable-prefix-caching exists from 0.33; --no-enable-prefix-caching everywhere.
    assert parse("vllm serve m --disable-prefix-caching", "0.32.0").problems
    assert parse("vllm serve m --no-enable-prefix-caching", "0.27.0").problems == []


@pytest.mark.parametrize(
    "command",
    [
        "vllm serve nvidia/Nemotron-H-8B-Base-8K --use-replayssm --mamba-cache-mode all --speculative-config "
        '\'{"method": "ngram", "num_speculative_tokens": 3}\' --mamba-backend flashinfer',
        "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve /models/x -tp 2 --no-enable-prefix-caching --served-model-name a b "
        "--port=8001",
        "vllm serve m --kv-transfer-config.kv_connector NixlConnector --kv-transfer-config.kv_role kv_both",
    ],
)
def test_parse_render_parse_round_trip(command: str) -> None:
    first = parse(command).config
    rendered = render_command(first)
    second = parse(rendered).config
    assert {k: v.value for k, v in second.settings.items()} == {k: v.value for k, v in first.settings.items()}
    assert {k: v.value for k, v in second.env.items()} == {k: v.value for k, v in first.env.items()}
    assert rendered == shlex.join(shlex.split(command))  # nothing changed, so nothing is rewritten


def test_render_writes_only_the_changed_arguments_anew() -> None:
    from logdoctor.launch.config import Origin

    config = parse("vllm serve m --mamba-cache-mode all -tp 2 --use-replayssm").config
    fix = Origin(kind="command", where="fix")
    config.set("mamba_cache_mode", "align", fix, given=True)
    config.set("enable_prefix_caching", False, fix, given=True)
    config.unset("use_replayssm")
    config.set("speculative_config", {"method": "ngram"}, fix, given=True)
    assert render_command(config) == (
        "vllm serve m --mamba-cache-mode align -tp 2 --no-enable-prefix-caching "
        '--speculative-config \'{"method": "ngram"}\''
    )


def test_config_file_values_and_command_line_precedence(tmp_path: Path) -> None:
    yaml_file = tmp_path / "serve.yaml"
    yaml_file.write_text(
        "model: nvidia/NVIDIA-Nemotron-Nano-9B-v2\nuse-replayssm: true\nmamba_backend: flashinfer\n"
        "tensor-parallel-size: 4\nspeculative-config:\n  method: ngram\n  num_speculative_tokens: 3\n"
    )
    config = parse(f"vllm serve --config {yaml_file} -tp 2").config
    assert config.value("use_replayssm") is True and config.value("mamba_backend") == "flashinfer"
    assert config.value("tensor_parallel_size") == 2  # the command line wins over the file
    assert config.value("speculative_config") == {"method": "ngram", "num_speculative_tokens": 3}
    assert config.get("mamba_backend").origin.kind == "config_file"  # type: ignore[union-attr]


def test_broken_config_file_names_itself(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(CommandError, match="bad.yaml"):
        read_config_file(bad)


def test_secrets_are_never_written_back() -> None:
    rendered = render_command(parse("vllm serve m --api-key k1 k2 --hf-token hf_abcdefghijklmnopqrstuvwx").config)
    assert rendered == "vllm serve m --api-key '***' --hf-token '***'"


def test_a_config_path_with_a_nul_is_what_vllm_refuses() -> None:
    """Found by hypothesis: `--config` with a NUL in its path raised ValueError from pathlib. vLLM checks
    the extension first (load_config_file), then open() refuses the NUL: both are parser problems."""
    assert parse_command(["vllm", "serve", "m", "--config", "\x00"]).problems == [
        "--config \x00: vLLM exits with `ValueError: Config file must be of a yaml/yml type. \x00 supplied`"
    ]
    assert parse_command(["vllm", "serve", "m", "--config", "\x00.yaml"]).problems == [
        "--config \x00.yaml: vLLM exits with `ValueError: embedded null byte`"
    ]


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (
            "vllm serve m --max-model-len 2048.0",
            "argument --max-model-len: invalid human_readable_int_or_auto value: '2048.0'",
        ),
        ("vllm serve m --tensor-parallel-size 2.0", "argument --tensor-parallel-size/-tp: invalid int value: '2.0'"),
        (
            "vllm serve m --gpu-memory-utilization high",
            # argparse names an argument by all its spellings (_get_action_name)
            "argument --gpu-memory-utilization/--device-memory-utilization: invalid float value: 'high'",
        ),
        ("vllm serve m --max-model-len 1.5K", "Decimals are not allowed with binary suffixes like K"),
    ],
)
def test_values_vllm_would_refuse_are_reported(command: str, problem: str) -> None:
    assert any(problem in p for p in parse(command).problems)


@pytest.mark.parametrize(
    ("command", "dest", "value"),
    [
        ("vllm serve m --max-model-len 32k", "max_model_len", 32000),
        ("vllm serve m --max-model-len 1K", "max_model_len", 1024),
        ("vllm serve m --max-model-len auto", "max_model_len", -1),
        ("vllm serve m --max-num-batched-tokens 2M", "max_num_batched_tokens", 2**21),
    ],
)
def test_human_readable_ints_as_vllm_reads_them(command: str, dest: str, value: int) -> None:
    parsed = parse(command)
    assert parsed.problems == [] and parsed.config.value(dest) == value


def test_a_fix_writes_values_the_way_the_argument_is_typed() -> None:
    from logdoctor.launch.argspec import load_spec
    from logdoctor.launch.cmdline import format_value

    spec = load_spec("0.33.0")
    assert format_value(spec.by_dest["max_model_len"], "2048.0") == "2048"
    assert format_value(spec.by_dest["max_model_len"], 2048.7) == "2048"  # an upper bound: rounded down
    assert format_value(spec.by_dest["tensor_parallel_size"], 2.0) == "2"
    assert format_value(spec.by_dest["gpu_memory_utilization"], "0.9") == "0.9"
    assert format_value(spec.by_dest["gpu_memory_utilization"], 1) == "1.0"


def test_an_unknown_option_gets_the_nearest_real_one_and_vllms_hint(tmp_path: Path) -> None:
    from logdoctor.check import run_check

    report = run_check(shlex.split("vllm serve m --max-model-length 4096 --task embed"), version="0.33.0", environ={})
    assert any("did you mean --max-model-len?" in p for p in report.problems)
    assert any("use --runner pooling" in p for p in report.problems)  # vLLM's own hint, kept
    assert report.audit.after == "vllm serve m --max-model-len 4096"
    assert any("drops --task" in c for c in report.audit.caveats)


def test_a_bad_yaml_key_is_the_files_with_its_diff(tmp_path: Path) -> None:
    serve = tmp_path / "serve.yaml"
    serve.write_text("tensor-paralel-size: 2\nmax-model-len: 1024\n")
    parsed = parse(f"vllm serve m --config {serve}")
    assert any(p.startswith(f"key `tensor-paralel-size` in {serve}") for p in parsed.problems)
    assert parsed.yaml_diff == ["- tensor-paralel-size: 2", "+ tensor-parallel-size: 2"]
    assert "--tensor-paralel-size" not in parsed.renames  # the command line is not blamed
