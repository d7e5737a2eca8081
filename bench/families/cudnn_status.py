"""Generate the cuDNN status patterns of patterns/kernels.toml from `cudnnStatus_t`.

    python bench/families/cudnn_status.py [path/to/cudnn_graph.h]

The header comes from the `nvidia-cudnn-cu12` wheel (`pip download --no-deps nvidia-cudnn-cu12`, file
nvidia/cudnn/include/cudnn_graph.h; cuDNN 8 had the enum in cudnn_ops_infer.h with the legacy names that
cuDNN 9 keeps as deprecated aliases). torch prints a failed status as `cuDNN error: <cudnnGetErrorString>`
(AT_CUDNN_CHECK in aten/src/ATen/cuda/Exceptions.h; older torch: `CuDNN error: ...`), and the string is
the enum name. cuDNN 9 groups its codes by thousands (1xxx library, 2xxx bad parameter, 3xxx not
supported, 4xxx internal, 5xxx execution); the advice differs by group, so there is one pattern per
group that lists every code of that group (legacy aliases resolved to their group), plus the
hand-written catch-all `kernels.cudnn-error` in kernels.toml. The script fails on a code it cannot place.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

HEADER = Path("/work/pkg-src/g/cudnn-x/nvidia/cudnn/include/cudnn_graph.h")
HEADER_LABEL = "nvidia-cudnn-cu12 9.28.0.42 nvidia/cudnn/include/cudnn_graph.h"

# Codes placed in another group than their thousand says (an installation problem, not a kernel gap).
INSTALL_CODES = {
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER",
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART",
    "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING",
    "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING",
    "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE",
}
EXECUTION_CODES = {"CUDNN_STATUS_RUNTIME_IN_PROGRESS", "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"}

CHECK = (
    "Check the cuDNN torch loads: `python -c 'import torch; print(torch.__version__, torch.version.cuda, "
    "torch.backends.cudnn.version())'` and `pip list | grep nvidia-cudnn`; the nvidia-cudnn-cu* version must be the one "
    "torch's wheel requires (`pip check`), and no other libcudnn may come first on LD_LIBRARY_PATH."
)
LAUNCH_BLOCKING = "Reproduce with `CUDA_LAUNCH_BLOCKING=1` so the traceback points at the layer that really failed."
# Two steps: --mm-processor-kwargs arrived in vLLM 0.6 (--limit-mm-per-prompt in 0.5); bench.surface.authority
# checks each step's flags against its range.
ENCODER = (
    "[>=0.6] In vLLM cuDNN runs mostly the convolutions of multimodal encoders (patch embeddings of vision and audio towers): "
    "to get past a failing request, smaller or fewer images/videos help (`--limit-mm-per-prompt`, `--mm-processor-kwargs`).",
    "[<0.6] In vLLM cuDNN runs mostly the convolutions of multimodal encoders (patch embeddings of vision towers): "
    "to get past a failing request, send smaller or fewer images per request.",
)

GROUPS: dict[str, dict[str, object]] = {
    "not-initialized": {
        "title": "cuDNN could not initialise ({status})",
        "explanation": (
            "cuDNN could not create its handle. Like cuBLAS, cuDNN allocates its own GPU memory outside PyTorch's "
            "allocator when a process first uses it, so the usual cause is a GPU already filled by vLLM's budget or by "
            "other processes; otherwise the CUDA context is broken (driver older than torch's CUDA runtime, an earlier fault)."
        ),
        "summary": "cuDNN could not start ({status}): leave GPU memory headroom (lower --gpu-memory-utilization, free the GPU) and check the driver against torch's CUDA version.",
        "steps": [
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) and stop other processes on the GPU (`nvidia-smi`).",
            "Make sure the driver supports torch's CUDA version (`nvidia-smi` shows the highest it supports).",
            CHECK,
        ],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
    },
    "library-mismatch": {
        "title": "The cuDNN installation does not fit torch, CUDA or the driver ({status})",
        "explanation": (
            "cuDNN found that its own pieces, the CUDA runtime or the driver do not fit together: cuDNN 9 is split into "
            "sub-libraries (libcudnn_graph, libcudnn_ops, libcudnn_cnn, libcudnn_engines_*) that must all come from the same "
            "release, and it needs a CUDA runtime and driver at least as new as the ones it was built for. This happens "
            "when two cuDNN copies are mixed (a system or conda libcudnn earlier on LD_LIBRARY_PATH than the nvidia-cudnn "
            "wheel torch uses), when nvidia-cudnn-cu* was up- or downgraded on its own, or when the driver is too old."
        ),
        "summary": "cuDNN reported {status}: use exactly the nvidia-cudnn-cu* torch requires, drop other libcudnn copies from LD_LIBRARY_PATH, and update the driver if it is older than torch's CUDA.",
        "steps": [
            CHECK,
            "Reinstall the pinned set: `pip install --force-reinstall vllm==<your version>` (torch brings the nvidia-cudnn package it was built with).",
            "Remove other cuDNN copies from the library path (`echo $LD_LIBRARY_PATH`, `ldconfig -p | grep libcudnn`).",
            "If the code names the driver or CUDA runtime (INCOMPATIBLE_CUDA_DRIVER / INCOMPATIBLE_CUDART), update the NVIDIA driver or use a torch built for an older CUDA.",
        ],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
    },
    "bad-param": {
        "title": "cuDNN rejected the parameters of a call ({status})",
        "explanation": (
            "cuDNN refused the descriptors or pointers it was given (a tensor shape, stride, alignment or data type it "
            "cannot describe). That is a bug in the caller for this input rather than a problem of the machine: a "
            "torch/cuDNN combination with a known issue for this layer, or an unusual input (a very large or oddly shaped "
            "image or audio clip in a multimodal encoder)."
        ),
        "summary": "cuDNN rejected its inputs ({status}): upgrade torch/vLLM (or pin the nvidia-cudnn version torch requires), and report the model and input shape if it persists.",
        "steps": [LAUNCH_BLOCKING, CHECK, *ENCODER, "Upgrade vLLM (which pins a newer torch and cuDNN) and report the model and the input that triggers it."],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM",
    },
    "not-supported": {
        "title": "cuDNN has no kernel for this input on this GPU ({status})",
        "explanation": (
            "cuDNN has no implementation for the requested operation with this combination of shape, layout, data type "
            "and GPU: for example bfloat16 or FP8 on a GPU that lacks it, a non-contiguous input, a convolution shape a "
            "given cuDNN release does not handle (several torch/cuDNN pairs fail on the 3-D patch-embedding convolution "
            "of video-capable vision encoders), or a kernel that needs more shared memory than the GPU has."
        ),
        "summary": "cuDNN cannot run this layer ({status}): use a dtype the GPU supports (--dtype half before Ampere), or a torch/cuDNN (vLLM) version without this gap.",
        "steps": [
            "On GPUs older than Ampere (compute capability < 8.0) restart with `--dtype half`.",
            CHECK,
            "Upgrade vLLM (it pins a torch and cuDNN that handle more shapes), or install the nvidia-cudnn-cu* version your torch wheel requires if another one is installed.",
            *ENCODER,
        ],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
    },
    "internal-error": {
        "title": "cuDNN failed internally ({status})",
        "explanation": (
            "An operation inside cuDNN failed: compiling a runtime kernel, allocating host or GPU memory for its "
            "workspace, or a launch with bad internal parameters. Most often the GPU had no memory left for the workspace "
            "(cuDNN allocates outside vLLM's budget) or an earlier kernel had already faulted; sometimes it is a cuDNN bug "
            "for this input."
        ),
        "summary": "cuDNN failed internally ({status}): leave GPU memory headroom (lower --gpu-memory-utilization), rerun with CUDA_LAUNCH_BLOCKING=1, and check the cuDNN version.",
        "steps": [
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) so cuDNN's workspace fits beside vLLM's budget.",
            LAUNCH_BLOCKING,
            CHECK,
            *ENCODER,
        ],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
    },
    "execution-failed": {
        "title": "A cuDNN kernel failed on the GPU ({status})",
        "explanation": (
            "A cuDNN kernel (or a CUDA, cuBLAS or cuRAND call it made) failed while running. As with other CUDA errors "
            "this is often the delayed report of an earlier fault in another kernel, a GPU in a bad state, or memory "
            "exhausted at that moment."
        ),
        "summary": "A cuDNN kernel failed ({status}): rerun with CUDA_LAUNCH_BLOCKING=1 to find the real failing kernel, check the GPU for Xid errors, and leave memory headroom.",
        "steps": [
            LAUNCH_BLOCKING,
            "Check the GPU: `sudo dmesg | grep -i xid` and `nvidia-smi -q -d ECC`.",
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) and try `--enforce-eager`.",
            CHECK,
        ],
        "example": "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
    },
}


def parse(header: Path) -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
    body = re.search(r"typedef enum\s*\{([^}]*)\}\s*cudnnStatus_t;", text)
    if body is None:
        raise SystemExit(f"{header}: no `typedef enum {{...}} cudnnStatus_t;`")
    values: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for name, value in re.findall(r"(CUDNN_STATUS_\w+)(?:\s+CUDNN_DEPRECATED_ENUM)?\s*=\s*(\w+)", body[1]):
        if value.isdigit():
            values[name] = int(value)
        else:
            aliases[name] = value
    for name, target in aliases.items():
        values[name] = values[target]
    values.pop("CUDNN_STATUS_SUCCESS", None)
    return values


def group_of(name: str, value: int) -> str:
    if name in INSTALL_CODES:
        return "library-mismatch"
    if name in EXECUTION_CODES:
        return "execution-failed"
    if name == "CUDNN_STATUS_NOT_INITIALIZED":
        return "not-initialized"
    by_thousand = {1000: "library-mismatch", 2000: "bad-param", 3000: "not-supported", 4000: "internal-error", 5000: "execution-failed"}
    group = by_thousand.get(value // 1000 * 1000)
    if group is None:
        raise SystemExit(f"cannot place {name} = {value}")
    return group


def build(values: dict[str, int]) -> str:
    members: dict[str, list[str]] = {g: [] for g in GROUPS}
    for name, value in sorted(values.items(), key=lambda kv: (kv[1], kv[0])):
        members[group_of(name, value)].append(name)
    blocks = []
    group_names = list(GROUPS)
    for i, (group, advice) in enumerate(GROUPS.items()):
        names = members[group]
        if not names:
            raise SystemExit(f"group {group} has no code")
        suffixes = "|".join(sorted((n.removeprefix("CUDNN_STATUS_") for n in names), key=lambda s: (-len(s), s)))
        other = members[group_names[(i + 1) % len(group_names)]][0]
        second = names[-1] if len(names) > 1 else names[0]
        blocks.append(
            pattern_toml(
                {
                    "comment": f"{group}: " + ", ".join(f"{n.removeprefix('CUDNN_STATUS_')}={values[n]}" for n in names),
                    "id": f"kernels.cudnn-{group}",
                    "title": advice["title"],
                    "severity": "error",
                    "match": rf"(?i:cuDNN) error: (?P<status>CUDNN_STATUS_(?:{suffixes}))(?![A-Z_])",
                    "explanation": advice["explanation"],
                    "summary": advice["summary"],
                    "steps": advice["steps"],
                    "file": "torch",
                    "function": "aten/src/ATen/cuda/Exceptions.h AT_CUDNN_CHECK (\"cuDNN error: \", cudnnGetErrorString(status)); older torch aten/src/ATen/cudnn/Exceptions.h (\"CuDNN error: \")",
                    "versions": "*",
                    "checked": f"codes from {HEADER_LABEL} (cudnnStatus_t, legacy names as deprecated aliases); message from torch 2.13.0 include/ATen/cuda/Exceptions.h AT_CUDNN_CHECK",
                    "match_examples": [
                        advice["example"],
                        f"(EngineCore_DP0 pid=4410) ERROR 06-11 14:03:27 [core.py:708] RuntimeError: cuDNN error: {second}",
                    ],
                    "no_match_examples": [
                        f"RuntimeError: cuDNN error: {other}",
                        "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph.",
                    ],
                }
            )
        )
    return "\n".join(blocks)


def main() -> None:
    header = Path(sys.argv[1]) if len(sys.argv) > 1 else HEADER
    values = parse(header)
    splice(PATTERNS / "kernels.toml", "cudnn_status", build(values))
    print(f"kernels.toml: {len(values)} cuDNN status codes in {len(GROUPS)} group patterns from {header}")


if __name__ == "__main__":
    main()
