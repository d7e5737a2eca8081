"""Generate deps.toml's tables of import errors that a dependency at the wrong version produces in vLLM.

    python bench/families/deps_imports.py [--vllm-src /work/vllm-src] [--pkg-src /work/pkg-src] [--write]

Inputs:
  * the released vLLM sources, one folder per minor release (`<vllm-src>/<version>/vllm/...`, with the
    wheel's `vllm-<version>.dist-info/METADATA` beside it);
  * unpacked wheels of the dependencies, one folder per release (`<pkg-src>/<dist>-<version>/<package>/`;
    `pip download --no-deps <dist>==<version> -d DIR && unzip DIR/<wheel> -d <pkg-src>/<dist>-<version>`).

What it does:
  1. For every vLLM release, parses each module with `ast` and collects `from <package>[.sub] import X`
     that neither a `try:` nor an `if` encloses (a guarded or version-gated import never reaches the
     user), for the packages in PACKAGES.
  2. For every unpacked release of each package, decides which of those modules exist and which names
     each defines (definitions, assignments, imports, star-imports followed through `__all__`, and for
     lazy `__init__` files every identifier written as a string there: transformers' `_import_structure`,
     huggingface_hub's `_SUBMOD_ATTRS`; plus transformers' `define_import_structure` over models/).
  3. Reads each vLLM release's `Requires-Dist` pin of the package.
  4. Groups the (module, name) pairs that some release of the package lacks by their presence window
     among the checked releases (first present, first gone), and writes one pattern per window: the
     `cannot import name` / `No module named` / `module X has no attribute` errors for those names, a
     fix that names the releases that have them, and for each vLLM release range that imports them the
     newest checked release that both has them and satisfies that vLLM's pin (`pip install 'pkg==X'`).
  5. Writes one generic pattern per package (priority -1) for any other name, with the pins of every
     vLLM release range.
Names absent from every checked release (extraction limits, or vLLM code never reached) are dropped and
counted in the block's header. Without --write the block is printed.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

TARGET = PATTERNS / "deps.toml"
DEBUG: list[tuple] = []
NAME = "deps_imports"

# import name -> (pip distribution, short id, what vLLM uses it for, name tables?, extra modules). Name tables
# need complete unpacked releases; torch is read from partial extractions (a few files of each wheel), so it
# gets the generic pattern only. Extra modules: names removed from them between checked releases are listed
# whoever imports them (libraries such as sentence-transformers or peft, plugins, a model's remote code).
PACKAGES = {
    "transformers": ("transformers", "transformers", "model configs, processors and tokenizers", True,
                     ["transformers", "transformers.utils", "transformers.utils.import_utils",
                      "transformers.modeling_utils", "transformers.pytorch_utils"]),
    "huggingface_hub": ("huggingface-hub", "hf-hub", "downloads from the Hugging Face Hub and the local cache", True,
                        ["huggingface_hub"]),
    "tokenizers": ("tokenizers", "tokenizers", "fast tokenizers", True, []),
    "safetensors": ("safetensors", "safetensors", "reading weight files", True, []),
    "pydantic": ("pydantic", "pydantic", "its configuration classes and the OpenAI-compatible API's request models", True, []),
    "openai": ("openai", "openai", "the request and response types of the OpenAI-compatible server", True, []),
    "mistral_common": ("mistral-common", "mistral-common", "Mistral-format tokenizers and chat requests", True, []),
    "xgrammar": ("xgrammar", "xgrammar", "structured output (guided decoding)", True, []),
    "fastapi": ("fastapi", "fastapi", "the HTTP server", True, []),
    "starlette": ("starlette", "starlette", "the HTTP server (under FastAPI)", True, []),
    "triton": ("triton", "triton", "its Triton kernels (triton comes with torch)", True, []),
    "torch": ("torch", "torch", "everything on the GPU", False, []),
}

# Names that a static reading picks up but nobody imports from a package (stdlib re-exports, loop variables).
_NOISE = set(dir(__import__("typing"))) | set(dir(__import__("builtins"))) | {
    "importlib", "types", "sys", "os", "re", "warnings", "logging", "version", "Fast", "getattr_factory",
    "torch_version", "Version", "Path", "dataclass", "field", "partial", "wraps", "contextmanager", "lru_cache",
    "OrderedDict", "defaultdict", "Enum", "DTensor", "Tensor", "ThreadPoolExecutor", "replace", "export",
}


def vkey(version: str) -> Version:
    return Version(version)


# ---- 1. what vLLM imports


def _unconditional(tree: ast.AST) -> list[ast.ImportFrom]:
    """`from x import y` statements that run whenever their module or function does: not inside a `try:`
    (vLLM guards optional imports with ImportError or Exception) nor an `if` (version gates such as
    `if is_transformers_version(">=4.57")`, TYPE_CHECKING)."""
    found: list[ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Try, ast.If, ast.IfExp)) or type(child).__name__ == "TryStar":
                continue
            if isinstance(child, ast.ImportFrom):
                found.append(child)
            visit(child)

    visit(tree)
    return found


_MENTIONS = re.compile(r"^\s*from (?:" + "|".join(PACKAGES) + r")[.\s]", re.M)


def vllm_imports(vllm_src: Path) -> dict[str, dict[tuple[str, str], set[str]]]:
    """package -> (module, name) -> vLLM releases importing it (unguarded)."""
    out: dict[str, dict[tuple[str, str], set[str]]] = {p: defaultdict(set) for p in PACKAGES}
    for vdir in sorted(vllm_src.glob("0.*"), key=lambda p: vkey(p.name)):
        for path in (vdir / "vllm").rglob("*.py"):
            text = path.read_text(errors="replace")
            if not _MENTIONS.search(text):
                continue
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            for node in _unconditional(tree):
                if node.level or not node.module:
                    continue
                top = node.module.split(".")[0]
                if top in out:
                    for alias in node.names:
                        if alias.name != "*":
                            out[top][(node.module, alias.name)].add(vdir.name)
    return out


def pins(vllm_src: Path, dist: str) -> dict[str, str | None]:
    """vLLM release -> its Requires-Dist specifier for `dist` ('' unpinned, None not required)."""
    want = re.sub(r"[-_.]+", "-", dist).lower()
    out: dict[str, str | None] = {}
    for vdir in sorted(vllm_src.glob("0.*"), key=lambda p: vkey(p.name)):
        spec: str | None = None
        for meta in vdir.glob("vllm-*.dist-info/METADATA"):
            for line in meta.read_text(errors="replace").splitlines():
                if not line.startswith("Requires-Dist:"):
                    continue
                try:
                    req = Requirement(line.split(":", 1)[1].strip())
                except Exception:
                    continue
                if re.sub(r"[-_.]+", "-", req.name).lower() != want:
                    continue
                if req.marker is not None and "extra" in str(req.marker):
                    continue
                if req.marker is not None and "s390x" in str(req.marker) and "!=" not in str(req.marker):
                    continue  # the s390x-only pin (protobuf) is not the general one
                spec = str(req.specifier)
        out[vdir.name] = spec
    return out


# ---- 2. what each release of a package defines

_IDENT = re.compile(r"[A-Za-z_]\w*\Z")
_ALL = re.compile(r"^__all__\s*=\s*[\[(](.*?)[\])]", re.S | re.M)


class PackageRelease:
    def __init__(self, root: Path, package: str, version: str) -> None:
        self.root, self.package, self.version = root, package, version
        self._names: dict[str, set[str] | None] = {}
        self._aliases: dict[str, str] | None = None

    def aliases(self) -> dict[str, str]:
        """Legacy module paths a package redirects at import time (transformers 5's `_create_module_alias`)."""
        if self._aliases is None:
            self._aliases = {}
            init = self.root / self.package / "__init__.py"
            text = init.read_text(errors="replace") if init.exists() else ""
            for alias, target in re.findall(r'_create_module_alias\(f"\{__name__\}\.([\w.]+)", "\.([\w.]+)"\)', text):
                self._aliases[f"{self.package}.{alias}"] = f"{self.package}.{target}"
            legacy = re.search(r"_LEGACY_MODULE_ALIASES = \{(.*?)\}", text, re.S)
            for alias, target in re.findall(r'"(\w+)": "(\w+)"', legacy[1] if legacy else ""):
                self._aliases[f"{self.package}.{alias}"] = f"{self.package}.{target}"
            if ('_create_module_alias(f"{__name__}.models.{_model}.{_module}_fast"' in text
                    or "_LEGACY_FAST_IMAGE_PROCESSOR_MODULE" in text):
                for proc in (self.root / self.package / "models").rglob("image_processing_*.py"):
                    rel = proc.relative_to(self.root).with_suffix("")
                    target = ".".join(rel.parts)
                    self._aliases[target + "_fast"] = target
        return self._aliases

    def module_files(self, module: str) -> list[Path]:
        module = self.aliases().get(module, module)
        base = self.root / Path(*module.split("."))
        return [p for p in (base.with_suffix(".py"), base.with_suffix(".pyi"), base / "__init__.py", base / "__init__.pyi") if p.exists()]

    def module_exists(self, module: str) -> bool:
        module = self.aliases().get(module, module)
        return bool(self.module_files(module)) or (self.root / Path(*module.split("."))).is_dir()

    def first_missing(self, module: str) -> str | None:
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            sub = ".".join(parts[:i])
            if not self.module_exists(sub):
                return sub
        return None

    def names(self, module: str, depth: int = 0) -> set[str]:
        if module in self._names:
            return self._names[module] or set()
        self._names[module] = None  # cycle guard
        found: set[str] = set()
        files = self.module_files(module)
        is_pkg = any(p.name.startswith("__init__") for p in files)
        for path in files:
            text = path.read_text(errors="replace")
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            found |= self._file_names(tree, module, is_pkg, depth)
            lazy_init = is_pkg and path.name.startswith("__init__") and (
                "_LazyModule" in text or "_SUBMOD_ATTRS" in text or "lazy" in text.lower())
            if lazy_init or re.search(r"^def __getattr__\(", text, re.M):
                # Lazy modules name their exports as strings (transformers' _import_structure, huggingface_hub's
                # _SUBMOD_ATTRS, a module-level __getattr__ comparing names: mistral_common's moved classes).
                for node in ast.walk(tree):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _IDENT.match(node.value):
                        found.add(node.value)
            if is_pkg and "define_import_structure(Path(__file__).parent / \"models\"" in text:
                found |= self._models_all(self.root / self.package / "models")
            elif is_pkg and "define_import_structure(_file)" in text:  # every sibling file's __all__
                found |= self._models_all(path.parent, recursive=False)
        if is_pkg:  # submodules are attributes of their package once imported
            base = self.root / Path(*module.split("."))
            found |= {p.stem for p in base.glob("*.py") if p.stem != "__init__"}
            found |= {p.name for p in base.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
        self._names[module] = found
        return found

    def has(self, module: str, name: str) -> bool:
        names = self.names(module)
        if name in names:
            return True
        # transformers 5 resolves the old `*TokenizerFast` / `*ImageProcessorFast` names to the merged class
        # in _LazyModule.__getattr__ (utils/import_utils.py, "V5: ... backward compatibility").
        if self.package == "transformers" and name.endswith("Fast") and name[:-4] in names and self._fast_fallback():
            return True
        # the image-processor aliases
        return module in self.aliases() and name.endswith("Fast") and name[:-4] in names

    def _fast_fallback(self) -> bool:
        path = self.root / "transformers" / "utils" / "import_utils.py"
        return path.exists() and 'name.endswith("TokenizerFast")' in path.read_text(errors="replace")

    def _models_all(self, folder: Path, recursive: bool = True) -> set[str]:
        found: set[str] = set()
        for path in (folder.rglob("*.py") if recursive else folder.glob("*.py")):
            declared = _ALL.search(path.read_text(errors="replace"))
            if declared:
                found |= set(re.findall(r"[\"']([A-Za-z_]\w*)[\"']", declared[1]))
        return found

    def _file_names(self, tree: ast.Module, module: str, is_pkg: bool, depth: int) -> set[str]:
        found: set[str] = set()

        def visit(stmts: list[ast.stmt]) -> None:
            for node in stmts:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        for sub in ast.walk(target):
                            if isinstance(sub, ast.Name):
                                found.add(sub.id)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        found.add((alias.asname or alias.name).split(".")[0])
                elif isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.name == "*":
                            target = _resolve(module, is_pkg, node.level, node.module)
                            if target and target.split(".")[0] == self.package and depth < 6:
                                star = self._star(target, depth + 1)
                                found.update(star)
                        else:
                            found.add(alias.asname or alias.name)
                for attr in ("body", "orelse", "finalbody"):
                    if isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) and hasattr(node, attr):
                        visit(getattr(node, attr))
                if isinstance(node, ast.Try):
                    for handler in node.handlers:
                        visit(handler.body)

        visit(tree.body)
        return found

    def _star(self, module: str, depth: int) -> set[str]:
        for path in self.module_files(module):
            try:
                tree = ast.parse(path.read_text(errors="replace"))
            except SyntaxError:
                continue
            declared = _all_of(tree)
            if declared is not None:
                return declared
        return {n for n in self.names(module, depth) if not n.startswith("_")}


def _all_of(tree: ast.Module) -> set[str] | None:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, (ast.List, ast.Tuple))
        ):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return None


def _resolve(module: str, is_pkg: bool, level: int, target: str | None) -> str | None:
    if level == 0:
        return target
    parts = module.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def releases(pkg_src: Path, package: str, dist: str) -> list[PackageRelease]:
    out = []
    prefixes = {dist, dist.replace("-", "_"), package}
    for d in pkg_src.iterdir():
        m = re.fullmatch(r"(.+)-(\d[\w.]*)", d.name)
        if not m or m[1] not in prefixes or not any((d / package / f).exists() for f in ("__init__.py", "__init__.pyi")):
            continue
        try:
            Version(m[2])
        except Exception:
            continue
        out.append(PackageRelease(d, package, m[2]))
    return sorted(out, key=lambda r: vkey(r.version))


# ---- 3./4. windows and patterns


@dataclass
class Window:
    first: int  # index of the first checked release that has it
    last: int  # index of the last one
    names: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # name -> modules
    modules: set[str] = field(default_factory=set)  # modules missing as modules (No module named)
    importers: set[str] = field(default_factory=set)  # vLLM releases


def release_ranges(versions: list[str], chosen: set[str]) -> list[tuple[str, str]]:
    """Runs of consecutive releases in `chosen` as PEP 440 ranges on minor versions."""
    out = []
    run: list[str] = []
    for v in versions + [None]:
        if v is not None and v in chosen:
            run.append(v)
            continue
        if run:
            lo = minor(run[0])
            nxt = versions[versions.index(run[-1]) + 1] if versions.index(run[-1]) + 1 < len(versions) else None
            if run[0] == versions[0] and nxt:
                spec = f"<{minor(nxt)}"
            elif nxt:
                spec = f">={lo},<{minor(nxt)}"
            else:
                spec = f">={lo}"
            out.append((spec, f"{run[0]}" if len(run) == 1 else f"{run[0]}-{run[-1]}"))
            run = []
    return out


def span(ranges: list[tuple[str, str]]) -> str:
    """One range covering runs of releases (a name vLLM imported, dropped and imported again): from the first
    run's lower bound to the last run's upper bound."""
    lows = [p for p in ranges[0][0].split(",") if p.startswith(">=")]
    highs = [p for p in ranges[-1][0].split(",") if p.startswith("<")]
    return ",".join(lows + highs) or "*"


def minor(v: str) -> str:
    return ".".join(v.split(".")[:2])


def pin_steps(dist: str, pinned: dict[str, str | None], versions: list[str], rels=()) -> list[str]:
    """One step per run of vLLM releases with the same pin, with the newest checked release inside it."""
    groups: dict[str | None, set[str]] = defaultdict(set)
    for v in versions:
        groups[pinned[v]].add(v)
    steps = []
    for spec, members in groups.items():
        fits = [r.version for r in rels if spec and Version(r.version) in SpecifierSet(spec)]
        example = f" (e.g. `pip install '{dist}=={fits[-1]}'`, a release checked to fit)" if fits else ""
        for rng, words in release_ranges(versions, members):
            if spec is None:
                steps.append(f"[{rng}] vLLM {words} does not pin {dist} itself; another requirement brings it (torch pins triton, transformers pins huggingface-hub and tokenizers): `pip install --force-reinstall vllm==<your version>` restores the set, and `python -m pip check` names the conflict.")
            elif spec == "":
                steps.append(f"[{rng}] vLLM {words} requires {dist} without a version bound: install the release current when that vLLM came out, or reinstall vLLM's set (`pip install --force-reinstall vllm==<your version>`).")
            else:
                steps.append(f"[{rng}] vLLM {words} pins `{dist}{spec}`: `pip install '{dist}{spec}'`{example}.")
    steps.sort(key=lambda s: Version("0") if s.startswith("[<") else Version(re.search(r"(\d+\.\d+)", s)[1]))
    return steps


def alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


def build(vllm_src: Path, pkg_src: Path) -> tuple[str, list[str]]:
    imports = vllm_imports(vllm_src)
    vllm_versions = sorted((p.name for p in vllm_src.glob("0.*")), key=vkey)
    blocks: list[str] = []
    notes: list[str] = []
    for package, (dist, short, role, table, extra) in PACKAGES.items():
        rels = releases(pkg_src, package, dist) if table else []
        pinned = pins(vllm_src, dist)
        if table and len(rels) < 2:
            notes.append(f"{package}: fewer than two unpacked releases, no name table")
        windows: dict[tuple[int, int], Window] = {}
        dropped = filled = 0
        for (module, name), importers in sorted(imports[package].items()):
            present = []
            missing_module: dict[int, str] = {}
            for i, rel in enumerate(rels):
                gone = rel.first_missing(module)
                if gone is not None:
                    present.append(False)
                    missing_module[i] = gone
                else:
                    present.append(rel.has(module, name))
            if not any(present):
                dropped += 1
                continue
            # A name missing between two releases that have it is taken for a miss of the static reading
            # (a name built at run time), not a removal and re-addition: fill the gap.
            lo_i, hi_i = present.index(True), len(present) - 1 - present[::-1].index(True)
            gaps = [i for i in range(lo_i, hi_i + 1) if not present[i]]
            if gaps:
                filled += 1
                for i in gaps:
                    present[i] = True
                    missing_module.pop(i, None)
            if all(present):
                continue
            DEBUG.append((package, module, name, "".join("+" if x else "-" for x in present), sorted(importers, key=vkey)))
            first = present.index(True)
            last = len(present) - 1 - present[::-1].index(True)
            w = windows.setdefault((first, last), Window(first, last))
            w.importers |= importers
            missing_mods = {missing_module[i] for i in missing_module}
            if missing_mods:
                w.modules |= missing_mods
            if any(not present[i] and i not in missing_module for i in range(len(rels))) or not missing_mods:
                w.names[name].add(module)
            elif missing_mods:
                w.names[name].add(module)  # `from pkg.sub import name` fails on `No module named` only
        settle_modules(windows, rels)
        gone_windows: dict[tuple[int, int], Window] = {}
        seen = {name for (_m, name) in imports[package]}
        for module in extra:
            for i in range(len(rels) - 1):
                if not rels[i].module_exists(module):
                    continue
                for name in sorted(rels[i].names(module)):
                    if name in seen or name.startswith("_") or name in _NOISE:
                        continue
                    if rels[i].module_exists(f"{module}.{name}"):
                        continue  # a submodule: `No module named`, and vLLM users do not import those
                    later = [r.module_exists(module) and r.has(module, name) for r in rels[i + 1:]]
                    if any(later) or rels[i + 1].first_missing(module) is not None:
                        continue  # still there (or the whole module went: not a name removal)
                    seen.add(name)
                    w = gone_windows.setdefault((0, i), Window(0, i))  # grouped by the release that removed it
                    w.names[name].add(module)
        notes.append(f"{package}: {len(rels)} releases ({', '.join(r.version for r in rels)}), "
                     f"{len(imports[package])} names vLLM imports unconditionally, {sum(len(w.names) for w in windows.values())} "
                     f"of them in {len(windows)} windows, {dropped} found in no release, {filled} with a gap filled; "
                     f"{sum(len(w.names) for w in gone_windows.values())} other names removed from {', '.join(extra) or '-'}")
        steps_pins = pin_steps(dist, pinned, vllm_versions, rels)
        counts: dict[str, int] = defaultdict(int)
        for w in windows.values():
            for name in w.names:
                counts[name] += 1
        shared = frozenset(n for n, c in counts.items() if c > 1)
        for _key, w in sorted(windows.items()):
            blocks.append(pattern_toml(window_pattern(package, dist, short, role, rels, w, pinned, vllm_versions, shared)))
        for _key, w in sorted(gone_windows.items()):
            blocks.append(pattern_toml(gone_pattern(package, dist, short, role, rels, w, steps_pins)))
        blocks.append(pattern_toml(generic_pattern(package, dist, short, role, rels, steps_pins)))
    return "".join(b + "\n" for b in blocks), notes


def settle_modules(windows: dict[tuple[int, int], Window], rels: list) -> None:
    """A module missing is collected once per name imported from it, and those names' windows differ (a
    name added after its module): keep each module only in the window of the module's own presence (or
    the widest window holding it), so `No module named X` is claimed by one pattern."""
    holders: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for key, w in windows.items():
        for module in w.modules:
            holders[module].append(key)
    for module, keys in holders.items():
        if len(keys) < 2:
            continue
        present = [r.module_exists(module) for r in rels]
        own = (present.index(True), len(present) - 1 - present[::-1].index(True)) if any(present) else None
        keep = own if own in keys else max(keys, key=lambda k: (k[1] - k[0], -k[0]))
        for key in keys:
            if key != keep:
                windows[key].modules.discard(module)


def window_pattern(package, dist, short, role, rels, w: Window, pinned, vllm_versions, shared: frozenset[str] = frozenset()) -> dict:
    have = [r.version for r in rels[w.first : w.last + 1]]
    lo, hi = rels[w.first].version, rels[w.last].version
    before = rels[w.first - 1].version if w.first > 0 else None
    after = rels[w.last + 1].version if w.last + 1 < len(rels) else None
    if before and after:
        when, slug = f"exists from {package} {lo} (not in {before}) to {hi} (gone in {after})", f"{lo}-to-{hi}"
        need = f">={lo},<{after}"
    elif before:
        when, slug = f"first appears in {package} {lo} (not in {before})", f"{lo}"
        need = f">={lo}"
    else:
        when, slug = f"was removed from {package} in {after} (last in {hi})", f"before-{after}"
        need = f"<{after}"
    names = sorted(w.names)
    modules = sorted(w.modules)
    mod_rx = re.escape(package) + r"(?:\.[\w.]+)?"
    parts = []
    # A name in more than one window (the same name in two modules, each with its own presence) is only
    # ours together with its module.
    free = [n for n in names if n not in shared]
    if free:
        nm = alternation(free)
        parts.append(rf"cannot import name '(?P<name>{nm})' from '(?P<module>{mod_rx})'")
        parts.append(rf"module '?(?P<module>{mod_rx})'? has no attribute '?(?P<name>{nm})\b'?")
    for name in (n for n in names if n in shared):
        mods = alternation(sorted(w.names[name]))
        parts.append(rf"cannot import name '(?P<name>{re.escape(name)})' from '(?P<module>{mods})'")
    if modules:
        parts.append(rf"No module named '(?P<module>{alternation(modules)})'")
    match = "|".join(parts)
    # pip install form per vLLM release range: the newest checked release in the window that fits the pin
    groups: dict[str, set[str]] = defaultdict(set)
    for v in vllm_versions:
        if v not in w.importers:
            continue
        spec = SpecifierSet(pinned.get(v) or "")
        fits = [h for h in have if Version(h) in spec]
        pick = fits[-1] if fits else None
        groups[f"{pinned.get(v) or ''}|{pick or ''}"].add(v)
    steps = []
    for key, members in groups.items():
        spec, pick = key.split("|")
        for rng, words in release_ranges(vllm_versions, members):
            pin = f"pins `{dist}{spec}`" if spec else f"does not pin {dist}"
            if pick:
                steps.append(f"[{rng}] vLLM {words} imports it and {pin}: `pip install '{dist}=={pick}'` (a checked release that has it and fits the pin).")
            else:
                steps.append(f"[{rng}] vLLM {words} imports it and {pin}, but no checked release in that pin has it: install the vLLM release's own dependency set (`pip install --force-reinstall vllm==<your version>`).")
    steps.sort(key=lambda s: Version("0") if s.startswith("[<") else Version(re.search(r"(\d+\.\d+)", s)[1]))
    importers = release_ranges(vllm_versions, w.importers)
    words = ", ".join(x[1] for x in importers)
    shown = ", ".join(names[:6] + [m for m in modules[:3]]) + (" ..." if len(names) > 6 or len(modules) > 3 else "")
    direction = "older" if before else "newer"
    title = f"The installed {package} is {direction} than the code importing {{name|the module}} expects"
    if before and after:
        title = f"The installed {package} is outside the releases that have {{name|the module}}"
    explanation = (
        f"vLLM ({words}) imports names from {package}, which it uses for {role}, that only some {package} releases have: "
        f"this group ({shown}) {when}, among the releases checked ({', '.join(r.version for r in rels)}). "
        f"The installed {package} is outside that range, so the import fails while vLLM starts: {package} was upgraded or "
        f"downgraded after vLLM was installed (by `pip install` of another package, a requirements file, or an image layer), "
        f"or vLLM was installed with `--no-deps`."
    )
    summary = f"Install a {package} that has {{name|this module}} ({dist}{need} among the releases checked) and fits your vLLM release's pin; the steps give `pip install '{dist}==<release>'` per vLLM release."
    steps += [
        "Check what is installed: `python -m pip show " + dist + " vllm` and `python -m pip check`.",
        f"Or move vLLM instead: a vLLM release whose pin of {dist} includes the installed version (`pip install vllm==<release>` brings its pinned dependencies).",
    ]
    example_name = names[0] if names else None
    match_examples = []
    if example_name:
        m0 = sorted(w.names[example_name])[0]
        match_examples.append(f"ImportError: cannot import name '{example_name}' from '{m0}' ({_path(rels, m0)})")
        last_name = names[-1]
        m1 = sorted(w.names[last_name])[0]
        match_examples.append(
            "Traceback (most recent call last):\n"
            f"  File \"/opt/venv/lib/python3.11/site-packages/vllm/transformers_utils/config.py\", line 12, in <module>\n"
            f"    from {m1} import {last_name}\n"
            f"ImportError: cannot import name '{last_name}' from '{m1}' ({_path(rels, m1)})\n"
        )
    if modules:
        match_examples.append(f"ModuleNotFoundError: No module named '{modules[0]}'")
    no_match = [
        f"ImportError: cannot import name 'NotAName{short.title().replace('-', '')}' from '{package}' (/opt/venv/lib/python3.11/site-packages/{package}/__init__.py)",
    ]
    if example_name:
        no_match.append(f"ImportError: cannot import name '{example_name}' from 'my_{package}_helpers' (/srv/app/my_{package}_helpers.py)")
    return {
        "comment": f"{package}: {len(names)} name(s), {len(modules)} module(s) that {when}; imported by vLLM {words}.",
        "id": f"deps.{short}-{'needs' if before else 'removed'}-{slug}".replace("_", "-").lower(),
        "title": title,
        "severity": "error",
        "where": "exception",
        "exception": ["ImportError", "ModuleNotFoundError", "AttributeError"],
        "match": match,
        "explanation": explanation,
        "summary": summary,
        "steps": steps,
        "file": f"{package} (import system); importers under vllm/",
        "function": "module import",
        "versions": span(importers),
        "checked": f"generated by bench/families/deps_imports.py from the vLLM 0.4.3-0.33.0 sources (unguarded `from {package}... import`) and the unpacked {package} wheels {', '.join(r.version for r in rels)}; pins from each release's METADATA Requires-Dist",
        "match_examples": match_examples,
        "no_match_examples": no_match,
    }


def _path(rels, module: str) -> str:
    """Where the module's file sits in site-packages (a package's __init__.py or a plain module)."""
    for rel in reversed(rels):
        files = rel.module_files(module)
        if files:
            tail = "/__init__.py" if any(f.name.startswith("__init__") for f in files) else ".py"
            return f"/opt/venv/lib/python3.11/site-packages/{module.replace('.', '/')}{tail}"
    return f"/opt/venv/lib/python3.11/site-packages/{module.replace('.', '/')}.py"


def gone_pattern(package, dist, short, role, rels, w: Window, steps_pins) -> dict:
    """Names other code imports that a package removed (not imported by vLLM itself)."""
    hi = rels[w.last].version
    after = rels[w.last + 1].version
    names = sorted(w.names)
    modules = sorted({m for ms in w.names.values() for m in ms})
    nm = alternation(names)
    mod_rx = alternation(modules)
    match = (rf"cannot import name '(?P<name>{nm})' from '(?P<module>{mod_rx})'"
             rf"|(?<!initialized )module '?(?P<module>{mod_rx})'? has no attribute '?(?P<name>{nm})\b'?")
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    e0, e1 = names[0], names[-1]
    m0, m1 = sorted(w.names[e0])[0], sorted(w.names[e1])[0]
    return {
        "comment": f"{package}: {len(names)} public name(s) of {', '.join(modules)} last present in {hi}, gone in {after} (not imported by vLLM itself).",
        "id": f"deps.{short}-gone-in-{after}".replace("_", "-").lower(),
        "title": f"{{name}} was removed from {package} in {after}: the importing code needs {package} <{after}",
        "severity": "error",
        "where": "exception",
        "exception": ["ImportError", "AttributeError"],
        "match": match,
        "explanation": (
            f"{{name}} is no longer in {{module}}: {package} {after} removed it ({hi} is the last checked release that has it; "
            f"this group: {shown}). vLLM does not import it; the importer is other code in the same process, written for an "
            f"older {package}: a library (sentence-transformers, peft, diffusers, an older vLLM plugin), a model's remote code "
            f"(`trust_remote_code`), or your own script. The installed {package} is newer than that code, often because a vLLM "
            f"upgrade brought a newer {package} with it."
        ),
        "summary": f"Update the code that imports {{name}} to a release made for {package} {after}+, or, if your vLLM release's pin allows it, install `{dist}=={hi}`.",
        "steps": [
            "Find the importer in the traceback (the frame just above the error): a site-packages library, `transformers_modules/...` (remote code), or your own file.",
            "Upgrade that library (`pip install -U <library>`), or for remote code use a newer revision of the model repository (`--revision`) or a model that vLLM supports natively.",
            f"Or keep {package} below {after}: `pip install '{dist}=={hi}'`, where your vLLM release's pin allows it:",
        ] + steps_pins,
        "file": f"{package} (import system)",
        "function": "module import",
        "versions": "*",
        "checked": f"generated by bench/families/deps_imports.py: public names of {', '.join(modules)} in the unpacked {package} wheels {', '.join(r.version for r in rels)}; present in {hi}, absent from every later one",
        "match_examples": [
            f"ImportError: cannot import name '{e0}' from '{m0}' ({_path(rels[: w.last + 1], m0)})",
            "Traceback (most recent call last):\n"
            f"  File \"/root/.cache/huggingface/modules/transformers_modules/acme/model/modeling_acme.py\", line 9, in <module>\n"
            f"    from {m1} import {e1}\n"
            f"ImportError: cannot import name '{e1}' from '{m1}' ({_path(rels, m1)})\n",
        ],
        "no_match_examples": [
            f"ImportError: cannot import name '{e0}' from 'my_{package}_compat' (/srv/app/my_{package}_compat.py)",
            f"ImportError: cannot import name '{e0}Extra' from '{m0}' ({_path(rels, m0)})",
        ],
    }


def generic_pattern(package, dist, short, role, rels, steps_pins) -> dict:
    mod_rx = re.escape(package) + r"(?:\.[\w.]+)?"
    match = (rf"cannot import name '(?P<name>\w+)' from '(?P<module>{mod_rx})'"
             rf"|(?<!initialized )module '?(?P<module>{mod_rx})'? has no attribute '?(?P<name>[A-Za-z]\w*)\b'?")
    checked = f"CPython 3.11 import wording; pins from the vLLM 0.4.3-0.33.0 METADATA Requires-Dist; {package} releases unpacked: {', '.join(r.version for r in rels) or 'none'}"
    return {
        "comment": f"Any other name missing from {package} (priority -1: a specific pattern, in this file or another family, wins).",
        "id": f"deps.{short}-cannot-import",
        "title": f"The installed {package} has no {{name}}: its version does not fit the code importing it",
        "severity": "error",
        "priority": -1,
        "where": "exception",
        "exception": ["ImportError", "AttributeError"],
        "match": match,
        "explanation": (
            f"Code imports {{name}} from {{module}}, and the installed {package} does not define it. {package} adds, moves and "
            f"removes public names between releases, and vLLM uses it for {role}; each vLLM release is made for the "
            f"{dist} versions its requirements allow. When the importer is vLLM, the installed {package} is outside that "
            f"range (changed after vLLM was installed, or vLLM installed with `--no-deps`); when it is a plugin, a model's "
            f"remote code or your own script, that code was written for another {package} release."
        ),
        "summary": f"Install the {dist} release your vLLM pins (the steps give the pin of each vLLM release): `pip install '{dist}<pin>'`, then `python -m pip check`.",
        "steps": steps_pins + [
            f"See which file imports {{name}} (the frame above the error): a vLLM file means the pin above applies; a plugin or remote-code file means that code wants another {package} release.",
            f"`python -m pip show {dist}` shows the installed version; `pip install --force-reinstall vllm==<your version>` restores every pinned dependency at once.",
        ],
        "file": f"{package} (import system)",
        "function": "module import",
        "versions": "*",
        "checked": checked,
        "match_examples": [
            f"ImportError: cannot import name 'DoesNotExistAnywhere' from '{package}' (/opt/venv/lib/python3.11/site-packages/{package}/__init__.py)",
            f"AttributeError: module '{package}' has no attribute 'DoesNotExistAnywhere'",
        ],
        "no_match_examples": [
            f"ImportError: cannot import name 'DoesNotExistAnywhere' from partially initialized module '{package}' (most likely due to a circular import) (/srv/app/{package}.py)",
            f"ImportError: cannot import name 'DoesNotExistAnywhere' from '{package}x' (/opt/venv/lib/python3.11/site-packages/{package}x/__init__.py)",
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vllm-src", type=Path, default=Path("/work/vllm-src"))
    ap.add_argument("--pkg-src", type=Path, default=Path("/work/pkg-src/deps"))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--debug", action="store_true", help="print every name some release lacks, with its presence")
    args = ap.parse_args()
    body, notes = build(args.vllm_src, args.pkg_src)
    if args.debug:
        for row in DEBUG:
            print(*row, file=sys.stderr)
    header = "".join(f"# {n}\n" for n in notes) + "\n"
    if args.write:
        splice(TARGET, NAME, header + body)
        print("\n".join(notes))
    else:
        sys.stdout.write(header + body)


if __name__ == "__main__":
    main()
