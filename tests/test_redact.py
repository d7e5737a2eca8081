"""logdoctor.redact: the one place secrets leave the text (tests/test_secrets.py checks every output mode)."""

from __future__ import annotations

import pytest

from logdoctor.redact import redact

SECRETS = {
    "repr": ("non-default args: {'model': 'm', 'api_key': 'sk-live-123456', 'port': 8000}", "sk-live-123456"),
    "several keys": ("'api_key': ['first-key-1', 'second-key-2']", "second-key-2"),
    "json": ('{"hf_token": "hf_abcdefghijklmnopqrstuvwxyz"}', "hf_abcdefghijklmnopqrstuvwxyz"),
    "environment": ("HF_TOKEN=hf_zzzzzzzzzzzzzzzzzzzzzzzz vllm serve m", "hf_zzzzzzzzzzzzzzzzzzzzzzzz"),
    "aws": ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY", "wJalrXUtnFEMIK7MDENGbPxRfiCY"),
    "flag": ("vllm serve m --api-key topsecretvalue --port 8000", "topsecretvalue"),
    "flag with =": ("vllm serve m --hf-token=hf_qqqqqqqqqqqqqqqqqqqqqqqq", "hf_qqqqqqqqqqqqqqqqqqqqqqqq"),
    "header": ("Authorization: Bearer abcdef123456789", "abcdef123456789"),
    "bare hf token": ("token hf_ABCDEFGHIJKLMNOPQRSTUVWX in a URL", "hf_ABCDEFGHIJKLMNOPQRSTUVWX"),
    "openai key": ("OPENAI key sk-proj_abcdefghijklmnop1234", "sk-proj_abcdefghijklmnop1234"),
    "aws key id": ("key AKIAABCDEFGHIJKLMNOP here", "AKIAABCDEFGHIJKLMNOP"),
    "url password": ("redis://user:hunter2hunter2@cache:6379/0", "hunter2hunter2"),
}


@pytest.mark.parametrize("name", list(SECRETS))
def test_each_kind_of_secret_is_masked(name: str) -> None:
    text, secret = SECRETS[name]
    out = redact(text)
    assert secret not in out and "***" in out


@pytest.mark.parametrize(
    "text",
    [
        "INFO 11-30 10:00:00 [api_server.py:1] vLLM API server version 0.33.0",
        "ValueError: max_num_batched_tokens (8) is smaller than max_model_len (4096).",
        "non-default args: {'model': 'Qwen/Qwen3-8B', 'max_num_tokens': 8192, 'tokenizer': 'Qwen/Qwen3-8B'}",
        "KeyError: 'lm_head.weight' (weight name not in params_dict)",
    ],
)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert redact(text) == text


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(" ".join(text for text, _ in SECRETS.values()))
    assert redact(once) == once
