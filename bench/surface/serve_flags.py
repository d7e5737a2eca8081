"""The option strings of `vllm serve` in one release, read statically from its sources.

vLLM builds the parser in a few files (engine/arg_utils.py, entrypoints/{openai,common}/cli_args.py,
entrypoints/cli/serve.py, scripts.py in 0.5-0.8), in three eras:

* up to 0.8: `add_argument("--x", "-y", action=..., ...)` with literal option strings;
* 0.8-0.32: `add_argument("--x", **model_kwargs["x"])` where `model_kwargs = get_kwargs(ModelConfig)`
  turns each dataclass field into argparse kwargs, and a `bool` field gets `BooleanOptionalAction`
  (so `--x` and `--no-x`); the frontend's flags are every field of `FrontendArgs`, added in a loop as
  `f"--{key.replace('_', '-')}"`; since the `bool | str | None` special case (`--hf-token`), such a
  field takes a value instead;
* 0.33: the parser registers `EnableDisableAction` for `BooleanOptionalAction`: `--enable-x` pairs with
  `--disable-x` (and `--disable-x` with `--enable-x`) instead of `--no-enable-x`, which is still
  accepted but hidden; other booleans keep `--no-x`.

The result is the set of *visible* option strings, as `bench/dump_argspec.py` dumps them from the real
parser (logdoctor/launch/argspecs/*.json); the hidden `--no-enable-x` aliases of 0.33 are left out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

PARSER_FILES = (
    "vllm/engine/arg_utils.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/scripts.py",
)
# The module that defines `make_arg_parser` moved (openai/ -> launchers/ -> common/): found from the
# import in the serve command's own module.
ENTRY_FILES = ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py", "vllm/entrypoints/openai/api_server.py")
ARGPARSE_UTILS = "vllm/utils/argparse_utils.py"
# In these files other subcommands (chat, complete, bench) are built too: only `serve_parser` counts.
SUBCOMMAND_FILES = ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py")


@dataclass
class ClassInfo:
    """A class's dataclass-style fields: name -> annotation, in declaration order, plus its bases."""

    name: str
    file: str
    bases: list[str]
    fields: dict[str, ast.expr] = field(default_factory=dict)
    aliases: dict[str, ast.expr] = field(default_factory=dict)  # the module's type aliases


def collect_classes(tree: ast.Module, file: str) -> list[ClassInfo]:
    """Every top-level class with annotated fields (the config and args dataclasses among them)."""
    aliases: dict[str, ast.expr] = {}
    for stmt in tree.body:  # `Alias = bool | None`, `Alias: TypeAlias = ...`: type-like values only
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        if isinstance(value, ast.Subscript | ast.Name | ast.Attribute) or (
            isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr)
        ):
            aliases[name] = value
    found = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        info = ClassInfo(stmt.name, file, [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                                           for b in stmt.bases], aliases=aliases)
        for item in stmt.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                text = ast.unparse(item.annotation)
                if not text.startswith(("ClassVar", "typing.ClassVar", "InitVar", "dataclasses.InitVar")):
                    info.fields[item.target.id] = item.annotation
        found.append(info)
    return found


class ClassTable:
    """Classes of one release by name; when a name is defined twice, the config package wins."""

    def __init__(self, classes: list[ClassInfo]) -> None:
        self.by_name: dict[str, ClassInfo] = {}
        for info in sorted(classes, key=lambda c: (_preference(c.file), c.file)):
            self.by_name.setdefault(info.name, info)

    def fields(self, name: str) -> dict[str, tuple[ast.expr, ClassInfo]]:
        """Fields in dataclass order: base classes' first, a subclass's override in place."""
        info = self.by_name.get(name)
        if info is None:
            return {}
        merged: dict[str, tuple[ast.expr, ClassInfo]] = {}
        for base in reversed(info.bases):
            if base and base != name:
                merged.update(self.fields(base))
        for key, annotation in info.fields.items():
            merged[key] = (annotation, info)
        return merged

    def subclasses_of(self, name: str) -> set[str]:
        return {n for n in self.by_name if name in self.mro(n)}

    def mro(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        info = self.by_name.get(name)
        if info is None or name in seen:
            return {name}
        out = {name}
        for base in info.bases:
            out |= self.mro(base, seen | {name})
        return out


def _preference(file: str) -> int:
    if file.startswith(("vllm/config/", "vllm/config.py")):
        return 0
    if file.startswith(("vllm/engine/", "vllm/entrypoints/")):
        return 1
    return 2


def _union_members(node: ast.expr, aliases: dict[str, ast.expr], depth: int = 0) -> list[str]:
    """The top-level members of an annotation: `bool | None` -> ['bool', 'None']; Optional, Union and
    Annotated unwrapped; a module-level alias followed once or twice."""
    if depth > 3:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _union_members(ast.parse(node.value, mode="eval").body, aliases, depth + 1)
        except SyntaxError:
            return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left, aliases, depth) + _union_members(node.right, aliases, depth)
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).rsplit(".", 1)[-1]
        inner = node.slice
        args = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if head in ("Optional",):
            return _union_members(args[0], aliases, depth) + ["None"]
        if head == "Union":
            return [m for a in args for m in _union_members(a, aliases, depth)]
        if head == "Annotated":
            return _union_members(args[0], aliases, depth)
        return [head]
    if isinstance(node, ast.Name):
        if node.id in aliases and node.id not in ("bool", "str", "int", "float"):
            return _union_members(aliases[node.id], aliases, depth + 1)
        return [node.id]
    if isinstance(node, ast.Constant) and node.value is None:
        return ["None"]
    return [ast.unparse(node)]


def is_bool_field(annotation: ast.expr, info: ClassInfo, optional_value_case: bool) -> bool:
    """Does `get_kwargs` give this field `BooleanOptionalAction`? (bool among the union members, unless
    the release treats `bool | str | None` as an optional-valued flag)."""
    members = set(_union_members(annotation, info.aliases))
    if "bool" not in members:
        return False
    return not (optional_value_case and members == {"bool", "str", "None"})


@dataclass
class _KwargsVar:
    """A local bound to `get_kwargs(SomeConfig)`: which class, and what the code changed in it."""

    classes: list[str]
    actions: dict[str, ast.expr | None] = field(default_factory=dict)  # field -> new "action" (None: deleted)
    removed: set[str] = field(default_factory=set)


def parser_modules(load: Callable[[str], ast.Module | None]) -> dict[str, ast.Module]:
    """The modules that build the serve parser in this release: PARSER_FILES, the module the serve command
    imports `make_arg_parser` from, and argparse_utils (which says whether EnableDisableAction exists)."""
    modules: dict[str, ast.Module] = {}
    for name in (*PARSER_FILES, *ENTRY_FILES, ARGPARSE_UTILS):
        tree = load(name)
        if tree is not None:
            modules[name] = tree
    for entry in ENTRY_FILES:
        tree = modules.get(entry)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.ImportFrom) and node.module and any(
                a.name == "make_arg_parser" for a in node.names
            ):
                path = node.module.replace(".", "/") + ".py"
                found = modules.get(path) or load(path)
                if found is not None:
                    modules[path] = found
    return modules


def parser_files(modules: dict[str, ast.Module]) -> list[str]:
    """Which of the loaded modules add serve options (the entry modules only through `serve_parser`)."""
    files = [f for f in PARSER_FILES if f in modules]
    files += sorted(f for f in modules if f not in files and f not in ENTRY_FILES and f != ARGPARSE_UTILS)
    return files


class ServeFlags:
    """Evaluates the parser-building functions of one release just enough to list its options."""

    def __init__(self, modules: dict[str, ast.Module], table: ClassTable, enable_disable: bool,
                 optional_value_case: bool) -> None:
        self.modules = modules
        self.table = table
        self.enable_disable = enable_disable
        self.optional_value_case = optional_value_case
        self.options: set[str] = set()
        self.files = parser_files(modules)
        self.invoked = self._invoked_classes()
        self.customizers = self._customizers()

    def run(self) -> set[str]:
        for file in self.files:
            for owner, func in _functions(self.modules[file]):
                self._function(file, owner, func)
        return self.options

    # -- what the code calls -----------------------------------------------------------------------

    def _invoked_classes(self) -> set[str]:
        """Classes whose `add_cli_args` the parser files call (`FrontendArgs.add_cli_args(parser)`)."""
        found = set()
        for file in self.files:
            for node in ast.walk(self.modules[file]):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "add_cli_args" and isinstance(node.func.value, ast.Name)):
                    found.add(node.func.value.id)
        return found

    def _customizers(self) -> dict[str, list[ast.FunctionDef]]:
        """`_customize_cli_kwargs` methods by class: they change the generated kwargs before use."""
        found: dict[str, list[ast.FunctionDef]] = {}
        for file in self.files:
            for owner, func in _functions(self.modules[file]):
                if owner and func.name == "_customize_cli_kwargs" and isinstance(func, ast.FunctionDef):
                    found.setdefault(owner, []).append(func)
        return found

    def _resolve(self, node: ast.expr, owner: str | None) -> list[str]:
        """The classes a `get_kwargs(...)` argument names; `cls` is every invoked subclass of the owner."""
        if isinstance(node, ast.Name) and node.id == "cls" and owner:
            subs = sorted(self.table.subclasses_of(owner) & self.invoked) or [owner]
            return subs
        if isinstance(node, ast.Name):
            return [node.id]
        if isinstance(node, ast.Attribute):
            return [node.attr]
        return []

    # -- one function ------------------------------------------------------------------------------

    def _function(self, file: str, owner: str | None, func: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        kwargs_vars: dict[str, _KwargsVar] = {}
        for node in _in_order(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                bound = self._kwargs_source(node.value, owner, kwargs_vars)
                if bound is not None:
                    kwargs_vars[node.targets[0].id] = bound
                    continue
            self._mutation(node, kwargs_vars)
            if isinstance(node, ast.For):
                self._loop(node, kwargs_vars)
            elif isinstance(node, ast.Call) and _is_add_argument(node):
                if file in SUBCOMMAND_FILES and not _receiver_is(node, "serve_parser"):
                    continue
                self._add_argument(node, kwargs_vars)

    def _kwargs_source(self, value: ast.expr, owner: str | None,
                       kwargs_vars: dict[str, _KwargsVar]) -> _KwargsVar | None:
        """`get_kwargs(C)`, `cls._customize_cli_kwargs(x)` or a copy of another kwargs variable."""
        if isinstance(value, ast.Call):
            name = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
            if name == "get_kwargs" and value.args:
                var = _KwargsVar(self._resolve(value.args[0], owner))
                for cls in var.classes:  # the customizers of the class (and of its bases) apply later
                    for base in self.table.mro(cls):
                        for custom in self.customizers.get(base, []):
                            params = [a.arg for a in custom.args.args]
                            if len(params) >= 2:  # (cls, kwargs): the customizer edits its 2nd parameter
                                for sub in _in_order(custom):
                                    self._mutation(sub, {params[1]: var})
                return var
            if name == "_customize_cli_kwargs" and value.args and isinstance(value.args[0], ast.Name):
                return kwargs_vars.get(value.args[0].id)
        if isinstance(value, ast.Name) and value.id in kwargs_vars:
            return kwargs_vars[value.id]
        return None

    def _mutation(self, node: ast.AST, kwargs_vars: dict[str, _KwargsVar]) -> None:
        """`k["f"]["action"] = X`, `del k["f"]["action"]`, `del k["f"]`, `k.pop("f")`."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            hit = _field_key(node.targets[0], kwargs_vars)
            if hit is not None and hit[2] == "action":
                hit[0].actions[hit[1]] = node.value
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                hit = _field_key(target, kwargs_vars)
                if hit is not None and hit[2] == "action":
                    hit[0].actions[hit[1]] = None
                elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                      and target.value.id in kwargs_vars and isinstance(target.slice, ast.Constant)):
                    kwargs_vars[target.value.id].removed.add(str(target.slice.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop"
              and isinstance(node.func.value, ast.Name) and node.func.value.id in kwargs_vars
              and node.args and isinstance(node.args[0], ast.Constant)):
            kwargs_vars[node.func.value.id].removed.add(str(node.args[0].value))

    def _loop(self, loop: ast.For, kwargs_vars: dict[str, _KwargsVar]) -> None:
        """`for key, value in k.items(): group.add_argument(f"--{key.replace('_', '-')}", **value)`."""
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                and isinstance(it.func.value, ast.Name) and it.func.value.id in kwargs_vars):
            return
        var = kwargs_vars[it.func.value.id]
        if not any(isinstance(n, ast.Call) and _is_add_argument(n) for n in ast.walk(loop)):
            return
        for cls in var.classes:
            for name, (annotation, info) in self.table.fields(cls).items():
                if name in var.removed:
                    continue
                self._emit([f"--{name.replace('_', '-')}"], self._is_bool(var, name, annotation, info))

    def _add_argument(self, call: ast.Call, kwargs_vars: dict[str, _KwargsVar]) -> None:
        options = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        options = [o for o in options if o.startswith("-")]
        if not options:
            return
        explicit: ast.expr | None = None
        spread: list[ast.expr] = []
        for keyword in call.keywords:
            if keyword.arg == "action":
                explicit = keyword.value
            elif keyword.arg is None:  # **model_kwargs["x"], or **{**model_kwargs["x"], "default": None}
                if isinstance(keyword.value, ast.Dict):
                    for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                        if key is None:
                            spread.append(value)
                        elif isinstance(key, ast.Constant) and key.value == "action":
                            explicit = value
                else:
                    spread.append(keyword.value)
        if explicit is not None:
            self._emit(options, _is_boolean_action(explicit))
            return
        boolean = False
        for node in spread:
            hit = _field_ref(node, kwargs_vars)
            if hit is None:
                continue
            var, name = hit
            for cls in var.classes:
                entry = self.table.fields(cls).get(name)
                if entry is not None:
                    boolean = self._is_bool(var, name, *entry)
                    break
        self._emit(options, boolean)

    def _is_bool(self, var: _KwargsVar, name: str, annotation: ast.expr, info: ClassInfo) -> bool:
        if name in var.actions:
            action = var.actions[name]
            return action is not None and _is_boolean_action(action)
        return is_bool_field(annotation, info, self.optional_value_case)

    def _emit(self, options: list[str], boolean: bool) -> None:
        self.options.update(options)
        if boolean:
            self.options.update(negatives(options, self.enable_disable))


def negatives(options: list[str], enable_disable: bool) -> list[str]:
    """The extra option strings `BooleanOptionalAction` (or 0.33's `EnableDisableAction`) shows."""
    longs = [o for o in options if o.startswith("--")]
    if enable_disable:
        swap = {"--enable-": "--disable-", "--disable-": "--enable-"}
        inverses = [inv + o.removeprefix(pre) for o in longs for pre, inv in swap.items() if o.startswith(pre)]
        if inverses:
            return inverses
    return ["--no-" + o[2:] for o in longs]


def _is_boolean_action(node: ast.expr) -> bool:
    text = ast.unparse(node)
    return text.endswith("BooleanOptionalAction")


def _is_add_argument(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"


def _receiver_is(call: ast.Call, name: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name


def _field_ref(node: ast.expr, kwargs_vars: dict[str, _KwargsVar]) -> tuple[_KwargsVar, str] | None:
    """`model_kwargs["x"]` -> (the kwargs variable, "x")."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in kwargs_vars
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return kwargs_vars[node.value.id], node.slice.value
    return None


def _field_key(node: ast.expr, kwargs_vars: dict[str, _KwargsVar]) -> tuple[_KwargsVar, str, str] | None:
    """`k["field"]["key"]` -> (variable, field, key)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        inner = _field_ref(node.value, kwargs_vars)
        if inner is not None:
            return inner[0], inner[1], str(node.slice.value)
    return None


def _functions(tree: ast.Module) -> list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((None, stmt))
        elif isinstance(stmt, ast.ClassDef):
            out += [(stmt.name, s) for s in stmt.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def _in_order(func: ast.AST) -> list[ast.AST]:
    """The nodes of a function in source order (assignments before the calls that use them)."""
    nodes = [n for n in ast.walk(func) if hasattr(n, "lineno")]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


def serve_flags(load: Callable[[str], ast.Module | None], classes: list[ClassInfo]) -> set[str]:
    """The visible option strings of `vllm serve` for one release (see the module docstring).

    `load(path)` returns the parsed module at `vllm/...` of that release (None if absent); `classes` are
    the release's classes (collect_classes over every module), for the fields `get_kwargs` turns into
    options."""
    modules = parser_modules(load)
    utils = modules.get(ARGPARSE_UTILS)
    enable_disable = utils is not None and any(
        isinstance(n, ast.ClassDef) and n.name == "EnableDisableAction" for n in ast.walk(utils)
    )
    arg_utils = modules.get("vllm/engine/arg_utils.py")
    optional_value_case = arg_utils is not None and "{bool, str, type(None)}" in ast.unparse(arg_utils)
    return ServeFlags(modules, ClassTable(classes), enable_disable, optional_value_case).run()
