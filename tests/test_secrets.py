"""No secret from a log or a command line leaves logdoctor: every kind, every place, every command.

The log below carries one of each kind of secret in each place vLLM's header or a traceback can carry
one. Every command that reads it (scan as text and JSON, the pipe, run, watch, run's report file) and
`check` on a command line holding them must print none of them, while still printing the lines that held
them (masked), so the test cannot pass by printing nothing. The pipe's and run's copy of the log on
stdout is the user's own log, passed through unchanged by design; logdoctor's own output is what is
checked there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from logdoctor.redact import redact
from tests.test_e2e import logdoctor_exe

SECRETS = {
    "api key in the args": "sk-live-abcdefghijklmnop1234",
    "second api key": "second-key-9876",
    "hf token in the args": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "namespace api key": "nsk-9a8b7c6d5e4f3a2b1c0d",
    "url password": "S3cretPassw0rd",
    "bearer token": "eyJhbGciOiJIUzI1NiJ9.payload.signature123",
    "openai key in a message": "sk-proj-ABCDEFGHIJKLMNOPQRST123456",
    "aws access key": "AKIAIOSFODNN7EXAMPLE",
    "aws secret in an env line": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "hf token in a message": "hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa987654",
    "password in a config repr": "hunter2-db-pass",
}
S = SECRETS

LOG = f"""\
(APIServer pid=51234) INFO 08-27 14:02:11 [api_utils.py:333]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.28.0
(APIServer pid=51234) INFO 08-27 14:02:11 [api_utils.py:272] non-default args: {{'model_tag': 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', 'api_key': ['{S["api key in the args"]}', '{S["second api key"]}'], 'model': 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', 'hf_token': '{S["hf token in the args"]}', 'enable_prefix_caching': True, 'mamba_cache_mode': 'all', 'use_replayssm': True}}
(APIServer pid=51234) INFO 08-27 14:02:11 [api_utils.py:270] args: Namespace(host=None, port=8000, api_key='{S["namespace api key"]}', model='nvidia/x')
(APIServer pid=51234) INFO 08-27 14:02:12 [core.py:93] Initializing a V1 LLM engine (v0.28.0) with config: model='https://admin:{S["url password"]}@hub.internal/models/x', speculative_config=None
(APIServer pid=51234) ERROR 08-27 14:02:13 [hub.py:10] request failed with headers {{'Authorization': 'Bearer {S["bearer token"]}'}}
(APIServer pid=51234) ERROR 08-27 14:02:13 [hub.py:11] Authorization: Bearer {S["bearer token"]}
(APIServer pid=51234) ERROR 08-27 14:02:13 [env.py:3] launched with AWS_SECRET_ACCESS_KEY={S["aws secret in an env line"]} AWS_ACCESS_KEY_ID={S["aws access key"]}
(APIServer pid=51234) ERROR 08-27 14:02:13 [db.py:3] config: DatabaseConfig(user='vllm', password='{S["password in a config repr"]}')
Traceback (most recent call last):
  File "/x/vllm/entrypoints/openai/api_server.py", line 10, in run
    client = OpenAI(api_key="{S["openai key in a message"]}")
  File "/x/huggingface_hub/file_download.py", line 20, in get
    url = "https://admin:{S["url password"]}@hub.internal/models"
openai.AuthenticationError: Incorrect API key provided: {S["openai key in a message"]} for https://admin:{S["url password"]}@hub.internal
Traceback (most recent call last):
  File "/x/huggingface_hub/utils/_http.py", line 409, in hf_raise_for_status
    response.raise_for_status()
huggingface_hub.errors.GatedRepoError: 401 Client Error. Invalid token {S["hf token in a message"]} (Bearer {S["bearer token"]})
(APIServer pid=51234) pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig
(APIServer pid=51234)   Value error, --use-replayssm supports prefix caching only in align mode; pass --mamba-cache-mode align [type=value_error, input_value=ArgsKwargs((), {{'model_co... 'shutdown_timeout': 0}}), input_type=ArgsKwargs]
(APIServer pid=51234)     For further information visit https://errors.pydantic.dev/2.13/v/value_error
"""


def assert_no_secret(output: str, where: str) -> None:
    leaked = [kind for kind, secret in SECRETS.items() if secret in output]
    assert not leaked, f"{where} leaked: {leaked}"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "leaky.log"
    path.write_text(LOG)
    return path


def test_the_redaction_rules_mask_every_kind() -> None:
    masked = redact(LOG)
    assert_no_secret(masked, "redact()")
    assert masked.count("***") >= len(SECRETS)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_scan(log: Path, fmt: str) -> None:
    out = subprocess.run([logdoctor_exe(), "scan", "--format", fmt, str(log)], capture_output=True, text=True)
    assert out.returncode == 1 and "***" in out.stdout  # the lines were reported, masked
    assert_no_secret(out.stdout + out.stderr, f"scan --format {fmt}")
    if fmt == "json":
        findings = [f for f in map(json.loads, out.stdout.splitlines()) if f["kind"] != "summary"]
        evidence = " ".join(e["text"] for f in findings for e in f["evidence"])
        assert "Bearer ***" in evidence and "hf_***" in evidence and "sk-***" in evidence
        assert any(f["fix"]["command"] for f in findings)  # the corrected command, without the keys


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_pipe(log: Path, fmt: str) -> None:
    out = subprocess.run([logdoctor_exe(), "--format", fmt], input=log.read_bytes(), capture_output=True)
    assert out.stdout == log.read_bytes()  # the user's own log, passed through
    assert b"***" in out.stderr
    assert_no_secret(out.stderr.decode(), f"pipe --format {fmt} (stderr)")


def test_run_and_its_report_file(log: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    child = [sys.executable, "-c", f"import sys; sys.stderr.write(open({str(log)!r}).read())"]
    out = subprocess.run(
        [logdoctor_exe(), "run", "--report", str(report), "--", *child], capture_output=True, text=True
    )
    own = out.stderr.replace(LOG, "")  # what logdoctor printed, without the child's own stderr
    assert "***" in own and "***" in report.read_text()
    assert_no_secret(own, "run (stderr)")
    assert_no_secret(report.read_text(), "run --report")


def test_watch(log: Path, tmp_path: Path) -> None:
    followed = tmp_path / "followed.log"
    proc = subprocess.Popen(
        [logdoctor_exe(), "watch", "--format", "json", "--poll", "0.1", str(followed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # No fixed sleeps (these machines slow down without warning): write at once, the watcher picks the
    # file up whenever it appears, and read its output until the redacted finding is there.
    followed.write_text(LOG)
    assert proc.stdout is not None
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any("***" in line for line in seen):
        time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=30)
    reader.join(timeout=30)  # the reader owns stdout up to its end
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    stdout = "".join(seen)
    assert "***" in stdout
    assert_no_secret(stdout + stderr, "watch")


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_check(fmt: str) -> None:
    command = [
        "vllm", "serve", "nvidia/Nemotron-H-8B-Base-8K", "--use-replayssm", "--mamba-backend", "cpu",
        "--api-key", S["api key in the args"], S["second api key"], "--hf-token", S["hf token in the args"],
    ]
    out = subprocess.run([logdoctor_exe(), "check", "--format", fmt, "--", *command], capture_output=True, text=True)
    assert out.returncode == 1 and "***" in out.stdout
    assert_no_secret(out.stdout + out.stderr, f"check --format {fmt}")
