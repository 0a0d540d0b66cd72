"""A real collector on 127.0.0.1 (uvicorn in a thread, its own embedded database) with seeded traffic.

Package-scoped: the dashboard tests share one collector, torn down (server stopped, chDB closed) before the
next package runs, since a process may hold only one chDB data directory at a time.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI

from inferwatch_collector.app import create_app
from inferwatch_collector.auth import KeyStore
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.routes import dashboard as dashboard_routes
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from tests.helpers import seed

try:  # the alerting API, where this checkout has it (the Alerts page must work with and without it)
    from inferwatch_collector.routes import alerts as ALERTS_API
except ImportError:  # pragma: no cover - depends on the checkout
    ALERTS_API = None

try:  # the experiments API, where this checkout has it
    from inferwatch_collector.routes import experiments as EXPERIMENTS_API
except ImportError:  # pragma: no cover - depends on the checkout
    EXPERIMENTS_API = None

APP_FILE = Path(__file__).resolve().parents[2] / "dashboard" / "inferwatch_dashboard" / "app.py"


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


def with_dashboard_api(app: FastAPI) -> FastAPI:
    """The dashboard's routes and the alerts and experiments APIs, unless the app already mounts them."""
    paths = set(app.openapi()["paths"])
    app.openapi_schema = None  # rebuilt with the routers added below
    if "/api/v1/dashboard/whoami" not in paths:
        app.include_router(dashboard_routes.router)
    if ALERTS_API is not None and "/api/v1/alerts" not in paths:
        app.include_router(ALERTS_API.router)
    if EXPERIMENTS_API is not None and "/api/v1/experiments" not in paths:
        app.include_router(EXPERIMENTS_API.router)
    return app


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


@pytest.fixture(scope="package")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("dashboard") / "data", clickhouse_url="", cluster="",
                        database="inferwatch", migration_mode="auto", flush_interval_s=0.05, ingest_workers=0,
                        collector_scheduler="off")
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
        app = with_dashboard_api(create_app(settings, store=store, run_migrations=False))
        with ServerThread(app) as url:
            yield Collector(url, key, read_only, empty, rows)
    finally:
        store.close()
