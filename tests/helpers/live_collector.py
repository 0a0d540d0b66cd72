"""A real collector on 127.0.0.1 (uvicorn in a thread, its own embedded database) with the dashboard's seeded
traffic: what the dashboard tests and the dashboard API tests read over HTTP.

The caller picks the app factory (the collector's own, or the server's full app) and the fixture scope; the
database stays open while the collector runs, so no other store may be opened meanwhile (one chDB directory
per process).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from tests.helpers import seed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Collector:
    url: str
    key: str  # p1: read + prompts:read
    read_only_key: str  # p1: read
    empty_key: str  # p-empty: read, a project without traffic
    rows: dict[str, list]
    store: Store  # the collector's database, for tests that add projects of their own


class ServerThread:
    """uvicorn serving ``app`` on a free 127.0.0.1 port in a daemon thread."""

    def __init__(self, app: FastAPI) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="collector-under-test", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the collector under test did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@contextmanager
def seeded_collector(data_dir: Path, create_app: Callable[..., FastAPI]) -> Iterator[Collector]:
    """``create_app(settings, store=..., run_migrations=False)`` served on ``data_dir``, seeded (calls, alerts, an
    experiment), with read keys; the server stopped and the database closed on exit."""
    settings = Settings(data_dir=data_dir, clickhouse_url="", cluster="", database="inferwatch",
                        migration_mode="auto", flush_interval_s=0.05, ingest_workers=0, collector_scheduler="off")
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
        keys = KeyStore(store, cache_seconds=0)
        key = keys.create_key("p1", ["read", "prompts:read"])
        read_only = keys.create_key("p1", ["read"])
        empty = keys.create_key("p-empty", ["read"])
        rows = seed.seed(store)
        seed.seed_alerts(store)
        seed.seed_experiment(store)
        app = create_app(settings, store=store, run_migrations=False)
        with ServerThread(app) as url:
            yield Collector(url, key, read_only, empty, rows, store)
    finally:
        store.close()
