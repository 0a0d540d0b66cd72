"""What an experiment measures, and the SQL that reads it per user from the raw calls and feedback.

Why raw ``llm_calls`` and not the ``ab_rollup_1h`` rollup: the user is the unit of analysis (see :mod:`.stats`),
and the rollup has no per-user detail (only a distinct-user sketch). So one query groups the experiment's calls by
``(experiment, user)`` and then, in the same statement, reduces the per-user values to the sufficient statistics
of every metric per variant (n, means, variances, covariance): what leaves the database is a few rows per
variant, never a row per user. The rollup still serves what it is good at: TTFT and latency percentiles per
variant (t-digest states), which are descriptive only (a percentile of clustered calls has no cheap per-user
test; the per-call *means* of TTFT and latency are tested instead), and the discovery of new experiments.

Exclusions, reported with the results rather than hidden:

* calls without a user hash cannot be attributed to a randomisation unit;
* users seen in more than one variant of the same experiment (assignment changed under them, e.g. weights were
  edited mid-flight) belong to neither variant. Keeping them would bias both.

Feedback (thumbs and scores) is joined per user: the collector copies the experiment, variant and user hash of
the call onto each feedback row when it stores it (matched by trace id or response id), so most rows need no join
here. Feedback that arrived before its call (stored with an empty experiment) is matched now by its trace id
against the experiment's calls; feedback given only by response id for a call unknown at the time carries no link
and cannot be attributed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from inferwatch_collector.store import Store

if TYPE_CHECKING:  # .stats loads numpy and scipy: imported where moments are built
    from .stats import Kind, Moments

#: Feedback rows without an experiment that are matched to calls by trace id, at most, per run and project.
MAX_UNMATCHED_FEEDBACK: Final = 20_000
#: Label of calls whose variant appeared between reading the variant list and scanning (a race of one run).
UNLISTED_VARIANT: Final = "(unlisted)"


@dataclass(frozen=True)
class MetricDef:
    """One metric: per-user numerator (and denominator, for ratios and rates) and which way is better."""

    name: str
    kind: Kind
    numerator: str  # a per-user column of the query below
    denominator: str | None  # None: a mean of the per-user numerator
    direction: int  # +1 higher is better, -1 lower is better, 0 neither (never a primary or guardrail)
    unit: str
    description: str


#: Every tested metric, in report order. Names are part of the API (registry, results, dashboard).
METRICS: Final[Mapping[str, MetricDef]] = {m.name: m for m in (
    MetricDef("cost_per_call", "ratio", "cost", "calls", -1, "USD", "cost per call: sum of cost / calls"),
    MetricDef("cost_per_user", "mean", "cost", None, -1, "USD", "cost per user over the window"),
    MetricDef("cost_per_success", "ratio", "cost", "successes", -1, "USD",
              "cost per successful answer: cost / calls without error, refusal or empty response"),
    MetricDef("calls_per_user", "mean", "calls", None, 0, "calls", "calls per user over the window"),
    MetricDef("latency_ms", "ratio", "latency", "calls", -1, "ms", "mean total latency per call"),
    MetricDef("ttft_ms", "ratio", "ttft", "ttft_calls", -1, "ms", "mean time to first token of streamed calls"),
    MetricDef("output_tokens", "ratio", "output_tokens", "calls", 0, "tokens", "mean output tokens per call"),
    MetricDef("error_rate", "rate", "errors", "calls", -1, "ratio", "share of calls that failed"),
    MetricDef("refusal_rate", "rate", "refusals", "calls", -1, "ratio", "share of calls the model refused"),
    MetricDef("empty_rate", "rate", "empties", "calls", -1, "ratio", "share of calls with an empty answer"),
    MetricDef("truncated_rate", "rate", "truncations", "calls", -1, "ratio",
              "share of calls cut off by the token limit"),
    MetricDef("tool_failure_rate", "rate", "tool_failures", "tool_calls", -1, "ratio",
              "failed tool calls / tool calls"),
    MetricDef("thumbs_up_rate", "rate", "thumbs_up", "thumbs", 1, "ratio", "thumbs up / thumbs feedback"),
    MetricDef("mean_score", "ratio", "score_sum", "scores", 1, "score", "mean numeric feedback score"),
)}

#: Descriptive per-variant percentiles (from ab_rollup_1h), shown but not tested.
PERCENTILES: Final[Mapping[str, tuple[str, float]]] = {
    "ttft_p50_ms": ("ttft", 0.5), "ttft_p95_ms": ("ttft", 0.95),
    "latency_p50_ms": ("latency", 0.5), "latency_p95_ms": ("latency", 0.95),
}
#: Metrics that may be primary or guardrail: the tested ones with a better direction.
DECISION_METRICS: Final = tuple(name for name, m in METRICS.items() if m.direction != 0)

# Per-user columns from the calls. Counters come in pairs sharing one 64-bit sum (low and high 32 bits): fewer
# aggregate states per group is what makes the per-user GROUP BY cheaper (each state is a random memory access per
# row), and a pair is exact while each count of one user in one experiment stays below 2^32 (4.3 billion calls).
_PACKED: Final = {  # name of the 64-bit sum -> ((low column, expression), (high column, expression))
    "calls_successes": (("calls", "1"),
                        ("successes", "status != 'error' AND NOT refusal AND NOT empty_response")),
    "errors_refusals": (("errors", "status = 'error'"), ("refusals", "refusal")),
    "empties_truncations": (("empties", "empty_response"), ("truncations", "truncated")),
    "ttft_calls_tool_failures": (("ttft_calls", "ttft_ms > 0"), ("tool_failures", "tool_call_failures")),
}
_SUMS: Final = {  # per-user sums of their own (values that can be large)
    "cost": "sum(cost_usd)",
    "tool_calls": "sum(toUInt64(tool_calls))",
    "latency": "sum(toUInt64(latency_ms))",
    "ttft": "sum(toUInt64(ttft_ms))",  # 0 for calls without a first token
    "output_tokens": "sum(toUInt64(output_tokens))",
}
_CALL_AGGREGATES: Final = {
    **{name: f"sum(toUInt64({low[1]}) + bitShiftLeft(toUInt64({high[1]}), 32))"
       for name, (low, high) in _PACKED.items()},
    **_SUMS,
}
#: Per-user columns the metrics read, as expressions over the aggregates above.
_CALL_COLUMNS: Final = {
    **{column: f"bitAnd(c.{name}, 4294967295)" if part == 0 else f"bitShiftRight(c.{name}, 32)"
       for name, pair in _PACKED.items() for part, (column, _) in enumerate(pair)},
    **{name: f"c.{name}" for name in _SUMS},
}
_FEEDBACK_COLUMNS: Final = {
    "thumbs": "countIf(kind = 'thumbs')",
    "thumbs_up": "countIf(kind = 'thumbs' AND value > 0)",
    "scores": "countIf(kind = 'score')",
    "score_sum": "sumIf(value, kind = 'score')",
}
_COLUMNS: Final = (*_CALL_COLUMNS, *_FEEDBACK_COLUMNS)
#: Users per (experiment, variant) fall in three states: analysed, seen in several variants, or anonymous.
_STATES: Final = {0: "ok", 1: "mixed", 2: "anonymous"}


def _per_variant_select() -> str:
    """The outer aggregation: power sums of every per-user column, and the cross products of each ratio metric,
    per variant and state. Plain sums are the cheapest aggregate there is (ClickHouse vectorises them); moments
    are derived from them by :meth:`Moments.from_sums`, in float64, accurate unless a variance is ~1e-8 of its
    squared mean or smaller (every user alike), where the tests' tolerances apply."""
    parts = ["count() AS users"]
    for column in _COLUMNS:
        value = f"toFloat64(u_{column})"
        parts += [f"sum({value}) AS s_{column}", f"sum({value} * u_{column}) AS q_{column}",
                  f"countIf(u_{column} > 0) AS n_{column}"]
    for m in METRICS.values():
        if m.denominator is not None:
            parts.append(f"sum(toFloat64(u_{m.numerator}) * u_{m.denominator}) AS p_{m.name}")
    return ",\n    ".join(parts)


_LO: Final = "fromUnixTimestamp64Micro({lo:Int64}, 'UTC')"
_HI: Final = "fromUnixTimestamp64Micro({hi:Int64}, 'UTC')"


@dataclass(frozen=True)
class _Checks:
    """Which per-experiment bounds a scan must check row by row. Each experiment has its own window, passed as
    parallel arrays (names, start and end in microseconds); when every experiment starts at the scan's lower
    bound (or ends at its upper bound) that check is the outer range already and is left out: each check
    compares every row with a column that transform() yields."""

    start: bool
    end: bool


def _in_window(checks: _Checks, experiment: str, micros: str, micros_for_end: str | None = None) -> str:
    """``experiment IN names`` and, as needed, ``micros >= its start`` and ``micros_for_end < its end`` (the same
    time unless a row covers a span, like a rollup hour)."""
    parts = [f"{experiment} IN {{names:Array(String)}}"]
    if checks.start:
        parts.append(f"{micros} >= transform({experiment}, {{names:Array(String)}}, {{starts:Array(Int64)}}, "
                     "{hi:Int64})")
    if checks.end:
        parts.append(f"{micros_for_end or micros} < transform({experiment}, {{names:Array(String)}}, "
                     "{ends:Array(Int64)}, {lo:Int64})")
    return "\n    AND ".join(parts)


#: Experiments per scan: the experiment's index lives in the top byte of the group key.
MAX_EXPERIMENTS_PER_SCAN: Final = 255
_USER_BITS: Final = 56
_USER_MASK: Final = (1 << _USER_BITS) - 1


def _group_key(experiment: str, user: str) -> str:
    """One 64-bit group key per (experiment, user): the experiment's index in ``names`` in the top byte, 56 bits
    of cityHash64 of the user hash below. A single fixed-size key aggregates faster than the (LowCardinality,
    String) pair, the experiment needs no any() of its own, and 56 bits keep collisions negligible (1M users in
    one experiment: probability ~1e-5 that two share a key)."""
    return (f"bitOr(bitShiftLeft(transform({experiment}, {{names:Array(String)}}, {{positions:Array(UInt64)}}, "
            f"toUInt64(0)), {_USER_BITS}), bitAnd(cityHash64({user}), {_USER_MASK}))")


# Variants travel as their index in {variants} (the distinct variants of these experiments in the A/B rollup,
# which the same insert that writes a call updates): min and max of a number per user cost less than of a string,
# and they differ exactly for users seen in several variants. transform(), not indexOf(): on a LowCardinality
# column it runs once per dictionary entry instead of once per row.
# Anonymous calls (no user hash) are the group whose user bits are those of cityHash64(''). The outer time bounds
# let the primary key skip other hours.
_VARIANT_INDEX: Final = ("transform(variant, {variants:Array(String)}, {variant_positions:Array(UInt16)}, "
                         "toUInt16(0))")


@lru_cache(maxsize=4)
def _per_variant_sql(checks: _Checks) -> str:
    return f"""
SELECT u.ei AS ei, u.vi AS vi, u.state AS state,
    {_per_variant_select()}
FROM (
    SELECT bitShiftRight(c.k, {_USER_BITS}) AS ei, c.variant_min AS vi,
        multiIf(bitAnd(c.k, {_USER_MASK}) = bitAnd(cityHash64(''), {_USER_MASK}), 2,
                c.variant_min != c.variant_max, 1, 0) AS state,
        {', '.join(f'{expr} AS u_{c}' for c, expr in _CALL_COLUMNS.items())},
        {', '.join(f'f.u_{c} AS u_{c}' for c in _FEEDBACK_COLUMNS)}
    FROM (
        SELECT {_group_key('experiment', 'user_hash')} AS k,
            min({_VARIANT_INDEX}) AS variant_min,
            max({_VARIANT_INDEX}) AS variant_max,
            {', '.join(f'{expr} AS {name}' for name, expr in _CALL_AGGREGATES.items())}
        FROM llm_calls
        WHERE project_id = {{p:String}} AND start_time >= {_LO} AND start_time < {_HI}
            AND {_in_window(checks, 'experiment', 'toUnixTimestamp64Micro(start_time)')}
        GROUP BY k
    ) AS c
    LEFT JOIN (
        SELECT {_group_key('fb_experiment', 'fb_user')} AS k,
            {', '.join(f'{expr} AS u_{name}' for name, expr in _FEEDBACK_COLUMNS.items())}
        FROM (
            SELECT
                if(experiment != '', experiment,
                   transform(trace_id, {{ft:Array(String)}}, {{fe:Array(String)}}, '')) AS fb_experiment,
                if(experiment != '', user_hash,
                   transform(trace_id, {{ft:Array(String)}}, {{fu:Array(String)}}, '')) AS fb_user,
                kind, value, created_at
            FROM feedback FINAL
            WHERE project_id = {{p:String}} AND is_deleted = 0 AND kind IN ('thumbs', 'score')
                AND created_at >= {_LO} AND created_at < {_HI}
                AND (experiment IN {{names:Array(String)}}
                     OR (experiment = '' AND trace_id IN {{ft:Array(String)}}))
        )
        WHERE fb_user != '' AND {_in_window(checks, 'fb_experiment', 'toUnixTimestamp64Micro(created_at)')}
        GROUP BY k
    ) AS f ON c.k = f.k
) AS u
GROUP BY ei, vi, state
"""

_VARIANTS_SQL: Final = f"""
SELECT DISTINCT variant FROM ab_rollup_1h
WHERE project_id = {{p:String}} AND experiment IN {{names:Array(String)}}
    AND hour >= toStartOfHour({_LO}) AND hour < {_HI}
ORDER BY variant
"""

# Feedback stored before its call arrived: its trace id is looked up among the experiments' calls (bloom filter).
_UNMATCHED_FEEDBACK_SQL: Final = f"""
SELECT DISTINCT trace_id FROM feedback FINAL
WHERE project_id = {{p:String}} AND is_deleted = 0 AND experiment = '' AND trace_id != ''
    AND kind IN ('thumbs', 'score') AND created_at >= {_LO} AND created_at < {_HI}
LIMIT {{limit:UInt32}}
"""
_TRACE_EXPERIMENT_SQL: Final = f"""
SELECT trace_id, argMax(experiment, start_time), argMax(user_hash, start_time) FROM llm_calls
WHERE project_id = {{p:String}} AND trace_id IN {{ft:Array(String)}} AND experiment IN {{names:Array(String)}}
    AND start_time >= {_LO} AND start_time < {_HI}
GROUP BY trace_id
"""

@lru_cache(maxsize=4)
def _percentiles_sql(checks: _Checks) -> str:
    """Hours that overlap the window, partial first and last hours included whole (the rollup's resolution)."""
    return f"""
SELECT experiment, variant, quantilesTDigestMerge(0.5, 0.95)(ttft_ms) AS ttft,
    quantilesTDigestMerge(0.5, 0.95)(latency_ms) AS latency
FROM ab_rollup_1h
WHERE project_id = {{p:String}} AND hour >= toStartOfHour({_LO}) AND hour < {_HI}
    AND {_in_window(checks, 'experiment', '(toInt64(toUnixTimestamp(hour)) + 3600) * 1000000 - 1',
                    'toInt64(toUnixTimestamp(hour)) * 1000000')}
GROUP BY experiment, variant
"""


@dataclass(frozen=True)
class VariantData:
    """One variant's users, calls and per-metric sufficient statistics over the analysed users."""

    users: int
    calls: int
    moments: Mapping[str, Moments]
    denominators: Mapping[str, float]  # metric -> sum of the denominator (calls, feedback items, ...)
    users_with_data: Mapping[str, int]  # metric -> users whose denominator is positive
    percentiles: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class ExperimentData:
    """Everything the statistics need about one experiment's window."""

    variants: Mapping[str, VariantData]
    mixed_users: int  # users seen in more than one variant: excluded
    anonymous_calls: int  # calls without a user hash: excluded
    feedback_matched_by_trace: int = 0  # feedback rows attributed here by trace id (stored before their call)


def _us(value: datetime) -> int:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value
    return int(value.timestamp() * 1_000_000)


def window_params(project_id: str, windows: Mapping[str, tuple[datetime, datetime]]) -> dict[str, Any]:
    """Query parameters for experiments ``name -> (start, end)``, each read over its own half-open window."""
    names = list(windows)
    starts = [_us(windows[n][0]) for n in names]
    ends = [_us(windows[n][1]) for n in names]
    return {"p": project_id, "names": names, "positions": list(range(1, len(names) + 1)), "starts": starts,
            "ends": ends, "lo": min(starts), "hi": max(ends)}


def _unmatched_feedback(store: Store, params: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """(trace ids, experiments, user hashes) of feedback stored without an experiment whose call is in one."""
    traces = [row[0] for row in store.query(_UNMATCHED_FEEDBACK_SQL,
                                            {**params, "limit": MAX_UNMATCHED_FEEDBACK}).result_rows]
    if not traces:
        return [], [], []
    rows = store.query(_TRACE_EXPERIMENT_SQL, {**params, "ft": traces}).result_rows
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def fetch(store: Store, project_id: str, windows: Mapping[str, tuple[datetime, datetime]]
          ) -> dict[str, ExperimentData]:
    """Per-variant statistics of every experiment in ``windows``: one scan of the calls per
    :data:`MAX_EXPERIMENTS_PER_SCAN` experiments."""
    names = list(windows)
    out: dict[str, ExperimentData] = {}
    for first in range(0, len(names), MAX_EXPERIMENTS_PER_SCAN):
        batch = {n: windows[n] for n in names[first:first + MAX_EXPERIMENTS_PER_SCAN]}
        out.update(_fetch(store, project_id, batch))
    return out


def _fetch(store: Store, project_id: str, windows: Mapping[str, tuple[datetime, datetime]]
           ) -> dict[str, ExperimentData]:
    if not windows:
        return {}
    params = window_params(project_id, windows)
    checks = _Checks(start=any(s != params["lo"] for s in params["starts"]),
                     end=any(e != params["hi"] for e in params["ends"]))
    variants = [row[0] for row in store.query(_VARIANTS_SQL, params).result_rows]
    ft, fe, fu = _unmatched_feedback(store, params)
    result = store.query(_per_variant_sql(checks), {**params, "variants": variants,
                                                    "variant_positions": list(range(1, len(variants) + 1)),
                                                    "ft": ft, "fe": fe, "fu": fu})
    rows = [dict(zip(result.column_names, row)) for row in result.result_rows]
    percentiles = _percentiles(store, params, checks)
    names = params["names"]
    out: dict[str, dict[str, VariantData]] = {}
    mixed: dict[str, int] = {}
    anonymous: dict[str, int] = {}
    for row in rows:
        name = names[int(row["ei"]) - 1]
        vi = int(row["vi"])
        # 0: a variant first inserted after the variant list was read (the next run names it)
        variant = variants[vi - 1] if vi > 0 else UNLISTED_VARIANT
        state = _STATES[int(row["state"])]
        if state == "mixed":
            mixed[name] = mixed.get(name, 0) + int(row["users"])
        elif state == "anonymous":
            anonymous[name] = anonymous.get(name, 0) + int(row["s_calls"])
        else:
            out.setdefault(name, {})[variant] = _variant(row, percentiles.get((name, variant), {}))
    matched = {name: sum(1 for e in fe if e == name) for name in windows}
    return {name: ExperimentData(variants=out.get(name, {}), mixed_users=mixed.get(name, 0),
                                 anonymous_calls=anonymous.get(name, 0), feedback_matched_by_trace=matched[name])
            for name in windows}


def _variant(row: Mapping[str, Any], percentiles: Mapping[str, float | None]) -> VariantData:
    from .stats import Moments

    users = int(row["users"])
    moments: dict[str, Moments] = {}
    denominators: dict[str, float] = {}
    with_data: dict[str, int] = {}
    for name, metric in METRICS.items():
        y = metric.numerator
        if metric.denominator is None:
            moments[name] = Moments.from_sums(users, _f(row[f"s_{y}"]), _f(row[f"q_{y}"]))
            denominators[name], with_data[name] = float(users), users
        else:
            x = metric.denominator
            moments[name] = Moments.from_sums(users, _f(row[f"s_{y}"]), _f(row[f"q_{y}"]), _f(row[f"s_{x}"]),
                                     _f(row[f"q_{x}"]), _f(row[f"p_{name}"]))
            denominators[name], with_data[name] = _f(row[f"s_{x}"]), int(row[f"n_{x}"])
    return VariantData(users=users, calls=int(row["s_calls"]), moments=moments, denominators=denominators,
                       users_with_data=with_data, percentiles=dict(percentiles))


def _f(value: Any) -> float:
    """ClickHouse returns NaN (or inf) for a variance of fewer than two users; keep it as NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return number if number == number and abs(number) != float("inf") else float("nan")


def _percentiles(store: Store, params: dict[str, Any], checks: _Checks
                 ) -> dict[tuple[str, str], dict[str, float | None]]:
    result = store.query(_percentiles_sql(checks), params)
    out: dict[tuple[str, str], dict[str, float | None]] = {}
    for experiment, variant, ttft, latency in result.result_rows:
        series = {"ttft": ttft, "latency": latency}
        values: dict[str, float | None] = {}
        for name, (source, level) in PERCENTILES.items():
            value = _f(series[source][0 if level == 0.5 else 1])
            values[name] = value if value == value and value > 0 else None
        out[(experiment, variant)] = values
    return out


def observed_variants(store: Store, since: datetime) -> list[tuple[str, str, str, datetime, int]]:
    """``(project, experiment, variant, first hour seen, calls)`` from the A/B rollup since ``since``.

    The rollup holds one row per experiment, variant and hour, so this is cheap enough to run every hour and is
    how experiments that nobody registered are discovered.
    """
    rows = store.query(
        "SELECT project_id, experiment, variant, min(hour), sum(calls) FROM ab_rollup_1h "
        "WHERE experiment != '' AND hour >= fromUnixTimestamp64Micro({s:Int64}, 'UTC') "
        "GROUP BY project_id, experiment, variant ORDER BY project_id, experiment, variant",
        {"s": _us(since)},
    ).result_rows
    return [(p, e, v, h if h.tzinfo else h.replace(tzinfo=UTC), int(c)) for p, e, v, h, c in rows]
