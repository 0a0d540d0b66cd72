"""A migrated embedded store of its own, for test modules that build one data set and read it many times."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store


@contextmanager
def built_store(data_dir: Path, build: Callable[[Store], None]) -> Iterator[Store]:
    """A fresh chDB store in ``data_dir`` with every migration, filled by ``build``; closed on exit."""
    settings = Settings(data_dir=data_dir, clickhouse_url="", cluster="", database="inferwatch",
                        migration_mode="auto")
    opened = Store.open(settings)
    try:
        migrate(opened, target_for(settings, opened))
        build(opened)
        yield opened
    finally:
        opened.close()
