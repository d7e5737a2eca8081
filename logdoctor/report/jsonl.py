"""`--format json`: JSON Lines, one Finding object per line (schema: `logdoctor schema`)."""

from __future__ import annotations

from typing import TextIO

from logdoctor.model import Finding
from logdoctor.report import redacted


class JsonReporter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def finding(self, finding: Finding) -> None:
        self.out.write(redacted(finding).model_dump_json() + "\n")
        self.out.flush()

    # JSON output is findings only: a consumer filters on `source`.
    def file_start(self, source: str) -> None:
        pass

    def file_end(self, source: str, lines: int, launches: int, findings: int) -> None:
        pass

    def close(self) -> None:
        self.out.flush()
