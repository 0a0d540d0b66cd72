"""``POST /v1/logs``: OTLP/HTTP log ingest (protobuf or JSON, optional gzip) for the GenAI events.

Flow, as for traces (:mod:`.otlp`): authenticate (``ingest`` scope, Bearer or Basic, rate limit) → size check →
a retried request waits for its first write → shed load early when the write queue is full → decode and
normalise (:func:`..normalize.logs.normalize_logs`) → hand the prompt-log rows to the group-commit writer → answer
once committed. The GenAI events' content lands, redacted, in ``prompt_logs`` for the span it belongs to; their
finish reasons go to ``app.state.call_pairing.patch_finish_reasons(project_id, {(trace_id, span_id): reason})``
when the app has that component (it holds recent third-party LLM rows and patches one lacking a finish reason; it
returns how many it applied), else they are counted as not applied. Every other record is acknowledged and
dropped. Counts: ``inferwatch_log_records_{received,stored,dropped}_total`` and
``inferwatch_finish_reason_patches_total`` in ``/metrics``.

Answers: 200 with ``ExportLogsServiceResponse`` (``partial_success`` for rejected records) in the request's
encoding; errors as ``google.rpc.Status``; 503 + ``Retry-After`` when the collector is overloaded.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from typing import Any

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from starlette.concurrency import run_in_threadpool

from ..ingest_dedup import request_digest
from ..native import encode_rows
from ..normalize.logs import NormalizedLogs, normalize_logs
from ..otlp_decode import OtlpDecodeError, decode_logs
from ..writer import QueueFull, WriteFailed
from .otlp import _ingest_principal, _is_json, _read_body, otlp_error

log = logging.getLogger(__name__)
router = APIRouter(tags=["ingest"])

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"


def _success(rejected: int, errors: list[str], content_type: str) -> Response:
    answer = ExportLogsServiceResponse()
    if rejected or errors:
        answer.partial_success.rejected_log_records = rejected
        shown = "; ".join(errors[:10]) + (f"; ... {len(errors) - 10} more" if len(errors) > 10 else "")
        answer.partial_success.error_message = shown
    if _is_json(content_type):
        return Response(json_format.MessageToJson(answer, indent=None), media_type=_JSON)
    return Response(answer.SerializeToString(), media_type=_PROTOBUF)


@router.post(
    "/v1/logs",
    summary="OTLP/HTTP log export (protobuf or JSON, optional gzip): GenAI events → redacted prompt logs",
    responses={400: {"description": "malformed body"}, 401: {"description": "missing/invalid key"},
               403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
               415: {"description": "unsupported content type or encoding"},
               429: {"description": "rate limit of the key exceeded; retry after Retry-After"},
               503: {"description": "write queue full or database unavailable; retry after Retry-After"}},
)
async def export_logs(request: Request) -> Response:
    app = request.app
    settings = app.state.settings
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "") or ""
    principal = await _ingest_principal(request)
    if isinstance(principal, Response):
        return principal
    stats = app.state.ingest_stats
    body = await _read_body(request, settings.max_body_bytes)
    if body is None:
        stats.rejected_requests["too_large"] += 1
        return otlp_error(413, f"request body exceeds {settings.max_body_bytes} bytes", content_type)

    # "logs:" keeps a logs request apart from a traces request with the same bytes (an empty body is both)
    digest = request_digest(principal.project_id, "logs:" + content_type, encoding, body)
    future, owner = app.state.recent_requests.begin(digest)
    if owner:
        budget = app.state.inflight_bytes
        if not budget.try_acquire(len(body)):
            stats.rejected_requests["inflight_full"] += 1
            future.set_exception(QueueFull(retry_after_s=1.0))
            return otlp_error(503, "collector is overloaded; retry later", content_type, {"Retry-After": "1"})
        size = len(body)
        future.add_done_callback(lambda _: budget.release(size))
        failure = await _ingest(app, future, body, content_type, encoding, principal.project_id)
        if failure is not None:
            return failure
    else:
        stats.duplicate_requests += 1
    try:
        rejected, errors = await asyncio.wrap_future(future)
    except QueueFull as exc:
        return otlp_error(503, "collector is overloaded; retry later", content_type,
                          {"Retry-After": str(int(exc.retry_after_s))})
    except WriteFailed as exc:
        stats.rejected_requests["write_failed"] += 1
        return otlp_error(503, f"{exc}; retry later", content_type, {"Retry-After": "5"})
    except OtlpDecodeError as exc:
        return otlp_error(exc.status, exc.message, content_type)
    except Exception as exc:  # a bug of ours: say so without a 500 (exporters would retry it forever)
        return otlp_error(400, f"the collector could not process this request ({type(exc).__name__})",
                          content_type)
    return _success(rejected, errors, content_type)


def _process(body: bytes, content_type: str, encoding: str, project_id: str, settings: Any) -> NormalizedLogs:
    message = decode_logs(body, content_type, encoding or None, settings.max_body_bytes)
    return normalize_logs(message, project_id, content_capture=settings.content_capture,
                          retention_days=settings.prompt_retention_days)


async def _ingest(app: Any, future: Future, body: bytes, content_type: str, encoding: str, project_id: str
                  ) -> Response | None:
    """Decode, normalise and queue one request, resolving ``future`` with ``(rejected, errors)`` once committed;
    an error answer for load shedding, every other failure set on ``future``."""
    writer, stats = app.state.writer, app.state.ingest_stats
    if writer.pending_rows >= writer.max_queue_rows:
        writer.stats.rejected_queue_full += 1
        stats.rejected_requests["queue_full"] += 1
        exc = QueueFull(retry_after_s=max(1.0, writer.flush_interval_s))
        future.set_exception(exc)
        return otlp_error(503, "collector is overloaded; retry later", content_type,
                          {"Retry-After": str(int(exc.retry_after_s))})
    try:
        result = await run_in_threadpool(_process, body, content_type, encoding, project_id, app.state.settings)
    except OtlpDecodeError as exc:
        stats.rejected_requests[str(exc.status)] += 1
        future.set_exception(exc)
        return None
    except Exception as exc:
        log.exception("normalising an OTLP logs request failed")
        stats.rejected_requests["400"] += 1
        future.set_exception(exc)
        return None
    _patch_finish_reasons(app, project_id, result.finish_reasons)
    tables = {"prompt_logs": encode_rows("prompt_logs", result.prompt_logs)} if result.prompt_logs else {}
    try:
        written = writer.submit(tables)
    except (QueueFull, WriteFailed) as exc:
        if isinstance(exc, QueueFull):
            stats.rejected_requests["queue_full"] += 1
        future.set_exception(exc)
        return None

    def committed(done: Future) -> None:
        if future.done():
            return
        if done.exception() is not None:
            future.set_exception(done.exception())
        else:  # counted once committed: a request retried after a failed write counts once
            stats.log_records_received += result.received
            stats.log_records_stored += result.stored
            for reason, count in result.dropped.items():
                stats.log_records_dropped[reason] += count
            if result.rejected:
                stats.log_records_dropped["rejected"] += result.rejected
            for entity, count in result.redactions.items():
                stats.redactions[entity] += count
            future.set_result((result.rejected, result.errors))

    written.add_done_callback(committed)
    return None


def _patch_finish_reasons(app: Any, project_id: str, reasons: dict[tuple[str, str], str]) -> None:
    """Hand the finish reasons to the call-pairing component when the app has one; count what became of them."""
    if not reasons:
        return
    counts = app.state.ingest_stats.finish_reason_patches
    pairing = getattr(app.state, "call_pairing", None)
    if pairing is None:
        counts["not_applied"] += len(reasons)
        return
    try:
        applied = pairing.patch_finish_reasons(project_id, reasons)
    except Exception:  # never fail an ingest request for it
        log.exception("patching finish reasons failed")
        counts["not_applied"] += len(reasons)
        return
    applied = applied if isinstance(applied, int) else len(reasons)
    counts["applied"] += applied
    counts["not_applied"] += len(reasons) - applied
