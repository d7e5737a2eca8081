"""Helpers of the rule-family tests (test_rules_frontend.py, test_rules_server.py): run `check` on a launch
with the whole library, read a rule's status, and check the corrected command again."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from logdoctor.check import CheckReport, run_check
from logdoctor.library.loader import load_constraint_sets
from logdoctor.probe.machine import MachineProbe

SETS = load_constraint_sets()
# The families these helpers test: "no rule applies" means none of theirs (the model-folder and
# environment sets audit every launch check reads).
OWN_FEATURES = {s.feature for s in SETS if s.origin.endswith(("frontend-rules.toml", "server-rules.toml"))}


def own_results(report: CheckReport) -> list[Any]:
    """The results of the frontend and server sets alone."""
    return [r for r in report.audit.results if r.set.rsplit(", vLLM ", 1)[0] in OWN_FEATURES]


def free_machine(host: str | None, port: int) -> dict[str, Any]:
    """A machine where every host resolves locally and every port is free."""
    return {"host_resolves": True, "host_is_local": True, "port_free": True}


def check(
    command: str | list[str],
    version: str = "0.33.0",
    environ: dict[str, str] | None = None,
    machine: MachineProbe | None = None,
) -> CheckReport:
    words = shlex.split(command) if isinstance(command, str) else command
    return run_check(words, version=version, environ=environ or {}, sets=SETS, machine=machine)


def status(report: CheckReport, rule: str) -> str | None:
    found = [r.status for r in report.audit.results if r.id == rule]
    return found[0] if found else None


def result(report: CheckReport, rule: str) -> Any:
    return next(r for r in report.audit.results if r.id == rule)


def unmet(report: CheckReport) -> list[str]:
    return [r.id for r in report.audit.unmet]


def recheck(
    report: CheckReport,
    version: str = "0.33.0",
    environ: dict[str, str] | None = None,
    machine: MachineProbe | None = None,
) -> CheckReport:
    """The corrected command, checked again: it must meet every rule."""
    assert report.audit.after, report.audit.caveats
    words = shlex.split(report.audit.after)
    env = dict(environ or {})
    while words and "=" in words[0] and not words[0].startswith("-"):  # `NAME=value vllm serve ...`
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    again = check(words, version, env, machine)
    assert again.audit.unmet == [], again.audit.unmet
    return again


def llama_folder(root: Path, tokens: list[str] = (), tokenizer_json: str | None = None) -> Path:  # type: ignore[assignment]
    """A tiny Llama folder: config.json, a WordLevel tokenizer.json (with `tokens` as added tokens), and
    tokenizer_config.json."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 4})
    )
    vocab = {"<unk>": 0, "hello": 1, "world": 2}
    added = [{"id": 3 + i, "content": t, "special": True} for i, t in enumerate(tokens)]
    text = (
        tokenizer_json
        if tokenizer_json is not None
        else json.dumps(
            {
                "version": "1.0",
                "added_tokens": added,
                "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
            }
        )
    )
    (root / "tokenizer.json").write_text(text)
    (root / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"}))
    return root
