#!/usr/bin/env bash
# Recreates a real vLLM environment (CPU-only machine): 0.33.0 captured fixtures/real/; 0.28.0 is
# the older release bench/differential.py also runs against.
# Usage: [VLLM_VERSION=0.28.0] bash bench/vllm_env.sh [VENV_DIR]
#   (version default 0.33.0; venv default /work/vllm<digits>, e.g. /work/vllm033; keep it OUTSIDE the repo)
#
# vLLM 0.33.0 pins torch==2.14.0, 0.28.0 pins torch==2.13.0, plus CUDA-only packages (flashinfer,
# cutlass, tilelang, ...). 0.28.0's Requires-Dist has the same GPU-only packages minus instanttensor.
# What worked: install vllm with --no-deps, a CPU torch, and the rest of vLLM's Requires-Dist
# minus torch/torchaudio/torchvision/torchcodec and the GPU-only packages.
# The result runs `vllm serve` far enough for every config-validation error (API server) and
# starts an EngineCore, whose worker then fails: the CUDA wheel has no CPU kernels (vllm._C).
set -euo pipefail
VERSION=${VLLM_VERSION:-0.33.0}
DIGITS=$(echo "$VERSION" | cut -d. -f1,2 | tr -d .)   # 0.28.0 -> 028
VENV=${1:-/work/vllm$DIGITS}
PY=${PYTHON:-python3}
TORCH=${TORCH_SPEC:-torch==2.13.0}   # a CPU build; on this machine pip takes it from a local wheel

"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "$TORCH"
"$VENV/bin/pip" install -q --no-deps vllm=="$VERSION"

# vLLM's own Requires-Dist (from its installed METADATA), without extras, torch*, and GPU-only packages.
REQS=$(mktemp)
"$VENV/bin/python" - "$REQS" <<'PYEOF'
import re, sys
from importlib.metadata import requires
skip = {"torch", "torchaudio", "torchvision", "torchcodec", "pynvvideocodec", "flashinfer-python",
        "apache-tvm-ffi", "tilelang", "nvidia-cudnn-frontend", "nvtx", "fastsafetensors",
        "instanttensor", "nvidia-cutlass-dsl", "quack-kernels", "tokenspeed-mla", "humming-kernels"}
with open(sys.argv[1], "w") as out:
    for r in requires("vllm"):
        if "extra ==" in r:
            continue
        if re.split(r"[<>=!;\[ ]", r)[0].lower() in skip:
            continue
        out.write(r + "\n")
PYEOF
"$VENV/bin/pip" install -q -r "$REQS"
rm -f "$REQS"

# Smoke test: the CLI parses (the `vllm._C` import warning is expected on CPU).
VLLM_TARGET_DEVICE=cpu "$VENV/bin/vllm" serve --help >/dev/null
echo "vLLM $("$VENV/bin/python" -c 'import vllm; print(vllm.__version__)' 2>/dev/null) ready in $VENV"
echo "run: VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1 NO_COLOR=1 $VENV/bin/vllm serve MODEL_DIR ..."
