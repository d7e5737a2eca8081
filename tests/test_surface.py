"""The error-surface index: the extractor on small synthetic releases, and the packaged index on real ones."""

from __future__ import annotations

import gzip
import json
import textwrap
from importlib import resources
from pathlib import Path

import pytest

from bench.surface import build_index, messages
from logdoctor.surface import SurfaceEntry, SurfaceHit, SurfaceIndex, default_index, sample_message
from logdoctor.surface import index as surface_index
from logdoctor.surface.template import skeleton

ARGSPECS = Path(__file__).resolve().parent.parent / "logdoctor" / "launch" / "argspecs"

CONFIG_V1 = """
import vllm.envs as envs
from vllm.logger import init_logger

logger = init_logger(__name__)


@config
class ParallelConfig:
    tensor_parallel_size: int = 1
    enable_expert_parallel: bool = False

    def __post_init__(self):
        if self.tensor_parallel_size > 8:
            raise ValueError(
                f"tensor_parallel_size ({self.tensor_parallel_size}) is larger "
                "than the node size"
            )
        elif self.enable_expert_parallel:
            raise ValueError("Expert parallelism needs {} GPUs, got {}".format(self.world_size, n))
        else:
            logger.warning("Falling back to %s backend for %d workers (ratio %.2f)", self.backend, self.workers, r)
        if envs.VLLM_FOO:
            raise RuntimeError("Pipeline stages %d exceed layers %d" % (self.pipeline_parallel_size, layers))
        msg = ("The data parallel size must divide "
               "the number of experts")
        msg += f", got {self.data_parallel_size}"
        raise ValueError(msg) from None

    def check(self, cfg):
        assert self.tensor_parallel_size > 0, f"tensor parallel size must be positive, got {self.tensor_parallel_size}"
        raise ValueError("Error: {}".format(cfg))
        raise ValueError(f"{cfg}")
        raise ValueError("Unsupported configuration: " + str(cfg) + " for this model")
        logger.warning_once("Swap space is deprecated and has been removed from the scheduler")
"""

EXCEPTIONS = """
_DEAD = ("EngineCore encountered an issue. "
         "See stack trace (above) for the root cause.")


class EngineDeadError(Exception):
    def __init__(self, *args):
        super().__init__(_DEAD, *args)


def dead_error(error=None):
    return EngineDeadError(f"Engine loop is not running: {error!r}")
"""

ARG_UTILS_V1 = """
import argparse


class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument("--enforce-eager", action="store_true")
        parser.add_argument("--enable-expert-parallel", action=argparse.BooleanOptionalAction)
        return parser
"""

ARG_UTILS_V2 = """
from vllm.config import ParallelConfig


class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        parallel_kwargs = get_kwargs(ParallelConfig)
        group = parser.add_argument_group("ParallelConfig")
        group.add_argument("--tensor-parallel-size", "-tp", **parallel_kwargs["tensor_parallel_size"])
        group.add_argument("--enable-expert-parallel", **parallel_kwargs["enable_expert_parallel"])
        return parser
"""

CLI_ARGS_V2 = """
@dataclass
class FrontendArgs:
    host: str | None = None
    allow_credentials: bool = False

    @staticmethod
    def add_cli_args(parser):
        frontend_kwargs = get_kwargs(FrontendArgs)
        for key, value in frontend_kwargs.items():
            parser.add_argument(f"--{key.replace('_', '-')}", **value)
        return parser
"""


LINEAR_V1 = """
class QKVParallelLinear:
    def __init__(self, parallel_config, total_num_kv_heads, tp_size):
        if total_num_kv_heads >= tp_size:
            assert total_num_kv_heads % tp_size == 0
        else:
            assert tp_size % total_num_kv_heads == 0
        assert (parallel_config.tensor_parallel_size <=
                total_num_kv_heads)
        assert x
        assert False
        assert not done
        assert out is not None
        assert isinstance(x, int)
        assert isinstance(layer, FusedMoE)
        assert (
            layer_spec.page_size_bytes
            == kv_cache_spec.page_size_bytes
        )

    def forward(self):
        raise NotImplementedError
        raise KVHeadsMismatchError()
        raise err


def mismatch():
    return KVHeadsMismatchError()  # a factory: its caller's raise is what a traceback shows
"""
# 0.2.0: one assert removed, the multi-line one reformatted as ruff writes it
LINEAR_V2 = LINEAR_V1.replace("        else:\n            assert tp_size % total_num_kv_heads == 0\n", "").replace(
    "assert (parallel_config.tensor_parallel_size <=\n                total_num_kv_heads)",
    "assert (\n            parallel_config.tensor_parallel_size <= total_num_kv_heads\n        )",
)


def _write(root: Path, version: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / version / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), "utf-8")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], SurfaceIndex]:
    """Three releases: 0.1.0 (literal add_argument options), 0.2.0 (dataclass-generated options, one
    message reworded, one removed, one added), 0.3.0 (EnableDisableAction)."""
    root = tmp_path_factory.mktemp("vllm-src")
    v2_config = (
        CONFIG_V1.replace('"than the node size"', '"than the nodes of this cluster"').replace(
            '        logger.warning_once("Swap space is deprecated and has been removed from the scheduler")\n', ""
        )
        + '\n\ndef added():\n    raise NotImplementedError("Chunked prefill is not supported with this '
        'backend yet")\n'
    )
    linear = "vllm/model_executor/layers/linear.py"
    _write(
        root,
        "0.1.0",
        {
            "vllm/config/parallel.py": CONFIG_V1,
            "vllm/engine/arg_utils.py": ARG_UTILS_V1,
            "vllm/v1/engine/exceptions.py": EXCEPTIONS,
            linear: LINEAR_V1,
        },
    )
    _write(
        root,
        "0.2.0",
        {
            "vllm/config/parallel.py": v2_config,
            "vllm/engine/arg_utils.py": ARG_UTILS_V2,
            "vllm/entrypoints/openai/cli_args.py": CLI_ARGS_V2,
            linear: LINEAR_V2,
        },
    )
    _write(
        root,
        "0.3.0",
        {
            "vllm/config/parallel.py": v2_config,
            "vllm/engine/arg_utils.py": ARG_UTILS_V2,
            "vllm/entrypoints/openai/cli_args.py": CLI_ARGS_V2,
            linear: LINEAR_V2,
            "vllm/utils/argparse_utils.py": "class EnableDisableAction:\n    pass\n",
        },
    )
    (root / "0.3.0" / "vllm" / "broken.py").write_text("def f(:\n", "utf-8")
    document, _lines = build_index.build(root, argspecs=None, log=False)
    return document, SurfaceIndex(document)


def _find(index: SurfaceIndex, template: str) -> SurfaceEntry:
    found = [e for e in index.entries() if e.template == template]
    assert found, f"no entry {template!r}; have {[e.template for e in index.entries()]}"
    return found[0]


def _statement(index: SurfaceIndex, statement: str) -> SurfaceEntry:
    found = [e for e in index.entries() if e.kind == "assert-bare" and e.statement == statement]
    assert len(found) == 1, f"no entry {statement!r}"
    return found[0]


# ---------------------------------------------------------------------------------------------------
# The extractor, rule by rule


def test_fstring_with_implicit_concatenation_and_condition(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "tensor_parallel_size ({tensor_parallel_size}) is larger than the node size")
    assert (entry.kind, entry.exception, entry.file) == ("raise", "ValueError", "vllm/config/parallel.py")
    assert entry.function == "ParallelConfig.__post_init__"
    assert entry.condition == "self.tensor_parallel_size > 8"
    assert entry.flags == ("--tensor-parallel-size",)
    assert entry.area == "config" and entry.startup


def test_format_call_under_elif(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "Expert parallelism needs {world_size} GPUs, got {n}")
    assert entry.condition == "not (self.tensor_parallel_size > 8) and self.enable_expert_parallel"
    assert entry.flags == ("--enable-expert-parallel", "--tensor-parallel-size")


def test_logger_percent_arguments_under_else(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "Falling back to {backend} backend for {workers} workers (ratio {r})")
    assert (entry.kind, entry.exception) == ("log", "WARNING")
    assert entry.condition == "not (self.tensor_parallel_size > 8) and not (self.enable_expert_parallel)"


def test_percent_operator_and_env_var(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "Pipeline stages {pipeline_parallel_size} exceed layers {layers}")
    assert entry.exception == "RuntimeError"
    assert entry.env_vars == ("VLLM_FOO",)
    assert entry.condition == "envs.VLLM_FOO"


def test_message_variable_with_augmented_assignment(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "The data parallel size must divide the number of experts, got {data_parallel_size}")
    assert entry.kind == "raise" and entry.condition is None


def test_assert_and_concatenation(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "tensor parallel size must be positive, got {tensor_parallel_size}")
    assert (entry.kind, entry.exception) == ("assert", "AssertionError")
    assert entry.condition == "not (self.tensor_parallel_size > 0)"
    assert entry.function == "ParallelConfig.check"
    assert _find(index, "Unsupported configuration: {cfg} for this model").kind == "raise"


def test_exception_class_messages_and_factories(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    dead = _find(index, "EngineCore encountered an issue. See stack trace (above) for the root cause.")
    assert (dead.kind, dead.exception, dead.function) == ("raise", "EngineDeadError", "EngineDeadError.__init__")
    factory = _find(index, "Engine loop is not running: {error}")
    assert (factory.exception, factory.function, factory.area) == ("EngineDeadError", "dead_error", "other")


def test_generic_templates_are_dropped_and_counted(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    document, index = synthetic
    templates = {e.template for e in index.entries()}
    assert "Error: {cfg}" not in templates and "{cfg}" not in templates
    stats = document["stats"]
    assert isinstance(stats, dict) and stats["dropped_templates"] >= 2


def test_bare_assert(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _find(index, "assert total_num_kv_heads % tp_size == 0")
    assert (entry.kind, entry.exception, entry.file) == (
        "assert-bare",
        "AssertionError",
        "vllm/model_executor/layers/linear.py",
    )
    assert entry.function == "QKVParallelLinear.__init__" and entry.line == 5
    assert entry.condition == "total_num_kv_heads >= tp_size and not (total_num_kv_heads % tp_size == 0)"
    assert entry.versions == ("0.1.0", "0.2.0", "0.3.0") and entry.statement is None and entry.files == 1
    assert index.lookup_code("    assert total_num_kv_heads % tp_size == 0") == SurfaceHit(entry, {}, 1.0)
    removed = _find(index, "assert tp_size % total_num_kv_heads == 0")
    assert removed.condition == "not (total_num_kv_heads >= tp_size) and not (tp_size % total_num_kv_heads == 0)"
    assert index.history(removed) == "in 0.1.0; removed in 0.2: upgrading avoids it"
    # a bare statement is source, not a message: message lookups never return it
    assert index.lookup("assert total_num_kv_heads % tp_size == 0") is None
    assert not index.candidates_present("assert total_num_kv_heads % tp_size == 0")


def test_multi_line_bare_assert(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    entry = _statement(index, "assert (parallel_config.tensor_parallel_size <= total_num_kv_heads)")
    assert entry.template == "assert ("  # the first line as the newest release (ruff's layout) writes it
    assert entry.flags == ("--tensor-parallel-size",) and entry.versions == ("0.1.0", "0.2.0", "0.3.0")
    for shown in [
        "assert (parallel_config.tensor_parallel_size <=",  # 0.1.0's first line (Python 3.10)
        "parallel_config.tensor_parallel_size <= total_num_kv_heads",  # 0.2.0's condition line (3.11+)
        "assert (\n    parallel_config.tensor_parallel_size <= total_num_kv_heads\n)",  # the whole statement
        "assert (parallel_config.tensor_parallel_size <=\n        total_num_kv_heads)",
        "    assert (parallel_config.tensor_parallel_size <=\n            ^^^^^^^^^^^^^^^^^^^^^^",  # carets
    ]:
        hit = index.lookup_code(shown)
        assert hit is not None and hit.entry == entry, shown
    assert index.lookup_code("assert (") is None  # the first line alone names nothing
    assert index.lookup_code("assert (\n    something_else <= total_num_kv_heads\n)") is None
    pages = _statement(index, "assert (layer_spec.page_size_bytes == kv_cache_spec.page_size_bytes)")
    for shown in ["layer_spec.page_size_bytes", "layer_spec.page_size_bytes\n== kv_cache_spec.page_size_bytes"]:
        hit = index.lookup_code(shown)
        assert hit is not None and hit.entry == pages, shown


def test_bare_raise_and_generic_statements(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    document, index = synthetic
    raised = _find(index, "raise KVHeadsMismatchError()")
    assert (raised.kind, raised.exception, raised.condition) == ("assert-bare", "KVHeadsMismatchError", None)
    hit = index.lookup_code("raise KVHeadsMismatchError()", exc_type="vllm.errors.KVHeadsMismatchError")
    assert hit is not None and hit.entry == raised
    assert index.lookup_code("raise KVHeadsMismatchError()", exc_type="AssertionError") is None
    assert index.lookup_code("return KVHeadsMismatchError()") is None
    kept = _find(index, "assert isinstance(layer, FusedMoE)")
    assert kept.kind == "assert-bare"
    bare = [e.template for e in index.entries() if e.kind == "assert-bare"]
    for generic in [
        "assert x",
        "assert False",
        "assert not done",
        "assert out is not None",
        "assert isinstance(x, int)",
        "raise NotImplementedError",
        "raise err",
    ]:
        assert generic not in bare
        assert index.lookup_code(generic) is None
    stats = document["stats"]
    assert isinstance(stats, dict)
    # 6 generic statements in each of three releases; `raise err` re-raises a caught exception (not a site)
    assert stats["dropped_bare_statements"] == 6 and stats["dropped_bare_sites"] == 18
    by_kind = stats["by_kind"]
    assert isinstance(by_kind, dict) and by_kind["assert-bare"] == len(bare) == 6


@pytest.mark.parametrize(
    "text",
    [
        "assert (x, y)\\\n    == f(z)",
        "assert (\n   a == b\n)\n      ^^^^",
        "  assert a.b == 3  # note",
        "assert ( a )",
        "raise Foo()  \n",
        "    assert x[ 0 ] == {1: 2}\n    ~~~~~~^^^^",
    ],
)
def test_code_keys_agree(text: str) -> None:
    """The builder writes the keys and the loader normalises a traceback's line with one rule."""
    assert messages.code_key(text) == surface_index.code_key(text)


def test_parse_failures_are_reported(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    document, _ = synthetic
    stats = document["stats"]
    assert isinstance(stats, dict) and stats["failed"] == 1


def test_flags_per_era(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    assert index.flags("0.1.0") == {
        "--tensor-parallel-size",
        "-tp",
        "--enforce-eager",
        "--enable-expert-parallel",
        "--no-enable-expert-parallel",
    }
    # dataclass fields: a bool field gets --no-x, an int field does not; the frontend loop adds every field
    assert index.flags("0.2.0") == {
        "--tensor-parallel-size",
        "-tp",
        "--enable-expert-parallel",
        "--no-enable-expert-parallel",
        "--host",
        "--allow-credentials",
        "--no-allow-credentials",
    }
    # EnableDisableAction: --enable-x pairs with --disable-x, other booleans keep --no-x
    assert index.flags("0.3.0") == {
        "--tensor-parallel-size",
        "-tp",
        "--enable-expert-parallel",
        "--disable-expert-parallel",
        "--host",
        "--allow-credentials",
        "--no-allow-credentials",
    }
    assert index.flags("0.2.5") == index.flags("0.2.0")  # the nearest release at or below


def test_versions_variants_and_history(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    _, index = synthetic
    old = _find(index, "tensor_parallel_size ({tensor_parallel_size}) is larger than the node size")
    new = _find(index, "tensor_parallel_size ({tensor_parallel_size}) is larger than the nodes of this cluster")
    assert old.versions == ("0.1.0",) and new.versions == ("0.2.0", "0.3.0")
    assert old.variants == (new.id,) and new.variants == (old.id,)
    assert index.history(new).startswith("in 0.2.0-0.3.0; reworded in 0.2 (was: ")
    assert "reworded in 0.2 (now: " in index.history(old)
    removed = _find(index, "Swap space is deprecated and has been removed from the scheduler")
    assert index.history(removed) == "in 0.1.0; removed in 0.2: upgrading avoids it"
    added = _find(index, "Chunked prefill is not supported with this backend yet")
    assert index.history(added) == "in 0.2.0-0.3.0; added in 0.2"
    kept = _find(index, "Pipeline stages {pipeline_parallel_size} exceed layers {layers}")
    assert kept.versions == ("0.1.0", "0.2.0", "0.3.0") and index.history(kept) == "in 0.1.0-0.3.0"


def test_output_is_deterministic(synthetic: tuple[dict[str, object], SurfaceIndex], tmp_path: Path) -> None:
    document, _ = synthetic
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    build_index.write(a, document)
    build_index.write(b, json.loads(json.dumps(document)))
    assert a.read_bytes() == b.read_bytes()
    stored, built = SurfaceIndex.load(a), synthetic[1]
    assert stored.versions == ("0.1.0", "0.2.0", "0.3.0")
    assert stored.entries() == built.entries() and stored.anchors() == built.anchors()  # decoded when reached


# ---------------------------------------------------------------------------------------------------
# The packaged index, on real vLLM messages

TP_HEADS = "Total number of attention heads (32) must be divisible by tensor parallel size (3)."
KV_TOO_SMALL = (
    "To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (4.37 GiB). Based on the available memory, the "
    "estimated maximum model length is 35776. Try increasing `gpu_memory_utilization` (which also controls "
    "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
    "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)
MAX_MODEL_LEN = (
    "1 validation error for VllmConfig\n"
    "  Value error, User-specified max_model_len (200000) is greater than the derived max_model_len "
    "(max_position_embeddings=131072 or model_max_length=None in model's config.json). To allow overriding "
    "this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be "
    "used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
    "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding "
    "derived_max_model_len will cause a CUDA array out-of-bounds error. [type=value_error, "
    "input_value=ArgsKwargs((), {...}), input_type=ArgsKwargs]\n"
    "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"
)


@pytest.fixture(scope="module")
def index() -> SurfaceIndex:
    return default_index()


def test_packaged_index_covers_the_releases(index: SurfaceIndex) -> None:
    assert index.versions[0] == "0.4.3" and index.versions[-1] == "0.33.0"
    assert len(index.entries()) > 10000


def test_tensor_parallel_heads(index: SurfaceIndex) -> None:
    hit = index.lookup("ValueError: " + TP_HEADS, "ValueError", "0.33.0")
    assert hit is not None
    entry = hit.entry
    assert (entry.file, entry.function) == ("vllm/config/model.py", "ModelConfig.verify_with_parallel_config")
    assert entry.condition == "total_num_attention_heads % tensor_parallel_size != 0"
    assert entry.flags == ("--tensor-parallel-size",)
    assert entry.versions[0] == "0.4.3" and entry.versions[-1] == "0.33.0"
    assert hit.values == {"total_num_attention_heads": "32", "tensor_parallel_size": "3"}


def test_kv_cache_too_small(index: SurfaceIndex) -> None:
    hit = index.lookup(KV_TOO_SMALL, "ValueError", "0.33.0")
    assert hit is not None
    entry = hit.entry
    assert entry.file == "vllm/v1/core/kv_cache_planning.py"
    assert entry.function == "_check_enough_kv_cache_memory"
    assert entry.condition == "needed_memory > available_memory"
    assert set(entry.flags) >= {"--gpu-memory-utilization", "--max-model-len"}
    assert entry.area == "kv-cache" and "0.33.0" in entry.versions and "0.21.0" not in entry.versions
    assert hit.values["needed_memory"] == "16.00" and hit.values["available_memory"] == "4.37"
    history = index.history(entry)
    assert history.startswith("in 0.22.1-0.33.0; reworded in 0.22 (was: ") and "models's" in history


def test_max_model_len_pydantic_detail(index: SurfaceIndex) -> None:
    hit = index.lookup(MAX_MODEL_LEN, "ValidationError", "0.33.0")
    assert hit is not None
    entry = hit.entry
    assert (entry.kind, entry.exception, entry.file) == ("raise", "ValueError", "vllm/config/model.py")
    assert entry.function == "_get_and_verify_max_len"
    assert entry.condition is not None and entry.condition.endswith("not (envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN)")
    assert entry.flags == ("--max-model-len",) and entry.env_vars == ("VLLM_ALLOW_LONG_MAX_MODEL_LEN",)
    assert hit.values["max_model_len"] == "200000"


@pytest.mark.parametrize(
    "form",
    [
        "{m}",
        "ValueError: {m}",
        "(EngineCore_DP0 pid=1) ERROR 11-30 19:41:07 [core.py:1] ValueError: {m}",
        "Value error, {m} [type=value_error, input_value=ArgsKwargs((), {{}}), input_type=ArgsKwargs]",
    ],
)
def test_lookup_accepts_the_renderings(index: SurfaceIndex, form: str) -> None:
    hit = index.lookup(form.format(m=TP_HEADS))
    assert hit is not None and hit.entry.function == "ModelConfig.verify_with_parallel_config"


@pytest.mark.parametrize(
    "wrapped",
    [
        TP_HEADS.replace("by tensor", "by\ntensor"),  # wrapped at a space
        TP_HEADS.replace("by tensor", "by\n   tensor"),
        TP_HEADS.replace("parallel size", "paral\nlel size"),  # a word split by the terminal
        TP_HEADS.replace("divisible by ", "divisible by\n"),  # the space lost at the join
    ],
)
def test_lookup_tolerates_hard_wraps(index: SurfaceIndex, wrapped: str) -> None:
    hit = index.lookup(wrapped)
    assert hit is not None and hit.values["tensor_parallel_size"] == "3"


def test_removed_message_history(index: SurfaceIndex) -> None:
    hit = index.lookup(
        "Too large swap space. 60.00 GiB out of the 62.00 GiB total CPU memory is allocated for the swap space."
    )
    assert hit is not None
    assert hit.entry.versions[-1] == "0.17.1"
    assert index.history(hit.entry).endswith("removed in 0.18: upgrading avoids it")


ORDINARY = [
    "(APIServer pid=1) INFO 11-30 19:41:07 [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000",
    "(APIServer pid=1) INFO 11-30 19:41:10 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%",
    "INFO 11-30 19:41:07 [default_loader.py:262] Loading weights took 3.21 seconds",
    '(APIServer pid=1) INFO:     127.0.0.1:54321 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    '  File "/usr/lib/python3.12/site-packages/vllm/config/model.py", line 1560, in verify_with_parallel_config',
    "Traceback (most recent call last):",
    "INFO 11-30 19:41:07 [gpu_model_runner.py:2007] Model loading took 15.2 GiB and 12.3 seconds",
]
NEAR_MISSES = [
    "The number of attention heads must be divisible by the number of GPUs.",
    "Total number of attention heads must be even.",
    "tensor parallel size is not supported on this platform, please check the documentation",
    "This model is not supported",
    "Failed to load the model",
    "Error: something went wrong",
    "Invalid value",
    "KV cache is needed for this request",
    "Engine core initialization failed.",
    "CUDA out of memory. Tried to allocate 2.00 GiB",
    "The user asked whether the swap space is too large for the CPU memory.",
]


@pytest.mark.parametrize("text", ORDINARY + NEAR_MISSES)
def test_no_hit_on_ordinary_text(index: SurfaceIndex, text: str) -> None:
    hit = index.lookup(text)
    assert hit is None, f"{text!r} matched {hit.entry.template!r}"


def test_sampled_messages_are_found(index: SurfaceIndex) -> None:
    entries = [e for e in index.entries() if e.kind != "assert-bare"][::50]
    for entry in entries:
        hit = index.lookup(sample_message(entry), entry.exception)
        assert hit is not None, entry.template
        # the same text, up to a space (a missing space is tolerated, so "group.Required" and
        # "group. Required", two releases' wordings, both match)
        assert skeleton(hit.entry.template).replace(" ", "") == skeleton(entry.template).replace(" ", "")


def test_candidates_present_and_anchors(index: SurfaceIndex) -> None:
    assert index.candidates_present(TP_HEADS)
    assert not index.candidates_present("Loading weights took 3.21 seconds")
    anchors = index.anchors()
    assert any("must be divisible by tensor parallel size" in a for a in anchors)
    assert all(len(a) >= 4 for a in anchors)


def test_entry_by_id(index: SurfaceIndex) -> None:
    first = index.entries()[0]
    assert index.entry(first.id) == first and index.entry("nope") is None


def test_flags_match_the_real_parser_dump(index: SurfaceIndex) -> None:
    """The statically read options equal those of vLLM 0.33.0's real parser (its visible option strings;
    the hidden `--no-enable-x` aliases of EnableDisableAction are in neither)."""
    dump = json.loads((ARGSPECS / "0.33.0.json").read_text("utf-8"))
    assert index.flags("0.33.0") == {o for opt in dump["options"] for o in opt["options"]}
    assert "--swap-space" not in index.flags("0.33.0") and "--swap-space" in index.flags("0.17.1")


# ---------------------------------------------------------------------------------------------------
# Bare asserts in the packaged index, by the source line a traceback prints


def test_lookup_code_finds_a_bare_assert_of_the_newest_release(index: SurfaceIndex) -> None:
    shown = "    assert self.total_num_kv_heads % tp_size == 0\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    hit = index.lookup_code(shown, "0.33.0", "AssertionError")
    assert hit is not None and hit.values == {}
    entry = hit.entry
    assert (entry.kind, entry.exception, entry.template) == (
        "assert-bare",
        "AssertionError",
        "assert self.total_num_kv_heads % tp_size == 0",
    )
    assert entry.function.endswith("Attention.__init__") and entry.file.startswith("vllm/model")
    assert entry.condition == "self.total_num_kv_heads >= tp_size and not (self.total_num_kv_heads % tp_size == 0)"
    assert entry.versions[0] == "0.4.3" and entry.versions[-1] == "0.33.0"
    assert entry.files > 10  # every model's attention has it: the traceback's own frame says which
    assert index.lookup_code("assert self.total_num_kv_heads  %  tp_size == 0") == hit  # spacing


def test_lookup_code_finds_statements_of_older_releases(index: SurfaceIndex) -> None:
    hit = index.lookup_code('assert "factor" in rope_scaling', "0.5.5")
    assert hit is not None
    entry = hit.entry
    assert (entry.file, entry.function) == ("vllm/config.py", "_get_and_verify_max_len")
    assert entry.flags == ("--rope-scaling",) and entry.versions == ("0.4.3", "0.5.5")
    assert index.history(entry) == "in 0.4.3-0.5.5; removed in 0.6: upgrading avoids it"
    raised = index.lookup_code("raise BlockAllocator.NoFreeBlocksError()", "0.6.6.post1", "NoFreeBlocksError")
    assert raised is not None
    assert (raised.entry.exception, raised.entry.area) == ("NoFreeBlocksError", "kv-cache")
    assert raised.entry.condition == "not self._free_block_indices"
    assert index.history(raised.entry) == "in 0.4.3-0.10.2; removed in 0.11: upgrading avoids it"


def test_lookup_code_prefers_the_release(index: SurfaceIndex) -> None:
    """The first line of a multi-line assert that 0.11-0.15 and 0.16+ wrote with different sets."""
    line = "assert not isinstance(quant_dtype, str) or quant_dtype in {"
    old, new, newest = (index.lookup_code(line, v) for v in ("0.12.0", "0.33.0", None))
    assert old is not None and new is not None
    assert old.entry.versions[0] == "0.11.2" and old.entry.versions[-1] == "0.15.1"
    assert new.entry.versions[0] == "0.16.0" and "0.33.0" in new.entry.versions and newest == new
    assert new.entry.statement is not None and '"mxfp8"' in new.entry.statement


@pytest.mark.parametrize(
    "line",
    [
        "hidden_states = self.mlp(hidden_states)",
        "return self.model(input_ids, positions, intermediate_tensors, inputs_embeds)",
        "output = self.model_executor.execute_model(scheduler_output)",
        "self.model_executor.determine_available_memory()",
        "raise NotImplementedError",  # the same in hundreds of places
        'raise ValueError(f"Unsupported {x}")',
        "return EngineDeadError()",
        "assert x",
        "assert out is not None",
        "assert (",
        "AssertionError",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/site-packages/vllm/config/model.py", line 1560, in verify_with_parallel_config',
        "",
    ],
)
def test_lookup_code_ignores_other_lines(index: SurfaceIndex, line: str) -> None:
    hit = index.lookup_code(line, "0.33.0")
    assert hit is None, f"{line!r} matched {hit.entry.template!r}"


def test_the_packaged_index_keys_are_the_ones_its_templates_give() -> None:
    # The keys and postings are written by build_index.py so a load parses no template; they must be what
    # lookup_keys() picks from the entries themselves, or a lookup misses entries silently.
    packaged = resources.files("logdoctor.surface").joinpath(surface_index.DATA_FILE).read_bytes()
    header, *rest = gzip.decompress(packaged).rstrip(b"\n").split(b"\n")
    data = json.loads(header)
    assert data["tables"] == list(surface_index.TABLES)
    tables = {name: json.loads(line) for name, line in zip(data["tables"], rest, strict=False)}
    lines = rest[len(data["tables"]) :]
    entries = [json.loads(line) for line in lines]
    assert data["count"] == len(entries)
    assert tables["offsets"][-1] == sum(len(line) + 1 for line in lines)
    assert [raw["i"] for raw in entries] == tables["ids"] and tables["anchors"] == surface_index.anchor_list(entries)
    chosen = surface_index.lookup_keys(entries)
    keys = [k.split(surface_index.KEY_SEPARATOR) if k else [] for k in tables["keys"]]
    assert keys == [keys for keys, _ in chosen] and tables["literal"] == [literal for _, literal in chosen]
    by_key, by_code = surface_index.postings([{**raw, "ky": k} for raw, k in zip(entries, keys, strict=True)])
    assert tables["postings"] == by_key and tables["code"] == by_code


def test_a_synthetic_build_is_found_through_its_stored_keys(synthetic: tuple[dict[str, object], SurfaceIndex]) -> None:
    document, index = synthetic
    entries = document["entries"]
    assert isinstance(entries, list) and all("lc" in raw for raw in entries)
    assert all(raw.get("ky") or raw["k"] == messages.BARE for raw in entries)
    assert all(index.entry(str(raw["i"])) is not None for raw in entries)


def test_a_remembered_lookup_answers_as_a_fresh_one(
    synthetic: tuple[dict[str, object], SurfaceIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index = synthetic
    monkeypatch.setattr(surface_index, "LOOKUPS_KEPT", 2)
    messages_ = [f"tensor_parallel_size ({n}) is larger than the node size" for n in (16, 32, 64)] + ["nothing"]
    fresh = [index.hits(m)[:1] for m in messages_]
    for _ in range(2):
        looked_up = [index.lookup(m) for m in messages_]
        assert [[h] if h is not None else [] for h in looked_up] == fresh
    assert looked_up[0] is not None and looked_up[0].values == {"tensor_parallel_size": "16"}
    assert len(index._looked_up) <= 2
