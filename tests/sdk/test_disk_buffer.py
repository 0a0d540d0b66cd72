"""SDK side of issue 8's fault tolerance: collector down, then back.

With the disk buffer: nothing lost, nothing twice, order kept, survives a restart, bounded (oldest dropped and
counted). Without it: drops counted by reason. Either way the app never blocks: calls complete while the export
thread is stuck inside a request the "collector" holds (no wall-clock assertions: a blocked call would never let
the test release the server, and the server's own give-up flag would show it).
"""

from __future__ import annotations

import gzip
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from inferwatch import _guard
from inferwatch.disk_buffer import DiskBuffer, DiskBufferLocked
from inferwatch.options import Options, resolve
from inferwatch.telemetry.pipeline import Pipeline
from tests.helpers.forked import in_child
from tests.helpers.pipelines import stop_all

HOLD_LIMIT_S = 120.0  # the hanging server lets go by itself after this (and says so): the test then fails


class Collector:
    """An OTLP/HTTP receiver with a switchable mode: "ok" (200), "down" (503), "bad" (400), "hang" (hold the
    request until released, then answer as the mode then says). Records the span ids it accepted, in order."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.accepted: list[bytes] = []  # span ids, in order
        self.requests = 0
        self.holding = threading.Event()
        self.release = threading.Event()
        self.gave_up = False
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                collector.requests += 1
                mode = collector.mode
                if mode == "hang":
                    collector.holding.set()
                    if not collector.release.wait(HOLD_LIMIT_S):
                        collector.gave_up = True
                    mode = collector.mode if collector.mode != "hang" else "down"
                if mode == "ok":
                    if self.headers.get("Content-Encoding") == "gzip":
                        body = gzip.decompress(body)
                    request = ExportTraceServiceRequest()
                    request.ParseFromString(body)
                    for rs in request.resource_spans:
                        for ss in rs.scope_spans:
                            collector.accepted.extend(s.span_id for s in ss.spans)
                self.send_response({"ok": 200, "bad": 400}.get(mode, 503))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture(autouse=True)
def _fresh_guard() -> Iterator[None]:
    _guard.reset()
    yield
    _guard.reset()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


@pytest.fixture
def make_pipeline() -> Iterator[Callable[..., Pipeline]]:
    made: list[Pipeline] = []

    def make(endpoint: str, **overrides: Any) -> Pipeline:
        settings: dict[str, Any] = {"endpoint": endpoint, "api_key": "k", "schedule_delay_ms": 20,
                                    "export_timeout_s": 1.0, "max_export_batch_size": 100}
        settings.update(overrides)
        p = Pipeline(Options(**settings))
        made.append(p)
        return p

    yield make
    stop_all(made, timeout=2.0)


def _calls(p: Pipeline, n: int) -> list[bytes]:
    """n LLM-call-like spans made on this thread; their ids."""
    ids = []
    for i in range(n):
        with p.tracer.start_as_current_span("chat m", attributes={"gen_ai.request.model": "m", "i": i}) as span:
            ids.append(span.get_span_context().span_id.to_bytes(8, "big"))
    return ids


def _flush_until_empty(p: Pipeline, rounds: int = 50) -> None:
    for _ in range(rounds):
        p.flush(5.0)
        if not p.stats()["disk_buffer"].get("pending_requests"):
            return
    raise AssertionError(f"disk buffer never drained: {p.stats()['disk_buffer']}")


def _wait_disk_open(p: Pipeline) -> None:
    p.flush(5.0)  # the export thread opens the buffer before its first drain
    assert p.stats()["disk_buffer"]["state"] != "pending"


# --- with the disk buffer --------------------------------------------------------------------------------------
def test_outage_with_disk_buffer_loses_nothing_and_never_blocks(tmp_path: Any, collector: Collector,
                                                                make_pipeline: Callable[..., Pipeline]) -> None:
    p = make_pipeline(collector.url, disk_buffer_dir=str(tmp_path / "buf"), export_timeout_s=60.0)
    _wait_disk_open(p)
    assert p.stats()["disk_buffer"]["state"] == "on"
    sent = _calls(p, 50)
    p.flush(5.0)

    # 1. the collector holds the export thread's request: the app keeps calling, nothing waits for it
    collector.mode = "hang"
    sent += _calls(p, 1)
    assert collector.holding.wait(30), "the export thread never reached the collector"
    sent += _calls(p, 5_000)  # all of these return while the request is still held
    assert not collector.gave_up and not collector.release.is_set()
    # 2. it answers 503 for a while: everything goes to disk (in order, behind what is already there)
    collector.mode = "down"
    collector.release.set()
    for _ in range(5):
        sent += _calls(p, 300)
        p.flush(10.0)
    stats = p.stats()
    assert stats["disk_buffer"]["pending_spans"] > 0 and stats["export_failures"] > 0
    # 3. back: every span arrives exactly once, in the order made
    collector.mode = "ok"
    _flush_until_empty(p)
    assert len(collector.accepted) == len(sent) == len(set(collector.accepted))
    assert collector.accepted == sent
    stats = p.stats()
    assert sum(stats["dropped"].values()) == 0, stats["dropped"]
    assert stats["exported"] == len(sent)
    assert not collector.gave_up


def test_disk_buffer_survives_a_restart(tmp_path: Any, collector: Collector,
                                        make_pipeline: Callable[..., Pipeline]) -> None:
    directory = str(tmp_path / "buf")
    down = make_pipeline(_closed_port(), disk_buffer_dir=directory)
    sent = _calls(down, 1_234)
    assert down.flush(10.0)
    assert down.stats()["disk_buffer"]["pending_spans"] == 1_234
    down.shutdown(5.0)
    assert any(name.endswith(".otlp") for name in os.listdir(directory))

    up = make_pipeline(collector.url, disk_buffer_dir=directory)  # the next process, same directory
    sent += _calls(up, 10)
    _flush_until_empty(up)
    assert collector.accepted == sent
    assert not [n for n in os.listdir(directory) if n.endswith((".otlp", ".part"))]


def test_disk_buffer_full_drops_the_oldest_and_counts_them(tmp_path: Any,
                                                           make_pipeline: Callable[..., Pipeline]) -> None:
    p = make_pipeline(_closed_port(), disk_buffer_dir=str(tmp_path / "buf"), disk_buffer_max_bytes=40_000)
    for _ in range(20):
        _calls(p, 100)
        p.flush(10.0)
    stats = p.stats()
    disk = stats["disk_buffer"]
    assert 0 < disk["bytes"] <= 40_000
    assert stats["dropped"]["disk_buffer_full"] > 0
    # every span is either on disk or counted as dropped
    assert disk["pending_spans"] + stats["dropped"]["disk_buffer_full"] == 2_000
    # the oldest went: what is left is the most recent requests
    kept = sorted(int(n.split("-")[1]) for n in os.listdir(tmp_path / "buf") if n.endswith(".otlp"))
    assert kept == list(range(kept[0], kept[-1] + 1)) and kept[0] > 0
    assert kept[-1] == p.span_export.disk._next_seq - 1


def test_a_second_pipeline_on_the_same_directory_runs_without_it(tmp_path: Any,
                                                                 make_pipeline: Callable[..., Pipeline]) -> None:
    first = make_pipeline(_closed_port(), disk_buffer_dir=str(tmp_path / "buf"))
    _wait_disk_open(first)
    second = make_pipeline(_closed_port(), disk_buffer_dir=str(tmp_path / "buf"))
    _wait_disk_open(second)
    assert first.stats()["disk_buffer"]["state"] == "on"
    assert second.stats()["disk_buffer"]["state"] == "locked"
    _calls(second, 10)
    second.flush(10.0)
    assert second.stats()["dropped"]["export_failed"] == 10  # counted, as without a buffer


def test_permanent_refusal_is_not_buffered(tmp_path: Any, collector: Collector,
                                           make_pipeline: Callable[..., Pipeline]) -> None:
    p = make_pipeline(collector.url, disk_buffer_dir=str(tmp_path / "buf"))
    collector.mode = "bad"  # a request refused for good (400) is dropped as export_failed, never kept for retries
    _calls(p, 7)
    p.flush(5.0)
    stats = p.stats()
    assert stats["dropped"]["export_failed"] == 7 and stats["disk_buffer"]["pending_requests"] == 0


def test_corrupt_segment_is_dropped_and_counted(tmp_path: Any, collector: Collector,
                                                make_pipeline: Callable[..., Pipeline]) -> None:
    directory = tmp_path / "buf"
    buf = DiskBuffer(str(directory))
    buf.append(b"\x01\x02garbage", 3)
    buf.append(ExportTraceServiceRequest().SerializeToString(), 0)
    buf.close()
    seg = sorted(n for n in os.listdir(directory) if n.endswith(".otlp"))[0]
    with open(directory / seg, "r+b") as f:
        f.seek(6)
        f.write(b"X")
    (directory / "seg-0000000000000009-5.otlp.part").write_bytes(b"half written")
    p = make_pipeline(collector.url, disk_buffer_dir=str(directory))
    _flush_until_empty(p)
    assert p.stats()["dropped"]["disk_buffer_corrupt"] == 3
    assert not [n for n in os.listdir(directory) if n.endswith((".otlp", ".part"))]


def test_disk_buffer_lock_is_exclusive(tmp_path: Any) -> None:
    a = DiskBuffer(str(tmp_path))
    with pytest.raises(DiskBufferLocked):
        DiskBuffer(str(tmp_path))
    a.close()
    DiskBuffer(str(tmp_path)).close()


def test_options_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("INFERWATCH_DISK_BUFFER_DIR", str(tmp_path))
    monkeypatch.setenv("INFERWATCH_DISK_BUFFER_MAX_BYTES", "1000")
    o = resolve()
    assert o.disk_buffer_dir == str(tmp_path) and o.disk_buffer_max_bytes == 1000
    assert resolve(disk_buffer_max_bytes=5).disk_buffer_max_bytes == 5
    monkeypatch.delenv("INFERWATCH_DISK_BUFFER_DIR")
    assert resolve().disk_buffer_dir == ""  # off by default


# --- without it ---------------------------------------------------------------------------------------------
def test_outage_without_disk_buffer_counts_drops_and_never_blocks(collector: Collector,
                                                                  make_pipeline: Callable[..., Pipeline]) -> None:
    p = make_pipeline(collector.url, export_timeout_s=60.0, max_queue_size=2_000)
    assert p.stats()["disk_buffer"]["state"] == "off"
    before = _calls(p, 20)
    p.flush(5.0)
    collector.mode = "hang"
    _calls(p, 1)
    assert collector.holding.wait(30)
    _calls(p, 5_000)  # returns while the export thread is stuck; the queue bound drops the excess
    assert not collector.gave_up and not collector.release.is_set()
    collector.mode = "bad"  # answered once released: the stock exporter does not retry a 400, the test stays short
    collector.release.set()
    p.flush(30.0)
    during = p.stats()
    lost = during["dropped"]["queue_full"] + during["dropped"]["export_failed"]
    assert during["dropped"]["queue_full"] > 0 and during["dropped"]["export_failed"] > 0
    assert lost == 5_001  # every span of the outage is counted
    collector.mode = "ok"
    after = _calls(p, 30)
    p.flush(10.0)
    assert collector.accepted == before + after


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork semantics tested on Linux")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # Python >= 3.12
def test_a_forked_child_leaves_the_directory_to_the_parent(tmp_path: Any,
                                                           make_pipeline: Callable[..., Pipeline]) -> None:
    directory = str(tmp_path / "buf")
    p = make_pipeline(_closed_port(), disk_buffer_dir=directory)
    _calls(p, 5)
    p.flush(5.0)
    assert p.stats()["disk_buffer"]["pending_spans"] == 5
    def child_work() -> dict[str, Any]:
        _calls(p, 3)
        p.flush(5.0)
        return p.stats()

    child = in_child(child_work)
    assert child["disk_buffer"]["state"] == "locked" and child["dropped"]["export_failed"] == 3
    _calls(p, 2)
    p.flush(5.0)
    assert p.stats()["disk_buffer"]["pending_spans"] == 7  # the parent's buffer, untouched by the child
