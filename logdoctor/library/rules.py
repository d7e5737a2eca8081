"""Constraint sets as data: the complete rules of one feature for a range of vLLM versions.

vLLM validates a feature rule by rule and stops at the first broken one. A constraint set lists them
all, so logdoctor can check a whole launch at once. A set has:

* `active`: when the feature is on at all (`use_replayssm` is true);
* `derive`: what vLLM resolves *before* it validates (the mamba cache mode follows prefix caching),
  applied in order, so rules see what vLLM sees rather than what the user typed;
* `rule`s: a declarative requirement on LaunchConfig fields, the branch it applies in (`when`), the
  exact message vLLM raises when it is broken (linking a log's error to its rule), and the fixes;
* what the rules read that is not an argument of vLLM's parser, declared beside them: model `fact`s
  (which config.json key, in order of preference), the environment variables (`env`), and what would
  reveal a value nobody revealed (`reveal`). Arguments need no declaration: their defaults come from the
  version's argument parser (launch/argspecs). So a set for a new feature is data alone.

Conditions are three-valued: a field nobody revealed makes a condition unknown, never true or false.

These are plain dataclasses: rules_schema.py validates a `[[constraint_set]]` table (pydantic) and
builds them with set_from_data; the library cache (stored.py) keeps them as that same data, so `check`
and a finding's audit import no pydantic.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

# What `check` probes on the machine the server will run on (logdoctor/probe/machine.py).
MachineFact = Literal[
    "host_resolves", "host_is_local", "port_free", "free_port", "probed_host", "probed_port", "memory_nodes"
]  # fmt: skip
Op = Literal[
    "eq", "ne", "in", "not_in", "is_null", "not_null", "gt", "ge", "lt", "le", "multiple_of", "matches", "not_matches",
    "keys_in", "all_match",
]  # fmt: skip


@dataclass(kw_only=True)
class Condition:
    """`{field, op, value}`, or `value_from` another field (+ `offset`), or `all` / `any` / `not`."""

    field: str | None = None
    op: Op | None = None
    value: Any = None
    value_from: str | None = None
    offset: float = 0
    all: list[Condition] | None = None
    any: list[Condition] | None = None
    not_: Condition | None = None

    def fields(self) -> set[str]:
        found = {self.field} if self.field else set()
        if self.value_from:
            found.add(self.value_from)
        for child in (self.all or []) + (self.any or []) + ([self.not_] if self.not_ else []):
            found |= child.fields()
        return found


@dataclass(kw_only=True)
class ValueFrom:
    """A fix or derived value computed from another field: `{from = "num_speculative_tokens", offset = 1}`."""

    from_: str
    offset: float = 0

    def spec(self) -> dict[str, Any]:
        """As a pattern file writes it (what constraints.resolve_value reads)."""
        return {"from": self.from_, "offset": self.offset}


@dataclass(kw_only=True)
class FixOption:
    says: str
    when: Condition | None = None  # the option applies only when this holds (first applicable wins)
    set: dict[str, Any] = dataclasses.field(default_factory=dict)  # str | int | bool | dict | {from = ...}
    unset: list[str] = dataclasses.field(default_factory=list)


@dataclass(kw_only=True)
class Derivation:
    field: str
    says: str
    value: Any = None
    value_from: ValueFrom | None = None
    when: Condition | None = None
    only_if_unknown: bool = False  # a default that depends on the model: never overrides a revealed value


@dataclass(kw_only=True)
class Rule:
    id: str
    says: str
    require: Condition
    vllm_message: str
    fix: list[FixOption]
    when: Condition | None = None  # the branch of vLLM's validator the rule lives in
    patterns: list[str] = dataclasses.field(default_factory=list)  # pattern ids of the rule's errors in a log
    raised_in: str = "API server, at config validation"
    # `arguments` rules are vLLM's argument parser: they read the launch as written, before vLLM
    # resolves anything (a choice the parser rejects never reaches the resolution). `engine` rules are
    # raised after vLLM's config validation accepted the launch (the engine core, the workers): asking
    # vLLM's validation (`check --with-vllm`) cannot confirm them, so it reports them as check's own.
    stage: Literal["arguments", "validation", "engine"] = "validation"
    note: str | None = None  # e.g. "vLLM's own hint names the wrong flag"


@dataclass(kw_only=True)
class Fact:
    """A fact a rule reads that no argument carries, from the model's config.json (a local folder, or the
    Hugging Face cache): the first of `config_json`'s dotted keys that is present (`text_config.x` reads
    into a nested dict, `architectures.0` into a list), or the smallest of them all with `pick = "min"`
    (vLLM's derived maximum length is the smallest of several keys)."""

    name: str
    config_json: list[str] = dataclasses.field(default_factory=list)
    # Another JSON file of the model's folder (`tokenizer_config.json`, `hf_quant_config.json`); its keys
    # are read the same way. `absent` is the fact's value when the file lacks every key, or (for a file
    # other than config.json) the folder lacks the file: `absent = "none"` for a checkpoint with no
    # quantization_config. Without `absent`, a missing key leaves the fact unknown.
    file: str = "config.json"
    absent: Any = None
    # Or: whether the path an argument names exists where `check` runs (`--chat-template FILE`): true or
    # false, and null when the argument is not given.
    exists_of: str | None = None
    # Or, of `file`: whether it parses as JSON (`valid_json`: true or false, null when the folder lacks
    # it), or whether the tokenizer's vocabulary has a token (`has_token = "<think>"`: tokenizer.json's
    # vocab and added tokens, and tokenizer_config.json's added_tokens_decoder; unknown without a
    # readable tokenizer.json). `folder_of` names the argument whose folder holds the file when it is
    # given (`--tokenizer`), else the model's folder; a value that is no local folder leaves it unknown.
    valid_json: bool = False
    has_token: str | None = None
    folder_of: str | None = None
    # Or a fact about the machine the server will run on, which `check` (running there) probes before
    # the audit: `host_resolves`, `host_is_local`, `port_free` (a bind test on --host/--port, closed at
    # once), `free_port` (the first free port after --port), and what was probed (`probed_host`,
    # `probed_port`: a rule on the port applies while --port is the one probed), and the NUMA nodes the
    # process may allocate on (`memory_nodes`, Mems_allowed_list). Unknown when not probed.
    machine: MachineFact | None = None
    # Or: what the model's folder (a local folder, or the repo's snapshot in the Hugging Face cache) says
    # of `file`: `found` (true or false: a repo id with no snapshot in the cache has none), `parses`
    # (whether it is a JSON object: null when it is not found), or `json_files`: the names of the
    # folder's *.json files (get_quant_config looks among them for a method's own config file).
    # Unknown when MODEL is a file (GGUF).
    probe: Literal["found", "parses", "json_files"] | None = None
    pick: Literal["first", "min"] = "first"
    reveal: str = "the model's config.json (a local model folder, or the Hugging Face cache)"


@dataclass(kw_only=True)
class EnvVar:
    """An environment variable a rule reads (as `env.NAME`): `check` runs where the server will run, so
    its value, or its absence (vLLM's default), is known."""

    name: str
    reveal: str = "the server's environment"


@dataclass(kw_only=True)
class EnvGroup:
    """Several environment variables as one field (`field`), a JSON object of those set, name -> value:
    every variable whose name starts with `prefix` (`VLLM_`: the ones a release does not read are
    `keys_in`'s business), or the `names` listed (the variables a release converts with int()). Known
    wherever `check` runs (the server's environment); `{}` when none is set."""

    field: str
    prefix: str | None = None
    names: list[str] = dataclasses.field(default_factory=list)
    # With `known` (the names a release reads): only the set variables it does not know, each mapped to
    # the known name nearest its spelling (null when none is near): VLLM_ALLOW_LONG_MAX_MODEL_LENGTH ->
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN.
    known: list[str] | None = None
    reveal: str = "the server's environment"

    def members(self, environ: dict[str, str]) -> dict[str, str | None]:
        if self.prefix is not None:
            found = {k: v for k, v in sorted(environ.items()) if k.startswith(self.prefix)}
        else:
            found = {k: environ[k] for k in self.names if k in environ}
        if self.known is None:
            return dict(found)
        known = set(self.known)
        return {k: _nearest(k, self.known) for k in found if k not in known}


def _nearest(name: str, known: list[str]) -> str | None:
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
    return close[0] if close else None


@dataclass(kw_only=True)
class ConstraintSet:
    id: str
    feature: str
    versions: str
    active: Condition
    # A set may start from an older one: its derivations (appended, or replacing them with
    # `replace_derive`), its rules (overridden by id, or removed with `drop`).
    extends: str | None = None
    replace_derive: bool = False
    drop: list[str] = dataclasses.field(default_factory=list)
    derive: list[Derivation] = dataclasses.field(default_factory=list)
    rule: list[Rule] = dataclasses.field(default_factory=list)
    fact: list[Fact] = dataclasses.field(default_factory=list)
    env: list[EnvVar] = dataclasses.field(default_factory=list)
    env_group: list[EnvGroup] = dataclasses.field(default_factory=list)
    reveal: dict[str, str] = dataclasses.field(default_factory=dict)  # field -> what would reveal it
    # The set applies only when `active` is known to hold, not when it is unknown: its activity reads
    # facts only `check` can know (a probe of the machine, a file of the model's folder), so a log's
    # launch, or a launch nobody probed, is not audited against it unless vLLM raised one of its rules.
    strict_active: bool = False
    origin: str = ""  # the file it came from

    def inherit(self, parent: ConstraintSet) -> ConstraintSet:
        """This set with its parent's derivations, rules, facts, variables and reveal texts filled in."""
        own = {r.id: r for r in self.rule}
        rules = [own.pop(r.id, r) for r in parent.rule if r.id not in self.drop] + list(own.values())
        derive = self.derive if self.replace_derive else parent.derive + self.derive
        facts = {f.name: f for f in parent.fact} | {f.name: f for f in self.fact}
        env = {e.name: e for e in parent.env} | {e.name: e for e in self.env}
        groups = {g.field: g for g in parent.env_group} | {g.field: g for g in self.env_group}
        return dataclasses.replace(
            self,
            rule=rules,
            derive=derive,
            fact=list(facts.values()),
            env=list(env.values()),
            env_group=list(groups.values()),
            reveal=parent.reveal | self.reveal,
            extends=None,
        )

    def reveal_text(self, name: str) -> str:
        """What would reveal `name` when the launch did not: the set's own words, or a plain default."""
        if name in self.reveal:
            return self.reveal[name]
        for fact in self.fact:
            if fact.name == name:
                return fact.reveal
        for variable in self.env:
            if name == f"env.{variable.name}":
                return variable.reveal
        for group in self.env_group:
            if name == group.field:
                return group.reveal
        if name.startswith("env."):
            return f"{name[4:]} in the server's environment"
        return "not in the log or command"


# --- as data: a validated table (rules_schema.py) or the cache's copy of one --------------------------------


def set_from_data(data: dict[str, Any]) -> ConstraintSet:
    """The set a `[[constraint_set]]` table describes (rules_schema.py validated it, or set_to_data wrote
    it). A key the dataclasses do not have is a TypeError: data of another layout."""
    fields = _own_keys(data)
    fields["active"] = _condition(data["active"])
    fields["derive"] = [_derivation(d) for d in data.get("derive", [])]
    fields["rule"] = [_rule(r) for r in data.get("rule", [])]
    fields["fact"] = [Fact(**f) for f in data.get("fact", [])]
    fields["env"] = [EnvVar(**e) for e in data.get("env", [])]
    fields["env_group"] = [EnvGroup(**g) for g in data.get("env_group", [])]
    return ConstraintSet(**fields)


def set_to_data(cset: ConstraintSet) -> dict[str, Any]:
    """What set_from_data reads back: the table's own keys (`not`, `from`), plain JSON values."""
    data: dict[str, Any] = _table_keys(dataclasses.asdict(cset))
    return data


_TABLE_KEY = {"not_": "not", "from_": "from"}  # Python keywords, spelled as the pattern file spells them
_OWN_KEY = {table: own for own, table in _TABLE_KEY.items()}


def _table_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_TABLE_KEY.get(k, k): _table_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_table_keys(v) for v in value]
    return value


def _own_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {_OWN_KEY.get(k, k): v for k, v in data.items()}


def _condition(data: dict[str, Any] | None) -> Any:
    if data is None:
        return None
    fields = _own_keys(data)
    for key in ("all", "any"):
        if fields.get(key) is not None:
            fields[key] = [_condition(c) for c in fields[key]]
    fields["not_"] = _condition(fields.get("not_"))
    return Condition(**fields)


def _derivation(data: dict[str, Any]) -> Derivation:
    fields = _own_keys(data)
    fields["when"] = _condition(fields.get("when"))
    if fields.get("value_from") is not None:
        fields["value_from"] = ValueFrom(**_own_keys(fields["value_from"]))
    return Derivation(**fields)


def _fix(data: dict[str, Any]) -> FixOption:
    fields = _own_keys(data)
    fields["when"] = _condition(fields.get("when"))
    return FixOption(**fields)


def _rule(data: dict[str, Any]) -> Rule:
    fields = _own_keys(data)
    fields["require"] = _condition(fields["require"])
    fields["when"] = _condition(fields.get("when"))
    fields["fix"] = [_fix(f) for f in fields["fix"]]
    return Rule(**fields)
