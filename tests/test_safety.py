"""Safe by construction: nothing in the package can run code that a log carries."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "logdoctor"
FORBIDDEN_CALLS = {"eval", "exec", "literal_eval", "__import__"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve"}


def _problems(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in FORBIDDEN_CALLS:
                found.append(f"{where}: calls {name}")
            if name == "load" and isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "yaml":
                found.append(f"{where}: yaml.load (use yaml.safe_load)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{where}: imports {m}" for m in modules if m.split(".")[0] in FORBIDDEN_MODULES]
    return found


def test_no_eval_exec_or_pickle_anywhere_in_the_package() -> None:
    problems = [p for path in sorted(PACKAGE.rglob("*.py")) for p in _problems(path)]
    assert problems == []
