"""``inferwatch-server migrate [--status]``: apply pending ClickHouse migrations, or list their state.

With ``INFERWATCH_RUNTIME_USER`` set (a ClickHouse server), it then creates or updates that user with the
runtime grants (``inferwatch_collector.db_users``): ``migrate`` runs as the migration (DDL) user, the services
as the runtime one.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import open_store, settings_from


def register(sub: Any) -> None:
    """Add ``migrate`` to the ``inferwatch-server`` parser."""
    mig = sub.add_parser("migrate", help="apply pending ClickHouse migrations")
    mig.add_argument("--status", action="store_true", help="list migrations and their state instead")
    mig.set_defaults(func=cmd_migrate)


def cmd_migrate(args: argparse.Namespace) -> int:
    from inferwatch_collector.db_users import ensure_runtime_user, grants_of, runtime_user_from
    from inferwatch_collector.migrations import migrate, status, target_for

    settings = settings_from(args)
    runtime_user = runtime_user_from(settings)  # a bad name or short password stops here, before any DDL
    store = open_store(settings)
    try:
        target = target_for(settings, store)
        if args.status:
            for row in status(store):
                print(row)
            return 0
        print(f"migrating {settings.database} ({target.mode}) ...", flush=True)
        applied = migrate(store, target, progress=lambda msg: print(f"  {msg}", flush=True))
        print(f"done: {len(applied)} migration(s) applied" if applied else "done: schema is up to date")
        if runtime_user is not None:
            if settings.embedded:
                print("note: INFERWATCH_RUNTIME_USER ignored: embedded chDB has no users (one process owns "
                      "the data directory)")
            else:
                ensure_runtime_user(store, target, runtime_user)
                print(f"runtime user {runtime_user.name}: GRANT {', '.join(grants_of(target))}", flush=True)
        return 0
    finally:
        store.close()
