"""The commands. Wiring only: sources, the Doctor and reporters are built elsewhere."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Protocol, TextIO

from logdoctor import __version__
from logdoctor.model import Finding

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_SIGPIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away
PROGRESS_MIN_BYTES = 32 << 20  # show a progress bar only when the input takes a while
PROGRESS_ENV = "LOGDOCTOR_PROGRESS_MIN_BYTES"  # override (tests; people who always want one)


class Reporter(Protocol):
    def finding(self, finding: Finding) -> None: ...
    def file_header(self, source: str, lines: int, launches: int, findings: int) -> None: ...
    def close(self) -> None: ...


def _use_color(out: TextIO) -> bool:
    return out.isatty() and not os.environ.get("NO_COLOR")


def make_reporter(fmt: str, out: TextIO) -> Reporter:
    if fmt == "json":
        from logdoctor.report.jsonl import JsonReporter

        return JsonReporter(out)
    if _use_color(out):
        from logdoctor.report.terminal import TerminalReporter

        return TerminalReporter(out)
    from logdoctor.report.text import TextReporter

    return TextReporter(out)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for JSON Lines, one finding per line",
    )
    parser.add_argument(
        "--patterns",
        action="append",
        default=[],
        metavar="DIR",
        help="extra pattern files or folders (repeatable; also $LOGDOCTOR_PATTERNS)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="logdoctor",
        description="Diagnose vLLM server logs. With no command, read a log on standard input, copy it "
        "to standard output unchanged and print diagnoses on standard error as errors land: "
        "`vllm serve ... 2>&1 | logdoctor`.",
    )
    parser.add_argument("--version", action="version", version=f"logdoctor {__version__}")
    _add_common(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    scan = commands.add_parser("scan", help="diagnose saved logs (plain or .gz; a folder means its *.log* files)")
    scan.add_argument("paths", nargs="+", metavar="FILE|DIR")
    _add_common(scan)
    check = commands.add_parser(
        "check",
        help="check a vllm serve command before launching it: every rule it breaks, and the corrected command",
        description="Check `vllm serve ...` (after --) or a vLLM --config YAML against every constraint set "
        "that applies. Exit 1 when a rule is unmet or vLLM would reject the command.",
    )
    check.add_argument("--config", dest="config_file", metavar="YAML", help="vLLM's own --config file")
    check.add_argument("--vllm-version", metavar="X.Y.Z", help="the vLLM version to check for (default: newest known)")
    check.add_argument("--architecture", help="the model's architecture, e.g. NemotronHForCausalLM")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- vllm serve MODEL ...")
    patterns = commands.add_parser(
        "patterns",
        help="list the pattern library; `patterns test [DIR]` runs every example and the collision check",
    )
    patterns.add_argument("action", nargs="?", choices=["test"], help="test: check every pattern's examples")
    patterns.add_argument("dirs", nargs="*", metavar="DIR", help="your own pattern files or folders, with test")
    patterns.add_argument("--markdown", action="store_true", help="print docs/patterns.md")
    patterns.add_argument("--patterns", action="append", default=[], metavar="DIR", help=argparse.SUPPRESS)
    explain = commands.add_parser("explain", help="print one pattern as a documentation page")
    explain.add_argument("pattern_id", metavar="ID")
    explain.add_argument("--patterns", action="append", default=[], metavar="DIR")
    commands.add_parser("schema", help="print the JSON Schema of --format json findings")
    return parser


def _load_library(patterns: Sequence[str]):  # type: ignore[no-untyped-def]
    from logdoctor.library.loader import LibraryError
    from logdoctor.library.matcher import Library

    try:
        return Library.load(patterns)
    except LibraryError as exc:
        print(f"logdoctor: {exc}", file=sys.stderr)
        return None


def cmd_pipe(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        print(
            "logdoctor: reads a log on standard input, e.g. `vllm serve MODEL 2>&1 | logdoctor`;"
            " for a saved log use `logdoctor scan FILE`",
            file=sys.stderr,
        )
        return EXIT_USAGE
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from logdoctor.doctor import Doctor
    from logdoctor.sources.passthrough import pump

    reporter = make_reporter(args.format, sys.stderr)
    doctor = Doctor(library)
    pump(doctor, reporter.finding, sys.stdin.fileno(), sys.stdout.fileno())
    with contextlib.suppress(OSError, ValueError):  # stderr may be gone; the exit status still counts
        reporter.close()
    return EXIT_FINDINGS if any(f.severity == "error" for f in doctor.findings) else EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from logdoctor.sources.files import InputError, expand

    try:
        paths = expand(args.paths)
    except InputError as exc:
        print(f"logdoctor: {exc}", file=sys.stderr)
        return EXIT_USAGE
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from logdoctor.scan import scan_paths

    reporter = make_reporter(args.format, sys.stdout)
    total = sum(p.stat().st_size for p in paths)
    threshold = int(os.environ.get(PROGRESS_ENV, PROGRESS_MIN_BYTES))
    progress = args.format == "text" and sys.stderr.isatty() and total >= threshold
    result = scan_paths(paths, library, reporter, progress=progress)
    reporter.close()
    if result.unreadable:
        return EXIT_USAGE if not result.findings else EXIT_FINDINGS
    return EXIT_FINDINGS if any(f.severity == "error" for f in result.findings) else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from logdoctor.check import run_check
    from logdoctor.launch.cmdline import CommandError
    from logdoctor.library.loader import LibraryError
    from logdoctor.report.checklist import print_check

    tokens = list(args.command_line)
    if tokens[:1] == ["--"]:
        tokens = tokens[1:]
    if not tokens and args.config_file is None:
        print(
            "logdoctor check: give the command after --, e.g. `logdoctor check -- vllm serve MODEL --flag ...`,"
            " or --config serve.yaml",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        report = run_check(tokens, args.config_file, args.vllm_version, args.architecture)
    except (CommandError, LibraryError) as exc:
        print(f"logdoctor check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_check(report, args.format, sys.stdout, color=args.format == "text" and _use_color(sys.stdout))
    return EXIT_OK if report.ok else EXIT_FINDINGS


def cmd_patterns(args: argparse.Namespace) -> int:
    if args.dirs and args.action != "test":
        print("logdoctor patterns: folders are for `patterns test DIR`", file=sys.stderr)
        return EXIT_USAGE
    library = _load_library([*args.patterns, *args.dirs])
    if library is None:
        return EXIT_USAGE
    from logdoctor.library.docs import library_markdown, library_table

    if args.action == "test":
        from logdoctor.library.selftest import check_library

        problems = check_library(library)
        for problem in problems:
            print(("warning: " if problem.is_warning else "") + str(problem))
        failures = [p for p in problems if not p.is_warning]
        examples = sum(len(p.examples.match) + len(p.examples.no_match) for p in library.patterns)
        print(
            f"{len(library.patterns)} patterns, {examples} examples: {len(failures)} problem(s), "
            f"{len(problems) - len(failures)} warning(s)"
        )
        return EXIT_FINDINGS if failures else EXIT_OK
    if args.markdown:
        sys.stdout.write(library_markdown(library))
        return EXIT_OK
    rows = library_table(library)
    width = max(len(r[0]) for r in rows)
    for ident, severity, versions, title in rows:
        print(f"{ident:<{width}}  {severity:<7}  {versions:<14}  {title}")
    print(f"{len(rows)} patterns, {len(library.sets)} constraint sets")
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from logdoctor.library.docs import pattern_page, rule_sets_of

    pattern = library.by_id.get(args.pattern_id)
    if pattern is None:
        import difflib

        close = difflib.get_close_matches(args.pattern_id, list(library.by_id), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `logdoctor patterns` lists them"
        print(f"logdoctor explain: no pattern {args.pattern_id!r}{hint}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(pattern_page(pattern, rule_sets_of(library, pattern.id)))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(Finding.model_json_schema(), indent=2))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {
        None: cmd_pipe,
        "scan": cmd_scan,
        "check": cmd_check,
        "patterns": cmd_patterns,
        "explain": cmd_explain,
        "schema": cmd_schema,
    }
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `logdoctor scan ... | head`: the reader has what it wanted. Exit like a process killed by
        # SIGPIPE, without a traceback (and without Python's own complaint at shutdown).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
