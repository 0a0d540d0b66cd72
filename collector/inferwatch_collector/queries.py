"""Every SELECT the query API runs, each scoped to one project and parameterised.

Rollups answer whenever they can (a few rows per bucket instead of one per call): ``llm_calls_1m`` for
ranges up to 48 hours, ``llm_calls_1h`` beyond (merging 1-minute t-digests over a week costs as much as a raw
scan). Time ranges are therefore rounded outwards to the rollup's bucket. Raw tables are read only for single
traces (bloom-filter lookups).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .store import Store

PERCENTILES = (0.5, 0.9, 0.95, 0.99)
_MAX_RANGE = timedelta(days=800)
_BUCKETS = {"minute": 60, "5m": 300, "15m": 900, "hour": 3600, "day": 86400}


class QueryError(ValueError):
    """Bad query parameters; the message names the parameter."""


@dataclass(frozen=True)
class TimeRange:
    """A half-open UTC range ``[start, end)`` and the rollup that serves it."""

    start: datetime
    end: datetime

    @classmethod
    def parse(cls, start: datetime | None, end: datetime | None, default: timedelta = timedelta(hours=24)
              ) -> "TimeRange":
        """Defaults: end = now, start = end - 24 h; naive datetimes are taken as UTC."""
        try:
            end = _utc(end) if end else datetime.now(timezone.utc)
            start = _utc(start) if start else end - default
        except OverflowError:  # within a day of year 1 or 9999: not in UTC, or no default start before the end
            raise QueryError("start and end must be between years 1 and 9999 in UTC, and end a day after year 1's "
                             "start when start is not given") from None
        if start >= end:
            raise QueryError("start must be before end")
        if end - start > _MAX_RANGE:
            raise QueryError(f"range too long: at most {_MAX_RANGE.days} days between start and end")
        return cls(start, end)

    @property
    def fine(self) -> bool:
        """Whether the 1-minute rollup serves this range (<= 48 h)."""
        return self.end - self.start <= timedelta(hours=48)

    @property
    def rollup(self) -> tuple[str, str]:
        """(table, time column) of the rollup for this range."""
        return ("llm_calls_1m", "minute") if self.fine else ("llm_calls_1h", "hour")

    def default_bucket(self) -> str:
        span = self.end - self.start
        if span <= timedelta(hours=6):
            return "minute"
        if span <= timedelta(hours=48):
            return "5m"
        if span <= timedelta(days=14):
            return "hour"
        return "day"

    def params(self, project_id: str) -> dict[str, Any]:
        return {"p": project_id, "s": int(self.start.timestamp()), "e": int(self.end.timestamp())}


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def bucket_seconds(rng: TimeRange, bucket: str | None) -> int:
    """Bucket width; finer than the rollup's own resolution is refused."""
    name = bucket or rng.default_bucket()
    if name not in _BUCKETS:
        raise QueryError(f"bucket must be one of {', '.join(_BUCKETS)}")
    seconds = _BUCKETS[name]
    if not rng.fine and seconds < 3600:
        raise QueryError("bucket: ranges over 48 hours are served hourly; use bucket=hour or day")
    return seconds


def _where(rng: TimeRange, time_col: str, model: str | None, provider: str | None) -> tuple[str, dict]:
    # The lower bound is rounded down to the bucket so a bucket straddling `start` is included whole.
    clauses = ["project_id = {p:String}",
               f"{time_col} >= toStartOf{'Minute' if time_col == 'minute' else 'Hour'}(fromUnixTimestamp({{s:Int64}}))",
               f"{time_col} < fromUnixTimestamp({{e:Int64}})"]
    extra: dict[str, Any] = {}
    if model:
        clauses.append("model = {model:String}")
        extra["model"] = model
    if provider:
        clauses.append("provider = {provider:String}")
        extra["provider"] = provider
    return " AND ".join(clauses), extra


def _rows(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = store.query(sql, params)
    return [dict(zip(result.column_names, row)) for row in result.result_rows]


_SUMS = """sum(calls) AS calls, sum(errors) AS errors, sum(input_tokens) AS input_tokens,
    sum(output_tokens) AS output_tokens, sum(cache_read_tokens) AS cache_read_tokens,
    sum(cache_write_tokens) AS cache_write_tokens, sum(reasoning_tokens) AS reasoning_tokens,
    sum(cost_usd) AS cost_usd, sum(refusals) AS refusals, sum(empty_responses) AS empty_responses,
    sum(truncated) AS truncated, sum(usage_missing) AS usage_missing, sum(unpriced) AS unpriced,
    sum(tool_calls) AS tool_calls, sum(tool_call_failures) AS tool_call_failures"""


def summary(store: Store, project_id: str, rng: TimeRange, model: str | None = None,
            provider: str | None = None) -> dict[str, Any]:
    """Totals over the range (LLM calls only)."""
    table, col = rng.rollup
    where, extra = _where(rng, col, model, provider)
    row = _rows(store, f"SELECT {_SUMS} FROM {table} WHERE {where}", {**rng.params(project_id), **extra})[0]
    calls = row["calls"] or 0
    row = {k: (v or 0) for k, v in row.items()}
    row["error_rate"] = row["errors"] / calls if calls else 0.0
    row["start"], row["end"] = rng.start.isoformat(), rng.end.isoformat()
    return row


def timeseries(store: Store, project_id: str, rng: TimeRange, bucket: str | None = None,
               model: str | None = None, provider: str | None = None, by_model: bool = False
               ) -> list[dict[str, Any]]:
    """Calls, errors, error rate, tokens and cost per time bucket (optionally per model)."""
    table, col = rng.rollup
    where, extra = _where(rng, col, model, provider)
    group = "t, model" if by_model else "t"
    select_model = "model, " if by_model else ""
    rows = _rows(
        store,
        f"""SELECT toStartOfInterval({col}, toIntervalSecond({{b:UInt32}})) AS t, {select_model}
            sum(calls) AS calls, sum(errors) AS errors, if(calls > 0, errors / calls, 0) AS error_rate,
            sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
            FROM {table} WHERE {where} GROUP BY {group} ORDER BY {group}""",
        {**rng.params(project_id), **extra, "b": bucket_seconds(rng, bucket)},
    )
    for row in rows:
        row["t"] = row["t"].replace(tzinfo=timezone.utc).isoformat()
    return rows


def latency_percentiles(store: Store, project_id: str, rng: TimeRange, model: str | None = None,
                        provider: str | None = None) -> list[dict[str, Any]]:
    """TTFT and total-latency percentiles per model (t-digest states merged at read time)."""
    table, col = rng.rollup
    where, extra = _where(rng, col, model, provider)
    levels = ", ".join(str(p) for p in PERCENTILES)
    rows = _rows(
        store,
        f"""SELECT model, provider, sum(calls) AS calls, sum(streamed) AS streamed,
            quantilesTDigestMerge({levels})(ttft_ms) AS ttft, quantilesTDigestMerge({levels})(latency_ms) AS lat
            FROM {table} WHERE {where} GROUP BY model, provider ORDER BY calls DESC, model""",
        {**rng.params(project_id), **extra},
    )
    out = []
    for row in rows:
        item = {"model": row["model"], "provider": row["provider"], "calls": row["calls"],
                "streamed": row["streamed"]}
        for name, values in (("ttft_ms", row["ttft"]), ("latency_ms", row["lat"])):
            has_data = name == "latency_ms" or row["streamed"] > 0
            for level, value in zip(PERCENTILES, values):
                item[f"{name}_p{int(level * 100)}"] = round(float(value), 1) if has_data else None
        out.append(item)
    return out


def cost_by_model(store: Store, project_id: str, rng: TimeRange, provider: str | None = None
                  ) -> list[dict[str, Any]]:
    """Calls, tokens and cost per model, most expensive first."""
    table, col = rng.rollup
    where, extra = _where(rng, col, None, provider)
    return _rows(
        store,
        f"""SELECT model, provider, sum(calls) AS calls, sum(input_tokens) AS input_tokens,
            sum(output_tokens) AS output_tokens, sum(cache_read_tokens) AS cache_read_tokens,
            sum(cache_write_tokens) AS cache_write_tokens, sum(reasoning_tokens) AS reasoning_tokens,
            sum(cost_usd) AS cost_usd, sum(usage_missing) AS usage_missing, sum(unpriced) AS unpriced
            FROM {table} WHERE {where} GROUP BY model, provider ORDER BY cost_usd DESC, calls DESC, model""",
        {**rng.params(project_id), **extra},
    )


_TRACE_LLM = """SELECT 'llm' AS type, span_id, parent_span_id, span_name AS name, service_name, operation,
    toUnixTimestamp64Micro(start_time) AS start_us, toUnixTimestamp64Micro(end_time) AS end_us, status,
    error_type, model, provider, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, ttft_ms, latency_ms, decode_tps, finish_reason, streamed, usage_missing, refusal,
    empty_response, truncated, tool_calls, tool_call_failures, response_chars, feature, prompt_template,
    prompt_version, experiment, variant, user_hash, cost_usd, price_version, attributes
    FROM llm_calls WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY start_time"""
_TRACE_SPANS = """SELECT 'span' AS type, span_id, parent_span_id, name, service_name, operation, kind,
    toUnixTimestamp64Micro(start_time) AS start_us, toUnixTimestamp64Micro(end_time) AS end_us, status,
    status_message, duration_ms, attributes
    FROM spans WHERE project_id = {p:String} AND trace_id = {t:String} ORDER BY start_time"""


def trace(store: Store, project_id: str, trace_id: str) -> list[dict[str, Any]]:
    """Every span of one trace (LLM calls with their metrics), in start order; empty when unknown."""
    params = {"p": project_id, "t": trace_id}
    spans = _rows(store, _TRACE_LLM, params) + _rows(store, _TRACE_SPANS, params)
    spans.sort(key=lambda s: (s["start_us"], s["span_id"]))
    return spans
