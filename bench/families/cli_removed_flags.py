"""Generate the removed-flag patterns of patterns/cli.toml: one pattern per `vllm serve` option
that some vLLM release accepted and 0.33.0 no longer does, so argparse answers
`vllm serve: error: unrecognized arguments: --swap-space 4` (exit 2).

    python bench/families/cli_removed_flags.py

Which releases accept which option is read from the released sources under /work/vllm-src/<version>/
(`add_argument("--flag", ...)` in engine/arg_utils.py and the entrypoints' cli_args.py / serve.py /
api_server.py, plus the fields of the `*FrontendArgs` dataclasses, whose names become flags) and, for
0.27-0.33, from vLLM's real argparse specs in logdoctor/launch/argspecs/ (every option string, aliases
and `--no-`/`--disable-` inverses included). A flag is "removed" when it is absent from the 0.33.0 spec;
`--no-X` forms are left out (0.33 still accepts them, hidden from help). What replaces a flag is
knowledge, written below by hand from the deprecation notices and release sources; the script fails when
a removed flag has no entry, so a flag removed by a newer release cannot be missed.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, ROOT, pattern_toml, splice  # noqa: E402

SRC = Path("/work/vllm-src")
SPECS = ROOT / "logdoctor" / "launch" / "argspecs"
CURRENT = "0.33.0"
FILES = [
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/entrypoints/common/cli_args.py",
    "vllm/entrypoints/launchers/cli_args.py",
    "vllm/entrypoints/openai/api_server.py",
    "vllm/utils/argparse_utils.py",
]
# `--config` was first added by vllm/scripts.py (0.6), a file outside FILES.
CONFIG_ELSEWHERE = {"0.6.6.post1"}
ADD_ARGUMENT = re.compile(r"""add_argument\(\s*['"](--[a-z0-9][a-z0-9-]*)['"]""")

# flag -> what to do instead. `use` is one sentence (with the replacement flag of 0.33 when there is one),
# `why` says what happened to the option, `set`/`unset` are the fix as data (vLLM argument names).
# A `{value}` placeholder is the value the user gave the removed flag. `steps` (optional) are extra fix steps,
# release-qualified (`[>=0.11] ...`) when the replacement differs between the releases of the range.
REPLACEMENTS: dict[str, dict[str, object]] = {
    "--image-feature-size": {"why": "The early vision-language options were removed; the model's processor now describes its image inputs.", "use": "Drop {flag}: vLLM reads the image settings from the model's processor config."},
    "--image-input-shape": {"why": "The early vision-language options were removed; the model's processor now describes its image inputs.", "use": "Drop {flag}: vLLM reads the image settings from the model's processor config."},
    "--image-input-type": {"why": "The early vision-language options were removed; the model's processor now describes its image inputs.", "use": "Drop {flag}: vLLM reads the image settings from the model's processor config."},
    "--image-token-id": {"why": "The early vision-language options were removed; the model's processor now describes its image inputs.", "use": "Drop {flag}: vLLM reads the image settings from the model's processor config."},
    "--engine-use-ray": {"why": "Running the engine itself as a Ray actor was removed.", "use": "Drop {flag}; for multi-GPU / multi-node with Ray use `--distributed-executor-backend ray`."},
    "--worker-use-ray": {"why": "The option was replaced by the executor choice.", "use": "Use `--distributed-executor-backend ray` instead of {flag}.", "set": {"distributed_executor_backend": "ray"}},
    "--max-context-len-to-capture": {"why": "It was renamed --max-seq-len-to-capture (0.6-0.10), which was removed too; CUDA-graph sizes are now set through the compilation config.", "use": "Drop {flag}; the steps name the option that bounds CUDA-graph capture in your release.",
                                     "steps": ["[<0.11] Bound CUDA-graph capture with the renamed option: `--max-seq-len-to-capture N`.",
                                               "[>=0.11] Bound CUDA-graph capture with `--max-cudagraph-capture-size N` (or list the sizes with `--cudagraph-capture-sizes`)."]},
    "--max-seq-len-to-capture": {"why": "Removed in 0.11 with the V0 engine; CUDA-graph capture sizes are now set through the compilation config.", "use": "Drop {flag}; to bound CUDA-graph capture use `--max-cudagraph-capture-size N` (or `--cudagraph-capture-sizes`)."},
    "--quantization-param-path": {"why": "FP8 KV-cache scales are read from the checkpoint instead of a separate JSON file.", "use": "Drop {flag}; use a checkpoint that contains its KV-cache scales (or keep `--kv-cache-dtype fp8` with default scales)."},
    "--disable-logprobs-during-spec-decoding": {"why": "It belonged to the V0 speculative-decoding worker, which was removed.", "use": "Drop {flag}."},
    "--spec-decoding-acceptance-method": {"why": "It belonged to the V0 speculative-decoding worker, which was removed.", "use": "Drop {flag}; speculative decoding now uses rejection sampling configured through `--speculative-config`."},
    "--typical-acceptance-sampler-posterior-alpha": {"why": "It belonged to the V0 speculative-decoding worker, which was removed.", "use": "Drop {flag}."},
    "--typical-acceptance-sampler-posterior-threshold": {"why": "It belonged to the V0 speculative-decoding worker, which was removed.", "use": "Drop {flag}."},
    "--speculative-disable-mqa-scorer": {"why": "It belonged to the V0 speculative-decoding worker, which was removed.", "use": "Drop {flag}."},
    "--speculative-disable-by-batch-size": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Drop {flag}: the V1 engine has no batch-size cut-off for speculative decoding."},
    "--ngram-prompt-lookup-max": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Use `--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": {value|4}}'` instead of {flag}."},
    "--ngram-prompt-lookup-min": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Use `--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_min\": {value|1}, \"prompt_lookup_max\": 4}'` instead of {flag}."},
    "--num-speculative-tokens": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Put it in the JSON option: `--speculative-config '{\"model\": \"<draft>\", \"num_speculative_tokens\": {value|5}}'`."},
    "--speculative-model": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Use `--speculative-config '{\"model\": \"{value|<draft>}\", \"num_speculative_tokens\": 5}'` instead of {flag} (for n-gram lookup: `{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_max\": 4}`)."},
    "--speculative-model-quantization": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Put it in the JSON option: `--speculative-config '{\"model\": \"<draft>\", \"num_speculative_tokens\": 5, \"quantization\": \"{value|fp8}\"}'`."},
    "--speculative-draft-tensor-parallel-size": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Put it in the JSON option: `--speculative-config '{\"model\": \"<draft>\", \"num_speculative_tokens\": 5, \"draft_tensor_parallel_size\": {value|1}}'`."},
    "--speculative-max-model-len": {"why": "The separate speculative-decoding flags were folded into the JSON option --speculative-config (0.8+).", "use": "Put it in the JSON option: `--speculative-config '{\"model\": \"<draft>\", \"num_speculative_tokens\": 5, \"max_model_len\": {value|4096}}'`."},
    "--device": {"why": "The device is detected from the installed platform (CUDA, ROCm, CPU, XPU, TPU build) instead of chosen by a flag.", "use": "Drop {flag}; choose GPUs with `CUDA_VISIBLE_DEVICES` and install the vLLM build for your hardware (e.g. the CPU build for CPU inference)."},
    "--enable-prompt-adapter": {"why": "Prompt-adapter (soft prompt) support was removed in 0.10.", "use": "Drop {flag}; serve adapters as LoRA (`--enable-lora --lora-modules name=path`) if they can be converted."},
    "--prompt-adapters": {"why": "Prompt-adapter (soft prompt) support was removed in 0.10.", "use": "Drop {flag}; serve adapters as LoRA (`--enable-lora --lora-modules name=path`) if they can be converted."},
    "--max-prompt-adapters": {"why": "Prompt-adapter (soft prompt) support was removed in 0.10.", "use": "Drop {flag}."},
    "--max-prompt-adapter-token": {"why": "Prompt-adapter (soft prompt) support was removed in 0.10.", "use": "Drop {flag}."},
    "--enable-reasoning": {"why": "Reasoning output is enabled by choosing a reasoning parser; the extra switch was removed in 0.10.", "use": "Drop {flag} and keep `--reasoning-parser <name>` (e.g. deepseek_r1, qwen3)."},
    "--expand-tools-even-if-tool-choice-none": {"why": "The option was removed in 0.10.", "use": "Drop {flag}; tool definitions are no longer added to the prompt when tool_choice is none."},
    "--long-lora-scaling-factors": {"why": "Long-context LoRA (scaling-factor LoRA) was removed in 0.10.", "use": "Drop {flag}."},
    "--multi-step-stream-outputs": {"why": "Multi-step scheduling belonged to the V0 engine, removed in 0.10.", "use": "Drop {flag}."},
    "--num-scheduler-steps": {"why": "Multi-step scheduling belonged to the V0 engine, removed in 0.10; the V1 engine schedules every step.", "use": "Drop {flag} (`--async-scheduling` is the V1 way to overlap scheduling with execution)."},
    "--override-neuron-config": {"why": "The in-tree AWS Neuron backend was removed in 0.10 (it lives in the vllm-neuron plugin now).", "use": "Drop {flag}; for Neuron install the plugin and pass its options through `--additional-config`."},
    "--qlora-adapter-name-or-path": {"why": "The QLoRA shortcut was removed in 0.10.", "use": "Serve the adapter as a LoRA module: `--enable-lora --lora-modules name=/path/to/adapter` instead of {flag}."},
    "--tokenizer-pool-extra-config": {"why": "The Ray tokenizer pool was removed in 0.10.", "use": "Drop {flag}; for parallel tokenisation start several API servers with `--api-server-count N`."},
    "--tokenizer-pool-size": {"why": "The Ray tokenizer pool was removed in 0.10.", "use": "Drop {flag}; for parallel tokenisation start several API servers with `--api-server-count N`."},
    "--tokenizer-pool-type": {"why": "The Ray tokenizer pool was removed in 0.10.", "use": "Drop {flag}."},
    "--use-v2-block-manager": {"why": "The V1 block manager was removed long ago and the flag had no effect; it was dropped in 0.10.", "use": "Drop {flag}: it changes nothing."},
    "--disable-async-output-proc": {"why": "Asynchronous output processing belonged to the V0 engine, removed in 0.11.", "use": "Drop {flag}."},
    "--enable-lora-bias": {"why": "LoRA bias support was removed in 0.11.", "use": "Drop {flag}; merge the bias into the base weights or retrain the adapter without bias."},
    "--guided-decoding-backend": {"why": "Guided decoding was renamed structured outputs in 0.11; its options moved into --structured-outputs-config.", "use": "Use `--structured-outputs-config '{\"backend\": \"{value|xgrammar}\"}'` (or `--structured-outputs-config.backend {value|xgrammar}`) instead of {flag}."},
    "--guided-decoding-disable-additional-properties": {"why": "Guided decoding was renamed structured outputs in 0.11; its options moved into --structured-outputs-config.", "use": "Use `--structured-outputs-config '{\"backend\": \"guidance\", \"disable_additional_properties\": true}'` instead of {flag}."},
    "--guided-decoding-disable-any-whitespace": {"why": "Guided decoding was renamed structured outputs in 0.11; its options moved into --structured-outputs-config.", "use": "Use `--structured-outputs-config '{\"backend\": \"xgrammar\", \"disable_any_whitespace\": true}'` instead of {flag}."},
    "--guided-decoding-disable-fallback": {"why": "Guided decoding was renamed structured outputs in 0.11; its options moved into --structured-outputs-config.", "use": "Use `--structured-outputs-config '{\"backend\": \"xgrammar\", \"disable_fallback\": true}'` instead of {flag} (check `vllm serve --help=structured-outputs-config` for the keys of your release)."},
    "--preemption-mode": {"why": "Swap-based preemption belonged to the V0 engine, removed in 0.11; V1 always recomputes preempted requests.", "use": "Drop {flag}."},
    "--rope-scaling": {"why": "RoPE overrides go through the generic Hugging Face config override since 0.11.", "use": "Drop {flag} and move its value ({value|not shown}) into the Hugging Face config override: `--hf-overrides '{\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 32768}}'` (key `rope_scaling` on releases that use Transformers v4)."},
    "--rope-theta": {"why": "RoPE overrides go through the generic Hugging Face config override since 0.11.", "use": "Use `--hf-overrides '{\"rope_theta\": {value|1000000}}'` instead of {flag} (inside `rope_parameters` with Transformers v5)."},
    "--scheduler-delay-factor": {"why": "The scheduler delay factor belonged to the V0 scheduler, removed in 0.11.", "use": "Drop {flag}."},
    "--eplb-log-balancedness": {"why": "The EPLB options were folded into --eplb-config in 0.12.", "use": "Use `--eplb-config '{\"log_balancedness\": true}'` (with `--enable-eplb`) instead of {flag}."},
    "--eplb-step-interval": {"why": "The EPLB options were folded into --eplb-config in 0.12.", "use": "Use `--eplb-config '{\"step_interval\": {value|3000}}'` (with `--enable-eplb`) instead of {flag}."},
    "--eplb-window-size": {"why": "The EPLB options were folded into --eplb-config in 0.12.", "use": "Use `--eplb-config '{\"window_size\": {value|1000}}'` (with `--enable-eplb`) instead of {flag}."},
    "--num-redundant-experts": {"why": "The EPLB options were folded into --eplb-config in 0.12.", "use": "Use `--eplb-config '{\"num_redundant_experts\": {value|32}}'` (with `--enable-eplb`) instead of {flag}."},
    "--lora-extra-vocab-size": {"why": "LoRA extra-vocabulary support was removed in 0.12.", "use": "Drop {flag}; adapters that add tokens need their embeddings merged into the base model."},
    "--num-lookahead-slots": {"why": "Lookahead slots belonged to the V0 speculative-decoding path, removed in 0.12.", "use": "Drop {flag}."},
    "--override-pooler-config": {"why": "It was renamed --pooler-config in 0.11 and the old name removed in 0.12.", "use": "Use `--pooler-config` with the same JSON value ({value|not shown}) instead of {flag}, e.g. `--pooler-config '{\"pooling_type\": \"MEAN\"}'`."},
    "--cuda-graph-sizes": {"why": "It was renamed --cudagraph-capture-sizes (deprecated in 0.11, removed in 0.13).", "use": "Use `--cudagraph-capture-sizes {value|1 2 4 8}` instead of {flag}."},
    "--disable-mm-preprocessor-cache": {"why": "Deprecated in 0.10 and removed in 0.13 in favour of a cache size.", "use": "Use `--mm-processor-cache-gb 0` instead of {flag}.", "set": {"mm_processor_cache_gb": "0"}},
    "--enable-multimodal-encoder-data-parallel": {"why": "Deprecated in 0.10 and removed in 0.13 in favour of a mode option.", "use": "Use `--mm-encoder-tp-mode data` instead of {flag}.", "set": {"mm_encoder_tp_mode": "data"}},
    "--task": {"why": "`--task` was replaced by `--runner` (generate / pooling) and `--convert` (embed / classify / ...) in 0.10 and removed in 0.13.", "use": "Drop `--task {value|<task>}`: for generation nothing else is needed (`--runner generate` is the default); for embedding/reranking/reward models use `--runner pooling`, adding `--convert embed` or `--convert classify` to adapt a generative checkpoint."},
    "--logits-processor-pattern": {"why": "Loading logits processors by a request-supplied module pattern was removed in 0.17.", "use": "Drop {flag}; register logits processors at startup with `--logits-processors <qualified.name>`."},
    "--use-gpu-for-pooling-score": {"why": "The option existed only in 0.17.", "use": "Drop {flag}."},
    "--swap-space": {"why": "CPU swap space for preempted requests belonged to the V0 engine's swap preemption and was removed in 0.18.", "use": "Drop {flag}; to keep KV cache in CPU memory use KV offloading (`--kv-offloading-size <GiB>`), to offload weights `--cpu-offload-gb`."},
    "--disable-frontend-multiprocessing": {"why": "The API server and engine always run in separate processes since 0.19.", "use": "Drop {flag}."},
    "--max-long-partial-prefills": {"why": "Concurrent partial prefills were removed in 0.27.", "use": "Drop {flag}; long prompts are split by chunked prefill (`--max-num-batched-tokens` sets the chunk)."},
    "--max-num-partial-prefills": {"why": "Concurrent partial prefills were removed in 0.27.", "use": "Drop {flag}; long prompts are split by chunked prefill (`--max-num-batched-tokens` sets the chunk)."},
    "--calculate-kv-scales": {"why": "Deprecated in 0.19 and removed in 0.28: KV-cache scales come from the checkpoint (or default to 1.0).", "use": "Drop {flag}; keep `--kv-cache-dtype fp8` and use a checkpoint that ships its KV-cache scales."},
    "--override-attention-dtype": {"why": "The option was removed in 0.28.", "use": "Drop {flag}; attention runs in the model dtype (`--dtype`), the KV cache in `--kv-cache-dtype`."},
    "--enable-bf16x3-router-gemm": {"why": "The experimental router-GEMM switch existed only in 0.26-0.29.", "use": "Drop {flag}."},
    "--enable-mamba-fine-grained-prefix-cache": {"why": "The experimental option existed only in 0.30.", "use": "Drop {flag}; Mamba prefix caching follows `--enable-prefix-caching` (with `--mamba-block-size`)."},
    "--disable-log-requests": {"why": "Replaced by --enable-log-requests in 0.10 (request logging is off by default) and removed in 0.17; 0.33 accepts it again as the inverse of --enable-log-requests.", "use": "Drop {flag}: requests are not logged unless you pass `--enable-log-requests`."},
}

# Flags that a later release brought back: versions where the flag is unknown are a closed range.
RETURNED = {"--disable-log-requests": "<0.33"}


def _key(version: str) -> list[int]:
    return [int(x) for x in version.replace(".post1", "").split(".")]


def releases() -> list[str]:
    return sorted((d.name for d in SRC.iterdir() if d.name[:1].isdigit()), key=_key)


def source_flags(version: str) -> set[str]:
    flags: set[str] = set()
    for rel in FILES:
        path = SRC / version / rel
        if not path.exists():
            continue
        text = path.read_text()
        flags.update(ADD_ARGUMENT.findall(text))
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef) and "FrontendArgs" in node.name:
                for stmt in node.body:
                    named = isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    if named and not stmt.target.id.startswith("_"):
                        flags.add("--" + stmt.target.id.replace("_", "-"))
    return flags


def spec_flags(version: str) -> set[str] | None:
    minor = ".".join(version.split(".")[:2])
    for path in SPECS.glob(f"{minor}.*.json"):
        spec = json.loads(path.read_text())
        return {o for opt in spec["options"] for o in opt["options"] if o.startswith("--")}
    return None


def flag_table() -> dict[str, list[str]]:
    """flag -> releases (last patch of each minor) whose `vllm serve` accepts it."""
    accepted: dict[str, list[str]] = {}
    for version in releases():
        flags = spec_flags(version) or set()
        flags |= source_flags(version) if version != CURRENT else set()
        for flag in flags:
            accepted.setdefault(flag, []).append(version)
    return accepted


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def remove_steps(table: dict[str, list[str]], vers: list[str], gone: str) -> list[str]:
    """Where to take the flag off; the `--config` YAML file only for releases that have `--config`."""
    config = [v for v in vers if v in table.get("--config", []) or v in CONFIG_ELSEWHERE]
    if gone in config:
        return ["Remove it from every place that adds options: the command line, a `--config` YAML file, a "
                "launcher script or a Helm/compose file."]
    return ["Remove it from every place that adds options: the command line, a launcher script or a Helm/compose file.",
            f"[>={minor(config[0])}] Remove it from the YAML file given to `--config` too, if there is one."]


def build() -> str:
    vers = releases()
    current = spec_flags(CURRENT)
    assert current, f"no argspec for {CURRENT}"
    table = flag_table()
    removed = sorted(
        (f for f in table if f not in current and not f.startswith("--no-")),
        key=lambda f: (_key(table[f][-1]), f),
    )
    missing = [f for f in removed if f not in REPLACEMENTS]
    if missing:
        raise SystemExit(f"removed flags without a replacement entry: {missing}")
    blocks = []
    for flag in removed:
        last = table[flag][-1]
        gone = vers[vers.index(last) + 1]
        versions = f">={minor(gone)}" + (f",{RETURNED[flag]}" if flag in RETURNED else "")
        entry = REPLACEMENTS[flag]
        slug = flag.removeprefix("--")
        name = slug.replace("-", "_")
        use = str(entry["use"]).replace("{flag}", flag)
        takes_value = "{value" in use or name in {"task", "guided_decoding_backend"}
        value = r"(?:[= ](?P<value>(?!--)\S+))?" if takes_value else ""
        match = rf"unrecognized arguments:(?:.*? )?(?P<flag>{flag}){value}(?=[\s=]|$)"  # a flag is [a-z0-9-]: no escaping
        first = table[flag][0]
        accepted = f"Release {minor(first)} accepted" if minor(first) == minor(last) else f"Releases {minor(first)} to {minor(last)} accepted"
        sample = {"task": "embed", "guided_decoding_backend": "outlines", "rope_scaling": "'{\"rope_type\":\"yarn\",\"factor\":4.0}'"}
        example_value = sample.get(name, "4")
        ex_flag = f"{flag} {example_value}" if takes_value or flag in {"--swap-space", "--device"} else flag
        neighbour = "--max-model-len 4096" if flag != "--max-model-len" else "--dtype half"
        blocks.append(
            pattern_toml(
                {
                    "id": f"cli.removed-flag-{slug}",
                    "title": f"{flag} was removed from vLLM ({minor(last)} was the last release with it)",
                    "severity": "error",
                    "where": "line",
                    "match": match,
                    "explanation": (
                        f"vLLM's argument parser does not know {flag}, so `vllm serve` exits (status 2) before "
                        f"anything starts. {accepted} it. {entry['why']}"
                    ),
                    "docs": "https://docs.vllm.ai/en/latest/cli/serve.html",
                    "summary": use,
                    "steps": [
                        *[str(step).replace("{flag}", flag) for step in entry.get("steps", [])],  # type: ignore[attr-defined]
                        *remove_steps(table, vers, gone),
                        "List what the installed release accepts: `vllm serve --help=all`, or `vllm serve --help=<word>` to search.",
                    ],
                    "set": entry.get("set", {}),
                    "unset": [name],
                    "file": "python argparse (vllm/utils/argparse_utils.py FlexibleArgumentParser)",
                    "function": "ArgumentParser.parse_args -> error('unrecognized arguments: %s')",
                    "versions": versions,
                    "checked": (
                        f"flag present in the vLLM {minor(first)}-{minor(last)} sources (engine/arg_utils.py, "
                        f"entrypoints cli_args.py) or argspecs, absent from the {minor(gone)} sources and from "
                        f"logdoctor/launch/argspecs/{CURRENT}.json; generated by bench/families/cli_removed_flags.py"
                    ),
                    "match_examples": [
                        f"vllm: error: unrecognized arguments: {ex_flag}",
                        f"vllm serve: error: unrecognized arguments: {neighbour} {ex_flag}",
                    ],
                    "no_match_examples": [
                        f"vllm: error: unrecognized arguments: {flag}-extra 1",
                        f"vllm serve: error: argument {flag}: expected one argument",
                    ],
                }
            )
        )
    return "\n".join(blocks)


def main() -> None:
    splice(PATTERNS / "cli.toml", "cli_removed_flags", build())


if __name__ == "__main__":
    main()
