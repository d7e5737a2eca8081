# ruff: noqa: E501  (advice prose and quoted messages are as long as they are)
"""Generate patterns/rocm.toml: every HIP runtime error code (`hipError_t`) and every HSA runtime
status (`hsa_status_t`, `HSA_STATUS_ERROR_*`), as a vLLM server on AMD GPUs prints them.

    python bench/families/hip_errors.py [SPEC_DIR]

SPEC_DIR (default /work/pkg-src/hip) holds the downloaded specification, kept outside the project:
    hip_runtime_api.h     the hipError_t enum (HIP 7.1; shipped in the triton wheel, triton/backends/amd/include/hip/)
    hip_error.cpp         ihipGetErrorName / ihipGetErrorString (ROCm/clr hipamd/src/hip_error.cpp, via the search
                          tool's fetch), and any hip_error-*.cpp excerpt of a newer table (read last, wins)
    hsa.h, hsa_ext_amd.h  the hsa_status_t enum (triton wheel, triton/backends/amd/include/hsa/)
    hsa.cpp               hsa_status_string (ROCm/ROCR-Runtime runtime/hsa-runtime/core/runtime/hsa.cpp, via fetch)

The message forms:
    HIP error: <hipGetErrorString>            torch on ROCm (hipified C10_CUDA_CHECK), with "Search for
                                              `hipErrorX' in https://rocm.docs.amd.com/...", "HIP kernel errors
                                              might be asynchronously reported ...", AMD_SERIALIZE_KERNEL=3 lines
    CUDART error: <string>                    vLLM cuda_wrapper.py on ROCm (maps cudaGetErrorString to hipGetErrorString)
    Triton Error [HIP]:  Code: <n>, Messsage: <string>   triton backends/amd/driver.c gpuAssert (typo is triton's)
    Failed: Cuda error <file>:<line> '<string>' / (Cuda|HIP) failure '<string>'   vLLM custom all-reduce, RCCL
    <hipErrorName>                            hipGetErrorName text quoted by callers
    Callback: Queue <p> aborting with error : HSA_STATUS_ERROR_X: <text> code: 0x<n>
                                              ROCclr rocdevice.cpp/rocvirtual.cpp queue callback, then abort()
    Memory access fault by GPU node-<n> (Agent handle: <p>) on address <a>. Reason: <reason>.
                                              ROCR runtime.cpp VM-fault handler, then abort()

kernels.toml owns `HIP error: invalid device function`, the generic `HIP error: <msg>` (priority 0, whose
examples are `an illegal memory access` and `unspecified launch failure`), `hipErrorNoBinaryForGpu: Unable
to find code object ...` and HSA_STATUS_ERROR_EXCEPTION; the patterns here leave those forms out. Per-code
patterns that match the torch form have priority 1 so that they win over that generic one. Strings that
CUDA and HIP share (`invalid argument`) in the non-torch forms go to cuda.toml, which is read first.
The script fails when a code has no advice below.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml  # noqa: E402
from cuda_errors import default_runtimes, esc, read_codes  # noqa: E402

OUT = PATTERNS / "rocm.toml"
# cudaGetErrorString texts: a HIP string equal to one of them, in a form CUDA shares, is cuda.toml's.
CUDA_STRINGS = {s for c in read_codes(default_runtimes(), [])[0].values() for s in c.strings}
SPEC = Path("/work/pkg-src/hip")
DOCS = "https://rocm.docs.amd.com/projects/HIP/en/latest/reference/error_codes.html"

TORCH = "HIP error: "
# Forms only HIP prints.
HIP_PREFIXES = [
    r"Triton Error \[HIP\]: +Code: (?P<code>\d+), Messs?age: ",
    r"Failed: HIP error (?P<location>\S+:\d+) '",
    r"hipGetDeviceCount\(\)[^\n]*? Error (?P<code>\d+): ",
]
# Forms CUDA prints too (vLLM's cuda_wrapper, custom all-reduce, RCCL keep CUDA's wording): used here only
# with HIP strings that no CUDA code has, the others are cuda.toml's.
SHARED_PREFIXES = [
    r"CUDART error: ",
    r"Failed: Cuda error (?P<location>\S+:\d+) '",
    r"NCCL WARN (?:Cuda|HIP) failure (?:(?P<code>\d+) )?'",
    r"cudaGetDeviceCount\(\)[^\n]*? Error (?P<code>\d+): ",
]
ASYNC = (
    "HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing AMD_SERIALIZE_KERNEL=3"
)
DSA = "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions."
TORCH_HELP = "https://rocm.docs.amd.com/projects/HIP/en/latest/index.html"

SERIALIZE = "Reproduce with `AMD_SERIALIZE_KERNEL=3` (older ROCm: `HIP_LAUNCH_BLOCKING=1`) so the traceback points at the kernel that really failed."
EAGER = "Restart with `--enforce-eager` (no HIP graphs, no torch.compile) to rule out graph capture."
# Two steps: the flag arrived in vLLM 0.13 (bench.surface.authority checks each step against its range).
BACKEND = (
    "[>=0.13] Try another attention backend: `--attention-backend TRITON_ATTN` (or ROCM_ATTN, ROCM_AITER_FA).",
    "[<0.13] Try another attention backend: set `VLLM_ATTENTION_BACKEND` in the server's environment (ROCM_FLASH; TRITON_ATTN from 0.11).",
)
CUSTOM_AR = "With tensor parallelism, add `--disable-custom-all-reduce`."
VERSIONS = (
    "Check that the ROCm driver/runtime matches the ROCm build of PyTorch/vLLM: `python -c 'import torch; print(torch.version.hip)'`, "
    "`cat /sys/module/amdgpu/version` (or `dkms status`), `rocminfo | grep -i gfx`; vLLM's ROCm Docker image pins a working set."
)
DMESG = "Look at the kernel log for amdgpu faults and resets (`sudo dmesg -T | grep -i -E 'amdgpu|gpu reset|ring'`) and at `amd-smi metric --ecc` (older: `rocm-smi --showrasinfo`)."
DEVICES = (
    "In a container, pass the GPU devices: `docker run --device=/dev/kfd --device=/dev/dri --group-add video` (plus `--security-opt seccomp=unconfined`; "
    "these are docker's options: vLLM's own `--device` flag, removed in 0.10, plays no part); on the host, the user must be in the `render` and `video` groups."
)
VISIBLE = "Check `HIP_VISIBLE_DEVICES` / `ROCR_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES`: they must not be empty or name GPUs that do not exist (`rocm-smi` / `amd-smi list`)."
ARCH = (
    "Find the GPU's target with `rocminfo | grep gfx` and compare with `python -c 'import torch; print(torch.cuda.get_arch_list())'`; "
    "install ROCm builds of PyTorch/vLLM that include it, or build vLLM with `PYTORCH_ROCM_ARCH=gfxNNNN`."
)


@dataclass
class Group:
    slug: str
    codes: list[str]  # hipError names, or HSA status names
    title: str
    explanation: str
    summary: str
    steps: list[str]
    severity: str = "error"
    role: str = "cause"
    kernel: bool = False
    owner: str | None = None  # a pattern elsewhere owns the torch form
    names: bool = True  # match the code names too
    extra: list[str] = field(default_factory=list)
    extra_examples: list[str] = field(default_factory=list)


HIP_GROUPS: list[Group] = [
    Group(
        "driver-too-old",
        ["hipErrorInsufficientDriver"],
        "The AMD GPU driver is too old for the HIP runtime of this build",
        "The HIP runtime of PyTorch/vLLM needs a newer amdgpu kernel driver (ROCm kernel-mode driver) than the one "
        "loaded. It happens when a container or wheel built for a newer ROCm runs on a host with an older "
        "amdgpu-dkms / kernel driver.",
        "The amdgpu driver is older than this ROCm build needs: upgrade the host's ROCm kernel driver (amdgpu-dkms), or install PyTorch/vLLM built for the ROCm version the host supports.",
        [VERSIONS, "Upgrade the host's amdgpu driver (amdgpu-dkms from the matching ROCm release) and reboot, or use a container/wheel for an older ROCm."],
    ),
    Group(
        "no-device",
        ["hipErrorNoDevice"],
        "HIP found no AMD GPU (no ROCm-capable device is detected)",
        "The HIP runtime sees no GPU: the container was started without /dev/kfd and /dev/dri, the user lacks "
        "access to them (render/video groups), the visible-devices variables are empty or wrong, the amdgpu "
        "driver is not loaded, or the GPU is not supported by this ROCm release.",
        "HIP sees no GPU: give the process /dev/kfd and /dev/dri (in a container: `docker run` with both devices and `--group-add video`), check HIP_VISIBLE_DEVICES and that `rocminfo` lists the GPU.",
        [DEVICES, VISIBLE, "Run `rocminfo` and `amd-smi list` in the same environment; if they fail, load the amdgpu driver or fix the ROCm install."],
    ),
    Group(
        "invalid-device",
        ["hipErrorInvalidDevice"],
        "A HIP call used a GPU index that does not exist (invalid device ordinal)",
        "A process selected a GPU number beyond the GPUs it can see: tensor x pipeline parallel size is larger than "
        "the visible GPUs, or the visible-devices variables list fewer GPUs than the workers need.",
        "A GPU index is out of range: make --tensor-parallel-size x --pipeline-parallel-size fit the GPUs visible through HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES.",
        [
            VISIBLE,
            "[>=0.8] Compare the number of GPUs (`amd-smi list`) with `--tensor-parallel-size` x `--pipeline-parallel-size` (x `--data-parallel-size`).",
            "[<0.8] Compare the number of GPUs (`amd-smi list`) with `--tensor-parallel-size` x `--pipeline-parallel-size`.",
        ],
    ),
    Group(
        "initialization-error",
        ["hipErrorNotInitialized"],
        "The HIP runtime failed to initialise",
        "HIP could not initialise in this process: the GPU device files are not accessible, the process was forked "
        "after the parent initialised HIP (workers started with fork), or the driver/GPU is in a bad state.",
        "HIP could not initialise: start workers with spawn (VLLM_WORKER_MULTIPROC_METHOD=spawn), pass /dev/kfd and /dev/dri to the container, and check dmesg for amdgpu faults.",
        ["Set `VLLM_WORKER_MULTIPROC_METHOD=spawn`.", DEVICES, DMESG],
    ),
    Group(
        "driver-shutting-down",
        ["hipErrorDeinitialized"],
        "A HIP call ran while the process was exiting (driver shutting down)",
        "The HIP runtime is being torn down because the process exits, and some code still called it. It is "
        "shutdown noise that follows the error that made the process exit.",
        "A HIP call ran during process exit: look for the first error earlier in the log.",
        ["Find the first error before this line: it is what made the process exit."],
        severity="warning",
        role="consequence",
    ),
    Group(
        "device-busy",
        ["hipErrorContextAlreadyInUse"],
        "The AMD GPU is already in use by another process or thread (exclusive mode)",
        "The GPU refused a new context because another process or thread holds it in an exclusive mode, often a "
        "previous vLLM or another container that still runs on it.",
        "The GPU is held by another process: stop it (`amd-smi process` / `rocm-smi --showpids`) or give this server other GPUs.",
        ["List the processes on the GPUs (`amd-smi process`, older `rocm-smi --showpids`) and stop stale ones.", VISIBLE],
    ),
    Group(
        "ecc-uncorrectable",
        ["hipErrorECCNotCorrectable"],
        "Uncorrectable ECC memory error on the AMD GPU (hardware fault)",
        "The GPU detected a memory error it could not correct: a hardware fault. The GPU needs a reset and, if "
        "errors repeat, replacement.",
        "Uncorrectable ECC error: a GPU hardware fault. Drain the node, check `amd-smi metric --ecc`, reset the GPU (`amd-smi reset -G -g <gpu>`) or reboot.",
        ["Take the node out of service.", DMESG, "Reset the GPU or reboot; report repeated errors to the hardware vendor."],
    ),
    Group(
        "peer-access",
        ["hipErrorPeerAccessUnsupported", "hipErrorPeerAccessNotEnabled"],
        "GPU peer-to-peer access is not available between these AMD GPUs",
        "A GPU tried to access another GPU's memory directly, which the topology does not allow or was not "
        "enabled (GPUs without xGMI links on different PCIe roots, virtual machines, IOMMU settings). vLLM's "
        "custom all-reduce and RCCL use peer access with tensor parallelism.",
        "Peer access between the GPUs is not available: start vLLM with --disable-custom-all-reduce, and set NCCL_P2P_DISABLE=1 if RCCL fails too.",
        ["Add `--disable-custom-all-reduce`.", "If RCCL fails too, set `NCCL_P2P_DISABLE=1`.", "Check the topology with `amd-smi topology` (or `rocm-smi --showtopo`); set `iommu=pt` on the kernel command line if the IOMMU blocks P2P."],
    ),
    Group(
        "kernel-fault",
        ["hipErrorPriorLaunchFailure", "hipErrorAssert"],
        "A GPU kernel faulted on the AMD GPU (device-side assert or earlier launch failure)",
        "A kernel failed on the GPU: a device-side assertion fired (often an index out of range) or an earlier "
        "kernel crashed and later calls report it. HIP errors are reported asynchronously, so the Python frame "
        "shown may not be the faulty kernel; the context is unusable afterwards.",
        "A GPU kernel faulted: rerun with AMD_SERIALIZE_KERNEL=3 to locate it, then avoid it with --enforce-eager or another attention backend.",
        [SERIALIZE, EAGER, *BACKEND, VERSIONS],
        kernel=True,
    ),
    Group(
        "illegal-address",
        ["hipErrorIllegalAddress"],
        "A GPU kernel made an illegal memory access on the AMD GPU",
        "A kernel read or wrote memory outside its buffers (hipErrorIllegalAddress). This pattern covers the forms "
        "other than PyTorch's `HIP error: ...`, which kernels.hip-error handles: Triton's, vLLM's custom all-reduce "
        "and the code name quoted by other callers.",
        "A kernel accessed invalid memory: rerun with AMD_SERIALIZE_KERNEL=3, then try --enforce-eager, another attention backend or --disable-custom-all-reduce.",
        [SERIALIZE, EAGER, *BACKEND, CUSTOM_AR],
        kernel=True,
        owner="kernels.hip-error",
    ),
    Group(
        "launch-failed",
        ["hipErrorLaunchFailure"],
        "A GPU kernel crashed on the AMD GPU (unspecified launch failure)",
        "A kernel aborted while running (hipErrorLaunchFailure). This pattern covers the forms other than PyTorch's "
        "`HIP error: unspecified launch failure` (kernels.hip-error).",
        "A kernel crashed: check dmesg for amdgpu faults, rerun with AMD_SERIALIZE_KERNEL=3, and try --enforce-eager.",
        [DMESG, SERIALIZE, EAGER, *BACKEND],
        kernel=True,
        owner="kernels.hip-error",
    ),
    Group(
        "invalid-device-function",
        ["hipErrorInvalidDeviceFunction"],
        "No kernel for this AMD GPU's architecture (hipErrorInvalidDeviceFunction)",
        "A kernel has no code for this GPU's gfx target. This pattern covers the forms other than PyTorch's "
        "`HIP error: invalid device function` (kernels.hip-invalid-device-function).",
        "The binaries have no kernel for this GPU's gfx target: install ROCm builds made for it, or build with PYTORCH_ROCM_ARCH.",
        [ARCH, "If you set `HSA_OVERRIDE_GFX_VERSION`, make sure it names a target the binaries contain."],
        owner="kernels.hip-invalid-device-function",
    ),
    Group(
        "no-kernel-image",
        ["hipErrorNoBinaryForGpu"],
        "No kernel image for this AMD GPU's architecture",
        "A library has no code object for this GPU's gfx target (hipErrorNoBinaryForGpu), so HIP cannot launch its "
        "kernels: the ROCm build does not list this GPU (consumer GPUs and APUs are often missing).",
        "The ROCm binaries have no code for this GPU's gfx target: install a build that targets it (PYTORCH_ROCM_ARCH), or set HSA_OVERRIDE_GFX_VERSION to a compatible target.",
        [ARCH, "For a consumer GPU close to a supported one, `HSA_OVERRIDE_GFX_VERSION` (e.g. 11.0.0 for RDNA3) makes the runtime use that target's code (unsupported)."],
        # kernels.hip-no-binary-for-gpu owns "hipErrorNoBinaryForGpu: Unable to find code object ..."
        names=False,
    ),
    Group(
        "invalid-kernel-image",
        ["hipErrorInvalidImage", "hipErrorInvalidSource", "hipErrorInvalidKernelFile", "hipErrorSharedObjectInitFailed"],
        "A GPU code object is invalid or could not be loaded (HIP)",
        "HIP could not load a code object: it is corrupted, built for another ROCm/gfx target, or a JIT cache "
        "(Triton, torch.compile) holds kernels built elsewhere.",
        "A code object could not be loaded: clear the kernel caches (~/.triton/cache, ~/.cache/vllm) and reinstall the failing package for this ROCm version.",
        ["Clear kernel caches: `rm -rf ~/.triton/cache ~/.cache/vllm/torch_compile_cache`.", VERSIONS, ARCH],
    ),
    Group(
        "launch-out-of-resources",
        ["hipErrorLaunchOutOfResources", "hipErrorInvalidConfiguration", "hipErrorCooperativeLaunchTooLarge", "hipErrorInvalidClusterSize"],
        "A HIP kernel launch asked for more resources than the AMD GPU allows",
        "A kernel was launched with a configuration the GPU cannot run: too many registers, too much shared (LDS) "
        "memory or too large a grid/block for this gfx target, typically a kernel tuned for another GPU or an "
        "unusual shape.",
        "A kernel launch needs more resources than this GPU has: try another attention backend or --enforce-eager, check the build targets this GPU, upgrade vLLM.",
        [SERIALIZE, *BACKEND, EAGER, "Clear stale kernel caches: `rm -rf ~/.triton/cache`."],
        kernel=True,
    ),
    Group(
        "launch-timeout",
        ["hipErrorLaunchTimeOut"],
        "A HIP kernel timed out and was terminated (GPU hang)",
        "A kernel ran too long and the driver terminated it, usually a GPU hang (the kernel log shows an amdgpu "
        "ring timeout and a GPU reset) caused by a kernel bug or a hardware/firmware problem.",
        "A kernel hung and was killed: check dmesg for amdgpu ring timeouts/resets, rerun with AMD_SERIALIZE_KERNEL=3, try --enforce-eager.",
        [DMESG, SERIALIZE, EAGER],
    ),
    Group(
        "stream-capture",
        [
            "hipErrorStreamCaptureUnsupported", "hipErrorStreamCaptureInvalidated", "hipErrorStreamCaptureMerge",
            "hipErrorStreamCaptureUnmatched", "hipErrorStreamCaptureUnjoined", "hipErrorStreamCaptureIsolation",
            "hipErrorStreamCaptureImplicit", "hipErrorCapturedEvent", "hipErrorStreamCaptureWrongThread",
            "hipErrorGraphExecUpdateFailure",
        ],
        "A HIP graph capture failed (an operation not allowed while capturing)",
        "vLLM captures HIP graphs of the model at start-up. An operation that is not allowed during capture "
        "(a synchronisation, an allocation, a host copy, work on another stream) ran, or an earlier error "
        "invalidated the capture; a kernel or custom op that is not graph-safe on ROCm is the usual cause.",
        "HIP graph capture failed: start vLLM with --enforce-eager (no HIP graphs), and report the model and ROCm version.",
        [EAGER, "Or keep torch.compile and drop only the graphs: `--compilation-config '{\"cudagraph_mode\": \"NONE\"}'`.", CUSTOM_AR],
    ),
    Group(
        "not-supported",
        ["hipErrorNotSupported"],
        "A HIP operation is not supported on this GPU or ROCm version",
        "The HIP call is not implemented or not supported for this GPU, ROCm release or configuration: virtual "
        "memory APIs (sleep mode's allocator, expandable segments), IPC or peer features on GPUs without them.",
        "This ROCm/GPU does not support the operation: turn off the feature that needs it (--enable-sleep-mode, expandable_segments in PYTORCH_HIP_ALLOC_CONF, --disable-custom-all-reduce) or upgrade ROCm.",
        ["Drop `--enable-sleep-mode` if set.", "Remove `expandable_segments:True` from `PYTORCH_HIP_ALLOC_CONF` / `PYTORCH_CUDA_ALLOC_CONF`.", CUSTOM_AR, VERSIONS],
    ),
    Group(
        "invalid-value",
        ["hipErrorInvalidValue"],
        "A HIP call got an invalid argument",
        "A HIP API call rejected one of its parameters. On ROCm with vLLM this often comes from IPC handles "
        "(custom all-reduce) in containers without `--ipc=host`, or from a kernel launch configuration the GPU "
        "rejects.",
        "A HIP call got an invalid argument: rerun with AMD_SERIALIZE_KERNEL=3 to find it; try --disable-custom-all-reduce, and --ipc=host for containers.",
        [SERIALIZE, CUSTOM_AR, "Run the container with `--ipc=host`.", *BACKEND],
    ),
    Group(
        "invalid-handle",
        ["hipErrorInvalidHandle", "hipErrorContextIsDestroyed", "hipErrorInvalidContext", "hipErrorContextAlreadyCurrent"],
        "A HIP stream, event or context handle is invalid",
        "A HIP object was used on the wrong device, in a forked child, or after its context was destroyed (often "
        "after an earlier fault, or during shutdown).",
        "A HIP handle is invalid: look for an earlier error that destroyed the context; start workers with VLLM_WORKER_MULTIPROC_METHOD=spawn.",
        ["Look above for the first GPU error.", "Set `VLLM_WORKER_MULTIPROC_METHOD=spawn`.", SERIALIZE],
    ),
    Group(
        "operating-system",
        ["hipErrorOperatingSystem"],
        "An OS call made by HIP failed (IPC or shared memory in a container)",
        "HIP asked the operating system for something that failed, typically IPC memory sharing in a container "
        "without `--ipc=host` or with a small /dev/shm, or device access blocked by seccomp.",
        "A HIP OS call failed: run the container with --ipc=host and --security-opt seccomp=unconfined, and try --disable-custom-all-reduce.",
        ["Docker: `--ipc=host --security-opt seccomp=unconfined` (or a large `--shm-size`).", CUSTOM_AR],
    ),
    Group(
        "out-of-memory",
        ["hipErrorOutOfMemory"],
        "The AMD GPU ran out of memory (HIP error: out of memory)",
        "A HIP allocation failed because the GPU has no free memory left: vLLM reserves most of it for the KV "
        "cache, so allocations made later by RCCL, Triton, HIP graphs or another process on the GPU can fail.",
        "The GPU is out of memory: lower --gpu-memory-utilization (e.g. 0.85) or --max-model-len / --max-num-seqs, and stop other processes on the GPU.",
        [
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85).",
            "Reduce `--max-model-len` or `--max-num-seqs`, or use more GPUs with `--tensor-parallel-size`.",
            "Check other processes on the GPU (`amd-smi process`).",
            EAGER,
        ],
    ),
    Group(
        "unknown-error",
        ["hipErrorUnknown", "hipErrorRuntimeMemory", "hipErrorRuntimeOther"],
        "The HIP runtime returned an unknown or HSA-level error",
        "HIP reported an error it could not classify, or a failure of the HSA runtime below it. It usually points "
        "at the environment: a GPU reset or hang, a driver/runtime version mismatch, or device access lost.",
        "HIP returned an unknown/HSA error: check dmesg for amdgpu resets, the ROCm driver/runtime versions, and the container's device access.",
        [DMESG, VERSIONS, DEVICES],
    ),
]

HIP_GENERIC = {
    "hipErrorProfilerDisabled", "hipErrorProfilerNotInitialized", "hipErrorProfilerAlreadyStarted",
    "hipErrorProfilerAlreadyStopped", "hipErrorInvalidPitchValue", "hipErrorInvalidSymbol",
    "hipErrorInvalidDevicePointer", "hipErrorInvalidMemcpyDirection", "hipErrorMissingConfiguration",
    "hipErrorMapFailed", "hipErrorUnmapFailed", "hipErrorArrayIsMapped", "hipErrorAlreadyMapped",
    "hipErrorAlreadyAcquired", "hipErrorNotMapped", "hipErrorNotMappedAsArray", "hipErrorNotMappedAsPointer",
    "hipErrorUnsupportedLimit", "hipErrorInvalidGraphicsContext", "hipErrorFileNotFound",
    "hipErrorSharedObjectSymbolNotFound", "hipErrorIllegalState", "hipErrorNotFound", "hipErrorNotReady",
    "hipErrorPeerAccessAlreadyEnabled", "hipErrorSetOnActiveProcess", "hipErrorHostMemoryAlreadyRegistered",
    "hipErrorHostMemoryNotRegistered", "hipErrorInvalidChannelDescriptor", "hipErrorInvalidTexture", "hipErrorTbd",
}
# aliases of another name with the same value
HIP_ALIASES = {"hipErrorMemoryAllocation", "hipErrorInitializationError", "hipErrorMapBufferObjectFailed", "hipErrorInvalidResourceHandle"}

HSA_GROUPS: list[Group] = [
    Group(
        "hsa-memory-fault",
        ["HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", "HSA_STATUS_ERROR_MEMORY_FAULT", "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION"],
        "A GPU kernel faulted on the AMD GPU (memory access fault), the worker aborted",
        "A kernel accessed an address it may not use (a page that is not mapped, beyond the legal aperture) or "
        "executed an illegal instruction, and the ROCm runtime aborted the process: the AMD counterpart of CUDA's "
        "illegal memory access. The Python process dies without a traceback ('Fatal Python error: Aborted'), and "
        "vLLM then reports a dead worker or engine core. A kernel bug for this model/quantization/backend, HIP "
        "graph capture, or a kernel built for another gfx target are the usual causes.",
        "A kernel faulted on the AMD GPU ({reason|memory access fault}): rerun with AMD_SERIALIZE_KERNEL=3 to find the kernel, try --enforce-eager and another attention backend, and check the ROCm versions.",
        [SERIALIZE, EAGER, *BACKEND, CUSTOM_AR, VERSIONS],
        extra=[
            r"Memory access fault by GPU node-(?P<node>\d+) \(Agent handle: [^)\n]*\) on address (?P<address>0x[0-9a-fA-F]+|\(nil\))"
            r"(?:\(may not be exact address\))?\. Reason: (?P<reason>Page not present or supervisor privilege|"
            r"Write access to a read-only page|Execute access to a page marked NX|Host access only|Unknown)"
        ],
        extra_examples=[
            "Memory access fault by GPU node-2 (Agent handle: 0x55d0c8a1b2c0) on address 0x7f3a2c000000. Reason: Page not present or supervisor privilege."
        ],
    ),
    Group(
        "hsa-ecc-fault",
        [],
        "The AMD GPU reported an ECC memory fault (hardware), the worker aborted",
        "The ROCm runtime received a memory fault caused by an ECC error in the GPU's DRAM or SRAM and aborted the "
        "process. This is a hardware fault: the GPU needs a reset, and repeated faults mean failing memory.",
        "ECC fault on GPU node {node}: a hardware error. Drain the node, check `amd-smi metric --ecc`, reset the GPU or reboot.",
        ["Take the node out of service.", DMESG, "Reset the GPU (`amd-smi reset -G -g <gpu>`) or reboot; report repeated faults to the vendor."],
        extra=[
            r"Memory access fault by GPU node-(?P<node>\d+) \(Agent handle: [^)\n]*\) on address [^\n]*?\. Reason: (?P<reason>DRAM ECC failure|SRAM ECC failure)",
            r"Memory critical error by agent node-(?P<node>\d+)",
        ],
        extra_examples=[
            "Memory access fault by GPU node-3 (Agent handle: 0x5612ab34cd00) on address 0x7f1200400000. Reason: DRAM ECC failure."
        ],
    ),
    Group(
        "hsa-gpu-hang",
        ["HSA_STATUS_ERROR_FATAL"],
        "The AMD GPU queue hit a fatal error or a hang, the worker aborted",
        "The GPU queue received an error the runtime cannot recover from, typically a GPU hang that the driver "
        "reset ('Generic hang recovery'), so the process aborts. Kernel bugs, firmware/driver problems and "
        "hardware faults cause it.",
        "The GPU hung and the runtime aborted: check dmesg for amdgpu ring timeouts and resets, rerun with AMD_SERIALIZE_KERNEL=3, try --enforce-eager, and update the ROCm driver/firmware.",
        [DMESG, SERIALIZE, EAGER, VERSIONS],
        extra=[r"Memory access fault by GPU node-(?P<node>\d+) \(Agent handle: [^)\n]*\) on address [^\n]*?\. Reason: (?P<reason>Generic hang recovery)"],
    ),
    Group(
        "hsa-out-of-resources",
        ["HSA_STATUS_ERROR_OUT_OF_RESOURCES"],
        "The ROCm runtime ran out of resources (GPU memory, queues, or no GPU accessible)",
        "The HSA runtime could not allocate what it needed: GPU memory (the queue-abort line then shows the free "
        "memory left), hardware queues or doorbells (too many processes/streams on the GPU), or, at start-up, no "
        "accessible GPU at all (hsa_init fails this way when /dev/kfd is missing or not permitted).",
        "The ROCm runtime ran out of resources: lower --gpu-memory-utilization, stop other processes on the GPU, and in containers pass /dev/kfd and /dev/dri.",
        ["Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) and check `amd-smi process` for other users of the GPU.", DEVICES, "Too many queues: set `GPU_MAX_HW_QUEUES=4` or run fewer processes per GPU."],
    ),
    Group(
        "hsa-out-of-registers",
        ["HSA_STATUS_ERROR_OUT_OF_REGISTERS"],
        "A kernel needs more registers (VGPRs) than this AMD GPU provides",
        "A kernel was compiled to use more vector registers than the GPU has per wavefront, so it cannot be "
        "launched: a kernel built or tuned for another gfx target, or an unusual block size.",
        "A kernel needs more VGPRs than the GPU has: try another attention backend or --enforce-eager, and make sure the build targets this GPU.",
        [*BACKEND, EAGER, ARCH],
    ),
    Group(
        "hsa-invalid-code-object",
        [
            "HSA_STATUS_ERROR_INVALID_ISA", "HSA_STATUS_ERROR_INVALID_ISA_NAME", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
            "HSA_STATUS_ERROR_INVALID_EXECUTABLE", "HSA_STATUS_ERROR_FROZEN_EXECUTABLE", "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME",
            "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED", "HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
            "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL", "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
            "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        ],
        "The ROCm runtime could not load a GPU code object (invalid ISA / code object)",
        "A code object's instruction set does not match the GPU, or the object is malformed: a binary built for "
        "another gfx target (or forced with a wrong HSA_OVERRIDE_GFX_VERSION), or a stale JIT cache.",
        "A code object does not fit this GPU: install ROCm builds for its gfx target, fix HSA_OVERRIDE_GFX_VERSION, and clear kernel caches.",
        [ARCH, "Remove or correct `HSA_OVERRIDE_GFX_VERSION`.", "Clear kernel caches: `rm -rf ~/.triton/cache ~/.cache/vllm/torch_compile_cache`."],
    ),
]
HSA_OWNED = {"HSA_STATUS_ERROR_EXCEPTION"}  # kernels.rocm-hsa-hardware-exception


# --- spec reading ------------------------------------------------------------------------------------------
def hip_enum(header: Path) -> dict[str, int]:
    text = header.read_text()
    body = re.search(r"typedef enum __HIP_NODISCARD hipError_t\s*\{(.*?)\}\s*hipError_t;", text, re.S)
    if body is None:
        raise SystemExit(f"{header}: no hipError_t enum")
    values = {m[1]: int(m[2]) for m in re.finditer(r"\b(hip(?:Error\w+|Success))\s*=\s*(\d+)", body[1])}
    for m in re.finditer(r"\b(hipError\w+)\s*(?:,|$|///)", body[1], re.M):
        values.setdefault(m[1], -1)
    return values


def c_string(parts: str) -> str:
    return "".join(bytes(s, "utf-8").decode("unicode_escape") for s in re.findall(r'"((?:[^"\\]|\\.)*)"', parts))


def hip_strings(files: list[Path]) -> dict[str, str]:
    table: dict[str, str] = {}
    for f in files:
        text = f.read_text()
        start = text.find("ihipGetErrorString")
        for m in re.finditer(r"case (hip\w+):\s*(?:default:\s*)?return ((?:\"(?:[^\"\\]|\\.)*\"\s*)+);", text[max(start, 0) :]):
            table[m[1]] = c_string(m[2])
    return table


def hsa_strings(source: Path) -> dict[str, str]:
    text = source.read_text()
    text = text[text.index("hsa_status_t hsa_status_string(") :]
    return {m[1]: c_string(m[2]) for m in re.finditer(r"case (HSA_\w+):\s*\*status_string\s*=\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+);", text)}


# --- patterns --------------------------------------------------------------------------------------------
def hip_pattern(group: Group, members: list[tuple[str, int, str]], other: str) -> dict:
    strings = sorted({s for _, _, s in members if s}, key=lambda s: (-len(s), s))
    prefixes = list(HIP_PREFIXES) if group.owner else [TORCH, *HIP_PREFIXES]
    end = "(?=['\\n]|$| \\(| at )"
    parts = [f"(?:{'|'.join(prefixes)})(?:{'|'.join(esc(s) for s in strings)}){end}"]
    own = [s for s in strings if s not in CUDA_STRINGS]
    if own:
        parts.append(f"(?:{'|'.join(SHARED_PREFIXES)})(?:{'|'.join(esc(s) for s in own)}){end}")
    if group.names:
        guard = r"(?<!Search for `)" if group.owner else ""
        parts.append(guard + r"\b(?:" + "|".join(sorted(n for n, _, _ in members)) + r")\b")
    parts += group.extra
    name, value, string = next((m for m in members if m[2]), members[0])
    examples = []
    if group.owner is None:
        examples.append(
            f"RuntimeError: HIP error: {string}\nSearch for `{name}' in {TORCH_HELP} for more information.\n{ASYNC}\n{DSA}"
        )
        examples.append(f"(Worker_TP0 pid=5120) ERROR 11-02 10:31:44 [multiproc_executor.py:839] torch.AcceleratorError: HIP error: {string}")
    examples.append(f"RuntimeError: Triton Error [HIP]:  Code: {value}, Messsage: {string}")
    if group.names:
        examples.append(f"RuntimeError: hipMemcpyAsync failed: {members[-1][0]}")
    examples += group.extra_examples
    no_match = [f"RuntimeError: HIP error: {other}"]
    if group.owner:
        no_match.append(f"RuntimeError: HIP error: {string}")
    else:
        no_match.append(f"RuntimeError: CUDA error: {string}")
    note = f" The torch form `HIP error: <string>` is {group.owner}'s." if group.owner else ""
    return {
        "comment": (
            "priority 1: wins over kernels.hip-error, the generic `HIP error: <msg>` pattern (priority 0)."
            if group.owner is None
            else None
        ),
        "id": f"rocm.{group.slug}",
        "title": group.title,
        "severity": group.severity,
        "role": group.role,
        "priority": 1 if group.owner is None else 0,
        "where": "any",
        "match": "|".join(parts),
        "explanation": group.explanation + " (Codes: " + ", ".join(f"{n} ({v})" for n, v, _ in members) + ".)",
        "docs": DOCS,
        "summary": group.summary,
        "steps": group.steps,
        "file": "rocm hip runtime",
        "function": "hipGetErrorString / hipGetErrorName: " + ", ".join(n for n, _, _ in members),
        "versions": "*",
        "checked": (
            "enum from HIP 7.1 hip_runtime_api.h (triton 3.9.0 wheel); strings from ROCm/clr hipamd/src/hip_error.cpp "
            "(f9f995c6) and ROCm/rocm-systems projects/clr/hipamd/src/hip_error.cpp (10442129); torch form: hipified "
            "c10/cuda/CUDAException.cpp + CUDAMiscFunctions.cpp (pytorch, code index); triton 3.9.0 backends/amd/driver.c "
            "gpuAssert; vLLM 0.33.0 cuda_wrapper.py (hipGetErrorString behind 'CUDART error: ')." + note
        ),
        "match_examples": examples,
        "no_match_examples": no_match,
    }


def hsa_pattern(group: Group, members: list[tuple[str, str]]) -> dict:
    parts = []
    if members:
        parts.append(r"\b(?:" + "|".join(sorted(n for n, _ in members)) + r")\b")
    parts += group.extra
    examples = []
    for name, text in members[:2]:
        examples.append(
            f":0:rocdevice.cpp            :2998: 1203455667123 us: [pid:5120  tid:0x7f2b3e5ff640] Callback: Queue 0x7f2a10600000 aborting with error : {text} code: 0x{0x1008 if 'RESOURCES' in name else 0x29:x}"
        )
    if members:
        examples.append(f"(Worker_TP1 pid=5121) {members[-1][1]}")
    examples += group.extra_examples
    return {
        "comment": None,
        "id": f"rocm.{group.slug}",
        "title": group.title,
        "severity": group.severity,
        "role": group.role,
        "where": "any",
        "match": "|".join(parts),
        "explanation": group.explanation + (" (Statuses: " + ", ".join(n for n, _ in members) + ".)" if members else ""),
        "docs": "https://rocm.docs.amd.com/projects/ROCR-Runtime/en/latest/",
        "summary": group.summary,
        "steps": group.steps,
        "file": "rocm hsa runtime",
        "function": "hsa_status_string (ROCR runtime hsa.cpp); ROCclr rocdevice.cpp callbackQueue ('Callback: Queue %p aborting with error : %s code: 0x%x'); ROCR runtime.cpp VM fault handler ('Memory access fault by GPU node-%u ... Reason: %s.')",
        "versions": "*",
        "checked": "status texts from ROCm/ROCR-Runtime runtime/hsa-runtime/core/runtime/hsa.cpp (c7785a6d); enum from triton 3.9.0 hsa.h / hsa_ext_amd.h; queue-abort and fault formats from ROCm/clr rocclr/device/rocm/rocdevice.cpp and ROCR runtime.cpp (fetched snapshots)",
        "match_examples": examples,
        "no_match_examples": [
            ":0:rocdevice.cpp            :2998: 1203455667123 us: [pid:5120  tid:0x7f2b3e5ff640] Callback: Queue 0x7f2a10600000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016",
            "(APIServer pid=3201) INFO 02-11 09:00:01 [__init__.py:216] Automatically detected platform rocm.",
        ],
    }


def hsa_generic(rest: list[str]) -> dict:
    return {
        "comment": "Catch-all for the other HSA statuses (priority -10; HSA_STATUS_ERROR_EXCEPTION is kernels.rocm-hsa-hardware-exception's).",
        "id": "rocm.hsa-error",
        "title": "The ROCm (HSA) runtime failed: {status}",
        "severity": "error",
        "role": "cause",
        "priority": -10,
        "where": "any",
        "match": r"\b(?P<status>HSA_(?:EXT_)?STATUS_ERROR(?:_[A-Z_]+)?)\b",
        "explanation": (
            "The HSA runtime, the layer under HIP that talks to the amdgpu driver, returned an error; when it comes "
            "from a GPU queue the runtime aborts the whole process. The text after the status names the problem. "
            "Statuses grouped here: " + ", ".join(rest) + "."
        ),
        "docs": "https://rocm.docs.amd.com/projects/ROCR-Runtime/en/latest/",
        "summary": "The ROCm runtime failed with {status}: check dmesg for amdgpu faults, the ROCm driver/runtime versions, and rerun with AMD_SERIALIZE_KERNEL=3.",
        "steps": [DMESG, VERSIONS, SERIALIZE, EAGER],
        "file": "rocm hsa runtime",
        "function": "hsa_status_string",
        "versions": "*",
        "checked": "status names and texts from ROCm/ROCR-Runtime hsa.cpp (c7785a6d) and triton 3.9.0 hsa.h",
        "match_examples": [
            ":0:rocdevice.cpp            :2998: 1203455667123 us: [pid:5120  tid:0x7f2b3e5ff640] Callback: Queue 0x7f2a10600000 aborting with error : HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed. code: 0x1009",
            "RuntimeError: hsa_queue_create failed: HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.",
        ],
        "no_match_examples": [
            ":0:rocdevice.cpp            :2998: 1203455667123 us: [pid:5120  tid:0x7f2b3e5ff640] Callback: Queue 0x7f2a10600000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016",
            "(APIServer pid=3201) INFO 02-11 09:00:01 [rocm.py:180] HSA_STATUS_SUCCESS",
        ],
    }


def hip_generic(rest: list[str]) -> dict:
    return {
        "comment": "Catch-all for the other HIP codes in the forms kernels.hip-error does not see (priority -10).",
        "id": "rocm.hip-error",
        "title": "HIP call failed: {hip_error}",
        "severity": "error",
        "role": "cause",
        "priority": -10,
        "where": "any",
        "match": (
            r"Triton Error \[HIP\]: +Code: (?P<code>\d+), Messs?age: (?P<hip_error>[^\n]*[^\s])"
            r"|\b(?P<hip_error>hipError(?!NoBinaryForG)[A-Z]\w+)\b"
        ),
        "explanation": (
            "A HIP runtime call failed with an error no more specific pattern knows. HIP errors are reported "
            "asynchronously, so the first GPU error in the log is the one to look at. Codes grouped here: "
            + ", ".join(rest) + "."
        ),
        "docs": DOCS,
        "summary": "A HIP call failed ({hip_error}): rerun with AMD_SERIALIZE_KERNEL=3 to find it, check the ROCm versions, try --enforce-eager.",
        "steps": [SERIALIZE, VERSIONS, DMESG, EAGER],
        "file": "rocm hip runtime",
        "function": "hipGetErrorString / hipGetErrorName (any code)",
        "versions": "*",
        "checked": "codes from HIP 7.1 hip_runtime_api.h and ROCm/clr hip_error.cpp; triton 3.9.0 backends/amd/driver.c",
        "match_examples": [
            "RuntimeError: Triton Error [HIP]:  Code: 500, Messsage: named symbol not found",
            "RuntimeError: hipModuleLoad failed with hipErrorFileNotFound",
        ],
        "no_match_examples": [
            "RuntimeError: HIP error: named symbol not found",
            '"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"',
        ],
    }


HEADER = """# ROCm: HIP runtime errors (hipError_t) and HSA runtime statuses (HSA_STATUS_ERROR_*), one pattern per group
# of codes with the same meaning and fix, then catch-alls. GENERATED by `{command}` from {spec}
# (hip_runtime_api.h of HIP 7.1, hip_error.cpp of ROCm/clr and rocm-systems, hsa.h/hsa_ext_amd.h, ROCR hsa.cpp):
# do not edit by hand, change bench/families/hip_errors.py and rerun it.
# kernels.toml keeps `HIP error: invalid device function`, the generic `HIP error: <msg>`, hipErrorNoBinaryForGpu
# and HSA_STATUS_ERROR_EXCEPTION; patterns here that also match PyTorch's `HIP error: <string>` have priority 1.

"""


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    spec = Path(argv[0]) if argv else SPEC
    enum = hip_enum(spec / "hip_runtime_api.h")
    strings = hip_strings([spec / "hip_error.cpp", *sorted(spec.glob("hip_error-*.cpp"))])
    hsa = hsa_strings(spec / "hsa.cpp")
    hsa_names = set(re.findall(r"\b(HSA_STATUS_ERROR\w*)\s*=", (spec / "hsa.h").read_text() + (spec / "hsa_ext_amd.h").read_text()))
    blocks = []
    used: set[str] = set(HIP_ALIASES) | {"hipSuccess"}
    other = strings["hipErrorNotMappedAsArray"]
    for group in HIP_GROUPS:
        members = []
        for n in group.codes:
            if n not in enum and n not in strings:
                print(f"note: {n} unknown to this spec; skipped", file=sys.stderr)
                continue
            members.append((n, enum.get(n, -1), strings.get(n, "")))
            used.add(n)
        blocks.append(hip_pattern(group, members, other))
    rest = []
    for n in sorted(set(enum) | set(strings)):
        if n in used:
            continue
        if n not in HIP_GENERIC:
            raise SystemExit(f"{n} ({enum.get(n)}, {strings.get(n)!r}) has no group: add it to HIP_GROUPS or HIP_GENERIC")
        rest.append(n)
    blocks.append(hip_generic(rest))
    hsa_used = set(HSA_OWNED)
    for group in HSA_GROUPS:
        members = [(n, hsa[n]) for n in group.codes if n in hsa]
        hsa_used.update(group.codes)
        blocks.append(hsa_pattern(group, members))
    hsa_rest = sorted(n for n in (set(hsa) | hsa_names) if n.startswith("HSA_STATUS_ERROR") and n not in hsa_used)
    blocks.append(hsa_generic(hsa_rest))
    text = HEADER.format(command="python bench/families/hip_errors.py " + str(spec), spec=spec)
    text += "\n".join(pattern_toml(b) for b in blocks)
    OUT.write_text(text)
    print(f"wrote {OUT}: {len(blocks)} patterns, {len(enum)} hipError_t names, {len(hsa)} HSA statuses", file=sys.stderr)


if __name__ == "__main__":
    main()
