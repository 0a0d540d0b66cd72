"""``inferwatch-server``: the composition root that starts and manages the platform.

Subcommands: ``up`` (embedded platform: migrate, demo keys, collector, optional demo traffic), ``collector``,
``migrate``, ``keys``, ``demo`` (traffic generator), ``config`` (every setting with its env var).
Settings come from ``INFERWATCH_*`` variables; ``--data-dir`` overrides ``INFERWATCH_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Sequence

from .settings import Settings

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
def _serve(settings: Settings, on_ready=None) -> int:
    import uvicorn

    from .app import create_app

    app = create_app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", access_log=False,
                            loop="uvloop", http="httptools", timeout_graceful_shutdown=10)
    server = uvicorn.Server(config)
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
    settings = _settings(args)
    keys = _demo_keys(settings)
    base = f"http://{settings.host}:{settings.port}"
    print(
        "\ninferwatch is starting (embedded ClickHouse)" if settings.embedded else "\ninferwatch is starting",
        f"\n  collector   {base}   (OTLP/HTTP: {base}/v1/traces)",
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

    def start_traffic() -> None:
        cmd = [sys.executable, "-m", "examples.traffic", "--url", base, "--key", keys["ingest"],
               "--rate", str(args.rate)]
        print(f"demo traffic: {args.rate} LLM calls/s into project '{DEMO_PROJECT}'", flush=True)
        traffic.append(subprocess.Popen(cmd, cwd=_examples_root()))

    try:
        return _serve(settings, on_ready=start_traffic if args.demo_traffic else None)
    finally:
        for proc in traffic:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def _examples_root() -> str:
    """The checkout that holds ``examples/`` (the demo generator is not part of the installed package)."""
    for candidate in (Path.cwd(), *Path(__file__).resolve().parents):
        if (candidate / "examples" / "traffic.py").exists():
            return str(candidate)
    raise SystemExit("the demo traffic generator (examples/traffic.py) was not found: run from a checkout")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inferwatch-server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="embedded database directory (overrides INFERWATCH_DATA_DIR)")
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run the embedded platform: migrate, demo keys, collector")
    up.add_argument("--host")
    up.add_argument("--port", type=int)
    up.add_argument("--demo-traffic", action="store_true", help="also feed generated traffic into it")
    up.add_argument("--rate", type=float, default=20.0, help="demo traffic, LLM calls per second")
    up.set_defaults(func=cmd_up)

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=os.environ.get("INFERWATCH_LOG_LEVEL", "INFO").upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
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
