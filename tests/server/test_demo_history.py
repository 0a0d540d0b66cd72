"""The demo's history is written once per data directory: :func:`inferwatch_server.demo_history.populate` sees
calls older than a day and starts no backfill (the full run, backfill and pages, is the browser test's
``test_demo_starts_on_a_populated_project``)."""

from __future__ import annotations

import subprocess

from inferwatch_collector.store import Store
from inferwatch_server.demo_history import history_calls, populate
from tests.helpers.seed import seed


def test_history_counts_only_calls_older_than_a_day_of_that_project(store: Store) -> None:
    assert history_calls(store, "p1") == 0
    rows = seed(store, "p1")  # calls of the last hours, and the same a day earlier
    assert history_calls(store, "p1") == len(rows["previous"])
    assert history_calls(store, "p2") == 0


def test_a_second_start_does_not_backfill_again(store: Store) -> None:
    seed(store, "p1")
    children: list[subprocess.Popen] = []
    lines: list[str] = []
    # an unreachable collector and no checkout: a backfill attempt would fail loudly
    done = populate(store, None, "http://127.0.0.1:9", {"ingest": "-", "admin": "-"}, "/nonexistent", "p1",
                    children, say=lines.append)
    assert not done.backfilled and done.calls_before > 0
    assert children == []
    assert "no backfill" in lines[0]
