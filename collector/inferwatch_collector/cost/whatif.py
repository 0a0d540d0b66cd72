"""What-if repricing: a period's observed traffic priced under another model mix or a cascade.

Why token sums are enough: a call's cost is linear in its token counts within one rate tier (the formula of
:mod:`.call_cost`), so the sum of many calls' costs at some model's rates is that formula applied to their token
sums. The traffic is read from ``cost_1d`` (token sums per provider, model, feature and prompt template) and
priced with the current price table, both as observed (the *baseline*) and under the scenario, so the delta is
the scenario's alone, not a price change's. The observed (stored) cost is returned beside it: the two agree when
the traffic was priced with the same table.

Two kinds of call do not fit "same rates for every call of a group", and ``cost_1d`` cannot tell them apart:

* **Long-context tiers.** Above 128k/200k/256k/272k prompt tokens some models charge other rates for the whole
  call (Claude Sonnet 4, Gemini 2.5 Pro above 200k). A call's tier depends on its own prompt size, which a sum
  has lost. These calls are read from ``llm_calls`` instead (``input_tokens`` above the lowest threshold: few
  calls, and the raw table's (project, hour) key keeps the read to the period), grouped by *band* (the highest
  threshold the prompt exceeds), subtracted from the ``cost_1d`` sums and priced at each model's rates for their
  band (``rates_for(band + 1)``: every table tier sits on one of those thresholds, so a band maps to one tier of
  every model). The prompt size is the call's own, so a moved call lands in the target model's matching tier.
* **Calls no provider charged**: answered from the application's cache (``cache_hit``; their tokens are those
  of the answer they reused) or without usage (``usage_missing``). They are read and subtracted the same way and
  cost 0 in the baseline and in every scenario; ``excluded_calls`` counts them.

Result: exact for every day still in ``llm_calls`` (retention, 90 days by default), up to the rounding of GPU-hour
rates, which ingest rounds per call to 1e-12 USD. For older days the raw calls are gone; their sums are priced as
base-tier, charged calls and the result says ``approximate`` with a note.

Scenario rules, each scoped by any of ``provider``, ``model`` (a snapshot name matches its priced model),
``feature`` and ``prompt_template`` (none: all traffic). Each traffic group follows the first rule that matches
it, ``mix`` rules before ``cascade`` rules, in the order given:

* ``mix``: ``{"feature": "simple", "share": 0.7, "to_model": "gpt-4o-mini"}`` moves 70% of those calls (their
  tokens) to ``gpt-4o-mini``'s prices; the rest stay: cost = (1 − share) × original + share × target.
* ``cascade``: ``{"feature": "simple", "cheap_model": "gpt-4o-mini", "escalation_rate": 0.2}`` sends every call
  to the cheap model first and the escalated share to the original model as well: cost = cheap (all calls) +
  rate × original. Calls already on the cheap model are left as they are.

Assumptions, stated because they matter: a moved call has the same token counts on the new model (tokenizers
and verbosity differ) and the same cache reads and writes (whether the target's cache would hit is unknown).
Calls of a model the current table cannot price are left out of baseline and scenario and counted in
``unpriced_calls``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from .reports import PERIODS, Period, ReportError, parse_day, period_bounds
from .price_table import TIER_THRESHOLDS, PriceTable, Rates
from ..store import Store

SCOPE_FIELDS = ("provider", "model", "feature", "prompt_template")
#: Long-context thresholds, highest first: a call's band is the first one its prompt exceeds (0: none).
BANDS: tuple[int, ...] = tuple(sorted(TIER_THRESHOLDS.values(), reverse=True))
_REQUEST_FIELDS = ("period", "date", "mix", "cascade")
_MIX_FIELDS = (*SCOPE_FIELDS, "share", "to_model")
_CASCADE_FIELDS = (*SCOPE_FIELDS, "cheap_model", "escalation_rate")
_ATTO = 10**18


class WhatIfError(ValueError):
    """A scenario that cannot be priced; ``field`` names the offending field (``mix[0].share``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


# --------------------------------------------------------------------------------------------------- scenario


@dataclass(frozen=True)
class Scope:
    """Which traffic a rule applies to; None matches everything. ``model_priced`` is the table's name for
    ``model`` (so ``gpt-4o`` also matches calls stored as ``gpt-4o-2024-08-06``)."""

    provider: str | None = None
    model: str | None = None
    feature: str | None = None
    prompt_template: str | None = None
    model_priced: str | None = None

    def matches(self, group: TrafficGroup, priced_name: str | None) -> bool:
        if self.provider is not None and group.provider != self.provider:
            return False
        if self.feature is not None and group.feature != self.feature:
            return False
        if self.prompt_template is not None and group.prompt_template != self.prompt_template:
            return False
        if self.model is not None and group.model != self.model:
            return self.model_priced is not None and self.model_priced == priced_name
        return True


@dataclass(frozen=True)
class MixRule:
    """Move ``share`` of the scope's calls to ``to_model`` (the price table's name)."""

    scope: Scope
    share: float
    to_model: str


@dataclass(frozen=True)
class CascadeRule:
    """Send the scope's calls to ``cheap_model`` first, escalating ``escalation_rate`` of them to their model."""

    scope: Scope
    cheap_model: str
    escalation_rate: float


@dataclass(frozen=True)
class Scenario:
    """The rules to apply; a group follows the first that matches (mix rules first)."""

    mix: tuple[MixRule, ...] = ()
    cascade: tuple[CascadeRule, ...] = ()

    def rules(self) -> list[tuple[str, MixRule | CascadeRule]]:
        """(name, rule) in the order they are tried; the name is the request field (``mix[0]``)."""
        return ([(f"mix[{i}]", rule) for i, rule in enumerate(self.mix)]
                + [(f"cascade[{i}]", rule) for i, rule in enumerate(self.cascade)])


def _fraction(item: Mapping[str, Any], name: str, where: str) -> float:
    if name not in item:
        raise WhatIfError(f"{where}.{name}", "is required (a number from 0 to 1)")
    value = item[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WhatIfError(f"{where}.{name}", f"must be a number from 0 to 1, got {value!r}")
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise WhatIfError(f"{where}.{name}", f"must be between 0 and 1, got {value!r}")
    return float(value)


def _priced_model(item: Mapping[str, Any], name: str, where: str, table: PriceTable) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not value.strip():
        raise WhatIfError(f"{where}.{name}", "is required (a model name from the price table)")
    resolved = table.resolve(value)
    if resolved is None:
        raise WhatIfError(f"{where}.{name}", f"model {value!r} is not in the price table (price_version "
                                             f"{table.version}); add it with a price file")
    return resolved


def _scope(item: Mapping[str, Any], where: str, table: PriceTable) -> Scope:
    values: dict[str, str | None] = {}
    for name in SCOPE_FIELDS:
        value = item.get(name)
        if value is not None and (not isinstance(value, str) or not value):
            raise WhatIfError(f"{where}.{name}", f"must be a non-empty string, got {value!r}")
        values[name] = value
    model = values["model"]
    return Scope(**values, model_priced=table.resolve(model) if model else None)


def _rules(doc: Mapping[str, Any], name: str, allowed: Sequence[str]) -> list[tuple[str, Mapping[str, Any]]]:
    items = doc.get(name)
    if items is None:
        return []
    if isinstance(items, Mapping):
        items = [items]
    if not isinstance(items, list):
        raise WhatIfError(name, "must be a list of rules")
    out = []
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if not isinstance(item, Mapping):
            raise WhatIfError(where, "must be an object")
        unknown = sorted(set(item) - set(allowed))
        if unknown:
            raise WhatIfError(f"{where}.{unknown[0]}", f"is not a field (expected {', '.join(allowed)})")
        out.append((where, item))
    return out


def parse_scenario(doc: Any, table: PriceTable) -> Scenario:
    """A :class:`Scenario` from a request body's ``mix`` and ``cascade`` (each a rule or a list of rules), checked
    against ``table``; :class:`WhatIfError` names the bad field. Other top-level fields are the caller's."""
    if not isinstance(doc, Mapping):
        raise WhatIfError("body", "must be a JSON object")
    mix = tuple(MixRule(_scope(item, where, table), _fraction(item, "share", where),
                        _priced_model(item, "to_model", where, table))
                for where, item in _rules(doc, "mix", _MIX_FIELDS))
    cascade = tuple(CascadeRule(_scope(item, where, table), _priced_model(item, "cheap_model", where, table),
                                _fraction(item, "escalation_rate", where))
                    for where, item in _rules(doc, "cascade", _CASCADE_FIELDS))
    return Scenario(mix, cascade)


def parse_request(doc: Any, table: PriceTable, today: date) -> tuple[Period, Scenario]:
    """The period (``period``: day or month, default month; ``date``: default today) and scenario of a what-if
    request body; unknown fields are refused so a typo is not silently ignored."""
    if not isinstance(doc, Mapping):
        raise WhatIfError("body", "must be a JSON object")
    unknown = sorted(set(doc) - set(_REQUEST_FIELDS))
    if unknown:
        raise WhatIfError(unknown[0], f"is not a field (expected {', '.join(_REQUEST_FIELDS)})")
    kind = doc.get("period", "month")
    if kind not in PERIODS:
        raise WhatIfError("period", f"must be one of {', '.join(PERIODS)}, got {kind!r}")
    text = doc.get("date")
    if text is not None and not isinstance(text, str):
        raise WhatIfError("date", f"must be a day as YYYY-MM-DD, got {text!r}")
    try:
        day = parse_day(text, today)
    except ReportError as exc:
        raise WhatIfError("date", str(exc).removeprefix("date ")) from None
    return period_bounds(kind, day), parse_scenario(doc, table)


# --------------------------------------------------------------------------------------------------- traffic

_TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                  "cache_write_1h_tokens", "reasoning_tokens")


@dataclass(frozen=True)
class Tokens:
    """Calls and token sums (OTel convention: input includes cache reads and writes, output includes reasoning)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0

    def minus(self, other: Tokens) -> Tokens:
        return Tokens(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def plus(self, other: Tokens) -> Tokens:
        return Tokens(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def negative(self) -> bool:
        return any(getattr(self, f.name) < 0 for f in fields(self))

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Tokens:
        return cls(int(row["calls"]), *(int(row[name]) for name in _TOKEN_COLUMNS))


@dataclass(frozen=True)
class TrafficGroup:
    """Charged calls of one provider, model, feature and template whose prompts fall in one band."""

    provider: str
    model: str
    feature: str
    prompt_template: str
    band: int  # 0: at most the lowest long-context threshold; else the highest threshold exceeded
    tokens: Tokens


@dataclass(frozen=True)
class Traffic:
    """A period's charged traffic, and what the rollup says it cost."""

    groups: tuple[TrafficGroup, ...]
    observed_cost_usd: float
    observed_price_versions: tuple[str, ...]
    excluded_calls: int
    approximate: bool = False
    notes: tuple[str, ...] = ()


def split_traffic(rollup: Sequence[Mapping[str, Any]], raw: Sequence[Mapping[str, Any]], *,
                  raw_complete: bool) -> Traffic:
    """Pure: ``cost_1d`` sums per (provider, model, feature, prompt_template) minus the raw calls that need
    their own pricing (``raw``: rows per key, ``band`` and ``excluded``), as priced groups. ``raw_complete``
    False (part of the period is past the raw table's retention) marks the result approximate."""
    def key_of(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
        return str(row["provider"]), str(row["model"]), str(row["feature"]), str(row["prompt_template"])

    special: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for row in raw:
        special.setdefault(key_of(row), []).append(row)
    groups: list[TrafficGroup] = []
    notes: list[str] = []
    approximate = not raw_complete
    excluded = 0
    observed = 0.0
    versions: set[str] = set()
    for row in rollup:
        key = key_of(row)
        observed += float(row["cost_usd"])
        versions.update(row["price_versions"])
        base = Tokens.of(row)
        if not raw_complete:
            excluded += int(row["cache_hits"]) + int(row["usage_missing"])
        for item in special.pop(key, []):
            tokens = Tokens.of(item)
            base = base.minus(tokens)
            if item["excluded"]:
                if raw_complete:  # else the rollup's counts above cover them
                    excluded += tokens.calls
            else:
                groups.append(TrafficGroup(*key, int(item["band"]), tokens))
        if base.negative:
            approximate = True
            notes.append(f"rollup and raw calls disagree for {'/'.join(key)}; its remainder was dropped")
            continue
        if base.calls:
            groups.append(TrafficGroup(*key, 0, base))
    if special:
        approximate = True
        notes.append(f"{len(special)} groups of raw calls have no rollup rows (inserted while reading?)")
    if not raw_complete:
        notes.append("part of the period is older than the raw calls' retention: its long-context calls are "
                     "priced at base rates and its app-cache hits and usage-missing calls as charged")
    return Traffic(tuple(groups), observed, tuple(sorted(versions)), excluded, approximate, tuple(notes))


def load_traffic(store: Store, project_id: str, period: Period, *, oldest_raw_day: date) -> Traffic:
    """The period's traffic: one ``cost_1d`` scan, plus the long-context, app-cache and usage-missing calls from
    ``llm_calls`` (raw calls from ``oldest_raw_day`` on exist; see the module docstring)."""
    summed = ("calls", *_TOKEN_COLUMNS, "cost_usd", "cache_hits", "usage_missing")
    # Grouped by price version inside, so the by_dims projection of cost_1d (migration 0003) answers it.
    rollup = store.query(
        f"""SELECT provider, model, feature, prompt_template,
                {", ".join(f"sum(s_{name}) AS {name}" for name in summed)},
                groupUniqArray(version) AS price_versions
            FROM (
                SELECT src.provider AS provider, src.model AS model, src.feature AS feature,
                    src.prompt_template AS prompt_template, src.price_version AS version,
                    {", ".join(f"sum(src.{name}) AS s_{name}" for name in summed)}
                FROM {store.table('cost_1d')} AS src
                WHERE src.project_id = {{p:String}} AND src.day >= {{start:Date}} AND src.day <= {{end:Date}}
                GROUP BY provider, model, feature, prompt_template, version)
            GROUP BY provider, model, feature, prompt_template""",
        {"p": project_id, "start": period.start, "end": period.end})
    raw_sums = ", ".join(f"sum(toUInt64(src.{name})) AS {name}" for name in _TOKEN_COLUMNS)
    raw = store.query(
        f"""SELECT src.provider AS provider, src.model AS model, src.feature AS feature,
                src.prompt_template AS prompt_template,
                arrayFirst(t -> src.input_tokens > t, {{bands:Array(UInt32)}}) AS band,
                (src.cache_hit OR src.usage_missing) AS excluded, count() AS calls, {raw_sums}
            FROM {store.table('llm_calls')} AS src
            WHERE src.project_id = {{p:String}} AND src.start_time >= {{s:DateTime64(6, 'UTC')}}
              AND src.start_time < {{e:DateTime64(6, 'UTC')}}
              AND (src.cache_hit OR src.usage_missing OR src.input_tokens > {{lowest:UInt32}})
            GROUP BY provider, model, feature, prompt_template, band, excluded""",
        {"p": project_id, "bands": list(BANDS), "lowest": min(BANDS),
         "s": datetime.combine(period.start, time(), UTC),
         "e": datetime.combine(period.end + timedelta(days=1), time(), UTC)})
    return split_traffic(_dicts(rollup), _dicts(raw), raw_complete=period.start >= oldest_raw_day)


def _dicts(result: Any) -> list[dict[str, Any]]:
    return [dict(zip(result.column_names, row)) for row in result.result_rows]


# --------------------------------------------------------------------------------------------------- pricing


def cost_of(rates: Rates, tokens: Tokens) -> float:
    """USD for token sums at ``rates`` (:mod:`.call_cost`'s formula on sums; exact integers until the one
    division)."""
    t = tokens
    amount = (max(t.input_tokens - t.cache_read_tokens - t.cache_write_tokens, 0) * rates.input
              + t.cache_read_tokens * rates.cache_read
              + (t.cache_write_tokens - t.cache_write_1h_tokens) * rates.cache_write
              + t.cache_write_1h_tokens * rates.cache_write_1h
              + max(t.output_tokens - t.reasoning_tokens, 0) * rates.output
              + t.reasoning_tokens * rates.reasoning)
    return amount * rates.unit / _ATTO


@dataclass
class ModelCost:
    """One model's calls and cost in the baseline and in the scenario (calls are fractional under shares)."""

    model: str
    baseline_calls: float = 0.0
    baseline_cost_usd: float = 0.0
    scenario_calls: float = 0.0
    scenario_cost_usd: float = 0.0


@dataclass
class RuleEffect:
    """What one rule matched and what that traffic costs before and after it."""

    rule: str
    matched_calls: int = 0
    baseline_cost_usd: float = 0.0
    scenario_cost_usd: float = 0.0


@dataclass(frozen=True)
class WhatIfResult:
    """Baseline and scenario cost of a period's traffic under one price table."""

    project_id: str
    period: Period
    price_version: str
    observed_cost_usd: float
    observed_price_versions: tuple[str, ...]
    baseline_cost_usd: float
    scenario_cost_usd: float
    models: tuple[ModelCost, ...]
    rules: tuple[RuleEffect, ...]
    unpriced_calls: int
    unpriced_models: tuple[str, ...]
    excluded_calls: int
    approximate: bool
    notes: tuple[str, ...]

    @property
    def delta_usd(self) -> float:
        return self.scenario_cost_usd - self.baseline_cost_usd

    @property
    def delta_pct(self) -> float | None:
        return self.delta_usd / self.baseline_cost_usd if self.baseline_cost_usd > 0 else None

    def to_dict(self) -> dict[str, Any]:
        p = self.period
        return {
            "project_id": self.project_id, "period": p.kind, "start": p.start.isoformat(),
            "end": p.end.isoformat(),
            "price_version": self.price_version, "observed_cost_usd": self.observed_cost_usd,
            "observed_price_versions": list(self.observed_price_versions),
            "baseline_cost_usd": self.baseline_cost_usd, "scenario_cost_usd": self.scenario_cost_usd,
            "delta_usd": self.delta_usd, "delta_pct": self.delta_pct,
            "models": [vars(m) for m in self.models], "rules": [vars(r) for r in self.rules],
            "unpriced_calls": self.unpriced_calls, "unpriced_models": list(self.unpriced_models),
            "excluded_calls": self.excluded_calls, "approximate": self.approximate, "notes": list(self.notes),
        }


def reprice(project_id: str, period: Period, traffic: Traffic, scenario: Scenario, table: PriceTable
            ) -> WhatIfResult:
    """Pure: price ``traffic`` as observed and under ``scenario`` with ``table`` (see the module docstring)."""
    models: dict[str, ModelCost] = {}
    effects = {name: RuleEffect(name) for name, _ in scenario.rules()}
    rules = scenario.rules()
    unpriced: dict[str, int] = {}
    baseline_total: list[float] = []
    scenario_total: list[float] = []

    def book(model: str, calls: float, cost: float, baseline: bool) -> None:
        entry = models.setdefault(model, ModelCost(model))
        if baseline:
            entry.baseline_calls += calls
            entry.baseline_cost_usd += cost
        else:
            entry.scenario_calls += calls
            entry.scenario_cost_usd += cost
            scenario_total.append(cost)

    for group in traffic.groups:
        price = table.lookup(group.model)
        if price is None:
            unpriced[group.model] = unpriced.get(group.model, 0) + group.tokens.calls
            continue
        prompt = group.band + 1
        base = cost_of(price.rates_for(prompt), group.tokens)
        calls = group.tokens.calls
        book(price.name, calls, base, baseline=True)
        baseline_total.append(base)
        matched = None
        for name, rule in rules:
            if not rule.scope.matches(group, price.name):
                continue
            if isinstance(rule, CascadeRule) and rule.cheap_model == price.name:
                continue  # already on the cheap model: nothing to cascade
            matched = (name, rule)
            break
        if matched is None:
            book(price.name, calls, base, baseline=False)
            continue
        name, rule = matched
        effect = effects[name]
        effect.matched_calls += calls
        effect.baseline_cost_usd += base
        before = len(scenario_total)
        if isinstance(rule, MixRule):
            moved = cost_of(table.models[rule.to_model].rates_for(prompt), group.tokens)
            book(price.name, calls * (1 - rule.share), base * (1 - rule.share), baseline=False)
            book(rule.to_model, calls * rule.share, moved * rule.share, baseline=False)
        else:
            cheap = cost_of(table.models[rule.cheap_model].rates_for(prompt), group.tokens)
            book(rule.cheap_model, calls, cheap, baseline=False)
            book(price.name, calls * rule.escalation_rate, base * rule.escalation_rate, baseline=False)
        effect.scenario_cost_usd += math.fsum(scenario_total[before:])
    ordered = sorted(models.values(), key=lambda m: (-max(m.baseline_cost_usd, m.scenario_cost_usd), m.model))
    return WhatIfResult(
        project_id, period, table.version, traffic.observed_cost_usd, traffic.observed_price_versions,
        math.fsum(baseline_total), math.fsum(scenario_total), tuple(ordered), tuple(effects.values()),
        sum(unpriced.values()), tuple(sorted(unpriced)), traffic.excluded_calls, traffic.approximate,
        traffic.notes)


def run_whatif(store: Store, project_id: str, request: Any, table: PriceTable, *, now: datetime | None = None,
               retention_days: int = 90) -> WhatIfResult:
    """Parse a what-if request body (:func:`parse_request`), read the period's traffic and reprice it.
    ``retention_days`` is ``llm_calls``' retention (settings), which decides whether the result is exact."""
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    period, scenario = parse_request(request, table, today)
    traffic = load_traffic(store, project_id, period, oldest_raw_day=today - timedelta(days=retention_days - 1))
    return reprice(project_id, period, traffic, scenario, table)
