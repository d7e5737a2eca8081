"""The `serve` subcommand: its parser (argparse accepts unambiguous prefixes, as vLLM's does) and checks."""

import argparse


class ServeSubcommand:
    name = "serve"

    @staticmethod
    def cmd(args: argparse.Namespace) -> None:
        raise AssertionError("the probe never serves")

    def validate(self, args: argparse.Namespace) -> None:
        if args.enable_auto_tool_choice and not args.tool_call_parser:
            raise TypeError("Error: --enable-auto-tool-choice requires --tool-call-parser")

    def subparser_init(self, subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        parser = subparsers.add_parser(self.name, usage="vllm serve [model_tag] [options]")
        parser.add_argument("model_tag", nargs="?")
        parser.add_argument("--model")
        parser.add_argument("--headless", action="store_true")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
        parser.add_argument("--max-model-len", type=int)
        parser.add_argument("--max-num-seqs", type=int)
        parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
        parser.add_argument("--use-replayssm", action="store_true")
        parser.add_argument("--mamba-backend", default="triton")
        parser.add_argument("--mamba-cache-mode", choices=["align", "none"])
        parser.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction)
        parser.add_argument("--disable-prefix-caching", dest="enable_prefix_caching", action="store_false")
        parser.add_argument("--enable-auto-tool-choice", action="store_true")
        parser.add_argument("--tool-call-parser")
        return parser
