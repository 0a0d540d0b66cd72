"""The collector's FastAPI app factory.

Nothing is opened at import: the lifespan opens the store (unless a test hands one in), applies pending
migrations, and starts the group-commit writer, the API key poll (revocations made through other collectors) and
the internal ``/metrics`` listener (``metrics_host:metrics_port``, not the public port), then lets the kernel
reclaim the chDB library pages that only the start touched (:mod:`.library_pages`); shutdown drains the
writer before closing the store, so a request that was acknowledged is always in the database. The API docs and
``/openapi.json`` are served only with ``api_docs`` on.

The app serves the collector's own routers unless given others; whoever composes the platform adds its routers
and lifespan hooks (background work that needs the open store) through :func:`create_app`'s arguments.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager
from dataclasses import dataclass, field

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .auth import KEYS_UNAVAILABLE_RETRY_AFTER_S, AuthError, KeyStore
from .ingest_dedup import RecentRequests
from .inflight import InflightBudget
from .library_pages import release_library_pages
from .ingest_pool import IngestPool
from .metrics import render as render_metrics
from .metrics_listener import start_listener
from .migrations import migrate, target_for
from .pairing import CallPairing
from .cost.ingest_pricer import pricer_for
from .ratelimit import RateLimiter
from .routes import budgets, costs, dashboard, feedback, health, keys, logs, otlp, planner, privacy, query
from .settings import Settings, get_settings
from .spool import open_spool
from .store import Store
from .user_ids import UserHasher, load_user_hash_key
from .writer import BatchWriter

log = logging.getLogger(__name__)

#: The collector's own routers, in the order they are mounted.
ROUTERS: tuple[APIRouter, ...] = tuple(module.router for module in (
    health, otlp, logs, query, keys, feedback, planner, costs, budgets, privacy, dashboard))

#: Entered once the app's state is set up (store open, writer running), exited before the writer drains and the
#: store closes: background work on the store (a scheduler) runs inside it.
LifespanHook = Callable[[FastAPI, Store, Settings], AbstractContextManager[object]]


@dataclass
class IngestStats:
    """Request-level ingest counters (the writer keeps its own)."""

    spans_accepted: int = 0
    spans_rejected: int = 0
    duplicate_requests: int = 0
    metric_points_received: int = 0  # OTLP metrics are counted, not stored (see routes/otlp.py)
    log_records_received: int = 0  # OTLP log records (routes/logs.py)
    log_records_stored: int = 0  # GenAI events whose content is in prompt_logs
    log_records_dropped: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # reason -> n
    finish_reason_patches: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # outcome -> n
    redactions: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # entity -> replaced
    rejected_requests: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))


def build_writer(store: Store, settings: Settings) -> BatchWriter:
    """The group-commit writer configured from settings, inserting through ``store``."""
    return BatchWriter(
        store.insert_native,
        flush_rows=settings.flush_rows,
        flush_interval_s=settings.flush_interval_s,
        max_batch_rows=settings.max_batch_rows,
        max_queue_rows=settings.max_queue_rows,
        min_insert_interval_s=settings.min_insert_interval_s,
        retries=settings.insert_retries,
    )


def build_key_store(store: Store, settings: Settings) -> KeyStore:
    """The API key checker configured from settings (caches, unknown-key limit; polling starts separately)."""
    return KeyStore(store, cache_seconds=settings.key_cache_s, unknown_cache_seconds=settings.unknown_key_cache_s,
                    unknown_cache_size=settings.unknown_key_cache_size,
                    unknown_lookups_per_s=settings.unknown_key_lookups_per_s,
                    unknown_lookup_burst=settings.unknown_key_lookup_burst)


def create_app(settings: Settings | None = None, *, store: Store | None = None, run_migrations: bool = True,
               routers: Sequence[APIRouter] = ROUTERS, lifespan_hooks: Sequence[LifespanHook] = ()) -> FastAPI:
    """Build the collector app serving ``routers``, with ``lifespan_hooks`` entered in order on startup (and
    exited in reverse on shutdown). With ``store`` given, the caller owns it (it is not closed on shutdown)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = store is None
        active = store or Store.open(settings)
        try:
            if run_migrations:
                migrate(active, target_for(settings, active), progress=lambda msg: log.info("%s", msg))
            prices_file = str(settings.prices_file) if settings.prices_file else None
            pricer_for(prices_file)  # a bad price file stops the start here, with its message, not per request
            spool = open_spool(settings)  # before anything starts: a spool locked by another collector stops here
            user_hash_key = load_user_hash_key(settings, active)  # every replica hashes user ids alike
            pool = IngestPool(settings.ingest_workers, max_bytes=settings.max_body_bytes,
                              content_capture=settings.content_capture, retention_days=settings.retention_days,
                              prices_file=prices_file, hold_calls=settings.pairing_window_s > 0,
                              user_hash_key=user_hash_key)
            pool.start()
            writer = build_writer(active, settings)
            writer.attach_spool(spool, replay_interval_s=settings.spool_replay_interval_s)
            writer.start()
            pairing = CallPairing(active, writer.submit, lambda *call: pricer_for(prices_file)(*call),
                                  settings.pairing_window_s)
            pairing.recover()
            pairing.start(tick_s=min(1.0, max(settings.pairing_window_s / 4, 0.05)))
            app.state.settings = settings
            app.state.store = active
            app.state.user_hasher = UserHasher(user_hash_key)  # hash(raw user id) as stored, e.g. for forget
            app.state.writer = writer
            app.state.call_pairing = pairing
            app.state.keys = build_key_store(active, settings)
            app.state.recent_requests = RecentRequests(settings.dedup_window)
            app.state.ingest_stats = IngestStats()
            app.state.ingest_pool = pool
            app.state.inflight = InflightBudget(settings.max_inflight_bytes,
                                                project_share=settings.inflight_project_share,
                                                max_wait_s=settings.inflight_wait_s)
            app.state.ingest_limiter = RateLimiter(settings.ingest_rate_limit_per_key,
                                                   settings.ingest_rate_burst or None)
            app.state.keys.start_polling(settings.key_poll_s)
            listener = start_listener(lambda: render_metrics(app.state), settings.metrics_host,
                                      settings.metrics_port)
            app.state.metrics_listener = listener
            try:
                with ExitStack() as hooks:
                    for hook in lifespan_hooks:
                        hooks.enter_context(hook(app, active, settings))
                    if settings.release_library_pages and settings.embedded:
                        release_library_pages()  # what only the engine's start touched (library_pages.py)
                    yield
            finally:
                if listener is not None:
                    listener.stop()
                app.state.keys.stop_polling()
                pool.close()
                pairing.stop()
                writer.stop()
        finally:
            if owned:
                active.close()

    app = FastAPI(
        title="inferwatch collector",
        version="0.1.0",
        description="OTLP ingest and query API of inferwatch. Authenticate with `Authorization: Bearer <key>`.",
        lifespan=lifespan,
        generate_unique_id_function=lambda route: f"{route.tags[0]}-{route.name}" if route.tags else route.name,
        # off the public port unless asked for (api_docs); app.openapi() still builds the spec for tooling
        openapi_url="/openapi.json" if settings.api_docs else None,
    )
    for router in routers:
        app.include_router(router)

    @app.exception_handler(AuthError)
    async def _auth_error(_: Request, exc: AuthError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if exc.status == 503:
            headers = {"Retry-After": str(KEYS_UNAVAILABLE_RETRY_AFTER_S)}
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
            problems.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
        return JSONResponse({"error": "; ".join(problems)}, status_code=422)

    return app
