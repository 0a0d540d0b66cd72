"""Scenario -> LLM calls: :class:`CallGenerator` makes the calls that start in each minute of a
:class:`~examples.sim_scenario.Scenario`, with the planted incidents applied. Pure and reproducible: a minute's
calls depend only on the scenario, the planted list and the minute (its own seeded random source), so any
stretch can be regenerated alone.

Per minute: a Poisson number of calls at the scenario's seasonal rate (plus a model's extra volume while a
volume incident runs), each given a feature and a model by their shares, that day's rates for that model and
feature (base x gamma day factors), then the incidents' overrides; the call itself comes from
:class:`~examples.traffic_model.TrafficModel` (its tokens, latencies, finish reasons, tool calls), so the
spans are the demo traffic's, encoded by :func:`examples.traffic_otlp.encode_calls`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta

from .sim_incidents import Planted
from .sim_scenario import BASE_RATES, EMPTY_RATE, Scenario
from .traffic_model import LlmCall, TrafficModel, shift_call

MINUTE = timedelta(minutes=1)
_NS = 1_000_000_000


class CallGenerator:
    """The calls of ``scenario`` with ``planted`` applied, minute by minute."""

    def __init__(self, scenario: Scenario, planted: Sequence[Planted] = (), *, with_content: bool = False):
        self.scenario = scenario
        self.planted = tuple(planted)
        self.with_content = with_content
        self.model = TrafficModel(seed=scenario.seed, models=scenario.models, features=scenario.features,
                                  empty_rate=EMPTY_RATE, embeddings=False,
                                  n_users=scenario.n_users)
        self._model_share = {m.name: m.weight / sum(x.weight for x in scenario.models) for m in scenario.models}

    def minutes(self, start: datetime | None = None, end: datetime | None = None) -> Iterator[datetime]:
        """Every minute start in ``[start, end)`` (default: the scenario's span)."""
        t = start or self.scenario.start
        end = end or self.scenario.end
        while t < end:
            yield t
            t += MINUTE

    def minute(self, at: datetime) -> list[LlmCall]:
        """The calls starting in ``[at, at + 1 min)``, in time order, with absolute times (ns since the epoch)."""
        sc, tm = self.scenario, self.model
        rng = tm.rng = random.Random(f"{sc.seed}/{int(at.timestamp()) // 60}")
        active = [p for p in self.planted if p.start <= at < p.end]
        lam = sc.rate_at(at + MINUTE / 2) * 60
        picks: list[int | None] = [None] * poisson(rng, lam)  # a model index: forced by a volume incident
        for p in active:
            if p.effect == "volume" and p.model:
                index = next(i for i, m in enumerate(tm.models) if m.name == p.model)
                extra = poisson(rng, lam * self._model_share[p.model] * (p.value - 1))
                picks += [index] * extra
        base_ns = int(at.timestamp()) * _NS
        offsets = sorted(int(rng.random() * 60 * _NS) for _ in picks)
        rng.shuffle(picks)
        calls: list[LlmCall] = []
        settings: dict[tuple[str, str], tuple[float, ...]] = {}
        for model_index, offset in zip(picks, offsets):
            feature = tm.features[tm._pick(tm._feature_cw)]
            model = tm.models[model_index if model_index is not None else tm._pick(tm._model_cw)]
            key = (model.name, feature.name)
            values = settings.get(key)
            if values is None:
                values = settings[key] = self._settings(at, model.name, feature.name, active)
            tm.error_rate, tm.refusal_rate, tm.truncation_rate, tm.tool_failure_rate, tm.ttft_factor, \
                tm.output_factor = values
            call = tm.next_call(feature, model, with_content=self.with_content)
            shift_call(call, base_ns + offset)
            calls.append(call)
        return calls

    def _settings(self, at: datetime, model: str, feature: str, active: Sequence[Planted]) -> tuple[float, ...]:
        """(error, refusal, truncation, tool_failure, ttft_factor, output_factor) for this model and feature."""
        sc = self.scenario
        rates = {kind: base * sc.day_factor(at, kind, "m:" + model) * sc.day_factor(at, kind, "f:" + feature)
                 for kind, base in BASE_RATES.items()}
        ttft = sc.day_factor(at, "ttft", "m:" + model)
        output = 1.0
        for p in active:
            if not p.applies(at, model, feature):
                continue
            if p.effect == "rate":
                rates[p.rate_kind] = p.value
            elif p.effect in ("ttft", "creep"):
                ttft *= p.factor_at(at)
            elif p.effect == "output":
                output *= p.value
        return (rates["error"], rates["refusal"], rates["truncation"], rates["tool_failure"], ttft, output)


def poisson(rng: random.Random, lam: float) -> int:
    """A Poisson draw (Knuth's method below 30, a rounded normal above)."""
    if lam <= 0:
        return 0
    if lam < 30:
        limit, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= rng.random()
            if p <= limit:
                return k
            k += 1
    return max(0, round(rng.gauss(lam, math.sqrt(lam))))


def expected_calls(scenario: Scenario, step: timedelta = timedelta(minutes=10)) -> float:
    """About how many calls ``scenario`` holds (without incidents): for progress lines and time estimates."""
    total, t = 0.0, scenario.start
    while t < scenario.end:
        total += scenario.rate_at(t + step / 2) * step.total_seconds()
        t += step
    return total
