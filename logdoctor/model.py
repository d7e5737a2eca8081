"""What every reporter reads: findings and their parts.

These models are the JSON schema of `--format json` (one Finding per line). Keep them stable: add
fields, never rename or remove one. `logdoctor schema` prints the JSON Schema the README documents.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Re-exported: the reporters and the core name them here.
from logdoctor.vocabulary import SEVERITY_ORDER as SEVERITY_ORDER
from logdoctor.vocabulary import Role as Role
from logdoctor.vocabulary import Severity as Severity


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorInfo(_Model):
    type: str | None = Field(description="Exception type as printed, or null for a log line")
    message: str = Field(description="The error message (for pydantic errors, the validator's own message)")


class EvidenceLine(_Model):
    line: int = Field(description="1-based line number in the source")
    text: str = Field(description="The line as logged (ANSI and carriage returns removed, secrets redacted)")


class Fix(_Model):
    summary: str
    steps: list[str] = Field(default_factory=list)
    command: str | None = Field(default=None, description="The corrected launch command, when known")
    original_command: str | None = Field(default=None, description="The launch as the log shows it, as a command")
    caveats: list[str] = Field(
        default_factory=list,
        description="What the corrected command gives up or leaves open, each one sentence: a flag or feature "
        "it drops (and the alternative), a value it could not compute, a rule left unknown and what would "
        "reveal it, a change it cannot make (an unknown option with no near match). Show them with the command",
    )


class ConstraintResult(_Model):
    set: str = Field(description="Constraint set (feature and vLLM versions) the rule belongs to")
    id: str
    status: Literal["met", "unmet", "unknown"]
    says: str
    vllm_message: str
    fix: str | None = Field(default=None, description="What the corrected command changes for this rule")
    evidence: list[str] = Field(default_factory=list, description="The values the rule read and where from")
    reveal: str | None = Field(default=None, description="For unknown: what would reveal the missing value")
    note: str | None = Field(default=None, description="e.g. when vLLM's own hint names the wrong fix")
    raised_by_vllm: bool = Field(default=False, description="This is the rule vLLM reported in the log")
    after_validation: bool = Field(
        default=False, description="vLLM raises this rule after its config validation (engine core, workers)"
    )


class Finding(_Model):
    kind: Literal["finding", "update", "withdrawn"] = Field(
        default="finding",
        description="`finding` when first reported; `update` amends the finding of the same `id` (a later "
        "sighting, its root-cause status, its role), as a stream learns more; `withdrawn` takes it back (its "
        "lines turned out to be part of another finding's event)",
    )
    id: str = Field(default="", description="Stable for the run: updates carry the id of the finding they amend")
    rule: str = Field(description="Pattern id, or `unrecognized`")
    severity: Severity
    title: str
    primary: bool = Field(
        description="The root cause of its launch: exactly one per launch with a finding that can be one; a "
        "launch whose findings are all harmless (info, benign) or failed requests has none"
    )
    role: Role = "cause"
    source: str = Field(description="Path of the log, or `-` for standard input")
    lines: tuple[int, int] = Field(
        description="First and last line of the event that raised it (through the error it explains, if any); "
        "`evidence` may add the error lines of other sightings beyond them, and the first lines of the context "
        "vLLM logged just before it (its dump of the failed step)"
    )
    launch: int = Field(description="1-based index of the launch (server start) within the source")
    process: str | None = Field(description="Process that logged it, e.g. `EngineCore pid=81390`")
    error: ErrorInfo
    explanation: str
    fix: Fix
    constraints: list[ConstraintResult] = Field(default_factory=list)
    evidence: list[EvidenceLine] = Field(default_factory=list)
    captures: dict[str, str] = Field(default_factory=dict, description="Values the pattern captured")
    occurrences: int = Field(default=1, description="How many times the same error was seen in the launch")
    docs: str | None = None
    truncated: bool = Field(default=False, description="The event was longer than the caps; middle dropped")
    namespace: str | None = Field(default=None, description="Kubernetes namespace (watch, node log layout)")
    pod: str | None = Field(default=None, description="Kubernetes pod (watch, node log layout)")
    container: str | None = Field(default=None, description="Container name (watch, node log layout)")


class Summary(_Model):
    """The last line of a source's JSON output (scan: each file; the pipe and `run`: standard input or the
    command, source `-`). `watch` prints none: a followed file never ends."""

    kind: Literal["summary"] = Field(default="summary", description="Always `summary`: the source has ended")
    source: str = Field(description="Path of the log, or `-` for standard input (and `run`'s command)")
    lines: int = Field(description="Lines read")
    launches: int = Field(description="Server launches (starts) found; 0 when the source holds no vLLM line")
    findings: int = Field(description="Findings reported for the source (updates and withdrawals not counted)")
    errors: int = Field(description="Findings of severity `error` among them")
    status: Literal["ok", "problem"] = Field(description="`problem` when any finding has severity `error`")
    vllm: bool = Field(
        description="The source holds a vLLM line (a vLLM record prefix, a traceback frame in vLLM, or a "
        "finding of a known pattern); false for an empty file, a binary file or another program's log"
    )
    root_causes: list[str] = Field(
        default_factory=list, description="The rule of each launch's root cause (`primary`), each rule once, in "
        "the order first seen"
    )
    serving: bool | None = Field(
        default=None,
        description="The last launch reached serving (`Application startup complete`); false when the log ends "
        "before (a server still starting, or one that died without an error line); null when its header shows "
        "no API server (an excerpt, an offline `LLM(...)` script) or the source holds no vLLM line",
    )


def json_lines_schema() -> dict[str, object]:
    """The JSON Schema of one line of `--format json`: a Finding (kind finding, update, withdrawn) or, last
    for each source, a Summary; `kind` tells them apart."""
    from typing import Annotated

    from pydantic import TypeAdapter

    line = Annotated[Finding | Summary, Field(discriminator="kind")]
    schema = TypeAdapter(line).json_schema()
    return {
        "title": "logdoctor --format json line",
        "description": "One JSON object per line: findings as they are reported (`kind` finding, update, "
        "withdrawn), then, when a source ends, its summary (`kind` summary).",
        **schema,
    }
