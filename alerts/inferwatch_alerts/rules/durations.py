"""Durations in rules files: ``30s``, ``5m``, ``2h``, ``1d``, ``1h30m`` or a number of seconds."""

from __future__ import annotations

import math
import re
from typing import Any

from .yaml_lines import ParseContext

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: Any) -> float:
    """``90``, ``"90s"``, ``"5m"``, ``"1h30m"``, ``"1d"`` -> seconds; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("a duration, not a boolean")
    if isinstance(value, (int, float)):
        if value < 0 or not math.isfinite(value):
            raise ValueError("must not be negative")
        return float(value)
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        parts = list(_DURATION.finditer(text))
        if text and parts and "".join(p.group(0) for p in parts) == text:
            return sum(float(p.group(1)) * _UNITS[p.group(2)] for p in parts)
    raise ValueError(f"not a duration: {value!r} (use e.g. 30s, 5m, 2h, 1d)")


def checked_duration(ctx: ParseContext, value: Any, path: tuple[Any, ...], *, minimum: float = 0,
                     maximum: float | None = None, step: int | None = None) -> float | None:
    """``value`` as seconds within ``[minimum, maximum]`` and a multiple of ``step``; None (reported) otherwise."""
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        ctx.err(path, str(exc))
        return None
    if seconds < minimum or (maximum is not None and seconds > maximum):
        hi = f" and at most {format_duration(maximum)}" if maximum is not None else ""
        ctx.err(path, f"must be at least {format_duration(minimum)}{hi}")
        return None
    if step and seconds % step:
        ctx.err(path, f"must be a whole number of {format_duration(step)}")
        return None
    return seconds


def format_duration(seconds: float) -> str:
    """``90`` -> ``90s``, ``300`` -> ``5m``: the largest whole unit."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
