"""A local OTLP/HTTP receiver on 127.0.0.1 (a tiny http.server in a thread) for the SDK export tests and the
conformance recorder (tests/conformance/record.py)."""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HOLD_LIMIT_S = 120.0  # a held request is let go by itself after this (and ``gave_up`` says so)
LANGFUSE_TRACES_PATH = "/api/public/otel/v1/traces"  # where the Langfuse SDK's exporter posts


class Receiver:
    """Records every POST (path, lowercased headers, decompressed body); answers per path with a status code
    (200 for the OTLP paths /v1/traces, /v1/logs, /v1/metrics and Langfuse's, 404 elsewhere), optionally after a
    delay. A success has an empty body: zero bytes of protobuf, or ``{}`` to a JSON request.

    ``hold``: while it is set, requests wait for :meth:`release` before they are answered (``answered`` counts the
    answers given), so that a test can show what happened while the collector had not answered anything.

    ``arrived``: the monotonic time each request arrived (in ``requests``' order); ``most_in_flight``: the most
    ``/v1/traces`` requests it held at once (arrived, not answered); ``retry_after``: sent as ``Retry-After``
    with every answer that is not a 2xx, when set."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.status: dict[str, int] = {"/v1/traces": 200, "/v1/metrics": 200, "/v1/logs": 200,
                                       LANGFUSE_TRACES_PATH: 200}
        self.delay_s = 0.0
        self.hold = False
        self.answered = 0
        self.arrived: list[float] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.retry_after: str | None = None
        self._lock = threading.Lock()
        self.gave_up = False
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver._lock:
                    receiver.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    receiver.arrived.append(time.monotonic())
                    traces = self.path == "/v1/traces"
                    receiver.in_flight += traces
                    receiver.most_in_flight = max(receiver.most_in_flight, receiver.in_flight)
                if receiver.hold and not receiver._released.wait(HOLD_LIMIT_S):
                    receiver.gave_up = True
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                status = receiver.status.get(self.path, 404)
                is_json = self.headers.get("Content-Type", "").startswith("application/json")
                answer = b"{}" if is_json and status == 200 else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if is_json else "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                if receiver.retry_after is not None and not 200 <= status < 300:
                    self.send_header("Retry-After", receiver.retry_after)
                with receiver._lock:  # counted before the answer leaves: a client that has it sees the count
                    receiver.answered += 1
                    receiver.in_flight -= traces
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out closes the socket before a slow answer: expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Answer the held requests, and every later one at once."""
        self._released.set()

    def bodies(self, path: str) -> list[bytes]:
        return [body for p, _, body in self.requests if p == path]

    def spans(self) -> list[tuple[Any, dict[str, Any]]]:
        """(span proto, attributes) of every received span."""
        out = []
        for body in self.bodies("/v1/traces"):
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for rs in request.resource_spans:
                for ss in rs.scope_spans:
                    out.extend((s, {kv.key: any_value(kv.value) for kv in s.attributes}) for s in ss.spans)
        return out

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


def any_value(v: Any) -> Any:
    """The Python value of an OTLP ``AnyValue``."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    return None if kind is None else getattr(v, kind)


class ScriptedStatus(dict):  # type: ignore[type-arg]
    """A ``Receiver.status`` that answers ``/v1/traces`` from ``script`` (one status per request), then 200."""

    def __init__(self, script: list[int]) -> None:
        super().__init__({"/v1/traces": 200, "/v1/metrics": 200})
        self.script = script

    def get(self, path: str, default: Any = None) -> Any:
        if path == "/v1/traces" and self.script:
            return self.script.pop(0)
        return super().get(path, default)
