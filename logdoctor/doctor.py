"""The Doctor: the pure core. Lines in, findings out; no clock, no files, no terminal.

    feed(line, now)  -> findings completed by this line
    tick(now)        -> findings completed because their stream has been quiet long enough
    flush()          -> findings still pending at the end of input
    report()         -> every finding, ranked once more with the whole input known

Streaming modes print what feed/tick return as it happens; a finding's `primary` flag there is the best
judgement so far (the root cause nearly always precedes its wrappers). Post-mortem modes use report().
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logdoctor import records
from logdoctor.assemble import Assembler, Event
from logdoctor.diagnose import can_be_primary, dedupe_key, diagnose, error_lines, rank, rank_key
from logdoctor.framing import Line
from logdoctor.launch.tracker import LaunchTracker
from logdoctor.library.matcher import Library
from logdoctor.model import SEVERITY_ORDER, EvidenceLine, Finding

QUIET_SECONDS = 0.5
MAX_REPEATS_SHOWN = 3  # evidence lines kept from later sightings of an error already reported


@dataclass(slots=True)
class _Sightings:
    """One error (dedupe key) and the places it was seen."""

    best: Finding  # the earliest sighting: the finding reported
    own_evidence: list[EvidenceLine]  # its evidence before other sightings' lines were added
    repeats: list[tuple[int, list[EvidenceLine]]] = field(default_factory=list)  # earliest others: (line, error lines)


class Doctor:
    def __init__(self, library: Library, quiet: float = QUIET_SECONDS) -> None:
        self.library = library
        self.assembler = Assembler(quiet, library.exception_names)
        self.launches = LaunchTracker()
        self.findings: list[Finding] = []
        self.lines = 0
        self.internal_errors = 0
        self._seen: dict[tuple[object, ...], _Sightings] = {}
        self._primary: dict[tuple[str, int], Finding] = {}

    def feed(self, line: Line, now: float = 0.0) -> list[Finding]:
        self.lines += 1
        record = records.parse(line)
        self.launches.observe(record)
        return self._diagnose(self.assembler.feed(record, now))

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
        return self._diagnose(self.assembler.flush())

    def report(self) -> list[Finding]:
        """All findings of the input so far, with exactly one primary per launch."""
        findings = [f.model_copy() for f in self.findings]
        rank(findings)
        return sorted(findings, key=lambda f: (f.source, f.launch, f.lines[0]))

    @property
    def pending(self) -> bool:
        return self.assembler.pending

    def pending_in(self, source: str) -> bool:
        return self.assembler.pending_in(source)

    def _diagnose(self, events: list[Event]) -> list[Finding]:
        new: list[Finding] = []
        for event in events:
            launch = self.launches.launch_of(event.record.line.source, event.first_line)
            try:
                finding = diagnose(event, self.library, launch)
            except Exception as exc:  # noqa: BLE001 - one odd event must not stop the diagnosis of the rest
                self._internal_error(exc, event.record.line)
                continue
            if finding is None:
                continue
            key = dedupe_key(finding)
            seen = self._seen.get(key)
            if seen is not None:
                self._sighted_again(seen, finding)
                continue
            self._seen[key] = _Sightings(finding, list(finding.evidence))
            self.findings.append(finding)
            self._link_explanations(finding)
            self._mark_provisional_primary(finding)
            new.append(finding)
        return new

    def _link_explanations(self, finding: Finding) -> None:
        """A finding whose pattern explains a later error of its launch (library `explains`) becomes the
        root cause, at that error's severity, and shows the error's line; the error is its consequence."""
        same_launch = [f for f in self.findings if (f.source, f.launch) == (finding.source, finding.launch)]
        for earlier, later in [(f, finding) for f in same_launch] + [(finding, f) for f in same_launch]:
            pattern = self.library.by_id.get(earlier.rule)
            if pattern is None or later.rule not in pattern.explains or later.lines[0] <= earlier.lines[0]:
                continue
            if SEVERITY_ORDER[later.severity] < SEVERITY_ORDER[earlier.severity]:
                earlier.severity = later.severity
            earlier.role, later.role = "cause", "consequence"
            shown = {e.line for e in earlier.evidence}
            earlier.evidence += [e for e in error_lines(later) if e.line not in shown]
            earlier.lines = (earlier.lines[0], max(earlier.lines[1], earlier.evidence[-1].line))
            for key, best in list(self._primary.items()):
                if best is later:
                    later.primary = False
                    del self._primary[key]
            self._mark_provisional_primary(earlier)

    def _internal_error(self, exc: Exception, line: Line) -> None:
        self.internal_errors += 1
        if self.internal_errors == 1:
            import sys
            import traceback

            where = f"{line.source}:{line.number}"
            detail = "".join(traceback.format_exception(exc, limit=4))
            print(
                f"logdoctor: internal error while diagnosing the event at {where} (skipped it; the rest "
                f"goes on). Please report it with this traceback:\n{detail}",
                file=sys.stderr,
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
        seen.repeats = sorted(seen.repeats, key=lambda r: r[0])[: MAX_REPEATS_SHOWN - 1]
        extra = [e for _, lines in seen.repeats for e in lines]
        seen.best.evidence = sorted(seen.own_evidence + extra, key=lambda e: e.line)

    def _replace(self, old: Finding, new: Finding) -> None:
        new.occurrences = old.occurrences
        new.primary = old.primary
        self.findings[self.findings.index(old)] = new
        for key, best in self._primary.items():
            if best is old:
                self._primary[key] = new

    def _mark_provisional_primary(self, finding: Finding) -> None:
        if not can_be_primary(finding):
            return
        key = (finding.source, finding.launch)
        best = self._primary.get(key)
        if best is None or rank_key(finding) < rank_key(best):
            self._primary[key] = finding
            finding.primary = True
