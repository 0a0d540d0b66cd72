"""The report's queries on the ``cost_1d`` rollup, and :func:`compute_cost_report`, which runs them.

Why ``cost_1d``: it is keyed by every report dimension and the price version and holds only sums, so a report is
one ``GROUP BY`` over it (never a scan of ``llm_calls``) and its totals are sums of the calls' own costs: a
report equals the sum of its calls to the cent because nothing is re-priced or estimated on the way. Being keyed
down to the user, ``cost_1d`` has nearly a row per call; the queries are shaped so that its two projections
(migration 0003: by every dimension but the user, and by user) answer them, and ranking, capping and totals
happen in SQL, so a report of 10M calls reads thousands of rows and returns hundreds (``bench/cost_report.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from ...store import Store
from .build import build_report
from .model import DEFAULT_LINE_LIMIT, DEFAULT_MOVERS, DIMENSIONS, METRIC_FIELDS, CostReport
from .periods import Period, ReportError, period_bounds


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
    """Per (provider, model) of the period (keys ``provider``, ``model``): what
    :func:`.storage.save_cost_report` stores as typed rows. Few rows: one per model in use."""
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

