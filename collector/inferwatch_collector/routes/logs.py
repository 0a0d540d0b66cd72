"""``POST /v1/logs``: OTLP/HTTP log ingest (protobuf or JSON, optional gzip) for the GenAI events.

The flow every export shares is :func:`.otlp_http.export`; here a request is decoded and normalised
(:func:`..normalize.logs.normalize_logs`) and its prompt-log rows handed to the group-commit writer. The GenAI events' content lands, redacted, in ``prompt_logs`` for the span it belongs to; their
finish reasons go to ``app.state.call_pairing.patch_finish_reasons(project_id, {(trace_id, span_id): reason})``
when the app has that component (it holds recent third-party LLM rows and patches one lacking a finish reason; it
returns how many it applied), else they are counted as not applied. Every other record is acknowledged and
dropped. Counts: ``inferwatch_log_records_{received,stored,dropped}_total`` and
``inferwatch_finish_reason_patches_total`` in ``/metrics``.

Answers: 200 with ``ExportLogsServiceResponse`` (``partial_success`` for rejected records) in the request's
encoding; errors as ``google.rpc.Status``; 503 + ``Retry-After`` when the collector is overloaded.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from functools import partial
from typing import Any

from fastapi import APIRouter, Request, Response
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

from ..inflight import Overloaded, Reservation, decode_within
from ..ingest_pool import PoolUnavailable
from ..native import EncodedRows, encode_rows
from ..normalize.logs import NormalizedLogs, normalize_logs
from ..otlp_decode import OtlpDecodeError, decode_logs
from ..writer import QueueFull
from .otlp_http import EXPORT_RESPONSES, answer, export, shed_when_queue_full, shown_errors, write_then_resolve

log = logging.getLogger(__name__)
router = APIRouter(tags=["ingest"])


def _success(rejected: int, errors: list[str], content_type: str) -> Response:
    response = ExportLogsServiceResponse()
    if rejected or errors:
        response.partial_success.rejected_log_records = rejected
        response.partial_success.error_message = shown_errors(errors)
    return answer(response, content_type)


@router.post("/v1/logs", responses=EXPORT_RESPONSES,
             summary="OTLP/HTTP log export (protobuf or JSON, optional gzip): GenAI events → redacted prompt logs")
async def export_logs(request: Request) -> Response:
    return await export(request, kind="logs", ingest=_ingest, success=_success)


def process_logs(body: bytes, content_type: str, encoding: str, project_id: str, max_bytes: int, *,
                 content_capture: str, retention_days: int) -> tuple[NormalizedLogs, dict[str, EncodedRows]]:
    """Decode, normalise and encode one logs request (runs in the ingest pool); the rows come back encoded."""
    message = decode_logs(body, content_type, encoding or None, max_bytes)
    result = normalize_logs(message, project_id, content_capture=content_capture, retention_days=retention_days)
    tables = {"prompt_logs": encode_rows("prompt_logs", result.prompt_logs)} if result.prompt_logs else {}
    result.prompt_logs = []  # encoded above: not pickled back twice
    return result, tables


async def _ingest(app: Any, future: Future, body: bytes, content_type: str, encoding: str, project_id: str,
                  admitted: tuple[Reservation, int]) -> Response | None:
    """Decode, normalise and queue one request, resolving ``future`` with ``(rejected, errors)`` once committed;
    an error answer for load shedding, every other failure set on ``future``."""
    stats = app.state.ingest_stats
    shed = shed_when_queue_full(app, future, content_type)
    if shed is not None:
        return shed
    reservation, cap = admitted
    settings, pool = app.state.settings, app.state.ingest_pool
    try:
        result, tables = await decode_within(reservation, cap, settings.max_body_bytes, lambda most: pool.run(
            project_id, partial(process_logs, body, content_type, encoding, project_id, most,
                                content_capture=settings.content_capture,
                                retention_days=settings.prompt_retention_days)))
    except (Overloaded, PoolUnavailable) as exc:
        stats.rejected_requests["inflight_full" if isinstance(exc, Overloaded) else "worker_failed"] += 1
        future.set_exception(QueueFull(retry_after_s=1.0) if isinstance(exc, Overloaded) else exc)
        return None
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
    reservation.resize(len(body) + sum(len(part.data) for part in tables.values()))  # what now waits

    def committed() -> tuple[int, list[str]]:
        stats.log_records_received += result.received
        stats.log_records_stored += result.stored
        for reason, count in result.dropped.items():
            stats.log_records_dropped[reason] += count
        if result.rejected:
            stats.log_records_dropped["rejected"] += result.rejected
        for entity, count in result.redactions.items():
            stats.redactions[entity] += count
        return result.rejected, result.errors

    write_then_resolve(app, future, tables, committed)
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
