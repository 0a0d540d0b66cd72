"""Re-price stored calls after a price change, and rebuild the rollups that hold cost.

Why in SQL: a day can hold millions of calls; reading them out to re-price in Python and writing them back would
move every column. Instead the distinct models of the range are resolved in Python against the
:class:`~.price_table.PriceTable` (the same resolution ingest uses), their exact integer rates (:class:`~.price_table.Rates`)
are passed as query parameters, and one ``ALTER TABLE ... UPDATE`` applies the formula of :mod:`.call_cost` to
every call of the range, in Int128 arithmetic with the same rounding. A test holds the two implementations to the
same results on the golden vectors and on generated usage.

Mutations do not flow through materialized views, so each rollup that carries cost is then rebuilt for the
range: its rows for those days are deleted and re-inserted from the view's own SELECT, restricted to the range.
The whole job is idempotent: running it twice gives the same tables as running it once.

On a sharded cluster (``target`` from :func:`.migrations.target_for`) the mutations run ``ON CLUSTER`` against
the ``<name>_local`` tables (a ``Distributed`` table takes no ``UPDATE`` or ``DELETE``), each shard's view is
``<rollup>_mv_local``, and the rebuilt rollup rows are read from and written through the ``Distributed`` tables
(synchronously), which is what a read of the rollup sums over anyway. On a replicated cluster the replicas
apply the mutations through Keeper and the plain names are right.

Only whole UTC days that are over are re-priced: ingest keeps writing today's calls, and a call inserted while
a day's rollups are being rebuilt would be counted twice. Late spans for a past day that arrive while its
rollups are being rebuilt have the same risk; the window is seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from .price_table import PriceTable, Rates
from ..store import Store

#: Rollups that hold cost, and the time column that buckets them (all are fed by a view on llm_calls).
COST_ROLLUPS: tuple[tuple[str, str], ...] = (
    ("llm_calls_1m", "minute"),
    ("llm_calls_1h", "hour"),
    ("usage_1h", "hour"),
    ("ab_rollup_1h", "hour"),
    ("cost_1d", "day"),
    ("llm_calls_1d", "day"),
)
_RATE_KINDS = ("input", "cache_read", "cache_write", "cache_write_1h", "output", "reasoning", "saving")
_PICO = "1000000000000."  # 1e-12 USD units per USD, as a Float64 literal


class RecomputeError(ValueError):
    """The range cannot be re-priced; the message says why."""


@dataclass(frozen=True)
class RecomputeResult:
    """What a re-pricing run did."""

    project_id: str
    start: date
    end: date  # exclusive
    price_version: str
    calls: int
    models: dict[str, str | None]  # model as stored -> the table's name for it (None: unpriced)
    rollups: tuple[str, ...]

    @property
    def unpriced_models(self) -> list[str]:
        return sorted(model for model, resolved in self.models.items() if resolved is None)


def _rate_arrays(table: PriceTable, models: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """Query parameters: the priced models, and per model its base rates and its long-context tiers."""
    priced: list[str] = []
    params: dict[str, Any] = {f"base_{kind}": [] for kind in (*_RATE_KINDS, "unit")}
    params.update({f"tier_{kind}": [] for kind in (*_RATE_KINDS, "unit")})
    params["tier_threshold"] = []
    for model in models:
        price = table.lookup(model)
        if price is None:
            continue
        priced.append(model)
        _append_rates(params, "base", price.base)
        thresholds: list[int] = []
        tier_rates: dict[str, list[int]] = {kind: [] for kind in (*_RATE_KINDS, "unit")}
        for threshold, rates in price.tiers:  # highest threshold first, as ModelPrice.rates_for reads them
            thresholds.append(threshold)
            for kind in (*_RATE_KINDS, "unit"):
                tier_rates[kind].append(getattr(rates, kind))
        params["tier_threshold"].append(thresholds)
        for kind, values in tier_rates.items():
            params[f"tier_{kind}"].append(values)
    params["models"] = priced
    return priced, params


def _append_rates(params: dict[str, Any], prefix: str, rates: Rates) -> None:
    for kind in (*_RATE_KINDS, "unit"):
        params[f"{prefix}_{kind}"].append(getattr(rates, kind))


def cost_assignments() -> str:
    """The ``UPDATE`` clause (column = expression, ...) that prices a row from the :func:`_rate_arrays`
    parameters, mirroring :func:`.call_cost.price_tokens` and :func:`.ingest_pricer.make_pricer` exactly."""
    idx = "indexOf({models:Array(String)}, model)"
    tier = f"arrayFirstIndex(t -> input_tokens > t, arrayElement({{tier_threshold:Array(Array(UInt64))}}, {idx}))"

    def rate(kind: str) -> str:
        base = f"arrayElement({{base_{kind}:Array(Int128)}}, {idx})"
        tiered = f"arrayElement(arrayElement({{tier_{kind}:Array(Array(Int128))}}, {idx}), {tier})"
        return f"if({tier} > 0, {tiered}, {base})"

    unit = rate("unit")

    def pico(amount: str) -> str:
        # unit 1: rates in 1e-18 USD, rounded half up to 1e-12 USD; otherwise rates are already 1e-12 USD
        return f"if({unit} = 1, intDiv({amount} + 500000, 1000000), {amount})"

    uncached = "greatest(toInt128(input_tokens) - cache_read_tokens - cache_write_tokens, 0)"
    write_1h = "toInt128(least(cache_write_1h_tokens, cache_write_tokens))"
    visible = "greatest(toInt128(output_tokens) - reasoning_tokens, 0)"
    parts = {
        "cost_input_usd": pico(f"{uncached} * {rate('input')}"),
        "cost_cache_read_usd": pico(f"toInt128(cache_read_tokens) * {rate('cache_read')}"),
        "cost_cache_write_usd": pico(f"(toInt128(cache_write_tokens) - {write_1h}) * {rate('cache_write')} + "
                                     f"{write_1h} * {rate('cache_write_1h')}"),
        "cost_output_usd": pico(f"{visible} * {rate('output')}"),
        "cost_reasoning_usd": pico(f"toInt128(reasoning_tokens) * {rate('reasoning')}"),
    }
    total = " + ".join(f"({expression})" for expression in parts.values())
    savings = pico(f"toInt128(cache_read_tokens) * {rate('saving')}")
    charged = f"({idx} > 0 AND NOT usage_missing AND NOT cache_hit)"
    avoided = f"({idx} > 0 AND NOT usage_missing AND cache_hit)"
    assignments = [f"{column} = if({charged}, toFloat64({expression}) / {_PICO}, 0.)"
                   for column, expression in parts.items()]
    assignments += [
        f"cost_usd = if({charged}, toFloat64({total}) / {_PICO}, 0.)",
        f"cache_savings_usd = if({charged}, toFloat64({savings}) / {_PICO}, 0.)",
        f"cost_avoided_usd = if({avoided}, toFloat64({total}) / {_PICO}, 0.)",
        f"unpriced = ({idx} = 0)",
        "price_version = {price_version:String}",
    ]
    return ",\n    ".join(assignments)


def _day_bounds(start: date, end: date) -> dict[str, Any]:
    begin = datetime(start.year, start.month, start.day, tzinfo=UTC)
    finish = datetime(end.year, end.month, end.day, tzinfo=UTC)
    return {"start": begin, "end": finish}


def _check_range(start: date, end: date, today: date, retention_days: int) -> None:
    if start >= end:
        raise RecomputeError(f"start ({start}) must be before end ({end}); end is exclusive")
    if end > today:
        raise RecomputeError(f"end ({end}) is after today ({today}, UTC): only days that are over can be "
                             f"re-priced while ingest is writing today's calls")
    oldest = today - timedelta(days=retention_days - 1)
    if start < oldest:
        raise RecomputeError(f"start ({start}) is older than the {retention_days}-day retention of llm_calls "
                             f"(oldest day held: {oldest}): those calls are gone and cannot be re-priced")


@dataclass(frozen=True)
class _Layout:
    """Where each statement goes: plain tables, or a sharded cluster's ``_local`` tables and ``Distributed`` ones."""

    database: str
    cluster: str | None = None  # set only for a sharded target

    @classmethod
    def of(cls, store: Store, target: Any | None) -> _Layout:
        if target is not None and getattr(target, "mode", "single") == "sharded":
            return cls(store.database, target.cluster)
        return cls(store.database)

    def whole(self, name: str) -> str:
        """The table every shard's rows are read from (and rollup rows written through)."""
        return f"{self.database}.{name}"

    def local(self, name: str) -> str:
        """The table as a view on this node reads it."""
        return f"{self.database}.{name}_local" if self.cluster else self.whole(name)

    def mutate(self, name: str) -> str:
        """The target of ``ALTER ... UPDATE`` / ``DELETE``: on a sharded cluster every shard's local table."""
        return f"{self.local(name)} ON CLUSTER {self.cluster}" if self.cluster else self.whole(name)

    def view(self, rollup: str) -> str:
        return f"{rollup}_mv_local" if self.cluster else f"{rollup}_mv"

    @property
    def insert_settings(self) -> dict[str, Any]:
        # A Distributed insert is queued and sent later by default; the rebuild must be in place when it returns.
        return {"insert_distributed_sync": 1} if self.cluster else {}


def _rollup_select(store: Store, rollup: str, layout: _Layout | None = None) -> str:
    """The rollup view's SELECT, reading only the range's calls of one project."""
    layout = layout or _Layout(store.database)
    view = layout.view(rollup)
    rows = store.query("SELECT as_select FROM system.tables WHERE database = {db:String} AND name = {name:String}",
                       parameters={"db": store.database, "name": view}).result_rows
    if not rows:
        raise RecomputeError(f"the view {view} is missing (is the database migrated?)")
    select = rows[0][0]
    source = f"FROM {layout.local('llm_calls')} AS src"
    if select.count(source) != 1:
        raise RecomputeError(f"cannot rebuild {rollup}: its view does not read '{source}' once")
    scoped = (f"FROM (SELECT * FROM {layout.whole('llm_calls')} WHERE project_id = {{project:String}} "
              f"AND start_time >= {{start:DateTime64(6, 'UTC')}} AND start_time < {{end:DateTime64(6, 'UTC')}}) "
              f"AS src")
    return select.replace(source, scoped)


def _columns(store: Store, table: str) -> list[str]:
    rows = store.query("SELECT name FROM system.columns WHERE database = {db:String} AND table = {t:String} "
                       "ORDER BY position", parameters={"db": store.database, "t": table}).result_rows
    return [name for (name,) in rows]


def recompute_costs(store: Store, table: PriceTable, project_id: str, start: date, end: date, *,
                    retention_days: int = 90, today: date | None = None,
                    progress: Callable[[str], Any] | None = None, target: Any | None = None) -> RecomputeResult:
    """Re-price ``project_id``'s calls from ``start`` to ``end`` (exclusive, UTC days) with ``table``, then
    rebuild the cost rollups for those days. Raises :class:`RecomputeError` for a range it must not touch.

    ``target`` (:func:`.migrations.target_for`) only matters on a sharded cluster (see the module docstring).
    """
    say = progress or (lambda message: None)
    layout = _Layout.of(store, target)
    today = today or datetime.now(UTC).date()
    _check_range(start, end, today, retention_days)
    bounds = _day_bounds(start, end)
    scope = {"project": project_id, **bounds}
    where = ("project_id = {project:String} AND start_time >= {start:DateTime64(6, 'UTC')} "
             "AND start_time < {end:DateTime64(6, 'UTC')}")
    found = store.query(f"SELECT model, count() FROM {layout.whole('llm_calls')} WHERE {where} GROUP BY model",
                        parameters=scope).result_rows
    models = {model: table.resolve(model) for model, _ in found}
    calls = sum(count for _, count in found)
    say(f"re-pricing {calls:,} calls of {len(models)} models from {start} to {end} with prices "
        f"{table.version}")
    if calls:
        _, params = _rate_arrays(table, sorted(models))
        store.command(f"ALTER TABLE {layout.mutate('llm_calls')} UPDATE\n    {cost_assignments()}\nWHERE {where}",
                      parameters={**params, **scope, "price_version": table.version},
                      settings={"mutations_sync": 2})
    rebuilt = []
    for rollup, bucket in COST_ROLLUPS:
        select = _rollup_select(store, rollup, layout)
        bucket_where = (f"project_id = {{project:String}} AND {bucket} >= toDateTime({{start:DateTime64(6, 'UTC')}}) "
                        f"AND {bucket} < toDateTime({{end:DateTime64(6, 'UTC')}})")
        if bucket == "day":
            bucket_where = ("project_id = {project:String} AND day >= toDate({start:DateTime64(6, 'UTC')}) "
                            "AND day < toDate({end:DateTime64(6, 'UTC')})")
        store.command(f"DELETE FROM {layout.mutate(rollup)} WHERE {bucket_where}", parameters=scope,
                      settings={"mutations_sync": 2})
        columns = ", ".join(f"`{name}`" for name in _columns(store, rollup))  # by name, not position
        store.command(f"INSERT INTO {layout.whole(rollup)} ({columns}) SELECT {columns} FROM ({select})",
                      parameters=scope, settings=layout.insert_settings or None)
        rebuilt.append(rollup)
        say(f"  rebuilt {rollup}")
    return RecomputeResult(project_id, start, end, table.version, calls, models, tuple(rebuilt))
