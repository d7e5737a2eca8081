#!/usr/bin/env python3
"""Run corrected commands through the real `vllm serve` argument parser (and its `validate`), not logdoctor's
copy of it: what tests/test_corrected_commands.py checks against the dumped argspecs, checked once against
vLLM itself.

Two halves, two Pythons:

    # logdoctor's Python: every corrected command of the fixtures (and corpus) as JSON lines
    python bench/vllm_parse_check.py collect fixtures /work/shared/corpus > /tmp/commands.jsonl
    # the Python of a venv with vLLM installed (bench/vllm_env.sh), never logdoctor's own
    VLLM_TARGET_DEVICE=cpu /work/vllm033/bin/python bench/vllm_parse_check.py parse < /tmp/commands.jsonl

`parse` prints one line per command vLLM's parser refuses (its own error message) and a count; only
commands of the installed vLLM's release are parsed (a parser of another release would refuse flags for
the wrong reason). Exit status 1 when one is refused.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import sys
from pathlib import Path


def collect(folders: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from logdoctor.api import default_library
    from tests.test_corrected_commands import corrected

    library = default_library()
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.log")):
            for finding, launch in corrected(path, library):
                record = {"where": f"{path.name}:{finding.rule}", "version": launch.version}
                print(json.dumps({**record, "command": finding.fix.command}))


def vllm_parser():  # type: ignore[no-untyped-def]
    """`vllm`'s own top-level parser with its `serve` subcommand, built as vllm/entrypoints/cli/main.py does."""
    import vllm.entrypoints.cli.serve as serve
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser(description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    commands = {}
    for cmd in serve.cmd_init():
        cmd.subparser_init(subparsers).set_defaults(dispatch_function=cmd.cmd)
        commands[cmd.name] = cmd
    return parser, commands


def parse() -> int:
    import vllm

    parser, commands = vllm_parser()
    checked = refused = 0
    for line in sys.stdin:
        record = json.loads(line)
        if record.get("version") != vllm.__version__:
            continue
        words = shlex.split(record["command"])
        while words and "=" in words[0] and not words[0].startswith("-"):
            words.pop(0)  # VAR=value before the program
        argv = words[1:]  # `serve ...`
        checked += 1
        error = io.StringIO()
        try:
            with contextlib.redirect_stderr(error):
                args = parser.parse_args(argv)
                commands["serve"].validate(args)
        except SystemExit as exc:
            if exc.code:
                refused += 1
                print(f"REFUSED {record['where']}: {record['command']}\n  {error.getvalue().strip()[-500:]}")
        except Exception as exc:  # noqa: BLE001 - validate's own errors are refusals too
            refused += 1
            print(f"REFUSED {record['where']}: {record['command']}\n  {type(exc).__name__}: {exc}")
    print(f"vLLM {vllm.__version__}: {checked} corrected commands parsed, {refused} refused")
    return 1 if refused else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["collect"]:
        collect(sys.argv[2:])
    elif sys.argv[1:2] == ["parse"]:
        sys.exit(parse())
    else:
        sys.exit(__doc__)
