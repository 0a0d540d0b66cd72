"""The collector's Prometheus text as its internal listener serves it (``metrics_listener.py``), read from a test
client's app without a port (tests run with ``metrics_port=0``; test_metrics_listener.py covers the listener)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from inferwatch_collector.metrics import render


def scrape(client: TestClient) -> str:
    """What ``GET /metrics`` on the internal listener answers for ``client``'s app (its lifespan must be running)."""
    return render(client.app.state)
