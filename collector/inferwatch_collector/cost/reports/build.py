"""A cost report from query rows (pure): breakdown lines, the ``(other)`` line, top movers, the assembled report.

Lines: the keys with calls in the period, most expensive first; beyond ``limit`` keys, the first ``limit`` − 1
and one ``(other)`` line that sums the rest, so the lines always add up to the totals. Top movers: the keys whose
cost changed most against the previous period (by absolute change; a key present only in the previous period is a
mover too). The rows come from :mod:`.queries`, which ranks, caps and sums in SQL.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from .forecast import forecast_month_end
from .model import (
    DEFAULT_LINE_LIMIT, DEFAULT_MOVERS, METRIC_FIELDS, OTHER_KEY, Breakdown, CostReport, Line, Metrics, Mover,
    PriceVersionUse, metrics_from_row,
)
from .periods import Period, ReportError


def _line(row: Mapping[str, Any], prefix: str = "", key: str | None = None, keys: int = 1) -> Line:
    values = {name: row[prefix + name] for name in (*METRIC_FIELDS, "previous_cost_usd", "previous_calls")}
    return Line(str(row["key"]) if key is None else key, metrics_from_row(values),
                float(values["previous_cost_usd"]), int(values["previous_calls"]),
                tuple(sorted(row[prefix + "price_versions"])), keys)


def build_breakdown(dimension: str, rows: Sequence[Mapping[str, Any]], limit: int | None = DEFAULT_LINE_LIMIT,
                    movers: int = DEFAULT_MOVERS) -> tuple[Breakdown, Metrics, float, int]:
    """A breakdown from the rows of :func:`.queries.breakdown_rows` (which ranked, capped and summed in SQL),
    with the totals of *all* its keys: (breakdown, totals, previous cost, previous calls). When there are more
    than ``limit`` keys, the first ``limit`` − 1 are lines and the rest one ``(other)`` line, so the lines always
    add up to the totals."""
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


def build_report(project_id: str, period: Period, by_dimension: Mapping[str, Sequence[Mapping[str, Any]]],
                 days: Sequence[Mapping[str, Any]], now: datetime, *, limit: int | None = DEFAULT_LINE_LIMIT,
                 movers: int = DEFAULT_MOVERS) -> CostReport:
    """The report from query results: ``by_dimension`` maps each dimension to its
    :func:`.queries.breakdown_rows`, ``days`` are the rows (day, price_version, calls, cost_usd) of
    :func:`.queries.daily_rows`. The totals are those of the first breakdown (every breakdown partitions the same
    calls)."""
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
