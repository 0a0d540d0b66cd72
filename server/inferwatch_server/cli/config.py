"""``inferwatch-server config``: every setting with its env var and default, as the README's Markdown table."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch_collector.settings import Settings


def register(sub: Any) -> None:
    """Add ``config`` to the ``inferwatch-server`` parser."""
    cfg = sub.add_parser("config", help="print every setting, its env var and default")
    cfg.set_defaults(func=cmd_config)


def cmd_config(args: argparse.Namespace) -> int:
    print("| setting | env var | default | meaning |\n|---|---|---|---|")
    for name, field in Settings.model_fields.items():
        default = "(see meaning)" if field.default_factory is not None else repr(field.default)
        print(f"| `{name}` | `INFERWATCH_{name.upper()}` | `{default}` | {field.description} |")
    return 0
