"""Figures and tables for the ingest bench: logging, percentiles, medians of runs, the final target table."""

from __future__ import annotations

import math
import statistics
from typing import Sequence

MiB = 1024 * 1024


def log(message: str) -> None:
    print(message, flush=True)


def fmt_rate(value: float) -> str:
    return f"{value:,.0f}/s"


def median_min_max(values: Sequence[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def fmt_mmm(values: Sequence[float], fmt: str = ",.0f", unit: str = "") -> str:
    """``median [min–max]`` of ``values`` (``-`` when there are none)."""
    if not values:
        return "-"
    med, lo, hi = median_min_max(values)
    return f"{med:{fmt}}{unit} [{lo:{fmt}}–{hi:{fmt}}]"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by the nearest-rank method: a value that was measured, never an
    interpolation (``nan`` when there are no values)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def fmt_ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:,.0f} ms"


TableLine = tuple[str, str, str, "bool | None"]  # target, goal, measured, verdict (None: information only)


def print_table(lines: Sequence[TableLine], *, width: int = 110, name_width: int = 46, goal_width: int = 20,
                measured_width: int = 36, measured_title: str = "measured (median [min–max])") -> None:
    log(f"\n{'=' * width}\n{'target':<{name_width}}{'goal':<{goal_width}}{measured_title:<{measured_width}}result")
    log("-" * width)
    for name, goal, measured, ok in lines:
        verdict = "" if ok is None else ("PASS" if ok else "FAIL")
        log(f"{name:<{name_width}}{goal:<{goal_width}}{measured:<{measured_width}}{verdict}")
    log("=" * width)
