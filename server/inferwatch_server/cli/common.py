"""What the verbs share: settings from the global options, and a store opened on them.

Verbs that open the store directly need, on the embedded database, the collector stopped (one process per chDB
directory); against a running collector the HTTP API does the same work.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inferwatch_collector.settings import Settings

if TYPE_CHECKING:
    from inferwatch_collector.store import Store


def settings_from(args: argparse.Namespace) -> Settings:
    """``INFERWATCH_*`` settings with the command line's ``--data-dir`` (global), ``--host``, ``--port`` and
    ``--metrics-port``."""
    overrides: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    if getattr(args, "host", None):
        overrides["host"] = args.host
    if getattr(args, "port", None):
        overrides["port"] = args.port
    if getattr(args, "metrics_port", None) is not None:
        overrides["metrics_port"] = args.metrics_port
    return Settings(**overrides)


def open_store(settings: Settings) -> Store:
    """The configured store, opened (the caller closes it)."""
    from inferwatch_collector.store import Store

    return Store.open(settings)


def open_migrated(settings: Settings) -> Store:
    """The configured store with pending migrations applied; closed again if migrating fails."""
    from inferwatch_collector.migrations import migrate, target_for

    store = open_store(settings)
    try:
        migrate(store, target_for(settings, store))
    except Exception:
        store.close()
        raise
    return store
