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


def test_counts_are_words_not_parentheses() -> None:
    from logdoctor.report.layout import plural

    assert [plural(1, "launch"), plural(2, "launch"), plural(0, "finding"), plural(1, "line")] == [
        "1 launch",
        "2 launches",
        "0 findings",
        "1 line",
    ]


def test_launch_numbers_read_as_ranges() -> None:
    from logdoctor.report.layout import ranges

    assert ranges([3, 4, 5, 6]) == "3-6" and ranges([1, 4, 5, 9]) == "1, 4-5, 9" and ranges([7]) == "7"


def test_a_styled_line_wraps_at_blanks_and_keeps_a_marked_word_whole() -> None:
    from logdoctor.report.layout import MARKER, plain, wrap_segments

    line = [("  + vllm serve model --dtype half ", ""), ("{+", MARKER), ("--max-model-len", "green"), ("+}", MARKER)]
    rows = [plain(row) for row in wrap_segments(line, 40, "    ")]
    assert rows == ["  + vllm serve model --dtype half", "    {+--max-model-len+}"]
    long = [("x" * 90, "")]
    assert [len(plain(row)) for row in wrap_segments(long, 40, "  ")] == [40, 40, 14]  # 40 + 38 + 12, the rows after the first indented


def test_a_long_commands_diff_is_the_options_that_changed() -> None:
    from logdoctor.report.layout import command_changes, plain

    before = "vllm serve m --tensor-parallel-size 2 --use-replayssm --mamba-backend cpu"
    after = "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve m --tensor-parallel-size 1 --mamba-backend cpu --max-model-len 4096"
    assert [plain(line) for line in command_changes(before, after)] == [
        "  ~ --tensor-parallel-size 2 -> 1",
        "  - --use-replayssm",
        "  + VLLM_USE_V2_MODEL_RUNNER=0",
        "  + --max-model-len 4096",
    ]
