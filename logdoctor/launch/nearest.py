"""An option vLLM's parser refused: the nearest real options of the release, and vLLM's own hint for it."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

# What vLLM's parser adds to its refusal of an option (utils/argparse_utils.py FlexibleArgumentParser.error,
# 0.33.0), verbatim: the corrected command and the fix follow it.
VLLM_HINTS: dict[str, str] = {
    "--task": (
        "--task is not a vllm serve option. For embedding, reranking, or reward models, use --runner pooling. "
        "To adapt a generative model for pooling, also use --convert embed, --convert classify, or --convert reward."
    ),
}
_HINT_LINE = re.compile(r"^Hint: (?P<hint>.+)$", re.M)


def nearest_options(option: str, known: Iterable[str]) -> list[str]:
    """The real options nearest to `option` (difflib), best first: only those about as near as the best."""
    by_spelling = {o.replace("_", "-").lower(): o for o in known if o.startswith("--")}
    spelled = option.split("=", 1)[0].replace("_", "-").lower()
    if spelled in by_spelling:
        return []
    close = difflib.get_close_matches(spelled, list(by_spelling), n=3, cutoff=0.75)
    if not close:
        return []
    best = difflib.SequenceMatcher(None, spelled, close[0]).ratio()
    return [by_spelling[c] for c in close if difflib.SequenceMatcher(None, spelled, c).ratio() >= best - 0.03]


def vllm_hint(option: str, message: str = "") -> str | None:
    """vLLM's own hint for a refused option: the `Hint:` its message carries, or the one it prints for it."""
    found = _HINT_LINE.search(message)
    if found:
        return found["hint"].strip()
    return VLLM_HINTS.get(option.split("=", 1)[0].replace("_", "-"))
