"""vLLM's error surface as data: every message its releases can raise or log, and where it comes from.

The index (vllm-surface.json.gz beside this file) is generated from the released wheels by
bench/surface/build_index.py: for each `raise`, `assert`, error or warning log call, `parser.error` and
`sys.exit` whose message can be read statically, its template, exception class (or log level), file,
function, line, guarding condition, the `vllm serve` flags and environment variables that condition
reads, and the releases that contain it, with its rewordings linked across releases. A message-less
`assert cond` (or argument-less `raise SomeError()`) is indexed by its source instead (kind
`assert-bare`): the traceback of its empty AssertionError prints that line, which `lookup_code` finds.
It also holds the `vllm serve` options of every indexed release.

It explains a vLLM message that no pattern covers (where it is raised, under which condition, which
flags are involved, whether upgrading makes it go away) and keeps the patterns honest about the
releases and flags they name. Nothing is read at import time: `SurfaceIndex.load()` (or `default_index()`)
reads the packaged file on first use.

    index = SurfaceIndex.load()
    hit = index.lookup("ValueError: Total number of attention heads (32) must be divisible by ...")
    hit.entry.file, hit.entry.function, hit.values, index.history(hit.entry)
    index.lookup_code("    assert self.total_num_kv_heads % tp_size == 0", "0.33.0")
"""

from __future__ import annotations

from functools import lru_cache

from logdoctor.surface.index import SurfaceEntry, SurfaceHit, SurfaceIndex
from logdoctor.surface.template import parse, render_sample

__all__ = ["SurfaceEntry", "SurfaceHit", "SurfaceIndex", "default_index", "sample_message"]


@lru_cache(maxsize=1)
def default_index() -> SurfaceIndex:
    """The packaged index, loaded once per process on first call."""
    return SurfaceIndex.load()


def sample_message(entry: SurfaceEntry) -> str:
    """The entry's template with plausible values filled in (`{max_model_len}` -> `8`): what a log line
    of this message could look like, for tests and docs."""
    return render_sample(parse(entry.template))
