"""Budgets: definitions, the burn and forecast maths, and the status the API and the SDK's guard read.

A budget caps what one project spends per UTC day or calendar month, on the whole project, on one ``feature``
or on one hashed user (the SDK's HMAC ``user_hash``). ``soft`` budgets only alert; ``hard`` ones also make the
SDK's guard block or downgrade calls once ``exceeded``. Alerts go out when spend crosses each of the budget's
``thresholds`` (fractions of the limit, default 50/80/100%) and when the forecast says the limit will be passed
before the period ends; the scheduler's budget job (in the alerting package) records them and uses
:func:`due_alerts` from here.

The module has three layers, so the maths is tested without a database:

* definitions (:class:`Budget`, :func:`validate_budget`, create/list/delete in the ``budgets`` table,
  a ReplacingMergeTree where a delete is a newer row with ``is_deleted = 1``);
* pure maths (:func:`period_bounds`, :func:`burn_rate_per_hour`, :func:`forecast_usd`,
  :func:`compute_status`, :func:`due_alerts`);
* status (:func:`budget_status`, :func:`project_status`): spend from ``cost_1d``, burn from hourly data.

Spend is read from the daily rollup ``cost_1d``: a call lands there the moment it is inserted, so today's
partial day counts, and day granularity is exact for daily and monthly periods (both are whole UTC days).

Forecast method (documented here because the API's ``forecast_usd`` is only as good as it):
``forecast = spent + burn rate x hours left in the period``.

* daily budgets: the burn rate is today's own average, ``spent today / hours elapsed today``, with the elapsed
  time counted as at least one hour so the first minutes of a day do not extrapolate one call into a day;
* monthly budgets: the burn rate is the trailing ~24 hours, ``cost since the start of the hour 23 hours ago /
  that window's length`` (between 23 and 24 hours), read from ``llm_calls_1h`` for the project, ``usage_1h``
  for a feature, and ``llm_calls`` (bloom-filtered on ``user_hash``) for a user, the finest data that has the
  scope's dimension. A day's rate, not the month's average, because a month-to-date average hides a spike that
  started today, which is exactly what the forecast alert is for.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Final, Literal

from ..store import Store

ScopeType = Literal["project", "feature", "user"]
Period = Literal["day", "month"]
Kind = Literal["soft", "hard"]

SCOPE_TYPES: Final = ("project", "feature", "user")
PERIODS: Final = ("day", "month")
KINDS: Final = ("soft", "hard")
DEFAULT_THRESHOLDS: Final = (0.5, 0.8, 1.0)
#: The label of the forecast alert, beside the threshold fractions.
FORECAST: Final = "forecast"
#: Largest limit a Decimal(18, 6) column holds, with margin.
MAX_LIMIT_USD: Final = 1e11
MAX_THRESHOLDS: Final = 10

_BUDGET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MIN_DAILY_ELAPSED_H = 1.0
_TRAILING_H = 23  # whole hours before the current one in the monthly burn window
_COLUMNS: Final = ("project_id", "budget_id", "scope_type", "scope_value", "period", "limit_usd", "kind",
                   "thresholds", "created_at", "updated_at", "is_deleted")
# Where the trailing cost of each scope is read: (table, time column, scope column). Fixed names, never input.
_BURN_SOURCES: Final[dict[str, tuple[str, str, str | None]]] = {
    "project": ("llm_calls_1h", "hour", None),
    "feature": ("usage_1h", "hour", "feature"),
    "user": ("llm_calls", "start_time", "user_hash"),
}
_SCOPE_COLUMN: Final[dict[str, str | None]] = {"project": None, "feature": "feature", "user": "user_hash"}


class BudgetError(ValueError):
    """An invalid budget definition; ``field`` names the offending field (the API answers 422 with it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class BudgetExists(Exception):
    """A budget with this id already exists in the project (the API answers 409)."""


# --------------------------------------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Budget:
    """One budget as stored. ``created_at`` doubles as its revision: re-creating a budget restarts its alerts."""

    project_id: str
    budget_id: str
    scope_type: ScopeType
    scope_value: str
    period: Period
    kind: Kind
    limit_usd: Decimal
    thresholds: tuple[float, ...]
    created_at: datetime

    @property
    def scope_key(self) -> str:
        """``project``, ``feature=<name>`` or ``user=<hash>``: the alert series this budget's events belong to."""
        return "project" if self.scope_type == "project" else f"{self.scope_type}={self.scope_value}"

    @property
    def revision(self) -> str:
        """Identifies this definition of the budget (alerts are deduplicated per revision and period)."""
        return str(int(self.created_at.timestamp() * 1000))

    def to_json(self) -> dict[str, Any]:
        """The definition as the API lists it."""
        return {"budget_id": self.budget_id, "scope_type": self.scope_type, "scope_value": self.scope_value,
                "period": self.period, "kind": self.kind, "limit_usd": float(self.limit_usd),
                "thresholds": list(self.thresholds), "created_at": _iso(self.created_at)}


@dataclass(frozen=True)
class BudgetSpec:
    """A validated definition, before it has a project and a creation time."""

    budget_id: str
    scope_type: ScopeType
    scope_value: str
    period: Period
    kind: Kind
    limit_usd: Decimal
    thresholds: tuple[float, ...]


def validate_budget(*, scope_type: str, period: str, kind: str, limit_usd: float | int | str | Decimal,
                    scope_value: str = "", thresholds: Iterable[float] | None = None,
                    budget_id: str | None = None) -> BudgetSpec:
    """Check a definition and normalise it; :class:`BudgetError` names the first field that is wrong.

    Shared by the API and the CLI so both refuse the same things with the same words. Thresholds are
    fractions of the limit (0.8 = 80%), sorted and de-duplicated; above 1.0 is allowed (an overrun alert).
    """
    if budget_id is None or budget_id == "":
        budget_id = f"b_{secrets.token_hex(6)}"
    elif not _BUDGET_ID.fullmatch(budget_id):
        raise BudgetError("budget_id", "use 1-64 letters, digits, '_', '-' or '.', starting with a letter/digit")
    if scope_type not in SCOPE_TYPES:
        raise BudgetError("scope_type", f"must be one of {', '.join(SCOPE_TYPES)}, got {scope_type!r}")
    scope_value = scope_value or ""
    if scope_type == "project":
        if scope_value:
            raise BudgetError("scope_value", "must be empty for a project budget")
    elif not scope_value.strip():
        raise BudgetError("scope_value", f"a {scope_type} budget needs the {_what(scope_type)}")
    elif len(scope_value) > 256 or any(ord(ch) < 32 for ch in scope_value):
        raise BudgetError("scope_value", "at most 256 characters, no control characters")
    if period not in PERIODS:
        raise BudgetError("period", f"must be one of {', '.join(PERIODS)}, got {period!r}")
    if kind not in KINDS:
        raise BudgetError("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    limit = _limit(limit_usd)
    return BudgetSpec(budget_id=budget_id, scope_type=scope_type,  # type: ignore[arg-type]
                      scope_value=scope_value, period=period, kind=kind,  # type: ignore[arg-type]
                      limit_usd=limit, thresholds=_thresholds(thresholds))


def _what(scope_type: str) -> str:
    return "feature name (as in inferwatch.tags(feature=...))" if scope_type == "feature" else \
        "user's hash (the user_hash the SDK records)"


def _limit(value: float | int | str | Decimal) -> Decimal:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BudgetError("limit_usd", f"must be a number of US dollars, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0:
        raise BudgetError("limit_usd", "must be a positive number of US dollars")
    if number > MAX_LIMIT_USD:
        raise BudgetError("limit_usd", f"must be at most {MAX_LIMIT_USD:,.0f}")
    limit = Decimal(str(value)).quantize(Decimal("0.000001"))
    if limit <= 0:
        raise BudgetError("limit_usd", "must be at least 0.000001")
    return limit


def _thresholds(values: Iterable[float] | None) -> tuple[float, ...]:
    if values is None:
        return DEFAULT_THRESHOLDS
    cleaned: set[float] = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise BudgetError("thresholds", f"each threshold must be a number, got {value!r}")
        if not 0 < value <= 10:
            raise BudgetError("thresholds", f"each threshold is a fraction of the limit in (0, 10], got {value}")
        cleaned.add(round(float(value), 6))
    if not cleaned:
        raise BudgetError("thresholds", "give at least one threshold (or leave it out for 0.5, 0.8, 1.0)")
    if len(cleaned) > MAX_THRESHOLDS:
        raise BudgetError("thresholds", f"at most {MAX_THRESHOLDS} thresholds")
    return tuple(sorted(cleaned))


def create_budget(store: Store, project_id: str, spec: BudgetSpec, *, now: datetime | None = None) -> Budget:
    """Store a new budget; :class:`BudgetExists` when the project already has a live one with this id.

    Check, then insert: two admins creating the same id at the same instant leave the later definition, which
    ClickHouse cannot prevent without a lock and which costs nothing worse than one overwritten definition.
    """
    if get_budget(store, project_id, spec.budget_id) is not None:
        raise BudgetExists(f"budget {spec.budget_id!r} already exists in project {project_id!r}; delete it first")
    created = _ms(now or datetime.now(UTC))
    budget = Budget(project_id=project_id, created_at=created, budget_id=spec.budget_id,
                    scope_type=spec.scope_type, scope_value=spec.scope_value, period=spec.period, kind=spec.kind,
                    limit_usd=spec.limit_usd, thresholds=spec.thresholds)
    _write(store, budget, updated_at=created, deleted=False)
    return budget


def list_budgets(store: Store, project_id: str | None) -> list[Budget]:
    """Live budgets of one project, or of every project (``None``, for the evaluation job)."""
    where, params = ("AND project_id = {p:String}", {"p": project_id}) if project_id is not None else ("", {})
    rows = store.query(
        "SELECT project_id, budget_id, scope_type, scope_value, period, kind, limit_usd, thresholds, created_at "
        f"FROM budgets FINAL WHERE is_deleted = 0 {where} ORDER BY project_id, budget_id", params,
    ).result_rows
    return [_budget(row) for row in rows]


def get_budget(store: Store, project_id: str, budget_id: str) -> Budget | None:
    """One live budget of the project, or None."""
    rows = store.query(
        "SELECT project_id, budget_id, scope_type, scope_value, period, kind, limit_usd, thresholds, created_at "
        "FROM budgets FINAL WHERE project_id = {p:String} AND budget_id = {b:String} AND is_deleted = 0",
        {"p": project_id, "b": budget_id},
    ).result_rows
    return _budget(rows[0]) if rows else None


def delete_budget(store: Store, project_id: str, budget_id: str, *, now: datetime | None = None) -> bool:
    """Delete a budget of the project (a newer row marked deleted); False when there is no such budget."""
    budget = get_budget(store, project_id, budget_id)
    if budget is None:
        return False
    updated = _ms(now or datetime.now(UTC))
    _write(store, budget, updated_at=max(updated, budget.created_at + timedelta(milliseconds=1)), deleted=True)
    return True


def _write(store: Store, budget: Budget, *, updated_at: datetime, deleted: bool) -> None:
    store.insert_columns("budgets", [[budget.project_id], [budget.budget_id], [budget.scope_type],
                                     [budget.scope_value], [budget.period], [budget.limit_usd], [budget.kind],
                                     [list(budget.thresholds)], [budget.created_at], [updated_at],
                                     [1 if deleted else 0]], _COLUMNS)


def _budget(row: Sequence[Any]) -> Budget:
    project_id, budget_id, scope_type, scope_value, period, kind, limit, thresholds, created = row
    return Budget(project_id=project_id, budget_id=budget_id, scope_type=scope_type, scope_value=scope_value,
                  period=period, kind=kind, limit_usd=Decimal(limit), thresholds=tuple(thresholds),
                  created_at=_utc(created))


# ----------------------------------------------------------------------------------------------- pure maths


def period_bounds(period: str, now: datetime) -> tuple[datetime, datetime]:
    """The UTC day or calendar month containing ``now``, as a half-open ``[start, end)``."""
    now = _utc(now)
    if period == "day":
        start = datetime(now.year, now.month, now.day, tzinfo=UTC)
        return start, start + timedelta(days=1)
    if period == "month":
        start = datetime(now.year, now.month, 1, tzinfo=UTC)
        end = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
        return start, end
    raise ValueError(f"unknown budget period {period!r}")


def trailing_window(now: datetime) -> tuple[datetime, datetime]:
    """The monthly burn window ``[start of the hour 23 h before now's hour, now)``: 23 to 24 hours long, and
    aligned to the hourly rollups so it reads whole buckets plus the current partial one."""
    now = _utc(now)
    hour = now.replace(minute=0, second=0, microsecond=0)
    return hour - timedelta(hours=_TRAILING_H), now


def burn_rate_per_hour(cost_usd: float, start: datetime, end: datetime, *, min_hours: float = 0.0) -> float:
    """Average USD per hour over ``[start, end)``, the window counted as at least ``min_hours`` long."""
    hours = max((end - start).total_seconds() / 3600.0, min_hours)
    return cost_usd / hours if hours > 0 else 0.0


def daily_burn_rate(spent_today: float, day_start: datetime, now: datetime) -> float:
    """A daily budget's rate: today's spend over today's elapsed hours (at least one, see the module doc)."""
    return burn_rate_per_hour(spent_today, day_start, _utc(now), min_hours=_MIN_DAILY_ELAPSED_H)


def forecast_usd(spent_usd: float, rate_per_hour: float, now: datetime, period_end: datetime) -> float:
    """Spend at the end of the period if the current burn rate holds: ``spent + rate x hours left``."""
    hours_left = max((period_end - _utc(now)).total_seconds() / 3600.0, 0.0)
    return spent_usd + max(rate_per_hour, 0.0) * hours_left


@dataclass(frozen=True)
class BudgetStatus:
    """Where a budget stands at ``generated_at``; :meth:`to_json` is the API's (and the SDK's) contract."""

    budget: Budget
    spent_usd: float
    used_ratio: float
    exceeded: bool
    forecast_usd: float
    forecast_exceeds: bool
    burn_rate_usd_per_hour: float
    period_start: datetime
    period_end: datetime
    generated_at: datetime

    def to_json(self) -> dict[str, Any]:
        """One entry of ``GET /api/v1/budgets/status``."""
        b = self.budget
        return {"budget_id": b.budget_id, "scope_type": b.scope_type, "scope_value": b.scope_value,
                "period": b.period, "kind": b.kind, "limit_usd": float(b.limit_usd),
                "spent_usd": round(self.spent_usd, 6), "used_ratio": round(self.used_ratio, 6),
                "exceeded": self.exceeded, "forecast_exceeds": self.forecast_exceeds,
                "forecast_usd": round(self.forecast_usd, 6), "period_start": _iso(self.period_start),
                "period_end": _iso(self.period_end)}


def compute_status(budget: Budget, spent_usd: float, rate_per_hour: float, now: datetime) -> BudgetStatus:
    """Ratio, exceeded (spend at or over the limit) and forecast of a budget from its spend and burn rate."""
    now = _utc(now)
    start, end = period_bounds(budget.period, now)
    limit = float(budget.limit_usd)
    spent = max(float(spent_usd), 0.0)
    forecast = forecast_usd(spent, rate_per_hour, now, end)
    return BudgetStatus(budget=budget, spent_usd=spent, used_ratio=spent / limit, exceeded=spent >= limit,
                        forecast_usd=forecast, forecast_exceeds=forecast > limit,
                        burn_rate_usd_per_hour=max(rate_per_hour, 0.0), period_start=start, period_end=end,
                        generated_at=now)


@dataclass(frozen=True)
class DueAlert:
    """An alert the evaluation job must record: a crossed threshold (``"0.8"``) or the forecast."""

    status: BudgetStatus
    label: str  # threshold_label(t) or FORECAST
    threshold: float | None  # the fraction, None for the forecast alert

    @property
    def severity(self) -> str:
        """critical for a hard budget at or over 100%; warning for everything else (soft, < 100%, forecast)."""
        hard_overrun = self.status.budget.kind == "hard" and self.threshold is not None and self.threshold >= 1.0
        return "critical" if hard_overrun else "warning"

    @property
    def message(self) -> str:
        """What happened, in words and dollars, for a person reading a notification."""
        s, b = self.status, self.status.budget
        what = "Project" if b.scope_type == "project" else f"{b.scope_type.capitalize()} {b.scope_value!r}"
        per = "today" if b.period == "day" else "this month"
        head = f"{what} has spent ${s.spent_usd:,.2f} of its ${float(b.limit_usd):,.2f} {b.kind} budget {per}"
        if self.threshold is None:
            return (f"{head} ({s.used_ratio:.0%}); at ${s.burn_rate_usd_per_hour:,.2f}/hour it is forecast "
                    f"to reach ${s.forecast_usd:,.2f} by {_iso(s.period_end)}, over the limit "
                    f"(budget {b.budget_id}).")
        blocked = b.kind == "hard" and s.exceeded
        tail = " Calls guarded by the SDK are now blocked or downgraded." if blocked else ""
        return (f"{head}: {s.used_ratio:.0%} used, past the {self.threshold:.0%} threshold "
                f"(budget {b.budget_id}).{tail}")


def threshold_label(threshold: float) -> str:
    """A threshold as stored in alert labels (``0.8``, ``1.0``): stable text, so dedup compares equal."""
    return repr(round(float(threshold), 6))


def due_alerts(status: BudgetStatus, sent: Iterable[str]) -> list[DueAlert]:
    """The alerts to record now, given the labels already recorded for this budget revision and period.

    At most one threshold alert per evaluation: the highest crossed threshold not yet covered, where a recorded
    threshold covers every lower one (spend jumping from 10% to 90% sends one "80%" alert, not "50%" and "80%",
    and a later "50%" never follows). The forecast alert goes out once per period, only while the limit is not
    yet reached (after that the 100% alert says more).
    """
    sent = set(sent)
    budget = status.budget
    covered = max((_level(label) for label in sent), default=0.0)
    crossed = [t for t in budget.thresholds if status.used_ratio >= t and t > covered
               and threshold_label(t) not in sent]
    due: list[DueAlert] = []
    if crossed:
        top = max(crossed)
        due.append(DueAlert(status=status, label=threshold_label(top), threshold=top))
    if status.forecast_exceeds and not status.exceeded and FORECAST not in sent:
        due.append(DueAlert(status=status, label=FORECAST, threshold=None))
    return due


def _level(label: str) -> float:
    """A recorded threshold label as a fraction; 0 for the forecast label or anything unreadable."""
    try:
        return float(label)
    except ValueError:
        return 0.0


# ---------------------------------------------------------------------------------------------------- status


def spent_usd(store: Store, budget: Budget, start: datetime, end: datetime) -> float:
    """The budget scope's cost over whole UTC days ``[start, end)`` from ``cost_1d`` (today's partial day too)."""
    column = _SCOPE_COLUMN[budget.scope_type]
    scope = f" AND {column} = {{v:String}}" if column else ""
    rows = store.query(
        "SELECT sum(cost_usd) FROM cost_1d WHERE project_id = {p:String} AND day >= {s:Date} AND day < {e:Date}"
        + scope,
        {"p": budget.project_id, "s": start.date(), "e": _ceil_day(end), "v": budget.scope_value},
    ).result_rows
    return float(rows[0][0] or 0.0) if rows else 0.0


def trailing_cost_usd(store: Store, budget: Budget, start: datetime, end: datetime) -> float:
    """The budget scope's cost over ``[start, end)`` from the finest data with the scope's dimension."""
    table, time_column, column = _BURN_SOURCES[budget.scope_type]
    scope = f" AND {column} = {{v:String}}" if column else ""
    rows = store.query(
        f"SELECT sum(cost_usd) FROM {table} WHERE project_id = {{p:String}} "
        f"AND {time_column} >= fromUnixTimestamp({{s:Int64}}) AND {time_column} < fromUnixTimestamp({{e:Int64}})"
        + scope,
        {"p": budget.project_id, "s": int(start.timestamp()), "e": math.ceil(end.timestamp()),
         "v": budget.scope_value},
    ).result_rows
    return float(rows[0][0] or 0.0) if rows else 0.0


def budget_status(store: Store, budget: Budget, now: datetime) -> BudgetStatus:
    """Spend, ratio and forecast of one budget at ``now`` (see the module doc for the forecast method)."""
    now = _utc(now)
    start, end = period_bounds(budget.period, now)
    spent = spent_usd(store, budget, start, end)
    if budget.period == "day":
        rate = daily_burn_rate(spent, start, now)
    else:
        window_start, window_end = trailing_window(now)
        rate = burn_rate_per_hour(trailing_cost_usd(store, budget, window_start, window_end), window_start,
                                  window_end)
    return compute_status(budget, spent, rate, now)


def project_status(store: Store, project_id: str, now: datetime | None = None) -> dict[str, Any]:
    """``GET /api/v1/budgets/status``: every budget of the project with its spend and forecast."""
    now = _utc(now or datetime.now(UTC))
    return {"generated_at": _iso(now),
            "budgets": [budget_status(store, b, now).to_json() for b in list_budgets(store, project_id)]}


# ----------------------------------------------------------------------------------------------------- utils


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _ms(value: datetime) -> datetime:
    value = _utc(value)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def _ceil_day(value: datetime) -> date:
    """The first day not touched by ``[..., value)``."""
    day = value.date()
    return day if value == datetime(day.year, day.month, day.day, tzinfo=UTC) else day + timedelta(days=1)


def _iso(value: datetime) -> str:
    return _utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")
