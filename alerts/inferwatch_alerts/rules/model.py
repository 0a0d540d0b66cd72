"""The rule model: a :class:`RuleSet` of rules, each a signal, its groups and windows, and one condition."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..lifecycle import NoDataPolicy, Policy
from ..signals import Signal

SEVERITIES: Final = ("critical", "warning", "info")
OPS: Final[Mapping[str, Callable[[float, float], bool]]] = {
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}


@dataclass(frozen=True)
class Threshold:
    """``value op threshold`` on the whole window.

    Ratio signals may be guarded: with ``confidence`` the Wilson score bound at that one-sided confidence (the
    lower bound for ``>``/``>=``, the upper for ``<``/``<=``) is compared instead of the point rate, and with
    ``min_events`` the numerator (errors, refusals, ...) must reach that count, so a handful of events in a small
    denominator is not a breach. Percentile signals (TTFT, latency) may take ``confidence`` too: the percentile's
    order-statistic bound (:func:`~inferwatch_alerts.guards.quantile_bound`) is compared. ``clear``: the level
    the point value must be back on the good side of before a firing alert counts as clear (hysteresis; default:
    the threshold itself).
    """

    op: str
    value: float
    confidence: float | None = None
    min_events: int = 0
    clear: float | None = None

    @property
    def guarded(self) -> bool:
        return self.confidence is not None or self.min_events > 0

    @property
    def clear_level(self) -> float:
        return self.value if self.clear is None else self.clear

    @property
    def history_days(self) -> int:
        return 0  # judged on the window alone: no history to learn

    def describe(self, signal: Signal) -> str:
        text = f"{self.op} {format_value(signal, self.value)}"
        if self.confidence is not None:
            text += f" with {self.confidence:.0%} confidence"
        return text


@dataclass(frozen=True)
class Sustain:
    """``for: {breaching: 7m, of: 10m}``: at least ``breaching`` of the last ``of`` one-minute buckets breach the
    threshold on their own data (a bucket with no data does not breach). ``confidence``: a guarded threshold's
    buckets are judged by their bound at this confidence instead of the threshold's (see :meth:`false_rate`)."""

    breaching: int
    of: int
    confidence: float | None = None

    def false_rate(self, bucket_confidence: float) -> float:
        """The chance that ``breaching`` of ``of`` buckets breach while the true value sits at the threshold, each
        bucket (disjoint calls) breaching with at most ``1 - bucket_confidence``: the binomial tail. Why a bucket
        may use a lower confidence than the window: 4 of 5 buckets at 80% each make a false run 0.7% likely, a
        stronger claim than one bound at 95%, while a bucket of a minute's calls has a bound ~2x wider."""
        p = 1.0 - bucket_confidence
        return sum(math.comb(self.of, i) * p ** i * (1.0 - p) ** (self.of - i)
                   for i in range(self.breaching, self.of + 1))


@dataclass(frozen=True)
class BaselineSpec:
    """``value op factor * baseline``. The baseline is the same signal over ``lookback`` before the window
    (``daily_average``), the mean of the same window on each of ``days`` previous days (``same_hour``), or the
    median of the same window on each of ``days`` previous days and ``weeks`` previous weeks, with the series'
    daily mean as fallback when fewer than ``min_days`` of those windows have data (``seasonal``).

    ``min_days``: days of history the series needs before the rule judges it at all (it is *learning* until
    then): same-hour windows with data for ``same_hour`` and ``seasonal``, days since its first call otherwise.
    """

    kind: Literal["daily_average", "same_hour", "seasonal"]
    factor: float = 2.0
    op: str = ">"
    lookback_s: int = 86400
    days: int = 7
    min_value: float = 0.0
    weeks: int = 0
    min_days: int = 3

    @property
    def offsets(self) -> tuple[int, ...]:
        """The earlier days (1 = yesterday) whose same window makes the baseline (same_hour, seasonal)."""
        return tuple(sorted({*range(1, self.days + 1), *(7 * w for w in range(1, self.weeks + 1))}))

    @property
    def history_days(self) -> int:
        return self.min_days

    def describe(self, signal: Signal) -> str:
        what = {"daily_average": "the trailing daily average",
                "same_hour": f"the same window on the previous {self.days} days",
                "seasonal": f"the median of the same window on the previous {self.days} days"
                + (f" and {self.weeks} weeks" if self.weeks else "")}[self.kind]
        return f"{self.op} {self.factor:g}x {what}"


@dataclass(frozen=True)
class DetectorSpec:
    kind: Literal["proportion_spike", "length_shift", "percentile_creep"]
    params: Mapping[str, float]

    @property
    def history_days(self) -> int:
        """Days of history a series needs before the detector judges it (it is *learning* until then)."""
        p = self.params
        if self.kind == "percentile_creep":
            return int(p["monitor_days"] + p["min_reference"])
        return int(p["min_baseline_days"])

    def describe(self, signal: Signal) -> str:
        return {"proportion_spike": "significantly above its baseline days",
                "length_shift": "distribution shifted from its baseline days",
                "percentile_creep": "creeping up against its reference days"}[self.kind]


Condition = Threshold | BaselineSpec | DetectorSpec


@dataclass(frozen=True)
class Rule:
    id: str
    signal: Signal
    condition: Condition
    severity: Literal["critical", "warning", "info"]
    group_by: tuple[str, ...] = ("project",)
    window_s: int = 300
    every_s: int = 60
    for_s: int = 0
    sustain: Sustain | None = None
    resolve_after_s: int = 0
    min_requests: int = 0
    renotify_s: int | None = None
    no_data: NoDataPolicy = "keep"
    title: str = ""
    description: str = ""
    channels: tuple[str, ...] | None = None
    projects: tuple[str, ...] | None = None
    line: int = 0

    @property
    def policy(self) -> Policy:
        return Policy(for_s=self.for_s, renotify_s=self.renotify_s, no_data=self.no_data,
                      no_data_grace_s=max(self.for_s, self.window_s), resolve_after_s=self.resolve_after_s)

    @property
    def headline(self) -> str:
        return self.title or f"{self.signal.name} {self.condition.describe(self.signal)}"

    def to_json(self, routing: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        cond = self.condition
        condition: dict[str, Any] = {"type": type(cond).__name__.removesuffix("Spec").lower()}
        if isinstance(cond, Threshold):
            condition |= {"op": cond.op, "value": cond.value, "confidence": cond.confidence,
                          "min_events": cond.min_events, "clear": cond.clear}
        elif isinstance(cond, BaselineSpec):
            condition |= {"kind": cond.kind, "factor": cond.factor, "op": cond.op, "lookback_s": cond.lookback_s,
                          "days": cond.days, "weeks": cond.weeks, "min_days": cond.min_days,
                          "min_value": cond.min_value}
        else:
            condition |= {"kind": cond.kind, **cond.params}
        return {"id": self.id, "title": self.headline, "description": self.description,
                "signal": self.signal.name, "unit": self.signal.unit, "group_by": list(self.group_by),
                "window_s": self.window_s, "every_s": self.every_s, "for_s": self.for_s,
                "sustain": ({"breaching": self.sustain.breaching, "of": self.sustain.of,
                             **({"confidence": self.sustain.confidence} if self.sustain.confidence else {})}
                            if self.sustain else None),
                "resolve_after_s": self.resolve_after_s,
                "min_requests": self.min_requests, "severity": self.severity, "condition": condition,
                "history_days": cond.history_days,
                "renotify_s": self.renotify_s, "no_data": self.no_data,
                "channels": list(self.channels_for(routing)), "projects": list(self.projects or [])}

    def channels_for(self, routing: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
        return tuple(self.channels if self.channels is not None else routing.get(self.severity, ()))


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    channels: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    routing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    evaluation_offset_s: int = 60
    dashboard_url: str | None = None
    source: str = "<defaults>"
    channel_lines: Mapping[str, int] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def channels_of(self, rule: Rule) -> tuple[str, ...]:
        return rule.channels_for(self.routing)


def format_value(signal: Signal, value: float | None) -> str:
    """A value in the signal's unit, as a person reads it (2.35 s, 1.20%, $4.10/h)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if signal.unit == "ms":
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
    if signal.unit == "ratio":
        return f"{value:.2%}"
    if signal.unit == "USD/h":
        return f"${value:,.2f}/h"
    return f"{value:,.1f} {signal.unit}"


def iter_rules(ruleset: RuleSet, project: str | None = None) -> Iterator[Rule]:
    """The rules that apply to ``project`` (every rule when None)."""
    for rule in ruleset.rules:
        if project is None or rule.projects is None or project in rule.projects:
            yield rule
