"""The one place secrets are removed. Every reporter's output passes through `redact`.

vLLM up to 0.28 prints `api_key` and `hf_token` in clear in its `non-default args` line, and tracebacks
can carry tokens in URLs and headers; none of them may leave logdoctor.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MASK = "***"
_QUOTED = re.compile(r"""(?P<q>['"])[^'"]*(?P=q)""")


def _mask_items(items: str) -> str:
    """Every quoted item of a list, masked; scanned left to right, so `', '` between two items already
    masked is never read as an item (redacting twice changes nothing more)."""
    return _QUOTED.sub(lambda m: m["q"] + MASK + m["q"], items)

_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # 'api_key': 'secret' / api_key='secret' / "hf_token": "secret" in reprs and JSON
    (
        re.compile(
            r"""(?P<key>['"]?\b[\w-]*(?:api[_-]?key|token|password|passwd|secret)['"]?\s*[:=]\s*)"""
            r"""(?P<q>['"])(?!\*\*\*)(?P<value>[^'"]+)(?P=q)""",
            re.IGNORECASE,
        ),
        r"\g<key>\g<q>***\g<q>",
    ),
    # 'api_key': ['one', 'two']: vLLM's --api-key takes several keys
    (
        re.compile(
            r"""(?P<key>['"]?\b[\w-]*(?:api[_-]?key|token|password|passwd|secret)['"]?\s*[:=]\s*)"""
            r"""\[(?P<items>[^\]]*)\]""",
            re.IGNORECASE,
        ),
        lambda m: m["key"] + "[" + _mask_items(m["items"]) + "]",
    ),
    # HF_TOKEN=value / AWS_SECRET_ACCESS_KEY=value: environment assignments (a launch script, `env` output)
    (
        re.compile(
            r"(?P<key>\b[\w-]*(?:api[_-]?key|access[_-]?key|token|password|passwd|secret)\s*=\s*)"
            r"(?!\*\*\*)(?P<value>[^\s'\",;)}\]]+)",
            re.IGNORECASE,
        ),
        r"\g<key>***",
    ),
    # --api-key VALUE / --hf-token=VALUE on a command line
    (
        re.compile(r"(?P<flag>--[\w-]*(?:api-key|token|password|secret)[=\s]+)(?P<value>[^\s'\"]+)", re.IGNORECASE),
        r"\g<flag>***",
    ),
    (re.compile(r"(?P<h>Authorization:\s*)(?:Bearer\s+)?\S+", re.IGNORECASE), r"\g<h>***"),
    (re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer ***"),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), "hf_***"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "sk-***"),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "AKIA***"),
    # scheme://user:password@host
    (re.compile(r"(?P<pre>\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\g<pre>***@"),
]


def redact(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
