"""The cost report's figures: per-line sums, breakdowns, movers, the forecast, the report, its JSON and CSV.

Per line and in the totals: calls, errors, tokens by type, cost and its components; cost per successful call =
cost ÷ (calls − errors), so failed calls' cost is carried by the calls that succeeded; the cache hit ratio =
cache-read tokens ÷ input tokens (input includes cache reads, OTel convention); ``cache_savings_usd``, what the
provider's prompt caching saved against the uncached input price, beside the application-side cache (calls served
from the app's own cache: ``cache_hits`` and the ``cost_avoided_usd`` they would have cost). ``unpriced`` and
``usage_missing`` counts are always carried and shown: those calls cost 0 for a reason the reader must see. Each
line lists the price versions its costs come from; the report lists every version with its calls and cost. A
report whose period reaches today is ``partial``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from .periods import Period

#: Report dimension -> its ``cost_1d`` column. ``project`` is the whole project on one line.
DIMENSIONS: Mapping[str, str] = {
    "project": "project_id", "model": "model", "provider": "provider", "feature": "feature",
    "prompt_template": "prompt_template", "user": "user_hash",
}
DEFAULT_LINE_LIMIT = 500
DEFAULT_MOVERS = 5
OTHER_KEY = "(other)"


@dataclass(frozen=True)
class Metrics:
    """Sums over a set of calls, the columns of ``cost_1d`` (see the module docstring for the derived ratios)."""

    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    cost_input_usd: float = 0.0
    cost_cache_read_usd: float = 0.0
    cost_cache_write_usd: float = 0.0
    cost_output_usd: float = 0.0
    cost_reasoning_usd: float = 0.0
    cache_savings_usd: float = 0.0
    unpriced: int = 0
    usage_missing: int = 0
    cache_hits: int = 0
    cost_avoided_usd: float = 0.0

    @property
    def successful_calls(self) -> int:
        return self.calls - self.errors

    @property
    def cost_per_successful_call_usd(self) -> float | None:
        return self.cost_usd / self.successful_calls if self.successful_calls > 0 else None

    @property
    def cache_hit_ratio(self) -> float | None:
        """Share of input tokens read from the provider's prompt cache."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    @property
    def app_cache_hit_rate(self) -> float | None:
        """Share of calls answered from the application's own cache."""
        return self.cache_hits / self.calls if self.calls else None

    @property
    def total_savings_usd(self) -> float:
        """Provider prompt caching plus the application-side cache."""
        return self.cache_savings_usd + self.cost_avoided_usd

    @staticmethod
    def total(items: Sequence[Metrics]) -> Metrics:
        """Field-wise sums (floats with ``math.fsum``: the correctly rounded sum, whatever the order)."""
        values = {}
        for f in fields(Metrics):
            column = [getattr(item, f.name) for item in items]
            values[f.name] = math.fsum(column) if f.type == "float" else sum(column)
        return Metrics(**values)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(successful_calls=self.successful_calls,
                   cost_per_successful_call_usd=self.cost_per_successful_call_usd,
                   cache_hit_ratio=self.cache_hit_ratio, app_cache_hit_rate=self.app_cache_hit_rate,
                   total_savings_usd=self.total_savings_usd)
        return out


METRIC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Metrics))
_FLOAT_FIELDS = frozenset(f.name for f in fields(Metrics) if f.type == "float")


def metrics_from_row(row: Mapping[str, Any]) -> Metrics:
    """The :class:`Metrics` of a query row holding every field of :data:`METRIC_FIELDS`."""
    return Metrics(**{name: float(row[name]) if name in _FLOAT_FIELDS else int(row[name])
                      for name in METRIC_FIELDS})


@dataclass(frozen=True)
class Line:
    """One key of a breakdown in the period; ``keys`` > 1 only for the ``(other)`` line of a capped breakdown."""

    key: str
    metrics: Metrics
    previous_cost_usd: float = 0.0
    previous_calls: int = 0
    price_versions: tuple[str, ...] = ()
    keys: int = 1

    @property
    def delta_usd(self) -> float:
        return self.metrics.cost_usd - self.previous_cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "keys": self.keys, **self.metrics.to_dict(),
                "previous_cost_usd": self.previous_cost_usd, "previous_calls": self.previous_calls,
                "delta_usd": self.delta_usd, "price_versions": list(self.price_versions)}


@dataclass(frozen=True)
class Mover:
    """A key whose cost changed against the previous period; ``delta_pct`` is None when it cost nothing then."""

    key: str
    cost_usd: float
    previous_cost_usd: float
    delta_usd: float
    delta_pct: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "cost_usd": self.cost_usd, "previous_cost_usd": self.previous_cost_usd,
                "delta_usd": self.delta_usd, "delta_pct": self.delta_pct}


@dataclass(frozen=True)
class Breakdown:
    """The period's lines by one dimension (most expensive first) and its top movers."""

    dimension: str
    lines: tuple[Line, ...]
    movers: tuple[Mover, ...]
    keys_total: int  # keys with calls in the period, before any cap

    def to_dict(self) -> dict[str, Any]:
        return {"dimension": self.dimension, "column": DIMENSIONS[self.dimension], "keys_total": self.keys_total,
                "lines": [line.to_dict() for line in self.lines],
                "movers": [mover.to_dict() for mover in self.movers]}


@dataclass(frozen=True)
class PriceVersionUse:
    """A price table the period's costs come from ('' for calls stored before pricing)."""

    price_version: str
    calls: int
    cost_usd: float


@dataclass(frozen=True)
class Forecast:
    """Month-end cost as of the report's last day (:func:`~.forecast.forecast_month_end` has the method)."""

    month: str
    spent_usd: float
    days_in_month: int
    days_sampled: int
    days_remaining: float
    daily_mean_usd: float | None
    daily_sd_usd: float | None
    month_end_usd: float | None
    low_usd: float | None
    high_usd: float | None
    level: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class CostReport:
    """A project's cost report for one period; :meth:`to_dict` is the API's JSON, :meth:`to_csv` its CSV."""

    project_id: str
    period: Period
    totals: Metrics
    previous_totals_cost_usd: float
    previous_totals_calls: int
    breakdowns: tuple[Breakdown, ...]
    price_versions: tuple[PriceVersionUse, ...]
    forecast: Forecast
    partial: bool
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def breakdown(self, dimension: str) -> Breakdown:
        for item in self.breakdowns:
            if item.dimension == dimension:
                return item
        raise KeyError(dimension)

    @property
    def delta_pct(self) -> float | None:
        previous = self.previous_totals_cost_usd
        return (self.totals.cost_usd - previous) / previous if previous > 0 else None

    def to_dict(self) -> dict[str, Any]:
        p = self.period
        return {
            "project_id": self.project_id, "period": p.kind, "start": p.start.isoformat(),
            "end": p.end.isoformat(), "days": p.days, "partial": self.partial,
            "previous_start": p.previous_start.isoformat(), "previous_end": p.previous_end.isoformat(),
            "generated_at": self.generated_at.isoformat(),
            "totals": self.totals.to_dict(),
            "previous": {"cost_usd": self.previous_totals_cost_usd, "calls": self.previous_totals_calls,
                         "delta_usd": self.totals.cost_usd - self.previous_totals_cost_usd,
                         "delta_pct": self.delta_pct},
            "price_versions": [{"price_version": v.price_version, "calls": v.calls, "cost_usd": v.cost_usd}
                               for v in self.price_versions],
            "forecast": self.forecast.to_dict(),
            "breakdowns": [b.to_dict() for b in self.breakdowns],
        }

    def to_csv(self) -> str:
        """One row per line of every breakdown, after one ``total`` row; costs to 1e-6 USD, ratios to 1e-6."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        p = self.period
        head = [self.project_id, p.kind, p.start.isoformat(), p.end.isoformat()]
        total = Line(self.project_id, self.totals, self.previous_totals_cost_usd, self.previous_totals_calls,
                     tuple(v.price_version for v in self.price_versions))
        writer.writerow(head + ["total", *_csv_line(total)])
        for item in self.breakdowns:
            for line in item.lines:
                writer.writerow(head + [item.dimension, *_csv_line(line)])
        return out.getvalue()


CSV_COLUMNS = (
    "project_id", "period", "start", "end", "dimension", "key", "keys", "calls", "errors", "successful_calls",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens",
    "reasoning_tokens", "cost_usd", "cost_input_usd", "cost_cache_read_usd", "cost_cache_write_usd",
    "cost_output_usd", "cost_reasoning_usd", "cost_per_successful_call_usd", "cache_hit_ratio",
    "cache_savings_usd", "cache_hits", "cost_avoided_usd", "unpriced", "usage_missing", "previous_cost_usd",
    "delta_usd", "price_versions",
)


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


def _csv_line(line: Line) -> list[Any]:
    m = line.metrics
    return [line.key, line.keys, m.calls, m.errors, m.successful_calls, m.input_tokens, m.output_tokens,
            m.cache_read_tokens, m.cache_write_tokens, m.cache_write_1h_tokens, m.reasoning_tokens,
            _fmt(m.cost_usd), _fmt(m.cost_input_usd), _fmt(m.cost_cache_read_usd), _fmt(m.cost_cache_write_usd),
            _fmt(m.cost_output_usd), _fmt(m.cost_reasoning_usd), _fmt(m.cost_per_successful_call_usd),
            _fmt(m.cache_hit_ratio), _fmt(m.cache_savings_usd), m.cache_hits, _fmt(m.cost_avoided_usd),
            m.unpriced, m.usage_missing, _fmt(line.previous_cost_usd), _fmt(line.delta_usd),
            ";".join(line.price_versions)]

