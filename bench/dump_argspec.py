#!/usr/bin/env python3
"""Dump `vllm serve`'s real argument parser to JSON, as data for `logdoctor check` and the defaults table.

Run it with the Python of a virtual environment that has vLLM installed (never logdoctor's own):

    /path/to/vllm-venv/bin/python bench/dump_argspec.py > logdoctor/launch/argspecs/0.33.0.json

Each option: its spellings, argparse `dest`, how it takes a value (flag / bool pair / value / list), the
choices, and vLLM's default rendered as JSON (non-JSON defaults as their repr, marked `"repr": true`).
A type that wraps another (vLLM's `optional_type(int)` is a function named `_optional_type`,
`parse_type(json.loads)` one named `_parse_type`) also records what it wraps, outermost first, as
`"inner"` (`["int"]`, `["_parse_type", "loads"]`), and `parse_dataclass` the config class it validates
(`"dataclass": "CompilationConfig"`): the errors vLLM's parser exits with name them. An option whose
value may be left out (`nargs="?"`: the bare option means its `const`) says `"nargs": "?"`; `--lora-modules`
(vLLM's LoRAParserAction builds a LoRAModulePath of each value) lists that class's fields as
`"fields": {"name": true, ...}` (true: required). Option strings the parser takes but leaves out of
help and of its error messages (0.33's `--no-enable-x`) are `"hidden"`; a `--x/--no-x` pair lists the
spellings that turn it off as `"negative"`.

An older release can be dumped without installing it, with the Python of a newer vLLM's environment and
the older release's unpacked wheel first on the path (its parser code is pure Python):

    PYTHONPATH=/tmp/vllm-0.32.0 /work/vllm033/bin/python bench/dump_argspec.py > .../0.32.0.json
"""

from __future__ import annotations

import argparse
import enum
import json
import sys


def jsonable(value: object) -> tuple[object, bool]:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
        return value, False
    except TypeError:
        return repr(value), True


def wrapped(function: object) -> object | None:
    """The function a type wrapper closes over (vLLM's `optional_type` and `parse_type` keep it in the
    closure as `return_type`), or None for a plain type."""
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    if code is None:
        return None
    for name, cell in zip(code.co_freevars, cells, strict=False):
        if name == "return_type" and callable(cell.cell_contents):
            return cell.cell_contents
    return None


def type_details(function: object) -> dict[str, object]:
    """`inner` (the wrapped types' names, outermost first) and `dataclass` (what parse_dataclass validates)."""
    details: dict[str, object] = {}
    inner = []
    current = function
    while True:
        defaults = getattr(current, "__defaults__", None) or ()
        if getattr(current, "__name__", "") == "parse_dataclass" and defaults:
            details["dataclass"] = getattr(defaults[-1], "__name__", repr(defaults[-1]))
        current = wrapped(current)
        if current is None:
            break
        inner.append(getattr(current, "__name__", repr(current)))
    if inner:
        details["inner"] = inner
    return details


def dataclass_fields(action: argparse.Action) -> dict[str, bool] | None:
    """LoRAParserAction's LoRAModulePath fields (True: required), from the module that defines the action."""
    import dataclasses

    cls = getattr(sys.modules.get(type(action).__module__), "LoRAModulePath", None)
    if cls is None or not dataclasses.is_dataclass(cls):
        return None
    missing = dataclasses.MISSING
    return {f.name: f.default is missing and f.default_factory is missing for f in dataclasses.fields(cls)}


def use_cpu_platform_if_requested() -> None:
    """Honour VLLM_TARGET_DEVICE=cpu on vLLM releases that ignore it when picking the platform.

    Before 0.33 a stock (CUDA) wheel picks the CPU platform only if its version says `+cpu`, so on a
    machine without a GPU `import vllm` settles on UnspecifiedPlatform and building the parser fails
    with "Failed to infer device type". Swap in the CPU platform then, also in the vllm modules that
    already bound it; where vLLM resolves a real platform itself (0.33) nothing changes.
    """
    import os

    if os.environ.get("VLLM_TARGET_DEVICE") != "cpu":
        return
    import vllm.platforms as platforms
    from vllm.platforms.interface import UnspecifiedPlatform

    old = platforms.current_platform
    if not isinstance(old, UnspecifiedPlatform):
        return
    from vllm.platforms.cpu import CpuPlatform

    platforms.current_platform = platforms._current_platform = new = CpuPlatform()
    for name, module in list(sys.modules.items()):
        if name.startswith("vllm.") and getattr(module, "current_platform", None) is old:
            module.current_platform = new


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # vLLM logs to stdout (older releases already while importing): keep the JSON clean
    import vllm

    use_cpu_platform_if_requested()
    try:
        from vllm.entrypoints.cli.serve import make_arg_parser
    except ImportError:  # older releases
        from vllm.entrypoints.openai.cli_args import make_arg_parser
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:  # older releases
        from vllm.utils import FlexibleArgumentParser

    parser = make_arg_parser(FlexibleArgumentParser())
    registered: dict[int, list[str]] = {}
    for option_string, registered_action in parser._option_string_actions.items():
        registered.setdefault(id(registered_action), []).append(option_string)
    options = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = type(action).__name__
        if "BooleanOptional" in name or "EnableDisable" in name:
            kind = "bool"  # --x / --no-x (0.33: also --disable-x for --enable-x)
        elif action.nargs == 0 or name in ("_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction"):
            kind = "flag"
        elif action.nargs in ("*", "+") or isinstance(action.nargs, int) and action.nargs > 1:
            kind = "list"
        else:
            kind = "value"
        default, is_repr = jsonable(action.default)
        entry = {
            "dest": action.dest,
            "options": list(action.option_strings),
            "kind": kind,
            "action": name,
            "type": getattr(action.type, "__name__", None) if action.type is not None else None,
            "choices": [jsonable(c)[0] for c in action.choices] if action.choices is not None else None,
            "default": default,
        }
        if action.type is not None:
            entry.update(type_details(action.type))
        hidden = [o for o in registered.get(id(action), []) if o not in action.option_strings]
        if hidden:
            entry["hidden"] = hidden
        if kind == "bool":
            negative = getattr(action, "negative_option_strings", None)
            if negative is None:  # argparse's BooleanOptionalAction: `--no-` spellings are False
                negative = [o for o in registered.get(id(action), []) if o.startswith("--no-")]
            entry["negative"] = sorted(negative)
        if action.nargs == "?":
            entry["nargs"] = "?"
            entry["const"] = jsonable(action.const)[0]
        if name == "LoRAParserAction":
            entry["fields"] = dataclass_fields(action)
        if is_repr:
            entry["default_is_repr"] = True
        if kind == "flag":
            const, _ = jsonable(action.const)
            entry["const"] = const
        options.append(entry)
    json.dump({"vllm_version": vllm.__version__, "program": "vllm serve", "options": options}, out, indent=1)
    out.write("\n")


if __name__ == "__main__":
    main()
