"""What the reporters print of a stream's findings, updates and withdrawals."""

from __future__ import annotations

import io

from logdoctor.api import diagnose_text
from logdoctor.library.matcher import Library
from logdoctor.report.text import TextReporter

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."


def test_text_does_not_print_a_withdrawn_report_as_a_new_finding(library: Library) -> None:
    (finding,) = diagnose_text(f'Traceback (most recent call last):\n  File "/x/w.py", line 3, in f\n{OOM}\n', library)
    out = io.StringIO()
    reporter = TextReporter(out, live=True)  # a stream: findings land one by one, and can be withdrawn
    reporter.finding(finding)
    printed = out.getvalue()
    reporter.finding(finding.model_copy(update={"kind": "withdrawn"}))
    assert printed.count("memory.cuda-oom") == 1 and out.getvalue() == printed
