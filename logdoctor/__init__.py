"""logdoctor: reads vLLM server logs and says what failed, why, and the exact fix.

The core is pure: `Doctor(library).feed(line)` / `.tick(now)` / `.flush()` turn lines into findings.
"""

from __future__ import annotations

__version__ = "0.1.0"
