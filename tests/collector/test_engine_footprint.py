"""The embedded engine's share of the collector's memory: its caches are capped for an embedded store, and the
library pages that only its start touched are given back (:mod:`inferwatch_collector.library_pages`)."""

from __future__ import annotations

import sys

import pytest
from inferwatch_collector.library_pages import CHDB_LIBRARY, read_only_mappings, release_library_pages
from inferwatch_collector.rows import LLM_CALL_COLUMNS
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import CAPPED_CACHES, Store

from tests.helpers.factories import llm_call


def test_the_engines_caches_are_capped_by_the_setting(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "data", clickhouse_url="", cluster="", database="inferwatch",
                        chdb_cache_mib=64)
    store = Store.open(settings)
    try:
        rows = store.query("SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)}",
                           parameters={"names": list(CAPPED_CACHES)}).result_rows
    finally:
        store.close()
    assert dict(rows) == {name: str(64 * 1024 * 1024) for name in CAPPED_CACHES}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise(MADV_PAGEOUT) is Linux's")
def test_the_engines_start_up_pages_are_released_and_it_keeps_working(store: Store) -> None:
    mappings = read_only_mappings(CHDB_LIBRARY)
    assert mappings and all(start < end for start, end in mappings)
    with open("/proc/self/maps") as f:
        writable = [line for line in f if line.rstrip().endswith(CHDB_LIBRARY) and line.split()[1][1] == "w"]
    assert writable  # the library has writable mappings too, and they are not among those released
    assert not {(int(line.split("-")[0], 16)) for line in writable} & {start for start, _ in mappings}

    assert release_library_pages() > 0
    assert release_library_pages("no-such-library.so") == 0

    store.insert_columns("llm_calls", [list(c) for c in zip(llm_call(model="gpt-4o"))], LLM_CALL_COLUMNS)
    assert store.query("SELECT model FROM llm_calls").result_rows == [("gpt-4o",)]
