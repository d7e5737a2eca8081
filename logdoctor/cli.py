"""The commands. Wiring only: sources, the Doctor and reporters are built elsewhere."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from logdoctor import __version__
from logdoctor.exits import EXIT_FINDINGS, EXIT_OK, EXIT_SIGPIPE, EXIT_USAGE

if TYPE_CHECKING:  # imported lazily at run time: `--version` should not pay for pydantic or the library
    from logdoctor.doctor import Doctor
    from logdoctor.library.matcher import Library
    from logdoctor.model import Finding
    from logdoctor.report import Reporter
PROGRESS_MIN_BYTES = 32 << 20  # show a progress bar only when the input takes a while
PROGRESS_ENV = "LOGDOCTOR_PROGRESS_MIN_BYTES"  # override (tests; people who always want one)


GLOBAL_OPTIONS = ("--format", "--patterns", "--verbose")
# Which of the global options each command takes (None: the pipe, no command). Given before the command or
# after it, an option works the same; given to a command that has no use for it, it is refused (exit 2)
# rather than accepted and ignored.
COMMAND_GLOBALS: dict[str | None, frozenset[str]] = {
    None: frozenset(GLOBAL_OPTIONS),
    "scan": frozenset(GLOBAL_OPTIONS),
    "check": frozenset({"--format"}),
    "run": frozenset(GLOBAL_OPTIONS),
    "watch": frozenset(GLOBAL_OPTIONS),
    "patterns": frozenset({"--format", "--patterns"}),
    "explain": frozenset({"--patterns"}),
    "schema": frozenset(),
    "completion": frozenset(),
}
FORMAT_HELP = (
    "text for people (default; json for watch), json for JSON Lines: one finding per line, and a summary line "
    "when a file or the input ends"
)
PATTERNS_HELP = "extra pattern files or folders (repeatable; also $LOGDOCTOR_PATTERNS)"
VERBOSE_HELP = "text: every detail of every finding (evidence, the whole explanation, every rule)"
# watch --poll: below 10 ms the loop only burns a core; above a day it is not following anything.
POLL_MIN, POLL_MAX = 0.01, 86400.0


class Parser(argparse.ArgumentParser):
    """argparse, with an error on one line (`logdoctor watch: error: argument --poll: ... (see ...)`):
    argparse's own puts the whole usage above it, and the one line that matters scrolls by."""

    commands: dict[str, argparse.ArgumentParser]  # the top level's: each command's parser, by name

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split("\n"))
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _add_common(parser: argparse.ArgumentParser, options: frozenset[str], top: bool = False) -> None:
    """The global options. The top level's are `format`, `patterns` and `verbose`; a command's own copies
    have other names (`sub_format`, ...), so `logdoctor --patterns A scan --patterns B F` reads both A and B
    (argparse would let the command's copy replace the top level's), and parse_args() merges them."""
    if "--format" in options:
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            dest="format" if top else "sub_format",
            default=None if top else argparse.SUPPRESS,
            help=FORMAT_HELP,
        )
    if "--patterns" in options:
        parser.add_argument(
            "--patterns",
            action="append",
            dest="patterns" if top else "sub_patterns",
            default=[] if top else argparse.SUPPRESS,
            metavar="DIR",
            help=PATTERNS_HELP,
        )
    if "--verbose" in options:
        parser.add_argument(
            "--verbose",
            action="store_true",
            dest="verbose" if top else "sub_verbose",
            default=False if top else argparse.SUPPRESS,
            help=VERBOSE_HELP,
        )
    if not top:
        parser.add_argument("--version", action="version", version=f"logdoctor {__version__}")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number; give one from 1 to 65535") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port; give one from 1 to 65535")
    return port


def _poll_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(seconds) and POLL_MIN <= seconds <= POLL_MAX):
        raise argparse.ArgumentTypeError(f"{text} is out of range; give seconds from {POLL_MIN:g} to {POLL_MAX:g}")
    return seconds


def _version(text: str) -> str:
    if not re.fullmatch(r"v?\d+\.\d+(\.\d+)?([.+-]?[0-9A-Za-z.+-]*)?", text):
        from logdoctor.check import carried_versions

        raise argparse.ArgumentTypeError(f"{text!r} is not a vLLM version ({carried_versions()})")
    return text.removeprefix("v")


# The format of a command whose user chose none.
_DEFAULT_FORMAT = {"watch": "json"}


def build_parser() -> Parser:
    parser = Parser(
        prog="logdoctor",
        description="Diagnose vLLM server logs. With no command, read a log on standard input, copy it "
        "to standard output unchanged and print diagnoses on standard error as errors land: "
        "`vllm serve ... 2>&1 | logdoctor`. --format and --patterns may be given before or after the command.",
    )
    parser.add_argument("--version", action="version", version=f"logdoctor {__version__}")
    _add_common(parser, COMMAND_GLOBALS[None], top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(name, **kwargs)
        _add_common(sub, COMMAND_GLOBALS[name])
        return sub

    scan = command(
        "scan",
        help="diagnose saved logs: files (plain or gzip), folders, - for standard input, pipes and FIFOs",
        description="Diagnose saved logs, a report per file. FILE is a plain or gzip file (told by its first "
        "bytes, not its name), a FIFO or - (standard input: `cat server.log | logdoctor scan -`). DIR means every "
        "log file below it, at any depth: *.log and their rotated copies (x.log.1, x.log-20261130, x.log.2.gz).",
    )
    scan.add_argument("paths", nargs="+", metavar="FILE|DIR|-")
    check = command(
        "check",
        help="check a vllm serve command before launching it: every rule it breaks, and the corrected command",
        description="Check `vllm serve ...` (after --) or a vLLM --config YAML against every constraint set "
        "that applies. Exit 1 when a rule is unmet or vLLM would reject the command.",
    )
    check.add_argument("--config", dest="config_file", metavar="YAML", help="vLLM's own --config file")
    check.add_argument(
        "--vllm-version", type=_version, metavar="X.Y.Z", help="the vLLM version to check for (default: newest known)"
    )
    check.add_argument("--architecture", help="the model's architecture, e.g. NemotronHForCausalLM")
    check.add_argument(
        "--no-probe",
        action="store_true",
        help="the server will run on another machine: do not test this one (whether --host resolves and is "
        "local, whether --port is free); those rules stay unknown",
    )
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
    run = command(
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
    run.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    watch = command(
        "watch",
        help="follow log files (sidecar): rotation, restarts, container formats; JSON Lines on stdout",
        description="Follow vLLM log files by name through rotation (rename, copytruncate, delete and "
        "re-create) and print one JSON line per finding. PATH is a file (it may not exist yet), a folder "
        "(every *.log below it, also files that appear later) or a quoted glob. SIGTERM/SIGINT stop it within "
        "a fraction of a second (what is pending is diagnosed first when every file was read to its end) and "
        "save the state; it exits 0.",
    )
    watch.add_argument("paths", nargs="+", metavar="PATH")
    watch.add_argument("--state", metavar="FILE", help="remember offsets and reported findings across restarts")
    watch.add_argument(
        "--metrics-port", type=_port, metavar="N", help="serve Prometheus /metrics and /healthz on port N (1-65535)"
    )
    watch.add_argument(
        "--poll",
        type=_poll_seconds,
        default=1.0,
        metavar="SECONDS",
        help=f"how often files are checked when no file event arrives (default 1, {POLL_MIN:g} to {POLL_MAX:g})",
    )
    patterns = command(
        "patterns",
        help="list the pattern library (--family, --grep, --format json); `patterns test [DIR]` runs every example",
        description="List the pattern library, one pattern a line (--format json: one JSON object a line). "
        "`patterns test [DIR]` runs every pattern's examples and the collision check.",
    )
    patterns.add_argument("action", nargs="?", choices=["test"], help="test: check every pattern's examples")
    patterns.add_argument("dirs", nargs="*", metavar="DIR", help="your own pattern files or folders, with test")
    patterns.add_argument("--family", metavar="F", help="only the family F: the id before its first dot (memory, cuda)")
    patterns.add_argument("--grep", metavar="TEXT", help="only patterns whose id or title contains TEXT (any case)")
    patterns.add_argument("--markdown", action="store_true", help="print docs/patterns.md")
    explain = command(
        "explain",
        help="print one pattern (or `unrecognized`) as a documentation page",
        description="Print the documentation page of a rule id: a pattern's, or `unrecognized` (an error no "
        "pattern knows). Rendered on a terminal, plain Markdown text elsewhere.",
    )
    explain.add_argument("pattern_id", metavar="ID")
    command("schema", help="print the JSON Schema of a --format json line (a finding or a summary)")
    completion = command(
        "completion",
        help="print a shell completion script: bash, zsh or fish",
        description="Print a completion script for SHELL, e.g. `logdoctor completion bash > "
        "/etc/bash_completion.d/logdoctor`, or `source <(logdoctor completion zsh)` in ~/.zshrc, or "
        "`logdoctor completion fish > ~/.config/fish/completions/logdoctor.fish`.",
    )
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    parser.commands = dict(commands.choices)
    return parser


# Commands whose last positional takes any number of values: `scan a.log --format json b.log` reads both
# files (argparse alone would take a.log, then call b.log an unrecognized argument).
_MANY_PATHS = {"scan": "paths", "watch": "paths", "patterns": "dirs"}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, with the global options merged: before or after the command they mean the same,
    and one the command has no use for is refused on one line (exit 2), never accepted and ignored."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    command = args.command
    where = parser.commands[command] if command else parser
    if extras and command in _MANY_PATHS and all(e == "-" or not e.startswith("-") for e in extras):
        getattr(args, _MANY_PATHS[command]).extend(extras)
        extras = []
    for extra in extras:
        option = extra.split("=", 1)[0]
        if option in GLOBAL_OPTIONS:
            where.error(f"{option} does not apply to {command or 'the pipe'}")
    if extras:
        where.error(f"unrecognized arguments: {' '.join(extras)}")
    accepted = COMMAND_GLOBALS[command]
    if args.format is not None and "--format" not in accepted:
        where.error(f"--format does not apply to {command}")
    if args.patterns and "--patterns" not in accepted:
        where.error(f"--patterns does not apply to {command}")
    if args.verbose and "--verbose" not in accepted:
        where.error(f"--verbose does not apply to {command}")
    args.format = getattr(args, "sub_format", None) or args.format or _DEFAULT_FORMAT.get(command or "", "text")
    args.patterns = [*args.patterns, *getattr(args, "sub_patterns", [])]
    args.verbose = args.verbose or getattr(args, "sub_verbose", False)
    if args.verbose and args.format != "text":
        where.error("--verbose applies to --format text (JSON always holds every detail)")
    if command == "patterns":
        listing = [name for name, value in (("--family", args.family), ("--grep", args.grep)) if value is not None]
        if args.format == "json":
            listing.append("--format json")
        mode = "patterns test" if args.action == "test" else "patterns --markdown" if args.markdown else None
        if mode is not None and listing:
            where.error(f"{listing[0]} does not apply to `{mode}`")
    return args


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


def _end_of_input(reporter: Reporter, fmt: str, doctor: Doctor, say_not_vllm: bool = True) -> None:
    """The pipe's or run's input ended: JSON ends with its summary line. Text, whose findings were shown
    as they landed, says only when the pipe held no vLLM line at all (the wrong thing was piped in); run's
    text adds nothing to the output of a command the user chose."""
    from logdoctor.scan import summarize

    summary = summarize(doctor, "-")
    if fmt == "json" or (say_not_vllm and not summary.vllm):
        reporter.file_end(summary)


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
    from functools import partial

    from logdoctor.doctor import Doctor
    from logdoctor.report import make_reporter
    from logdoctor.sources.passthrough import pump

    reporter = make_reporter(args.format, sys.stderr, verbose=args.verbose, live=True)
    doctor = Doctor(library, on_internal_error=library.on_notice)
    guard = pump(doctor, reporter.finding, sys.stdin.fileno(), sys.stdout.fileno())
    with contextlib.suppress(OSError, ValueError):  # stderr may be gone; the exit status still counts
        guard.call(partial(_end_of_input, reporter, args.format, doctor), None)
        reporter.close()
    return EXIT_FINDINGS if doctor.saw_error else EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from logdoctor.sources.files import InputError, disk_size, expand

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
    total = sum(disk_size(p) for p in paths)
    try:
        threshold = int(os.environ.get(PROGRESS_ENV, PROGRESS_MIN_BYTES))
    except ValueError:  # not an option of the user's: a bad value means the default, not a traceback
        threshold = PROGRESS_MIN_BYTES
    progress = args.format == "text" and sys.stderr.isatty() and total >= threshold
    result = scan_paths(paths, library, reporter, progress=progress)
    reporter.close()
    if result.unreadable:
        return EXIT_USAGE if not result.findings else EXIT_FINDINGS
    return EXIT_FINDINGS if result.errors else EXIT_OK


def _machine(args: argparse.Namespace) -> Any:
    """The probe of this machine's host and port, unless the server runs elsewhere (--no-probe)."""
    from logdoctor.probe.machine import probe

    return None if args.no_probe else probe


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
        report = run_check(tokens, args.config_file, args.vllm_version, args.architecture, machine=_machine(args))
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
            report = run_check(tokens, args.config_file, args.vllm_version, args.architecture, machine=_machine(args))
            probe.wait_ready()
            # The rules of the release that is installed, when logdoctor knows its parser.
            installed = probe.vllm_version
            if args.vllm_version is None and installed in available_versions() and installed != report.version:
                report = run_check(tokens, args.config_file, installed, args.architecture, machine=_machine(args))
            words = command_words(tokens, args.config_file)
            report.with_vllm = validate_loop(probe, words, report.version, args.architecture, machine=_machine(args))
    except (CommandError, LibraryError, WithVllmError) as exc:
        print(f"logdoctor check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print_check(report, args.format, sys.stdout, color=args.format == "text" and use_color(sys.stdout))
    return EXIT_OK if report.with_vllm.accepted_original else EXIT_FINDINGS


def cmd_watch(args: argparse.Namespace) -> int:
    if args.state is not None:
        folder = os.path.dirname(os.path.abspath(args.state))
        if not os.path.isdir(folder):
            print(f"logdoctor watch: --state {args.state}: no folder {folder}; create it first", file=sys.stderr)
            return EXIT_USAGE
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    from logdoctor.watch import watch

    return watch(
        args.paths, library, sys.stdout, args.format, args.state, args.metrics_port, args.poll, verbose=args.verbose
    )


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
    from logdoctor.scan import summarize
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
        json_reporter.file_end(summarize(doctor, "-"))

    try:
        try:
            result = run(tokens, doctor, emit)
        except CannotStart as exc:
            print(f"logdoctor run: {exc}", file=sys.stderr)
            return EXIT_CANNOT_START
        with contextlib.suppress(OSError, ValueError):  # stderr may be gone; the exit status still counts
            result.guard.call(partial(_end_of_input, reporter, args.format, doctor, say_not_vllm=False), None)
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
    from logdoctor.library.docs import families, library_markdown, pattern_record, select

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
    known = families(library)
    if args.family is not None and args.family not in known:
        import difflib

        close = difflib.get_close_matches(args.family, known, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"the families are {', '.join(known)}"
        print(f"logdoctor patterns: no family {args.family!r}; {hint}", file=sys.stderr)
        return EXIT_USAGE
    chosen = select(library, args.family, args.grep)
    if args.format == "json":
        for pattern in chosen:
            print(json.dumps(pattern_record(library, pattern), ensure_ascii=False, separators=(",", ":")))
        return EXIT_OK
    if chosen:
        width = max(len(p.id) for p in chosen)
        for p in chosen:
            print(f"{p.id:<{width}}  {p.severity:<7}  {p.source.versions or 'any':<14}  {p.title}")
    if len(chosen) == len(library.patterns):
        print(f"{len(chosen)} patterns, {len(library.sets)} constraint sets")
    else:
        print(f"{len(chosen)} of {len(library.patterns)} patterns")
    return EXIT_OK


def _show_page(page: str) -> None:
    """A Markdown page: rendered by rich on a terminal (NO_COLOR: the same layout, without colour; rich
    reads it), the Markdown text itself elsewhere (a file, a pipe, a pager), which reads as plain text."""
    if not sys.stdout.isatty():
        sys.stdout.write(page)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(page))


def cmd_explain(args: argparse.Namespace) -> int:
    from logdoctor.diagnose import UNRECOGNIZED
    from logdoctor.library.docs import UNRECOGNIZED_PAGE, pattern_page, rule_sets_of

    if args.pattern_id == UNRECOGNIZED:
        _show_page(UNRECOGNIZED_PAGE)
        return EXIT_OK
    library = _load_library(args.patterns)
    if library is None:
        return EXIT_USAGE
    pattern = library.by_id.get(args.pattern_id)
    areas: dict[str, int] = {}
    if pattern is None and (surface := library.surface()) is not None:
        for entry in surface.entries():
            areas[f"vllm.{entry.area}"] = areas.get(f"vllm.{entry.area}", 0) + 1
        if args.pattern_id in areas:
            from logdoctor.library.docs import surface_page

            _show_page(surface_page(args.pattern_id.removeprefix("vllm."), areas[args.pattern_id]))
            return EXIT_OK
    if pattern is None:
        import difflib

        close = difflib.get_close_matches(args.pattern_id, [*library.by_id, UNRECOGNIZED, *areas], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `logdoctor patterns` lists them"
        print(f"logdoctor explain: no pattern {args.pattern_id!r}{hint}", file=sys.stderr)
        return EXIT_USAGE
    _show_page(pattern_page(pattern, rule_sets_of(library, pattern.id)))
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from logdoctor.model import json_lines_schema

    print(json.dumps(json_lines_schema(), indent=2))
    return EXIT_OK


def cmd_completion(args: argparse.Namespace) -> int:
    from logdoctor.completion import script

    sys.stdout.write(script(build_parser(), args.shell))
    return EXIT_OK


def _standard_streams() -> None:
    """A parent may start logdoctor with stdout or stderr closed (`2>&-`): Python then has no stream for
    it. What would be written there goes to /dev/null, so the pipe's copy and the diagnosis go on."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams()
    args = parse_args(argv)
    handlers = {
        None: cmd_pipe,
        "scan": cmd_scan,
        "check": cmd_check,
        "run": cmd_run,
        "watch": cmd_watch,
        "patterns": cmd_patterns,
        "explain": cmd_explain,
        "schema": cmd_schema,
        "completion": cmd_completion,
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
