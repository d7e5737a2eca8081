"""How fast the packaged error-surface index answers: lookups per second on 1000 messages rendered from
sampled entries (first pass: every template's regex compiled on first use; second pass: warm), and on
1000 log lines that hold no indexed message (the fixtures' ordinary lines: INFO records, access lines,
traceback frames); and `lookup_code` on the source lines of 1000 sampled bare asserts and on the same
ordinary lines.

    python3 -m bench.surface.speed        (from the repository root)
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from logdoctor.surface import SurfaceIndex, sample_message

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def ordinary_lines(index: SurfaceIndex, count: int) -> list[str]:
    lines: list[str] = []
    for path in sorted(FIXTURES.glob("**/*.log")):
        for line in path.read_text("utf-8", "replace").splitlines():
            if line.strip() and index.lookup(line) is None:
                lines.append(line)
    lines = sorted(set(lines))
    random.Random(1).shuffle(lines)
    return (lines * (count // max(1, len(lines)) + 1))[:count]


def rate(index: SurfaceIndex, texts: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    found = sum(1 for text in texts if index.lookup(text) is not None)
    return len(texts) / (time.perf_counter() - started), found


def main() -> int:
    started = time.perf_counter()
    index = SurfaceIndex.load()
    print(f"load: {time.perf_counter() - started:.2f} s, {len(index.entries())} entries")
    entries = random.Random(7).sample([e for e in index.entries() if e.kind != "assert-bare"], 1000)
    messages = [sample_message(e) for e in entries]
    cold, found = rate(index, messages)
    warm, _ = rate(index, messages)
    print(f"1000 sampled messages: {cold:,.0f} lookups/s cold, {warm:,.0f} warm; {found} found")
    lines = ordinary_lines(index, 1000)
    speed, hits = rate(index, lines)
    print(f"1000 non-matching log lines: {speed:,.0f} lookups/s; {hits} hits")
    bare = random.Random(7).sample([e for e in index.entries() if e.kind == "assert-bare"], 1000)
    code = [e.template for e in bare]
    for name, texts in (("1000 bare-assert source lines", code), ("1000 non-matching log lines", lines)):
        started = time.perf_counter()
        found = sum(1 for text in texts if index.lookup_code(text, "0.33.0") is not None)
        print(f"lookup_code, {name}: {len(texts) / (time.perf_counter() - started):,.0f} lookups/s; {found} found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
