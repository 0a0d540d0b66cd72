"""Group-commit writer against the real embedded ClickHouse."""

from __future__ import annotations

import threading
import time

import pytest

from inferwatch_collector.native import encode_rows
from inferwatch_collector.writer import BatchWriter, QueueFull, WriteFailed

from tests.helpers.factories import llm_call, span


def encoded_calls(n: int) -> dict:
    """One request's worth of LLM-call rows, encoded as the ingest pool hands them to the writer."""
    return {"llm_calls": encode_rows("llm_calls", [llm_call() for _ in range(n)])}


def _count(store, table: str = "llm_calls") -> int:
    return store.query(f"SELECT count() FROM {table}").result_rows[0][0]


def _rollup_calls(store, table: str) -> int:
    return store.query(f"SELECT sum(calls) FROM {table}").result_rows[0][0]


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


def make_writer(store, **kwargs) -> BatchWriter:
    opts = dict(flush_rows=10_000, flush_interval_s=0.05, retries=3, retry_backoff_s=0.01)
    opts.update(kwargs)
    return BatchWriter(store.insert_native, **opts)


def test_requests_arriving_during_an_insert_share_the_next_one_and_all_land(store):
    gate = threading.Event()

    def held_insert(table, data, names, settings):
        gate.wait(10)
        store.insert_native(table, data, names, settings)

    writer = BatchWriter(held_insert, flush_rows=10_000, flush_interval_s=5.0, min_insert_interval_s=0)
    writer.start()
    try:
        first = writer.submit(encoded_calls(50))  # the writer is free: inserted at once (held at the gate)
        wait_until(lambda: writer.pending_rows == 50 and not writer._queued_rows)
        later = [writer.submit(encoded_calls(50)) for _ in range(19)]
        gate.set()
        for f in [first, *later]:
            f.result(timeout=30)
    finally:
        writer.stop()
    assert _count(store) == 1000
    assert writer.stats.batches == 2  # group commit: the 19 that waited went in one insert
    assert _rollup_calls(store, "llm_calls_1m") == 1000


def test_a_lone_request_is_acknowledged_after_its_insert_not_a_timer(store):
    writer = make_writer(store, flush_interval_s=5.0)  # the longest a batch may wait: never reached here
    writer.start()
    try:
        started = time.monotonic()
        writer.submit(encoded_calls(3)).result(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        writer.stop()
    assert elapsed < 2.5, f"acknowledged after {elapsed:.2f}s: it waited for the flush timer"
    assert _count(store) == 3


def test_announced_requests_are_waited_for_and_share_one_insert(store):
    writer = make_writer(store, flush_interval_s=5.0)
    writer.start()
    try:
        for _ in range(3):
            writer.announce()  # three requests being decoded
        futures = [writer.submit(encoded_calls(4), announced=True)]
        time.sleep(0.3)  # the writer is free, but two announced requests are still on their way
        assert not futures[0].done()
        futures.append(writer.submit(encoded_calls(4), announced=True))
        writer.withdraw()  # the third failed to decode: nothing else to wait for
        started = time.monotonic()
        for f in futures:
            f.result(timeout=30)
        assert time.monotonic() - started < 2.5  # not the 5 s upper bound
    finally:
        writer.stop()
    assert writer.stats.batches == 1 and _count(store) == 8


def test_inserts_per_table_are_spaced_under_a_burst(store):
    """Counted, not timed: at most one insert per table per min_insert_interval_s, however many requests."""
    spacing = 0.4
    inserts: dict[str, int] = {}

    def counting(table, data, names, settings):
        inserts[table] = inserts.get(table, 0) + 1
        store.insert_native(table, data, names, settings)

    writer = BatchWriter(counting, flush_rows=1, flush_interval_s=0.01, min_insert_interval_s=spacing)
    writer.start()
    rows = {**encoded_calls(2), "spans": encode_rows("spans", [span()])}
    futures = []
    try:
        started = time.monotonic()
        while time.monotonic() - started < 2.0:  # a steady burst: a request every 10 ms from this thread
            futures.append(writer.submit(rows))
            time.sleep(0.01)
        for f in futures:
            f.result(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        writer.stop()
    bound = int(elapsed / spacing) + 1
    assert _count(store) == 2 * len(futures) and len(futures) > 3 * bound
    assert 2 <= inserts["llm_calls"] <= bound and inserts["spans"] == inserts["llm_calls"]
    assert writer.stats.inserts.inserts["llm_calls"] == inserts["llm_calls"]
    assert writer.stats.inserts.rows["llm_calls"].total == 2 * len(futures)


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
    writer = make_writer(store, flush_interval_s=60, min_insert_interval_s=60)  # after one insert, none for 60 s
    writer.start()
    writer.submit(encoded_calls(1)).result(timeout=30)
    future = writer.submit(encoded_calls(7))
    writer.stop()
    assert future.done() and future.exception() is None
    assert _count(store) == 8


def test_empty_batch_resolves_without_insert(store):
    writer = make_writer(store)
    writer.start()
    try:
        assert writer.submit({"llm_calls": encode_rows("llm_calls", [])}).result(timeout=1) is None
    finally:
        writer.stop()
    assert writer.stats.batches == 0
