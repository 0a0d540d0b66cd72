"""Read API behind the dashboard's filters, searches and drill-downs (``read``; prompt text ``prompts:read``).

``query.py`` answers by model and provider only; the dashboard filters by feature, prompt template, experiment,
variant and user hash too, and must stay fast at 10M calls. ``GET /dashboard/stats`` therefore plans each request.
A series (:func:`choose_source`) reads the first, cheapest table below that has every dimension the request
filters or groups by, every measure group it asks for, and a grain that divides the series' bucket. Totals
(:func:`plan_totals`) are tiled: whole days from a daily rollup, the whole hours left at the edges from an hourly
one, then minutes, then seconds from the raw calls, so a total is exact and still reads the coarsest table
everywhere it can. Only what no rollup holds (decode speed, a user's calls within a day, a feature's flags within
an hour) reads the raw calls, whose (project, hour) key keeps the read to the range; the response names the
tables it used (``+``-joined).

Endpoints, all under ``/api/v1/dashboard``: ``whoami`` (the key's project and scopes), ``facets`` (the values the
filters offer), ``stats`` (totals or a time series, optionally per dimension), ``calls`` (search the newest calls),
``feedback`` (thumbs and scores per bucket), ``notifications`` (the alert notification log), ``prompts/{trace_id}``
(redacted prompt/completion text, ``prompts:read``) and ``capacity/presets`` (the planner's model presets). Every
query is scoped to the key's project and parameterised.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, HTTPException, Path, Query

from .. import planner
from ..deps import PromptsPrincipal, ReadPrincipal, StoreDep
from ..prompt_view import one_per_span
from ..queries import QueryError, TimeRange, bucket_seconds
from ..store import Store

router = APIRouter(prefix="/api/v1", tags=["dashboard"])

Dimension = Literal["model", "provider", "operation", "feature", "prompt_template", "experiment", "variant",
                    "user_hash"]
Flag = Literal["refusal", "empty", "truncated", "usage_missing", "unpriced", "tool_failure"]
DIMENSIONS: tuple[str, ...] = get_args(Dimension)
FLAGS: tuple[str, ...] = get_args(Flag)
GROUPS = ("volume", "tokens", "flags", "latency", "decode", "cache")
LEVELS = (0.5, 0.9, 0.95, 0.99)
OTHER = "(other)"
MAX_CALLS = 500
_LEVELS_SQL = ", ".join(str(level) for level in LEVELS)
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_HASH = re.compile(r"[0-9a-f]{1,128}")


def _sums(*names: str) -> dict[str, str]:
    return {name: f"sum(src.{name})" for name in names}


_ROLLUP_SUMS = _sums("calls", "errors", "cost_usd", "output_tokens", "input_tokens", "cache_read_tokens",
                     "cache_write_tokens", "reasoning_tokens", "refusals", "empty_responses", "truncated",
                     "usage_missing", "unpriced", "tool_calls", "tool_call_failures", "streamed")
_DIGESTS = {"ttft_ms": f"quantilesTDigestMerge({_LEVELS_SQL})(src.ttft_ms)",
            "latency_ms": f"quantilesTDigestMerge({_LEVELS_SQL})(src.latency_ms)"}
_RAW = {
    "calls": "count()", "errors": "countIf(src.status = 'error')", "cost_usd": "sum(src.cost_usd)",
    **_sums("output_tokens", "input_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
            "tool_calls", "tool_call_failures", "cache_savings_usd", "cost_avoided_usd"),
    "refusals": "countIf(src.refusal)", "empty_responses": "countIf(src.empty_response)",
    "truncated": "countIf(src.truncated)", "usage_missing": "countIf(src.usage_missing)",
    "unpriced": "countIf(src.unpriced)", "streamed": "countIf(src.streamed)",
    "cache_hits": "countIf(src.cache_hit)",
    "response_chars_mean": "avg(src.response_chars)",
}
QUANTILE_GROUP = {"ttft_ms": "latency", "latency_ms": "latency", "decode_tps": "decode"}
_RAW_QUANTILES = {"ttft_ms": f"quantilesIf({_LEVELS_SQL})(src.ttft_ms, src.ttft_ms > 0)",
                  "latency_ms": f"quantiles({_LEVELS_SQL})(src.latency_ms)",
                  "decode_tps": f"quantilesIf({_LEVELS_SQL})(src.decode_tps, src.decode_tps > 0)"}
# t-digest states, for totals that combine tables (see plan_totals): a rollup's digests merged, or the raw
# rows digested the same way the views do it, so the states of every table merge into one.
_DIGEST_STATES = {"ttft_ms": "quantileTDigestMergeState(src.ttft_ms)",
                  "latency_ms": "quantileTDigestMergeState(src.latency_ms)"}
_RAW_STATES = {"ttft_ms": "quantileTDigestStateIf(src.ttft_ms, src.ttft_ms > 0)",
               "latency_ms": "quantileTDigestState(src.latency_ms)"}


@dataclass(frozen=True)
class Source:
    """A table the stats query can read, and what it can answer."""

    table: str
    time_expr: str  # the row's time as a DateTime (rollups: their bucket)
    grain_s: int  # 0: raw rows
    dims: frozenset[str]
    groups: frozenset[str]
    sums: dict[str, str]  # measure -> aggregate over its rows
    quantiles: dict[str, str]  # measure -> quantiles array at LEVELS (read only if its group is asked for)
    requires: frozenset[str] = frozenset()  # filters without which the table does not hold every call
    max_range: timedelta | None = None
    states: dict[str, str] | None = None  # measure -> t-digest state over its rows (default: merge the digests)
    max_age: timedelta | None = None  # its TTL: older rows are gone

    @property
    def digest_states(self) -> dict[str, str]:
        return _DIGEST_STATES if self.states is None else self.states


_HOT_DIMS = frozenset({"model", "provider", "operation"})
_HOT_GROUPS = frozenset({"volume", "tokens", "flags", "latency"})
SOURCES: tuple[Source, ...] = (
    # Every dashboard measure but decode speed, by day, model, feature and template (migration 0009): 30-day
    # charts merge a few thousand digests instead of ~14k hourly ones, and a feature filter needs no raw scan.
    Source("llm_calls_1d", "toDateTime(src.day, 'UTC')", 86400,
           frozenset({"model", "provider", "operation", "feature", "prompt_template"}),
           frozenset({"volume", "tokens", "flags", "latency", "cache"}),
           {**_ROLLUP_SUMS, **_sums("cache_savings_usd", "cache_hits", "cost_avoided_usd")}, _DIGESTS),
    # Merging 1-minute t-digests over more than two days costs as much as a raw scan (notes, storage §3.2).
    # Its TTL (rollup_1m_retention_days, 35 by default) bounds how far back it can answer.
    Source("llm_calls_1m", "src.minute", 60, _HOT_DIMS, _HOT_GROUPS, _ROLLUP_SUMS, _DIGESTS,
           max_range=timedelta(hours=48), max_age=timedelta(days=34)),
    Source("llm_calls_1h", "src.hour", 3600, _HOT_DIMS, _HOT_GROUPS, _ROLLUP_SUMS, _DIGESTS),
    Source("usage_1h", "src.hour", 3600, frozenset({"feature", "prompt_template", "model"}),
           frozenset({"volume", "tokens"}),
           _sums("calls", "errors", "cost_usd", "output_tokens", "input_tokens", "cache_read_tokens",
                 "cache_write_tokens", "reasoning_tokens", "refusals", "tool_calls", "tool_call_failures"), {}),
    # Only calls with an experiment reach ab_rollup_1h: it can answer only when the request names one.
    Source("ab_rollup_1h", "src.hour", 3600, frozenset({"experiment", "variant", "model", "prompt_template"}),
           frozenset({"volume", "latency"}),
           _sums("calls", "errors", "cost_usd", "output_tokens", "refusals", "tool_call_failures"), _DIGESTS,
           requires=frozenset({"experiment"})),
    Source("cost_1d", "toDateTime(src.day, 'UTC')", 86400,
           frozenset({"provider", "model", "feature", "prompt_template", "user_hash"}),
           frozenset({"volume", "tokens", "cache"}),
           _sums("calls", "errors", "cost_usd", "output_tokens", "input_tokens", "cache_read_tokens",
                 "cache_write_tokens", "reasoning_tokens", "unpriced", "usage_missing", "cache_savings_usd",
                 "cache_hits", "cost_avoided_usd"), {}),
    Source("llm_calls", "src.start_time", 0, frozenset(DIMENSIONS), frozenset(GROUPS), _RAW, _RAW_QUANTILES,
           states=_RAW_STATES),
)
_TILE_GRAINS = (86400, 3600, 60)


def choose_source(dims: set[str], groups: set[str], rng: TimeRange, bucket_s: int, *,
                  now: datetime | None = None) -> Source:
    """For a series: the first (cheapest) table that answers (dimensions, measure groups, its retention) and
    whose grain divides the bucket (only the range's first bucket is rounded out); the raw calls always can.
    Totals are tiled instead (:func:`plan_totals`)."""
    for source in SOURCES:
        if _answers(source, dims, groups, rng, now) and bucket_s % max(source.grain_s, 1) == 0:
            return source
    return SOURCES[-1]


def _answers(source: Source, dims: set[str], groups: set[str], rng: TimeRange, now: datetime | None = None
             ) -> bool:
    """Whether ``source`` holds the dimensions and measures asked for, over the whole of ``rng``."""
    now = now or datetime.now(timezone.utc)
    return (dims <= source.dims and groups <= source.groups and source.requires <= dims
            and (source.max_range is None or rng.end - rng.start <= source.max_range)
            and (source.max_age is None or rng.start >= now - source.max_age))


def _floor(moment: datetime, grain_s: int) -> datetime:
    return datetime.fromtimestamp(int(moment.timestamp()) // grain_s * grain_s, timezone.utc)


def _ceil(moment: datetime, grain_s: int) -> datetime:
    floor = _floor(moment, grain_s)
    return floor if floor == moment else floor + timedelta(seconds=grain_s)


def plan_totals(dims: set[str], groups: set[str], rng: TimeRange, *, grains: tuple[int, ...] = _TILE_GRAINS,
                now: datetime | None = None) -> list[tuple[Source, TimeRange]]:
    """Totals over ``rng`` as tiles: the whole days from the best daily table, the whole hours left at the edges
    from an hourly one, the minutes left from the 1-minute rollup, and what remains (seconds, or dimensions no
    rollup holds) from the raw calls. Pure.

    Why tiles: a rollup can only answer whole buckets, so reading one over an unaligned range either counts the
    first bucket whole (up to a day too much on a 30-day total) or falls back to the raw calls. Tiling keeps
    totals exact and reads the coarsest table everywhere it can.
    """
    if rng.start >= rng.end:
        return []
    for index, grain in enumerate(grains):
        inner = TimeRange(_ceil(rng.start, grain), _floor(rng.end, grain))
        if inner.start >= inner.end:
            continue
        source = next((s for s in SOURCES if s.grain_s == grain and _answers(s, dims, groups, inner, now)), None)
        if source is None:
            continue
        finer = grains[index + 1:]
        return [*plan_totals(dims, groups, TimeRange(rng.start, inner.start), grains=finer, now=now),
                (source, inner),
                *plan_totals(dims, groups, TimeRange(inner.end, rng.end), grains=finer, now=now)]
    return [(SOURCES[-1], rng)]


def _time_bounds(source: Source, tag: str = "") -> str:
    """Rows of the range; a rollup's first bucket is included whole (the range is rounded out to its grain).
    ``tag`` names this range's parameters apart from another range's in the same query."""
    s, e, e_last = f"s{tag}", f"e{tag}", f"e_last{tag}"
    if source.grain_s == 0:
        return (f"src.start_time >= fromUnixTimestamp({{{s}:Int64}}) "
                f"AND src.start_time < fromUnixTimestamp({{{e}:Int64}})")
    if source.grain_s == 86400:
        return (f"src.day >= toDate(fromUnixTimestamp({{{s}:Int64}})) "
                f"AND src.day <= toDate(fromUnixTimestamp({{{e_last}:Int64}}))")
    return (f"{source.time_expr} >= toStartOfInterval(fromUnixTimestamp({{{s}:Int64}}), "
            f"toIntervalSecond({source.grain_s})) AND {source.time_expr} < fromUnixTimestamp({{{e}:Int64}})")


def _range_params(rng: TimeRange, tag: str = "") -> dict[str, int]:
    start, end = int(rng.start.timestamp()), int(rng.end.timestamp())
    return {f"s{tag}": start, f"e{tag}": end, f"e_last{tag}": end - 1}


def _where(source: Source, rng: TimeRange, project_id: str, filters: dict[str, str], tag: str = ""
           ) -> tuple[str, dict[str, Any]]:
    params: dict[str, Any] = {"p": project_id, **_range_params(rng, tag)}
    clauses = ["src.project_id = {p:String}", _time_bounds(source, tag)]
    for dim, value in filters.items():
        clauses.append(f"src.{dim} = {{f_{dim}:String}}")
        params[f"f_{dim}"] = value
    return " AND ".join(clauses), params


def _rows(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = store.query(sql, params)
    return [dict(zip(result.column_names, row)) for row in result.result_rows]


def _number(value: Any) -> Any:
    """JSON-safe: NaN/inf (an empty t-digest, an average of nothing) become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _iso(value: datetime) -> str:
    value = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    return value.isoformat()


def _expand(row: dict[str, Any], quantiles: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in quantiles:
            for level, number in zip(LEVELS, value or [None] * len(LEVELS)):
                out[f"{key}_p{int(level * 100)}"] = None if number is None else _number(round(float(number), 1))
        elif key == "t":
            out[key] = _iso(value)
        else:
            out[key] = _number(value)
    return out


def stats(store: Store, project_id: str, rng: TimeRange, *, groups: set[str], filters: dict[str, str],
          by: str | None = None, bucket: str | None = None, top: int = 20) -> dict[str, Any]:
    """Totals (``bucket`` None) or a time series, optionally one series per ``by`` value (top N by cost)."""
    bucket_s = bucket_seconds(rng, bucket) if bucket else None
    dims = set(filters) | ({by} if by else set())
    if bucket_s is None:
        tiles = plan_totals(dims, groups, rng)
        if len(tiles) > 1:
            return _tiled_totals(store, project_id, rng, tiles, groups=groups, filters=filters, by=by, top=top)
        source = tiles[0][0]
    else:
        source = choose_source(dims, groups, rng, bucket_s)
    where, params = _where(source, rng, project_id, filters)
    select, group_by = [], []
    if bucket_s:
        select.append(f"toStartOfInterval({source.time_expr}, toIntervalSecond({{b:UInt32}})) AS t")
        group_by.append("t")
        params["b"] = bucket_s
    if by:
        ranked = (f"SELECT src.{by} AS k FROM {source.table} AS src WHERE {where} GROUP BY k "
                  f"ORDER BY {source.sums['cost_usd']} DESC, {source.sums['calls']} DESC, k LIMIT {{top:UInt32}}")
        select.append(f"if(src.{by} IN ({ranked}), toString(src.{by}), '{OTHER}') AS {by}")
        group_by.append(by)
        params["top"] = top
    select += [f"{expr} AS {name}" for name, expr in source.sums.items()]
    wanted = [m for m in source.quantiles if QUANTILE_GROUP[m] in groups]
    select += [f"{source.quantiles[m]} AS {m}" for m in wanted]
    sql = f"SELECT {', '.join(select)} FROM {source.table} AS src WHERE {where}"
    if group_by:
        sql += f" GROUP BY {', '.join(group_by)} ORDER BY {', '.join(group_by)}"
    rows = [_expand(row, wanted) for row in _rows(store, sql, params)]
    return {"source": source.table, "bucket_s": bucket_s, "start": rng.start.isoformat(),
            "end": rng.end.isoformat(), "rows": rows}


def _tiled_totals(store: Store, project_id: str, rng: TimeRange, tiles: list[tuple[Source, TimeRange]], *,
                  groups: set[str], filters: dict[str, str], by: str | None, top: int) -> dict[str, Any]:
    """Totals summed over the tiles of :func:`plan_totals`: each tile's sums and t-digest states in one
    ``UNION ALL``, added up and merged outside. Only measures every tile's table holds are returned."""
    sums = [name for name in tiles[0][0].sums if all(name in source.sums for source, _ in tiles)]
    wanted = [m for m in tiles[0][0].quantiles if QUANTILE_GROUP[m] in groups
              and all(m in source.digest_states for source, _ in tiles)]
    params: dict[str, Any] = {}
    wheres = []
    for index, (source, tile) in enumerate(tiles):
        where, extra = _where(source, tile, project_id, filters, str(index))
        params.update(extra)
        wheres.append(where)
    ranked = ""
    if by:  # which values get a row of their own: the top by cost over the whole range, every tile counted
        ranks = [f"SELECT src.{by} AS k, {source.sums['cost_usd']} AS c, {source.sums['calls']} AS n "
                 f"FROM {source.table} AS src WHERE {where} GROUP BY k"
                 for (source, _), where in zip(tiles, wheres)]
        ranked = (f"SELECT k FROM ({' UNION ALL '.join(ranks)}) GROUP BY k "
                  "ORDER BY sum(c) DESC, sum(n) DESC, k LIMIT {top:UInt32}")
        params["top"] = top
    branches = []
    for (source, _), where in zip(tiles, wheres):
        select = [f"if(src.{by} IN ({ranked}), toString(src.{by}), '{OTHER}') AS {by}"] if by else []
        select += [f"{source.sums[name]} AS {name}" for name in sums]
        select += [f"{source.digest_states[m]} AS {m}" for m in wanted]
        branch = f"SELECT {', '.join(select)} FROM {source.table} AS src WHERE {where}"
        branches.append(f"{branch} GROUP BY {by}" if by else branch)
    outer = [by] if by else []
    outer += [f"sum({name}) AS {name}" for name in sums]
    outer += [f"quantilesTDigestMerge({_LEVELS_SQL})({m}) AS {m}" for m in wanted]
    sql = f"SELECT {', '.join(outer)} FROM ({' UNION ALL '.join(branches)})"
    if by:
        sql += f" GROUP BY {by} ORDER BY {by}"
    rows = [_expand(row, wanted) for row in _rows(store, sql, params)]
    return {"source": "+".join(dict.fromkeys(source.table for source, _ in tiles)), "bucket_s": None,
            "start": rng.start.isoformat(), "end": rng.end.isoformat(), "rows": rows}


# --- endpoints -------------------------------------------------------------------------------------------------
Start = Annotated[datetime | None,
                  Query(description="Range start (ISO 8601, UTC if no offset). Default: end - 24h")]
End = Annotated[datetime | None, Query(description="Range end (ISO 8601). Default: now")]
Bucket = Annotated[Literal["minute", "5m", "15m", "hour", "day"] | None,
                   Query(description="Bucket width: a time series; none: totals over the range")]


def _filter(description: str) -> Any:
    return Query(max_length=256, description=description)


Model = Annotated[str | None, _filter("Only this model")]
Provider = Annotated[str | None, _filter("Only this provider")]
Operation = Annotated[str | None, _filter("Only this operation (chat, embeddings, ...)")]
Feature = Annotated[str | None, _filter("Only this feature/route")]
Template = Annotated[str | None, _filter("Only this prompt template")]
Experiment = Annotated[str | None, _filter("Only this experiment")]
Variant = Annotated[str | None, _filter("Only this variant")]
UserHash = Annotated[str | None, _filter("Only this hashed user id")]


def _range(start: datetime | None, end: datetime | None) -> TimeRange:
    try:
        return TimeRange.parse(start, end)
    except QueryError as exc:
        raise HTTPException(400, str(exc)) from exc


def _filters(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value}


def _csv(text: str, allowed: tuple[str, ...], name: str) -> set[str]:
    parts = {part.strip() for part in text.split(",") if part.strip()}
    unknown = parts - set(allowed)
    if unknown:
        raise HTTPException(400, f"{name}: unknown {', '.join(sorted(unknown))} (expected {', '.join(allowed)})")
    return parts


@router.get("/dashboard/whoami", summary="The key's project and scopes (what the dashboard may show)")
def whoami(principal: ReadPrincipal) -> dict[str, Any]:
    return {"project_id": principal.project_id, "key_id": principal.key_id, "scopes": sorted(principal.scopes)}


@router.get("/dashboard/facets", summary="Models, providers, features, templates, experiments and variants seen")
def facets(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None) -> dict[str, Any]:
    rng = _range(start, end)
    params = rng.params(principal.project_id)
    hours = ("project_id = {p:String} AND hour >= toStartOfHour(fromUnixTimestamp({s:Int64})) "
             "AND hour < fromUnixTimestamp({e:Int64})")
    hot = store.query(f"SELECT groupUniqArray(toString(model)), groupUniqArray(toString(provider)) "
                      f"FROM llm_calls_1h WHERE {hours}", params).first_row
    usage = store.query(f"SELECT groupUniqArray(toString(feature)), groupUniqArray(toString(prompt_template)) "
                        f"FROM usage_1h WHERE {hours}", params).first_row
    experiments = store.query(f"SELECT toString(experiment), groupUniqArray(toString(variant)) FROM ab_rollup_1h "
                              f"WHERE {hours} GROUP BY experiment ORDER BY experiment", params).result_rows
    clean = lambda values: sorted(v for v in values if v)  # noqa: E731 - '' means "not set", never a choice
    return {"model": clean(hot[0]), "provider": clean(hot[1]), "feature": clean(usage[0]),
            "prompt_template": clean(usage[1]), "experiment": [name for name, _ in experiments if name],
            "variants": {name: clean(variants) for name, variants in experiments if name}}


@router.get("/dashboard/stats", summary="Totals or a time series of call metrics, from the cheapest table")
def dashboard_stats(
    principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None, bucket: Bucket = None,
    by: Annotated[Dimension | None, Query(description="One row (series) per value")] = None,
    need: Annotated[str, Query(description=f"Measure groups, comma-separated: {', '.join(GROUPS)}")] = "volume",
    top: Annotated[int, Query(ge=1, le=100, description="With `by`: values kept; the rest become '(other)'")] = 20,
    model: Model = None, provider: Provider = None, operation: Operation = None, feature: Feature = None,
    prompt_template: Template = None, experiment: Experiment = None, variant: Variant = None,
    user_hash: UserHash = None,
) -> dict[str, Any]:
    rng = _range(start, end)
    filters = _filters(model=model, provider=provider, operation=operation, feature=feature,
                       prompt_template=prompt_template, experiment=experiment, variant=variant,
                       user_hash=user_hash)
    try:
        return stats(store, principal.project_id, rng, groups=_csv(need, GROUPS, "need"), filters=filters, by=by,
                     bucket=bucket, top=top)
    except QueryError as exc:
        raise HTTPException(400, str(exc)) from exc


_CALL_COLUMNS = """src.trace_id AS trace_id, src.span_id AS span_id,
    toUnixTimestamp64Milli(src.start_time) AS start_ms, src.model AS model, src.provider AS provider,
    src.operation AS operation, src.feature AS feature, src.prompt_template AS prompt_template,
    src.experiment AS experiment, src.variant AS variant, src.status AS status, src.error_type AS error_type,
    src.finish_reason AS finish_reason, src.ttft_ms AS ttft_ms, src.latency_ms AS latency_ms,
    src.decode_tps AS decode_tps, src.input_tokens AS input_tokens, src.output_tokens AS output_tokens,
    src.cost_usd AS cost_usd, src.refusal AS refusal, src.empty_response AS empty_response,
    src.truncated AS truncated, src.usage_missing AS usage_missing, src.unpriced AS unpriced,
    src.tool_calls AS tool_calls, src.tool_call_failures AS tool_call_failures, src.user_hash AS user_hash"""
_FLAG_SQL = {"refusal": "src.refusal", "empty": "src.empty_response", "truncated": "src.truncated",
             "usage_missing": "src.usage_missing", "unpriced": "src.unpriced",
             "tool_failure": "src.tool_call_failures > 0"}


@router.get("/dashboard/calls", summary="Search calls, newest first (a trace id searches the whole retention)")
def search_calls(
    principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
    model: Model = None, provider: Provider = None, feature: Feature = None, prompt_template: Template = None,
    experiment: Experiment = None, variant: Variant = None, user_hash: UserHash = None,
    status: Annotated[Literal["ok", "error"] | None, Query(description="Only calls with this status")] = None,
    flag: Annotated[Flag | None, Query(description="Only calls with this flag")] = None,
    min_latency_ms: Annotated[int | None, Query(ge=0, description="Only calls at least this slow")] = None,
    trace_id: Annotated[str | None, Query(max_length=32, description="Only this trace (32 hex)")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_CALLS, description="Most recent calls returned")] = 100,
) -> dict[str, Any]:
    filters = _filters(model=model, provider=provider, feature=feature, prompt_template=prompt_template,
                       experiment=experiment, variant=variant)
    params: dict[str, Any] = {"p": principal.project_id, "n": limit}
    clauses = ["src.project_id = {p:String}"]
    if trace_id:
        trace_id = trace_id.lower()
        if not _TRACE_ID.fullmatch(trace_id):
            raise HTTPException(400, "trace_id must be 32 hexadecimal characters")
        clauses.append("src.trace_id = {trace:String}")
        params["trace"] = trace_id
    else:
        rng = _range(start, end)
        clauses.append("src.start_time >= fromUnixTimestamp({s:Int64}) "
                       "AND src.start_time < fromUnixTimestamp({e:Int64})")
        params.update(rng.params(principal.project_id))
    for dim, value in filters.items():
        clauses.append(f"src.{dim} = {{f_{dim}:String}}")
        params[f"f_{dim}"] = value
    if user_hash:
        if not _HASH.fullmatch(user_hash.lower()):
            raise HTTPException(400, "user_hash must be hexadecimal")
        clauses.append("src.user_hash = {user:String}")
        params["user"] = user_hash.lower()
    if status:
        clauses.append("src.status = {status:String}")
        params["status"] = status
    if flag:
        clauses.append(_FLAG_SQL[flag])
    if min_latency_ms is not None:
        clauses.append("src.latency_ms >= {min_latency:UInt32}")
        params["min_latency"] = min_latency_ms
    rows = _rows(store, f"SELECT {_CALL_COLUMNS} FROM llm_calls AS src WHERE {' AND '.join(clauses)} "
                        "ORDER BY src.start_time DESC LIMIT {n:UInt32}", params)
    for row in rows:
        row["start_time"] = datetime.fromtimestamp(row.pop("start_ms") / 1000, timezone.utc).isoformat(
            timespec="milliseconds")
        row["decode_tps"] = _number(round(float(row["decode_tps"]), 1))
    return {"calls": rows, "limit": limit, "more": len(rows) == limit}


@router.get("/dashboard/feedback", summary="Thumbs up/down and scores per bucket (or in total)")
def feedback_series(
    principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None, bucket: Bucket = None,
    model: Model = None, feature: Feature = None, prompt_template: Template = None, experiment: Experiment = None,
    variant: Variant = None,
) -> dict[str, Any]:
    rng = _range(start, end)
    params: dict[str, Any] = rng.params(principal.project_id)
    clauses = ["project_id = {p:String}", "is_deleted = 0",
               "created_at >= fromUnixTimestamp({s:Int64}) AND created_at < fromUnixTimestamp({e:Int64})"]
    for dim, value in _filters(model=model, feature=feature, prompt_template=prompt_template,
                               experiment=experiment, variant=variant).items():
        clauses.append(f"{dim} = {{f_{dim}:String}}")
        params[f"f_{dim}"] = value
    select, group = "", ""
    if bucket:
        try:
            params["b"] = bucket_seconds(rng, bucket)
        except QueryError as exc:
            raise HTTPException(400, str(exc)) from exc
        select = "toStartOfInterval(created_at, toIntervalSecond({b:UInt32})) AS t, "
        group = " GROUP BY t ORDER BY t"
    rows = _rows(store, f"""SELECT {select} countIf(kind = 'thumbs' AND value > 0) AS thumbs_up,
        countIf(kind = 'thumbs' AND value < 0) AS thumbs_down, countIf(kind = 'score') AS scores,
        sumIf(value, kind = 'score') AS score_sum FROM feedback FINAL WHERE {' AND '.join(clauses)}{group}""",
                 params)
    return {"rows": [{k: _iso(v) if k == "t" else v for k, v in row.items()} for row in rows]}


@router.get("/dashboard/notifications", summary="Notifications sent for the project's alerts, newest first")
def notifications(principal: ReadPrincipal, store: StoreDep, start: Start = None, end: End = None,
                  limit: Annotated[int, Query(ge=1, le=1000, description="Most recent first")] = 200
                  ) -> dict[str, Any]:
    rng = _range(start, end)
    rows = _rows(store, """SELECT toUnixTimestamp64Milli(sent_at) AS sent_ms, rule_id, series_key, state, channel,
        ok, attempts, error, dedup_key FROM notifications WHERE project_id = {p:String}
        AND sent_at >= fromUnixTimestamp({s:Int64}) AND sent_at < fromUnixTimestamp({e:Int64})
        ORDER BY sent_at DESC LIMIT {n:UInt32}""", {**rng.params(principal.project_id), "n": limit})
    for row in rows:
        row["sent_at"] = datetime.fromtimestamp(row.pop("sent_ms") / 1000, timezone.utc).isoformat(
            timespec="milliseconds")
    return {"notifications": rows}


@router.get("/dashboard/prompts/{trace_id}", summary="Redacted prompts and completions of a trace (prompts:read)")
def trace_prompts(principal: PromptsPrincipal, store: StoreDep,
                  trace_id: Annotated[str, Path(description="32 hex characters")]) -> dict[str, Any]:
    trace_id = trace_id.lower()
    if not _TRACE_ID.fullmatch(trace_id):
        raise HTTPException(400, "trace_id must be 32 hexadecimal characters")
    rows = _rows(store, """SELECT span_id, toUnixTimestamp64Milli(start_time) AS start_ms, model, prompt_template,
        prompt, completion, redaction FROM prompt_logs WHERE project_id = {p:String} AND trace_id = {t:String}
        ORDER BY start_time""", {"p": principal.project_id, "t": trace_id})
    rows = one_per_span(rows)  # a span's content may come in several rows (its span, its log events)
    for row in rows:
        row["start_time"] = datetime.fromtimestamp(row.pop("start_ms") / 1000, timezone.utc).isoformat(
            timespec="milliseconds")
    return {"trace_id": trace_id, "prompts": rows}


@router.get("/dashboard/capacity/presets", summary="The capacity planner's model presets and defaults")
def capacity_presets(principal: ReadPrincipal) -> dict[str, Any]:
    return {"presets": [asdict(geometry) for geometry in planner.PRESETS.values()],
            "defaults": {"headroom": planner.DEFAULT_HEADROOM, "overhead": planner.DEFAULT_OVERHEAD,
                         "kv_reserve": planner.DEFAULT_KV_RESERVE, "seq_tps": planner.DEFAULT_SEQ_TPS,
                         "precision": planner.DEFAULT_PRECISION}}
