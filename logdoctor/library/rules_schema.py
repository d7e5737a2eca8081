"""The constraint set format as pydantic models (see rules.py for what a set means): what checks a
`[[constraint_set]]` table. A valid table becomes a plain rules.ConstraintSet; only building the
library (and its cache) imports this module."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from logdoctor.library import rules
from logdoctor.library.rules import MachineFact, Op
from logdoctor.versions import check_range


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ConditionEntry(_Strict):
    """`{field, op, value}`, or `value_from` another field (+ `offset`), or `all` / `any` / `not`."""

    field: str | None = None
    op: Op | None = None
    value: Any = None
    value_from: str | None = None
    offset: float = 0
    all: list[ConditionEntry] | None = None
    any: list[ConditionEntry] | None = None
    not_: ConditionEntry | None = Field(default=None, alias="not")

    @model_validator(mode="after")
    def _one_shape(self) -> ConditionEntry:
        shapes = [self.field is not None, self.all is not None, self.any is not None, self.not_ is not None]
        if sum(shapes) != 1:
            raise ValueError("a condition is exactly one of: field/op/value, all, any, not")
        if self.field is not None and self.op is None:
            raise ValueError(f"condition on {self.field!r} needs an `op`")
        return self


class ValueFromEntry(_Strict):
    """A fix or derived value computed from another field: `{from = "num_speculative_tokens", offset = 1}`."""

    from_: str = Field(alias="from")
    offset: float = 0


class FixOptionEntry(_Strict):
    says: str
    when: ConditionEntry | None = None  # the option applies only when this holds (first applicable wins)
    set: dict[str, Any] = Field(default_factory=dict)  # str | int | bool | dict | ValueFromEntry-shaped dict
    unset: list[str] = Field(default_factory=list)


class DerivationEntry(_Strict):
    field: str
    value: Any = None
    value_from: ValueFromEntry | None = None
    when: ConditionEntry | None = None
    only_if_unknown: bool = False  # a default that depends on the model: never overrides a revealed value
    says: str


class RuleEntry(_Strict):
    id: str
    says: str
    when: ConditionEntry | None = None  # the branch of vLLM's validator the rule lives in
    require: ConditionEntry
    vllm_message: str
    patterns: list[str] = Field(default_factory=list)  # pattern ids that recognise the rule's errors in a log
    raised_in: str = "API server, at config validation"
    # `arguments` rules are vLLM's argument parser: they read the launch as written, before vLLM
    # resolves anything (a choice the parser rejects never reaches the resolution).
    stage: Literal["arguments", "validation", "engine"] = "validation"
    note: str | None = None  # e.g. "vLLM's own hint names the wrong flag"
    fix: list[FixOptionEntry] = Field(min_length=1)


class FactEntry(_Strict):
    """A model fact a rule reads (rules.Fact): config.json's dotted keys, first present (or smallest) wins."""

    name: str
    config_json: list[str] = Field(default_factory=list)
    file: str = Field(default="config.json", pattern=r"^[\w.-]+$")  # a file of the model's folder
    absent: Any = None
    exists_of: str | None = None
    valid_json: bool = False
    has_token: str | None = None
    folder_of: str | None = None
    machine: MachineFact | None = None
    probe: Literal["found", "parses", "json_files"] | None = None
    pick: Literal["first", "min"] = "first"
    reveal: str = "the model's config.json (a local model folder, or the Hugging Face cache)"

    @model_validator(mode="after")
    def _one_source(self) -> FactEntry:
        sources = [
            bool(self.config_json), self.exists_of is not None, self.valid_json, self.has_token is not None,
            self.machine is not None, self.probe is not None,
        ]  # fmt: skip
        if sum(sources) != 1:
            raise ValueError(
                f"fact {self.name!r} needs exactly one of: config_json (keys), exists_of (an argument), "
                "valid_json, has_token, machine, probe"
            )
        return self


class EnvVarEntry(_Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    reveal: str = "the server's environment"


class EnvGroupEntry(_Strict):
    field: str
    prefix: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    names: list[str] = Field(default_factory=list)
    known: list[str] | None = None
    reveal: str = "the server's environment"

    @model_validator(mode="after")
    def _one_kind(self) -> EnvGroupEntry:
        if (self.prefix is not None) == bool(self.names):
            raise ValueError(f"env_group {self.field!r} needs exactly one of: prefix, names")
        return self


class ConstraintSetEntry(_Strict):
    id: str
    feature: str
    versions: str
    active: ConditionEntry
    # A set may start from an older one: its derivations (appended, or replacing them with
    # `replace_derive`), its rules (overridden by id, or removed with `drop`).
    extends: str | None = None
    replace_derive: bool = False
    drop: list[str] = Field(default_factory=list)
    derive: list[DerivationEntry] = Field(default_factory=list)
    rule: list[RuleEntry] = Field(default_factory=list)
    fact: list[FactEntry] = Field(default_factory=list)
    env: list[EnvVarEntry] = Field(default_factory=list)
    env_group: list[EnvGroupEntry] = Field(default_factory=list)
    reveal: dict[str, str] = Field(default_factory=dict)
    strict_active: bool = False  # applies only when `active` is known to hold (rules.ConstraintSet)

    @model_validator(mode="after")
    def _valid(self) -> ConstraintSetEntry:
        check_range(self.versions)
        ids = [r.id for r in self.rule]
        if len(ids) != len(set(ids)):
            raise ValueError(f"rule ids repeat in set {self.id}")
        if not self.rule and self.extends is None:
            raise ValueError(f"set {self.id} has no rules")
        return self


def validate_set(raw: object, origin: str = "") -> rules.ConstraintSet:
    """A constraint set from one `[[constraint_set]]` table; pydantic's ValidationError when it is not
    valid. The checked table, its defaults filled in, is what rules.set_from_data builds from."""
    entry = ConstraintSetEntry.model_validate(raw)
    return rules.set_from_data(entry.model_dump(by_alias=True) | {"origin": origin})
