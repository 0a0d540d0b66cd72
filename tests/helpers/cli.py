"""Run the ``plan`` verb's parser alone, without the rest of the ``inferwatch-server`` CLI."""

from __future__ import annotations

import argparse

from inferwatch_server.cli import plan as plan_cli


def run_cli(*argv: str) -> int:
    """``inferwatch-server [--data-dir D] plan ...`` with only the ``plan`` verb registered; its exit code."""
    parser = argparse.ArgumentParser(prog="inferwatch-server")
    parser.add_argument("--data-dir")
    plan_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)
