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
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")


def _human_readable_int(text: str) -> int:
    """vLLM's `human_readable_int` (utils/argparse_utils.py): `25.6k` is 25600, `1K` is 1024, `1.5K` is
    refused (no decimals with a binary suffix), anything else goes to int()."""
    text = text.strip()
    match = _HUMAN.fullmatch(text)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        if "." in number:
            raise ValueError(
                f"Decimals are not allowed with binary suffixes like {suffix}. "
                f"Did you mean to use {number}{suffix.lower()} instead?"
            )
        return int(number) * _BINARY[suffix]
    return int(text)


def _human_readable_int_or_auto(text: str) -> int:
    text = text.strip()
    return -1 if text == "-1" or text.lower() == "auto" else _human_readable_int(text)


# The argspec's type names vLLM's parser converts with a function logdoctor can run as vLLM does. Other
# types (`_optional_type`, whose inner type the dump does not record; vLLM's own parsers) are taken as
# given.
_PARSERS: dict[str, Any] = {
    "int": int,
    "float": float,
    "human_readable_int": _human_readable_int,
    "human_readable_int_or_auto": _human_readable_int_or_auto,
    "loads": json.loads,
}


def parse_value(spec: ArgSpec | None, raw: str) -> tuple[Any, str | None]:
    """A value as vLLM's parser converts it, and the error its parser would exit with (None when it takes
    it): `argument --max-model-len: invalid human_readable_int_or_auto value: '2048.0'`."""
    kind = spec.type if spec is not None else None
    parser = _PARSERS.get(kind) if kind is not None else None
    if spec is not None and parser is not None:
        try:
            return parser(raw.strip() if kind != "loads" else raw), None
        except (ValueError, TypeError) as exc:
            detail = str(exc) if str(exc).startswith("Decimals") else f"invalid {kind} value: {raw!r}"
            return raw, f"argument {spec.long_option}: {detail}"
    return convert(spec, raw), None


def convert(spec: ArgSpec | None, raw: str) -> Any:
    """A value as logdoctor reads it (a value vLLM would refuse is kept as written)."""
    kind = spec.type if spec is not None else None
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
    kind = spec.type if spec is not None else None
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
    if isinstance(typed, dict | list) and (spec is None or spec.type in _JSON_TYPES):
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

    nearest = nearest_options(option, spec.by_option)
    text = f"unknown option {option}{source}: vLLM exits with `unrecognized arguments: {option}`"
    if nearest:
        text += f"; did you mean {' or '.join(nearest)}? (the nearest options of vLLM {spec.vllm_version})"
    hint = vllm_hint(option)
    if hint:
        text += f"; vLLM's own hint: {hint}"
    if parsed is not None:
        if len(nearest) == 1:
            parsed.renames[option] = nearest[0]
        else:
            parsed.unknown.append(option)
    return text


def _parse_args(
    args: list[str],
    spec: ParserSpec,
    config: LaunchConfig,
    problems: list[str],
    where: str,
    parsed: ParsedCommand | None = None,
) -> None:
    i = 0
    config_files: list[str] = []
    while i < len(args):
        token = args[i]
        start = i
        i += 1
        if not token.startswith("-") or token == "-":
            if config.get("model") is None:
                _record(config, "model", token, [token], where)
            else:
                problems.append(f"unexpected extra argument {token!r}: vLLM exits with `unrecognized arguments`")
            continue
        option, has_inline, inline = token.partition("=")
        if option in ("--config",):
            value = inline if has_inline else (args[i] if i < len(args) else "")
            i += 0 if has_inline else 1
            config_files.append(value)
            continue
        option, _, subkey = option.partition(".") if option.startswith("--") else (option, "", "")
        arg = spec.find(option)
        negated = False
        if arg is None and option.startswith("--no-"):
            arg = spec.find("--" + option[5:])
            negated = arg is not None and arg.kind == "bool"
            if not negated:
                arg = None
        if arg is None:
            value_tokens = [] if has_inline or i >= len(args) or args[i].startswith("-") else [args[i]]
            i += len(value_tokens)
            problems.append(_unknown_option(option, spec, parsed))
            continue
        if arg.kind in ("bool", "flag"):
            if has_inline:
                problems.append(f"{option} takes no value: vLLM exits with `ignored explicit argument`")
            # The first spelling is the positive one (`--enable-x`); `--no-x` / `--disable-x` turn it off.
            spelled = "--" + option[2:].replace("_", "-")
            switch: Any = not negated and spelled == arg.options[0]
            if arg.kind == "flag":
                switch = arg.const if arg.const is not None else True
            _record(config, arg.dest, switch, args[start:i], where)
            continue
        if has_inline:
            raw_values = [inline]
        elif arg.kind == "list":
            raw_values = []
            while i < len(args) and not args[i].startswith("-"):
                raw_values.append(args[i])
                i += 1
        elif i < len(args):
            raw_values = [args[i]]
            i += 1
        else:
            problems.append(f"{option} expects a value: vLLM exits with `expected one argument`")
            continue
        if not raw_values:  # a list option followed by another option, or by nothing
            problems.append(f"{option} expects values: vLLM exits with `expected at least one argument`")
            continue
        if subkey:
            current = config.value(arg.dest)
            merged = dict(current) if isinstance(current, dict) else {}
            merged[subkey] = convert(None, raw_values[0]) if raw_values[0][:1] in "{[" else raw_values[0]
            _record(config, arg.dest, merged, (config.written.get(arg.dest) or []) + args[start:i], where)
            continue
        read = [parse_value(arg, v) for v in raw_values]
        problems += dict.fromkeys(error for _, error in read if error is not None)
        converted = [value for value, _ in read]
        typed: Any = converted if arg.kind == "list" else converted[0]
        if arg.choices is not None and arg.kind != "list" and typed not in arg.choices:
            choices = ", ".join(repr(c) for c in arg.choices)
            problems.append(f"argument {arg.long_option}: invalid choice: {typed!r} (choose from {choices})")
        _record(config, arg.dest, typed, args[start:i], where)
    for path in config_files:
        _merge_config_file(Path(path), spec, config, problems, parsed)


def _record(config: LaunchConfig, dest: str, value: Any, tokens: list[str], where: str) -> None:
    text = " ".join(tokens)
    config.set(dest, value, Origin(kind="command", where=f"{where}: {text}"), given=True)
    config.written[dest] = list(tokens)


def _merge_config_file(
    path: Path, spec: ParserSpec, config: LaunchConfig, problems: list[str], parsed: ParsedCommand | None = None
) -> None:
    """vLLM's `--config` YAML: keys are argument names; the command line wins over the file. A key vLLM
    would refuse is reported as the file's key, with the YAML diff that fixes it."""
    from logdoctor.launch.nearest import nearest_options

    raw = _raw_keys(path)
    for dest, value in read_config_file(path).items():
        arg = spec.find("--" + dest.replace("_", "-"))
        if arg is None:
            key = raw.get(dest, dest)
            option = "--" + key
            nearest = nearest_options(option, spec.by_option)
            text = f"key `{key}` in {path}: vLLM reads it as {option} and exits with `unrecognized arguments: {option}`"
            if nearest:
                text += f"; did you mean {' or '.join(n[2:] for n in nearest)}? (options of vLLM {spec.vllm_version})"
            problems.append(text)
            if parsed is not None:
                written = _yaml_value(value)
                parsed.yaml_diff.append(f"- {key}: {written}")
                if len(nearest) == 1:
                    parsed.yaml_diff.append(f"+ {nearest[0][2:]}: {written}")
            continue
        if arg.dest in config.given:
            continue
        config.set(arg.dest, value, Origin(kind="config_file", where=f"{path}: {dest}"), given=True)


def _raw_keys(path: Path) -> dict[str, str]:
    """The file's keys as written (`tensor-paralel-size`), by their argument spelling."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return {str(k).replace("-", "_"): str(k) for k in data} if isinstance(data, dict) else {}


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
    if isinstance(value, list) and (arg is None or arg.kind == "list" or arg.type not in _JSON_TYPES):
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
