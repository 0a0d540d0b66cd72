"""The on-disk spool: durable segments, order, limits, damage, locking; and the writer's use of it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from inferwatch_collector.native import encode_rows
from inferwatch_collector.rows import TABLE_COLUMNS
from inferwatch_collector.settings import Settings
from inferwatch_collector.spool import (Spool, SpoolFull, SpoolLocked, SpoolPart, decode_segment, encode_segment,
                                        open_spool, spool_dir_for)
from inferwatch_collector.store import Store
from inferwatch_collector.writer import BatchWriter, QueueFull

from tests.helpers.factories import llm_call


def part(n: int = 3, table: str = "llm_calls") -> SpoolPart:
    encoded = encode_rows(table, [llm_call() for _ in range(n)])
    return SpoolPart(table, TABLE_COLUMNS[table], encoded.data, encoded.rows)


def test_segments_survive_reopen_and_come_back_in_order(tmp_path):
    spool = Spool(tmp_path, max_bytes=10_000_000)
    first, second = part(2), part(5)
    spool.append("batch-a", [first])
    spool.append("batch-b", [second])
    assert spool.pending == 2 and spool.bytes == sum(p.stat().st_size for p in tmp_path.glob("*.seg"))
    spool.close()

    again = Spool(tmp_path, max_bytes=10_000_000)  # what a restarted collector sees
    record = again.peek()
    assert record is not None and record.batch_id == "batch-a" and record.parts == (first,)
    assert record.token("llm_calls") == "batch-a:llm_calls"
    again.remove(record)
    record = again.peek()
    assert record.batch_id == "batch-b" and record.rows == 5
    again.remove(record)
    assert again.peek() is None and again.pending == 0 and again.bytes == 0
    assert again.stats.replayed_batches == 2 and again.stats.replayed_rows == 7
    assert not list(tmp_path.glob("*.seg"))
    # sequence numbers keep rising after a restart, so order holds across runs
    again.append("batch-c", [part(1)])
    again.close()
    assert Spool(tmp_path, 10_000_000).peek().batch_id == "batch-c"


def test_a_segment_round_trips_every_field(tmp_path):
    parts = [part(2), part(1, "llm_calls")]
    raw = encode_segment("b1", parts, created=123.5)
    record = decode_segment(raw, 7, tmp_path / "x.seg")
    assert (record.seq, record.batch_id, record.created, record.parts, record.size) == (7, "b1", 123.5,
                                                                                        tuple(parts), len(raw))
    for damaged in (raw[:-1], raw[:20], b"X" + raw[1:], raw[:40] + bytes([raw[40] ^ 1]) + raw[41:]):
        with pytest.raises(ValueError):
            decode_segment(damaged, 7, tmp_path / "x.seg")


def test_size_limit_refuses_appends_but_always_takes_one_batch(tmp_path):
    big = part(50)
    spool = Spool(tmp_path, max_bytes=10)  # smaller than any segment
    spool.append("only", [big])  # empty spool: a maximum-size batch still fits
    with pytest.raises(SpoolFull):
        spool.append("next", [part(1)])
    assert spool.full and spool.pending == 1 and spool.stats.rejected_full == 1
    spool.remove(spool.peek())
    spool.append("next", [part(1)])  # room again


def test_torn_appends_are_ignored_and_damaged_segments_set_aside(tmp_path):
    spool = Spool(tmp_path, max_bytes=10_000_000)
    spool.append("good-1", [part(1)])
    spool.append("bad", [part(1)])
    spool.append("good-2", [part(1)])
    spool.close()
    bad = sorted(tmp_path.glob("*.seg"))[1]
    raw = bad.read_bytes()
    bad.write_bytes(raw[:-10] + b"\0" * 10)  # bit rot in a whole segment
    (tmp_path / "0000000000000099.tmp").write_bytes(b"half a segm")  # a crash during an append

    spool = Spool(tmp_path, max_bytes=10_000_000)
    assert not list(tmp_path.glob("*.tmp")) and spool.pending == 3
    seen = []
    while (record := spool.peek()) is not None:
        seen.append(record.batch_id)
        spool.remove(record)
    assert seen == ["good-1", "good-2"]
    assert spool.stats.dropped_batches["corrupt"] == 1
    assert (tmp_path / "corrupt" / bad.name).exists()
    assert 'inferwatch_spool_batches_dropped_total{reason="corrupt"} 1' in spool.metric_lines()


def test_one_collector_per_spool_directory(tmp_path):
    first = Spool(tmp_path, max_bytes=1000)
    with pytest.raises(SpoolLocked, match="INFERWATCH_SPOOL_DIR"):
        Spool(tmp_path, max_bytes=1000)
    first.close()
    Spool(tmp_path, max_bytes=1000).close()


def test_settings_place_the_spool_and_zero_turns_it_off(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", clickhouse_url="")
    assert spool_dir_for(settings) == tmp_path / "spool"
    assert spool_dir_for(settings.model_copy(update={"spool_dir": tmp_path / "s2"})) == tmp_path / "s2"
    assert Settings(spool_dir="", data_dir=tmp_path).spool_dir is None
    assert open_spool(settings.model_copy(update={"spool_max_bytes": 0})) is None
    spool = open_spool(settings)
    assert spool is not None and spool.directory == tmp_path / "spool"
    spool.close()


# --- the writer with a spool, against the real embedded ClickHouse -----------------------------------------------
def encoded_calls(n: int) -> dict:
    return {"llm_calls": encode_rows("llm_calls", [llm_call() for _ in range(n)])}


def count(store, table: str = "llm_calls") -> int:
    return store.query(f"SELECT count() FROM {table}").result_rows[0][0]


class Fault:
    """Wraps ``store.insert_native``: fails while ``down``.

    ``land_then_fail`` inserts, then loses the reply (that many times); with ``then_down`` the database also goes
    down right after, so the retries fail too.
    """

    def __init__(self, store) -> None:
        self.store, self.down, self.land_then_fail, self.then_down = store, False, 0, False
        self.landed_tokens: list[str] = []

    def __call__(self, table, data, names, settings):
        if self.down:
            raise ConnectionRefusedError("database down")
        self.store.insert_native(table, data, names, settings)
        self.landed_tokens.append(settings["insert_deduplication_token"])
        if self.land_then_fail:
            self.land_then_fail -= 1
            self.down = self.down or self.then_down
            raise ConnectionResetError("reply lost")


def wait_for(condition, timeout: float = 20.0) -> None:
    event = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        event.wait(0.02)
    raise AssertionError("condition not reached in time")


def spooling_writer(store, fault, tmp_path, **kwargs) -> BatchWriter:
    writer = BatchWriter(fault, flush_rows=1, flush_interval_s=0.01, retries=1, retry_backoff_s=0.01, **kwargs)
    writer.attach_spool(Spool(tmp_path / "spool", max_bytes=10_000_000), replay_interval_s=0.05)
    writer.start()
    return writer


def test_failed_insert_is_spooled_acknowledged_and_replayed_once(store, tmp_path):
    fault = Fault(store)
    fault.land_then_fail, fault.then_down = 1, True  # the first insert lands, its reply is lost, the database
    writer = spooling_writer(store, fault, tmp_path)  # goes away: the retry fails and the batch is spooled
    try:
        writer.submit(encoded_calls(4)).result(timeout=10)  # acknowledged: it is on disk
        assert writer.spool.pending == 1 and writer.stats.insert_retries == 1
        later = [writer.submit(encoded_calls(3)) for _ in range(3)]
        for future in later:
            future.result(timeout=10)
        assert writer.spool.pending >= 2 and count(store) == 4  # only the landed first insert
        fault.down = False
        wait_for(lambda: writer.spool.pending == 0)
    finally:
        writer.stop()
    assert count(store) == 13  # 4 + 3*3: the replayed first batch was deduplicated
    assert store.query("SELECT sum(calls) FROM llm_calls_1h").result_rows[0][0] == 13
    stats = writer.spool.stats
    assert stats.spooled_batches == stats.replayed_batches >= 2 and stats.spooled_rows == 13
    assert writer.stats.rows_written["llm_calls"] == 13


def test_full_spool_fails_the_batch_with_queue_full(store, tmp_path):
    fault = Fault(store)
    fault.down = True
    writer = BatchWriter(fault, flush_rows=1, flush_interval_s=0.01, retries=0)
    writer.attach_spool(Spool(tmp_path / "spool", max_bytes=1), replay_interval_s=60)
    writer.start()
    try:
        writer.submit(encoded_calls(2)).result(timeout=10)  # the first batch always fits
        with pytest.raises(QueueFull):  # spooling and full: shed at submit
            writer.submit(encoded_calls(2))
        assert writer.spool.stats.rejected_full == 1
    finally:
        writer.stop(drain=False)
    assert writer.spool.pending == 1 and count(store) == 0


def test_the_spool_and_the_embedded_data_directory_are_private(tmp_path, settings):
    # other local users must not list or read spooled requests or stored prompts (0700, existing ones tightened)
    existing = tmp_path / "spool"
    existing.mkdir(mode=0o755)
    Spool(existing, 1 << 20).close()
    store = Store.open(settings)
    store.close()
    assert oct(existing.stat().st_mode & 0o777) == oct(0o700)
    assert oct(Path(settings.data_dir).stat().st_mode & 0o777) == oct(0o700)
