"""Read API for the dashboard and scripts (``read`` scope; every query is scoped to the key's project)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query

from .. import queries
from ..deps import ReadPrincipal, StoreDep
from ..queries import QueryError, TimeRange

router = APIRouter(prefix="/api/v1", tags=["query"])

Start = Annotated[datetime | None, Query(description="Range start (ISO 8601, UTC if no offset). Default: end - 24h")]
End = Annotated[datetime | None, Query(description="Range end (ISO 8601). Default: now")]
Model = Annotated[str | None, Query(max_length=200, description="Only this model")]
Provider = Annotated[str | None, Query(max_length=100, description="Only this provider")]
Bucket = Annotated[Literal["minute", "5m", "15m", "hour", "day"] | None,
                   Query(description="Bucket width; default depends on the range")]
_TRACE_ID = re.compile(r"[0-9a-f]{32}")


def _range(start: datetime | None, end: datetime | None) -> TimeRange:
    try:
        return TimeRange.parse(start, end)
    except QueryError as exc:
        raise HTTPException(400, str(exc)) from exc


def _run(fn, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except QueryError as exc:
        raise HTTPException(400, str(exc)) from exc


@router.get("/calls/summary", summary="Totals over a range: calls, errors, tokens, cost, flags")
def calls_summary(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
                  model: Model = None, provider: Provider = None) -> dict[str, Any]:
    return _run(queries.summary, store, principal.project_id, _range(start, end), model, provider)


@router.get("/calls/timeseries", summary="Calls, errors, error rate, tokens and cost per time bucket")
def calls_timeseries(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
                     bucket: Bucket = None, model: Model = None, provider: Provider = None,
                     by_model: Annotated[bool, Query(description="One series per model")] = False
                     ) -> list[dict[str, Any]]:
    return _run(queries.timeseries, store, principal.project_id, _range(start, end), bucket, model, provider,
                by_model)


@router.get("/errors/rate", summary="Error rate per time bucket")
def error_rate(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
               bucket: Bucket = None, model: Model = None, provider: Provider = None) -> list[dict[str, Any]]:
    rows = _run(queries.timeseries, store, principal.project_id, _range(start, end), bucket, model, provider)
    return [{"t": r["t"], "calls": r["calls"], "errors": r["errors"], "error_rate": r["error_rate"]} for r in rows]


@router.get("/latency/percentiles", summary="TTFT and total latency p50/p90/p95/p99 per model")
def latency_percentiles(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
                        model: Model = None, provider: Provider = None) -> list[dict[str, Any]]:
    return _run(queries.latency_percentiles, store, principal.project_id, _range(start, end), model, provider)


@router.get("/cost/by-model", summary="Calls, tokens and cost per model")
def cost_by_model(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
                  provider: Provider = None) -> list[dict[str, Any]]:
    return _run(queries.cost_by_model, store, principal.project_id, _range(start, end), provider)


@router.get("/traces/{trace_id}", summary="Every span of one trace, LLM calls with their metrics")
def get_trace(principal: ReadPrincipal, store: StoreDep,
              trace_id: Annotated[str, Path(description="32 hex characters")]) -> dict[str, Any]:
    trace_id = trace_id.lower()
    if not _TRACE_ID.fullmatch(trace_id):
        raise HTTPException(400, "trace_id must be 32 hexadecimal characters")
    spans = queries.trace(store, principal.project_id, trace_id)
    if not spans:
        raise HTTPException(404, f"no trace {trace_id} in this project")
    return {"trace_id": trace_id, "spans": spans}
