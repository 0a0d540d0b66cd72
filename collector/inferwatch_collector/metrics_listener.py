"""The internal listener: Prometheus ``GET /metrics`` on its own address (``metrics_host:metrics_port``,
127.0.0.1:9318 by default), never on the public port where exporters and API clients connect.

Operational counters say how much is ingested, by how many keys, what is refused and why; they are for the
operator's scraper, not for whoever can reach the OTLP port. A separate port is what a Prometheus operator expects
(one scrape target per collector replica, not through the load balancer) and needs no key in the scrape config.

A small threaded ``http.server`` in a daemon thread, like ``prometheus_client.start_http_server``: independent of
the event loop, so a scrape answers even while the app is saturated. Started and stopped by the app's lifespan.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class MetricsListener:
    """Serves ``render()`` at ``GET /metrics`` on ``host:port`` (port 0: any free port, see :attr:`port`)."""

    def __init__(self, render: Callable[[], str], host: str, port: int) -> None:
        handler = _handler(render)
        self._server = ThreadingHTTPServer((host, port), handler)  # OSError when the address is taken
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="inferwatch-metrics-listener", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> MetricsListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def start_listener(render: Callable[[], str], host: str, port: int) -> MetricsListener | None:
    """The listener, started; None when ``port`` is 0 or the address cannot be bound (logged: ingest matters
    more than metrics, so the collector still starts)."""
    if port == 0:
        return None
    try:
        return MetricsListener(render, host, port).start()
    except OSError as exc:
        log.error("the /metrics listener cannot bind %s:%s (%s); set INFERWATCH_METRICS_PORT to a free port, or 0 "
                  "for no listener. The collector runs without /metrics.", host, port, exc.strerror or exc)
        return None


def _handler(render: Callable[[], str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a client that connects and sends nothing does not hold a thread for long

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self._send(404, "not found: the internal listener serves GET /metrics only\n")
                return
            try:
                text = render()
            except Exception as exc:  # noqa: BLE001 - the app is starting or stopping
                self._send(503, f"metrics unavailable: {type(exc).__name__}\n")
                return
            self._send(200, text)

        def _send(self, status: int, text: str) -> None:
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # no access log, like the app
            pass

    return Handler
