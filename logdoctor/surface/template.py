"""Templates of vLLM messages: parsing, the text normalisation both sides share, matching regexes, samples.

A template is `str.format` text as bench/surface/build_index.py writes it: `{name}` is a value vLLM
fills in at run time, `{{` and `}}` are literal braces, whitespace is already one space per run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import regex

# What a value may span. A value inside a message is short (a number, a name, a list repr); the bound
# keeps a lazy wildcard from wandering over a long line when the literal after it is absent.
MIDDLE_VALUE = 2000
EDGE_VALUE = 300  # a value that starts a template: one token (the text before it is a prefix)

_TOKEN = re.compile(r"\{\{|\}\}|\{(\w+)\}|[^{}]+|[{}]")
_WORDS = re.compile(r"[a-z0-9_]+")
_JOIN = re.compile(r"[ \t]*\r?\n[ \t]*")
_SPACES = re.compile(r"\s+")
_PYDANTIC = re.compile(r"(?:Value error|Assertion failed), (.*?)\s*\[type=\w+", re.S)


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of literal text (`slot` None) or a run-time value named `slot`."""

    text: str
    slot: str | None = None


def parse(template: str) -> tuple[Piece, ...]:
    """`"TP ({tp}) must divide {{heads}}"` -> literal, slot tp, literal `) must divide {heads}`."""
    pieces: list[Piece] = []
    for match in _TOKEN.finditer(template):
        token = match.group(0)
        if match.group(1) is not None:
            pieces.append(Piece("", match.group(1)))
            continue
        text = "{" if token == "{{" else "}" if token == "}}" else token
        if pieces and pieces[-1].slot is None:
            pieces[-1] = Piece(pieces[-1].text + text)
        else:
            pieces.append(Piece(text))
    return tuple(pieces)


def skeleton(template: str) -> str:
    """The template with its values unnamed (`{tp}` -> `{}`): two templates with equal skeletons print
    the same text."""
    return "".join(p.text.replace("{", "{{").replace("}", "}}") if p.slot is None else "{}" for p in parse(template))


def literal_chars(pieces: tuple[Piece, ...]) -> int:
    """Fixed, non-space characters: how much of a message the template pins down."""
    return sum(len(p.text.replace(" ", "")) for p in pieces if p.slot is None)


# ---------------------------------------------------------------------------------------------------
# The message side


@dataclass(frozen=True, slots=True)
class Message:
    """One text to look up, in the two forms a hard-wrapped terminal line may need: `joined` drops the
    whitespace around each line break (a word split by the wrap is whole again), `spaced` turns it into
    one space (words the wrap separated stay apart). Both have every other whitespace run as one space."""

    joined: str
    spaced: str
    pydantic: str | None  # "ValueError" / "AssertionError" when the text was a pydantic error detail


def prepare(text: str) -> Message:
    """Normalise a message, taking the inner message out of a pydantic detail
    (`Value error, <msg> [type=value_error, ...]`)."""
    kind = None
    found = _PYDANTIC.search(text)
    if found:
        kind = "ValueError" if found.group(0).startswith("Value") else "AssertionError"
        text = found.group(1)
    joined = _SPACES.sub(" ", _JOIN.sub("", text)).strip()
    spaced = _SPACES.sub(" ", text).strip()
    return Message(joined, spaced, kind)


def words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def ngrams(tokens: list[str]) -> set[str]:
    """Word bigrams (`"must be"`) and the words themselves: the keys of the inverted index."""
    grams = set(tokens)
    grams.update(f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False))
    return grams


def template_keys(pieces: tuple[Piece, ...]) -> tuple[list[str], list[str]]:
    """The bigrams and words a rendering of the template must contain. A word that touches a value
    without a space between (`{n}GB`) may fuse with it, so it is left out."""
    bigrams: list[str] = []
    unigrams: list[str] = []
    for index, piece in enumerate(pieces):
        if piece.slot is not None:
            continue
        text = piece.text.lower()
        tokens = _WORDS.findall(text)
        if not tokens:
            continue
        if index > 0 and not text[:1].isspace() and re.match(r"[a-z0-9_]", text):
            tokens = tokens[1:]
        if index < len(pieces) - 1 and not text[-1:].isspace() and re.search(r"[a-z0-9_]$", text):
            tokens = tokens[:-1]
        unigrams += tokens
        bigrams += [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]
    return bigrams, unigrams


# ---------------------------------------------------------------------------------------------------
# Matching


# A message inside longer text starts after a non-word character and ends before one. A weak template
# (little fixed text) must be the whole message: from the text's start or right after a prefix that ends
# in `:`, `]`, `|`, `>`, `)`, `-` or an exception name, to the text's end (trailing punctuation aside).
_WORD_BEFORE = r"(?<![A-Za-z0-9_])"
_WORD_AFTER = r"(?![A-Za-z0-9_])"
_MESSAGE_START = r"(?<=^|[:\]|>)\-]\s*|(?:Error|Exception|Warning)\s*)"
_MESSAGE_END = r"(?=[\s.,;:!?)'\"\]]*$)"


def compile_template(pieces: tuple[Piece, ...], whole: bool = False) -> regex.Pattern[str]:
    """Literal parts exact (a space may be missing: a line join can eat it); values lazy and bounded;
    a template-initial value is one token, a final one runs to the end of the text. `whole`: the match
    must be the whole message (see _MESSAGE_START)."""
    out: list[str] = [_MESSAGE_START if whole else ""]
    if pieces and pieces[0].slot is None and re.match(r"\w", pieces[0].text):
        out.append(_WORD_BEFORE)
    named: set[str] = set()
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        if piece.slot is None:
            out.append(r"\s*".join(regex.escape(word) for word in piece.text.split(" ")))
            continue
        if index == 0:
            body = rf"\S{{0,{EDGE_VALUE}}}"
        elif index == last:
            body = rf".{{0,{MIDDLE_VALUE}}}"
        else:
            body = rf".{{0,{MIDDLE_VALUE}}}?"
        if piece.slot in named:
            out.append(f"(?:{body})")
        else:
            named.add(piece.slot)
            out.append(f"(?P<{piece.slot}>{body})")
    if pieces and pieces[-1].slot is None:
        out.append(_WORD_AFTER)
    if whole:
        out.append(_MESSAGE_END)
    return regex.compile("".join(out), regex.V0)


# ---------------------------------------------------------------------------------------------------
# Samples

_SAMPLES: list[tuple[tuple[str, ...], str]] = [
    (("dtype",), "float16"),
    (("backend",), "FLASH_ATTN"),
    (("device",), "cuda:0"),
    (("path", "dir", "file", "folder"), "/models/demo"),
    (("version",), "0.33.0"),
    (("url", "uri", "endpoint", "host", "address"), "127.0.0.1"),
    (("gib", "gb", "memory", "mem", "bytes", "utilization", "ratio", "fraction", "factor"), "0.9"),
    (("size", "len", "num", "count", "heads", "tokens", "blocks", "rank", "port", "dim", "id", "idx",
      "index", "world", "max", "min", "tp", "pp", "dp"), "8"),
    (("model", "arch", "architecture"), "DemoForCausalLM"),
    (("name", "method", "type", "mode", "kind", "format", "quant", "key", "layer"), "demo"),
]


def sample_value(name: str) -> str:
    """A plausible value for a slot, judged by its name (`max_model_len` -> "8")."""
    lowered = name.lower()
    for hints, value in _SAMPLES:
        if any(hint in lowered for hint in hints):
            return value
    return "x1"


def render_sample(pieces: tuple[Piece, ...]) -> str:
    return "".join(p.text if p.slot is None else sample_value(p.slot) for p in pieces)
