"""Ask an installed vLLM whether it accepts a `vllm serve` launch: what `vllm serve` runs, in its order, up
to the engine core: its argument parser, its serve checks, the API server's checks (parser plugins and
names, the listening socket: bound and closed at once), its config construction
(`AsyncEngineArgs.create_engine_config`) and the renderer (the tokenizer). No engine, no weights, no GPU
memory.

Run by path with the user's interpreter (`PYTHON vllm_probe.py`), never imported: it imports nothing
of logdoctor, only vLLM and the standard library, so it runs in whatever environment vLLM lives in
(and on the oldest Python vLLM supports). `logdoctor check --with-vllm` (logdoctor/withvllm.py) drives it.

Protocol, one JSON object per line. Once vLLM is imported it writes
    {"ready": true, "vllm_version": "0.33.0", "python": "3.11.7", "import_seconds": 9.1}
then, for each request on stdin
    {"argv": ["MODEL", "--flag", "value", ...], "env": {"NAME": "value"}, "cwd": "/dir"}
(argv is what follows `vllm serve`; env and cwd are optional)
it answers
    {"ok": true, "seconds": 0.2}
    {"ok": false, "stage": "parser" | "validate" | "serve" | "server" | "config" | "renderer", "type": "ValueError",
     "message": "...", "traceback": "...", "traceback_tail": "...", "seconds": 0.2}
(with "log": what vLLM logged while it answered, when the request ran in a fork).
`env` and `cwd` hold for the request only: each request runs in a fork of this process (vLLM imported,
nothing else done), so no launch sees another's state. A fork that dies without an answer (a crash
inside vLLM) is answered `{"ok": false, "died": true, "status": N}`, and the probe ends. An
argparse refusal is `type` SystemExit with the parser's own message (`vllm serve: error: ...`). End of
stdin ends it. Whatever vLLM prints (its logger writes to stdout) goes to stderr: stdout is the
protocol's alone.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import time
import traceback

TAIL_LINES = 12
LOG_BYTES = 64 << 10  # the end of what vLLM logged during one launch, returned with its answer


def main() -> int:
    # The protocol keeps the real stdout; everything else that writes to fd 1 writes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    started = time.monotonic()
    try:
        parser, serve = _load()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which says what failed
        _send(protocol, {"ready": False, **_error("import", exc)})
        return 3
    import vllm

    _send(
        protocol,
        {
            "ready": True,
            "vllm_version": getattr(vllm, "__version__", "unknown"),
            "python": ".".join(str(n) for n in sys.version_info[:3]),
            "import_seconds": round(time.monotonic() - started, 3),
        },
    )
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        started = time.monotonic()
        answer = _isolated(parser, serve, request) if hasattr(os, "fork") else _in_place(parser, serve, request)
        answer["seconds"] = round(time.monotonic() - started, 3)
        _send(protocol, answer)
        if answer.get("died"):
            return 4
    return 0


def _isolated(parser: object, serve: object, request: dict[str, object]) -> dict[str, object]:
    """Each launch in a fork of the process that imported vLLM: vLLM's parser and configs keep state
    between calls (a `--reasoning-parser` of one launch stayed in the shared default of the next), so
    every launch is asked of a vLLM that has seen no other. A fork that ends without an answer died.

    What vLLM logs meanwhile is kept with the answer (a root cause it only logs, such as a plugin that
    did not load, comes before the exception it leads to) and passed on to stderr."""
    read_end, write_end = os.pipe()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as log:
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            os.dup2(log.fileno(), 2)
            status = 0
            try:
                answer = _in_place(parser, serve, request)
                sys.stderr.flush()
                with os.fdopen(write_end, "w", encoding="utf-8") as out:
                    out.write(json.dumps(answer))
            except BaseException:  # noqa: BLE001 - the parent reports a fork that did not answer
                status = 5
            finally:
                os._exit(status)
        os.close(write_end)
        with os.fdopen(read_end, encoding="utf-8") as answers:
            text = answers.read()
        _, status = os.waitpid(pid, 0)
        log.seek(0)
        logged = log.read()
    with os.fdopen(os.dup(2), "wb") as stderr:
        stderr.write(logged)
    if text:
        answer = dict(json.loads(text))
        answer["log"] = logged[-LOG_BYTES:].decode("utf-8", "replace")
        return answer
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    return {"ok": False, "died": True, "status": code}


def _in_place(parser: object, serve: object, request: dict[str, object]) -> dict[str, object]:
    cwd = os.getcwd()
    if request.get("cwd"):
        os.chdir(str(request["cwd"]))
    try:
        return _validate(parser, serve, list(request["argv"]), dict(request.get("env") or {}))  # type: ignore[call-overload]
    finally:
        os.chdir(cwd)


def _send(protocol: io.TextIOWrapper, data: dict[str, object]) -> None:
    protocol.write(json.dumps(data) + "\n")
    protocol.flush()


def _load() -> tuple[object, object]:
    """vLLM's own `vllm` parser with its `serve` subcommand, as vllm/entrypoints/cli/main.py builds it."""
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    with contextlib.suppress(ImportError):  # what `vllm` runs before parsing (0.33: the CLI's env set-up)
        from vllm.entrypoints.common.startup import cli_env_setup

        cli_env_setup()
    parser = FlexibleArgumentParser(prog="vllm", description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve = ServeSubcommand()
    serve.subparser_init(subparsers).set_defaults(dispatch_function=serve.cmd)
    return parser, serve


def _validate(parser: object, serve: object, argv: list[str], env: dict[str, str]) -> dict[str, object]:
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    stage = "parser"
    try:
        args = _parse(parser, ["serve", *argv])
        stage = "validate"
        serve.validate(args)  # type: ignore[attr-defined]
        stage = "serve"
        _serve_checks(args)
        headless = bool(getattr(args, "headless", False))
        if not headless:
            stage = "server"
            _server_checks(args)
        stage = "config"
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.usage.usage_lib import UsageContext

        engine_args = AsyncEngineArgs.from_cli_args(args)
        with contextlib.suppress(ImportError):
            from vllm.entrypoints.common.cli_args import propagate_flash_late_interaction

            propagate_flash_late_interaction(args, engine_args)
        extra = {"headless": True} if headless else {}
        vllm_config = engine_args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER, **extra)
        if not headless:
            stage = "renderer"
            _renderer(vllm_config)
    except _ParserExit as exc:
        return {"ok": False, "stage": stage, "type": "SystemExit", "message": exc.message, "traceback": exc.message,
                "traceback_tail": exc.message}  # fmt: skip
    except BaseException as exc:  # noqa: BLE001 - every refusal is an answer, not the probe's end
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"ok": False, **_error(stage, exc)}
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {"ok": True}


class _ParserExit(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _parse(parser: object, argv: list[str]) -> object:
    """parse_args, with argparse's exit turned into its message (what it printed on stderr)."""
    captured = io.StringIO()
    real = sys.stderr
    sys.stderr = captured
    try:
        return parser.parse_args(argv)  # type: ignore[attr-defined]
    except SystemExit as exc:
        text = captured.getvalue().strip()
        lines = [line for line in text.splitlines() if line.strip()]
        error = next((line for line in lines if ": error: " in line), None)
        if error is not None:  # the usage block before it is noise; the lines after it are the hint
            text = "\n".join(lines[lines.index(error) :])
        raise _ParserExit(text or f"the parser exited with status {exc.code}") from None
    finally:
        sys.stderr = real
        real.write(captured.getvalue())


def _serve_checks(args: object) -> None:
    """What `vllm serve` (ServeSubcommand.cmd) checks before it builds the engine's config."""
    if getattr(args, "model_tag", None) is not None:
        args.model = args.model_tag  # type: ignore[attr-defined]
    count = getattr(args, "api_server_count", None)
    if getattr(args, "headless", False) and count is not None and count > 0:
        raise ValueError(
            f"--api-server-count={count} cannot be used with --headless (no API servers are started in headless mode)."
        )
    rank = getattr(args, "data_parallel_rank", None)
    external = getattr(args, "data_parallel_external_lb", False) or rank is not None
    hybrid = getattr(args, "data_parallel_hybrid_lb", False)
    multi_port = getattr(args, "data_parallel_multi_port_external_lb", False)
    if not hybrid and not multi_port:
        hybrid = getattr(args, "data_parallel_start_rank", None) is not None
    if sum([bool(multi_port), bool(external), bool(hybrid)]) > 1:
        raise ValueError(
            "Cannot use more than one data parallel load balancing mode. Choose one of: "
            "--data-parallel-multi-port-external-lb, --data-parallel-external-lb (or --data-parallel-rank), "
            "--data-parallel-hybrid-lb (or --data-parallel-start-rank)."
        )


def _server_checks(args: object) -> None:
    """What the API server's setup_server does before the engine's config (vLLM 0.33): load the parser
    plugins, check the tool and reasoning parser names, and bind the listening socket (closed at once)."""
    try:
        from vllm.entrypoints.common.cli_args import init_parser_plugin, validate_api_server_args
        from vllm.entrypoints.launchers.launcher import create_server_socket
    except ImportError:  # another release lays these out differently: its parser and config still answer
        return
    init_parser_plugin(args)
    validate_api_server_args(args)
    if getattr(args, "uds", None):  # a socket file would be left behind
        return
    sock = create_server_socket((getattr(args, "host", None) or "", args.port), reuse_port=False)  # type: ignore[attr-defined]
    sock.close()


def _renderer(vllm_config: object) -> None:
    """What the API server builds from the config before it starts the engine core: the renderer, which
    loads the tokenizer (vLLM 0.33's AsyncLLM). No weights."""
    try:
        from vllm.renderers.registry import renderer_from_config
    except ImportError:
        return
    renderer_from_config(vllm_config)


def _error(stage: str, exc: BaseException) -> dict[str, object]:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    lines = text.rstrip("\n").splitlines()
    return {
        "stage": stage,
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": text,
        "traceback_tail": "\n".join(lines[-TAIL_LINES:]),
    }


if __name__ == "__main__":
    sys.exit(main())
