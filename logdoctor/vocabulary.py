"""The words a pattern and a finding share: severities and roles. Plain Literals, so the matcher can
name them without importing the pydantic models of model.py."""

from __future__ import annotations

from typing import Literal

Severity = Literal["error", "warning", "info"]
Role = Literal["cause", "consequence", "wrapper", "benign", "request"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
