"""Mutation testing of the pure core: does the suite notice when the code is wrong?

    python bench/mutate.py                      # every core module, a seeded sample of mutants each
    python bench/mutate.py --module sieve --all # every mutant of one module
    python bench/mutate.py --jobs 2 --out bench/results/mutation.json
    python bench/mutate.py --retry bench/results/mutation.json  # only what survived there, after new tests

Each mutant is one small change to one module's syntax tree, of the kinds mutmut and cosmic-ray make:
a comparison turned (`<` to `<=`, `==` to `!=`, `in` to `not in`, `is` to `is not`), `and` to `or`, a
`not` dropped, `+` to `-`, an integer constant off by one, `True` to `False`, `break` to `continue`, a
returned value replaced by None, a call statement removed. Strings are left alone (changing a message
makes a mutant that only a test quoting that message can see, which says little about the logic), and so
are docstrings, annotations and decorators' arguments (`@dataclass(frozen=True, slots=True)` flipped
changes nothing a caller can observe).

Why not mutmut or cosmic-ray: they write every mutant into a copy of the tree and start the test
command for it, which here means the library load and the e2e tests per mutant; and they would be a new
dependency for a bench script. This runner is stdlib only. It forks a parent that has imported the heavy
third-party modules once; the child installs the mutated module through an import hook (nothing on disk
changes, so mutants run in parallel) and runs, with pytest's `-x`, the unit tests of the pure core that
exercise that module. A test process started by the suite (the e2e tests) would not see the mutant, so
those are not run. A mutant that makes the tests time out counts as killed, as in mutmut.

The kill rate is killed / (killed + survived). Every change keeps the module valid Python (operators and
constants are swapped, a statement becomes `pass`). With --sample N, N mutants per module are drawn with a
fixed seed: the rate is then an estimate, printed with its 95% interval.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.abc
import importlib.util
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The core modules of issue 12 and the tests that exercise each (fastest first: -x stops at the first kill).
MODULES: dict[str, tuple[str, list[str]]] = {
    "framing": (
        "logdoctor.framing",
        ["test_framing", "test_records", "test_prefixes", "test_grammar", "test_sieve", "test_fixtures", "test_shapes"],
    ),
    "records": (
        "logdoctor.records",
        ["test_records", "test_grammar", "test_framing", "test_assemble", "test_sieve", "test_fixtures"],
    ),
    "assemble": (
        "logdoctor.assemble",
        ["test_assemble", "test_diagnose", "test_doctor", "test_fixtures", "test_sieve", "test_launch_boundaries"],
    ),
    "diagnose": (
        "logdoctor.diagnose",
        [
            "test_diagnose",
            "test_assemble",
            "test_doctor",
            "test_fixtures",
            "test_qualified",
            "test_surface",
            "test_launch",
            "test_family_fixtures",
            "test_launch_boundaries",
        ],
    ),
    "doctor": (
        "logdoctor.doctor",
        [
            "test_doctor",
            "test_diagnose",
            "test_pipeline",
            "test_fixtures",
            "test_modes_agree",
            "test_launch_boundaries",
        ],
    ),
    "sieve": ("logdoctor.sieve", ["test_sieve", "test_prefilter", "test_pipeline", "test_fixtures", "test_properties"]),
    "constraints": (
        "logdoctor.library.constraints",
        ["test_constraints", "test_audit", "test_launch", "test_cmdline", "test_qualified"],
    ),
}

_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add}


@dataclass(frozen=True)
class Mutant:
    module: str
    index: int  # the n-th mutable site of the module, in tree order
    line: int
    kind: str
    source: str  # the changed line as it reads in the file


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed | survived | timeout
    seconds: float


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside an annotation, a docstring or a decorator: nothing there is logic."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        parts: list[ast.AST | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(node.returns)
            parts += [a.annotation for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]]
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts += node.decorator_list  # `@dataclass(slots=True)`: configuration no behaviour shows
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                parts.append(first)
        for part in parts:
            if part is not None:
                skipped.update(id(n) for n in ast.walk(part))
    return skipped


def _sites(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """(node, kind) for every change this runner makes, in a stable order."""
    skipped = _annotation_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _COMPARE_SWAPS:
                    yield node, f"compare:{i}"
        elif isinstance(node, ast.BoolOp):
            yield node, "boolop"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "drop-not"
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BINOP_SWAPS:
            yield node, "binop"
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield node, "int+1"
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            yield node, "bool"
        elif isinstance(node, (ast.Break, ast.Continue)):
            yield node, "loop"
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            yield node, "return-none"
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            yield node, "drop-call"


def _apply(node: ast.AST, kind: str) -> None:
    if kind.startswith("compare:"):
        assert isinstance(node, ast.Compare)
        i = int(kind.split(":")[1])
        node.ops[i] = _COMPARE_SWAPS[type(node.ops[i])]()
    elif kind == "boolop":
        assert isinstance(node, ast.BoolOp)
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "binop":
        assert isinstance(node, (ast.BinOp, ast.AugAssign))
        node.op = _BINOP_SWAPS[type(node.op)]()
    elif kind == "int+1":
        assert isinstance(node, ast.Constant)
        node.value = node.value + 1
    elif kind == "bool":
        assert isinstance(node, ast.Constant)
        node.value = not node.value
    else:
        raise ValueError(kind)


class _Replace(ast.NodeTransformer):
    """Applies the changes that replace a node rather than edit it."""

    def __init__(self, target: ast.AST, kind: str) -> None:
        self.target, self.kind = target, kind

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return super().visit(node)
        if self.kind == "drop-not":
            assert isinstance(node, ast.UnaryOp)
            return node.operand
        if self.kind == "loop":
            return ast.Continue() if isinstance(node, ast.Break) else ast.Break()
        if self.kind == "return-none":
            return ast.Return(value=ast.Constant(value=None))
        if self.kind == "drop-call":
            return ast.Pass()
        _apply(node, self.kind)
        return node


def module_path(name: str) -> Path:
    return ROOT / (MODULES[name][0].replace(".", "/") + ".py")


def mutants_of(name: str) -> list[Mutant]:
    text = module_path(name).read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    return [
        Mutant(name, i, node.lineno, kind, lines[node.lineno - 1].strip())  # type: ignore[attr-defined]
        for i, (node, kind) in enumerate(_sites(tree))
    ]


def mutated_code(mutant: Mutant) -> object:
    path = module_path(mutant.module)
    tree = ast.parse(path.read_text())
    node, kind = list(_sites(tree))[mutant.index]
    tree = _Replace(node, kind).visit(tree)  # parsed afresh above: nothing else holds it
    ast.fix_missing_locations(tree)
    return compile(tree, str(path), "exec")


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from a mutated code object; every other import goes the normal way."""

    def __init__(self, fullname: str, code: object) -> None:
        self.fullname, self.code = fullname, code

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        if fullname != self.fullname:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=str(module_path_of(fullname)))

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        return None

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        module.__file__ = str(module_path_of(self.fullname))
        exec(self.code, module.__dict__)  # noqa: S102 - the mutant under test


def module_path_of(fullname: str) -> Path:
    return ROOT / (fullname.replace(".", "/") + ".py")


def _tests_for(name: str) -> list[str]:
    return [str(ROOT / "tests" / f"{t}.py") for t in MODULES[name][1] if (ROOT / "tests" / f"{t}.py").exists()]


def _pytest_args(name: str) -> list[str]:
    return ["-x", "-q", "-p", "no:cacheprovider", "--no-header", "-W", "ignore", *_tests_for(name)]


def _run_child(mutant: Mutant | None, name: str) -> int:
    """In a forked child: install the mutant (None: the unchanged code) and run its tests."""
    import pytest

    if mutant is not None:
        code = mutated_code(mutant)
        sys.meta_path.insert(0, _MutantFinder(MODULES[name][0], code))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    return int(pytest.main(_pytest_args(name)))


def _start(mutant: Mutant | None, name: str) -> int:
    pid = os.fork()
    if pid == 0:
        status = 3
        try:
            status = _run_child(mutant, name)
        finally:
            os._exit(status)
    return pid


def _preload() -> None:
    """Import what every child needs and no mutant changes, once, in the parent (the fork shares it)."""
    import hypothesis  # noqa: F401
    import pydantic  # noqa: F401
    import pytest  # noqa: F401
    import regex  # noqa: F401
    import rich  # noqa: F401

    with contextlib.suppress(ImportError):
        import hyperscan  # noqa: F401
    assert not any(m == "logdoctor" or m.startswith("logdoctor.") for m in sys.modules), "parent must not import it"


def _baseline(name: str) -> float:
    """Seconds the module's tests take on the unchanged code; they must pass, or no mutant means anything."""
    started = time.monotonic()
    pid = _start(None, name)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"mutate: the tests of {name} fail on the unchanged code ({' '.join(_pytest_args(name))})")
    return time.monotonic() - started


def run(mutants: list[Mutant], jobs: int, timeouts: dict[str, float]) -> Iterator[Outcome]:
    queue = list(mutants)
    running: dict[int, tuple[Mutant, float]] = {}
    while queue or running:
        while queue and len(running) < jobs:
            mutant = queue.pop(0)
            running[_start(mutant, mutant.module)] = (mutant, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for child, (mutant, started) in list(running.items()):
                if now - started > timeouts[mutant.module]:
                    os.kill(child, 9)
                    os.waitpid(child, 0)
                    del running[child]
                    yield Outcome(mutant, "timeout", now - started)
            time.sleep(0.05)
            continue
        mutant, started = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        # pytest: 0 all passed, 1 a test failed, 2 interrupted (e.g. an import error), 3 internal error.
        verdict = "survived" if code == 0 else "killed"
        yield Outcome(mutant, verdict, time.monotonic() - started)


def _interval(killed: int, total: int) -> tuple[float, float]:
    """Wilson 95% interval of a proportion."""
    if total == 0:
        return (0.0, 0.0)
    z, p = 1.96, killed / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (centre - half, centre + half)


def _survivors(path: Path, names: list[str]) -> set[Mutant]:
    """The survivors of an earlier run. A mutant is named by its site and its line as it reads, so a
    survivor whose module changed since is not retried under another mutant's number."""
    try:
        outcomes = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        sys.exit(f"mutate: cannot read {path}: {error}")
    return {Mutant(**o["mutant"]) for o in outcomes if o["status"] == "survived" and o["mutant"]["module"] in names}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="default: every core module")
    parser.add_argument("--sample", type=int, default=60, help="mutants drawn per module (default 60)")
    parser.add_argument("--all", action="store_true", help="every mutant, no sample")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--out", type=Path, help="write every outcome as JSON")
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    parser.add_argument(
        "--retry",
        type=Path,
        metavar="OUT",
        help="test again only the mutants that survived in an earlier --out file (same code, new tests)",
    )
    args = parser.parse_args()
    names = args.module or list(MODULES)
    retried = _survivors(args.retry, names) if args.retry else None
    os.environ.setdefault("LOGDOCTOR_TEST_CACHE", str(Path.home() / ".cache" / "logdoctor-mutate"))
    chosen: list[Mutant] = []
    population: dict[str, int] = {}
    for name in names:
        every = mutants_of(name)
        population[name] = len(every)
        chosen += (
            [m for m in every if m in retried]
            if retried is not None
            else every
            if args.all
            else sorted(
                random.Random(f"{args.seed}:{name}").sample(every, min(args.sample, len(every))), key=lambda m: m.index
            )
        )
    if args.list:
        for m in chosen:
            print(f"{m.module}:{m.line} {m.kind:12} {m.source}")
        return 0
    _preload()
    timeouts = {}
    for name in names:
        seconds = _baseline(name)
        timeouts[name] = max(30.0, 5 * seconds)
        print(
            f"{name}: {population[name]} mutants, testing {sum(m.module == name for m in chosen)}; "
            f"tests take {seconds:.0f} s unchanged",
            flush=True,
        )
    outcomes: list[Outcome] = []
    for outcome in run(chosen, args.jobs, timeouts):
        outcomes.append(outcome)
        if outcome.status == "survived":
            m = outcome.mutant
            print(f"  survived  {m.module}:{m.line} {m.kind}: {m.source}", flush=True)
    print()
    print(f"{'module':12} {'mutants':>8} {'tested':>7} {'killed':>7} {'survived':>9} {'kill rate':>10}")
    totals = [0, 0]
    for name in names:
        mine = [o for o in outcomes if o.mutant.module == name]
        killed = sum(o.status in ("killed", "timeout") for o in mine)
        survived = sum(o.status == "survived" for o in mine)
        totals[0] += killed
        totals[1] += survived
        rate = killed / max(1, killed + survived)
        print(f"{name:12} {population[name]:>8} {len(mine):>7} {killed:>7} {survived:>9} {rate:>9.1%}")
    killed, survived = totals
    low, high = _interval(killed, killed + survived)
    sampled = (
        ""
        if args.all or retried is not None
        else f" (95% interval {low:.1%}-{high:.1%}, a seeded sample of {args.sample} a module)"
    )
    print(
        f"{'all':12} {sum(population[n] for n in names):>8} {len(outcomes):>7} {killed:>7} {survived:>9} "
        f"{killed / max(1, killed + survived):>9.1%}{sampled}"
    )
    if args.out:
        args.out.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
