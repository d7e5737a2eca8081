"""Run one coverage-guided fuzz target (atheris / libFuzzer) for a fixed time and print its figures.

    pip install -r fuzz/requirements.txt
    python fuzz/run.py pipeline --seconds 600     # targets: pipeline, framing, header, cmdline

Seeds come from the fixtures (logs cut into pieces, header lines, command lines); the corpus the fuzzer
grows is kept in fuzz/corpus/TARGET (not committed), crashes in fuzz/crashes/. The last lines printed are
libFuzzer's final statistics: executions, coverage (edges), corpus size. Not part of CI: it runs for
minutes on purpose.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def seed(target: str, corpus: Path) -> None:
    """A few dozen starting inputs from the fixtures, the shapes the fuzzer then mutates."""
    corpus.mkdir(parents=True, exist_ok=True)
    if any(corpus.iterdir()):
        return
    logs = sorted((ROOT / "fixtures").rglob("*.log"))
    seeds: list[bytes] = []
    if target in ("pipeline", "framing"):
        for path in logs[:40]:
            data = path.read_bytes()
            seeds += [data[:4096], data[-4096:]]
    elif target == "header":
        for path in logs:
            for line in path.read_bytes().splitlines():
                for marker in (b"non-default args: ", b"args: Namespace(", b"with config: ", b"version "):
                    if marker in line:
                        seeds.append(line[line.index(marker) :][:4096])
    else:
        seeds += [
            b"model\x00--tensor-parallel-size\x002\x00--use-replayssm",
            b"m\x00--api-key\x00a\x00b\x00--max-model-len=4096\x00-tp\x004",
            b"m\x00--kv-transfer-config\x00{\"kv_connector\":\"NixlConnector\"}\x00--speculative-config\x00{}",
        ]
    for n, data in enumerate(seeds):
        (corpus / f"seed-{n:04d}").write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=["pipeline", "framing", "header", "cmdline"])
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--max-len", type=int, default=16384)
    args = parser.parse_args()

    import atheris

    from fuzz.targets import TARGETS

    corpus = HERE / "corpus" / args.target
    crashes = HERE / "crashes" / args.target
    crashes.mkdir(parents=True, exist_ok=True)
    seed(args.target, corpus)
    atheris.Setup(
        [
            sys.argv[0],
            str(corpus),
            f"-max_total_time={args.seconds}",
            f"-max_len={args.max_len}",
            f"-artifact_prefix={crashes}/",
            "-rss_limit_mb=4096",
            "-timeout=20",
            "-print_final_stats=1",
        ],
        TARGETS[args.target],
    )
    atheris.Fuzz()


if __name__ == "__main__":
    main()
