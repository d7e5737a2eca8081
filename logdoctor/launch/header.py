"""One startup-header line's message to the launch settings it reveals.

The message is the text after vLLM's `LEVEL MM-DD HH:MM:SS [file:N] ` prefix (records.py strips it).
Every format string below was checked against the vLLM sources of 0.6.6.post1, 0.8.5.post1, 0.10.2,
0.11.0, 0.13.0, 0.23.0 and 0.27.0-0.33.0; the version ranges name where each shape was seen.

    version       vLLM API server version X                    (<= 0.13)
                  vLLM server version X, serving model Y       (0.15+ when the logo is off)
                  ... ▀▄▀ █  version X  /  ... █  model   Y    (0.15+, the ASCII logo)
    arguments     args: Namespace(...)                         (<= 0.8)
                  non-default args: {...}                      (0.9+)
    engine        Initializing a V1 LLM engine (vX) with config: model=..., ...       (0.8+)
                  Initializing a V0 LLM engine (vX) with config: ..., use_cached_outputs=True,  (0.8-0.10)
                  Initializing an LLM engine (vX) with config: ...                    (0.4-0.6)
    one-liners    the `_NOTICES` table: architecture, max model len, chunked prefill, Mamba cache
                  mode, prefix caching, Mamba backends, KV connector, world size, model runner.

`parse_header_line` is the entry point: it runs on every log line, so it looks at the first six
characters of the message before it tries any pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from logdoctor.launch.pyrepr import Call, EnumMember, ReprError, Symbol, parse, parse_leading, parse_prefix


@dataclass(frozen=True, slots=True)
class Setting:
    """One value a header line reveals, named by the vLLM argument it is (`tensor_parallel_size`)."""

    arg: str
    value: object


@dataclass(frozen=True, slots=True)
class HeaderFact:
    """What one header line says: its kind and the settings it reveals."""

    kind: str
    settings: tuple[Setting, ...]
    truncated: bool = False  # the line was cut and only its complete part was read
    details: dict[str, object] = field(default_factory=dict)  # what the line says that is not a setting

    def get(self, arg: str, default: object = None) -> object:
        for setting in self.settings:
            if setting.arg == arg:
                return setting.value
        return default

    @property
    def values(self) -> dict[str, object]:
        return {setting.arg: setting.value for setting in self.settings}


# --- version lines -------------------------------------------------------------------------------------

VersionForm = Literal["api_server", "server", "logo_version", "logo_model"]


@dataclass(frozen=True, slots=True)
class VersionLine:
    form: VersionForm
    version: str | None
    model: str | None


_API_SERVER_VERSION = re.compile(r"vLLM API server version (\S+)")
_SERVER_VERSION = re.compile(r"vLLM server version (\S+), serving model (\S+)")
# The logo's third and fourth lines (0.15+). `█` cannot start anything else vLLM logs with `version`.
_LOGO_VERSION = re.compile(r"[ ▄▀█]*█  version (\S+)")
_LOGO_MODEL = re.compile(r"[ ▄▀█]*█  model   (\S+)")


def parse_version_line(message: str) -> VersionLine | None:
    if message.startswith("vLLM "):
        match = _API_SERVER_VERSION.match(message)
        if match:
            return VersionLine("api_server", match[1], None)
        match = _SERVER_VERSION.match(message)
        if match:
            return VersionLine("server", match[1], match[2])
        return None
    if "█  " not in message:
        return None
    match = _LOGO_VERSION.match(message)
    if match:
        return VersionLine("logo_version", match[1], None)
    match = _LOGO_MODEL.match(message)
    if match:
        return VersionLine("logo_model", None, match[1])
    return None


# --- argument lines ------------------------------------------------------------------------------------

ArgsForm = Literal["non_default", "namespace"]


@dataclass(frozen=True, slots=True)
class ArgsLine:
    """`non-default args: {...}` or `args: Namespace(...)`: argument dest name -> parsed value."""

    form: ArgsForm
    args: dict[str, object]
    truncated: bool = False


def parse_non_default_args(message: str) -> ArgsLine | None:
    """0.9+. A cut line gives its complete pairs, with `truncated=True`."""
    if not message.startswith("non-default args: {"):
        return None
    try:
        read = parse_prefix(message[len("non-default args: ") :])
    except ReprError:
        return None
    if not isinstance(read.value, dict):
        return None
    return ArgsLine("non_default", {str(key): value for key, value in read.value.items()}, read.truncated)


def parse_namespace_args(message: str) -> ArgsLine | None:
    """<= 0.8: every option, as the keyword arguments of the Namespace repr."""
    if not message.startswith("args: Namespace("):
        return None
    try:
        read = parse_prefix(message[len("args: ") :])
    except ReprError:
        return None
    if not isinstance(read.value, Call):
        return None
    return ArgsLine("namespace", dict(read.value.kwargs), read.truncated)


# --- the engine config summary ---------------------------------------------------------------------------


def _keys(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# `VllmConfig.__str__` keys in print order, per era (the version is in the same line, so the era is known).
# A key absent from a line is skipped; one between two known keys stays in the text of the one before.
_KEYS_0_4 = _keys(  # 0.4.3 `engine/llm_engine.py` explicit format (from the reference; 0.2-0.4 lines are subsets)
    "model speculative_config tokenizer skip_tokenizer_init tokenizer_mode revision rope_scaling "
    "tokenizer_revision trust_remote_code dtype max_seq_len download_dir load_format tensor_parallel_size "
    "disable_custom_all_reduce quantization enforce_eager kv_cache_dtype quantization_param_path "
    "device_config decoding_config seed served_model_name"
)
_KEYS_0_6 = _keys(  # 0.6.6.post1 `config.py`
    "model speculative_config tokenizer skip_tokenizer_init tokenizer_mode revision override_neuron_config "
    "tokenizer_revision trust_remote_code dtype max_seq_len download_dir load_format tensor_parallel_size "
    "pipeline_parallel_size disable_custom_all_reduce quantization enforce_eager kv_cache_dtype "
    "quantization_param_path device_config decoding_config observability_config seed served_model_name "
    "num_scheduler_steps multi_step_stream_outputs enable_prefix_caching chunked_prefill_enabled "
    "use_async_output_proc disable_mm_preprocessor_cache mm_processor_kwargs pooler_config compilation_config"
)
_KEYS_0_8 = tuple(key for key in _KEYS_0_6 if key != "quantization_param_path")  # 0.8.5.post1 (0.7-0.9)
_KEYS_0_10 = _keys(  # 0.10.2, plus 0.10.1.1's override_neuron_config (reference 2.4)
    "model speculative_config tokenizer skip_tokenizer_init tokenizer_mode revision override_neuron_config "
    "tokenizer_revision trust_remote_code dtype max_seq_len download_dir load_format tensor_parallel_size "
    "pipeline_parallel_size data_parallel_size disable_custom_all_reduce quantization enforce_eager "
    "kv_cache_dtype device_config decoding_config observability_config seed served_model_name "
    "enable_prefix_caching chunked_prefill_enabled use_async_output_proc pooler_config compilation_config"
)
_KEYS_0_11 = _keys(  # 0.11.0; 0.12 unseen, so either name of the chunked-prefill flag is accepted
    "model speculative_config tokenizer skip_tokenizer_init tokenizer_mode revision tokenizer_revision "
    "trust_remote_code dtype max_seq_len download_dir load_format tensor_parallel_size pipeline_parallel_size "
    "data_parallel_size disable_custom_all_reduce quantization enforce_eager kv_cache_dtype device_config "
    "structured_outputs_config observability_config seed served_model_name enable_prefix_caching "
    "chunked_prefill_enabled enable_chunked_prefill pooler_config compilation_config"
)
# 0.23.0-0.30.0; 0.13.0 is the same without the DCP, quantization_config, routed-experts and kernel keys.
_KEYS_0_13 = _keys(
    "model speculative_config tokenizer skip_tokenizer_init tokenizer_mode revision tokenizer_revision "
    "trust_remote_code dtype max_seq_len download_dir load_format tensor_parallel_size pipeline_parallel_size "
    "data_parallel_size decode_context_parallel_size dcp_comm_backend disable_custom_all_reduce quantization "
    "quantization_config enforce_eager enable_return_routed_experts kv_cache_dtype device_config "
    "structured_outputs_config observability_config seed served_model_name enable_prefix_caching "
    "enable_chunked_prefill pooler_config compilation_config kernel_config"
)
_KEYS_0_31 = tuple(  # 0.31.0-0.33.0
    "aux_output_config" if key == "enable_return_routed_experts" else key for key in _KEYS_0_13
)


@dataclass(frozen=True, slots=True)
class _Era:
    since: tuple[int, int]  # first (major, minor) the key list applies to
    keys: tuple[str, ...]

    @property
    def boundary(self) -> re.Pattern[str]:
        return _boundary(self.keys)


@lru_cache(maxsize=16)
def _boundary(keys: tuple[str, ...]) -> re.Pattern[str]:
    """`, key=` for any key of an era: literal alternatives then `=`, so it cannot backtrack (0.8.5 prints
    `,  device_config=` with two spaces). Compiled when a line of the era is met: the seven alternations
    cost a twentieth of a start, and most logs print one era's line."""
    return re.compile(r", {1,2}(" + "|".join(map(re.escape, keys)) + r")=")


# The last era whose `since` is <= the line's version applies.
_ERAS = (
    _Era((0, 0), _KEYS_0_4),
    _Era((0, 5), _KEYS_0_6),
    _Era((0, 7), _KEYS_0_8),
    _Era((0, 10), _KEYS_0_10),
    _Era((0, 11), _KEYS_0_11),
    _Era((0, 13), _KEYS_0_13),
    _Era((0, 31), _KEYS_0_31),
)
_LEGACY_ERA = _ERAS[0]
_ENGINE = re.compile(r"Initializing an? (?:(V[01]) )?LLM engine(?: \(v([^)\s]+)\))? with config: ")
_CACHED_OUTPUTS = re.compile(r", use_cached_outputs=(True|False), ?\s*\Z")  # the V0 forms' tail
_UNKNOWN_KEY = re.compile(r",\s+[^\W\d]\w*=")
_VERSION_NUMBERS = re.compile(r"(\d+)\.(\d+)")

EngineKind = Literal["V1", "V0", "LLM"]


@dataclass(frozen=True, slots=True)
class EngineConfigLine:
    engine: EngineKind  # `LLM` for the unversioned `Initializing an LLM engine` of 0.2-0.6
    version: str | None
    fields: dict[str, str]  # summary key -> raw value text, in print order
    values: dict[str, object]  # vLLM argument -> converted value, for the keys the rules use
    unknown: str = ""  # `key=value` text under no key this era knows (a newer vLLM, or the 0.4 `)`)
    use_cached_outputs: bool | None = None  # V0 only


def parse_engine_config(message: str) -> EngineConfigLine | None:
    if not message.startswith("Initializing a"):
        return None
    match = _ENGINE.match(message)
    if not match:
        return None
    engine: EngineKind = "V1" if match[1] == "V1" else "V0" if match[1] == "V0" else "LLM"
    version = match[2]
    summary = message[match.end() :]
    use_cached_outputs = None
    tail = _CACHED_OUTPUTS.search(summary)
    if tail:
        use_cached_outputs = tail[1] == "True"
        summary = summary[: tail.start()]
    era = _era(version)
    fields, unknown = _split_summary(summary.rstrip(), era)
    if era is _LEGACY_ERA and fields:
        # 0.4.3's format ends in an unmatched `)`.
        last = next(reversed(fields))
        if fields[last].endswith(")") and fields[last].count("(") < fields[last].count(")"):
            fields[last] = fields[last][:-1]
    values = _convert_fields(fields)
    return EngineConfigLine(engine, version, fields, values, unknown, use_cached_outputs)


def _era(version: str | None) -> _Era:
    if version is None:
        return _LEGACY_ERA  # only 0.2-0.4 print no version
    numbers = _VERSION_NUMBERS.match(version)
    if numbers is None:
        return _ERAS[-1]
    found = (int(numbers[1]), int(numbers[2]))
    return [era for era in _ERAS if era.since <= found][-1]


def _split_summary(summary: str, era: _Era) -> tuple[dict[str, str], str]:
    """`model='m', dtype=torch.bfloat16, ...` -> {'model': "'m'", 'dtype': 'torch.bfloat16', ...}.

    Values hold `, ` themselves (dicts, reprs), so a boundary is `, key=` for a key that comes later in
    the era's order than the key being read; an earlier or unknown key is part of the value. Then text
    after a value that is a complete repr, like `, new_key=1`, moves to the unknown text.
    """
    order = {key: index for index, key in enumerate(era.keys)}
    first = summary[: max(summary.find("="), 0)]
    if first not in order:
        return {}, summary
    fields: dict[str, str] = {}
    current, rank, value_start = first, order[first], len(first) + 1
    for boundary in era.boundary.finditer(summary, value_start):
        key = boundary[1]
        if order[key] <= rank:
            continue
        fields[current] = summary[value_start : boundary.start()]
        current, rank, value_start = key, order[key], boundary.end()
    fields[current] = summary[value_start:]
    unknown: list[str] = []
    for key, raw in fields.items():
        own, extra = _own_value(raw)
        if extra:
            fields[key] = own
            unknown.append(extra)
    return fields, ", ".join(unknown)


def _own_value(raw: str) -> tuple[str, str]:
    """Split off `, other_key=...` that follows a value which is a complete repr."""
    try:
        _, end = parse_leading(raw)
    except ReprError:
        return raw, ""
    if _UNKNOWN_KEY.match(raw, end):
        return raw[:end], raw[end:].lstrip(", ")
    return raw, ""


def _literal(raw: str) -> object:
    try:
        value = parse(raw)
    except ReprError:
        return raw
    return _plain(value)


def _plain(value: object) -> object:
    """What a rule compares: an enum member's value, a bare name's text."""
    if isinstance(value, EnumMember):
        return value.value
    if isinstance(value, Symbol):
        return value.name
    return value


def _integer(raw: str) -> object:
    value = _literal(raw)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return raw


def _boolean(raw: str) -> object:
    return {"True": True, "False": False}.get(raw.strip(), raw)


def _optional_text(raw: str) -> object:
    value = _literal(raw)
    return None if value is None else str(value)


def _dtype(raw: str) -> object:
    # `torch.bfloat16` is printed; `--dtype` takes `bfloat16`.
    return raw.strip().removeprefix("torch.")


def _speculative(raw: str) -> object:
    """None, or `SpeculativeConfig(method='mtp', model='org/m', num_spec_tokens=3)` as a dict of its fields."""
    value = _literal(raw)
    if isinstance(value, Call):
        return {name: _plain(item) for name, item in value.kwargs.items()}
    return value


# summary key -> (vLLM argument, converter): the values the rule sets read.
_CONVERTED: dict[str, tuple[str, Callable[[str], object]]] = {
    "model": ("model", _literal),
    "speculative_config": ("speculative_config", _speculative),
    "tensor_parallel_size": ("tensor_parallel_size", _integer),
    "pipeline_parallel_size": ("pipeline_parallel_size", _integer),
    "data_parallel_size": ("data_parallel_size", _integer),
    "max_seq_len": ("max_model_len", _integer),  # the summary calls it max_seq_len
    "dtype": ("dtype", _dtype),
    "enable_prefix_caching": ("enable_prefix_caching", _boolean),
    "enable_chunked_prefill": ("enable_chunked_prefill", _boolean),
    "chunked_prefill_enabled": ("enable_chunked_prefill", _boolean),  # <= 0.11 name
    "quantization": ("quantization", _optional_text),
    "enforce_eager": ("enforce_eager", _boolean),
    "trust_remote_code": ("trust_remote_code", _boolean),
    "kv_cache_dtype": ("kv_cache_dtype", _optional_text),
    "seed": ("seed", _integer),
}


def _convert_fields(fields: dict[str, str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for key, raw in fields.items():
        if key in _CONVERTED:
            arg, convert = _CONVERTED[key]
            values[arg] = convert(raw.strip())
    return values


# --- one-line notices ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Group:
    """A setting's value taken from a named group of the notice's pattern."""

    name: str
    convert: Callable[[str], object] = str


@dataclass(frozen=True, slots=True)
class _Notice:
    kind: str
    pattern: str
    settings: tuple[tuple[str, object], ...]  # (vLLM argument, constant or _Group)
    versions: str  # where the format string was seen, for the reader

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A notice's regex, compiled when a message starts like it: compiling the table's two dozen at
    import cost a thirtieth of a start, and a log shows a few of them."""
    return re.compile(pattern)


def _enabling(action: str) -> bool:
    return action == "Enabling"


_NOTICES: tuple[_Notice, ...] = (
    _Notice(
        "architecture",
        (r"Resolved architecture: (?P<arch>\S+)"),
        (("architecture", _Group("arch")),),
        "0.10+",
    ),
    _Notice(
        "max_model_len",
        (r"Using max model len (?P<len>\d+)"),
        (("max_model_len", _Group("len", int)),),
        "0.9.2+",
    ),
    _Notice(
        "chunked_prefill",
        (r"Chunked prefill is enabled with max_num_batched_tokens=(?P<tokens>\d+)"),
        (("enable_chunked_prefill", True), ("max_num_batched_tokens", _Group("tokens", int))),
        "0.6+",
    ),
    # Hybrid / Mamba prefix caching (model_executor/models/config.py). The `by default` line is a
    # warning picking 'all' or 'align' in 0.23-0.27, info picking 'align' from 0.28.
    _Notice(
        "mamba_cache_mode_default",
        (
            r"Mamba cache mode is set to '(?P<mode>[^']*)' for (?P<arch>\S+) by default when prefix caching is enabled"
        ),
        (("mamba_cache_mode", _Group("mode")), ("architecture", _Group("arch")), ("enable_prefix_caching", True)),
        "0.23+",
    ),
    _Notice(
        "mamba_cache_mode_none",
        (r"Mamba cache mode is set to 'none' when prefix caching is disabled"),
        (("mamba_cache_mode", "none"), ("enable_prefix_caching", False)),
        "0.23+",
    ),
    _Notice(
        "mamba_cache_mode_all_deprecated",
        (r"Mamba cache mode 'all' is deprecated"),
        (("mamba_cache_mode", "all"),),
        "0.30-0.31",
    ),
    _Notice(
        "mamba_prefix_caching_experimental",
        (r"Warning: Prefix caching in Mamba cache '(?P<mode>[^']*)' mode is currently enabled\."),
        (("mamba_cache_mode", _Group("mode")), ("enable_prefix_caching", True)),
        "0.23-0.27",
    ),
    _Notice(
        "mamba_prefix_caching_experimental",
        (r"Warning: Prefix caching is currently enabled\. Its support for Mamba layers is experimental"),
        (("enable_prefix_caching", True),),
        "0.13",
    ),
    _Notice(
        "mamba_cache_mode_fallback",
        (
            r"Hybrid or mamba-based model detected without support for prefix caching with Mamba cache 'all' "
            r"mode: falling back to 'align' mode"
        ),
        (("mamba_cache_mode", "align"), ("enable_prefix_caching", True)),
        "0.23-0.31",
    ),
    _Notice(
        "hybrid_prefix_caching_disabled",
        (
            r"Hybrid or mamba-based model detected(?:: disabling prefix caching since it is not yet supported"
            r"| without support for prefix caching: disabling)"
        ),
        (("enable_prefix_caching", False),),
        "0.10-0.11 / 0.12-0.13",
    ),
    _Notice(
        "hybrid_cudagraph_mode",
        (r"Hybrid or mamba-based model detected: setting cudagraph mode to (?P<mode>\w+)"),
        (("cudagraph_mode", _Group("mode")),),
        "0.10-0.11",
    ),
    # engine/arg_utils.py: `(%s) prefix caching by default` INFO in 0.10-0.11, `%s ...` from 0.13 (DEBUG
    # from at least 0.33).
    _Notice(
        "prefix_caching_default",
        (r"\(?(?P<action>Enabling|Disabling)\)? prefix caching by default"),
        (("enable_prefix_caching", _Group("action", _enabling)),),
        "0.10+",
    ),
    _Notice(
        "chunked_prefill_default",
        (r"\(?(?P<action>Enabling|Disabling)\)? chunked prefill by default"),
        (("enable_chunked_prefill", _Group("action", _enabling)),),
        "0.10+",
    ),
    # `Disabling prefix caching: model has non-causal attention layers.` (0.27+), `...: this instance runs
    # the multi-modal encoder only.` (0.29+), `Disabling prefix caching for FLASHINFER/TRITON_MLA with batch
    # invariance, as it is not yet supported.` (0.13+).
    _Notice(
        "prefix_caching_disabled",
        (r"Disabling prefix caching(?::| for) (?P<reason>.+)"),
        (("enable_prefix_caching", False),),
        "0.13+",
    ),
    _Notice(
        "encoder_decoder_disabling",
        (r"Encoder-decoder models do not support chunked prefill nor prefix caching; disabling both"),
        (("enable_chunked_prefill", False), ("enable_prefix_caching", False)),
        "0.33",
    ),
    _Notice(
        "mamba_ssm_cache_dtype",
        (r"Updating mamba_ssm_cache_dtype to '(?P<dtype>[^']*)' for NemotronH model"),
        (("mamba_ssm_cache_dtype", _Group("dtype")),),
        "0.13+",
    ),
    _Notice(
        "mamba_backend",
        (r"Using (?P<backend>\S+) Mamba SSU backend\."),
        (("mamba_backend", _Group("backend")),),
        "0.23+",
    ),
    # Logged only with --use-replayssm; the ReplaySSM backend is the Mamba backend (`backend.value`).
    _Notice(
        "replayssm_backend",
        (r"Using (?P<backend>\S+) ReplaySSM backend\."),
        (("use_replayssm", True), ("mamba_backend", _Group("backend"))),
        "0.30+",
    ),
    _Notice(
        "mamba_backend_cpu_override",
        (r"CPU platform detected: overriding Mamba SSU backend from '(?P<old>[^']*)' to '(?P<new>[^']*)'"),
        (("mamba_backend", _Group("new")),),
        "0.27+",
    ),
    # `... with name: %s and engine_id: %s` from 0.10; 0.8.5 logs the name only.
    _Notice(
        "kv_connector",
        (r"Creating v1 connector with name: (?P<name>\S+?)(?: and engine_id: (?P<engine_id>\S+))?\s*\Z"),
        (("kv_connector", _Group("name")), ("kv_engine_id", _Group("engine_id"))),
        "0.8+",
    ),
    # INFO from 0.12 (DEBUG before).
    _Notice(
        "distributed_init",
        (
            r"world_size=(?P<world>\d+) rank=(?P<rank>\d+) local_rank=(?P<local>-?\d+) "
            r"distributed_init_method=(?P<method>\S+) backend=(?P<backend>\S+)"
        ),
        (
            ("world_size", _Group("world", int)),
            ("rank", _Group("rank", int)),
            ("local_rank", _Group("local", int)),
            ("distributed_init_method", _Group("method")),
            ("distributed_backend", _Group("backend")),
        ),
        "0.6+",
    ),
    _Notice(
        "model_runner_v1_fallback",
        (r"Model Runner V2 does not yet support (?P<features>.+); using the V1 model runner instead\."),
        (("use_v2_model_runner", False),),
        "0.23+",
    ),
    # The flag is accepted and ignored: Mamba prefix caching follows --enable-prefix-caching.
    _Notice(
        "mamba_cache_mode_ignored",
        (r"--mamba-cache-mode is deprecated and will be removed in (?P<removal>\S+?)\. It has no effect"),
        (),
        "0.33",
    ),
)


@dataclass(frozen=True, slots=True)
class NoticeLine:
    kind: str
    values: dict[str, object]  # vLLM argument -> value
    details: dict[str, str]  # the pattern's other groups (a reason, a feature list)


def parse_notice(message: str) -> NoticeLine | None:
    candidates = _NOTICES_BY_START.get(message[:_START])
    return _match_notices(message, candidates) if candidates else None


def _match_notices(message: str, notices: tuple[_Notice, ...]) -> NoticeLine | None:
    for notice in notices:
        match = notice.regex.match(message)
        if match is None:
            continue
        values: dict[str, object] = {}
        used: set[str] = set()
        for arg, source in notice.settings:
            if isinstance(source, _Group):
                used.add(source.name)
                text = match[source.name]
                if text is not None:
                    values[arg] = source.convert(text)
            else:
                values[arg] = source
        details = {name: text for name, text in match.groupdict().items() if name not in used and text is not None}
        return NoticeLine(notice.kind, values, details)
    return None


# --- the entry point ---------------------------------------------------------------------------------------

_START = 6  # characters of the message that select the parsers to try


def _notices_by_start() -> dict[str, tuple[_Notice, ...]]:
    table: dict[str, list[_Notice]] = {}
    for notice in _NOTICES:
        for start in _literal_starts(notice.pattern):
            table.setdefault(start, []).append(notice)
    return {start: tuple(notices) for start, notices in table.items()}


def _literal_starts(pattern: str) -> list[str]:
    """The first characters a notice's message can start with (its pattern opens with literal text)."""
    if pattern.startswith(r"\(?(?P<action>Enabling|Disabling)\)? "):
        rest = pattern.split(" ", 1)[1]
        return [(lead + word + " " + rest)[:_START] for lead in ("(", "") for word in ("Enabling", "Disabling")]
    return [pattern.replace("\\", "")[:_START]]


_NOTICES_BY_START = _notices_by_start()

# Every message a header fact can come from starts like one of these: a reader that skips lines
# (sieve.py) never skips one that does.
FACT_STARTS: tuple[str, ...] = (
    _API_SERVER_VERSION.pattern,
    _SERVER_VERSION.pattern,
    _LOGO_VERSION.pattern,
    _LOGO_MODEL.pattern,
    r"non-default args: \{",
    r"args: Namespace\(",
    _ENGINE.pattern,
    *(notice.pattern for notice in _NOTICES),
)


def _version_fact(line: VersionLine) -> HeaderFact:
    settings: list[Setting] = []
    if line.version is not None:
        settings.append(Setting("vllm_version", line.version))
    if line.model is not None:
        settings.append(Setting("model", line.model))
    return HeaderFact("version", tuple(settings), details={"form": line.form})


def _args_fact(line: ArgsLine) -> HeaderFact:
    settings = [Setting(arg, _plain(value)) for arg, value in line.args.items()]
    connector = _kv_connector(line.args.get("kv_transfer_config"))
    if connector is not None:
        settings.append(Setting("kv_connector", connector))
    kind = "non_default_args" if line.form == "non_default" else "namespace_args"
    return HeaderFact(kind, tuple(settings), line.truncated)


def _kv_connector(config: object) -> object:
    """`KVTransferConfig(kv_connector='NixlConnector', ...)` (or its dict) -> 'NixlConnector'."""
    if isinstance(config, Call):
        return config.kwargs.get("kv_connector")
    if isinstance(config, dict):
        return config.get("kv_connector")
    return None


def _engine_fact(line: EngineConfigLine) -> HeaderFact:
    settings = [Setting("vllm_version", line.version)] if line.version else []
    settings.extend(Setting(arg, value) for arg, value in line.values.items())
    details: dict[str, object] = {"engine": line.engine, "fields": line.fields}
    if line.unknown:
        details["unknown"] = line.unknown
    if line.use_cached_outputs is not None:
        details["use_cached_outputs"] = line.use_cached_outputs
    return HeaderFact("engine_config", tuple(settings), details=details)


def _notice_fact(line: NoticeLine) -> HeaderFact:
    settings = tuple(Setting(arg, value) for arg, value in line.values.items())
    return HeaderFact(line.kind, settings, details=dict(line.details))


def _try_version(message: str) -> HeaderFact | None:
    line = parse_version_line(message)
    return _version_fact(line) if line else None


def _try_non_default(message: str) -> HeaderFact | None:
    line = parse_non_default_args(message)
    return _args_fact(line) if line else None


def _try_namespace(message: str) -> HeaderFact | None:
    line = parse_namespace_args(message)
    return _args_fact(line) if line else None


def _try_engine(message: str) -> HeaderFact | None:
    line = parse_engine_config(message)
    return _engine_fact(line) if line else None


_STRUCTURED: dict[str, Callable[[str], HeaderFact | None]] = {
    "vLLM A": _try_version,
    "vLLM s": _try_version,
    "non-de": _try_non_default,
    "args: ": _try_namespace,
    "Initia": _try_engine,
}


@lru_cache(maxsize=256)  # a crash loop prints the same header every launch; its engine line costs ~1 ms
def _structured_fact(message: str) -> HeaderFact | None:
    return _STRUCTURED[message[:_START]](message)


def parse_header_line(message: str) -> HeaderFact | None:
    """The launch facts in one header line's message, or None for any other line."""
    start = message[:_START]
    if start in _STRUCTURED:
        return _structured_fact(message)
    notices = _NOTICES_BY_START.get(start)
    if notices is not None:
        line = _match_notices(message, notices)
        return _notice_fact(line) if line else None
    if start[:1] in (" ", "▄", "█") and "█  " in message:
        return _try_version(message)
    return None
