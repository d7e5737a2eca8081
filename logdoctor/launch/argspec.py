"""`vllm serve`'s argument parser, as data dumped from the real vLLM (bench/dump_argspec.py).

It tells `logdoctor check` how vLLM reads a command line (which options take a value, which are
`--x/--no-x` pairs, the short aliases such as `-tp`) and what each argument's default is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from logdoctor.versions import parse_version


@dataclass(frozen=True)
class ArgSpec:
    dest: str
    options: tuple[str, ...]
    kind: str  # value | bool | flag | list
    type: str | None
    choices: tuple[Any, ...] | None
    default: Any
    const: Any = None
    inner: tuple[str, ...] = ()  # what a wrapping type wraps, outermost first: `_optional_type` of ("int",)
    dataclass: str | None = None  # the config class `parse_dataclass` validates (its errors name it)
    nargs: str | None = None  # "?": the value may be left out (the bare option means `const`)
    fields: dict[str, bool] | None = None  # --lora-modules: LoRAModulePath's fields (True: required)
    action: str | None = None  # argparse's action class: `LoRAParserAction` reads values its own way
    hidden: tuple[str, ...] = ()  # spellings the parser takes but does not show (0.33's `--no-enable-x`)
    negative: tuple[str, ...] = ()  # a `--x/--no-x` pair's spellings that turn it off

    @property
    def long_option(self) -> str:
        longs = [o for o in self.options if o.startswith("--")]
        return longs[0] if longs else "--" + self.dest.replace("_", "-")

    @property
    def name(self) -> str:
        """How argparse names the argument in its errors: `argument --speculative-config/-sc: ...`."""
        return "/".join(self.options) if self.options else self.dest


@dataclass(frozen=True)
class ParserSpec:
    vllm_version: str
    by_dest: dict[str, ArgSpec]
    by_option: dict[str, ArgSpec]

    def abbreviations(self, prefix: str) -> list[str]:
        """The option strings argparse takes `prefix` for (allow_abbrev, Python 3.11's _get_option_tuples:
        every option string it begins, counted once each, in the order they were added: `-h/--help` first,
        which the dump leaves out)."""
        return [o for o in ("-h", "--help", *self.by_option) if o.startswith(prefix)]

    def find(self, option: str) -> ArgSpec | None:
        """The argument an option string names: `--tensor_parallel_size` and `-tp` included."""
        if option in self.by_option:
            return self.by_option[option]
        if option.startswith("--"):
            return self.by_option.get("--" + option[2:].replace("_", "-"))
        return None


# Package data, installed as files (read as paths: importlib.resources costs a tenth of a scan's start).
ARGSPECS = Path(__file__).resolve().parent / "argspecs"


def available_versions() -> list[str]:
    folder = ARGSPECS
    return sorted(
        (e.name.removesuffix(".json") for e in folder.iterdir() if e.name.endswith(".json")),
        key=lambda v: parse_version(v) or (),
    )


def outside_note(version: str) -> str | None:
    """When `version` is outside the releases whose parsers logdoctor carries: which one read the command
    (load_spec's choice), said, since vLLM's own parser may differ. A patch release reads as its minor's."""
    versions = available_versions()
    wanted = parse_version(version)
    if wanted is None:
        return None
    oldest, newest = versions[0], versions[-1]
    if wanted < (parse_version(oldest) or ()):
        side, used = "older", oldest
    elif wanted[:2] > (parse_version(newest) or ())[:2]:
        side, used = "newer", newest
    else:
        return None
    return f"vLLM {version} is {side} than every parser logdoctor carries: the command was read as vLLM {used} reads it"


@lru_cache(maxsize=64)  # a crash loop's file can hold launches of many releases: no reloading per finding
def load_spec(version: str | None = None) -> ParserSpec:
    """The spec of `version`, or of the nearest dumped version (the newest when None)."""
    versions = available_versions()
    chosen = versions[-1]
    wanted = parse_version(version) if version else None
    if wanted is not None:
        older = [v for v in versions if (parse_version(v) or ()) <= wanted]
        chosen = older[-1] if older else versions[0]
    text = (ARGSPECS / f"{chosen}.json").read_text("utf-8")
    data = json.loads(text)
    by_dest: dict[str, ArgSpec] = {}
    by_option: dict[str, ArgSpec] = {}
    for raw in data["options"]:
        spec = ArgSpec(
            dest=raw["dest"],
            options=tuple(raw["options"]),
            kind=raw["kind"],
            type=raw.get("type"),
            choices=tuple(raw["choices"]) if raw.get("choices") is not None else None,
            default=raw.get("default"),
            const=raw.get("const"),
            inner=tuple(raw.get("inner") or ()),
            dataclass=raw.get("dataclass"),
            nargs=raw.get("nargs"),
            fields=raw.get("fields"),
            action=raw.get("action"),
            hidden=tuple(raw.get("hidden") or ()),
            negative=tuple(raw.get("negative") or ()),
        )
        by_dest[spec.dest] = spec
        for option in (*spec.options, *spec.hidden):
            by_option[option] = spec
    return ParserSpec(data["vllm_version"], by_dest, by_option)
