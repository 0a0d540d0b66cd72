"""Signals: what an alert rule measures, and the SQL that reads it for a set of time windows, per group.

A signal is a value computed from a few additive *measures* (calls, errors, cost, ...) or from a t-digest
(TTFT and total-latency percentiles). The measures are summed from the rollups whenever a rollup carries the
rule's groups and measures at the windows' resolution, because rollups are what make a one-minute evaluation
cycle cheap:

* ``llm_calls_1h`` when every window is whole hours (drift rules evaluated hourly or daily);
* ``usage_1h`` (sums by feature and prompt template) for hourly windows grouped by feature or template;
* ``llm_calls_1m`` for minute-aligned windows (the threshold rules, evaluated every minute);
* the raw ``llm_calls`` table otherwise (groups no rollup has, e.g. feature with a 5-minute window, and the
  response-length histograms). Its primary key ``(project_id, toStartOfHour(start_time), ...)`` prunes a read to
  the windows' hours, so a short window stays cheap;
* ``feedback`` (``FINAL``: votes change) for the thumbs-down rate.

One query reads every window a rule needs (the current window and, for baselines, the same window on earlier
days): the windows are OR-ed ranges, which ClickHouse's key analysis prunes, and ``k`` says which window a row
belongs to. A sustained threshold also needs the last one-minute buckets of its window: the same scan groups
them twice (``GROUPING SETS``: the window, and each minute), so it costs no second query. All SQL
is parameterised; the only text spliced in comes from this module's own catalogue.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from inferwatch_collector.store import Store

#: Rule ``group_by`` names and the column each reads. ``project`` is always grouped on (isolation).
GROUP_COLUMNS: Final[Mapping[str, str]] = {
    "project": "project_id", "model": "model", "provider": "provider", "operation": "operation",
    "feature": "feature", "prompt_template": "prompt_template", "prompt_version": "prompt_version",
    "experiment": "experiment", "variant": "variant", "service": "service_name",
}

Kind = Literal["ratio", "quantile", "rate", "per_call"]


@dataclass(frozen=True)
class Signal:
    """One measurable signal. ``volume`` is the measure ``min_requests`` counts: the calls the value comes from."""

    name: str
    kind: Kind
    unit: str
    description: str
    volume: str
    family: Literal["calls", "feedback"] = "calls"
    numerator: str = ""
    denominator: str = ""
    quantity: str = ""  # quantile signals: "ttft" or "latency"
    level: float = 0.0
    per_s: float = 0.0  # rate signals: value = sum(numerator) * per_s / window seconds
    detectors: frozenset[str] = frozenset()

    @cached_property
    def measures(self) -> tuple[str, ...]:
        names = [self.volume, self.numerator, self.denominator]
        return tuple(dict.fromkeys(n for n in names if n))

    @property
    def is_latency(self) -> bool:
        return self.kind == "quantile"


def _catalogue() -> dict[str, Signal]:
    signals: list[Signal] = []
    for level, suffix in ((0.5, "p50"), (0.9, "p90"), (0.95, "p95"), (0.99, "p99")):
        signals.append(Signal(f"ttft_{suffix}", "quantile", "ms", f"time to first token, {suffix}", "streamed",
                              quantity="ttft", level=level, detectors=frozenset({"percentile_creep"})))
        signals.append(Signal(f"latency_{suffix}", "quantile", "ms", f"total latency, {suffix}", "calls",
                              quantity="latency", level=level, detectors=frozenset({"percentile_creep"})))
    proportion = frozenset({"proportion_spike"})
    signals += [
        Signal("error_rate", "ratio", "ratio", "share of calls that failed", "calls", numerator="errors",
               denominator="calls", detectors=proportion),
        Signal("refusal_rate", "ratio", "ratio", "share of calls the model refused", "calls",
               numerator="refusals", denominator="calls", detectors=proportion),
        Signal("empty_rate", "ratio", "ratio", "share of calls with an empty response", "calls", numerator="empty",
               denominator="calls", detectors=proportion),
        Signal("truncated_rate", "ratio", "ratio", "share of calls cut off by the token limit", "calls",
               numerator="truncated", denominator="calls", detectors=proportion),
        Signal("tool_failure_rate", "ratio", "ratio", "share of tool calls that failed (bad arguments, unknown "
               "tool, tool error)", "tool_calls", numerator="tool_failures", denominator="tool_calls",
               detectors=proportion),
        Signal("thumbs_down_rate", "ratio", "ratio", "share of thumbs votes that were down", "votes",
               family="feedback", numerator="thumbs_down", denominator="votes", detectors=proportion),
        Signal("cost_per_hour", "rate", "USD/h", "spend per hour", "calls", numerator="cost", per_s=3600.0),
        Signal("request_rate", "rate", "calls/min", "calls per minute", "calls", numerator="calls", per_s=60.0),
        Signal("input_tokens_per_min", "rate", "tokens/min", "input tokens per minute", "calls",
               numerator="input_tokens", per_s=60.0),
        Signal("output_tokens_per_min", "rate", "tokens/min", "output tokens per minute", "calls",
               numerator="output_tokens", per_s=60.0),
        Signal("tokens_per_min", "rate", "tokens/min", "input + output tokens per minute", "calls",
               numerator="tokens", per_s=60.0),
        Signal("output_tokens_per_call", "per_call", "tokens", "output tokens per call (response length)",
               "calls", numerator="output_tokens", denominator="calls", detectors=frozenset({"length_shift"})),
    ]
    return {s.name: s for s in signals}


SIGNALS: Final[Mapping[str, Signal]] = _catalogue()


# ------------------------------------------------------------------------------------------------ sources


@dataclass(frozen=True)
class Source:
    """A table a signal can be read from: its time column, resolution, groups and measure expressions."""

    name: str
    table: str
    time_col: str
    resolution_s: int
    groups: frozenset[str]
    measures: Mapping[str, str]
    quantiles: Mapping[str, str] = field(default_factory=dict)  # quantity -> aggregate, {levels} substituted
    family: str = "calls"
    where: str = ""

    def supports(self, signal: Signal, group_by: Sequence[str], windows: Sequence[tuple[int, int]]) -> bool:
        if signal.family != self.family or not set(group_by) <= self.groups:
            return False
        if any(m not in self.measures for m in signal.measures):
            return False
        if signal.quantity and signal.quantity not in self.quantiles:
            return False
        r = self.resolution_s
        return all(s % r == 0 and e % r == 0 for s, e in windows)


_ROLLUP_GROUPS = frozenset({"project", "model", "provider", "operation"})
_ROLLUP_MEASURES = {
    "calls": "sum(calls)", "errors": "sum(errors)", "refusals": "sum(refusals)", "empty": "sum(empty_responses)",
    "truncated": "sum(truncated)", "tool_calls": "sum(tool_calls)", "tool_failures": "sum(tool_call_failures)",
    "cost": "sum(cost_usd)", "input_tokens": "sum(input_tokens)", "output_tokens": "sum(output_tokens)",
    "tokens": "sum(input_tokens) + sum(output_tokens)", "streamed": "sum(streamed)",
}
_ROLLUP_QUANTILES = {"ttft": "quantilesTDigestMerge({levels})(ttft_ms)",
                     "latency": "quantilesTDigestMerge({levels})(latency_ms)"}
_USAGE_MEASURES = {k: v for k, v in _ROLLUP_MEASURES.items()
                   if k not in ("empty", "truncated", "streamed")}
_RAW_MEASURES = {
    "calls": "count()", "errors": "countIf(status = 'error')", "refusals": "countIf(refusal)",
    "empty": "countIf(empty_response)", "truncated": "countIf(truncated)",
    "tool_calls": "sum(toUInt64(tool_calls))", "tool_failures": "sum(toUInt64(tool_call_failures))",
    "cost": "sum(cost_usd)", "input_tokens": "sum(toUInt64(input_tokens))",
    "output_tokens": "sum(toUInt64(output_tokens))",
    "tokens": "sum(toUInt64(input_tokens)) + sum(toUInt64(output_tokens))", "streamed": "countIf(ttft_ms > 0)",
}
_RAW_QUANTILES = {"ttft": "quantilesTDigestIf({levels})(ttft_ms, ttft_ms > 0)",
                  "latency": "quantilesTDigest({levels})(latency_ms)"}

ROLLUP_1H: Final = Source("llm_calls_1h", "llm_calls_1h", "hour", 3600, _ROLLUP_GROUPS, _ROLLUP_MEASURES,
                          _ROLLUP_QUANTILES)
USAGE_1H: Final = Source("usage_1h", "usage_1h", "hour", 3600,
                         frozenset({"project", "feature", "prompt_template", "model"}), _USAGE_MEASURES)
ROLLUP_1M: Final = Source("llm_calls_1m", "llm_calls_1m", "minute", 60, _ROLLUP_GROUPS, _ROLLUP_MEASURES,
                          _ROLLUP_QUANTILES)
RAW: Final = Source("llm_calls", "llm_calls", "start_time", 1, frozenset(GROUP_COLUMNS),
                    _RAW_MEASURES, _RAW_QUANTILES)
FEEDBACK: Final = Source("feedback", "feedback FINAL", "created_at", 1,
                         frozenset({"project", "model", "feature", "prompt_template", "experiment", "variant"}),
                         {"votes": "count()", "thumbs_down": "countIf(value < 0)"}, family="feedback",
                         where="kind = 'thumbs'")
#: In order of preference: coarsest resolution first (fewest rows to read), the raw table last.
SOURCES: Final = (ROLLUP_1H, USAGE_1H, ROLLUP_1M, RAW, FEEDBACK)


class SignalError(ValueError):
    """A signal cannot be read with these groups (no table carries them)."""


def choose_source(signal: Signal, group_by: Sequence[str], windows: Sequence[tuple[int, int]]) -> Source:
    for source in SOURCES:
        if source.supports(signal, group_by, windows):
            return source
    raise SignalError(f"no table carries {signal.name} grouped by {', '.join(group_by) or 'project'}")


def groupable(signal: Signal, group_by: Sequence[str]) -> bool:
    """Whether some table can serve ``signal`` grouped by ``group_by`` (at one-second windows: the raw table)."""
    try:
        choose_source(signal, group_by, [(0, 1)])
    except SignalError:
        return False
    return True


# ------------------------------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class WindowRow:
    """One group's measures in window ``k`` of a read (``labels``: the group values, in ``group_by`` order)."""

    project_id: str
    labels: tuple[str, ...]
    k: int
    measures: Mapping[str, float]
    #: ``(level, value)`` pairs around a quantile signal's level, when the read asked for ``quantile_grid``
    quantiles: tuple[tuple[float, float], ...] = ()


def label_columns(group_by: Sequence[str]) -> list[str]:
    """The non-project group columns, in ``group_by`` order."""
    return [GROUP_COLUMNS[g] for g in group_by if g != "project"]


def _windows_sql(col: str, windows: Sequence[tuple[int, int]]) -> tuple[str, str, dict[str, int]]:
    params: dict[str, int] = {}
    ranges, cases = [], []
    for i, (start, end) in enumerate(windows):
        params[f"s{i}"], params[f"e{i}"] = start, end
        rng = f"{col} >= fromUnixTimestamp({{s{i}:Int64}}) AND {col} < fromUnixTimestamp({{e{i}:Int64}})"
        ranges.append(f"({rng})")
        cases.append(f"{rng}, {i}")
    k = "0" if len(windows) == 1 else f"multiIf({', '.join(cases)}, -1)"
    return " OR ".join(ranges), k, params


def _where(source: Source, windows: Sequence[tuple[int, int]], projects: Sequence[str] | None
           ) -> tuple[str, str, dict[str, Any]]:
    ranges, k, params = _windows_sql(source.time_col, windows)
    clauses = [f"({ranges})"]
    if source.where:
        clauses.append(source.where)
    if projects is not None:
        clauses.append("project_id IN {projects:Array(String)}")
        params["projects"] = list(projects)
    return " AND ".join(clauses), k, params


def _grouping(keys: Sequence[str], time_col: str, buckets: int, params: dict[str, Any]) -> tuple[str, str]:
    """``(k expression, GROUP BY clause)`` of a read with ``buckets``: two grouping sets in one scan, the whole
    window (``k`` left at its default, 0) and each minute (``k`` = 1 + whole minutes before the window's end,
    so 1 is its last minute; minutes beyond ``buckets`` are dropped by HAVING)."""
    params["buckets"] = buckets
    k = f"toInt64(intDiv({{e0:Int64}} - 1 - toUnixTimestamp({time_col}), 60)) + 1"
    plain = ", ".join(keys)
    return k, f"GROUPING SETS (({plain}), ({plain}, k)) HAVING k <= {{buckets:Int64}}"


def read_windows(store: Store, signal: Signal, group_by: Sequence[str], windows: Sequence[tuple[int, int]],
                 projects: Sequence[str] | None = None, *, quantile_noise: bool = False, buckets: int = 0,
                 quantile_grid: bool = False) -> list[WindowRow]:
    """The signal's measures per project, group and window (``windows``: ``[start, end)`` Unix seconds).

    ``buckets``: also the last ``buckets`` one-minute buckets of window 0 (which must be its only window and end
    on a minute), as ``k = 1 + i`` for the bucket ending ``i`` minutes before the window does (k = 1: the
    latest minute).

    Groups with no row in a window are absent from it (no data), never zero-filled. A quantile signal's value is
    the measure ``q``; with ``quantile_noise`` also ``q_noise``, its sampling noise
    (:func:`quantile_noise_of`); with ``quantile_grid`` also :attr:`WindowRow.quantiles`, the quantiles at
    :func:`grid_levels` (what a confidence bound of the percentile is read from,
    :func:`~inferwatch_alerts.guards.quantile_bound`).
    """
    if buckets and (len(windows) != 1 or windows[0][1] % 60 or windows[0][0] > windows[0][1] - 60 * buckets):
        raise ValueError("one-minute buckets are read at the end of a single window that ends on a minute")
    source = choose_source(signal, group_by, [*windows, *[(windows[0][1] - 60, windows[0][1])] * bool(buckets)])
    labels = label_columns(group_by)
    selects, levels = _selects(signal, source, quantile_noise, quantile_grid)
    where, k, params = _where(source, windows, projects)
    group = ", ".join(["project_id", *labels, "k"])
    if buckets:
        k, group = _grouping(["project_id", *labels], source.time_col, buckets, params)
    sql = (f"SELECT project_id, {''.join(c + ', ' for c in labels)}{k} AS k, {', '.join(selects)} "
           f"FROM {source.table} WHERE {where} GROUP BY {group}")
    result = store.query(sql, params)
    return _window_rows(signal, result.result_rows, len(labels), levels, quantile_noise, quantile_grid)


def read_sliding(store: Store, signal: Signal, group_by: Sequence[str], ends: Sequence[int], window_s: int,
                 projects: Sequence[str] | None = None, *, source: Source | None = None,
                 quantile_noise: bool = False, quantile_grid: bool = False) -> list[WindowRow]:
    """The measures of every window ``[end - window_s, end)`` of ``ends`` in one scan, ``k`` the index of its
    end in ``ends``: what :func:`read_windows` returns for each window on its own, for a backtest's block of
    upcoming evaluations.

    A row belongs to every window that holds it (``arrayJoin`` of their indices), so each window's sums and
    t-digest merges come from exactly the rows a read of that window alone aggregates. ``source``: the table
    to read (default: :func:`choose_source`'s for these windows); a caller that wants the very values of
    another read passes the table that read chose.
    """
    windows = [(e - window_s, e) for e in ends]
    source = source or choose_source(signal, group_by, windows)
    labels = label_columns(group_by)
    selects, levels = _selects(signal, source, quantile_noise, quantile_grid)
    where, _, params = _where(source, _merged(windows), projects)
    params["ends"], params["w"] = [int(e) for e in ends], int(window_s)
    ts = f"toInt64(toUnixTimestamp({source.time_col}))"
    k = (f"arrayJoin(arrayFilter(i -> {ts} >= {{ends:Array(Int64)}}[i] - {{w:Int64}} AND "
         f"{ts} < {{ends:Array(Int64)}}[i], arrayEnumerate({{ends:Array(Int64)}}))) - 1")
    group = ", ".join(["project_id", *labels, "k"])
    result = store.query(f"SELECT project_id, {''.join(c + ', ' for c in labels)}{k} AS k, {', '.join(selects)} "
                         f"FROM {source.table} WHERE {where} GROUP BY {group}", params)
    return _window_rows(signal, result.result_rows, len(labels), levels, quantile_noise, quantile_grid)


def _merged(windows: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ``[start, end)`` ranges joined: the few ranges a block of windows covers."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def read_first_seen(store: Store, signal: Signal, group_by: Sequence[str], since: int, until: int,
                    projects: Sequence[str] | None = None) -> dict[tuple[str, tuple[str, ...]], int]:
    """When each group was first seen in ``[since, until)`` (Unix seconds, whole hours: an hourly rollup
    serves it), keyed like :func:`read_windows`' rows. A baseline-relative rule uses it to tell a series that
    is still *learning* (too little history to judge) from one that merely had a quiet hour."""
    source = choose_source(signal, group_by, [(since, until)])
    labels = label_columns(group_by)
    where, _, params = _where(source, [(since, until)], projects)
    keys = ", ".join(["project_id", *labels])
    rows = store.query(f"SELECT {keys}, toUnixTimestamp(min({source.time_col})) FROM {source.table} "
                       f"WHERE {where} GROUP BY {keys}", params).result_rows
    width = len(labels)
    return {(str(r[0]), tuple(str(v) for v in r[1:1 + width])): int(r[1 + width]) for r in rows}


def project_first_seen(store: Store, project_id: str) -> int | None:
    """The hour of a project's first stored call (Unix seconds), None when it has none: how much history its
    baseline-relative rules can have (the alerts API reports rules as learning until they have enough)."""
    rows = store.query("SELECT toUnixTimestamp(min(hour)), count() FROM llm_calls_1h WHERE project_id = "
                       "{p:String}", {"p": project_id}).result_rows
    return int(rows[0][0]) if rows and rows[0][1] else None


def _selects(signal: Signal, source: Source, quantile_noise: bool, quantile_grid: bool = False
             ) -> tuple[list[str], tuple[float, ...]]:
    """The SELECT expressions of a window read (``m_<measure>``, and ``m_q`` for a quantile signal) and the
    quantile levels read (the signal's level, with its neighbours when ``quantile_noise``, and the grid around
    it when ``quantile_grid``)."""
    selects = [f"{source.measures[m]} AS m_{m}" for m in signal.measures]
    levels: tuple[float, ...] = ()
    if signal.quantity:
        levels = _levels(signal.level, quantile_noise)
        if quantile_grid:
            levels = (*levels, *grid_levels(signal.level))
    if signal.quantity:
        text = ", ".join(repr(float(level)) for level in levels)
        selects.append(source.quantiles[signal.quantity].format(levels=text) + " AS m_q")
    return selects, levels


def _window_rows(signal: Signal, result_rows: Sequence[Sequence[Any]], width: int, levels: Sequence[float],
                 quantile_noise: bool, quantile_grid: bool = False) -> list[WindowRow]:
    """Rows ``project_id, <width labels>, k, <measures>[, quantiles]`` as :class:`WindowRow` values."""
    rows = []
    head = 3 if quantile_noise else 1  # the levels before the grid (see _selects)
    for row in result_rows:
        measures = {m: float(v) for m, v in zip(signal.measures, row[2 + width:])}
        grid: tuple[tuple[float, float], ...] = ()
        if signal.quantity:
            raw = [float(v) for v in row[2 + width + len(signal.measures)]]
            _add_quantile(signal, measures, raw[:head], levels[:head], quantile_noise)
            if quantile_grid:
                grid = tuple(zip(levels[head:], raw[head:]))
        rows.append(WindowRow(str(row[0]), tuple(str(v) for v in row[1:1 + width]), int(row[1 + width]),
                              measures, grid))
    return rows


def _add_quantile(signal: Signal, measures: dict[str, float], raw: Sequence[Any], levels: Sequence[float],
                  quantile_noise: bool) -> None:
    """``q`` (the signal's quantile) and, with ``quantile_noise``, ``q_noise`` from a read's quantiles array."""
    values = list(raw)
    measures["q"] = values[len(values) // 2]
    if quantile_noise:
        measures["q_noise"] = quantile_noise_of(signal.level, values, levels, measures.get(signal.volume, 0.0))


#: The quantile grid's spacing and reach either side of the signal's level (see :func:`grid_levels`).
GRID_STEP: Final = 0.005
GRID_REACH: Final = 0.3


def grid_levels(level: float) -> tuple[float, ...]:
    """The levels a confidence bound of the ``level`` quantile is read from: every ``GRID_STEP`` within
    ``GRID_REACH`` of it, inside (0, 1). A bound whose level falls outside is taken as unbounded."""
    steps = round(GRID_REACH / GRID_STEP)
    return tuple(x for x in (round(level + i * GRID_STEP, 6) for i in range(-steps, steps + 1)) if 0.0 < x < 1.0)


def _levels(level: float, neighbours: bool) -> tuple[float, ...]:
    if not neighbours:
        return (level,)
    delta = min(0.02, (1.0 - level) / 2.0, level / 2.0)
    return (level - delta, level, level + delta)


def quantile_noise_of(level: float, values: Sequence[float], levels: Sequence[float], n: float) -> float:
    """Relative sampling noise (standard error of the log) of the ``level`` quantile of ``n`` values.

    The textbook large-sample result, se(q_p) = sqrt(p(1 - p) / n) / f(q_p), with the density f at the quantile
    estimated from the neighbouring quantiles (levels p - d and p + d of the same t-digest). Why it matters: a
    daily p95 from a few hundred calls moves by several percent from day to day on sampling alone, and a
    drift detector that estimated its noise from a calm week would page on that.
    """
    lo, q, hi = values
    if n <= 0 or not all(math.isfinite(v) for v in values) or q <= 0 or hi <= lo:
        return 0.0
    density = (levels[2] - levels[0]) / (hi - lo)
    return math.sqrt(level * (1.0 - level) / n) / density / q


def value_of(signal: Signal, measures: Mapping[str, float], window_s: int) -> float | None:
    """The signal's value from one window's measures; None when it has no defined value (no denominator)."""
    if signal.kind == "quantile":
        q = measures.get("q")
        if measures.get(signal.volume, 0) <= 0 or q is None or not math.isfinite(q):
            return None
        return float(q)
    if signal.kind == "rate":
        return measures.get(signal.numerator, 0.0) * signal.per_s / window_s
    denominator = measures.get(signal.denominator, 0.0)
    if denominator <= 0:
        return None
    return measures.get(signal.numerator, 0.0) / denominator


# ------------------------------------------------------------------------------- response-length histograms

#: Output-token histogram bins: 0 tokens, then four bins per doubling (about 19% wide), which resolves a shift
#: of the distribution's body without shipping per-call rows out of the database.
LENGTH_BIN_SQL: Final = "if(output_tokens = 0, 0, 1 + toUInt32(floor(log2(output_tokens) * 4)))"


@dataclass(frozen=True)
class Histogram:
    """Calls per output-token bin, plus the token total (for the mean a finding reports)."""

    counts: Mapping[int, int]
    tokens: float = 0.0

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    @property
    def mean(self) -> float:
        n = self.n
        return self.tokens / n if n else 0.0


def read_length_histograms(store: Store, group_by: Sequence[str], windows: Sequence[tuple[int, int]],
                           projects: Sequence[str] | None = None
                           ) -> dict[tuple[str, tuple[str, ...]], dict[int, Histogram]]:
    """Output-token histograms of successful calls per project, group and window, from the raw table.

    No rollup keeps per-call lengths, so this reads ``llm_calls``; the primary key limits it to the windows'
    hours. Failed calls are left out: their length is an error-rate question, not a response-length one.
    """
    if not set(group_by) <= RAW.groups:
        raise SignalError(f"response lengths cannot be grouped by {', '.join(group_by)}")
    labels = label_columns(group_by)
    where, k, params = _where(RAW, windows, projects)
    keys = ", ".join(["project_id", *labels, "k", "b"])
    result = store.query(
        f"SELECT project_id, {''.join(c + ', ' for c in labels)}{k} AS k, {LENGTH_BIN_SQL} AS b, count() AS n, "
        f"sum(toUInt64(output_tokens)) AS tokens FROM llm_calls WHERE {where} AND status != 'error' "
        f"GROUP BY {keys}", params)
    width = len(labels)
    raw: dict[tuple[str, tuple[str, ...]], dict[int, tuple[dict[int, int], float]]] = {}
    for row in result.result_rows:
        key = (str(row[0]), tuple(str(v) for v in row[1:1 + width]))
        window, b, n, tokens = int(row[1 + width]), int(row[2 + width]), int(row[3 + width]), float(row[4 + width])
        counts, total = raw.setdefault(key, {}).get(window, ({}, 0.0))
        counts[b] = counts.get(b, 0) + n
        raw[key][window] = (counts, total + tokens)
    return {key: {w: Histogram(counts, tokens) for w, (counts, tokens) in per.items()} for key, per in raw.items()}
