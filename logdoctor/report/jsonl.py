"""`--format json`: JSON Lines, one Finding object per line, and a Summary when a source ends (schema:
`logdoctor schema`)."""

from __future__ import annotations

from typing import TextIO

from logdoctor.model import Finding, Summary
from logdoctor.report import FileSummary, redacted, scrub


class JsonReporter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def finding(self, finding: Finding) -> None:
        self.out.write(redacted(finding).model_dump_json() + "\n")
        self.out.flush()

    # A source's findings, then its summary line (`kind` summary): a consumer filters on `source`.
    def file_start(self, source: str) -> None:
        pass

    def file_end(self, summary: FileSummary) -> None:
        line = Summary(
            source=summary.source,
            lines=summary.lines,
            launches=summary.launches,
            findings=summary.findings,
            errors=summary.errors,
            status=summary.status,
            vllm=summary.vllm,
            root_causes=list(summary.root_causes),
            serving=summary.serving,
        )
        self.out.write(Summary.model_validate(scrub(line.model_dump())).model_dump_json() + "\n")
        self.out.flush()

    def close(self) -> None:
        self.out.flush()
