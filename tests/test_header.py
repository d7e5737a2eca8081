"""Header lines written from the vLLM format strings (see the version named on each), not copied from logs."""

from __future__ import annotations

import pytest

from logdoctor.launch.header import (
    parse_engine_config,
    parse_header_line,
    parse_namespace_args,
    parse_non_default_args,
    parse_notice,
    parse_version_line,
)
from logdoctor.launch.pyrepr import Call


@pytest.mark.parametrize(
    ("message", "kind", "values"),
    [
        # version lines
        ("vLLM API server version 0.6.6.post1", "version", {"vllm_version": "0.6.6.post1"}),
        ("vLLM API server version 0.13.0", "version", {"vllm_version": "0.13.0"}),
        (
            "vLLM server version 0.33.0, serving model Qwen/Qwen3-32B",
            "version",
            {"vllm_version": "0.33.0", "model": "Qwen/Qwen3-32B"},
        ),
        (" ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.28.0", "version", {"vllm_version": "0.28.0"}),
        ("▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.28.0", "version", {"vllm_version": "0.28.0"}),
        ("  █▄█▀ █     █     █     █  model   org/name", "version", {"model": "org/name"}),
        # one-liners
        ("Resolved architecture: NemotronHForCausalLM", "architecture", {"architecture": "NemotronHForCausalLM"}),
        ("Using max model len 131072", "max_model_len", {"max_model_len": 131072}),
        (
            "Chunked prefill is enabled with max_num_batched_tokens=8192.",
            "chunked_prefill",
            {"enable_chunked_prefill": True, "max_num_batched_tokens": 8192},
        ),
        (  # 0.28+ (info, align); 0.23-0.27 warning may say 'all'
            "Mamba cache mode is set to 'align' for NemotronHForCausalLM by default when prefix caching is enabled",
            "mamba_cache_mode_default",
            {"mamba_cache_mode": "align", "architecture": "NemotronHForCausalLM", "enable_prefix_caching": True},
        ),
        (
            "Mamba cache mode is set to 'none' when prefix caching is disabled",
            "mamba_cache_mode_none",
            {"mamba_cache_mode": "none", "enable_prefix_caching": False},
        ),
        (  # 0.23-0.27
            "Warning: Prefix caching in Mamba cache 'all' mode is currently enabled. Its support for Mamba layers "
            "is experimental. Please report any issues you may observe.",
            "mamba_prefix_caching_experimental",
            {"mamba_cache_mode": "all", "enable_prefix_caching": True},
        ),
        (  # 0.13
            "Warning: Prefix caching is currently enabled. Its support for Mamba layers is experimental. "
            "Please report any issues you may observe.",
            "mamba_prefix_caching_experimental",
            {"enable_prefix_caching": True},
        ),
        (
            "Hybrid or mamba-based model detected without support for prefix caching with Mamba cache 'all' mode: "
            "falling back to 'align' mode.",
            "mamba_cache_mode_fallback",
            {"mamba_cache_mode": "align", "enable_prefix_caching": True},
        ),
        (  # 0.10-0.11
            "Hybrid or mamba-based model detected: disabling prefix caching since it is not yet supported.",
            "hybrid_prefix_caching_disabled",
            {"enable_prefix_caching": False},
        ),
        (  # 0.12-0.13
            "Hybrid or mamba-based model detected without support for prefix caching: disabling.",
            "hybrid_prefix_caching_disabled",
            {"enable_prefix_caching": False},
        ),
        (
            "Hybrid or mamba-based model detected: setting cudagraph mode to FULL_AND_PIECEWISE in order to "
            "optimize performance.",
            "hybrid_cudagraph_mode",
            {"cudagraph_mode": "FULL_AND_PIECEWISE"},
        ),
        (
            "Mamba cache mode 'all' is deprecated and will be removed in an upcoming release. If this is a problem, "
            "please open an issue at https://github.com/vllm-project/vllm/issues.",
            "mamba_cache_mode_all_deprecated",
            {"mamba_cache_mode": "all"},
        ),
        ("(Enabling) prefix caching by default", "prefix_caching_default", {"enable_prefix_caching": True}),
        ("(Disabling) prefix caching by default", "prefix_caching_default", {"enable_prefix_caching": False}),
        ("Enabling prefix caching by default", "prefix_caching_default", {"enable_prefix_caching": True}),
        ("Disabling prefix caching by default", "prefix_caching_default", {"enable_prefix_caching": False}),
        ("(Enabling) chunked prefill by default", "chunked_prefill_default", {"enable_chunked_prefill": True}),
        ("Disabling chunked prefill by default", "chunked_prefill_default", {"enable_chunked_prefill": False}),
        (
            "Disabling prefix caching: model has non-causal attention layers.",
            "prefix_caching_disabled",
            {"enable_prefix_caching": False},
        ),
        (
            "Disabling prefix caching: this instance runs the multi-modal encoder only.",
            "prefix_caching_disabled",
            {"enable_prefix_caching": False},
        ),
        (
            "Disabling prefix caching for FLASHINFER/TRITON_MLA with batch invariance, as it is not yet supported.",
            "prefix_caching_disabled",
            {"enable_prefix_caching": False},
        ),
        (
            "Encoder-decoder models do not support chunked prefill nor prefix caching; disabling both.",
            "encoder_decoder_disabling",
            {"enable_chunked_prefill": False, "enable_prefix_caching": False},
        ),
        (
            "Updating mamba_ssm_cache_dtype to 'float32' for NemotronH model",
            "mamba_ssm_cache_dtype",
            {"mamba_ssm_cache_dtype": "float32"},
        ),
        ("Using triton Mamba SSU backend.", "mamba_backend", {"mamba_backend": "triton"}),
        ("Using flashinfer Mamba SSU backend.", "mamba_backend", {"mamba_backend": "flashinfer"}),
        (
            "Using flashinfer ReplaySSM backend.",
            "replayssm_backend",
            {"use_replayssm": True, "mamba_backend": "flashinfer"},
        ),
        (
            "CPU platform detected: overriding Mamba SSU backend from 'triton' to 'cpu'.",
            "mamba_backend_cpu_override",
            {"mamba_backend": "cpu"},
        ),
        (
            "Creating v1 connector with name: NixlConnector and engine_id: 5b7e2c1a-0d3f-4a51-9e0c-1f2a3b4c5d6e",
            "kv_connector",
            {"kv_connector": "NixlConnector", "kv_engine_id": "5b7e2c1a-0d3f-4a51-9e0c-1f2a3b4c5d6e"},
        ),
        ("Creating v1 connector with name: LMCacheConnectorV1", "kv_connector", {"kv_connector": "LMCacheConnectorV1"}),
        (
            "world_size=4 rank=1 local_rank=1 distributed_init_method=tcp://10.0.0.5:29500 backend=nccl",
            "distributed_init",
            {
                "world_size": 4,
                "rank": 1,
                "local_rank": 1,
                "distributed_init_method": "tcp://10.0.0.5:29500",
                "distributed_backend": "nccl",
            },
        ),
        (
            "Model Runner V2 does not yet support LoRA, prompt embeddings; using the V1 model runner instead.",
            "model_runner_v1_fallback",
            {"use_v2_model_runner": False},
        ),
        (
            "--mamba-cache-mode is deprecated and will be removed in v0.33.0. It has no effect: Mamba prefix "
            "caching follows --enable-prefix-caching.",
            "mamba_cache_mode_ignored",
            {},
        ),
    ],
)
def test_header_lines(message: str, kind: str, values: dict[str, object]) -> None:
    fact = parse_header_line(message)
    assert fact is not None
    assert fact.kind == kind
    assert fact.values == values


@pytest.mark.parametrize(
    "message",
    [
        "",
        "Loading weights took 5.02 seconds",
        "Using Flash Attention backend on V1 engine.",
        "Using max model len",
        "Resolved",
        "vLLM is great",
        "       █     █     █▄   ▄█",
        "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
        "Mamba cache mode is unknown",
        "Initializing a tokenizer",
        "args: something else",
        "non-default args: not a dict",
        "Disabling cascade attention (not yet compatible with async speculative decoding).",
        "Creating v2 connector",
    ],
)
def test_other_lines_are_none(message: str) -> None:
    assert parse_header_line(message) is None


def test_details_keep_what_is_not_a_setting() -> None:
    fact = parse_header_line("Model Runner V2 does not yet support LoRA; using the V1 model runner instead.")
    assert fact is not None and fact.details == {"features": "LoRA"}
    fact = parse_header_line("Disabling prefix caching: model has non-causal attention layers.")
    assert fact is not None and fact.details["reason"] == "model has non-causal attention layers."
    fact = parse_header_line("vLLM server version 0.20.0, serving model m")
    assert fact is not None and fact.details == {"form": "server"} and fact.get("model") == "m"


def test_individual_parsers_say_none_for_other_kinds() -> None:
    assert parse_version_line("Resolved architecture: X") is None
    assert parse_non_default_args("args: Namespace(a=1)") is None
    assert parse_namespace_args("non-default args: {'a': 1}") is None
    assert parse_engine_config("vLLM API server version 0.8.5") is None
    assert parse_notice("vLLM API server version 0.8.5") is None
    notice = parse_notice("Using max model len 4096")
    assert notice is not None and notice.values == {"max_model_len": 4096}


# --- arguments --------------------------------------------------------------------------------------------

NON_DEFAULT = (
    "non-default args: {'model_tag': 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', 'port': 8081, "
    "'model': 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', 'tensor_parallel_size': 2, 'enable_prefix_caching': True, "
    "'mamba_cache_mode': 'all', 'mamba_backend': <MambaBackendEnum.FLASHINFER: 'flashinfer'>, "
    "'use_replayssm': True, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}, "
    "'kv_transfer_config': KVTransferConfig(kv_connector='NixlConnector', engine_id='e1', kv_role='kv_both', "
    "kv_connector_extra_config={}), 'api_key': '***'}"
)


def test_non_default_args() -> None:
    line = parse_non_default_args(NON_DEFAULT)
    assert line is not None and not line.truncated
    assert line.args["mamba_cache_mode"] == "all"
    assert isinstance(line.args["kv_transfer_config"], Call)
    fact = parse_header_line(NON_DEFAULT)
    assert fact is not None and fact.kind == "non_default_args" and not fact.truncated
    assert fact.get("tensor_parallel_size") == 2
    assert fact.get("mamba_backend") == "flashinfer"  # the enum member's value
    assert fact.get("kv_connector") == "NixlConnector"  # lifted out of kv_transfer_config
    assert fact.get("speculative_config") == {"method": "mtp", "num_speculative_tokens": 3}
    assert fact.get("api_key") == "***"


@pytest.mark.parametrize(
    ("cut", "present", "absent"),
    [
        (NON_DEFAULT.index("'use_replayssm'") + 6, "mamba_backend", "use_replayssm"),
        (NON_DEFAULT.index("engine_id=") + 13, "speculative_config", "api_key"),
        (NON_DEFAULT.index("'port'") + 10, "model_tag", "model"),
    ],
)
def test_truncated_non_default_args_keep_complete_pairs(cut: int, present: str, absent: str) -> None:
    fact = parse_header_line(NON_DEFAULT[:cut])
    assert fact is not None and fact.truncated
    assert fact.get(present) is not None
    assert fact.get(absent) is None


def test_truncated_inside_a_dataclass_keeps_its_complete_fields() -> None:
    fact = parse_header_line(NON_DEFAULT[: NON_DEFAULT.index("kv_role=")])
    assert fact is not None and fact.truncated
    assert fact.get("kv_connector") == "NixlConnector"


NAMESPACE = (
    "args: Namespace(subparser='serve', model_tag='meta-llama/Llama-3.1-8B-Instruct', config='', host=None, "
    "port=8000, uvicorn_log_level='info', allowed_origins=['*'], api_key=None, lora_modules=None, "
    "model='meta-llama/Llama-3.1-8B-Instruct', task='auto', tensor_parallel_size=2, enable_prefix_caching=False, "
    "max_model_len=None, dispatch_function=<function serve at 0x7f3a2b1c0d30>)"
)


def test_namespace_args() -> None:
    fact = parse_header_line(NAMESPACE)
    assert fact is not None and fact.kind == "namespace_args" and not fact.truncated
    assert fact.get("tensor_parallel_size") == 2
    assert fact.get("enable_prefix_caching") is False
    assert fact.get("model") == "meta-llama/Llama-3.1-8B-Instruct"
    truncated = parse_header_line(NAMESPACE[: NAMESPACE.index("task=")])
    assert truncated is not None and truncated.truncated and truncated.get("model") is not None


# --- the engine config summary ------------------------------------------------------------------------------

V1_033 = (
    "Initializing a V1 LLM engine (v0.33.0) with config: model='nvidia/NVIDIA-Nemotron-Nano-9B-v2', "
    "speculative_config=SpeculativeConfig(method='mtp', model='nvidia/NVIDIA-Nemotron-Nano-9B-v2', "
    "num_spec_tokens=3), tokenizer='nvidia/NVIDIA-Nemotron-Nano-9B-v2', skip_tokenizer_init=False, "
    "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=True, dtype=torch.bfloat16, "
    "max_seq_len=131072, download_dir=None, load_format=auto, tensor_parallel_size=2, pipeline_parallel_size=1, "
    "data_parallel_size=1, decode_context_parallel_size=1, dcp_comm_backend=ag_rs, disable_custom_all_reduce=False, "
    "quantization=fp8, quantization_config={'quant_method': 'fp8', 'activation_scheme': 'dynamic'}, "
    "enforce_eager=False, aux_output_config=AuxOutputConfig(routed_experts=False), kv_cache_dtype=auto, "
    "device_config=cuda, structured_outputs_config=StructuredOutputsConfig(backend='auto', reasoning_parser=''), "
    "observability_config=ObservabilityConfig(show_hidden_metrics_for_version=None, otlp_traces_endpoint=None), "
    "seed=0, served_model_name=nvidia/NVIDIA-Nemotron-Nano-9B-v2, enable_prefix_caching=True, "
    "enable_chunked_prefill=True, pooler_config=None, compilation_config={'mode': 3, 'cudagraph_capture_sizes': "
    "[1, 2, 4], 'pass_config': {'fuse_norm_quant': False}}, kernel_config=KernelConfig(ir_op_priority=None)"
)

V1_085 = (
    "Initializing a V1 LLM engine (v0.8.5.post1) with config: model='Qwen/Qwen2.5-7B-Instruct', "
    "speculative_config=None, tokenizer='Qwen/Qwen2.5-7B-Instruct', skip_tokenizer_init=False, tokenizer_mode=auto, "
    "revision=None, override_neuron_config=None, tokenizer_revision=None, trust_remote_code=False, "
    "dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=LoadFormat.AUTO, "
    "tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, "
    "enforce_eager=False, kv_cache_dtype=auto,  device_config=cuda, "
    "decoding_config=DecodingConfig(guided_decoding_backend='auto', reasoning_backend=None), "
    "observability_config=ObservabilityConfig(show_hidden_metrics=False, otlp_traces_endpoint=None), seed=None, "
    "served_model_name=Qwen/Qwen2.5-7B-Instruct, num_scheduler_steps=1, multi_step_stream_outputs=True, "
    "enable_prefix_caching=True, chunked_prefill_enabled=True, use_async_output_proc=True, "
    "disable_mm_preprocessor_cache=False, mm_processor_kwargs=None, pooler_config=None, "
    'compilation_config={"level":3,"custom_ops":["none"],"splitting_ops":["vllm.unified_attention"]}'
)

V0_066 = (
    "Initializing an LLM engine (v0.6.6.post1) with config: model='meta-llama/Llama-3.1-8B-Instruct', "
    "speculative_config=SpeculativeConfig(draft_model='[ngram]', num_spec_tokens=5), "
    "tokenizer='meta-llama/Llama-3.1-8B-Instruct', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
    "override_neuron_config=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.float16, "
    "max_seq_len=8192, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=2, "
    "pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=True, "
    "kv_cache_dtype=fp8_e5m2, quantization_param_path=None, device_config=cuda, "
    "decoding_config=DecodingConfig(guided_decoding_backend='xgrammar'), observability_config=ObservabilityConfig("
    "otlp_traces_endpoint=None, collect_model_forward_time=False, collect_model_execute_time=False), seed=0, "
    "served_model_name=meta-llama/Llama-3.1-8B-Instruct, num_scheduler_steps=1, multi_step_stream_outputs=True, "
    "enable_prefix_caching=False, chunked_prefill_enabled=True, use_async_output_proc=True, "
    "disable_mm_preprocessor_cache=False, mm_processor_kwargs=None, pooler_config=None, "
    'compilation_config={"splitting_ops":["vllm.unified_attention"],"candidate_compile_sizes":[],"compile_sizes":[]}'
    ", use_cached_outputs=True, "
)

V0_010 = (
    "Initializing a V0 LLM engine (v0.10.2) with config: model='m', speculative_config=None, tokenizer='m', "
    "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
    "trust_remote_code=False, dtype=torch.float16, max_seq_len=2048, download_dir=None, load_format=auto, "
    "tensor_parallel_size=1, pipeline_parallel_size=2, data_parallel_size=1, disable_custom_all_reduce=False, "
    "quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, "
    "decoding_config=DecodingConfig(backend='auto'), observability_config=ObservabilityConfig(), seed=None, "
    "served_model_name=m, enable_prefix_caching=None, chunked_prefill_enabled=False, use_async_output_proc=True, "
    'pooler_config=None, compilation_config={"level":0}, use_cached_outputs=False, '
)

LEGACY_04 = (
    "Initializing an LLM engine (v0.4.3) with config: model='facebook/opt-125m', speculative_config=None, "
    "tokenizer='facebook/opt-125m', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
    "rope_scaling=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.float16, max_seq_len=2048, "
    "download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=1, disable_custom_all_reduce=False, "
    "quantization=None, enforce_eager=False, kv_cache_dtype=auto, quantization_param_path=None, "
    "device_config=cuda, decoding_config=DecodingConfig(guided_decoding_backend='outlines'), seed=0, "
    "served_model_name=facebook/opt-125m)"
)

LEGACY_02 = (
    "Initializing an LLM engine with config: model='facebook/opt-125m', tokenizer='facebook/opt-125m', "
    "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.float16, "
    "max_seq_len=2048, download_dir=None, load_format=auto, tensor_parallel_size=1, quantization=None, seed=0)"
)


@pytest.mark.parametrize(
    ("message", "engine", "values"),
    [
        (
            V1_033,
            "V1",
            {
                "vllm_version": "0.33.0",
                "model": "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
                "speculative_config": {
                    "method": "mtp",
                    "model": "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
                    "num_spec_tokens": 3,
                },
                "trust_remote_code": True,
                "dtype": "bfloat16",
                "max_model_len": 131072,
                "tensor_parallel_size": 2,
                "pipeline_parallel_size": 1,
                "data_parallel_size": 1,
                "quantization": "fp8",
                "enforce_eager": False,
                "kv_cache_dtype": "auto",
                "seed": 0,
                "enable_prefix_caching": True,
                "enable_chunked_prefill": True,
            },
        ),
        (
            V1_085,
            "V1",
            {
                "vllm_version": "0.8.5.post1",
                "model": "Qwen/Qwen2.5-7B-Instruct",
                "speculative_config": None,
                "trust_remote_code": False,
                "dtype": "bfloat16",
                "max_model_len": 32768,
                "tensor_parallel_size": 1,
                "pipeline_parallel_size": 1,
                "quantization": None,
                "enforce_eager": False,
                "kv_cache_dtype": "auto",
                "seed": None,
                "enable_prefix_caching": True,
                "enable_chunked_prefill": True,
            },
        ),
        (
            V0_066,
            "LLM",
            {
                "vllm_version": "0.6.6.post1",
                "model": "meta-llama/Llama-3.1-8B-Instruct",
                "speculative_config": {"draft_model": "[ngram]", "num_spec_tokens": 5},
                "trust_remote_code": False,
                "dtype": "float16",
                "max_model_len": 8192,
                "tensor_parallel_size": 2,
                "pipeline_parallel_size": 1,
                "quantization": None,
                "enforce_eager": True,
                "kv_cache_dtype": "fp8_e5m2",
                "seed": 0,
                "enable_prefix_caching": False,
                "enable_chunked_prefill": True,
            },
        ),
        (
            LEGACY_02,
            "LLM",
            {
                "model": "facebook/opt-125m",
                "trust_remote_code": False,
                "dtype": "float16",
                "max_model_len": 2048,
                "tensor_parallel_size": 1,
                "quantization": None,
                "seed": 0,
            },
        ),
    ],
)
def test_engine_config(message: str, engine: str, values: dict[str, object]) -> None:
    fact = parse_header_line(message)
    assert fact is not None and fact.kind == "engine_config"
    assert fact.values == values
    assert fact.details["engine"] == engine
    assert "unknown" not in fact.details


def test_engine_config_raw_fields_keep_values_with_commas() -> None:
    line = parse_engine_config(V1_033)
    assert line is not None
    assert line.fields["compilation_config"] == (
        "{'mode': 3, 'cudagraph_capture_sizes': [1, 2, 4], 'pass_config': {'fuse_norm_quant': False}}"
    )
    assert line.fields["kernel_config"] == "KernelConfig(ir_op_priority=None)"
    assert line.fields["aux_output_config"] == "AuxOutputConfig(routed_experts=False)"
    assert list(line.fields)[:3] == ["model", "speculative_config", "tokenizer"]
    assert len(line.fields) == 33


def test_engine_config_two_spaces_before_device_config() -> None:
    line = parse_engine_config(V1_085)
    assert line is not None
    assert line.fields["kv_cache_dtype"] == "auto"
    assert line.fields["device_config"] == "cuda"


def test_v0_tail() -> None:
    line = parse_engine_config(V0_066)
    assert line is not None and line.use_cached_outputs is True
    assert line.fields["compilation_config"].endswith("]}")
    line = parse_engine_config(V0_010)
    assert line is not None
    assert (line.engine, line.version, line.use_cached_outputs) == ("V0", "0.10.2", False)
    assert line.values["pipeline_parallel_size"] == 2
    assert line.values["enable_prefix_caching"] == "None"  # not a bool: kept as printed


def test_legacy_unmatched_parenthesis() -> None:
    line = parse_engine_config(LEGACY_04)
    assert line is not None
    assert line.fields["served_model_name"] == "facebook/opt-125m"
    assert line.fields["rope_scaling"] == "None"
    legacy = parse_engine_config(LEGACY_02)
    assert legacy is not None and legacy.version is None and legacy.fields["seed"] == "0"


def test_engine_config_unknown_keys_are_kept() -> None:
    line = parse_engine_config(V1_033 + ", future_config=FutureConfig(a=1, b=2)")
    assert line is not None
    assert line.unknown == "future_config=FutureConfig(a=1, b=2)"
    assert line.fields["kernel_config"] == "KernelConfig(ir_op_priority=None)"
    middle = V1_033.replace("seed=0, ", "seed=0, new_flag=True, ")
    line = parse_engine_config(middle)
    assert line is not None and line.unknown == "new_flag=True" and line.values["seed"] == 0


def test_engine_config_missing_keys_are_skipped() -> None:
    shorter = V1_033.replace("data_parallel_size=1, ", "").replace("seed=0, ", "")
    line = parse_engine_config(shorter)
    assert line is not None
    assert "data_parallel_size" not in line.fields and "seed" not in line.fields
    assert line.values["pipeline_parallel_size"] == 1
    assert line.fields["observability_config"].endswith("otlp_traces_endpoint=None)")


def test_engine_config_truncated_keeps_what_it_has() -> None:
    line = parse_engine_config(V1_033[: V1_033.index(", load_format")] + ", load_for")
    assert line is not None
    assert line.values["max_model_len"] == 131072
    assert line.fields["download_dir"].startswith("None")
