#!/usr/bin/env python3
"""The lists the model, environment and JSON-option rule sets read, generated from each vLLM release's
source (never typed by hand), and the three rule files built from them:

  patterns/model-rules.toml    the architectures of vllm/model_executor/models/registry.py
                               (`_VLLM_MODELS`, its pooling-only entries, `_PREVIOUSLY_SUPPORTED_MODELS`,
                               `_OOT_SUPPORTED_MODELS`) and the model types vLLM registers itself
                               (vllm/transformers_utils/config.py `_CONFIG_REGISTRY`), with the model
                               types and classes of the transformers release the server runs
  patterns/env-rules.toml      the variables of vllm/envs.py `environment_variables` and their types
                               (which ones go through int(), float(), a list of choices)
  patterns/options-rules.toml  each JSON config option's fields (the `@config` dataclasses of
                               vllm/config/*.py that EngineArgs' fields name), their Literal and enum
                               choices, and the attention backends (AttentionBackendEnum)

Everything is read with `ast` from the release's source (no vLLM import: a wheel of any release will
do). Consecutive releases with the same lists share one set (`versions` is their range); the rules
themselves (vLLM's messages, fixes, citations) are the templates in this file, checked against each
release's source below (`MESSAGES`: a rule is written for the releases whose source has its message).

    python bench/model_lists.py --src 0.27.0=/tmp/w027/vllm ... --transformers-python /work/vllm033/bin/python
    python bench/model_lists.py --download /tmp/vllm-src      # pip download + unzip each release
    python bench/model_lists.py ... --check                   # exit 1 when a file is not what it builds
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ["0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]


# ---------------------------------------------------------------- reading a release's source


def _module(path: Path) -> ast.Module:
    return ast.parse(path.read_text("utf-8"))


def _assigned(tree: ast.Module) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def _dict_keys(node: ast.expr, named: dict[str, ast.expr], seen: frozenset[str] = frozenset()) -> list[str]:
    """The string keys of a dict literal, `**OTHER` spreads of module-level dicts included."""
    keys: list[str] = []
    if isinstance(node, ast.Call) and not node.args:  # LazyConfigDict(a="A", ...)
        return [k.arg for k in node.keywords if k.arg]
    if not isinstance(node, ast.Dict):
        return keys
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            if isinstance(value, ast.Name) and value.id in named and value.id not in seen:
                keys += _dict_keys(named[value.id], named, seen | {value.id})
            # `**{k: v for ... in X.items() if ...}`: a subset of X, whose keys are listed already
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            keys.append(key.value)
    return keys


def _dict_items(node: ast.expr) -> dict[str, ast.expr]:
    if not isinstance(node, ast.Dict):
        return {}
    return {
        k.value: v
        for k, v in zip(node.keys, node.values, strict=True)
        if isinstance(k, ast.Constant) and isinstance(k.value, str)
    }


@dataclass
class Registry:
    architectures: list[str]
    pooling_only: list[str]
    previously_supported: dict[str, str]
    out_of_tree: list[str]
    config_registry: list[str]  # model types vLLM registers itself


def read_registry(src: Path) -> Registry:
    tree = _module(src / "model_executor/models/registry.py")
    named = _assigned(tree)
    architectures = sorted(set(_dict_keys(named["_VLLM_MODELS"], named)))
    generative: set[tuple[str, str]] = set()
    generative_archs: set[str] = set()
    for name in ("_TEXT_GENERATION_MODELS", "_MULTIMODAL_MODELS"):
        for arch, value in _dict_items(named.get(name, ast.Dict(keys=[], values=[]))).items():
            generative_archs.add(arch)
            if isinstance(value, ast.Tuple) and all(isinstance(e, ast.Constant) for e in value.elts):
                generative.add(tuple(e.value for e in value.elts)[:2])  # type: ignore[arg-type,attr-defined]
    pooling: set[str] = set()
    for name in (
        "_EMBEDDING_MODELS", "_LATE_INTERACTION_MODELS", "_REWARD_MODELS", "_TOKEN_CLASSIFICATION_MODELS",
        "_SEQUENCE_CLASSIFICATION_MODELS", "_CROSS_ENCODER_MODELS",
    ):  # fmt: skip
        for arch, value in _dict_items(named.get(name, ast.Dict(keys=[], values=[]))).items():
            target = tuple(e.value for e in value.elts)[:2] if isinstance(value, ast.Tuple) else None  # type: ignore[attr-defined]
            # a pooling entry whose class is also a generative model's (LlamaModel -> LlamaForCausalLM)
            # generates as well: only the others are pooling-only
            if arch not in generative_archs and target not in generative:
                pooling.add(arch)
    previous = {
        k: v.value
        for k, v in _dict_items(named.get("_PREVIOUSLY_SUPPORTED_MODELS", ast.Dict(keys=[], values=[]))).items()
        if isinstance(v, ast.Constant)
    }
    oot = sorted(_dict_keys(named.get("_OOT_SUPPORTED_MODELS", ast.Dict(keys=[], values=[])), named))
    config_tree = _module(src / "transformers_utils/config.py")
    config_registry = sorted(
        _dict_keys(_assigned(config_tree).get("_CONFIG_REGISTRY", ast.Dict(keys=[], values=[])), {})
    )
    return Registry(architectures, sorted(pooling), previous, oot, config_registry)


@dataclass
class Envs:
    names: list[str]
    ints: list[str]  # converted with int() (or bool(int())) when read
    floats: list[str]
    choices: dict[str, tuple[list[str], bool]]  # name -> (choices, case sensitive)


def _reads(call: ast.expr, name: str) -> bool:
    """`os.getenv(NAME, ...)` / `os.environ.get(NAME, ...)` / `os.environ[NAME]`."""
    if isinstance(call, ast.Call) and ast.unparse(call.func) in ("os.getenv", "os.environ.get") and call.args:
        first = call.args[0]
        return isinstance(first, ast.Constant) and first.value == name
    if isinstance(call, ast.Subscript) and ast.unparse(call.value) == "os.environ":
        return isinstance(call.slice, ast.Constant) and call.slice.value == name
    return False


def _conversion(body: ast.expr, name: str) -> str | None:
    """What a variable's lambda converts its text with: `int`, `float`, or None (a text, a test)."""
    if not (isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and len(body.args) == 1):
        return None
    func, arg = body.func.id, body.args[0]
    if func in ("bool", "int") and isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
        return _conversion(arg, name) if arg.func.id in ("int", "float") else None
    if func in ("int", "float") and _reads(arg, name):
        return func
    if func in ("maybe_convert_int", "maybe_convert_bool") and _reads(arg, name):
        return "int"
    return None


def read_envs(src: Path) -> Envs:
    tree = _module(src / "envs.py")
    table = _assigned(tree)["environment_variables"]
    assert isinstance(table, ast.Dict)
    names, ints, floats, choices = [], [], [], {}
    for key, value in zip(table.keys, table.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        name = key.value
        names.append(name)
        if isinstance(value, ast.Lambda):
            kind = _conversion(value.body, name)
            if kind == "int":
                ints.append(name)
            elif kind == "float":
                floats.append(name)
        elif isinstance(value, ast.Call) and ast.unparse(value.func) == "env_with_choices":
            options = value.args[2] if len(value.args) > 2 else None
            sensitive = next(
                (
                    k.value.value
                    for k in value.keywords
                    if k.arg == "case_sensitive" and isinstance(k.value, ast.Constant)
                ),
                True,
            )
            if isinstance(options, ast.List) and all(isinstance(e, ast.Constant) for e in options.elts):
                choices[name] = ([e.value for e in options.elts], bool(sensitive))  # type: ignore[attr-defined]
    return Envs(sorted(names), sorted(ints), sorted(floats), dict(sorted(choices.items())))


@dataclass
class Option:
    """A JSON config option: EngineArgs' field, the `@config` dataclass it names."""

    dest: str
    cls: str
    file: str
    fields: list[str]
    literals: dict[str, list[Any]] = field(default_factory=dict)  # field -> choices (None: may be null)
    required_kv_role: bool = False


def _literal_values(node: ast.expr, aliases: dict[str, ast.expr], depth: int = 0) -> list[Any] | None:
    """The values a `Literal[...]` annotation (through module-level aliases, `| None`) allows."""
    if depth > 6:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = _literal_values(node.left, aliases, depth + 1)
        right = _literal_values(node.right, aliases, depth + 1)
        if left is None or right is None:
            return None
        return left + [v for v in right if v not in left]
    if isinstance(node, ast.Constant) and node.value is None:
        return [None]
    if isinstance(node, ast.Name) and node.id in aliases:
        return _literal_values(aliases[node.id], aliases, depth + 1)
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("Literal", "typing.Literal"):
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out: list[Any] = []
        for element in elements:
            if isinstance(element, ast.Constant):
                out.append(element.value)
            else:
                nested = _literal_values(element, aliases, depth + 1)
                if nested is None:
                    return None
                out += [v for v in nested if v not in out]
        return out
    return None


def read_options(src: Path) -> tuple[list[Option], list[str]]:
    classes: dict[str, tuple[ast.ClassDef, dict[str, ast.expr], str]] = {}
    for path in sorted((src / "config").glob("*.py")):
        tree = _module(path)
        aliases = _assigned(tree)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(ast.unparse(d) == "config" for d in node.decorator_list):
                classes[node.name] = (node, aliases, f"vllm/config/{path.name}")
    args = next(
        n for n in _module(src / "engine/arg_utils.py").body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs"
    )
    options = []
    for item in args.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        named = [n.id for n in ast.walk(item.annotation) if isinstance(n, ast.Name) and n.id in classes]
        if len(named) != 1:
            continue
        node, aliases, file = classes[named[0]]
        fields, literals = [], {}
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            if "ClassVar" in ast.unparse(stmt.annotation) or "InitVar" in ast.unparse(stmt.annotation):
                continue
            if isinstance(stmt.value, ast.Call) and any(
                k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in stmt.value.keywords
            ):
                continue  # field(init=False): not a keyword the dataclass takes
            fields.append(stmt.target.id)
            values = _literal_values(stmt.annotation, aliases)
            if values is not None and all(isinstance(v, str) or v is None for v in values):
                literals[stmt.target.id] = values
        source = ast.unparse(node)
        required = "Please specify kv_role when kv_connector" in source
        options.append(Option(item.target.id, named[0], file, fields, literals, required))
    enum_path = src / "v1/attention/backends/registry.py"
    backends: list[str] = []
    if enum_path.exists():
        for node in _module(enum_path).body:
            if isinstance(node, ast.ClassDef) and node.name == "AttentionBackendEnum":
                backends = [
                    t.id for s in node.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)
                ]
    return options, backends


def read_compilation_modes(src: Path) -> dict[str, int]:
    for node in _module(src / "config/compilation.py").body:
        if isinstance(node, ast.ClassDef) and node.name == "CompilationMode":
            return {
                s.targets[0].id: s.value.value  # type: ignore[attr-defined,union-attr]
                for s in node.body
                if isinstance(s, ast.Assign)
                and isinstance(s.targets[0], ast.Name)
                and isinstance(s.value, ast.Constant)
            }
    return {}


# Each rule's message, as the release's source spells it: a rule is written only for the releases that
# have it (file, text).
MESSAGES = {
    "embedding-runner": ("config/model.py", "Embedding models do not support `--runner {self.runner_type}`."),
    "unsupported-arch": ("model_executor/models/registry.py", "are not supported for now. "),
    "previously-supported": ("model_executor/models/registry.py", "was supported in vLLM until "),
    "out-of-tree": ("model_executor/models/registry.py", "is not supported in-tree anymore. "),
    "invalid-repo": ("transformers_utils/config.py", "Invalid repository ID or local directory specified:"),
    "offline-model-path": ("engine/arg_utils.py", "self.model = get_model_path(self.model, self.revision)"),
    "offline-tokenizer-path": ("engine/arg_utils.py", "self.tokenizer = get_model_path(self.tokenizer,"),
    "unknown-env": ("platforms/interface.py|envs.py", "Unknown vLLM environment variable detected: {env}"),
    "vllm-port-uri": ("envs.py", "appears to be a URI. "),
    "cpu-kvcache": ("platforms/cpu.py", "int(os.environ[env_key])"),
    "kv-role-required": ("config/kv_transfer.py", "Please specify kv_role when kv_connector"),
    "backend-unknown": ("v1/attention/backends/registry.py", "Unknown attention backend: '{name}'. "),
    "mode-names": ("config/compilation.py", "Invalid compilation mode: {value}. "),
}


@dataclass
class Release:
    version: str
    registry: Registry
    envs: Envs
    options: list[Option]
    backends: list[str]
    modes: dict[str, int]
    has: dict[str, bool]


def read_release(version: str, src: Path) -> Release:
    has = {}
    for key, (files, text) in MESSAGES.items():
        has[key] = any((src / f).exists() and text in (src / f).read_text("utf-8") for f in files.split("|"))
    options, backends = read_options(src)
    return Release(version, read_registry(src), read_envs(src), options, backends, read_compilation_modes(src), has)


def transformers_facts(python: str) -> dict[str, Any]:
    """The model types (CONFIG_MAPPING) and model classes of the transformers release `python` imports."""
    code = (
        "import json, transformers\n"
        "from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES as C\n"
        "names = sorted(n for n in dir(transformers) if n[:1].isupper() and n.endswith(('Model','LM','Generation',"
        "'Classification','Retrieval','Modeling','Prediction','Encoder','Decoder','Head','Training')))\n"
        "print(json.dumps({'version': transformers.__version__, 'model_types': sorted(C), 'classes': names}))\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- writing TOML


def toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def toml_list(values: list[Any], per_line: int = 6) -> str:
    if not values:
        return "[]"
    items = [toml_str(v) if isinstance(v, str) else json.dumps(v) for v in values]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[\n  " + ",\n  ".join(lines) + ",\n]"


def ranges(releases: list[Release], key: Any) -> list[tuple[list[Release], str]]:
    """Consecutive releases whose `key` is equal, each group with its version range."""
    groups: list[list[Release]] = []
    for release in releases:
        if groups and key(groups[-1][0]) == key(release):
            groups[-1].append(release)
        else:
            groups.append([release])
    out = []
    for n, group in enumerate(groups):
        first = group[0].version.rsplit(".", 1)[0]
        if n + 1 < len(groups):
            upper = groups[n + 1][0].version.rsplit(".", 1)[0]
            out.append((group, f">={first},<{upper}"))
        else:
            out.append((group, f">={first}"))
    return out


def tag(release: Release) -> str:
    return release.version.rsplit(".", 1)[0].replace(".", "_")


HEADER = """# GENERATED by bench/model_lists.py from each vLLM release's source: do not edit (edit the generator,
# whose templates carry the rules, messages and citations, and run it again).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", action="append", default=[], metavar="VERSION=PATH", help="a release's vllm/ folder")
    parser.add_argument("--download", metavar="DIR", help="pip download + unzip the releases missing from --src")
    parser.add_argument("--transformers-python", default="/work/vllm033/bin/python")
    parser.add_argument("--check", action="store_true", help="exit 1 when a rule file differs from what it builds")
    args = parser.parse_args(argv)
    sources = dict(s.split("=", 1) for s in args.src)
    for version in VERSIONS:
        if version in sources or not args.download:
            continue
        target = Path(args.download) / version
        if not (target / "vllm").is_dir():
            target.mkdir(parents=True, exist_ok=True)
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"vllm=={version}", "-d", str(target)]
            subprocess.run(pip, check=True)
            wheel = next(target.glob("vllm-*.whl"))
            subprocess.run(["unzip", "-q", "-o", str(wheel), "vllm/*", "-d", str(target)], check=True)
        sources[version] = str(target / "vllm")
    missing = [v for v in VERSIONS if v not in sources]
    if missing:
        parser.error(f"no source for {missing}: --src VERSION=PATH or --download DIR")
    releases = [read_release(v, Path(sources[v])) for v in VERSIONS]
    tf = transformers_facts(args.transformers_python)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from model_rules_template import env_file, model_file, options_file

    files = {
        "patterns/model-rules.toml": HEADER + model_file(releases, tf, ranges, tag, toml_list),
        "patterns/env-rules.toml": HEADER + env_file(releases, ranges, tag, toml_list),
        "patterns/options-rules.toml": HEADER + options_file(releases, ranges, tag, toml_list),
    }
    differ = []
    for name, text in files.items():
        path = ROOT / name
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                differ.append(name)
        else:
            path.write_text(text, "utf-8")
            print(f"wrote {name} ({len(text)} chars)")
    if differ:
        print("differs from what bench/model_lists.py builds:", ", ".join(differ))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
