"""The server's app factory: every package's routers on the collector's app, and the embedded scheduler in its
lifespan when ``collector_scheduler`` says so."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from inferwatch_collector import app as collector_app
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store
from inferwatch_server.app import create_app

ALERTS_PATHS = {"/api/v1/alerts", "/api/v1/alerts/silences", "/api/v1/alerts/rules", "/api/v1/experiments"}


def test_the_app_serves_the_collector_and_the_alerts_routers() -> None:
    settings = Settings(clickhouse_url="", data_dir=Path("/nonexistent"))  # routes only; no lifespan
    full = set(create_app(settings).openapi()["paths"])
    collector_only = set(collector_app.create_app(settings).openapi()["paths"])
    assert ALERTS_PATHS <= full and not ALERTS_PATHS & collector_only
    assert collector_only < full and {"/v1/traces", "/api/v1/dashboard/whoami", "/api/v1/jobs/runs"} <= full


def test_embedded_scheduler_runs_in_the_app_lifespan(settings: Settings, store: Store) -> None:
    fast = settings.model_copy(update={"flush_interval_s": 0.02, "ingest_workers": 0})
    app = create_app(fast.model_copy(update={"collector_scheduler": "auto"}), store=store)
    with TestClient(app):
        scheduler = app.state.scheduler
        assert scheduler is not None and scheduler.running
        assert set(scheduler.jobs) == {"budgets", "cost_report", "alert_rules", "retention", "experiments"}
    assert not scheduler.running  # stopped before the store is released
    app = create_app(fast.model_copy(update={"collector_scheduler": "off"}), store=store)
    with TestClient(app):
        assert app.state.scheduler is None
