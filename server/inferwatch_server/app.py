"""The platform's HTTP app: the collector's app with every package's routers and the embedded scheduler.

The collector serves ingest and queries; the alerting package adds its API (alerts, silences, rules,
experiments). When ``collector_scheduler`` says so (``on``, or ``auto`` on the embedded database, where only
this process may open the data directory), the scheduler runs inside the app's lifespan: started once the store
is open, shut down before it closes, so a running job finishes first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI
from inferwatch_alerts.routes import alerts, experiments
from inferwatch_alerts.scheduler import start_scheduler
from inferwatch_collector import app as collector_app
from inferwatch_collector.settings import Settings, get_settings
from inferwatch_collector.store import Store

#: Every router the platform serves: the collector's, then the alerting package's.
ROUTERS = (*collector_app.ROUTERS, alerts.router, experiments.router)


def scheduler_wanted(settings: Settings) -> bool:
    """Whether this process runs the scheduled jobs (``INFERWATCH_COLLECTOR_SCHEDULER``)."""
    mode = settings.collector_scheduler
    return mode == "on" or (mode == "auto" and settings.embedded)


@contextmanager
def embedded_scheduler(app: FastAPI, store: Store, settings: Settings) -> Iterator[None]:
    """The scheduler on ``store`` for the app's lifetime when :func:`scheduler_wanted`; ``app.state.scheduler``
    holds it (None when not wanted)."""
    app.state.scheduler = None
    if not scheduler_wanted(settings):
        yield
        return
    app.state.scheduler = start_scheduler(store)
    try:
        yield
    finally:
        app.state.scheduler.shutdown()


def create_app(settings: Settings | None = None, *, store: Store | None = None, run_migrations: bool = True
               ) -> FastAPI:
    """The full app. With ``store`` given, the caller owns it (it is not closed on shutdown)."""
    return collector_app.create_app(settings or get_settings(), store=store, run_migrations=run_migrations,
                                    routers=ROUTERS, lifespan_hooks=(embedded_scheduler,))
