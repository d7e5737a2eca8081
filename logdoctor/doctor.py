"""The Doctor: the pure core. Lines in, findings out; no clock, no files, no terminal.

    feed(line, now)  -> findings completed by this line
    tick(now)        -> findings completed because their stream has been quiet long enough
    flush()          -> findings still pending at the end of input
    end_of_input()   -> what the input's end itself means (after flush; not for a file that may grow)
    report()         -> every finding, ranked once more with the whole input known
    take_settled()   -> the findings of launches that can change no more, ranked, and forgotten

Streaming modes print what feed/tick return as it happens; a finding's `primary` flag there is the best
judgement so far (the root cause nearly always precedes its wrappers). Post-mortem modes use report(), or,
to keep memory flat over a long file, take_settled() as they go: a launch is settled once its source has
moved on to the next launch (no event, ranking or explanation crosses a launch).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from logdoctor import records
from logdoctor.assemble import Assembler, Event
from logdoctor.diagnose import UNRECOGNIZED, dedupe_key, diagnose, error_lines, never_started, rank
from logdoctor.framing import Line
from logdoctor.launch.tracker import Launch, LaunchTracker
from logdoctor.library.matcher import Library
from logdoctor.vocabulary import SEVERITY_ORDER

if TYPE_CHECKING:  # pydantic's models: a log without findings never imports them (diagnose.py builds them)
    from logdoctor.model import EvidenceLine, Finding

QUIET_SECONDS = 0.5
# A traceback frame in vLLM's code: a source that shows one is a vLLM log even without a record prefix.
_VLLM_FRAME = re.compile(r'\s*File "[^"]*[/\\]vllm[/\\]')
MAX_REPEATS_SHOWN = 3  # evidence lines kept from later sightings of an error already reported


@dataclass(slots=True)
class _Sightings:
    """One error (dedupe key) and the places it was seen."""

    best: Finding  # the earliest sighting: the finding reported
    own_evidence: list[EvidenceLine]  # its evidence before other sightings' lines were added
    repeats: list[tuple[int, list[EvidenceLine]]] = field(default_factory=list)  # earliest others: (line, error lines)


MAX_PROVISIONAL = 256  # provisionally closed events remembered, should one reopen
MAX_CONTEXTS_HELD = 8  # context records (library `joins_next`) held per process for its next error
# How `--format json` starts each line: a finding, an amendment, a withdrawal (report/jsonl.py).
OWN_OUTPUT = ('{"kind":"finding",', '{"kind":"update",', '{"kind":"withdrawn",', '{"kind":"summary",')
MAX_REPEATS_KEPT = 16  # sightings remembered per error: the earliest are shown, one may be taken back


@dataclass(slots=True)
class _Tally:
    """What a source's settled (forgotten) launches came to."""

    findings: int = 0
    errors: int = 0
    root_causes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a source came to so far (Doctor.outcome): the parts of its summary the core knows."""

    launches: int  # launches the source has had (0: no line read)
    findings: int
    errors: int  # findings of severity error
    vllm: bool  # a vLLM line was seen: a record prefix, a traceback frame in vLLM, or a finding
    root_causes: tuple[str, ...]  # the rule of each launch's primary finding, each once, in launch order
    serving: bool | None  # the last launch reached serving; None when its header shows no API server


@dataclass(slots=True)
class _Early:
    """What a provisionally closed event's report did: its finding under this dedupe key, which is then
    either the key's finding (new, or it took over as the earliest sighting) or one of its repeats."""

    key: tuple[object, ...]
    finding: Finding


class Doctor:
    def __init__(
        self, library: Library, quiet: float = QUIET_SECONDS, on_internal_error: Callable[[str], None] | None = None
    ) -> None:
        self.library = library
        # The core prints nothing: an internal error's report goes to this sink (the edge prints it,
        # redacted); by default it is kept in internal_error_reports.
        self.internal_error_reports: list[str] = []
        self._on_internal_error = on_internal_error or self.internal_error_reports.append
        self.assembler = Assembler(quiet, library.exception_names)
        self.launches = LaunchTracker()
        self._launch_of_source: dict[str, Launch] = {}  # the launch each source's last line belonged to
        # The findings held, by (source, launch): ranking and explanation links never cross a launch, so
        # each new finding costs the size of its launch, not of everything the input held before it.
        self._by_launch: dict[tuple[str, int], list[Finding]] = {}
        self._settled: list[tuple[str, int]] = []  # launches complete since take_settled() last ran
        self._errors_forgotten = 0  # error findings handed out by take_settled()
        self.lines = 0
        self.internal_errors = 0
        self._seen: dict[tuple[object, ...], _Sightings] = {}
        self._issued = 0  # ids handed out
        self._amended: dict[str, Finding] = {}  # findings changed since the last call returned
        self._withdrawn: list[Finding] = []  # findings taken back since then
        # (source, first line) of a provisionally closed event -> what its report did, undone or absorbed
        # when the event reopens and completes.
        self._provisional: dict[tuple[str, int], _Early] = {}
        self._vllm_sources: set[str] = set()  # sources that showed a vLLM line
        self._tallies: dict[str, _Tally] = {}  # per source, its settled launches
        # Context findings (library `joins_next`: vLLM's dump of the failed step) waiting for the next error
        # of their (source, launch, process), by their first line; and, per (source, first line) of an error
        # event, the context lines it took, so a re-diagnosis of the same event shows them again.
        self._contexts: dict[tuple[str, int, str | None], dict[int, Finding]] = {}
        self._joined: dict[tuple[str, int], tuple[int, list[EvidenceLine]]] = {}
        # Per (source, launch), the last sighting of a wait that blocks start-up (library `blocks_start`):
        # its finding's dedupe key, its line and its captures.
        self._blocking: dict[tuple[str, int], tuple[tuple[object, ...], int, dict[str, str]]] = {}

    def feed(self, line: Line, now: float = 0.0) -> list[Finding]:
        self.lines += 1
        if line.text.startswith(OWN_OUTPUT):
            return []  # logdoctor's own JSON line (a DaemonSet follows its own container's log too)
        record = records.parse(line)
        if line.source not in self._vllm_sources and (
            record.kind == "vllm" or (record.kind == "raw" and _VLLM_FRAME.match(record.message))
        ):
            self._vllm_sources.add(line.source)
        launch = self.launches.observe(record)
        ended: list[Event] = []
        before = self._launch_of_source.get(line.source, launch)
        release: tuple[str, int] | None = None
        if before is not launch:
            ended = self.assembler.end_source_streams(line.source)  # the launch before it is over
            self._settled.append((line.source, before.index))
            release = (line.source, before.index)  # its context that no error followed is a finding of its own
        self._launch_of_source[line.source] = launch
        return self._diagnose(ended + self.assembler.feed(record, now), release)

    def skip(self, count: int) -> None:
        """`count` lines were read past unseen: a sieve (sieve.py) knew they could not matter."""
        self.lines += count

    def end_logged_group(self, line: Line) -> list[Finding] | None:
        """The sieve's shortcut for a line it would skip: the findings of the logged group this line
        ends, or None when the line must be fed (see Assembler.ends_logged_group)."""
        events = self.assembler.ends_logged_group(records.parse(line))
        return None if events is None else self._diagnose(events)

    def tick(self, now: float, hold: frozenset[str] = frozenset()) -> list[Finding]:
        return self._diagnose(self.assembler.tick(now, hold))

    def flush(self) -> list[Finding]:
        return self._diagnose(self.assembler.flush(), release_all=True)

    def end_of_input(self) -> list[Finding]:
        """The input has ended for good (scan, the pipe, run; not watch, whose files may grow): a launch
        that never served, logged no error, and whose last vLLM record is a wait that blocks start-up
        (Ray's placement group) never started, and that wait is its error. Call after flush()."""
        for source, launch in self._launch_of_source.items():
            blocking = self._blocking.get((source, launch.index))
            held = self._by_launch.get((source, launch.index), [])
            if blocking is None or launch.ready_line is not None or any(f.severity == "error" for f in held):
                continue
            key, last, captures = blocking
            seen = self._seen.get(key)
            if seen is None or launch.last_record_line > last:  # it went on after the wait
                continue
            pattern = self.library.by_id.get(seen.best.rule)
            if pattern is not None:
                never_started(seen.best, pattern, launch, captures)
                self._amend(seen.best)
        return self._diagnose([])

    def report(self) -> list[Finding]:
        """All findings held (the input so far, less what take_settled() took), with exactly one primary
        per launch."""
        findings = [f.model_copy() for f in self.findings]
        rank(findings)
        return sorted(findings, key=lambda f: (f.source, f.launch, f.lines[0]))

    def take_settled(self) -> list[Finding]:
        """The findings of every launch complete since the last call (its source has moved on to a later
        launch), ranked as report() ranks them, in report()'s order; the Doctor forgets them and what
        it kept to build them, so a long input costs the memory of its current launches only."""
        taken: list[Finding] = []
        for findings in self._pop_settled():
            rank(findings)
            taken += sorted(findings, key=lambda f: f.lines[0])
        return taken

    def forget_settled(self) -> None:
        """take_settled() for a stream that has already reported them as they came."""
        self._pop_settled()

    def saw_vllm(self, source: str) -> bool:
        """Did the source show a vLLM line (a vLLM record prefix, a traceback frame in vLLM's code, a
        finding the library recognised)? A source without one is not a vLLM log: an empty or binary file,
        another program's (whose error-looking lines may still be reported as unrecognized)."""
        return source in self._vllm_sources

    def mark_vllm(self, source: str) -> None:
        """A reader that skips lines (sieve.py) saw a vLLM record among them."""
        self._vllm_sources.add(source)

    def outcome(self, source: str) -> Outcome:
        """What the source came to so far: its launches, findings, errors and each launch's root cause, the
        settled launches' (forgotten or not) and the held ones' as report() ranks them."""
        tally = self._tallies.get(source, _Tally())
        findings, errors, causes = tally.findings, tally.errors, list(tally.root_causes)
        for (held_source, _), held in sorted(self._by_launch.items()):
            if held_source != source or not held:
                continue
            ranked = [f.model_copy() for f in held]
            rank(ranked)
            findings += len(ranked)
            errors += sum(f.severity == "error" for f in ranked)
            causes += [f.rule for f in ranked if f.primary]
        held_launches = self.launches.launches(source)
        last = held_launches[-1] if held_launches else None
        return Outcome(
            serving=None if last is None or not last.server else last.ready_line is not None,
            launches=self.launches.count(source),
            findings=findings,
            errors=errors,
            vllm=self.saw_vllm(source),
            root_causes=tuple(dict.fromkeys(causes)),
        )

    def _pop_settled(self) -> list[list[Finding]]:
        popped = []
        for source, index in sorted(set(self._settled)):
            findings = self._by_launch.pop((source, index), [])
            self._errors_forgotten += sum(f.severity == "error" for f in findings)
            if findings:
                rank(findings)
                tally = self._tallies.setdefault(source, _Tally())
                tally.findings += len(findings)
                tally.errors += sum(f.severity == "error" for f in findings)
                # Each rule once: a crash loop followed for weeks (watch) must not grow this list.
                tally.root_causes += [f.rule for f in findings if f.primary and f.rule not in tally.root_causes]
            self._forget(source, index)
            popped.append(findings)
        self._settled.clear()
        return popped

    def _forget(self, source: str, index: int) -> None:
        """What a settled launch left behind: its errors' sightings, its quiet events, its header."""
        for key in [k for k in self._seen if k[:2] == (source, index)]:
            del self._seen[key]
        launch = (source, index)
        for where in [w for w, e in self._provisional.items() if (e.finding.source, e.finding.launch) == launch]:
            del self._provisional[where]
        for where in [w for w, (held, _) in self._joined.items() if (w[0], held) == launch]:
            del self._joined[where]
        self._blocking.pop(launch, None)
        self.launches.forget(source, index)

    @property
    def findings(self) -> list[Finding]:
        """Every finding held, in the order they were stored, launch by launch."""
        return [f for findings in self._by_launch.values() for f in findings]

    @property
    def saw_error(self) -> bool:
        """Was an error-severity finding reported, held or already taken?"""
        return self._errors_forgotten > 0 or any(f.severity == "error" for f in self.findings)

    @property
    def pending(self) -> bool:
        return self.assembler.pending

    def pending_in(self, source: str) -> bool:
        return self.assembler.pending_in(source)

    def _diagnose(
        self, events: list[Event], release: tuple[str, int] | None = None, release_all: bool = False
    ) -> list[Finding]:
        """The findings these events add, then an `update` copy of each earlier finding they changed (a
        stream reports what it knows at once and amends it; `report()` is the settled view). `release`:
        a launch that ended (`release_all`: the input did), whose held context followed by no error is
        reported as itself."""
        if not events and not self._amended and not (self._contexts and (release_all or release)):
            return []  # most lines: nothing completed (amendments are made and sent within one call)
        new = self._new_findings(events)
        for key in [k for k in self._contexts if release_all or k[:2] == release]:
            for finding in self._contexts.pop(key).values():
                if self._add(finding):
                    new.append(finding)
        if new or self._amended or self._withdrawn:
            self._settle_primaries({(f.source, f.launch) for f in (*new, *self._amended.values(), *self._withdrawn)})
        gone = {f.id for f in self._withdrawn}
        issued = {f.id for f in new}
        # A finding new in this call may have been replaced in it (an earlier sighting completed right
        # after): it is printed as it now stands. One withdrawn in the same call was never printed, so it
        # is neither printed nor withdrawn.
        new = [self._current(f) for f in new if f.id not in gone]
        updates = [f.model_copy(update={"kind": "update"}) for f in self._amended.values() if f.id not in issued | gone]
        updates.sort(key=lambda f: f.primary)  # a launch's old root cause is demoted before the new one is promoted
        withdrawn = [f.model_copy(update={"kind": "withdrawn"}) for f in self._withdrawn if f.id not in issued]
        self._amended.clear()
        self._withdrawn.clear()
        return new + updates + withdrawn

    def _current(self, finding: Finding) -> Finding:
        """The finding that now holds this one's id (itself, or the earlier sighting that replaced it)."""
        for held in self._by_launch.get((finding.source, finding.launch), ()):
            if held.id == finding.id:
                return held
        return finding

    def _settle_primaries(self, launches: set[tuple[str, int]]) -> None:
        """The root cause of each launch that changed, as report() would rank it now, so a stream that
        applies the updates ends where a scan of the same input starts."""
        for key in launches:
            findings = self._by_launch.get(key, [])
            before = {f.id: f.primary for f in findings}
            rank(findings)
            for finding in findings:
                if before.get(finding.id) != finding.primary:
                    self._amend(finding)

    def _amend(self, finding: Finding) -> None:
        if finding.id:
            self._amended[finding.id] = finding

    def _new_findings(self, events: list[Event]) -> list[Finding]:
        new: list[Finding] = []
        for event in events:
            launch = self.launches.launch_of(event.record.line.source, event.first_line)
            try:
                finding = diagnose(event, self.library, launch)
            except Exception as exc:  # noqa: BLE001 - one odd event must not stop the diagnosis of the rest
                self._internal_error(exc, event.record.line)
                continue
            where = (event.record.line.source, event.first_line)
            early = self._provisional.pop(where, None) if event.amends else None
            inherit: str | None = None  # the id of an early report this finding takes over
            if early is not None:
                absorbed, inherit = self._take_back(early, finding)
                if absorbed:  # the early report was this very sighting: amended in place
                    if event.provisional and finding is not None:  # quiet again: it may reopen once more
                        self._provisional[where] = _Early(early.key, finding)
                    continue
            if finding is None or (finding := self._with_context(finding, event)) is None:
                continue
            self._note_blocking(finding, event)
            if len(self._provisional) >= MAX_PROVISIONAL:  # only the latest quiet close per stream can reopen
                del self._provisional[next(iter(self._provisional))]
            key = dedupe_key(finding)
            seen = self._seen.get(key)
            if event.provisional:
                self._provisional[where] = _Early(key, finding)
            if seen is not None:
                self._sighted_again(seen, finding)
                continue
            if inherit is not None:
                finding.id = inherit  # the complete event amends its early report
                self._store(finding)
                self._amend(finding)
                continue
            self._issued += 1
            finding.id = f"f{self._issued}"
            self._store(finding)
            new.append(finding)
        return new

    def _note_blocking(self, finding: Finding, event: Event) -> None:
        pattern = self.library.by_id.get(finding.rule)
        if pattern is not None and pattern.blocks_start:
            where = (finding.source, finding.launch)
            self._blocking[where] = (dedupe_key(finding), event.last_line, dict(finding.captures))

    def _add(self, finding: Finding) -> bool:
        """A finding no event is behind any more (a released context): stored, or counted as one more
        sighting of its error. True when it is new."""
        seen = self._seen.get(dedupe_key(finding))
        if seen is not None:
            self._sighted_again(seen, finding)
            return False
        self._issued += 1
        finding.id = f"f{self._issued}"
        self._store(finding)
        return True

    def _with_context(self, finding: Finding, event: Event) -> Finding | None:
        """Context (a pattern with `joins_next`: vLLM's dump of the step that failed) is held for the next
        error of its process in its launch, and None returned; that error's finding shows the context's
        first lines in its evidence. Context no error follows is released when its launch or the input
        ends (_diagnose)."""
        source, first = event.record.line.source, event.first_line
        pattern = self.library.by_id.get(finding.rule)
        if pattern is not None and pattern.joins_next:
            if (source, first) in self._joined:
                return None  # a context that reopened after it had joined its error
            held = self._contexts.setdefault((source, finding.launch, finding.process), {})
            held[first] = finding  # a context event that reopened and completed replaces its early report
            while len(held) > MAX_CONTEXTS_HELD:
                del held[next(iter(held))]
            return None
        if finding.severity != "error":
            return finding
        joined = self._joined.get((source, first))
        if joined is None:
            waiting = self._contexts.pop((source, finding.launch, finding.process), {})
            if not waiting:
                return finding
            lines = [f.evidence[0] for f in waiting.values() if f.evidence]
            joined = self._joined[(source, first)] = (finding.launch, lines)
            for line in waiting:
                self._joined[(source, line)] = (finding.launch, [])
        context = joined[1]
        if context:
            shown = {e.line for e in context}
            finding.evidence = [*context, *(e for e in finding.evidence if e.line not in shown)]
        return finding

    def _store(self, finding: Finding) -> None:
        if finding.rule != UNRECOGNIZED:  # what the library knows is vLLM's, or what vLLM runs on
            self._vllm_sources.add(finding.source)
        self._seen[dedupe_key(finding)] = _Sightings(finding, list(finding.evidence))
        self._by_launch.setdefault((finding.source, finding.launch), []).append(finding)
        self._link_explanations(finding)

    def _take_back(self, early: _Early, complete: Finding | None) -> tuple[bool, str | None]:
        """Undo what an event's provisional report did, now that the event is complete (`complete` is its
        finding, or None). Returns (absorbed, inherit): absorbed when the early report was the finding of
        its error and the complete event is the same error, which then replaces it in place, keeping its
        id, count and the other sightings; inherit is the id the complete finding takes over when the
        early report is withdrawn and nothing else holds the complete one's error."""
        seen = self._seen.get(early.key)
        if seen is None:
            return False, None
        if seen.best is early.finding:
            if complete is not None and dedupe_key(complete) == early.key:
                self._complete_in_place(seen, complete)
                return True, None
            self._withdraw(early.finding)
            if complete is None or dedupe_key(complete) in self._seen:
                self._withdrawn.append(early.finding)  # nothing takes over its id: the stream must drop it
                return False, None
            return False, early.finding.id
        # It was counted as one more sighting of the error: uncounted, the complete event counts again.
        first = early.finding.lines[0]
        seen.repeats = [r for r in seen.repeats if r[0] != first]
        if seen.best.occurrences > 1:
            seen.best.occurrences -= 1
        self._show(seen)
        self._amend(seen.best)
        return False, None

    def _complete_in_place(self, seen: _Sightings, complete: Finding) -> None:
        """The early report of an error's finding, replaced by the complete event: same id, same count,
        same other sightings."""
        early = seen.best
        self._replace(early, complete)
        seen.best, seen.own_evidence = complete, list(complete.evidence)
        self._show(seen)
        self._link_explanations(complete)
        self._amend(complete)

    def _withdraw(self, early: Finding) -> None:
        """Take back an early report: the complete event that follows replaces it."""
        _remove_identical(self._by_launch.get((early.source, early.launch), []), early)
        key = dedupe_key(early)
        if key in self._seen and self._seen[key].best is early:
            del self._seen[key]

    def _link_explanations(self, finding: Finding) -> None:
        """A finding whose pattern explains a later error of its launch (library `explains`) becomes the
        root cause, at that error's severity, and shows the error's line; the error is its consequence."""
        same_launch = list(self._by_launch[(finding.source, finding.launch)])
        for earlier, later in [(f, finding) for f in same_launch] + [(finding, f) for f in same_launch]:
            pattern = self.library.by_id.get(earlier.rule)
            if pattern is None or later.rule not in pattern.explains or later.lines[0] <= earlier.lines[0]:
                continue
            if SEVERITY_ORDER[later.severity] < SEVERITY_ORDER[earlier.severity]:
                earlier.severity = later.severity
            earlier.role, later.role = "cause", "consequence"
            self._amend(earlier)
            self._amend(later)
            shown = {e.line for e in earlier.evidence}
            earlier.evidence += [e for e in error_lines(later) if e.line not in shown]
            earlier.lines = (earlier.lines[0], max(earlier.lines[1], earlier.evidence[-1].line))

    def _internal_error(self, exc: Exception, line: Line) -> None:
        self.internal_errors += 1
        if self.internal_errors == 1:
            import traceback

            where = f"{line.source}:{line.number}"
            detail = "".join(traceback.format_exception(exc, limit=4))
            self._on_internal_error(
                f"logdoctor: internal error while diagnosing the event at {where} (skipped it; the rest "
                f"goes on). Please report it with this traceback:\n{detail}"
            )

    def _sighted_again(self, seen: _Sightings, finding: Finding) -> None:
        """The same error once more: count it, and show the earliest other sightings' error lines (another
        rank's copy may be the complete one). Events complete out of order (a logged traceback waits for
        its stream's next line), so the report keeps the earliest sighting as the finding, and what it
        shows does not depend on the order in which the sightings completed."""
        best = seen.best
        best.occurrences += 1
        if finding.lines[0] < best.lines[0]:
            best.evidence = seen.own_evidence
            seen.repeats.append((best.lines[0], error_lines(best)))
            self._replace(best, finding)
            seen.best, seen.own_evidence = finding, list(finding.evidence)
        else:
            seen.repeats.append((finding.lines[0], error_lines(finding)))
        seen.repeats = sorted(seen.repeats, key=lambda r: r[0])[:MAX_REPEATS_KEPT]
        self._show(seen)
        self._amend(seen.best)

    @staticmethod
    def _show(seen: _Sightings) -> None:
        """The finding's evidence: its own lines and the error lines of the earliest other sightings."""
        extra = [e for _, lines in seen.repeats[: MAX_REPEATS_SHOWN - 1] for e in lines]
        seen.best.evidence = sorted(seen.own_evidence + extra, key=lambda e: e.line)

    def _replace(self, old: Finding, new: Finding) -> None:
        """An earlier sighting completed after a later one: it becomes the finding, under the same id."""
        new.occurrences = old.occurrences
        new.primary = old.primary
        new.id = old.id
        findings = self._by_launch[(old.source, old.launch)]
        findings[_index_identical(findings, old)] = new


def _index_identical(findings: list[Finding], finding: Finding) -> int:
    """Where this very finding is (searched from the end: it is a recent one). Not list.index, which
    compares every field of every earlier finding."""
    for at in reversed(range(len(findings))):
        if findings[at] is finding:
            return at
    raise ValueError("finding not held")


def _remove_identical(findings: list[Finding], finding: Finding) -> None:
    with contextlib.suppress(ValueError):  # not held: nothing to remove
        del findings[_index_identical(findings, finding)]
