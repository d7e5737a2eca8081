"""Facts about the model that the command line does not carry: its architecture and head counts.

In order of trust: what the user said (`--architecture`), the model folder's config.json (when MODEL is a
local path), and, for well-known families, the model's name (marked inferred).
"""

from __future__ import annotations

import json
import re
import tomllib
from functools import lru_cache
from pathlib import Path

from logdoctor.launch.config import LaunchConfig, Origin

# config.json keys that rules need, as LaunchConfig facts.
_CONFIG_JSON_FACTS = {
    "mamba_num_heads": "mamba_num_heads",
    "num_attention_heads": "num_attention_heads",
    "num_key_value_heads": "num_key_value_heads",
}


@lru_cache(maxsize=1)
def _families() -> list[tuple[re.Pattern[str], str]]:
    text = Path(__file__).resolve().with_name("families.toml").read_text("utf-8")
    return [(re.compile(f["match"]), f["architecture"]) for f in tomllib.loads(text)["family"]]


def infer_architecture(model: str) -> str | None:
    for pattern, architecture in _families():
        if pattern.search(model):
            return architecture
    return None


def add_model_facts(config: LaunchConfig, architecture: str | None = None) -> None:
    """Fill `architecture` and head counts, from the most direct source available."""
    if architecture:
        config.set("architecture", architecture, Origin(kind="command", where="--architecture"))
    model = config.value("model")
    if not isinstance(model, str):
        return
    folder = Path(model)
    config_json = folder / "config.json"
    if folder.is_dir() and config_json.is_file():
        try:
            data = json.loads(config_json.read_text("utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict):
            where = Origin(kind="config_file", where=str(config_json))
            archs = data.get("architectures")
            if "architecture" not in config.settings and isinstance(archs, list) and archs:
                config.set("architecture", str(archs[0]), where)
            for key, name in _CONFIG_JSON_FACTS.items():
                if isinstance(data.get(key), int):
                    config.set(name, data[key], where)
    if "architecture" not in config.settings:
        guess = infer_architecture(model)
        if guess is not None:
            config.set("architecture", guess, Origin(kind="inferred", where=f"inferred from the model name {model!r}"))
