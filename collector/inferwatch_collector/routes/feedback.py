"""``POST /api/v1/feedback`` (``ingest`` scope) and ``GET /api/v1/feedback`` (``read`` scope).

One feedback item is an OpenTelemetry ``gen_ai.evaluation.result`` event in JSON: which call it is about
(``trace_id`` [+ ``span_id``] or ``response_id``, the OTel ``gen_ai.response.id``), the evaluation ``name``, and a
``score`` (``gen_ai.evaluation.score.value``), or ``thumbs_up`` (stored as value +1/-1, kind ``thumbs``), a
``label`` (``gen_ai.evaluation.score.label``) and a ``comment`` (``gen_ai.evaluation.explanation``). The OTel
attribute names are accepted as aliases of the short ones. The body is one item or a JSON list of at most
:data:`MAX_BATCH` items; a list is validated whole before anything is stored (all or nothing), and a 422 names
each bad field (``3.trace_id: ...`` for item 3 of a list).

Stored in ``feedback`` (ReplacingMergeTree keyed by ``(project_id, toDate(created_at), feedback_id)``):

* ``feedback_id`` is the client's idempotency key; without one it is derived from the content
  (:func:`derive_feedback_id`), so a retried request replaces its earlier row instead of adding one. A row that
  already exists (same id, last :data:`EXISTING_LOOKBACK_DAYS` days) keeps its ``created_at``, so a retry or a
  correction on a later day still replaces it; the latest write wins (``updated_at``). Read with ``FINAL``.
* model, feature, experiment, variant, prompt template and user hash are copied from the call: the most recent
  ``llm_calls`` row of the same project (never another's) with that trace id (and span id, if given) or that
  response id, within the last :data:`CALL_LOOKBACK_DAYS` days. A ``user_hash`` in the body wins over the call's.
* Feedback about a call the collector has not seen (yet) is still stored, with those copied fields empty,
  and the answer lists its id under ``unmatched``. Re-sending it (same ``feedback_id``) once the span has
  arrived fills them in. The table has no ``response_id`` column, so an unmatched item given only by
  ``response_id`` is stored without any link to its call.
* The body (gzip or none) is decompressed, parsed and validated in the ingest pool, never on the event loop, within
  the in-flight budget (:mod:`..inflight`: its decompressed size, the project's share; 429/503 + ``Retry-After``
  when there is no room).
* ``name``, ``comment`` and ``label`` are redacted with :data:`inferwatch_collector.redaction.DEFAULT_REDACTOR`
  before storage (a name is free text too, and ``GET /api/v1/feedback`` shows it with ``read`` scope). Raw user
  ids are refused (``user_id`` → 422): send ``user_hash`` (an HMAC/SHA-256 hex digest).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Annotated, Any, Sequence

import orjson
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
from starlette.concurrency import run_in_threadpool

from ..auth import Principal, require
from ..deps import ReadPrincipal, StoreDep, authenticate
from ..inflight import Overloaded, TooLarge, body_cost, decode_within
from ..ingest_pool import PoolUnavailable
from ..otlp_decode import OtlpDecodeError, decompress
from ..redaction import DEFAULT_REDACTOR
from ..store import Store

router = APIRouter(prefix="/api/v1/feedback", tags=["feedback"])

MAX_BATCH = 1000
MAX_COMMENT_BYTES = 4096
CALL_LOOKBACK_DAYS = 30  # how far back a call is looked up to copy its fields
RECENT_LOOKBACK_DAYS = 2  # response ids (no index) are looked up here first; most feedback is minutes old
EXISTING_LOOKBACK_DAYS = 30  # how far back an earlier row with the same feedback_id is found and replaced
MAX_PAST_DAYS = 365  # accepted range of an explicit timestamp
MAX_FUTURE_S = 600
MAX_ERRORS_SHOWN = 20
DEFAULT_NAME = "user_feedback"

_HEX32 = r"^[0-9a-fA-F]{32}$"
_HEX16 = r"^[0-9a-fA-F]{16}$"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

COLUMNS = ("project_id", "feedback_id", "created_at", "updated_at", "trace_id", "span_id", "user_hash", "kind",
           "name", "value", "label", "comment", "source", "model", "experiment", "variant", "prompt_template",
           "feature", "is_deleted")
_COPIED = ("model", "feature", "experiment", "variant", "prompt_template", "user_hash")


class FeedbackIn(BaseModel):
    """One ``gen_ai.evaluation.result``: about a call (``trace_id`` or ``response_id``), with at least one of
    ``score``, ``thumbs_up``, ``label``, ``comment``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    trace_id: str | None = Field(None, pattern=_HEX32, description="Trace of the call (32 hex characters)")
    span_id: str | None = Field(None, pattern=_HEX16, description="Span of the call (16 hex); optional")
    response_id: str | None = Field(
        None, min_length=1, max_length=256, validation_alias=AliasChoices("response_id", "gen_ai.response.id"),
        description="The provider's response id (gen_ai.response.id), instead of or with trace_id")
    name: str = Field(DEFAULT_NAME, min_length=1, max_length=128,
                      validation_alias=AliasChoices("name", "gen_ai.evaluation.name"),
                      description="Evaluation name (gen_ai.evaluation.name); redacted before storage")
    score: float | None = Field(None, allow_inf_nan=False,
                                validation_alias=AliasChoices("score", "gen_ai.evaluation.score.value"),
                                description="Numeric score (gen_ai.evaluation.score.value); kind 'score'")
    thumbs_up: bool | None = Field(None, description="True/False: stored as value +1/-1, kind 'thumbs'")
    label: str | None = Field(None, max_length=128,
                              validation_alias=AliasChoices("label", "gen_ai.evaluation.score.label"),
                              description="Label (gen_ai.evaluation.score.label); redacted before storage")
    comment: str | None = Field(None, validation_alias=AliasChoices("comment", "gen_ai.evaluation.explanation"),
                                description=f"Free text, at most {MAX_COMMENT_BYTES} UTF-8 bytes; redacted "
                                "before storage")
    feedback_id: str | None = Field(None, pattern=r"^[A-Za-z0-9._:-]{1,128}$",
                                    description="Idempotency key; default derived from the content")
    user_hash: str | None = Field(None, pattern=r"^[0-9a-fA-F]{32,128}$",
                                  description="Hashed user id (hex); raw user ids are refused")
    timestamp: datetime | None = Field(None, description="When the feedback was given (default: now)")
    source: str | None = Field(None, pattern=r"^[a-z0-9_.-]{1,32}$",
                               description="Who sent it: sdk, api (default), judge, ...")
    user_id: SkipJsonSchema[Any] = None  # refused with a message (a raw id must never be stored)

    @field_validator("user_id", mode="before")
    @classmethod
    def _no_raw_user_id(cls, value: Any) -> Any:
        if value is not None:
            raise ValueError("raw user ids are not accepted; send user_hash (a hex HMAC/SHA-256 of the id)")
        return value

    @field_validator("trace_id", "span_id", "user_hash")
    @classmethod
    def _lower(cls, value: str | None) -> str | None:
        if value is not None and not value.strip("0"):
            raise ValueError("an all-zero id is not a valid id")
        return value.lower() if value is not None else None

    @field_validator("name", "label", "response_id")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and _CONTROL.search(value):
            raise ValueError("control characters are not allowed")
        return value

    @field_validator("comment")
    @classmethod
    def _comment_size(cls, value: str | None) -> str | None:
        if value is not None and len(value.encode("utf-8", "surrogatepass")) > MAX_COMMENT_BYTES:
            raise ValueError(f"comment is longer than {MAX_COMMENT_BYTES} bytes (UTF-8)")
        return value

    @field_validator("timestamp")
    @classmethod
    def _recent(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        now = datetime.now(timezone.utc)
        if value > now + timedelta(seconds=MAX_FUTURE_S) or value < now - timedelta(days=MAX_PAST_DAYS):
            raise ValueError(f"timestamp must lie within the last {MAX_PAST_DAYS} days and not in the future")
        return value

    @model_validator(mode="after")
    def _complete(self) -> "FeedbackIn":
        if self.trace_id is None and self.response_id is None:
            raise ValueError("trace_id or response_id is required")
        if self.score is not None and self.thumbs_up is not None:
            raise ValueError("give score or thumbs_up, not both (send two items with different names)")
        if self.score is None and self.thumbs_up is None and self.label is None and self.comment is None:
            raise ValueError("nothing to record: give score, thumbs_up, label or comment")
        return self

    # --- derived ---
    @property
    def kind(self) -> str:
        if self.thumbs_up is not None:
            return "thumbs"
        if self.score is not None:
            return "score"
        return "label" if self.label is not None else "comment"

    @property
    def value(self) -> float:
        if self.thumbs_up is not None:
            return 1.0 if self.thumbs_up else -1.0
        return float(self.score) if self.score is not None else 0.0


def derive_feedback_id(item: FeedbackIn) -> str:
    """The default idempotency key: 32 hex of SHA-256 over the item's content (not its timestamp), so the
    same feedback sent twice is one row."""
    content = [item.trace_id or "", item.span_id or "", item.response_id or "", item.name, item.kind,
               repr(item.value), item.label or "", item.comment or "", item.user_hash or ""]
    canonical = json.dumps(content, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(canonical).hexdigest()[:32]


# --- request parsing ------------------------------------------------------------------------------------------
async def _read_body(request: Request, limit: int) -> bytes:
    """The raw (maybe compressed) body; 413 as soon as it exceeds ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class BodyProblem(Exception):
    """A feedback body that cannot be read: ``status`` and ``detail`` (a message, or the 422 error list).
    Plain arguments, so it crosses from an ingest worker process intact."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(status, detail)
        self.status = status
        self.detail = detail


def decode_feedback(body: bytes, content_encoding: str | None, max_bytes: int) -> list[FeedbackIn]:
    """Decompress (gzip or none, inflating at most ``max_bytes``), parse and validate a feedback body; raises
    :class:`BodyProblem`. Runs in the ingest pool: a large body never stops the event loop."""
    try:
        text = decompress(body, content_encoding, max_bytes)
    except OtlpDecodeError as exc:
        raise BodyProblem(exc.status, exc.message) from None
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BodyProblem(400, f"body is not valid JSON: {exc}") from None
    try:
        return parse_items(payload)[0]
    except RequestValidationError as exc:
        raise BodyProblem(422, list(exc.errors())) from None


async def _decode(request: Request, principal: Principal, body: bytes) -> list[FeedbackIn]:
    """The items of ``body``, decoded in the ingest pool within the in-flight budget (the reservation is held
    until the items are stored: the caller releases ``request.state.feedback_reservation``)."""
    app = request.app
    limit = app.state.settings.max_body_bytes
    encoding = request.headers.get("content-encoding") or None
    try:
        charge, cap = body_cost(body, encoding, limit)
    except TooLarge as exc:
        raise HTTPException(413, exc.message) from None
    try:
        reservation = await app.state.inflight.reserve(principal.project_id, charge, "feedback")
    except Overloaded as exc:
        raise HTTPException(exc.status, exc.message, {"Retry-After": str(exc.retry_after_s)}) from None
    request.state.feedback_reservation = reservation
    pool = app.state.ingest_pool
    try:
        return await decode_within(reservation, cap, limit, lambda most: pool.run(
            principal.project_id, partial(decode_feedback, body, encoding, most)))
    except BodyProblem as exc:
        if exc.status == 422:
            raise RequestValidationError(exc.detail) from None
        raise HTTPException(exc.status, exc.detail) from None
    except (Overloaded, PoolUnavailable) as exc:
        raise HTTPException(503, f"{exc}; retry later", {"Retry-After": "1"}) from None


def _validation_error(errors: list[dict[str, Any]]) -> RequestValidationError:
    if len(errors) > MAX_ERRORS_SHOWN:
        more = len(errors) - MAX_ERRORS_SHOWN
        errors = errors[:MAX_ERRORS_SHOWN] + [{"loc": (), "msg": f"... and {more} more problems"}]
    return RequestValidationError(errors)


def parse_items(payload: Any) -> tuple[list[FeedbackIn], bool]:
    """``(items, was_a_list)``; raises :class:`RequestValidationError` naming every bad field (all or nothing)."""
    is_list = isinstance(payload, list)
    raw = payload if is_list else [payload]
    if is_list and not raw:
        raise _validation_error([{"loc": ("body",), "msg": "the list holds no feedback items"}])
    if len(raw) > MAX_BATCH:
        raise _validation_error([{"loc": ("body",),
                                  "msg": f"at most {MAX_BATCH} items per request, got {len(raw)}"}])
    items: list[FeedbackIn] = []
    errors: list[dict[str, Any]] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            errors.append({"loc": (index,) if is_list else ("body",),
                           "msg": "a feedback item must be a JSON object"})
            continue
        try:
            items.append(FeedbackIn.model_validate(entry))
        except ValidationError as exc:
            for err in exc.errors(include_url=False, include_context=False, include_input=False):
                loc = tuple(err.get("loc", ())) or ("body",)
                errors.append({"loc": ((index,) + loc) if is_list else loc, "msg": err.get("msg", "invalid")})
    if errors:
        raise _validation_error(errors)
    return items, is_list


# --- storage --------------------------------------------------------------------------------------------------
def _lookup_calls(store: Store, project_id: str, items: Sequence[FeedbackIn]) -> list[dict[str, Any] | None]:
    """For each item, the most recent matching call of this project (or None)."""
    columns = "trace_id, span_id, response_id, model, feature, experiment, variant, prompt_template, user_hash"
    names = [c.strip() for c in columns.split(",")]
    found: list[dict[str, Any] | None] = [None] * len(items)

    def matches(item: FeedbackIn, row: dict[str, Any]) -> bool:
        return ((item.trace_id is None or row["trace_id"] == item.trace_id)
                and (item.span_id is None or row["span_id"] == item.span_id)
                and (item.response_id is None or row["response_id"] == item.response_id))

    def query(where: str, values: list[str], days: int) -> list[dict[str, Any]]:
        rows = store.query(
            f"SELECT {columns} FROM llm_calls WHERE project_id = {{p:String}} "
            f"AND start_time >= now64(6) - toIntervalDay({{d:UInt32}}) AND {where} IN {{v:Array(String)}} "
            "ORDER BY start_time DESC LIMIT 100000",
            {"p": project_id, "d": days, "v": values},
        ).result_rows
        return [dict(zip(names, r)) for r in rows]

    def resolve(rows: list[dict[str, Any]], key: str, pending: list[int]) -> None:
        by_key: dict[str, list[dict[str, Any]]] = {}
        for row in rows:  # most recent first
            by_key.setdefault(row[key], []).append(row)
        for i in pending:
            item = items[i]
            found[i] = next((r for r in by_key.get(getattr(item, key), ()) if matches(item, r)), None)

    by_response = [i for i, item in enumerate(items) if item.response_id is not None]
    by_trace = [i for i, item in enumerate(items) if item.response_id is None]
    if by_trace:  # trace_id has a bloom-filter index
        traces = sorted({items[i].trace_id for i in by_trace})  # type: ignore[misc]
        resolve(query("trace_id", traces, CALL_LOOKBACK_DAYS), "trace_id", by_trace)
    for days in (RECENT_LOOKBACK_DAYS, CALL_LOOKBACK_DAYS):  # response_id has no index: the recent days first
        pending = [i for i in by_response if found[i] is None]
        if not pending:
            break
        responses = sorted({items[i].response_id for i in pending})  # type: ignore[misc]
        resolve(query("response_id", responses, days), "response_id", pending)
    return found


def _existing_created(store: Store, project_id: str, ids: Sequence[str]) -> dict[str, Any]:
    rows = store.query(
        "SELECT feedback_id, min(created_at) FROM feedback WHERE project_id = {p:String} "
        "AND created_at >= now64(3) - toIntervalDay({d:UInt32}) AND feedback_id IN {ids:Array(String)} "
        "GROUP BY feedback_id",
        {"p": project_id, "d": EXISTING_LOOKBACK_DAYS, "ids": list(ids)},
    ).result_rows
    return {r[0]: _ms(r[1]) for r in rows}


def _ms(value: datetime) -> int:
    """Milliseconds since the epoch (naive datetimes are UTC, as ClickHouse returns them)."""
    return int((value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp() * 1000)


def _redact(text: str | None) -> str:
    return DEFAULT_REDACTOR.redact(text).text if text else ""


def store_feedback(store: Store, project_id: str, items: Sequence[FeedbackIn]) -> tuple[list[str], list[str]]:
    """Store every item (one insert); ``(feedback ids in item order, ids whose call was not found)``."""
    ids = [item.feedback_id or derive_feedback_id(item) for item in items]
    calls = _lookup_calls(store, project_id, items)
    existing = _existing_created(store, project_id, sorted(set(ids)))
    now_ms = int(time.time() * 1000)
    rows: dict[str, list[Any]] = {}  # feedback_id -> row; within one request the last item with an id wins
    unmatched: list[str] = []
    for fid, item, call in zip(ids, items, calls):
        copied = {name: (call or {}).get(name, "") for name in _COPIED}
        if call is None:
            unmatched.append(fid)
        created = existing.get(fid)
        if created is None:
            created = _ms(item.timestamp) if item.timestamp else now_ms
        trace_id = item.trace_id or (call["trace_id"] if call else "")
        span_id = item.span_id or (call["span_id"] if call and item.response_id is not None else "")
        rows[fid] = [
            project_id, fid, created, now_ms, trace_id, span_id, item.user_hash or copied["user_hash"], item.kind,
            _redact(item.name), item.value, _redact(item.label), _redact(item.comment), item.source or "api",
            copied["model"], copied["experiment"], copied["variant"], copied["prompt_template"],
            copied["feature"], 0,
        ]
    columns = [list(c) for c in zip(*rows.values())]
    store.insert_columns("feedback", columns, COLUMNS)
    return ids, sorted(set(unmatched))


def ingest_principal(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    return require(principal, "ingest")


IngestPrincipal = Annotated[Principal, Depends(ingest_principal)]

_ITEM_SCHEMA = FeedbackIn.model_json_schema()
_BODY_SCHEMA = {"oneOf": [_ITEM_SCHEMA, {"type": "array", "items": _ITEM_SCHEMA, "minItems": 1,
                                         "maxItems": MAX_BATCH}]}


@router.post(
    "",
    status_code=202,
    summary="Record feedback (one gen_ai.evaluation.result, or a list of at most 1000, all or nothing)",
    openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": _BODY_SCHEMA}}}},
    responses={202: {"description": "stored; `unmatched` lists ids whose call is not (yet) known"},
               400: {"description": "body is not JSON"}, 401: {"description": "missing/invalid key"},
               403: {"description": "key lacks ingest scope"}, 413: {"description": "body too large"},
               422: {"description": "invalid item; the message names each bad field"},
               429: {"description": "rate limit, or the project's share of the in-flight budget, exceeded; "
                                    "retry after Retry-After"},
               503: {"description": "collector overloaded or database unavailable; retry after Retry-After"}},
)
async def post_feedback(request: Request, principal: IngestPrincipal, store: StoreDep) -> JSONResponse:
    limiter = getattr(request.app.state, "ingest_limiter", None)  # the same per-key budget as span ingest
    wait = limiter.acquire(principal.key_id) if limiter is not None else 0.0
    if wait > 0:
        request.app.state.ingest_stats.rejected_requests["rate_limited"] += 1
        return JSONResponse({"error": "rate limit of this API key exceeded; retry later"}, status_code=429,
                            headers={"Retry-After": str(max(1, math.ceil(wait)))})
    body = await _read_body(request, request.app.state.settings.max_body_bytes)
    try:
        items = await _decode(request, principal, body)
        del body
        ids, unmatched = await run_in_threadpool(store_feedback, store, principal.project_id, items)
    except HTTPException:
        raise
    except RequestValidationError:
        raise
    except Exception as exc:  # the database failed: the client may retry (ids are idempotent)
        return JSONResponse({"error": f"could not store feedback ({type(exc).__name__}); retry later"},
                            status_code=503, headers={"Retry-After": "5"})
    finally:
        reservation = getattr(request.state, "feedback_reservation", None)
        if reservation is not None:
            reservation.release()
    return JSONResponse({"accepted": len(items), "feedback_ids": ids, "unmatched": unmatched}, status_code=202)


@router.get("", summary="Feedback of the caller's project (latest version of each item), newest first; comment "
                        "text needs prompts:read (without it: comment null, comment_hidden true)")
def list_feedback(
    principal: ReadPrincipal,
    store: StoreDep,
    trace_id: Annotated[str | None, Query(pattern=_HEX32, description="Only feedback on this trace")] = None,
    name: Annotated[str | None, Query(max_length=128, description="Only this evaluation name")] = None,
    days: Annotated[int, Query(ge=1, le=3650, description="How far back (without trace_id)")] = 30,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict[str, Any]]:
    where = ["project_id = {p:String}", "is_deleted = 0"]
    params: dict[str, Any] = {"p": principal.project_id, "n": limit}
    if trace_id is not None:
        where.append("trace_id = {t:String}")
        params["t"] = trace_id.lower()
    else:
        where.append("created_at >= now64(3) - toIntervalDay({d:UInt32})")
        params["d"] = days
    if name is not None:
        where.append("name = {name:String}")
        params["name"] = name
    shown = [c for c in COLUMNS if c not in ("project_id", "is_deleted")]
    can_read_text = principal.allows("prompts:read")
    rows = store.query(
        f"SELECT {', '.join(shown)} FROM feedback FINAL WHERE {' AND '.join(where)} "
        "ORDER BY created_at DESC, feedback_id LIMIT {n:UInt32}",
        params,
    ).result_rows
    out = []
    for row in rows:
        item = dict(zip(shown, row))
        for key in ("created_at", "updated_at"):
            value = item[key]
            if isinstance(value, datetime):
                item[key] = (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
        if isinstance(item["value"], float) and not math.isfinite(item["value"]):
            item["value"] = None
        if not can_read_text and item["comment"]:  # free text users wrote, like prompts: prompts:read only
            item["comment"] = None
            item["comment_hidden"] = True
        out.append(item)
    return out
