"""``inferwatch-server collector``: serve the collector (ingest + query API) in the foreground."""

from __future__ import annotations

import argparse
from typing import Any

from ..serve import serve
from .common import settings_from


def register(sub: Any) -> None:
    """Add ``collector`` to the ``inferwatch-server`` parser."""
    col = sub.add_parser("collector", help="run the collector (ingest + query API)")
    col.add_argument("--host")
    col.add_argument("--port", type=int)
    col.set_defaults(func=cmd_collector)


def cmd_collector(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    print(f"inferwatch collector on http://{settings.host}:{settings.port} "
          f"({'embedded chDB at ' + str(settings.data_dir) if settings.embedded else settings.clickhouse_url})",
          flush=True)
    return serve(settings)
