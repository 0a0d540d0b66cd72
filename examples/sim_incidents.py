"""Planted incidents and harmless blips, with their ground truth: what changed, when, where, which signal a
good alert shows it on, and how late that alert may come. Pure.

A :class:`Planted` changes the calls of its ``scope`` (a model or a feature) between ``start`` and ``end``: a
rate set to a value (``error``, ``refusal``, ``truncation``, ``tool_failure``), the TTFT or output length
multiplied, the model's volume multiplied, or a creep (TTFT x ``(1 + per_day)`` per day since ``start``).
``max_delay`` is the issue's target; ``None`` marks a blip that must never alert (:attr:`Planted.is_blip`).
:func:`incident_library` is the week of issue 30: eight incidents and two blips, at fixed times of a week.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

# the signals (inferwatch_alerts.signals names) an alert may show each kind of incident on
SIGNAL_FAMILIES: dict[str, frozenset[str]] = {
    "error": frozenset({"error_rate"}),
    "ttft": frozenset({f"ttft_p{q}" for q in (50, 90, 95, 99)} | {f"latency_p{q}" for q in (50, 90, 95, 99)}),
    "cost": frozenset({"cost_per_hour", "request_rate", "input_tokens_per_min", "output_tokens_per_min",
                       "tokens_per_min"}),
    "refusal": frozenset({"refusal_rate"}),
    "truncation": frozenset({"truncated_rate"}),
    "tool_failure": frozenset({"tool_failure_rate"}),
    "length": frozenset({"output_tokens_per_call", "output_tokens_per_min", "tokens_per_min"}),
}

Effect = Literal["rate", "ttft", "output", "volume", "creep"]


@dataclass(frozen=True)
class Planted:
    """One planted change and its ground truth."""

    name: str  # unique in a scenario, e.g. "error-burst"
    family: str  # a key of SIGNAL_FAMILIES: what a detecting alert watches
    effect: Effect
    start: datetime
    end: datetime
    value: float  # the rate (effect "rate"), the factor ("ttft", "output", "volume"), or per-day growth ("creep")
    model: str = ""  # scope: a model name, or
    feature: str = ""  # a feature name
    rate_kind: str = ""  # for effect "rate": error | refusal | truncation | tool_failure
    max_delay: timedelta | None = None  # None: a blip, which must never alert

    @property
    def is_blip(self) -> bool:
        return self.max_delay is None

    def applies(self, at: datetime, model: str, feature: str) -> bool:
        """Whether a call of ``model``/``feature`` starting at ``at`` is affected."""
        if not (self.start <= at < self.end):
            return False
        return (not self.model or self.model == model) and (not self.feature or self.feature == feature)

    def factor_at(self, at: datetime) -> float:
        """The multiplier at ``at`` (for ttft/output/volume; for a creep, growth compounded per day)."""
        if self.effect == "creep":
            return (1 + self.value) ** ((at - self.start).total_seconds() / 86400)
        return self.value

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "family": self.family, "effect": self.effect, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "value": self.value, "model": self.model, "feature": self.feature,
                "max_delay_s": None if self.max_delay is None else int(self.max_delay.total_seconds())}


def incident_library(week_start: datetime, days: int = 7) -> tuple[Planted, ...]:
    """Issue 30's incidents and blips placed in the week from ``week_start`` (a UTC midnight), by day and hour.

    Daytime placements (volume is ~0.1x at night: a 2-minute blip at 04:00 would hold no calls at 1 call/s).
    The creep runs from day 1 to the end of the week (``days``).
    """
    def at(day: int, hour: float) -> datetime:
        return week_start + timedelta(days=day, hours=hour)

    m, h = timedelta(minutes=1), timedelta(hours=1)
    return (
        Planted("error-burst", "error", "rate", at(0, 14 + 10 / 60), at(0, 14.5), 0.05, model="gpt-4o-mini",
                rate_kind="error", max_delay=10 * m),
        Planted("ttft-regression", "ttft", "ttft", at(1, 15), at(1, 15.5), 3.5, model="gpt-4o-mini",
                max_delay=10 * m),
        Planted("cost-spike", "cost", "volume", at(2, 14), at(2, 16), 5.0, model="claude-sonnet-4-5",
                max_delay=30 * m),
        Planted("refusal-spike", "refusal", "rate", at(3, 9), at(3, 11), 0.12, feature="support",
                rate_kind="refusal", max_delay=2 * h),
        Planted("tool-failure-spike", "tool_failure", "rate", at(4, 10), at(4, 12), 0.30, feature="extract",
                rate_kind="tool_failure", max_delay=2 * h),
        Planted("truncation-spike", "truncation", "rate", at(4, 14), at(4, 16), 0.10, model="gpt-4o-mini",
                rate_kind="truncation", max_delay=2 * h),
        Planted("length-collapse", "length", "output", at(5, 12), at(5, 16), 0.3, model="gemini-2.5-flash",
                max_delay=3 * h),
        Planted("ttft-creep", "ttft", "creep", at(1, 0), at(days, 0), 0.09, model="claude-sonnet-4-5",
                max_delay=timedelta(days=4)),
        Planted("error-blip", "error", "rate", at(1, 11), at(1, 11) + 2 * m, 0.20, model="gpt-4o-mini",
                rate_kind="error"),
        Planted("ttft-blip", "ttft", "ttft", at(3, 15.5), at(3, 15.5) + 2 * m, 4.0, model="gpt-4o-mini"),
    )


def blip_library(week_start: datetime) -> tuple[Planted, ...]:
    """Only the harmless blips of :func:`incident_library` (a short scenario's "must stay quiet" part)."""
    return tuple(p for p in incident_library(week_start) if p.is_blip)
