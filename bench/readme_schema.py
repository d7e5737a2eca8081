#!/usr/bin/env python3
"""Rewrite the JSON schema block of README.md from the pydantic models (`logdoctor schema`)."""

import json
import re
from pathlib import Path

from logdoctor.model import json_lines_schema

readme = Path(__file__).resolve().parent.parent / "README.md"
schema = json.dumps(json_lines_schema(), indent=2)
text = readme.read_text()
text, count = re.subn(r"```json\n\{.*?\n\}\n```", lambda _: f"```json\n{schema}\n```", text, count=1, flags=re.S)
assert count == 1, "README.md has no ```json schema block"
readme.write_text(text)
