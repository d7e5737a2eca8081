"""Build logdoctor's index of vLLM's error surface from the released sources (stdlib and logdoctor.surface).

    python3 bench/surface/build_index.py --src /work/vllm-src --out logdoctor/surface/vllm-surface.json.gz

`--src` holds one folder per release (`0.33.0/vllm/...`, unpacked from the wheels). Every
`vllm/**/*.py` of every release is parsed with `ast`; each raise, assert, error/warning log call,
`parser.error` and `sys.exit` whose message can be read statically becomes a *site* (messages.py);
the `vllm serve` options of each release are read statically too (serve_flags.py) and checked against
logdoctor/launch/argspecs/*.json, the real parser dumps. Sites are merged across releases into one
entry per distinct (kind, class, whitespace-normalized template), where templates that differ only in
the names of their values (`{arg1}` in one release, `{cpu_memory_usage}` in the next) are one message;
wordings of the same message in other releases are linked as variants.

A message-less `assert cond` (or an argument-less `raise SomeError()`) prints an empty message, so it
is indexed by its source, which the traceback's innermost frame prints: kind `assert-bare`, one entry
per whitespace-normalized statement, with the lookup keys a traceback's code line can be (see
messages.code_key). A statement that names too little to identify a place (`assert x`, `assert
False`, `assert out is not None`, `raise NotImplementedError`: under MIN_CODE_CHARS characters of names
other than builtins, keywords and self) is dropped and counted.

Output: gzip JSON, deterministic (sorted, compact, gzip mtime 0), read by logdoctor/surface:

    {"format": 3,
     "versions": ["0.4.3", ...],                 # sorted by version
     "flags": {"0.33.0": ["--block-size", ...]},  # visible `vllm serve` option strings per release
     "stats": {...},                              # what the builder counted (summary numbers)
     "postings": {"bigram": [entry index, ...]},  # each message entry under its rarest key ("ky"[0])
     "code": {"source": [entry index, ...]},      # each assert-bare entry under its "ks"
     "keys", "literal", "ids": each entry's "ky", "lc" and "i", in entry order (what every load needs),
     "anchors": every entry's "an", sorted, once each,
     "entries": [ each entry as its own compact JSON text (decoded when a lookup reaches it) of {
        "i": id (10 hex digits of sha1(kind, class, template with values unnamed)),
        "k": kind: raise | assert | log | argparse | exit | assert-bare,
        "x": exception class (last dotted part), or the log level (WARNING/ERROR/CRITICAL) for "log",
        "t": template: str.format syntax, `{name}` = a run-time value, literal braces doubled; for
             assert-bare the statement's first source line as a traceback prints it (not a template),
        "f": file, "fn": qualified function, "l": line (in the newest release that has the entry),
        "c": guarding condition (enclosing `if` tests, outermost first, joined by " and "; omitted if none),
        "g": `vllm serve` flags the condition and message read or name (omitted if none),
        "n": environment variables they read or name (omitted if none),
        "v": releases, as index ranges into "versions" ("3-9,12"),
        "a": area, "s": 1 if it runs at server start-up, 0 for request handling,
        "r": ids of the same message's wording in older / newer releases (omitted if none),
        "an": one or two literal fragments (>= 12 chars where possible) every rendering contains,
        "ky": the lookup keys: the entry's rarest literal bigrams over the whole index, rarest first
              (logdoctor.surface.index.lookup_keys; omitted for assert-bare),
        "lc": how many fixed, non-space characters its template has,
        assert-bare only:
        "st": the whole statement, normalized (omitted when it is "t" normalized),
        "ks": the normalized source texts a traceback's code line can be for it (at least the statement),
        "m": how many files of the newest release that has it hold the statement (omitted if one)
     } ]}
build() returns the document with its entries decoded; write() stores it as above.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import difflib
import gzip
import hashlib
import io
import json
import keyword
import pickle
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench.surface` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.surface.messages import BARE, Extractor, Site, _Slot, code_key, has_literal, render  # noqa: E402
from bench.surface.serve_flags import ClassInfo, collect_classes, serve_flags  # noqa: E402
from logdoctor.surface.index import lookup_keys, postings, stored_form  # noqa: E402

FORMAT = 4  # logdoctor/surface/index.py reads this format
MIN_LITERAL_CHARS = 12  # a template with less literal text than this recognises nothing
MIN_LITERAL_WORDS = 2
MAX_CONDITION = 400  # characters of guard text kept per entry
VARIANT_SIMILARITY = 0.6  # difflib ratio of the literal texts for two wordings to be linked
_WORD = re.compile(r"[A-Za-z]{2,}")
# A bare assert or raise identifies a place by the names it reads: fewer characters of names than this
# (builtins, keywords, `self` and `cls` not counted) name nothing (`assert x`, `assert out is not None`,
# `assert x.dim() == 2`, `raise NotImplementedError`). A key that is not itself the statement (the
# condition's line that Python 3.11+ prints for a multi-line assert) needs MIN_LITERAL_CHARS.
MIN_CODE_CHARS = 6
_CODE_STOP = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"[\w.]+\(.*\)")
_CONDITION = re.compile(r"==|!=|<|>|\b(?:is|in|not|and|or)\b|\bisinstance\(|\bhasattr\(|\ball\(|\bany\(")


# ---------------------------------------------------------------------------------------------------
# Versions


def version_key(name: str) -> tuple[int, ...]:
    """`0.6.6.post1` -> (0, 6, 6, 1): release order of the source folders."""
    return tuple(int(n) for n in re.findall(r"\d+", name))


def release_folders(src: Path) -> list[Path]:
    return sorted((p for p in src.iterdir() if (p / "vllm").is_dir()), key=lambda p: version_key(p.name))


def ranges(indices: list[int]) -> str:
    """[3, 4, 5, 9] -> "3-5,9"."""
    out: list[str] = []
    start = prev = None
    for i in sorted(indices):
        if start is None:
            start = prev = i
        elif prev is not None and i == prev + 1:
            prev = i
        else:
            out.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = i
    if start is not None:
        out.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(out)


# ---------------------------------------------------------------------------------------------------
# Reading one release


@dataclass
class Release:
    version: str
    sites: list[Site]
    flags: set[str]
    files: int
    failed: list[tuple[str, str]]  # (file, why ast.parse failed)


class SourceCache:
    """Sites and classes of a file keyed by (path, content hash): most files do not change between
    consecutive releases, so each distinct file is parsed once."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], tuple[list[Site], list[ClassInfo]]] = {}

    def read(self, rel: str, data: bytes) -> tuple[list[Site], list[ClassInfo]]:
        key = (rel, hashlib.sha1(data).hexdigest())
        if key in self.by_key:
            return self.by_key[key]
        source = data.decode("utf-8", "replace")
        tree = ast.parse(source, filename=rel)
        sites = Extractor(source, rel).run(tree)
        classes = collect_classes(tree, rel)
        self.by_key[key] = (sites, classes)
        return sites, classes


def read_release(folder: Path, cache: SourceCache) -> Release:
    sites: list[Site] = []
    classes: list[ClassInfo] = []
    failed: list[tuple[str, str]] = []
    paths = sorted(folder.glob("vllm/**/*.py"))
    for path in paths:
        rel = path.relative_to(folder).as_posix()
        try:
            found, infos = cache.read(rel, path.read_bytes())
        except SyntaxError as exc:  # newer syntax than this interpreter's parser: say which and where
            failed.append((rel, f"{exc.msg} (line {exc.lineno}); parsed with Python {sys.version.split()[0]}"))
            continue
        sites += found
        classes += infos

    def load(rel: str) -> ast.Module | None:
        path = folder / rel
        try:
            return ast.parse(path.read_bytes()) if path.is_file() else None
        except SyntaxError:
            return None

    return Release(folder.name, sites, serve_flags(load, classes), len(paths), failed)


# ---------------------------------------------------------------------------------------------------
# Classifying


AREAS: list[tuple[str, tuple[str, ...]]] = [
    ("config", ("vllm/config/", "vllm/config.py")),
    ("engine-args", ("vllm/engine/arg_utils.py",)),
    ("entrypoints", ("vllm/entrypoints/",)),
    ("platforms", ("vllm/platforms/",)),
    (
        "model-loading",
        ("vllm/model_executor/model_loader/", "vllm/transformers_utils/", "vllm/model_executor/models/registry.py"),
    ),
    (
        "kv-cache",
        (
            "vllm/v1/core/kv_cache",
            "vllm/v1/core/single_type_kv_cache",
            "vllm/v1/core/block_pool",
            "vllm/core/block",
            "vllm/worker/cache_engine",
        ),
    ),
    ("worker", ("vllm/v1/worker/", "vllm/v1/executor/", "vllm/executor/", "vllm/worker/", "vllm/v1/engine/core")),
    ("distributed", ("vllm/distributed/",)),
    ("attention", ("vllm/attention/", "vllm/v1/attention/", "vllm/model_executor/layers/attention")),
    ("quantization", ("vllm/model_executor/layers/quantization/",)),
    ("lora", ("vllm/lora/",)),
    ("spec-decode", ("vllm/spec_decode/", "vllm/v1/spec_decode/")),
]

# Entrypoint code that serves requests rather than starting the server: the OpenAI-style handlers
# (serving_*.py and the per-endpoint folders), request models, chat-template rendering, tool and
# reasoning parsers, and the offline LLM class. Everything else under entrypoints/ (cli/, api_server
# set-up, cli_args, launchers, utils) runs at start-up.
REQUEST_PATHS = re.compile(
    r"serving|protocol|chat_utils|renderer|tool_parser|reasoning|harmony|/responses/|/chat_completion/"
    r"|/completion/|/pooling/|/speech_to_text/|/anthropic/|/cohere/|/mcp/|/generate/|/scale_out/|/llm\.py"
    r"|score_utils|/context\.py|/sagemaker/|/tokenize|/translations?/|/transcription"
)
# Outside entrypoints/, config, engine-args, platform and loading code runs at start-up; in the other
# areas a function counts as start-up code when its name says it initialises, loads, checks or profiles.
STARTUP_AREAS = {"config", "engine-args", "platforms", "model-loading"}
STARTUP_FUNCTIONS = re.compile(
    r"(^|\.)(__init__|__post_init__|_?(init|initialize|load|setup|set_up|start|build|create|verify|validate"
    r"|check|profile|capture|compile|warmup|warm_up|determine|allocate|get_kv_cache|register|from_config"
    r"|from_vllm_config|get_attn_backend|select|launch|configure|prepare_|reserve|bind|connect)\w*)$"
)


def area_of(file: str) -> str:
    for area, prefixes in AREAS:
        if file.startswith(prefixes):
            return area
    return "other"


def is_startup(area: str, file: str, function: str) -> bool:
    if area == "entrypoints":
        return not REQUEST_PATHS.search(file)
    if area in STARTUP_AREAS:
        return True
    return bool(STARTUP_FUNCTIONS.search(function))


def literal_text(template_parts: tuple[object, ...]) -> str:
    return "".join(p for p in template_parts if isinstance(p, str))


def too_generic(parts: tuple[object, ...]) -> bool:
    """`"{e}"`, `"Error: {}"`, `"Invalid {x}"`: too little fixed text to recognise a message by."""
    text = " ".join(literal_text(parts).split())
    return len(text) < MIN_LITERAL_CHARS or len(_WORD.findall(text)) < MIN_LITERAL_WORDS


def code_names(text: str) -> int:
    """Characters of the distinct names a statement reads, builtins, keywords, self and cls left out."""
    return sum(len(n) for n in set(_NAME.findall(text)) - _CODE_STOP)


def code_generic(key: str) -> bool:
    """Source too plain to identify a place by (see MIN_CODE_CHARS). A condition's line without its
    `assert` must not read as a line ordinary code has on its own: a call (`x.is_contiguous()`) is a
    key only inside a comparison, a test or a boolean."""
    if key.startswith("raise "):  # the class names the place, not its module (`raise asyncio.TimeoutError`)
        return code_names(re.sub(r"\b\w+\.", "", key)) < MIN_CODE_CHARS
    if key.startswith(("assert ", "assert(")):
        return code_names(key) < MIN_CODE_CHARS
    return code_names(key) < MIN_LITERAL_CHARS or bool(_CALL.fullmatch(key) and not _CONDITION.search(key))


def normalize(parts: tuple[object, ...]) -> tuple[object, ...]:
    """Whitespace runs -> one space; leading/trailing whitespace of the whole message dropped."""
    out: list[object] = []
    for part in parts:
        if isinstance(part, str):
            text = re.sub(r"\s+", " ", part)
            if out and isinstance(out[-1], str):
                out[-1] = re.sub(r"\s+", " ", str(out[-1]) + text)
            elif text:
                out.append(text)
        elif not (out and isinstance(out[-1], _Slot)):  # adjacent values read as one
            out.append(part)
    if out and isinstance(out[0], str):
        out[0] = str(out[0]).lstrip()
    if out and isinstance(out[-1], str):
        out[-1] = str(out[-1]).rstrip()
    return tuple(p for p in out if p != "")


def anchors(parts: tuple[object, ...]) -> list[str]:
    """One or two literal fragments every rendering contains: pieces of the raw literals between
    values, cut where a newline, tab or run of spaces could be re-flowed, longest first."""
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, str):
            pieces += [p.strip() for p in re.split(r"\n|\t|\s{2,}", part)]
    pieces = sorted({p for p in pieces if p}, key=lambda p: (-len(p), p))
    long = [p for p in pieces if len(p) >= MIN_LITERAL_CHARS]
    return long[:2] if long else pieces[:1]


# ---------------------------------------------------------------------------------------------------
# Merging releases


def skeleton(parts: tuple[object, ...]) -> str:
    """The template with its values unnamed: a message whose only change is the name of an interpolated
    variable (`{arg1}` -> `{cpu_memory_usage}`) prints the same text, so it is the same entry."""
    return render(tuple(_Slot("") if isinstance(p, _Slot) else p for p in parts))


@dataclass
class Entry:
    kind: str
    cls: str | None
    parts: tuple[object, ...]
    template: str  # as the newest release words it
    skeleton: str
    versions: list[int] = field(default_factory=list)
    site: Site | None = None  # from the newest release that has it
    version_of_site: int = -1
    anchors: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)  # assert-bare: its lookup keys, in every release
    files: set[str] = field(default_factory=set)  # assert-bare: the files of the newest release holding it

    @property
    def id(self) -> str:
        key = f"{self.kind}\0{self.cls}\0{self.skeleton}".encode()
        return hashlib.sha1(key).hexdigest()[:10]


def merge(releases: list[Release]) -> tuple[dict[tuple[str, str | None, str], Entry], Counter[str], Counter[str]]:
    """One entry per (kind, class, whitespace-normalized template with values unnamed), with the releases
    that have it and its site in the newest of them; templates too generic to recognise are counted (and
    bare statements too plain to identify a place, separately)."""
    entries: dict[tuple[str, str | None, str], Entry] = {}
    dropped: Counter[str] = Counter()
    dropped_code: Counter[str] = Counter()
    for index, release in enumerate(releases):
        for site in sorted(release.sites, key=lambda s: (s.file, s.line, s.template)):
            if site.kind == BARE:
                merge_bare(entries, dropped_code, site, index)
                continue
            parts = normalize(site.parts)
            if not has_literal(parts) or too_generic(parts):
                dropped[render(parts)] += 1
                continue
            key = (site.kind, site.cls, skeleton(parts))
            entry = entries.get(key)
            if entry is None:
                entry = entries[key] = Entry(site.kind, site.cls, parts, render(parts), key[2])
            if index not in entry.versions:
                entry.versions.append(index)
            if entry.version_of_site != index:  # the first site (by file, line) of the newest release
                entry.site, entry.version_of_site = site, index
                entry.parts, entry.template = parts, render(parts)
                entry.anchors = anchors(site.parts)
    return entries, dropped, dropped_code


def merge_bare(
    entries: dict[tuple[str, str | None, str], Entry], dropped: Counter[str], site: Site, index: int
) -> None:
    """A bare assert or raise: one entry per normalized statement (`site.keys[0]`); its first line as the
    newest release writes it is the template, and it is looked up by the keys of every release."""
    statement = site.keys[0]
    if code_generic(statement):
        dropped[statement] += 1
        return
    key = (site.kind, site.cls, statement)
    entry = entries.get(key)
    if entry is None:
        entry = entries[key] = Entry(site.kind, site.cls, (statement,), site.code, statement)
    if index not in entry.versions:
        entry.versions.append(index)
    if entry.version_of_site != index:
        entry.site, entry.version_of_site, entry.template = site, index, site.code
        entry.files = set()
    entry.files.add(site.file)
    entry.keys |= {k for k in site.keys if k == statement or not code_generic(k)}


def link_variants(entries: list[Entry]) -> None:
    """Link wordings of one message across releases into chains: same kind and class, same function or
    same file, one entirely older than the other, literal texts at least VARIANT_SIMILARITY alike. Each
    entry gets at most one predecessor and one successor, the most similar first, so a message that was
    reworded twice reads as a chain, and two different messages that share a sentence are not crossed."""
    groups: dict[tuple[object, ...], list[Entry]] = defaultdict(list)
    for entry in entries:
        assert entry.site is not None
        if entry.kind == BARE:  # statements: one function's asserts, rewritten (many share a function name)
            groups[(entry.kind, entry.cls, "site", entry.site.file, entry.site.function)].append(entry)
            continue
        groups[(entry.kind, entry.cls, "file", entry.site.file)].append(entry)
        if entry.site.function != "<module>":  # a function that moved to another file keeps its name
            groups[(entry.kind, entry.cls, "fn", entry.site.function)].append(entry)
    pairs: dict[tuple[str, str], float] = {}
    for members in groups.values():
        texts = {id(m): " ".join(literal_text(m.parts).split()) for m in members}
        for a in members:
            for b in members:
                if max(a.versions) >= min(b.versions) or (a.id, b.id) in pairs:
                    continue
                matcher = difflib.SequenceMatcher(None, texts[id(a)], texts[id(b)], autojunk=False)
                if matcher.real_quick_ratio() < VARIANT_SIMILARITY or matcher.quick_ratio() < VARIANT_SIMILARITY:
                    continue
                ratio = matcher.ratio()
                if ratio >= VARIANT_SIMILARITY:
                    pairs[(a.id, b.id)] = ratio
    successor: dict[str, str] = {}
    predecessor: dict[str, str] = {}
    for (old, new), _ratio in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        if old not in successor and new not in predecessor:
            successor[old], predecessor[new] = new, old
    for entry in entries:
        entry.variants = [v for v in (predecessor.get(entry.id), successor.get(entry.id)) if v]


def mentioned(entry: Entry) -> tuple[set[str], set[str]]:
    r"""Config fields and environment variables a message names: values named like fields
    (`{max_model_len}`), identifiers with an underscore or `--flags` in its text (`decrease
    \`max_model_len\``), and `VLLM_...` variables it tells the user to set."""
    text = literal_text(entry.parts)
    fields = {p.name for p in entry.parts if isinstance(p, _Slot) and "_" in p.name}
    fields |= set(re.findall(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", text))
    fields |= {f.replace("-", "_") for f in re.findall(r"--([a-z][a-z0-9-]+)", text)}
    return fields, set(re.findall(r"\bVLLM_[A-Z0-9_]+\b", text))


def flags_read(entry: Entry, releases: list[Release]) -> list[str]:
    """The `vllm serve` flags behind the config fields the guard and message read, in any release that
    has the entry (`tensor_parallel_size` -> `--tensor-parallel-size` where that flag exists)."""
    assert entry.site is not None
    known = set().union(*(releases[i].flags for i in entry.versions))
    fields = set(entry.site.reads) | mentioned(entry)[0]
    return sorted(f for f in ("--" + r.replace("_", "-") for r in fields) if f in known)


def to_json(entry: Entry, releases: list[Release]) -> dict[str, object]:
    site = entry.site
    assert site is not None
    area = area_of(site.file)
    record: dict[str, object] = {
        "i": entry.id,
        "k": entry.kind,
        "x": entry.cls,
        "t": entry.template,
        "f": site.file,
        "fn": site.function,
        "l": site.line,
        "v": ranges(entry.versions),
        "a": area,
        "s": int(is_startup(area, site.file, site.function)),
    }
    if entry.kind == BARE:
        if entry.skeleton != code_key(entry.template):
            record["st"] = entry.skeleton
        if sorted(entry.keys) != [entry.skeleton]:  # the loader's default: the statement
            record["ks"] = sorted(entry.keys)
        if len(entry.files) > 1:
            record["m"] = len(entry.files)
    else:
        record["an"] = entry.anchors
    if site.conditions:
        condition = " and ".join(
            c if len(site.conditions) == 1 else f"({c})" if " or " in c else c for c in site.conditions
        )
        record["c"] = condition if len(condition) <= MAX_CONDITION else condition[: MAX_CONDITION - 1] + "…"
    flags = flags_read(entry, releases)
    if flags:
        record["g"] = flags
    env_vars = set(site.env_vars) | mentioned(entry)[1]
    if env_vars:
        record["n"] = sorted(env_vars)
    if entry.variants:
        record["r"] = entry.variants
    return record


# ---------------------------------------------------------------------------------------------------
# Checking the flags against the real parser dumps


def argspec_differences(releases: list[Release], argspecs: Path) -> list[str]:
    """For every dumped parser (0.27.0 ... 0.33.0), the options the static reading missed or invented;
    a dump is compared with the release folder of the same minor version."""
    lines = []
    for path in sorted(argspecs.glob("*.json"), key=lambda p: version_key(p.stem)):
        wanted = {o for opt in json.loads(path.read_text("utf-8"))["options"] for o in opt["options"]}
        minor = version_key(path.stem)[:2]
        match = [r for r in releases if version_key(r.version)[:2] == minor]
        if not match:
            lines.append(f"  {path.stem}: no release folder of that minor version")
            continue
        got = match[-1].flags
        missing, extra = sorted(wanted - got), sorted(got - wanted)
        status = "equal" if not missing and not extra else f"missing {missing}, extra {extra}"
        lines.append(f"  argspec {path.stem} vs {match[-1].version}: {len(got)} options, {status}")
    return lines


# ---------------------------------------------------------------------------------------------------
# Output


def write(path: Path, document: dict[str, object]) -> int:
    """Deterministic gzip of the document's stored form (index.stored_form): sorted keys, compact
    separators, no file name or time in the header."""
    raw = stored_form(document)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


def read_releases(src: Path, log: bool, cache: Path | None) -> list[Release]:
    """Every release folder's sites and flags. With `cache`, a pickle of them is reused while the sources
    and the extractor are unchanged (the merge can then be re-run in seconds while it is worked on)."""
    folders = release_folders(src)
    stamp = hashlib.sha1()
    for module in (Path(__file__).with_name("messages.py"), Path(__file__).with_name("serve_flags.py")):
        stamp.update(module.read_bytes())
    for folder in folders:
        stamp.update(f"{folder.name}:{(folder / 'vllm').stat().st_mtime_ns}".encode())
    if cache is not None and cache.is_file():
        saved_stamp, saved = pickle.loads(cache.read_bytes())
        if saved_stamp == stamp.hexdigest():
            return list(saved)
    sources = SourceCache()
    releases = []
    for folder in folders:
        release = read_release(folder, sources)
        releases.append(release)
        if log:
            print(
                f"  {release.version}: {release.files} files, {len(release.sites)} sites, "
                f"{len(release.flags)} serve options, {len(release.failed)} failed to parse",
                file=sys.stderr,
            )
    if cache is not None:
        cache.write_bytes(pickle.dumps((stamp.hexdigest(), releases)))
    return releases


def build(
    src: Path, argspecs: Path | None = None, log: bool = True, cache: Path | None = None
) -> tuple[dict[str, object], list[str]]:
    """Read every release under `src`; return the index document and the summary lines."""
    started = time.monotonic()
    releases = read_releases(src, log, cache)
    entries, dropped, dropped_code = merge(releases)
    ordered = sorted(
        entries.values(),
        key=lambda e: (e.site.file if e.site else "", e.site.line if e.site else 0, e.template, e.kind, e.cls or ""),
    )
    ids = Counter(e.id for e in ordered)
    if any(n > 1 for n in ids.values()):
        raise SystemExit(f"id collision: {[i for i, n in ids.items() if n > 1]}")
    link_variants(ordered)
    records = [to_json(e, releases) for e in ordered]
    for record, (keys, literal) in zip(records, lookup_keys(records), strict=True):
        if keys:
            record["ky"] = keys
        record["lc"] = literal
        if record["k"] == BARE and "ks" not in record:  # written out, so a load normalises no source
            record["ks"] = [record.get("st") or code_key(str(record["t"]))]
    stats = summary_stats(releases, records, dropped, dropped_code)
    by_key, by_code = postings(records)
    document: dict[str, object] = {
        "format": FORMAT,
        "postings": by_key,
        "code": by_code,
        "versions": [r.version for r in releases],
        "flags": {r.version: sorted(r.flags) for r in releases},
        "stats": stats,
        "entries": records,
    }
    lines = summary_lines(releases, stats)
    if argspecs is not None and argspecs.is_dir():
        lines.append("serve options vs real parser dumps:")
        lines += argspec_differences(releases, argspecs)
    lines.append(f"built in {time.monotonic() - started:.0f} s")
    return document, lines


def summary_stats(
    releases: list[Release], records: list[dict[str, object]], dropped: Counter[str], dropped_code: Counter[str]
) -> dict[str, object]:
    return {
        "files": sum(r.files for r in releases),
        "failed": sum(len(r.failed) for r in releases),
        "sites": sum(len(r.sites) for r in releases),
        "entries": len(records),
        "by_kind": dict(sorted(Counter(str(r["k"]) for r in records).items())),
        "by_area": dict(sorted(Counter(str(r["a"]) for r in records).items())),
        "dropped_templates": len(dropped),
        "dropped_sites": sum(dropped.values()),
        "dropped_bare_statements": len(dropped_code),
        "dropped_bare_sites": sum(dropped_code.values()),
        "with_variants": sum(1 for r in records if "r" in r),
        "with_flags": sum(1 for r in records if "g" in r),
    }


def summary_lines(releases: list[Release], stats: dict[str, object]) -> list[str]:
    lines = [
        f"versions: {len(releases)} ({releases[0].version} .. {releases[-1].version})"
        if releases
        else "versions: none",
        f"files parsed: {stats['files']}, failed: {stats['failed']}",
    ]
    for release in releases:
        for file, why in release.failed:
            lines.append(f"  parse failure {release.version} {file}: {why}")
    lines.append(
        f"sites: {stats['sites']} -> entries: {stats['entries']} "
        f"(with variants {stats['with_variants']}, with flags {stats['with_flags']})"
    )
    lines.append(f"entries per kind: {stats['by_kind']}")
    lines.append(f"entries per area: {stats['by_area']}")
    lines.append(f"dropped as too generic: {stats['dropped_templates']} templates ({stats['dropped_sites']} sites)")
    lines.append(
        f"bare asserts and raises dropped as naming too little: {stats['dropped_bare_statements']} "
        f"statements ({stats['dropped_bare_sites']} sites)"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, required=True, help="folder of release folders (0.33.0/vllm/...)")
    parser.add_argument("--out", type=Path, required=True, help="the .json.gz to write")
    parser.add_argument(
        "--argspecs",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "logdoctor" / "launch" / "argspecs",
        help="real parser dumps to check the serve options against",
    )
    parser.add_argument("--cache", type=Path, help="pickle of the parsed releases to reuse (development)")
    args = parser.parse_args(argv)
    document, lines = build(args.src, args.argspecs, cache=args.cache)
    size = write(args.out, document)
    lines.append(f"wrote {args.out} ({size / 1e6:.2f} MB)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
