"""Generate the Ascend runtime (ACL) error-code patterns of patterns/accelerator.toml: one pattern
per group of aclError codes that share a meaning and a fix for a vLLM user (vllm-ascend on Ascend NPUs).

    python bench/families/acl_errors.py [--torch-npu DIR ...]

torch_npu turns a failed CANN runtime call into a RuntimeError (NPU_CHECK_ERROR and friends in
torch_npu/csrc/core/npu/NPUException.h):

    <function>:<file>:<line> NPU function error: <call>, error code is <code>[ERROR] ... ERR00100 PTA call acl api failed
    [Error]: <the code's text from NPUErrorCodes.h>

(older torch_npu, and the compact error output, print the same `NPU function error: ..., error code is N`;
operator code paths print `NPU error,NPU error code is:N`). The codes and their names are read from the
headers the torch_npu wheel ships: `static const int ACL_ERROR_* = N` (acl/acl_base.h, acl/acl_base_rt.h)
and `#define ACL_ERROR_RT_* N` (acl/error_codes/rt_error_codes.h); the text torch_npu prints for each code
from torch_npu/csrc/core/npu/NPUErrorCodes.h. Which codes belong together and what to do about them is
written below by hand (GROUPS); the script fails when a group names a code the headers do not have.

Codes of no group are left to the catch-all `accelerator.ascend-acl-error` (priority -11: behind
loading.toml's torch_npu ERR..100 suffix pattern, which the same message usually carries; the catch-all
takes the messages that have no such suffix). The device-memory codes (207001, 207018) sit at priority -1
so that memory.toml's `memory.npu-oom` (the allocator's `NPU out of memory` text, CANN's EL0004) wins when
both are in one message. HCCL result codes (1-24 in the same table) belong to distributed.toml.

Wheels read for the committed block (pip download --no-deps, unzipped under /work/pkg-src/): torch-npu
2.5.1 (/work/pkg-src/npu-old/x) and 2.14.0 (/work/pkg-src/npu/x).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

DEFAULT = [Path("/work/pkg-src/npu-old/x/torch_npu"), Path("/work/pkg-src/npu/x/torch_npu")]
HEADERS = ["acl/acl_base.h", "acl/acl_base_rt.h", "acl/error_codes/rt_error_codes.h",
           "third_party/acl/inc/acl/acl_base.h", "third_party/acl/inc/acl/error_codes/rt_error_codes.h"]
TEXTS = "torch_npu/csrc/core/npu/NPUErrorCodes.h"

PLOG = ("Read the CANN logs of the failing process for the detail (`$HOME/ascend/log/debug/plog/`, or set "
        "`ASCEND_GLOBAL_LOG_LEVEL=1` and `ASCEND_SLOG_PRINT_TO_STDOUT=1` to print them).")
VERSIONS = ("Check that the NPU driver and firmware, CANN, torch_npu and vllm-ascend are versions made for each "
            "other (`npu-smi info` shows the driver; vllm-ascend's install guide lists the matching set).")
SMI = ("Run `npu-smi info` on the host: every NPU the job uses must be listed with Health OK and no other "
       "process on it.")
VISIBLE = ("Make the NPUs visible to the process: in a container pass `--device /dev/davinciN` for each NPU plus "
           "`--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc` and mount the driver "
           "(`-v /usr/local/Ascend/driver:/usr/local/Ascend/driver`), as vllm-ascend's docker instructions show.")

# slug, code names, title, explanation, summary, steps, role, priority, the call of the examples.
GROUPS: list[tuple[str, list[str], str, str, str, list[str], str, int, str]] = [
    ("ascend-acl-invalid-device", ["ACL_ERROR_RT_INVALID_DEVICEID"],
     "The NPU index the worker asked for does not exist (ACL invalid device ID)",
     "A worker called the CANN runtime for an NPU index that this process cannot see. vLLM gives each worker the "
     "local NPU `local_rank`; when `ASCEND_RT_VISIBLE_DEVICES` lists fewer NPUs than tensor x pipeline (x data) "
     "parallel ranks on the node, or the container was given fewer /dev/davinci devices, the index is out of range.",
     "A worker asked for an NPU it cannot see ({call}, code {code}): make tensor x pipeline parallel size fit the NPUs "
     "in ASCEND_RT_VISIBLE_DEVICES and the container's devices.",
     ["Count the NPUs the process sees (`python -c 'import torch, torch_npu; print(torch.npu.device_count())'`) and "
      "keep `--tensor-parallel-size` x `--pipeline-parallel-size` (x the local data-parallel size) within it.",
      "Check `ASCEND_RT_VISIBLE_DEVICES` (comma-separated NPU ids, all existing) and the `--device /dev/davinciN` list "
      "of the container.", SMI],
     "cause", 0, "aclrtSetDevice(device_id_)"),
    ("ascend-acl-no-device", ["ACL_ERROR_RT_NO_DEVICE"],
     "The Ascend runtime found no NPU (ACL no device)",
     "The CANN runtime sees no NPU at all: the container has no /dev/davinci devices, the driver is not loaded or not "
     "mounted into the container, or `ASCEND_RT_VISIBLE_DEVICES` hides every NPU.",
     "The CANN runtime sees no NPU ({call}, code {code}): give the process the /dev/davinci devices and the driver, and "
     "check ASCEND_RT_VISIBLE_DEVICES.",
     [VISIBLE, "Check `ASCEND_RT_VISIBLE_DEVICES`: unset it, or list NPU ids that exist.", SMI],
     "cause", 0, "aclrtGetDeviceCount(&count)"),
    ("ascend-acl-device-setup", ["ACL_ERROR_RT_DEV_SETUP_ERROR", "ACL_ERROR_RT_DRV_INTERNAL_ERROR",
                                 "ACL_ERROR_RT_SOCKET_CLOSE"],
     "The NPU could not be opened or started (ACL device setup / driver error)",
     "The CANN runtime failed while opening or starting the NPU: the device is held by another process or container "
     "(CANN adds `Resource_Busy(EL0005): The resources are busy.`), the driver and firmware do not match the CANN "
     "toolkit, or the device is in a bad state after an earlier crash.",
     "The NPU could not be started ({call}, code {code}): free it from other processes, then check that driver, "
     "firmware and CANN match; reset the NPU if it stays stuck.",
     [SMI + " Stop the other process or container that holds the NPU (or give each job its own NPUs with "
      "`ASCEND_RT_VISIBLE_DEVICES`).", VERSIONS,
      "If nothing holds it, reset the device (`npu-smi set -t reset -i <id> -c 0` as root) or reboot the host.",
      PLOG],
     "cause", 0, "aclrtSetDevice(device_id_)"),
    ("ascend-acl-no-permission", ["ACL_ERROR_RT_NO_PERMISSION"],
     "The process is not allowed to use the NPU (ACL no permission)",
     "The CANN runtime was refused access to the NPU or its driver interfaces: the user is not in the group that owns "
     "/dev/davinci* (HwHiAiUser), or the container lacks the device nodes or the driver mount.",
     "The process may not use the NPU ({call}, code {code}): run as a user allowed on /dev/davinci* or pass the devices "
     "and driver into the container.",
     [VISIBLE, "On the host, add the user to the group that owns `/dev/davinci*` (usually HwHiAiUser) or run with the "
      "driver's documented user.", PLOG],
     "cause", 0, "aclrtSetDevice(device_id_)"),
    ("ascend-acl-driver-mismatch", ["ACL_ERROR_RT_FEATURE_NOT_SUPPORT", "ACL_ERROR_RT_SOC_VERSION",
                                    "ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT"],
     "The NPU driver or chip does not support what CANN asked for (ACL feature / SoC version)",
     "The CANN runtime asked the driver for a feature or task type this NPU, its driver or firmware does not have. "
     "torch_npu says the usual cause: driver and firmware packages that do not match each other or the CANN toolkit; "
     "a vllm-ascend build for another chip (A2, A3, 310P) gives the same.",
     "The driver/firmware/CANN set does not support this call ({call}, code {code}): install matching driver, firmware "
     "and CANN versions and the vllm-ascend build for this chip.",
     [VERSIONS, "Use the vllm-ascend image or wheel built for this NPU model (A2/A3/310P images differ).", PLOG],
     "cause", 0, "aclrtCtxSetSysParamOpt(aclSysParamOpt, value)"),
    ("ascend-acl-resource-exhausted", ["ACL_ERROR_RT_RESOURCE_ALLOC_FAIL", "ACL_ERROR_RT_NO_EVENT_RESOURCE",
                                       "ACL_ERROR_RT_NO_STREAM_RESOURCE", "ACL_ERROR_RT_NO_NOTIFY_RESOURCE",
                                       "ACL_ERROR_RT_NO_MODEL_RESOURCE", "ACL_ERROR_RT_NO_CDQ_RESOURCE",
                                       "ACL_ERROR_RT_OVER_LIMIT", "ACL_ERROR_RT_PROGRAM_USE_OUT",
                                       "ACL_ERROR_RT_STREAM_TASK_FULL"],
     "The NPU ran out of runtime resources (streams, events, notifies, models)",
     "The CANN runtime could not get a stream, event, notify, model or task slot: the device has a fixed number of "
     "them. ACL graph capture of many batch sizes, several vLLM processes on one NPU, or many HCCL communicators "
     "use them up.",
     "The NPU ran out of runtime resources ({call}, code {code}): capture fewer ACL graphs (or run with --enforce-eager) "
     "and do not share the NPU between processes.",
     ["Capture fewer graph sizes (`--compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 4, 8, 16, 32]}'`) or "
      "skip graph capture with `--enforce-eager`.",
      SMI + " Run one vLLM instance per NPU set.", PLOG],
     "cause", 0, "aclrtCreateStreamWithConfig(&stream, 0, flag)"),
    ("ascend-acl-device-memory", ["ACL_ERROR_RT_MEMORY_ALLOCATION", "ACL_ERROR_RT_DEVICE_OOM"],
     "The CANN runtime could not allocate NPU memory (ACL memory allocation / device OOM)",
     "A device-memory allocation made by the CANN runtime itself failed: weights, the KV cache sized by "
     "--gpu-memory-utilization, ACL graphs and HCCL buffers together need more than the NPU has, or another process "
     "holds part of it.",
     "The NPU is out of memory ({call}, code {code}): lower --gpu-memory-utilization, --max-model-len or --max-num-seqs, "
     "or split the model over more NPUs.",
     ["Lower `--gpu-memory-utilization` (room for ACL graphs and HCCL buffers), `--max-model-len` or `--max-num-seqs`.",
      "Split the model with a larger `--tensor-parallel-size`, or use a quantized model.",
      SMI + " Stop other processes using NPU memory."],
     "cause", -1, "aclrtMallocAlign32(&dev_ptr, size, ACL_MEM_MALLOC_HUGE_FIRST)"),
    ("ascend-acl-hardware-fault", ["ACL_ERROR_RT_DEVICE_MEM_ERROR", "ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR",
                                   "ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR", "ACL_ERROR_RT_LINK_ERROR",
                                   "ACL_ERROR_RT_SUSPECT_REMOTE_ERROR", "ACL_ERROR_RT_LOST_HEARTBEAT",
                                   "ACL_ERROR_RT_SYS_DMA"],
     "The NPU reported a hardware fault (memory ECC, link, heartbeat or DMA error)",
     "The NPU (or its link to another NPU) failed in hardware: an uncorrectable HBM error, a device memory fault, a "
     "broken HCCS/RoCE link, a lost device heartbeat or a DMA failure. The process cannot continue on that device; "
     "restarting on the same NPU usually fails the same way until it is reset or replaced.",
     "The NPU had a hardware fault ({call}, code {code}): check its health with npu-smi, reset or take it out of "
     "service, and restart vLLM on healthy NPUs.",
     [SMI + " Look for ECC errors and link status (`npu-smi info -t health -i <id>`, `hccn_tool -i <id> -link -g`).",
      "Reset the NPU (`npu-smi set -t reset -i <id> -c 0` as root) or drain the node; restart on NPUs that report "
      "healthy (`ASCEND_RT_VISIBLE_DEVICES`).", PLOG],
     "cause", 0, "aclrtSynchronizeStreamWithTimeout(stream, -1)"),
    ("ascend-acl-kernel-exception", ["ACL_ERROR_RT_MODEL_EXECUTE", "ACL_ERROR_RT_AICORE_TIMEOUT",
                                     "ACL_ERROR_RT_AICORE_EXCEPTION", "ACL_ERROR_RT_AICORE_TRAP_EXCEPTION",
                                     "ACL_ERROR_RT_AICPU_TIMEOUT", "ACL_ERROR_RT_AICPU_EXCEPTION",
                                     "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT", "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION",
                                     "ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION", "ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW",
                                     "ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW",
                                     "ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW",
                                     "ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW", "ACL_ERROR_RT_FFTS_PLUS_TIMEOUT",
                                     "ACL_ERROR_RT_FFTS_PLUS_EXCEPTION", "ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION"],
     "An NPU kernel crashed or hung (AI Core / AI CPU / vector core exception or timeout)",
     "An operator running on the NPU faulted (an out-of-bounds access, a trap) or did not finish: the NPU's equivalent "
     "of a CUDA illegal memory access. Causes are an operator bug for this shape or dtype, a custom operator built for "
     "another CANN, or an earlier error on the same stream; because NPU work is asynchronous the call in the "
     "traceback may not be the faulty one.",
     "An NPU operator faulted ({call}, code {code}): rerun with ASCEND_LAUNCH_BLOCKING=1 and --enforce-eager to find "
     "it, and keep CANN, torch_npu and vllm-ascend in step.",
     ["Rerun with `ASCEND_LAUNCH_BLOCKING=1` and `--enforce-eager` so the failing operator is the one in the traceback "
      "(ACL graphs cannot run with ASCEND_LAUNCH_BLOCKING).", VERSIONS, PLOG],
     "cause", 0, "aclrtSynchronizeStreamWithTimeout(stream, -1)"),
    ("ascend-acl-timeout", ["ACL_ERROR_RT_WAIT_TIMEOUT", "ACL_ERROR_RT_TASK_TIMEOUT", "ACL_ERROR_RT_TIMEOUT",
                            "ACL_ERROR_RT_REPORT_TIMEOUT", "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
                            "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT"],
     "An NPU stream or task timed out",
     "Work queued on the NPU did not finish within the runtime's limit. With several NPUs this is usually a collective "
     "(HCCL) waiting for a rank that crashed or is stuck elsewhere; on one NPU, a hung operator or an overloaded host.",
     "NPU work timed out ({call}, code {code}): look for the first error on the other ranks; raise HCCL_EXEC_TIMEOUT "
     "only if the job is just slow.",
     ["Find the first error in the logs of all ranks: a timeout is usually the echo of a failure elsewhere.",
      "If the work is legitimately slow (first compilation, large prefill), raise `HCCL_EXEC_TIMEOUT` / "
      "`HCCL_CONNECT_TIMEOUT` (seconds).", PLOG],
     "cause", 0, "aclrtSynchronizeStreamWithTimeout(stream, -1)"),
    ("ascend-acl-task-abort", ["ACL_ERROR_RT_DEVICE_TASK_ABORT", "ACL_ERROR_RT_STREAM_ABORT",
                               "ACL_ERROR_RT_TASK_ABORT_STOP", "ACL_ERROR_RT_COMM_OP_RETRY_FAIL"],
     "NPU work was aborted (device task abort, FORCE STOP)",
     "The NPU's queued work was stopped on purpose: another rank failed and the job was torn down, a watchdog fired, or "
     "an HCCL retry gave up. It follows another error; the first failure in the logs of all ranks is the cause.",
     "NPU work was aborted ({call}, code {code}): find the first error on any rank; this one follows it.",
     ["Look earlier in this log and in the other ranks' logs for the first exception.", PLOG],
     "consequence", 0, "aclrtSynchronizeStreamWithTimeout(stream, -1)"),
    ("ascend-acl-not-initialized", ["ACL_ERROR_UNINITIALIZE", "ACL_ERROR_RT_CONTEXT_NULL"],
     "The Ascend runtime was used before it was initialised in this process or thread",
     "A CANN runtime call ran in a process or thread that had not set up the NPU: a worker forked after the parent "
     "touched the NPU, or a thread that never called set_device. With vLLM this points to the multiprocessing start "
     "method or to a plugin that uses the NPU from its own thread.",
     "The NPU was used before it was set up in this process ({call}, code {code}): start vLLM's workers with spawn "
     "(VLLM_WORKER_MULTIPROC_METHOD=spawn) and keep torch_npu / vllm-ascend in step.",
     ["Set `VLLM_WORKER_MULTIPROC_METHOD=spawn` so workers do not inherit a half-initialised NPU context.", VERSIONS,
      PLOG],
     "cause", 0, "aclrtGetCurrentContext(&ctx)"),
    ("ascend-acl-graph-capture", ["ACL_ERROR_RT_CAPTURE_DEPENDENCY", "ACL_ERROR_RT_STREAM_UNJOINED",
                                  "ACL_ERROR_RT_MODEL_CAPTURED", "ACL_ERROR_RT_STREAM_CAPTURED",
                                  "ACL_ERROR_RT_EVENT_CAPTURED", "ACL_ERROR_RT_STREAM_NOT_CAPTURED",
                                  "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT", "ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT",
                                  "ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED", "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD",
                                  "ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC", "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING",
                                  "ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED"],
     "ACL graph capture failed (an operation is not allowed while capturing)",
     "vllm-ascend records the model into ACL graphs (the NPU's CUDA graphs) at start-up. An operator that synchronises, "
     "touches the default stream or another thread during capture breaks it: a custom operator, a feature that is not "
     "capture-safe yet, or a torch_npu / CANN without the capture support this vllm-ascend expects.",
     "ACL graph capture failed ({call}, code {code}): run with --enforce-eager to confirm, then use a feature set or "
     "versions that capture cleanly.",
     ["Start with `--enforce-eager` (no ACL graphs) to confirm the capture is the problem.",
      "Capture fewer sizes (`--compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'`) or turn off the "
      "feature named in the traceback.", VERSIONS],
     "cause", 0, "aclmdlRICaptureEnd(stream, &model_ri)"),
]

_NAME = re.compile(r"^\s*(?:#define\s+|static\s+const\s+int\s+)(ACL_[A-Z0-9_]+)\s*=?\s*(\d{6})\b", re.M)
_TEXT = re.compile(r"\{(\d{6}),\s*\"((?:[^\"\\]|\\.)*)", re.S)


def read_codes(root: Path) -> tuple[dict[str, int], dict[int, str]]:
    names: dict[str, int] = {}
    for rel in HEADERS:
        path = root / "include" / rel
        if path.exists():
            for name, code in _NAME.findall(path.read_text(errors="replace")):
                names.setdefault(name, int(code))
    texts: dict[int, str] = {}
    path = root / "include" / TEXTS
    if path.exists():
        for code, text in _TEXT.findall(path.read_text(errors="replace")):
            first = text.split("\\n")[0].strip()
            texts[int(code)] = first
    return names, texts


def build(roots: list[Path]) -> str:
    names: dict[str, int] = {}
    texts: dict[int, str] = {}
    read = []
    for root in roots:
        n, t = read_codes(root)
        if n:
            read.append(str(root))
        for k, v in n.items():
            if names.setdefault(k, v) != v:
                raise SystemExit(f"{k} is {names[k]} in one wheel and {v} in another: regenerate per version")
        for k, v in t.items():
            texts.setdefault(k, v)
    if not names:
        raise SystemExit(f"no torch_npu headers found in {roots}")
    stamp = "[ERROR] 2025-09-12-05:36:52 (PID:2741, Device:0, RankID:-1) ERR00100 PTA call acl api failed"
    blocks = []
    grouped: set[int] = set()
    for slug, members, title, explanation, summary, steps, role, priority, call in GROUPS:
        missing = [m for m in members if m not in names]
        if missing:
            raise SystemExit(f"group {slug}: {missing} not in the headers")
        codes = [names[m] for m in members]
        grouped.update(codes)
        listing = ", ".join(f"{m} ({names[m]})" for m in members)
        alt = "|".join(str(c) for c in codes)
        match = (r"(?:NPU function error: (?P<call>[^\n]*?), error code is |NPU error, ?NPU error code is:? ?)"
                 rf"(?P<code>{alt})(?!\d)")
        first = codes[0]
        said = texts.get(first, "")
        ex1 = (f"RuntimeError: SetDevice:torch_npu/csrc/core/npu/NPUFunctions.cpp:150 NPU function error: {call}, "
               f"error code is {first}\n{stamp}\n[Error]: {said}\n        Rectify the fault based on the error "
               "information in the ascend log.")
        last = codes[-1]
        ex2 = (f"(EngineCore_DP0 pid=812) ERROR 09-12 05:36:52 [core.py:708] RuntimeError: "
               f"NPU function error: {call}, error code is {last}")
        other = 107003 if first != 107003 else 107004
        blocks.append(pattern_toml({
            "comment": ("priority -1: memory.npu-oom (the allocator's `NPU out of memory`, CANN's EL0004) wins when "
                        "both are in one message." if priority == -1 else None),
            "id": f"accelerator.{slug}",
            "title": title,
            "severity": "error",
            "role": role,
            "priority": priority,
            "where": "any",
            "match": match,
            "explanation": f"{explanation} (Codes: {listing}.)",
            "docs": "https://docs.vllm.ai/projects/ascend/en/latest/faqs.html",
            "summary": summary.replace("{call}", "{call|the runtime call}"),
            "steps": steps,
            "file": "torch_npu",
            "function": "NPU_CHECK_ERROR / CHECK_AND_THROW_ERROR_WITH_SPECIFIC_MESSAGE (torch_npu/csrc/core/npu/NPUException.h)",
            "versions": ">=0.7",
            "checked": (f"generated by bench/families/acl_errors.py from {', '.join(read)} (codes: acl/acl_base.h, "
                        "acl/acl_base_rt.h, acl/error_codes/rt_error_codes.h; texts: torch_npu/csrc/core/npu/"
                        "NPUErrorCodes.h; message format: NPUException.h)"),
            "match_examples": [ex1, ex2],
            "no_match_examples": [
                f"RuntimeError: NPU function error: {call}, error code is {other}",
                f"RuntimeError: NPU function error: {call}, error code is {first}1",
            ],
        }))
    # The catch-all: every other aclError code (HCCL's 1-24 excluded by the six-digit form).
    blocks.append(pattern_toml({
        "comment": ("priority -11: behind loading.torch-npu-err-acl (the ERR..100 suffix of the same message, "
                    "priority -10) and every group above; takes the `error code is N` messages without that suffix."),
        "id": "accelerator.ascend-acl-error",
        "title": "A CANN runtime call failed with ACL error {code}",
        "severity": "error",
        "role": "cause",
        "priority": -11,
        "where": "any",
        "match": (r"(?:NPU function error: (?P<call>[^\n]*?), error code is |NPU error, ?NPU error code is:? ?)"
                  r"(?P<code>[1-5]\d{5})(?!\d)"),
        "explanation": ("torch_npu called the CANN runtime (ACL) and it returned error {code}. The `[Error]:` line "
                        "torch_npu prints under the message, and the CANN codes around it (EZ9999, EE9999, EL0004 ... "
                        f"with their 'Inner Error' text), say what the runtime saw. ({len(names)} codes in the headers, "
                        f"{len(grouped)} of them in the specific patterns above.)"),
        "docs": "https://docs.vllm.ai/projects/ascend/en/latest/faqs.html",
        "summary": "A CANN runtime call failed ({call|the call}, ACL error {code}): read the [Error] line and the CANN log for the reason.",
        "steps": [PLOG, VERSIONS, SMI],
        "file": "torch_npu",
        "function": "NPU_CHECK_ERROR (torch_npu/csrc/core/npu/NPUException.h)",
        "versions": ">=0.7",
        "checked": f"generated by bench/families/acl_errors.py from {', '.join(read)}",
        "match_examples": [
            "RuntimeError: NPU function error: aclrtMemcpy(dst, dst_size, src, src_size, kind), error code is 107003",
            "RuntimeError: npu_op_exec:torch_npu/csrc/framework/OpCommand.cpp:80 NPU error,NPU error code is:500002",
        ],
        "no_match_examples": [
            "RuntimeError: HCCL function error: hcclCommInitRootInfo(...), error code is 7",
            "RuntimeError: NPU function error: aclrtMemcpy, error code is 12",
        ],
    }))
    return "\n".join(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-npu", action="append", type=Path, help="an unzipped torch_npu package directory")
    args = parser.parse_args()
    splice(PATTERNS / "accelerator.toml", "acl_errors", build(args.torch_npu or DEFAULT))


if __name__ == "__main__":
    main()
