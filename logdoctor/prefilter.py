"""Which lines of a buffer can matter to the diagnosis, found in one pass over its bytes.

Almost every line of a long vLLM log is a request, an access line or a throughput report, and none of
them can start an event, match a pattern or tell the launch tracker anything. The core would still spend
tens of microseconds on each. The prefilter finds, in one pass over a whole buffer, the lines that might:

* lines whose record starts at a level that opens an event (`WARNING`, `ERROR`, `CRITICAL`);
* lines whose message starts like something the assembler, the launch tracker or the header parser
  looks for at a message's start (a traceback, a bare `KeyError: ...`, `non-default args: {`, ...);
* lines holding a literal that a line pattern, or the tracker's lifecycle search, cannot match without
  (library/literals.py derives them from the regexes themselves).

Every trigger comes from the modules that act on the lines, so a new pattern or header parser widens the
prefilter by itself; nothing here is a hand-kept keyword list. A trigger may fire on a line that turns out
not to matter (the core then looks at it for nothing); it must never miss one that does, and the test
suite checks that a sieved scan reports exactly what a full one does.

Two steps, the second only where the first fires:

1. One Hyperscan pass (a SIMD multi-pattern matcher: gigabytes per second for all triggers at once) over
   the raw bytes. A message-start trigger is its regex behind a cheap context: the character before a
   message (line start, `)` of a process prefix, `] ` of a logger header, `|` of a compose prefix, the end
   of an ANSI sequence, ...). Without Hyperscan there is no prefilter: every line is read (the same
   findings, at the core's own speed).
2. For a level or message-start hit, the line is cleaned as framing.py would and checked at the real
   start of its record or message, so a user's prompt quoting `KeyError: 'x'` costs one check, not a trip
   through the core.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from logdoctor import assemble, cache, grammar
from logdoctor.framing import clean
from logdoctor.launch import header, tracker
from logdoctor.library.literals import MIN_LITERAL, Literals, required_literals
from logdoctor.library.matcher import QUIET_LEVELS

if TYPE_CHECKING:
    from logdoctor.library.matcher import Library


# The character(s) right before a record or a message on its raw line: the line's start, a progress bar's
# carriage return, the end of an ANSI sequence (CSI with numeric parameters, two-byte escapes, BEL of an
# OSC), a process prefix's `)`, a rank's `]:`, a logger header's `] `, a compose service's `|`, a collector
# timestamp's last digit or `Z`, uvicorn's `LEVEL:   `. It is only an accelerator for Hyperscan (step 2
# checks the real start); CSI sequences with intermediate bytes are left out because they made the scan
# three times slower, and no terminal library writes them before a log message.
CONTEXT = r"(?:^|[\r\x07m)\]|0-9Z]\s*|\]:\s*|[A-Z]:\s+|\x1b\[[0-9;?]*[@-~]|\x1b[@-Z\\\\-_])"

# Step 2 works on the cleaned line: what framing.py and records.py strip before a record (a collector's
# timestamp, a compose service, up to two process prefixes: vLLM's, Ray's or torch elastic's `[rank0]:`),
# and the logger header before a message (`INFO 11-30 12:00:00 [core.py:1584] `, `core.py:1584] ` up to
# 0.7, or uvicorn's `INFO:     `), all as the record grammar (grammar.py) has them.
_RECORD_PREFIX = re.compile(
    f"(?:{grammar.anonymous(grammar.COLLECTOR_TIME.regex)})?"
    f"(?:{grammar.anonymous(grammar.COMPOSE_SERVICE.regex)})?"
    rf"(?:{grammar.either(grammar.PROCESS, grammar.RANK)}\s?){{0,2}}"
)
_LOGGER_HEADER = re.compile(
    f"(?:{grammar.anonymous(grammar.LOGGER_HEADER.regex)} |{grammar.anonymous(grammar.UVICORN_LEVEL.regex)})"
)
_EVENT_LEVEL_NAMES = (*assemble.EVENT_LEVELS, "WARN")
_QUIET_LEVEL_NAMES = ("DEBUG", "INFO")
# A message-start regex whose every required literal is at least this long is searched for by its literals
# (step 2 checks the start); one with a shorter literal (`Error` of any `FooError: ...`) would send too many
# lines to step 2, so it is searched as itself behind CONTEXT.
MESSAGE_LITERAL = 8
# A plain (uncoloured) vLLM INFO/DEBUG record, as bytes: `(APIServer pid=1) INFO 11-30 10:00:00 [x.py:1] `.
_QUIET_RECORD = re.compile(
    grammar.within_line(
        f"(?:{grammar.anonymous(grammar.PROCESS.regex)} )?(?:INFO|DEBUG) {grammar.anonymous(grammar.TIME.regex)}"
    )
)

Confirm = Literal["level", "message", "alone"]


@dataclass(frozen=True, slots=True)
class Trigger:
    regex: str  # for the byte-level engine: an escaped literal, or CONTEXT + a message-start regex
    caseless: bool
    confirm: Confirm | None  # what step 2 checks on a hit line; None: the hit is enough
    source: str  # what asked for it, for `logdoctor patterns test` and error messages


class NoPrefilter(Exception):
    """The library has a line pattern no literal can find: every line must be read."""


# Container runtime lines (Docker's JSON, CRI's `<time> stdout F <message>`) escape or split what the
# other triggers look for. In a plain file that holds some (a log pasted together from several sources)
# every one of them is read: the framer decodes each and joins split pieces.
CONTAINER_LINES = (r'^\{"', r"^\d{4}-\d\d-\d\dT\S+ (?:stdout|stderr) [PF] ")


def triggers_for(library: Library) -> list[Trigger]:
    triggers = [Trigger(CONTEXT + "(?:WARN|ERROR|CRITICAL)", False, "level", "levels that open an event")]
    triggers += [Trigger(regex, False, None, "container runtime lines") for regex in CONTAINER_LINES]
    at_start = (
        *assemble.opening_messages(library.exception_names),
        *tracker.MATCHED_AT_START,
        *header.FACT_STARTS,
    )
    for regex in at_start:
        found = required_literals(regex)
        texts = [t for t in found.texts if "\n" not in t] if found else []
        if texts and min(len(t) for t in texts) >= MESSAGE_LITERAL:
            # Its literals, confirmed at the message's start in step 2: Hyperscan finds literals at memory
            # speed, while a regex whose literal sits behind a variable part (`python[\d.]* -m vllm...`)
            # is run as an automaton over every byte (a third of the whole scan, for one trigger).
            triggers += _literal_triggers(regex, "message", found)
        elif regex.isascii():
            triggers.append(Trigger(CONTEXT + "(?:" + grammar.anonymous(regex) + ")", False, "message", regex))
        else:  # a byte-level engine cannot read `█` in a class: its literals, then step 2
            triggers += _literal_triggers(regex, "message")
    for regex in tracker.SEARCHED:
        triggers += _literal_triggers(regex, None, required_literals(regex))
    for pattern in library.line_patterns:
        if pattern.levels and set(pattern.levels) <= set(assemble.EVENT_LEVELS):
            continue  # its lines carry a level the level trigger already finds
        # An error's or warning's pattern does not read INFO/DEBUG records unless its levels say so
        # (matcher.QUIET_LEVELS): its hits there are logged prompts, confirmed away in step 2.
        reads_quiet = pattern.severity == "info" or bool(set(pattern.levels) & QUIET_LEVELS)
        triggers += _literal_triggers(pattern.match, None if reads_quiet else "alone", library.literals_of(pattern))
    # An exception's message can stand alone on a raw line or a WARNING+ record (library.match_record),
    # not in a DEBUG or INFO record (where a logged prompt quotes errors all day).
    for pattern in library.message_patterns:
        triggers += _literal_triggers(pattern.match, "alone", library.literals_of(pattern))
    # ... and so can a vLLM message no pattern knows, which the index of vLLM's error surface explains:
    # every rendering of an indexed message holds its anchors.
    surface = library.surface()
    if surface is not None:
        triggers += [Trigger(_byte_literal(a), False, "alone", "vllm error surface") for a in surface.anchors()]
    return triggers


def _literal_triggers(regex: str, confirm: Confirm | None, found: Literals | None = None) -> list[Trigger]:
    found = found if found is not None else required_literals(regex)
    texts = sorted(t for t in found.texts if "\n" not in t) if found else []
    if found is None or not texts or min(len(t) for t in texts) < MIN_LITERAL:
        raise NoPrefilter(f"no literal of {MIN_LITERAL}+ characters is required by {regex[:80]!r}")
    return [Trigger(_byte_literal(text), found.caseless, confirm, regex) for text in texts]


def _byte_literal(text: str) -> str:
    """A literal as a byte-level regex: every byte that is not an ASCII letter or digit as \\xHH."""
    return "".join(chr(b) if chr(b).isalnum() and b < 128 else f"\\x{b:02x}" for b in text.encode())


class _Confirmation:
    """Step 2: on one hit line, the condition its trigger left open."""

    def __init__(self, message_starts: Sequence[str]) -> None:
        self.starts = list(dict.fromkeys(message_starts))  # a regex found by several literals is one start
        self._starts = re.compile("|".join(f"(?:{grammar.anonymous(r)})" for r in self.starts))

    def __call__(self, kind: Confirm, raw: bytes) -> bool:
        if kind == "alone" and _QUIET_RECORD.match(raw) and b"\r" not in raw.rstrip(b"\r\n"):
            # The common case, a plain INFO/DEBUG record, without decoding the line. Not when a carriage
            # return redraws it: the line then reads as its last segment (framing.clean), which may be an error.
            return False
        text = clean(raw.decode("utf-8", "replace"))
        record = _RECORD_PREFIX.match(text)
        at = record.end() if record else 0
        if kind == "level":
            return text.startswith(_EVENT_LEVEL_NAMES, at)
        if kind == "alone":
            return not text.startswith(_QUIET_LEVEL_NAMES, at) or _LOGGER_HEADER.match(text, at) is None
        if self._starts.match(text, at):
            return True
        # A raw line's message starts after the prefixes; a logger record's after its header too.
        logger = _LOGGER_HEADER.match(text, at)
        return logger is not None and self._starts.match(text, logger.end()) is not None


class Prefilter:
    """line_starts(buffer, start, end): offsets of the lines in buffer[start:end] a trigger fires on.

    Most of a long log is quiet records (`(APIServer pid=1) INFO 11-30 ...`), and a logged prompt in one
    holds trigger literals by the dozen, every one confirmed away in step 2 (a level or "alone" trigger
    never fires on a quiet record). So the triggers are in two Hyperscan databases: the ones a quiet
    record can satisfy (message starts, literals of patterns that read INFO, the tracker's, a redrawn
    line) scan the whole buffer; the level and "alone" ones scan only the runs of lines that are not
    quiet records (a run-finder in `re` steps from line to line at C speed), which in a normal log are
    the warnings and tracebacks: a small part of the bytes and of the hits."""

    def __init__(self, triggers: list[Trigger]) -> None:
        import hyperscan

        self._confirm_kind = [t.confirm for t in triggers]
        self._confirmation = _Confirmation([t.source for t in triggers if t.confirm == "message"])
        everywhere, unquiet = _split(triggers)
        self._everywhere = _HyperscanEngine(_cached_database(hyperscan, triggers, everywhere))
        self._unquiet = _HyperscanEngine(_cached_database(hyperscan, triggers, unquiet))

    @classmethod
    def for_library(cls, library: Library) -> Prefilter | None:
        """None when Hyperscan is not installed (no pure-Python scan of the triggers is faster than
        reading every line: one `re` alternation of them ran at 8 MB/s, the core alone at 14), or when
        a pattern requires no literal.

        Deriving twenty thousand triggers (and loading the error-surface index for its anchors) costs
        seconds; a library loaded from its cache (library.fingerprint) finds its prefilter cached too."""
        if not hyperscan_available():
            return None
        import hyperscan

        plan = _cached_plan(hyperscan, library) if library.fingerprint else None
        if plan is not None:
            return plan
        try:
            prefilter = cls(triggers_for(library))
        except NoPrefilter:
            return None
        if library.fingerprint:
            _save_plan(hyperscan, library, prefilter)
        return prefilter

    @classmethod
    def _restored(cls, kinds: list[Confirm | None], starts: list[str], everywhere: Any, unquiet: Any) -> Prefilter:
        prefilter = cls.__new__(cls)
        prefilter._confirm_kind = kinds
        prefilter._confirmation = _Confirmation(starts)
        prefilter._everywhere = _HyperscanEngine(everywhere)
        prefilter._unquiet = _HyperscanEngine(unquiet)
        return prefilter

    def _hits(self, buffer: bytes, start: int, end: int) -> list[tuple[int, int]]:
        """(trigger, absolute end) of every hit, in order of their ends."""
        view = memoryview(buffer)
        hits = [(t, start + e) for t, e in self._everywhere.matches(view[start:end])]
        for a, b in _unquiet_runs(buffer, start, end):
            hits += [(t, a + e) for t, e in self._unquiet.matches(view[a:b])]
        hits.sort(key=itemgetter(1))
        return hits

    def line_starts(self, buffer: bytes, start: int, end: int) -> list[int]:
        # Hits come in clusters: a logged prompt can hold dozens of trigger literals, every one confirmed
        # away by the same check of the same line. So the line of the last hit and what its checks found
        # are kept, and a hit inside it costs two comparisons instead of a search and a check.
        starts: list[int] = []
        line = stop = -1  # the current line: buffer[line:stop], stop at its newline (or `end`)
        accepted = False
        checked: dict[Confirm, bool] = {}
        rfind, find = buffer.rfind, buffer.find
        kinds, confirm = self._confirm_kind, self._confirmation
        for trigger, match_end in self._hits(buffer, start, end):
            last = max(match_end - 1, start)  # the hit's last byte
            if not line <= last < stop:
                line = max(rfind(b"\n", start, last) + 1, start)
                found = find(b"\n", line, end)
                stop = found if found >= 0 else end
                accepted = False
                checked = {}
            elif accepted:
                continue
            kind = kinds[trigger]
            if kind is not None:
                ok = checked.get(kind)
                if ok is None:
                    ok = checked[kind] = confirm(kind, buffer[line:stop])
                if not ok:
                    continue
            starts.append(line)
            accepted = True
        if any(a >= b for a, b in zip(starts, starts[1:], strict=False)):
            starts = sorted(set(starts))
        return starts


class _HyperscanEngine:
    def __init__(self, database: Any) -> None:
        import hyperscan

        self._database = database  # None: no trigger (Hyperscan compiles no empty database)
        self._scratch = hyperscan.Scratch(database) if database is not None else None

    def matches(self, data: memoryview) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        add = found.append

        def on_match(trigger: int, _start: int, end: int, _flags: int, _context: object) -> None:
            add((trigger, end))

        if len(data) and self._database is not None:
            self._database.scan(data, match_event_handler=on_match, scratch=self._scratch)
        return found


def _split(triggers: list[Trigger]) -> tuple[list[int], list[int]]:
    """The triggers a quiet record can satisfy, and the others (level, "alone"), by index."""
    unquiet = [i for i, t in enumerate(triggers) if t.confirm in ("level", "alone")]
    chosen = set(unquiet)
    return [i for i in range(len(triggers)) if i not in chosen], unquiet


# A line that is a quiet record from its start: step 2's fast path, or uvicorn's access line at INFO
# (`(APIServer pid=1) INFO:     10.0.0.1:5 - "POST ..."`, one per request), which step 2 confirms away
# as a quiet record with a logger header. Written narrower than the grammar's process prefix (a name of
# word characters and spaces, no Ray `ip=`), which runs twice as fast at every newline; a quiet record
# it does not recognise is only scanned, and confirmed away in step 2. Then the newline before a line
# that is not one, or before one that is: the run-finder's two searches, each led by a literal newline.
_QUIET_AT = (
    rb"(?:\([\w ]*pid=\d+\) )?(?:INFO|DEBUG)(?: "
    + grammar.within_line(grammar.anonymous(grammar.TIME.regex))
    + rb"|:[ \t])"
)
_QUIET_LINE = re.compile(_QUIET_AT)
_UNQUIET_NEXT = re.compile(b"\n(?!" + _QUIET_AT + b")")
_QUIET_NEXT = re.compile(b"\n(?=" + _QUIET_AT + b")")
_REDRAWN = re.compile(rb"\r[^\n]")  # a carriage return that is not the end of its line
# Runs of unquiet lines closer than this are scanned as one (the quiet lines between them then cost a
# little scanning, where a Hyperscan call per short run would cost more).
RUN_GAP = 4096


def _unquiet_runs(buffer: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """[a, b) spans of buffer[start:end] covering every line that is not a quiet record, and every line
    a carriage return redraws (it reads as its last segment, which its quiet prefix says nothing of)."""
    spans: list[tuple[int, int]] = []
    pos, at = start, start if not _QUIET_LINE.match(buffer, start, end) else None
    while True:
        if at is None:
            found = _UNQUIET_NEXT.search(buffer, pos, end)
            if found is None or found.start() + 1 >= end:
                break
            at = found.start() + 1
        stop_match = _QUIET_NEXT.search(buffer, at, end)
        stop = stop_match.start() + 1 if stop_match is not None else end
        spans.append((at, stop))
        if stop >= end:
            break
        pos, at = stop, None
    for redraw in _REDRAWN.finditer(buffer, start, end):
        line = buffer.rfind(b"\n", start, redraw.start()) + 1 or start
        stop = buffer.find(b"\n", redraw.start(), end)
        spans.append((line, stop + 1 if stop >= 0 else end))
    return _merged(sorted(spans))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, those that overlap or lie closer than RUN_GAP joined."""
    runs: list[tuple[int, int]] = []
    for a, b in spans:
        if runs and a - runs[-1][1] < RUN_GAP:
            runs[-1] = (runs[-1][0], max(b, runs[-1][1]))
        else:
            runs.append((a, b))
    return runs


def _hyperscan_flags() -> int:
    # PREFILTER: Hyperscan may widen a construct it cannot build exactly, never narrow it.
    try:
        import hyperscan
    except ImportError:
        return 0
    return int(hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_PREFILTER)


_FLAGS = _hyperscan_flags()


def _cached_database(hyperscan: Any, triggers: list[Trigger], ids: list[int]) -> Any:
    """Building a database takes a sixth of a second; loading a serialized one, microseconds. It is kept
    in logdoctor's cache (cache.py), keyed by the expressions and Hyperscan's version. A trigger's id is
    its index in `triggers`, whichever database holds it."""
    if not ids:
        return None
    expressions = [triggers[i].regex.encode() for i in ids]
    flags = [_FLAGS | hyperscan.HS_FLAG_CASELESS if triggers[i].caseless else _FLAGS for i in ids]
    path = cache.path_for("prefilter", cache.key_of(hyperscan.__version__, expressions, flags, ids), ".hsdb")
    stored = cache.read(path)
    if stored is not None:
        try:
            return hyperscan.loadb(stored, hyperscan.HS_MODE_BLOCK)
        except Exception:  # noqa: BLE001 - any failure to load means: build it
            pass
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=expressions, ids=ids, flags=flags)
    cache.write(path, hyperscan.dumpb(database))
    return database


def _plan_path(hyperscan: Any, library: Library) -> Any:
    """Where a library's whole prefilter is kept: keyed by the library (its files and the code that
    validates them: library.fingerprint), the code that derives triggers, the error-surface index it
    takes anchors from, and Hyperscan's version."""
    from importlib import resources

    from logdoctor import surface

    code = [Path(m.__file__ or "").read_bytes() for m in (sys.modules[__name__], assemble, tracker, header)]
    try:
        index = resources.files(surface).joinpath("vllm-surface.json.gz").read_bytes()
    except OSError:
        index = b""
    key = cache.key_of(library.fingerprint, hyperscan.__version__, code, hashlib.sha256(index).hexdigest())
    return cache.path_for("prefilterplan", key, ".hsdb")


def _cached_plan(hyperscan: Any, library: Library) -> Prefilter | None:
    stored = cache.read(_plan_path(hyperscan, library))
    if stored is None:
        return None
    try:
        head, _, body = stored.partition(b"\n")
        plan = json.loads(head)
        split = plan["everywhere_bytes"]
        everywhere = _loaded(hyperscan, body[:split])
        unquiet = _loaded(hyperscan, body[split:])
        return Prefilter._restored(plan["kinds"], plan["starts"], everywhere, unquiet)
    except Exception:  # noqa: BLE001 - a damaged plan means: build it
        return None


def _save_plan(hyperscan: Any, library: Library, prefilter: Prefilter) -> None:
    everywhere = _dumped(hyperscan, prefilter._everywhere._database)
    plan = {
        "kinds": prefilter._confirm_kind,
        "starts": prefilter._confirmation.starts,
        "everywhere_bytes": len(everywhere),
    }
    data = json.dumps(plan).encode() + b"\n" + everywhere + _dumped(hyperscan, prefilter._unquiet._database)
    cache.write(_plan_path(hyperscan, library), data)


def _dumped(hyperscan: Any, database: Any) -> bytes:
    return hyperscan.dumpb(database) if database is not None else b""


def _loaded(hyperscan: Any, data: bytes) -> Any:
    return hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK) if data else None


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True
