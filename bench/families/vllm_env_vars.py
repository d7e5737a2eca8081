"""Generate env.toml's patterns for VLLM_* environment variables that a release no longer knows.

    python bench/families/vllm_env_vars.py [/work/vllm-src]

From 0.17 vLLM warns `Unknown vLLM environment variable detected: %s` (vllm/envs.py validate_environ,
later vllm/platforms/interface.py; a ValueError with --fail-on-environ-validation) for every VLLM_*
variable that is not a key of `environment_variables` in vllm/envs.py. Such a variable has no effect,
which is what users need to hear: the override they set did nothing. This script reads the keys of
`environment_variables` in every release, and for each variable that some release had and the newest
one lacks it records the last release that had it. Variables whose removal came with a replacement
get their own pattern, naming it; the replacement is read from the releases' own deprecation texts:
  * `deprecated_env("VAR", "vX", "<replacement text>", ...)` in envs.py,
  * `_set_from_env_if_set("<field>", "VAR")` in config/attention.py (-> `--attention-config.<field>`,
    and `--attention-backend` for the backend),
  * string literals that name the variable, say "deprecated" and "use ... instead".
The others are grouped by the release that dropped them, one pattern per release.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toml import PATTERNS, pattern_toml, splice  # noqa: E402

ROOT = Path("/work/vllm-src")
FIRST_WARNING = "0.17.1"  # first inspected release with the unknown-variable warning
# Removed with the V0 engine; no replacement, but the reason must be said.
MANUAL = {
    "VLLM_USE_V1": "vLLM has only the V1 engine since 0.11; the variable does nothing and V0 cannot be selected any more",
}


def version_key(v: str) -> list[object]:
    return [int(x) if x.isdigit() else x for x in re.split(r"[.]|post", v) if x]


def env_keys(envs_py: Path) -> set[str]:
    text = envs_py.read_text()
    start = text.find("environment_variables")
    return set(re.findall(r'^\s*"(VLLM_\w+)"\s*:', text[start:], re.M))


def strings(tree: ast.AST) -> list[str]:
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    return out


def replacements(root: Path, versions: list[str], wanted: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for v in versions:
        vdir = root / v / "vllm"
        envs_text = (vdir / "envs.py").read_text()
        for var, _removal, repl in re.findall(
            r'deprecated_env\(\s*"(VLLM_\w+)",\s*"([^"]+)",\s*((?:f?"[^"]*"\s*)+),', envs_text
        ):
            if var in wanted:
                found.setdefault(var, " ".join(re.findall(r'"([^"]*)"', repl)).replace("  ", " ").strip())
        attention = vdir / "config" / "attention.py"
        if attention.exists():
            for field, var in re.findall(r'_set_from_env_if_set\(\s*"(\w+)",\s*"(VLLM_\w+)"', attention.read_text()):
                if var in wanted:
                    flag = "--attention-backend <NAME>" if field == "backend" else f"--attention-config.{field} <value>"
                    found.setdefault(var, f"Use {flag} instead.")
    # Free-text deprecation notes (arg_utils, config): a literal naming the variable, "deprecated", "use".
    for v in versions:
        for path in (root / v / "vllm").rglob("*.py"):
            text = path.read_text(errors="replace")
            if "deprecated" not in text:
                continue
            hits = [var for var in wanted - found.keys() if var in text]
            if not hits:
                continue
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                joined = " ".join(strings(node))
                for var in hits:
                    if var in joined and "deprecated" in joined and var not in found:
                        m = re.search(r"(?:[Pp]lease )?[Uu]se (?:the )?(`?--[\w.-]+(?:[ =][^`.\s]+)?`?[^.]*?) instead", joined)
                        if m:
                            found[var] = f"Use {m[1].strip()} instead."
    return found


def build(root: Path) -> tuple[str, int]:
    versions = sorted((p.name for p in root.iterdir() if (p / "vllm" / "envs.py").exists()), key=version_key)
    keys = {v: env_keys(root / v / "vllm" / "envs.py") for v in versions}
    newest = versions[-1]
    last_seen: dict[str, str] = {}
    for v in versions:
        for var in keys[v]:
            last_seen[var] = v
    removed = {var: last for var, last in last_seen.items() if var not in keys[newest]}
    nxt = {versions[i]: versions[i + 1] for i in range(len(versions) - 1)}
    repl = replacements(root, versions, set(removed))
    repl.update({k: v for k, v in MANUAL.items() if k in removed})
    repl = {k: re.sub(r"%[ds]", "<value>", v) for k, v in repl.items()}
    blocks: list[str] = []
    line = "(APIServer pid=4021) WARNING 11-02 09:14:22 [interface.py:1470] Unknown vLLM environment variable detected: {var}"
    for var in sorted(repl):
        last = removed[var]
        gone = nxt[last]
        slug = var.lower().replace("_", "-")
        blocks.append(
            pattern_toml(
                {
                    "comment": f"{var}: last in {last}, gone in {gone}",
                    "id": f"env.removed-{slug}",
                    "title": f"{var} was removed from vLLM ({'.'.join(gone.split('.')[:2])}) and is ignored",
                    "severity": "warning",
                    "where": "any",
                    "levels": ["WARNING"],
                    "match": rf"Unknown vLLM environment variable detected: {var}\s*$",
                    "explanation": (
                        f"vLLM checks every VLLM_* variable in its environment against the ones it reads. {var} is not one of "
                        f"them any more: the last release inspected that read it is {last}, it is gone in {gone}. So setting it "
                        f"changed nothing in this server. The removal note of the variable says: {repl[var]}"
                    ),
                    "summary": f"{var} does nothing in this vLLM: remove it. {repl[var]}",
                    "steps": [
                        f"Remove `{var}` from the server's environment (Dockerfile ENV, Kubernetes env, systemd unit, shell profile).",
                        f"Set what it used to control the current way: {repl[var]}",
                        "Pass `--fail-on-environ-validation` to make unknown VLLM_* variables an error at start-up.",
                    ],
                    "file": "vllm/envs.py (validate_environ, 0.17-0.2x) / vllm/platforms/interface.py (Platform.validate_environ)",
                    "function": "validate_environ",
                    "versions": f">={FIRST_WARNING.rsplit('.', 1)[0]}",
                    "checked": f"bench/families/vllm_env_vars.py: {var} is a key of environment_variables in vllm/envs.py up to {last}, not in {gone} .. {newest}; replacement from the releases' deprecation text",
                    "match_examples": [line.format(var=var), f"ValueError: Unknown vLLM environment variable detected: {var}"],
                    "no_match_examples": [line.format(var=var + "_X"), f"(APIServer pid=4021) INFO 11-02 09:14:22 [envs.py:1] {var} is set"],
                }
            )
        )
    groups: dict[str, list[str]] = defaultdict(list)
    for var, last in removed.items():
        if var not in repl:
            groups[nxt[last]].append(var)
    for gone in sorted(groups, key=version_key):
        names = sorted(groups[gone])
        last = [v for v, n in nxt.items() if n == gone][0]
        minor = ".".join(gone.split(".")[:2])
        blocks.append(
            pattern_toml(
                {
                    "comment": f"removed in {minor} (last in {last}): {', '.join(names)}",
                    "id": f"env.removed-vars-{minor.replace('.', '-')}",
                    "title": f"{{var}} was removed from vLLM in {minor} and is ignored",
                    "severity": "warning",
                    "where": "any",
                    "levels": ["WARNING"],
                    "match": r"Unknown vLLM environment variable detected: (?P<var>" + "|".join(names) + r")\s*$",
                    "explanation": (
                        f"vLLM checks every VLLM_* variable in its environment against the ones it reads. {{var}} was read by vLLM "
                        f"up to {last} and is gone from {gone} on, so setting it changed nothing in this server: the feature it "
                        "controlled was removed, became the default, or moved to a command-line option (see `vllm serve --help`)."
                    ),
                    "summary": f"{{var}} has had no effect since vLLM {minor}: remove it, and look for the command-line option that replaced it in `vllm serve --help`.",
                    "steps": [
                        "Remove `{var}` from the server's environment (Dockerfile ENV, Kubernetes env, systemd unit, shell profile).",
                        "If you relied on it, search `vllm serve --help` (or the release notes of " + minor + ") for the option that replaced it.",
                        "Pass `--fail-on-environ-validation` to make unknown VLLM_* variables an error at start-up.",
                    ],
                    "file": "vllm/envs.py (validate_environ, 0.17-0.2x) / vllm/platforms/interface.py (Platform.validate_environ)",
                    "function": "validate_environ",
                    "versions": f">={FIRST_WARNING.rsplit('.', 1)[0]}",
                    "checked": f"bench/families/vllm_env_vars.py: keys of environment_variables in vllm/envs.py of {len(versions)} releases; these are in {last} and not in {gone} .. {newest}",
                    "match_examples": [line.format(var=names[0]), f"ValueError: Unknown vLLM environment variable detected: {names[-1]}"],
                    "no_match_examples": [line.format(var=names[0] + "_EXTRA"), "(APIServer pid=4021) WARNING 11-02 09:14:22 [interface.py:1470] Unknown vLLM environment variable detected: VLLM_MY_TYPO"],
                }
            )
        )
    return "\n".join(blocks), len(blocks)


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    block, count = build(root)
    splice(PATTERNS / "env.toml", "vllm_env_vars", block)
    print(f"env.toml: {count} removed-variable patterns")


if __name__ == "__main__":
    main()
