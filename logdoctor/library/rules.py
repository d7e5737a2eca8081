"""Constraint sets as data: the complete rules of one feature for a range of vLLM versions.

vLLM validates a feature rule by rule and stops at the first broken one. A constraint set lists them
all, so logdoctor can check a whole launch at once. A set has:

* `active`: when the feature is on at all (`use_replayssm` is true);
* `derive`: what vLLM resolves *before* it validates (the mamba cache mode follows prefix caching),
  applied in order, so rules see what vLLM sees rather than what the user typed;
* `rule`s: a declarative requirement on LaunchConfig fields, the branch it applies in (`when`), the
  exact message vLLM raises when it is broken (linking a log's error to its rule), and the fixes.

Conditions are three-valued: a field nobody revealed makes a condition unknown, never true or false.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from logdoctor.versions import check_range

Op = Literal["eq", "ne", "in", "not_in", "is_null", "not_null", "gt", "ge", "lt", "le", "multiple_of"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Condition(_Strict):
    """`{field, op, value}`, or `value_from` another field (+ `offset`), or `all` / `any` / `not`."""

    field: str | None = None
    op: Op | None = None
    value: Any = None
    value_from: str | None = None
    offset: float = 0
    all: list[Condition] | None = None
    any: list[Condition] | None = None
    not_: Condition | None = Field(default=None, alias="not")

    @model_validator(mode="after")
    def _one_shape(self) -> Condition:
        shapes = [self.field is not None, self.all is not None, self.any is not None, self.not_ is not None]
        if sum(shapes) != 1:
            raise ValueError("a condition is exactly one of: field/op/value, all, any, not")
        if self.field is not None and self.op is None:
            raise ValueError(f"condition on {self.field!r} needs an `op`")
        return self

    def fields(self) -> set[str]:
        found = {self.field} if self.field else set()
        if self.value_from:
            found.add(self.value_from)
        for child in (self.all or []) + (self.any or []) + ([self.not_] if self.not_ else []):
            found |= child.fields()
        return found


class ValueFrom(_Strict):
    """A fix or derived value computed from another field: `{from = "num_speculative_tokens", offset = 1}`."""

    from_: str = Field(alias="from")
    offset: float = 0


class FixOption(_Strict):
    says: str
    when: Condition | None = None  # the option applies only when this holds (first applicable wins)
    set: dict[str, Any] = Field(default_factory=dict)  # str | int | bool | dict | ValueFrom-shaped dict
    unset: list[str] = Field(default_factory=list)


class Derivation(_Strict):
    field: str
    value: Any = None
    value_from: ValueFrom | None = None
    when: Condition | None = None
    only_if_unknown: bool = False  # a default that depends on the model: never overrides a revealed value
    says: str


class Rule(_Strict):
    id: str
    says: str
    when: Condition | None = None  # the branch of vLLM's validator the rule lives in
    require: Condition
    vllm_message: str
    patterns: list[str] = Field(default_factory=list)  # pattern ids that recognise the rule's errors in a log
    raised_in: str = "API server, at config validation"
    # `arguments` rules are vLLM's argument parser: they read the launch as written, before vLLM
    # resolves anything (a choice the parser rejects never reaches the resolution).
    stage: Literal["arguments", "validation"] = "validation"
    note: str | None = None  # e.g. "vLLM's own hint names the wrong flag"
    fix: list[FixOption] = Field(min_length=1)


class ConstraintSet(_Strict):
    id: str
    feature: str
    versions: str
    active: Condition
    # A set may start from an older one: its derivations (appended, or replacing them with
    # `replace_derive`), its rules (overridden by id, or removed with `drop`).
    extends: str | None = None
    replace_derive: bool = False
    drop: list[str] = Field(default_factory=list)
    derive: list[Derivation] = Field(default_factory=list)
    rule: list[Rule] = Field(default_factory=list)
    origin: str = Field(default="", exclude=True)

    def inherit(self, parent: ConstraintSet) -> ConstraintSet:
        """This set with its parent's derivations and rules filled in."""
        own = {r.id: r for r in self.rule}
        rules = [own.pop(r.id, r) for r in parent.rule if r.id not in self.drop] + list(own.values())
        derive = self.derive if self.replace_derive else parent.derive + self.derive
        return self.model_copy(update={"rule": rules, "derive": derive, "extends": None})

    @model_validator(mode="after")
    def _valid(self) -> ConstraintSet:
        check_range(self.versions)
        ids = [r.id for r in self.rule]
        if len(ids) != len(set(ids)):
            raise ValueError(f"rule ids repeat in set {self.id}")
        if not self.rule and self.extends is None:
            raise ValueError(f"set {self.id} has no rules")
        return self
