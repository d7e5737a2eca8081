"""A traceback flattened onto one line, split back into its lines.

Some collectors, chat tools and issue forms turn a multi-line message into one line: the newlines become
spaces, and what vLLM repeated on every line (its process prefix, its logger header) now stands in the
middle of the line, over and over:

    (APIServer pid=7) Traceback (most recent call last): (APIServer pid=7)   File "a.py", line 3, in <module> ...
    Traceback (most recent call last):   File "a.py", line 3, in <module>     main()   ValueError: bad

Only a line that holds a traceback's first line with a frame after it is split, so an ordinary message
that quotes `Traceback (most recent call last):` stays as it is.
"""

from __future__ import annotations

import re

from logdoctor import grammar

TRACEBACK = "Traceback (most recent call last):"
MAX_PIECES = 2000

# What vLLM repeats at the start of every line of a record: a process prefix, then perhaps a logger header.
_REPEATED = re.compile(
    rf"{grammar.anonymous(grammar.PROCESS.regex)}\s|{grammar.anonymous(grammar.LOGGER_HEADER.regex)} "
)
# Without repeated prefixes, the places where the newlines were: before a frame, a chain sentence, a new
# traceback; after a frame's `in function`, its source line follows.
_FRAME = re.compile(r'(File "[^"]+", line \d+(?:, in (?:<[\w.-]+>|[\w.]+))?)')
_CHAIN = re.compile(
    r"(During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|Traceback \(most recent call last\):)"
)
# The exception line after the last frame's source line: a capitalised (dotted) name followed by `: ` or
# the end (`ValueError: x`, `huggingface_hub.errors.OfflineModeIsEnabled: x`); in the source line before
# it a name is followed by `(` or `.`, not by `: `.
_EXCEPTION = re.compile(r"\s(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|$))")


def _message_start(text: str) -> int:
    """Where the message starts, after the prefixes vLLM repeats on every line."""
    pos = 0
    while (match := _REPEATED.match(text, pos)) is not None:
        pos = match.end()
    return pos


def is_flattened(text: str) -> bool:
    """The message starts with a traceback's first line and a frame follows it (a message that quotes a
    traceback in its middle, such as a logged prompt, is left alone)."""
    at = _message_start(text)
    return text.startswith(TRACEBACK, at) and 'File "' in text[at:]


def split(text: str) -> list[str]:
    """The lines a flattened traceback came from; [text] when it is not one."""
    if not is_flattened(text):
        return [text]
    starts = [m.start() for m in _REPEATED.finditer(text)]
    prefixes = _leading_repeats(text, starts)
    if len(prefixes) > 1:
        pieces = [text[a:b].rstrip() for a, b in zip(prefixes, [*prefixes[1:], len(text)], strict=True)]
        return [p for p in pieces if p][:MAX_PIECES]
    return _split_bare(text)[:MAX_PIECES]


def _leading_repeats(text: str, starts: list[int]) -> list[int]:
    """The positions of the repeated prefix that begins the line (a header may follow a process prefix on
    each line: split only at the first part of each line's prefix)."""
    if not starts or starts[0] != 0:
        return []
    first = _REPEATED.match(text)
    assert first is not None
    token = first.group(0)
    return [0] + [m.start() for m in re.finditer(re.escape(token), text) if m.start() > 0]


def _split_bare(text: str) -> list[str]:
    lines: list[str] = []
    head = text.find(TRACEBACK)
    markers = sorted(
        [(m.start(1), m.end(1), "frame", m[1]) for m in _FRAME.finditer(text, head)]
        + [(m.start(1), m.end(1), "chain", m[1]) for m in _CHAIN.finditer(text, head)]
    )
    last_end, after_frame = head, False
    for start, end, kind, body in markers:
        if start < last_end:
            continue
        _add_between(lines, text[last_end:start], after_frame, exception_may_follow=kind == "chain")
        lines.append(f"  {body}" if kind == "frame" else body)
        last_end, after_frame = end, kind == "frame"
    _add_between(lines, text[last_end:], after_frame, exception_may_follow=True)
    return lines


def _add_between(lines: list[str], chunk: str, after_frame: bool, exception_may_follow: bool) -> None:
    """The text between two markers: after a frame, its source line; before a chain sentence or at the
    end, also the exception line."""
    chunk = chunk.strip()
    if not chunk:
        return
    if not after_frame:
        lines.append(chunk)
        return
    cut = _EXCEPTION.search(" " + chunk) if exception_may_follow else None
    if cut is None:
        lines.append(f"    {chunk}")
        return
    code, exception = chunk[: cut.start()].strip(), chunk[cut.start() :].strip()
    if code:
        lines.append(f"    {code}")
    lines.append(exception)
