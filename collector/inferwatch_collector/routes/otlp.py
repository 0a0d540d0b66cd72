"""``POST /v1/traces``: OTLP/HTTP trace ingest (protobuf or JSON, optional gzip); ``POST /v1/metrics``.

The flow every export shares (auth, limits, retries, shedding, answers) is :func:`.otlp_http.export`; here a
request is decoded, normalised and encoded in the ingest pool (worker processes) and its blocks handed to the
group-commit writer; the held LLM calls of its rows join the pairing window once committed. 200 with
``ExportTraceServiceResponse`` (``partial_success`` when some spans were rejected), never a partial write: a
request is validated whole before any of its rows are queued.

``/v1/metrics`` accepts OTLP metrics (the SDK exports the GenAI client metrics next to its spans, and so do other
instrumentations) and counts their data points without storing them: every figure they carry (durations, token
usage, time to first chunk) is in the spans, per call and exact, and the rollups are computed from those. An
exporter pointed at the collector's base URL therefore succeeds instead of failing with 404 on every batch.

``/api/public/otel/v1/traces`` is the same trace handler at the path the Langfuse SDK (v3+) exports to, so a
Langfuse app switches by changing only its host and keys (Basic auth: see :func:`..auth.langfuse_pair`).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from functools import partial

from fastapi import APIRouter, Request, Response
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ..inflight import Overloaded, Reservation, decode_within
from ..ingest_pool import PoolUnavailable
from ..otlp_decode import OtlpDecodeError, count_data_points, decode_metrics
from ..writer import QueueFull
from .otlp_http import (
    EXPORT_RESPONSES, admit, answer, export, ingest_principal, otlp_error, read_body, shed_when_queue_full,
    shown_errors, write_then_resolve,
)  # fmt: skip

log = logging.getLogger(__name__)
router = APIRouter(tags=["ingest"])

#: Where the Langfuse SDK (v3+) exports OTLP/HTTP: ``{LANGFUSE_HOST}/api/public/otel/v1/traces``.
LANGFUSE_TRACES_PATH = "/api/public/otel/v1/traces"


def _success(rejected: int, errors: list[str], content_type: str) -> Response:
    response = ExportTraceServiceResponse()
    if rejected or errors:  # with rejected == 0 the message is a warning (e.g. a clamped token count)
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = shown_errors(errors)
    return answer(response, content_type)


@router.post("/v1/traces", summary="OTLP/HTTP trace export (protobuf or JSON, optional gzip)",
             responses=EXPORT_RESPONSES)
@router.post(LANGFUSE_TRACES_PATH, name="export_traces_langfuse", responses=EXPORT_RESPONSES,
             summary="The same trace export at the Langfuse SDK's path (it authenticates with Basic "
                     "pk-lf-...:sk-lf-..., see `keys create --langfuse`)")
async def export_traces(request: Request) -> Response:
    return await export(request, kind="traces", ingest=_ingest, success=_success)


def metric_points(body: bytes, content_type: str, content_encoding: str | None, max_bytes: int) -> int:
    """Decode a metrics request and count its data points (runs in the ingest pool: the message stays there)."""
    return count_data_points(decode_metrics(body, content_type, content_encoding, max_bytes))


@router.post(
    "/v1/metrics",
    summary="OTLP/HTTP metrics export: validated and counted, not stored (the spans carry the same figures)",
    responses=EXPORT_RESPONSES,
)
async def export_metrics(request: Request) -> Response:
    app = request.app
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding") or None
    principal = await ingest_principal(request)
    if isinstance(principal, Response):
        return principal
    limit = app.state.settings.max_body_bytes
    body = await read_body(request, limit)
    if body is None:
        app.state.ingest_stats.rejected_requests["too_large"] += 1
        return otlp_error(413, f"request body exceeds {limit} bytes", content_type)
    admitted = await admit(app, principal.project_id, body, encoding or "", content_type, "metrics")
    if isinstance(admitted, Response):
        return admitted
    reservation, cap = admitted
    pool, project = app.state.ingest_pool, principal.project_id
    try:
        points = await decode_within(reservation, cap, limit, lambda most: pool.run(
            project, partial(metric_points, body, content_type, encoding, most)))
    except OtlpDecodeError as exc:
        return otlp_error(exc.status, exc.message, content_type)
    except (Overloaded, PoolUnavailable) as exc:
        return otlp_error(503, f"{exc}", content_type, {"Retry-After": "1"})
    finally:
        reservation.release()
    app.state.ingest_stats.metric_points_received += points
    return answer(ExportMetricsServiceResponse(), content_type)


async def _ingest(app, future: Future, body: bytes, content_type: str, encoding: str, project_id: str,
                  admitted: tuple[Reservation, int]) -> Response | None:
    """Process and queue one request, resolving ``future`` with ``(rejected, errors)`` once committed.

    Returns an error response for failures that need no waiting (load shedding); every other failure is set
    on ``future`` so a concurrent retry of the same request sees it too.
    """
    shed = shed_when_queue_full(app, future, content_type)
    if shed is not None:
        return shed
    writer = app.state.writer
    writer.announce()  # while it is decoded, the writer waits for its rows rather than insert without them
    submitted = False
    try:
        submitted = await _decode_and_submit(app, future, body, content_type, encoding, project_id, admitted)
    finally:
        if not submitted:
            writer.withdraw()
    return None


async def _decode_and_submit(app, future: Future, body: bytes, content_type: str, encoding: str, project_id: str,
                             admitted: tuple[Reservation, int]) -> bool:
    """Decode and normalise in the ingest pool, then hand the rows to the writer (as the announced request);
    False when the request failed before that (``future`` holds the failure)."""
    stats = app.state.ingest_stats
    reservation, cap = admitted
    pool = app.state.ingest_pool
    try:
        result = await decode_within(reservation, cap, app.state.settings.max_body_bytes, lambda most: pool.process(
            body, content_type, encoding or None, project_id, most))
    except Overloaded as exc:
        stats.rejected_requests["inflight_full"] += 1
        future.set_exception(QueueFull(retry_after_s=exc.retry_after_s))
        return False
    except OtlpDecodeError as exc:
        stats.rejected_requests[str(exc.status)] += 1
        future.set_exception(exc)
        return False
    except PoolUnavailable as exc:
        stats.rejected_requests["worker_failed"] += 1
        future.set_exception(exc)
        return False
    except Exception as exc:
        log.exception("normalising an OTLP request failed")
        stats.rejected_requests["400"] += 1
        future.set_exception(exc)
        return False
    stats.spans_rejected += result.rejected
    reservation.resize(len(body) + sum(len(part.data) for part in result.tables.values()))  # what now waits

    def committed() -> tuple[int, list[str]]:
        stats.spans_accepted += result.accepted
        if result.held:
            app.state.call_pairing.add(result.held)
        for entity, count in result.redactions.items():
            stats.redactions[entity] += count
        return result.rejected, result.errors

    write_then_resolve(app, future, result.tables, committed, announced=True)
    return True
