"""LaunchConfig: one typed model of a vLLM launch, whatever it was read from.

Field names are vLLM's own argument names (`tensor_parallel_size`, `mamba_cache_mode`, ...), so a rule,
a pattern's fix and a command line all speak the same language. Every value is a `Setting`: the value
and where it came from (a line of the log, the command line, a config file, vLLM's default for the
running version, or derived from other values). A field that is None is unknown, and rules that need
it say "unknown", never "met".
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

OriginKind = Literal["log", "command", "config_file", "default", "derived", "inferred"]

# Plain dataclasses, not pydantic models: every launch a log shows builds one, and a scan of a log without
# findings should not pay for importing pydantic. Nothing here is validated input or serialized output.


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    kind: OriginKind
    where: str  # `server.log:12`, `command line`, `serve.yaml`, `vLLM 0.33.0 default`, ...

    def __str__(self) -> str:
        return self.where


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    value: Any
    origin: Origin


@dataclass(kw_only=True)
class LaunchConfig:
    """A launch: the arguments (vLLM names), derived facts, and environment variables that matter."""

    settings: dict[str, Setting] = field(default_factory=dict)
    # What the user wrote, in order, as vLLM argument names: the corrected command keeps these.
    given: list[str] = field(default_factory=list)
    # The tokens the user wrote for each argument: rendered as written while the value is unchanged.
    written: dict[str, list[str]] = field(default_factory=dict)
    env: dict[str, Setting] = field(default_factory=dict)
    # vLLM's defaults for the running version: what an argument falls back to when a fix removes it.
    defaults: dict[str, Setting] = field(default_factory=dict)
    program: str = "vllm serve"

    def get(self, name: str) -> Setting | None:
        if name.startswith("env."):
            return self.env.get(name[4:])
        return self.settings.get(name)

    def value(self, name: str, default: Any = None) -> Any:
        setting = self.get(name)
        return default if setting is None else setting.value

    def set(self, name: str, value: Any, origin: Origin, given: bool = False) -> None:
        if name.startswith("env."):
            self.env[name[4:]] = Setting(value=value, origin=origin)
            return
        self.settings[name] = Setting(value=value, origin=origin)
        self.written.pop(name, None)
        if given and name not in self.given:
            self.given.append(name)

    def observe(self, name: str, value: Any, origin: Origin) -> None:
        """Record what vLLM resolved (a log notice) without changing how the user wrote the argument.
        A value already known keeps the line that revealed it first."""
        known = self.settings.get(name)
        if known is None or known.value != value:
            self.settings[name] = Setting(value=value, origin=origin)

    def set_default(self, name: str, value: Any, origin: Origin) -> None:
        """Record vLLM's default; it is the value unless something more direct revealed one."""
        self.use_default(name, Setting(value=value, origin=origin))

    def use_default(self, name: str, setting: Setting) -> None:
        self.defaults[name] = setting
        if name not in self.settings:
            self.settings[name] = setting

    def unset(self, name: str) -> None:
        if name.startswith("env."):
            self.env.pop(name[4:], None)
            return
        if name in self.defaults:
            self.settings[name] = self.defaults[name]  # removed from the command: back to vLLM's default
        else:
            self.settings.pop(name, None)
        self.written.pop(name, None)
        if name in self.given:
            self.given.remove(name)

    def copy_deep(self) -> LaunchConfig:
        return replace(
            self,
            settings=dict(self.settings),
            given=list(self.given),
            written={k: list(v) for k, v in self.written.items()},
            env=dict(self.env),
            defaults=dict(self.defaults),
        )
