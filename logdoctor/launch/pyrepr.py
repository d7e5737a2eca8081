"""A safe reader for the Python reprs vLLM prints in its startup header.

    non-default args: {'model': 'org/name', 'kv_transfer_config': KVTransferConfig(kv_role='kv_both', ...)}
    args: Namespace(subparser='serve', port=8000, dispatch_function=<function serve at 0x7f3a2b1c0d30>)
    speculative_config=SpeculativeConfig(method='mtp', model='org/name', num_spec_tokens=3)

The text is untrusted, so nothing here evaluates it (no eval, no ast.literal_eval, which also rejects
`Name(...)` and `<...>`). A small iterative parser with an explicit stack reads it instead: nesting costs
heap, never Python frames, so depth is bounded by `max_depth` and not by the recursion limit. Every token
is read once, strings are joined from slices, so time is linear in the input.

Literals become plain Python values; the rest becomes the small dataclasses below:

    Name(1, k=2)              Call('Name', (1,), {'k': 2})
    torch.bfloat16            Symbol('torch.bfloat16')
    <function serve at 0x1>   Opaque('<function serve at 0x1>')
    <Backend.TRITON: 'x'>     EnumMember('Backend.TRITON', 'x')
    {'a', 'b'}, set()         frozenset({'a', 'b'}), frozenset()

A dict whose keys cannot be hashed becomes a tuple of (key, value) pairs, a set of unhashable items a list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_DEPTH = 64
MAX_LENGTH = 2 * 1024 * 1024  # a non-default-args line is a few kB; 2 MB is far past any real one


class ReprError(ValueError):
    """The text is not a repr this parser reads; `position` is the index where reading stopped."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.message = message
        self.position = position


class _EndOfInput(ReprError):
    """The text ended inside a value: what a log line cut mid-repr looks like."""


@dataclass(frozen=True, slots=True)
class Call:
    """`Name(args, key=value)`: a dataclass, Namespace or other call-shaped repr."""

    name: str
    args: tuple[object, ...] = ()
    kwargs: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Symbol:
    """A bare dotted name: `torch.bfloat16`, `LoadFormat.AUTO`, JSON's `null`."""

    name: str


@dataclass(frozen=True, slots=True)
class Opaque:
    """A `<...>` repr that carries no value, kept as its text."""

    text: str


@dataclass(frozen=True, slots=True)
class EnumMember:
    """`<Cls.MEMBER: value>`, the default repr of an Enum member."""

    name: str
    value: object


@dataclass(frozen=True, slots=True)
class Prefix:
    """What `parse_prefix` read: the value, and whether the text ended before the value did."""

    value: object
    truncated: bool


def parse(text: str, *, max_depth: int = MAX_DEPTH, max_length: int = MAX_LENGTH) -> object:
    """The value of `text`, which must hold exactly one repr (surrounding whitespace allowed)."""
    parser = _Parser(text, 0, max_depth, max_length, lenient=False)
    value = parser.run()
    end = parser.skip_space(parser.pos)
    if end != len(text):
        raise ReprError("unexpected text after the value", end)
    return value


def parse_prefix(text: str, *, max_depth: int = MAX_DEPTH, max_length: int = MAX_LENGTH) -> Prefix:
    """Like `parse`, for text that may be cut short (log lines often are).

    If the text ends inside the value, the containers still open are closed with the items they hold
    completely: `{'a': 1, 'b': [2, 3` gives `{'a': 1, 'b': [2]}` (the `3` may have been `30`), with
    `truncated=True`. An unterminated string, a key without its value, or a bare token (number, name)
    that runs into the end of the text is dropped. Malformed text that is not cut still raises.
    """
    parser = _Parser(text, 0, max_depth, max_length, lenient=True)
    value = parser.run()
    if parser.truncated:
        return Prefix(value, True)
    end = parser.skip_space(parser.pos)
    if end != len(text):
        raise ReprError("unexpected text after the value", end)
    return Prefix(value, False)


def parse_leading(
    text: str, start: int = 0, *, max_depth: int = MAX_DEPTH, max_length: int = MAX_LENGTH
) -> tuple[object, int]:
    """The value that starts at `start` (after any whitespace) and the index just past it.

    For text where a repr is followed by something else, e.g. `kernel_config=KernelConfig(...), extra=1`.
    """
    parser = _Parser(text, start, max_depth, max_length, lenient=False)
    value = parser.run()
    return value, parser.pos


# Token patterns. Each is matched at one position only (`pattern.match(text, pos)`) and none can
# backtrack beyond the token it reads, so scanning stays linear.
_SPACE = re.compile(r"\s*")
_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")
_KEYWORD = re.compile(r"([^\W\d]\w*)\s*=(?!=)")
_NUMBER = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+"
    r"|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)"
)
_SIGNED_SPECIAL = re.compile(r"[+-](?:inf|nan)\b")
_STRING_START = re.compile(r"([bBrRuU]{0,2})(['\"])")
_ENUM_HEAD = re.compile(r"<([^\W\d]\w*(?:\.[^\W\d]\w*)+): ")
_ANGLE = re.compile(r"[<>]")
_STRING_BREAK = {"'": re.compile(r"['\\]"), '"': re.compile(r'["\\]')}

_CONSTANTS: dict[str, object] = {
    "True": True,
    "False": False,
    "None": None,
    "inf": float("inf"),
    "nan": float("nan"),
    "Ellipsis": ...,
}
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\n": "",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}  # escape letter -> digits; \u and \U only in str, not bytes
_CLOSERS = {"[": "]", "(": ")", "{": "}"}
_NO_KEY = object()  # a brace frame with no key waiting for its value


@dataclass(slots=True)
class _Frame:
    """One open container. `kind` is its opening bracket, or `call` for `Name(`."""

    kind: str
    start: int
    name: str = ""
    items: list[object] = field(default_factory=list)
    pairs: list[tuple[object, object]] = field(default_factory=list)
    kwargs: dict[str, object] = field(default_factory=dict)
    pending_key: object = _NO_KEY  # brace: the key read before ':'
    pending_keyword: str | None = None  # call: the name read before '='
    is_dict: bool | None = None  # brace: undecided until the first item shows ':' or not
    saw_comma: bool = False  # paren: `(x,)` is a tuple, `(x)` is x

    @property
    def closer(self) -> str:
        return ")" if self.kind == "call" else _CLOSERS[self.kind]

    def finish(self) -> object:
        if self.kind == "[":
            return self.items
        if self.kind == "(":
            if len(self.items) == 1 and not self.saw_comma:
                return self.items[0]
            return tuple(self.items)
        if self.kind == "{":
            if self.is_dict is False:
                return _as_set(self.items)
            try:
                return dict(self.pairs)
            except TypeError:
                return tuple(self.pairs)
        if self.name in ("set", "frozenset") and not self.kwargs and len(self.items) <= 1:
            # `set()` and `frozenset({...})` are how Python writes an empty set and a frozenset.
            contents = self.items[0] if self.items else ()
            if isinstance(contents, frozenset | list | tuple):
                return _as_set(list(contents))
        return Call(self.name, tuple(self.items), self.kwargs)


def _as_set(items: list[object]) -> object:
    try:
        return frozenset(items)
    except TypeError:
        return items


class _Parser:
    def __init__(self, text: str, start: int, max_depth: int, max_length: int, lenient: bool) -> None:
        if len(text) > max_length:
            raise ReprError(f"input is {len(text)} characters, more than the limit of {max_length}", max_length)
        self.text = text
        self.pos = start
        self.max_depth = max_depth
        self.lenient = lenient
        self.truncated = False
        self.stack: list[_Frame] = []

    def skip_space(self, pos: int) -> int:
        match = _SPACE.match(self.text, pos)
        return match.end() if match else pos

    def run(self) -> object:
        try:
            return self._run()
        except _EndOfInput:
            if not self.lenient or not self.stack:
                raise
            self.truncated = True
            return self._close_open_frames()

    def _close_open_frames(self) -> object:
        """At a cut: close every open container with what it holds, innermost first."""
        value = self.stack.pop().finish()
        while self.stack:
            frame = self.stack.pop()
            self._attach_partial(frame, value)
            value = frame.finish()
        return value

    @staticmethod
    def _attach_partial(frame: _Frame, value: object) -> None:
        if frame.kind == "{":
            if frame.pending_key is not _NO_KEY:
                frame.pairs.append((frame.pending_key, value))
            elif frame.is_dict is not True:
                frame.is_dict = False
                frame.items.append(value)
            # else: the cut container was a key, and a key without a value is dropped
        elif frame.kind == "call" and frame.pending_keyword is not None:
            frame.kwargs[frame.pending_keyword] = value
        else:
            frame.items.append(value)

    def _run(self) -> object:
        text = self.text
        while True:
            # Expecting a value (or, right after an opener or a comma, the container's closer).
            pos = self.skip_space(self.pos)
            if pos >= len(text):
                raise _EndOfInput("the text ended where a value was expected", pos)
            char = text[pos]
            stack = self.stack
            if stack and char == stack[-1].closer and self._may_close(stack[-1]):
                self.pos = pos + 1
                value = stack.pop().finish()
            elif char in "[({":
                self._push(_Frame(char, pos))
                self.pos = pos + 1
                continue
            elif (
                stack
                and stack[-1].kind == "call"
                and stack[-1].pending_keyword is None
                and (keyword := _KEYWORD.match(text, pos))
            ):
                stack[-1].pending_keyword = keyword[1]
                self.pos = keyword.end()
                continue
            else:
                value, end, bare = self._scalar(pos)
                if isinstance(value, _OpenCall):
                    self._push(_Frame("call", pos, name=value.name))
                    self.pos = end
                    continue
                if bare and end >= len(text) and stack:
                    # A number or name running into the end of a cut line may itself be cut.
                    raise _EndOfInput("the text ended inside a value", end)
                self.pos = end
            done, value = self._attach(value)
            if done:
                return value

    def _may_close(self, frame: _Frame) -> bool:
        """An empty container, or a trailing comma (`(1,)`), may close where a value is expected."""
        if frame.kind == "{":
            return frame.pending_key is _NO_KEY
        if frame.kind == "call":
            return frame.pending_keyword is None
        return True

    def _push(self, frame: _Frame) -> None:
        if len(self.stack) >= self.max_depth:
            raise ReprError(f"nesting deeper than {self.max_depth}", frame.start)
        self.stack.append(frame)

    def _attach(self, value: object) -> tuple[bool, object]:
        """Give a finished value to the open container, then read the separator that follows it.

        Returns (True, value) when the outermost value is complete.
        """
        text = self.text
        while True:
            if not self.stack:
                return True, value
            frame = self.stack[-1]
            pos = self.skip_space(self.pos)
            char = text[pos] if pos < len(text) else ""
            if frame.kind == "{":
                if frame.pending_key is not _NO_KEY:
                    frame.pairs.append((frame.pending_key, value))
                    frame.pending_key = _NO_KEY
                elif char == ":" and frame.is_dict is not False:
                    frame.is_dict = True
                    frame.pending_key = value
                    self.pos = pos + 1
                    return False, None
                elif frame.is_dict is True or (not char and frame.is_dict is None):
                    # a dict key without its value (or, at a cut, maybe one): nothing to keep
                    if not char:
                        raise _EndOfInput("the text ended after a dict key", pos)
                    raise ReprError("expected ':' after a dict key", pos)
                else:
                    frame.is_dict = False
                    frame.items.append(value)
            elif frame.kind == "call" and frame.pending_keyword is not None:
                frame.kwargs[frame.pending_keyword] = value
                frame.pending_keyword = None
            else:
                frame.items.append(value)
            if not char:
                raise _EndOfInput("the text ended inside a container", pos)
            if char == ",":
                frame.saw_comma = True
                self.pos = pos + 1
                return False, None
            if char == frame.closer:
                self.pos = pos + 1
                value = self.stack.pop().finish()
                continue
            raise ReprError(f"expected ',' or {frame.closer!r}", pos)

    def _scalar(self, pos: int) -> tuple[object, int, bool]:
        """One non-container token at `pos`: (value, end, whether it has no closing delimiter)."""
        text = self.text
        char = text[pos]
        string = _STRING_START.match(text, pos) if char in "'\"bBrRuU" else None
        if string:
            value, end = self._string(string.end(), string[2], string[1].lower())
            return value, end, False
        if char == "<":
            return (*self._angle(pos), False)
        if text.startswith("...", pos):
            return ..., pos + 3, True
        if char in "+-":
            special = _SIGNED_SPECIAL.match(text, pos)
            if special:
                return float(special[0]), special.end(), True
        if char.isdigit() or char in "+-.":
            return (*self._number(pos), True)
        name = _NAME.match(text, pos)
        if not name:
            raise ReprError(f"unexpected character {char!r}", pos)
        end = name.end()
        if text.startswith("(", end):
            return _OpenCall(name[0]), end + 1, False
        word = name[0]
        if word in _CONSTANTS:
            return _CONSTANTS[word], end, True
        return Symbol(word), end, True

    def _number(self, pos: int) -> tuple[object, int]:
        match = _NUMBER.match(self.text, pos)
        if not match or match.end() == pos or match[0] in "+-":
            raise ReprError("malformed number", pos)
        token = match[0]
        end = match.end()
        try:
            if token[-1:] in "jJ" or self.text.startswith(("j", "J"), end):
                raise ReprError("complex numbers are not supported", pos)
            if token.lstrip("+-")[:2].lower() in ("0x", "0o", "0b"):
                return int(token, 0), end
            if any(mark in token for mark in ".eE"):
                return float(token.replace("_", "")), end
            return int(token), end  # int() caps the digit count, so a huge number cannot take long
        except ValueError as error:
            raise ReprError(f"malformed number ({error})", pos) from None

    def _string(self, pos: int, quote: str, prefix: str) -> tuple[object, int]:
        """The body of a quoted string starting after its opening quote; escapes decoded."""
        text = self.text
        is_bytes = "b" in prefix
        is_raw = "r" in prefix
        breaker = _STRING_BREAK[quote]
        chunks: list[str] = []
        start = pos
        while True:
            found = breaker.search(text, pos)
            if found is None:
                raise _EndOfInput("unterminated string", len(text))
            at = found.start()
            chunks.append(text[pos:at])
            if text[at] == quote:
                body = "".join(chunks)
                end = at + 1
                break
            # a backslash
            if at + 1 >= len(text):
                raise _EndOfInput("unterminated string", len(text))
            if is_raw:
                chunks.append(text[at : at + 2])
                pos = at + 2
                continue
            decoded, pos = self._escape(at, is_bytes)
            chunks.append(decoded)
        if is_bytes:
            # Escapes are ASCII in the text, so a non-ASCII character there is a literal one: not bytes.
            if not text[start:at].isascii():
                raise ReprError("non-ASCII character in a bytes literal", start)
            try:
                return body.encode("latin-1"), end
            except UnicodeEncodeError:  # found by fuzzing: an octal escape past \377 (`b'\666'`)
                raise ReprError("an escape past one byte in a bytes literal", start) from None
        return body, end

    def _escape(self, at: int, is_bytes: bool) -> tuple[str, int]:
        text = self.text
        letter = text[at + 1]
        if letter in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[letter], at + 2
        if letter in _HEX_ESCAPES and not (is_bytes and letter != "x"):
            width = _HEX_ESCAPES[letter]
            digits = text[at + 2 : at + 2 + width]
            if len(digits) < width:
                raise _EndOfInput("the text ended inside an escape", len(text))
            try:
                code = int(digits, 16)
                return chr(code), at + 2 + width
            except (ValueError, OverflowError):  # not hex, or past U+10FFFF (`\U88888888`: found by fuzzing)
                raise ReprError(f"malformed \\{letter} escape", at) from None
        if "0" <= letter <= "7":
            end = at + 1
            while end < len(text) and end < at + 4 and "0" <= text[end] <= "7":
                end += 1
            return chr(int(text[at + 1 : end], 8)), end
        # Python keeps an unknown escape as written.
        return text[at : at + 2], at + 2

    def _angle(self, pos: int) -> tuple[object, int]:
        """`<Cls.MEMBER: value>` or any other `<...>` repr, whose `<>` may nest."""
        text = self.text
        head = _ENUM_HEAD.match(text, pos)
        if head:
            member = self._enum_value(head.end())
            if member is not None:
                return EnumMember(head[1], member[0]), member[1]
        depth = 0
        at = pos
        while True:
            bracket = _ANGLE.search(text, at)
            if bracket is None:
                raise _EndOfInput("unterminated <...>", len(text))
            at = bracket.end()
            if bracket[0] == "<":
                depth += 1
            elif text[at - 2 : at] != "->":  # `->` in a signature is not a closer
                depth -= 1
                if depth == 0:
                    return Opaque(text[pos:at]), at

    def _enum_value(self, pos: int) -> tuple[object, int] | None:
        """The scalar after `<Cls.MEMBER: ` if `>` follows it; None to read the whole thing as opaque."""
        try:
            value, end, _ = self._scalar(pos)
        except ReprError:
            return None
        if isinstance(value, _OpenCall | Opaque | EnumMember) or not self.text.startswith(">", end):
            return None
        return value, end + 1


@dataclass(frozen=True, slots=True)
class _OpenCall:
    """`Name(` read: the call's arguments follow."""

    name: str
