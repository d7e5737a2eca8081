#!/usr/bin/env python3
"""Run the launch battery: every scenario of scenarios.toml as a real `vllm serve`, captured.

For each scenario it runs `vllm serve ARGS` (the real vLLM, in its own virtual environment, see
bench/vllm_env.sh) from a fresh scratch directory, with `VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1
NO_COLOR=1` plus the scenario's `env`, and writes

    fixtures/battery/<id>.log        the combined stdout+stderr, byte for byte
    fixtures/battery/<id>.meta.toml  produced_by, command, env, exit_code, captured, and the
                                     scenario's expectations (expect, expected_message, right_fix)

A failing scenario runs until vLLM exits (or --timeout). A passing one runs until the engine core
has started and died (this machine's CUDA wheel has no CPU kernels, `vllm._C`) or the API server
serves, whatever comes first; then its process group is stopped, so captures stay small.

After each capture it checks the log shows what the scenario claims: a failure exits non-zero and
prints `expected_message` verbatim; a pass reaches the engine core (`Initializing a V1 LLM engine`)
with no error raised by the API server before it. Mismatches are listed at the end (exit 1).

    python bench/battery/run.py --vllm /work/vllm033/bin/vllm            # every scenario
    python bench/battery/run.py --vllm /work/vllm033/bin/vllm --only srv-port-in-use ctx-max-model-len-32k
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = Path(__file__).resolve().parent / "scenarios.toml"
OUT = Path(os.environ.get("BATTERY_OUT", ROOT / "fixtures" / "battery"))
SCRATCH = Path("/tmp/logdoctor-battery")
BASE_ENV = {"VLLM_TARGET_DEVICE": "cpu", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
ENGINE_STARTED = b"Initializing a V1 LLM engine"
ENGINE_DIED = b"Engine core initialization failed"
SERVING = b"Application startup complete"
GRACE = 20.0  # seconds a passing launch may take to exit by itself after its engine core died


def load(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    scenarios = data["scenario"]
    seen: set[str] = set()
    for s in scenarios:
        if s["id"] in seen:
            raise SystemExit(f"duplicate scenario id {s['id']}")
        seen.add(s["id"])
        if s["expect"] not in ("fail", "pass"):
            raise SystemExit(f"{s['id']}: expect must be 'fail' or 'pass'")
    return scenarios


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        out = ['"']
        for ch in v:
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ch == "\r":
                out.append("\\r")
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def write_meta(path: Path, top: dict, tables: dict[str, dict]) -> None:
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items() if v is not None]
    for name, table in tables.items():
        lines.append("")
        lines.append(f"[{name}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in table.items() if v is not None]
    path.write_text("\n".join(lines) + "\n")


def env_string(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def port_of(args: list[str]) -> int:
    for i, a in enumerate(args):
        if a == "--port" and i + 1 < len(args):
            try:
                return int(args[i + 1])
            except ValueError:
                return 8000
        if a.startswith("--port="):
            try:
                return int(a.split("=", 1)[1])
            except ValueError:
                return 8000
    return 8000


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


def prepare(scenario: dict, cwd: Path) -> list[socket.socket]:
    """Apply the scenario's `setup` entries; return the sockets to close afterwards."""
    held: list[socket.socket] = []
    for entry in scenario.get("setup", []):
        kind, _, rest = entry.partition(":")
        if kind == "hold-port":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("", int(rest)))
            s.listen(1)
            held.append(s)
        elif kind == "file":
            name, _, content = rest.partition("=")
            p = cwd / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(content)
        elif kind == "mkdir":
            (cwd / rest).mkdir(parents=True, exist_ok=True)
        else:
            raise SystemExit(f"{scenario['id']}: unknown setup entry {entry!r}")
    return held


def stop(proc: subprocess.Popen) -> None:
    """Stop the process group this script started (the vllm process and its children)."""
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            # children of the group may outlive the leader briefly
            time.sleep(0.5)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue


def run_one(scenario: dict, vllm: str, timeout: float) -> dict:
    sid = scenario["id"]
    cwd = SCRATCH / sid
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    args = list(scenario["args"])
    held = prepare(scenario, cwd)
    port = port_of(args)
    if not held and not port_free(port):
        raise SystemExit(f"{sid}: port {port} is in use by another process; free it and rerun")

    env_extra = dict(BASE_ENV)
    env_extra.update(scenario.get("env", {}))
    env = {
        "PATH": f"{os.path.dirname(vllm)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        **env_extra,
    }
    argv = ["vllm", "serve", *args]
    log_path = OUT / f"{sid}.log"
    started = time.monotonic()
    stopped_by = "exit"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        died_at: float | None = None
        while True:
            try:
                proc.wait(0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now - started > timeout:
                stopped_by = "timeout"
                stop(proc)
                break
            if scenario["expect"] == "pass":
                data = log_path.read_bytes()
                if SERVING in data:
                    stopped_by = "serving"
                    stop(proc)
                    break
                if ENGINE_DIED in data and died_at is None:
                    died_at = now
                if died_at is not None and now - died_at > GRACE:
                    stopped_by = "engine-core-died"
                    stop(proc)
                    break
    # the group's stragglers (engine core, workers) must not outlive the capture
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for s in held:
        s.close()
    elapsed = time.monotonic() - started
    return {
        "argv": argv,
        "env": env_extra,
        "exit_code": proc.returncode,
        "stopped_by": stopped_by,
        "elapsed": elapsed,
        "log": log_path,
    }


def check(scenario: dict, result: dict) -> str | None:
    """Why the capture does not show what the scenario claims, or None."""
    data = result["log"].read_bytes()
    text = data.decode("utf-8", "replace")
    if result["stopped_by"] == "timeout":
        return "timed out"
    if scenario["expect"] == "fail":
        if result["exit_code"] == 0:
            return "exit code 0"
        msg = scenario.get("expected_message", "")
        if not msg:
            return "no expected_message"
        if msg not in text:
            return "expected_message not in the log"
        return None
    # pass: the engine core started, and the API server raised nothing before it
    if ENGINE_STARTED not in data:
        return "the engine core never started"
    head = text.split(ENGINE_STARTED.decode(), 1)[0]
    if "Traceback (most recent call last)" in head:
        return "a traceback before the engine core started"
    return None


def versions(vllm: str) -> tuple[str, str]:
    py = os.path.join(os.path.dirname(vllm), "python")
    out = subprocess.run(
        [py, "-c", "import sys, importlib.metadata as m; print(m.version('vllm')); print(sys.version.split()[0])"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    return out[0], out[1]


def readme_table(scenarios: list[dict]) -> str:
    """The per-scenario table of fixtures/battery/README.md, from the scenarios and their captures."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    rows = [
        "| id | expect | command (after `vllm serve`, `M/` = `/work/vllm-models/`) "
        "| extra env / setup | exit | message |",
        "|---|---|---|---|---|---|",
    ]
    for s in scenarios:
        meta_path = OUT / f"{s['id']}.meta.toml"
        exit_code = ""
        if meta_path.exists():
            with open(meta_path, "rb") as f:
                exit_code = str(tomllib.load(f).get("exit_code", ""))
        cmd = shlex.join(s["args"]).replace("/work/vllm-models/", "M/")
        env = [f"{k}={v}" for k, v in s.get("env", {}).items()]
        extra = " ".join(env + [e.split("=", 1)[0] for e in s.get("setup", [])])
        accepted = "(accepted; engine core starts, dies on `vllm._C`)"
        msg = s.get("expected_message", "") if s["expect"] == "fail" else accepted
        if len(msg) > 160:
            msg = msg[:157] + "..."
        rows.append(f"| `{s['id']}` | {s['expect']} | `{cell(cmd)}` | {cell(extra)} | {exit_code} | {cell(msg)} |")
    return "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm", default="/work/vllm033/bin/vllm", help="the vllm executable of a vLLM venv")
    ap.add_argument("--only", nargs="+", metavar="ID", help="run only these scenarios")
    ap.add_argument("--scenarios", type=Path, default=SCENARIOS)
    ap.add_argument("--timeout", type=float, default=150.0, help="seconds per launch")
    ap.add_argument("--readme-table", action="store_true", help="print the README's scenario table and exit")
    ap.add_argument(
        "--recheck", action="store_true",
        help="run nothing: re-check the existing captures and rewrite their meta with the current expectations",
    )
    args = ap.parse_args()

    vllm = os.path.abspath(args.vllm)
    scenarios = load(args.scenarios)
    if args.only:
        unknown = set(args.only) - {s["id"] for s in scenarios}
        if unknown:
            raise SystemExit(f"unknown scenario id(s): {', '.join(sorted(unknown))}")
        scenarios = [s for s in scenarios if s["id"] in args.only]
    if args.readme_table:
        print(readme_table(scenarios), end="")
        return 0
    vllm_version, py_version = versions(vllm)
    produced_by = f"vLLM {vllm_version} (pip wheel), Python {py_version}, CPU-only, VLLM_TARGET_DEVICE=cpu"
    OUT.mkdir(parents=True, exist_ok=True)

    bad: list[tuple[str, str]] = []
    for n, s in enumerate(scenarios, 1):
        if args.recheck:
            meta_path = OUT / f"{s['id']}.meta.toml"
            if not meta_path.exists():
                bad.append((s["id"], "not captured"))
                continue
            with open(meta_path, "rb") as f:
                old = tomllib.load(f)
            r = {
                "argv": shlex.split(old["command"]), "env": dict(x.split("=", 1) for x in shlex.split(old["env"])),
                "exit_code": old["exit_code"], "stopped_by": old["stopped_by"], "elapsed": 0.0,
                "log": OUT / f"{s['id']}.log", "captured": old["captured"],
            }
            if r["argv"][2:] != list(s["args"]) or r["env"] != {**BASE_ENV, **s.get("env", {})}:
                bad.append((s["id"], "the capture's command or env differs from the scenario's: run it again"))
                continue
        else:
            r = run_one(s, vllm, args.timeout)
        problem = check(s, r)
        top = {
            "id": s["id"],
            "category": s["category"],
            "produced_by": produced_by,
            "command": shlex.join(r["argv"]),
            "env": env_string(r["env"]),
            "setup": s.get("setup") or None,
            "exit_code": r["exit_code"],
            "stopped_by": r["stopped_by"],
            "captured": r.get("captured") or datetime.date.today().isoformat(),
            "expect": s["expect"],
            "expected_message": s.get("expected_message", ""),
            "notes": s.get("notes"),
        }
        tables = {"right_fix": s["right_fix"]} if s.get("right_fix") else {}
        write_meta(OUT / f"{s['id']}.meta.toml", top, tables)
        status = "ok" if problem is None else f"MISMATCH: {problem}"
        print(
            f"[{n}/{len(scenarios)}] {s['id']}: exit {r['exit_code']} ({r['stopped_by']}, "
            f"{r['elapsed']:.0f}s) {status}",
            flush=True,
        )
        if problem:
            bad.append((s["id"], problem))
    if bad:
        print(f"\n{len(bad)} capture(s) do not show what the scenario claims:")
        for sid, problem in bad:
            print(f"  {sid}: {problem}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
