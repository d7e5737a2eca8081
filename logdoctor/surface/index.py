"""The packaged index of vLLM's error surface and the matcher over it (see logdoctor/surface/__init__.py)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import regex

from logdoctor.library.matcher import HANG_SECONDS, MAX_SEARCH_CHARS
from logdoctor.memo import remember
from logdoctor.surface import template as tpl
from logdoctor.versions import parse_version

DATA_FILE = "vllm-surface.json.gz"
# 2: lookup keys and literal counts stored per entry; 3: entries stored as JSON texts; 4: each table of the
# header on its own line, decoded when first used.
FORMAT = 4
# What a load may need of all entries, one line each after the header: keys, literal counts and postings
# for every lookup, offsets to read an entry; ids, anchors and the assert index only for what asks.
KEY_SEPARATOR = "\t"  # between an entry's keys in the keys table (a key is words and a space)
TABLES = ("keys", "literal", "offsets", "postings", "ids", "anchors", "code")
# Below this many fixed characters a template matches only a whole message (from its start or after a
# prefix's `:`/`]`, to its end): "{x} is not supported" must not fire inside an unrelated sentence.
STRONG_LITERAL = 30
KEYS_PER_ENTRY = 3  # the rarest bigrams an entry is indexed and pre-checked by
_VALUE_LIKE = re.compile(r"[\d_/.:'\"\[\](){}=<>A-Z-]")  # what a value (number, name, path, repr) has and prose lacks
BARE = "assert-bare"  # a message-less assert or argument-less raise, indexed by its source line
_CARETS = re.compile(r"\s*[\^~]+[\s^~]*")  # the marker lines Python 3.11+ prints under a traceback's code
_BRACKET_SPACE = re.compile(r"([(\[{]) | ([)\]}])")


@dataclass(frozen=True, slots=True)
class SurfaceEntry:
    """One message vLLM can raise or log, merged over the releases that contain it."""

    id: str
    kind: str  # raise | assert | log | argparse | exit | assert-bare
    exception: str | None  # exception class; the log level for kind "log"
    template: str  # str.format syntax: `{name}` is a run-time value; for assert-bare, the source line
    file: str
    function: str
    line: int
    condition: str | None  # the guarding `if` tests in its function, outermost first
    flags: tuple[str, ...]  # `vllm serve` flags the condition and message read
    env_vars: tuple[str, ...]
    versions: tuple[str, ...]  # the indexed releases that contain it
    area: str
    startup: bool  # raised while the server starts (False: while it serves requests)
    variants: tuple[str, ...]  # ids of the same message's wordings in other releases
    statement: str | None = None  # assert-bare: the whole statement, normalised, when `template` is not all of it
    files: int = 1  # assert-bare: how many files of its newest release hold the statement


@dataclass(frozen=True, slots=True)
class SurfaceHit:
    entry: SurfaceEntry
    values: dict[str, str]  # slot name -> the text it matched
    score: float  # share of the matched text that is the template's fixed text (0..1]


LOOKUPS_KEPT = 2048  # answers remembered (logdoctor/memo.py)


class SurfaceIndex:
    """Lookups of vLLM messages: an inverted index of rare literal bigrams finds the few entries a text
    could be, a compiled regex of each template confirms one.

    Loading is what every failing launch pays, so it does the least: the lookup keys and the postings were
    made when the index was built (`lookup_keys`, `postings`), and an entry is turned into a SurfaceEntry, and
    its template parsed and compiled, only when a lookup reaches it."""

    def __init__(
        self, data: dict[str, Any], text: memoryview | bytes = b"", tables: dict[str, memoryview] | None = None
    ) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"surface index format {data.get('format')!r}, expected {FORMAT}")
        self.versions: tuple[str, ...] = tuple(data["versions"])
        # Answers by (message, type, version): every launch of a crash loop raises the same message.
        self._looked_up: dict[tuple[str, str | None, str | None], SurfaceHit | None] = {}
        self._flags = {v: frozenset(f) for v, f in data["flags"].items()}
        # Each entry stays the JSON text it was stored as (one line of the file, in `text`) until a lookup
        # reaches it: decoding all 21,000 at once cost 70 MiB and most of a load. So does each table
        # (`tables`: its line), until something reads it. A document from the builder holds them decoded.
        self._text = text
        self._stored_tables: dict[str, memoryview] = dict(tables or {})
        self._tables: dict[str, Any] = {}
        if "entries" in data:
            self._raw: list[dict[str, Any] | None] = data["entries"]
            self._tables = _tables_of(data)
        else:
            self._raw = [None] * data["count"]
        self._made: list[SurfaceEntry | None] = [None] * len(self._raw)
        self._pieces: dict[int, tuple[tpl.Piece, ...]] = {}
        self._ids: dict[str, int] | None = None
        self._regexes: dict[int, regex.Pattern[str]] = {}

    def _table(self, name: str) -> Any:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = json.loads(bytes(self._stored_tables.pop(name)))
        return table

    @property
    def _keys(self) -> list[str]:
        """Each entry's lookup keys, joined by KEY_SEPARATOR: read only for the entries a posting names."""
        return self._table("keys")  # type: ignore[no-any-return]

    @property
    def _literal(self) -> list[int]:
        return self._table("literal")  # type: ignore[no-any-return]

    @property
    def _postings(self) -> dict[str, list[int]]:
        """The rarest key -> the entries it is the first of."""
        return self._table("postings")  # type: ignore[no-any-return]

    @property
    def _code(self) -> dict[str, list[int]]:
        """Normalised source -> assert-bare entries."""
        return self._table("code")  # type: ignore[no-any-return]

    # -- loading -----------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path | None = None) -> SurfaceIndex:
        """The index at `path`, or the one shipped in the package."""
        if path is None:
            raw = resources.files("logdoctor.surface").joinpath(DATA_FILE).read_bytes()
        else:
            raw = Path(path).read_bytes()
        return cls.from_stored(gzip.decompress(raw))

    @classmethod
    def from_stored(cls, stored: bytes) -> SurfaceIndex:
        """The data file's form (stored_form): a JSON header line, a line of JSON per table, then one per
        entry."""
        view = memoryview(stored)
        end = stored.find(b"\n")
        header = json.loads(stored[: end if end >= 0 else len(stored)])
        if header.get("format") != FORMAT:
            raise ValueError(f"surface index format {header.get('format')!r}, expected {FORMAT}")
        tables: dict[str, memoryview] = {}
        for name in header["tables"]:
            start, end = end + 1, stored.find(b"\n", end + 1)
            if end < 0:
                raise ValueError(f"surface index cut short in its {name} table")
            tables[name] = view[start:end]
        return cls(header, view[end + 1 :], tables)

    def _decoded(self, index: int) -> dict[str, Any]:
        raw = self._raw[index]
        if raw is None:
            offsets = self._table("offsets")
            start, end = offsets[index], offsets[index + 1] - 1
            raw = self._raw[index] = json.loads(bytes(self._text[start:end]))
        return raw

    def _entry(self, index: int) -> SurfaceEntry:
        made = self._made[index]
        if made is None:
            raw = self._decoded(index)
            made = self._made[index] = SurfaceEntry(
                id=raw["i"],
                kind=raw["k"],
                exception=raw.get("x"),
                template=raw["t"],
                file=raw["f"],
                function=raw["fn"],
                line=raw["l"],
                condition=raw.get("c"),
                flags=tuple(raw.get("g", ())),
                env_vars=tuple(raw.get("n", ())),
                versions=self._expand(raw["v"]),
                area=raw["a"],
                startup=bool(raw["s"]),
                variants=tuple(raw.get("r", ())),
                statement=raw.get("st"),
                files=raw.get("m", 1),
            )
        return made

    def _expand(self, spec: str) -> tuple[str, ...]:
        """ "3-5,9" -> the releases at those indices."""
        out: list[str] = []
        for run in spec.split(","):
            start, _, end = run.partition("-")
            out += self.versions[int(start) : int(end or start) + 1]
        return tuple(out)

    def _newest(self, index: int) -> int:
        """The index of the newest release that has the entry."""
        return max(int(run.rpartition("-")[2]) for run in self._decoded(index)["v"].split(","))

    def _parsed(self, index: int) -> tuple[tpl.Piece, ...]:
        pieces = self._pieces.get(index)
        if pieces is None:
            pieces = self._pieces[index] = tpl.parse(self._decoded(index)["t"])
        return pieces

    def _anchored(self, index: int) -> bool:
        """A weak template (little fixed text) must cover the message to its end."""
        return self._literal[index] < STRONG_LITERAL

    # -- lookups -----------------------------------------------------------------------------------

    def entries(self) -> Sequence[SurfaceEntry]:
        return tuple(self._entry(i) for i in range(len(self._raw)))

    def entry(self, id: str) -> SurfaceEntry | None:
        index = self._index_of(id)
        return self._entry(index) if index is not None else None

    def candidates_present(self, text: str) -> bool:
        """Could `text` hold an indexed message? (it holds the rarest key of at least one entry)"""
        message = tpl.prepare(text)
        return any(key in self._postings for key in self._grams(message))

    def lookup(self, message: str, exc_type: str | None = None, version: str | None = None) -> SurfaceHit | None:
        """The entry `message` renders, with the values it filled in; None for text vLLM does not emit.

        `message` may be an exception message, `Type: message`, a pydantic error detail, or a whole log
        line with an unknown prefix. Best is the entry whose fixed text covers most, then the one whose
        exception class (or log level) is `exc_type`, then one that exists in `version`, then the one
        with fewer values matched as empty."""
        key = (message, exc_type, version)
        if key in self._looked_up:
            return self._looked_up[key]
        found = self.hits(message, exc_type, version)
        hit = found[0] if found else None
        return remember(self._looked_up, key, message, hit, LOOKUPS_KEPT)

    def hits(self, message: str, exc_type: str | None = None, version: str | None = None) -> list[SurfaceHit]:
        """Every entry `message` renders, best first (see `lookup`): the same text can be several entries,
        say a release's raise and another release's warning, or two wordings that both match."""
        prepared = tpl.prepare(message)
        wanted = prepared.pydantic or (_last_part(exc_type) if exc_type else None)
        release = self._release_at(version) if version else None
        ranked: list[tuple[tuple[int, int, int, int], str, SurfaceHit]] = []
        for index in sorted(set(self._candidates(self._grams(prepared)))):
            hit = self._confirm(index, prepared)
            if hit is None:
                continue
            entry = hit.entry
            agrees = int(wanted is not None and entry.exception is not None and _last_part(entry.exception) == wanted)
            present = int(release is not None and release in entry.versions)
            empty = sum(1 for v in hit.values.values() if not v)  # "Tool call {id} has" matching "Tool call has"
            ranked.append(((-self._literal[index], -agrees, -present, empty), entry.id, hit))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in ranked]

    def lookup_code(self, code_line: str, version: str | None = None, exc_type: str | None = None) -> SurfaceHit | None:
        """The bare `assert` (or argument-less `raise`) whose source a traceback printed, for an exception
        with an empty message: the innermost frame's code line (`assert total_num_kv_heads % tp_size == 0`),
        with or without the caret lines of Python 3.11+, or the lines of a multi-line statement (matched
        whole, else by its first line). Source is compared with whitespace runs as one space and none
        inside brackets; any other line (ordinary code, a message) finds nothing. Best is the entry that
        exists in `version` (the nearest indexed release at or below it), then the one whose whole
        statement this is (not only its first line, which several can share), then the newest. With
        `exc_type`, only a statement that raises that class (AssertionError for an assert) is found."""
        key = code_key(code_line)
        found = self._code.get(key)
        if found is None:
            lines = [line for line in code_line.splitlines() if line.strip() and not _CARETS.fullmatch(line)]
            if len(lines) < 2:
                return None
            key = code_key(lines[0])
            found = self._code.get(key)
            if found is None:
                return None
        if exc_type is not None:
            wanted = _last_part(exc_type)
            found = [i for i in found if _last_part(self._entry(i).exception or "") == wanted]
            if not found:
                return None
        release = self._release_at(version) if version else None
        entry = self._entry
        best = min(
            found,
            key=lambda i: (
                release is not None and release not in entry(i).versions,
                key != (entry(i).statement or code_key(entry(i).template)),
                -self._newest(i),
                entry(i).id,
            ),
        )
        return SurfaceHit(entry(best), {}, 1.0)

    def literal_chars(self, entry: SurfaceEntry) -> int:
        """How many fixed, non-space characters the entry's template has (what a hit covers)."""
        index = self._index_of(entry.id)
        return self._literal[index] if index is not None else 0

    def _index_of(self, id: str) -> int | None:
        if self._ids is None:
            self._ids = {id: i for i, id in enumerate(self._table("ids"))}
        return self._ids.get(id)

    def _grams(self, message: tpl.Message) -> set[str]:
        grams = tpl.ngrams(tpl.words(message.joined))
        if message.spaced != message.joined:
            grams |= tpl.ngrams(tpl.words(message.spaced))
        return grams

    def _candidates(self, grams: set[str]) -> list[int]:
        found: list[int] = []
        postings, keys = self._postings, self._keys
        for key in grams:
            for index in postings.get(key, ()):
                if all(k in grams for k in keys[index].split(KEY_SEPARATOR)):
                    found.append(index)
        return found

    def _regex(self, index: int) -> regex.Pattern[str]:
        pattern = self._regexes.get(index)
        if pattern is None:
            pattern = self._regexes[index] = tpl.compile_template(self._parsed(index), whole=self._anchored(index))
        return pattern

    def _confirm(self, index: int, message: tpl.Message) -> SurfaceHit | None:
        anchored, literal = self._anchored(index), self._literal[index]
        texts = (message.joined,) if message.spaced == message.joined else (message.joined, message.spaced)
        for text in texts:
            try:  # the patterns' budget: a length, with a hang guard (library/matcher.py)
                for match in self._regex(index).finditer(text, 0, MAX_SEARCH_CHARS, timeout=HANG_SECONDS):
                    if not anchored or _fits(match):
                        span = max(1, len(match.group(0).replace(" ", "")))
                        values = {k: v for k, v in match.groupdict().items() if v is not None}
                        return SurfaceHit(self._entry(index), values, min(1.0, literal / span))
            except TimeoutError:
                continue
        return None

    # -- versions and history ----------------------------------------------------------------------

    def _release_at(self, version: str) -> str | None:
        """The nearest indexed release at or below `version` (the oldest when it is older than all)."""
        wanted = parse_version(version)
        if wanted is None:
            return None
        older = [v for v in self.versions if (parse_version(v) or ()) <= wanted]
        return older[-1] if older else self.versions[0]

    def flags(self, version: str) -> frozenset[str]:
        """The visible `vllm serve` option strings of the nearest indexed release at or below `version`."""
        release = self._release_at(version)
        return self._flags.get(release, frozenset()) if release else frozenset()

    def history(self, entry: SurfaceEntry) -> str:
        """`in 0.9.2-0.33.0; reworded in 0.12 (was: "...")`, `...; removed in 0.20: upgrading avoids it`."""
        order = {v: i for i, v in enumerate(self.versions)}
        mine = sorted(order[v] for v in entry.versions)
        parts = [f"in {self._runs(mine)}"]
        earlier_variant = later_variant = False
        for other in (self.entry(i) for i in entry.variants):
            if other is None:
                continue
            theirs = sorted(order[v] for v in other.versions)
            if theirs[-1] < mine[0]:
                earlier_variant = True
                was = _difference(other.template, entry.template)
                parts.append(f'reworded in {_minor(self.versions[mine[0]])} (was: "{was}")')
            elif theirs[0] > mine[-1]:
                later_variant = True
                now = _difference(other.template, entry.template)
                parts.append(f'reworded in {_minor(self.versions[theirs[0]])} (now: "{now}")')
        if mine[0] > 0 and not earlier_variant:
            parts.append(f"added in {_minor(self.versions[mine[0]])}")
        if mine[-1] < len(self.versions) - 1 and not later_variant:
            parts.append(f"removed in {_minor(self.versions[mine[-1] + 1])}: upgrading avoids it")
        return "; ".join(parts)

    def _runs(self, indices: list[int]) -> str:
        runs: list[tuple[int, int]] = []
        for i in indices:
            if runs and i == runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((i, i))
        return ", ".join(self.versions[a] if a == b else f"{self.versions[a]}-{self.versions[b]}" for a, b in runs)

    def anchors(self) -> list[str]:
        """Literal fragments for a multi-literal prefilter: each entry's one or two longest fixed pieces
        (12 characters or more where it has them), which every rendering of it contains."""
        return self._table("anchors")  # type: ignore[no-any-return]


def lookup_keys(entries: Sequence[dict[str, Any]]) -> list[tuple[list[str], int]]:
    """For each raw entry, the keys it is indexed by and the fixed characters of its template ("ky",
    "lc" in the data file): its KEYS_PER_ENTRY rarest bigrams across all entries (words when it has no
    bigram), rarest first; the first is its posting, the others pre-check a candidate. Chosen when the
    index is built (bench/surface/build_index.py), so a load does not parse 20,000 templates. A bare
    statement is source code, not a message: it gets no keys (`lookup_code` finds it)."""
    parsed = [None if raw["k"] == BARE else tpl.parse(raw["t"]) for raw in entries]
    grams = [((), ()) if pieces is None else tpl.template_keys(pieces) for pieces in parsed]
    frequency: dict[str, int] = {}
    for bigrams, unigrams in grams:
        for key in set(bigrams) | set(unigrams):
            frequency[key] = frequency.get(key, 0) + 1
    out: list[tuple[list[str], int]] = []
    for raw, pieces, (bigrams, unigrams) in zip(entries, parsed, grams, strict=True):
        if pieces is None:
            out.append(([], tpl.literal_chars((tpl.Piece(raw["t"]),))))
            continue
        pool = sorted(
            set(bigrams) or {u for u in unigrams if len(u) >= 4} or set(unigrams), key=lambda k: (frequency[k], k)
        )
        out.append((pool[:KEYS_PER_ENTRY], tpl.literal_chars(pieces)))
    return out


def anchor_list(entries: Sequence[dict[str, Any]]) -> list[str]:
    """Every entry's anchors ("an"), once each, sorted."""
    return sorted({a for raw in entries for a in raw.get("an", ())})


def _tables_of(document: dict[str, Any]) -> dict[str, Any]:
    """The tables (TABLES) of a builder's document, but the offsets, which only the stored form has."""
    entries = document["entries"]
    return {
        # One string an entry, not a list: 21,000 lists of three rare bigrams cost 9 MiB decoded.
        "keys": [KEY_SEPARATOR.join(raw.get("ky", [])) for raw in entries],
        "literal": [raw["lc"] for raw in entries],
        "ids": [raw["i"] for raw in entries],
        "anchors": anchor_list(entries),
        "postings": document["postings"],
        "code": document["code"],
    }


def stored_form(document: dict[str, Any]) -> bytes:
    """The builder's document as the data file holds it: a header line of JSON, a line per table of what
    a load may need of all entries (TABLES: keys, literal counts, where each entry's line starts, ...),
    then each entry as one line of compact JSON, read when a lookup reaches it."""
    entries = document["entries"]
    # The keys and literal counts live in their tables (every lookup reads them); each line holds the rest.
    lines = [_compact({k: v for k, v in raw.items() if k not in ("ky", "lc")}).encode("utf-8") for raw in entries]
    tables = _tables_of(document)
    tables["offsets"] = offsets = [0]  # where each entry's line starts, counted from the first one
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    header = {k: v for k, v in document.items() if k not in ("entries", *TABLES)}
    header.update(format=FORMAT, tables=list(TABLES), count=len(entries))
    stored = [_compact(header).encode("utf-8")] + [_compact(tables[name]).encode("utf-8") for name in TABLES]
    return b"\n".join(stored) + b"\n" + b"".join(line + b"\n" for line in lines)


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def postings(entries: Sequence[dict[str, Any]]) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The index's two maps over raw entries that carry their keys ("ky", "ks"): each entry under its
    rarest bigram, and each assert-bare entry under the source texts a traceback can print for it."""
    by_key: dict[str, list[int]] = {}
    by_code: dict[str, list[int]] = {}
    for index, raw in enumerate(entries):
        if raw["k"] == BARE:
            for key in raw["ks"]:
                by_code.setdefault(key, []).append(index)
        elif raw.get("ky"):
            by_key.setdefault(raw["ky"][0], []).append(index)
    return by_key, by_code


def code_key(text: str) -> str:
    """Source text as a lookup key: caret lines dropped, lines joined (a continuation's backslash
    dropped), whitespace runs as one space, no space inside brackets (`assert (` newline `a == b)` ->
    `assert (a == b)`); the same normalisation as bench/surface/messages.py's, which wrote the keys."""
    lines = [
        line.rstrip().removesuffix("\\") for line in text.splitlines() if line.strip() and not _CARETS.fullmatch(line)
    ]
    return _BRACKET_SPACE.sub(r"\1\2", " ".join(" ".join(lines).split()))


def _fits(match: regex.Match[str]) -> bool:
    """A weak template's values must look like values, not prose: "Failed to load {x}" is not "Failed
    to load the model". (Where a match may start and end is in the regex itself.)"""
    return not any(" " in v and not _VALUE_LIKE.search(v) for v in match.groupdict().values() if v)


def _last_part(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _difference(text: str, other: str, limit: int = 120) -> str:
    """`text` shown from a little before where it stops agreeing with `other`, so a rewording late in a
    long message is visible in the history line."""
    common = 0
    for a, b in zip(text, other, strict=False):
        if a != b:
            break
        common += 1
    start = max(0, common - 30)
    start = text.rfind(" ", 0, start) + 1 if start else 0
    shown = ("…" if start else "") + text[start:]
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
