"""The benches under ``bench/`` are scripts that import their sibling modules by name (``import ingest_clients``):
put that folder on the path for the tests that keep those modules from rotting. Also: a tiny HTTP receiver that
answers like the collector (after a delay, optionally 503 first), to time the sender models against."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))


@dataclass
class SlowReceiver:
    """What the receiver saw; ``delay_s`` before each answer, the first ``reject_first`` POSTs answered 503."""

    url: str
    delay_s: float
    reject_first: int = 0
    posts: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def slow_receiver(request: pytest.FixtureRequest) -> Iterator[SlowReceiver]:
    """An HTTP server on 127.0.0.1 answering ``POST /v1/traces`` 200 after ``delay_s`` (parametrise with
    ``@pytest.mark.parametrize("slow_receiver", [(delay_s, reject_first)], indirect=True)``)."""
    delay_s, reject_first = getattr(request, "param", (0.05, 0))
    state = SlowReceiver("", delay_s, reject_first)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, status: int, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # /healthz, the senders' connection warm-up
            self._answer(200)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with state.lock:
                state.posts += 1
                reject = state.posts <= state.reject_first
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            time.sleep(state.delay_s)
            with state.lock:
                state.in_flight -= 1
            self._answer(503, {"Retry-After": "0"}) if reject else self._answer(200)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
