"""Ask real vLLM (imported once; each launch in a fork of logdoctor/probe/vllm_probe.py) what it says of the
launches that confirm the quantization, dtype, KV cache, speculative and LoRA rules on both sides of their
boundaries; tests/rules_vllm_runs_quant.toml keeps the answers of 0.33.0.

    cd $(mktemp -d) && VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 \\
        /work/vllm033/bin/python bench/rules_vllm_probe.py [NAME ...]
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "logdoctor" / "probe"))
import vllm_probe as p  # noqa: E402

M = "/work/vllm-models"
D = json.dumps
LAUNCHES = {
    "q-gptq-marlin": [f"{M}/llama-tiny-gptq", "--quantization", "gptq_marlin"],
    "q-gptq-humming": [f"{M}/llama-tiny-gptq", "--quantization", "humming"],
    "q-awq-awq": [f"{M}/llama-tiny-awq", "--quantization", "awq"],
    "q-fpquant": [f"{M}/llama-tiny", "--quantization", "fp_quant"],
    "q-fbgemm-allowed": [f"{M}/llama-tiny", "--quantization", "fbgemm_fp8", "--allow-deprecated-quantization"],
    "q-gptq-f32": [f"{M}/llama-tiny-gptq", "--dtype", "float32"],
    "q-awq-f16": [f"{M}/llama-tiny-awq", "--dtype", "float16"],
    "q-fp8-f16": [f"{M}/llama-tiny-fp8", "--dtype", "float16"],
    "q-bnb": [f"{M}/llama-tiny", "--quantization", "bitsandbytes"],
    "d-gemma2-f32": [f"{M}/gemma2-tiny", "--dtype", "float32"],
    "d-gemma2-auto": [f"{M}/gemma2-tiny"],
    "d-llama-f16": [f"{M}/llama-tiny", "--dtype", "float16"],
    "k-bf16": [f"{M}/llama-tiny", "--kv-cache-dtype", "bfloat16"],
    "k-f16-f16": [f"{M}/llama-tiny", "--dtype", "float16", "--kv-cache-dtype", "float16"],
    "k-f32-bf16": [f"{M}/llama-tiny", "--dtype", "float32", "--kv-cache-dtype", "bfloat16"],
    "k-e5m2": [f"{M}/llama-tiny", "--kv-cache-dtype", "fp8_e5m2"],
    "k-int4": [f"{M}/llama-tiny", "--kv-cache-dtype", "int4"],
    "s-ngram-notokens": [f"{M}/llama-tiny", "--speculative-config", D({"method": "ngram"})],
    "s-ngram-zero": [f"{M}/llama-tiny", "--speculative-config", D({"method": "ngram", "num_speculative_tokens": 0})],
    "s-ngram-minonly": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2}),
    ],
    "s-ngram-maxonly-low": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 2}),
    ],
    "s-draft-tp1": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"model": f"{M}/llama-tiny", "num_speculative_tokens": 2, "draft_tensor_parallel_size": 1}),
    ],
    "s-tp-key": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"model": f"{M}/llama-tiny", "num_speculative_tokens": 2, "tensor_parallel_size": 1}),
    ],
    "s-tokens-conflict": [
        f"{M}/llama-tiny",
        "--spec-tokens",
        "3",
        "--speculative-config",
        D({"method": "ngram", "num_speculative_tokens": 3}),
    ],
    "s-model-conflict": [
        f"{M}/llama-tiny",
        "--spec-model",
        "x/y",
        "--speculative-config",
        D({"model": "x/y", "num_speculative_tokens": 3}),
    ],
    "s-flags-only": [f"{M}/llama-tiny", "--spec-tokens", "3", "--spec-method", "ngram"],
    "s-lora-budget-ok": [
        f"{M}/llama-tiny",
        "--enable-lora",
        "--max-num-seqs",
        "64",
        "--max-num-batched-tokens",
        "256",
        "--speculative-config",
        D({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}),
    ],
    "s-lora-budget-255": [
        f"{M}/llama-tiny",
        "--enable-lora",
        "--max-num-seqs",
        "64",
        "--max-num-batched-tokens",
        "255",
        "--speculative-config",
        D({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}),
    ],
    "s-custom-nomodel": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"method": "custom_class", "num_speculative_tokens": 3}),
    ],
    "s-mtp-nomodel": [f"{M}/llama-tiny", "--speculative-config", D({"method": "mtp", "num_speculative_tokens": 1})],
    "s-medusa-033": [
        f"{M}/llama-tiny",
        "--speculative-config",
        D({"method": "medusa", "model": "x/y", "num_speculative_tokens": 1}),
    ],
    "l-cpu-eq": [f"{M}/llama-tiny", "--enable-lora", "--max-loras", "2", "--max-cpu-loras", "2"],
    "l-cpu-zero": [f"{M}/llama-tiny", "--enable-lora", "--max-loras", "2", "--max-cpu-loras", "0"],
    "l-cpu-below": [f"{M}/llama-tiny", "--enable-lora", "--max-loras", "4", "--max-cpu-loras", "3"],
    "l-mm-nolora": [f"{M}/llama-tiny", "--default-mm-loras", D({"image": "/tmp/vision-lora"})],
    "l-mixtral": [f"{M}/mixtral-tiny", "--enable-lora"],
    "l-bert": [f"{M}/bert-tiny", "--enable-lora"],
    "l-kimi": [f"{M}/kimi-linear-tiny", "--enable-lora"],
    "l-gpt2-transformers": [f"{M}/gpt2-tiny", "--enable-lora", "--model-impl", "transformers"],
}
parser, serve = p._load()
only = sys.argv[1:]
for name, argv in LAUNCHES.items():
    if only and name not in only:
        continue
    answer = p._isolated(parser, serve, {"argv": argv + ["--load-format", "dummy"], "env": {}})
    msg = "ACCEPTED" if answer.get("ok") else (answer.get("message") or str(answer))[:400]
    print(json.dumps({"name": name, "argv": argv, "vllm": msg}), flush=True)
