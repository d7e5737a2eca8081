"""Check the pattern library against the error-surface index (the checks of tests/test_surface_authority.py).

(a) A pattern that says vLLM raises its message (`source.file = "vllm/..."`) must have the exception
    message of each of its match examples in the index, in every indexed release inside its
    `source.versions` range.
(b) Every `vllm serve` flag a pattern's fix recommends must exist in every indexed release inside its
    range (a step marked with a range of its own, `[>=0.13] ...`, inside that range); a flag the fix says
    to remove, drop or replace need not.

A failure names the pattern, what is wrong and the releases where the message or flag does exist.

    python3 -m bench.surface.authority [--out FILE.md]    (from the repository root; prints the list)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from logdoctor import records
from logdoctor.assemble import Assembler
from logdoctor.framing import frame_bytes
from logdoctor.library import qualified
from logdoctor.library.loader import load_patterns
from logdoctor.library.pattern import Pattern
from logdoctor.surface import SurfaceIndex, default_index
from logdoctor.versions import in_range

# `--flag` in a fix text (not `--no-` / `--enable-` as a prefix in prose, which end with a dash).
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])")
# Options of other commands that fixes legitimately name (docker/podman, pip, nvidia-smi/rocm-smi,
# huggingface-cli, torchrun, ray start, SLURM, numactl, a Python build's configure). None is a
# `vllm serve` option in any indexed release, so they are not checked; anything else that looks like an
# option is.
FOREIGN_OPTIONS = frozenset({
    "--gpus", "--ipc", "--shm-size", "--runtime", "--security-opt", "--cap-add", "--group-add", "--ulimit",
    "--rm", "--privileged", "--network", "--user", "--cpuset-mems", "--cpuset-cpus",
    "--upgrade", "--force-reinstall", "--no-deps", "--no-cache-dir", "--no-build-isolation", "--no-binary",
    "--index-url", "--extra-index-url", "--pre", "--python",
    "--query-gpu", "--format", "--showtopo", "--showpids", "--showrasinfo", "--ecc",
    "--local-dir", "--force-download",
    "--nnodes", "--node-rank", "--master-addr", "--master-port", "--nproc-per-node",
    "--gres", "--cpu-bind", "--cpunodebind", "--membind",
    "--help", "--version", "--output", "--create-all", "--now", "--opt",
    "--rdzv-backend", "--rdzv-conf", "--rdzv-endpoint", "--rdzv-id",
    "--object-store-memory", "--temp-dir", "--status", "--enable-shared", "--showmeminfo", "--pid",
    "--tune",  # benchmarks/kernels/benchmark_moe.py
})
# `--device /dev/...` or `--device nvidia.com/gpu=all` is docker's, podman's or CDI's, not vllm serve's
# (whose --device, until 0.10, took a device type).
_FOREIGN_DEVICE = re.compile(r"--device[ =](?:/dev/|nvidia\.com/|amd\.com/)")


UNINDEXED_LEVELS = frozenset({"INFO", "DEBUG"})
CODE = "source line"  # what example_messages yields for a bare assert's source line


def says_vllm_writes_it(pattern: Pattern) -> bool:
    """`source.file = "vllm/..."` claims that vLLM's code writes the message. A message another library
    renders around vLLM's call (argparse's `error: unrecognized arguments`, pydantic's `validation error
    for`, torch's `CUDA error:`) names that library as its file and keeps vLLM's call site in `function`."""
    return pattern.source.file.startswith("vllm/")


class BadRange(ValueError):
    """A pattern's `source.versions` that logdoctor.versions cannot read."""


def _releases(index: SurfaceIndex, spec: str | None) -> list[str]:
    try:
        return [v for v in index.versions if in_range(v, spec or "*")]
    except ValueError as exc:
        raise BadRange(str(exc)) from exc


def example_messages(pattern: Pattern, example: str) -> Iterator[tuple[str, str | None]]:
    """The messages of an example that the pattern matches: (message, exception type or log level)."""
    assembler = Assembler(exception_names=pattern.exception)
    events = []
    for line in frame_bytes(example.encode("utf-8")):
        events += assembler.feed(records.parse(line))
    events += assembler.flush()
    found = False
    for event in events:
        if pattern.where != "line":
            for exc in event.exceptions:
                if pattern.compiled.search(exc.message):  # type: ignore[attr-defined]
                    found = True
                    yield exc.message, exc.short_type or None
                elif not exc.message.strip() and exc.frames and exc.frames[-1].code:
                    code = exc.frames[-1].code  # a bare assert: its source line is what the pattern reads
                    if pattern.compiled.search(code):  # type: ignore[attr-defined]
                        found = True
                        yield code, CODE
        line_event = event.kind == "record" and pattern.where != "exception"
        if line_event and pattern.compiled.search(event.record.message):  # type: ignore[attr-defined]
            found = True
            yield event.record.message, event.record.level
    if not found:
        yield example, None


def message_problems(index: SurfaceIndex, pattern: Pattern) -> list[str]:
    problems = []
    try:
        releases = _releases(index, pattern.source.versions)
    except BadRange as exc:
        return [f"source.versions: {exc}"]
    if not releases:
        return []  # a pattern of releases older than the index (0.1-0.3): nothing to hold it to
    # A reworded message has one example per wording, each in its own releases: together they must cover
    # the range, and each must be in some release (an example no release has misquotes vLLM).
    covered: set[str] = set()
    quoted: list[tuple[int, str]] = []
    unindexed = False
    for number, example in enumerate(pattern.examples.match, 1):
        for message, kind in example_messages(pattern, example):
            if kind in UNINDEXED_LEVELS:
                unindexed = True  # the index holds errors and warnings, not INFO/DEBUG records
                continue
            exists: set[str] = set()
            bare = index.lookup_code(message) if kind == CODE else None
            hits = [bare] if bare is not None else [] if kind == CODE else index.hits(message, kind)
            if hits:  # entries that cover the message as well as the best one does (its wordings over time)
                best = index.literal_chars(hits[0].entry)
                hits = [h for h in hits if index.literal_chars(h.entry) >= 0.9 * best]
            for hit in hits:
                exists.update(hit.entry.versions)
            short = " ".join(message.split())[:100]
            if not exists:
                problems.append(f"match example {number} ({short!r}): the message exists in no indexed release")
            covered |= exists
            quoted.append((number, short))
    missing = [r for r in releases if r not in covered]
    if quoted and covered and missing and not unindexed:  # an INFO wording may cover the rest
        where = _span(index, sorted(covered, key=index.versions.index))
        examples = ", ".join(str(n) for n, _ in quoted)
        problems.append(f"match examples {examples}: no wording of the message in {_span(index, missing)} of "
                        f"versions {pattern.source.versions!r}; the examples' wordings exist in {where}")
    return problems


def flag_problems(index: SurfaceIndex, pattern: Pattern) -> list[str]:
    problems = []
    try:
        releases = _releases(index, pattern.source.versions)
    except BadRange as exc:
        return [f"source.versions: {exc}"]
    texts = [pattern.fix.summary, *pattern.fix.steps]
    # A step marked `[>=0.13] ...` holds only for those releases (logdoctor/library/qualified.py).
    where_said: dict[str, set[str]] = {}
    for text in texts:
        spec, body = qualified.split(text)
        said = [r for r in releases if spec is None or in_range(r, spec)]
        for match in FLAG.finditer(body):
            if _FOREIGN_DEVICE.match(body, match.start()):
                continue
            where_said.setdefault(match.group(0), set()).update(said)
    for flag in sorted(set(where_said) - FOREIGN_OPTIONS):
        if _named_for_removal(flag, texts):
            continue  # telling a user to take a flag off a command line is right where it does not exist
        missing = [r for r in releases if r in where_said[flag] and flag not in index.flags(r)]
        if missing:
            exists = [v for v in index.versions if flag in index.flags(v)]
            where = _span(index, exists) if exists else "no indexed release"
            problems.append(f"fix names {flag}, absent from {_span(index, missing)} of versions "
                            f"{pattern.source.versions!r}; it exists in {where}")
    return problems


_REMOVAL = re.compile(r"\b(remove|drop|delete|no longer|deprecated|replaced|instead of|unrecognized|rename)", re.I)


def _named_for_removal(flag: str, texts: list[str]) -> bool:
    """Does the fix mention the flag as one to take off the command line (not to add)? Then it need not
    exist: `remove --swap-space (gone since 0.18)` is the fix for a launcher that still passes it."""
    for text in texts:
        for match in re.finditer(re.escape(flag) + r"(?![\w-])", text):
            window = text[max(0, match.start() - 60): match.end() + 30]
            if _REMOVAL.search(window):
                return True
    return False


def _span(index: SurfaceIndex, versions: list[str]) -> str:
    """"0.4.3-0.17.1, 0.20.2" for a list of indexed releases."""
    order = [index.versions.index(v) for v in versions]
    runs: list[list[int]] = []
    for i in sorted(order):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(index.versions[a] if a == b else f"{index.versions[a]}-{index.versions[b]}" for a, b in runs)


def failures(index: SurfaceIndex | None = None) -> list[tuple[str, str, list[str]]]:
    """(pattern id, check, problems) for every pattern that fails a check."""
    index = index or default_index()
    out = []
    for pattern in load_patterns():
        if says_vllm_writes_it(pattern):
            problems = message_problems(index, pattern)
            if problems:
                out.append((pattern.id, "message", problems))
        problems = flag_problems(index, pattern)
        if problems:
            out.append((pattern.id, "flag", problems))
    return out


def report(found: list[tuple[str, str, list[str]]]) -> str:
    lines = ["# Authority failures: patterns that disagree with vLLM's error-surface index", "",
             "Generated by `python3 -m bench.surface.authority --out <this file>` from the packaged index",
             "(logdoctor/surface/vllm-surface.json.gz) and the pattern library; the same checks are",
             "tests/test_surface_authority.py. `message`: a match example's vLLM message is not in every indexed",
             "release of the pattern's `source.versions`; `flag`: a fix names a `vllm serve` flag missing from",
             "some release of that range.", "",
             f"{len({f[0] for f in found})} patterns fail: {sum(1 for f in found if f[1] == 'message')} the message "
             f"check, {sum(1 for f in found if f[1] == 'flag')} the flag check "
             f"({sum(len(f[2]) for f in found)} problems).", ""]
    problems = [p for f in found for p in f[2]]
    kinds = [
        ("a vLLM message missing from part of the range (the range is wider than its wordings)",
         lambda p: p.startswith("match examples")),
        ("a message in no indexed release: an INFO/DEBUG record (not indexed), text rendered by argparse, "
         "pydantic, torch or another library, or an example that does not quote vLLM's wording",
         lambda p: p.startswith("match example ") and "exists in no indexed release" in p),
        ("a recommended flag missing from part of the range",
         lambda p: p.startswith("fix names") and "named as one to drop" not in p and "no indexed release" not in p),
        ("a flag the fix names as one to drop, missing from part of the range",
         lambda p: p.startswith("fix names") and "named as one to drop" in p),
        ("a flag in no indexed release (not a `vllm serve` option in 0.4.3-0.33.0, or another command's)",
         lambda p: p.startswith("fix names") and "no indexed release" in p),
        ("an unreadable source.versions", lambda p: p.startswith("source.versions")),
    ]
    lines += [f"- {sum(1 for p in problems if test(p))}: {label}" for label, test in kinds]
    lines.append("")
    for pattern_id, check, problems in found:
        lines.append(f"- `{pattern_id}` ({check})")
        lines += [f"  - {p}" for p in problems]
    return "\n".join(lines) + "\n"


def main() -> int:
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description="patterns that disagree with the error-surface index")
    parser.add_argument("--out", type=Path, help="write the list as markdown here")
    args = parser.parse_args()
    text = report(failures())
    if args.out:
        args.out.write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
