"""Match events against the library, with a time limit on every regex search."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logdoctor.assemble import Event, RaisedException
from logdoctor.library.gate import LiteralGate
from logdoctor.library.literals import Literals, required_literals, selective
from logdoctor.memo import remember
from logdoctor.records import Record

if TYPE_CHECKING:  # the regex module is imported by the first pattern compiled (pattern.py)
    import regex

    from logdoctor.library.pattern import Pattern
    from logdoctor.library.rules import ConstraintSet
    from logdoctor.prefilter import Prefilter
    from logdoctor.surface import SurfaceIndex

_UNBUILT = object()

# What bounds a pattern's work: it reads at most this much of one message. A length, not a time, so the
# findings do not depend on how busy the machine is (a 50 ms wall-clock budget did: under load, long
# messages lost their matches). vLLM's messages say what failed near their start; with 32 KiB the
# corpus, the fixtures and the battery give the findings they gave with no limit.
MAX_SEARCH_CHARS = 32 * 1024
# A hang guard, not a budget: a search still running after this long is a broken regex (the shipped ones
# are linted for nested quantifiers by `patterns test`). The pattern is reported and switched off for the
# rest of the run, so what follows does not depend on timing either, and the pipe is never frozen.
HANG_SECONDS = 1.0
# How far into a line a message standing alone may start, in words: room for `Error:`, a C++ location
# (`[../gloo/transport/tcp/pair.cc:589]`) or a short prefix nobody learned, not for a sentence that
# quotes the message.
MESSAGE_LEAD_WORDS = 8
# Records at these levels are what vLLM calls informational: a pattern of an error or a warning reads them
# only when its `levels` names the level (uvicorn's 401 access line is INFO and a warning).
QUIET_LEVELS = frozenset({"INFO", "DEBUG"})


@dataclass(frozen=True, slots=True)
class Match:
    pattern: Pattern
    captures: dict[str, str]
    exception: RaisedException | None  # the exception it matched, None for a log line
    record: Record  # the line that carries the matched text


_Known = tuple["Pattern", dict[str, str]]  # a remembered match: the pattern and its captures


class Library:
    def __init__(
        self,
        patterns: Sequence[Pattern],
        sets: Sequence[ConstraintSet] = (),
        literals: dict[str, Literals | None] | None = None,
        fingerprint: str | None = None,
        gates: tuple[LiteralGate[str], LiteralGate[str]] | None = None,
    ) -> None:
        """`gates`: the line and exception gates, as the library cache (stored.py) kept them: building
        them again would cost a third of a clean scan's start."""
        self.patterns = list(patterns)
        # What the library was built from (stored.load_library), when it came from files: what caches of
        # things derived from it (the prefilter) are keyed by.
        self.fingerprint = fingerprint
        self._sets: list[ConstraintSet] | None = list(sets)
        self._load_sets: Callable[[], list[ConstraintSet]] | None = None
        self.by_id = {p.id: p for p in self.patterns}
        self._exception_patterns = [p for p in self.patterns if p.where in ("exception", "any")]
        self.line_patterns = [
            p for p in self.patterns if p.where in ("line", "any") and not p.exception and p.frames is None
        ]
        # A pattern is tried only on texts holding one of the literals its regex requires (gate.py): a
        # word lookup costs a fraction of a regex search, and most texts hold none.
        known = literals or {}
        self._literals = {p.id: known[p.id] if p.id in known else required_literals(p.match) for p in self.patterns}
        if gates is None:
            gates = (
                LiteralGate((p.id, self._literals[p.id]) for p in self.line_patterns),
                LiteralGate((p.id, self._literals[p.id]) for p in self._exception_patterns),
            )
        self._line_gate, self._exception_gate = gates
        # The gate says which few may match; these say in what order to try them (the library's).
        self._exception_order = {p.id: (at, p) for at, p in enumerate(self._exception_patterns)}
        self._line_order = {p.id: (at, p) for at, p in enumerate(self.line_patterns)}
        # A message met without its exception line (a pasted last line, a pydantic detail alone) is tried
        # against the exception patterns that need no traceback to decide.
        # Only patterns whose regex requires a selective literal: one that relies on its exception type
        # alone (`(?P<msg>.+)`) would claim any line, and one that needs a newline cannot match one line.
        self.message_patterns = [
            p
            for p in self._exception_patterns
            if p.alone and p.frames is None and selective(self._literals[p.id], one_line=True)
        ]
        self._message_ids = frozenset(p.id for p in self.message_patterns)
        self._message_order = {p.id: (at, p) for at, p in enumerate(self.message_patterns)}
        self.exception_names = sorted({name.rsplit(".", 1)[-1] for p in self.patterns for name in p.exception})
        self.timed_out: set[str] = set()
        # What a log line matched, by its message and level: a crash loop prints the same lines every
        # launch, and request logs the same few; the gate and the regexes run once for each.
        self._line_memo: dict[tuple[str, str | None, bool], _Known | None] = {}
        self._record_memo: dict[tuple[str, str | None], tuple[bool, Pattern, dict[str, str]] | None] = {}
        # Set by the edge (Library.load reads $LOGDOCTOR_PREFILTER; the CLI prints notices): the library
        # itself reads no environment and prints nothing.
        self.prefilter_enabled = True
        self.notices: list[str] = []
        self.on_notice: Callable[[str], None] = self.notices.append
        self._prefilter: object = _UNBUILT
        self._surface: object = _UNBUILT

    @property
    def sets(self) -> list[ConstraintSet]:
        """The constraint sets (library/rules.py); a loaded library reads them on first use: a scan of a
        log without a rule's error never does."""
        if self._sets is None:
            self._sets = self._load_sets() if self._load_sets is not None else []
        return self._sets

    def set_sets_loader(self, load: Callable[[], list[ConstraintSet]]) -> None:
        self._sets, self._load_sets = None, load

    def surface(self) -> SurfaceIndex | None:
        """vLLM's error surface (logdoctor/surface), loaded on first use; None when the packaged index is
        missing or unreadable (patterns still work, unknown vLLM messages stay unrecognized)."""
        if self._surface is _UNBUILT:
            from logdoctor.surface import default_index

            try:
                self._surface = default_index()
            except (OSError, ValueError, KeyError):
                self._surface = None
        return self._surface  # type: ignore[return-value]

    def prefilter(self) -> Prefilter | None:
        """The prefilter for this library, built once; None when it cannot be built or is switched off
        ($LOGDOCTOR_PREFILTER=off reads every line: for benchmarks and bug hunts)."""
        if self._prefilter is _UNBUILT:
            from logdoctor.prefilter import Prefilter

            self._prefilter = Prefilter.for_library(self) if self.prefilter_enabled else None
        return self._prefilter  # type: ignore[return-value]

    @classmethod
    def load(cls, extra_dirs: Iterable[str] = ()) -> Library:
        """The shipped patterns and the user's (`extra_dirs`, $LOGDOCTOR_PATTERNS), from logdoctor's cache
        when their files are unchanged (library/stored.py)."""
        from logdoctor.library.stored import load_library

        return load_library(extra_dirs)

    def _search(self, pattern: Pattern, text: str) -> regex.Match[str] | None:
        if pattern.id in self.timed_out:
            return None
        try:
            return pattern.compiled.search(text, 0, MAX_SEARCH_CHARS, timeout=HANG_SECONDS)
        except TimeoutError:
            self.timed_out.add(pattern.id)
            self.on_notice(
                f"logdoctor: pattern {pattern.id} ({pattern.origin}) ran for {HANG_SECONDS}s on one line: "
                "its regex backtracks catastrophically; it is switched off for the rest of this run"
            )
            return None

    def match_exception(self, exc: RaisedException, event: Event, any_type: bool = False) -> Match | None:
        """The first pattern that explains this exception. `any_type`: ignore the patterns' exception
        types (the message is what identifies an error that another class re-raised or printed)."""
        names = exc.type_names
        texts = _unwrapped(exc.message)
        if not exc.message.strip() and exc.frames and exc.frames[-1].code:
            # A bare `assert` says nothing but its source line, which the traceback prints.
            texts.append(exc.frames[-1].code)
        if any_type and exc.type:
            texts.append(f"{exc.type}: {exc.message}")  # `Error: ...` read as a type was part of the message
        # Every pattern is tried on every reading of the message before the next pattern: a generic
        # pattern that matches a wrapped message's first line must not win over the specific one that
        # matches it unwrapped.
        candidates = set().union(*(self._exception_gate.candidates(text) for text in texts))
        for pattern in _in_order(candidates, self._exception_order):
            wrong_type = pattern.exception and names.isdisjoint(pattern.exception)
            if wrong_type and not self._claims_any_type(pattern, any_type):
                continue
            if pattern.compiled_frames is not None and not _frames_match(pattern, exc):
                continue
            for text in texts:
                found = self._search(pattern, text)
                if found is not None:
                    return Match(pattern, _captures(found), exc, exc.record or event.record)
        return None

    def literals_of(self, pattern: Pattern) -> Literals | None:
        """The strings one of which every match of the pattern's regex contains (library/literals.py)."""
        return self._literals[pattern.id]

    def _claims_any_type(self, pattern: Pattern, any_type: bool) -> bool:
        """May this pattern claim its message under another exception type? Only when asked, and only a
        pattern whose text alone picks out its error (one that relies on its type, `(?P<msg>.+)`, may not)."""
        return any_type and pattern.alone and selective(self._literals[pattern.id])

    def match_record(self, record: Record) -> Match | None:
        """A raw line or an ERROR record outside any traceback: the first pattern, in library order, that
        matches it as a log line, or as an exception's message standing alone in it (a user pasted the
        last line without its type, a pydantic `Value error, ...` detail alone, a program logged it). A
        message standing alone must start near the line's start: the line *is* the message, it does not
        quote it."""
        key = (record.message, record.level)
        if key in self._record_memo:
            known = self._record_memo[key]
        else:
            match = self._match_record(record)
            known = None if match is None else (match.exception is not None, match.pattern, match.captures)
            remember(self._record_memo, key, record.message, known, MEMO_ENTRIES)
        if known is None:
            return None
        alone, pattern, captures = known
        if not alone:
            return Match(pattern, dict(captures), None, record)
        message = record.message
        exc = RaisedException(_pydantic_type(message), message, record, records=[record])
        return Match(pattern, dict(captures), exc, record)

    def _match_record(self, record: Record) -> Match | None:
        message = record.message
        as_line = self._line_gate.candidates(message)  # line patterns only: the gate holds no others
        as_message = self._exception_gate.candidates(message) & self._message_ids
        if not as_line and not as_message:
            return None
        # Library order decides between the two readings, as it does between patterns (a specific cuBLAS
        # status before the generic `CUDA error: ...` line), except that a wrapper (argparse's `error:
        # argument --x: 1 validation error for ...`) yields to a cause in the lines it quotes.
        line_match = self.match_line(record) if as_line else None
        if line_match is not None and line_match.pattern.role == "wrapper":
            cause = self.match_line(record, skip_wrappers=True) or self._match_alone(record, as_message, None)
            if cause is not None:
                return cause
        return self._match_alone(record, as_message, line_match) or line_match

    def _match_alone(self, record: Record, candidates: Set[str], before: Match | None) -> Match | None:
        """The first message pattern (tried before the pattern of `before`, if any) whose message stands
        alone in the record, a wrapper's only when nothing else matches."""
        message = record.message
        wrapper: Match | None = None  # the first wrapper whose message stands alone: the answer if no cause does
        for pattern in _in_order(candidates, self._message_order):
            if before is not None and pattern.order > before.pattern.order:
                break
            last_resort = before is None and pattern.role == "wrapper"
            if last_resort and wrapper is not None:
                continue
            found = self._search(pattern, message)
            if found is not None and len(message[: found.start()].split()) <= MESSAGE_LEAD_WORDS:
                exc = RaisedException(_pydantic_type(message), message, record, records=[record])
                match = Match(pattern, _captures(found), exc, record)
                if not last_resort:
                    return match
                wrapper = match
        return wrapper

    def match_line(self, record: Record, skip_wrappers: bool = False) -> Match | None:
        key = (record.message, record.level, skip_wrappers)
        if key in self._line_memo:
            known = self._line_memo[key]
        else:
            known = self._match_line(record.message, record.level, skip_wrappers)
            remember(self._line_memo, key, record.message, known, MEMO_ENTRIES)
        return None if known is None else Match(known[0], dict(known[1]), None, record)

    def _match_line(self, message: str, level: str | None, skip_wrappers: bool) -> _Known | None:
        candidates = self._line_gate.candidates(message)
        if not candidates:
            return None
        quiet = level in QUIET_LEVELS
        for pattern in _in_order(candidates, self._line_order):
            if skip_wrappers and pattern.role == "wrapper":
                continue
            if pattern.levels and level not in pattern.levels:
                continue
            if quiet and not pattern.levels and pattern.severity != "info":
                continue  # vLLM says this line is informational: a request log quoting an error, not one
            found = self._search(pattern, message)
            if found is not None:
                return pattern, _captures(found)
        return None


def _in_order(ids: Set[str], order: dict[str, tuple[int, Pattern]]) -> list[Pattern]:
    """The patterns of `ids` that `order` holds, in its order: a gate's few candidates, not a walk over
    a thousand patterns to find them."""
    return [pattern for _, pattern in sorted(order[i] for i in ids if i in order)]


MEMO_ENTRIES = 4096  # distinct lines whose match is remembered (logdoctor/memo.py)


def _captures(found: regex.Match[str]) -> dict[str, str]:
    return {k: v for k, v in found.groupdict().items() if v is not None}


def _unwrapped(message: str) -> list[str]:
    """The message, then (if it has several lines) the same joined as a terminal's hard wrap would have
    cut it (no separator), then as a flattened paragraph (a space)."""
    if "\n" not in message:
        return [message]
    lines = message.split("\n")
    return [message, "".join(lines), " ".join(line.strip() for line in lines)]


def _pydantic_type(text: str) -> str:
    stripped = text.lstrip()
    if stripped.startswith("Value error, "):
        return "ValueError"
    if stripped.startswith("Assertion failed, "):
        return "AssertionError"
    return ""


def _frames_match(pattern: Pattern, exc: RaisedException) -> bool:
    compiled = pattern.compiled_frames
    return any(
        compiled.search(f"{frame.function} {frame.file}")
        for frame in exc.frames
    )
