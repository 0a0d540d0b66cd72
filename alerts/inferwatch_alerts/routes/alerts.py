"""Alerts API for the dashboard: current alerts, their history, silences and the rules in force.

* ``GET /api/v1/alerts``: the project's alerts now (pending, firing, no data; ``state=all`` adds the rest), with
  value, threshold or baseline, since when, the incident's dedup key and whether a silence holds it.
* ``GET /api/v1/alerts/history``: transitions from ``alert_events`` (pending, firing, resolved, ...), newest
  first, filtered by rule, series, state and time range.
* ``GET /api/v1/alerts/silences``; ``POST /api/v1/alerts/silences`` and ``DELETE
  /api/v1/alerts/silences/{silence_id}`` (expires it): creating and expiring need the ``admin`` scope.
* ``GET /api/v1/alerts/rules``: the rules file in force (the project's rules only), with each rule's channels
  by name (never their secrets), and for each baseline-relative rule whether it is still *learning*: the days
  of history it needs (``history_days``), the days the project has (``has_days``, since its first call) and
  ``learning_status`` (``learning: has 1 of 3 days``, or ``ready``). A rule cannot fire while it learns.

Every query is filtered by the key's project and parameterised. Job runs (the evaluations themselves) are at
``GET /api/v1/jobs/runs`` (a collector route). Reads of ``alert_state`` and ``alert_events`` are this module's
own queries; silences and rules go through :mod:`..silences` and :mod:`..rules`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query
from inferwatch_collector.deps import AdminPrincipal, ReadPrincipal, SettingsDep, StoreDep
from pydantic import BaseModel, ConfigDict, Field

from .. import rules, silences
from ..observations import learning_text
from ..rules import parse_duration
from ..signals import project_first_seen

router = APIRouter(prefix="/api/v1", tags=["alerts"])

ACTIVE_STATES = ("pending", "firing", "no_data")
ALL_STATES = ("ok", "pending", "firing", "resolved", "no_data")
MAX_HISTORY_DAYS = 400
SilenceId = Annotated[str, Path(max_length=64, pattern=r"^s_[0-9a-f]{16}$", description="The silence's id")]
RuleFilter = Annotated[str | None, Query(max_length=128, description="Only this rule id")]


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if value.timestamp() <= 0:
        return None
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _num(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@router.get("/alerts", summary="The project's current alerts (pending, firing, no data)")
def current_alerts(principal: ReadPrincipal, store: StoreDep,
                   state: Annotated[Literal["active", "all", "ok", "pending", "firing", "resolved", "no_data"],
                                    Query(description="active (default): pending, firing, no_data")] = "active",
                   rule_id: RuleFilter = None) -> dict[str, Any]:
    states = {"active": ACTIVE_STATES, "all": ALL_STATES}.get(state, (state,))
    where = ["project_id = {p:String}", "is_deleted = 0", "state IN {states:Array(String)}"]
    params: dict[str, Any] = {"p": principal.project_id, "states": list(states)}
    if rule_id:
        where.append("rule_id = {rule:String}")
        params["rule"] = rule_id
    rows = store.query(
        "SELECT rule_id, series_key, state, since, last_value, last_eval_at, severity, threshold, baseline, "
        "labels, dedup_key, channels, incident_start, silenced_until, notified, last_notified_at "
        f"FROM alert_state FINAL WHERE {' AND '.join(where)} "
        "ORDER BY indexOf(['critical', 'warning', 'info'], severity) = 0, "
        "indexOf(['critical', 'warning', 'info'], severity), since, rule_id, series_key", params).result_rows
    now = datetime.now(UTC)
    alerts = []
    for (rule, key, st, since, value, evaluated, severity, threshold, baseline, labels, dedup, channels,
         incident, silenced_until, notified, notified_at) in rows:
        labels = dict(labels)
        kind = "rule" if labels.pop("source", "") == "rules" else ("budget" if rule.startswith("budget:")
                                                                   else "other")
        until = _utc(silenced_until) if silenced_until else None
        alerts.append({
            "rule_id": rule, "kind": kind, "series_key": key, "state": st, "severity": severity or None,
            "since": _iso(since), "incident_start": _iso(incident), "value": _num(value),
            "threshold": _num(threshold), "baseline": _num(baseline), "labels": labels,
            "dedup_key": dedup or None, "channels": list(channels), "last_evaluated_at": _iso(evaluated),
            "notified": notified == "firing", "last_notified_at": _iso(notified_at),
            "silenced_until": _iso(until) if until is not None and until > now else None,
        })
    return {"alerts": alerts}


@router.get("/alerts/history", summary="Alert transitions (pending, firing, resolved, ...), newest first")
def alert_history(principal: ReadPrincipal, store: StoreDep,
                  start: Annotated[datetime | None, Query(description="Default: end - 7 days")] = None,
                  end: Annotated[datetime | None, Query(description="Default: now")] = None,
                  rule_id: RuleFilter = None,
                  series_key: Annotated[str | None, Query(max_length=512)] = None,
                  state: Annotated[Literal["ok", "pending", "firing", "resolved", "no_data"] | None,
                                   Query(description="Only this transition")] = None,
                  limit: Annotated[int, Query(ge=1, le=5000)] = 200) -> dict[str, Any]:
    end_t = _utc(end) if end else datetime.now(UTC)
    start_t = _utc(start) if start else end_t - timedelta(days=7)
    if start_t >= end_t:
        raise HTTPException(400, "start must be before end")
    if end_t - start_t > timedelta(days=MAX_HISTORY_DAYS):
        raise HTTPException(400, f"start: range too long, at most {MAX_HISTORY_DAYS} days before end")
    where = ["project_id = {p:String}", "event_time >= fromUnixTimestamp64Milli({s:Int64})",
             "event_time < fromUnixTimestamp64Milli({e:Int64})"]
    params: dict[str, Any] = {"p": principal.project_id, "s": int(start_t.timestamp() * 1000),
                              "e": int(end_t.timestamp() * 1000), "n": limit}
    for column, value, name in (("rule_id", rule_id, "rule"), ("series_key", series_key, "series"),
                                ("state", state, "state")):
        if value:
            where.append(f"{column} = {{{name}:String}}")
            params[name] = value
    rows = store.query(
        "SELECT event_time, rule_id, series_key, state, severity, metric, value, threshold, window_s, message, "
        f"labels, channels FROM alert_events WHERE {' AND '.join(where)} "
        "ORDER BY event_time DESC, rule_id, series_key LIMIT {n:UInt32}", params).result_rows
    events = []
    for time, rule, key, st, severity, metric, value, threshold, window_s, message, labels, channels in rows:
        labels = dict(labels)
        labels.pop("source", None)
        events.append({"time": _iso(time), "rule_id": rule, "series_key": key, "state": st, "severity": severity,
                       "signal": metric or None, "value": _num(value), "threshold": _num(threshold),
                       "window_s": window_s, "message": message, "dedup_key": labels.get("dedup_key"),
                       "labels": labels, "channels": list(channels)})
    return {"start": _iso(start_t), "end": _iso(end_t), "events": events}


# ------------------------------------------------------------------------------------------------ silences


class SilenceIn(BaseModel):
    """A silence: one rule (or every rule when ``rule_id`` is empty) for the series whose labels equal every
    matcher, until ``ends_at`` (or for ``duration``, e.g. ``2h``)."""

    model_config = ConfigDict(extra="forbid")

    rule_id: str | None = Field(None, max_length=128, description="Rule id; empty or '*': every rule")
    matchers: dict[str, str] = Field(default_factory=dict, max_length=20,
                                     description="Series labels that must all match, e.g. {\"model\": \"gpt-4o\"}")
    ends_at: datetime | None = Field(None, description="When the silence ends (ISO 8601)")
    duration: str | None = Field(None, max_length=32, description="Instead of ends_at: 30m, 2h, 1d")
    starts_at: datetime | None = Field(None, description="Default: now")
    comment: str = Field("", max_length=1000)


@router.get("/alerts/silences", summary="The project's silences (active ones unless include_expired)")
def list_silences(principal: ReadPrincipal, store: StoreDep,
                  include_expired: Annotated[bool, Query(description="Also ended silences")] = False
                  ) -> dict[str, Any]:
    now = datetime.now(UTC)
    found = silences.list_silences(store, principal.project_id, include_expired=include_expired)
    return {"silences": [s.to_json(now) for s in found]}


@router.post("/alerts/silences", status_code=201, summary="Silence a rule (or every rule) for some series (admin)")
def create_silence(body: SilenceIn, principal: AdminPrincipal, store: StoreDep) -> dict[str, Any]:
    now = datetime.now(UTC)
    if (body.ends_at is None) == (body.duration is None):
        raise HTTPException(422, "give exactly one of ends_at and duration")
    if body.duration is not None:
        try:
            ends_at = (_utc(body.starts_at) if body.starts_at else now) + timedelta(
                seconds=parse_duration(body.duration))
        except ValueError as exc:
            raise HTTPException(422, f"duration: {exc}") from exc
    else:
        assert body.ends_at is not None
        ends_at = body.ends_at
    try:
        silence = silences.create_silence(store, principal.project_id, rule_id=body.rule_id,
                                          matchers=body.matchers, ends_at=ends_at, starts_at=body.starts_at,
                                          comment=body.comment, created_by=principal.key_id, now=now)
    except silences.SilenceError as exc:
        raise HTTPException(422, str(exc)) from exc
    return silence.to_json(now)


@router.delete("/alerts/silences/{silence_id}", summary="Expire a silence now (admin)")
def expire_silence(silence_id: SilenceId, principal: AdminPrincipal, store: StoreDep) -> dict[str, Any]:
    silence = silences.expire_silence(store, principal.project_id, silence_id)
    if silence is None:
        raise HTTPException(404, f"no silence {silence_id!r} in this project")
    return silence.to_json()


# -------------------------------------------------------------------------------------------------- rules


@router.get("/alerts/rules", summary="The alert rules in force for this project, and which are still learning")
def alert_rules(principal: ReadPrincipal, settings: SettingsDep, store: StoreDep) -> dict[str, Any]:
    try:
        ruleset = rules.load_configured(settings)
    except rules.RulesError as exc:
        raise HTTPException(503, f"the alert rules file is invalid; the scheduler will not start until it is "
                                 f"fixed: {'; '.join(exc.errors)}") from exc
    source = ruleset.source if ruleset.source.startswith("<") else PurePath(ruleset.source).name
    first = project_first_seen(store, principal.project_id)
    has = max(0, int((datetime.now(UTC).timestamp() - first) // 86400)) if first is not None else 0
    listed = []
    for rule in rules.iter_rules(ruleset, principal.project_id):
        item = rule.to_json(ruleset.routing)
        needs = item["history_days"]
        learning = has < needs
        item |= {"has_days": min(has, needs), "learning": learning,
                 "learning_status": learning_text(has, needs) if learning else "ready"}
        listed.append(item)
    return {"source": source, "evaluation_offset_s": ruleset.evaluation_offset_s, "history_days": has,
            "channels": {name: spec.get("type") for name, spec in ruleset.channels.items()},
            "routing": {k: list(v) for k, v in ruleset.routing.items()}, "rules": listed}
