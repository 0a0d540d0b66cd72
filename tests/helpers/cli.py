"""Run some of the ``inferwatch-server`` verbs' parsers alone, without the rest of the CLI."""

from __future__ import annotations

import argparse

from inferwatch_server.cli import keys as keys_cli
from inferwatch_server.cli import plan as plan_cli


def run_cli(*argv: str) -> int:
    """``inferwatch-server [--data-dir D] plan|keys ...`` with only those verbs registered; its exit code."""
    parser = argparse.ArgumentParser(prog="inferwatch-server")
    parser.add_argument("--data-dir")
    verbs = parser.add_subparsers(dest="command", required=True)
    plan_cli.register(verbs)
    keys_cli.register(verbs)
    args = parser.parse_args(argv)
    return args.func(args)
