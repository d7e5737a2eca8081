"""bench/differential.py's pure parts: the families file, sampling, composing a launch, and the verdict
(bench/differential/verdict.py over the battery's score_check) on canned check results. No vLLM."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


diff = _load("bench_differential", ROOT / "bench" / "differential.py")
verdict_mod = _load("bench_differential_verdict", ROOT / "bench" / "differential" / "verdict.py")


def test_families_file_has_every_family_with_a_model_dimension() -> None:
    families = diff.load_families()
    expected = {"replayssm", "parallelism", "context", "quantization", "scheduler", "speculative", "lora", "frontend"}
    assert expected <= set(families)
    for family in families.values():
        assert family.dims["model"]
        for values in family.dims.values():
            assert len(values) == len(set(values)), family.name


def test_sample_family_covers_every_value_and_is_seeded() -> None:
    family = diff.Family("f", "", "", {"model": ["a", "b"], "x": ["", "--x 1", "--x 2"], "y": ["", "--y"]})
    first = diff.sample_family(family, 2, random.Random(5))
    assert first == diff.sample_family(family, 2, random.Random(5))
    for key, values in family.dims.items():
        seen = {v for picks in first for f, k, v in picks if k == key}
        assert seen == set(values)
    every = diff.sample_family(family, 100, random.Random(1))
    assert len({tuple(p) for p in map(tuple, every)}) == 12  # the whole product, each once


def test_sample_mixed_takes_one_to_three_families_with_every_dimension() -> None:
    families = diff.load_families()
    for picks in diff.sample_mixed(families, 40, random.Random(3)):
        names = {f for f, _, _ in picks}
        assert 1 <= len(names) <= 3
        for name in names:
            assert [k for f, k, _ in picks if f == name] == list(families[name].dims)


def test_compose_takes_environment_placeholders_and_each_option_once(tmp_path: Path) -> None:
    families = {
        "a": diff.Family("a", "", "--use-replayssm", {"model": ["m1"], "tp": ["--tensor-parallel-size 2"]}),
        "b": diff.Family(
            "b",
            "",
            "",
            {
                "model": ["m2"],
                "tp": ["--tensor-parallel-size 3"],
                "long": ["VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 --max-model-len 4k"],
                "chunk": ["--no-enable-chunked-prefill"],
                "tpl": ["--chat-template {files}/t.jinja"],
            },
        ),
    }
    picks = [("a", "model", "m1"), ("a", "tp", "--tensor-parallel-size 2")]
    picks += [("b", k, v[0]) for k, v in families["b"].dims.items()]
    words, env, kept = diff.compose(picks, families, tmp_path / "models", tmp_path / "files")
    assert words[:5] == ["vllm", "serve", str(tmp_path / "models" / "m1"), "--load-format", "dummy"]
    assert words.count("--tensor-parallel-size") == 1 and words[words.index("--tensor-parallel-size") + 1] == "2"
    assert "--use-replayssm" in words and "--no-enable-chunked-prefill" in words
    assert words[words.index("--max-model-len") :][:2] == ["--max-model-len", "4k"]
    assert f"{tmp_path}/files/t.jinja" in words
    assert env == {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "VLLM_USE_V2_MODEL_RUNNER": "0"}
    assert ("b", "model", "(m2)") in kept and ("b", "tp", "--tensor-parallel-size 3") not in kept
    assert diff.option_names(["--no-enable-chunked-prefill", "--x=1", "v"]) == {"--enable-chunked-prefill", "--x"}


def _check(unmet: list[tuple[str, str]] = (), problems: list[str] = ()) -> dict[str, object]:  # type: ignore[assignment]
    constraints = [{"set": s, "id": r, "status": "unmet"} for s, r in unmet]
    constraints.append({"set": "x", "id": "met-rule", "status": "met"})
    return {"constraints": constraints, "problems": list(problems)}


def test_verdicts_on_canned_results() -> None:
    scorer = verdict_mod.load_check_score(ROOT, "0.33.0")
    v = verdict_mod.verdict
    # accepted: agree only when nothing is unmet and no parser problem
    assert v(scorer, "accepted", _check(), "", None, set())["agree"] is True
    assert v(scorer, "accepted", _check(unmet=[("s", "r")]), "", None, set())["agree"] is False
    assert v(scorer, "accepted", _check(problems=["--foo: unknown option"]), "", None, set())["agree"] is False
    # refused: an unmet rule that owns scan's pattern
    owning = {("replayssm-0.33", "mamba-backend")}
    hit = _check(unmet=[("replayssm-0.33", "mamba-backend")])
    assert v(scorer, "refused", hit, "", "replayssm.backend", owning)["agree"] is True
    other = _check(unmet=[("replayssm-0.33", "architecture")])
    assert v(scorer, "refused", other, "", "replayssm.backend", owning)["agree"] is False
    assert v(scorer, "refused", _check(), "", "replayssm.backend", owning)["agree"] is False
    # refused by vLLM's parser: a parser problem naming the same option
    refusal = verdict_mod.parser_refusal(
        "usage: vllm serve ...\nvllm serve: error: argument --kv-cache-dtype: invalid choice: 'int8'\n"
    )
    assert refusal.startswith("vllm serve: error: argument --kv-cache-dtype")
    parser = _check(problems=["--kv-cache-dtype: invalid choice 'int8' (choose from auto, fp8)"])
    assert v(scorer, "refused", parser, refusal, None, set())["agree"] is True
    assert v(scorer, "timeout", _check(), "", None, set())["agree"] is None
