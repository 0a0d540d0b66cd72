"""What every OTLP/HTTP export route shares: authentication, the size limit, retried-request deduplication, load
shedding, and answers in the request's encoding.

:func:`export` runs the common flow; a route supplies how its body becomes rows (``ingest``) and its success
answer (``success``). Flow: authenticate (``ingest`` scope, Bearer or Basic; 429 over the key's rate) → size check
→ a retried request waits for its first write → reserve the body's decompressed size in the in-flight budget
(:mod:`..inflight`: a bounded wait, then 429/503; the project's share) → shed early when the write queue is full →
``ingest`` (decode, normalise in the ingest pool, hand rows to the adaptive group-commit writer) → answer once
committed (the writer's insert returned, or its fsync'd spool append);
the reservation is released with the write. Errors are
``google.rpc.Status`` in the request's encoding; 503 + ``Retry-After`` when the collector is overloaded or the
database failing (exporters retry those); never a 500 (exporters would retry it forever).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Future
from typing import Any, Awaitable, Callable

from fastapi import Request, Response
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import status_pb2
from starlette.concurrency import run_in_threadpool

from ..auth import KEYS_UNAVAILABLE_RETRY_AFTER_S, AuthError, parse_authorization, require
from ..inflight import Overloaded, Reservation, TooLarge, body_cost
from ..ingest_dedup import request_digest
from ..ingest_pool import PoolUnavailable
from ..otlp_decode import OtlpDecodeError, PayloadTooLarge
from ..ratelimit import retry_after_header
from ..writer import QueueFull, WriteFailed

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_GRPC_CODE = {400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 429: 8, 503: 14}  # google.rpc.Code per HTTP status

#: OpenAPI ``responses`` of an export route.
EXPORT_RESPONSES = {
    400: {"description": "malformed body"}, 401: {"description": "missing/invalid key"},
    403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
    415: {"description": "unsupported content type or encoding"},
    429: {"description": "rate limit of the key, or the project's share of the in-flight budget, exceeded; "
                         "retry after Retry-After"},
    503: {"description": "in-flight budget or write queue full, or database unavailable; retry after "
                         "Retry-After"}}

#: ``ingest(app, future, body, content_type, encoding, project_id, admitted)``: process one request and resolve
#: ``future`` with ``(rejected, errors)`` once its rows are committed (or with the exception); returns an answer to
#: send at once (load shedding) or None. ``admitted`` is the request's budget reservation and decode cap
#: (:func:`..inflight.decode_within`); it is released when ``future`` resolves.
Ingest = Callable[[Any, Future, bytes, str, str, str, "tuple[Reservation, int]"], Awaitable["Response | None"]]


def is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == JSON


def otlp_error(status: int, message: str, content_type: str, headers: dict[str, str] | None = None) -> Response:
    """An OTLP/HTTP error answer: a ``google.rpc.Status`` in the request's encoding (JSON when unknown)."""
    body = status_pb2.Status(code=_GRPC_CODE.get(status, 2), message=message)
    if content_type.split(";")[0].strip().lower() == PROTOBUF:
        return Response(body.SerializeToString(), status_code=status, media_type=PROTOBUF, headers=headers)
    return Response(json.dumps({"code": body.code, "message": message}), status_code=status,
                    media_type=JSON, headers=headers)


def answer(message: Message, content_type: str) -> Response:
    """A success answer (an ``Export*ServiceResponse``) in the request's encoding."""
    if is_json(content_type):
        return Response(json_format.MessageToJson(message, indent=None), media_type=JSON)
    return Response(message.SerializeToString(), media_type=PROTOBUF)


def shown_errors(errors: list[str]) -> str:
    """The first ten messages of a partial success, and how many more there were."""
    return "; ".join(errors[:10]) + (f"; ... {len(errors) - 10} more" if len(errors) > 10 else "")


async def read_body(request: Request, limit: int) -> bytes | None:
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


async def ingest_principal(request: Request):
    """The caller's principal with the ``ingest`` scope, or the OTLP error answer to send (401/403, or 429
    when the key is over its rate limit)."""
    try:
        key = parse_authorization(request.headers.get("authorization"),
                                  request.headers.get("x-inferwatch-api-key"))
        principal = await run_in_threadpool(request.app.state.keys.authenticate, key)
        principal = require(principal, "ingest")
    except AuthError as exc:  # 503 when keys cannot be checked: exporters retry, the data is not lost
        retry = {"Retry-After": str(KEYS_UNAVAILABLE_RETRY_AFTER_S)} if exc.status == 503 else None
        return otlp_error(exc.status, exc.message, request.headers.get("content-type", ""), retry)
    limiter = getattr(request.app.state, "ingest_limiter", None)
    wait_s = limiter.acquire(principal.key_id) if limiter is not None else 0.0
    if wait_s > 0:  # before the body is read: a flooding key costs us as little as possible
        request.app.state.ingest_stats.rejected_requests["rate_limited"] += 1
        return otlp_error(429, "rate limit of this API key exceeded; retry later",
                          request.headers.get("content-type", ""), {"Retry-After": retry_after_header(wait_s)})
    return principal


async def admit(app: Any, project_id: str, body: bytes, encoding: str, content_type: str, route: str
                ) -> tuple[Reservation, int] | Response:
    """Reserve ``body``'s decompressed size for ``project_id`` in the in-flight budget: ``(reservation, decode
    cap)``, or the answer to send (413 when its gzip trailer is over the limit; 429/503 + Retry-After when
    the budget has no room within its wait)."""
    stats = app.state.ingest_stats
    try:
        charge, cap = body_cost(body, encoding, app.state.settings.max_body_bytes)
    except TooLarge as exc:
        stats.rejected_requests["too_large"] += 1
        return otlp_error(413, exc.message, content_type)
    try:
        return await app.state.inflight.reserve(project_id, charge, route), cap
    except Overloaded as exc:
        stats.rejected_requests["inflight_full" if exc.status == 503 else "project_share"] += 1
        return otlp_error(exc.status, exc.message, content_type, {"Retry-After": str(exc.retry_after_s)})


def shed_when_queue_full(app: Any, future: Future, content_type: str) -> Response | None:
    """The 503 to send before paying for decoding when the writer's queue is full (``future`` fails with it)."""
    writer = app.state.writer
    if writer.pending_rows < writer.max_queue_rows:
        return None
    writer.stats.rejected_queue_full += 1
    app.state.ingest_stats.rejected_requests["queue_full"] += 1
    exc = QueueFull(retry_after_s=max(1.0, writer.flush_interval_s))
    future.set_exception(exc)
    return otlp_error(503, "collector is overloaded; retry later", content_type,
                      {"Retry-After": str(int(exc.retry_after_s))})


def write_then_resolve(app: Any, future: Future, tables: dict,
                       on_committed: Callable[[], tuple[int, list[str]]], *, announced: bool = False) -> None:
    """Hand ``tables`` to the writer; once they are committed, ``on_committed()`` counts what the request did and
    gives ``(rejected, errors)``, which resolve ``future``. A write that cannot be queued or fails fails it.
    ``announced``: the request was announced to the writer while it was decoded (see ``BatchWriter.announce``).
    The future resolves as soon as the writer's insert (or spool append) returns: no timer in between."""
    try:
        written = app.state.writer.submit(tables, announced=announced)
    except QueueFull as exc:
        app.state.ingest_stats.rejected_requests["queue_full"] += 1
        future.set_exception(exc)
        return
    except WriteFailed as exc:
        future.set_exception(exc)
        return

    def committed(done: Future) -> None:
        if future.done():
            return
        if done.exception() is not None:
            future.set_exception(done.exception())
        else:  # counted once committed: a request retried after a failed write counts once
            future.set_result(on_committed())

    written.add_done_callback(committed)


async def export(request: Request, *, kind: str, ingest: Ingest,
                 success: Callable[[int, list[str], str], Response]) -> Response:
    """Handle one export request of ``kind`` (``traces``, ``logs``: it keeps requests of two kinds with the same
    bytes apart in the retry memory) with the route's ``ingest`` and ``success``."""
    app = request.app
    settings = app.state.settings
    content_type = request.headers.get("content-type", "")
    encoding = request.headers.get("content-encoding", "") or ""
    principal = await ingest_principal(request)
    if isinstance(principal, Response):
        return principal
    stats = app.state.ingest_stats
    body = await read_body(request, settings.max_body_bytes)
    if body is None:
        stats.rejected_requests["too_large"] += 1
        return otlp_error(413, f"request body exceeds {settings.max_body_bytes} bytes", content_type)

    digest = request_digest(principal.project_id, content_type if kind == "traces" else f"{kind}:{content_type}",
                            encoding, body)
    future, owner = app.state.recent_requests.begin(digest)
    if owner:
        admitted = await admit(app, principal.project_id, body, encoding, content_type, kind)
        if isinstance(admitted, Response):  # a concurrent duplicate gets the same answer; a later retry tries again
            future.set_exception(PayloadTooLarge("decompressed request body exceeds the limit of "
                                                 f"{settings.max_body_bytes} bytes") if admitted.status_code == 413
                                 else QueueFull(retry_after_s=float(admitted.headers.get("Retry-After", 1))))
            return admitted
        reservation = admitted[0]  # the callback must not hold the body: the future outlives the request
        future.add_done_callback(lambda _: reservation.release())  # committed, failed or shed
        failure = await ingest(app, future, body, content_type, encoding, principal.project_id, admitted)
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
    except Overloaded as exc:
        return otlp_error(exc.status, exc.message, content_type, {"Retry-After": str(exc.retry_after_s)})
    except Exception as exc:  # a bug of ours: say so without a 500 (exporters would retry it forever)
        return otlp_error(400, f"the collector could not process this request ({type(exc).__name__})",
                          content_type)
    return success(rejected, errors, content_type)
