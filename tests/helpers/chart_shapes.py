"""Traffic of every shape a time-series chart must draw well, one project per shape, written as real call rows.

Times are relative to a 15-minute-aligned ``now`` so each shape lands in known buckets of the default range (the
last 24 hours at 15-minute buckets) or, for ``30 days``, of the last 30 days at daily buckets:

- ``one-bucket``: four calls of two models in a single 15-minute bucket 3 hours ago;
- ``sparse``: one call in each of three buckets (2, 9 and 17 hours ago), two models;
- ``gaps``: a call every 15 minutes from 6 hours to half an hour ago and from 20 to 14 hours ago, nothing between;
- ``single-model``: one model only, a call an hour for 20 hours;
- ``30 days``: a call an hour for 30 days, two models, more traffic by day than by night.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from inferwatch_collector.auth import KeyStore
from inferwatch_collector.rows import LLM_CALL_COLUMNS, LlmCallRow
from inferwatch_collector.store import Store
from tests.helpers.factories import llm_call

MINUTE_US = 60_000_000
BUCKET_US = 15 * MINUTE_US
HOUR_US = 60 * MINUTE_US
MODELS = ("gpt-4o-mini", "gpt-4o")


@dataclass(frozen=True)
class Shape:
    """One shape's project, its read key and the exact rows written."""

    project: str
    key: str
    rows: list[LlmCallRow]

    @property
    def models(self) -> set[str]:
        return {row.model for row in self.rows}


def _call(project: str, start_us: int, model: str, n: int) -> LlmCallRow:
    return llm_call(project, start_time=start_us, model=model, request_model=model, response_model=model,
                    cost_usd=0.001 * (1 + n % 3), ttft_ms=300 + 10 * (n % 5), latency_ms=900 + 20 * (n % 7),
                    status="error" if n % 10 == 3 else "ok", error_type="Timeout" if n % 10 == 3 else "",
                    refusal=n % 7 == 2, price_version="test-1")


def shape_starts(now_us: int) -> dict[str, list[tuple[int, str]]]:
    """(start time, model) of every call of each shape."""
    base = now_us - now_us % BUCKET_US  # the start of the current 15-minute bucket
    one = base - 12 * BUCKET_US
    return {
        "one-bucket": [(one + m * MINUTE_US, MODELS[1] if m == 2 else MODELS[0]) for m in range(1, 5)],
        "sparse": [(base - h * HOUR_US + 2 * MINUTE_US, MODELS[i % 2]) for i, h in enumerate((2, 9, 17))],
        "gaps": [(base - q * BUCKET_US + MINUTE_US, MODELS[q % 2]) for q in (*range(2, 25), *range(56, 81))],
        "single-model": [(base - h * HOUR_US + 3 * MINUTE_US, MODELS[0]) for h in range(1, 21)],
        "30 days": [(base - h * HOUR_US - 7 * MINUTE_US, MODELS[h % 2])
                    for h in range(1, 30 * 24) for _ in range(1 + (h % 24 in range(8, 20)))],
    }


def seed(store: Store) -> dict[str, Shape]:
    """Write every shape under its own project (``shape-<name>``) with a read key; returns them by name."""
    now_us = int(time.time() * 1_000_000)
    keys = KeyStore(store, cache_seconds=0)
    shapes = {}
    for name, starts in shape_starts(now_us).items():
        project = "shape-" + name.replace(" ", "-")
        rows = [_call(project, start, model, n) for n, (start, model) in enumerate(starts)]
        store.insert_columns("llm_calls", [list(column) for column in zip(*rows)], LLM_CALL_COLUMNS)
        shapes[name] = Shape(project, keys.create_key(project, ["read"]), rows)
    return shapes
