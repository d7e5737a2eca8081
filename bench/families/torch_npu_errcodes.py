"""Generate the torch_npu error-code patterns of patterns/loading.toml: one pattern per `ErrCode`
of torch_npu (Huawei Ascend's PyTorch adapter, used by vllm-ascend).

    python bench/families/torch_npu_errcodes.py [--torch-npu DIR]

torch_npu appends a line to the messages of the errors it raises (torch_npu/utils/_error_code.py,
`_format_error_msg`, and the C++ PTA_ERROR/OPS_ERROR macros that print the same):

    [ERROR] <time> (PID:<pid>, Device:<device>, RankID:<rank>) ERR<submodule:02d><code:03d> <SUBMODULE> <text>

The submodules come from `_SubModuleID` (PTA, OPS, DIST, GRAPH, PROF, UNKNOWN) and the codes and texts
from `ErrCode` (`NAME = (code, "text")`), both read from the wheel by this script. ERR99999 (UNKNOWN,
"applicaiton exception", torch_npu's own spelling) is different: torch_npu's exit hook prints it alone
when the process dies of an exception that torch_npu did not raise, so it only announces the traceback
above it (role wrapper). The other codes say which class of failure torch_npu saw; the message in front
of the suffix says more, so they are catch-alls (priority -10) behind any pattern that knows that message
(HCCL results: bench/families/hccl_errors.py in distributed.toml).

What each code means for a vLLM user is written below by hand (MEANING); the script fails when the wheel
has a code without an entry. Wheels read for the committed block (pip download --no-deps, unzipped under
/work/pkg-src/): torch-npu 2.5.1 (/work/pkg-src/torch_npu-2.5.1) and 2.14.0 (/work/pkg-src/npu/x), whose
enums are identical.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

DEFAULT = [Path("/work/pkg-src/torch_npu-2.5.1/torch_npu"), Path("/work/pkg-src/npu/x/torch_npu")]
SOURCE = Path("utils/_error_code.py")

PLOG = "Read the CANN logs of the failing process for the detail (`$HOME/ascend/log/debug/plog/`, or set `ASCEND_GLOBAL_LOG_LEVEL=1` and `ASCEND_SLOG_PRINT_TO_STDOUT=1` to print them)."
VERSIONS = "Check that CANN, the NPU driver/firmware, torch_npu and vllm-ascend are versions made for each other (vllm-ascend's install guide lists them)."

# ErrCode name -> (title, explanation, steps, an example message torch_npu raises with that code).
MEANING: dict[str, tuple[str, str, list[str], str]] = {
    "PARAM": (
        "torch_npu rejected a parameter",
        "torch_npu (the Ascend adapter under vllm-ascend) refused an argument of the call named in the message: a tensor on the wrong device, a keyword it does not take, an index out of range.",
        ["Read the message in front of the ERR line: it names the argument; fix the caller (vllm-ascend version, a plugin, custom code).", VERSIONS],
        "More than one keyword argument.",
    ),
    "TYPE": (
        "torch_npu got a value of the wrong type",
        "torch_npu was given an object of a type it cannot use (for example a dtype an NPU operator does not support, or a non-tensor where a tensor is needed).",
        ["Read the message in front of the ERR line; for dtypes, try `--dtype bfloat16` or `--dtype float16` as vllm-ascend documents for the model.", VERSIONS],
        "outputs must be a Tensor or an iterable of Tensors",
    ),
    "VALUE": (
        "torch_npu got an invalid value",
        "An argument had an acceptable type but a value torch_npu or an NPU operator does not accept (a shape, a device type, a configuration value).",
        ["Read the message in front of the ERR line and fix the value it names.", VERSIONS],
        "Device type of master_tensor is not supported.",
    ),
    "PTR": (
        "torch_npu met an invalid pointer",
        "torch_npu found a null or invalid pointer (a tensor without storage, a released stream or handle); usually a bug or a version mismatch between torch, torch_npu and vllm-ascend.",
        [VERSIONS, PLOG],
        "The data pointer of the tensor is null.",
    ),
    "INTERNAL": (
        "torch_npu hit an internal error",
        "torch_npu's own state was inconsistent for the operation (an internal check failed). The message in front of the ERR line says which.",
        ["Upgrade torch_npu / vllm-ascend to the versions made for your CANN; report the message if it persists.", PLOG],
        "No inf checks were recorded prior to update.",
    ),
    "MEMORY": (
        "torch_npu could not get memory",
        "A memory operation on the NPU (or for it on the host) failed: the device is out of memory or an allocation could not be made.",
        ["Lower `--gpu-memory-utilization`, `--max-model-len` or `--max-num-seqs`, or use more NPUs (`--tensor-parallel-size`).", "Against fragmentation set `PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`.", PLOG],
        "Failed to apply for memory.",
    ),
    "NOT_SUPPORT": (
        "The feature is not supported on the NPU",
        "The operation or option is not implemented by torch_npu / CANN for this device or version: a PyTorch feature without an NPU implementation, or an option vllm-ascend does not support.",
        ["Turn off the feature named in the message (an option of vLLM that vllm-ascend does not support yet), or upgrade to a torch_npu / CANN that implements it.", VERSIONS],
        "Patch module must have __all__ definition.",
    ),
    "NOT_FOUND": (
        "torch_npu could not find a resource it needs",
        "A file, library or operator that torch_npu needs is missing. The common case: the CANN environment was not set up in the shell that runs vLLM, so the toolkit's libraries and kernels are not found.",
        ["Run `source /usr/local/Ascend/ascend-toolkit/set_env.sh` (the set_env.sh of your CANN installation) in the environment that starts vLLM, or set it in the container image.", VERSIONS],
        "Please run 'source set_env.sh' in the CANN installation path.",
    ),
    "UNAVAIL": (
        "An NPU resource is unavailable",
        "torch_npu could not get a resource it needs: the NPU is busy or held by another process, or a device/runtime facility is not available in this environment.",
        ["Check with `npu-smi info` that the NPUs are free and visible (`ASCEND_RT_VISIBLE_DEVICES`); stop other processes holding them.", PLOG],
        "proflier initialization failed",
    ),
    "SYSCALL": (
        "A system call made by torch_npu failed",
        "A system call (file, directory, process or device access) failed inside torch_npu: a path that does not exist or is not writable, a limit of the container.",
        ["Read the message in front of the ERR line for the path or call; fix permissions or the path.", PLOG],
        "Value of dump_path is invalid.",
    ),
    "TIMEOUT": (
        "An NPU operation timed out",
        "An operation on the NPU (a kernel, a stream synchronisation, a collective) did not finish in time. Often one rank stopped or is much slower, or the device hung.",
        ["Look for an earlier error on another rank; check `npu-smi info` for device health.", PLOG],
        "Synchronizing the stream timed out.",
    ),
    "PERMISSION": (
        "torch_npu was denied permission",
        "The process was not allowed to use a device or file torch_npu needs (the /dev/davinci* and /dev/devmm_svm device nodes in a container, or a log/dump directory).",
        ["In a container pass the NPU devices (`--device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc`) and mount the driver as vllm-ascend's docs show; check file permissions.", PLOG],
        "Permission denied while opening the device.",
    ),
    "ACL": (
        "A call into the Ascend runtime (ACL) failed",
        "torch_npu called the CANN runtime (ACL) and it returned an error. The message in front of the ERR line names the call and its error code; the CANN lines around it (EZ9999, EE9999, EL0004 ... with 'Inner Error' text) say what the runtime saw.",
        [PLOG, VERSIONS],
        "FORCE STOP.",
    ),
    "HCCL": (
        "A collective-communication (HCCL) call failed",
        "torch_npu's distributed backend called HCCL (Ascend's collective library) and it failed: one rank died or is unreachable, the ranks disagree on the setup, or the network between NPUs/hosts does not work.",
        ["Look for an earlier error on another rank; check `HCCL_IF_IP` / `HCCL_SOCKET_IFNAME` for multi-node runs and the NPU link status (`hccn_tool`).", PLOG],
        "HCCL communicator is not initialised.",
    ),
    "GE": (
        "A call into the Ascend graph engine (GE) failed",
        "Graph mode (torchair / ACL graph through CANN's graph engine) failed to compile or run a graph.",
        ["Try without graph mode (`--enforce-eager`, or vllm-ascend's graph options off) to confirm, and upgrade CANN / torch_npu / vllm-ascend together.", PLOG],
        "Graph compilation failed.",
    ),
}

_ENTRY = re.compile(r"^\s+(\w+) = \((\d+), \"([^\"]*)\"\)", re.M)


def read_enum(root: Path) -> tuple[dict[str, int], list[tuple[str, int, str]]]:
    text = (root / SOURCE).read_text()
    tree = ast.parse(text)
    submodules: dict[str, int] = {}
    codes: list[tuple[str, int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "_SubModuleID":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                    submodules[stmt.targets[0].id] = stmt.value.value  # type: ignore[attr-defined]
        if isinstance(node, ast.ClassDef) and node.name == "ErrCode":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Tuple):
                    code, msg = (e.value for e in stmt.value.elts)  # type: ignore[attr-defined]
                    codes.append((stmt.targets[0].id, code, msg))  # type: ignore[attr-defined]
    return submodules, codes


def build(roots: list[Path]) -> str:
    tables = [read_enum(r) for r in roots if (r / SOURCE).exists()]
    if not tables:
        raise SystemExit(f"no torch_npu source found in {roots}")
    submodules, codes = tables[0]
    for other in tables[1:]:
        if other != tables[0]:
            raise SystemExit("the torch_npu wheels disagree on the error codes: regenerate per version")
    names = "|".join(submodules)
    read = ", ".join(str(r) for r in roots if (r / SOURCE).exists())
    blocks = []
    for name, code, msg in codes:
        if name == "SUCCESS":
            continue
        slug = name.lower().replace("_", "-")
        suffix_re = rf"\bERR(?P<submodule_id>\d\d){code:03d} (?P<submodule>{names}) {re.escape(msg)}"
        stamp = "[ERROR] 2025-09-12-05:36:52 (PID:2741, Device:0, RankID:-1)"
        if name == "EXCEPT":
            unknown = f"ERR{submodules['UNKNOWN']:02d}{code:03d} UNKNOWN {msg}"
            blocks.append(
                pattern_toml(
                    {
                        "comment": "torch_npu's exit hook: the process died of an exception torch_npu did not raise (the traceback above).",
                        "id": "loading.torch-npu-err-except",
                        "title": "The process died of an error printed above (torch_npu's ERR99999 exit line)",
                        "severity": "error",
                        "role": "wrapper",
                        "where": "any",
                        "match": rf"\bERR{submodules['UNKNOWN']:02d}{code:03d} UNKNOWN {re.escape(msg)}",
                        "explanation": (
                            "torch_npu (the Ascend adapter under vllm-ascend) prints this line when the process exits because of an "
                            "exception that torch_npu itself did not raise: from PyTorch, vLLM, vllm-ascend or the application. It "
                            f"carries no information of its own ('{msg}' is torch_npu's spelling); the traceback printed just above "
                            "it is the error."
                        ),
                        "summary": "Look at the traceback just above the ERR99999 line: its last exception is the error to fix.",
                        "steps": [
                            "Scroll up to the Python traceback printed before this line and fix its exception.",
                            "If there is none, the error went to another rank's log or to the CANN logs: " + PLOG[0].lower() + PLOG[1:],
                        ],
                        "file": "torch_npu",
                        "function": "torch_npu/utils/_error_code.py _NPUExceptionHandler.handle_exception",
                        "versions": "*",
                        "checked": f"generated by bench/families/torch_npu_errcodes.py from {read} ({SOURCE}: ErrCode.{name} = ({code}, \"{msg}\"), _SubModuleID.UNKNOWN = {submodules['UNKNOWN']})",
                        "match_examples": [f"{stamp} {unknown}", f"[ERROR] 2024-11-02-10:00:01 (PID:88, Device:3, RankID:3) {unknown}"],
                        "no_match_examples": [f"{stamp} ERR00100 PTA call acl api failed", "ERR99999 is an unknown code"],
                    }
                )
            )
            continue
        if name not in MEANING:
            raise SystemExit(f"torch_npu ErrCode.{name} has no MEANING entry")
        title, explanation, steps, example = MEANING[name]
        blocks.append(
            pattern_toml(
                {
                    "id": f"loading.torch-npu-err-{slug}",
                    "title": f"{title} (torch_npu ERR..{code:03d}, {{submodule}})",
                    "severity": "error",
                    "role": "cause",
                    "priority": -10,
                    "where": "any",
                    "match": suffix_re,
                    "explanation": (
                        f"{explanation} torch_npu tags such errors with ERR<submodule><{code:03d}> ('{msg}'); the submodule "
                        "({submodule}) says which part raised it: PTA torch_npu's core, OPS an operator, DIST distributed/HCCL, "
                        "GRAPH graph mode, PROF the profiler."
                    ),
                    "summary": f"{title}: read the message in front of the ERR line, then act on it ({msg}).",
                    "steps": steps,
                    "file": "torch_npu",
                    "function": "torch_npu/utils/_error_code.py _format_error_msg (pta_error/ops_error/dist_error/graph_error/prof_error) and the C++ *_ERROR macros",
                    "versions": "*",
                    "checked": f"generated by bench/families/torch_npu_errcodes.py from {read} ({SOURCE}: ErrCode.{name} = ({code}, \"{msg}\"))",
                    "match_examples": [
                        f"RuntimeError: {example}\n{stamp} ERR{submodules['PTA']:02d}{code:03d} PTA {msg}",
                        f"{stamp} ERR{submodules['OPS']:02d}{code:03d} OPS {msg}",
                    ],
                    "no_match_examples": [
                        f"{stamp} ERR{submodules['PTA']:02d}{code:03d} PTA {msg} extra".replace(msg, "x" + msg),
                        f"RuntimeError: {example}",
                    ],
                }
            )
        )
    return "\n".join(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-npu", action="append", type=Path, help="an unzipped torch_npu package directory")
    args = parser.parse_args()
    splice(PATTERNS / "loading.toml", "torch_npu_errcodes", build(args.torch_npu or DEFAULT))


if __name__ == "__main__":
    main()
