"""Timing helpers the benches share: repeated wall-clock runs, and their median [min-max] as text."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[..., Any], runs: int, *args: Any, **kwargs: Any) -> tuple[list[float], Any]:
    """Wall-clock seconds of ``runs`` calls of ``fn(*args, **kwargs)`` and its last result."""
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        times.append(time.perf_counter() - started)
    return times, result


def fmt(times: list[float], width: int = 6) -> str:
    """``median s  [min-max]``."""
    return f"{statistics.median(times):{width}.3f} s  [{min(times):.3f}-{max(times):.3f}]"
