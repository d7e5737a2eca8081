"""Generate one pattern per NCCL result code (`ncclResult_t`) into patterns/distributed.toml.

    python bench/families/nccl_errors.py [--nccl DIR ...] [--torch-lib libtorch_cuda.so]

The codes come from the `ncclResult_t` enum in each NCCL wheel's `include/nccl.h`; the text of each code is
what that wheel's `libnccl.so.2` returns from `ncclGetErrorString` (called through ctypes: it needs no GPU).
The `ncclXxxError: <detail>` line that PyTorch prints under `NCCL error in: ...` comes from the strings of
`libtorch_cuda.so` (torch/csrc/distributed/c10d/NCCLUtils.cpp, getNcclErrorDetailStr). RCCL (ROCm) keeps the
same enum and the same strings, so the same patterns cover it.

Wheels read for the committed block (pip download --no-deps, unzipped under /work/pkg-src/):
nvidia-nccl-cu12 2.18.1, 2.21.5, 2.27.3, 2.32.3 and nvidia-nccl-cu13 2.32.3; torch 2.13.0 (CUDA wheel).

The generated patterns are catch-alls (priority -10): the patterns above them in distributed.toml read the
`Last error:` line NCCL attaches and name the concrete cause; these only say which class of failure it was.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

PKG = Path("/work/pkg-src")
DEFAULT_NCCL = [
    PKG / "nccl-2.18" / "nvidia" / "nccl",
    PKG / "nccl-2.21.5" / "nvidia" / "nccl",
    PKG / "nccl-2.27.3" / "nvidia" / "nccl",
    PKG / "nccl-cu12" / "nvidia" / "nccl",
    PKG / "nccl-cu13" / "nvidia" / "nccl",
]
DEFAULT_TORCH = PKG / "torch-2.13.0" / "torch" / "lib" / "libtorch_cuda.so"

_ENUM = re.compile(r"typedef enum\s*\{(?P<body>[^}]*)\}\s*ncclResult_t;", re.S)
_MEMBER = re.compile(r"(?P<name>nccl\w+)\s*=\s*(?P<value>\d+)")
_VERSION = re.compile(r"#define NCCL_(?P<part>MAJOR|MINOR|PATCH)\s+(?P<value>\d+)")
_DETAIL = re.compile(rb"(?P<name>nccl[A-Z]\w+): (?P<detail>[ -~]+?) ?\x00")

# What each code means for a vLLM server, and what to do, in our own words. A code NCCL adds later gets a
# generic entry (see `_generic`), so a new wheel never breaks the generator.
KNOWN: dict[str, dict[str, object]] = {
    "ncclUnhandledCudaError": {
        "slug": "unhandled-cuda-error",
        "title": "NCCL failed inside a CUDA call (unhandled cuda error)",
        "role": "cause",
        "explanation": (
            "A CUDA call made by NCCL failed, so the collective between the GPUs could not be set up or run. "
            "The usual reasons: no GPU memory left for NCCL's buffers, peer-to-peer or IPC access that the "
            "PCIe/virtualisation setup does not allow, NVLink SHARP (NVLS) that the fabric manager cannot "
            "provide, or an earlier CUDA error (such as an illegal memory access) that surfaced inside NCCL. "
            "The `Last error:` line, when present, names the CUDA call and its error."
        ),
        "summary": "NCCL hit a CUDA error ({last_error|run with NCCL_DEBUG=INFO to see which}): fix that CUDA "
        "error, most often GPU memory for NCCL or P2P access between the GPUs.",
        "steps": [
            "Rerun with `NCCL_DEBUG=INFO` and read the `NCCL WARN` line just before the error.",
            "`Cuda failure 'out of memory'`: lower `--gpu-memory-utilization` (e.g. 0.85) so NCCL's buffers fit.",
            "P2P/IPC errors (VMs, some PCIe topologies): set `NCCL_P2P_DISABLE=1`, and try "
            "`--disable-custom-all-reduce`.",
            "NVLS bind failures on NVSwitch systems: set `NCCL_NVLS_ENABLE=0` or fix the fabric manager.",
        ],
    },
    "ncclSystemError": {
        "slug": "system-error",
        "title": "NCCL failed in a system call (unhandled system error)",
        "role": "cause",
        "explanation": (
            "A system call or external library call inside NCCL failed: creating the shared-memory segment "
            "(a container's /dev/shm is only 64 MB by default), opening or connecting a socket between ranks, "
            "registering memory with InfiniBand, or a peer rank that vanished in the middle of a connection. "
            "The `Last error:` line, when present, names the failing call."
        ),
        "summary": "NCCL hit a system error ({last_error|run with NCCL_DEBUG=INFO to see which}): most often "
        "a too-small /dev/shm in a container, or the network between ranks.",
        "steps": [
            "In Docker give NCCL shared memory: `--ipc=host` or `--shm-size=16g` (Kubernetes: an emptyDir "
            "with `medium: Memory` mounted at /dev/shm).",
            "Rerun with `NCCL_DEBUG=INFO` to see the failing call in the `NCCL WARN` line.",
            "Multi-node: set `NCCL_SOCKET_IFNAME` (and `GLOO_SOCKET_IFNAME`) to the interface the nodes share; "
            "without InfiniBand try `NCCL_IB_DISABLE=1`.",
            "Check the other ranks' logs: one that crashed first makes this rank's sockets fail.",
        ],
    },
    "ncclInternalError": {
        "slug": "internal-error",
        "title": "NCCL internal error",
        "role": "cause",
        "explanation": (
            "An internal consistency check in NCCL failed. Ranks that load different NCCL versions (another "
            "wheel on one node, a system libnccl picked up through LD_LIBRARY_PATH), contradictory NCCL_* "
            "settings, or a bug in NCCL itself lead here."
        ),
        "summary": "NCCL reported an internal error ({last_error|no detail}): make sure every rank loads the "
        "same NCCL and no conflicting NCCL_* variables are set.",
        "steps": [
            "Check the NCCL version each rank prints (`vLLM is using nccl==...`) and make it the same on every "
            "node; point `VLLM_NCCL_SO_PATH` at one library if several are installed.",
            "Unset experimental NCCL_* variables (NCCL_ALGO, NCCL_PROTO, ...) and retry.",
            "Rerun with `NCCL_DEBUG=INFO`; if it persists with a single NCCL, upgrade NCCL / PyTorch.",
        ],
    },
    "ncclInvalidArgument": {
        "slug": "invalid-argument",
        "title": "NCCL rejected an argument (invalid argument)",
        "role": "cause",
        "explanation": (
            "NCCL refused a call because one of its arguments was invalid: a buffer on the wrong device, a "
            "data type or reduction it does not support, or a rank or size that does not fit the "
            "communicator. In a vLLM server it usually means mismatched settings between ranks or an "
            "unsupported NCCL_* value."
        ),
        "summary": "NCCL rejected an argument ({last_error|run with NCCL_DEBUG=WARN to see which}): check "
        "that all ranks use the same settings and drop unusual NCCL_* variables.",
        "steps": [
            "Rerun with `NCCL_DEBUG=WARN` to see which argument NCCL rejected.",
            "Make sure every rank runs the same vLLM command and NCCL version.",
            "Remove custom NCCL_* variables (e.g. NCCL_ALGO, NCCL_PROTO) that the installed NCCL may not accept.",
        ],
    },
    "ncclInvalidUsage": {
        "slug": "invalid-usage",
        "title": "NCCL was used in a way it does not allow (invalid usage)",
        "role": "cause",
        "explanation": (
            "NCCL detected a usage error. The common one in vLLM deployments is two ranks on the same GPU "
            "(CUDA_VISIBLE_DEVICES lists a device twice, or two servers share a GPU set), which older NCCL "
            "reports as 'Duplicate GPU detected'; others are mismatched world sizes between ranks or a "
            "communicator used after it was aborted."
        ),
        "summary": "NCCL reported invalid usage ({last_error|run with NCCL_DEBUG=WARN for details}): give "
        "every rank its own GPU and make the ranks agree on the world size.",
        "steps": [
            "Check `CUDA_VISIBLE_DEVICES` (each GPU listed once) and that no other job uses the same GPUs.",
            "Rerun with `NCCL_DEBUG=WARN` to see the exact misuse.",
            "Multi-node: every node must use the same `--tensor-parallel-size` / `--pipeline-parallel-size`.",
        ],
    },
    "ncclRemoteError": {
        "slug": "remote-error",
        "title": "NCCL lost a peer rank (remote process exited or network error)",
        "role": "consequence",
        "explanation": (
            "NCCL saw a peer rank disappear or the network between the ranks fail. This rank is usually not "
            "where the problem started: another worker or node crashed (OOM, CUDA error, killed) or the "
            "link between nodes dropped."
        ),
        "summary": "A peer rank exited or the network failed: find the first error on the other ranks or "
        "nodes, that is the cause.",
        "steps": [
            "Search the logs of the other workers / nodes for the first error (and `dmesg` for the OOM killer).",
            "Multi-node: check the link between the nodes (`NCCL_SOCKET_IFNAME`, firewall, InfiniBand state).",
            "Rerun with `NCCL_DEBUG=INFO` on every rank to see which connection failed.",
        ],
    },
    "ncclInProgress": {
        "slug": "in-progress",
        "title": "An NCCL operation was still in progress when it was checked",
        "role": "consequence",
        "explanation": (
            "A non-blocking NCCL call reported that it had not finished. Callers normally wait for it; seeing "
            "it as an error means the wait gave up, usually because another rank never joined the operation."
        ),
        "summary": "An NCCL operation never completed: check that all ranks reached the same step, and "
        "look for an earlier failure on another rank.",
        "steps": [
            "Look for an error or hang on the other ranks first.",
            "Rerun with `NCCL_DEBUG=INFO` to see which operation stayed in progress.",
        ],
    },
    "ncclTimeout": {
        "slug": "timeout",
        "title": "An NCCL operation timed out",
        "role": "consequence",
        "explanation": (
            "NCCL gave up waiting for an operation to complete (a code of recent NCCL: in 2.32, not in 2.27). A peer "
            "rank that hangs or died, or a network path that stopped carrying traffic, is the usual reason."
        ),
        "summary": "An NCCL operation timed out: find the rank that stopped responding and the network path "
        "between the ranks.",
        "steps": [
            "Check the other ranks / nodes for an earlier error or hang.",
            "Multi-node: check connectivity (`NCCL_SOCKET_IFNAME`, `NCCL_IB_DISABLE=1` to rule out InfiniBand).",
            "Rerun with `NCCL_DEBUG=INFO` on every rank.",
        ],
    },
}


def _generic(name: str) -> dict[str, object]:
    words = re.sub(r"(?<!^)(?=[A-Z])", "-", name.removeprefix("nccl")).lower()
    return {
        "slug": words,
        "title": f"NCCL returned {name}",
        "role": "cause",
        "explanation": f"NCCL returned the result code {name}, which this table does not describe yet.",
        "summary": "NCCL failed ({last_error|run with NCCL_DEBUG=INFO for details}): rerun with "
        "NCCL_DEBUG=INFO and read the NCCL WARN lines.",
        "steps": ["Rerun with `NCCL_DEBUG=INFO` and read the `NCCL WARN` lines before the error."],
    }


def read_wheel(folder: Path) -> tuple[str, dict[str, int], dict[int, str]]:
    """(version, {name: value}, {value: ncclGetErrorString(value)}) of one unpacked NCCL wheel."""
    header = (folder / "include" / "nccl.h").read_text()
    enum = _ENUM.search(header)
    if enum is None:
        raise SystemExit(f"{folder}: no ncclResult_t enum in nccl.h")
    codes = {m["name"]: int(m["value"]) for m in _MEMBER.finditer(enum["body"])}
    codes = {n: v for n, v in codes.items() if n not in ("ncclSuccess", "ncclNumResults")}
    parts = {m["part"]: m["value"] for m in _VERSION.finditer(header)}
    version = ".".join(parts.get(p, "?") for p in ("MAJOR", "MINOR", "PATCH"))
    lib = ctypes.CDLL(str(folder / "lib" / "libnccl.so.2"))
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclGetErrorString.argtypes = [ctypes.c_int]
    texts = {v: lib.ncclGetErrorString(v).decode() for v in codes.values()}
    return version, codes, texts


def torch_details(lib: Path) -> dict[str, str]:
    """{ncclXxx: detail} from the `ncclXxx: detail` strings getNcclErrorDetailStr returns."""
    if not lib.exists():
        return {}
    found: dict[str, str] = {}
    for m in _DETAIL.finditer(lib.read_bytes()):
        name = m["name"].decode()
        if name in KNOWN and name not in found:
            found[name] = m["detail"].decode().rstrip()
    return found


def _text_regex(text: str) -> str:
    """The code's text, with the parenthesised hint optional (older NCCL printed the bare phrase)."""
    for cut in (" (run with", " - please"):
        if cut in text:
            stem, rest = text.split(cut, 1)
            return re.escape(stem) + "(?:" + re.escape(cut + rest) + ")?"
    return re.escape(text)


def build(wheels: list[Path], torch_lib: Path) -> str:
    texts: dict[str, str] = {}
    values: dict[str, int] = {}
    seen_in: dict[str, list[str]] = {}
    for folder in wheels:
        version, codes, strings = read_wheel(folder)
        for name, value in codes.items():
            if name in texts and texts[name] != strings[value]:
                raise SystemExit(f"{name}: text changed between wheels ({texts[name]!r} vs {strings[value]!r})")
            texts[name], values[name] = strings[value], value
            seen_in.setdefault(name, []).append(version)
    details = torch_details(torch_lib)
    blocks: list[str] = []
    for name in sorted(values, key=values.get):  # type: ignore[arg-type]
        info = KNOWN.get(name) or _generic(name)
        text = texts[name]
        detail = details.get(name)
        head = (
            r"NCCL [Ee]rror(?: in: (?P<location>\S+?:\d+),| \d+:|:) (?P<nccl_error>"
            + _text_regex(text)
            + r")(?:, NCCL version (?P<nccl_version>[\w.+-]+))?"
        )
        alternatives = [head]
        if detail:
            alternatives.append(re.escape(f"{name}: {detail}"))
        match = "(?:" + "|".join(alternatives) + r")(?:(?=(?s:.*?)Last error:\n(?P<last_error>[^\n]+)))?"
        versions = sorted(set(seen_in[name]), key=lambda v: [int(x) for x in v.split(".")])
        checked = (
            f"ncclGetErrorString({values[name]}) of libnccl.so.2 in nvidia-nccl wheels {', '.join(versions)} "
            f"(ctypes, no GPU); enum {name} = {values[name]} in their nccl.h"
            + (f"; torch 2.13.0 libtorch_cuda.so detail '{name}: {detail}'" if detail else "")
            + "; vLLM pynccl_wrapper.py NCCL_CHECK 'NCCL error: {error_str}' (0.4.3-0.33.0, + Last error in 0.33)"
        )
        vllm_example = f"RuntimeError: NCCL error: {text}"
        torch_example = (
            "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
            f"ProcessGroupNCCL.cpp:3356, {text}, NCCL version {versions[-1]}"
            + (f"\n{name}: {detail}" if detail else "")
        )
        other = next(t for n, t in texts.items() if n != name)
        blocks.append(
            pattern_toml(
                {
                    "comment": f"{name} = {values[name]}: generic for this code (priority -10).",
                    "id": f"distributed.nccl-{info['slug']}",
                    "title": info["title"],
                    "severity": "error",
                    "role": info["role"],
                    "priority": -10,
                    "where": "exception",
                    "match": match,
                    "explanation": info["explanation"],
                    "docs": "https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
                    "summary": info["summary"],
                    "steps": info["steps"],
                    "file": "nccl",
                    "function": "ncclGetErrorString (NCCL; RCCL returns the same strings), raised by vllm/distributed/device_communicators/"
                    "pynccl_wrapper.py NCCL_CHECK and torch C10D_NCCL_CHECK (DistBackendError)",
                    "versions": "*",
                    "checked": checked,
                    "match_examples": [vllm_example, torch_example],
                    "no_match_examples": [
                        f"RuntimeError: NCCL error: {other}",
                        "(Worker_TP0 pid=5120) INFO 05-14 11:02:37 [pynccl.py:111] vLLM is using nccl==2.21.5",
                    ],
                }
            )
        )
    header = (
        "# Generated from ncclGetErrorString / nccl.h of the NCCL wheels "
        + ", ".join(sorted({v for vs in seen_in.values() for v in vs}))
        + " and torch's getNcclErrorDetailStr strings; see bench/families/nccl_errors.py.\n"
    )
    return header + "\n".join(blocks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nccl", action="append", type=Path, help="unpacked wheel's nvidia/nccl folder")
    parser.add_argument("--torch-lib", type=Path, default=DEFAULT_TORCH)
    parser.add_argument("--out", type=Path, default=PATTERNS / "distributed.toml")
    args = parser.parse_args(argv)
    wheels = [w for w in (args.nccl or DEFAULT_NCCL) if (w / "include" / "nccl.h").exists()]
    if not wheels:
        raise SystemExit("no NCCL wheel found: pass --nccl DIR (an unpacked wheel's nvidia/nccl folder)")
    splice(args.out, "nccl_errors", build(wheels, args.torch_lib))
    print(f"wrote {args.out} from {len(wheels)} NCCL wheel(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
