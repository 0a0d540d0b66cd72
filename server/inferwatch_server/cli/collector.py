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
    col.add_argument("--metrics-port", type=int,
                     help="port of the internal Prometheus /metrics listener (default 9318, bound to "
                          "INFERWATCH_METRICS_HOST, 127.0.0.1; 0 = none)")
    col.set_defaults(func=cmd_collector)


def cmd_collector(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    print(f"inferwatch collector on http://{settings.host}:{settings.port} "
          f"({'embedded chDB at ' + str(settings.data_dir) if settings.embedded else settings.clickhouse_url})",
          flush=True)
    if settings.metrics_port:
        print(f"Prometheus metrics on http://{settings.metrics_host}:{settings.metrics_port}/metrics (internal)",
              flush=True)
    return serve(settings)
