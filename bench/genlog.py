"""Generate a realistic vLLM server log of any size, deterministically, with a manifest of what it planted.

    python bench/genlog.py OUT --size 1G [--error-heavy] [--seed 0]

writes OUT and OUT.manifest.json. The log is a server that ran for a long time and was restarted a few
times: each launch prints vLLM 0.33's start-up header (banner, non-default args, engine config, progress
bars with `\\r`, some launches in colour), then serves requests (uvicorn access lines, request-logger
lines whose prompts quote errors the users hit, throughput lines, warnings), with tracebacks planted at
random moments: request errors the API server logged and recovered from, and crashes that end a launch
(a worker's CUDA OOM and the wrappers the engine core and API server print after it, interleaved).
The error-heavy variant makes about 5% of the lines error-like.

The manifest lists every planted traceback with the rule logdoctor should name, its launch and first line,
so a benchmark can check that a fast scan found all of them and invented none.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

SITE = "/usr/local/lib/python3.12/dist-packages"
MODEL = "/models/Qwen3-30B-A3B-Instruct"
PROMPTS = [
    "Summarise this article in three bullet points.",
    "Write a haiku about the sea.",
    "My script fails with KeyError: 'input_ids' when I call the tokenizer, what is wrong?",
    "Explain this: Traceback (most recent call last): File \"train.py\", line 3 ... ValueError: bad shape",
    "Why do I get torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB on my laptop?",
    "Translate 'good morning' into French, German and Japanese.",
    "What does the error 'RuntimeError: NCCL error: unhandled system error' mean?",
    "Give me a SQL query that returns the ten most recent orders per customer.",
    "Is 'ERROR 404' a client or a server error?",
    "List the planets of the solar system in order of size.",
    "Rewrite this paragraph so that it sounds more formal.",
    "Why does pip say ERROR: Could not find a version that satisfies the requirement?",
]
# Warnings a serving vLLM prints, and the rule a tool should report each as (None: nothing to report).
# The preemption warning is vLLM's own (V0 scheduler.py): frequent preemption is worth a warning.
WARNINGS = [
    ("[protocol.py:118] The following fields were present in the request but ignored: {{'stream_options'}}", None),
    ("[serving.py:211] max_tokens 8192 is too large for the prompt length 3000; it was lowered to 5192", None),
    ("[scheduler.py:412] Sequence group chatcmpl-{rid} is preempted by PreemptionMode.RECOMPUTE mode because "
     "there is not enough KV cache space. This can affect the end-to-end performance. Increase "
     "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory.",
     "memory.v0-kv-cache-preemption"),
    ("[tokenizer.py:301] Failed to decode token 151643 of request chatcmpl-{rid}; replaced it with ''", None),
]


@dataclass
class Planted:
    rule: str  # the rule logdoctor should name; "unrecognized" for an error no pattern explains
    launch: int
    line: int  # first line of the traceback's record (1-based)
    last: int
    process: str


class Writer:
    """Buffers lines, numbers them, and knows the clock and the processes of the current launch."""

    def __init__(self, out, rng: random.Random, colour: bool = False) -> None:
        self.out = out
        self.rng = rng
        self.lines = 0
        self.bytes = 0
        self.buffer: list[str] = []
        self.seconds = 0
        self.colour = colour
        self.api = self.core = self.tp0 = self.tp1 = 0

    def clock(self) -> str:
        s = self.seconds
        return f"11-{1 + s // 86400 % 28:02d} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"

    def prefix(self, process: str, pid: int, level: str, where: str) -> str:
        shown = f"\x1b[32m{level}\x1b[0m" if self.colour and level == "INFO" else level
        return f"({process} pid={pid}) {shown} {self.clock()} {where} "

    def emit(self, text: str) -> int:
        self.buffer.append(text)
        self.lines += 1
        self.bytes += len(text) + 1
        if len(self.buffer) >= 4096:
            self.drain()
        return self.lines

    def drain(self) -> None:
        if self.buffer:
            self.out.write("\n".join(self.buffer) + "\n")
            self.buffer.clear()


def header(w: Writer) -> None:
    api, core = w.api, w.core
    info = lambda where, msg, pid=api, proc="APIServer": w.emit(w.prefix(proc, pid, "INFO", where) + msg)  # noqa: E731
    info("[startup.py:38]", "")
    info("[startup.py:38]", "       █     █     █▄   ▄█")
    info("[startup.py:38]", " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0")
    info("[startup.py:38]", f"  █▄█▀ █     █     █     █  model   {MODEL}")
    info("[startup.py:38]", "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀")
    info(
        "[startup.py:96]",
        f"non-default args: {{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', "
        "'max_model_len': 32768, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.92, "
        "'enable_prefix_caching': True, 'enable_log_requests': True}",
    )
    info("[model.py:744]", "Resolved architecture: Qwen3MoeForCausalLM")
    info("[model.py:2170]", "Using max model len 32768")
    info("[scheduler.py:236]", "Chunked prefill is enabled with max_num_batched_tokens=8192.")
    core_info = lambda where, msg: info(where, msg, core, "EngineCore_DP0")  # noqa: E731
    core_info(
        "[core.py:93]",
        f"Initializing a V1 LLM engine (v0.33.0) with config: model='{MODEL}', speculative_config=None, "
        f"tokenizer='{MODEL}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
        "dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, tensor_parallel_size=2, "
        "pipeline_parallel_size=1, data_parallel_size=1, quantization=None, enforce_eager=False, "
        "kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=Qwen3-30B-A3B-Instruct, "
        "enable_prefix_caching=True, enable_chunked_prefill=True",
    )
    for rank, pid in ((0, w.tp0), (1, w.tp1)):
        w.emit(w.prefix(f"Worker_TP{rank}", pid, "INFO", "[parallel_state.py:1208]")
               + f"rank {rank} in world size 2 is assigned as DP rank 0, PP rank 0, TP rank {rank}, EP rank {rank}")
    progress = "".join(
        f"Loading safetensors checkpoint shards: {p:3d}% Completed | {i}/16 [00:{i * 3:02d}<00:{48 - i * 3:02d}, "
        f"0.33it/s]\r"
        for i, p in ((i, i * 100 // 16) for i in range(17))
    )
    w.emit(f"(Worker_TP0 pid={w.tp0}) " + progress)
    w.emit(w.prefix("Worker_TP0", w.tp0, "INFO", "[default_loader.py:262]") + "Loading weights took 48.21 seconds")
    w.emit(w.prefix("Worker_TP0", w.tp0, "INFO", "[gpu_model_runner.py:2653]")
           + "Model loading took 28.4521 GiB and 49.011 seconds")
    core_info("[kv_cache_utils.py:1087]", "GPU KV cache size: 412,336 tokens")
    core_info("[kv_cache_utils.py:1091]", "Maximum concurrency for 32,768 tokens per request: 12.58x")
    w.emit(f"(Worker_TP0 pid={w.tp0}) " + "".join(
        f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): {p:3d}%|{'█' * (p // 10):<10}| {p * 67 // 100}/67 "
        "[00:03<00:00, 19.84it/s]\r" for p in range(0, 101, 20)))
    core_info("[core.py:218]", "init engine (profile, create kv cache, warmup model) took 92.14 seconds")
    info("[api_server.py:1932]", "Starting vLLM API server 0 on http://0.0.0.0:8000")
    for route in ("/v1/models", "/v1/chat/completions", "/v1/completions", "/health", "/metrics"):
        info("[launcher.py:44]", f"Route: {route}, Methods: GET, POST")
    w.emit(f"(APIServer pid={api}) INFO:     Started server process [{api}]")
    w.emit(f"(APIServer pid={api}) INFO:     Waiting for application startup.")
    w.emit(f"(APIServer pid={api}) INFO:     Application startup complete.")


def serve_line(w: Writer) -> None:
    rng = w.rng
    w.seconds += rng.random() < 0.3
    roll = rng.random()
    rid = f"{rng.getrandbits(64):016x}"
    if roll < 0.40:
        port = rng.randrange(30000, 65000)
        w.emit(f'(APIServer pid={w.api}) INFO:     10.0.{rng.randrange(256)}.{rng.randrange(256)}:{port} - '
               f'"POST /v1/chat/completions HTTP/1.1" 200 OK')
    elif roll < 0.62:
        w.emit(w.prefix("APIServer", w.api, "INFO", "[request_logger.py:67]")
               + f"Received request chatcmpl-{rid}: params: SamplingParams(n=1, presence_penalty=0.0, "
               f"frequency_penalty=0.0, repetition_penalty=1.0, temperature={rng.choice((0.0, 0.7, 1.0))}, top_p=1.0, "
               "top_k=0, min_p=0.0, seed=None, stop=[], stop_token_ids=[], bad_words=[], "
               "include_stop_str_in_output=False, "
               f"ignore_eos=False, max_tokens={rng.choice((256, 512, 2048))}, min_tokens=0, logprobs=None, "
               "prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
               "truncate_prompt_tokens=None, structured_outputs=None, extra_args=None), lora_request: None.")
    elif roll < 0.80:
        w.emit(w.prefix("APIServer", w.api, "DEBUG", "[request_logger.py:56]")
               + f"Request chatcmpl-{rid} details: prompt: '<|im_start|>user\\n{rng.choice(PROMPTS)}<|im_end|>\\n"
               "<|im_start|>assistant\\n', prompt_token_ids: None, prompt_embeds shape: None.")
    elif roll < 0.97:
        w.emit(w.prefix("APIServer", w.api, "INFO", "[async_llm.py:352]") + f"Added request chatcmpl-{rid}.")
    else:
        w.emit(w.prefix("APIServer", w.api, "INFO", "[loggers.py:283]")
               + f"Engine 000: Avg prompt throughput: {rng.uniform(100, 9000):.1f} tokens/s, Avg generation "
               f"throughput: {rng.uniform(50, 3000):.1f} tokens/s, Running: {rng.randrange(64)} reqs, Waiting: "
               f"{rng.randrange(8)} reqs, GPU KV cache usage: {rng.uniform(0, 95):.1f}%, Prefix cache hit rate: "
               f"{rng.uniform(0, 80):.1f}%")


def warning_line(w: Writer) -> Planted | None:
    template, rule = w.rng.choice(WARNINGS)
    where, message = template.format(rid=f"{w.rng.getrandbits(64):016x}").split(" ", 1)
    line = w.emit(w.prefix("APIServer", w.api, "WARNING", where) + message)
    return Planted(rule, 0, line, line, "APIServer") if rule else None


def frames(w: Writer, emit: Callable[[str], int], stack: list[tuple[str, int, str, str]]) -> None:
    for path, line, func, code in stack:
        emit(f'  File "{path}", line {line}, in {func}')
        emit(f"    {code}")
        if w.rng.random() < 0.5:
            emit("    " + "^" * min(len(code), 40))


SERVING_STACK = [
    (f"{SITE}/vllm/entrypoints/openai/chat_completion/serving.py", 901, "chat_completion_stream_generator",
     "async for res in result_generator:"),
    (f"{SITE}/vllm/v1/engine/async_llm.py", 461, "generate", "out = q.get_nowait() or await q.get()"),
    (f"{SITE}/vllm/v1/engine/output_processor.py", 70, "get", "raise output"),
    (f"{SITE}/vllm/v1/engine/output_processor.py", 402, "process_outputs", "new_text = req_state.detokenizer.update("),
    (f"{SITE}/vllm/v1/engine/detokenizer.py", 237, "update", "self.tokenizer.decode(token_ids)"),
]


def serving_error(w: Writer) -> Planted:
    """A request fails in the API server; vLLM logs it (logger.exception) and keeps serving."""
    prefix = w.prefix("APIServer", w.api, "ERROR", "[serving.py:952]")
    emit = lambda text: w.emit(prefix + text)  # noqa: E731
    first = emit("Error in chat completion stream generator.")
    emit("Traceback (most recent call last):")
    frames(w, emit, SERVING_STACK[: w.rng.randrange(2, len(SERVING_STACK) + 1)])
    index = w.rng.randrange(151000, 152000)
    last = emit(f"IndexError: index {index} is out of bounds for dimension 0 with size 151936")
    return Planted("unrecognized", 0, first, last, "APIServer")


WORKER_STACK = [
    (f"{SITE}/vllm/v1/executor/multiproc_executor.py", 999, "worker_busy_loop", "output = func(*args, **kwargs)"),
    (f"{SITE}/vllm/v1/worker/gpu_worker.py", 612, "execute_model", "output = self.model_runner.execute_model("),
    (f"{SITE}/vllm/v1/worker/gpu_model_runner.py", 2791, "execute_model", "model_output = self.model("),
    (f"{SITE}/torch/nn/modules/module.py", 1779, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
    (f"{SITE}/vllm/model_executor/layers/fused_moe/layer.py", 1688, "forward_impl",
     "final_hidden_states = self.quant_method.apply("),
]
CORE_STACK = [
    (f"{SITE}/vllm/v1/engine/core.py", 1579, "run_engine_core", "engine_core.run_busy_loop()"),
    (f"{SITE}/vllm/v1/engine/core.py", 906, "run_busy_loop", "self._process_engine_step()"),
    (f"{SITE}/vllm/v1/executor/multiproc_executor.py", 322, "collective_rpc", "return aggregate(get_response())"),
    (f"{SITE}/vllm/v1/executor/multiproc_executor.py", 305, "get_response", "raise RuntimeError("),
]
API_STACK = [
    (f"{SITE}/vllm/v1/engine/async_llm.py", 897, "output_handler", "outputs = await engine_core.get_output_async()"),
    (f"{SITE}/vllm/v1/engine/core_client.py", 894, "get_output_async",
     "raise self._format_exception(outputs) from None"),
]


def crash(w: Writer) -> list[Planted]:
    """A worker runs out of GPU memory mid-serving; the engine core and the API server die after it.
    The three processes' records interleave line by line, as they do in a real log."""
    mib = w.rng.choice((20, 64, 896, 2048))
    worker = [w.prefix("Worker_TP1", w.tp1, "ERROR", "[multiproc_executor.py:1189]") + t for t in (
        ["WorkerProc hit an exception.", "Traceback (most recent call last):"]
        + [f'  File "{p}", line {n}, in {f}' if i % 2 == 0 else f"    {c}"
           for p, n, f, c in WORKER_STACK for i in range(2)]
        + [f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {mib}.00 MiB. GPU 1 has a total capacity "
           "of 79.19 GiB of which 12.31 MiB is free. Including non-PyTorch memory, this process has 79.17 GiB memory "
           "in use. Of the allocated memory 76.40 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch "
           "but unallocated."]
    )]
    core = [w.prefix("EngineCore_DP0", w.core, "ERROR", "[core.py:1586]") + t for t in (
        ["EngineCore encountered a fatal error.", "Traceback (most recent call last):"]
        + [f'  File "{p}", line {n}, in {f}' if i % 2 == 0 else f"    {c}"
           for p, n, f, c in CORE_STACK for i in range(2)]
        + ["RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate "
           f"{mib}.00 MiB.', please check the stack trace above for the root cause"]
    )]
    api = [w.prefix("APIServer", w.api, "ERROR", "[async_llm.py:943]") + t for t in (
        ["AsyncLLM output_handler failed.", "Traceback (most recent call last):"]
        + [f'  File "{p}", line {n}, in {f}' if i % 2 == 0 else f"    {c}"
           for p, n, f, c in API_STACK for i in range(2)]
        + ["vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for "
           "the root cause."]
    )]
    streams = {"Worker_TP1": worker, "EngineCore_DP0": core, "APIServer": api}
    spans: dict[str, list[int]] = {name: [] for name in streams}
    delays = {"Worker_TP1": 0, "EngineCore_DP0": 3, "APIServer": 9}  # the wrappers print after the cause
    step = 0
    while any(streams.values()):
        for name, pending in streams.items():
            if pending and step >= delays[name] and w.rng.random() < 0.7:
                spans[name].append(w.emit(pending.pop(0)))
        step += 1
    rules = {
        # The worker ran out of memory in execute_model, while serving: the phase-specific rule.
        "Worker_TP1": "memory.oom-serving", "EngineCore_DP0": "engine.worker-failed", "APIServer": "engine.engine-dead",
    }
    return [Planted(rules[name], 0, lines[0], lines[-1], name) for name, lines in spans.items()]


def shutdown(w: Writer) -> None:
    w.emit(f"(APIServer pid={w.api}) INFO:     Shutting down")
    w.emit(f"(APIServer pid={w.api}) INFO:     Waiting for application shutdown.")
    w.emit(f"(APIServer pid={w.api}) INFO:     Application shutdown complete.")
    w.emit(f"(APIServer pid={w.api}) INFO:     Finished server process [{w.api}]")


def generate(out, size: int, seed: int, error_heavy: bool) -> tuple[int, list[Planted], int]:
    rng = random.Random(seed)
    w = Writer(out, rng)
    planted: list[Planted] = []
    launches = 6 if size >= 64 << 20 else 2
    per_launch = size // launches
    # Per served line: the chance of a request error and of a warning. The error-heavy log makes ~5% of
    # its lines error-like (error records, traceback lines, warnings).
    p_error = 0.0035 if error_heavy else 0.00002
    p_warning = 0.012 if error_heavy else 0.002
    for launch in range(1, launches + 1):
        w.api, w.core = rng.randrange(1000, 99999), rng.randrange(1000, 99999)
        w.tp0, w.tp1 = w.core + 1, w.core + 2
        w.colour = launch % 3 == 2
        header(w)
        end = min(size, launch * per_launch)
        while w.bytes < end:
            roll = rng.random()
            if roll < p_error:
                found = serving_error(w)
                found.launch = launch
                planted.append(found)
            elif roll < p_error + p_warning:
                warned = warning_line(w)
                # Two records with the same header on consecutive lines are one record in vLLM's format.
                follows = bool(planted) and planted[-1].last == w.lines - 1
                if warned is not None and not (follows and planted[-1].rule == warned.rule):
                    warned.launch = launch
                    planted.append(warned)
            else:
                serve_line(w)
        if launch < launches or error_heavy:
            for found in crash(w):
                found.launch = launch
                planted.append(found)
        shutdown(w)
    w.drain()
    return w.lines, planted, launches


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="100M", help="about how big: 1K, 100M, 1G, ...")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--error-heavy", action="store_true", help="about 5%% of lines error-like")
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8", newline="\n") as out:
        lines, planted, launches = generate(out, parse_size(args.size), args.seed, args.error_heavy)
    manifest = {
        "log": str(args.out), "bytes": args.out.stat().st_size, "lines": lines, "launches": launches,
        "seed": args.seed, "error_heavy": args.error_heavy, "planted": [asdict(p) for p in planted],
    }
    Path(f"{args.out}.manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{args.out}: {manifest['bytes']} bytes, {lines} lines, {launches} launches, {len(planted)} tracebacks")


if __name__ == "__main__":
    main()
