"""The process-wide SDK state: inert until :func:`init`, idempotent, undone by :func:`shutdown`.

Every recording path asks :func:`get_pipeline` first and does nothing when it is ``None``, so importing the SDK,
or calling instrumented code before ``init()``, costs nothing and changes nothing (DESIGN §4 rule 2).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Mapping

from . import _guard, context
from .metrics import InferenceMetrics
from .options import Options, resolve

log = logging.getLogger("inferwatch")

_lock = threading.Lock()
_pipeline: Any = None  # telemetry.Pipeline once initialised
_options: Options | None = None


def init(*, endpoint: str | None = None, api_key: str | None = None, service_name: str | None = None,
         capture: str | None = None, sample_rate: float | None = None, max_queue_size: int | None = None,
         max_export_batch_size: int | None = None, schedule_delay_ms: int | None = None,
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
    with ``.text``, like :class:`inferwatch.redaction.Redactor`). ``budget_guard``: ``True``, or the keyword arguments of
    :func:`inferwatch.budget_guard` (e.g. ``{"downgrade": {"gpt-4o": "gpt-4o-mini"}}``), turns the budget guard
    on with this endpoint and key. ``disk_buffer_dir`` (off by default) keeps span export requests the collector
    could not take on disk, at most ``disk_buffer_max_bytes``, and re-sends them in order when it is back, also
    after a restart with the same directory (:mod:`inferwatch.disk_buffer`). ``on_call(metrics)`` is given every
    recorded LLM call's :class:`InferenceMetrics` (a complete copy: tokens, TTFT, flags, tags, trace and span
    ids), whichever way it was made (wrapped clients, instrumented ones, the manual API), in the export thread, never on
    the app's: for an app's own logs or metrics. It runs before the call's span is exported, so a slow hook holds
    the export back; one that raises is counted in ``stats()["internal_errors"]``. Calls dropped before the export
    thread (queue full, sampled out) are not given to it."""
    global _pipeline, _options
    with _lock:
        if _pipeline is not None and _options is not None:
            return _options
        options = resolve(endpoint=endpoint, api_key=api_key, service_name=service_name, capture=capture,
                          sample_rate=sample_rate, max_queue_size=max_queue_size,
                          max_export_batch_size=max_export_batch_size, schedule_delay_ms=schedule_delay_ms,
                          export_timeout_s=export_timeout_s, user_hash_key=user_hash_key, enabled=enabled,
                          disk_buffer_dir=disk_buffer_dir, disk_buffer_max_bytes=disk_buffer_max_bytes)
        if not options.enabled:
            _options = options
            return options
        guard = None
        if budget_guard:  # built (and its arguments checked) before anything starts
            from . import budget

            settings = {} if budget_guard is True else dict(budget_guard)
            guard = budget.make_guard(**{"endpoint": options.endpoint, "api_key": options.api_key, **settings})
        from .telemetry import Pipeline

        context.set_hash_key(options.user_hash_key or None)
        _pipeline = Pipeline(options, exporter=exporter, metric_exporter=metric_exporter, before_send=before_send,
                             redactor=redactor, on_call=on_call)
        _options = options
        if guard is not None:
            budget.install(guard)
        return options


def get_pipeline() -> Any:
    """The running pipeline, or ``None`` before ``init()`` (every recorder checks this first)."""
    return _pipeline


def get_options() -> Options | None:
    return _options


def flush(timeout: float = 5.0) -> bool:
    """Export everything recorded so far (spans, metrics, feedback); True when it all left within ``timeout``."""
    from .feedback import flush as flush_feedback

    deadline = time.monotonic() + timeout
    pipeline = _pipeline
    done = True
    try:
        if pipeline is not None:
            done = bool(pipeline.flush(timeout))
        return bool(flush_feedback(max(0.0, deadline - time.monotonic()))) and done
    except Exception as exc:  # noqa: BLE001 - flush must never raise into the app
        _guard.record_internal_error("flush", exc)
        return False


def shutdown(timeout: float = 5.0) -> None:
    """Flush, stop the export thread and undo every patch; ``init()`` may be called again afterwards."""
    global _pipeline, _options
    with _lock:
        pipeline, _pipeline, _options = _pipeline, None, None
    from . import budget
    from .integrations import uninstrument_all

    budget.stop()
    uninstrument_all()
    from .feedback import flush as flush_feedback

    with _guard.guard("shutdown.feedback"):
        flush_feedback(timeout)
    if pipeline is not None:
        try:
            pipeline.shutdown(timeout)
        except Exception as exc:  # noqa: BLE001
            _guard.record_internal_error("shutdown", exc)


def stats() -> dict[str, Any]:
    """Queue and export counters, drops by reason and internal errors (empty counters before init); feedback
    counters; the budget guard's (``"budget_guard"``: refreshes ok/failed, ``last_error``, ``last_refresh_age_s``,
    ``fail_open``, ``calls_blocked``, ``calls_downgraded``; ``{"enabled": False}`` without a guard)."""
    from . import budget
    from .feedback import stats as feedback_stats

    pipeline = _pipeline
    if pipeline is None:
        result = {"queued": 0, "exported": 0, "dropped": {}, "export_failures": 0,
                  "internal_errors": dict(_guard.internal_errors)}
    else:
        result = pipeline.stats()
    result["feedback"] = feedback_stats()
    result["budget_guard"] = budget.stats()
    return result
