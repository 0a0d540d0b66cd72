"""A rule's condition: one of ``threshold``, ``baseline`` or ``detector``, with values in the signal's unit."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ..signals import RAW, SIGNALS, Signal
from .durations import checked_duration, parse_duration
from .model import OPS, BaselineSpec, Condition, DetectorSpec, Threshold
from .yaml_lines import ParseContext

_DETECTOR_PARAMS: Final[Mapping[str, Mapping[str, tuple[float, float, float]]]] = {
    # name -> (default, min, max)
    "proportion_spike": {"baseline_days": (7, 3, 28), "min_baseline_days": (3, 2, 28), "alpha": (1e-4, 1e-12, 0.2),
                         "min_ratio": (1.5, 1.0, 100.0), "min_increase": (0.01, 0.0, 1.0),
                         "min_day_cv": (0.1, 0.0, 5.0), "prior_cv": (0.5, 0.05, 2.0)},
    "length_shift": {"baseline_days": (7, 3, 28), "min_baseline_days": (3, 2, 28), "alpha": (1e-4, 1e-12, 0.2),
                     "min_distance": (0.1, 0.0, 1.0), "spread_factor": (5.0, 1.0, 20.0)},
    "percentile_creep": {"reference_days": (7, 3, 60), "monitor_days": (7, 1, 60), "min_reference": (4, 2, 60),
                         "k": (0.5, 0.0, 10.0), "h": (5.0, 0.5, 100.0), "min_rel_sd": (0.03, 0.0, 1.0),
                         "confidence": (0.9, 0.5, 0.999), "max_z": (3.0, 0.5, 100.0)},
}
#: Noise floors a test divides by (or leans on when its baseline is perfectly steady): 0 makes it degenerate.
_NOISE_FLOORS: Final = {"min_day_cv": "day-to-day variation", "min_rel_sd": "relative spread"}
_INT_PARAMS = frozenset({"baseline_days", "min_baseline_days", "reference_days", "monitor_days", "min_reference"})


def _number(ctx: ParseContext, value: Any, path: tuple[Any, ...], signal: Signal | None) -> float | None:
    """A threshold value: a number in the signal's unit, a duration for latencies, a percentage for ratios."""
    if isinstance(value, bool):
        ctx.err(path, "must be a number")
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if signal is None:
        return None  # the unknown signal is reported; its units are unknown, so is what this value means
    if isinstance(value, str):
        text = value.strip()
        if signal.unit == "ratio" and text.endswith("%"):
            try:
                return float(text[:-1]) / 100.0
            except ValueError:
                pass
        if signal.unit == "ms":
            try:
                return parse_duration(text) * 1000.0
            except ValueError:
                pass
    hint = {"ms": " (milliseconds, or a duration such as 2s)", "ratio": " (a fraction, or a percentage such as "
            "1%)"}.get(signal.unit if signal else "", "")
    ctx.err(path, f"must be a number{hint}")
    return None


def _threshold(ctx: ParseContext, spec: Any, cpath: tuple[Any, ...], signal: Signal | None) -> Threshold | None:
    """``{op, value, confidence, min_events, clear}``; the guard only on ratio signals, the clear level on the
    good side of the threshold."""
    body = ctx.mapping(spec, cpath, ("op", "value", "confidence", "min_events", "clear"))
    if body is None:
        return None
    errors_before = len(ctx.errors)
    op = body.get("op", ">")
    if op not in OPS:
        ctx.err(cpath + ("op",), f"op must be one of {' '.join(OPS)}")
    if "value" not in body:
        ctx.err(cpath, "needs a value")
        return None
    value = _number(ctx, body["value"], cpath + ("value",), signal)
    ratio = signal is None or signal.unit == "ratio"
    confidence = body.get("confidence")
    if confidence is not None:
        if not ratio and signal.kind != "quantile":
            ctx.err(cpath + ("confidence",), f"confidence is a guard for rate and percentile signals (error_rate, "
                    f"ttft_p95, ...); {signal.name if signal else ''} is neither")
        elif isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or \
                not 0.5 < confidence < 1:
            ctx.err(cpath + ("confidence",), "confidence must be a number between 0.5 and 1 (exclusive), "
                    "e.g. 0.95")
    min_events = body.get("min_events", 0)
    if "min_events" in body:
        if not ratio:
            ctx.err(cpath + ("min_events",), f"min_events is a guard for rate signals (error_rate, refusal_rate, "
                    f"...); {signal.name if signal else ''} is not a rate")
        elif isinstance(min_events, bool) or not isinstance(min_events, int) or min_events < 0:
            ctx.err(cpath + ("min_events",), "min_events must be a whole number, 0 or more")
        elif op in ("<", "<="):
            ctx.err(cpath + ("min_events",), f"min_events counts the events a rate is made of, which a `{op}` "
                    "threshold expects few of: use it with > or >=")
    clear = _number(ctx, body["clear"], cpath + ("clear",), signal) if "clear" in body else None
    if clear is not None and value is not None and op in OPS:
        above = op in (">", ">=")
        if (above and clear > value) or (not above and clear < value):
            ctx.err(cpath + ("clear",), f"the clear level must be on the good side of the threshold: "
                    f"{'at or below' if above else 'at or above'} {body['value']} for op {op}")
    if len(ctx.errors) > errors_before or value is None:
        return None
    return Threshold(op, value, None if confidence is None else float(confidence), int(min_events), clear)


def parse_condition(ctx: ParseContext, spec: Mapping[str, Any], path: tuple[Any, ...], signal: Signal | None,
                    window: float | None, group_by: tuple[str, ...] | None) -> Condition | None:
    """The rule's one condition, checked against its signal, window and groups; None (reported) when invalid."""
    given = [k for k in ("threshold", "baseline", "detector") if k in spec]
    if len(given) != 1:
        ctx.err(path, "needs exactly one of threshold, baseline or detector"
                + (f" (has {', '.join(given)})" if given else ""))
        return None
    key = given[0]
    cpath = path + (key,)
    if key == "threshold":
        return _threshold(ctx, spec[key], cpath, signal)
    if key == "baseline":
        return _baseline(ctx, spec[key], cpath, path, signal, window)
    body = spec[key]
    if isinstance(body, str):
        body = {"kind": body}
    kind = body.get("kind") if isinstance(body, dict) else None
    if kind not in _DETECTOR_PARAMS:
        ctx.err(cpath + ("kind",) if isinstance(body, dict) else cpath,
                f"detector kind must be one of {', '.join(_DETECTOR_PARAMS)}")
        return None
    allowed = _DETECTOR_PARAMS[kind]
    body = ctx.mapping(body, cpath, ("kind", *allowed))
    if body is None:
        return None
    if signal is not None and kind not in signal.detectors:
        fits = [s.name for s in SIGNALS.values() if kind in s.detectors]
        ctx.err(path + ("signal",), f"detector {kind} does not apply to {signal.name}; it applies to "
                f"{', '.join(fits)}")
        return None
    params: dict[str, float] = {}
    for name, (default, low, high) in allowed.items():
        value = body.get(name, default)
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and low <= value <= high
        if name in _INT_PARAMS and ok and int(value) != value:
            ok = False
        if not ok:
            ctx.err(cpath + (name,), f"{name} must be a {'whole ' if name in _INT_PARAMS else ''}number from "
                    f"{low:g} to {high:g}")
            continue
        params[name] = float(value)
    if kind == "length_shift" and group_by is not None and not set(group_by) <= RAW.groups:
        ctx.err(path + ("group_by",), "response lengths cannot be grouped by these groups")
    if kind in ("proportion_spike", "length_shift") and window is not None and window > 86400:
        ctx.err(path + ("window",), f"{kind} compares the same window on earlier days: at most 1d")
        return None
    if len(params) != len(allowed):
        return None
    if not _consistent(ctx, cpath, kind, params):
        return None
    return DetectorSpec(kind, params)


def _consistent(ctx: ParseContext, cpath: tuple[Any, ...], kind: str, params: Mapping[str, float]) -> bool:
    """Settings that are each in range but contradict one another (a rule that could never run, or a test
    that divides by a zero noise floor); each is reported on its own line."""
    ok = True
    pairs = (("min_baseline_days", "baseline_days"), ("min_reference", "reference_days"))
    for low, high in pairs:
        if low in params and high in params and params[low] > params[high]:
            ctx.err(cpath + (low,), f"{low} ({params[low]:g}) is more than {high} ({params[high]:g}): the "
                    f"rule could never have enough days and would never run")
            ok = False
    for name, what in _NOISE_FLOORS.items():
        if name in params and params[name] <= 0:
            ctx.err(cpath + (name,), f"{name} must be more than 0: it is the least {what} the test assumes, and "
                    f"0 makes a perfectly steady baseline turn any wobble into a finding (or divide by zero)")
            ok = False
    if kind == "percentile_creep" and params["max_z"] - params["k"] >= params["h"]:
        ctx.err(cpath + ("max_z",), f"max_z - k ({params['max_z'] - params['k']:g}) must be below h "
                f"({params['h']:g}), so that one outlier day cannot fire alone")
        ok = False
    return ok


_BASELINE_KEYS: Final = ("kind", "factor", "op", "lookback", "days", "weeks", "min_days", "min_value")


def _baseline(ctx: ParseContext, raw: Any, cpath: tuple[Any, ...], path: tuple[Any, ...], signal: Signal | None,
              window: float | None) -> BaselineSpec | None:
    body = ctx.mapping(raw, cpath, _BASELINE_KEYS)
    if body is None:
        return None
    kind = body.get("kind")
    if kind not in ("daily_average", "same_hour", "seasonal"):
        ctx.err(cpath + ("kind",), "kind must be seasonal, same_hour or daily_average")
        return None
    factor = body.get("factor", 2)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
        ctx.err(cpath + ("factor",), "factor must be a positive number")
        return None
    op = body.get("op", ">")
    if op not in OPS:
        ctx.err(cpath + ("op",), f"op must be one of {' '.join(OPS)}")
        return None
    lookback = checked_duration(ctx, body.get("lookback", 86400), cpath + ("lookback",), minimum=3600,
                                maximum=30 * 86400, step=60)
    whole: dict[str, int] = {}
    for name, (low, high) in (("days", (1, 28)), ("weeks", (0, 4)), ("min_days", (0, 28))):
        default = {"days": 7, "weeks": 0}.get(name) if name != "min_days" else \
            1 if kind == "daily_average" else min(3, whole.get("days", 7))
        value = body.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            ctx.err(cpath + (name,), f"{name} must be a whole number from {low} to {high}")
            return None
        whole[name] = value
    floor = _number(ctx, body.get("min_value", 0), cpath + ("min_value",), signal)
    if lookback is None or floor is None:
        return None
    if kind != "daily_average" and window is not None and window > 86400:
        ctx.err(path + ("window",), f"a {kind} baseline needs a window of at most 1d")
        return None
    if "weeks" in body and kind != "seasonal":
        ctx.err(cpath + ("weeks",), "weeks applies to a seasonal baseline only")
        return None
    spec = BaselineSpec(kind, float(factor), op, int(lookback), whole["days"], floor, whole["weeks"],
                        whole["min_days"])
    if kind != "daily_average" and spec.min_days > spec.days:
        ctx.err(cpath + ("min_days",), f"min_days ({spec.min_days}) is more than days ({spec.days}): the rule "
                f"could never have enough same-hour windows and would never run")
        return None
    return spec
