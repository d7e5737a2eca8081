"""Events to findings: which pattern explains an event, what its fix says, and which finding of a launch
is the root cause.

The finding models (model.py, pydantic) and the launch audit are imported by the functions that build a
finding: a log without one (and `--version`, and a clean scan's start) does not pay for importing them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from logdoctor.assemble import Event, RaisedException
from logdoctor.launch.argspec import load_spec
from logdoctor.launch.cmdline import convert, format_value, render_command, typed_value
from logdoctor.launch.config import LaunchConfig, Origin
from logdoctor.launch.tracker import Launch
from logdoctor.library import qualified
from logdoctor.library.matcher import Library, Match
from logdoctor.records import Record
from logdoctor.vocabulary import SEVERITY_ORDER, Role

if TYPE_CHECKING:
    from logdoctor.library.pattern import Pattern
    from logdoctor.model import ErrorInfo, EvidenceLine, Finding
    from logdoctor.surface import SurfaceHit

UNRECOGNIZED = "unrecognized"
MAX_EVIDENCE_LINES = 40
MAX_ERROR_MESSAGE = 4000

# `{name}`, `{name|fallback}`, and computed ones: `{name:divisors}`, `{name:divisor_at_most:other}`.
_FUNCTIONS = "divisors|divisor_at_most|common_divisor|cofactor"
_PLACEHOLDER = re.compile(r"\{(\w+)(?::(" + _FUNCTIONS + r")(?::(\w+))?)?(?:\|([^{}]*))?\}")
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")
# A capture written as a flag's value in a fix's text: `--max-model-len {derived}`, `--max-model-len={derived}`.
_FLAG_VALUE = re.compile(r"(--[A-Za-z][\w-]*)[ =]\{(\w+)(?:\|[^{}]*)?\}")
_TEMPLATE_FIELD = re.compile(r"\{[^{}]*\}")
# A line of Python's warnings module: `/path/torchvision/io/image.py:13: UserWarning: Failed to load ...`.
_PYTHON_WARNING = re.compile(r"\S+\.py:\d+: [A-Z]\w*Warning: ")
# What varies between two reports of one error: numbers, paths, quoted values, punctuation.
_SEARCH_NOISE = re.compile(r"'[^']*'|\"[^\"]*\"|\S*/\S*|0x[0-9a-fA-F]+|[\d.]+\w*|[^\w\s-]")
# Frames that show a traceback ended a process, not a request: the script's top level, a
# multiprocessing child's bootstrap, a thread's run.
_FATAL_FRAME = re.compile(r"<module>|_bootstrap(?:_inner)?|run_engine_core|worker_main|run_worker")
ROLE_ORDER = {"cause": 0, "consequence": 1, "wrapper": 2, "benign": 3, "request": 4}


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


def say_list(items: list[str], last: str = "or") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def _computed(name: str, argument: str | None, value: str, captures: dict[str, str]) -> str | None:
    """A value computed from a capture, never templated (a divisor list is the capture's own divisors)."""
    try:
        number = int(value)
    except ValueError:
        return None
    if number < 1:
        return None
    if name == "divisors":
        return say_list([str(d) for d in divisors(number)])
    try:
        other = int(captures.get(argument or "", ""))
    except ValueError:
        return None
    if other < 1:
        return None
    if name == "divisor_at_most":
        return str(max(d for d in divisors(number) if d <= other))
    if name == "common_divisor":
        return str(math.gcd(number, other))
    if name == "cofactor":  # what is left of this number once the common divisor with the other is taken
        return str(number // math.gcd(number, other))
    return None


def render(template: str, captures: dict[str, str]) -> str:
    """Fill `{name}` / `{name|fallback}` from a pattern's captures, and values computed from them:
    `{name:divisors}` (the divisors of the capture: `1, 2, 3, 4, 6 or 12`), `{name:divisor_at_most:other}`
    (its largest divisor not above the capture `other`), `{name:common_divisor:other}` (their greatest
    common divisor), `{name:cofactor:other}` (the capture divided by that)."""

    def fill(match: re.Match[str]) -> str:
        value = captures.get(match[1])
        if value is not None and match[2] is not None:
            value = _computed(match[2], match[3], value, captures)
        if value is not None:
            return value
        return match[4] if match[4] is not None else f"<{match[1]}>"

    return _PLACEHOLDER.sub(fill, template)


def diagnose(event: Event, library: Library, launch: Launch) -> Finding | None:
    """The finding an event amounts to, or None when it is not an error and no pattern knows it."""
    finding = _diagnose(event, library, launch.index, launch.version)
    if finding is not None and finding.rule != UNRECOGNIZED and finding.severity != "info":
        attach_launch_fix(finding, launch, library)
        suggest_nearest_flags(finding, library, launch.version)
    if finding is not None and launch.stopping_at(event.first_line) and finding.severity != "info":
        # The server had been serving and was asked to stop: EngineDeadError and friends are expected.
        finding.severity = "info"
        finding.role = "benign"
        finding.explanation += (
            f" This was logged while the server was shutting down on request (line {launch.shutdown_line}),"
            " so it is part of the shutdown, not a failure."
        )
    return finding


ARGS_TRUNCATED_STEP = (
    "The log's `non-default args` line was longer than logdoctor reads of a line (64 KiB) and was read in "
    "part: the corrected command may lack arguments that came after the cut."
)


def attach_launch_fix(finding: Finding, launch: Launch, library: Library) -> None:
    _attach_launch_fix(finding, launch, library)
    if finding.fix.command and launch.args_truncated:
        finding.fix.steps.append(ARGS_TRUNCATED_STEP)


_OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w.-]*")


def suggest_nearest_flags(finding: Finding, library: Library, version: str | None) -> None:
    """For the options a parser refused (the capture a pattern's `fix.nearest` names): the nearest real
    `vllm serve` options of the launch's release (difflib over its argspec; over the error-surface index
    for a release logdoctor has no argspec of, the newest indexed one when the log does not say), and
    vLLM's own hint for the option (`--task` -> `--runner pooling`)."""
    from logdoctor.launch.argspec import available_versions
    from logdoctor.launch.nearest import nearest_options, vllm_hint
    from logdoctor.versions import parse_version

    pattern = library.by_id.get(finding.rule)
    name = pattern.fix.nearest if pattern is not None else None
    refused = finding.captures.get(name) if name else None
    if refused is None:
        # A pattern of its own for the option (a removed flag) gives its own advice; vLLM's hint stays.
        _, said, tail = finding.error.message.partition("unrecognized arguments:")
        for option in dict.fromkeys(_OPTION.findall(tail.split("\n", 1)[0]) if said else []):
            hint = vllm_hint(option, finding.error.message)
            if hint and not any(hint in s for s in finding.fix.steps):
                finding.fix.steps.insert(0, f"vLLM's own hint: {hint}")
        return
    wanted = parse_version(version) if version else None
    if wanted is not None and wanted >= (parse_version(available_versions()[0]) or ()):
        spec = load_spec(version)
        known: list[str] = list(spec.by_option)
        release = f"vLLM {version}"
    else:
        surface = library.surface()
        if surface is None:
            return
        known = list(surface.flags(version or surface.versions[-1]))
        release = f"vLLM {version or surface.versions[-1]}" + ("" if version else ", the newest indexed release")
    steps: list[str] = []
    for option in dict.fromkeys(_OPTION.findall(refused)):
        hint = vllm_hint(option, finding.error.message)
        if hint and not any(hint in s for s in finding.fix.steps):
            steps.append(f"vLLM's own hint: {hint}")
        nearest = nearest_options(option, known)
        if nearest:
            steps.append(f"Did you mean {' or '.join(nearest)}? (the nearest options of {release} to {option})")
    finding.fix.steps[:0] = steps


def _attach_launch_fix(finding: Finding, launch: Launch, library: Library) -> None:
    """Write the corrected command: the root cause's own change first (the pattern's `fix.set` /
    `fix.unset`), then the whole launch checked against the rule sets of the failed feature, every unmet
    rule fixed, not only the one vLLM reported."""
    from dataclasses import asdict

    from logdoctor.audit import audit, fill_defaults
    from logdoctor.model import ConstraintResult

    config = launch.config.copy_deep()
    version = launch.version
    has_args = launch.args_line is not None
    if has_args:
        fill_defaults(config, version, "absent from the log's non-default args")
    result = audit(
        config, library.sets, version, finding.rule, renderable=has_args, raised_message=finding.error.message
    )
    patched = None
    raised_rule = any(r.raised_by_vllm for r in result.results)
    if has_args and (not raised_rule or result.raised_unfixed):
        # The error is no rule of a set (a rule's own fix is the root cause's when it is), or its rule's
        # fix needs a value the log does not show (the maximum length config.json gives, while vLLM's
        # message names it): the pattern's change comes first, and the sets are checked on its launch.
        patched = _pattern_fix(finding, config, library, version)
        if patched is not None:
            result = audit(patched, library.sets, version, finding.rule, raised_message=finding.error.message)
    if result.results:
        finding.constraints = [ConstraintResult(**asdict(r)) for r in result.results]
    if not has_args or config.get("model") is None:
        return
    before = render_command(launch.config, version)
    after = result.after or (render_command(patched, version) if patched is not None else None)
    if after is None and not result.results:
        return
    finding.fix.original_command = before
    finding.fix.command = after if after != before else None
    if finding.fix.command:
        finding.fix.caveats += [c for c in result.caveats if c not in finding.fix.caveats]


def _pattern_fix(finding: Finding, config: LaunchConfig, library: Library, version: str | None) -> LaunchConfig | None:
    """The launch with the pattern's own change applied (its captures filled in and typed as vLLM's parser
    types the argument), or None when it has none or a value it needs was not captured."""
    pattern = library.by_id.get(finding.rule)
    if pattern is None or not (pattern.fix.set or pattern.fix.unset):
        return None
    spec = load_spec(version)
    patched = config.copy_deep()
    origin = Origin(kind="command", where=f"logdoctor fix: {finding.rule}")
    for name in pattern.fix.unset:
        patched.unset(name)
    for name, raw in pattern.fix.set.items():
        text = render(str(raw), finding.captures)
        if "<" in text:  # a capture the log did not have: no value to write
            return None
        arg = spec.by_dest.get(name)
        patched.set(name, typed_value(arg, convert(arg, text)), origin, given=True)
    return patched


def _diagnose(event: Event, library: Library, launch: int, version: str | None = None) -> Finding | None:
    if event.exceptions:
        return _diagnose_exceptions(event, library, launch, version)
    record = event.record
    if record.kind == "raw" or record.level in ("ERROR", "CRITICAL"):
        # Also as an exception's message without its `Type: ` (a pasted last line, a pydantic detail
        # alone). Not in a WARNING: vLLM warns in an error's own words when an override lets it carry on
        # (VLLM_ALLOW_LONG_MAX_MODEL_LEN).
        match = library.match_record(record)
    else:
        match = library.match_line(record)
    if match is not None:
        severity = _event_severity(event, match.pattern)
        if severity == "error" and _PYTHON_WARNING.match(record.message):
            severity = "warning"  # what the warnings module printed (`x.py:13: UserWarning: ...`) is a warning
        return _finding(event, match, launch, severity, version)
    if record.level in ("ERROR", "CRITICAL") or record.kind == "raw":
        severity = "error" if record.level == "CRITICAL" else "warning"
        hit = _surface_hit(library, record.message, None, version, standing_alone=record.kind == "raw")
        if hit is not None:
            # A message vLLM raises is an error wherever it stands; one it logs keeps the record's level.
            raised = "error" if hit.entry.kind != "log" else severity
            return _surface_finding(event, None, record, hit, library, launch, raised)
        if record.level is not None:
            return _unrecognized(event, None, launch, severity)
    return None


def _diagnose_exceptions(event: Event, library: Library, launch: int, version: str | None = None) -> Finding:
    """Which exception of the event is its error, and which pattern explains it.

    Chained exceptions print the original first, and the original is the root cause, unless only a
    later one is recognised (a KeyboardInterrupt raised while handling a misleading AttributeError).
    A wrapper ("See root cause above") never outranks an exception it could be wrapping.
    """
    found = [(exc, library.match_exception(exc, event)) for exc in event.exceptions]
    if all(m is None for _, m in found):
        # No pattern knows the types with these messages: the message is what identifies an error that
        # another class re-raised (`RuntimeError: ValueError: ...`) or a program printed as `Error: ...`.
        found = [(exc, library.match_exception(exc, event, any_type=True)) for exc in event.exceptions]
    intro = library.match_line(event.record) if event.logged else None
    cause = next((m for _, m in found if m is not None and m.pattern.role != "wrapper"), None)
    if cause is None and intro is not None and intro.pattern.role == "cause":
        cause = intro
    if cause is not None:
        finding = _finding(event, cause, launch, _event_severity(event, cause.pattern), version)
        if cause.exception is not None and finding.severity == "warning" and _is_fatal(event):
            # A message vLLM usually warns with, or a per-request error, raised where it ended the
            # process (`--fail-on-environ-validation`, a parser checked at startup): it killed the launch.
            finding.severity, finding.role = "error", "cause"
        return finding
    unknown = next((exc for exc, m in found if m is None and exc.type), None)
    # An exception no pattern knows is as serious as the wrapper around it that one does.
    wrapped = any(m is not None and m.pattern.severity == "error" for _, m in found)
    fatal_severity = "error" if _is_fatal(event) or wrapped else "warning"
    if unknown is not None:
        # vLLM raised it, and no pattern knows it: the index of vLLM's error surface says where and why.
        for exc in (exc for exc, m in found if m is None and exc.type):
            # `Error: ...` read as a type may be part of vLLM's message; a bare `assert` has no message,
            # but the traceback prints its source line.
            hit = (
                _surface_hit(library, exc.message, exc.type, version)
                or _surface_hit(library, f"{exc.type}: {exc.message}", exc.type, version)
                or _bare_statement_hit(library, exc, version)
            )
            if hit is not None:
                record = exc.record or event.record
                return _surface_finding(event, exc, record, hit, library, launch, fatal_severity)
        return _unrecognized(event, unknown, launch, fatal_severity)
    fallback = next((m for _, m in found if m is not None), None) or intro
    if fallback is not None:
        return _finding(event, fallback, launch, _event_severity(event, fallback.pattern), version)
    cut = event.exceptions[0]
    if not cut.type and not cut.message:
        return _cut_traceback(event, cut, launch, fatal_severity)
    return _unrecognized(event, cut, launch, fatal_severity)


def _event_severity(event: Event, pattern: Pattern) -> str:
    """A traceback that vLLM logged as a WARNING is something vLLM recovered from, unless the pattern names
    that level: some root causes vLLM only warns about and carries on (`Failed to import from vllm._C`)."""
    level = event.record.level
    if event.logged and level in ("WARNING", "INFO", "DEBUG") and pattern.severity == "error":
        return "error" if level in pattern.levels else "warning"
    return pattern.severity


# vLLM logs a failed request's traceback at ERROR from its OpenAI serving modules; the server lives on.
# (0.33 moved them to entrypoints/openai/<endpoint>/serving.py.)
_REQUEST_HANDLERS = re.compile(r"serving(?:_\w+)?\.py:\d+")


def _logged_by_request_handler(event: Event) -> bool:
    return event.logged and _REQUEST_HANDLERS.fullmatch(event.record.location or "") is not None


def _is_fatal(event: Event) -> bool:
    if event.logged:
        return event.record.level in ("ERROR", "CRITICAL") and not _logged_by_request_handler(event)
    if event.preamble is not None and event.preamble.message.startswith("Process "):
        return True
    if event.kind == "exception":
        return False
    return any(_FATAL_FRAME.fullmatch(f.function) for e in event.exceptions for f in e.frames[:3])


def _finding(event: Event, match: Match, launch: int, severity: str, version: str | None = None) -> Finding:
    from logdoctor.model import Finding, Fix

    pattern = match.pattern
    captures = match.captures
    fix = pattern.fix
    steps = [qualified.for_person(s, version) for s in fix.steps if qualified.applies(s, version)]
    exc = match.exception
    written = fix_captures(pattern, captures, version)
    return Finding(
        rule=pattern.id,
        severity=severity,  # type: ignore[arg-type]
        role=pattern.role,
        title=render(pattern.title, captures),
        primary=False,
        source=event.record.line.source,
        lines=(event.first_line, event.last_line),
        launch=launch,
        process=_process(event, match.record),
        error=_error_info(exc, match.record),
        explanation=render(pattern.explanation.strip(), captures),
        fix=Fix(summary=render(fix.summary, written), steps=[render(s, written) for s in steps]),
        evidence=_evidence(event, exc, match.record),
        captures=captures,
        docs=pattern.docs,
        truncated=event.truncated,
    )


def fix_captures(pattern: Pattern, captures: dict[str, str], version: str | None) -> dict[str, str]:
    """The captures as a fix's text writes them: a capture that a fix sets an argument to is written the way
    vLLM's parser reads that argument (`max_model_len = "{derived}"` with `2048.0` logged: `2048`), so the
    summary and steps say what the corrected command does."""
    texts = [pattern.fix.summary, *pattern.fix.steps]
    flagged = [(m[1], m[2]) for text in texts for m in _FLAG_VALUE.finditer(text) if m[2] in captures]
    if not pattern.fix.set and not flagged:
        return captures
    spec = load_spec(version)
    written = dict(captures)
    for name, raw in pattern.fix.set.items():
        field = _PLACEHOLDER.fullmatch(str(raw))
        if field is None or field[2] is not None or field[1] not in captures:
            continue  # a computed value is written as computed
        written[field[1]] = format_value(spec.by_dest.get(name), captures[field[1]])
    for option, name in flagged:  # `--max-model-len {derived}` in a step: the value that flag takes
        arg = spec.find(option)
        if arg is not None and arg.kind == "value":
            written[name] = format_value(arg, captures[name])
    return written


def _unrecognized(event: Event, exc: RaisedException | None, launch: int, severity: str) -> Finding:
    from logdoctor.model import Finding, Fix

    record = exc.record if exc is not None and exc.record is not None else event.record
    error = _error_info(exc, record)
    where = ""
    if exc is not None:
        frame = exc.innermost_vllm_frame or (exc.frames[-1] if exc.frames else None)
        if frame is not None:
            code = f": `{frame.code}`" if frame.code else ""
            where = f" It was raised in {frame.file}, line {frame.line}, in {frame.function}{code}."
    label = f"{error.type}: {error.message}" if error.type else error.message
    first_line = label.splitlines()[0] if label else "(empty message)"
    return Finding(
        rule=UNRECOGNIZED,
        severity=severity,  # type: ignore[arg-type]
        role=_unrecognized_role(event, error),
        title=f"Unrecognized error: {_shorten(first_line, 120)}",
        primary=False,
        source=event.record.line.source,
        lines=(event.first_line, event.last_line),
        launch=launch,
        process=_process(event, record),
        error=error,
        explanation=f"logdoctor's pattern library does not know this error.{where}",
        fix=Fix(
            summary="No known fix: read the error above and search vLLM's issues for its message.",
            steps=[
                f"Search vLLM's issues for it: {issue_search_url(error.message)}",
                "Rerun with VLLM_LOGGING_LEVEL=DEBUG for more context around the failure.",
                "If you find the cause, add a pattern for it (`logdoctor explain` shows the format).",
            ],
        ),
        evidence=_evidence(event, exc, record),
        truncated=event.truncated,
    )


# Index entries of log calls that are errors (a warning never is: vLLM warns and carries on, and a healthy
# start prints a dozen warnings).
_SURFACE_ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "EXCEPTION", "FATAL"})


def _surface_hit(
    library: Library, message: str, type_name: str | None, version: str | None, standing_alone: bool = False
) -> SurfaceHit | None:
    surface = library.surface()
    if surface is None or not message.strip() or not surface.candidates_present(message):
        return None
    hit = surface.lookup(message, type_name, version)
    if hit is None:
        return None
    entry = hit.entry
    if entry.kind == "log" and (entry.exception or "").upper() not in _SURFACE_ERROR_LEVELS:
        return None  # a message vLLM only warns with
    if standing_alone and not _starts_near(message, hit):
        return None
    return hit


def _bare_statement_hit(library: Library, exc: RaisedException, version: str | None) -> SurfaceHit | None:
    """For an exception raised without a message (`AssertionError`): the vLLM statement that raised it,
    found by the source line its innermost frame printed."""
    if exc.message.strip() or not exc.frames or not exc.frames[-1].code:
        return None
    surface = library.surface()
    return surface.lookup_code(exc.frames[-1].code, version, exc.type) if surface is not None else None


def _starts_near(message: str, hit: SurfaceHit) -> bool:
    """A raw line that holds an indexed message is that message only when the message starts within its
    first words (as for patterns, matcher.MESSAGE_LEAD_WORDS), not when a sentence quotes it."""
    from logdoctor.library.matcher import MESSAGE_LEAD_WORDS

    head = _TEMPLATE_FIELD.split(hit.entry.template, maxsplit=1)[0].strip()[:24]
    if not head:
        return True
    at = message.find(head)
    return at >= 0 and len(message[:at].split()) <= MESSAGE_LEAD_WORDS


def _surface_finding(
    event: Event,
    exc: RaisedException | None,
    record: Record,
    hit: SurfaceHit,
    library: Library,
    launch: int,
    severity: str,
) -> Finding:
    """What the index knows of a vLLM message no pattern covers: where vLLM raises it, the condition that
    raises it, the flags and environment variables involved, and which releases have it."""
    from logdoctor.model import Finding, Fix

    surface = library.surface()
    assert surface is not None
    entry = hit.entry
    error = _error_info(exc, record)
    newest = entry.versions[-1]
    file, line, function = entry.file, entry.line, entry.function
    frame = exc.frames[-1] if exc is not None and exc.frames else None
    if entry.files > 1 and frame is not None and "/vllm/" in frame.file:
        # The same statement stands in several files: the traceback's own frame says which one raised.
        file, line, function = "vllm/" + frame.file.split("/vllm/", 1)[1], frame.line, frame.function
    release = newest if entry.files == 1 else "of the log"
    where = f"{file}, line {line}, in {function} (vLLM {release})"
    url = f"https://github.com/vllm-project/vllm/blob/v{newest}/{file}#L{line}"
    history = surface.history(entry)
    raised = "logs this" if entry.kind == "log" else f"raises this{' ' + entry.exception if entry.exception else ''}"
    explanation = f"vLLM {raised} in {where}"
    explanation += f", when `{entry.condition}`." if entry.condition else "."
    if entry.flags:
        explanation += f" The `vllm serve` flags involved: {', '.join(entry.flags)}."
    if entry.env_vars:
        explanation += f" Environment variables involved: {', '.join(entry.env_vars)}."
    explanation += f" This message is {history}. (logdoctor has no pattern for it: this is what vLLM's source says.)"
    involved = [*entry.flags, *entry.env_vars]
    if involved and entry.condition:
        summary = f"Change {', '.join(involved)} so that vLLM's check no longer holds: `{entry.condition}`."
    elif involved:
        summary = f"Check {', '.join(involved)}: vLLM's message above says what it expects."
    elif entry.kind == "assert-bare":
        summary = f"vLLM's assertion `{entry.template}` failed: the launch's settings or the model break it ({url})."
    else:
        summary = "vLLM's message above says what it expects; its check is at " + url
    steps = [f"vLLM's check: {url}"]
    if "upgrading avoids it" in history:
        steps.append(f"The message is gone from later releases ({history}).")
    steps.append(f"Search vLLM's issues for it: {issue_search_url(error.message)}")
    first = error.message.splitlines()[0] if error.message else f"{error.type or 'error'} at `{entry.template}`"
    return Finding(
        rule=f"vllm.{entry.area}",
        severity=severity,  # type: ignore[arg-type]
        role="request" if not entry.startup and entry.area == "entrypoints" else "cause",
        title=_shorten(f"vLLM {function}: {first}", 160),
        primary=False,
        source=event.record.line.source,
        lines=(event.first_line, event.last_line),
        launch=launch,
        process=_process(event, record),
        error=error,
        explanation=explanation,
        fix=Fix(summary=summary, steps=steps),
        evidence=_evidence(event, exc, record),
        captures={**hit.values, SURFACE_ENTRY: entry.id},
        docs=url,
        truncated=event.truncated,
    )


def _unrecognized_role(event: Event, error: ErrorInfo) -> Role:
    """A failed request's error is a request's; an exception with no message (a bare `TimeoutError`,
    `CancelledError`) names no cause of its own and yields to any finding that does."""
    if _logged_by_request_handler(event):
        return "request"
    return "cause" if error.message else "consequence"


def _cut_traceback(event: Event, cut: RaisedException, launch: int, severity: str) -> Finding:
    """A traceback whose end is not in the log (an excerpt cut short, a process killed mid-write): no
    message to explain, so it says where it was going, and it never outranks an error that was seen."""
    frame = cut.innermost_vllm_frame or (cut.frames[-1] if cut.frames else None)
    where = f"{frame.file}, line {frame.line}, in {frame.function}" if frame else "an unknown place"
    finding = _unrecognized(event, cut, launch, severity)
    finding.role = "consequence"
    finding.title = _shorten(f"A traceback cut off before its exception line (last frame: {where})", 160)
    finding.explanation = (
        "The log holds this traceback's frames but not the line that names the exception (the excerpt "
        "ends there, or the process was killed while printing it), so the error itself is unknown. "
        f"Its innermost frame is {where}."
    )
    finding.fix.summary = "Find the end of this traceback: the full log, or the output of the process that printed it."
    return finding


def issue_search_url(message: str) -> str:
    """A GitHub search of vLLM's issues for the message's stable part (numbers, paths and quotes out)."""
    import urllib.parse

    words = _SEARCH_NOISE.sub(" ", message.splitlines()[0] if message else "").split()
    query = " ".join(words[:12])
    return "https://github.com/vllm-project/vllm/issues?q=" + urllib.parse.quote_plus(f"is:issue {query}")


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _process(event: Event, record: Record) -> str | None:
    return record.process_label or event.record.process_label


def _error_info(exc: RaisedException | None, record: Record) -> ErrorInfo:
    from logdoctor.model import ErrorInfo

    if exc is None:
        return ErrorInfo(type=None, message=record.message.strip()[:MAX_ERROR_MESSAGE])
    message = exc.summary if exc.short_type == "ValidationError" else exc.message
    return ErrorInfo(type=exc.type or None, message=message.strip()[:MAX_ERROR_MESSAGE])


def _evidence(event: Event, exc: RaisedException | None, record: Record) -> list[EvidenceLine]:
    """The lines that show the error: the event's first line, the innermost frame, the exception."""
    from logdoctor.model import EvidenceLine

    chosen: dict[int, str] = {}

    def add(records: Iterable[Record]) -> None:
        for r in records:
            chosen.setdefault(r.line.number, r.line.text)

    if event.preamble is not None:
        add([event.preamble])
    add([event.record])
    for candidate in event.exceptions:
        if candidate.frames:
            add(candidate.frames[-1].records)
        add(candidate.records[:MAX_EVIDENCE_LINES])
    add([record])
    numbers = sorted(chosen)
    if len(numbers) > MAX_EVIDENCE_LINES:
        keep = numbers[:5] + numbers[-(MAX_EVIDENCE_LINES - 5) :]
        numbers = keep
    return [EvidenceLine(line=n, text=chosen[n]) for n in numbers]


SURFACE_ENTRY = "vllm_message"  # the capture that names the index entry of a `vllm.<area>` finding


def dedupe_key(finding: Finding) -> tuple[object, ...]:
    """Findings with this key in one launch are the same error seen again (another TP rank, the
    multiprocessing dump of a traceback the logger already printed, the same failure on every rank):
    one finding per pattern and launch, its later sightings counted and shown as extra evidence. An
    unrecognized error is told apart by its first line, without the numbers and addresses that differ
    per process."""
    if SURFACE_ENTRY in finding.captures:
        return (finding.source, finding.launch, finding.rule, finding.captures[SURFACE_ENTRY])
    if finding.rule != UNRECOGNIZED:
        return (finding.source, finding.launch, finding.rule)
    first = finding.error.message.splitlines()[0] if finding.error.message else ""
    return (finding.source, finding.launch, finding.rule, finding.error.type, _NUMBERS.sub("#", first))


def error_lines(finding: Finding) -> list[EvidenceLine]:
    """The evidence line(s) that hold the error itself (not the traceback's first line)."""
    head = finding.error.message.splitlines()[0][:40] if finding.error.message else ""
    found = [e for e in finding.evidence if head and head in e.text]
    return found[:1] or finding.evidence[-1:]


def rank_key(finding: Finding) -> tuple[int, int, int]:
    return (SEVERITY_ORDER[finding.severity], ROLE_ORDER[finding.role], finding.lines[0])


def can_be_primary(finding: Finding) -> bool:
    """A launch's root cause: not harmless, and not one failed request (the server went on serving)."""
    return finding.severity != "info" and finding.role not in ("benign", "request")


def _same_error(finding: Finding) -> tuple[object, ...]:
    first = finding.error.message.splitlines()[0] if finding.error.message else ""
    return (finding.source, finding.launch, finding.error.type, _NUMBERS.sub("#", first))


def rank(findings: list[Finding]) -> None:
    """Mark exactly one finding per (source, launch) as primary: the root cause, not a wrapper."""
    # An unrecognized error that another finding of the launch recognised (the same exception and
    # message re-raised in another process: `raise result` in collective_rpc, the engine core re-raising
    # a worker's error) is that error seen without the frames that identify it: it yields.
    recognised = {_same_error(f) for f in findings if f.rule != UNRECOGNIZED and f.error.message}
    best: dict[tuple[str, int], Finding] = {}
    for finding in findings:
        finding.primary = False
        if not can_be_primary(finding):
            continue
        if finding.rule == UNRECOGNIZED and _same_error(finding) in recognised:
            continue
        key = (finding.source, finding.launch)
        if key not in best or rank_key(finding) < rank_key(best[key]):
            best[key] = finding
    for finding in best.values():
        finding.primary = True
    for finding in findings:  # a wrapper that stands alone says what would show the error it reports
        _say_what_reveals_the_cause(finding, alone=finding.primary and finding.role == "wrapper")


def never_started(finding: Finding, pattern: Pattern, launch: Launch, captures: dict[str, str]) -> None:
    """A wait that blocks start-up (library `blocks_start`) is where the input ended, in a launch that never
    served and logged no error: the server never started, and this is why. An error, told with the last
    sighting's values and, when the header shows them, the GPUs the launch asked for."""
    if finding.severity == "error" and finding.role == "cause":
        return  # said already
    finding.severity, finding.role = "error", "cause"
    title = render(pattern.title, captures)
    finding.title = f"The server never started: the log ends while {title[:1].lower()}{title[1:]}"
    finding.explanation += (
        " The log ends here: the launch never reached serving (no 'Application startup complete') and logged "
        "no error, so this wait is why it never started."
    )
    config = launch.config
    tp, pp = config.value("tensor_parallel_size"), config.value("pipeline_parallel_size")
    if isinstance(tp, int) or isinstance(pp, int):
        tp, pp = tp if isinstance(tp, int) else 1, pp if isinstance(pp, int) else 1
        asked = f"This launch needs {tp * pp} GPUs (--tensor-parallel-size {tp} x --pipeline-parallel-size {pp})"
        bundles = captures.get("specs", "").count("'GPU'")
        if bundles:
            asked += f" and asked Ray for {bundles} GPU bundles"
        finding.fix.steps.insert(0, f"{asked}: compare with the free GPUs `ray status` shows.")


LONE_WRAPPER_STEP = (
    "No error above it in this log is the one it reports: the cause was not captured. Keep the whole output "
    "of every process (`vllm serve ... > server.log 2>&1`; with Ray, each node's /tmp/ray/session_latest/logs/), "
    "or rerun with VLLM_LOGGING_LEVEL=DEBUG, and scan that log."
)


def _say_what_reveals_the_cause(finding: Finding, alone: bool) -> None:
    """The first step of a wrapper that is its launch's root cause (no cause or consequence was found): what
    would reveal the error it points at. Taken back when a cause turns up (ranking runs again)."""
    steps = finding.fix.steps
    if alone and steps[:1] != [LONE_WRAPPER_STEP]:
        steps.insert(0, LONE_WRAPPER_STEP)
    elif not alone and LONE_WRAPPER_STEP in steps:
        steps.remove(LONE_WRAPPER_STEP)
