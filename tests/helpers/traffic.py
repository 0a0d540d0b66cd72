"""Synthetic LLM traffic for the alert tests, generated inside the database.

Realistic alert tests need hours to days of calls (baselines are trailing days), far more than Python row
factories insert quickly, so calls are made by ``INSERT INTO llm_calls SELECT ... FROM numbers(n)``: evenly
spaced in time, with deterministic pseudo-random flags and latencies (``u(i)``: a uniform in [0, 1) from a hash
of the row number, the seed and ``i``). The materialized views fill the rollups exactly as for ingested calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from inferwatch_collector.store import Store


def u(i: int, seed: int) -> str:
    """SQL for a deterministic uniform in [0, 1), independent for each ``i``."""
    return f"(cityHash64(number, {seed}, {i}) % 1000000) / 1000000.0"


def per_day(sd: float, salt: int) -> str:
    """SQL for a multiplier that changes from day to day (unit mean, relative spread ``sd``): the traffic mix
    differs by day. Usable in any :func:`add_calls` expression (``{day}`` is the call's day number)."""
    return f"exp({sd} * ((cityHash64({{day}}, {salt}) % 1000000) / 1000000.0 - 0.5) * 3.4641)"


def lognormal(median: float | str, sigma: float, i: int, seed: int) -> str:
    """SQL for a lognormal value (Box-Muller on two uniforms) with this median and log-sd."""
    z = f"sqrt(-2 * log(greatest({u(i, seed)}, 1e-9))) * cos(2 * pi() * {u(i + 50, seed)})"
    return f"{median} * exp({sigma} * {z})"


def add_calls(store: Store, start: datetime, minutes: float, per_minute: int, *, project: str = "p1",
              model: str = "gpt-4o", provider: str = "openai", feature: str = "search", seed: int = 1,
              ttft_ms: str | float = 400, latency_ms: str | float = 1500, error_rate: str | float = 0.0,
              refusal_rate: str | float = 0.0, empty_rate: str | float = 0.0, truncated_rate: str | float = 0.0,
              tool_failure_rate: str | float = 0.0, output_tokens: str | float = 200,
              cost_usd: str | float = 0.002,
              extra: Mapping[str, str] | None = None) -> int:
    """Insert ``minutes * per_minute`` calls from ``start``, evenly spaced; returns how many.

    Numbers are constants; strings are SQL expressions (see :func:`u`, :func:`lognormal`, :func:`per_day`).
    Every call makes one tool call, which fails with ``tool_failure_rate``.
    """
    n = int(minutes * per_minute)
    if n <= 0:
        return 0
    step_us = 60_000_000 // per_minute
    start_us = int(start.timestamp() * 1_000_000)
    cols = {
        "project_id": f"'{project}'",
        "start_time": f"fromUnixTimestamp64Micro(toInt64({start_us} + number * {step_us}), 'UTC')",
        "end_time": f"fromUnixTimestamp64Micro(toInt64({start_us} + number * {step_us} + 1000000), 'UTC')",
        "trace_id": f"lower(hex(MD5(concat(toString(number), '-{seed}'))))",
        "span_id": f"lower(hex(cityHash64(number, {seed}, 'span')))",
        "model": f"'{model}'", "request_model": f"'{model}'", "response_model": f"'{model}'",
        "provider": f"'{provider}'", "operation": "'chat'", "service_name": "'svc'",
        "span_name": f"'chat {model}'",
        "input_tokens": "500",
        "output_tokens": f"toUInt32(greatest(0, round({output_tokens})))",
        "ttft_ms": f"toUInt32(greatest(1, round({ttft_ms})))",
        "latency_ms": f"toUInt32(greatest(1, round({latency_ms})))",
        "status": f"if({u(1, seed)} < {error_rate}, 'error', 'ok')",
        "error_type": f"if({u(1, seed)} < {error_rate}, 'RateLimitError', '')",
        "finish_reason": f"if({u(4, seed)} < {truncated_rate}, 'length', 'stop')",
        "streamed": "1",
        "refusal": f"{u(2, seed)} < {refusal_rate}",
        "empty_response": f"{u(3, seed)} < {empty_rate}",
        "truncated": f"{u(4, seed)} < {truncated_rate}",
        "tool_calls": "1",
        "tool_call_failures": f"{u(5, seed)} < {tool_failure_rate}",
        "feature": f"'{feature}'",
        "cost_usd": f"{cost_usd}",
        "price_version": "'test'",
    }
    cols.update(extra or {})
    names = ", ".join(cols)
    exprs = ", ".join(f"{expr} AS {name}" for name, expr in cols.items())
    day = f"intDiv(toInt64({start_us} + number * {step_us}), 86400000000)"
    store.command(f"INSERT INTO llm_calls ({names}) SELECT {exprs} FROM numbers({n})".replace("{day}", day))
    return n


def add_votes(store: Store, start: datetime, minutes: float, per_minute: int, *, down_rate: float | str,
              project: str = "p1", model: str = "gpt-4o", seed: int = 7) -> int:
    """Thumbs votes (kind ``thumbs``, value -1 with ``down_rate``) in ``feedback``, evenly spaced."""
    n = int(minutes * per_minute)
    if n <= 0:
        return 0
    step_ms = 60_000 // per_minute
    start_ms = int(start.timestamp() * 1000)
    day = f"intDiv(toInt64({start_ms} + number * {step_ms}), 86400000)"
    store.command((
        "INSERT INTO feedback (project_id, feedback_id, created_at, trace_id, span_id, user_hash, kind, name, "
        "value, label, source, model) "
        f"SELECT '{project}', concat('f', toString({seed}), '-', toString(number)), "
        f"fromUnixTimestamp64Milli(toInt64({start_ms} + number * {step_ms}), 'UTC'), '', '', '', 'thumbs', "
        f"'helpful', if({u(9, seed)} < {down_rate}, -1, 1), '', 'end_user', '{model}' FROM numbers({n})"
    ).replace("{day}", day))
    return n
