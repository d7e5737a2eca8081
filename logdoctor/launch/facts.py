"""Facts about the model that the command line does not carry: its architecture, head counts, lengths.

Which facts, and which config.json keys give them, is the rule sets' data (`[[constraint_set.fact]]`).
In order of trust: what the user said (`--architecture`), the model's config.json (MODEL as a local
folder, or a repo id whose snapshot is in the Hugging Face cache) with the launch's `--hf-overrides`
applied as vLLM applies them, and, for the architecture of well-known families, the model's name (marked
inferred). A fact none of these gives stays unknown.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.library.rules import Fact

_MISSING = object()
_HUB_ID = re.compile(r"^[\w.-]+(?:/[\w.-]+)?$")  # `gpt2` is a repo id too


@lru_cache(maxsize=1)
def _families() -> list[tuple[re.Pattern[str], str]]:
    text = Path(__file__).resolve().with_name("families.toml").read_text("utf-8")
    return [(re.compile(f["match"]), f["architecture"]) for f in tomllib.loads(text)["family"]]


def infer_architecture(model: str) -> str | None:
    for pattern, architecture in _families():
        if pattern.search(model):
            return architecture
    return None


def hub_cache(environ: Mapping[str, str]) -> Path:
    """Where huggingface_hub keeps snapshots: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    home = environ.get("HF_HOME") or os.path.join(environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def config_json_of(folder: Path | None | bool) -> Path | None:
    """The config.json vLLM would read in MODEL's folder (model_folder), when there is one."""
    if not isinstance(folder, Path):
        return None
    found = folder / "config.json"
    return found if found.is_file() else None


def model_folder(model: str, environ: Mapping[str, str], revision: str | None = None) -> Path | None | bool:
    """Where vLLM would find MODEL's files here: the local folder, or the repo's snapshot in the Hugging
    Face cache (the revision's, else `main`'s, else the only one). False when there is none to be had
    here (no such path, no snapshot in the cache); None when it cannot be said (MODEL is a file: GGUF)."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return folder
    if folder.exists():
        return None
    if not _HUB_ID.match(model):
        return False
    repo = hub_cache(environ) / ("models--" + model.replace("/", "--"))
    snapshots = repo / "snapshots"
    for ref in (revision, "main"):
        if ref is None:
            continue
        ref_file = repo / "refs" / ref
        commit = ref_file.read_text("utf-8").strip() if ref_file.is_file() else ref
        if commit and (snapshots / commit).is_dir():
            return snapshots / commit
    found_all = sorted(p for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    return found_all[0] if len(found_all) == 1 else (None if found_all else False)


def _probe(config: LaunchConfig, fact: Fact, folder: Path | None | bool) -> None:
    """A `probe` fact: whether the model's folder has the file (`found`), whether it is a JSON object
    (`parses`: null when the file is not there), the names of its *.json files (`json_files`)."""
    if folder is None or folder is True:
        return  # MODEL is a file, or several snapshots and no ref to choose: unknown
    if fact.probe == "json_files":
        if isinstance(folder, Path):  # no folder at all: vLLM stops before it looks for files
            names = sorted(p.name for p in folder.glob("*.json"))
            config.set(fact.name, names, Origin(kind="config_file", where=f"{folder}: {len(names)} JSON file(s)"))
        return
    path = folder / fact.file if isinstance(folder, Path) else None
    found = path is not None and path.is_file()
    where = str(path) if path is not None else f"{config.value('model')}: no such folder, nor a snapshot in the cache"
    if fact.probe == "found":
        config.set(fact.name, found, Origin(kind="config_file", where=f"{where} {'found' if found else 'not found'}"))
        return
    parses = _read_json(path) is not None if found and path is not None else None
    said = "not found" if parses is None else ("parses" if parses else "is not a JSON object")
    config.set(fact.name, parses, Origin(kind="config_file", where=f"{where} {said}"))


def read_key(data: Any, dotted: str) -> Any:
    """`text_config.num_attention_heads` reads into nested dicts, `architectures.0` into a list."""
    value = data
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def fact_value(fact: Fact, data: dict[str, Any]) -> Any:
    found = [v for key in fact.config_json if (v := read_key(data, key)) is not _MISSING and v is not None]
    if not found:
        return _MISSING
    if fact.pick == "min":
        numbers = [v for v in found if isinstance(v, int | float) and not isinstance(v, bool)]
        return min(numbers) if numbers else _MISSING
    return found[0]


def overridden(data: dict[str, Any], overrides: Any) -> dict[str, Any]:
    """config.json as vLLM sees it after `--hf-overrides` (a dict: nested dicts update, values replace)."""
    if not isinstance(overrides, dict):
        return data
    merged = dict(data)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = overridden(merged[key], value)
        else:
            merged[key] = value
    return merged


def add_model_facts(
    config: LaunchConfig,
    facts: Iterable[Fact] = (),
    architecture: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Fill the declared facts (and `architecture`) from the most direct source available. `environ`
    locates the Hugging Face cache (the caller's environment: the core reads none)."""
    environ = {} if environ is None else environ
    if architecture:
        config.set("architecture", architecture, Origin(kind="command", where="--architecture"))
    model = config.value("model")
    if not isinstance(model, str):
        return
    wanted = {f.name: f for f in reversed(list(facts))}  # the first declaration of a name wins
    wanted.setdefault("architecture", Fact(name="architecture", config_json=["architectures.0"]))
    for fact in wanted.values():
        if fact.exists_of is not None:
            _path_fact(config, fact)
    revision = config.value("revision")
    folder = model_folder(model, environ, revision if isinstance(revision, str) else None)  # resolved once
    for fact in wanted.values():
        if fact.probe is not None:
            _probe(config, fact, folder)
    path = config_json_of(folder)
    for fact in wanted.values():
        if fact.valid_json or fact.has_token is not None:
            _file_fact(config, fact, path.parent if path is not None else None)
    if path is None:  # no config.json to read: the folder's facts stay unknown
        guess_architecture(config, model)
        return
    files: dict[str, dict[str, Any] | None] = {"config.json": _read_json(path)}
    overrides = config.value("hf_overrides")
    for name, fact in wanted.items():
        if not fact.config_json or (name == "architecture" and architecture):
            continue  # another kind of fact, or --architecture said so
        if fact.file not in files:
            files[fact.file] = _read_json(path.with_name(fact.file)) if path.with_name(fact.file).is_file() else None
        data = files[fact.file]
        where = str(path.with_name(fact.file))
        if data is None:
            if fact.absent is not None and not path.with_name(fact.file).exists():
                config.set(name, fact.absent, Origin(kind="config_file", where=f"{where} (absent)"))
            continue
        if fact.file == "config.json" and isinstance(overrides, dict) and overrides:
            data = overridden(data, overrides)  # vLLM applies --hf-overrides to the model's config
            where += " with --hf-overrides"
        value = fact_value(fact, data)
        if value is _MISSING and fact.absent is not None:
            value = fact.absent
        if value is not _MISSING:
            config.set(name, value, Origin(kind="config_file", where=where))
    guess_architecture(config, model)


def guess_architecture(config: LaunchConfig, model: str) -> None:
    """The architecture of a well-known family, from the model's name, when nothing more direct said."""
    if "architecture" not in config.settings:
        guess = infer_architecture(model)
        if guess is not None:
            config.set("architecture", guess, Origin(kind="inferred", where=f"inferred from the model name {model!r}"))


def _path_fact(config: LaunchConfig, fact: Fact) -> None:
    """Whether the file an argument names exists here (relative paths from where `check` runs)."""
    assert fact.exists_of is not None
    named = config.value(fact.exists_of)
    if not isinstance(named, str) or not named:
        config.set(fact.name, None, Origin(kind="derived", where=f"--{fact.exists_of.replace('_', '-')} not given"))
        return
    exists = Path(named).expanduser().exists()
    config.set(fact.name, exists, Origin(kind="derived", where=f"{named} {'exists' if exists else 'does not exist'}"))


def _file_fact(config: LaunchConfig, fact: Fact, model_folder: Path | None) -> None:
    """A fact about a file itself (does it parse, does the vocabulary it holds have a token), in the
    folder `folder_of` names when given (`--tokenizer DIR`), else the model's folder."""
    folder = model_folder
    if fact.folder_of is not None:
        named = config.value(fact.folder_of)
        if isinstance(named, str) and named:
            local = Path(named).expanduser()
            folder = local if local.is_dir() else None  # a repo id, or a path that is not there
    if folder is None:
        return
    if fact.valid_json:
        target = folder / fact.file
        if not target.is_file():
            config.set(fact.name, None, Origin(kind="config_file", where=f"{target} (absent)"))
            return
        parses = _parses(target)
        if parses is not None:
            where = f"{target} {'parses' if parses else 'is not valid JSON'}"
            config.set(fact.name, parses, Origin(kind="config_file", where=where))
        return
    assert fact.has_token is not None
    tokens = _vocabulary(folder)
    if tokens is not None:
        found = fact.has_token in tokens
        where = f"{folder / 'tokenizer.json'} {'has' if found else 'lacks'} {fact.has_token!r}"
        config.set(fact.name, found, Origin(kind="config_file", where=where))


def _parses(path: Path) -> bool | None:
    try:
        json.loads(path.read_text("utf-8"))
    except OSError:
        return None
    except ValueError:  # JSONDecodeError, or bytes that are not UTF-8
        return False
    return True


def _vocabulary(folder: Path) -> set[str] | None:
    """The tokens a Hugging Face fast tokenizer of this folder knows (what its get_vocab() returns): the
    model's vocab, the added tokens, added_tokens.json, and tokenizer_config.json's added_tokens_decoder."""
    data = _read_json(folder / "tokenizer.json") if (folder / "tokenizer.json").is_file() else None
    if data is None:
        return None
    tokens: set[str] = set()
    model = data.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        tokens.update(str(k) for k in vocab)
    elif isinstance(vocab, list):  # Unigram: [[token, score], ...]
        tokens.update(str(v[0]) for v in vocab if isinstance(v, list) and v)
    for added in data.get("added_tokens") or []:
        if isinstance(added, dict) and isinstance(added.get("content"), str):
            tokens.add(added["content"])
    extra = folder / "added_tokens.json"  # {token: id}, merged in by transformers too
    added_file = _read_json(extra) if extra.is_file() else None
    if isinstance(added_file, dict):
        tokens.update(str(k) for k in added_file)
    tok_config = folder / "tokenizer_config.json"
    decoder = (_read_json(tok_config) or {}).get("added_tokens_decoder") if tok_config.is_file() else None
    if isinstance(decoder, dict):
        tokens.update(
            v["content"] for v in decoder.values() if isinstance(v, dict) and isinstance(v.get("content"), str)
        )
    return tokens


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
