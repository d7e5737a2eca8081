"""Run real `vllm serve` launches from one process that imported vLLM once (bench/differential.py's runner).

Run with the interpreter of vLLM's own venv (never imported; it imports nothing of logdoctor):

    VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 NO_COLOR=1 /work/vllm033/bin/python serve_zygote.py

Importing vLLM takes 10-20 s; a failed configuration is then found in a second. Each launch is a fork of
this process that runs vLLM's own CLI entry point (`vllm.entrypoints.cli.main.main`, what the `vllm`
console script runs) with the launch's argv, environment and working directory, its stdout and stderr
going to the launch's log. The EngineCore it starts is a fresh process as usual (vLLM's CPU platform
forces `spawn`). The launch is stopped (its whole process group killed) as soon as a line contains the
request's `accepted` marker, or when it exits, or at its timeout.

Protocol, one JSON object a line. Once vLLM is imported: {"ready": true, "version": "0.33.0"}. Then
per request {"id", "argv": ["vllm", "serve", ...], "env": {...}, "cwd", "log", "accepted", "timeout"}
the answer {"id", "outcome": "accepted" | "exited" | "timeout", "status": exit status or null}; requests
run concurrently (one thread each). End of input ends the process.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any

FORK_LOCK = threading.Lock()
SEND_LOCK = threading.Lock()


def preload() -> str:
    import vllm

    # What vllm.entrypoints.cli.main.main imports, in its order (eager imports in another order can hit
    # a circular import in transformers), then what `serve` goes on to import.
    import vllm.entrypoints.cli.main as cli_main  # noqa: F401
    import vllm.entrypoints.cli.openai  # noqa: F401
    import vllm.entrypoints.cli.serve  # noqa: F401

    for name in ("vllm.engine.arg_utils", "vllm.entrypoints.openai.api_server", "vllm.v1.engine.async_llm"):
        with contextlib.suppress(Exception):  # only a head start: the launch imports what it needs itself
            __import__(name)
    return str(vllm.__version__)


def child(request: dict[str, Any], write_end: int) -> None:
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    status = 0
    try:
        os.environ.update(request.get("env", {}))
        os.chdir(request.get("cwd") or os.getcwd())
        sys.argv = ["vllm", *request["argv"][1:]]
        from vllm.entrypoints.cli.main import main

        main()
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, int):
            status = code
        elif code is not None:
            print(code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - printed as the console script's excepthook would
        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)


def launch(request: dict[str, Any], protocol: object) -> None:
    marker = request["accepted"].encode()
    deadline = time.monotonic() + float(request.get("timeout", 300))
    read_end, write_end = os.pipe()
    with FORK_LOCK:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            child(request, write_end)
    os.close(write_end)
    outcome = "exited"
    pending = b""
    with open(request["log"], "wb") as log:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome = "timeout"
                break
            ready, _, _ = select.select([read_end], [], [], min(left, 5))
            if not ready:
                continue
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            log.write(chunk)
            pending = (pending + chunk)[-(len(marker) + 65536) :]
            if marker in pending:
                outcome = "accepted"
                break
        log.flush()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    send(protocol, {"id": request["id"], "outcome": outcome, "status": code if outcome == "exited" else None})


def send(protocol: object, message: dict[str, object]) -> None:
    with SEND_LOCK:
        protocol.write(json.dumps(message) + "\n")  # type: ignore[attr-defined]
        protocol.flush()  # type: ignore[attr-defined]


def main() -> int:
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what vLLM prints while importing goes to stderr, not into the protocol
    try:
        version = preload()
    except BaseException as exc:  # noqa: BLE001
        send(protocol, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    send(protocol, {"ready": True, "version": version})
    threads = []
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        thread = threading.Thread(target=launch, args=(request, protocol), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
