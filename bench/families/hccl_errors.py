"""Generate one pattern per HCCL result code (`HcclResult`, Huawei Ascend's NCCL) into
patterns/distributed.toml.

    python bench/families/hccl_errors.py [--torch-npu DIR ...]

vLLM on Ascend NPUs (vllm-ascend) communicates through torch_npu's ProcessGroupHCCL, whose HCCL_CHECK_ERROR
macro (torch_npu/csrc/distributed/HCCLUtils.hpp) raises

    <function>:<file>:<line> HCCL function error: <call>, error code is <N>[ (<text>)]<ERR02200 DIST ...>

The codes and their meaning come from the `HcclResult` enum in the header torch_npu ships
(include/third_party/hccl/inc/hccl/hccl_types.h: `HCCL_E_XXX = N, /**< text */`); the text in brackets is
what torch_npu 2.14 appends from its own table (NPUErrorCodes.h, "hcclError code (1~24)"), the same words
as the header's comments. Older torch_npu (2.5.1) prints the code alone and knows codes 1-21.

Wheels read for the committed block (pip download --no-deps, unzipped under /work/pkg-src/):
torch-npu 2.14.0 (/work/pkg-src/npu/x) and 2.5.1 (/work/pkg-src/npu-old/x).

The generated patterns are catch-alls (priority -10): they say which class of HCCL failure it was. A last
pattern covers vllm-ascend's own pyhccl wrapper (`RuntimeError: HCCL error: <HcclGetErrorString>`), whose
strings come from CANN's libhccl.so (not on PyPI, so not read here).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

PKG = Path("/work/pkg-src")
DEFAULT_WHEELS = [PKG / "npu" / "x" / "torch_npu", PKG / "npu-old" / "x" / "torch_npu"]
HEADER = Path("include/third_party/hccl/inc/hccl/hccl_types.h")
TABLE = Path("include/torch_npu/csrc/core/npu/NPUErrorCodes.h")

_ENUM = re.compile(r"typedef enum\s*\{(?P<body>[^}]*)\}\s*HcclResult;", re.S)
_MEMBER = re.compile(r"(?P<name>HCCL_E_\w+)\s*=\s*(?P<value>\d+),?\s*/\*\*<\s*(?P<text>.*?)\s*\*/")
_VERSION = re.compile(r"__version__ = '(?P<v>[^']+)'")
_TABLE_ENTRY = re.compile(r'\{(?P<value>\d{1,2}), "(?P<text>[^"]+)"\}')

NETWORK_STEPS = [
    "Multi-node: set `HCCL_SOCKET_IFNAME` (and `GLOO_SOCKET_IFNAME`) to the interface that connects the nodes, and check that the ranks can reach each other (firewall, `HCCL_IF_BASE_PORT` / `HCCL_HOST_SOCKET_PORT_RANGE` ports open).",
    "Check the NPU network links with `hccn_tool -i <device> -link -g` and the NPU health with `npu-smi info`.",
    "A slow peer (loading weights, compiling graphs) can look like a broken link: raise `HCCL_CONNECT_TIMEOUT` (seconds, default 120) for start-up.",
]
PLOG_STEP = "The CANN log names the failing step: read the newest files under `~/ascend/log/debug/plog/` (or $ASCEND_PROCESS_LOG_PATH) of the rank that failed."
DEVICE_STEPS = [
    "Check the NPUs: `npu-smi info` must list every device as OK and show no leftover process holding them; stop old vLLM processes.",
    "Every rank must see a distinct device: check `ASCEND_RT_VISIBLE_DEVICES` for each process (and `RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES` with Ray).",
]

# What each code means for a vLLM server on Ascend, in our own words. A code a later HCCL adds gets a
# generic entry (see `_generic`), so a new header never breaks the generator.
KNOWN: dict[str, dict[str, object]] = {
    "HCCL_E_PARA": {
        "slug": "param",
        "title": "HCCL rejected a parameter (error code 1)",
        "explanation": "An argument passed to HCCL was invalid: most often a rank or world size that does not match the communicator (ranks started with different parallel sizes, a rank table that disagrees with the processes), a device id outside the visible devices, or a tensor type the operation does not take.",
        # --data-parallel-size exists from vLLM 0.8 on: its own qualified step (the summary is step 1).
        "steps": ["Start every rank with the same parallel sizes (`--tensor-parallel-size`, `--pipeline-parallel-size`) and check that each rank's device is visible to it.", "[>=0.8] With data parallelism, the same `--data-parallel-size` on every rank too.", PLOG_STEP],
    },
    "HCCL_E_PTR": {
        "slug": "null-pointer",
        "title": "HCCL was given an empty pointer (error code 2)",
        "explanation": "HCCL received a null pointer, typically a communicator or buffer that was never created because an earlier step of the set-up failed (often on another rank).",
        "steps": ["Look for an earlier error on any rank (communicator creation, memory allocation) and fix that first.", PLOG_STEP],
    },
    "HCCL_E_MEMORY": {
        "slug": "memory",
        "title": "HCCL could not get the memory it needs (error code 3)",
        "explanation": "HCCL failed to allocate or register memory for its communication buffers. The NPU's memory is taken by the weights and the KV cache, or the per-communicator buffer (HCCL_BUFFSIZE, in MB, for each communicator) is large for the number of communicators vLLM creates.",
        "steps": ["Leave memory for HCCL: lower `--gpu-memory-utilization` (e.g. 0.85).", "Lower `HCCL_BUFFSIZE` (MB per communicator, default 200) if it was raised, or fewer communicators (smaller expert / data parallel groups).", PLOG_STEP],
    },
    "HCCL_E_INTERNAL": {
        "slug": "internal",
        "title": "HCCL hit an internal error (error code 4)",
        "explanation": "HCCL failed inside its own code without a more precise class. The CANN log of the failing rank has the detail; version mismatches between CANN, the driver/firmware and torch_npu are a common background.",
        "steps": [PLOG_STEP, "Check that CANN, the NPU driver/firmware and torch_npu are versions made for each other (vllm-ascend's install guide lists the combinations)."],
    },
    "HCCL_E_NOT_SUPPORT": {
        "slug": "not-supported",
        "title": "HCCL does not support this operation here (error code 5)",
        "explanation": "The collective, data type or topology requested is not supported by this HCCL / CANN version or on this device model (for example an operation or dtype only newer CANN releases implement, or a feature that needs a particular interconnect).",
        "steps": ["Upgrade CANN (and torch_npu / vllm-ascend to the versions made for it), or turn off the feature that needs the operation (graph mode, a communication fusion option).", PLOG_STEP],
    },
    "HCCL_E_NOT_FOUND": {
        "slug": "not-found",
        "title": "HCCL did not find a resource it needs (error code 6)",
        "explanation": "A resource HCCL looks up was not there: a device, a network interface named in the configuration, a rank table entry or a file.",
        "steps": ["Check `ASCEND_RT_VISIBLE_DEVICES`, `HCCL_SOCKET_IFNAME` (the interface must exist on this host) and any rank table file the job uses.", PLOG_STEP],
    },
    "HCCL_E_UNAVAIL": {
        "slug": "unavailable",
        "title": "An HCCL resource is unavailable (error code 7)",
        "explanation": "HCCL could not get a resource it needs, most often while creating the communicator (HcclCommInitRootInfo / HcclGetRootInfo): the NPU is held by another process (a previous vLLM still running), two ranks were given the same device, the host socket or port HCCL wants is taken or blocked, or the device is in a bad state.",
        "steps": DEVICE_STEPS + ["Ports: HCCL listens from `HCCL_IF_BASE_PORT` (host ports in `HCCL_HOST_SOCKET_PORT_RANGE`); move them if another job on the host uses the same range.", PLOG_STEP],
    },
    "HCCL_E_SYSCALL": {
        "slug": "syscall",
        "title": "A system call inside HCCL failed (error code 8)",
        "explanation": "An operating-system call HCCL made failed: opening sockets, shared memory, files or device nodes. Containers without the Ascend devices and driver mounted, low limits (open files, locked memory) or a full /dev/shm are typical.",
        "steps": ["In containers, mount the Ascend devices and driver (`/dev/davinci*`, `/dev/davinci_manager`, `/dev/hisi_hdc`, `/usr/local/Ascend/driver`) and give enough shared memory (`--shm-size` or `--ipc=host`).", PLOG_STEP],
    },
    "HCCL_E_TIMEOUT": {
        "slug": "timeout",
        "title": "An HCCL operation timed out (error code 9)",
        "explanation": "A collective or the set-up of a link waited longer than HCCL's limit: HCCL_CONNECT_TIMEOUT for connecting (120 s by default), HCCL_EXEC_TIMEOUT for running an operation. Another rank did not arrive: it crashed, is still loading or compiling, or cannot reach this one over the network.",
        "steps": ["Look at the other ranks' logs for an error or a crash at the same time.", "If ranks are only slow to start, raise `HCCL_CONNECT_TIMEOUT` (e.g. 1200) and `HCCL_EXEC_TIMEOUT`."] + NETWORK_STEPS[:1],
    },
    "HCCL_E_OPEN_FILE_FAILURE": {
        "slug": "open-file",
        "title": "HCCL could not open a file (error code 10)",
        "explanation": "HCCL failed to open a file it needs, such as a rank table or configuration file, or a device file, usually because the path is wrong or the process lacks permission.",
        "steps": ["Check the paths and permissions of any rank table / HCCL configuration file, and run with access to the Ascend device files.", PLOG_STEP],
    },
    "HCCL_E_TCP_CONNECT": {
        "slug": "tcp-connect",
        "title": "HCCL could not open a TCP connection to another rank (error code 11)",
        "explanation": "Ranks exchange set-up information over TCP on the host network, and a connection could not be made: wrong interface or address, a firewall, a port already used, or the peer not started (or already dead).",
        "steps": NETWORK_STEPS,
    },
    "HCCL_E_ROCE_CONNECT": {
        "slug": "roce-connect",
        "title": "HCCL could not set up the RoCE link between NPUs (error code 12)",
        "explanation": "The NPUs of different servers talk over their own RoCE network ports, and a link could not be established: NPU NIC addresses not configured, a link that is down, or switches/VLANs that do not connect the two devices.",
        "steps": NETWORK_STEPS[1:] + ["Configure the NPU NIC addresses (`hccn_tool -i <device> -ip -g` shows them) so that every device can reach its peers, and check the switch ports."],
    },
    "HCCL_E_TCP_TRANSFER": {
        "slug": "tcp-transfer",
        "title": "An HCCL transfer over TCP failed (error code 13)",
        "explanation": "Data sent between ranks over the host TCP network was interrupted: the connection broke, usually because the peer process died or the network dropped.",
        "steps": ["Look for the first rank that failed or died (its log or `dmesg`), and fix that error first."] + NETWORK_STEPS[:1],
    },
    "HCCL_E_ROCE_TRANSFER": {
        "slug": "roce-transfer",
        "title": "An HCCL transfer over RoCE failed (error code 14)",
        "explanation": "A transfer over the NPU RoCE network failed in the middle of an operation: a link went down or flapped, or the remote device stopped responding.",
        "steps": ["Look for the first rank that failed or died and fix that error first.", NETWORK_STEPS[1]],
    },
    "HCCL_E_RUNTIME": {
        "slug": "runtime",
        "title": "An Ascend runtime call inside HCCL failed (error code 15)",
        "explanation": "HCCL called the Ascend runtime (ACL / rts: streams, events, memory) and the call failed. The device is usually already in an error state from an earlier failure (an operator that failed, memory exhausted), which the CANN log and earlier lines name.",
        "steps": ["Look for an earlier NPU error in this log (EZ/EE/EL error codes, 'NPU function error', out of memory) and fix that first."] + DEVICE_STEPS[:1] + [PLOG_STEP],
    },
    "HCCL_E_DRV": {
        "slug": "driver",
        "title": "An NPU driver call inside HCCL failed (error code 16)",
        "explanation": "HCCL called the NPU driver and the call failed: the driver or firmware does not match CANN, the device is unhealthy, or the container lacks the driver's device files.",
        "steps": DEVICE_STEPS[:1] + ["Check that the driver and firmware versions match the CANN version (`npu-smi info` shows them).", PLOG_STEP],
    },
    "HCCL_E_PROFILING": {
        "slug": "profiling",
        "title": "An HCCL profiling call failed (error code 17)",
        "explanation": "HCCL could not talk to the profiler, which happens when profiling is turned on (torch_npu profiler, msprof) and its set-up failed.",
        "steps": ["Run without profiling, or fix the profiler's output path and permissions.", PLOG_STEP],
    },
    "HCCL_E_CCE": {
        "slug": "cce",
        "title": "A CCE call inside HCCL failed (error code 18)",
        "explanation": "HCCL failed to run one of its device kernels (CCE); the device or the kernel binaries of this CANN installation are in a bad state, or they do not match the device model.",
        "steps": ["Check that the CANN toolkit and kernels packages match the device model and each other.", PLOG_STEP],
    },
    "HCCL_E_NETWORK": {
        "slug": "network",
        "title": "An HCCL network call failed (error code 19)",
        "explanation": "A call to the network layer HCCL uses between devices or hosts failed: an interface that is down or misconfigured, or addresses the ranks cannot reach.",
        "steps": NETWORK_STEPS,
    },
    "HCCL_E_AGAIN": {
        "slug": "again",
        "title": "HCCL asked to try again (error code 20)",
        "explanation": "HCCL reported a temporary condition (a resource busy at that moment). vLLM does not retry the call, so the start-up or the step failed anyway.",
        "steps": ["Restart; if it repeats, check that no other job uses the same NPUs or ports at the same time.", PLOG_STEP],
    },
    "HCCL_E_REMOTE": {
        "slug": "remote",
        "title": "HCCL got an error completion from a remote NPU (error code 21)",
        "explanation": "A network transfer completed with an error reported by the remote side (an error CQE): the peer device stopped, the link between them failed, or the remote memory it wrote to was no longer valid.",
        "steps": ["Look for the first rank that failed and fix that error first.", NETWORK_STEPS[1]],
    },
    "HCCL_E_SUSPENDING": {
        "slug": "suspending",
        "title": "The HCCL communicator is suspended (error code 22)",
        "explanation": "The communicator was paused by HCCL's fault handling (after a link or device error, while it tries to recover), and the operation was refused.",
        "steps": ["Find the link or device error that came first (this log, the CANN log) and fix that.", PLOG_STEP],
    },
    "HCCL_E_OPRETRY_FAIL": {
        "slug": "retry-failed",
        "title": "HCCL could not retry a failed operation (error code 23)",
        "explanation": "HCCL's operation-retry mechanism tried to repeat a collective after a network error and could not, because the conditions for a retry were not met. The network error before it is the cause.",
        "steps": ["Find the network error that triggered the retry and fix it."] + NETWORK_STEPS[1:2],
    },
    "HCCL_E_OOM": {
        "slug": "out-of-memory",
        "title": "HCCL ran out of memory (error code 24)",
        "explanation": "HCCL could not allocate memory for its buffers because the NPU's memory is exhausted by the weights, the KV cache and the other communicators.",
        "steps": ["Leave memory for HCCL: lower `--gpu-memory-utilization` (e.g. 0.85) or `--max-model-len`.", "Lower `HCCL_BUFFSIZE` if it was raised."],
    },
}


def _generic(name: str) -> dict[str, object]:
    words = name.removeprefix("HCCL_E_").lower().replace("_", " ")
    return {
        "slug": name.removeprefix("HCCL_E_").lower().replace("_", "-"),
        "title": f"HCCL failed with {name}",
        "explanation": f"HCCL returned {name} ({words}).",
        "steps": [PLOG_STEP],
    }


def read_wheel(folder: Path) -> tuple[dict[str, int], dict[int, str], dict[int, str]]:
    """name -> value and value -> header text from hccl_types.h; value -> torch_npu's appended text."""
    header = (folder / HEADER).read_text()
    enum = _ENUM.search(header)
    if not enum:
        raise SystemExit(f"{folder / HEADER}: no HcclResult enum")
    values, texts = {}, {}
    for m in _MEMBER.finditer(enum["body"]):
        values[m["name"]] = int(m["value"])
        texts[int(m["value"])] = m["text"]
    table: dict[int, str] = {}
    table_file = folder / TABLE
    if table_file.exists():
        body = table_file.read_text()
        start = body.find("hcclError code")
        if start >= 0:
            table = {int(m["value"]): m["text"] for m in _TABLE_ENTRY.finditer(body[start:])}
    return values, texts, table


def build(wheels: list[Path]) -> str:
    values: dict[str, int] = {}
    texts: dict[int, str] = {}
    appended: dict[int, str] = {}
    seen_in: dict[str, list[str]] = {}
    for folder in wheels:
        v, t, table = read_wheel(folder)
        version = _VERSION.search((folder / "version.py").read_text())["v"]
        for name, value in v.items():
            values.setdefault(name, value)
            texts.setdefault(value, t[value])
            seen_in.setdefault(name, []).append(version)
        for value, text in table.items():
            appended.setdefault(value, text)
    out = [
        "# Generated from HcclResult in torch_npu's hccl_types.h (torch-npu 2.14.0 and 2.5.1) and torch_npu's",
        "# HCCL_CHECK_ERROR message; see bench/families/hccl_errors.py. Catch-alls: priority -10.",
    ]
    for name, value in sorted(values.items(), key=lambda item: item[1]):
        info = KNOWN.get(name) or _generic(name)
        text = texts[value]
        versions = "torch-npu " + " and ".join(sorted(seen_in[name], key=lambda v: [int(x) for x in v.split(".")]))
        match = (
            r"HCCL function error: (?P<call>[^\n]+?), error code is " + str(value)
            + r"\b(?: \((?P<text>[^)\n]*)\))?"
        )
        example_call = "HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_))"
        out.append(
            pattern_toml(
                {
                    "comment": f"{name} = {value} ({text}).",
                    "id": f"distributed.hccl-{info['slug']}",
                    "title": info["title"],
                    "severity": "error",
                    "role": "cause",
                    "priority": -10,
                    "where": "exception",
                    "match": match,
                    "explanation": (
                        "vLLM on Ascend NPUs (vllm-ascend) moves tensors between NPUs with HCCL, Huawei's "
                        "counterpart of NCCL, through torch_npu; the HCCL call named in the message "
                        f"({{call}}) returned {value}, {name}. " + str(info["explanation"])
                    ),
                    "summary": f"HCCL call {{call}} failed with {name} ({text}): "
                    + str(info["steps"][0])[0].lower()  # type: ignore[index]
                    + str(info["steps"][0])[1:],  # type: ignore[index]
                    "steps": list(info["steps"]),  # type: ignore[arg-type]
                    "file": "torch_npu",
                    "function": "torch_npu/csrc/distributed/HCCLUtils.hpp HCCL_CHECK_ERROR (ProcessGroupHCCL)",
                    "versions": "*",
                    "checked": (
                        f"{versions} include/third_party/hccl/inc/hccl/hccl_types.h ({name} = {value}, "
                        f"'{text}'); HCCLUtils.hpp ' HCCL function error: ' + call + ', error code is ' + code"
                        + (f"; 2.14.0 NPUErrorCodes.h appends ' ({appended[value]})'" if value in appended else "")
                    ),
                    "match_examples": [
                        f"RuntimeError: createHCCLComm:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:2185 HCCL "
                        f"function error: {example_call}, error code is {value}",
                        f"RuntimeError: HCCL function error: HcclAllReduce(inputPtr, outputPtr, numel, hcclType, "
                        f"hcclOp, comm, stream.stream(false)), error code is {value}"
                        + (f" ({appended[value]})" if value in appended else "")
                        + " ERR02200 DIST call hccl api failed.",
                    ],
                    "no_match_examples": [
                        f"RuntimeError: HCCL function error: {example_call}, error code is "
                        f"{value + 100 if value < 10 else value * 10}",
                    ],
                }
            )
        )
    out.append(
        pattern_toml(
            {
                "comment": "vllm-ascend's pyhccl wrapper (and the Gaudi HCCL wrapper of the same shape): "
                "RuntimeError(f'HCCL error: {HcclGetErrorString(result)}'). Last, priority -10.",
                "id": "distributed.hccl-error",
                "title": "HCCL, the NPU collective library, failed: {detail}",
                "severity": "error",
                "role": "cause",
                "priority": -10,
                "where": "exception",
                "exception": ["RuntimeError"],
                "match": r"^HCCL error: (?P<detail>[^\n]+)",
                "explanation": (
                    "vllm-ascend's own communicator (pyhccl, used for its collectives besides torch_npu's "
                    "process groups) calls libhccl directly and raises this with HCCL's description of the "
                    "result ({detail}). Start-up failures usually come from devices held by another process or "
                    "given twice, blocked ports or interfaces between nodes, or CANN / driver versions that do "
                    "not match; failures while serving from a rank that died or a broken link."
                ),
                "summary": "HCCL failed ({detail}): check the NPUs (`npu-smi info`), the device assignment of each rank, and the network between nodes.",
                "steps": DEVICE_STEPS + NETWORK_STEPS[:1] + [PLOG_STEP],
                "file": "vllm_ascend/distributed/device_communicators/pyhccl_wrapper.py",
                "function": "HCCLLibrary.HCCL_CHECK",
                "versions": "*",
                "checked": "vllm-ascend pyhccl_wrapper.py HCCL_CHECK (RuntimeError(f\"HCCL error: {error_str}\") with error_str from HcclGetErrorString), via the code index; the strings are CANN's, not read",
                "match_examples": [
                    "RuntimeError: HCCL error: resource unavailable",
                ],
                "no_match_examples": [
                    "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
                ],
            }
        )
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-npu", type=Path, action="append", help="unzipped torch_npu package folder")
    parser.add_argument("--out", type=Path, default=PATTERNS / "distributed.toml")
    args = parser.parse_args(argv)
    wheels = args.torch_npu or DEFAULT_WHEELS
    splice(args.out, "hccl_errors", build(wheels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
