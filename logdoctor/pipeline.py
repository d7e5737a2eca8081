"""The one pipeline every mode runs: a source's bytes -> framing -> sieve -> Doctor -> a reporter's sink.

    scan    files, read whole; the ranked report at the end            (no clock: now is 0)
    pipe    stdin, copied through first                                 (the monotonic clock; ticks)
    run     a child's stdout and stderr, copied through first           (the monotonic clock; ticks)
    watch   followed files, through rotation and restarts               (the monotonic clock; ticks)

A mode is a source of bytes, a reporter (report/) and a clock policy; everything between is here, so the
same input gives the same findings whichever way it arrives (tests/test_modes_agree.py). Each channel (a
file, stdin, one of a child's pipes) has its own Framer and Sieve; all of a mode's channels feed one
Doctor. In the live modes every call into the core goes through a Guard: a bug in the core is reported
once and the copy of the server's log goes on.

A child's two streams are numbered together, in the order their lines arrived (as `2>&1` would have
them: launch boundaries stay in order), which a sieve skipping lines per stream cannot keep; so run's
channels read every line (a live server's output, at its own pace).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from logdoctor.doctor import Doctor
from logdoctor.framing import Framer, Line
from logdoctor.sieve import Sieve
from logdoctor.sources.live import NO_FINDINGS, Guard

if TYPE_CHECKING:
    from logdoctor.model import Finding

Emit = Callable[["Finding"], None]
T = TypeVar("T")


class _Direct:
    """The batch modes' guard: none. A failure in scan is a bug to see, not a copy to protect."""

    failures = 0

    def call(self, fn: Callable[[], T], default: T) -> T:
        return fn()


def _discard(finding: Finding) -> None:
    pass


class Channel:
    """One byte stream of a mode's source: its framing and sieve, feeding the pipeline's Doctor."""

    def __init__(self, pipeline: Pipeline, sieve: Sieve) -> None:
        self._pipeline = pipeline
        self.sieve = sieve

    @property
    def framer(self) -> Framer:
        return self.sieve.framer

    def feed(self, data: bytes, now: float = 0.0) -> None:
        self._pipeline.deliver(partial(self.sieve.feed, data, now))

    def expect(self, size: int) -> None:
        """`size` bytes read at once are about to be fed in pieces (see Sieve.expect)."""
        self._pipeline.guard.call(partial(self.sieve.expect, size), None)

    def close(self, now: float = 0.0) -> None:
        """The stream ended: its unfinished last line is a line (events stay open for the Doctor's flush)."""
        self._pipeline.deliver(partial(self.sieve.finish_lines, now))


class Pipeline:
    def __init__(self, doctor: Doctor, emit: Emit | None = None, guard: Guard | None = None) -> None:
        self.doctor = doctor
        # No sink: the batch modes read the settled report (doctor.report(), or take_settled() launch by
        # launch), not the stream of findings and amendments. With a sink, what the sink has had of a
        # settled launch is final, and the Doctor forgets it: a server watched for weeks costs the memory
        # of its current launch.
        self._streaming = emit is not None
        self.emit: Emit = emit if emit is not None else _discard
        self.guard: Guard | _Direct = guard if guard is not None else _Direct()

    def channel(
        self,
        source: str,
        lines_before: int = 0,
        relabel: Callable[[Line], Line] | None = None,
        skip_lines: bool = True,
    ) -> Channel:
        """A channel for `source`. `skip_lines=False` reads every line (no prefilter); `relabel` rewrites
        each line before the Doctor sees it (run: the stream's name, the number across both streams)."""
        prefilter = self.doctor.library.prefilter if skip_lines else None
        sieve = Sieve(self.doctor, Framer(source, lines_before), prefilter, relabel=relabel)
        return Channel(self, sieve)

    def deliver(self, produce: Callable[[], list[Finding]]) -> None:
        for finding in self.guard.call(produce, NO_FINDINGS):
            self.guard.call(partial(self.emit, finding), None)
        if self._streaming:
            self.guard.call(self.doctor.forget_settled, None)

    def pending(self) -> bool:
        return self.guard.call(lambda: self.doctor.pending, False)

    def tick(self, now: float, hold: frozenset[str] = frozenset()) -> None:
        """The clock moved with no input: events whose stream fell quiet are reported."""
        self.deliver(partial(self.doctor.tick, now, hold))

    def flush(self) -> None:
        """The input ended: every open event is complete."""
        self.deliver(self.doctor.flush)

    def end(self) -> None:
        """After flush, when the input has ended for good (scan, the pipe, run; not watch, whose files may
        grow): what the end itself means (Doctor.end_of_input: a launch that never started)."""
        self.deliver(self.doctor.end_of_input)
