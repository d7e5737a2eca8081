"""`check` reads a command line exactly as vLLM 0.33.0's parser does: each case's words were run through
the real parser (vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args over Python 3.11's
argparse) and its outcome is the expectation here: the value it stored, or the words it exits with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor.launch.cmdline import parse_command


def parse(*words: str, version: str = "0.33.0"):  # type: ignore[no-untyped-def]
    return parse_command(["vllm", "serve", *words], version)


@pytest.mark.parametrize(
    ("words", "dest", "value"),
    [
        # argparse _parse_optional / _get_option_tuples: a unique prefix of a long option is that option
        (["m", "--gpu-memory-util", "1.5"], "gpu_memory_utilization", 1.5),
        (["m", "--enable-pre"], "enable_prefix_caching", True),
        (["m", "--no-enable-prefix"], "enable_prefix_caching", False),
        (["m", "--max-num-seq", "8"], "max_num_seqs", 8),
        # `-tp=4`: an exact option before `=`
        (["m", "-tp=4"], "tensor_parallel_size", 4),
        # a negative number is a value, not an option (the parser has no option that looks like one)
        (["m", "--max-model-len", "-1"], "max_model_len", -1),
        # human_readable_int_or_auto strips the value
        (["m", "--max-model-len", " 2k "], "max_model_len", 2000),
        # int() takes underscores
        (["m", "--max-num-seqs", "1_000"], "max_num_seqs", 1000),
        # optional_type(int): stays an int; "None" is None
        (["m", "--max-cpu-loras", "4"], "max_cpu_loras", 4),
        (["m", "--max-cpu-loras", "None"], "max_cpu_loras", None),
        # optional_type(json.loads)
        (["m", "--speculative-config", '{"method": "ngram"}'], "speculative_config", {"method": "ngram"}),
        (["m", "--speculative-config", ""], "speculative_config", None),
        # union_dict_and_str: text that is not {...} stays text
        (["m", "--hf-overrides", "abc"], "hf_overrides", "abc"),
        # parse_dataclass: human-readable numbers inside the JSON are expanded first
        (
            ["m", "-cc", '{"max_cudagraph_capture_size": 1k}'],
            "compilation_config",
            {"max_cudagraph_capture_size": 1000},
        ),
        # dotted keys of a short option (`-cc.mode 0`) gather into -cc's JSON, values JSON-read
        (["m", "-cc.mode", "0"], "compilation_config", {"mode": 0}),
        (["m", "--compilation-config.compile_sizes+", "1,2"], "compilation_config", {"compile_sizes": ["1", "2"]}),
        # -O3 is --optimization-level 3
        (["m", "-O3"], "optimization_level", "3"),
        # `--model X` is moved to the front and is the model
        (["--model", "x", "--port", "8001"], "model", "x"),
        # `--config=FILE` is not pulled in (only the word `--config` is): argparse just stores it
        (["m", "--config=x.yaml"], "config", "x.yaml"),
        # nargs="?": the bare option is its const
        (["m", "--hf-token"], "hf_token", True),
        # LoRAParserAction, old format name=path
        (
            ["m", "--lora-modules", "a=b", "c=d"],
            "lora_modules",
            [{"name": "a", "path": "b"}, {"name": "c", "path": "d"}],
        ),
    ],
)
def test_values_as_vllm_reads_them(words: list[str], dest: str, value: object) -> None:
    parsed = parse(*words)
    assert parsed.problems == []
    assert parsed.config.value(dest) == value


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        # argparse _get_values -> _get_value: `invalid <type name> value: '...'` (the name with all spellings)
        (["m", "--tensor-parallel-size", "abc"], "argument --tensor-parallel-size/-tp: invalid int value: 'abc'"),
        (["m", "--port", "http"], "argument --port: invalid int value: 'http'"),
        (["m", "--block-size", "auto"], "argument --block-size: invalid int value: 'auto'"),
        (
            ["m", "--max-model-len", "2048tokens"],
            "argument --max-model-len: invalid human_readable_int_or_auto value: '2048tokens'",
        ),
        # human_readable_int's ArgumentTypeError, kept as it is inside optional_type
        (
            ["m", "--kv-cache-memory-bytes", "1.5G"],
            "argument --kv-cache-memory-bytes: Decimals are not allowed with binary suffixes like G. "
            "Did you mean to use 1.5g instead?",
        ),
        # engine/arg_utils.py parse_type: `Value ... cannot be converted to <the wrapped function>.`
        (["m", "--max-cpu-loras", "abc"], "argument --max-cpu-loras: Value abc cannot be converted to <class 'int'>."),
        (
            ["m", "--kv-cache-memory-bytes", "1Ki"],
            "argument --kv-cache-memory-bytes: Value 1Ki cannot be converted to <function human_readable_int at 0x...>.",
        ),
        (
            ["m", "--speculative-config", "{bad"],
            "argument --speculative-config/-sc: Value {bad cannot be converted to <function loads at 0x...>.",
        ),
        (
            ["m", "--hf-overrides", '{"max_position_embeddings": 4096,}'],
            'argument --hf-overrides: Value {"max_position_embeddings": 4096,} cannot be converted to '
            "<function loads at 0x...>.",
        ),
        # parse_dataclass: pydantic's validate_json refuses the JSON in jiter's words
        (
            ["m", "-cc", "{'mode': 3}"],
            "argument --compilation-config/-cc: 1 validation error for CompilationConfig: "
            "Invalid JSON: key must be a string at line 1 column 2",
        ),
        # argparse _check_value
        (
            ["m", "--dtype", "fp77"],
            "argument --dtype: invalid choice: 'fp77' (choose from 'auto', 'bfloat16', 'float', 'float16', "
            "'float32', 'half')",
        ),
        # argparse consume_optional
        (
            ["m", "--enable-prefix-caching=1"],
            "argument --enable-prefix-caching/--disable-prefix-caching: ignored explicit argument '1'",
        ),
        (["m", "--max-model-len"], "argument --max-model-len: expected one argument"),
        (["m", "--served-model-name"], "argument --served-model-name: expected at least one argument"),
        # argparse _parse_optional: a prefix of several options (in the order they were added, help first)
        (["m", "--he"], "ambiguous option: --he could match --help, --headless"),
        # vllm/entrypoints/common/cli_args.py LoRAParserAction: parser.error() without the argument's name
        (
            ["m", "--lora-modules", '{"name": "sql", "path": "/tmp/sql-lora",}'],
            'Invalid JSON format for --lora-modules: {"name": "sql", "path": "/tmp/sql-lora",}',
        ),
        (
            ["m", "--lora-modules", '{"name": "sql", "path": "/tmp/sql-lora", "rank": 8}'],
            'Invalid fields for --lora-modules: {"name": "sql", "path": "/tmp/sql-lora", "rank": 8} - '
            "LoRAModulePath.__init__() got an unexpected keyword argument 'rank'",
        ),
        (
            ["m", "--lora-modules", '{"name": "a"}'],
            'Invalid fields for --lora-modules: {"name": "a"} - '
            "LoRAModulePath.__init__() missing 1 required positional argument: 'path'",
        ),
        # FlexibleArgumentParser.parse_args: --served-model-name with no positional model first
        (
            ["--served-model-name", "llama", "--port", "8000"],
            "--served-model-name without a model: vLLM exits with `ValueError: `model` should be provided as the "
            "first positional argument when using `vllm serve`. i.e. `vllm serve <model> --<arg> <value>`.`",
        ),
        # a dotted word takes the next word as its value; `-0.5` looks dotted, and nothing follows it
        (
            ["m", "--gpu-memory-utilization", "-0.5"],
            "-0.5 without a value: vLLM exits with `IndexError: list index out of range`",
        ),
    ],
)
def test_refusals_in_vllms_words(words: list[str], problem: str) -> None:
    assert problem in parse(*words).problems


def test_an_ambiguous_prefix_is_not_also_unknown() -> None:
    assert parse("m", "--he").problems == ["ambiguous option: --he could match --help, --headless"]


def test_hidden_spellings_are_taken_and_old_ones_refused() -> None:
    # EnableDisableAction (0.33): --no-enable-x is registered but hidden; --no-disable-x never existed.
    assert parse("m", "--no-enable-prefix-caching").config.value("enable_prefix_caching") is False
    assert (
        parse("m", "--no-disable-prefix-caching").problems[0].startswith("unknown option --no-disable-prefix-caching:")
    )


def test_words_after_an_unknown_option_go_with_it_unless_the_model_is_to_come() -> None:
    # argparse: `--foo 1` leaves both over; before the model, the `1` is the model (`unrecognized: --foo m`).
    assert len(parse("m", "--foo", "1").problems) == 1
    parsed = parse("--foo", "1", "m")
    assert parsed.config.value("model") == "1"
    assert any("unexpected extra argument 'm'" in p for p in parsed.problems)


# --- --config (FlexibleArgumentParser._pull_args_from_config, load_config_file) ------------------------


def test_config_file_refusals_as_vllm_words_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.json").write_text('{"max-model-len": 1024}\n')
    assert parse("m", "--config", "serve.json").problems == [
        "--config serve.json: vLLM exits with `ValueError: Config file must be of a yaml/yml type. json supplied`"
    ]
    assert parse("m", "--config", "configs/serve.yaml").problems == [
        "--config configs/serve.yaml: vLLM exits with "
        "`FileNotFoundError: [Errno 2] No such file or directory: 'configs/serve.yaml'`"
    ]
    (tmp_path / "serve.yaml").write_text("max-model-len: 1024\n")
    assert parse("--config", "serve.yaml").problems == [
        "--config serve.yaml: vLLM exits with `ValueError: No model specified! Please specify model either as a "
        "positional argument or in a config file.`"
    ]
    assert parse("m", "--config").problems == [
        "--config: vLLM exits with `ValueError: No config file specified! Please check your command-line arguments.`"
    ]


def test_config_file_keys_are_read_as_options(tmp_path: Path) -> None:
    serve = tmp_path / "serve.yaml"
    # a key is an option word, abbreviations too; `false` is dropped (vllm serve reads the file in the
    # top-level parser, which has no `--no-x` options): the argument stays at its default
    serve.write_text("model: m\nmax-model: 2k\nenable-prefix-caching: false\nport: 8001\n")
    parsed = parse("--config", str(serve), "--port", "8002")
    assert parsed.problems == []
    config = parsed.config
    assert config.value("model") == "m" and config.value("max_model_len") == 2000
    assert "enable_prefix_caching" not in config.given
    assert config.value("port") == 8002  # the command line wins
    assert config.get("max_model_len").origin.kind == "config_file"  # type: ignore[union-attr]
    serve.write_text("port: http\n")
    assert parse("m", "--config", str(serve)).problems == ["argument --port: invalid int value: 'http'"]


# --- the version ------------------------------------------------------------------------------------


def test_each_version_reads_with_its_own_parser() -> None:
    # --disable-prefix-caching is 0.33's (EnableDisableAction); 0.32 refuses it, and its prefix
    # `--disable-prefix` is no option of 0.32 either.
    assert parse("m", "--disable-prefix-caching", version="0.32.0").problems
    assert parse("m", "--disable-prefix-caching", version="0.33.0").problems == []


def test_a_renamed_flag_is_corrected_to_this_releases_spelling_of_it() -> None:
    # 0.33's --disable-prefix-caching turns prefix caching off; 0.32 spells that --no-enable-prefix-caching
    # (the nearest spelling by letters, --enable-prefix-caching, would turn it on).
    parsed = parse("m", "--disable-prefix-caching", version="0.32.0")
    assert parsed.renames == {"--disable-prefix-caching": "--no-enable-prefix-caching"}
    assert "vLLM 0.33.0 has it (newer than 0.32.0)" in parsed.problems[0]
    # --enable-bf16x3-router-gemm was removed in 0.30: said, with the releases that have it
    problems = parse("m", "--enable-bf16x3-router-gemm", version="0.30.0").problems
    assert problems and "vLLM 0.27.0 to 0.29.0 have it (older than 0.30.0)" in problems[0]


def test_an_unknown_version_is_an_error() -> None:
    from logdoctor.check import run_check
    from logdoctor.launch.cmdline import CommandError

    with pytest.raises(CommandError, match=r"banana.*0\.27\.0.*0\.33\.0"):
        run_check(["vllm", "serve", "m"], version="banana", environ={}, sets=[])


def test_a_version_older_than_every_parser_says_which_it_read_with() -> None:
    from logdoctor.check import run_check

    report = run_check(["vllm", "serve", "m", "--use-replayssm"], version="0.20", environ={}, sets=[])
    assert any("0.20" in c and "0.27.0" in c and "--use-replayssm" in c for c in report.audit.caveats)
    newest = run_check(["vllm", "serve", "m"], version="0.33.1", environ={}, sets=[])
    assert not any("parser" in c for c in newest.audit.caveats)  # a patch release reads as its minor


# --- the real command -------------------------------------------------------------------------------


def logdoctor(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("logdoctor")
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_check_refuses_an_unknown_version_naming_the_ones_it_carries() -> None:
    proc = logdoctor("check", "--vllm-version", "banana", "--", "vllm", "serve", "m")
    assert proc.returncode == 2  # as the CLI's other usage errors
    assert "banana" in proc.stderr and "0.27.0" in proc.stderr and "0.33.0" in proc.stderr


def test_check_reports_a_value_vllms_parser_refuses() -> None:
    proc = logdoctor("check", "--format", "json", "--", "vllm", "serve", "m", "--max-cpu-loras", "abc")
    assert proc.returncode == 1
    problems = json.loads(proc.stdout)["problems"]
    assert problems == ["argument --max-cpu-loras: Value abc cannot be converted to <class 'int'>."]


def test_a_version_outside_the_sets_says_which_rules_checked_it() -> None:
    from logdoctor.check import run_check

    old = run_check(["vllm", "serve", "m", "--use-replayssm"], version="0.20", environ={}, machine=None)
    assert any("no rule set of logdoctor covers vLLM 0.20" in c for c in old.audit.caveats)
    new = run_check(["vllm", "serve", "m", "-tp", "3"], version="0.40", environ={}, machine=None)
    assert any(
        "vLLM 0.40 was checked with the rules verified for vLLM" in c and ">=0.33" in c for c in new.audit.caveats
    )
    assert not any("was checked with" in c for c in run_check(["vllm", "serve", "m"], environ={}).audit.caveats)
