"""The commands. Wiring only: sources, the Doctor and reporters are built elsewhere."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from logdoctor import __version__
from logdoctor.exits import EXIT_FINDINGS, EXIT_OK, EXIT_SIGPIPE, EXIT_USAGE

if TYPE_CHECKING:  # imported lazily at run time: `--version` should not pay for pydantic or the library
    from logdoctor.library.matcher import Library
    from logdoctor.model import Finding
PROGRESS_MIN_BYTES = 32 << 20  # show a progress bar only when the input takes a while
PROGRESS_ENV = "LOGDOCTOR_PROGRESS_MIN_BYTES"  # override (tests; people who always want one)


def _add_common(parser: argparse.ArgumentParser, top: bool = False) -> None:
    # Given before or after the command (`logdoctor --format json scan F` = `logdoctor scan --format json F`):
    # a command's own copy must not reset what the top level read, so only the top level has defaults.
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default=None if top else argparse.SUPPRESS,
        help="text for people (default; json for watch), json for JSON Lines, one finding per line",
    )
    parser.add_argument(
        "--patterns",
        action="append",
        default=[] if top else argparse.SUPPRESS,
        metavar="DIR",
        help="extra pattern files or folders (repeatable; also $LOGDOCTOR_PATTERNS)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="text: every detail of every finding (evidence, the whole explanation, every rule)",
    )


# The format of a command whose user chose none.
_DEFAULT_FORMAT = {"watch": "json"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="logdoctor",
        description="Diagnose vLLM server logs. With no command, read a log on standard input, copy it "
        "to standard output unchanged and print diagnoses on standard error as errors land: "
        "`vllm serve ... 2>&1 | logdoctor`.",
    )
    parser.add_argument("--version", action="version", version=f"logdoctor {__version__}")
    _add_common(parser, top=True)
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
    check.add_argument("--format", choices=("text", "json"), default=argparse.SUPPRESS)
    check.add_argument(
        "--with-vllm",
        nargs="?",
        const="",
        default=None,
        metavar="PYTHON",
        help="also ask the installed vLLM (the Python of the `vllm` on PATH, or PYTHON): its parser and config "
        "construction, no engine; its refusals are fixed and asked again until it accepts. Exit 1 when it "
        "refused the launch as given",
    )
    check.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- vllm serve MODEL ...")
    run = commands.add_parser(
        "run",
        help="start a command (e.g. vllm serve), pass its output through and diagnose it live; exits with its status",
        description="Start COMMAND (after --) and copy its stdout to standard output and its stderr to standard "
        "error, byte for byte and without delay, while both are diagnosed; diagnoses are printed on standard error "
        "as errors land. SIGINT, SIGTERM and SIGHUP are passed on to the command, and logdoctor waits for it. "
        "Exit status: the command's (128+N when it was killed by signal N), whatever the diagnosis found; 127 when "
        "the command cannot be started (not found, not executable); 2 for a usage error (no command, a broken "
        "pattern file, a --report file that cannot be created).",
    )
    run.add_argument(
        "--report",
        metavar="FILE",
        help="when the command ends, write every finding (root cause ranked) to FILE as JSON Lines",
    )
    _add_common(run)
    run.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    watch = commands.add_parser(
        "watch",
        help="follow log files (sidecar): rotation, restarts, container formats; JSON Lines on stdout",
        description="Follow vLLM log files by name through rotation (rename, copytruncate, delete and "
        "re-create) and print one JSON line per finding. PATH is a file (it may not exist yet), a folder "
        "(every *.log below it, also files that appear later) or a quoted glob. SIGTERM/SIGINT stop it within "
        "a fraction of a second (what is pending is diagnosed first when every file was read to its end) and "
        "save the state; it exits 0.",
    )
    watch.add_argument("paths", nargs="+", metavar="PATH")
    watch.add_argument("--format", choices=("json", "text"), default=argparse.SUPPRESS)
    watch.add_argument("--state", metavar="FILE", help="remember offsets and reported findings across restarts")
    watch.add_argument("--metrics-port", type=int, metavar="N", help="serve Prometheus /metrics and /healthz")
    watch.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often files are checked when no file event arrives (default 1)",
    )
    watch.add_argument("--patterns", action="append", default=[], metavar="DIR")
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


def _load_library(patterns: Sequence[str]) -> Library | None:
    from logdoctor.library.files import LibraryError
    from logdoctor.library.matcher import Library
    from logdoctor.report import print_notice

    try:
        library = Library.load(patterns)
    except LibraryError as exc:
        print(f"logdoctor: {exc}", file=sys.stderr)
        return None
    library.on_notice = print_notice
    return library


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
    from logdoctor.report import make_reporter
    from logdoctor.sources.passthrough import pump

    reporter = make_reporter(args.format, sys.stderr, verbose=args.verbose, live=True)
    doctor = Doctor(library, on_internal_error=library.on_notice)
    pump(doctor, reporter.finding, sys.stdin.fileno(), sys.stdout.fileno())
    with contextlib.suppress(OSError, ValueError):  # stderr may be gone; the exit status still counts
        reporter.close()
    return EXIT_FINDINGS if doctor.saw_error else EXIT_OK


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
    from logdoctor.report import make_reporter
    from logdoctor.scan import scan_paths

    reporter = make_reporter(args.format, sys.stdout, verbose=args.verbose)
    total = sum(p.stat().st_size for p in paths)
    threshold = int(os.environ.get(PROGRESS_ENV, PROGRESS_MIN_BYTES))
    progress = args.format == "text" and sys.stderr.isatty() and total >= threshold
    result = scan_paths(paths, library, reporter, progress=progress)
    reporter.close()
    if result.unreadable:
        return EXIT_USAGE if not result.findings else EXIT_FINDINGS
    return EXIT_FINDINGS if result.errors else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from logdoctor.check import run_check
    from logdoctor.launch.cmdline import CommandError
    from logdoctor.library.files import LibraryError
    from logdoctor.report import use_color
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
    if args.with_vllm is not None:
        return _check_with_vllm(args, tokens)
    try:
        report = run_check(tokens, args.config_file, args.vllm_version, args.architecture)
    except (CommandError, LibraryError) as exc:
        print(f"logdoctor check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_check(report, args.format, sys.stdout, color=args.format == "text" and use_color(sys.stdout))
    return EXIT_OK if report.ok else EXIT_FINDINGS


def _check_with_vllm(args: argparse.Namespace, tokens: list[str]) -> int:
    """check, then the same launch asked of vLLM itself: exit 0 when vLLM accepted it as given."""
    from logdoctor.check import command_words, run_check
    from logdoctor.launch.argspec import available_versions
    from logdoctor.launch.cmdline import CommandError
    from logdoctor.library.files import LibraryError
    from logdoctor.report import use_color
    from logdoctor.report.checklist import print_check
    from logdoctor.withvllm import Probe, WithVllmError, find_python, validate_loop

    try:
        probe = Probe(find_python(args.with_vllm))
        probe.spawn()  # vLLM imports while check runs
        with contextlib.closing(probe):
            report = run_check(tokens, args.config_file, args.vllm_version, args.architecture)
            probe.wait_ready()
            # The rules of the release that is installed, when logdoctor knows its parser.
            installed = probe.vllm_version
            if args.vllm_version is None and installed in available_versions() and installed != report.version:
                report = run_check(tokens, args.config_file, installed, args.architecture)
            words = command_words(tokens, args.config_file)
            report.with_vllm = validate_loop(probe, words, report.version, args.architecture)
    except (CommandError, LibraryError, WithVllmError) as exc:
        print(f"logdoctor check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_check(report, args.format, sys.stdout, color=args.format == "text" and use_color(sys.stdout))
    return EXIT_OK if report.with_vllm.accepted_original else EXIT_FINDINGS


def cmd_watch(args: argparse.Namespace) -> int:
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from logdoctor.watch import watch

    return watch(args.paths, library, sys.stdout, args.format, args.state, args.metrics_port, args.poll)


def cmd_run(args: argparse.Namespace) -> int:
    tokens = list(args.command_line)
    if tokens[:1] == ["--"]:
        tokens = tokens[1:]
    if not tokens:
        print("logdoctor run: give the command after --, e.g. `logdoctor run -- vllm serve MODEL ...`", file=sys.stderr)
        return EXIT_USAGE
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from functools import partial

    from logdoctor.doctor import Doctor
    from logdoctor.report import make_reporter
    from logdoctor.report.jsonl import JsonReporter
    from logdoctor.sources.command import EXIT_CANNOT_START, CannotStart, run

    report_file: TextIO | None = None
    if args.report is not None:
        try:  # created before the command starts, so a bad path is found before a server is launched
            report_file = open(args.report, "w", encoding="utf-8")  # noqa: SIM115 - closed after the run
        except OSError as exc:
            print(f"logdoctor run: cannot create the report {args.report}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
    reporter = make_reporter(args.format, sys.stderr, verbose=args.verbose, live=True)
    doctor = Doctor(library, on_internal_error=library.on_notice)

    def emit(finding: Finding) -> None:
        reporter.finding(finding)
        sys.stderr.flush()  # out before the command's next stderr bytes, which bypass sys.stderr

    def write_report(out: TextIO) -> None:
        json_reporter = JsonReporter(out)
        for finding in doctor.report():
            json_reporter.finding(finding)

    try:
        try:
            result = run(tokens, doctor, emit)
        except CannotStart as exc:
            print(f"logdoctor run: {exc}", file=sys.stderr)
            return EXIT_CANNOT_START
        with contextlib.suppress(OSError, ValueError):  # stderr may be gone; the exit status still counts
            reporter.close()
        if report_file is not None:
            result.guard.call(partial(write_report, report_file), None)
        return result.exit_status
    finally:
        if report_file is not None:
            with contextlib.suppress(OSError):
                report_file.close()


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
    from logdoctor.model import Finding

    print(json.dumps(Finding.model_json_schema(), indent=2))
    return EXIT_OK


def _standard_streams() -> None:
    """A parent may start logdoctor with stdout or stderr closed (`2>&-`): Python then has no stream for
    it. What would be written there goes to /dev/null, so the pipe's copy and the diagnosis go on."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams()
    args = build_parser().parse_args(argv)
    if args.format is None:
        args.format = _DEFAULT_FORMAT.get(args.command or "", "text")
    handlers = {
        None: cmd_pipe,
        "scan": cmd_scan,
        "check": cmd_check,
        "run": cmd_run,
        "watch": cmd_watch,
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
