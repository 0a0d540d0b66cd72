"""``POST /v1/traces``: OTLP/HTTP trace ingest (protobuf or JSON, optional gzip).

Flow: size check → authenticate (``ingest`` scope) → decode → normalise (both off the event loop) → retried
request? wait for its earlier write → hand rows to the group-commit writer → answer once committed.
Answers follow the OTLP/HTTP spec: 200 with ``ExportTraceServiceResponse`` (``partial_success`` when some
spans were rejected), errors as ``google.rpc.Status`` in the request's encoding, 503 + ``Retry-After`` when
the write queue is full or the database is failing (exporters retry those), never a partial write: a request
is validated whole before any of its rows are queued.
"""

from __future__ import annotations

import asyncio
import json
import logging

from fastapi import APIRouter, Request, Response
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.concurrency import run_in_threadpool

from ..auth import AuthError, parse_authorization, require
from ..ingest_dedup import request_digest
from ..normalize import normalize
from ..otlp_decode import OtlpDecodeError, decode_traces
from ..writer import QueueFull, WriteFailed

log = logging.getLogger(__name__)
router = APIRouter(tags=["ingest"])

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_GRPC_CODE = {400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 503: 14}  # google.rpc.Code per HTTP status


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


@router.post(
    "/v1/traces",
    summary="OTLP/HTTP trace export (protobuf or JSON, optional gzip)",
    responses={400: {"description": "malformed body"}, 401: {"description": "missing/invalid key"},
               403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
               415: {"description": "unsupported content type or encoding"},
               503: {"description": "write queue full or database unavailable; retry after Retry-After"}},
)
async def export_traces(request: Request) -> Response:
    app = request.app
    settings = app.state.settings
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "") or ""
    try:
        key = parse_authorization(request.headers.get("authorization"),
                                  request.headers.get("x-inferwatch-api-key"))
        principal = await run_in_threadpool(app.state.keys.authenticate, key)
        require(principal, "ingest")
    except AuthError as exc:
        return otlp_error(exc.status, exc.message, content_type)

    body = await _read_body(request, settings.max_body_bytes)
    if body is None:
        app.state.ingest_stats.rejected_requests["too_large"] += 1
        return otlp_error(413, f"request body exceeds {settings.max_body_bytes} bytes", content_type)

    def decode_and_normalize():
        message = decode_traces(body, content_type, encoding or None, settings.max_body_bytes)
        return normalize(message, principal.project_id, content_capture=settings.content_capture)

    try:
        batch = await run_in_threadpool(decode_and_normalize)
    except OtlpDecodeError as exc:
        app.state.ingest_stats.rejected_requests[str(exc.status)] += 1
        return otlp_error(exc.status, exc.message, content_type)
    except Exception as exc:  # a bug of ours: say so without a 500 (exporters would retry it forever)
        log.exception("normalising an OTLP request failed")
        app.state.ingest_stats.rejected_requests["400"] += 1
        return otlp_error(400, f"the collector could not process this request ({type(exc).__name__})",
                          content_type)

    stats = app.state.ingest_stats
    stats.spans_rejected += batch.rejected
    rows = {"llm_calls": batch.llm_calls, "spans": batch.spans, "prompt_logs": batch.prompt_logs}
    digest = request_digest(principal.project_id, content_type, encoding, body)
    future, owner = app.state.recent_requests.begin(digest)
    if owner:
        try:
            written = app.state.writer.submit(rows)
        except QueueFull as exc:
            future.set_exception(exc)
            stats.rejected_requests["queue_full"] += 1
            return otlp_error(503, "collector is overloaded; retry later", content_type,
                              {"Retry-After": str(int(exc.retry_after_s))})
        except WriteFailed as exc:
            future.set_exception(exc)
            return otlp_error(503, str(exc), content_type, {"Retry-After": "5"})
        _chain(written, future)
    else:
        stats.duplicate_requests += 1
    try:
        await asyncio.wrap_future(future)
    except QueueFull as exc:
        return otlp_error(503, "collector is overloaded; retry later", content_type,
                          {"Retry-After": str(int(exc.retry_after_s))})
    except WriteFailed as exc:
        stats.rejected_requests["write_failed"] += 1
        return otlp_error(503, f"{exc}; retry later", content_type, {"Retry-After": "5"})
    if owner:
        stats.spans_accepted += len(batch.llm_calls) + len(batch.spans)
    return _success(batch.rejected, batch.errors, content_type)


def _chain(source, target) -> None:
    """Resolve ``target`` like ``source`` (both concurrent futures)."""

    def copy(done) -> None:
        if target.done():
            return
        exc = done.exception()
        if exc is not None:
            target.set_exception(exc)
        else:
            target.set_result(None)

    source.add_done_callback(copy)
