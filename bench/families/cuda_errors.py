# ruff: noqa: E501  (advice prose and quoted messages are as long as they are)
"""Generate patterns/cuda.toml: every CUDA runtime error code (`cudaError_t`) and every CUDA
driver error code (`CUresult`), as the callers of a vLLM server print them.

    python bench/families/cuda_errors.py [--runtime LIBCUDART:DRIVER_TYPES_H ...] [--driver CUDA_H ...]

Without arguments it reads every CUDA runtime it can find: the toolkit's (/usr/local/cuda*/lib*/libcudart.so
with include/driver_types.h) and the `nvidia-cuda-runtime-cu11/-cu12` wheels unpacked under /work/pkg-src
(`pip download --no-deps nvidia-cuda-runtime-cu12==12.9.79`, then unzip: nvidia/cuda_runtime/lib/libcudart.so.12
and nvidia/cuda_runtime/include/driver_types.h). The enum comes from driver_types.h; the name and the message
of each code come from the library itself (`cudaGetErrorName` / `cudaGetErrorString` through ctypes, which
works without a GPU). The driver enum comes from cuda.h (`CUresult`); its codes share their numbers with the
runtime's (CUDA_ERROR_ILLEGAL_ADDRESS = cudaErrorIllegalAddress = 700), and `cuGetErrorString` gives the same
text for them, so a driver code is matched by its own name and by the runtime string of its number.

The message forms (all take `cudaGetErrorString`/`cuGetErrorString` text, except where a name is printed):
    CUDA error: <string>                      torch C10_CUDA_CHECK (c10/cuda/CUDAException.cpp), RuntimeError,
                                              (also quoted by the NCCL watchdog's "... watchdog thread terminated
                                              with exception: CUDA error: <string>" log line)
                                              torch.AcceleratorError in torch >= 2.8; continuation lines
                                              "Search for `<cudaErrorName>' in ...", "CUDA kernel errors might be
                                              asynchronously reported ...", "Compile with `TORCH_USE_CUDA_DSA` ..."
    <string> (<code>)                         torch.cuda.CudaError (torch/cuda/__init__.py check_error)
    CUDA driver error: <string>               torch C10_CUDA_DRIVER_CHECK / AT_CUDA_DRIVER_CHECK (driver API)
    ... cudaGetDeviceCount() ... Error <code>: <string>
                                              torch c10/cuda/CUDAFunctions.cpp device_count_impl (raised, or the
                                              `UserWarning: CUDA initialization: ...` of torch.cuda.is_available())
    CUDART error: <string>                    vLLM vllm/distributed/device_communicators/cuda_wrapper.py CUDART_CHECK
    CUDA Error: <string> at <file>:<line>     vLLM csrc/cumem_allocator.cpp CUDA_CHECK (driver string)
    Failed: Cuda error <file>:<line> '<string>'   vLLM csrc/custom_all_reduce.cuh CUDACHECK (printf, then exit)
    CUDA error (<file>:<line>): <string>      vLLM's FlashAttention / FlashMLA builds (fprintf to stderr, exit)
    Triton Error [CUDA]: <string>             triton/backends/nvidia/driver.c gpuAssert (RuntimeError)
    NCCL WARN Cuda failure [<code> ]'<string>'    NCCL CUDACHECK / CUCHECK (checks.h)
    <CUDA_ERROR_NAME> / <cudaErrorName>       cupy (`CUDADriverError: CUDA_ERROR_X: <string>`), cuda-python
                                              (`CUresult.CUDA_ERROR_X`), DeepGEMM, vLLM's cuda-python callers

Codes whose torch form another file already owns (device.toml, kernels.toml, memory.toml) get a pattern for
the other forms only, so the two never claim the same line. The script fails when a code has no advice
below, so a code a new CUDA release adds cannot be missed: give it a group or put it in GENERIC.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml  # noqa: E402

OUT = PATTERNS / "cuda.toml"
DOCS = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"

# --- the message forms -----------------------------------------------------------------------------------
# Prefixes followed directly by the error string. `torch` is C10_CUDA_CHECK's; the others are every other
# caller that prints cudaGetErrorString / cuGetErrorString text.
TORCH_PREFIX = r"CUDA error: "
TRITON = r"Triton Error \[CUDA\]: "
OTHER_PREFIXES = [
    r"CUDART error: ",  # vLLM cuda_wrapper.py
    r"CUDA driver error: ",  # torch driver API checks
    TRITON,  # triton driver.c
    r"CUDA error \((?P<location>[^()\n]+)\): ",  # vLLM FlashAttention / FlashMLA builds
    r"Failed: Cuda error (?P<location>\S+:\d+) '",  # vLLM custom all-reduce
    r"NCCL WARN Cuda failure (?:(?P<code>\d+) )?'",  # NCCL's WARN line (not the "Last error:" quote in NCCL's exception)
    r"cudaGetDeviceCount\(\)[^\n]*? Error (?P<code>\d+): ",  # torch device_count_impl
    # torch's NCCL watchdog quotes C10_CUDA_CHECK's message in a log line (c10d ProcessGroupNCCL.cpp)
    r"watchdog thread terminated with exception: CUDA error: ",
    # ... and std::terminate prints it when a c10 error escapes a C++ thread ("  what():  CUDA error: ...")
    r"what\(\): +CUDA error: ",
]
CUMEM_PREFIX = r"CUDA Error: "  # vLLM cumem allocator: "CUDA Error: <string> at <file>:<line>"

VLLM_CHECKED = (
    "vLLM 0.33.0 wheel: cuda_wrapper.py CUDART_CHECK ('CUDART error: '), cumem_allocator.abi3.so "
    "('CUDA Error: %s at %s:%d'), _C_stable_libtorch.abi3.so ('Failed: Cuda error %s:%d '%s''), "
    "vllm_flash_attn/_vllm_fa2_C.abi3.so and _flashmla_C.abi3.so ('CUDA error (%s:%d): %s')"
)

ASYNC = (
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
)
LOGFILE = "For more detailed error information, run with CUDA_LOG_FILE=stderr"
DSA = "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."

# --- shared advice -----------------------------------------------------------------------------------------
BLOCKING = "Reproduce with `CUDA_LAUNCH_BLOCKING=1` so the traceback points at the kernel or call that really failed."
EAGER = "Restart with `--enforce-eager` (no CUDA graphs, no torch.compile) to rule out a captured or compiled graph."
# Two steps: the flag arrived in vLLM 0.13 (bench.surface.authority checks each step against its range).
BACKEND = (
    "[>=0.13] Try another attention backend: `--attention-backend FLASHINFER` (or FLASH_ATTN, TRITON_ATTN).",
    "[<0.13] Try another attention backend: set `VLLM_ATTENTION_BACKEND=FLASHINFER` (or FLASH_ATTN, XFORMERS) in the server's environment.",
)
CUSTOM_AR = "With tensor parallelism, add `--disable-custom-all-reduce` to take vLLM's custom all-reduce kernel (CUDA IPC, peer access) out of the picture."
DMESG = "Look at the kernel log for NVIDIA Xid errors (`sudo dmesg -T | grep -i xid`) and at `nvidia-smi -q -d ECC,PAGE_RETIREMENT`."
UPGRADE = "Upgrade vLLM; if it persists, report it with the model, quantization, GPU, driver and the CUDA_LAUNCH_BLOCKING=1 traceback."
VERSIONS = (
    "Compare the driver and the build: `nvidia-smi` (driver version and the highest CUDA it supports) against "
    "`python -c 'import torch; print(torch.__version__, torch.version.cuda)'`."
)


@dataclass
class Group:
    slug: str
    codes: list[str]  # runtime enum names (cudaError...), or driver names (CUDA_ERROR_...) for driver-only codes
    title: str
    explanation: str
    summary: str
    steps: list[str]
    severity: str = "error"
    role: str = "cause"
    kernel: bool = False  # an asynchronous kernel fault (torch adds the CUDA_LAUNCH_BLOCKING lines)
    alt: str = "cudart"  # which non-torch form the third example shows
    owner: str | None = None  # a pattern elsewhere owns the torch form ("CUDA error: <string>")
    owner_cumem: bool = False  # ... and the cumem allocator form
    extra: list[str] = field(default_factory=list)  # extra alternatives (regex) for this group
    extra_examples: list[str] = field(default_factory=list)  # examples of the extra alternatives
    # prefixes left out because a pattern elsewhere claims that form for this code (its own example)
    skip_prefixes: list[str] = field(default_factory=list)


GROUPS: list[Group] = [
    # ---- driver, installation and platform ----
    Group(
        "driver-too-old",
        ["cudaErrorInsufficientDriver", "cudaErrorCallRequiresNewerDriver"],
        "The NVIDIA driver is too old for the CUDA runtime of this build",
        "The CUDA runtime bundled with PyTorch/vLLM (or a library such as FlashInfer, Triton or NCCL) needs a newer "
        "NVIDIA driver than the one installed. Each CUDA release has a minimum driver: a wheel built for CUDA 12.8 "
        "does not run on a driver that only supports CUDA 12.2. `nvidia-smi` shows the highest CUDA version the "
        "driver supports in its header. It happens after upgrading vLLM or its Docker image on an older host, or "
        "when a container image is newer than the node's driver.",
        "The driver is older than the CUDA version of this build: upgrade the NVIDIA driver, or install a vLLM/PyTorch build for the CUDA version the driver supports.",
        [
            VERSIONS,
            "Upgrade the host's NVIDIA driver to a release that supports the build's CUDA version (a reboot or a reload of the nvidia kernel module follows).",
            "Or install wheels built for an older CUDA (e.g. the cu118/cu121/cu126 variants of torch and the matching vLLM wheel or image tag) that the installed driver supports.",
            "On data-center GPUs the CUDA forward-compatibility package (cuda-compat) lets a newer CUDA run on an older driver branch; it does not work on GeForce/RTX GPUs.",
        ],
        alt="cudart",
        # torch's own wording for cudaErrorInsufficientDriver (c10/cuda/CUDAFunctions.cpp device_count_impl)
        extra=[r"The NVIDIA driver on your system is too old \(found version (?P<driver_version>\d+)\)"],
        extra_examples=[
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
            "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver."
        ],
    ),
    Group(
        "stub-library",
        ["cudaErrorStubLibrary"],
        "CUDA loaded the driver stub library instead of the real NVIDIA driver",
        "The process loaded `libcuda.so` from the CUDA toolkit's `stubs/` directory, a placeholder that exists only so "
        "that programs can be linked without a GPU; every call into it fails. A `stubs` directory on LD_LIBRARY_PATH "
        "(often set by a Dockerfile or a module file) shadows the real driver library, or a container was started "
        "without the NVIDIA container runtime so the real libcuda.so.1 was never mounted.",
        "The CUDA driver stub is loaded: remove `.../lib64/stubs` from LD_LIBRARY_PATH and make sure the real libcuda.so.1 of the NVIDIA driver is visible (container: run with the NVIDIA runtime / --gpus).",
        [
            "Print `echo $LD_LIBRARY_PATH` and remove any `.../cuda/lib64/stubs` (or `targets/*/lib/stubs`) entry; check `ldconfig -p | grep libcuda`.",
            "In a container, start it with GPU support (`docker run --gpus all`, or the nvidia runtime / device plugin on Kubernetes) so the host driver's libcuda.so.1 is mounted.",
            "Check that `nvidia-smi` works in the same environment.",
        ],
        alt="cudart",
    ),
    Group(
        "no-device",
        ["cudaErrorNoDevice"],
        "CUDA found no GPU (no CUDA-capable device is detected)",
        "The CUDA runtime initialised but sees no GPU. `CUDA_VISIBLE_DEVICES` is empty or names GPUs that do not "
        "exist, the container or job was started without GPUs, the process runs on a CPU-only node, or the NVIDIA "
        "kernel driver is not loaded.",
        "CUDA sees no GPU: check CUDA_VISIBLE_DEVICES, that the container/job was given GPUs, and that `nvidia-smi` works in the same environment.",
        [
            "Run `nvidia-smi` where vLLM runs (same node, container, job step); if it fails, fix the driver or request a GPU node.",
            "Check `echo $CUDA_VISIBLE_DEVICES`: it must not be empty or list indices/UUIDs that do not exist (Ray and SLURM set it per worker).",
            "Docker: `--gpus all` (or `--runtime nvidia`); Kubernetes: request `nvidia.com/gpu` in the pod's resources; SLURM: `--gres=gpu:N`.",
            "With Ray, the worker or actor was given no GPU: request GPUs for it (`num_gpus`, the placement group's resources) and check `ray status` shows GPU resources on the node.",
        ],
        alt="cudart",
        # torch's wordings for no device / no driver (c10/cuda/CUDAFunctions.cpp)
        # ("No CUDA GPUs are available" is loading.no-cuda-gpus-available's)
        extra=[r"Found no NVIDIA driver on your system"],
        extra_examples=[
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        ],
    ),
    Group(
        "invalid-device",
        ["cudaErrorInvalidDevice"],
        "A CUDA call used a GPU index that does not exist (invalid device ordinal)",
        "A process selected a GPU number beyond the GPUs it can see. In vLLM this means the parallel layout needs "
        "more GPUs than are visible: tensor x pipeline (x data) parallel size is larger than the number of GPUs in "
        "`CUDA_VISIBLE_DEVICES`, a worker's local rank does not map to a visible GPU (multi-node or Ray placement), "
        "or `CUDA_VISIBLE_DEVICES` was changed after CUDA was initialised.",
        "A GPU index is out of range: make --tensor-parallel-size x --pipeline-parallel-size (x the data-parallel size) fit the GPUs visible in CUDA_VISIBLE_DEVICES on each node.",
        [
            "[>=0.8] Count the visible GPUs (`nvidia-smi -L`, `echo $CUDA_VISIBLE_DEVICES`) and compare with `--tensor-parallel-size` x `--pipeline-parallel-size` (x `--data-parallel-size`).",
            "[<0.8] Count the visible GPUs (`nvidia-smi -L`, `echo $CUDA_VISIBLE_DEVICES`) and compare with `--tensor-parallel-size` x `--pipeline-parallel-size`.",
            "Set `CUDA_VISIBLE_DEVICES` before starting vLLM (not from inside the script after torch is imported), and list every GPU the workers need.",
            "With Ray or several nodes, make sure each node offers as many GPUs as the workers placed on it (`ray status`).",
        ],
        alt="cudart",
    ),
    Group(
        "initialization-error",
        ["cudaErrorInitializationError"],
        "CUDA failed to initialise (initialization error)",
        "The CUDA driver could not be initialised in this process. Typical causes: CUDA was already initialised in a "
        "parent process that then forked this one (vLLM workers started with fork), the GPU or driver is in a bad "
        "state (Xid errors, a GPU that fell off the bus, a driver upgraded without reboot), or the process cannot "
        "open the /dev/nvidia* device nodes (container or cgroup device permissions).",
        "CUDA could not initialise: start vLLM's workers with spawn (VLLM_WORKER_MULTIPROC_METHOD=spawn), check `nvidia-smi` and dmesg for GPU/driver faults, and the container's device access.",
        [
            "Set `VLLM_WORKER_MULTIPROC_METHOD=spawn` and avoid touching CUDA in the launching script before vLLM starts.",
            "Run `nvidia-smi` in the same environment; if it fails or shows errors, reset or reboot the node. " + DMESG,
            "In containers, check that /dev/nvidia* exist and are accessible (a `systemctl daemon-reload` on the host can revoke cgroup device access of running containers: restart the container).",
        ],
        alt="cudart",
        extra=[r"CUDA driver initialization failed, you might not have a CUDA gpu"],
        extra_examples=["RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu."],
    ),
    Group(
        "driver-shutting-down",
        ["cudaErrorCudartUnloading"],
        "A CUDA call ran while the process was exiting (driver shutting down)",
        "The CUDA runtime is being unloaded because the process is exiting, and some code (a destructor, an atexit "
        "handler, a background thread) still called into CUDA. It is noise printed during shutdown, usually after "
        "the error that made the process exit.",
        "A CUDA call ran during process exit: look for the error that stopped the server earlier in the log.",
        [
            "Find the first error before this line: it is what made the process exit.",
            "If the server was stopped on purpose, this line is harmless.",
        ],
        severity="warning",
        role="consequence",
        alt="cudart",
    ),
    Group(
        "device-busy",
        ["cudaErrorDevicesUnavailable", "cudaErrorDeviceAlreadyInUse"],
        "The GPU is busy or unavailable (exclusive compute mode or held by another process)",
        "The GPU refused a new CUDA context. Usually it is in Exclusive_Process (or Prohibited) compute mode and "
        "another process already holds it (a previous vLLM that did not exit, a notebook, another container), or "
        "the GPU is unavailable to this process (MIG instance not created, GPU being reset, assigned to a VM).",
        "The GPU is busy or in exclusive compute mode: stop the other process on it (nvidia-smi), or set the compute mode back to Default with `nvidia-smi -c DEFAULT`.",
        [
            "Check `nvidia-smi` for other processes on the GPU and stop them (an old vLLM often keeps running in the background).",
            "Check the compute mode: `nvidia-smi -q -d COMPUTE`; `sudo nvidia-smi -i <gpu> -c DEFAULT` allows several processes, which vLLM needs with tensor parallelism plus its helper processes.",
            "On MIG GPUs, check that the MIG instance exists (`nvidia-smi -L`) and that CUDA_VISIBLE_DEVICES names it.",
        ],
        alt="cudart",
    ),
    Group(
        "device-not-licensed",
        ["cudaErrorDeviceNotLicensed"],
        "The virtual GPU has no valid NVIDIA license (vGPU / GRID)",
        "This is a virtual GPU (NVIDIA vGPU or GRID) whose license could not be acquired, so the driver restricts "
        "CUDA. The license server is unreachable or the license expired.",
        "The vGPU is not licensed: fix the NVIDIA license client configuration (gridd.conf / license token) and restart nvidia-gridd.",
        [
            "Check the license state: `nvidia-smi -q | grep -i -A2 license`.",
            "Fix the license server address or client token and restart the licensing service (`systemctl restart nvidia-gridd`), or ask the cloud provider.",
        ],
        alt="cudart",
    ),
    Group(
        "system-not-ready",
        ["cudaErrorSystemNotReady"],
        "CUDA reports the system is not initialised (NVSwitch Fabric Manager not running)",
        "On NVSwitch systems (HGX/DGX A100, H100, H200, B200) CUDA cannot start until the NVIDIA Fabric Manager has "
        "configured the NVLink fabric. The service is not running, failed to start, or its version does not match "
        "the driver's exactly. It also appears while the driver is still initialising right after boot.",
        "The NVLink fabric is not ready: start nvidia-fabricmanager (its version must equal the driver's) and check `nvidia-smi -q | grep -i -A2 fabric`.",
        [
            "Check the service: `systemctl status nvidia-fabricmanager` and `journalctl -u nvidia-fabricmanager`; start it with `sudo systemctl enable --now nvidia-fabricmanager`.",
            "Install the Fabric Manager package of exactly the driver's version (`nvidia-smi` driver version = `nv-fabricmanager --version`).",
            "Check the fabric state per GPU: `nvidia-smi -q | grep -i -A2 fabric` must show `Completed` / `Success`.",
        ],
        alt="devcount",
    ),
    Group(
        "system-driver-mismatch",
        ["cudaErrorSystemDriverMismatch"],
        "The NVIDIA kernel module and the user-space driver libraries do not match",
        "The CUDA driver library (libcuda.so) in use is from another driver release than the loaded NVIDIA kernel "
        "module. Usually the driver was upgraded without a reboot, or a container image carries its own libcuda "
        "(or cuda-compat libraries) that do not match the host's kernel module.",
        "The driver's user-space libraries and kernel module differ: reboot (or reload the nvidia modules) after a driver upgrade, and do not ship a libcuda inside the container image.",
        [
            "Compare `cat /proc/driver/nvidia/version` (kernel module) with the libcuda in use (`ls -l $(ldconfig -p | grep libcuda.so.1 | head -1 | awk '{print $NF}')`).",
            "After a driver upgrade, reboot the node or reload the kernel modules.",
            "In containers, remove any libcuda.so / compat libraries baked into the image (or from LD_LIBRARY_PATH) so the host's driver libraries mounted by the NVIDIA runtime are used.",
        ],
        alt="devcount",
    ),
    Group(
        "compat-not-supported",
        ["cudaErrorCompatNotSupportedOnDevice"],
        "CUDA forward compatibility was used on a GPU that does not support it",
        "The process loaded the CUDA forward-compatibility libraries (the cuda-compat package, e.g. "
        "/usr/local/cuda/compat on LD_LIBRARY_PATH, common in NGC-based images) to run a newer CUDA on an older "
        "driver, but forward compatibility only works on data-center GPUs; GeForce/RTX and most workstation GPUs "
        "refuse it.",
        "Forward-compatibility libraries are loaded on a GPU that cannot use them: remove the cuda-compat directory from LD_LIBRARY_PATH (or the image) and upgrade the host driver instead.",
        [
            "Check `echo $LD_LIBRARY_PATH` and `ldconfig -p | grep libcuda` for a `compat` directory and remove it.",
            "Upgrade the host's NVIDIA driver to one that supports the image's CUDA version, or use an image built for an older CUDA.",
        ],
        alt="devcount",
    ),
    Group(
        "unknown-error",
        ["cudaErrorUnknown"],
        "CUDA returned an unknown error (often a driver or GPU fault)",
        "The driver reported an error it could not classify. In practice it points at the environment: the GPU fell "
        "off the bus or hit an Xid error, the driver is in a bad state, a container lost access to the GPU device "
        "nodes (for example after `systemctl daemon-reload` on the host with cgroup device rules), or CUDA_VISIBLE_DEVICES "
        "was changed after CUDA was initialised. On WSL it often means an unsupported feature.",
        "CUDA returned 'unknown error': check `nvidia-smi` and dmesg for GPU faults; in a container restart it (device access may have been revoked); do not change CUDA_VISIBLE_DEVICES after start.",
        [
            "Run `nvidia-smi` in the same environment; if it shows `Failed to initialize NVML: Unknown Error`, restart the container (and see the NVIDIA container toolkit notes on systemd cgroup reloads).",
            DMESG,
            "Reset the GPU (`nvidia-smi -r -i <gpu>`) or reboot the node if the driver is stuck; drain the node if Xid errors repeat.",
            "Set CUDA_VISIBLE_DEVICES before starting Python, never after torch initialised CUDA.",
        ],
        alt="triton",
        extra=[r"CUDA unknown error - this may be due to an incorrectly set up environment"],
        extra_examples=[
            "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: CUDA unknown error - "
            "this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. "
            "Setting the available devices to be zero. (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)"
        ],
    ),
    Group(
        "operating-system",
        ["cudaErrorOperatingSystem"],
        "An OS call made by CUDA failed (often CUDA IPC or shared memory in a container)",
        "CUDA asked the operating system for something that failed or is not supported here. With vLLM this is "
        "usually inter-process GPU memory sharing (CUDA IPC, used by the custom all-reduce and by worker processes) "
        "in a container without `--ipc=host` or with a small /dev/shm, under WSL, or in a sandbox that blocks "
        "the needed system calls.",
        "A CUDA OS call failed: run the container with `--ipc=host` (or a large `--shm-size`), and with tensor parallelism try `--disable-custom-all-reduce`.",
        [
            "Docker: add `--ipc=host` (or `--shm-size=16g`); Kubernetes: mount an emptyDir with `medium: Memory` at /dev/shm.",
            CUSTOM_AR,
            "Under WSL, features that need Linux IPC may be missing; run on native Linux if it persists.",
        ],
        alt="customar",
    ),
    Group(
        "not-permitted",
        ["cudaErrorNotPermitted"],
        "A CUDA operation was not permitted (IPC, NVLink/IMEX memory sharing or stream capture)",
        "The driver refused the operation for this process. With vLLM it mostly comes from sharing GPU memory "
        "between processes: CUDA IPC handles opened by another container or user, NCCL's cuMem-based buffers across "
        "processes without the rights to import them (multi-node NVLink needs IMEX channels), or the custom "
        "all-reduce opening peer buffers. It can also be a call made during CUDA graph capture.",
        "The driver refused a memory-sharing operation: run the ranks in one container with --ipc=host, try NCCL_CUMEM_ENABLE=0 and --disable-custom-all-reduce, or --enforce-eager if it happens during graph capture.",
        [
            "Run all ranks of a node in the same container/pod with `--ipc=host` (and the same user).",
            "Set `NCCL_CUMEM_ENABLE=0` if the failing line comes from NCCL; on GB200/multi-node NVLink systems make the IMEX channels available to the container (`/dev/nvidia-caps-imex-channels`).",
            CUSTOM_AR,
            EAGER,
        ],
        alt="nccl",
    ),
    Group(
        "not-supported",
        ["cudaErrorNotSupported"],
        "A CUDA operation is not supported on this GPU, driver or platform",
        "The call exists but this GPU, driver, virtualisation layer or OS does not support it. With vLLM the usual "
        "suspects are virtual-memory allocation APIs (sleep mode's cumem allocator, PyTorch `expandable_segments`, "
        "NCCL cuMem buffers) under WSL, vGPU or MIG, and peer-to-peer or multicast features on GPUs without them.",
        "The platform does not support this CUDA feature: turn off the feature that needs it (--enable-sleep-mode, expandable_segments in PYTORCH_CUDA_ALLOC_CONF, NCCL_CUMEM_ENABLE=0, --disable-custom-all-reduce).",
        [
            "If vLLM runs with `--enable-sleep-mode`, drop it (its allocator needs CUDA virtual memory management).",
            "Remove `expandable_segments:True` from `PYTORCH_CUDA_ALLOC_CONF`, and set `NCCL_CUMEM_ENABLE=0` if the line comes from NCCL.",
            CUSTOM_AR,
            "Under WSL or vGPU some features are missing; run on a bare-metal Linux GPU if it persists.",
        ],
        alt="driver",
    ),
    Group(
        "mps",
        [
            "cudaErrorMpsConnectionFailed",
            "cudaErrorMpsRpcFailure",
            "cudaErrorMpsServerNotReady",
            "cudaErrorMpsMaxClientsReached",
            "cudaErrorMpsMaxConnectionsReached",
            "cudaErrorMpsClientTerminated",
            "cudaErrorCdpNotSupported",
        ],
        "The CUDA MPS (Multi-Process Service) daemon or server failed",
        "The process runs as a client of NVIDIA MPS (CUDA_MPS_PIPE_DIRECTORY is set, or the GPU is shared through an "
        "MPS daemon, as Kubernetes GPU sharing does), and the MPS connection failed: the control daemon is not "
        "running or not reachable from this container, the server hit its client or connection limit, or it "
        "terminated the client. Some features (CUDA dynamic parallelism) are not available under MPS at all.",
        "CUDA MPS failed: check the MPS control daemon (nvidia-cuda-mps-control) and its pipe directory, lower the number of MPS clients, or run vLLM without MPS.",
        [
            "Check that the MPS control daemon runs (`echo get_server_list | nvidia-cuda-mps-control`) and that `CUDA_MPS_PIPE_DIRECTORY`/`CUDA_MPS_LOG_DIRECTORY` point at its directories inside the container.",
            "If the client limit was reached, run fewer processes on the GPU (vLLM uses one per GPU plus helpers) or raise the limit.",
            "Run vLLM without MPS (unset CUDA_MPS_PIPE_DIRECTORY, or stop the daemon / GPU sharing for this node) if it keeps failing.",
        ],
        alt="cudart",
    ),
    # ---- hardware faults ----
    Group(
        "ecc-uncorrectable",
        ["cudaErrorECCUncorrectable"],
        "Uncorrectable ECC memory error on the GPU (hardware fault)",
        "The GPU detected a memory error it could not correct. This is a hardware fault, not a vLLM problem: the "
        "memory page is retired (or row-remapped) and the GPU usually needs a reset before it is reliable again; "
        "repeated errors mean failing GPU memory.",
        "Uncorrectable ECC error: a GPU hardware fault. Drain the node, reset the GPU (or reboot) and check `nvidia-smi -q -d ECC,ROW_REMAPPER`; replace the GPU if errors recur.",
        [
            "Take the node out of service (cordon/drain it) so that the scheduler does not place new work on it.",
            "Inspect `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and `dmesg -T | grep -i xid` (Xid 48, 63, 64, 94, 95).",
            "Reset the GPU (`nvidia-smi -r -i <gpu>`) or reboot to apply pending row remapping; if a remapping failure or repeated errors show, open an RMA.",
        ],
        alt="nccl",
    ),
    Group(
        "nvlink-uncorrectable",
        ["cudaErrorNvlinkUncorrectable"],
        "Uncorrectable NVLink error (hardware or fabric fault)",
        "An NVLink connection between GPUs (or to an NVSwitch) reported an error it could not recover from while a "
        "kernel was running. It is a hardware, cabling or fabric problem; tensor-parallel traffic (NCCL, custom "
        "all-reduce) is what usually exercises the link.",
        "Uncorrectable NVLink error: a hardware/fabric fault. Drain the node, check `nvidia-smi nvlink -s` / `-e` and dmesg Xid 74, reset the GPUs or reboot.",
        [
            "Take the node out of service.",
            "Check the links: `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e` (error counters), `dmesg -T | grep -i xid` (Xid 74); on NVSwitch systems check the Fabric Manager log.",
            "Reset the GPUs or reboot; if the same link fails again, report it to the hardware vendor.",
        ],
        alt="cudart",
    ),
    Group(
        "contained-error",
        ["cudaErrorContained"],
        "A contained GPU error: invalid peer memory access over NVLink or a hardware error",
        "The GPU contained an error to this process: either a kernel accessed another GPU's memory over NVLink "
        "illegally (a kernel or communication bug, e.g. in a custom all-reduce) or a hardware error occurred. The "
        "CUDA context is lost; other processes on the GPU are unaffected.",
        "A contained GPU error (peer access over NVLink or hardware): check dmesg for Xid errors, retry with --disable-custom-all-reduce and CUDA_LAUNCH_BLOCKING=1, drain the node if Xids show hardware faults.",
        [
            DMESG,
            CUSTOM_AR,
            BLOCKING,
            "If Xid errors point at hardware, drain the node and reset the GPU.",
        ],
        kernel=True,
        alt="cudart",
    ),
    # ---- kernels and launches ----
    Group(
        "kernel-fault",
        [
            "cudaErrorIllegalInstruction",
            "cudaErrorInvalidPc",
            "cudaErrorInvalidAddressSpace",
            "cudaErrorHardwareStackError",
            "cudaErrorPriorLaunchFailure",
            "cudaErrorTensorMemoryLeak",
        ],
        "A CUDA kernel faulted while running (illegal instruction, invalid PC, stack error)",
        "A GPU kernel trapped: it executed an instruction the GPU cannot run, jumped to an invalid address, overflowed "
        "its stack or left state behind. This is a kernel bug or a kernel compiled for another GPU architecture "
        "(a custom attention, MoE, quantized GEMM or Triton kernel, or a CUDA graph replaying a stale kernel). The "
        "CUDA context is unusable afterwards, and because errors are reported asynchronously the Python frame shown "
        "may not be the faulty kernel.",
        "A GPU kernel faulted: rerun with CUDA_LAUNCH_BLOCKING=1 to name it, then avoid it with --enforce-eager, another attention backend, or a vLLM upgrade.",
        [BLOCKING, EAGER, *BACKEND, CUSTOM_AR, UPGRADE],
        kernel=True,
        alt="triton",
    ),
    Group(
        "launch-out-of-resources",
        ["cudaErrorLaunchOutOfResources"],
        "A CUDA kernel launch asked for more registers or threads than the GPU has",
        "A kernel was launched with a block size whose register or shared-memory needs exceed what one "
        "multiprocessor of this GPU provides. It is a mismatch between a kernel's launch configuration and the GPU: "
        "typically a Triton or custom kernel tuned for a newer GPU, a debug build, or an unusual head size / "
        "tile configuration.",
        "A kernel launch needs more resources than this GPU has: try another attention backend or --enforce-eager, check the kernel's build matches the GPU, upgrade vLLM.",
        [
            BLOCKING,
            *BACKEND,
            EAGER,
            "Clear stale kernel caches after changing GPUs or versions (`rm -rf ~/.triton/cache ~/.cache/vllm/torch_compile_cache`).",
            UPGRADE,
        ],
        kernel=True,
        alt="triton",
    ),
    Group(
        "launch-timeout",
        ["cudaErrorLaunchTimeout"],
        "A CUDA kernel ran too long and was killed by the display watchdog",
        "The GPU also drives a display (or runs under Windows/WSL), and the operating system's watchdog killed a "
        "kernel that ran longer than its limit (a few seconds). Long prefill kernels of large models hit it on "
        "desktop GPUs.",
        "The display watchdog killed a long kernel: run vLLM on a GPU without a display attached (or stop the X server), or raise the Windows TDR delay under WSL; smaller --max-num-batched-tokens shortens kernels.",
        [
            "Use a GPU that drives no display, or stop the desktop session (`sudo systemctl isolate multi-user.target`).",
            "Under WSL/Windows raise `TdrDelay` in the registry (GraphicsDrivers key) and reboot.",
            "Shorten single kernels with a smaller `--max-num-batched-tokens`.",
        ],
        alt="cudart",
    ),
    Group(
        "invalid-launch-configuration",
        ["cudaErrorInvalidConfiguration", "cudaErrorCooperativeLaunchTooLarge", "cudaErrorInvalidClusterSize"],
        "A CUDA kernel was launched with an invalid grid/block configuration",
        "A kernel launch used grid, block, cluster or shared-memory sizes this GPU does not allow (for example a "
        "grid dimension over its limit for a very large batch, more shared memory than the GPU has, or a cluster "
        "launch on a GPU before Hopper). It is a kernel bug or a kernel selected for the wrong GPU, triggered by the "
        "shapes of this model or batch.",
        "A kernel launch configuration is invalid for this GPU/shape: rerun with CUDA_LAUNCH_BLOCKING=1 to name the kernel, try another attention backend, a smaller --max-num-batched-tokens, or a vLLM upgrade.",
        [BLOCKING, *BACKEND, "Try a smaller `--max-num-batched-tokens` / `--max-num-seqs` to see whether the batch size triggers it.", UPGRADE],
        alt="flashattn",
    ),
    Group(
        "invalid-device-function",
        ["cudaErrorInvalidDeviceFunction"],
        "No CUDA kernel for this GPU in the loaded binary (invalid device function)",
        "A kernel was launched that the loaded binary does not contain for this GPU's architecture: PyTorch, vLLM or "
        "an extension (FlashAttention, FlashInfer, xformers, a quantization kernel) was compiled for other compute "
        "capabilities. The same situation as 'no kernel image is available'.",
        "The binary has no kernel for this GPU: install a PyTorch/vLLM build that targets its compute capability, or build vLLM with TORCH_CUDA_ARCH_LIST set to it.",
        [
            "Check the GPU (`nvidia-smi --query-gpu=name,compute_cap --format=csv`) against `python -c 'import torch; print(torch.version.cuda, torch.cuda.get_arch_list())'`.",
            "Install wheels or an image built for that architecture (e.g. CUDA 12.8+ builds for Blackwell), or build from source with `TORCH_CUDA_ARCH_LIST=<cc>`.",
            *BACKEND,
        ],
        alt="cudart",
    ),
    Group(
        "ptx-unsupported",
        ["cudaErrorUnsupportedPtxVersion", "cudaErrorInvalidPtx"],
        "The driver cannot JIT-compile a kernel's PTX (built with a newer CUDA than the driver)",
        "A kernel shipped only as PTX (no machine code for this GPU) and the driver's JIT compiler could not build "
        "it, usually because the PTX was produced by a newer CUDA toolkit than the installed driver understands. "
        "Triton, FlashInfer and torch.compile generate such kernels with the CUDA version of their own toolchain.",
        "The driver is too old for this kernel's PTX: upgrade the NVIDIA driver to one that supports the toolchain's CUDA version, or use a build whose CUDA version the driver supports.",
        [
            VERSIONS,
            "Upgrade the NVIDIA driver, or install torch/vLLM/Triton/FlashInfer built for an older CUDA.",
            "Clear JIT caches built with another toolchain: `rm -rf ~/.triton/cache ~/.cache/flashinfer ~/.cache/vllm/torch_compile_cache`.",
        ],
        alt="triton",
    ),
    Group(
        "jit-unavailable",
        ["cudaErrorJitCompilerNotFound", "cudaErrorJitCompilationDisabled"],
        "The CUDA PTX JIT compiler is missing or disabled",
        "A kernel needed just-in-time compilation from PTX, but the driver's JIT compiler library "
        "(libnvidia-ptxjitcompiler) is not present in this environment, or JIT compilation was turned off "
        "(CUDA_DISABLE_PTX_JIT=1). Containers that mount only part of the driver libraries lack the JIT compiler.",
        "PTX JIT is unavailable: unset CUDA_DISABLE_PTX_JIT, and make sure the driver's libnvidia-ptxjitcompiler is mounted (NVIDIA container runtime with the compute capability).",
        [
            "Unset `CUDA_DISABLE_PTX_JIT` if it is set.",
            "Check `ldconfig -p | grep ptxjitcompiler`; in containers set `NVIDIA_DRIVER_CAPABILITIES=compute,utility` (or `all`) so the runtime mounts it.",
            "Or install binaries with machine code (SASS) for this GPU so no JIT is needed.",
        ],
        alt="cudart",
    ),
    Group(
        "invalid-kernel-image",
        ["cudaErrorInvalidKernelImage", "cudaErrorInvalidSource", "cudaErrorSharedObjectInitFailed"],
        "A GPU kernel binary is invalid or could not be loaded",
        "CUDA could not load a kernel binary (cubin/fatbin/module): the file is corrupted or truncated, was built "
        "for an incompatible CUDA version, or a JIT cache holds a kernel compiled elsewhere. Triton, FlashInfer and "
        "torch.compile caches shared between machines or versions are the usual source.",
        "A kernel binary could not be loaded: clear the JIT caches (Triton, FlashInfer, torch.compile) and reinstall the extension that failed.",
        [
            "Clear kernel caches: `rm -rf ~/.triton/cache ~/.cache/flashinfer ~/.cache/vllm/torch_compile_cache` (and any shared cache directory set by TRITON_CACHE_DIR / VLLM_CACHE_ROOT).",
            "Reinstall the failing package (`pip install --force-reinstall --no-deps vllm` or the extension named in the traceback).",
            VERSIONS,
        ],
        alt="cudart",
        skip_prefixes=[TRITON],  # compile.triton-cuda-error's example
    ),
    Group(
        "peer-access",
        ["cudaErrorPeerAccessUnsupported", "cudaErrorTooManyPeers", "cudaErrorPeerAccessNotEnabled"],
        "GPU peer-to-peer access is not available between these GPUs",
        "A GPU tried to read another GPU's memory directly (peer-to-peer), which this topology does not allow or "
        "was not enabled: GPUs on different PCIe root complexes or NUMA nodes, consumer GPUs with P2P disabled, "
        "virtual machines without P2P, or more peers than the hardware supports. vLLM's custom all-reduce and NCCL "
        "use peer access with tensor parallelism.",
        "Peer-to-peer access between the GPUs is not available: start vLLM with --disable-custom-all-reduce, and set NCCL_P2P_DISABLE=1 if NCCL fails too.",
        [
            "Add `--disable-custom-all-reduce`.",
            "If the error comes from NCCL, set `NCCL_P2P_DISABLE=1` (traffic then goes through host memory; slower but correct).",
            "Check the topology with `nvidia-smi topo -m` and `nvidia-smi topo -p2p r`; inside VMs enable P2P in the hypervisor or accept the fallback.",
        ],
        alt="customar",
    ),
    Group(
        "stream-capture",
        [
            "cudaErrorStreamCaptureUnsupported",
            "cudaErrorStreamCaptureInvalidated",
            "cudaErrorStreamCaptureMerge",
            "cudaErrorStreamCaptureUnmatched",
            "cudaErrorStreamCaptureUnjoined",
            "cudaErrorStreamCaptureIsolation",
            "cudaErrorStreamCaptureImplicit",
            "cudaErrorCapturedEvent",
            "cudaErrorStreamCaptureWrongThread",
            "cudaErrorGraphExecUpdateFailure",
        ],
        "A CUDA graph capture failed (an operation not allowed while capturing)",
        "vLLM captures CUDA graphs of the model at start-up (and replays them for decoding). During capture only "
        "asynchronous GPU work on the capturing stream is allowed; something synchronised, allocated, copied to the "
        "host, used another stream, or an earlier error invalidated the capture. A custom op or kernel that is not "
        "graph-safe for this model or configuration is the usual cause.",
        "CUDA graph capture failed: start vLLM with --enforce-eager (no CUDA graphs) to get running, and report the model and configuration.",
        [
            EAGER,
            "Or keep torch.compile and drop only the graphs: `--compilation-config '{\"cudagraph_mode\": \"NONE\"}'` (vLLM 0.10.2+).",
            "If the capture error names NCCL or a custom all-reduce, try `--disable-custom-all-reduce`.",
            UPGRADE,
        ],
        alt="cudart",
    ),
    Group(
        "invalid-value",
        ["cudaErrorInvalidValue"],
        "A CUDA call got an invalid argument",
        "A CUDA API call rejected one of its parameters. It is generic: in vLLM it most often comes from CUDA IPC "
        "(opening another process's memory handle in the custom all-reduce, or across containers without "
        "`--ipc=host`), from a kernel launch with an invalid configuration for this GPU, or from a memory copy "
        "with a bad pointer after an earlier failure.",
        "A CUDA call got an invalid argument: rerun with CUDA_LAUNCH_BLOCKING=1 to find the call; with tensor parallelism try --disable-custom-all-reduce and --ipc=host for containers.",
        [BLOCKING, CUSTOM_AR, "In containers, run with `--ipc=host` so CUDA IPC handles can be opened by the other ranks.", *BACKEND],
        alt="customar",
        skip_prefixes=[TRITON],  # compile.triton-cuda-error's example
    ),
    Group(
        "invalid-handle",
        ["cudaErrorInvalidResourceHandle", "cudaErrorContextIsDestroyed", "cudaErrorDeviceUninitialized"],
        "A CUDA stream, event or context handle is invalid (used on the wrong device or after it was destroyed)",
        "A CUDA object (stream, event, graph, context) was used where it does not belong: on another GPU than the "
        "one it was created on, in a forked child process, or after its context was destroyed (often during "
        "shutdown after another error, or after an earlier fault reset the context).",
        "A CUDA handle is invalid: look for an earlier error that destroyed the context; use spawn for workers (VLLM_WORKER_MULTIPROC_METHOD=spawn); rerun with CUDA_LAUNCH_BLOCKING=1.",
        [
            "Look above for the first CUDA error: a fault there destroys the context, and later calls fail with this one.",
            "Set `VLLM_WORKER_MULTIPROC_METHOD=spawn`.",
            BLOCKING,
            EAGER,
        ],
        alt="cudart",
    ),
    # ---- codes owned elsewhere for the torch form ----
    Group(
        "illegal-address",
        ["cudaErrorIllegalAddress"],
        "A GPU kernel made an illegal memory access",
        "A GPU kernel read or wrote memory outside its buffers (CUDA_ERROR_ILLEGAL_ADDRESS). This pattern covers the "
        "forms other than PyTorch's `CUDA error: ...` (device.cuda-illegal-memory-access): Triton, NCCL, vLLM's "
        "custom all-reduce and FlashAttention checks, cupy and cuda-python. The kernel is usually buggy for this "
        "model, quantization or attention backend, or the fault comes from communication kernels; the CUDA context "
        "is unusable afterwards.",
        "A kernel accessed invalid memory: rerun with CUDA_LAUNCH_BLOCKING=1 to find it, then avoid it with --enforce-eager, another attention backend, --disable-custom-all-reduce, or a vLLM upgrade.",
        [BLOCKING, EAGER, *BACKEND, CUSTOM_AR, UPGRADE],
        kernel=True,
        alt="triton",
        owner="device.cuda-illegal-memory-access",
    ),
    Group(
        "assert",
        ["cudaErrorAssert"],
        "A device-side assertion failed in a GPU kernel",
        "An assertion inside a GPU kernel failed (CUDA_ERROR_ASSERT), typically an index out of range (token id "
        "beyond the vocabulary, invalid sampling values). This pattern covers the forms other than PyTorch's "
        "`CUDA error: device-side assert triggered` (device.cuda-device-side-assert).",
        "A device-side assert fired: rerun with CUDA_LAUNCH_BLOCKING=1 to locate it; check tokenizer/model vocabulary and request sampling parameters.",
        [
            BLOCKING,
            "Check that the tokenizer matches the model (vocab size) and that requests send no out-of-range token ids or extreme logit_bias.",
            *BACKEND,
        ],
        kernel=True,
        alt="triton",
        owner="device.cuda-device-side-assert",
    ),
    Group(
        "no-kernel-image",
        ["cudaErrorNoKernelImageForDevice"],
        "No GPU kernel image for this GPU's architecture",
        "A binary has no kernel for this GPU's compute capability (CUDA_ERROR_NO_BINARY_FOR_GPU). This pattern covers "
        "the forms other than PyTorch's `CUDA error: no kernel image is available ...` (device.cuda-no-kernel-image).",
        "The binaries were not built for this GPU: install a PyTorch/vLLM build that targets its compute capability, or build with TORCH_CUDA_ARCH_LIST.",
        [
            "Check `nvidia-smi --query-gpu=name,compute_cap --format=csv` against `python -c 'import torch; print(torch.cuda.get_arch_list())'`.",
            "Install a build for that architecture (e.g. CUDA 12.8+ for Blackwell) or build vLLM with `TORCH_CUDA_ARCH_LIST=<cc>`.",
            *BACKEND,
        ],
        alt="triton",
        owner="device.cuda-no-kernel-image",
    ),
    Group(
        "launch-failed",
        ["cudaErrorLaunchFailure"],
        "A GPU kernel crashed (unspecified launch failure)",
        "A kernel aborted while running (CUDA_ERROR_LAUNCH_FAILED), the GPU's segmentation fault. This pattern covers "
        "the forms other than PyTorch's `CUDA error: unspecified launch failure` (kernels.cuda-unspecified-launch-failure). "
        "Kernel bugs, the driver's watchdog and hardware faults (Xid errors) cause it.",
        "A kernel crashed: check dmesg for Xid errors, rerun with CUDA_LAUNCH_BLOCKING=1, and rule out CUDA graphs with --enforce-eager.",
        [DMESG, BLOCKING, EAGER, *BACKEND, UPGRADE],
        kernel=True,
        alt="nccl",
        owner="kernels.cuda-unspecified-launch-failure",
    ),
    Group(
        "misaligned-address",
        ["cudaErrorMisalignedAddress"],
        "A GPU kernel used a misaligned address",
        "A kernel accessed memory at an address not aligned for the access width (CUDA_ERROR_MISALIGNED_ADDRESS), a "
        "kernel bug for this tensor shape or offset. This pattern covers the forms other than PyTorch's `CUDA error: "
        "misaligned address` (kernels.cuda-misaligned-address).",
        "A kernel hit a misaligned address: rerun with CUDA_LAUNCH_BLOCKING=1 to name it, then try another attention backend, --enforce-eager or another --tensor-parallel-size.",
        [BLOCKING, *BACKEND, EAGER, UPGRADE],
        kernel=True,
        alt="flashattn",
        owner="kernels.cuda-misaligned-address",
    ),
    Group(
        "out-of-memory",
        ["cudaErrorMemoryAllocation"],
        "GPU out of memory reported by a CUDA call outside PyTorch's allocator",
        "A CUDA allocation made outside PyTorch's caching allocator failed (CUDA_ERROR_OUT_OF_MEMORY): NCCL buffers, "
        "Triton or FlashInfer workspaces, CUDA IPC buffers of the custom all-reduce, or a cupy/cuda-python call. "
        "PyTorch's own `CUDA error: out of memory` and vLLM's cumem allocator message are covered in memory.toml. "
        "vLLM hands most of the GPU to its KV cache, so memory other libraries allocate later can run out.",
        "GPU memory ran out outside PyTorch's allocator: lower --gpu-memory-utilization (e.g. 0.85) to leave room for NCCL/Triton/custom all-reduce buffers, and stop other processes on the GPU.",
        [
            "Restart with a lower `--gpu-memory-utilization` (e.g. 0.85) so that libraries allocating after vLLM's budget have room.",
            "Check `nvidia-smi` for other processes holding memory on the GPU.",
            "For NCCL buffers, fewer channels help (`NCCL_MAX_NCHANNELS`, `NCCL_BUFFSIZE`); `--disable-custom-all-reduce` frees the custom all-reduce buffers.",
        ],
        alt="nccl",
        owner="memory.cuda-error-oom",
        owner_cumem=True,
    ),
]

# Codes that share one generic pattern: rarely printed by a vLLM server, or with no fix beyond "a CUDA
# call failed" (texture/surface/graphics interop, profiler, device emulation, ...).
GENERIC = {
    "cudaErrorProfilerDisabled", "cudaErrorProfilerNotInitialized", "cudaErrorProfilerAlreadyStarted",
    "cudaErrorProfilerAlreadyStopped", "cudaErrorInvalidPitchValue", "cudaErrorInvalidSymbol",
    "cudaErrorInvalidHostPointer", "cudaErrorInvalidDevicePointer", "cudaErrorInvalidTexture",
    "cudaErrorInvalidTextureBinding", "cudaErrorInvalidChannelDescriptor", "cudaErrorInvalidMemcpyDirection",
    "cudaErrorAddressOfConstant", "cudaErrorTextureFetchFailed", "cudaErrorTextureNotBound",
    "cudaErrorSynchronizationError", "cudaErrorInvalidFilterSetting", "cudaErrorInvalidNormSetting",
    "cudaErrorMixedDeviceExecution", "cudaErrorNotYetImplemented", "cudaErrorMemoryValueTooLarge",
    "cudaErrorInvalidSurface", "cudaErrorDuplicateVariableName", "cudaErrorDuplicateTextureName",
    "cudaErrorDuplicateSurfaceName", "cudaErrorIncompatibleDriverContext", "cudaErrorMissingConfiguration",
    "cudaErrorLaunchMaxDepthExceeded", "cudaErrorLaunchFileScopedTex", "cudaErrorLaunchFileScopedSurf",
    "cudaErrorSyncDepthExceeded", "cudaErrorLaunchPendingCountExceeded", "cudaErrorSoftwareValidityNotEstablished",
    "cudaErrorStartupFailure", "cudaErrorMapBufferObjectFailed", "cudaErrorUnmapBufferObjectFailed",
    "cudaErrorArrayIsMapped", "cudaErrorAlreadyMapped", "cudaErrorAlreadyAcquired", "cudaErrorNotMapped",
    "cudaErrorNotMappedAsArray", "cudaErrorNotMappedAsPointer", "cudaErrorUnsupportedLimit",
    "cudaErrorInvalidGraphicsContext", "cudaErrorUnsupportedExecAffinity", "cudaErrorUnsupportedDevSideSync",
    "cudaErrorFileNotFound", "cudaErrorSharedObjectSymbolNotFound", "cudaErrorIllegalState", "cudaErrorLossyQuery",
    "cudaErrorSymbolNotFound", "cudaErrorNotReady", "cudaErrorLaunchIncompatibleTexturing",
    "cudaErrorPeerAccessAlreadyEnabled", "cudaErrorSetOnActiveProcess", "cudaErrorHostMemoryAlreadyRegistered",
    "cudaErrorHostMemoryNotRegistered", "cudaErrorCdpVersionMismatch", "cudaErrorTimeout", "cudaErrorExternalDevice",
    "cudaErrorFunctionNotLoaded", "cudaErrorInvalidResourceType", "cudaErrorInvalidResourceConfiguration",
    "cudaErrorApiFailureBase",
}
SKIP = {"cudaSuccess", "CUDA_SUCCESS"}


# --- reading the spec ----------------------------------------------------------------------------------------
@dataclass
class Code:
    value: int
    name: str  # runtime name, or "" for a driver-only code
    driver: str = ""  # CUDA_ERROR_* name, "" when the driver has no code of this number
    strings: list[str] = field(default_factory=list)  # cudaGetErrorString text, every version seen


def runtime_enum(header: str) -> list[tuple[str, int]]:
    text = Path(header).read_text()
    body = re.search(r"enum __device_builtin__ cudaError\s*\{(.*?)\};", text, re.S)
    if body is None:
        raise SystemExit(f"{header}: no `enum cudaError` found")
    return [(m[1], int(m[2])) for m in re.finditer(r"\b(cuda(?:Error\w*|Success))\s*=\s*(\d+)", body[1])]


def driver_enum(header: str) -> list[tuple[str, int]]:
    text = Path(header).read_text()
    body = re.search(r"typedef enum cudaError_enum\s*\{(.*?)\}\s*CUresult;", text, re.S)
    if body is None:
        raise SystemExit(f"{header}: no CUresult enum found")
    return [(m[1], int(m[2])) for m in re.finditer(r"\b(CUDA_(?:ERROR_\w+|SUCCESS))\s*=\s*(\d+)", body[1])]


def default_runtimes() -> list[tuple[str, str]]:
    pairs = []
    for lib in sorted(glob.glob("/usr/local/cuda*/lib*/libcudart.so")) + sorted(
        glob.glob("/work/pkg-src/cuda1*/nvidia/cuda_runtime/lib/libcudart.so.*")
    ):
        root = Path(lib).resolve().parent.parent
        header = root / "include" / "driver_types.h"
        if header.exists() and (str(root), str(header)) not in [(str(Path(a).parent.parent), b) for a, b in pairs]:
            pairs.append((lib, str(header)))
    return pairs


def read_codes(runtimes: list[tuple[str, str]], drivers: list[str]) -> tuple[dict[int, Code], list[str]]:
    codes: dict[int, Code] = {}
    labels = []
    for lib_path, header in runtimes:
        lib = ctypes.CDLL(lib_path)
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        lib.cudaGetErrorName.restype = ctypes.c_char_p
        api = Path(header).with_name("cuda_runtime_api.h")
        found = re.search(r"#define CUDART_VERSION\s+(\d+)", api.read_text()) if api.exists() else None
        version = int(found[1]) if found else 0
        labels.append(f"libcudart {version // 1000}.{version % 1000 // 10} ({Path(lib_path).name})")
        for name, value in runtime_enum(header):
            if lib.cudaGetErrorName(value).decode() != name:
                raise SystemExit(f"{lib_path}: cudaGetErrorName({value}) is not {name}")
            text = lib.cudaGetErrorString(value).decode()
            code = codes.setdefault(value, Code(value, name))
            if text not in code.strings:
                code.strings.append(text)
    for header in drivers:
        labels.append(f"cuda.h {Path(header).parent.parent.name}")
        for name, value in driver_enum(header):
            code = codes.setdefault(value, Code(value, ""))
            code.driver = name
    return codes, labels


# --- building the patterns -------------------------------------------------------------------------------
def esc(text: str) -> str:
    """re.escape without escaping spaces and other harmless characters (the TOML stays readable)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def alternatives(codes: list[Code], group: Group | None) -> str:
    strings = sorted({s for c in codes for s in c.strings}, key=lambda s: (-len(s), s))
    body = "|".join(esc(s) for s in strings)
    prefixes = [p for p in OTHER_PREFIXES if group is None or p not in group.skip_prefixes]
    if group is None or group.owner is None:
        prefixes.insert(0, TORCH_PREFIX)
    if group is None or not group.owner_cumem:
        prefixes.append(CUMEM_PREFIX)
    # The string must end where the caller's message does: one code's text can begin another's
    # ("operation not permitted" / "operation not permitted when stream is capturing").
    parts = [f"(?:{'|'.join(prefixes)})(?:{body})(?=['\\n]|$| \\(| at )"] if strings else []
    # torch.cuda.CudaError: "<string> (<code>)"
    for c in codes:
        for s in c.strings:
            parts.append(rf"^{esc(s)} \({c.value}\)")
    names = sorted({c.name for c in codes if c.name} | {c.driver for c in codes if c.driver})
    if names:
        guard = r"(?<!Search for `)" if group is not None and group.owner else ""
        parts.append(guard + r"\b(?:" + "|".join(names) + r")\b")
    if group is not None:
        parts += group.extra
    return "|".join(parts)


def torch_message(code: Code, kernel: bool, form: str = "RuntimeError") -> str:
    s = code.strings[0]
    if code.name == "cudaErrorInvalidDevice":
        help_line = "GPU device may be out of range, do you have enough GPUs?"
    else:
        help_line = f"Search for `{code.name}' in {DOCS} for more information."
    suffix = ASYNC if kernel else LOGFILE
    return f"{form}: CUDA error: {s}\n{help_line}\n{suffix}\n{DSA}"


def alt_example(code: Code, alt: str) -> str:
    s = code.strings[0]
    name = code.driver or code.name
    if alt == "devcount":
        return (
            "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:182: UserWarning: CUDA initialization: "
            "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
            f"that might have already set an error? Error {code.value}: {s} (Triggered internally at "
            "/pytorch/c10/cuda/CUDAFunctions.cpp:119.)"
        )
    if alt == "nccl":
        return f"gpu-node-7:2231:2390 [1] NCCL WARN Cuda failure {code.value} '{s}'"
    if alt == "triton":
        return f"RuntimeError: Triton Error [CUDA]: {s}"
    if alt == "customar":
        return f"Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 '{s}'"
    if alt == "flashattn":
        return f"CUDA error (/workspace/csrc/flash_attn/src/flash_fwd_launch_template.h:188): {s}"
    if alt == "driver":
        return f"cupy_backends.cuda.api.driver.CUDADriverError: {name}: {s}"
    return f"RuntimeError: CUDART error: {s}"


def group_pattern(group: Group, codes: list[Code], labels: list[str], other: Code) -> dict:
    first = codes[0]
    names = ", ".join(f"{c.name or c.driver} ({c.value})" for c in codes)
    driver_names = [c.driver for c in codes if c.driver]
    examples = []
    if group.owner is None:
        examples.append(torch_message(first, group.kernel))
        examples.append(
            f"(Worker_TP1 pid=4711) ERROR 11-02 10:31:44 [multiproc_executor.py:839] torch.AcceleratorError: CUDA error: {first.strings[0]}"
        )
    else:
        examples.append(f"(EngineCore_DP0 pid=2207) ERROR 11-02 10:31:44 [core.py:1586] RuntimeError: CUDART error: {first.strings[0]}")
        if driver_names:
            examples.append(f"cupy_backends.cuda.api.driver.CUDADriverError: {driver_names[0]}: {first.strings[0]}")
        examples.append(
            "[rank0]:[E1102 10:31:44.123456789 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
            f"Process group watchdog thread terminated with exception: CUDA error: {first.strings[0]}"
        )
    examples.append(alt_example(first, group.alt))
    examples += group.extra_examples
    if len(codes) > 1:
        examples.append(f"torch.cuda.CudaError: {codes[-1].strings[0]} ({codes[-1].value})" if codes[-1].strings else f"RuntimeError: cuGetProcAddress failed: CUresult.{codes[-1].driver}")
    no_match = [f"RuntimeError: CUDA error: {other.strings[0]}"]
    if group.owner is not None:
        # the torch form belongs to the other pattern
        no_match.append(torch_message(first, group.kernel))
    else:
        no_match.append(f"(APIServer pid=311) INFO 11-02 10:31:40 [logger.py:72] Received request chatcmpl-9: prompt: 'what does \"{first.strings[0]}\" mean?'")
    owner_note = f" The torch form `CUDA error: <string>` is {group.owner}'s." if group.owner else ""
    return {
        "comment": None,
        "id": f"cuda.{group.slug}",
        "title": group.title,
        "severity": group.severity,
        "role": group.role,
        "where": "any",
        "match": alternatives(codes, group),
        "explanation": group.explanation + f" (Codes: {names}.)",
        "docs": DOCS,
        "summary": group.summary,
        "steps": group.steps,
        "file": "cuda runtime/driver",
        "function": "cudaGetErrorString / cuGetErrorString: " + ", ".join(filter(None, [c.name for c in codes] + driver_names)),
        "versions": "*",
        "checked": (
            f"strings from {', '.join(x for x in labels if x.startswith('libcudart'))} via ctypes; enums from driver_types.h and "
            f"{', '.join(x for x in labels if x.startswith('cuda.h'))}; torch form from c10/cuda/CUDAException.cpp and "
            f"CUDAMiscFunctions.cpp (pytorch main, code index); {VLLM_CHECKED}; triton 3.9.0 backends/nvidia/driver.c; "
            "NCCL checks.h CUDACHECK/CUCHECK (code index)." + owner_note
        ),
        "match_examples": examples,
        "no_match_examples": no_match,
    }


def generic_pattern(codes: list[Code], labels: list[str]) -> dict:
    names = ", ".join(f"{c.name or c.driver} ({c.value})" for c in codes)
    any_string = r"(?P<cuda_error>[^\n]*[^\s])"
    match = (
        rf"(?:CUDA error|CUDART error|CUDA driver error|Triton Error \[CUDA\]|CUDA runtime error): {any_string}"
        r"|Failed: Cuda error (?P<location>\S+:\d+) '(?P<cuda_error>[^'\n]+)'"
        rf"|CUDA error \((?P<location>[^()\n]+)\): {any_string}"
        r"|NCCL WARN Cuda failure (?:(?P<code>\d+) )?'(?P<cuda_error>[^'\n]+)'"
        r"|cudaGetDeviceCount\(\)[^\n]*? Error (?P<code>\d+): (?P<cuda_error>[^\n(]*[^\s(])"
        r"|\b(?P<cuda_error>CUDA_ERROR_[A-Z_]+)\b"
    )
    by_name = {c.name: c for c in codes}
    sym = by_name.get("cudaErrorSymbolNotFound") or codes[0]
    tex = by_name.get("cudaErrorSetOnActiveProcess") or codes[-1]
    return {
        "comment": (
            "Catch-all for every other CUDA runtime/driver error (priority -10: the per-code patterns above and the\n"
            "CUDA/cuBLAS patterns of device.toml, kernels.toml and memory.toml win)."
        ),
        "id": "cuda.error",
        "title": "CUDA call failed: {cuda_error}",
        "severity": "error",
        "role": "cause",
        "priority": -10,
        "where": "any",
        "match": match,
        "explanation": (
            "A CUDA runtime or driver call failed with an error no more specific pattern knows. CUDA errors are often "
            "reported by a later call than the one that caused them (kernel launches are asynchronous), and once a "
            "kernel has faulted every later call in the process fails too, so the first CUDA error in the log is the "
            "one to look at. The error text is the CUDA runtime's own description of the code. Codes grouped here: "
            + names + "."
        ),
        "docs": DOCS,
        "summary": "A CUDA call failed ({cuda_error}): rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing call, check the driver and GPU health, and try --enforce-eager.",
        "steps": [BLOCKING, VERSIONS, DMESG, EAGER, UPGRADE],
        "file": "cuda runtime/driver",
        "function": "cudaGetErrorString / cuGetErrorString (any code)",
        "versions": "*",
        "checked": f"codes from {', '.join(labels)}; prefixes as in the per-code patterns ({VLLM_CHECKED})",
        "match_examples": [
            f"RuntimeError: CUDA error: {sym.strings[0]}\nSearch for `{sym.name}' in {DOCS} for more information.\n{LOGFILE}\n{DSA}",
            f"RuntimeError: CUDART error: {tex.strings[0]}",
            "RuntimeError: cuGetProcAddress(cuMemcpyBatchAsync) failed: CUresult.CUDA_ERROR_CONTEXT_ALREADY_CURRENT",
            "gpu-node-7:2231:2390 [1] NCCL WARN Cuda failure 'a brand-new CUDA failure text'",
        ],
        "no_match_examples": [
            "(APIServer pid=311) INFO 11-02 10:31:40 [__init__.py:239] Automatically detected platform cuda.",
            "RuntimeError: CUDA driver version is older than required",
        ],
    }


HEADER = """# CUDA runtime (cudaError_t) and driver (CUresult) errors: one pattern per group of codes with the same
# meaning and fix, then a catch-all. GENERATED by `{command}`
# from {labels}: do not edit by hand, change bench/families/cuda_errors.py and rerun it.
# Each pattern matches the error string after every prefix a vLLM server's callers print it with (torch's
# `CUDA error: `, vLLM's `CUDART error: `, custom all-reduce, FlashAttention, cumem allocator, Triton, NCCL,
# torch's cudaGetDeviceCount() error, torch.cuda.CudaError) and the code's runtime and driver names.
# Where device.toml, kernels.toml or memory.toml owns a code's `CUDA error: <string>` form, the pattern here
# leaves that form out (see each pattern's `checked`).

"""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", action="append", default=[], metavar="LIBCUDART:DRIVER_TYPES_H")
    ap.add_argument("--driver", action="append", default=[], metavar="CUDA_H")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    runtimes = [tuple(r.split(":", 1)) for r in args.runtime] or default_runtimes()
    drivers = args.driver or sorted(glob.glob("/usr/local/cuda*/include/cuda.h"))[:1]
    if not runtimes or not drivers:
        raise SystemExit("no CUDA runtime or cuda.h found: pass --runtime and --driver")
    codes, labels = read_codes(runtimes, drivers)  # type: ignore[arg-type]

    by_name: dict[str, Code] = {}
    for c in codes.values():
        if c.name:
            by_name[c.name] = c
        if c.driver:
            by_name[c.driver] = c
    grouped: set[int] = set()
    blocks = []
    other = by_name["cudaErrorLossyQuery"]  # a code no group uses: the near-miss of every group
    for group in GROUPS:
        members = []
        for n in group.codes:
            if n not in by_name:
                print(f"note: {n} is not in these headers; skipped", file=sys.stderr)
                continue
            members.append(by_name[n])
            grouped.add(by_name[n].value)
        if members:
            blocks.append(group_pattern(group, members, labels, other))
    rest = []
    for value, c in sorted(codes.items()):
        if value in grouped or c.name in SKIP or c.driver in SKIP:
            continue
        if c.name and c.name not in GENERIC:
            raise SystemExit(f"{c.name} ({value}, {c.strings}) has no group: add it to GROUPS or GENERIC")
        rest.append(c)
    blocks.append(generic_pattern(rest, labels))

    command = "python bench/families/cuda_errors.py" + "".join(f" --runtime {a}:{b}" for a, b in runtimes) + "".join(
        f" --driver {d}" for d in drivers
    )
    text = HEADER.format(command=command, labels=", ".join(labels))
    text += "\n".join(pattern_toml(b) for b in blocks)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}: {len(blocks)} patterns for {len(codes) - 1} codes", file=sys.stderr)


if __name__ == "__main__":
    main()
