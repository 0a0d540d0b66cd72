"""``inferwatch-server dashboard``: the Streamlit dashboard in the foreground against a running collector."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    """Add ``dashboard`` to the ``inferwatch-server`` parser."""
    dash = sub.add_parser("dashboard", help="run the Streamlit dashboard against a collector's query API")
    dash.add_argument("--api", help="collector URL (default: INFERWATCH_DASHBOARD_API_URL, else "
                                    "http://127.0.0.1:4318)")
    dash.add_argument("--key", action="append",
                      help="read key (with prompts:read to show prompt text); repeat for several projects "
                           "(default: INFERWATCH_DASHBOARD_API_KEY)")
    dash.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    dash.add_argument("--port", type=int,
                      help="port (default: INFERWATCH_DASHBOARD_PORT, else 8501, or a free one if 8501 is taken)")
    dash.set_defaults(func=cmd_dashboard)


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Run the dashboard until it exits (``up`` starts one by itself)."""
    from inferwatch_dashboard import launch
    from inferwatch_dashboard.settings import DashboardSettings

    ui = DashboardSettings()
    keys = args.key or ui.keys
    if not keys:
        print("error: give a read key with --key (or set INFERWATCH_DASHBOARD_API_KEY)", file=sys.stderr)
        return 2
    api = (args.api or ui.api_url).rstrip("/")
    port, exact = (args.port, True) if args.port is not None else (ui.port, "port" in ui.model_fields_set)
    dashboard = launch.start(api, keys, host=args.host or ui.host, port=port, exact=exact)
    print(f"inferwatch dashboard on {dashboard.url}  (reading {api})", flush=True)
    try:
        return dashboard.process.wait()
    finally:
        dashboard.stop()
