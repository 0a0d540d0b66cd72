"""Budgets API (definitions and status) and the scheduler's job runs.

* ``POST /api/v1/budgets``, ``DELETE /api/v1/budgets/{budget_id}``: ``admin`` scope.
* ``GET /api/v1/budgets``: ``read`` scope.
* ``GET /api/v1/budgets/status``: ``read`` *or* ``ingest`` scope. The SDK's budget guard polls it with the
  application's key, which is normally an ingest-only key (see ``inferwatch.budget``); requiring ``read`` would
  make every guard fail open. What it shows is the key's own project's budgets only.
* ``GET /api/v1/jobs/runs``: ``read`` scope. Job runs are platform-wide (one budget evaluation serves every
  project), so every project's readers see the same list; the budget job's errors name no project (it keeps
  per-budget causes in the scheduler log). The table is written by the scheduler (the alerting package); it is
  read here with this module's own query, since the collector depends on no package above it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from ..cost import budgets
from ..auth import AuthError, Principal
from ..deps import AdminPrincipal, ReadPrincipal, StoreDep, authenticate
from ..store import Store

router = APIRouter(prefix="/api/v1", tags=["budgets"])

BudgetId = Annotated[str, Path(max_length=64, description="The budget's id")]


def _status_reader(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    """``read`` or ``ingest`` (an application's SDK key): both may see their own project's budget status."""
    if principal.allows("read") or principal.allows("ingest"):
        return principal
    raise AuthError(403, "this API key lacks the 'read' or 'ingest' scope")


StatusPrincipal = Annotated[Principal, Depends(_status_reader)]


class BudgetIn(BaseModel):
    """A new budget. ``thresholds`` are fractions of the limit (default 0.5, 0.8, 1.0)."""

    model_config = ConfigDict(extra="forbid")

    budget_id: str | None = Field(None, max_length=64, description="Id (default: generated, b_<hex>)")
    scope_type: Literal["project", "feature", "user"] = Field(description="What the budget caps")
    scope_value: str = Field("", max_length=256,
                             description="Empty for the project; the feature name; the user's hash (user_hash)")
    period: Literal["day", "month"] = Field(description="UTC day or calendar month")
    kind: Literal["soft", "hard"] = Field(description="soft: alerts only; hard: the SDK guard also blocks")
    limit_usd: float = Field(gt=0, description="Limit per period in US dollars")
    thresholds: list[float] | None = Field(None, max_length=budgets.MAX_THRESHOLDS,
                                           description="Alert at these fractions of the limit")


@router.post("/budgets", status_code=201, summary="Create a budget (admin)")
def create_budget(body: BudgetIn, principal: AdminPrincipal, store: StoreDep) -> dict[str, Any]:
    try:
        spec = budgets.validate_budget(budget_id=body.budget_id, scope_type=body.scope_type,
                                       scope_value=body.scope_value, period=body.period, kind=body.kind,
                                       limit_usd=body.limit_usd, thresholds=body.thresholds)
        budget = budgets.create_budget(store, principal.project_id, spec)
    except budgets.BudgetError as exc:
        raise HTTPException(422, str(exc)) from exc
    except budgets.BudgetExists as exc:
        raise HTTPException(409, str(exc)) from exc
    return budget.to_json()


@router.get("/budgets", summary="The project's budgets (definitions)")
def list_budgets(principal: ReadPrincipal, store: StoreDep) -> dict[str, Any]:
    return {"budgets": [b.to_json() for b in budgets.list_budgets(store, principal.project_id)]}


@router.get("/budgets/status", summary="Spend, ratio, exceeded and forecast of every budget (read or ingest)")
def budget_status(principal: StatusPrincipal, store: StoreDep) -> dict[str, Any]:
    return budgets.project_status(store, principal.project_id)


@router.delete("/budgets/{budget_id}", status_code=204, summary="Delete a budget (admin)")
def delete_budget(budget_id: BudgetId, principal: AdminPrincipal, store: StoreDep) -> Response:
    if not budgets.delete_budget(store, principal.project_id, budget_id):
        raise HTTPException(404, f"no budget {budget_id!r} in this project")
    return Response(status_code=204)


@router.get("/jobs/runs", summary="Recent runs of the scheduled jobs (start, end, outcome, error)")
def job_runs(principal: ReadPrincipal, store: StoreDep,
             job: Annotated[str | None, Query(max_length=100, description="Only this job")] = None,
             outcome: Annotated[Literal["running", "success", "failure"] | None,
                                Query(description="Only runs with this outcome")] = None,
             days: Annotated[int, Query(ge=1, le=30, description="How far back")] = 7,
             limit: Annotated[int, Query(ge=1, le=1000, description="Most recent runs first")] = 100
             ) -> dict[str, Any]:
    return {"runs": recent_job_runs(store, job=job, outcome=outcome, days=days, limit=limit)}


def recent_job_runs(store: Store, *, job: str | None = None, outcome: str | None = None, days: int = 7,
                    limit: int = 100, now: datetime | None = None) -> list[dict[str, Any]]:
    """Newest first, each run once (its latest version: ``running`` until it ends)."""
    since = (now or datetime.now(UTC)) - timedelta(days=days)
    where = ["started_at >= fromUnixTimestamp64Milli({since:Int64})"]
    params: dict[str, Any] = {"since": int(since.timestamp() * 1000), "n": limit}
    if job:
        where.append("job = {job:String}")
        params["job"] = job
    if outcome:
        where.append("outcome = {outcome:String}")
        params["outcome"] = outcome
    rows = store.query(
        "SELECT job, run_id, started_at, ended_at, outcome, error, trigger, host, details FROM job_runs FINAL "
        f"WHERE {' AND '.join(where)} ORDER BY started_at DESC, run_id LIMIT {{n:UInt32}}", params,
    ).result_rows
    return [{"job": j, "run_id": run_id, "started_at": _iso(started), "ended_at": _iso(ended) if ended else None,
             "duration_s": round((ended - started).total_seconds(), 3) if ended else None, "outcome": result,
             "error": error, "trigger": trigger, "host": host, "details": dict(details)}
            for j, run_id, started, ended, result, error, trigger, host, details in rows]


def _iso(value: datetime) -> str:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
