"""Builds logdoctor/surface/vllm-surface.json.gz, the index of vLLM's error surface (see build_index.py)."""
