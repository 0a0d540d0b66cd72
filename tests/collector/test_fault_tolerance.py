"""ClickHouse failing mid-ingest, through the real app and OTLP POSTs (architecture §2).

The fault is injected at the store boundary: ``store.insert_native`` is wrapped so inserts fail (or land and
lose their reply) for a while. A crash is simulated by stopping the writer without draining (what is queued is
never written, nothing is replayed) and starting a new app on the same database and spool directories.
Row counts are asserted exactly: nothing acknowledged is lost, nothing lands twice.
"""

from __future__ import annotations

import threading

import pytest
from google.rpc import status_pb2
from fastapi.testclient import TestClient

from inferwatch_collector.app import create_app
from inferwatch_collector.spool import decode_segment

from tests.helpers import payloads
from tests.helpers.metrics import scrape

PROTOBUF = {"Content-Type": "application/x-protobuf"}
SPANS_PER_REQUEST = 5


class Fault:
    """Replaces ``store.insert_native``. ``down``: every insert fails (connection refused).

    ``land_then_fail``: the next inserts land, then their reply is lost (``then_down``: and the database goes down).
    Records the dedup token of every insert that landed, in order.
    """

    def __init__(self, store) -> None:
        self._insert = store.insert_native
        self.down = False
        self.land_then_fail = 0
        self.then_down = False
        self.landed: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, table, data, names, settings=None):
        with self.lock:
            if self.down:
                raise ConnectionRefusedError("[Errno 111] Connection refused")
            self._insert(table, data, names, settings)
            self.landed.append(settings["insert_deduplication_token"])
            if self.land_then_fail:
                self.land_then_fail -= 1
                self.down = self.down or self.then_down
                raise ConnectionResetError("connection reset by peer")


@pytest.fixture
def fault(store, monkeypatch) -> Fault:
    wrapper = Fault(store)
    monkeypatch.setattr(store, "insert_native", wrapper)  # the app's writer is built on store.insert_native
    return wrapper


@pytest.fixture
def db_down(store, fault, monkeypatch) -> Fault:
    """``fault``, and while ``fault.down`` every query fails too (the API-key lookup included)."""
    query = store.query

    def failing(*args, **kwargs):
        if fault.down:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        return query(*args, **kwargs)

    monkeypatch.setattr(store, "query", failing)
    return fault


@pytest.fixture
def ft_settings(app_settings):
    return app_settings.model_copy(update={"insert_retries": 1, "spool_replay_interval_s": 0.05})


def post(client: TestClient, key: str):
    """One request: SPANS_PER_REQUEST LLM calls (llm_calls rows) and a retrieval span (a spans row)."""
    request = payloads.genai_batch(SPANS_PER_REQUEST)
    request.resource_spans[0].scope_spans[0].spans.append(payloads.retrieval_span())
    body = request.SerializeToString()
    return client.post("/v1/traces", content=body, headers={**PROTOBUF, "Authorization": f"Bearer {key}"})


def count(store, table: str = "llm_calls", distinct: bool = False) -> int:
    what = "uniqExact(span_id)" if distinct else "count()"
    return store.query(f"SELECT {what} FROM {table}").result_rows[0][0]


def rollup_calls(store, table: str) -> int:
    return store.query(f"SELECT sum(calls) FROM {table}").result_rows[0][0] or 0


def assert_exactly(store, calls: int) -> None:
    assert count(store) == calls
    assert count(store, distinct=True) == calls
    assert count(store, "spans") == calls // SPANS_PER_REQUEST  # one retrieval span per request
    for rollup in ("llm_calls_1m", "llm_calls_1h"):
        assert rollup_calls(store, rollup) == calls


def wait_for(condition, timeout: float = 30.0) -> None:
    event = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        event.wait(0.02)
    raise AssertionError("condition not reached in time")


def metric(client: TestClient, name: str) -> float:
    lines = client.app.state.writer.metric_lines()
    for line in lines:
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise KeyError(name)


def test_outage_mid_ingest_is_acknowledged_spooled_and_replayed_in_order(ft_settings, store, keys, fault):
    with TestClient(create_app(ft_settings, store=store)) as client:
        assert all(post(client, keys.ingest).status_code == 200 for _ in range(3))
        assert count(store) == 15
        fault.down = True
        during = [post(client, keys.ingest) for _ in range(6)]
        assert [r.status_code for r in during] == [200] * 6  # acknowledged: durable in the spool
        writer = client.app.state.writer
        assert count(store) == 15 and writer.spool.pending >= 1
        assert metric(client, "inferwatch_spool_bytes") > 0
        assert metric(client, "inferwatch_spool_rows_spooled_total") == 6 * (SPANS_PER_REQUEST + 1)
        assert 'inferwatch_spool_batches_dropped_total{reason="corrupt"} 0' in writer.metric_lines()
        spooled = writer.spool.stats.spooled_batches
        spool_order = [decode_segment(path.read_bytes(), 0, path).batch_id
                       for path in sorted(writer.spool.directory.glob("*.seg"))]
        assert len(spool_order) == spooled
        landed_before = len(fault.landed)

        fault.down = False  # the database returns
        wait_for(lambda: writer.spool.pending == 0)
        assert_exactly(store, 45)
        assert metric(client, "inferwatch_spool_batches_replayed_total") == spooled
        assert metric(client, "inferwatch_spool_bytes") == 0
        # replayed in the order the batches were accepted: tokens' batch ids in spool order
        replayed = [token.split(":")[0] for token in fault.landed[landed_before:]]
        assert replayed == [batch for batch in spool_order for _ in ("llm_calls", "spans")]
        assert post(client, keys.ingest).status_code == 200  # back to direct inserts
        assert writer.spool.pending == 0
    assert_exactly(store, 50)


def test_acknowledged_batches_survive_a_crash_and_land_once(ft_settings, store, keys, fault):
    with TestClient(create_app(ft_settings, store=store)) as client:
        assert post(client, keys.ingest).status_code == 200
        fault.down = True
        assert all(post(client, keys.ingest).status_code == 200 for _ in range(4))
        pending = client.app.state.writer.spool.pending
        assert pending >= 1
        client.app.state.writer.stop(drain=False)  # crash: nothing more written or replayed
    assert count(store) == 5

    fault.down = False  # the database is back when the collector restarts on the same directories
    with TestClient(create_app(ft_settings, store=store)) as client:
        writer = client.app.state.writer
        wait_for(lambda: writer.spool.pending == 0)
        assert writer.spool.stats.replayed_batches == pending
        assert_exactly(store, 25)


def test_crash_after_a_replay_landed_but_before_it_was_recorded(ft_settings, store, keys, fault):
    """The replay's insert lands, its reply is lost and the collector dies: the restart replays it again, with
    the same dedup token, and ClickHouse drops the repeat."""
    with TestClient(create_app(ft_settings, store=store)) as client:
        writer = client.app.state.writer
        fault.down = True
        assert all(post(client, keys.ingest).status_code == 200 for _ in range(3))
        pending = writer.spool.pending
        with fault.lock:
            fault.down, fault.land_then_fail, fault.then_down = False, 1, True
        wait_for(lambda: count(store) > 0)  # the first replay landed; its reply was lost; down again
        writer.stop(drain=False)  # and the collector dies before the spool learns about it
        assert writer.spool.pending == pending
    landed = count(store)
    assert 0 < landed < 15

    fault.down = False
    with TestClient(create_app(ft_settings, store=store)) as client:
        wait_for(lambda: client.app.state.writer.spool.pending == 0)
    assert_exactly(store, 15)


def test_lost_reply_on_a_direct_insert_then_outage_lands_once(ft_settings, store, keys, fault):
    with TestClient(create_app(ft_settings, store=store)) as client:
        fault.land_then_fail, fault.then_down = 1, True  # lands, reply lost, database down: spooled whole
        assert post(client, keys.ingest).status_code == 200
        assert count(store) == 5 and client.app.state.writer.spool.pending == 1
        fault.down = False
        wait_for(lambda: client.app.state.writer.spool.pending == 0)
    assert_exactly(store, 5)


def test_full_spool_answers_503_with_retry_after(ft_settings, store, keys, fault):
    tiny = ft_settings.model_copy(update={"spool_max_bytes": 1, "spool_replay_interval_s": 60})
    with TestClient(create_app(tiny, store=store)) as client:
        fault.down = True
        assert post(client, keys.ingest).status_code == 200  # one batch always fits
        shed = post(client, keys.ingest)
        assert shed.status_code == 503 and shed.headers["Retry-After"] == "5"
        assert metric(client, "inferwatch_spool_batches_rejected_full_total") == 1
        assert 'inferwatch_requests_rejected_total{reason="queue_full"} 1' in scrape(client)
        fault.down = False
    # a clean stop replays what it can before exiting
    assert_exactly(store, 5)


def test_without_a_spool_a_failed_insert_is_a_503(ft_settings, store, keys, fault):
    off = ft_settings.model_copy(update={"spool_max_bytes": 0})
    with TestClient(create_app(off, store=store)) as client:
        assert client.app.state.writer.spool is None and client.app.state.writer.metric_lines() == []
        fault.down = True
        failed = post(client, keys.ingest)
        assert failed.status_code == 503 and failed.headers["Retry-After"] == "5"
        fault.down = False
        assert post(client, keys.ingest).status_code == 200
    assert_exactly(store, 5)


def test_a_key_seen_before_an_outage_keeps_working_and_its_spans_are_spooled(ft_settings, store, keys, db_down):
    # The key cache has expired (key_cache_s=0: every request looks the key up) when the database goes down.
    settings = ft_settings.model_copy(update={"key_cache_s": 0.0})
    with TestClient(create_app(settings, store=store)) as client:
        assert post(client, keys.ingest).status_code == 200
        db_down.down = True
        assert [post(client, keys.ingest).status_code for _ in range(3)] == [200] * 3  # spooled, not lost
        assert client.app.state.keys.stale_answers == 3
        db_down.down = False
        wait_for(lambda: client.app.state.writer.spool.pending == 0)
        assert_exactly(store, 20)
        assert "inferwatch_api_key_stale_answers_total 3" in scrape(client)


def test_a_key_that_cannot_be_checked_is_a_503_with_retry_after_never_a_500(ft_settings, store, keys, db_down):
    with TestClient(create_app(ft_settings, store=store)) as client:
        db_down.down = True
        response = post(client, keys.ingest)  # never seen by this collector: nothing to fall back on
        assert (response.status_code, response.headers.get("retry-after")) == (503, "5")
        assert "cannot be checked" in status_pb2.Status.FromString(response.content).message
        response = client.get("/api/v1/calls/summary", headers={"Authorization": f"Bearer {keys.read}"})
        assert (response.status_code, response.headers.get("retry-after")) == (503, "5")
        db_down.down = False
        assert post(client, keys.ingest).status_code == 200  # the exporter's retry lands
