"""``inferwatch-server``: the composition root that starts and manages the platform.

Subcommands here: ``up`` (embedded platform: migrate, demo keys, collector, dashboard, optional demo app),
``collector``, ``dashboard``, ``migrate``, ``keys``, ``demo`` (OTLP traffic generator), ``config`` (every setting
with its env var), ``prices`` (import a LiteLLM price file, show or list prices). The modules beside the code they
run register the rest (``register(sub)``): ``costs``, ``report``, ``whatif``, ``budgets``, ``scheduler``,
``alerts``, ``experiments``, ``plan``, ``doctor``, ``forget``.
Settings come from ``INFERWATCH_*`` variables; ``--data-dir`` overrides ``INFERWATCH_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .settings import Settings

if TYPE_CHECKING:
    from .cost.price_table import ModelPrice, PriceTable, Rates

log = logging.getLogger("inferwatch")

DEMO_PROJECT = "demo"


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "port", None):
        overrides["port"] = args.port
    return Settings(**overrides)


def _open_store(settings: Settings):
    from .store import Store

    return Store.open(settings)


# --- migrate -------------------------------------------------------------------------------------------------
def cmd_migrate(args: argparse.Namespace) -> int:
    from .migrations import migrate, status, target_for

    settings = _settings(args)
    store = _open_store(settings)
    try:
        target = target_for(settings, store)
        if args.status:
            for row in status(store):
                print(row)
            return 0
        print(f"migrating {settings.database} ({target.mode}) ...", flush=True)
        applied = migrate(store, target, progress=lambda msg: print(f"  {msg}", flush=True))
        print(f"done: {len(applied)} migration(s) applied" if applied else "done: schema is up to date")
        return 0
    finally:
        store.close()


# --- keys ----------------------------------------------------------------------------------------------------
def cmd_keys(args: argparse.Namespace) -> int:
    from .auth import KeyStore
    from .migrations import migrate, target_for

    settings = _settings(args)
    store = _open_store(settings)
    try:
        migrate(store, target_for(settings, store))
        keys = KeyStore(store, cache_seconds=0)
        if args.keys_command == "create":
            key = keys.create_key(args.project, args.scope, args.name or "")
            print(f"created a key for project {args.project!r} with scopes {', '.join(args.scope)}.", file=sys.stderr)
            print("Store it now: it is shown only once.", file=sys.stderr)
            print(key)
        elif args.keys_command == "list":
            for info in keys.list_keys(args.project):
                state = "revoked" if info.revoked else "active"
                print(f"{info.key_id}  {info.project_id:20} {','.join(info.scopes):32} {state:8} "
                      f"{info.created_at}  {info.name}")
        elif args.keys_command == "revoke":
            if not keys.revoke(args.key_id):
                print(f"no key with id {args.key_id}", file=sys.stderr)
                return 1
            print(f"revoked {args.key_id}")
        return 0
    finally:
        store.close()


# --- collector / up --------------------------------------------------------------------------------------------
def _serve(settings: Settings, on_ready=None, before_exit=None) -> int:
    """Serve until a signal; ``on_ready()`` once listening; ``before_exit()`` when the first signal comes, in a
    thread, before the shutdown begins (the collector still serves meanwhile; a second signal does not wait)."""
    import uvicorn

    from .app import create_app

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            nonlocal before_exit
            first, before_exit = before_exit, None
            if first is None:
                super().handle_exit(sig, frame)
                return

            def then_exit() -> None:
                try:
                    first()
                finally:
                    uvicorn.Server.handle_exit(self, sig, frame)

            threading.Thread(target=then_exit, name="inferwatch-before-exit", daemon=True).start()

    app = create_app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", access_log=False,
                            loop="uvloop", http="httptools", timeout_graceful_shutdown=10,
                            log_config=None)  # our handlers (logging_setup), not uvicorn's
    server = Server(config)
    if on_ready is not None:
        def watch() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.1)
            if server.started:
                on_ready()
        threading.Thread(target=watch, name="inferwatch-on-ready", daemon=True).start()
    server.run()
    return 0


def cmd_collector(args: argparse.Namespace) -> int:
    settings = _settings(args)
    print(f"inferwatch collector on http://{settings.host}:{settings.port} "
          f"({'embedded chDB at ' + str(settings.data_dir) if settings.embedded else settings.clickhouse_url})",
          flush=True)
    return _serve(settings)


def _demo_keys(settings: Settings) -> dict[str, str]:
    """Keys for the demo project, created once and kept beside the data directory (mode 0600).

    Only hashes are stored in the database, so the demo's plaintext keys must be kept somewhere for ``up`` to
    print them again; a file readable only by the user, next to the data it opens, is that place.
    """
    from .auth import AuthError, KeyStore
    from .migrations import migrate, target_for

    path = Path(settings.data_dir).expanduser().resolve().parent / "demo-keys.json"
    store = _open_store(settings)
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

    settings = _settings(args)
    keys = _demo_keys(settings)
    base = f"http://{settings.host}:{settings.port}"
    # The dashboard is a separate Streamlit process that reads this collector's API with the demo read key.
    local = settings.host if settings.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    ui = DashboardSettings()
    dashboard = launch.start(f"http://{local}:{settings.port}", [keys["read"]], host=ui.host, port=ui.port,
                             exact="port" in ui.model_fields_set)
    print(
        "\ninferwatch is starting (embedded ClickHouse)" if settings.embedded else "\ninferwatch is starting",
        f"\n  collector   {base}   (OTLP/HTTP: {base}/v1/traces)",
        f"\n  dashboard   {dashboard.url}",
        f"\n  API docs    {base}/docs",
        f"\n  data        {settings.data_dir if settings.embedded else settings.clickhouse_url}",
        f"\n  demo project '{DEMO_PROJECT}' keys:",
        f"\n    ingest    {keys['ingest']}",
        f"\n    read      {keys['read']}",
        f"\n    admin     {keys['admin']}",
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

    def start_traffic() -> None:
        # The demo app: the SDK around the real openai/anthropic clients, against a local mock LLM server.
        cmd = [sys.executable, "-m", "examples.demo_app", "--collector", base, "--key", keys["ingest"],
               "--rate", str(args.rate)]
        traffic.append(subprocess.Popen(cmd, cwd=_examples_root()))

    def stop_traffic() -> None:
        # on a signal, while the collector still serves: the demo app's last spans and feedback reach it as it
        # exits (SIGTERM: it flushes and stops); again after the collector stopped, for any other way out
        for proc in traffic:
            if proc.poll() is None:
                proc.terminate()
        for proc in traffic:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    try:
        return _serve(settings, on_ready=start_traffic if args.demo_traffic else None,
                      before_exit=stop_traffic if args.demo_traffic else None)
    finally:
        stop_traffic()
        dashboard.stop()


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Run the dashboard in the foreground against a running collector (``up`` starts one by itself)."""
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


def _examples_root() -> str:
    """The checkout that holds ``examples/`` (the demo generator is not part of the installed package)."""
    for candidate in (Path.cwd(), *Path(__file__).resolve().parents):
        if (candidate / "examples" / "demo_app.py").exists():
            return str(candidate)
    raise SystemExit("the demo (examples/demo_app.py, examples/traffic.py) was not found: run from a checkout")


def cmd_demo(args: argparse.Namespace) -> int:
    root = _examples_root()
    cmd = [sys.executable, "-m", "examples.traffic", "--url", args.url, "--key", args.key, "--rate", str(args.rate)]
    if args.duration:
        cmd += ["--duration", str(args.duration)]
    if args.with_content:
        cmd += ["--with-content"]
    return subprocess.call(cmd, cwd=root)


# --- config ----------------------------------------------------------------------------------------------------
def cmd_config(args: argparse.Namespace) -> int:
    print("| setting | env var | default | meaning |\n|---|---|---|---|")
    for name, field in Settings.model_fields.items():
        default = "(see meaning)" if field.default_factory is not None else repr(field.default)
        print(f"| `{name}` | `INFERWATCH_{name.upper()}` | `{default}` | {field.description} |")
    return 0


# --- prices ----------------------------------------------------------------------------------------------------
def _price_table(args: argparse.Namespace) -> PriceTable:
    """The table calls are priced with: bundled, plus ``--prices-file`` or the configured user price file."""
    from .cost.price_table import load_table

    user_file = args.prices_file or getattr(_settings(args), "prices_file", None)
    return load_table(user_file or None)


def _per_million(value: int, unit: int) -> str:
    """USD per 1M tokens of a compiled rate (``value × unit`` is 1e-18 USD per token), at least two decimals."""
    from decimal import Decimal

    text = f"{Decimal(value * unit).scaleb(-12):.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def _show_rates(price: ModelPrice, rates: Rates, tag: str | None) -> None:
    from .cost.price_table import CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H, OUTPUT, REASONING, tier_field

    def given(field: str) -> bool:
        return field in price.fields or (tag is not None and tier_field(field, tag) in price.fields)

    rows = [
        ("input", rates.input, None),
        ("cache read", rates.cache_read, None if given(CACHE_READ) else "input rate"),
        ("cache write (5 min)", rates.cache_write, None if given(CACHE_WRITE) else "input rate"),
        ("cache write (1 hour)", rates.cache_write_1h, None if given(CACHE_WRITE_1H) else "5-minute write rate"),
        ("output", rates.output, None if given(OUTPUT) else "0 for an embedding model"),
        ("reasoning", rates.reasoning, None if given(REASONING) else "output rate"),
    ]
    for label, value, default in rows:
        note = f"  (= {default}: not in the table)" if default else ""
        print(f"  {label:22} {_per_million(value, rates.unit):>12}{note}")


def cmd_prices(args: argparse.Namespace) -> int:
    from .cost.price_table import TIER_THRESHOLDS, import_litellm, load_table

    if args.prices_command == "import":
        result = import_litellm(args.file, args.out)
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(result.skipped.items()))
        print(f"imported {result.imported} models, skipped {result.skipped_total}"
              + (f" ({reasons})" if reasons else ""))
        table = load_table(result.out)
        print(f"wrote {result.out} (price_version with it: {table.version})")
        print(f"use it with INFERWATCH_PRICES_FILE={result.out}")
        return 0
    table = _price_table(args)
    if args.prices_command == "show":
        price = table.lookup(args.model)
        if price is None:
            print(f"no price for {args.model!r} in price_version {table.version}: its calls are stored unpriced",
                  file=sys.stderr)
            return 1
        print(f"model          {args.model}")
        provider = price.provider or "unknown provider"
        print(f"resolved to    {price.name} ({provider}, {price.mode}, {price.source})")
        print(f"price_version  {table.version}")
        print("USD per 1M tokens:")
        _show_rates(price, price.base, None)
        tags = {threshold: tag for tag, threshold in TIER_THRESHOLDS.items()}
        for threshold, rates in price.tiers:
            print(f"prompts above {threshold:,} tokens (input incl. cache), the whole call:")
            _show_rates(price, rates, tags[threshold])
        return 0
    provider = (args.provider or "").lower()
    prices = [p for _, p in sorted(table.models.items()) if not provider or p.provider.lower() == provider]
    print(f"price_version {table.version}: {len(prices)} of {len(table.models)} models, "
          f"{len(table.aliases)} aliases; USD per 1M tokens")
    print(f"{'model':58} {'provider':12} {'mode':10} {'input':>10} {'output':>10} {'cache read':>10}")
    for price in prices:
        rates = price.base
        tiers = "  (+ long-context tier)" if price.tiers else ""
        columns = (_per_million(rate, rates.unit) for rate in (rates.input, rates.output, rates.cache_read))
        print(f"{price.name:58} {price.provider:12} {price.mode:10} "
              + " ".join(f"{column:>10}" for column in columns) + tiers)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inferwatch-server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="embedded database directory (overrides INFERWATCH_DATA_DIR)")
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run the embedded platform: migrate, demo keys, collector, dashboard")
    up.add_argument("--host")
    up.add_argument("--port", type=int)
    up.add_argument("--demo-traffic", action="store_true",
                    help="also run the demo app (examples/demo_app.py: SDK + real clients + mock LLM) into it")
    up.add_argument("--rate", type=float, default=3.0, help="demo app, user interactions per second")
    up.set_defaults(func=cmd_up)

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

    col = sub.add_parser("collector", help="run the collector (ingest + query API)")
    col.add_argument("--host")
    col.add_argument("--port", type=int)
    col.set_defaults(func=cmd_collector)

    mig = sub.add_parser("migrate", help="apply pending ClickHouse migrations")
    mig.add_argument("--status", action="store_true", help="list migrations and their state instead")
    mig.set_defaults(func=cmd_migrate)

    keys = sub.add_parser("keys", help="manage projects' API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key (printed once)")
    create.add_argument("--project", required=True)
    create.add_argument("--scope", action="append", required=True,
                        choices=["ingest", "read", "prompts:read", "admin"], help="repeat for several scopes")
    create.add_argument("--name", help="a label for the key")
    lst = keys_sub.add_parser("list", help="list keys (never their secrets)")
    lst.add_argument("--project")
    rev = keys_sub.add_parser("revoke", help="revoke a key by its id")
    rev.add_argument("key_id")
    keys.set_defaults(func=cmd_keys)

    demo = sub.add_parser("demo", help="send generated LLM traffic to a running collector")
    demo.add_argument("--url", default="http://127.0.0.1:4318")
    demo.add_argument("--key", required=True, help="an ingest key")
    demo.add_argument("--rate", type=float, default=20.0, help="LLM calls per second")
    demo.add_argument("--duration", type=float, help="seconds (default: until interrupted)")
    demo.add_argument("--with-content", action="store_true", help="include prompt/completion text")
    demo.set_defaults(func=cmd_demo)

    cfg = sub.add_parser("config", help="print every setting, its env var and default")
    cfg.set_defaults(func=cmd_config)

    prices = sub.add_parser("prices", help="the price table: import LiteLLM prices, show or list prices")
    prices.add_argument("--prices-file", help="user price file laid over the bundled table (JSON or YAML)")
    prices_sub = prices.add_subparsers(dest="prices_command", required=True)
    imp = prices_sub.add_parser("import", help="convert LiteLLM's model_prices_and_context_window.json")
    imp.add_argument("file", help="a LiteLLM price file (JSON)")
    imp.add_argument("--out", default="inferwatch-prices.json", help="user price file to write")
    show = prices_sub.add_parser("show", help="how a model name resolves and what it is charged")
    show.add_argument("model")
    plist = prices_sub.add_parser("list", help="every priced model")
    plist.add_argument("--provider", help="only this provider (LiteLLM's name: openai, anthropic, gemini, ...)")
    prices.set_defaults(func=cmd_prices)
    # Commands that live beside the code they run (each module's register() adds its subcommands).
    from . import (
        alerts_cli,
        budgets_cli,
        costs_cli,
        doctor_cli,
        experiments_cli,
        forget_cli,
        planner_cli,
        reports_cli,
    )

    for module in (costs_cli, reports_cli, budgets_cli, alerts_cli, experiments_cli, planner_cli, doctor_cli,
                   forget_cli):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .logging_setup import configure_from_env

    configure_from_env()  # INFERWATCH_LOG_FORMAT (text | json), INFERWATCH_LOG_LEVEL
    args = build_parser().parse_args(argv)
    from .store import StoreError

    try:
        return args.func(args)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # bad project names, scopes, settings
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
