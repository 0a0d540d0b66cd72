"""Shared fixtures: settings on a temporary embedded database, and a migrated store on it.

chDB allows one data directory per process at a time, so every test that opens a store must close it (the
``store`` fixture does) before the next one opens another directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

pytest_plugins = ["tests.helpers.mock_llm_fixtures"]  # the mock LLM server and real provider clients on it


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Embedded-chDB settings in this test's own directory, independent of INFERWATCH_* in the environment."""
    return Settings(data_dir=tmp_path / "data", clickhouse_url="", cluster="", database="inferwatch",
                    migration_mode="auto")


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    """An open store with every migration applied; closed after the test."""
    opened = Store.open(settings)
    try:
        migrate(opened, target_for(settings, opened))
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="session", autouse=True)
def _sdk_stopped_at_the_end() -> Iterator[None]:
    """No SDK export thread outlives the session (it would log into pytest's closed streams)."""
    yield
    import inferwatch

    inferwatch.shutdown()
