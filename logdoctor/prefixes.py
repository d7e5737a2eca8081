"""Prefixes that a program logdoctor does not know put before every line, learned per source.

A vLLM log reaches people through other programs, and many of them put something of their own before
each line: a CI web log's gutter (`  | `), a build log's `> [2024-05-01T10:00:00.123Z] `, a launcher's
`[Error] (Process) `, a supervisor's `worker-3: `. No list of them can be complete, so none is kept.
Instead a prefix is recognised by where it stands: in front of something logdoctor does know.

* A line whose vLLM record prefix (`(APIServer pid=1) `, `INFO 05-02 09:12:03 `, `[rank0]: `) starts
  after some text: that text is a prefix, learned at once (a known prefix after an unknown one).
* A line whose traceback, frame or exception line starts after some text: that text is stripped from
  this line, and its shape is learned once it has been seen twice (a prefix that repeats).

A learned shape (digits and letters generalised, punctuation kept) is then stripped from every line of
the source that starts with it, including the lines that hold nothing known (a traceback's source lines,
an exception's continuation). Shapes made only of words and spaces are never learned: `Got ValueError:
x` is a sentence, not a prefix.
"""

from __future__ import annotations

import re

from logdoctor import grammar

MAX_PREFIX = 100  # characters; anything longer in front of a record is not a prefix
MAX_SHAPES = 8  # learned per source (a paste can mix a few programs' lines)
REPEATS_TO_LEARN = 2  # sightings of a prefix before something only loosely known
ANCHOR_WINDOW = 1024  # characters after the longest prefix in which its anchor must end

# What logdoctor knows the start of. `strong`: a record prefix, which no message contains by accident.
_ANCHOR = re.compile(
    rf"(?P<strong>{grammar.anonymous(grammar.PROCESS.regex)}\s"
    rf"|{grammar.anonymous(grammar.LEVEL.regex)} {grammar.anonymous(grammar.TIME.regex)}"
    rf"|{grammar.anonymous(grammar.RANK.regex)})"
    r"|(?P<weak>Traceback \(most recent call last\):"
    r"|File \"[^\"]+\", line \d+"
    r"|(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): )"
)
_TOKEN = re.compile(r"\d+|[A-Za-z]+|\s+|.", re.DOTALL)
# A word and a colon before the anchor: prose introducing the error, not a program's prefix (those end
# in `]`, `)`, `|`, `>`, a time, or `name[pid]:`).
_SENTENCE_END = re.compile(r"[A-Za-z]['\"]?:\s*$")


def shape_of(prefix: str) -> str | None:
    """The regex of a prefix's shape, or None when it cannot be a prefix."""
    body = prefix.rstrip()
    if not body.strip() or len(prefix) > MAX_PREFIX:
        return None
    if all(c.isalpha() or c.isspace() for c in body):
        return None
    parts = []
    for token in _TOKEN.findall(body.lstrip()):
        if token.isdigit():
            parts.append(r"\d+")
        elif token.isalpha() and token.isascii():
            parts.append("[A-Za-z]+")
        elif token.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(token))
    # Leading blanks vary with the viewer; one blank after the prefix belongs to it, the rest to the line
    # (a frame's indentation under a gutter).
    return r"\s*" + "".join(parts) + "[ \t]?"


class PrefixLearner:
    """strip(text) -> the text with this source's unknown prefix removed."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._learned: list[re.Pattern[str]] = []

    @property
    def learned(self) -> bool:
        return bool(self._learned)

    def strip_learned(self, text: str) -> str:
        """The text without a prefix already learned; nothing is learned from it. A line that starts with a
        record prefix is vLLM's own, whatever a learned shape says (`\\(` learned from a stray `((APIServer`
        must not eat the parenthesis of every later `(EngineCore pid=1)`)."""
        for learned in self._learned:
            match = learned.match(text)
            if match:
                # Only a line a shape claims pays for the anchor check (strip() runs this on every line).
                anchor = _ANCHOR.match(text)
                if anchor is not None and anchor["strong"]:
                    return text
                return text[match.end() :]  # all of it: an empty line under the prefix
        return text

    def strip(self, text: str) -> str:
        stripped = self.strip_learned(text)
        if stripped is not text:
            return stripped
        if _ANCHOR.match(text):
            return text  # the line starts with something known (most lines): nothing to strip or learn
        # The anchor starts within MAX_PREFIX characters and is itself short (a frame's path at most a
        # few hundred): searching a bounded window keeps a 64 KiB line from costing a quadratic search.
        anchor = _ANCHOR.search(text, 1, MAX_PREFIX + ANCHOR_WINDOW)
        if anchor is None or not text[: anchor.start()].strip():
            return text
        prefix = text[: anchor.start()]
        if _ANCHOR.match(text) or _ANCHOR.match(prefix.lstrip()):
            return text  # the line already starts with something known: what follows is its message
        if not anchor["strong"] and _SENTENCE_END.search(prefix):
            return text  # `... raised: ValueError: x`, `Caused by: KeyError: y`: a sentence naming an error
        shape = shape_of(prefix)
        if shape is None:
            return text
        seen = self._seen[shape] = self._seen.get(shape, 0) + 1
        if (anchor["strong"] or seen >= REPEATS_TO_LEARN) and len(self._learned) < MAX_SHAPES:
            self._learned.append(re.compile(shape))
            del self._seen[shape]
        cut = len(prefix.rstrip())
        return text[cut + 1 :] if text[cut : cut + 1] in (" ", "\t") else text[cut:]  # a frame keeps its indent
