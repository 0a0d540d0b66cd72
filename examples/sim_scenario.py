"""A simulated deployment's ordinary traffic: :class:`Scenario` (when, how long, how busy, which seed) and the
seasonality and day-to-day variation of its volume and rates. Pure: no I/O, every number from the seed.

Real LLM traffic is not a constant Poisson stream, and alert rules tuned on one page on real weeks:

- volume follows the day (night ~0.1x the daily mean, the afternoon peak ~1.9x) and the week (weekends ~0.75x);
- models and features carry different shares, one model is low-volume (5% of calls);
- a rate is not the same every day: each day's error/refusal/truncation/tool-failure rate of a model or a
  feature is its base rate times a gamma factor with mean 1 (coefficient of variation ``rate_cv``, default
  0.2 per model and per feature, ~0.28 combined), and each day's volume and TTFT move a little too.

:mod:`examples.sim_calls` turns a scenario into calls; :mod:`examples.sim_incidents` plants incidents in it.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from .traffic_model import DEFAULT_FEATURES, DEFAULT_MODELS, FeatureSpec, ModelSpec

RATE_KINDS = ("error", "refusal", "truncation", "tool_failure")
# base rates per call (tool failures: per tool call); empty responses stay at the demo's 0.3%
BASE_RATES: dict[str, float] = {"error": 0.003, "refusal": 0.01, "truncation": 0.015, "tool_failure": 0.03}
EMPTY_RATE = 0.003


def _model(name: str, weight: float, **changes: object) -> ModelSpec:
    return dataclasses.replace(next(m for m in DEFAULT_MODELS if m.name == name), weight=weight, **changes)


def _feature(base: str, weight: float, **changes: object) -> FeatureSpec:
    return dataclasses.replace(next(f for f in DEFAULT_FEATURES if f.name == base), weight=weight, **changes)


# Three busy models and a low-volume one; four features, one of them ("support") an agent with tools. Normal
# TTFT p95 stays well under the 2 s of the default rule (~0.7-1.5 s over 5 minutes): thinking is off, so a
# reasoning budget does not delay the first token.
SIM_MODELS: tuple[ModelSpec, ...] = (
    _model("gpt-4o-mini", 0.50),
    _model("claude-sonnet-4-5", 0.30, ttft_ms=850),
    _model("gemini-2.5-flash", 0.15, reasoning=False),
    _model("llama-3.1-70b", 0.05),
)
SIM_FEATURES: tuple[FeatureSpec, ...] = (
    _feature("search", 0.40, embeddings_share=0.0),
    _feature("chat", 0.30),
    _feature("agent", 0.18, name="support", route="/support", calls_per_trace=(1, 1)),
    _feature("extract", 0.12),
)


@dataclass(frozen=True)
class Scenario:
    """``days`` of traffic from ``start`` (UTC) averaging ``mean_rate`` LLM calls/s, reproducible from ``seed``."""

    start: datetime
    days: float
    mean_rate: float
    seed: int = 1
    models: tuple[ModelSpec, ...] = SIM_MODELS
    features: tuple[FeatureSpec, ...] = SIM_FEATURES
    rate_cv: float = 0.2  # day-to-day coefficient of variation of a rate, per model and per feature
    volume_cv: float = 0.08  # day-to-day variation of the volume
    ttft_day_sigma: float = 0.04  # day-to-day log-sd of a model's TTFT
    n_users: int = 400  # distinct users (Zipf-like activity); 40% of them are in the A/B experiment

    def __post_init__(self) -> None:
        if self.start.tzinfo is None:
            raise ValueError("start must be timezone-aware (UTC)")
        if self.days <= 0 or self.mean_rate <= 0:
            raise ValueError("days and mean_rate must be positive")

    @property
    def end(self) -> datetime:
        return self.start + timedelta(days=self.days)

    def day_index(self, at: datetime) -> int:
        """Whole days since the scenario's first midnight (UTC) at or before ``start``."""
        first = self.start.replace(hour=0, minute=0, second=0, microsecond=0)
        return (at - first).days

    def rate_at(self, at: datetime) -> float:
        """Expected LLM calls/s at ``at``: mean x diurnal x weekly x that day's volume factor."""
        hour = at.hour + at.minute / 60 + at.second / 3600
        return self.mean_rate * diurnal(hour) * weekly(at.weekday()) * self.day_factor(at, "volume")

    def day_factor(self, at: datetime, kind: str, scope: str = "") -> float:
        """That day's factor for a rate ``kind`` of a model or feature ``scope`` (mean 1), or for ``volume``/
        ``ttft``; the same on every call for the same arguments (seeded by scenario seed, day, kind, scope)."""
        return _day_factor(self.seed, self.day_index(at), kind, scope, self.rate_cv, self.volume_cv,
                           self.ttft_day_sigma)


def diurnal(hour: float) -> float:
    """Volume relative to the daily mean at ``hour`` (UTC, 0-24): 0.1 at 04:00, 1.9 at 16:00, mean 1."""
    return 0.1 + 1.8 * (1 - math.cos(2 * math.pi * (hour - 4) / 24)) / 2


def weekly(weekday: int) -> float:
    """Volume relative to the weekly mean on ``weekday`` (Monday 0): 1.1 on weekdays, 0.75 at weekends."""
    return 0.75 if weekday >= 5 else 1.1


@lru_cache(maxsize=65536)
def _day_factor(seed: int, day: int, kind: str, scope: str, rate_cv: float, volume_cv: float,
                ttft_sigma: float) -> float:
    rng = random.Random(f"{seed}/{day}/{kind}/{scope}")
    if kind == "volume":
        return math.exp(rng.gauss(-volume_cv ** 2 / 2, volume_cv))
    if kind == "ttft":
        return math.exp(rng.gauss(0.0, ttft_sigma))
    if rate_cv <= 0:
        return 1.0
    shape = 1 / rate_cv ** 2  # gamma with mean 1 and the given coefficient of variation
    return rng.gammavariate(shape, 1 / shape)


def midnight_days_ago(days: int, now: datetime | None = None) -> datetime:
    """UTC midnight ``days`` before today's (scenarios end at a midnight in the past, inside every retention)."""
    now = now or datetime.now(UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days)
