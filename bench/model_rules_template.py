# ruff: noqa: E501  (vLLM's messages and the rules' conditions are written out whole)
"""The rules of the model, environment and JSON-option sets, as templates filled with each release's
lists (bench/model_lists.py reads them from the source and writes the three files). The messages are
vLLM's f-strings with `{placeholders}`; each rule cites the function it encodes."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# int() takes optional blanks, a sign, digits with single underscores between them (PEP 515)
INT_TEXT = r"^\s*[+-]?\d+(?:_\d+)*\s*$"
# float() takes those, decimals, exponents, inf / infinity / nan in any case
FLOAT_TEXT = (
    r"^\s*[+-]?(?:(?:\d+(?:_\d+)*)?\.?\d+(?:_\d+)*(?:[eE][+-]?\d+(?:_\d+)*)?|\d+(?:_\d+)*\.(?:[eE][+-]?\d+)?"
    r"|(?i:inf|infinity|nan))\s*$"
)
# huggingface_hub validate_repo_id: at most one `/`, ASCII word characters, `-` and `.`, not starting or
# ending with `-` / `.`, 96 characters a part, no `--` or `..`, not ending in `.git`
REPO_ID = r"^(?!.*(?:--|\.\.))(?!.*\.git$)(?:[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?/)?[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?$"
# huggingface_hub constants._is_true (ENV_VARS_TRUE_VALUES), compared upper-cased
HUB_TRUE = r"^(?i:1|on|yes|true)$"
# envs.py VLLM_ALLOW_LONG_MAX_MODEL_LEN: .strip().lower() in ("1", "true")
ALLOW_TRUE = r"^\s*(?i:1|true)\s*$"
# transformers_utils/config.py: the suffixes of _SUFFIX_TO_DEFAULTS (config/model.py) vLLM swaps to find a
# base architecture of the registry (ModelRegistry._normalize_arch)
SUFFIXES = [
    "ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel", "ForTextEncoding", "EmbeddingModel",
    "ForSequenceClassification", "ForTokenClassification", "ForAudioClassification", "ForImageClassification",
    "ForVideoClassification", "ClassificationModel", "ForRewardModeling", "RewardModel", "Model",
]  # fmt: skip

Ranges = Callable[[list[Any], Callable[[Any], Any]], list[tuple[list[Any], str]]]


def q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def literal_text(values: list[Any]) -> str:
    """pydantic's `Input should be 'a', 'b' or 'c'`."""
    shown = [repr(v) if isinstance(v, str) else str(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def normalizable(archs: list[str]) -> str:
    """A regex of the architectures vLLM maps to one of the registry's by swapping the suffix."""
    bases = sorted({a[: -len(s)] for a in archs for s in SUFFIXES if a.endswith(s) and len(a) > len(s)})
    return "^(?:" + "|".join(re.escape(b) for b in bases) + ")(?:" + "|".join(SUFFIXES) + ")$"


def fix(says: str, set_: str | None = None, unset: list[str] | None = None, when: str | None = None) -> str:
    out = f"[[constraint_set.rule.fix]]\nsays = {q(says)}\n"
    if when:
        out += f"when = {when}\n"
    if set_:
        out += f"set = {set_}\n"
    if unset:
        out += f"unset = {json.dumps(unset)}\n"
    return out


def rule(
    id: str, says: str, require: str, message: str, patterns: list[str], fixes: list[str], *,
    when: str | None = None, raised_in: str | None = None, note: str | None = None, cite: str = "",
) -> str:  # fmt: skip
    out = f"\n# {cite}\n" if cite else "\n"
    out += f"[[constraint_set.rule]]\nid = {q(id)}\nsays = {q(says)}\n"
    if when:
        out += f"when = {when}\n"
    out += f"require = {require}\nvllm_message = {q(message)}\npatterns = {json.dumps(patterns)}\n"
    if raised_in:
        out += f"raised_in = {q(raised_in)}\n"
    if note:
        out += f"note = {q(note)}\n"
    return out + "".join(fixes)


# `check` reads a launch where the server runs: its environment and the model's folder. A log does not
# (a finding's audit reads the launch from the log): there these sets stay out, unless vLLM raised one
# of their rules. The env group is filled by `check` only; the derived marker says which it is.
HERE = """
[[constraint_set.env_group]]
field = "server_environment"
prefix = "VLLM_"
reveal = "the server's environment (`logdoctor check` where the server runs)"
[[constraint_set.derive]]
field = "read_where_the_server_runs"
value = { from = "server_environment", when_unknown = "no" }
says = "`check` reads the launch where the server runs (its environment, the model's folder); a log does not"
"""
HERE_ACTIVE = '{ field = "read_where_the_server_runs", op = "ne", value = "no" }'


def set_head(id: str, feature: str, versions: str, comment: str, active: str = HERE_ACTIVE) -> str:
    head = f"\n# {comment}\n[[constraint_set]]\nid = {q(id)}\nfeature = {q(feature)}\nversions = {q(versions)}\n"
    return head + f"active = {active}\n" + HERE


# ---------------------------------------------------------------- the model folder


def model_file(releases: list[Any], tf: dict[str, Any], ranges: Ranges, tag: Any, toml_list: Any) -> str:
    key = lambda r: (r.registry.architectures, r.registry.pooling_only, r.registry.previously_supported,  # noqa: E731
                     r.registry.out_of_tree, r.registry.config_registry, r.has)  # fmt: skip
    groups = ranges(releases, key)
    out = [
        "# The model folder as vLLM reads it before anything loads: MODEL (a path or a Hugging Face repo id),\n"
        "# its config.json, the architecture the release's registry has, custom code, and the runner.\n"
        f"# Model types and classes of transformers {tf['version']} (the release the server runs: vLLM reads\n"
        "# config.json through it); architectures per vLLM release from model_executor/models/registry.py.\n"
        "\n[lists]\n"
        f"transformers_classes = {toml_list(tf['classes'])}\n"
    ]
    for group, _ in groups:
        r, t = group[0], tag(group[0])
        out.append(f"architectures_{t} = {toml_list(r.registry.architectures)}\n")
        out.append(f"pooling_only_{t} = {toml_list(r.registry.pooling_only)}\n")
        out.append(f"previously_supported_{t} = {toml_list(sorted(r.registry.previously_supported))}\n")
        out.append(f"out_of_tree_{t} = {toml_list(r.registry.out_of_tree)}\n")
        types = sorted(set(tf["model_types"]) | set(r.registry.config_registry))
        out.append(f"model_types_{t} = {toml_list(types)}\n")
    for group, versions in groups:
        out.append(model_set(group[0], tag(group[0]), versions, [g.version for g in group]))
    return "".join(out)


MODEL_FACTS = """
[[constraint_set.fact]]
name = "model_exists"
exists_of = "model"
reveal = "MODEL where the server runs"
[[constraint_set.fact]]
name = "tokenizer_exists"
exists_of = "tokenizer"
reveal = "--tokenizer where the server runs"
[[constraint_set.fact]]
name = "config_found"
probe = "found"
reveal = "the model's folder (a local folder, or the repo's snapshot in the Hugging Face cache)"
[[constraint_set.fact]]
name = "params_found"
probe = "found"
file = "params.json"
reveal = "the model's folder (a local folder, or the repo's snapshot in the Hugging Face cache)"
[[constraint_set.fact]]
name = "config_parses"
probe = "parses"
reveal = "the model's config.json (a local folder, or the repo's snapshot in the Hugging Face cache)"
[[constraint_set.fact]]
name = "architecture"
config_json = ["architectures.0"]
reveal = "the model's config.json (`architectures`), `--hf-overrides`, or the log's `Resolved architecture:` line"
[[constraint_set.fact]]
name = "second_architecture"
config_json = ["architectures.1"]
absent = "none"
[[constraint_set.fact]]
name = "model_type"
config_json = ["model_type"]
absent = "none"
reveal = "the model's config.json (`model_type`)"
[[constraint_set.fact]]
name = "auto_config"
config_json = ["auto_map.AutoConfig"]
absent = "none"
reveal = "the model's config.json (`auto_map`)"
[[constraint_set.fact]]
name = "auto_map"
config_json = ["auto_map"]
absent = "none"
reveal = "the model's config.json (`auto_map`)"
[[constraint_set.env]]
name = "HF_HUB_OFFLINE"
[[constraint_set.env]]
name = "TRANSFORMERS_OFFLINE"
[constraint_set.reveal]
hub_offline = "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) where the server runs"

# huggingface_hub/constants.py: HF_HUB_OFFLINE = _is_true(HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)
[[constraint_set.derive]]
field = "hub_offline"
value = false
says = "huggingface_hub is online unless HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) says otherwise"
[[constraint_set.derive]]
field = "hub_offline"
value = true
when = { any = [
    { field = "env.HF_HUB_OFFLINE", op = "matches", value = "HUB_TRUE" },
    { all = [
        { any = [{ field = "env.HF_HUB_OFFLINE", op = "is_null" }, { field = "env.HF_HUB_OFFLINE", op = "eq", value = "" }] },
        { field = "env.TRANSFORMERS_OFFLINE", op = "matches", value = "HUB_TRUE" },
    ] },
] }
says = "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is 1/ON/YES/TRUE: huggingface_hub stays offline"
""".replace('"HUB_TRUE"', q(HUB_TRUE))


def model_set(r: Any, t: str, versions: str, covers: list[str]) -> str:
    out = set_head(
        f"model-{t.replace('_', '.')}",
        "The model folder (MODEL, config.json, architecture)",
        versions,
        f"vLLM {', '.join(covers)}: model_executor/models/registry.py, transformers_utils/config.py, config/model.py",
    )
    out += MODEL_FACTS
    many_slashes = '{ field = "model", op = "matches", value = "/.*/" }'
    # transformers_utils/utils.py is_cloud_storage (s3://, gs://, ...) and `repo:quant` GGUF names are
    # read another way: no rule here
    plain = '{ field = "model", op = "not_matches", value = ":" }'
    out += rule(
        "model-path-exists",
        "MODEL is a path that exists where the server runs, or a Hugging Face repo id",
        f'{{ field = "model", op = "matches", value = {q(REPO_ID)} }}',
        "Repo id must be in the form 'repo_name' or 'namespace/repo_name': '{model}'. Use `repo_type` argument if needed.",
        ["loading.model-path-not-found", "model.invalid-repo-or-path", "hub.repo-id-invalid"],
        [
            fix(
                "give the path of the model's folder as it is where the server runs (this one does not exist), or a Hugging Face repo id"
            )
        ],
        when=f'{{ all = [{{ field = "model_exists", op = "eq", value = false }}, {many_slashes}, {plain}] }}',
        raised_in="API server, EngineArgs.__post_init__ (get_model_path, with HF_HUB_OFFLINE) or get_config",
        cite="huggingface_hub utils/_validators.py validate_repo_id (count('/') > 1), reached from "
        "transformers_utils/repo_utils.py get_model_path (offline) or get_config's file_or_path_exists (online)",
    )
    out += rule(
        "model-name-valid",
        "MODEL that is no path here is a valid Hugging Face repo id",
        f'{{ field = "model", op = "matches", value = {q(REPO_ID)} }}',
        "Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the maximum length is 96: '{model}'.",
        ["hub.repo-id-invalid", "model.invalid-repo-or-path", "loading.model-path-not-found"],
        [
            fix(
                "give the path of the model's folder as it is where the server runs, or a Hugging Face repo id (namespace/name)"
            )
        ],
        when=f'{{ all = [{{ field = "model_exists", op = "eq", value = false }}, {{ not = {many_slashes} }}, {plain}] }}',
        raised_in="API server, EngineArgs.__post_init__ (get_model_path, with HF_HUB_OFFLINE) or get_config",
        cite="huggingface_hub validate_repo_id (REPO_ID_REGEX, `--`/`..`, `.git`)",
    )
    # --tokenizer as a path that is not there: the tokenizer family's rule (frontend-rules.toml).
    if r.has["offline-model-path"]:
        out += rule(
            "model-cached-when-offline",
            "With HF_HUB_OFFLINE, a repo id's snapshot (with its config.json) is in the Hugging Face cache",
            '{ field = "config_found", op = "eq", value = true }',
            "Cannot find an appropriate cached snapshot folder for the specified revision on the local disk and outgoing traffic has been disabled. To enable repo look-ups and downloads online, pass 'local_files_only=False' as input.",
            ["loading.hf-offline-not-cached"],
            [
                fix(
                    "let vLLM download it: HF_HUB_OFFLINE=0 (or download it first where the server runs: `hf download MODEL`)",
                    set_='{ "env.HF_HUB_OFFLINE" = "0" }',
                )
            ],
            when=(
                '{ all = [{ field = "hub_offline", op = "eq", value = true }, '
                '{ field = "model_exists", op = "eq", value = false }, '
                f'{{ field = "model", op = "matches", value = {q(REPO_ID)} }}] }}'
            ),
            raised_in="API server, EngineArgs.__post_init__ (get_model_path: snapshot_download(local_files_only=True))",
            cite="engine/arg_utils.py EngineArgs.__post_init__, transformers_utils/repo_utils.py get_model_path; "
            "huggingface_hub _snapshot_download.py snapshot_download (LocalEntryNotFoundError)",
        )
    if r.has["invalid-repo"]:
        out += rule(
            "model-folder-has-config",
            "The model's folder has a config.json (or a Mistral params.json)",
            '{ any = [{ field = "config_found", op = "eq", value = true }, { field = "params_found", op = "eq", value = true }] }',
            "Invalid repository ID or local directory specified: '{model}'.",
            ["model.invalid-repo-or-path"],
            [fix("give the model's folder itself, the one that holds config.json (a parent or a sub-folder has none)")],
            when='{ all = [{ field = "model_exists", op = "eq", value = true }, { field = "config_format", op = "eq", value = "auto" }] }',
            raised_in="API server, at ModelConfig creation (get_config)",
            cite="transformers_utils/config.py get_config (config_format 'auto': file_or_path_exists config.json / params.json)",
        )
    out += rule(
        "config-json-parses",
        "The model's config.json is a JSON object",
        '{ field = "config_parses", op = "eq", value = true }',
        "It looks like the config file at '{path}' is not a valid JSON file.",
        ["loading.config-not-json"],
        [fix("repair or download again the model's config.json (it is not valid JSON)")],
        when='{ all = [{ field = "config_found", op = "eq", value = true }, { field = "config_format", op = "in", value = ["auto", "hf"] }] }',
        raised_in="API server, create_engine_config (maybe_override_with_speculators reads config.json first)",
        cite="transformers configuration_utils.py PreTrainedConfig._get_config_dict, called from "
        "transformers_utils/config.py maybe_override_with_speculators / HFConfigParser.parse",
    )
    out += rule(
        "custom-code-trusted",
        "A config.json whose class is custom code (auto_map.AutoConfig) is loaded with --trust-remote-code",
        f'{{ any = [{{ field = "trust_remote_code", op = "eq", value = true }}, {{ field = "model_type", op = "in", value = "@model_types_{t}" }}] }}',
        "The repository {model} contains custom code which must be executed to correctly load the model.",
        ["model.trust-remote-code-required"],
        [
            fix(
                "pass --trust-remote-code (only for a repository whose code you trust)",
                set_="{ trust_remote_code = true }",
            )
        ],
        when='{ field = "auto_config", op = "ne", value = "none" }',
        raised_in="API server, at ModelConfig creation (AutoConfig.from_pretrained)",
        note="A model type this transformers (or vLLM itself) knows needs no remote code: has_local_code.",
        cite="transformers models/auto/configuration_auto.py AutoConfig.from_pretrained, "
        "dynamic_module_utils.py resolve_trust_remote_code (has_remote_code and not has_local_code)",
    )
    out += rule(
        "model-type-known",
        "transformers (or vLLM's own config registry) knows the config.json's model_type",
        f'{{ field = "model_type", op = "in", value = "@model_types_{t}" }}',
        "The checkpoint you are trying to load has model type `{model_type}` but Transformers does not recognize this architecture.",
        ["model.transformers-unknown-model-type"],
        [
            fix(
                "upgrade transformers where the server runs (`pip install -U transformers`), or correct model_type in config.json"
            )
        ],
        when='{ all = [{ field = "auto_config", op = "eq", value = "none" }, { field = "model_type", op = "ne", value = "none" }] }',
        raised_in="API server, at ModelConfig creation (AutoConfig.from_pretrained)",
        note="The list is the model types of the transformers release this file was generated with and "
        "of vLLM's _CONFIG_REGISTRY: a newer transformers may know more.",
        cite="transformers configuration_auto.py AutoConfig.from_pretrained (CONFIG_MAPPING KeyError); "
        "transformers_utils/config.py HFConfigParser.parse (_CONFIG_REGISTRY)",
    )
    if r.has["unsupported-arch"]:
        removed = [f'{{ field = "architecture", op = "not_in", value = "@previously_supported_{t}" }}',
                   f'{{ field = "architecture", op = "not_in", value = "@out_of_tree_{t}" }}']  # fmt: skip
        out += rule(
            "architecture-supported",
            "The model's architecture is one of this release's registry (or Transformers / custom code can serve it)",
            (
                f'{{ any = [{{ field = "architecture", op = "in", value = "@architectures_{t}" }}, '
                f'{{ field = "architecture", op = "matches", value = {q(normalizable(r.registry.architectures))} }}, '
                '{ all = [{ field = "model_impl", op = "eq", value = "auto" }, { any = ['
                '{ field = "architecture", op = "in", value = "@transformers_classes" }, '
                '{ field = "auto_map", op = "matches", value = "\'AutoModel" }] }] }] }'
            ),
            "Model architectures {architectures} are not supported for now. Supported architectures: {all_supported_archs}",
            ["model.unsupported-architecture"],
            [
                fix(
                    "correct `architectures` in config.json (or --hf-overrides '{\"architectures\": [...]}') to one this vLLM supports, or serve the model with a vLLM that has it"
                )
            ],
            when=(
                '{ all = [{ field = "architecture", op = "not_null" }, '
                '{ field = "second_architecture", op = "eq", value = "none" }, '
                '{ field = "model_impl", op = "in", value = ["auto", "vllm"] }, ' + ", ".join(removed) + "] }"
            ),
            raised_in="API server, at ModelConfig creation (registry.inspect_model_cls)",
            cite="model_executor/models/registry.py _ModelRegistry.inspect_model_cls (_normalize_arch, the "
            "Transformers fallback _try_resolve_transformers with model_impl auto) and _raise_for_unsupported",
        )
    if r.has["previously-supported"]:
        out += rule(
            "architecture-not-removed",
            "The model's architecture was not removed from vLLM",
            f'{{ any = [{{ field = "architecture", op = "not_in", value = "@previously_supported_{t}" }}, '
            '{ all = [{ field = "model_impl", op = "eq", value = "auto" }, { field = "architecture", op = "in", value = "@transformers_classes" }] }] }',
            "Model architecture {arch} was supported in vLLM until v{previous_version}, and is not supported anymore. Please use an older version of vLLM if you want to use this model architecture.",
            ["model.architecture-removed"],
            [fix("serve it with the older vLLM release that still has it (the message names it)")],
            when='{ field = "model_impl", op = "in", value = ["auto", "vllm"] }',
            raised_in="API server, at ModelConfig creation (registry._raise_for_unsupported)",
            cite="model_executor/models/registry.py _raise_for_unsupported (_PREVIOUSLY_SUPPORTED_MODELS)",
        )
    if r.has["out-of-tree"]:
        out += rule(
            "architecture-in-tree",
            "The model's architecture did not move to a plugin",
            f'{{ any = [{{ field = "architecture", op = "not_in", value = "@out_of_tree_{t}" }}, '
            '{ all = [{ field = "model_impl", op = "eq", value = "auto" }, { field = "architecture", op = "in", value = "@transformers_classes" }] }] }',
            "Model architecture {arch} is not supported in-tree anymore. Please install the plugin at {plugin_url} if you want to use this model architecture.",
            ["model.architecture-moved-to-plugin"],
            [fix("install the plugin the message names, where the server runs")],
            when='{ field = "model_impl", op = "in", value = ["auto", "vllm"] }',
            raised_in="API server, at ModelConfig creation (registry._raise_for_unsupported)",
            cite="model_executor/models/registry.py _raise_for_unsupported (_OOT_SUPPORTED_MODELS)",
        )
    if r.has["embedding-runner"]:
        out += rule(
            "runner-pooling-for-embedding-models",
            "A pooling-only architecture is not run with --runner generate or draft",
            '{ field = "runner", op = "not_in", value = ["generate", "draft"] }',
            "Embedding models do not support `--runner {runner_type}`. Use `--runner pooling` or `--runner auto` for embedding models.",
            ["config.runner-unsupported"],
            [fix("use --runner pooling (or auto, which picks it for this model)", set_='{ runner = "pooling" }')],
            when=f'{{ field = "architecture", op = "in", value = "@pooling_only_{t}" }}',
            raised_in="API server, at ModelConfig validation (ModelConfig.__post_init__)",
            cite="config/model.py ModelConfig.__post_init__ (is_pooling_model and not is_generative_model); "
            "the pooling-only entries of registry.py's pooling tables whose class no generative table names",
        )
    return out


# ---------------------------------------------------------------- environment variables


def removed_variable_patterns() -> list[str]:
    data = tomllib.loads((ROOT / "patterns/env.toml").read_text("utf-8"))
    return sorted(p["id"] for p in data["pattern"] if p["id"].startswith("env.removed-vllm-"))


def env_file(releases: list[Any], ranges: Ranges, tag: Any, toml_list: Any) -> str:
    key = lambda r: (r.envs.names, r.envs.ints, r.envs.floats, r.envs.choices, r.has["unknown-env"])  # noqa: E731
    groups = ranges(releases, key)
    out = [
        "# The environment variables vLLM reads (vllm/envs.py `environment_variables`, per release): every\n"
        "# VLLM_* variable set must be one of them when --fail-on-environ-validation is on, and every variable\n"
        "# vLLM converts with int() or float() must hold a number: the engine core reads them all at start-up\n"
        "# (v1/engine/core.py: enable_envs_cache evaluates every variable).\n"
        "\n[lists]\n"
        f"removed_variable_patterns = {toml_list(removed_variable_patterns())}\n"
    ]
    for group, _ in groups:
        r, t = group[0], tag(group[0])
        out.append(f"vllm_variables_{t} = {toml_list(r.envs.names)}\n")
        out.append(f"int_variables_{t} = {toml_list(r.envs.ints)}\n")
        out.append(f"float_variables_{t} = {toml_list(r.envs.floats)}\n")
    for group, versions in groups:
        out.append(env_set(group[0], tag(group[0]), versions, [g.version for g in group]))
    return "".join(out)


def env_set(r: Any, t: str, versions: str, covers: list[str]) -> str:
    out = set_head(
        f"env-{t.replace('_', '.')}",
        "Environment variables (VLLM_*)",
        versions,
        f"vLLM {', '.join(covers)}: vllm/envs.py",
    )
    out += f"""
[[constraint_set.env_group]]
field = "unknown_vllm_variables"
prefix = "VLLM_"
known = "@vllm_variables_{t}"
reveal = "the VLLM_* variables where the server runs"
[[constraint_set.env_group]]
field = "int_variables"
names = "@int_variables_{t}"
[[constraint_set.env_group]]
field = "float_variables"
names = "@float_variables_{t}"
[[constraint_set.env]]
name = "VLLM_PORT"
[[constraint_set.env]]
name = "VLLM_TARGET_DEVICE"
reveal = "the platform vLLM runs on: VLLM_TARGET_DEVICE=cpu, or a CPU build of vLLM"
[[constraint_set.env]]
name = "VLLM_CPU_KVCACHE_SPACE"
[constraint_set.reveal]
platform = "the platform vLLM runs on: VLLM_TARGET_DEVICE=cpu, or a CPU build of vLLM (its version ends in +cpu)"
[[constraint_set.env]]
name = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
# config/model.py _get_and_verify_max_len: the smallest of these keys (without rope scaling)
[[constraint_set.fact]]
name = "model_context"
config_json = ["max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length", "max_sequence_length", "max_seq_length", "seq_len"]
pick = "min"
[[constraint_set.fact]]
name = "rope_scaling"
config_json = ["rope_scaling", "rope_parameters.rope_type"]
absent = "none"
"""
    for name in r.envs.choices:
        out += f'[[constraint_set.env]]\nname = "{name}"\n'
    where = "platforms/interface.py Platform.validate_environ" if r.version >= "0.31" else "envs.py validate_environ"
    if r.has["unknown-env"]:
        out += rule(
            "known-vllm-variables",
            "With --fail-on-environ-validation, every VLLM_* variable set is one this release reads",
            '{ field = "unknown_vllm_variables", op = "eq", value = {} }',
            "Unknown vLLM environment variable detected: {env}",
            ["env.unknown-vllm-env-var", "@removed_variable_patterns"],
            [
                fix(
                    "drop --fail-on-environ-validation: vLLM then only warns about the variables it does not read",
                    unset=["fail_on_environ_validation"],
                ),
                fix("or unset the VLLM_* variables this release does not read (the evidence names them)"),
            ],
            when='{ field = "fail_on_environ_validation", op = "eq", value = true }',
            raised_in="API server, create_engine_config (validate_environ)",
            cite=f"{where} (hard_fail = EngineArgs.fail_on_environ_validation), called first in EngineArgs.create_engine_config",
        )
    out += rule(
        "allow-long-max-model-len-spelled-right",
        "A --max-model-len above the model's is allowed by VLLM_ALLOW_LONG_MAX_MODEL_LEN spelled as vLLM reads it",
        f'{{ any = [{{ field = "env.VLLM_ALLOW_LONG_MAX_MODEL_LEN", op = "matches", value = {q(ALLOW_TRUE)} }}, '
        '{ field = "unknown_vllm_variables", op = "all_match", value = "^(?!VLLM_ALLOW_LONG_MAX_MODEL_LEN$)" }] }',
        "User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len ({msg}). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
        # none: the error a log shows is the max-model-len one, whose own rule (and fix) is the context
        # family's; claiming it here would make every such log's audit fix the spelling first
        [],
        [
            fix(
                "spell it VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vLLM ignores the misspelt name)",
                set_='{ "env.VLLM_ALLOW_LONG_MAX_MODEL_LEN" = "1" }',
            )
        ],  # fmt: skip
        when=(
            '{ all = [{ field = "max_model_len", op = "gt", value_from = "model_context" }, '
            '{ field = "rope_scaling", op = "eq", value = "none" }] }'
        ),
        raised_in="API server, at ModelConfig validation (_get_and_verify_max_len); validate_environ only warns about the name",
        note="vLLM only warns about the misspelt name; what fails is the --max-model-len it was meant to allow.",
        cite=f"{where}: the unknown variable whose nearest known name is VLLM_ALLOW_LONG_MAX_MODEL_LEN; "
        "config/model.py _get_and_verify_max_len (envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN)",
    )
    out += rule(
        "vllm-port-not-a-uri",
        "VLLM_PORT is not a URI (Kubernetes sets VLLM_PORT=tcp://... for a Service named vllm)",
        '{ field = "env.VLLM_PORT", op = "not_matches", value = "^[a-zA-Z][a-zA-Z0-9+-]*:" }',
        "VLLM_PORT '{port}' appears to be a URI. This may be caused by a Kubernetes service discovery issue,check the warning in: https://docs.vllm.ai/en/latest/configuration/env_vars.html",
        ["env.vllm-port-is-uri", "env.vllm-port-uri-not-int"],
        [
            fix(
                "unset VLLM_PORT, or set it to a port number (Kubernetes: rename the Service `vllm`, or enableServiceLinks: false)"
            )
        ],
        when=f'{{ all = [{{ field = "env.VLLM_PORT", op = "not_null" }}, {{ field = "env.VLLM_PORT", op = "not_matches", value = {q(INT_TEXT)} }}] }}',
        raised_in="API server when it picks ports (data-parallel), else the engine core at start-up (enable_envs_cache)",
        cite="envs.py get_vllm_port (urllib3 parse_url(port).scheme)",
    )
    out += rule(
        "vllm-port-an-integer",
        "VLLM_PORT is an integer",
        f'{{ any = [{{ field = "env.VLLM_PORT", op = "matches", value = {q(INT_TEXT)} }}, '
        '{ field = "env.VLLM_PORT", op = "matches", value = "^[a-zA-Z][a-zA-Z0-9+-]*:" }] }',
        "VLLM_PORT '{port}' must be a valid integer",
        ["env.vllm-port-not-integer", "env.vllm-port-uri-not-int"],
        [fix("unset VLLM_PORT, or set it to a port number")],
        when='{ field = "env.VLLM_PORT", op = "not_null" }',
        raised_in="API server when it picks ports (data-parallel), else the engine core at start-up (enable_envs_cache)",
        cite="envs.py get_vllm_port (int(port))",
    )
    if r.has["cpu-kvcache"]:
        out += rule(
            "cpu-kvcache-space-an-integer",
            "On the CPU platform, VLLM_CPU_KVCACHE_SPACE is a whole number of GiB",
            f'{{ field = "env.VLLM_CPU_KVCACHE_SPACE", op = "matches", value = {q(INT_TEXT)} }}',
            "invalid literal for int() with base 10: '{value}'",
            ["env.cpu-kvcache-space-not-int", "env.cpu-kvcache-space-not-int-envs"],
            [
                fix(
                    "set VLLM_CPU_KVCACHE_SPACE to a whole number of GiB without a unit (4GB: 4), or size the cache with --kv-cache-memory-bytes"
                )
            ],
            when=(
                '{ all = [{ any = [{ field = "env.VLLM_TARGET_DEVICE", op = "matches", value = "^(?i:cpu)$" }, '
                '{ all = [{ field = "env.VLLM_TARGET_DEVICE", op = "is_null" }, { field = "platform", op = "eq", value = "cpu" }] }] }, '
                '{ field = "env.VLLM_CPU_KVCACHE_SPACE", op = "not_null" }, '
                '{ field = "env.VLLM_CPU_KVCACHE_SPACE", op = "ne", value = "" }] }'
            ),
            raised_in="API server, at VllmConfig validation (CpuPlatform.check_and_update_config)",
            cite="platforms/cpu.py CpuPlatform.check_and_update_config (int(os.environ['VLLM_CPU_KVCACHE_SPACE'])); "
            "platforms/__init__.py cpu_platform_plugin (VLLM_TARGET_DEVICE == 'cpu')",
        )
    out += rule(
        "int-variables-hold-integers",
        "Every variable vLLM converts with int() holds an integer",
        f'{{ field = "int_variables", op = "all_match", value = {q(INT_TEXT)} }}',
        "invalid literal for int() with base 10: '{value}'",
        ["env.cpu-kvcache-space-not-int", "env.cpu-kvcache-space-not-int-envs"],
        [fix("give each an integer (the evidence names them), or unset it for vLLM's default")],
        raised_in="the engine core at start-up (enable_envs_cache evaluates every variable), or wherever vLLM reads it first",
        cite="envs.py environment_variables: the lambdas int(os.getenv(...)), bool(int(...)), maybe_convert_int/bool",
    )
    out += rule(
        "float-variables-hold-numbers",
        "Every variable vLLM converts with float() holds a number",
        f'{{ field = "float_variables", op = "all_match", value = {q(FLOAT_TEXT)} }}',
        "could not convert string to float: '{value}'",
        [],
        [fix("give each a number (the evidence names them), or unset it for vLLM's default")],
        raised_in="the engine core at start-up (enable_envs_cache evaluates every variable), or wherever vLLM reads it first",
        cite="envs.py environment_variables: the lambdas float(os.getenv(...))",
    )
    for name, (choices, sensitive) in r.envs.choices.items():
        alternatives = "|".join(re.escape(c) for c in choices)
        regex = f"^(?:{alternatives})$" if sensitive else f"^(?i:{alternatives})$"
        out += rule(
            f"choice-{name.lower().replace('_', '-')}",
            f"{name} is one of {', '.join(choices)}" + ("" if sensitive else " (any case)"),
            f'{{ field = "env.{name}", op = "matches", value = {q(regex)} }}',
            "Invalid value '{value}' for {env_name}. Valid options: {actual_choices}.",
            ["env.invalid-env-value"],
            [fix(f"set {name} to one of {', '.join(choices)}, or unset it for vLLM's default")],
            when=f'{{ field = "env.{name}", op = "not_null" }}',
            raised_in="the engine core at start-up (enable_envs_cache), or wherever vLLM reads it first",
            cite="envs.py env_with_choices",
        )
    return out


# ---------------------------------------------------------------- JSON config options


def options_file(releases: list[Any], ranges: Ranges, tag: Any, toml_list: Any) -> str:
    def key(r: Any) -> Any:
        return ([(o.dest, o.fields, o.literals, o.required_kv_role) for o in r.options], r.backends, r.modes, r.has)

    for release in releases:
        dests = parser_dests(release.version)
        release.options = [o for o in release.options if o.dest in dests]
    groups = ranges(releases, key)
    out = [
        "# The JSON config options (--compilation-config, --kv-transfer-config, --attention-config, ...) as\n"
        "# vLLM's pydantic dataclasses take them (config/utils.py @config: extra='forbid'): every key one of\n"
        "# the dataclass's fields, every Literal field one of its choices, kv_role with a kv_connector, and\n"
        "# the attention backend one of AttentionBackendEnum's. Where the parser accepted the option:\n"
        "# JSON that does not parse is the parser's (launch/cmdline.py).\n"
        "\n[lists]\n"
    ]
    for group, _ in groups:
        r, t = group[0], tag(group[0])
        for o in r.options:
            out.append(f"{o.dest}_fields_{t} = {toml_list(o.fields)}\n")
        out.append(f"attention_backends_{t} = {toml_list(r.backends)}\n")
    for group, versions in groups:
        out.append(options_set(group[0], tag(group[0]), versions, [g.version for g in group]))
    return "".join(out)


def is_object(dest: str) -> str:
    # `not keys_in []`: a JSON object with at least one key (vLLM's default, when the option is not
    # given, is the dataclass's text, which has none)
    return f'{{ not = {{ field = "{dest}", op = "keys_in", value = [] }} }}'


def parser_dests(version: str) -> set[str]:
    """The arguments of the release's `vllm serve` parser (launch/argspecs): an EngineArgs field without
    one (mamba_config) is not an option of the command line."""
    spec = json.loads((ROOT / "logdoctor/launch/argspecs" / f"{version}.json").read_text("utf-8"))
    return {o["dest"] for o in spec["options"]}


def options_set(r: Any, t: str, versions: str, covers: list[str]) -> str:
    dests = parser_dests(r.version)
    r.options = [o for o in r.options if o.dest in dests]
    # active when `check` reads the launch (not a log) and one of the options is given as a JSON object
    # (or --attention-backend is given)
    given = [is_object(o.dest) for o in r.options] + ['{ field = "attention_backend", op = "not_null" }']
    out = set_head(
        f"options-{t.replace('_', '.')}",
        "JSON config options (fields and choices)",
        versions,
        f"vLLM {', '.join(covers)}: the @config dataclasses of vllm/config/*.py that EngineArgs' fields name",
        active="{ all = [\n  " + HERE_ACTIVE + ",\n  { any = [\n    " + ",\n    ".join(given) + ",\n  ] },\n] }",
    )
    for o in r.options:
        flag = "--" + o.dest.replace("_", "-")
        out += rule(
            f"{o.dest.replace('_', '-')}-known-keys",
            f"Every key of {flag} is a field of {o.cls}",
            f'{{ field = "{o.dest}", op = "keys_in", value = "@{o.dest}_fields_{t}" }}',
            "{field}\n  Unexpected keyword argument",
            ["config.field-unknown-key"],
            [
                fix(
                    f"keep only the keys {o.cls} has (the others are misspelt or from another release)",
                    set_=f'{{ {o.dest} = {{ from = "{o.dest}", only = "@{o.dest}_fields_{t}" }} }}',
                )
            ],  # fmt: skip
            raised_in="API server, when the option's dataclass is built (pydantic: extra='forbid')",
            cite=f"{o.file} {o.cls} (@config, config/utils.py: extra='forbid')",
        )
        for name, values in o.literals.items():
            choices = [v for v in values if v is not None]
            if not choices:
                continue
            out += rule(
                f"{o.dest.replace('_', '-')}-{name.replace('_', '-')}-choice",
                f"{flag} {name} is one of {', '.join(choices)}",
                f'{{ field = "{o.dest}.{name}", op = "in", value = {json.dumps(choices)} }}',
                f"{name}\n  Input should be {literal_text(choices)}",
                ["config.field-invalid-choice"],
                [
                    fix(
                        f"set {name} to one of {', '.join(choices)} (or leave it out)",
                        set_=f'{{ {o.dest} = {{ from = "{o.dest}", without = ["{name}"] }} }}',
                    )
                ],  # fmt: skip
                when=f'{{ all = [{is_object(o.dest)}, {{ field = "{o.dest}.{name}", op = "not_null" }}] }}',
                raised_in="API server, when the option's dataclass is built (pydantic Literal)",
                cite=f"{o.file} {o.cls}.{name}: Literal{choices}",
            )
        if o.required_kv_role and r.has["kv-role-required"]:
            out += rule(
                "kv-transfer-config-kv-role-given",
                "--kv-transfer-config with a kv_connector names its kv_role",
                '{ field = "kv_transfer_config.kv_role", op = "not_null" }',
                "Please specify kv_role when kv_connector is set, supported roles are ('kv_producer', 'kv_both', 'kv_consumer')",
                ["config.kv-transfer-role-invalid"],
                [
                    fix(
                        'add "kv_role": "kv_both" (or kv_producer / kv_consumer for a P/D split)',
                        set_='{ "kv_transfer_config.kv_role" = "kv_both" }',
                    )
                ],  # fmt: skip
                when=f'{{ all = [{is_object("kv_transfer_config")}, {{ field = "kv_transfer_config.kv_connector", op = "not_null" }}] }}',
                raised_in="API server, KVTransferConfig.__post_init__",
                cite="config/kv_transfer.py KVTransferConfig.__post_init__ (kv_connector set, kv_role None)",
            )
        if o.dest == "compilation_config" and r.modes:
            names = "|".join(r.modes)
            out += rule(
                "compilation-config-mode-choice",
                f"--compilation-config mode is one of {', '.join(f'{v} ({k})' for k, v in r.modes.items())}",
                f'{{ any = [{{ field = "compilation_config.mode", op = "in", value = {json.dumps(list(r.modes.values()))} }}, '
                f'{{ field = "compilation_config.mode", op = "matches", value = "^(?i:{names}|[0-3])$" }}] }}',
                f"mode\n  Input should be {literal_text(list(r.modes.values()))}",
                ["config.field-invalid-choice", "config.compilation-mode-invalid"],
                [
                    fix(
                        "use mode 3 (VLLM_COMPILE, vLLM's choice for V1), or 0 (NONE) for no torch.compile",
                        set_='{ "compilation_config.mode" = 3 }',
                    )
                ],  # fmt: skip
                when=f'{{ all = [{is_object("compilation_config")}, {{ field = "compilation_config.mode", op = "not_null" }}] }}',
                raised_in="API server, when CompilationConfig is built (validate_mode_before, then the IntEnum)",
                note="A name (VLLM_COMPILE) is taken in any case; a digit as text is taken too, as logdoctor's "
                "parser may keep `-cc.mode 3` as text where vLLM's gives 3.",
                cite="config/compilation.py CompilationConfig.mode (CompilationMode IntEnum) and validate_mode_before",
            )
    if r.has["backend-unknown"] and r.backends:
        names = "|".join(re.escape(b) for b in r.backends)
        for dest, flag in (
            ("attention_backend", "--attention-backend"),
            ("attention_config.backend", "--attention-config backend"),
        ):
            out += rule(
                f"{dest.replace('_', '-').replace('.', '-')}-known",
                f"{flag} names an attention backend of this release (or auto)",
                f'{{ field = "{dest}", op = "matches", value = "^(?i:auto|{names})$" }}',
                "Unknown attention backend: '{name}'. Valid options are: {valid_backends}",
                ["kernels.attention-backend-unknown", "kernels.attention-backend-invalid-name"],
                [
                    fix("drop it: vLLM picks the attention backend itself", unset=["attention_backend"])
                    if dest == "attention_backend"
                    else fix(
                        "drop backend: vLLM picks the attention backend itself",
                        set_='{ attention_config = { from = "attention_config", without = ["backend"] } }',
                    )  # fmt: skip
                ],
                when=(
                    f'{{ field = "{dest}", op = "not_null" }}'
                    if dest == "attention_backend"
                    else f'{{ all = [{is_object("attention_config")}, {{ field = "{dest}", op = "not_null" }}] }}'
                ),
                raised_in="API server, when AttentionConfig is built (validate_backend_before)",
                cite="config/attention.py AttentionConfig.validate_backend_before (AttentionBackendEnum[value.upper()]); "
                "v1/attention/backends/registry.py _AttentionBackendEnumMeta.__getitem__",
            )
    return out
