"""`vllm serve` command lines and vLLM `--config` YAML files <-> LaunchConfig.

Parsing follows vLLM's FlexibleArgumentParser: `--flag value` and `--flag=value`, dashes or underscores,
`--x` / `--no-x` (and 0.33's `--disable-x`) for booleans, JSON values for config options, dotted
`--kv-transfer-config.kv_role kv_both`, short aliases such as `-tp`, and `VAR=value` environment
assignments before the program. Rendering keeps every token the user wrote for an argument that did not
change, and writes only the changed ones anew.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logdoctor.launch import argparser
from logdoctor.launch.argparser import YamlKey, human_readable_int, human_readable_int_or_auto
from logdoctor.launch.argspec import ArgSpec, ParserSpec, load_spec
from logdoctor.launch.config import LaunchConfig, Origin

_INT_TYPES = {"int", "human_readable_int", "human_readable_int_or_auto"}
_JSON_TYPES = {"loads", "parse_dataclass", "_optional_type", "union_dict_and_str", None}
_PROGRAMS = (("vllm", "serve"),)
# Never written back in clear: a corrected command carries a placeholder the user fills in.
SECRET_ARGS = frozenset({"api_key", "hf_token"})
SECRET_PLACEHOLDER = "***"


class CommandError(ValueError):
    """A command line or config file logdoctor cannot read; the message says where and why."""


@dataclass
class ParsedCommand:
    config: LaunchConfig
    problems: list[str] = field(default_factory=list)  # what vLLM's own parser would reject
    # Unknown options with one nearest real option of the release: what a corrected command writes instead.
    renames: dict[str, str] = field(default_factory=dict)
    # Unknown options with no single near match: a corrected command cannot keep them.
    unknown: list[str] = field(default_factory=list)
    # Keys of a --config YAML file vLLM would refuse, as the YAML diff that fixes them (`- x: v`, `+ y: v`).
    yaml_diff: list[str] = field(default_factory=list)


# The type names whose values logdoctor converts to compare and write them (vLLM's own reading, errors
# included, is launch/argparser.py's).
_PARSERS: dict[str, Any] = {
    "int": int,
    "float": float,
    "human_readable_int": human_readable_int,
    "human_readable_int_or_auto": human_readable_int_or_auto,
    "loads": json.loads,
}


def value_type(spec: ArgSpec | None) -> str | None:
    """The type that decides how a value reads and is written: what `optional_type` / `parse_type`
    wrap (`--max-cpu-loras` is an int, `--speculative-config` JSON)."""
    if spec is None:
        return None
    kind, inner = spec.type, spec.inner
    while kind in ("_optional_type", "_parse_type") and inner:
        kind, inner = inner[0], inner[1:]
    return kind


def convert(spec: ArgSpec | None, raw: str) -> Any:
    """A value as logdoctor reads it (a value vLLM would refuse is kept as written)."""
    kind = value_type(spec)
    text = raw.strip()
    if kind in _INT_TYPES:
        try:
            return _PARSERS[kind](text)
        except (ValueError, KeyError):
            return raw
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            return raw
    if kind in _JSON_TYPES and text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return raw
    return raw


def typed_value(spec: ArgSpec | None, value: Any) -> Any:
    """A value a fix writes, in the type vLLM's parser gives the argument: an integer argument gets an int
    (`2048.0` from a log becomes 2048; a fraction is rounded down, the fixes' values being upper bounds),
    a float argument a float; other values as they are."""
    kind = value_type(spec)
    if isinstance(value, bool) or value is None:
        return value
    if kind in _INT_TYPES:
        number = value
        if isinstance(value, str):
            try:
                return _PARSERS[kind](value)
            except (ValueError, KeyError):
                try:
                    number = float(value.strip())
                except ValueError:
                    return value
        if isinstance(number, float) and math.isfinite(number):
            return math.floor(number)
        return number
    if kind == "float":
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return value
    return value


def format_value(spec: ArgSpec | None, value: Any) -> str:
    """How a fix's value is written for vLLM's parser to read (the type of its argument decides)."""
    typed = typed_value(spec, value)
    if isinstance(typed, dict | list) and (spec is None or value_type(spec) in _JSON_TYPES):
        return json.dumps(typed, separators=(", ", ": "), default=str)
    if isinstance(typed, bool):
        return "true" if typed else "false"
    return str(typed)


def _split_program(tokens: list[str]) -> tuple[dict[str, str], str, list[str]]:
    env: dict[str, str] = {}
    rest = list(tokens)
    while rest and "=" in rest[0] and not rest[0].startswith("-") and rest[0].split("=", 1)[0].isidentifier():
        name, value = rest.pop(0).split("=", 1)
        env[name] = value
    if rest and rest[0] == "env":
        rest.pop(0)
        return _split_program(rest)
    for program in _PROGRAMS:
        n = len(program)
        if len(rest) >= n and Path(rest[0]).name == program[0] and tuple(rest[1:n]) == program[1:]:
            return env, " ".join(program), rest[n:]
    if len(rest) >= 3 and Path(rest[0]).name.startswith("python") and rest[1] == "-m":
        return env, " ".join(rest[:3]), rest[3:]
    return env, "vllm serve", rest


def parse_command(tokens: list[str], version: str | None = None, where: str = "command line") -> ParsedCommand:
    spec = load_spec(version)
    env, program, args = _split_program(tokens)
    config = LaunchConfig(program=program)
    problems: list[str] = []
    for name, value in env.items():
        config.set(f"env.{name}", value, Origin(kind="command", where=f"{where}: {name}={value}"))
    parsed = ParsedCommand(config, problems)
    _parse_args(args, spec, config, problems, where, parsed)
    return parsed


def _unknown_option(option: str, spec: ParserSpec, parsed: ParsedCommand | None, source: str = "") -> str:
    """vLLM's refusal of an option, with the nearest real options of the release and vLLM's own hint."""
    from logdoctor.launch.nearest import nearest_options, vllm_hint

    renamed = same_argument(option, spec)
    nearest = [renamed] if renamed else nearest_options(option, spec.by_option)
    text = f"unknown option {option}{source}: vLLM exits with `unrecognized arguments: {option}`"
    if renamed:
        text += f"; did you mean {renamed}? (vLLM {spec.vllm_version}'s spelling of the same argument)"
    elif nearest:
        text += f"; did you mean {' or '.join(nearest)}? (the nearest options of vLLM {spec.vllm_version})"
    hint = vllm_hint(option)
    if hint:
        text += f"; vLLM's own hint: {hint}"
    other = other_releases(option, spec.vllm_version)
    if other:
        text += f"; {other}"
    if parsed is not None:
        if len(nearest) == 1:
            parsed.renames[option] = nearest[0]
        else:
            parsed.unknown.append(option)
    return text


def same_argument(option: str, spec: ParserSpec) -> str | None:
    """This release's spelling of the argument another release spells `option` (a renamed flag: 0.33's
    `--disable-prefix-caching` is 0.32's `--no-enable-prefix-caching`, the same argument turned off), the
    newest such release first. None when no release logdoctor carries has the option."""
    from logdoctor.launch.argspec import available_versions

    spelled = "--" + option[2:].replace("_", "-") if option.startswith("--") else option
    for version in reversed(available_versions()):
        other = load_spec(version).find(option)
        mine = spec.by_dest.get(other.dest) if other is not None and version != spec.vllm_version else None
        if other is None or mine is None:
            continue
        if other.kind == "bool" and mine.kind == "bool":
            spellings = [o for o in (*mine.options, *mine.hidden) if o.startswith("--")]
            same = [o for o in spellings if _turns_off(mine, o) == _turns_off(other, spelled)]
            return same[0] if same else None
        return mine.long_option if mine.kind == other.kind else None
    return None


def _turns_off(arg: ArgSpec, option: str) -> bool:
    """Is `option` a spelling that sets the `--x/--no-x` pair `arg` to False?"""
    return option in arg.negative if arg.negative else option.startswith("--no-")


def other_releases(option: str, version: str) -> str | None:
    """Which releases logdoctor carries do take an option `version` refuses: a flag removed (`vLLM
    0.27.0 to 0.32.0 have it`) or one newer than the version (`it is vLLM 0.33.0's`)."""
    from logdoctor.launch.argspec import available_versions
    from logdoctor.versions import parse_version

    having = [v for v in available_versions() if v != version and load_spec(v).find(option) is not None]
    if not having:
        return None
    span = having[0] if len(having) == 1 else f"{having[0]} to {having[-1]}"
    newer = (parse_version(having[0]) or ()) > (parse_version(version) or ())
    return f"vLLM {span} {'has' if len(having) == 1 else 'have'} it ({'newer' if newer else 'older'} than {version})"


def _parse_args(
    args: list[str],
    spec: ParserSpec,
    config: LaunchConfig,
    problems: list[str],
    where: str,
    parsed: ParsedCommand | None = None,
) -> None:
    """The words after `vllm serve`, read by vLLM's parser (launch/argparser.py), into the config: each
    argument with the words the user wrote for it, a `--config` file's keys as the file's."""
    read = argparser.read(args, spec)
    problems += read.problems
    for dest, value in read.values.items():
        origins = [o for w in read.words[dest] for o in w.origins]
        name = "model" if dest == "model_tag" else dest
        indices = sorted({o for o in origins if isinstance(o, int)})
        if indices:
            _record(config, name, value, [args[n] for n in indices], where)
            continue
        keys = [o for o in origins if isinstance(o, YamlKey)]
        if keys and name not in config.given:
            config.set(name, value, Origin(kind="config_file", where=f"{keys[0].path}: {keys[0].key}"), given=True)
    for word in read.unknown:
        problems.append(_unknown_word(word, args, spec, parsed))
    for word in read.extras:
        problems.append(f"unexpected extra argument {word.text!r}: vLLM exits with `unrecognized arguments`")


def _unknown_word(word: argparser.Word, args: list[str], spec: ParserSpec, parsed: ParsedCommand | None) -> str:
    """An option no argument of the release takes: blamed on the command's word, or the file's key."""
    origin = word.origins[0] if word.origins else None
    if isinstance(origin, YamlKey):
        return _unknown_key(origin, spec, parsed)
    option = args[origin].partition("=")[0] if isinstance(origin, int) else word.text.partition("=")[0]
    return _unknown_option(option, spec, parsed)


def _unknown_key(origin: YamlKey, spec: ParserSpec, parsed: ParsedCommand | None) -> str:
    """A --config file's key vLLM reads as an unknown option: the key, with the YAML diff that fixes it."""
    from logdoctor.launch.nearest import nearest_options

    key, option = origin.key, "--" + origin.key
    nearest = nearest_options(option, spec.by_option)
    text = f"key `{key}` in {origin.path}: vLLM reads it as {option} and exits with `unrecognized arguments: {option}`"
    if nearest:
        text += f"; did you mean {' or '.join(n[2:] for n in nearest)}? (options of vLLM {spec.vllm_version})"
    if parsed is not None:
        written = _yaml_value(origin.value)
        parsed.yaml_diff.append(f"- {key}: {written}")
        if len(nearest) == 1:
            parsed.yaml_diff.append(f"+ {nearest[0][2:]}: {written}")
    return text


def _record(config: LaunchConfig, dest: str, value: Any, tokens: list[str], where: str) -> None:
    text = " ".join(tokens)
    config.set(dest, value, Origin(kind="command", where=f"{where}: {text}"), given=True)
    config.written[dest] = list(tokens)


def _yaml_value(value: Any) -> str:
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text.removesuffix("...").strip()


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - pyyaml is a dependency
        raise CommandError("reading --config files needs PyYAML (pip install pyyaml)") from exc
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:  # a NUL in the path (found by hypothesis), not UTF-8
        raise CommandError(f"{path!r}: cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise CommandError(f"{path}: not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CommandError(f"{path}: a vLLM config file is a mapping of argument names to values")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def option_tokens(spec: ParserSpec, dest: str, value: Any) -> list[str]:
    """How a fresh value is written on the command line."""
    arg = spec.by_dest.get(dest)
    option = arg.long_option if arg is not None else "--" + dest.replace("_", "-")
    if value is None:
        return []
    if dest in SECRET_ARGS:
        return [option, SECRET_PLACEHOLDER]
    if isinstance(value, bool) or (arg is not None and arg.kind in ("bool", "flag")):
        if arg is not None and arg.kind == "flag":
            return [option] if value else []
        # `--no-<positive>` is accepted by every release (0.33 adds `--disable-x` for `--enable-x`).
        return [option] if value else ["--no-" + option[2:]]
    if isinstance(value, dict):
        return [option, json.dumps(value, separators=(", ", ": "), default=str)]
    if isinstance(value, list) and (arg is None or arg.kind == "list" or value_type(arg) not in _JSON_TYPES):
        return [option, *(format_value(arg, v) for v in value)]
    if isinstance(value, list):  # one JSON value (`--allowed-origins '["*"]'`)
        return [option, json.dumps(value, default=str)]
    return [option, format_value(arg, value)]


def render_command(config: LaunchConfig, version: str | None = None) -> str:
    """The launch as a command line: what the user wrote where unchanged, fixes written anew."""
    spec = load_spec(version)
    words: list[str] = [f"{name}={setting.value}" for name, setting in config.env.items() if setting.value is not None]
    words += config.program.split()
    model = config.get("model")
    if model is not None:
        words += config.written.get("model") or [str(model.value)]
    for dest in config.given:
        if dest == "model":
            continue
        setting = config.get(dest)
        if setting is None:
            continue
        written = config.written.get(dest)
        if written is not None and dest not in SECRET_ARGS:
            words += written
        else:
            words += option_tokens(spec, dest, setting.value)
    return shlex.join(words)
