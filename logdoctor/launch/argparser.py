"""`vllm serve`'s argument parser, step by step as vLLM runs it, over the dumped spec of a release.

FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py, 0.33.0) rewrites the words before
argparse sees them: `--model X` moves to the front, `--config FILE` is replaced by the file's keys,
underscores in option names become dashes, `-O3` is `--optimization-level 3`, and dotted
`--json-arg.key value` words are gathered into one `--json-arg '{"key": value}'` at the end. Then
argparse (Python 3.11) reads them: exact option strings, `--opt=value`, unique prefixes of long options
(allow_abbrev), negative numbers as values, and each value through the argument's type function.

Every word keeps where it came from (an index into the command's words, or a `--config` file's key), so
what the user wrote can be rendered back and a refusal blamed on the right place. Refusals are vLLM's
own words: `argument --port: invalid int value: 'http'`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from logdoctor.launch.argspec import ArgSpec, ParserSpec


@dataclass(frozen=True)
class YamlKey:
    """A word vLLM made of a `--config` file's key."""

    path: str
    key: str
    value: Any


Origin = int | YamlKey | None  # the command's word index; a file's key; None: made by vLLM itself


@dataclass(frozen=True)
class Word:
    text: str
    origins: tuple[Origin, ...]  # the user's words this one stands for (a dotted group: all of them)


@dataclass
class Parsed:
    """What argparse ends with: each destination's value and the words that set it, in order."""

    values: dict[str, Any] = field(default_factory=dict)
    words: dict[str, list[Word]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unknown: list[Word] = field(default_factory=list)  # option words no argument of the release takes
    extras: list[Word] = field(default_factory=list)  # positional words left over
    config_files: list[str] = field(default_factory=list)


class Refusal(Exception):
    """vLLM's parser stops: `error` is the message it exits with."""


_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")


def human_readable_int(text: str) -> int:
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


def human_readable_int_or_auto(text: str) -> int:
    text = text.strip()
    return -1 if text == "-1" or text.lower() == "auto" else human_readable_int(text)


# --- vLLM's rewriting of the words (FlexibleArgumentParser.parse_args) -----------------------------

_MODEL_OPTION = re.compile(r"^--model(=.+|$)")
_SERVED_NAME = re.compile(r"^--served[-_]model[-_]name(=.+|$)")
_CONFIG_OPTION = re.compile(r"^--config(=.+|$)")
_NAME_PART = re.compile(r"(?<=--)[^\.]*")  # everything between the first -- and the first .
NO_MODEL_FIRST = (
    "`model` should be provided as the first positional argument when using `vllm serve`. "
    "i.e. `vllm serve <model> --<arg> <value>`."
)
NO_MODEL = "No model specified! Please specify model either as a positional argument or in a config file."


def move_model_option(words: list[Word], problems: list[str]) -> list[Word]:
    """`--model X` anywhere is the positional model: vLLM moves it to the front (and warns)."""
    at = next((i for i, w in enumerate(words) if _MODEL_OPTION.match(w.text)), None)
    if at is None:
        return words
    if words[at].text == "--model":
        if at + 1 >= len(words):
            problems.append("--model without a value: vLLM exits with `IndexError: list index out of range`")
            return words[:at]
        model = Word(words[at + 1].text, words[at].origins + words[at + 1].origins)
        return [model, *words[:at], *words[at + 2 :]]
    model = Word(words[at].text.removeprefix("--model="), words[at].origins)
    return [model, *words[:at], *words[at + 1 :]]


def served_name_without_model(words: list[Word]) -> bool:
    """vLLM refuses `--served-model-name` when the first word is an option and no --config is given."""
    texts = [w.text for w in words]
    return (
        bool(texts)
        and texts[0].startswith("-")
        and not any(_CONFIG_OPTION.match(t) for t in texts)
        and any(_SERVED_NAME.match(t) for t in texts)
    )


def pull_config_file(words: list[Word], files: list[str]) -> list[Word]:
    """`--config FILE` (that exact word: `--config=FILE` is left to argparse, which only stores it) is
    replaced by the file's keys, after the positional model: the command line wins over the file
    (FlexibleArgumentParser._pull_args_from_config)."""
    texts = [w.text for w in words]
    if texts.count("--config") > 1:
        raise Refusal("AssertionError: More than one config file specified!")
    index = texts.index("--config")
    if index == len(words) - 1:
        raise Refusal("ValueError: No config file specified! Please check your command-line arguments.")
    path = texts[index + 1]
    files.append(path)
    from_file = load_config_file(path)
    model_in_cli = bool(words) and not texts[0].startswith("-")
    if not model_in_cli and not any(w.text == "--model" for w in from_file):
        raise Refusal(f"ValueError: {NO_MODEL}")
    rest = words[:index] + words[index + 2 :]
    return rest[:1] + from_file + rest[1:] if model_in_cli else from_file + rest


def load_config_file(path: str) -> list[Word]:
    """A `--config` YAML file as the words vLLM makes of it (load_config_file): `key: true` is `--key`,
    a list its items, a mapping JSON. `key: false` would be `--no-key` if the parser reading the file had
    it, but `vllm serve` reads the file in the top-level `vllm` parser, which has no such options: the key
    is dropped and the argument stays at its default (checked with vLLM 0.33.0)."""
    import yaml

    extension = path.split(".")[-1]
    if extension not in ("yaml", "yml"):
        raise Refusal(f"ValueError: Config file must be of a yaml/yml type. {extension} supplied")
    try:
        with open(path) as handle:  # noqa: PTH123 - vLLM's open(): the same errors, worded alike
            data = yaml.safe_load(handle)
    except OSError as exc:
        raise Refusal(f"{type(exc).__name__}: {exc}") from exc
    except (ValueError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise Refusal(f"{type(exc).__name__}: {' '.join(str(exc).split())}") from exc
    if not isinstance(data, dict):
        raise Refusal(f"AttributeError: '{type(data).__name__}' object has no attribute 'items'")
    words: list[Word] = []
    for key, value in data.items():
        origin = (YamlKey(path, str(key), value),)
        option = f"--{key}"
        if isinstance(value, bool):
            if value:
                words.append(Word(option, origin))
        elif isinstance(value, list):
            if value:
                words += [Word(option, origin), *(Word(str(item), origin) for item in value)]
        elif isinstance(value, dict):
            words += [Word(option, origin), Word(json.dumps(value), origin)]
        else:
            words += [Word(option, origin), Word(str(value), origin)]
    return words


def spell_options(words: list[Word]) -> list[Word]:
    """Underscores to dashes in option names (up to the first `.`), `-O3` / `-O 3` for the optimization
    level."""
    out: list[Word] = []
    for i, word in enumerate(words):
        text = word.text
        if text.startswith("--help="):
            out.append(Word("--help", word.origins))
        elif text.startswith("--"):
            key, eq, value = text.partition("=")
            out.append(
                Word(_NAME_PART.sub(lambda m: m.group(0).replace("_", "-"), key, count=1) + eq + value, word.origins)
            )
        elif text.startswith("-O") and text != "-O":
            level = text[3:] if text[2] == "=" else text[2:]
            out += [Word("--optimization-level", word.origins), Word(level, word.origins)]
        elif text == "-O" and i + 1 < len(words) and words[i + 1].text in {"0", "1", "2", "3"}:
            out.append(Word("--optimization-level", word.origins))
        else:
            out.append(word)
    return out


def gather_dotted(words: list[Word], problems: list[str]) -> list[Word]:
    """`--json-arg.key value` (and `-cc.key`, `--x.list+ a,b`) words become one `--json-arg '{...}'`
    at the end, each value JSON if it reads as JSON, else a human-readable int, else the text."""
    skip: set[int] = set()
    groups: dict[str, dict[str, Any]] = {}
    origins: dict[str, tuple[Origin, ...]] = {}
    kept: list[Word] = []
    for i, word in enumerate(words):
        if i in skip:
            continue
        text = word.text
        if text.startswith("--") and "." not in text or not (text.startswith("-") and "." in text):
            kept.append(word)
            continue
        used = word.origins
        if "=" in text:
            text, value = text.split("=", 1)
            if "." not in text:  # the `.` was in the value
                kept.append(word)
                continue
        elif i + 1 < len(words):
            value = words[i + 1].text
            used += words[i + 1].origins
            skip.add(i + 1)
        else:
            problems.append(f"{text} without a value: vLLM exits with `IndexError: list index out of range`")
            continue
        if text.endswith("+"):
            text = text[:-1]
            value = json.dumps(value.split(","))
        key, *keys = text.split(".")
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            try:
                parsed = human_readable_int(value)
            except ValueError:
                parsed = value
        for name in reversed(keys):
            parsed = {name: parsed}
        _merge(groups.setdefault(key, {}), parsed)
        origins[key] = origins.get(key, ()) + used
    return kept + [w for key, value in groups.items() for w in _json_words(key, value, origins[key])]


def _json_words(key: str, value: dict[str, Any], origins: tuple[Origin, ...]) -> list[Word]:
    return [Word(key, origins), Word(json.dumps(value), origins)]


def _merge(original: dict[str, Any], update: dict[str, Any]) -> None:
    """recursive_dict_update: nested mappings merge, lists extend, anything else is replaced."""
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(original.get(k), dict):
            _merge(original[k], v)
        elif isinstance(v, list) and isinstance(original.get(k), list):
            original[k] += v
        else:
            original[k] = v


# --- argparse (Python 3.11) -------------------------------------------------------------------------

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass(frozen=True)
class Option:
    """A word argparse reads as an option: its argument (None: no such option), as written, `=value`."""

    arg: ArgSpec | None
    option: str
    explicit: str | None


def classify(text: str, spec: ParserSpec) -> Option | None:
    """argparse's _parse_optional: the option a word names, or None for a positional / value word.
    An option that is the prefix of several is refused as ambiguous, as argparse does."""
    if not text or text[0] != "-":
        return None
    if text in spec.by_option:
        return Option(spec.by_option[text], text, None)
    if len(text) == 1:
        return None
    if "=" in text:
        option, explicit = text.split("=", 1)
        if option in spec.by_option:
            return Option(spec.by_option[option], option, explicit)
    matches = _option_tuples(text, spec)
    if len(matches) > 1:
        found = ", ".join(m.option for m in matches)
        raise Refusal(f"ambiguous option: {text} could match {found}")
    if len(matches) == 1:
        return matches[0]
    if _NEGATIVE_NUMBER.match(text) or " " in text:
        return None
    return Option(None, text, None)


def _option_tuples(text: str, spec: ParserSpec) -> list[Option]:
    """argparse's _get_option_tuples: `--x` is a prefix of long options (split at `=`); `-x...` a prefix
    of any option, or a one-letter option with its value attached (`-p8000`)."""
    if text.startswith("--"):
        prefix, eq, explicit = text.partition("=")
        return [Option(spec.by_option.get(o), o, explicit if eq else None) for o in spec.abbreviations(prefix)]
    found = []
    for option, arg in spec.by_option.items():
        if option == text[:2]:
            found.append(Option(arg, option, text[2:]))
        elif option.startswith(text):
            found.append(Option(arg, option, None))
    return found


def parse_words(words: list[Word], spec: ParserSpec, parsed: Parsed) -> None:
    """argparse's consume loop over the rewritten words: options with their values, the positional
    model, leftovers. Unlike argparse, which exits at the first error, it reads on and keeps them all."""
    kinds: list[Option | None] = []
    only_positionals = False
    for word in words:
        if only_positionals:
            kinds.append(None)
            continue
        if word.text == "--":
            only_positionals = True
            kinds.append(Option(None, "--", None))
            continue
        try:
            kinds.append(classify(word.text, spec))
        except Refusal as refusal:  # ambiguous: refused as such, not again as unknown
            parsed.problems.append(str(refusal))
            kinds.append(Option(None, "--", None))
    model = spec.by_dest.get("model_tag")
    i = 0
    while i < len(words):
        word, kind = words[i], kinds[i]
        i += 1
        if kind is None:
            if "model_tag" not in parsed.values and model is not None:
                _store(parsed, "model_tag", word.text, [word])
            else:
                parsed.extras.append(word)
            continue
        if kind.option == "--":
            continue
        if kind.arg is None:
            parsed.unknown.append(word)
            # argparse leaves the words after it over too (`unrecognized arguments: --foo 1`): they go
            # with the option, unless the model is still to come (then the first is the model).
            while i < len(words) and kinds[i] is None and "model_tag" in parsed.values:
                i += 1
            continue
        i = _consume(kind, words, kinds, i, spec, parsed)


def _consume(
    kind: Option, words: list[Word], kinds: list[Option | None], i: int, spec: ParserSpec, parsed: Parsed
) -> int:
    """One option and its values (argparse's consume_optional)."""
    arg = kind.arg
    assert arg is not None
    used = [words[i - 1]]
    if arg.kind in ("bool", "flag"):
        if kind.explicit is not None:
            parsed.problems.append(f"argument {arg.name}: ignored explicit argument {kind.explicit!r}")
            return i
        _store(parsed, arg.dest, _switch(arg, kind.option), used)
        return i
    raw: list[str] = []
    if kind.explicit is not None:
        raw = [kind.explicit]
    else:
        while i < len(words) and kinds[i] is None and (arg.kind == "list" or not raw):
            raw.append(words[i].text)
            used.append(words[i])
            i += 1
    if not raw:
        if arg.nargs == "?":
            _store(parsed, arg.dest, arg.const, used)
            return i
        needed = "expected at least one argument" if arg.kind == "list" else "expected one argument"
        parsed.problems.append(f"argument {arg.name}: {needed}")
        return i
    try:
        values = [convert(arg, text) for text in raw]
        for each in values:
            check_choice(arg, each)
        if arg.action == "LoRAParserAction":
            values = lora_modules(values, arg)
    except Refusal as refusal:
        parsed.problems.append(str(refusal))
        _store(parsed, arg.dest, raw if arg.kind == "list" else raw[0], used)  # kept as written
        return i
    value: Any = values if arg.kind == "list" or arg.action == "LoRAParserAction" else values[0]
    if arg.action == "_AppendAction":
        value = [*(parsed.values.get(arg.dest) or []), value]
    _store(parsed, arg.dest, value, used)
    return i


def _switch(arg: ArgSpec, option: str) -> Any:
    """A flag's value: store_true's const; a `--x/--no-x` pair is True unless a negative spelling was used
    (`--no-x`; 0.33's EnableDisableAction: also `--disable-x` for `--enable-x`)."""
    if arg.kind == "flag":
        return arg.const if arg.const is not None else True
    if arg.negative:
        return option not in arg.negative
    return not option.startswith("--no-")


def _store(parsed: Parsed, dest: str, value: Any, used: list[Word]) -> None:
    """A later option of the same destination replaces the value; every word that set it is kept (the
    command rendered back reads the same)."""
    parsed.values[dest] = value
    parsed.words.setdefault(dest, []).extend(used)


# --- the type functions -----------------------------------------------------------------------------


def convert(arg: ArgSpec, text: str) -> Any:
    """argparse's _get_value: the argument's type function, its errors as argparse words them (an
    ArgumentTypeError's own message; a ValueError or TypeError `invalid <type name> value: '...'`)."""
    kind = arg.type
    if kind is None:
        return text
    try:
        return _run(kind, arg.inner, text, arg)
    except _TypeError as exc:
        raise Refusal(f"argument {arg.name}: {exc}") from exc
    except (ValueError, TypeError) as exc:
        raise Refusal(f"argument {arg.name}: invalid {kind} value: {text!r}") from exc


class _TypeError(Exception):
    """argparse.ArgumentTypeError: its message is the refusal."""


def _run(kind: str, inner: tuple[str, ...], text: str, arg: ArgSpec) -> Any:
    """One type function of vLLM (engine/arg_utils.py, utils/argparse_utils.py) on a value."""
    if kind == "_optional_type":  # optional_type: "" and "None" are None, else parse_type(inner)
        if text in ("", "None"):
            return None
        return _parse_type(inner, text, arg)
    if kind == "_parse_type":
        return _parse_type(inner, text, arg)
    if kind == "union_dict_and_str":  # a {...} value is JSON (optional_type(json.loads)), else text
        if not re.match(r"(?s)^\s*{.*}\s*$", text):
            return text
        return _run("_optional_type", ("loads",), text, arg)
    if kind == "parse_dataclass":
        return _parse_dataclass(text, arg)
    if kind in ("human_readable_int", "human_readable_int_or_auto"):
        function = human_readable_int if kind == "human_readable_int" else human_readable_int_or_auto
        try:
            return function(text)
        except ValueError as exc:
            if str(exc).startswith("Decimals"):
                raise _TypeError(str(exc)) from exc
            raise
    if kind == "int":
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "loads":
        return json.loads(text)
    if kind == "parse_reasoning_parser":
        return "" if text.lower() == "none" else text
    return text  # str, and vLLM's lambdas (lower-casing, splitting at commas), which take any text


# How parse_type names the function it wraps in its refusal (`Value x cannot be converted to <class
# 'int'>.`): a class by its repr, a function by its name and an address no one can predict.
_REPRS = {"int": "<class 'int'>", "float": "<class 'float'>", "str": "<class 'str'>"}


def _parse_type(inner: tuple[str, ...], text: str, arg: ArgSpec) -> Any:
    """parse_type: a ValueError of the wrapped function becomes `Value ... cannot be converted to ...`;
    the wrapped function's own ArgumentTypeError passes as it is."""
    if not inner:
        return text
    try:
        return _run(inner[0], inner[1:], text, arg)
    except ValueError as exc:
        shown = _REPRS.get(inner[0], f"<function {inner[0]} at 0x...>")
        raise _TypeError(f"Value {text} cannot be converted to {shown}.") from exc


def _parse_dataclass(text: str, arg: ArgSpec) -> Any:
    """parse_dataclass: human-readable numbers expanded, then pydantic's validate_json of the config
    class. logdoctor has not the class: it checks the JSON as pydantic reads it (the same parser, the
    same words) and leaves the fields to the rules."""
    import pydantic_core

    def expand(match: re.Match[str]) -> str:
        try:
            return str(human_readable_int(match.group()))
        except ValueError as exc:
            raise _TypeError(str(exc)) from exc

    parts = re.split(r'("(?:[^"\\]|\\.)*")', text)
    for n in range(0, len(parts), 2):  # outside JSON strings only
        parts[n] = re.sub(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b", expand, parts[n])
    try:
        return pydantic_core.from_json("".join(parts))
    except ValueError as exc:
        name = arg.dataclass or "the config"
        raise _TypeError(f"1 validation error for {name}: Invalid JSON: {exc}") from exc


def check_choice(arg: ArgSpec, value: Any) -> None:
    """argparse's _check_value."""
    if arg.choices is not None and value not in arg.choices:
        choices = ", ".join(repr(c) for c in arg.choices)
        raise Refusal(f"argument {arg.name}: invalid choice: {value!r} (choose from {choices})")


def lora_modules(values: list[Any], arg: ArgSpec) -> list[Any]:
    """vLLM's LoRAParserAction: `name=path`, or JSON of LoRAModulePath's fields; its refusals are
    parser.error()'s, without the argument's name."""
    fields = arg.fields or {"name": True, "path": True, "base_model_name": False}
    modules: list[Any] = []
    for item in values:
        if item in (None, ""):
            continue
        if "=" in item and "," not in item:
            name, path = item.split("=", 1)
            modules.append({"name": name, "path": path})
            continue
        try:
            data = json.loads(item)
        except ValueError as exc:
            raise Refusal(f"Invalid JSON format for --lora-modules: {item}") from exc
        wrong = _lora_fields_error(data, fields)
        if wrong:
            raise Refusal(f"Invalid fields for --lora-modules: {item} - {wrong}")
        modules.append(data)
    return modules


def _lora_fields_error(data: Any, fields: dict[str, bool]) -> str | None:
    """The TypeError of `LoRAModulePath(**data)`, as Python 3.11 words it."""
    if not isinstance(data, dict):
        return f"LoRAModulePath() argument after ** must be a mapping, not {type(data).__name__}"
    for key in data:
        if key not in fields:
            return f"LoRAModulePath.__init__() got an unexpected keyword argument {key!r}"
    missing = [f"'{name}'" for name, required in fields.items() if required and name not in data]
    if not missing:
        return None
    listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
    plural = "argument" if len(missing) == 1 else "arguments"
    return f"LoRAModulePath.__init__() missing {len(missing)} required positional {plural}: {listed}"


def read(args: list[str], spec: ParserSpec) -> Parsed:
    """The command's words (after `vllm serve`) as vLLM's parser reads them."""
    parsed = Parsed()
    words = [Word(text, (i,)) for i, text in enumerate(args)]
    words = move_model_option(words, parsed.problems)
    if served_name_without_model(words):
        parsed.problems.append(f"--served-model-name without a model: vLLM exits with `ValueError: {NO_MODEL_FIRST}`")
    if "--config" in [w.text for w in words]:
        try:
            words = pull_config_file(words, parsed.config_files)
        except Refusal as refusal:
            path = parsed.config_files[-1] if parsed.config_files else ""
            parsed.problems.append(f"--config {path}".rstrip() + f": vLLM exits with `{refusal}`")
            words = _without_config(words)
    words = gather_dotted(spell_options(words), parsed.problems)
    parse_words(words, spec, parsed)
    return parsed


def _without_config(words: list[Word]) -> list[Word]:
    """The words without the `--config FILE` vLLM could not read (the rest is still checked)."""
    at = next(i for i, w in enumerate(words) if w.text == "--config")
    return words[:at] + words[at + 2 :]
