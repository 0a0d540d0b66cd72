"""Cost reports: a project's daily and month-to-date cost by model, provider, feature, prompt template or hashed
user, read from the ``cost_1d`` rollup, stored in ``cost_reports`` (issue 4 item 4, DESIGN §7).

Why ``cost_1d``: it is keyed by every report dimension and the price version and holds only sums, so a report is
one ``GROUP BY`` over it (never a scan of ``llm_calls``) and its totals are sums of the calls' own costs: a report
equals the sum of its calls to the cent because nothing is re-priced or estimated on the way. Being keyed down to
the user, ``cost_1d`` has nearly a row per call; the queries are shaped so that its two projections (migration
0003: by every dimension but the user, and by user) answer them, and ranking, capping and totals happen in SQL, so
a report of 10M calls reads thousands of rows and returns hundreds (``bench/cost_report.py``).

Periods (UTC days, :func:`period_bounds`). ``day`` D is that day, compared with D − 1. ``month`` D is month to
date, the 1st of D's month through D, compared with the same number of days immediately before it (March 1–15
with February 14–28): equal lengths make the comparison fair, whereas "the same days last month" does not exist
for March 29–31. A period that reaches today is ``partial``.

Per line and in the totals: calls, errors, tokens by type, cost and its components; cost per successful call =
cost ÷ (calls − errors), so failed calls' cost is carried by the calls that succeeded; the cache hit ratio =
cache-read tokens ÷ input tokens (input includes cache reads, OTel convention); ``cache_savings_usd``, what the
provider's prompt caching saved against the uncached input price, beside the application-side cache (calls served
from the app's own cache: ``cache_hits`` and the ``cost_avoided_usd`` they would have cost). ``unpriced`` and
``usage_missing`` counts are always carried and shown: those calls cost 0 for a reason the reader must see. Each
line lists the price versions its costs come from; the report lists every version with its calls and cost.

Lines: the keys with calls in the period, most expensive first; beyond ``limit`` keys, the first ``limit`` − 1
and one ``(other)`` line that sums the rest, so the lines always add up to the totals. Top movers: the keys whose
cost changed most against the previous period (by absolute change; a key present only in the previous period is a
mover too).

Month-end forecast (:func:`forecast_month_end`): spent so far + mean daily cost × days left, with a 90%
t-prediction interval. The sample is the complete days of the month from the project's first active day of the
month (so a project that started mid-month is not diluted by the empty days before it). For R days left
(fractional when the period ends today) and n sampled days with mean m and standard deviation s, the remaining
cost is R·m ± t(0.95, n − 1)·s·√(R + R²/n): R·s² is the variance of R future days, R²·s²/n that of the
estimated mean. The low end never goes below what is already spent. Days are taken as independent and without
weekly pattern; with fewer than two complete days there is a point forecast (one day) or none (no day) and no
range.

Storage (:func:`save_cost_report`): per project, period and start, one ``source='computed'`` row per (provider,
model) with the typed columns (what an invoice is reconciled against) and one ``source='report'`` row holding the
whole report as JSON in ``details['report']`` (breakdowns capped at :data:`STORED_LINES` lines plus an ``(other)``
line, so they still add up to the totals). ``cost_reports`` is a ReplacingMergeTree keyed by (project, period,
start, source, provider, model): saving again replaces, and every row of one save carries the same
``generated_at``. :func:`run_cost_report_job` is what the scheduler runs once a day.
"""

from __future__ import annotations

import calendar
import csv
import io
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from ..store import Store

log = logging.getLogger(__name__)

PERIODS = ("day", "month")
#: Report dimension -> its ``cost_1d`` column. ``project`` is the whole project on one line.
DIMENSIONS: Mapping[str, str] = {
    "project": "project_id", "model": "model", "provider": "provider", "feature": "feature",
    "prompt_template": "prompt_template", "user": "user_hash",
}
DEFAULT_LINE_LIMIT = 500
DEFAULT_MOVERS = 5
#: Lines kept per dimension in a stored report (the rest are summed into one ``(other)`` line).
STORED_LINES = 100
OTHER_KEY = "(other)"
FORECAST_LEVEL = 0.90
# t(0.95, df) for df = 1..30 (a forecast samples at most 30 days: df <= 29); beyond, the normal quantile.
_T95 = (6.313752, 2.919986, 2.353363, 2.131847, 2.015048, 1.943180, 1.894579, 1.859548, 1.833113, 1.812461,
        1.795885, 1.782288, 1.770933, 1.761310, 1.753050, 1.745884, 1.739607, 1.734064, 1.729133, 1.724718,
        1.720743, 1.717144, 1.713872, 1.710882, 1.708141, 1.705618, 1.703288, 1.701131, 1.699127, 1.697261)
_Z95 = 1.644854
_MICRO = Decimal("0.000001")


class ReportError(ValueError):
    """Bad report parameters; the message names the parameter."""


# --------------------------------------------------------------------------------------------------- periods


@dataclass(frozen=True)
class Period:
    """A report period of whole UTC days, ``start``..``end`` inclusive, and the equally long one before it."""

    kind: str
    start: date
    end: date
    previous_start: date
    previous_end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def month_start(self) -> date:
        return self.end.replace(day=1)

    @property
    def month_end(self) -> date:
        return self.end.replace(day=calendar.monthrange(self.end.year, self.end.month)[1])


def period_bounds(kind: str, day: date) -> Period:
    """The ``day`` or ``month`` (to date) period ending on ``day`` (see the module docstring)."""
    if kind not in PERIODS:
        raise ReportError(f"period must be one of {', '.join(PERIODS)}, got {kind!r}")
    start = day if kind == "day" else day.replace(day=1)
    length = (day - start).days + 1
    return Period(kind, start, day, start - timedelta(days=length), start - timedelta(days=1))


def parse_day(text: str | None, today: date, name: str = "date") -> date:
    """``YYYY-MM-DD`` (default: ``today``), not after today; :class:`ReportError` names the parameter."""
    if text is None or text == "":
        return today
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ReportError(f"{name} must be a day as YYYY-MM-DD, got {text!r}") from None
    if day > today:
        raise ReportError(f"{name} {day} is in the future (today is {today}, UTC)")
    return day


# --------------------------------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Metrics:
    """Sums over a set of calls, the columns of ``cost_1d`` (see the module docstring for the derived ratios)."""

    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    cost_input_usd: float = 0.0
    cost_cache_read_usd: float = 0.0
    cost_cache_write_usd: float = 0.0
    cost_output_usd: float = 0.0
    cost_reasoning_usd: float = 0.0
    cache_savings_usd: float = 0.0
    unpriced: int = 0
    usage_missing: int = 0
    cache_hits: int = 0
    cost_avoided_usd: float = 0.0

    @property
    def successful_calls(self) -> int:
        return self.calls - self.errors

    @property
    def cost_per_successful_call_usd(self) -> float | None:
        return self.cost_usd / self.successful_calls if self.successful_calls > 0 else None

    @property
    def cache_hit_ratio(self) -> float | None:
        """Share of input tokens read from the provider's prompt cache."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    @property
    def app_cache_hit_rate(self) -> float | None:
        """Share of calls answered from the application's own cache."""
        return self.cache_hits / self.calls if self.calls else None

    @property
    def total_savings_usd(self) -> float:
        """Provider prompt caching plus the application-side cache."""
        return self.cache_savings_usd + self.cost_avoided_usd

    @staticmethod
    def total(items: Sequence[Metrics]) -> Metrics:
        """Field-wise sums (floats with ``math.fsum``: the correctly rounded sum, whatever the order)."""
        values = {}
        for f in fields(Metrics):
            column = [getattr(item, f.name) for item in items]
            values[f.name] = math.fsum(column) if f.type == "float" else sum(column)
        return Metrics(**values)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(successful_calls=self.successful_calls,
                   cost_per_successful_call_usd=self.cost_per_successful_call_usd,
                   cache_hit_ratio=self.cache_hit_ratio, app_cache_hit_rate=self.app_cache_hit_rate,
                   total_savings_usd=self.total_savings_usd)
        return out


METRIC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Metrics))
_FLOAT_FIELDS = frozenset(f.name for f in fields(Metrics) if f.type == "float")


def _metrics(row: Mapping[str, Any]) -> Metrics:
    return Metrics(**{name: float(row[name]) if name in _FLOAT_FIELDS else int(row[name])
                      for name in METRIC_FIELDS})


@dataclass(frozen=True)
class Line:
    """One key of a breakdown in the period; ``keys`` > 1 only for the ``(other)`` line of a capped breakdown."""

    key: str
    metrics: Metrics
    previous_cost_usd: float = 0.0
    previous_calls: int = 0
    price_versions: tuple[str, ...] = ()
    keys: int = 1

    @property
    def delta_usd(self) -> float:
        return self.metrics.cost_usd - self.previous_cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "keys": self.keys, **self.metrics.to_dict(),
                "previous_cost_usd": self.previous_cost_usd, "previous_calls": self.previous_calls,
                "delta_usd": self.delta_usd, "price_versions": list(self.price_versions)}


@dataclass(frozen=True)
class Mover:
    """A key whose cost changed against the previous period; ``delta_pct`` is None when it cost nothing then."""

    key: str
    cost_usd: float
    previous_cost_usd: float
    delta_usd: float
    delta_pct: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "cost_usd": self.cost_usd, "previous_cost_usd": self.previous_cost_usd,
                "delta_usd": self.delta_usd, "delta_pct": self.delta_pct}


@dataclass(frozen=True)
class Breakdown:
    """The period's lines by one dimension (most expensive first) and its top movers."""

    dimension: str
    lines: tuple[Line, ...]
    movers: tuple[Mover, ...]
    keys_total: int  # keys with calls in the period, before any cap

    def to_dict(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "column": DIMENSIONS[self.dimension], "keys_total": self.keys_total,
                "lines": [line.to_dict() for line in self.lines],
                "movers": [mover.to_dict() for mover in self.movers]}


@dataclass(frozen=True)
class PriceVersionUse:
    """A price table the period's costs come from ('' for calls stored before pricing)."""

    price_version: str
    calls: int
    cost_usd: float


@dataclass(frozen=True)
class Forecast:
    """Month-end cost as of the report's last day (see the module docstring for the method)."""

    month: str
    spent_usd: float
    days_in_month: int
    days_sampled: int
    days_remaining: float
    daily_mean_usd: float | None
    daily_sd_usd: float | None
    month_end_usd: float | None
    low_usd: float | None
    high_usd: float | None
    level: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class CostReport:
    """A project's cost report for one period; :meth:`to_dict` is the API's JSON, :meth:`to_csv` its CSV."""

    project_id: str
    period: Period
    totals: Metrics
    previous_totals_cost_usd: float
    previous_totals_calls: int
    breakdowns: tuple[Breakdown, ...]
    price_versions: tuple[PriceVersionUse, ...]
    forecast: Forecast
    partial: bool
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def breakdown(self, dimension: str) -> Breakdown:
        for item in self.breakdowns:
            if item.dimension == dimension:
                return item
        raise KeyError(dimension)

    @property
    def delta_pct(self) -> float | None:
        previous = self.previous_totals_cost_usd
        return (self.totals.cost_usd - previous) / previous if previous > 0 else None

    def to_dict(self) -> dict[str, Any]:
        p = self.period
        return {
            "project_id": self.project_id, "period": p.kind, "start": p.start.isoformat(),
            "end": p.end.isoformat(), "days": p.days, "partial": self.partial,
            "previous_start": p.previous_start.isoformat(), "previous_end": p.previous_end.isoformat(),
            "generated_at": self.generated_at.isoformat(),
            "totals": self.totals.to_dict(),
            "previous": {"cost_usd": self.previous_totals_cost_usd, "calls": self.previous_totals_calls,
                         "delta_usd": self.totals.cost_usd - self.previous_totals_cost_usd,
                         "delta_pct": self.delta_pct},
            "price_versions": [{"price_version": v.price_version, "calls": v.calls, "cost_usd": v.cost_usd}
                               for v in self.price_versions],
            "forecast": self.forecast.to_dict(),
            "breakdowns": [b.to_dict() for b in self.breakdowns],
        }

    def to_csv(self) -> str:
        """One row per line of every breakdown, after one ``total`` row; costs to 1e-6 USD, ratios to 1e-6."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        p = self.period
        head = [self.project_id, p.kind, p.start.isoformat(), p.end.isoformat()]
        total = Line(self.project_id, self.totals, self.previous_totals_cost_usd, self.previous_totals_calls,
                     tuple(v.price_version for v in self.price_versions))
        writer.writerow(head + ["total", *_csv_line(total)])
        for item in self.breakdowns:
            for line in item.lines:
                writer.writerow(head + [item.dimension, *_csv_line(line)])
        return out.getvalue()


CSV_COLUMNS = (
    "project_id", "period", "start", "end", "dimension", "key", "keys", "calls", "errors", "successful_calls",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens",
    "reasoning_tokens", "cost_usd", "cost_input_usd", "cost_cache_read_usd", "cost_cache_write_usd",
    "cost_output_usd", "cost_reasoning_usd", "cost_per_successful_call_usd", "cache_hit_ratio",
    "cache_savings_usd", "cache_hits", "cost_avoided_usd", "unpriced", "usage_missing", "previous_cost_usd",
    "delta_usd", "price_versions",
)


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def _csv_line(line: Line) -> list[Any]:
    m = line.metrics
    return [line.key, line.keys, m.calls, m.errors, m.successful_calls, m.input_tokens, m.output_tokens,
            m.cache_read_tokens, m.cache_write_tokens, m.cache_write_1h_tokens, m.reasoning_tokens,
            _fmt(m.cost_usd), _fmt(m.cost_input_usd), _fmt(m.cost_cache_read_usd), _fmt(m.cost_cache_write_usd),
            _fmt(m.cost_output_usd), _fmt(m.cost_reasoning_usd), _fmt(m.cost_per_successful_call_usd),
            _fmt(m.cache_hit_ratio), _fmt(m.cache_savings_usd), m.cache_hits, _fmt(m.cost_avoided_usd),
            m.unpriced, m.usage_missing, _fmt(line.previous_cost_usd), _fmt(line.delta_usd),
            ";".join(line.price_versions)]


# --------------------------------------------------------------------------------------------------- pure maths


def _line(row: Mapping[str, Any], prefix: str = "", key: str | None = None, keys: int = 1) -> Line:
    values = {name: row[prefix + name] for name in (*METRIC_FIELDS, "previous_cost_usd", "previous_calls")}
    return Line(str(row["key"]) if key is None else key, _metrics(values), float(values["previous_cost_usd"]),
                int(values["previous_calls"]), tuple(sorted(row[prefix + "price_versions"])), keys)


def build_breakdown(dimension: str, rows: Sequence[Mapping[str, Any]], limit: int | None = DEFAULT_LINE_LIMIT,
                    movers: int = DEFAULT_MOVERS) -> tuple[Breakdown, Metrics, float, int]:
    """A breakdown from the rows of :func:`breakdown_rows` (which ranked, capped and summed in SQL), with the
    totals of *all* its keys: (breakdown, totals, previous cost, previous calls). When there are more than
    ``limit`` keys, the first ``limit`` − 1 are lines and the rest one ``(other)`` line, so the lines always add
    up to the totals."""
    if not rows:
        return Breakdown(dimension, (), (), 0), Metrics(), 0.0, 0
    first = rows[0]
    totals = _line({**first, "total_price_versions": []}, "total_", key="")
    keys_total = int(first["keys_total"])
    capped = limit is not None and keys_total > limit
    shown = [_line(row) for row in sorted(rows, key=lambda row: row["rank_cost"])
             if row["calls"] > 0 and (not capped or row["rank_cost"] < limit)]
    if capped:
        shown.append(_line(first, "other_", key=OTHER_KEY, keys=int(first["other_keys"])))
    top = []
    for row in sorted(rows, key=lambda row: row["rank_move"]):
        line = _line(row)
        if row["rank_move"] <= movers and line.delta_usd != 0.0:
            top.append(Mover(line.key, line.metrics.cost_usd, line.previous_cost_usd, line.delta_usd,
                             line.delta_usd / line.previous_cost_usd if line.previous_cost_usd > 0 else None))
    return (Breakdown(dimension, tuple(shown), tuple(top), keys_total), totals.metrics, totals.previous_cost_usd,
            totals.previous_calls)


def cap_lines(lines: Sequence[Line], limit: int | None) -> tuple[Line, ...]:
    """The first ``limit`` − 1 ``lines`` and one ``(other)`` line summing the rest (an earlier ``(other)``
    included), so capped lines still add up to the totals; all of them when they fit."""
    if limit is None or len(lines) <= limit:
        return tuple(lines)
    kept, rest = lines[:limit - 1], lines[limit - 1:]
    other = Line(OTHER_KEY, Metrics.total([line.metrics for line in rest]),
                 math.fsum(line.previous_cost_usd for line in rest), sum(line.previous_calls for line in rest),
                 tuple(sorted({v for line in rest for v in line.price_versions})),
                 keys=sum(line.keys for line in rest))
    return (*kept, other)


def _t95(df: int) -> float:
    return _T95[df - 1] if df <= len(_T95) else _Z95


def forecast_month_end(daily_cost: Mapping[date, float], as_of: date, now: datetime) -> Forecast:
    """Month-end cost of ``as_of``'s month from the daily costs of its days so far (``daily_cost`` holds the
    days with calls; a missing day cost nothing). See the module docstring for the method."""
    month_start = as_of.replace(day=1)
    days_in_month = calendar.monthrange(as_of.year, as_of.month)[1]
    month_end = as_of.replace(day=days_in_month)
    today = now.astimezone(UTC).date()
    spent = math.fsum(cost for day, cost in daily_cost.items() if month_start <= day <= as_of)
    remaining = float((month_end - as_of).days)
    if as_of >= today:  # the last day is still running: what is left of it is to come as well
        midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
        remaining += max(0.0, 1.0 - (now.astimezone(UTC) - midnight).total_seconds() / 86400)
    last_complete = min(as_of, today - timedelta(days=1))
    active = [day for day in daily_cost if month_start <= day <= last_complete]
    sample: list[float] = []
    if active:
        first = min(active)
        sample = [daily_cost.get(first + timedelta(days=i), 0.0) for i in range((last_complete - first).days + 1)]
    n = len(sample)
    month = f"{as_of.year:04d}-{as_of.month:02d}"
    base: dict[str, Any] = {"month": month, "spent_usd": spent, "days_in_month": days_in_month,
                            "days_sampled": n, "days_remaining": remaining, "level": FORECAST_LEVEL}
    if remaining == 0:
        return Forecast(**base, daily_mean_usd=None, daily_sd_usd=None, month_end_usd=spent, low_usd=spent,
                        high_usd=spent, method="month complete: the forecast is what was spent")
    if n == 0:
        return Forecast(**base, daily_mean_usd=None, daily_sd_usd=None, month_end_usd=None, low_usd=None,
                        high_usd=None, method="no complete day with calls this month yet: no forecast")
    mean = math.fsum(sample) / n
    point = spent + mean * remaining
    if n == 1:
        return Forecast(**base, daily_mean_usd=mean, daily_sd_usd=None, month_end_usd=point, low_usd=None,
                        high_usd=None, method="spent + 1 complete day's cost x days left; a range needs 2 days")
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in sample) / (n - 1))
    half = _t95(n - 1) * sd * math.sqrt(remaining + remaining * remaining / n)
    return Forecast(**base, daily_mean_usd=mean, daily_sd_usd=sd, month_end_usd=point,
                    low_usd=max(spent, point - half), high_usd=point + half,
                    method=f"spent + mean of {n} complete days x days left; {FORECAST_LEVEL:.0%} t prediction "
                           f"interval (df {n - 1})")


def build_report(project_id: str, period: Period, by_dimension: Mapping[str, Sequence[Mapping[str, Any]]],
                 days: Sequence[Mapping[str, Any]], now: datetime, *, limit: int | None = DEFAULT_LINE_LIMIT,
                 movers: int = DEFAULT_MOVERS) -> CostReport:
    """The report from query results (pure): ``by_dimension`` maps each dimension to its :func:`breakdown_rows`,
    ``days`` are the rows (day, price_version, calls, cost_usd) of :func:`daily_rows`. The totals are those of
    the first breakdown (every breakdown partitions the same calls)."""
    if not by_dimension:
        raise ReportError("by: give at least one dimension")
    built = [build_breakdown(dim, rows, limit, movers) for dim, rows in by_dimension.items()]
    _, totals, previous_cost, previous_calls = built[0]
    versions: dict[str, list[float]] = {}
    daily: dict[date, float] = {}
    for row in days:
        day = row["day"]
        if period.start <= day <= period.end:
            use = versions.setdefault(row["price_version"], [0, 0.0])
            use[0] += int(row["calls"])
            use[1] += float(row["cost_usd"])
        if period.month_start <= day <= period.end and int(row["calls"]) > 0:
            daily[day] = daily.get(day, 0.0) + float(row["cost_usd"])
    uses = tuple(PriceVersionUse(v, int(c), cost) for v, (c, cost) in sorted(versions.items()))
    return CostReport(project_id, period, totals, previous_cost, previous_calls, tuple(b for b, *_ in built), uses,
                      forecast_month_end(daily, period.end, now), period.end >= now.astimezone(UTC).date(),
                      generated_at=now)


# --------------------------------------------------------------------------------------------------- queries


def _rows(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = store.query(sql, params)
    return [dict(zip(result.column_names, row)) for row in result.result_rows]


_NO_LIMIT = 2**62


def _grouped(store: Store, keys: Sequence[tuple[str, str]]) -> str:
    """Per key (``keys``: (cost_1d column, alias) pairs): the period's sums, the previous period's cost and
    calls, and the period's price versions; one read of both periods.

    The inner query groups by the keys, the price version and "in the period" (``day >= start``) with plain
    ``sum()``s: that shape is what the ``by_dims``/``by_user`` projections of ``cost_1d`` (migration 0003)
    answer, so it reads their few rows instead of one row per user and model. The outer query folds the two
    periods together."""
    inner_keys = ", ".join(f"src.{column} AS {alias}" for column, alias in keys)
    aliases = ", ".join(alias for _, alias in keys)
    inner = ", ".join(f"sum(src.{name}) AS s_{name}" for name in METRIC_FIELDS)
    outer = ",\n        ".join(f"sumIf(s_{name}, cur) AS {name}" for name in METRIC_FIELDS)
    return f"""SELECT {aliases},
        {outer},
        sumIf(s_cost_usd, NOT cur) AS previous_cost_usd,
        sumIf(s_calls, NOT cur) AS previous_calls,
        groupUniqArrayIf(version, cur) AS price_versions
    FROM (
        SELECT {inner_keys}, src.price_version AS version, src.day >= {{start:Date}} AS cur, {inner}
        FROM {store.table('cost_1d')} AS src
        WHERE src.project_id = {{p:String}} AND src.day >= {{previous_start:Date}} AND src.day <= {{end:Date}}
        GROUP BY {aliases}, version, cur)
    GROUP BY {aliases}"""


def _period_params(project_id: str, period: Period) -> dict[str, Any]:
    return {"p": project_id, "start": period.start, "previous_start": period.previous_start, "end": period.end}


def breakdown_sql(store: Store, dimension: str) -> str:
    """The query behind :func:`breakdown_rows` (parameters ``p``, ``start``, ``previous_start``, ``end``,
    ``limit``, ``movers``). The column comes from :data:`DIMENSIONS`, never from a caller's text."""
    if dimension not in DIMENSIONS:
        raise ReportError(f"by must be one of {', '.join(DIMENSIONS)}, got {dimension!r}")
    names = (*METRIC_FIELDS, "previous_cost_usd", "previous_calls")
    other = "rank_cost >= {limit:UInt64} AND calls > 0"
    totals = ", ".join(f"sum({name}) OVER () AS total_{name}" for name in names)
    others = ", ".join(f"sumIf({name}, {other}) OVER () AS other_{name}" for name in names)
    return f"""SELECT * FROM (
        SELECT *, countIf(calls > 0) OVER () AS keys_total, countIf({other}) OVER () AS other_keys,
            groupUniqArrayArrayIf(price_versions, {other}) OVER () AS other_price_versions, {totals}, {others}
        FROM (
            SELECT *,
                row_number() OVER (ORDER BY calls > 0 DESC, cost_usd DESC, calls DESC, key) AS rank_cost,
                row_number() OVER (ORDER BY abs(cost_usd - previous_cost_usd) DESC, key) AS rank_move
            FROM ({_grouped(store, [(DIMENSIONS[dimension], "key")])})))
    WHERE rank_cost = 1 OR (calls > 0 AND (keys_total <= {{limit:UInt64}} OR rank_cost < {{limit:UInt64}}))
        OR rank_move <= {{movers:UInt64}}"""


def breakdown_rows(store: Store, project_id: str, period: Period, dimension: str, *,
                   limit: int | None = DEFAULT_LINE_LIMIT, movers: int = DEFAULT_MOVERS) -> list[dict[str, Any]]:
    """The rows :func:`build_breakdown` needs for one dimension: the keys to show as lines (ranked by cost),
    the top movers (ranked by absolute change), and on every row the totals over all keys (``total_*``) and the
    sums of the keys beyond ``limit`` (``other_*``). Ranking and summing happen in SQL, so a dimension with 50,000
    users returns a few hundred rows."""
    return _rows(store, breakdown_sql(store, dimension), {
        **_period_params(project_id, period), "limit": _NO_LIMIT if limit is None else limit, "movers": movers})


def provider_model_rows(store: Store, project_id: str, period: Period) -> list[dict[str, Any]]:
    """Per (provider, model) of the period (keys ``provider``, ``model``): what :func:`save_cost_report` stores
    as typed rows. Few rows: one per model in use."""
    return _rows(store, _grouped(store, [("provider", "provider"), ("model", "model")]),
                 _period_params(project_id, period))


def daily_rows(store: Store, project_id: str, period: Period) -> list[dict[str, Any]]:
    """Calls and cost per (day, price_version) from the earlier of the month's start and the period's start
    through its end: the price versions of the period and the daily costs of the forecast."""
    return _rows(store, f"""SELECT src.day AS day, src.price_version AS price_version, sum(src.calls) AS calls,
            sum(src.cost_usd) AS cost_usd
        FROM {store.table('cost_1d')} AS src
        WHERE src.project_id = {{p:String}} AND src.day >= {{lo:Date}} AND src.day <= {{end:Date}}
        GROUP BY day, price_version ORDER BY day, price_version""",
                 {"p": project_id, "lo": min(period.month_start, period.start), "end": period.end})


def _check_dimensions(by: Sequence[str]) -> list[str]:
    dims = list(dict.fromkeys(by))
    if not dims:
        raise ReportError(f"by: give at least one of {', '.join(DIMENSIONS)}")
    unknown = [dim for dim in dims if dim not in DIMENSIONS]
    if unknown:
        raise ReportError(f"by must be one of {', '.join(DIMENSIONS)}, got {unknown[0]!r}")
    return dims


def compute_cost_report(store: Store, project_id: str, period: str, day: date | None = None, *,
                        by: Sequence[str] = ("model",), now: datetime | None = None,
                        limit: int | None = DEFAULT_LINE_LIMIT, movers: int = DEFAULT_MOVERS) -> CostReport:
    """``project_id``'s ``period`` (``day`` or ``month`` to date) report ending on ``day`` (default today, UTC),
    with one breakdown per dimension of ``by``. Raises :class:`ReportError` naming a bad parameter."""
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).date()
    day = day or today
    if day > today:
        raise ReportError(f"date {day} is in the future (today is {today}, UTC)")
    if limit is not None and limit < 1:
        raise ReportError(f"limit must be at least 1, got {limit}")
    if movers < 0:
        raise ReportError(f"movers must be 0 or more, got {movers}")
    bounds = period_bounds(period, day)
    dims = _check_dimensions(by)
    rows = {dim: breakdown_rows(store, project_id, bounds, dim, limit=limit, movers=movers) for dim in dims}
    return build_report(project_id, bounds, rows, daily_rows(store, project_id, bounds), now, limit=limit,
                        movers=movers)


# --------------------------------------------------------------------------------------------------- storage

_REPORT_COLUMNS = ("project_id", "period_type", "period_start", "source", "provider", "model", "calls",
                   "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
                   "currency", "generated_at", "details")


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value)).quantize(_MICRO, rounding=ROUND_HALF_EVEN)


def _stored_row(report: CostReport, source: str, provider: str, model: str, m: Metrics,
                details: dict[str, str]) -> list[Any]:
    return [report.project_id, report.period.kind, report.period.start, source, provider, model, m.calls,
            m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens, _decimal(m.cost_usd),
            "USD", report.generated_at, details]


def _metric_details(m: Metrics, versions: Sequence[str], end: date) -> dict[str, str]:
    return {"end": end.isoformat(), "errors": str(m.errors), "reasoning_tokens": str(m.reasoning_tokens),
            "cache_write_1h_tokens": str(m.cache_write_1h_tokens), "cache_savings_usd": repr(m.cache_savings_usd),
            "cache_hits": str(m.cache_hits), "cost_avoided_usd": repr(m.cost_avoided_usd),
            "unpriced": str(m.unpriced), "usage_missing": str(m.usage_missing),
            "price_versions": ",".join(versions)}


def save_cost_report(store: Store, report: CostReport) -> int:
    """Store ``report`` in ``cost_reports`` (replacing an earlier save of the same project, period and start)
    and return the rows written: one per (provider, model) of the period, read from ``cost_1d``, plus the report
    row. Breakdowns are capped to :data:`STORED_LINES` lines (plus ``(other)``) in the stored JSON."""
    rows = []
    for row in provider_model_rows(store, report.project_id, report.period):
        m = _metrics(row)
        if m.calls == 0:
            continue
        details = _metric_details(m, sorted(row["price_versions"]), report.period.end)
        rows.append(_stored_row(report, "computed", str(row["provider"]), str(row["model"]), m, details))
    stored = report.to_dict()
    for item, breakdown in zip(stored["breakdowns"], report.breakdowns):
        item["lines"] = [line.to_dict() for line in cap_lines(breakdown.lines, STORED_LINES)]
    details = _metric_details(report.totals, [v.price_version for v in report.price_versions], report.period.end)
    details["report"] = json.dumps(stored, separators=(",", ":"))
    rows.append(_stored_row(report, "report", "", "", report.totals, details))
    store.insert_columns("cost_reports", [list(column) for column in zip(*rows)], _REPORT_COLUMNS)
    return len(rows)


def load_cost_report(store: Store, project_id: str, period: str, start: date) -> dict[str, Any] | None:
    """The stored report (the JSON of :meth:`CostReport.to_dict`, capped) of a project, period and start day,
    or None. Reads with ``FINAL``: the latest save wins."""
    rows = store.query(
        f"SELECT details['report'] FROM {store.table('cost_reports')} FINAL WHERE project_id = {{p:String}} "
        "AND period_type = {kind:String} AND period_start = {start:Date} AND source = 'report'",
        {"p": project_id, "kind": period, "start": start}).result_rows
    return json.loads(rows[0][0]) if rows else None


# --------------------------------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class JobResult:
    """What one run of :func:`run_cost_report_job` stored, and which projects failed (with the error)."""

    day: date
    saved: tuple[tuple[str, str, float], ...]  # (project, period, cost_usd)
    failed: tuple[tuple[str, str], ...]  # (project, error)


def active_projects(store: Store, first: date, last: date) -> list[str]:
    """Projects with calls in ``cost_1d`` between ``first`` and ``last`` (inclusive)."""
    rows = store.query(f"SELECT project_id, sum(calls) FROM {store.table('cost_1d')} WHERE day >= {{a:Date}} "
                       "AND day <= {b:Date} GROUP BY project_id ORDER BY project_id",  # by_dims answers it
                       {"a": first, "b": last}).result_rows
    return [str(project) for project, _ in rows]


def run_cost_report_job(store: Store, now: datetime | None = None) -> JobResult:
    """The daily job: for every project with calls this month or in the equally long period before it, store the
    report of the last complete UTC day (yesterday) and of its month to date, with every dimension. Run it after
    midnight UTC; running it again the same day replaces what it stored. On the 1st it stores the previous
    month's final report. One project's failure is logged and reported, and does not stop the others."""
    now = now or datetime.now(UTC)
    day = now.astimezone(UTC).date() - timedelta(days=1)
    month = period_bounds("month", day)
    saved: list[tuple[str, str, float]] = []
    failed: list[tuple[str, str]] = []
    for project in active_projects(store, month.previous_start, day):
        try:
            for kind in PERIODS:
                report = compute_cost_report(store, project, kind, day, by=tuple(DIMENSIONS), now=now,
                                             limit=STORED_LINES)
                save_cost_report(store, report)
                saved.append((project, kind, report.totals.cost_usd))
        except Exception as exc:  # one bad project must not stop the others; the scheduler sees it in `failed`
            log.exception("cost report for project %s failed", project)
            failed.append((project, f"{type(exc).__name__}: {exc}"))
    return JobResult(day, tuple(saved), tuple(failed))
