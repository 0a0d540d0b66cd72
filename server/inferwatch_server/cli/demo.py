"""``inferwatch-server demo``: generated LLM traffic (``examples/traffic.py``) sent to a running collector."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``demo`` to the ``inferwatch-server`` parser."""
    demo = sub.add_parser("demo", help="send generated LLM traffic to a running collector")
    demo.add_argument("--url", default="http://127.0.0.1:4318")
    demo.add_argument("--key", required=True, help="an ingest key")
    demo.add_argument("--rate", type=float, default=20.0, help="LLM calls per second")
    demo.add_argument("--duration", type=float, help="seconds (default: until interrupted)")
    demo.add_argument("--with-content", action="store_true", help="include prompt/completion text")
    demo.set_defaults(func=cmd_demo)


def examples_root() -> str:
    """The checkout that holds ``examples/`` (the demo generator is not part of the installed package)."""
    for candidate in (Path.cwd(), *Path(__file__).resolve().parents):
        if (candidate / "examples" / "demo_app.py").exists():
            return str(candidate)
    raise SystemExit("the demo (examples/demo_app.py, examples/traffic.py) was not found: run from a checkout")


def cmd_demo(args: argparse.Namespace) -> int:
    root = examples_root()
    cmd = [sys.executable, "-m", "examples.traffic", "--url", args.url, "--key", args.key,
           "--rate", str(args.rate)]
    if args.duration:
        cmd += ["--duration", str(args.duration)]
    if args.with_content:
        cmd += ["--content"]
    return subprocess.call(cmd, cwd=root)
