"""Generate env.toml's table of missing Python modules: one pattern per pip distribution whose import
vLLM guards (so a missing package only fails when the feature is used) or lists in its Requires-Dist.

    python bench/families/optional_modules.py [/work/vllm-src]

Inputs: the released vLLM sources, one folder per minor release (`<root>/<version>/vllm/...`, with the
wheel's `vllm-<version>.dist-info/METADATA` beside it). For every release the script parses each module
with `ast` and collects the top-level names imported
  * inside `try:` blocks whose handler catches ImportError, ModuleNotFoundError or Exception,
  * through `PlaceholderModule("x")`, `_has_module("x")`, `_has_module_spec("x")`, `find_spec("x")`,
    `importlib.util.find_spec("x")` and `importlib.import_module("x")`,
then maps import names to distributions: the name itself when METADATA has a Requires-Dist of that
(normalised) name, else the IMPORT_TO_DIST table below (import names that differ from the pip name).
A distribution in an extra (`Requires-Dist: soundfile; extra == "audio"`) gets `pip install vllm[audio]`.
Import names with no known distribution are listed in the generated block's header and left out.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

ROOT = Path("/work/vllm-src")

# Import name -> pip distribution, where they differ (or where the import name is not in METADATA).
IMPORT_TO_DIST = {
    "cv2": "opencv-python-headless",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "zmq": "pyzmq",
    "cpuinfo": "py-cpuinfo",
    "google": "protobuf",
    "flash_attn": "flash-attn",
    "flashinfer": "flashinfer-python",
    "mistral_common": "mistral-common",
    "sklearn": "scikit-learn",
    "runai_model_streamer": "runai-model-streamer",
    "lmformatenforcer": "lm-format-enforcer",
    "prometheus_fastapi_instrumentator": "prometheus-fastapi-instrumentator",
    "partial_json_parser": "partial-json-parser",
    "pythonjsonlogger": "python-json-logger",
    "openai_harmony": "openai-harmony",
    "bitsandbytes": "bitsandbytes",
    "amdsmi": "amdsmi",
    "pynvml": "nvidia-ml-py",
    "cupy": "cupy-cuda12x",
    "librosa": "librosa",
    "decord": "decord",
    "timm": "timm",
    "peft": "peft",
    "modelscope": "modelscope",
    "tensorizer": "tensorizer",
    "gguf": "gguf",
    "boto3": "boto3",
    "ray": "ray",
    "triton": "triton",
    "xformers": "xformers",
    "sentencepiece": "sentencepiece",
    "tiktoken": "tiktoken",
    "datasets": "datasets",
    "pandas": "pandas",
    "matplotlib": "matplotlib",
    "seaborn": "seaborn",
    "plotly": "plotly",
    "scipy": "scipy",
    "soundfile": "soundfile",
    "soxr": "soxr",
    "av": "av",
    "torchaudio": "torchaudio",
    "torchvision": "torchvision",
    "torchcodec": "torchcodec",
    "fastsafetensors": "fastsafetensors",
    "nixl": "nixl",
    "lmcache": "lmcache",
    "mooncake": "mooncake-transfer-engine",
    "qwen_vl_utils": "qwen-vl-utils",
    "numba": "numba",
    "xgrammar": "xgrammar",
    "llguidance": "llguidance",
    "outlines": "outlines",
    "outlines_core": "outlines_core",
    "msgspec": "msgspec",
    "blake3": "blake3",
    "pybase64": "pybase64",
    "cbor2": "cbor2",
    "setproctitle": "setproctitle",
    "opentelemetry": "opentelemetry-sdk",
    "fbgemm_gpu": "fbgemm-gpu",
    "quark": "amd-quark",
    "aiter": "amd-aiter",
    "deep_ep": "deep-ep",
    "arctic_inference": "arctic-inference",
    "helion": "helion",
    "tpu_inference": "tpu-inference",
    "intel_extension_for_pytorch": "intel-extension-for-pytorch",
    "habana_frameworks": "habana-torch-plugin",
    "transformers_neuronx": "transformers-neuronx",
    "neuronx_distributed": "neuronx-distributed",
    "torch_xla": "torch-xla",
    "jax": "jax",
    "depyf": "depyf",
    "compressed_tensors": "compressed-tensors",
    "pydantic": "pydantic",
    "huggingface_hub": "huggingface-hub",
    "hf_transfer": "hf-transfer",
    "hf_xet": "hf-xet",
    "tilelang": "tilelang",
    "quack": "quack-kernels",
    "cuda": "cuda-python",
    "nvtx": "nvtx",
    "smg_grpc_servicer": "smg-grpc-servicer",
    "grpc": "grpcio",
    "anthropic": "anthropic",
    "mcp": "mcp",
    "model_hosting_container_standards": "model-hosting-container-standards",
    "instanttensor": "instanttensor",
    "PyNvVideoCodec": "PyNvVideoCodec",
    "zentorch": "zentorch",
    "torchao": "torchao",
    "xxhash": "xxhash",
    "lxml": "lxml",
    "packaging": "packaging",
    "cutlass": "nvidia-cutlass-dsl",
    "cudnn": "nvidia-cudnn-frontend",
    "tvm_ffi": "apache-tvm-ffi",
    "transformer_engine": "transformer-engine",
    "bitblas": "bitblas",
    "deepspeed": "deepspeed",
    "albumentations": "albumentations",
    "termplotlib": "termplotlib",
    "pplx_kernels": "pplx-kernels",
    "openvino": "openvino",
    "grpc_tools": "grpcio-tools",
    "grpc_reflection": "grpcio-reflection",
    "grpc_health": "grpcio-health-checking",
    "gpt_oss": "gpt-oss",
    "cohere": "cohere",
}
# Distributions whose missing module another family explains better, or that are vLLM itself.
SKIP_IMPORTS = {"vllm", "vllm_flash_attn", "transformers_modules", "fastchat", "torch", "_C"}
# Submodule forms another pattern owns (a negative lookahead is added after the import name).
NOT_AFTER = {"jsonschema": r"(?!\.protocols)", "flashinfer": r"(?!\.mamba\.checkpointing_ssu)"}
# A local build or a vendor wheel: no `pip install <name>` that works in general.
NO_PIP = {"deep_gemm": "DeepGEMM", "triton_kernels": "triton_kernels", "moonep": "MoonEP", "mori": "MoRI", "humming": "humming"}

MODULE_CALLS = {"PlaceholderModule", "_has_module", "_has_module_spec", "find_spec", "import_module"}
CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(v: str) -> list[object]:
    return [int(x) if x.isdigit() else x for x in re.split(r"[.]|post", v) if x]


def guarded_imports(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except SyntaxError:
        return set()
    found: set[str] = set()

    def catches(handler: ast.ExceptHandler) -> bool:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(isinstance(n, (ast.Name, ast.Attribute)) and (getattr(n, "id", None) or getattr(n, "attr", None)) in CATCHES for n in names)

    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(catches(h) for h in node.handlers):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import):
                        found.update(a.name.split(".")[0] for a in sub.names)
                    elif isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
                        found.add(sub.module.split(".")[0])
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in MODULE_CALLS and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value.split(".")[0])
    return found


def metadata(version_dir: Path) -> tuple[set[str], dict[str, set[str]]]:
    """(required distributions, {distribution: extras}) of one release, names normalised."""
    required: set[str] = set()
    extras: dict[str, set[str]] = defaultdict(set)
    for meta in version_dir.glob("vllm-*.dist-info/METADATA"):
        for line in meta.read_text().splitlines():
            m = re.match(r"Requires-Dist: ([A-Za-z0-9_.-]+)", line)
            if not m:
                continue
            dist = norm(m[1])
            extra = re.search(r"extra == \"([^\"]+)\"", line)
            if extra:
                extras[dist].add(extra[1])
            else:
                required.add(dist)
    return required, extras


def scan(root: Path):
    versions = sorted((p.name for p in root.iterdir() if (p / "vllm").is_dir()), key=version_key)
    seen: dict[str, list[str]] = defaultdict(list)  # import name -> versions guarding it
    files: dict[str, str] = {}
    required_in: dict[str, list[str]] = defaultdict(list)
    extras_of: dict[str, set[str]] = defaultdict(set)
    extras_latest: dict[str, set[str]] = {}
    stdlib = set(sys.stdlib_module_names)
    for v in versions:
        vdir = root / v
        required, extras = metadata(vdir)
        for dist in required:
            required_in[dist].append(v)
        for dist, names in extras.items():
            extras_of[dist] |= names
            extras_latest[dist] = names
        names: set[str] = set()
        for path in (vdir / "vllm").rglob("*.py"):
            for name in guarded_imports(path):
                if name and name not in stdlib and name not in SKIP_IMPORTS:
                    names.add(name)
                    files.setdefault(name, f"{v} {path.relative_to(vdir)}")
        for name in names:
            seen[name].append(v)
    return versions, seen, files, required_in, extras_of, extras_latest


def cached_scan(root: Path):
    """scan(root), kept in $OPTIONAL_MODULES_CACHE (a pickle file) when that is set: parsing every
    release takes minutes."""
    import os
    import pickle

    cache = os.environ.get("OPTIONAL_MODULES_CACHE")
    if cache and Path(cache).exists():
        return pickle.loads(Path(cache).read_bytes())
    result = scan(root)
    if cache:
        Path(cache).write_bytes(pickle.dumps(result))
    return result


def build(root: Path) -> tuple[str, int, list[str]]:
    versions, seen, files, required_in, extras_of, extras_latest = cached_scan(root)
    by_dist: dict[str, list[str]] = defaultdict(list)
    left_out: list[str] = []
    for name in sorted(seen):
        if name in NO_PIP:
            by_dist["!" + name].append(name)
            continue
        dist = IMPORT_TO_DIST.get(name)
        if dist is None and (norm(name) in required_in or norm(name) in extras_of):
            dist = norm(name)
        if dist is None:
            left_out.append(name)
            continue
        by_dist[dist].append(name)
    blocks: list[str] = []
    for dist in sorted(by_dist, key=lambda d: d.lstrip("!").lower()):
        names = sorted(by_dist[dist])
        vs = sorted({v for n in names for v in seen[n]}, key=version_key)
        first, last = vs[0], vs[-1]
        # the release part only: a range names releases (`0.6.6.post1` is release 0.6.6, logdoctor/versions.py)
        last_release = re.match(r"\d+(?:\.\d+)*", last)[0]
        spec = f">={'.'.join(first.split('.')[:2])}" + ("" if last == versions[-1] else f",<={last_release}")
        alternation = "|".join(re.escape(n) + NOT_AFTER.get(n, "") for n in names)
        match = rf"No module named '?(?P<module>(?:{alternation})(?:\.[\w.]+)?)'?(?![\w.])"
        example_mod = names[0]
        where = files[names[0]]
        if dist.startswith("!"):
            label = NO_PIP[dist[1:]]
            slug = norm(dist[1:])
            summary = f"Install {label} the way your vLLM release documents it (it is not a plain pip package), or turn off the feature that needs {{module}}."
            steps = [
                f"{label} is built from source or comes with vLLM's Docker image for the release; follow the install notes of your vLLM version.",
                "Or disable the feature that imports it (the traceback's vLLM frame shows which: an MoE, all-to-all or GEMM backend option).",
            ]
            explanation = f"vLLM imports `{{module}}` only for the features that use {label}, which is not installed here. It is not on PyPI under a simple name: it is built from source or shipped in vLLM's own container images."
            title = f"The optional kernel package {label} is missing (No module named {{module}})"
            pip_line = ""
        else:
            slug = norm(dist)
            extras = sorted(extras_latest.get(dist) or extras_of.get(dist) or [])
            extras = [e for e in extras if e not in ("bench", "dev", "test", "lint")] or extras
            is_required = dist in required_in and required_in[dist][-1] == versions[-1]
            pip = f"pip install {dist}"
            pip_line = f"`pip install \"vllm[{extras[0]}]\"` (or `{pip}`)" if extras else f"`{pip}`"
            title = f"Python module {{module}} is missing: install {dist}"
            if is_required:
                explanation = (
                    f"`{{module}}` comes from the `{dist}` distribution, which vLLM lists in its requirements (Requires-Dist), "
                    "yet it cannot be imported: vLLM was installed without its dependencies (`--no-deps`, a requirements file "
                    "or image that skipped some), the package was uninstalled by another install, or the server runs with "
                    "another Python environment than the one vLLM was installed into."
                )
            else:
                explanation = (
                    f"vLLM imports `{{module}}` (distribution `{dist}`) only for the features that need it, so it is not "
                    "installed with vLLM by default" + (f"; it is part of vLLM's `{extras[0]}` extra" if extras else "") + ". "
                    "This request or configuration used such a feature."
                )
            summary = f"Install the `{dist}` package in the environment that runs vLLM: {pip_line}."
            steps = [
                f"{pip_line[0].upper() + pip_line[1:]} with the same `python -m pip` as the interpreter that runs vLLM.",
                "`python -m pip check` then shows whether the installed version fits vLLM's requirements.",
            ]
            if is_required:
                steps.append("Reinstall vLLM with its dependencies if more are missing: `pip install --force-reinstall vllm==<your version>`.")
        blocks.append(
            pattern_toml(
                {
                    "comment": f"import names {', '.join(names)}: guarded in vLLM {first} .. {last} (e.g. {where})",
                    "id": f"env.missing-module-{slug}",
                    "title": title,
                    "severity": "error",
                    "priority": -1,
                    "exception": ["ModuleNotFoundError", "ImportError"],
                    "match": match,
                    "explanation": explanation,
                    "summary": summary,
                    "steps": steps,
                    "file": "python (import system); vLLM's optional imports",
                    "function": "guarded import (try/except ImportError, PlaceholderModule, find_spec)",
                    "versions": spec,
                    "checked": f"bench/families/optional_modules.py over {len(versions)} vLLM releases ({versions[0]} .. {versions[-1]}): guarded in {len(vs)} of them, first {first}, last {last} ({where}); distribution from vllm-<version>.dist-info/METADATA or the script's IMPORT_TO_DIST table",
                    "match_examples": [
                        f"ModuleNotFoundError: No module named '{example_mod}'",
                        f"(EngineCore_DP0 pid=311) ERROR 11-02 09:14:22 [core.py:1010] ModuleNotFoundError: No module named '{names[-1]}.core'",
                    ],
                    "no_match_examples": [
                        f"ModuleNotFoundError: No module named '{example_mod}x_helpers'",
                        f"ImportError: cannot import name 'foo' from '{example_mod}' (/opt/venv/lib/python3.12/site-packages/{example_mod}/__init__.py)",
                    ],
                }
            )
        )
    header = ""
    if left_out:
        header = "# Import names guarded in vLLM with no known pip distribution (left out): " + ", ".join(left_out) + "\n\n"
    return header + "\n".join(blocks), len(blocks), left_out


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    block, count, left_out = build(root)
    splice(PATTERNS / "env.toml", "optional_modules", block)
    print(f"env.toml: {count} missing-module patterns; {len(left_out)} import names without a known distribution")


if __name__ == "__main__":
    main()
