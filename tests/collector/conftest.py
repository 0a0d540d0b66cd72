"""Collector fixtures: the platform's app on the test's own embedded database, with keys for two projects."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app


@dataclass
class Keys:
    """Keys of project p1 (one per scope set) and an all-scopes key of project p2."""

    ingest: str
    read: str
    prompts: str
    admin: str
    other_project: str

    @staticmethod
    def header(key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def app_settings(settings: Settings) -> Settings:
    """Fast flushes so tests do not wait a second per request; ingest in-process (one test covers workers)."""
    return settings.model_copy(update={"flush_interval_s": 0.02, "ingest_workers": 0})


@pytest.fixture
def keys(store: Store) -> Keys:
    ks = KeyStore(store, cache_seconds=0)
    return Keys(
        ingest=ks.create_key("p1", ["ingest"]),
        read=ks.create_key("p1", ["read"]),
        prompts=ks.create_key("p1", ["read", "prompts:read"]),
        admin=ks.create_key("p1", ["admin"]),
        other_project=ks.create_key("p2", ["ingest", "read", "admin"]),
    )


@pytest.fixture
def client(app_settings: Settings, store: Store, keys: Keys) -> Iterator[TestClient]:
    """The platform's app (the server's factory: every router; lifespan run: writer started, migrations
    checked) on the test's store."""
    app = create_app(app_settings, store=store)
    with TestClient(app) as test_client:
        yield test_client
