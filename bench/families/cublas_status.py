"""Generate the cuBLAS status patterns of patterns/kernels.toml: one pattern per
`cublasStatus_t` code (every CUBLAS_STATUS_* of cublas_api.h but SUCCESS), plus a catch-all for codes
torch prints as `<unknown>` or that a newer cuBLAS adds.

    python bench/families/cublas_status.py [path/to/cublas_api.h]

The header comes from the `nvidia-cublas-cu12` wheel (`pip download --no-deps nvidia-cublas-cu12`, file
nvidia/cublas/include/cublas_api.h; the CUDA toolkit's include/ has the same file when cuBLAS is
installed). torch prints a failed status as
    CUDA error: <_cublasGetErrorEnum(status)> when calling `<the C expression>`        (TORCH_CUDABLAS_CHECK)
    CUDA error: <status> when calling cublasLtMatmul with transpose_mat1 ...            (CUDABlas.cpp, cuBLASLt)
where _cublasGetErrorEnum maps every code to its enum name and anything else to `<unknown>`.
The script fails when the header has a code without advice below, so a new cuBLAS code cannot be missed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

HEADER = Path("/work/pkg-src/g/cublas-x/nvidia/cublas/include/cublas_api.h")
HEADER_LABEL = "nvidia-cublas-cu12 12.9.3.13 nvidia/cublas/include/cublas_api.h"

GEMM = "cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)"
GEMM_BF16 = "cublasGemmStridedBatchedEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, &fbeta, c, CUDA_R_16BF, ldc, stridec, num_batches, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)"
LT = "cublasLtMatmul with transpose_mat1 1 transpose_mat2 0 m 4096 n 256 k 4096 mat1_ld 4096 mat2_ld 4096 result_ld 4096 abcType 14 computeType 68 scaleType 0"
HEURISTIC = "cublasLtMatmulAlgoGetHeuristic( ltworkspace.handle, computeDesc.descriptor(), Adesc.descriptor(), Bdesc.descriptor(), Cdesc.descriptor(), Cdesc.descriptor(), preference.descriptor(), 1, &heuristicResult, &returnedResult)"

SOURCE_FUNCTION = (
    "aten/src/ATen/cuda/Exceptions.h TORCH_CUDABLAS_CHECK (\"CUDA error: \", _cublasGetErrorEnum(status), "
    "\" when calling `EXPR`\"); aten/src/ATen/cuda/CUDABlas.cpp (\" when calling cublasLtMatmul with transpose_mat1 ...\")"
)
CHECKED = (
    f"status codes from {HEADER_LABEL} (cublasStatus_t); message from torch 2.13.0 include/ATen/cuda/Exceptions.h "
    "(TORCH_CUDABLAS_CHECK); the cublasLtMatmul form from PyTorch CUDABlas.cpp in the code index"
)

LAUNCH_BLOCKING = "Reproduce with `CUDA_LAUNCH_BLOCKING=1` so the traceback points at the operation that really failed."
CHECK_BUILD = (
    "Check the CUDA build of torch against the GPU and the cuBLAS it loads: `python -c 'import torch; "
    "print(torch.__version__, torch.version.cuda, torch.cuda.get_device_capability())'` and `pip list | grep nvidia-cublas`; "
    "the nvidia-cublas-cu* version must be the one torch's wheel requires (`pip check`), and no other libcublas may shadow it on LD_LIBRARY_PATH."
)
EAGER = "Try `--enforce-eager` (no torch.compile, no CUDA graphs) to rule out a compiled or captured graph."
HEADROOM = (
    "Leave GPU memory outside vLLM's budget: restart with a lower `--gpu-memory-utilization` (e.g. 0.85) and stop other "
    "processes on the GPU (`nvidia-smi`)."
)

# Advice per status code. `slug` is the pattern id's suffix (ids are stable: never rename one).
ADVICE: dict[str, dict[str, object]] = {
    "CUBLAS_STATUS_NOT_INITIALIZED": {
        "slug": "not-initialized",
        "title": "cuBLAS could not initialise ({call}): usually no GPU memory left for its handle",
        "explanation": (
            "cuBLAS creates a handle (and its workspace) the first time a process multiplies matrices on a GPU, "
            "outside PyTorch's caching allocator. The handle could not be created: almost always because the GPU had no "
            "memory left at that moment (vLLM's --gpu-memory-utilization budget plus other processes filled it), "
            "sometimes because the CUDA context is unusable (a driver older than the CUDA runtime torch was built for, "
            "or an earlier fault in the same process)."
        ),
        "summary": "cuBLAS could not create its handle in {call}: leave GPU memory headroom (lower --gpu-memory-utilization, free the GPU) and check the driver against torch's CUDA version.",
        "steps": [HEADROOM, "Make sure the NVIDIA driver supports torch's CUDA version: `nvidia-smi` shows the highest CUDA version the driver supports.", CHECK_BUILD],
        "example_call": "cublasCreate(handle)",
    },
    "CUBLAS_STATUS_ALLOC_FAILED": {
        "slug": "alloc-failed",
        "title": "cuBLAS could not allocate GPU memory ({call})",
        "explanation": (
            "cuBLAS needs a little GPU memory of its own (a handle and a workspace per stream), allocated outside "
            "PyTorch's caching allocator. There was none left: vLLM's budget (--gpu-memory-utilization) plus CUDA graphs, "
            "NCCL buffers and other processes filled the GPU. It is an out-of-memory error under another name."
        ),
        "summary": "The GPU is full, so cuBLAS could not allocate its workspace ({call}): lower --gpu-memory-utilization to leave headroom, or free the GPU.",
        "steps": [
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) so memory outside vLLM's budget (cuBLAS workspaces, CUDA graphs, NCCL) fits.",
            "Run `nvidia-smi` and stop other processes that hold memory on the same GPU.",
            "Or shrink the engine: smaller `--max-num-seqs` / `--max-model-len`, `--enforce-eager` (no CUDA-graph memory), or more GPUs with `--tensor-parallel-size`.",
        ],
        "docs": "https://docs.vllm.ai/en/latest/configuration/conserving_memory/",
        "example_call": HEURISTIC,
    },
    "CUBLAS_STATUS_INVALID_VALUE": {
        "slug": "invalid-value",
        "title": "cuBLAS rejected the arguments of {call} (invalid value)",
        "explanation": (
            "cuBLAS refused the parameters of a matrix multiplication: a shape, leading dimension, data type or compute "
            "type combination it does not accept. With vLLM this is rarely a bug in the model: the usual causes are a "
            "cuBLAS library that does not match the torch build (an nvidia-cublas-cu* package upgraded or downgraded on "
            "its own, or another libcublas earlier on LD_LIBRARY_PATH: older cuBLAS releases reject some GEMMs on "
            "Hopper), a data type the GPU cannot use (bfloat16 before Ampere, FP8 before Ada/Hopper), or a batch so large "
            "that a dimension overflows 32 bits."
        ),
        "summary": "cuBLAS rejected {call}: make the cuBLAS library match torch (pip check, nvidia-cublas-cu* version), use a dtype the GPU supports, or lower --max-num-batched-tokens.",
        "steps": [
            CHECK_BUILD,
            "Reinstall the matching set: `pip install --force-reinstall vllm==<your version>` restores the torch and nvidia-cublas versions it pins.",
            "On GPUs older than Ampere restart with `--dtype half`; do not use FP8 (`--quantization fp8`, `--kv-cache-dtype fp8`) before Ada/Hopper.",
            "If it only happens under load, lower `--max-num-batched-tokens` (e.g. 8192) so no GEMM dimension gets huge.",
        ],
        "example_call": GEMM,
    },
    "CUBLAS_STATUS_ARCH_MISMATCH": {
        "slug": "arch-mismatch",
        "title": "cuBLAS needs a newer GPU architecture for {call} (arch mismatch)",
        "explanation": (
            "The requested matrix multiplication uses a feature that this GPU's architecture does not have, for example "
            "bfloat16 or TF32 tensor-core math before Ampere (compute capability 8.0), FP8 before Ada/Hopper (8.9/9.0), or a "
            "cuBLAS build that no longer supports this old GPU."
        ),
        "summary": "This GPU cannot run {call} with the requested types: use a dtype it supports (--dtype half before Ampere), no FP8 before Ada/Hopper, or a newer GPU.",
        "steps": [
            "Look up the GPU's compute capability: `python -c 'import torch; print(torch.cuda.get_device_capability())'`.",
            "Below 8.0 restart with `--dtype half`; below 8.9 remove FP8 options (`--quantization fp8`, `--kv-cache-dtype fp8`) or use a non-FP8 checkpoint.",
            CHECK_BUILD,
        ],
        "example_call": GEMM_BF16,
    },
    "CUBLAS_STATUS_MAPPING_ERROR": {
        "slug": "mapping-error",
        "title": "cuBLAS could not access GPU memory in {call} (mapping error)",
        "explanation": (
            "cuBLAS failed to access or bind GPU memory it was given. This status is rare on its own: it usually means the "
            "CUDA context was already damaged by an earlier fault (an illegal memory access in another kernel, reported "
            "late because CUDA errors are asynchronous), or the GPU is in a bad state."
        ),
        "summary": "cuBLAS could not map GPU memory in {call}, usually after an earlier kernel fault: rerun with CUDA_LAUNCH_BLOCKING=1 and check the GPU with nvidia-smi / dmesg.",
        "steps": [LAUNCH_BLOCKING, "Check the GPU: `nvidia-smi -q -d ECC` and `sudo dmesg | grep -i xid`; reset or replace a GPU that reports Xid errors.", EAGER],
        "example_call": GEMM,
    },
    "CUBLAS_STATUS_EXECUTION_FAILED": {
        "slug": "execution-failed",
        "title": "A cuBLAS GEMM failed to execute ({call})",
        "explanation": (
            "A cuBLAS matrix multiplication kernel failed on the GPU. cuBLAS itself rarely fails: the usual cause is that "
            "an earlier kernel already corrupted memory or faulted, and cuBLAS is simply the next call that notices (an "
            "'illegal memory access' error often follows in the same traceback). It shows up with buggy fused kernels or "
            "torch.compile fusion passes, CUDA graph capture, custom all-reduce, or a bad GPU/driver state."
        ),
        "summary": "cuBLAS {call} failed, usually because an earlier kernel faulted: rerun with CUDA_LAUNCH_BLOCKING=1 to find it, and rule out compilation and CUDA graphs with --enforce-eager.",
        "steps": [
            "Reproduce with `CUDA_LAUNCH_BLOCKING=1` so the traceback points at the kernel that really failed.",
            "Restart with `--enforce-eager` (no torch.compile, no CUDA graphs); if that works, the fault is in a compiled/captured graph.",
            # --compilation-config arrived in 0.6; the pass_config keys were renamed in 0.12 (config/compilation.py).
            "[>=0.12] If you enabled torch.compile fusion passes through `--compilation-config` (e.g. pass_config fuse_allreduce_rms, or a higher -O level), turn them off again, e.g. `--compilation-config '{\"pass_config\": {\"fuse_allreduce_rms\": false}}'`.",
            "[>=0.6,<0.12] If you enabled torch.compile fusion passes through `--compilation-config` (pass_config enable_fusion, or enable_fi_allreduce_fusion from 0.10), turn them off again, e.g. `--compilation-config '{\"pass_config\": {\"enable_fusion\": false}}'`.",
            "With tensor parallelism also try `--disable-custom-all-reduce`; upgrade vLLM/PyTorch and report the model, quantization and GPU if it persists.",
        ],
        "docs": "https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
        "checked_extra": "corpus 011 (0.23.1rc1, cublasGemmEx during CUDA-graph memory profiling, illegal memory access chained after it)",
        "example_call": GEMM,
    },
    "CUBLAS_STATUS_INTERNAL_ERROR": {
        "slug": "internal-error",
        "title": "cuBLAS hit an internal error in {call}",
        "explanation": (
            "An operation inside cuBLAS failed, typically a CUDA call it made itself (a memory copy, a kernel launch, a "
            "workspace allocation). In practice it follows an earlier asynchronous kernel fault, an exhausted GPU, or a "
            "cuBLAS/cuBLASLt library that is not the one the torch wheel was built with."
        ),
        "summary": "cuBLAS failed internally in {call}: rerun with CUDA_LAUNCH_BLOCKING=1, leave GPU memory headroom, and make sure the cuBLAS library matches torch.",
        "steps": [LAUNCH_BLOCKING, HEADROOM, CHECK_BUILD, EAGER],
        "example_call": LT,
    },
    "CUBLAS_STATUS_NOT_SUPPORTED": {
        "slug": "not-supported",
        "title": "cuBLAS does not support this GEMM on this GPU ({call})",
        "explanation": (
            "cuBLAS has no kernel for the requested matrix multiplication on this GPU: usually the data type (bfloat16 or "
            "FP8 on a GPU that lacks it, e.g. bfloat16 on Turing/Volta or FP8 before Ada/Hopper), or a cuBLAS/CUDA library "
            "that is older than the GPU or mismatched with the PyTorch build."
        ),
        "summary": "cuBLAS cannot run {call} for this dtype/GPU: use a dtype the GPU supports (e.g. --dtype half on pre-Ampere GPUs) or a matching CUDA/PyTorch build.",
        "steps": [
            "On GPUs older than Ampere (compute capability < 8.0), restart with `--dtype half`; avoid FP8 checkpoints / `--quantization fp8` before Ada (8.9).",
            "Check the PyTorch CUDA build and its cuBLAS: `python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_capability())'`; reinstall the vLLM/PyTorch wheels made for your CUDA version if they differ.",
            "Make sure no stray `nvidia-cublas-cu*` package or LD_LIBRARY_PATH entry shadows the cuBLAS that PyTorch ships.",
        ],
        "example_call": GEMM_BF16,
    },
    "CUBLAS_STATUS_LICENSE_ERROR": {
        "slug": "license-error",
        "title": "cuBLAS refused {call}: license check failed",
        "explanation": (
            "cuBLAS reported that a feature it was asked to use is not licensed. The regular cuBLAS shipped with CUDA and "
            "with the nvidia-cublas-cu* wheels has no licensed features used by PyTorch, so this points at a modified or "
            "non-standard cuBLAS library being loaded instead of the one torch ships."
        ),
        "summary": "A non-standard cuBLAS was loaded for {call}: remove other libcublas copies from LD_LIBRARY_PATH and reinstall the nvidia-cublas package torch requires.",
        "steps": [
            "Find which libcublas the process loads: `ldd $(python -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), \"lib\", \"libtorch_cuda.so\"))') | grep cublas` and check LD_LIBRARY_PATH.",
            CHECK_BUILD,
        ],
        "example_call": GEMM,
    },
}

# A code PyTorch's table does not know is printed as `<unknown>`.
UNKNOWN = "<unknown>"


def parse(header: Path) -> list[tuple[str, int]]:
    text = header.read_text()
    body = re.search(r"typedef enum\s*\{([^}]*)\}\s*cublasStatus_t;", text)
    if body is None:
        raise SystemExit(f"{header}: no `typedef enum {{...}} cublasStatus_t;`")
    codes = re.findall(r"(CUBLAS_STATUS_\w+)\s*=\s*(\d+)", body[1])
    return [(name, int(value)) for name, value in codes if name != "CUBLAS_STATUS_SUCCESS"]


def example(status: str, call: str) -> str:
    tail = f"`{call}`" if "(" in call else call
    return f"RuntimeError: CUDA error: {status} when calling {tail}"


def logged(status: str, call: str, prefix: str) -> str:
    return f"{prefix} {example(status, call)}"


def build(codes: list[tuple[str, int]]) -> str:
    missing = [name for name, _ in codes if name not in ADVICE]
    if missing:
        raise SystemExit(f"no advice for {missing}: add them to ADVICE")
    names = [name for name, _ in codes]
    blocks: list[str] = []
    prefixes = [
        "(Worker_TP0 pid=7110) ERROR 05-20 09:12:44 [multiproc_executor.py:703]",
        "(EngineCore_DP0 pid=3020) ERROR 05-20 09:12:44 [core.py:708]",
    ]
    for i, (name, value) in enumerate(codes):
        advice = ADVICE[name]
        other = names[(i + 1) % len(names)]
        lt_call = LT if advice["example_call"] != LT else GEMM
        blocks.append(
            pattern_toml(
                {
                    "comment": f"{name} = {value}" + (" (one pattern per code, from cublasStatus_t)" if i == 0 else ""),
                    "id": f"kernels.cublas-{advice['slug']}",
                    "title": advice["title"],
                    "severity": "error",
                    "match": rf"CUDA error: {name} when calling `?(?P<call>\w+)",
                    "explanation": advice["explanation"],
                    "docs": advice.get("docs"),
                    "summary": advice["summary"],
                    "steps": advice["steps"],
                    "file": "torch",
                    "function": SOURCE_FUNCTION,
                    "versions": "*",
                    "checked": CHECKED + ("; " + advice["checked_extra"] if advice.get("checked_extra") else ""),
                    "match_examples": [
                        example(name, str(advice["example_call"])),
                        logged(name, lt_call, prefixes[i % 2]),
                    ],
                    "no_match_examples": [
                        example(other, GEMM),
                        f"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py:125: UserWarning: bgemm_internal_cublaslt error: {name} when calling cublasLtMatmul with transpose_mat1 1 transpose_mat2 0 m 4096 n 8 k 4096 lda 4096 ldb 4096 ldc 4096 abType 14 cType 14 computeType 68 scaleType 0. Will attempt to recover by calling cublas instead.",
                    ],
                }
            )
        )
    blocks.append(
        pattern_toml(
            {
                "comment": (
                    "Catch-all: a status PyTorch prints as `<unknown>` (a cuBLAS newer than the torch build) or a code\n"
                    "this table does not have yet. Priority -9: below every specific pattern, but above cuda.toml's generic\n"
                    "`CUDA error: {msg}` catch-all (-10), which would otherwise claim a cuBLAS status by file order."
                ),
                "id": "kernels.cublas-error",
                "title": "cuBLAS error {status} ({call})",
                "severity": "error",
                "priority": -9,
                "match": r"CUDA error: (?P<status>CUBLAS_STATUS_\w+|<unknown>) when calling `?(?P<call>\w+)",
                "explanation": (
                    "A cuBLAS call made by PyTorch returned a status that has no specific advice here. `<unknown>` means "
                    "torch's own table of cuBLAS codes does not know the value, which happens when the loaded cuBLAS is "
                    "newer (or otherwise different) than the one the torch wheel was built with."
                ),
                "summary": "cuBLAS returned {status} in {call}: make the cuBLAS library match torch, leave GPU memory headroom, and rerun with CUDA_LAUNCH_BLOCKING=1 to see the failing operation.",
                "steps": [LAUNCH_BLOCKING, CHECK_BUILD, HEADROOM, EAGER],
                "file": "torch",
                "function": SOURCE_FUNCTION,
                "versions": "*",
                "checked": CHECKED + "; `<unknown>` is _cublasGetErrorEnum's default (PyTorch CUDABlas.cpp)",
                "match_examples": [
                    example(UNKNOWN, GEMM),
                    example("CUBLAS_STATUS_SOMETHING_NEW", LT),
                ],
                "no_match_examples": [
                    "RuntimeError: cusolver error: CUSOLVER_STATUS_INVALID_VALUE, when calling `cusolverDnSgetrf_bufferSize(handle, m, n, A, lda, lwork)`.",
                    "RuntimeError: CUDA error: an illegal memory access was encountered",
                ],
            }
        )
    )
    return "\n".join(blocks)


def main() -> None:
    header = Path(sys.argv[1]) if len(sys.argv) > 1 else HEADER
    codes = parse(header)
    splice(PATTERNS / "kernels.toml", "cublas_status", build(codes))
    print(f"kernels.toml: {len(codes)} cuBLAS status patterns + catch-all from {header}")


if __name__ == "__main__":
    main()
