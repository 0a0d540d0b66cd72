"""Cost reports and what-if repricing for the key's project (``read`` scope).

``GET /api/v1/costs/report`` (JSON) and ``GET /api/v1/costs/report.csv`` (the dashboard's download) compute the
report live from the ``cost_1d`` rollup (:mod:`..cost_reports`); ``POST /api/v1/costs/whatif`` re-prices the
period's traffic under a scenario with the current price table (:mod:`..whatif`). Parameters are checked here
rather than by FastAPI so that a bad one answers 400 with a message naming it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Query
from fastapi.responses import Response

from ..cost.reports import DEFAULT_LINE_LIMIT, CostReport, ReportError, compute_cost_report, parse_day
from ..deps import ReadPrincipal, SettingsDep, StoreDep
from ..cost.price_table import load_table
from ..cost.whatif import WhatIfError, run_whatif

router = APIRouter(prefix="/api/v1", tags=["costs"])

MAX_LINES = 100_000
Period = Annotated[str, Query(description="day, or month (month to date)")]
Day = Annotated[str | None, Query(description="Last day of the period, YYYY-MM-DD (UTC). Default: today")]
By = Annotated[str, Query(description="Breakdown(s), comma-separated: project, model, provider, feature, "
                                      "prompt_template, user")]
Limit = Annotated[str | None, Query(description=f"Lines per breakdown (the rest summed into one '(other)' line); "
                                                f"default {DEFAULT_LINE_LIMIT}, at most {MAX_LINES}")]


def _limit(text: str | None) -> int:
    if text is None or text == "":
        return DEFAULT_LINE_LIMIT
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LINES:
        raise HTTPException(400, f"limit must be a whole number from 1 to {MAX_LINES}, got {text!r}")
    return value


def _report(store: Any, project_id: str, period: str, day: str | None, by: str, limit: str | None) -> CostReport:
    now = datetime.now(UTC)
    try:
        return compute_cost_report(store, project_id, period, parse_day(day, now.date()),
                                   by=[part.strip() for part in by.split(",") if part.strip()], now=now,
                                   limit=_limit(limit))
    except ReportError as exc:
        raise HTTPException(400, str(exc)) from exc


@router.get("/costs/report", summary="Cost report: totals, breakdowns, movers, forecast, price versions")
def cost_report(principal: ReadPrincipal, store: StoreDep, period: Period = "month", date: Day = None,
                by: By = "model", limit: Limit = None) -> dict[str, Any]:
    return _report(store, principal.project_id, period, date, by, limit).to_dict()


@router.get("/costs/report.csv", summary="The cost report as CSV (one row per line of each breakdown)")
def cost_report_csv(principal: ReadPrincipal, store: StoreDep, period: Period = "month", date: Day = None,
                    by: By = "model", limit: Limit = None) -> Response:
    report = _report(store, principal.project_id, period, date, by, limit)
    p = report.period
    name = f"inferwatch-costs-{report.project_id}-{p.kind}-{p.end.isoformat()}.csv"
    return Response(report.to_csv(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.post("/costs/whatif", summary="Re-price a period's traffic under another model mix or a cascade")
def cost_whatif(principal: ReadPrincipal, store: StoreDep, settings: SettingsDep,
                request: Annotated[Any, Body(description="period, date, mix: [...], cascade: [...]")] = None
                ) -> dict[str, Any]:
    table = load_table(settings.prices_file)
    try:
        result = run_whatif(store, principal.project_id, request, table, retention_days=settings.retention_days)
    except (WhatIfError, ReportError) as exc:
        raise HTTPException(400, str(exc)) from exc
    return result.to_dict()
