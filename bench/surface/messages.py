"""Every message one vLLM source file can raise, assert or log, as a template (stdlib `ast` only).

A *site* is one `raise X(msg)`, `assert cond, msg`, `logger.<level>(msg, ...)`, `parser.error(msg)` or
`sys.exit(msg)` whose message can be read from the source without running it: a str literal, an
f-string, a concatenation, `"...".format(...)`, `"..." % (...)`, a local variable assigned one of
those earlier in the same function (followed through `if`/`else` branches, `msg += ...` included), or
a module or class constant assigned once. An exception class whose `__init__` passes its own message
to `super().__init__(...)` is a site too (`raise EngineDeadError()` prints that message), and so is a
factory's `return SomeError(msg)` (the caller raises what it returns).

An `assert cond` without a message, and a `raise SomeError` / `raise SomeError()` without arguments,
prints an empty message: the traceback's innermost frame, which shows the statement's source line, is
what identifies it. Such a statement is a site of kind `assert-bare` (class AssertionError, or the
raised class) whose `code` is its first physical line, stripped, as a traceback prints it, and whose
`keys` are the forms of its source a traceback can show, normalised by `code_key`: the whole
statement first, then its first line, and for a multi-line assert the condition's first line (what
Python 3.11+ prints) and the whole condition.

Templates use `str.format` syntax: `{name}` is a value vLLM fills in at run time (named after the
expression: `{self.max_model_len}` -> `{max_model_len}`, `%d` -> the argument's name or `{argN}`), and
literal braces are doubled. Each site also records the `if` tests that guard it within its function
(outermost first; an `else` branch as `not (...)`), the attribute names the guard and the message read
(later mapped to `vllm serve` flags) and the environment variables they read.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class _Slot:
    """A value vLLM fills in at run time."""

    name: str


Template = tuple[object, ...]  # of str (literal text) and _Slot

MAX_ALTERNATIVES = 4  # a message variable assigned in several branches keeps at most this many values
LOG_LEVELS = {"warning": "WARNING", "warn": "WARNING", "error": "ERROR", "exception": "ERROR",
              "critical": "CRITICAL", "fatal": "CRITICAL"}
MESSAGE_KEYWORDS = ("msg", "message", "detail", "reason")
_EXCEPTION_SUFFIXES = ("Error", "Exception", "Exit", "Warning", "Interrupt")
_PERCENT = re.compile(r"%(?:\((\w+)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{2,}")
BARE = "assert-bare"  # the kind of a message-less assert or argument-less raise
_CARETS = re.compile(r"\s*[\^~]+[\s^~]*")  # the marker lines Python 3.11+ prints under a traceback's code
_BRACKET_SPACE = re.compile(r"([(\[{]) | ([)\]}])")


def code_key(text: str) -> str:
    """Source text as a lookup key: caret lines dropped, lines joined (a continuation's backslash
    dropped), whitespace runs as one space, no space inside brackets (`assert (` newline `a == b)` ->
    `assert (a == b)`). logdoctor/surface/index.py normalises a traceback's code line the same way."""
    lines = [line.rstrip().removesuffix("\\") for line in text.splitlines()
             if line.strip() and not _CARETS.fullmatch(line)]
    return _BRACKET_SPACE.sub(r"\1\2", " ".join(" ".join(lines).split()))


@dataclass
class Site:
    kind: str  # raise | assert | log | argparse | exit | assert-bare
    cls: str | None  # exception class (last dotted component), or the log level for kind "log"
    parts: Template
    file: str
    function: str
    line: int
    conditions: tuple[str, ...]
    reads: frozenset[str]  # config field names read by the guard and the message (flag candidates)
    env_vars: frozenset[str]
    code: str = ""  # assert-bare: the statement's first physical line, stripped
    keys: tuple[str, ...] = ()  # assert-bare: the whole statement, then other forms a traceback shows

    @property
    def template(self) -> str:
        return render(self.parts)


def render(parts: Template) -> str:
    """The format-style text of a template: literal braces doubled, slots as `{name}`."""
    out = []
    for part in parts:
        if isinstance(part, _Slot):
            out.append("{" + part.name + "}")
        else:
            out.append(str(part).replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def _join(*pieces: Template) -> Template:
    """Concatenate templates, merging adjacent literals (so equal messages get equal templates)."""
    out: list[object] = []
    for piece in pieces:
        for part in piece:
            if isinstance(part, str):
                if not part:
                    continue
                if out and isinstance(out[-1], str):
                    out[-1] = out[-1] + part
                    continue
            out.append(part)
    return tuple(out)


def has_literal(parts: Template) -> bool:
    return any(isinstance(p, str) and p.strip() for p in parts)


# ---------------------------------------------------------------------------------------------------
# Naming the values a message interpolates


def value_name(node: ast.AST | None) -> str | None:
    """A readable placeholder name for an interpolated expression (`self.cfg.max_len` -> `max_len`)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier():
            return key.value
        return value_name(node.value)
    if isinstance(node, ast.Call):
        return value_name(node.args[0]) if node.args else value_name(node.func)
    if isinstance(node, ast.Starred):
        return value_name(node.value)
    if isinstance(node, ast.BinOp):  # `needed_memory / GiB_bytes` -> needed_memory
        return value_name(node.left)
    if isinstance(node, ast.UnaryOp):
        return value_name(node.operand)
    if isinstance(node, ast.IfExp):
        return value_name(node.body)
    if isinstance(node, ast.BoolOp):
        return value_name(node.values[0])
    return None


def _clean_name(name: str | None, fallback: str) -> str:
    if not name:
        return fallback
    name = re.sub(r"\W", "_", name).strip("_")
    return name if name and not name[0].isdigit() else fallback


# ---------------------------------------------------------------------------------------------------
# Reading a message expression


class Env:
    """Message variables of a function at one point: name -> alternative templates, plus how many times
    each name is assigned in the whole function (a placeholder is inlined only when it is assigned once,
    so a value that depends on a branch stays a placeholder)."""

    def __init__(self, values: dict[str, tuple[Template, ...]], assigned: dict[str, int]) -> None:
        self.values = values
        self.assigned = assigned

    def copy(self) -> Env:
        return Env(dict(self.values), self.assigned)

    def single(self, name: str) -> Template | None:
        alts = self.values.get(name)
        if alts and len(alts) == 1 and self.assigned.get(name, 0) == 1:
            return alts[0]
        return None

    def join(self, other: Env) -> Env:
        merged: dict[str, tuple[Template, ...]] = {}
        for name in self.values.keys() & other.values.keys():
            alts = tuple(dict.fromkeys(self.values[name] + other.values[name]))
            if len(alts) <= MAX_ALTERNATIVES:
                merged[name] = alts
        return Env(merged, self.assigned)


def templates(node: ast.AST | None, env: Env) -> tuple[Template, ...]:
    """Every template the expression can render (several when it is a variable set in branches)."""
    if isinstance(node, ast.Name) and node.id in env.values:
        return env.values[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = f"{node.value.id}.{node.attr}"
        if key in env.values:
            return env.values[key]
    one = template(node, env)
    return (one,) if one is not None else ()


def template(node: ast.AST | None, env: Env) -> Template | None:
    """The template of a str-building expression, or None when it builds no readable message."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.JoinedStr):
        return _fstring(node, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _concat(node, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = template(node.left, env)
        if left is None:
            return None
        args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        return percent(left, args, env, mapping=node.right if isinstance(node.right, ast.Dict) else None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = node.func.value
        if isinstance(base, ast.Constant) and isinstance(base.value, str):
            return _format(base.value, node, env)
        return None
    if isinstance(node, ast.Name):
        return env.single(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # self.MESSAGE, Cls.MESSAGE
        return env.single(f"{node.value.id}.{node.attr}")
    return None


def _slot_for(node: ast.AST, env: Env, index: int) -> Template:
    """A placeholder for an interpolated value, or the value's own template when it is a message
    variable assigned once (`"%s %s" % (msg, hint)` reads as both messages)."""
    if isinstance(node, ast.Name):
        inline = env.single(node.id)
        if inline is not None:
            return inline
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    return (_Slot(_clean_name(value_name(node), f"arg{index}")),)


def _fstring(node: ast.JoinedStr, env: Env) -> Template:
    pieces: list[Template] = []
    for index, value in enumerate(node.values, 1):
        if isinstance(value, ast.Constant):
            pieces.append((str(value.value),))
        elif isinstance(value, ast.FormattedValue):
            if value.format_spec is None and value.conversion == -1:
                pieces.append(_slot_for(value.value, env, index))
            else:
                pieces.append((_Slot(_clean_name(value_name(value.value), f"arg{index}")),))
    return _join(*pieces)


def _concat(node: ast.BinOp, env: Env) -> Template | None:
    left, right = template(node.left, env), template(node.right, env)
    if left is None and right is None:
        return None
    if left is None:
        left = (_Slot(_clean_name(value_name(node.left), "arg1")),)
    if right is None:
        right = (_Slot(_clean_name(value_name(node.right), "arg2")),)
    return _join(left, right)


def percent(fmt: Template, args: list[ast.expr], env: Env, mapping: ast.Dict | None = None) -> Template:
    """Apply %-formatting to a template's literal parts: `%s`/`%d`/`%.2f` take the next argument,
    `%(name)s` a key of the mapping, `%%` is a percent sign."""
    keys: dict[str, ast.expr] = {}
    if mapping is not None:
        keys = {k.value: v for k, v in zip(mapping.keys, mapping.values, strict=False)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    pieces: list[Template] = []
    position = 0
    for part in fmt:
        if not isinstance(part, str):
            pieces.append((part,))
            continue
        cursor = 0
        for match in _PERCENT.finditer(part):
            pieces.append((part[cursor:match.start()],))
            cursor = match.end()
            named, conversion = match.group(1), match.group(2)
            if conversion == "%":
                pieces.append(("%",))
            elif named is not None:
                value = keys.get(named)
                pieces.append(_slot_for(value, env, 0) if value is not None else (_Slot(named),))
            else:
                position += 1
                if mapping is None and position <= len(args):
                    pieces.append(_slot_for(args[position - 1], env, position))
                else:
                    pieces.append((_Slot(f"arg{position}"),))
        pieces.append((part[cursor:],))
    return _join(*pieces)


def _format(fmt: str, call: ast.Call, env: Env) -> Template | None:
    """`"...{}...{name}...".format(a, name=b)` as a template."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    pieces: list[Template] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    for literal, field_name, _spec, _conv in parsed:
        pieces.append((literal,))
        if field_name is None:
            continue
        head = re.split(r"[.\[]", field_name, maxsplit=1)[0]
        tail = field_name[len(head):]
        if head == "":
            node: ast.expr | None = call.args[auto] if auto < len(call.args) else None
            auto += 1
        elif head.isdigit():
            index = int(head)
            node = call.args[index] if index < len(call.args) else None
        else:
            node = keywords.get(head)
        if tail:
            last = re.findall(r"\w+", tail)
            pieces.append((_Slot(_clean_name(last[-1] if last else head, f"arg{auto}")),))
        elif node is not None:
            pieces.append(_slot_for(node, env, auto))
        else:
            pieces.append((_Slot(_clean_name(head, f"arg{auto}")),))
    return _join(*pieces)


# ---------------------------------------------------------------------------------------------------
# What a guard or a message reads


def _attribute_chain(node: ast.Attribute) -> list[str]:
    chain = [node.attr]
    value: ast.AST = node.value
    while isinstance(value, ast.Attribute):
        chain.append(value.attr)
        value = value.value
    if isinstance(value, ast.Name):
        chain.append(value.id)
    return chain[::-1]


def _config_fields(node: ast.AST, owner: str | None, aliases: dict[str, str]) -> set[str]:
    """Field names read from a config-like object: `<x>_config.f`, `<x>args.f`, `args.f`, or `self.f`
    inside a `...Config`/`...Args` class; a local copied from such a field counts as the field."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and id(sub) not in called:
            chain = _attribute_chain(sub)
            if len(chain) < 2:
                continue
            holder = chain[-2].lower()
            if holder.endswith(("config", "args", "_cfg")) or (
                holder in ("self", "cls") and owner is not None and owner.endswith(("Config", "Args"))
            ):
                found.add(chain[-1])
        elif isinstance(sub, ast.Name) and sub.id in aliases:
            found.add(aliases[sub.id])
    return found


def env_vars(node: ast.AST) -> set[str]:
    """`envs.VLLM_X`, `os.environ["X"]`, `os.environ.get("X")`, `os.getenv("X")`, `envs.is_set("X")`."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "envs":
            if _ENV_NAME.fullmatch(sub.attr):
                found.add(sub.attr)
        elif isinstance(sub, ast.Subscript) and _is_environ(sub.value):
            key = sub.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
        elif isinstance(sub, ast.Call) and sub.args and isinstance(sub.args[0], ast.Constant):
            name = sub.args[0].value
            func = sub.func
            is_lookup = isinstance(func, ast.Attribute) and (
                (func.attr in ("get", "pop") and _is_environ(func.value))
                or func.attr == "getenv"
                or (func.attr == "is_set" and isinstance(func.value, ast.Name) and func.value.id == "envs")
            )
            if is_lookup and isinstance(name, str) and _ENV_NAME.fullmatch(name):
                found.add(name)
        elif (isinstance(sub, ast.Compare) and isinstance(sub.left, ast.Constant)
              and isinstance(sub.left.value, str) and any(_is_environ(c) for c in sub.comparators)):
            found.add(sub.left.value)  # "VLLM_X" in os.environ
    return found


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


# ---------------------------------------------------------------------------------------------------
# Walking a module


@dataclass
class _Scope:
    """Where the walker is: the qualified function, the class that owns it, the guards so far."""

    function: str
    owner: str | None
    conditions: tuple[str, ...] = ()
    guards: tuple[ast.AST, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)


class Extractor:
    """Walks one module's AST in source order, carrying message variables through branches."""

    def __init__(self, source: str, file: str) -> None:
        self.source = source
        self.lines = [line.encode("utf-8") for line in source.splitlines(keepends=True)]
        self.file = file
        self.sites: list[Site] = []
        self.loggers = {"logger"}
        self.constants: dict[str, tuple[Template, ...]] = {}  # module and class message constants
        self.exception_classes: set[str] = set()

    def run(self, tree: ast.Module) -> list[Site]:
        for stmt in tree.body:  # module-level loggers: logger = init_logger(__name__) and friends
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                callee = value_name(stmt.value.func) or ""
                if "logger" in callee.lower() or callee.lower() == "getlogger":
                    self.loggers.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        self._constants(tree)
        self._body(tree.body, _Scope("<module>", None), self._env(tree.body))
        return self.sites

    def _constants(self, tree: ast.Module) -> None:
        """Message text kept in constants (`_DEPRECATION_MESSAGE = (...)` at module level, or
        `ENGINE_DEAD_MESSAGE = "..."` in a class, read as `self.ENGINE_DEAD_MESSAGE`): assigned once,
        they read as their text wherever a function uses them."""
        counts = _assign_counts([s for s in tree.body if not isinstance(s, ast.ClassDef)])
        empty = Env({}, {})
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                value = template(stmt.value, empty)
                if value is not None and has_literal(value) and counts.get(name) == 1:
                    self.constants[name] = (value,)
            elif isinstance(stmt, ast.ClassDef):
                bases = [value_name(b) or "" for b in stmt.bases]
                if stmt.name.endswith(_EXCEPTION_SUFFIXES) or any(b.endswith(_EXCEPTION_SUFFIXES) for b in bases):
                    self.exception_classes.add(stmt.name)
                for item in stmt.body:
                    if (isinstance(item, ast.Assign) and len(item.targets) == 1
                            and isinstance(item.targets[0], ast.Name)):
                        value = template(item.value, empty)
                        if value is not None and has_literal(value):
                            for holder in ("self", "cls", stmt.name):
                                self.constants[f"{holder}.{item.targets[0].id}"] = (value,)

    def _env(self, body: list[ast.stmt]) -> Env:
        counts = _assign_counts(body)
        values = {k: v for k, v in self.constants.items() if k not in counts}
        return Env(values, {**{k: 1 for k in values}, **counts})

    # -- statements ------------------------------------------------------------------------------

    def _body(self, stmts: list[ast.stmt], scope: _Scope, env: Env) -> Env:
        for stmt in stmts:
            env = self._stmt(stmt, scope, env)
        return env

    def _stmt(self, stmt: ast.stmt, scope: _Scope, env: Env) -> Env:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self._function(stmt, scope)
            return env
        if isinstance(stmt, ast.ClassDef):
            inner = _Scope(_qualify(scope, stmt.name), stmt.name)
            self._body(stmt.body, inner, Env({}, {}))
            return env
        if isinstance(stmt, ast.If):
            return self._if(stmt, scope, env)
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            return self._assign(stmt, scope, env)
        if isinstance(stmt, ast.Raise):
            self._raise(stmt, scope, env)
        elif isinstance(stmt, ast.Assert):
            self._assert(stmt, scope, env)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._call(stmt.value, scope, env)
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) and _is_error_class(stmt.value):
            # a factory that builds the exception its caller raises: `return EngineDeadError("...")`
            self._raise(ast.Raise(exc=stmt.value, lineno=stmt.lineno, col_offset=stmt.col_offset), scope, env,
                        factory=True)
        elif isinstance(stmt, ast.Return | ast.Expr) and stmt.value is not None:
            for sub in ast.walk(stmt.value):
                if isinstance(sub, ast.Call):
                    self._call(sub, scope, env)
        for block in _blocks(stmt):  # loops, with, try, match: visited, their changes joined back
            env = env.join(self._body(block, scope, env.copy()))
        return env

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope) -> None:
        inner = _Scope(_qualify(scope, node.name), scope.owner)  # `self` is still the class's instance
        self._body(node.body, inner, self._env(node.body))

    def _if(self, stmt: ast.If, scope: _Scope, env: Env) -> Env:
        test = self._text(stmt.test)
        guards = scope.guards + (stmt.test,)
        then = _Scope(scope.function, scope.owner, scope.conditions + (test,), guards, scope.aliases)
        other = _Scope(scope.function, scope.owner, scope.conditions + (f"not ({test})",), guards, scope.aliases)
        env_then = self._body(stmt.body, then, env.copy())
        env_else = self._body(stmt.orelse, other, env.copy())
        return env_then.join(env_else)

    def _assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope, env: Env) -> Env:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not names or stmt.value is None:
            return env
        if isinstance(stmt.value, ast.Attribute):
            scope.aliases[names[0]] = stmt.value.attr
        if isinstance(stmt, ast.AugAssign):
            base = env.values.get(names[0])
            extra = templates(stmt.value, env)
            if isinstance(stmt.op, ast.Add) and base and extra:
                combined = tuple(dict.fromkeys(_join(a, b) for a in base for b in extra))
                env.values[names[0]] = combined[:MAX_ALTERNATIVES]
            else:
                env.values.pop(names[0], None)
            return env
        alts = tuple(t for t in templates(stmt.value, env) if has_literal(t))
        for name in names:
            if alts:
                env.values[name] = alts
            else:
                env.values.pop(name, None)
        return env

    # -- message sites ---------------------------------------------------------------------------

    def _raise(self, stmt: ast.Raise, scope: _Scope, env: Env, factory: bool = False) -> None:
        call = stmt.exc
        bare: ast.expr | None = call if isinstance(call, ast.Name | ast.Attribute) else None
        if isinstance(call, ast.Call) and not call.args and not call.keywords:
            bare = call.func
        if bare is not None:  # `raise QueueOverflowError()`: no message, the source line says where
            name = value_name(bare)
            # a class, not a caught exception (`raise e`, `raise self.error`); a factory's `return X()` is
            # raised, and shown in a traceback, by its caller
            if name and name[:1].isupper() and not factory:
                self._bare(stmt, name, scope, None)
            return
        if not isinstance(call, ast.Call):
            return
        cls = value_name(call.func)
        if not cls or not _looks_like_exception(cls):
            return
        message = _message_arg(call, 1 if cls == "ArgumentError" else 0)
        self._emit("raise", cls, message, stmt, scope, env, ())

    def _assert(self, stmt: ast.Assert, scope: _Scope, env: Env) -> None:
        if stmt.msg is not None:
            self._emit("assert", "AssertionError", stmt.msg, stmt, scope, env, (f"not ({self._text(stmt.test)})",),
                       guard=stmt.test)
        else:
            self._bare(stmt, "AssertionError", scope, stmt.test)

    def _bare(self, stmt: ast.Assert | ast.Raise, cls: str, scope: _Scope, test: ast.expr | None) -> None:
        """A statement that prints no message, as the source lines a traceback shows for it."""
        first = self.lines[stmt.lineno - 1].decode("utf-8", "replace").strip()
        keys = [code_key(self._segment(stmt) or ast.unparse(stmt)), code_key(first)]
        if test is not None and test.lineno > stmt.lineno:  # `assert (` + newline: Python 3.11+ prints the
            # line the condition starts on, 3.13 all of the condition's lines
            keys.append(code_key(self.lines[test.lineno - 1].decode("utf-8", "replace")))
            keys.append(code_key(self._segment(test) or ast.unparse(test)))
        extra = (f"not ({self._text(test)})",) if test is not None else ()
        parts: Template = (keys[0],)
        self._add(BARE, cls, parts, stmt, scope, extra, None, test, first, tuple(dict.fromkeys(k for k in keys if k)))

    def _call(self, call: ast.Call, scope: _Scope, env: Env) -> None:
        func = call.func
        if not call.args:
            return
        if isinstance(func, ast.Attribute):
            owner = func.value
            method = func.attr
            if (method == "__init__" and isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                    and owner.func.id == "super" and scope.owner in self.exception_classes
                    and scope.function.endswith(".__init__")):
                # an exception class that supplies its own message: `raise EngineDeadError()` prints it
                self._emit("raise", scope.owner, call.args[0], call, scope, env, ())
                return
            if isinstance(owner, ast.Name) and owner.id in self.loggers:
                level = _log_level(method)
                if level is not None:
                    self._log(call, level, scope, env)
                return
            owner_name = value_name(owner) or ""
            if method == "error" and owner_name.lower().endswith("parser"):
                self._emit("argparse", "ArgumentParser.error", call.args[0], call, scope, env, ())
            elif method == "exit" and owner_name == "sys":
                self._emit("exit", "SystemExit", call.args[0], call, scope, env, ())

    def _log(self, call: ast.Call, level: str, scope: _Scope, env: Env) -> None:
        fmt, args = call.args[0], list(call.args[1:])
        if not args:  # logging formats with % only when it has arguments
            self._emit("log", level, fmt, call, scope, env, ())
            return
        for base in templates(fmt, env):
            parts = percent(base, args, env)
            self._add("log", level, parts, call, scope, (), call)

    def _emit(self, kind: str, cls: str, message: ast.AST | None, node: ast.stmt | ast.expr, scope: _Scope,
              env: Env, extra: tuple[str, ...], guard: ast.AST | None = None) -> None:
        for parts in templates(message, env):
            self._add(kind, cls, parts, node, scope, extra, message, guard)

    def _add(self, kind: str, cls: str, parts: Template, node: ast.stmt | ast.expr, scope: _Scope,
             extra: tuple[str, ...], message: ast.AST | None, guard: ast.AST | None = None,
             code: str = "", keys: tuple[str, ...] = ()) -> None:
        reads: set[str] = set()  # (a template without literal text, `f"{e}"`, is kept: the merge drops it)
        envs: set[str] = set()
        for read in (message, guard, *scope.guards):
            if read is not None:
                reads |= _config_fields(read, scope.owner, scope.aliases)
                envs |= env_vars(read)
        self.sites.append(Site(kind, cls, parts, self.file, scope.function, node.lineno,
                               scope.conditions + extra, frozenset(reads), frozenset(envs), code, keys))

    def _text(self, node: ast.AST) -> str:
        """The guard's source text on one line."""
        text = self._segment(node) or ast.unparse(node)
        text = " ".join(text.split())
        return re.sub(r"([(\[{]) | ([)\]}])", r"\1\2", text)


    def _segment(self, node: ast.AST) -> str | None:
        """`ast.get_source_segment` without re-splitting the whole file on every call (that made one
        large module take seconds). Offsets are UTF-8 byte columns, as in the AST."""
        start: int | None = getattr(node, "lineno", None)
        end: int | None = getattr(node, "end_lineno", None)
        col: int | None = getattr(node, "col_offset", None)
        end_col: int | None = getattr(node, "end_col_offset", None)
        if start is None or end is None or col is None or end_col is None or end > len(self.lines):
            return None
        if start == end:
            return self.lines[start - 1][col:end_col].decode("utf-8", "replace")
        chunks = [self.lines[start - 1][col:], *self.lines[start:end - 1], self.lines[end - 1][:end_col]]
        return b"".join(chunks).decode("utf-8", "replace")


def _qualify(scope: _Scope, name: str) -> str:
    return name if scope.function == "<module>" else f"{scope.function}.{name}"


def _blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The nested statement lists of a compound statement other than `if` (handled with its guard)."""
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        yield stmt.body
        yield stmt.orelse
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        yield stmt.body
    elif isinstance(stmt, ast.Try | ast.TryStar):
        yield stmt.body
        for handler in stmt.handlers:
            yield handler.body
        yield stmt.orelse
        yield stmt.finalbody
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            yield case.body


def _assign_counts(stmts: list[ast.stmt]) -> dict[str, int]:
    """How often each local name is (re)assigned in a function body, nested functions excluded."""
    counts: dict[str, int] = {}
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        counts[sub.id] = counts.get(sub.id, 0) + (2 if isinstance(node, ast.AugAssign) else 1)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension | ast.NamedExpr | ast.withitem):
            bound: ast.AST | None = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            if bound is not None:
                for sub in ast.walk(bound):
                    if isinstance(sub, ast.Name):
                        counts[sub.id] = counts.get(sub.id, 0) + 2
        stack.extend(ast.iter_child_nodes(node))
    return counts


def _is_error_class(call: ast.Call) -> bool:
    """A call that builds an exception by its class name (`MQEngineDeadError(...)`, `errors.FooError(...)`)."""
    name = value_name(call.func)
    return name is not None and name[:1].isupper() and name.endswith(_EXCEPTION_SUFFIXES)


def _looks_like_exception(name: str) -> bool:
    return name[:1].isupper() or name.endswith(_EXCEPTION_SUFFIXES)


def _log_level(method: str) -> str | None:
    head = method.split("_", 1)[0]
    return LOG_LEVELS.get(head)


def _message_arg(call: ast.Call, index: int) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    for keyword in call.keywords:
        if keyword.arg in MESSAGE_KEYWORDS:
            return keyword.value
    return None


def extract(source: str, file: str) -> list[Site]:
    """All message sites of one module (raises SyntaxError when the module does not parse)."""
    tree = ast.parse(source, filename=file)
    return Extractor(source, file).run(tree)
