"""Every startup-time error of vLLM 0.33.0's config, engine arguments, entrypoints, platforms, model
loading, KV cache sizing and worker start-up is recognised (by a pattern or the error-surface index) in
every shape real input gives it (bench/surface/coverage.py prints the counts per area)."""

from __future__ import annotations

from bench.surface.coverage import AREAS, coverage, startup_errors
from logdoctor.library.matcher import Library
from logdoctor.surface import default_index


def test_every_startup_error_of_the_release_is_recognised_in_every_shape(library: Library) -> None:
    index = default_index()
    assert {e.area for e in startup_errors(index)} == set(AREAS)
    result = coverage(library, index)
    assert sum(result.checked.values()) > 10_000
    assert result.misses == []
