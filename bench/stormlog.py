"""Generate an error storm: a vLLM log of a 16-GPU server failing over and over, with a manifest.

    python bench/stormlog.py OUT --size 300M [--seed 0]

writes OUT and OUT.manifest.json. genlog.py writes a healthy week with a few errors in it; this is the
other end: about 8% of the lines are error-like (lines `grep -E 'Traceback|Error|error'` counts), and
many processes have an event open at once. Each launch prints vLLM 0.33's start-up header, then fails
in one of four ways, in turn:

* serving, then a worker runs out of GPU memory: a tensor-parallel server of 16 workers
  (`(Worker_TP0 pid=...)` to `(Worker_TP15 pid=...)`), the engine core and the API server, their lines
  interleaved; failed requests the API server logs with a traceback on every line under its ERROR
  prefix (and survives), warnings, prompts quoting errors, 500 and 400 access lines; then Worker_TPn's
  logged traceback (every line under its ERROR prefix) spread over hundreds of other lines, and the
  engine core's and API server's wrappers after it;
* the port is taken: the API server's raw `Traceback (most recent call last):` ending in
  `OSError: [Errno 98] Address already in use`, right after the header;
* serving, then NCCL fails: like the first, but two or three workers print a raw traceback each (frames
  `  File "...", line N, in f` under the process prefix), the frames of each spread over thousands of
  other processes' lines (never 5,000 lines apart: logdoctor, like any reader, must decide at some point
  that a silent stream is done), the tracebacks open at the same time;
* the configuration is invalid: a raw pydantic `ValidationError` (`max_model_len` greater than the
  model's), right after the header.

Every error's text is vLLM's (or torch's, pydantic's) and one logdoctor's library recognises. The
manifest lists every planted error and warning with the rule logdoctor should name, its launch and its
lines (as genlog.py's does, so bench/run.py's check applies: every planted one found, nothing else of
error or warning severity), and each launch's root cause (the rule of its primary finding).

Deterministic for a seed; standard library only; written through a line buffer (about 7 MB/s).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from genlog import MODEL, PROMPTS, SERVING_STACK, SITE, WARNINGS, WORKER_STACK, Planted, Writer, parse_size

WORKERS = 16
ERROR_LIKE = re.compile("Traceback|Error|error")  # what the benchmark's grep baseline counts
KINDS = ("oom", "port", "nccl", "config")  # how each launch ends, in turn
ROOT = {  # the rule of each kind's root cause (its launch's primary finding)
    "oom": "memory.oom-serving",
    "port": "network.port-in-use",
    "nccl": "distributed.nccl-system-error",
    "config": "memory.max-model-len-exceeds-derived",
}
MAX_GAP = 1500  # other lines between two lines of a spread traceback: well under logdoctor's 5,000


@dataclass
class Stream:
    """An event one process prints line by line while the others go on printing."""

    process: str  # "Worker_TP3"
    lines: list[str]  # ready to write, prefix included
    gap: tuple[int, int]  # other lines between two of its lines
    rule: str | None  # what logdoctor should report it as (None: nothing)
    due: int = 0
    record: int = 0  # the planted record is its first `record` lines (0: all of them)
    emitted: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.record = self.record or len(self.lines)


class Storm:
    def __init__(self, out, rng: random.Random) -> None:
        self.w = Writer(out, rng)
        self.rng = rng
        self.planted: list[Planted] = []
        self.launch = 0
        self.streams: list[Stream] = []
        self.error_like = 0
        self.last_planted: dict[str, int] = {}  # process -> line of the last planted event's end
        self.pids: dict[str, int] = {}
        self.cause = ""  # the failed worker's error, as the engine core's wrapper quotes it

    # --- lines ----------------------------------------------------------------------------------

    def emit(self, text: str) -> int:
        if ERROR_LIKE.search(text):
            self.error_like += 1
        return self.w.emit(text)

    def prefix(self, process: str, level: str, where: str) -> str:
        return self.w.prefix(process, self.pids[process], level, where)

    def raw(self, process: str) -> str:
        return f"({process} pid={self.pids[process]}) "

    def plant(self, rule: str, process: str, first: int, last: int) -> None:
        self.planted.append(Planted(rule, self.launch, first, last, process))
        self.last_planted[process] = last

    def busy(self) -> set[str]:
        return {s.process for s in self.streams}

    def may_start(self, process: str) -> bool:
        """A process prints one event at a time, and never two planted records back to back: two records
        with the same header on consecutive lines of a stream are one record in vLLM's format."""
        return process not in self.busy() and self.last_planted.get(process) != self.w.lines

    # --- a launch -------------------------------------------------------------------------------

    def start_launch(self) -> None:
        self.launch += 1
        rng = self.rng
        self.w.seconds += rng.randrange(60, 600)
        api, core = rng.randrange(1000, 60000), rng.randrange(1000, 60000)
        self.pids = {"APIServer": api, "EngineCore_DP0": core}
        self.pids.update({f"Worker_TP{rank}": core + 1 + rank for rank in range(WORKERS)})
        self.w.colour = self.launch % 3 == 2
        self.last_planted.clear()

    def banner(self, args: str) -> None:
        info = lambda where, msg: self.emit(self.prefix("APIServer", "INFO", where) + msg)  # noqa: E731
        info("[startup.py:38]", "")
        info("[startup.py:38]", "       █     █     █▄   ▄█")
        info("[startup.py:38]", " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0")
        info("[startup.py:38]", f"  █▄█▀ █     █     █     █  model   {MODEL}")
        info("[startup.py:38]", "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀")
        info("[startup.py:38]", "")
        info("[startup.py:96]", f"non-default args: {{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', "
             f"{args}}}")
        if self.rng.random() < 0.5:
            line = self.emit(self.prefix("APIServer", "WARNING", "[system_utils.py:278]")
                             + "Found ulimit of 20000 and failed to automatically increase with error current limit "
                             "exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno 24] Too "
                             "many open files`. Consider increasing with ulimit -n")
            self.plant("env.ulimit-not-raised", "APIServer", line, line)

    def serving_header(self) -> None:
        w = self.w
        self.banner("'max_model_len': 32768, 'tensor_parallel_size': 16, 'gpu_memory_utilization': 0.92, "
                    "'enable_prefix_caching': True, 'enable_log_requests': True")
        info = lambda proc, where, msg: self.emit(self.prefix(proc, "INFO", where) + msg)  # noqa: E731
        info("APIServer", "[model.py:744]", "Resolved architecture: Qwen3MoeForCausalLM")
        info("APIServer", "[model.py:2170]", "Using max model len 32768")
        info("APIServer", "[scheduler.py:236]", "Chunked prefill is enabled with max_num_batched_tokens=8192.")
        info("EngineCore_DP0", "[core.py:93]",
             f"Initializing a V1 LLM engine (v0.33.0) with config: model='{MODEL}', speculative_config=None, "
             f"tokenizer='{MODEL}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
             "dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, "
             "tensor_parallel_size=16, pipeline_parallel_size=1, data_parallel_size=1, quantization=None, "
             "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, "
             "served_model_name=Qwen3-30B-A3B-Instruct, enable_prefix_caching=True, enable_chunked_prefill=True")
        ranks = list(range(WORKERS))
        self.rng.shuffle(ranks)  # the workers start in any order
        for rank in ranks:
            info(f"Worker_TP{rank}", "[parallel_state.py:1208]",
                 f"rank {rank} in world size {WORKERS} is assigned as DP rank 0, PP rank 0, TP rank {rank}, "
                 f"EP rank {rank}")
        for rank in ranks:
            info(f"Worker_TP{rank}", "[pynccl.py:111]", "vLLM is using nccl==2.27.3")
        progress = "".join(
            f"Loading safetensors checkpoint shards: {p:3d}% Completed | {i}/16 [00:{i * 3:02d}<00:{48 - i * 3:02d}, "
            "0.33it/s]\r" for i, p in ((i, i * 100 // 16) for i in range(17)))
        self.emit(self.raw("Worker_TP0") + progress)
        for rank in ranks:
            info(f"Worker_TP{rank}", "[default_loader.py:262]",
                 f"Loading weights took {w.rng.uniform(40, 60):.2f} seconds")
        info("EngineCore_DP0", "[kv_cache_utils.py:1087]", "GPU KV cache size: 3,298,688 tokens")
        info("EngineCore_DP0", "[kv_cache_utils.py:1091]", "Maximum concurrency for 32,768 tokens per request: 100.67x")
        self.emit(self.raw("Worker_TP0") + "".join(
            f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): {p:3d}%|{'█' * (p // 10):<10}| "
            f"{p * 67 // 100}/67 [00:03<00:00, 19.84it/s]\r" for p in range(0, 101, 20)))
        info("EngineCore_DP0", "[core.py:218]",
             "init engine (profile, create kv cache, warmup model) took 92.14 seconds")
        info("APIServer", "[api_server.py:1932]", "Starting vLLM API server 0 on http://0.0.0.0:8000")
        for route in ("/v1/models", "/v1/chat/completions", "/v1/completions", "/health", "/metrics"):
            info("APIServer", "[launcher.py:44]", f"Route: {route}, Methods: GET, POST")
        api = self.pids["APIServer"]
        for text in (f"Started server process [{api}]", "Waiting for application startup.",
                     "Application startup complete."):
            self.emit(f"(APIServer pid={api}) INFO:     {text}")

    # --- serving --------------------------------------------------------------------------------

    def step(self, start_events: bool) -> None:
        """One line: the next line of a stream that is due, else a new event or a line of traffic."""
        w, rng = self.w, self.rng
        for stream in self.streams:
            if stream.due <= w.lines:
                stream.emitted.append(self.emit(stream.lines.pop(0)))
                if stream.rule and len(stream.emitted) == stream.record:
                    self.plant(stream.rule, stream.process, stream.emitted[0], stream.emitted[-1])
                if stream.lines:
                    stream.due = w.lines + rng.randint(*stream.gap)
                else:
                    self.streams.remove(stream)
                return
        w.seconds += rng.random() < 0.3
        roll = rng.random()
        if start_events and roll < 0.004 and self.may_start("APIServer"):
            self.request_error()
        elif start_events and roll < 0.012 and self.may_start("APIServer"):
            template, rule = rng.choice(WARNINGS)
            where, message = template.format(rid=f"{rng.getrandbits(64):016x}").split(" ", 1)
            line = self.emit(self.prefix("APIServer", "WARNING", where) + message)
            if rule:
                self.plant(rule, "APIServer", line, line)
        else:
            self.traffic()

    def traffic(self) -> None:
        """A line of a healthy busy server, from a process that is not printing an event."""
        rng = self.rng
        busy = self.busy()
        roll = rng.random()
        if roll < 0.25 or "APIServer" in busy:
            free = [rank for rank in range(WORKERS) if f"Worker_TP{rank}" not in busy]
            if free:
                rank = rng.choice(free)
                self.emit(self.prefix(f"Worker_TP{rank}", "DEBUG", "[shm_broadcast.py:598]")
                          + f"Worker {rank} dequeued {rng.randrange(1, 64)} scheduler outputs, "
                          f"{rng.randrange(1, 8192)} tokens")
                return
        if (roll < 0.32 or "APIServer" in busy) and "EngineCore_DP0" not in busy:
            self.emit(self.prefix("EngineCore_DP0", "DEBUG", "[core.py:865]")
                      + f"EngineCore loop active: {rng.randrange(1, 256)} running, {rng.randrange(16)} waiting")
            return
        api = self.pids["APIServer"]
        rid = f"{rng.getrandbits(64):016x}"
        roll = rng.random()
        if roll < 0.40:
            status = "500 Internal Server Error" if rng.random() < 0.01 else "200 OK"
            self.emit(f'(APIServer pid={api}) INFO:     10.0.{rng.randrange(256)}.{rng.randrange(256)}:'
                      f'{rng.randrange(30000, 65000)} - "POST /v1/chat/completions HTTP/1.1" {status}')
        elif roll < 0.60:
            self.emit(self.prefix("APIServer", "INFO", "[async_llm.py:352]") + f"Added request chatcmpl-{rid}.")
        elif roll < 0.85:
            self.emit(self.prefix("APIServer", "DEBUG", "[request_logger.py:56]")
                      + f"Request chatcmpl-{rid} details: prompt: '<|im_start|>user\\n{rng.choice(PROMPTS)}"
                      "<|im_end|>\\n<|im_start|>assistant\\n', prompt_token_ids: None, prompt_embeds shape: None.")
        else:
            self.emit(self.prefix("APIServer", "INFO", "[loggers.py:283]")
                      + f"Engine 000: Avg prompt throughput: {rng.uniform(100, 90000):.1f} tokens/s, Avg generation "
                      f"throughput: {rng.uniform(50, 30000):.1f} tokens/s, Running: {rng.randrange(256)} reqs, "
                      f"Waiting: {rng.randrange(16)} reqs, GPU KV cache usage: {rng.uniform(0, 95):.1f}%, "
                      f"Prefix cache hit rate: {rng.uniform(0, 80):.1f}%")

    def request_error(self) -> None:
        """A failed request the API server logs (logger.exception: the ERROR prefix on every line) and
        survives; its access line follows."""
        rng = self.rng
        if rng.random() < 0.5:
            prefix = self.prefix("APIServer", "ERROR", "[serving.py:952]")
            stack = SERVING_STACK[: rng.randrange(2, len(SERVING_STACK) + 1)]
            body = ["Error in chat completion stream generator.", "Traceback (most recent call last):"]
            for path, line, func, code in stack:
                body += [f'  File "{path}", line {line}, in {func}', f"    {code}"]
            body.append(f"IndexError: index {rng.randrange(151000, 152000)} is out of bounds for dimension 0 "
                        "with size 151936")
            rule, status = "unrecognized", "500 Internal Server Error"
        else:
            prefix = self.prefix("APIServer", "ERROR", "[serving.py:300]")
            asked = rng.randrange(33000, 131072)
            body = [
                "Error in preprocessing prompt inputs",
                "Traceback (most recent call last):",
                f'  File "{SITE}/vllm/entrypoints/openai/chat_completion/serving.py", line 203, in '
                "create_chat_completion",
                "    conversation, engine_prompts = await self._preprocess_chat(",
                f'  File "{SITE}/vllm/entrypoints/openai/engine/serving.py", line 1141, in _validate_input',
                "    raise VLLMValidationError(",
                f"ValueError: This model's maximum context length is 32768 tokens. However, you requested {asked} "
                f"tokens ({asked - 1000} in the messages, 1000 in the completion). Please reduce the length of the "
                "messages or completion.",
            ]
            rule, status = "request.max-tokens-too-large", "400 Bad Request"
        api = self.pids["APIServer"]
        body = [prefix + text for text in body]
        body.append(f'(APIServer pid={api}) INFO:     10.0.{rng.randrange(256)}.{rng.randrange(256)}:'
                    f'{rng.randrange(30000, 65000)} - "POST /v1/chat/completions HTTP/1.1" {status}')
        # The error record is planted; its access line, the stream's last line, is not part of it.
        self.streams.append(Stream("APIServer", body, (0, 3), rule, due=self.w.lines + 1, record=len(body) - 1))

    # --- failures -------------------------------------------------------------------------------

    def worker_oom(self) -> list[Stream]:
        rank = self.rng.randrange(WORKERS)
        proc = f"Worker_TP{rank}"
        mib = self.rng.choice((20, 64, 896, 2048))
        body = ["WorkerProc hit an exception.", "Traceback (most recent call last):"]
        for path, line, func, code in WORKER_STACK:
            body += [f'  File "{path}", line {line}, in {func}', f"    {code}"]
        body.append(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {mib}.00 MiB. GPU {rank} has a "
                    "total capacity of 79.19 GiB of which 12.31 MiB is free. Including non-PyTorch memory, this "
                    "process has 79.17 GiB memory in use. Of the allocated memory 76.40 GiB is allocated by PyTorch, "
                    "and 1.21 GiB is reserved by PyTorch but unallocated.")
        prefix = self.prefix(proc, "ERROR", "[multiproc_executor.py:1189]")
        self.cause = f"CUDA out of memory. Tried to allocate {mib}.00 MiB."
        return [Stream(proc, [prefix + t for t in body], (0, 400), "memory.oom-serving", due=self.w.lines + 1)]

    def workers_nccl(self) -> list[Stream]:
        ranks = self.rng.sample(range(WORKERS), self.rng.randint(2, 3))
        streams = []
        for rank in ranks:
            proc = f"Worker_TP{rank}"
            stack = [
                (f"{SITE}/vllm/v1/executor/multiproc_executor.py", 999, "worker_busy_loop",
                 "output = func(*args, **kwargs)"),
                (f"{SITE}/vllm/v1/worker/gpu_worker.py", 612, "execute_model",
                 "output = self.model_runner.execute_model("),
                (f"{SITE}/vllm/v1/worker/gpu_model_runner.py", 2791, "execute_model", "model_output = self.model("),
                (f"{SITE}/vllm/distributed/parallel_state.py", 499, "all_reduce",
                 "return self.device_communicator.all_reduce(input_)"),
                (f"{SITE}/vllm/distributed/device_communicators/cuda_communicator.py", 142, "all_reduce",
                 "out = pynccl_comm.all_reduce(input_)"),
                (f"{SITE}/vllm/distributed/device_communicators/pynccl.py", 151, "all_reduce",
                 "self.nccl.ncclAllReduce(buffer_type(in_tensor.data_ptr()),"),
                (f"{SITE}/vllm/distributed/device_communicators/pynccl_wrapper.py", 464, "NCCL_CHECK",
                 'raise RuntimeError(f"NCCL error: {error_str}")'),
            ]
            body = ["Traceback (most recent call last):"]
            for path, line, func, code in stack:
                body += [f'  File "{path}", line {line}, in {func}', f"    {code}"]
            body.append("RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
            raw = self.raw(proc)
            gap = (MAX_GAP // 5, MAX_GAP)
            streams.append(Stream(proc, [raw + t for t in body], gap, "distributed.nccl-system-error",
                                  due=self.w.lines + 1 + self.rng.randrange(MAX_GAP)))
        self.cause = "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
        return streams

    def wrappers(self) -> list[Stream]:
        """The engine core and the API server die after the worker, each logging why."""
        core = [self.prefix("EngineCore_DP0", "ERROR", "[core.py:1586]") + t for t in [
            "EngineCore encountered a fatal error.", "Traceback (most recent call last):",
            f'  File "{SITE}/vllm/v1/engine/core.py", line 1579, in run_engine_core', "    engine_core.run_busy_loop()",
            f'  File "{SITE}/vllm/v1/engine/core.py", line 906, in run_busy_loop', "    self._process_engine_step()",
            f'  File "{SITE}/vllm/v1/executor/multiproc_executor.py", line 322, in collective_rpc',
            "    return aggregate(get_response())",
            f'  File "{SITE}/vllm/v1/executor/multiproc_executor.py", line 305, in get_response',
            "    raise RuntimeError(",
            f"RuntimeError: Worker failed with error '{self.cause}', please check the stack trace above for the root "
            "cause",
        ]]
        api = [self.prefix("APIServer", "ERROR", "[async_llm.py:943]") + t for t in [
            "AsyncLLM output_handler failed.", "Traceback (most recent call last):",
            f'  File "{SITE}/vllm/v1/engine/async_llm.py", line 897, in output_handler',
            "    outputs = await engine_core.get_output_async()",
            f'  File "{SITE}/vllm/v1/engine/core_client.py", line 894, in get_output_async',
            "    raise self._format_exception(outputs) from None",
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for "
            "the root cause.",
        ]]
        return [Stream("EngineCore_DP0", core, (0, 3), "engine.worker-failed", due=self.w.lines + 1),
                Stream("APIServer", api, (0, 3), "engine.engine-dead", due=self.w.lines + 8)]

    def drain(self, streams: list[Stream]) -> None:
        """Start these streams (once their process is free) and print traffic until they are done."""
        waiting = list(streams)
        while waiting or self.streams:
            for stream in list(waiting):
                if self.may_start(stream.process):
                    stream.due = max(stream.due, self.w.lines + 1)
                    self.streams.append(stream)
                    waiting.remove(stream)
            self.step(start_events=False)

    def startup_failure(self, kind: str) -> None:
        proc = "APIServer"
        raw = self.raw(proc)
        if kind == "port":
            self.banner("'max_model_len': 32768, 'tensor_parallel_size': 16")
            body = [
                "Traceback (most recent call last):",
                '  File "/usr/local/bin/vllm", line 8, in <module>', "    sys.exit(main())",
                f'  File "{SITE}/vllm/entrypoints/cli/main.py", line 117, in main', "    args.dispatch_function(args)",
                f'  File "{SITE}/vllm/entrypoints/cli/serve.py", line 156, in cmd', "    uvloop.run(run_server(args))",
                f'  File "{SITE}/vllm/entrypoints/launchers/api_server/entry.py", line 170, in run_server',
                "    listen_address, sock = setup_server(args)",
                f'  File "{SITE}/vllm/entrypoints/launchers/api_server/entry.py", line 140, in setup_server',
                "    sock = create_server_socket(sock_addr)",
                f'  File "{SITE}/vllm/entrypoints/launchers/api_server/entry.py", line 112, in create_server_socket',
                "    sock.bind(addr)",
                "OSError: [Errno 98] Address already in use",
            ]
            rule = "network.port-in-use"
        else:
            self.banner("'max_model_len': 100000, 'tensor_parallel_size': 16")
            self.emit(self.prefix(proc, "INFO", "[model.py:744]") + "Resolved architecture: Qwen3MoeForCausalLM")
            body = [
                "Traceback (most recent call last):",
                '  File "/usr/local/bin/vllm", line 8, in <module>', "    sys.exit(main())",
                f'  File "{SITE}/vllm/engine/arg_utils.py", line 2280, in create_engine_config',
                "    model_config = self.create_model_config()",
                f'  File "{SITE}/vllm/engine/arg_utils.py", line 1994, in create_model_config',
                "    return ModelConfig(",
                f'  File "{SITE}/pydantic/_internal/_dataclasses.py", line 121, in __init__',
                "    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
                "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
                "  Value error, User-specified max_model_len (100000) is greater than the derived max_model_len "
                "(max_position_embeddings=40960 or model_max_length=None in model's config.json). To allow "
                "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative "
                "position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model "
                "uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
                "array out-of-bounds error. [type=value_error, input_value=ArgsKwargs((), {'model': "
                f"'{MODEL}', 'max_model_len': 100000}}), input_type=ArgsKwargs]",
                "    For further information visit https://errors.pydantic.dev/2.12/v/value_error",
            ]
            rule = ROOT["config"]
        first = self.emit(raw + body[0])
        for text in body[1:]:
            last = self.emit(raw + text)
        self.plant(rule, proc, first, last)

    def shutdown(self) -> None:
        api = self.pids["APIServer"]
        for text in ("Shutting down", "Waiting for application shutdown.", "Application shutdown complete.",
                     f"Finished server process [{api}]"):
            self.emit(f"(APIServer pid={api}) INFO:     {text}")


def generate(out, size: int, seed: int) -> tuple[int, int, list[Planted], list[dict[str, object]]]:
    rng = random.Random(seed)
    storm = Storm(out, rng)
    launches = 8 if size >= 64 << 20 else 4
    serving = sum(1 for n in range(launches) if KINDS[n % len(KINDS)] in ("oom", "nccl"))
    per_serving = size // serving
    roots: list[dict[str, object]] = []
    done_serving = 0

    for n in range(launches):
        kind = KINDS[n % len(KINDS)]
        storm.start_launch()
        roots.append({"launch": storm.launch, "kind": kind, "root": ROOT[kind], "first_line": storm.w.lines + 1})
        if kind in ("port", "config"):
            storm.startup_failure(kind)
            continue
        storm.serving_header()
        done_serving += 1
        end = min(size, done_serving * per_serving)
        while storm.w.bytes < end:
            storm.step(start_events=True)
        storm.drain([])  # requests in flight finish
        storm.drain(storm.worker_oom() if kind == "oom" else storm.workers_nccl())
        storm.drain(storm.wrappers())
        storm.shutdown()
    storm.w.drain()
    return storm.w.lines, storm.error_like, storm.planted, roots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="100M", help="about how big: 1K, 100M, 1G, ...")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with args.out.open("w", encoding="utf-8", newline="\n") as out:
        lines, error_like, planted, roots = generate(out, parse_size(args.size), args.seed)
    manifest = {
        "log": str(args.out), "bytes": args.out.stat().st_size, "lines": lines, "launches": len(roots),
        "seed": args.seed, "error_like_lines": error_like, "error_like_fraction": error_like / max(lines, 1),
        "roots": roots, "planted": [asdict(p) for p in sorted(planted, key=lambda p: p.line)],
    }
    Path(f"{args.out}.manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{args.out}: {manifest['bytes']} bytes, {lines} lines, {len(roots)} launches, {len(planted)} planted, "
          f"{error_like / max(lines, 1):.1%} error-like")


if __name__ == "__main__":
    main()
