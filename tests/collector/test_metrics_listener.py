"""The internal /metrics listener: Prometheus text on its own port, started and stopped with the app; the public
port does not serve it (test_security.py)."""

from __future__ import annotations

import logging
import socket

import httpx
import pytest
from fastapi.testclient import TestClient

from inferwatch_collector.metrics_listener import CONTENT_TYPE, MetricsListener
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app
from tests.helpers.keys import Keys


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_app_serves_metrics_on_its_internal_port_only(app_settings: Settings, store: Store, keys: Keys):
    port = free_port()
    settings = app_settings.model_copy(update={"metrics_port": port})
    with TestClient(create_app(settings, store=store)) as client:
        assert client.app.state.metrics_listener.port == port
        assert client.get("/metrics").status_code == 404  # not on the public port
        client.get("/healthz", headers=Keys.header("iwk_0123456789ab_" + "x" * 43))
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10, trust_env=False)
        assert scraped.status_code == 200 and scraped.headers["content-type"] == CONTENT_TYPE
        assert "inferwatch_spans_accepted_total 0" in scraped.text
        assert 'inferwatch_api_key_lookups_total{outcome="valid"}' in scraped.text
        assert httpx.get(f"http://127.0.0.1:{port}/v1/traces", timeout=10, trust_env=False).status_code == 404
    with pytest.raises(httpx.ConnectError):  # stopped with the app
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2, trust_env=False)


def test_a_taken_metrics_port_is_logged_and_the_collector_still_starts(app_settings, store, caplog):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = app_settings.model_copy(update={"metrics_port": taken.getsockname()[1]})
        with caplog.at_level(logging.ERROR), TestClient(create_app(settings, store=store)) as client:
            assert client.get("/healthz").status_code == 200
            assert client.app.state.metrics_listener is None
    assert "INFERWATCH_METRICS_PORT" in caplog.text


def test_a_failing_render_is_a_503_not_a_dead_listener():
    calls = iter([RuntimeError("not started"), "up 1\n"])

    def render() -> str:
        value = next(calls)
        if isinstance(value, Exception):
            raise value
        return value

    listener = MetricsListener(render, "127.0.0.1", 0).start()
    try:
        url = f"http://127.0.0.1:{listener.port}/metrics"
        first = httpx.get(url, timeout=10, trust_env=False)
        assert first.status_code == 503 and "RuntimeError" in first.text
        assert httpx.get(url, timeout=10, trust_env=False).text == "up 1\n"
    finally:
        listener.stop()
