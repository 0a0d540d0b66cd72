"""``inferwatch-server up``: the embedded platform in one command.

Migrates, creates (or reuses) the demo project's keys, starts the dashboard as a separate Streamlit process
reading this collector's API, serves the collector (with the embedded scheduler), and with ``--demo-traffic``
first populates the demo project with weeks of history, an experiment, a budget and past alerts
(:mod:`..demo_history`, once per data directory), then runs the demo app (``examples/demo_app.py``: the SDK around
real clients, against a mock LLM) into it and, unless a rules file of the user's is configured, delivers the
alerts to a local receiver (:mod:`..demo_alerts`).

Ctrl-C (SIGINT to the terminal's whole process group) and SIGTERM stop everything in order and exit 0: the child
processes have process groups of their own and the ingest workers ignore SIGINT, so only this process reacts to
the signal; it stops each service itself and prints one line per service as it stops.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from inferwatch_alerts.rules.files import RULES_FILE_ENV
from inferwatch_collector.settings import Settings

from ..demo_alerts import DemoAlerts, start_demo_alerts
from ..demo_history import populate
from ..serve import serve
from .common import open_store, settings_from
from .demo import examples_root

DEMO_PROJECT = "demo"
#: The demo app's interactions/s after the history: ~0.25 LLM calls/s, the history's daytime pace (its mean is
#: 0.1/s), so the live traffic does not look like a tenfold cost spike against it.
LIVE_RATE_WITH_HISTORY = 0.3


def register(sub: Any) -> None:
    """Add ``up`` to the ``inferwatch-server`` parser."""
    up = sub.add_parser("up", help="run the embedded platform: migrate, demo keys, collector, dashboard")
    up.add_argument("--host")
    up.add_argument("--port", type=int)
    up.add_argument("--metrics-port", type=int, help="port of the internal Prometheus /metrics listener (0 = none)")
    up.add_argument("--demo-traffic", action="store_true",
                    help="also run the demo app (examples/demo_app.py: SDK + real clients + mock LLM) into it")
    up.add_argument("--rate", type=float,
                    help="demo app, user interactions per second (default: 3, or with the history "
                         f"{LIVE_RATE_WITH_HISTORY:g}, the history's own pace, so the live traffic continues it)")
    up.add_argument("--no-history", action="store_true",
                    help="with --demo-traffic: no weeks of simulated history before the live traffic")
    up.set_defaults(func=cmd_up)


def demo_keys(settings: Settings) -> dict[str, str]:
    """Keys for the demo project, created once and kept beside the data directory (mode 0600).

    Only hashes are stored in the database, so the demo's plaintext keys must be kept somewhere for ``up`` to
    print them again; a file readable only by the user, next to the data it opens, is that place.
    """
    from inferwatch_collector.auth import AuthError, KeyStore
    from inferwatch_collector.migrations import migrate, target_for

    path = Path(settings.data_dir).expanduser().resolve().parent / "demo-keys.json"
    store = open_store(settings)
    try:
        print(f"migrating {settings.database} ...", flush=True)
        migrate(store, target_for(settings, store), progress=lambda msg: print(f"  {msg}", flush=True))
        keys = KeyStore(store, cache_seconds=0)
        saved: dict[str, str] = {}
        if path.exists():
            saved = json.loads(path.read_text())
            try:
                for key in saved.values():
                    keys.authenticate(key)
            except AuthError:
                saved = {}
        if not saved:
            saved = {
                "ingest": keys.create_key(DEMO_PROJECT, ["ingest"], "demo ingest"),
                "read": keys.create_key(DEMO_PROJECT, ["read", "prompts:read"], "demo read"),
                "admin": keys.create_key(DEMO_PROJECT, ["admin"], "demo admin"),
            }
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(saved, indent=2))
            path.chmod(0o600)
        return saved
    finally:
        store.close()


def cmd_up(args: argparse.Namespace) -> int:
    from inferwatch_dashboard import launch
    from inferwatch_dashboard.settings import DashboardSettings

    settings = settings_from(args)
    if "api_docs" not in settings.model_fields_set:  # the local try-out shows its API docs unless told not to
        settings = settings.model_copy(update={"api_docs": True})
    keys = demo_keys(settings)
    base = f"http://{settings.host}:{settings.port}"
    alerts = demo_alerts(settings) if args.demo_traffic else None
    if alerts is not None:
        settings = settings.model_copy(update={"alert_rules_file": alerts.rules_file})
    # The dashboard is a separate Streamlit process that reads this collector's API with the demo read key.
    local = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    ui = DashboardSettings()
    dashboard = launch.start(f"http://{local}:{settings.port}", [keys["read"]], host=ui.host, port=ui.port,
                             exact="port" in ui.model_fields_set, own_process_group=True)
    print(
        "\ninferwatch is starting (embedded ClickHouse)" if settings.embedded else "\ninferwatch is starting",
        f"\n  collector   {base}   (OTLP/HTTP: {base}/v1/traces)",
        f"\n  dashboard   {dashboard.url}",
        f"\n  API docs    {base}/docs" if settings.api_docs else "",
        f"\n  metrics     http://{settings.metrics_host}:{settings.metrics_port}/metrics"
        if settings.metrics_port else "",
        f"\n  data        {settings.data_dir if settings.embedded else settings.clickhouse_url}",
        f"\n  demo project '{DEMO_PROJECT}' keys:",
        f"\n    ingest    {keys['ingest']}",
        f"\n    read      {keys['read']}",
        f"\n    admin     {keys['admin']}",
        f"\n  alerts      {', '.join(alerts.channels)} -> local receiver (rules: {alerts.rules_file})"
        if alerts is not None else "",
        f"\n              {alerts.note}" if alerts is not None and alerts.note else "",
        f"\n  try:  curl -H 'Authorization: Bearer {keys['read']}' {base}/api/v1/calls/summary\n",
        flush=True,
    )
    traffic: list[subprocess.Popen] = []

    def watch_dashboard() -> None:
        try:
            dashboard.wait_ready(120)
        except RuntimeError as exc:
            print(f"dashboard: {exc}; the collector keeps running", file=sys.stderr, flush=True)
        else:
            print(f"dashboard ready: {dashboard.url}", flush=True)

    threading.Thread(target=watch_dashboard, name="inferwatch-dashboard-ready", daemon=True).start()

    history: list[subprocess.Popen] = []  # the backfill's child process, while it runs
    stopping = threading.Event()
    lock = threading.Lock()

    def start_traffic(app: Any) -> None:
        # weeks of history first (once per data directory), so every page has data; then the live demo app
        if not args.no_history:
            try:
                populate(app.state.store, app.state.scheduler, base, keys, examples_root(), DEMO_PROJECT, history,
                         say=lambda line: print(line, flush=True))
            except Exception as exc:  # the live demo still starts: a failed backfill is not a failed platform
                if not stopping.is_set():
                    print(f"history: {exc}; starting the live traffic without it", file=sys.stderr, flush=True)
        # The demo app: the SDK around the real openai/anthropic clients, against a local mock LLM server.
        rate = args.rate or (3.0 if args.no_history else LIVE_RATE_WITH_HISTORY)
        cmd = [sys.executable, "-m", "examples.demo_app", "--collector", base, "--key", keys["ingest"],
               "--rate", str(rate)]
        with lock:
            if stopping.is_set():
                return
            # its own process group: a Ctrl-C reaches only this process, which stops the app (stop_traffic)
            traffic.append(subprocess.Popen(cmd, cwd=examples_root(), process_group=0))

    def stop_traffic() -> None:
        # on a signal, while the collector still serves: the demo app's last spans and feedback reach it as it
        # exits (SIGTERM: it flushes and stops); again after the collector stopped, for any other way out
        with lock:
            stopping.set()
        for proc in history:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(20)
                print("history backfill stopped", flush=True)
        for proc in traffic:
            if proc.poll() is None:
                proc.terminate()
        for proc in traffic:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    try:
        return serve(settings, on_ready=start_traffic if args.demo_traffic else None,
                     before_exit=stop_traffic if args.demo_traffic else None)
    finally:
        stop_traffic()
        dashboard.stop()
        print("dashboard stopped", flush=True)
        if alerts is not None:
            alerts.stop()
            print(f"alert receiver stopped ({len(alerts.receiver.received)} deliveries)", flush=True)


def demo_alerts(settings: Settings) -> DemoAlerts | None:
    """The demo's alert receiver and channels (see :mod:`..demo_alerts`), unless the user configured a rules file
    (their channels are theirs). The channels' settings reach the scheduler through this process's environment."""
    if settings.alert_rules_file is not None or os.environ.get(RULES_FILE_ENV):
        return None
    alerts = start_demo_alerts(Path(settings.data_dir).expanduser().resolve().parent)
    os.environ.update(alerts.env)
    return alerts
