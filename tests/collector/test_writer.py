"""Group-commit writer against the real embedded ClickHouse."""

from __future__ import annotations

import threading

import pytest

from inferwatch_collector.native import encode_rows
from inferwatch_collector.writer import BatchWriter, QueueFull, WriteFailed

from tests.helpers.factories import llm_call


def encoded_calls(n: int) -> dict:
    """One request's worth of LLM-call rows, encoded as the ingest pool hands them to the writer."""
    return {"llm_calls": encode_rows("llm_calls", [llm_call() for _ in range(n)])}


def _count(store, table: str = "llm_calls") -> int:
    return store.query(f"SELECT count() FROM {table}").result_rows[0][0]


def _rollup_calls(store, table: str) -> int:
    return store.query(f"SELECT sum(calls) FROM {table}").result_rows[0][0]


def make_writer(store, **kwargs) -> BatchWriter:
    opts = dict(flush_rows=10_000, flush_interval_s=0.05, retries=3, retry_backoff_s=0.01)
    opts.update(kwargs)
    return BatchWriter(store.insert_native, **opts)


def test_many_requests_share_one_insert_and_all_land(store):
    writer = make_writer(store, flush_interval_s=0.5)
    writer.start()
    try:
        futures = [writer.submit(encoded_calls(50)) for _ in range(20)]
        for f in futures:
            f.result(timeout=30)
    finally:
        writer.stop()
    assert _count(store) == 1000
    assert writer.stats.batches == 1  # group commit: 20 requests, one insert
    assert _rollup_calls(store, "llm_calls_1m") == 1000


def test_request_is_acknowledged_only_after_commit(store):
    gate = threading.Event()

    def slow_insert(table, data, names, settings):
        gate.wait(10)
        store.insert_native(table, data, names, settings)

    writer = BatchWriter(slow_insert, flush_rows=1, flush_interval_s=0.01)
    writer.start()
    try:
        future = writer.submit(encoded_calls(1))
        assert not future.done() and _count(store) == 0
        gate.set()
        future.result(timeout=10)
        assert _count(store) == 1
    finally:
        writer.stop()


def test_insert_retried_after_lost_reply_lands_once(store):
    """The insert succeeds but its reply is lost: the retry carries the same dedup token and lands nothing."""
    calls = {"n": 0}

    def insert_then_fail(table, data, names, settings):
        store.insert_native(table, data, names, settings)
        calls["n"] += 1
        if calls["n"] <= 2:
            raise ConnectionError("reply lost")

    writer = BatchWriter(insert_then_fail, flush_rows=1, flush_interval_s=0.01, retries=3, retry_backoff_s=0.01)
    writer.start()
    try:
        writer.submit(encoded_calls(25)).result(timeout=10)
    finally:
        writer.stop()
    assert calls["n"] == 3
    assert _count(store) == 25
    for rollup in ("llm_calls_1m", "llm_calls_1h", "usage_1h"):
        assert _rollup_calls(store, rollup) == 25
    assert writer.stats.insert_retries == 2


def test_failure_after_all_retries_fails_the_request_and_keeps_serving(store):
    fail = {"on": True}

    def flaky(table, data, names, settings):
        if fail["on"]:
            raise ConnectionError("database down")
        store.insert_native(table, data, names, settings)

    writer = BatchWriter(flaky, flush_rows=1, flush_interval_s=0.01, retries=1, retry_backoff_s=0.01)
    writer.start()
    try:
        with pytest.raises(WriteFailed):
            writer.submit(encoded_calls(1)).result(timeout=10)
        fail["on"] = False
        writer.submit(encoded_calls(1)).result(timeout=10)  # the thread survived
    finally:
        writer.stop()
    assert _count(store) == 1
    assert writer.stats.insert_failures == 1


def test_queue_bound_rejects_instead_of_growing(store):
    gate = threading.Event()

    def blocked(table, data, names, settings):
        gate.wait(10)
        store.insert_native(table, data, names, settings)

    writer = BatchWriter(blocked, flush_rows=1, flush_interval_s=0.01, max_queue_rows=100)
    writer.start()
    try:
        first = writer.submit(encoded_calls(80))
        with pytest.raises(QueueFull) as info:
            writer.submit(encoded_calls(30))
        assert info.value.retry_after_s >= 1
        assert writer.stats.rejected_queue_full == 1
        gate.set()
        first.result(timeout=10)
        writer.submit(encoded_calls(30)).result(timeout=10)  # room again
    finally:
        writer.stop()
    assert _count(store) == 110


def test_stop_flushes_what_is_queued(store):
    writer = make_writer(store, flush_interval_s=60)  # would never flush on its own within the test
    writer.start()
    future = writer.submit(encoded_calls(7))
    writer.stop()
    assert future.done() and future.exception() is None
    assert _count(store) == 7


def test_empty_batch_resolves_without_insert(store):
    writer = make_writer(store)
    writer.start()
    try:
        assert writer.submit({"llm_calls": encode_rows("llm_calls", [])}).result(timeout=1) is None
    finally:
        writer.stop()
    assert writer.stats.batches == 0
