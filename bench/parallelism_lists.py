#!/usr/bin/env python3
"""Lists for the parallelism rule set, generated from a vLLM release's source (not typed by hand).

    python3 bench/parallelism_lists.py /path/to/site-packages/vllm [--toml]

Reads, without importing vLLM (so any release's unpacked wheel will do):

* model_executor/models/registry.py: every architecture vLLM registers (`_VLLM_MODELS`, the union of
  the `_*_MODELS` dicts), each mapped to (module, class);
* the model modules: whether that class implements `SupportsPP` (directly, or through a base class,
  followed across `from .x import Y` imports), or says `supports_pp = False`;
* transformers_utils/model_arch_config_convertor.py: the model types whose convertor overrides how the
  head counts are read (`get_total_num_attention_heads` / `get_total_num_kv_heads`, or `__init__`).

and prints them: `pp_models` (registered architectures that support pipeline parallelism), `no_pp_models`
(registered architectures that do not: ModelConfig.verify_with_parallel_config raises "Pipeline
parallelism is not supported for this model" for them with --pipeline-parallel-size > 1), and
`special_head_model_types`. With --toml, as the `[lists]` lines of patterns/parallelism-rules.toml.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def registry(vllm: Path) -> dict[str, tuple[str, str]]:
    """architecture -> (module, class), from the registry's `_*_MODELS = {...}` literals."""
    tree = ast.parse((vllm / "model_executor/models/registry.py").read_text("utf-8"))
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict)):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if not isinstance(target, ast.Name) or not target.id.endswith("_MODELS"):
            continue
        table: dict[str, tuple[str, str]] = {}
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            if key is None and isinstance(value, ast.Name):  # **_OTHER_MODELS
                table.update(tables.get(value.id, {}))
            elif isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and len(value.elts) >= 2:
                module, cls = (e.value if isinstance(e, ast.Constant) else None for e in value.elts[:2])
                if isinstance(module, str) and isinstance(cls, str):
                    table[str(key.value)] = (module, cls)
        tables[target.id] = table
    return tables.get("_VLLM_MODELS", {})


class Modules:
    """Class definitions and imports of the model modules, parsed once each."""

    def __init__(self, vllm: Path) -> None:
        self.vllm = vllm
        self.parsed: dict[str, tuple[dict[str, ast.ClassDef], dict[str, tuple[str, str]], dict[str, str]]] = {}

    def path(self, module: str) -> Path | None:
        rel = Path(*module.split(".")[1:]) if module.startswith("vllm.") else Path("model_executor/models") / module
        for candidate in (self.vllm / rel.with_suffix(".py"), self.vllm / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def dotted(self, module: str) -> str:
        return module if module.startswith("vllm.") else f"vllm.model_executor.models.{module}"

    def load(self, module: str) -> tuple[dict[str, ast.ClassDef], dict[str, tuple[str, str]], dict[str, str]]:
        module = self.dotted(module)
        if module in self.parsed:
            return self.parsed[module]
        classes: dict[str, ast.ClassDef] = {}
        imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        aliases: dict[str, str] = {}  # `_Base = LlamaForCausalLM` or `_Base = wrap(LlamaForCausalLM)`
        self.parsed[module] = (classes, imports, aliases)
        path = self.path(module)
        if path is None:
            return classes, imports, aliases
        tree = ast.parse(path.read_text("utf-8"))
        package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, node)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join(parts + ([node.module] if node.module else []))
                for alias in node.names:
                    imports[alias.asname or alias.name] = (base, alias.name)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                while isinstance(value, ast.Call) and value.args:
                    value = value.args[0]
                if isinstance(value, ast.Name) and node.targets[0].id not in aliases:
                    aliases[node.targets[0].id] = value.id
        return classes, imports, aliases

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.ClassDef] | str | None:
        """The class `name` of `module` names: (module, its definition), following `from .x import Y`
        and module-level aliases (`_Base = as_embedding_model(LlamaForCausalLM)`); "SupportsPP" for the
        interface itself; None when it is not in vLLM's source."""
        if depth > 20:
            return None
        module = self.dotted(module)
        classes, imports, aliases = self.load(module)
        if name == "SupportsPP" and (name not in classes):
            return "SupportsPP"
        if name in classes:
            return module, classes[name]
        if name in aliases:
            return self.resolve(module, aliases[name], depth + 1)
        if name in imports:
            source, original = imports[name]
            if original == "SupportsPP":
                return "SupportsPP"
            if source.startswith("vllm."):
                return self.resolve(source, original, depth + 1)
        return None

    def ancestry(self, module: str, cls: str) -> list[tuple[str, ast.ClassDef]] | None:
        """The class's method resolution order (C3, as Python computes it) over the classes found in
        vLLM's source; bases outside it (torch's nn.Module, typing's Protocol) are left out."""
        first = self.resolve(module, cls)
        if not isinstance(first, tuple):
            return None
        memo: dict[int, list[tuple[str, ast.ClassDef]]] = {}
        interface = ast.ClassDef(name="SupportsPP", bases=[], keywords=[], body=[], decorator_list=[])

        def bases_of(where: str, node: ast.ClassDef) -> list[tuple[str, ast.ClassDef]]:
            out = []
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
                found = self.resolve(where, name) if name else None
                if found == "SupportsPP":
                    out.append(("SupportsPP", interface))
                elif isinstance(found, tuple):
                    out.append(found)
            return out

        def linear(entry: tuple[str, ast.ClassDef], depth: int = 0) -> list[tuple[str, ast.ClassDef]]:
            key = id(entry[1])
            if key in memo:
                return memo[key]
            if depth > 50:
                return [entry]
            parents = bases_of(*entry)
            sequences = [list(linear(p, depth + 1)) for p in parents] + [list(parents)]
            result = [entry]
            while any(sequences):
                for sequence in sequences:
                    if not sequence:
                        continue
                    head = sequence[0]
                    if not any(head[1] is item[1] for other in sequences for item in other[1:]):
                        break
                else:  # no consistent order (Python would refuse the class): depth first
                    head = next(s[0] for s in sequences if s)
                result.append(head)
                sequences = [[i for i in seq if i[1] is not head[1]] for seq in sequences]
            memo[key] = result
            return result

        return linear(first)

    def supports_pp(self, module: str, cls: str) -> bool | None:
        """vLLM's supports_pp (model_executor/models/interfaces.py): SupportsPP among the bases (or a
        `supports_pp = True` attribute with make_empty_intermediate_tensors), and a `forward` that
        takes `intermediate_tensors`. None when the class cannot be found in the source."""
        chain = self.ancestry(module, cls)
        if chain is None:
            return None
        flag = None
        for _, node in chain:
            if node.name == "SupportsPP" and not node.body:
                flag = True if flag is None else flag
                continue
            for statement in node.body:
                target = value = None
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                    target, value = statement.targets[0], statement.value
                elif isinstance(statement, ast.AnnAssign):
                    target, value = statement.target, statement.value
                named = isinstance(target, ast.Name) and target.id == "supports_pp"
                if named and isinstance(value, ast.Constant) and flag is None:
                    flag = bool(value.value)
        if not flag:
            return False
        for _, node in chain:
            forward = next(
                (f for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name == "forward"),
                None,
            )
            if forward is not None:
                names = {a.arg for a in forward.args.args + forward.args.kwonlyargs}
                return "intermediate_tensors" in names or forward.args.kwarg is not None
        return False


def special_head_model_types(vllm: Path) -> list[str]:
    """Model types whose arch-config convertor reads the head counts its own way."""
    path = vllm / "transformers_utils/model_arch_config_convertor.py"
    if not path.is_file():
        return []
    tree = ast.parse(path.read_text("utf-8"))
    special = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            own = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
            if own & {"__init__", "get_total_num_attention_heads", "get_total_num_kv_heads"}:
                special.add(node.name)
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Name) and value.id in special:
                    found.append(str(key.value))
    return sorted(found)


def toml_array(name: str, items: list[str], width: int = 110) -> str:
    """`name = [...]`, wrapped at `width`."""
    lines, line = [f"{name} = ["], "   "
    for item in items:
        word = f' "{item}",'
        if len(line) + len(word) > width:
            lines.append(line)
            line = "   "
        line += word
    lines.append(line)
    return "\n".join(lines + ["]"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "vllm",
        type=Path,
        nargs="+",
        help="the vllm package directory of a release (several: "
        "a range of releases; an architecture is listed only if every one of them agrees)",
    )
    parser.add_argument("--toml", action="store_true", help="print as [lists] lines")
    parser.add_argument("--suffix", default="", help="appended to the list names (`no_pp_models_0_33`)")
    args = parser.parse_args()
    pp_sets, no_pp_sets, head_sets, unresolved = [], [], [], []
    for vllm in args.vllm:
        modules = Modules(vllm)
        pp_one, no_pp_one = set(), set()
        for arch, (module, cls) in sorted(registry(vllm).items()):
            found = modules.supports_pp(module, cls)
            if found is None:
                unresolved.append(arch)
            else:
                (pp_one if found else no_pp_one).add(arch)
        pp_sets.append(pp_one)
        no_pp_sets.append(no_pp_one)
        head_sets.append(set(special_head_model_types(vllm)))
    pp = sorted(set.intersection(*pp_sets))
    no_pp = sorted(set.intersection(*no_pp_sets))
    heads = sorted(set.union(*head_sets))  # read its own way in any release of the range: left unknown
    unresolved = sorted(set(unresolved))
    suffix = args.suffix
    if args.toml:
        print(toml_array(f"no_pp_models{suffix}", no_pp))
        print(toml_array(f"special_head_model_types{suffix}", heads))
    else:
        print(f"pp_models ({len(pp)}):", " ".join(pp))
        print(f"no_pp_models ({len(no_pp)}):", " ".join(no_pp))
        print(f"special_head_model_types ({len(heads)}):", " ".join(heads))
    if unresolved:
        print(f"unresolved (class not found in the source, left out): {' '.join(unresolved)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
