"""A/B experiments API for the dashboard and scripts.

* ``GET /api/v1/experiments`` (``read``): the project's experiments, each with its latest verdict.
* ``GET /api/v1/experiments/{name}`` (``read``): definition, latest verdict, and every result row of the latest
  analysed window (per metric and variant: value and interval, lift, p-values, sequential p-value, power).
* ``GET /api/v1/experiments/{name}/history`` (``read``): the verdict of every daily window, and with ``metric``
  that metric's rows per window (the dashboard's trajectory of the lift and its sequential interval).
* ``POST /api/v1/experiments`` (``admin``): register an experiment (or confirm an automatically registered one;
  ``replace=true`` replaces one registered by hand).
* ``POST /api/v1/experiments/{name}/analyze`` (``admin``): analyse now and store the results, instead of waiting
  for the hourly job.

The tables (``experiments``, ``ab_results``, ``ab_verdicts``) are read here with this module's own queries. The
two writes validate and analyse with :mod:`..experiments.registry` and :mod:`..experiments.results`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query
from inferwatch_collector.deps import AdminPrincipal, ReadPrincipal, StoreDep
from inferwatch_collector.store import Store
from pydantic import BaseModel, ConfigDict, Field

from ..experiments import registry

router = APIRouter(prefix="/api/v1", tags=["experiments"])

Name = Annotated[str, Path(min_length=1, max_length=200, description="The experiment's name")]
#: Detail values that are words, not numbers (everything else in ``details`` is a float written as text).
_TEXT_DETAILS = frozenset({"kind", "unit", "test", "plan", "plan_complete", "sequential_method", "source",
                           "srm_flagged"})
_DEFINITION = ("SELECT name, variants, weights, control, primary_metric, guardrails, start_time, end_time, "
               "planned_users, mde, alpha, sequential, source, description, created_at, updated_at "
               "FROM experiments FINAL WHERE project_id = {p:String} AND is_deleted = 0")
_VERDICT_COLUMNS = ("window_start", "window_end", "computed_at", "data_until", "verdict", "trustworthy", "winner",
                    "primary_metric", "users", "srm_p_value", "reason", "details")
_RESULT_COLUMNS = ("metric", "variant", "n", "value", "ci_low", "ci_high", "control", "lift", "p_value", "method",
                   "details")


class VariantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    weight: float = Field(ge=0, description="Relative weight (normalised), as passed to inferwatch.experiment()")


class ExperimentIn(BaseModel):
    """An experiment definition. Variants in the SDK's order; the first is the control unless ``control``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    variants: list[VariantIn] = Field(min_length=2, max_length=20)
    control: str | None = Field(None, max_length=200)
    primary_metric: str = Field("cost_per_call", max_length=64, description="The one decision metric")
    guardrails: list[str] | None = Field(None, max_length=20,
                                         description="Metrics that must not get worse (default: error rate, "
                                                     "refusal rate, latency)")
    start: datetime | None = Field(None, description="Default: now")
    end: datetime | None = Field(None, description="Planned end (optional)")
    planned_users: int | None = Field(None, ge=0, description="Planned users in total (optional)")
    mde: float = Field(0.05, gt=0, lt=10, description="Minimum relative effect worth detecting (0.05 = 5%)")
    alpha: float = Field(0.05, gt=0, le=0.2)
    sequential: bool = Field(True, description="Tests that stay valid when the results are read daily")
    description: str = Field("", max_length=2000)


@router.post("/experiments", status_code=201, summary="Register an experiment (admin)")
def create_experiment(body: ExperimentIn, principal: AdminPrincipal, store: StoreDep,
                      replace: Annotated[bool, Query(description="Replace one registered by hand")] = False
                      ) -> dict[str, Any]:
    try:
        exp = registry.validate_experiment(
            project_id=principal.project_id, name=body.name, variants=[(v.name, v.weight) for v in body.variants],
            control=body.control, primary_metric=body.primary_metric, guardrails=body.guardrails,
            start=body.start, end=body.end, planned_users=body.planned_users, mde=body.mde, alpha=body.alpha,
            sequential=body.sequential, source="api", description=body.description)
        stored = registry.save_experiment(store, exp, replace_existing=replace)
    except registry.ExperimentError as exc:
        raise HTTPException(422, str(exc)) from exc
    except registry.ExperimentExists as exc:
        raise HTTPException(409, f"{exc}; pass replace=true to replace it") from exc
    return stored.to_json()


@router.get("/experiments", summary="The project's experiments, each with its latest verdict")
def list_experiments(principal: ReadPrincipal, store: StoreDep) -> dict[str, Any]:
    definitions = _definitions(store, principal.project_id)
    latest = _latest_verdicts(store, principal.project_id)
    return {"experiments": [{**d, "latest": latest.get(d["name"])} for d in definitions]}


@router.get("/experiments/{name}", summary="Definition, latest verdict and results of the latest window")
def get_experiment(name: Name, principal: ReadPrincipal, store: StoreDep) -> dict[str, Any]:
    definition = _definition_or_404(store, principal.project_id, name)
    latest = _latest_verdicts(store, principal.project_id, name).get(name)
    rows: list[dict[str, Any]] = []
    if latest is not None:
        rows = _results(store, principal.project_id, name, latest["window_start"], latest["window_end"])
    return {"experiment": definition, "latest": latest, "results": rows}


@router.get("/experiments/{name}/history", summary="Verdict per daily window, and one metric's rows per window")
def experiment_history(name: Name, principal: ReadPrincipal, store: StoreDep,
                       metric: Annotated[str | None, Query(max_length=64, description="Also this metric's rows")]
                       = None) -> dict[str, Any]:
    _definition_or_404(store, principal.project_id, name)
    params = {"p": principal.project_id, "e": name}
    rows = store.query(f"SELECT {', '.join(_VERDICT_COLUMNS)} FROM ab_verdicts FINAL "
                       "WHERE project_id = {p:String} AND experiment = {e:String} "
                       "ORDER BY window_start, window_end", params).result_rows
    out: dict[str, Any] = {"windows": [_verdict(dict(zip(_VERDICT_COLUMNS, r))) for r in rows]}
    if metric is not None:
        series = store.query(
            f"SELECT window_start, window_end, {', '.join(_RESULT_COLUMNS)} FROM ab_results FINAL "
            "WHERE project_id = {p:String} AND experiment = {e:String} AND metric = {m:String} "
            "ORDER BY window_start, window_end, variant", {**params, "m": metric}).result_rows
        out["metric"] = metric
        out["series"] = [{"window_start": _iso(r[0]), "window_end": _iso(r[1]),
                          **_result(dict(zip(_RESULT_COLUMNS, r[2:])))} for r in series]
    return out


@router.post("/experiments/{name}/analyze", summary="Analyse the experiment now and store the results (admin)")
def analyze_experiment(name: Name, principal: AdminPrincipal, store: StoreDep) -> dict[str, Any]:
    from ..experiments import results  # numpy and scipy: loaded on the first analysis, not at start

    report = results.report_for(store, principal.project_id, name, datetime.now(UTC))
    if report is None:
        raise HTTPException(404, f"no experiment {name!r} in this project")
    results.save_reports(store, [report])
    return report.to_json()


# ------------------------------------------------------------------------------------------- reads


def _definitions(store: Store, project_id: str, name: str | None = None) -> list[dict[str, Any]]:
    where = " AND name = {n:String}" if name is not None else ""
    rows = store.query(_DEFINITION + where + " ORDER BY name", {"p": project_id, "n": name or ""}).result_rows
    out = []
    for (exp_name, variants, weights, control, primary, guardrails, start, end, planned, mde, alpha, sequential,
         source, description, created, updated) in rows:
        out.append({"name": exp_name, "variants": [{"name": v, "weight": float(w)} for v, w in zip(variants,
                                                                                                  weights)],
                    "control": control, "primary_metric": primary, "guardrails": list(guardrails),
                    "start": _iso(start), "end": _iso(end) if end else None, "planned_users": int(planned) or None,
                    "mde": float(mde), "alpha": float(alpha), "sequential": bool(sequential), "source": source,
                    "description": description, "created_at": _iso(created), "updated_at": _iso(updated)})
    return out


def _definition_or_404(store: Store, project_id: str, name: str) -> dict[str, Any]:
    found = _definitions(store, project_id, name)
    if not found:
        raise HTTPException(404, f"no experiment {name!r} in this project")
    return found[0]


def _latest_verdicts(store: Store, project_id: str, name: str | None = None) -> dict[str, dict[str, Any]]:
    where = " AND experiment = {e:String}" if name is not None else ""
    rows = store.query(
        f"SELECT experiment, {', '.join(_VERDICT_COLUMNS)} FROM ab_verdicts FINAL WHERE project_id = {{p:String}}"
        f"{where} ORDER BY experiment, window_end DESC, computed_at DESC LIMIT 1 BY experiment",
        {"p": project_id, "e": name or ""}).result_rows
    return {r[0]: _verdict(dict(zip(_VERDICT_COLUMNS, r[1:]))) for r in rows}


def _results(store: Store, project_id: str, name: str, window_start: str, window_end: str
             ) -> list[dict[str, Any]]:
    rows = store.query(
        f"SELECT {', '.join(_RESULT_COLUMNS)} FROM ab_results FINAL WHERE project_id = {{p:String}} "
        "AND experiment = {e:String} AND window_start = parseDateTimeBestEffort({s:String}) "
        "AND window_end = parseDateTimeBestEffort({w:String}) ORDER BY metric, variant",
        {"p": project_id, "e": name, "s": window_start, "w": window_end}).result_rows
    return [_result(dict(zip(_RESULT_COLUMNS, r))) for r in rows]


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    details = dict(row.pop("details"))
    arms = {k.removeprefix("arm."): v for k, v in details.items() if k.startswith("arm.")}
    warnings = [v for k, v in sorted(details.items(), key=lambda kv: kv[0]) if k.startswith("warning.")]
    rest = {k: v for k, v in details.items() if not k.startswith(("arm.", "warning."))}
    return {**{k: _iso(v) if isinstance(v, datetime) else v for k, v in row.items()},
            "trustworthy": bool(row["trustworthy"]), "srm_p_value": _num(row["srm_p_value"]),
            "arms": arms, "warnings": warnings, "details": _parse_details(rest)}


def _result(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: (_num(v) if isinstance(v, float) else v) for k, v in row.items() if k != "details"}
    out["details"] = _parse_details(dict(row["details"]))
    return out


def _parse_details(details: dict[str, str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for key, text in details.items():
        if key in _TEXT_DETAILS:
            parsed[key] = text
            continue
        try:
            parsed[key] = _num(float(text))
        except ValueError:
            parsed[key] = text
    return parsed


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _iso(value: datetime) -> str:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat().replace("+00:00", "Z")
