"""Shared fixtures: settings on a temporary embedded database, a migrated store on it, and the platform's app on
that store with keys for two projects.

chDB allows one data directory per process at a time, so every test that opens a store must close it (the
``store`` fixture does) before the next one opens another directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app
from tests.helpers.keys import Keys

pytest_plugins = ["tests.helpers.mock_llm_fixtures"]  # the mock LLM server and real provider clients on it


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Embedded-chDB settings in this test's own directory, independent of INFERWATCH_* in the environment."""
    return Settings(data_dir=tmp_path / "data", clickhouse_url="", cluster="", database="inferwatch",
                    migration_mode="auto", metrics_port=0)  # no /metrics listener (tests/helpers/metrics.py)


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    """An open store with every migration applied; closed after the test."""
    opened = Store.open(settings)
    try:
        migrate(opened, target_for(settings, opened))
        yield opened
    finally:
        opened.close()


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
    """The platform's app (the server's factory: every package's routers; lifespan run: writer started,
    migrations checked) on the test's store.

    After each trace export it settles the pairing window (``call_pairing.settle_all``), so a test reads the rows
    of what it sent at once; LLM spans from other libraries still take the held path (llm_calls_held, pairing,
    merge). Tests of the window itself use ``unsettled_client``."""
    app = create_app(app_settings, store=store)

    def settle(response) -> None:
        if response.request.url.path.endswith("/v1/traces") and response.status_code == 200:
            app.state.call_pairing.settle_all()

    with TestClient(app) as test_client:
        test_client.event_hooks["response"].append(settle)
        yield test_client


@pytest.fixture
def unsettled_client(app_settings: Settings, store: Store, keys: Keys) -> Iterator[TestClient]:
    """Like ``client``, but the pairing window runs on its own clock: held LLM rows appear after
    ``pairing_window_s`` (or ``app.state.call_pairing.settle_all()``)."""
    with TestClient(create_app(app_settings, store=store)) as test_client:
        yield test_client


@pytest.fixture(scope="session", autouse=True)
def _sdk_stopped_at_the_end() -> Iterator[None]:
    """No SDK export thread outlives the session (it would log into pytest's closed streams)."""
    yield
    import inferwatch

    inferwatch.shutdown()
