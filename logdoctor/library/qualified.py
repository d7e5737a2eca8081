"""Fix steps that hold for some vLLM releases only: `[>=0.13] Pick another backend with --attention-backend`.

A pattern covers every release whose message it matches, but the flags and variables that fix it come
and go (`--swap-space` is gone from 0.18 on, `--attention-backend` arrived in 0.13). A step may start
with a release range in brackets (the syntax of `source.versions`); a finding keeps the steps whose range
holds the launch's version, and when the log does not say which version it is, every step, its range
written out for a person ("vLLM 0.13 and later: ..."). The library's authority test checks a flag in a
step only against the releases of that step's range.
"""

from __future__ import annotations

import re

from logdoctor.versions import check_range, in_range

_QUALIFIER = re.compile(r"\[(?P<range>[<>=!][^\]]*)\]\s*")
_CLAUSE = re.compile(r"(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)")


def split(step: str) -> tuple[str | None, str]:
    """(range or None, the step's text without it)."""
    match = _QUALIFIER.match(step)
    if match is None:
        return None, step
    return match["range"].strip().rstrip(","), step[match.end() :]


def validate(step: str) -> None:
    """Raise ValueError for a step whose range cannot be read."""
    spec, _ = split(step)
    if spec is not None:
        check_range(spec)


def applies(step: str, version: str | None) -> bool:
    spec, _ = split(step)
    return spec is None or version is None or in_range(version, spec)


def for_person(step: str, version: str | None) -> str:
    """The step as a finding shows it: without its range when the version is known (only steps that
    apply are shown then), with the range in words when it is not."""
    spec, text = split(step)
    if spec is None or version is not None:
        return text
    return f"{_in_words(spec)}: {text}"


def _in_words(spec: str) -> str:
    """`>=0.9,<0.18` -> "vLLM 0.9 and later, before 0.18"."""
    parts = []
    for op, number in _CLAUSE.findall(spec):
        parts.append(
            {
                ">=": f"{number} and later",
                ">": f"after {number}",
                "<": f"before {number}",
                "<=": f"{number} and earlier",
                "==": number,
                "!=": f"not {number}",
            }[op]
        )
    return "vLLM " + ", ".join(parts) if parts else f"vLLM {spec}"
