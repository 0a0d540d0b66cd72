"""Starting and stopping the SDK: :func:`init` (idempotent), :func:`flush`, :func:`shutdown` (undoes everything)
and :func:`stats`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from . import _guard, budget, client, context, feedback
from .integrations import uninstrument_all
from .metrics import InferenceMetrics
from .options import Options, resolve
from .telemetry.pipeline import Pipeline

_lock = threading.Lock()


def init(*, endpoint: str | None = None, api_key: str | None = None, service_name: str | None = None,
         capture: str | None = None, sample_rate: float | None = None, max_queue_size: int | None = None,
         max_export_batch_size: int | None = None, max_backlog_batch_size: int | None = None,
         max_concurrent_exports: int | None = None, schedule_delay_ms: int | None = None,
         export_timeout_s: float | None = None, user_hash_key: str | None = None, enabled: bool | None = None,
         exporter: Any = None, budget_guard: bool | Mapping[str, Any] | None = None,
         metric_exporter: Any = None, before_send: Callable[[Any], Any] | None = None,
         redactor: Any = None, disk_buffer_dir: str | None = None,
         disk_buffer_max_bytes: int | None = None,
         on_call: Callable[[InferenceMetrics], Any] | None = None) -> Options:
    """Start the SDK (argument > ``INFERWATCH_*`` env var > default). Calling it again returns the running
    configuration unchanged: call :func:`shutdown` first to change it. ``exporter`` / ``metric_exporter`` replace
    the OTLP span / metric exporters (tests, or sending elsewhere). ``before_send(span)`` sees every finished span
    in the export thread after redaction and returns it, a replacement ``ReadableSpan``, or None to drop it (a
    hook that raises drops the span too: it may be a privacy filter; both are counted). ``redactor`` replaces the
    built-in PII/secret redactor for ``capture="redacted"`` (an object with ``redact(text)`` returning a result
    with ``.text``, like :class:`inferwatch.redaction.Redactor`). ``budget_guard``: ``True``, or the keyword
    arguments of :func:`inferwatch.budget_guard` (e.g. ``{"downgrade": {"gpt-4o": "gpt-4o-mini"}}``), turns the
    budget guard on with this endpoint and key. ``disk_buffer_dir`` (off by default) keeps span export requests
    the collector could not take on disk, at most ``disk_buffer_max_bytes``, and re-sends them in order when it
    is back, also after a restart with the same directory (:mod:`inferwatch.disk_buffer`). ``on_call(metrics)``
    is given every recorded LLM call's :class:`InferenceMetrics` (a complete copy: tokens, TTFT, flags, tags,
    trace and span ids), whichever way it was made (wrapped clients, instrumented ones, the manual API), in the
    export thread, never on the app's: for an app's own logs or metrics. It runs before the call's span is
    exported, so a slow hook holds the export back; one that raises is counted in
    ``stats()["internal_errors"]``. Calls dropped before the export thread (queue full, sampled out) are not
    given to it. ``max_concurrent_exports`` (4) span export requests may be in flight at once, and requests grow
    from ``max_export_batch_size`` (512) up to ``max_backlog_batch_size`` (8,192) spans while a backlog builds up
    (:mod:`inferwatch.telemetry.senders`)."""
    with _lock:
        running = client.get_options()
        if client.get_pipeline() is not None and running is not None:
            return running
        options = resolve(endpoint=endpoint, api_key=api_key, service_name=service_name, capture=capture,
                          sample_rate=sample_rate, max_queue_size=max_queue_size,
                          max_export_batch_size=max_export_batch_size,
                          max_backlog_batch_size=max_backlog_batch_size,
                          max_concurrent_exports=max_concurrent_exports, schedule_delay_ms=schedule_delay_ms,
                          export_timeout_s=export_timeout_s, user_hash_key=user_hash_key, enabled=enabled,
                          disk_buffer_dir=disk_buffer_dir, disk_buffer_max_bytes=disk_buffer_max_bytes)
        if not options.enabled:
            client.set_running(None, options)
            return options
        guard = None
        if budget_guard:  # built (and its arguments checked) before anything starts
            settings = {} if budget_guard is True else dict(budget_guard)
            guard = budget.make_guard(**{"endpoint": options.endpoint, "api_key": options.api_key, **settings})
        context.set_hash_key(options.user_hash_key or None)
        pipeline = Pipeline(options, exporter=exporter, metric_exporter=metric_exporter, before_send=before_send,
                            redactor=redactor, on_call=on_call)
        client.set_running(pipeline, options)
        if guard is not None:
            budget.install(guard)
        return options


def flush(timeout: float = 5.0) -> bool:
    """Export everything recorded so far (spans, metrics, feedback); True when it all left within ``timeout``."""
    pipeline = client.get_pipeline()
    try:
        return pipeline is None or bool(pipeline.flush(timeout))
    except Exception as exc:  # noqa: BLE001 - flush must never raise into the app
        _guard.record_internal_error("flush", exc)
        return False


def shutdown(timeout: float = 5.0) -> None:
    """Flush, stop the export thread and undo every patch; ``init()`` may be called again afterwards."""
    with _lock:
        pipeline = client.get_pipeline()
        client.set_running(None, None)
    budget.stop()
    uninstrument_all()
    if pipeline is not None:
        try:
            pipeline.shutdown(timeout)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("shutdown", exc)


def stats() -> dict[str, Any]:
    """Queue and export counters, drops by reason and internal errors (empty counters before init); feedback
    counters; the budget guard's (``"budget_guard"``: refreshes ok/failed, ``last_error``, ``last_refresh_age_s``,
    ``fail_open``, ``calls_blocked``, ``calls_downgraded``; ``{"enabled": False}`` without a guard)."""
    pipeline = client.get_pipeline()
    if pipeline is None:
        result = {"queued": 0, "exported": 0, "dropped": {}, "export_failures": 0,
                  "internal_errors": dict(_guard.internal_errors)}
    else:
        result = pipeline.stats()
    result["feedback"] = feedback.stats()
    result["budget_guard"] = budget.stats()
    return result
