"""logdoctor.versions: vLLM version strings and the ranges pattern and rule files use."""

from __future__ import annotations

import pytest

from logdoctor.versions import check_range, in_range, parse_version


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.33.0", (0, 33)),
        ("0.23.1rc1.dev1201+gd08eebad1", (0, 23, 1)),
        ("v0.6.6.post1", (0, 6, 6)),
        ("0.10.0", (0, 10)),
        ("1", (1,)),
        ("0", (0,)),
        ("  0.8.5 ", (0, 8, 5)),
    ],
)
def test_a_version_string_is_its_release(text: str, version: tuple[int, ...]) -> None:
    assert parse_version(text) == version


@pytest.mark.parametrize("text", ["", "latest", "main", "dev"])
def test_a_string_without_a_release_is_no_version(text: str) -> None:
    assert parse_version(text) is None
    assert not in_range(text, "*")


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.27.0", ">=0.27,<0.32", True),
        ("0.31.9", ">=0.27,<0.32", True),
        ("0.32.0", ">=0.27,<0.32", False),
        ("0.26.1", ">=0.27,<0.32", False),
        ("0.33.1", "==0.33.*", True),
        ("0.33", "==0.33.*", True),
        ("0.34.0", "==0.33.*", False),
        ("0.33.0", "!=0.33.*", False),
        ("0.6.6.post1", "<=0.6.6.post1", True),  # a post-release bound compares as its release
        ("0.6.7", "<=0.6.6.post1", False),
        ("0.10", ">0.9", True),  # 0.10 is after 0.9: versions compare as numbers, not text
        ("0.9.2", ">=0.10", False),
        ("0.5.0", "*", True),
        ("0.5.0", "", True),
        ("0.8.5", "==0.8.5", True),
        ("0.8.5", "==0.8", False),
    ],
)
def test_ranges(version: str, spec: str, expected: bool) -> None:
    assert in_range(version, spec) is expected
    assert in_range(parse_version(version) or (), spec) is expected


@pytest.mark.parametrize("spec", [">=", "0.27", ">=0.27;<0.32", "~=0.27", ">= x"])
def test_a_malformed_range_is_refused_with_an_example(spec: str) -> None:
    with pytest.raises(ValueError, match="not a version range"):
        check_range(spec)
