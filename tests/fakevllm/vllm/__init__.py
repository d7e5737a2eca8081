"""A fake vLLM for logdoctor's tests (see ../README.md)."""

__version__ = "0.33.0"
