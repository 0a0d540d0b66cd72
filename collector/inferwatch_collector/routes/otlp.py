"""``POST /v1/traces``: OTLP/HTTP trace ingest (protobuf or JSON, optional gzip); ``POST /v1/metrics``.

Flow: authenticate (``ingest`` scope) → size check → shed load early if the write queue is full → decode,
normalise and encode in the ingest pool (worker processes) → retried request? wait for its earlier write → hand
the blocks to the group-commit writer → answer once committed.
Answers follow the OTLP/HTTP spec: 200 with ``ExportTraceServiceResponse`` (``partial_success`` when some
spans were rejected), errors as ``google.rpc.Status`` in the request's encoding, 503 + ``Retry-After`` when
the write queue is full or the database is failing (exporters retry those), never a partial write: a request
is validated whole before any of its rows are queued.

``/v1/metrics`` accepts OTLP metrics (the SDK exports the GenAI client metrics next to its spans, and so do other
instrumentations) and counts their data points without storing them: every figure they carry (durations, token
usage, time to first chunk) is in the spans, per call and exact, and the rollups are computed from those. An
exporter pointed at the collector's base URL therefore succeeds instead of failing with 404 on every batch.

``/api/public/otel/v1/traces`` is the same trace handler at the path the Langfuse SDK (v3+) exports to, so a
Langfuse app switches by changing only its host and keys (Basic auth: see :func:`..auth.langfuse_pair`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import Future

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.concurrency import run_in_threadpool

from ..auth import AuthError, parse_authorization, require
from ..ingest_dedup import request_digest
from ..ingest_pool import PoolUnavailable
from ..otlp_decode import OtlpDecodeError, count_data_points, decode_metrics
from ..ratelimit import retry_after_header
from ..writer import QueueFull, WriteFailed

log = logging.getLogger(__name__)
router = APIRouter(tags=["ingest"])

#: Where the Langfuse SDK (v3+) exports OTLP/HTTP: ``{LANGFUSE_HOST}/api/public/otel/v1/traces``.
LANGFUSE_TRACES_PATH = "/api/public/otel/v1/traces"
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_GRPC_CODE = {400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 429: 8, 503: 14}  # google.rpc.Code per HTTP status


def _is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == _JSON


def otlp_error(status: int, message: str, content_type: str, headers: dict[str, str] | None = None) -> Response:
    """An OTLP/HTTP error answer: a ``google.rpc.Status`` in the request's encoding (JSON when unknown)."""
    body = status_pb2.Status(code=_GRPC_CODE.get(status, 2), message=message)
    if content_type.split(";")[0].strip().lower() == _PROTOBUF:
        return Response(body.SerializeToString(), status_code=status, media_type=_PROTOBUF, headers=headers)
    return Response(json.dumps({"code": body.code, "message": message}), status_code=status,
                    media_type=_JSON, headers=headers)


def _success(rejected: int, errors: list[str], content_type: str) -> Response:
    answer = ExportTraceServiceResponse()
    if rejected or errors:  # with rejected == 0 the message is a warning (e.g. a clamped token count)
        answer.partial_success.rejected_spans = rejected
        shown = "; ".join(errors[:10]) + (f"; ... {len(errors) - 10} more" if len(errors) > 10 else "")
        answer.partial_success.error_message = shown
    if _is_json(content_type):
        return Response(json_format.MessageToJson(answer, indent=None), media_type=_JSON)
    return Response(answer.SerializeToString(), media_type=_PROTOBUF)


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The raw body, or ``None`` as soon as it exceeds ``limit`` bytes (no unbounded buffering)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


_TRACE_RESPONSES = {
    400: {"description": "malformed body"}, 401: {"description": "missing/invalid key"},
    403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
    415: {"description": "unsupported content type or encoding"},
    429: {"description": "rate limit of the key exceeded; retry after Retry-After"},
    503: {"description": "write queue full or database unavailable; retry after Retry-After"}}


@router.post("/v1/traces", summary="OTLP/HTTP trace export (protobuf or JSON, optional gzip)",
             responses=_TRACE_RESPONSES)
@router.post(LANGFUSE_TRACES_PATH, name="export_traces_langfuse", responses=_TRACE_RESPONSES,
             summary="The same trace export at the Langfuse SDK's path (it authenticates with Basic "
                     "pk-lf-...:sk-lf-..., see `keys create --langfuse`)")
async def export_traces(request: Request) -> Response:
    app = request.app
    settings = app.state.settings
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "") or ""
    principal = await _ingest_principal(request)
    if isinstance(principal, Response):
        return principal

    body = await _read_body(request, settings.max_body_bytes)
    if body is None:
        app.state.ingest_stats.rejected_requests["too_large"] += 1
        return otlp_error(413, f"request body exceeds {settings.max_body_bytes} bytes", content_type)

    stats = app.state.ingest_stats
    digest = request_digest(principal.project_id, content_type, encoding, body)
    future, owner = app.state.recent_requests.begin(digest)
    if owner:
        budget = app.state.inflight_bytes
        if not budget.try_acquire(len(body)):
            stats.rejected_requests["inflight_full"] += 1
            future.set_exception(QueueFull(retry_after_s=1.0))
            return otlp_error(503, "collector is overloaded; retry later", content_type, {"Retry-After": "1"})
        size = len(body)  # the callback must not hold the body: the future outlives the request
        future.add_done_callback(lambda _: budget.release(size))  # committed, failed or shed
        failure = await _ingest(app, future, body, content_type, encoding, principal.project_id)
        if failure is not None:
            return failure
    else:  # a retry of a request we already have: wait for that write, write nothing again
        stats.duplicate_requests += 1
    try:
        rejected, errors = await asyncio.wrap_future(future)
    except QueueFull as exc:
        return otlp_error(503, "collector is overloaded; retry later", content_type,
                          {"Retry-After": str(int(exc.retry_after_s))})
    except (WriteFailed, PoolUnavailable) as exc:
        stats.rejected_requests["write_failed"] += 1
        return otlp_error(503, f"{exc}; retry later", content_type, {"Retry-After": "5"})
    except OtlpDecodeError as exc:
        return otlp_error(exc.status, exc.message, content_type)
    except Exception as exc:  # a bug of ours: say so without a 500 (exporters would retry it forever)
        return otlp_error(400, f"the collector could not process this request ({type(exc).__name__})",
                          content_type)
    return _success(rejected, errors, content_type)


async def _ingest_principal(request: Request):
    """The caller's principal with the ``ingest`` scope, or the OTLP error answer to send (401/403, or 429
    when the key is over its rate limit)."""
    try:
        key = parse_authorization(request.headers.get("authorization"),
                                  request.headers.get("x-inferwatch-api-key"))
        principal = await run_in_threadpool(request.app.state.keys.authenticate, key)
        principal = require(principal, "ingest")
    except AuthError as exc:
        return otlp_error(exc.status, exc.message, request.headers.get("content-type", ""))
    limiter = getattr(request.app.state, "ingest_limiter", None)
    wait_s = limiter.acquire(principal.key_id) if limiter is not None else 0.0
    if wait_s > 0:  # before the body is read: a flooding key costs us as little as possible
        request.app.state.ingest_stats.rejected_requests["rate_limited"] += 1
        return otlp_error(429, "rate limit of this API key exceeded; retry later",
                          request.headers.get("content-type", ""), {"Retry-After": retry_after_header(wait_s)})
    return principal


@router.post(
    "/v1/metrics",
    summary="OTLP/HTTP metrics export: validated and counted, not stored (the spans carry the same figures)",
    responses={400: {"description": "malformed body"}, 401: {"description": "missing/invalid key"},
               403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
               415: {"description": "unsupported content type or encoding"},
               429: {"description": "rate limit of the key exceeded; retry after Retry-After"}},
)
async def export_metrics(request: Request) -> Response:
    app = request.app
    content_type = request.headers.get("content-type", "")
    principal = await _ingest_principal(request)
    if isinstance(principal, Response):
        return principal
    limit = app.state.settings.max_body_bytes
    body = await _read_body(request, limit)
    if body is None:
        return otlp_error(413, f"request body exceeds {limit} bytes", content_type)
    try:
        message = await run_in_threadpool(decode_metrics, body, content_type,
                                          request.headers.get("content-encoding") or None, limit)
    except OtlpDecodeError as exc:
        return otlp_error(exc.status, exc.message, content_type)
    app.state.ingest_stats.metric_points_received += count_data_points(message)
    answer = ExportMetricsServiceResponse()
    if _is_json(content_type):
        return Response(json_format.MessageToJson(answer, indent=None), media_type=_JSON)
    return Response(answer.SerializeToString(), media_type=_PROTOBUF)


async def _ingest(app, future: Future, body: bytes, content_type: str, encoding: str, project_id: str
                  ) -> Response | None:
    """Process and queue one request, resolving ``future`` with ``(rejected, errors)`` once committed.

    Returns an error response for failures that need no waiting (load shedding); every other failure is set
    on ``future`` so a concurrent retry of the same request sees it too.
    """
    writer, stats = app.state.writer, app.state.ingest_stats
    if writer.pending_rows >= writer.max_queue_rows:  # shed before paying for decoding
        writer.stats.rejected_queue_full += 1
        stats.rejected_requests["queue_full"] += 1
        exc = QueueFull(retry_after_s=max(1.0, writer.flush_interval_s))
        future.set_exception(exc)
        return otlp_error(503, "collector is overloaded; retry later", content_type,
                          {"Retry-After": str(int(exc.retry_after_s))})
    try:
        result = await app.state.ingest_pool.process(body, content_type, encoding or None, project_id)
    except OtlpDecodeError as exc:
        stats.rejected_requests[str(exc.status)] += 1
        future.set_exception(exc)
        return None
    except PoolUnavailable as exc:
        stats.rejected_requests["worker_failed"] += 1
        future.set_exception(exc)
        return None
    except Exception as exc:
        log.exception("normalising an OTLP request failed")
        stats.rejected_requests["400"] += 1
        future.set_exception(exc)
        return None
    stats.spans_rejected += result.rejected
    try:
        written = writer.submit(result.tables)
    except QueueFull as exc:
        stats.rejected_requests["queue_full"] += 1
        future.set_exception(exc)
        return None
    except WriteFailed as exc:
        future.set_exception(exc)
        return None

    def committed(done: Future) -> None:
        if future.done():
            return
        if done.exception() is not None:
            future.set_exception(done.exception())
        else:
            stats.spans_accepted += result.accepted
            if result.held:
                app.state.call_pairing.add(result.held)
            for entity, count in result.redactions.items():
                stats.redactions[entity] += count
            future.set_result((result.rejected, result.errors))

    written.add_done_callback(committed)
    return None
