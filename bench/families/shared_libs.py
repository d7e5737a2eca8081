"""Generate env.toml's patterns for system shared libraries that vLLM's dependencies load at import time
and that slim images or bare machines lack (`libX.so.N: cannot open shared object file`).

    python bench/families/shared_libs.py

The table below maps each library (the sonames the loaders ask for) to the package that provides it
(Debian/Ubuntu and RHEL names, or the pip package for NVIDIA libraries), and to the Python packages that
load it. The CUDA runtime, CUDA math libraries and the NVIDIA driver library are covered in install.toml
(install.cuda-runtime-missing, install.nvidia-driver-missing); ROCm's libraries belong to rocm.toml.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

# slug: (soname regex, what it is, who loads it, apt, dnf/other, example soname)
LIBS = [
    ("openmp", r"libgomp\.so(?:\.\d+)?", "the GNU OpenMP runtime", "torch's CPU kernels, torch Inductor's C++ kernels, vLLM's CPU backend, scikit-learn", "libgomp1", "libgomp", "libgomp.so.1"),
    ("opengl", r"libGL\.so(?:\.\d+)?|libEGL\.so(?:\.\d+)?", "the OpenGL client library", "opencv-python (the GUI build; vLLM itself depends on opencv-python-headless, which does not need it)", "libgl1", "mesa-libGL", "libGL.so.1"),
    ("glib", r"lib(?:gthread|glib|gobject)-2\.0\.so(?:\.\d+)?", "GLib", "opencv-python / opencv-contrib-python", "libglib2.0-0", "glib2", "libgthread-2.0.so.0"),
    ("x11", r"lib(?:SM|ICE|Xext|Xrender|X11|xcb)\.so(?:\.\d+)?", "the X11 client libraries", "opencv-python (the GUI build)", "libsm6 libxext6 libxrender1", "libSM libXext libXrender", "libSM.so.6"),
    ("numa", r"libnuma\.so(?:\.\d+)?", "the NUMA policy library", "vLLM's CPU backend and NUMA binding, sgl-kernel, NVSHMEM/DeepEP builds", "libnuma1", "numactl-libs", "libnuma.so.1"),
    ("sndfile", r"libsndfile\.so(?:\.\d+)?", "libsndfile", "soundfile (audio inputs of speech models; vLLM's `audio` extra)", "libsndfile1", "libsndfile", "libsndfile.so.1"),
    ("ffmpeg", r"lib(?:avcodec|avformat|avutil|avdevice|avfilter|swscale|swresample)\.so(?:\.\d+)?", "FFmpeg's shared libraries", "torchcodec, decord, PyAV builds without bundled FFmpeg (video and audio decoding)", "ffmpeg", "ffmpeg-libs (RPM Fusion)", "libavutil.so.59"),
    ("rdma", r"lib(?:ibverbs|rdmacm|mlx5|efa)\.so(?:\.\d+)?", "the RDMA user-space libraries (rdma-core)", "NIXL/UCX KV transfer, NCCL's InfiniBand/RoCE transport, Mooncake, DeepEP", "libibverbs1 librdmacm1 ibverbs-providers", "rdma-core libibverbs librdmacm", "libibverbs.so.1"),
    ("ucx", r"libuc[pstm]\.so(?:\.\d+)?", "UCX", "NIXL (the NixlConnector KV transfer)", "libucx0 (or the ucx wheel NIXL ships)", "ucx", "libucp.so.0"),
    ("libpython", r"libpython3\.\d+\.so(?:\.[\d.]+)?", "the shared Python library", "Python builds without --enable-shared (some pyenv/custom builds) used with extensions that link libpython", "libpython3.X (for the Python version)", "python3-libs / a Python built with --enable-shared", "libpython3.11.so.1.0"),
    ("mpi", r"libmpi(?:_cxx)?\.so(?:\.\d+)?", "an MPI library", "mpi4py and MPI-built kernels (some multi-node launchers)", "libopenmpi3 openmpi-bin", "openmpi", "libmpi.so.40"),
    ("aio", r"libaio\.so(?:\.\d+)?", "libaio (Linux asynchronous I/O)", "DeepSpeed ops, KV-cache offloading to disk", "libaio1 (libaio1t64 on Ubuntu 24.04)", "libaio", "libaio.so.1"),
    ("cufile", r"libcufile(?:_rdma)?\.so(?:\.\d+)?", "NVIDIA GPUDirect Storage (cuFile)", "fastsafetensors / instanttensor GPU-direct loading (--load-format fastsafetensors)", "nvidia-gds (CUDA repo) or `pip install nvidia-cufile-cu12`", "nvidia-gds", "libcufile.so.0"),
    ("nvshmem", r"libnvshmem(?:_host)?\.so(?:\.\d+)?", "NVSHMEM", "DeepEP and pplx-kernels (expert-parallel all-to-all)", "`pip install nvidia-nvshmem-cu12`", "`pip install nvidia-nvshmem-cu12`", "libnvshmem_host.so.3"),
]


def build() -> str:
    blocks = []
    for i, (slug, soname, what, who, apt, dnf, example) in enumerate(LIBS):
        other = LIBS[(i + 1) % len(LIBS)][6]
        blocks.append(
            pattern_toml(
                {
                    "id": f"env.shared-library-missing-{slug}",
                    "title": f"The system library {{lib}} ({what}) is not installed",
                    "severity": "error",
                    "exception": ["ImportError", "OSError", "RuntimeError"],
                    "match": rf"(?P<lib>{soname}): cannot open shared object file",
                    "explanation": (
                        f"A compiled module needs {{lib}}, {what}, and the dynamic loader cannot find it. It is a system "
                        f"library that pip does not install; it is loaded by {who}. Slim container images and minimal "
                        "OS installs leave it out, or it lives in a directory that is not on the loader's path."
                    ),
                    "summary": f"Install {what} where vLLM runs: Debian/Ubuntu `apt-get install -y {apt}`, RHEL/Fedora `{dnf}`.",
                    "steps": [
                        f"Debian/Ubuntu (most containers): `apt-get update && apt-get install -y {apt}`; RHEL/Fedora: `dnf install {dnf}`.",
                        "If the library is installed in a non-standard directory, add that directory to `LD_LIBRARY_PATH` (or run `ldconfig`).",
                        "The traceback's last import names the Python package that needs it; if vLLM does not need that package, uninstalling it also works.",
                    ],
                    "file": "dynamic loader (dlopen) via the Python import system",
                    "function": "import of a compiled extension",
                    "versions": "*",
                    "checked": "loader wording `<soname>: cannot open shared object file: No such file or directory` (as in install.toml's CUDA patterns); soname-to-package table in bench/families/shared_libs.py (Debian/RHEL package names, not installed here)",
                    "match_examples": [
                        f"ImportError: {example}: cannot open shared object file: No such file or directory",
                        f"(EngineCore pid=311) ERROR 11-02 09:14:22 [core.py:1010] OSError: {example}: cannot open shared object file: No such file or directory",
                    ],
                    "no_match_examples": [
                        f"ImportError: {other}: cannot open shared object file: No such file or directory",
                        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
                    ],
                }
            )
        )
    return "\n".join(blocks)


def main() -> None:
    splice(PATTERNS / "env.toml", "shared_libs", build())
    print(f"env.toml: {len(LIBS)} shared-library patterns")


if __name__ == "__main__":
    main()
