# ruff: noqa: E501  (advice prose and quoted messages are as long as they are)
"""Generate patterns/nvml.toml: every NVML return code (`nvmlReturn_t`, NVML_ERROR_*) as pynvml raises
it in a vLLM server, plus the lines vLLM and nvidia-smi print when NVML fails.

    python bench/families/nvml_errors.py [PYNVML_PY ...]

Default inputs: vLLM's copy of the official bindings (/work/vllm-src/0.33.0/vllm/third_party/pynvml.py, used by
vLLM since 0.7 as `vllm.third_party.pynvml`) and nvidia-ml-py's pynvml.py (`pip download --no-deps nvidia-ml-py`,
unzipped under /work/pkg-src/nvml). The script imports each file (it loads no library at import) and reads
the NVML_ERROR_* constants, the `NVMLError_<CamelCase>` class pynvml makes for each, and the text its
`__str__` returns (the built-in `_errcode_to_string` table; codes missing from it take the driver's
nvmlErrorString text, or "NVML Error with code N" when the library is not loaded).

The forms:
    vllm.third_party.pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded    a traceback from a vLLM NVML call
        (platforms/cuda.py with_nvml_context: device capability, name, UUID, P2P/NVLink checks)
    pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found          vLLM <= 0.6 and other callers
    CUDA platform is not available because: <str(e)>                         vLLM platforms/__init__.py (DEBUG)
    Exception happens when checking CUDA platform: <str(e)>                  vLLM platforms/__init__.py (DEBUG)
    Failed to initialize NVML: <nvmlErrorString>                             nvidia-smi
The script fails when a code has no advice below.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml  # noqa: E402
from cuda_errors import esc  # noqa: E402

OUT = PATTERNS / "nvml.toml"
DEFAULT_SOURCES = [
    Path("/work/vllm-src/0.33.0/vllm/third_party/pynvml.py"),
    Path("/work/pkg-src/nvml/pynvml.py"),
]
DOCS = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html"

SMI = "Run `nvidia-smi` in the same environment (node, container, job step): it uses the same NVML library and shows the same error."
CONTAINER = (
    "In a container, start it with the NVIDIA runtime and the utility capability, which mounts libnvidia-ml.so.1: "
    "`docker run --gpus all` (or `--runtime nvidia -e NVIDIA_DRIVER_CAPABILITIES=compute,utility`); on Kubernetes request `nvidia.com/gpu`."
)
DMESG = "Look at the kernel log for NVIDIA Xid errors (`sudo dmesg -T | grep -i xid`)."
REBOOT = "After a driver upgrade reboot the node (or unload and reload the nvidia kernel modules) so that the kernel module and the user-space libraries are of the same release."


@dataclass
class Group:
    slug: str
    codes: list[str]
    title: str
    explanation: str
    summary: str
    steps: list[str]
    severity: str = "error"


GROUPS = [
    Group(
        "library-not-found",
        ["NVML_ERROR_LIBRARY_NOT_FOUND"],
        "NVML library not found (libnvidia-ml.so.1 missing: no NVIDIA driver in this environment)",
        "pynvml could not load libnvidia-ml.so.1, the NVML library that ships with the NVIDIA driver. The process "
        "runs where no NVIDIA driver is visible: a CPU-only node, a container started without the NVIDIA runtime "
        "(or with NVIDIA_DRIVER_CAPABILITIES lacking `utility`), or a host whose driver is not installed. vLLM uses "
        "NVML to detect the CUDA platform, so it then finds no platform or fails on the first NVML call.",
        "NVML is missing: run where the NVIDIA driver is installed, and start containers with the NVIDIA runtime and the utility capability (docker run --gpus all).",
        [SMI, CONTAINER, "On the host, install the NVIDIA driver (`ldconfig -p | grep libnvidia-ml` must list libnvidia-ml.so.1)."],
    ),
    Group(
        "driver-not-loaded",
        ["NVML_ERROR_DRIVER_NOT_LOADED"],
        "The NVIDIA kernel driver is not loaded (NVML: Driver Not Loaded)",
        "The NVML library is present but the NVIDIA kernel module is not running: the driver was installed but not "
        "loaded (no reboot, a kernel update without rebuilt DKMS modules, Secure Boot refusing the unsigned module), "
        "or the container sees the libraries without the device nodes.",
        "The NVIDIA kernel module is not loaded: load it (`sudo modprobe nvidia`) or reinstall the driver for the running kernel and reboot; check `nvidia-smi` on the host.",
        [
            "On the host: `lsmod | grep nvidia`; `sudo modprobe nvidia` and read `dmesg` if it fails (Secure Boot needs a signed module).",
            "After a kernel upgrade rebuild the driver's DKMS module (`sudo dkms autoinstall`) or reinstall the driver, then reboot.",
            SMI,
        ],
    ),
    Group(
        "version-mismatch",
        ["NVML_ERROR_LIB_RM_VERSION_MISMATCH"],
        "NVIDIA driver/library version mismatch (NVML library and kernel module differ)",
        "The NVML library (user space) and the NVIDIA kernel module (RM) are from different driver releases. This "
        "is what a driver upgrade leaves behind until the node reboots, and what a container image with its own "
        "driver libraries produces on a host with another driver.",
        "The NVIDIA driver libraries and kernel module differ: reboot the node (or reload the nvidia modules) after a driver upgrade, and do not ship driver libraries in the container image.",
        [REBOOT, "Compare `cat /proc/driver/nvidia/version` with the library (`ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*`).", "Remove driver libraries (libnvidia-ml, libcuda) baked into the image; the NVIDIA container runtime mounts the host's."],
    ),
    Group(
        "gpu-lost",
        ["NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_CORRUPTED_INFOROM"],
        "A GPU is lost or needs a reset (fell off the bus / hardware fault)",
        "NVML can no longer talk to a GPU, or the GPU needs a reset: it fell off the PCIe bus (Xid 79), hit a "
        "fatal hardware or power fault, or its InfoROM is corrupted. Any CUDA work on it fails until the GPU is "
        "reset or the node rebooted; repeated occurrences mean failing hardware, power or cooling.",
        "A GPU is lost or needs a reset: drain the node, check dmesg for Xid 79/48/119, reset the GPU (`nvidia-smi -r -i <gpu>`) or reboot, and replace it if it recurs.",
        ["Take the node out of service.", DMESG, "Reset the GPU (`sudo nvidia-smi -r -i <gpu>`) or reboot; check power and cooling; open an RMA if it happens again."],
    ),
    Group(
        "no-permission",
        ["NVML_ERROR_NO_PERMISSION"],
        "NVML refused the call (Insufficient Permissions)",
        "The process may not perform this NVML operation: the /dev/nvidia* device nodes or /dev/nvidia-caps are not "
        "accessible to this user or container, or the query needs root (some settings and counters do).",
        "NVML lacks permissions: give the process access to /dev/nvidia* (container: --gpus, no restrictive device cgroup), or run the query as root.",
        [SMI, "Check `ls -l /dev/nvidia*` and the container's device access; on MIG systems `/dev/nvidia-caps` must be accessible too.", CONTAINER],
    ),
    Group(
        "invalid-argument",
        ["NVML_ERROR_INVALID_ARGUMENT", "NVML_ERROR_NOT_FOUND", "NVML_ERROR_GPU_NOT_FOUND"],
        "NVML could not find the GPU it was asked about (invalid argument / not found)",
        "An NVML call got a device index, UUID or handle it does not know. vLLM maps CUDA_VISIBLE_DEVICES to NVML "
        "devices: an index beyond the node's GPUs, a UUID of another node, or a MIG device identifier (MIG-...) "
        "where vLLM expects a GPU causes this.",
        "NVML does not know the requested GPU: check CUDA_VISIBLE_DEVICES (existing indices or GPU UUIDs of this node; MIG instances need a vLLM that supports them).",
        ["Compare `echo $CUDA_VISIBLE_DEVICES` with `nvidia-smi -L`.", "Use plain indices (`0,1`) or full GPU UUIDs of this node; avoid MIG identifiers unless the vLLM version supports MIG.", SMI],
    ),
    Group(
        "not-supported",
        ["NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_FUNCTION_NOT_FOUND", "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"],
        "The NVML query is not supported by this GPU or driver",
        "The driver or GPU does not support the NVML call: the query is not available on this GPU type (consumer, "
        "vGPU, MIG, WSL), or the driver is older than the NVML API the Python bindings call (function not found, "
        "argument version mismatch).",
        "This driver/GPU does not support the NVML call: upgrade the NVIDIA driver; on vGPU/WSL/MIG where a query is missing, upgrade vLLM or avoid the feature (e.g. --disable-custom-all-reduce for P2P checks).",
        ["Upgrade the NVIDIA driver (newer NVML bindings call newer functions).", "If the failing call is a P2P/NVLink check during tensor-parallel start-up, try `--disable-custom-all-reduce`.", "Upgrade vLLM; report the GPU, driver and the traceback."],
    ),
    Group(
        "unknown-error",
        ["NVML_ERROR_UNKNOWN"],
        "NVML failed with Unknown Error (often a container that lost GPU access)",
        "NVML returned an unclassified error. In containers this is the classic sign that the container lost access "
        "to the GPU device nodes after the host reloaded its systemd/cgroup configuration (`systemctl "
        "daemon-reload`) while the container ran; it can also follow a GPU or driver fault.",
        "NVML reported Unknown Error: restart the container (it lost device access; configure the NVIDIA container toolkit for systemd cgroup reloads), and check dmesg for Xid errors.",
        [
            "Restart the container or pod; `nvidia-smi` inside it shows `Failed to initialize NVML: Unknown Error` while the problem lasts.",
            "Prevent it: create the /dev/char symlinks (`sudo nvidia-ctk system create-dev-char-symlinks --create-all`), or use CDI / the cgroupfs cgroup driver, as the NVIDIA container toolkit documents for this issue.",
            DMESG,
        ],
    ),
    Group(
        "timeout",
        ["NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE", "NVML_ERROR_NOT_READY", "NVML_ERROR_IN_USE", "NVML_ERROR_INVALID_STATE"],
        "NVML could not get an answer from the GPU (timeout, interrupt issue, busy or not ready)",
        "The driver did not get a timely answer from the GPU, the GPU is busy with another operation (reset, "
        "recovery, firmware update), or it is not ready yet. A GPU in trouble (Xid errors) or a heavily loaded "
        "driver causes it.",
        "The GPU did not answer NVML in time: check dmesg for Xid errors and `nvidia-smi`; reset or reboot if the GPU stays unresponsive.",
        [DMESG, SMI, "Reset the GPU or reboot if it keeps timing out; drain the node if Xid errors repeat."],
    ),
]
GENERIC = {
    "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_ALREADY_INITIALIZED", "NVML_ERROR_INSUFFICIENT_SIZE",
    "NVML_ERROR_INSUFFICIENT_POWER", "NVML_ERROR_OPERATING_SYSTEM", "NVML_ERROR_MEMORY", "NVML_ERROR_NO_DATA",
    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "NVML_ERROR_INSUFFICIENT_RESOURCES", "NVML_ERROR_FREQ_NOT_SUPPORTED",
    "NVML_ERROR_DEPRECATED", "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
}

CHECKED = (
    "codes, classes and texts from vllm/third_party/pynvml.py (vLLM 0.33.0) and nvidia-ml-py 13.615.71 pynvml.py "
    "(imported; NVMLError.__str__ / _errcode_to_string); vLLM call sites platforms/cuda.py with_nvml_context and "
    "platforms/__init__.py cuda_platform_plugin (0.8.5-0.33.0)"
)


ALONE = "alone = false  # NVML's texts (`Unknown Error`, `Not Supported`) say nothing without the NVMLError type"


def render(block: dict) -> str:
    """pattern_toml, plus `alone = false` before `match` and the optional `frames` field after it (fields
    _toml does not write)."""
    lines = pattern_toml(block).split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("match = "))
    if block.get("frames"):
        lines.insert(at + 1, f"frames = '{block['frames']}'")
    lines.insert(at, ALONE)
    return "\n".join(lines)


def load(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"_pynvml_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  (pynvml looks itself up there)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    sources = [Path(a) for a in argv] or [p for p in DEFAULT_SOURCES if p.exists()]
    codes: dict[str, tuple[int, str, str | None]] = {}  # name -> (value, class name, built-in text)
    for path in sources:
        module = load(path)
        table = module.NVMLError._errcode_to_string
        for name in dir(module):
            if not name.startswith("NVML_ERROR_"):
                continue
            value = getattr(module, name)
            cls = module.NVMLError._valClassMapping[value].__name__
            codes.setdefault(name, (value, cls, table.get(value)))
    blocks = []
    used: set[str] = set()
    example_texts = {}
    for group in GROUPS:
        members = [(n, *codes[n]) for n in group.codes if n in codes]
        used.update(group.codes)
        classes = [m[2] for m in members]
        name, value, cls, text = members[0]
        shown = text or f"NVML Error with code {value}"
        example_texts[group.slug] = (cls, shown)
        blocks.append(
            {
                "id": f"nvml.{group.slug}",
                "title": group.title,
                "severity": group.severity,
                "role": "cause",
                "where": "exception",
                "exception": classes,
                # The message is pynvml's text for the code (or "NVML Error with code N" when the library
                # could not be asked); codes whose text only the driver knows fall to nvml.error.
                "match": "^(?P<nvml_error>"
                + "|".join(
                    sorted({esc(m[3]) for m in members if m[3]} | {f"NVML Error with code {m[1]}" for m in members})
                )
                + ")$",
                "explanation": group.explanation
                + " (Codes: "
                + ", ".join(f"{m[0]} ({m[1]}, {m[2]}: {m[3] or 'driver text'})" for m in members)
                + ".)",
                "docs": DOCS,
                "summary": group.summary,
                "steps": group.steps,
                "file": "pynvml",
                "function": "NVMLError (pynvml._nvmlCheckReturn); vLLM platforms/cuda.py with_nvml_context",
                "versions": "*",
                "checked": CHECKED,
                "match_examples": [
                    f"vllm.third_party.pynvml.{cls}: {shown}",
                    "Traceback (most recent call last):\n"
                    '  File "/usr/local/lib/python3.12/dist-packages/vllm/platforms/cuda.py", line 768, in get_device_capability\n'
                    "    handle = pynvml.nvmlDeviceGetHandleByIndex(physical_device_id)\n"
                    '  File "/usr/local/lib/python3.12/dist-packages/vllm/third_party/pynvml.py", line 1213, in _nvmlCheckReturn\n'
                    "    raise NVMLError(ret)\n"
                    f"vllm.third_party.pynvml.{members[-1][2]}: {members[-1][3] or f'NVML Error with code {members[-1][1]}'}",
                    f"pynvml.{cls}: {shown}",
                ],
                "no_match_examples": [
                    "vllm.third_party.pynvml.NVMLError_InsufficientSize: Insufficient Size",
                    f"RuntimeError: {shown}",
                ],
            }
        )
    rest = []
    for name in sorted(codes):
        if name in used:
            continue
        if name not in GENERIC:
            raise SystemExit(f"{name} {codes[name]} has no group: add it to GROUPS or GENERIC")
        rest.append(name)
    blocks.append(
        {
            "comment": "Every other NVML code (priority -10).",
            "id": "nvml.error",
            "title": "An NVML call failed: {nvml_error}",
            "severity": "error",
            "role": "cause",
            "priority": -10,
            "where": "exception",
            "exception": ["NVMLError", *[codes[n][1] for n in rest], *[codes[n][1] for n in sorted(used) if n in codes]],
            # Any text, so only in a traceback through pynvml (the frame keeps it off other exceptions).
            "frames": r"pynvml",
            "match": r"(?P<nvml_error>[^\n]*[^\s])",
            "explanation": (
                "A call into NVML, the NVIDIA management library vLLM uses to inspect GPUs without initialising CUDA, "
                "failed. Codes grouped here: " + ", ".join(f"{n} ({codes[n][1]})" for n in rest) + "."
            ),
            "docs": DOCS,
            "summary": "An NVML call failed ({nvml_error}): check `nvidia-smi` in the same environment and the driver installation.",
            "steps": [SMI, DMESG, "Upgrade the NVIDIA driver if the call is newer than it; report the traceback to vLLM otherwise."],
            "file": "pynvml",
            "function": "NVMLError (pynvml._nvmlCheckReturn)",
            "versions": "*",
            "checked": CHECKED,
            "match_examples": [
                "Traceback (most recent call last):\n"
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/platforms/cuda.py", line 809, in get_device_total_memory\n'
                "    return int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)\n"
                '  File "/usr/local/lib/python3.12/dist-packages/vllm/third_party/pynvml.py", line 1213, in _nvmlCheckReturn\n'
                "    raise NVMLError(ret)\n"
                "vllm.third_party.pynvml.NVMLError_InsufficientSize: Insufficient Size",
                "Traceback (most recent call last):\n"
                '  File "/usr/local/lib/python3.12/dist-packages/pynvml.py", line 979, in _nvmlCheckReturn\n'
                "    raise NVMLError(ret)\n"
                "pynvml.NVMLError_InUse: The operation cannot be performed because the GPU is currently in use",
            ],
            "no_match_examples": ["RuntimeError: Insufficient Size", "OSError: The operating system has blocked the request."],
        }
    )
    # vLLM's platform detection (DEBUG) and nvidia-smi lines.
    reasons = {g.slug: example_texts[g.slug][1] for g in GROUPS}
    blocks.append(
        {
            "comment": "vLLM's CUDA platform check logs the NVML error at DEBUG (then 'No platform detected' / 'Failed to infer device type').",
            "id": "nvml.cuda-platform-unavailable",
            "title": "vLLM's CUDA platform check failed in NVML: {reason}",
            "severity": "warning",
            "role": "cause",
            "where": "line",
            "levels": ["DEBUG", "INFO"],  # vLLM logs its platform detection at DEBUG (INFO before 0.12)
            "match": r"(?:CUDA platform is not available because|Exception happens when checking CUDA platform): (?P<reason>(?!no GPU is found|vLLM is built with CPU)[^\n]*[^\s])",
            "explanation": (
                "When vLLM starts it asks NVML whether NVIDIA GPUs are present. The call failed with the reason shown, "
                "so vLLM did not select the CUDA platform; it then reports 'No platform detected' and fails with "
                "'Failed to infer device type' or a device error. The reason is pynvml's text: "
                + "; ".join(f"'{t}'" for t in reasons.values())
                + "."
            ),
            "docs": DOCS,
            "summary": "NVML failed during vLLM's platform detection ({reason}): fix NVML first (nvidia-smi must work in the same environment).",
            "steps": [
                SMI,
                "'NVML Shared Library Not Found': no NVIDIA driver libraries here. " + CONTAINER,
                "'Driver Not Loaded': load the NVIDIA kernel module (`sudo modprobe nvidia`) or reinstall the driver for the running kernel.",
                "'RM has detected an NVML/RM version mismatch.': " + REBOOT,
                "'Unknown Error' inside a container: restart the container (device access lost after a host cgroup reload).",
            ],
            "file": "vllm/platforms/__init__.py",
            "function": "cuda_platform_plugin",
            "versions": ">=0.8",
            "checked": "vLLM 0.8.5.post1, 0.11.2, 0.20.2, 0.33.0 platforms/__init__.py (logger.debug 'CUDA platform is not available because: %s' and 'Exception happens when checking CUDA platform: %s'); texts from pynvml",
            "match_examples": [
                "DEBUG 11-02 10:31:40 [__init__.py:82] CUDA platform is not available because: NVML Shared Library Not Found",
                "(APIServer pid=311) DEBUG 11-02 10:31:40 [__init__.py:65] Exception happens when checking CUDA platform: Driver Not Loaded",
            ],
            "no_match_examples": [
                "DEBUG 11-02 10:31:40 [__init__.py:57] CUDA platform is not available because no GPU is found.",
                "DEBUG 11-02 10:31:40 [__init__.py:82] ROCm platform is not available because: No module named 'amdsmi'",
            ],
        }
    )
    blocks.append(
        {
            "comment": "nvidia-smi's own failures (the same NVML errors, as a script or entrypoint that runs nvidia-smi prints them).",
            "id": "nvml.nvidia-smi-failed",
            "title": "nvidia-smi cannot talk to the NVIDIA driver: {nvml_error|driver not reachable}",
            "severity": "error",
            "role": "cause",
            "where": "line",
            "match": r"Failed to initialize NVML: (?P<nvml_error>[^\n]*[^\s])|NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
            "explanation": (
                "nvidia-smi uses NVML like vLLM does; when it fails, no CUDA program works in this environment either. "
                "'Driver/library version mismatch' means the driver was upgraded without a reboot (or the container "
                "carries its own driver libraries); 'Unknown Error' inside a container usually means it lost access to "
                "the GPU devices after the host reloaded its cgroup configuration; 'couldn't communicate with the "
                "NVIDIA driver' means the kernel module is not loaded."
            ),
            "docs": DOCS,
            "summary": "NVML/the NVIDIA driver is not working here ({nvml_error|driver not reachable}): reboot after a driver upgrade, load the kernel module, or restart the container that lost GPU access.",
            "steps": [
                "'Driver/library version mismatch': " + REBOOT,
                "'Unknown Error' in a container: restart it; prevent it with `sudo nvidia-ctk system create-dev-char-symlinks --create-all` or CDI.",
                "'couldn't communicate with the NVIDIA driver': `sudo modprobe nvidia` (check `dmesg`), or reinstall the driver for the running kernel.",
                "'Insufficient Permissions': give the container or user access to /dev/nvidia*.",
            ],
            "file": "nvidia-smi",
            "function": "nvmlInit (nvmlErrorString text)",
            "versions": "*",
            "checked": "nvidia-smi output wording 'Failed to initialize NVML: <nvmlErrorString>' as quoted in NVIDIA container toolkit issues (code index); NVML texts from pynvml's table",
            "match_examples": [
                "Failed to initialize NVML: Driver/library version mismatch",
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
                "Failed to initialize NVML: Unknown Error",
            ],
            "no_match_examples": [
                "(APIServer pid=311) INFO 11-02 10:31:40 [__init__.py:239] Automatically detected platform cuda.",
                "NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4",
            ],
        }
    )
    blocks.append(
        {
            "comment": "torch's NVML-based device count warns and falls back to CUDA.",
            "id": "nvml.torch-cannot-initialize",
            "title": "PyTorch could not initialise NVML",
            "severity": "warning",
            "role": "cause",
            "where": "any",
            "match": r"UserWarning: Can't initialize NVML|^Can't initialize NVML$",
            "explanation": (
                "torch.cuda counts devices through NVML when PYTORCH_NVML_BASED_CUDA_CHECK is set or CUDA is not yet "
                "initialised; NVML failed, so it fell back. It is harmless when CUDA works; if GPU errors follow, NVML's "
                "failure (no driver libraries, driver not loaded, container without the utility capability) is the cause."
            ),
            "docs": DOCS,
            "summary": "NVML could not be initialised: check `nvidia-smi` in the same environment; in containers include the utility driver capability.",
            "steps": [SMI, CONTAINER],
            "file": "torch",
            "function": "torch/cuda/__init__.py _raw_device_count_nvml / _raw_device_uuid_nvml",
            "versions": "*",
            "checked": "torch 2.13.0 torch/cuda/__init__.py:953 and :1007 (warnings.warn(\"Can't initialize NVML\"))",
            "match_examples": [
                "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:953: UserWarning: Can't initialize NVML",
            ],
            "no_match_examples": ["/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:953: UserWarning: Can't initialize CUDA"],
        }
    )
    header = (
        "# NVML (nvmlReturn_t, NVML_ERROR_*) as pynvml raises it in vLLM, plus vLLM's and nvidia-smi's NVML lines.\n"
        f"# GENERATED by `python bench/families/nvml_errors.py {' '.join(str(s) for s in sources)}`: do not edit by hand,\n"
        "# change bench/families/nvml_errors.py and rerun it.\n\n"
    )
    OUT.write_text(header + "\n".join(render(b) for b in blocks))
    print(f"wrote {OUT}: {len(blocks)} patterns for {len(codes)} NVML codes", file=sys.stderr)


if __name__ == "__main__":
    main()
