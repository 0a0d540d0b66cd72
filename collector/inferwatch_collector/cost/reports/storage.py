"""Stored cost reports (the ``cost_reports`` table) and the daily job that stores them.

Per project, period and start, :func:`save_cost_report` writes one ``source='computed'`` row per (provider,
model) with the typed columns (what an invoice is reconciled against) and one ``source='report'`` row holding the
whole report as JSON in ``details['report']`` (breakdowns capped at :data:`STORED_LINES` lines plus an
``(other)`` line, so they still add up to the totals). ``cost_reports`` is a ReplacingMergeTree keyed by
(project, period, start, source, provider, model): saving again replaces, and every row of one save carries the
same ``generated_at``. :func:`run_cost_report_job` is what the scheduler runs daily.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from ...store import Store
from .build import cap_lines
from .model import DIMENSIONS, CostReport, Metrics, metrics_from_row
from .periods import PERIODS, period_bounds
from .queries import compute_cost_report, provider_model_rows

log = logging.getLogger(__name__)

#: Lines kept per dimension in a stored report (the rest are summed into one ``(other)`` line).
STORED_LINES = 100
_MICRO = Decimal("0.000001")

_REPORT_COLUMNS = ("project_id", "period_type", "period_start", "source", "provider", "model", "calls",
                   "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
                   "currency", "generated_at", "details")


def _decimal(value: float) -> Decimal:
    return Decimal(repr(value)).quantize(_MICRO, rounding=ROUND_HALF_EVEN)


def _stored_row(report: CostReport, source: str, provider: str, model: str, m: Metrics,
                details: dict[str, str]) -> list[Any]:
    return [report.project_id, report.period.kind, report.period.start, source, provider, model, m.calls,
            m.input_tokens, m.output_tokens, m.cache_read_tokens, m.cache_write_tokens, _decimal(m.cost_usd),
            "USD", report.generated_at, details]


def _metric_details(m: Metrics, versions: Sequence[str], end: date) -> dict[str, str]:
    return {"end": end.isoformat(), "errors": str(m.errors), "reasoning_tokens": str(m.reasoning_tokens),
            "cache_write_1h_tokens": str(m.cache_write_1h_tokens), "cache_savings_usd": repr(m.cache_savings_usd),
            "cache_hits": str(m.cache_hits), "cost_avoided_usd": repr(m.cost_avoided_usd),
            "unpriced": str(m.unpriced), "usage_missing": str(m.usage_missing),
            "price_versions": ",".join(versions)}


def save_cost_report(store: Store, report: CostReport) -> int:
    """Store ``report`` in ``cost_reports`` (replacing an earlier save of the same project, period and start)
    and return the rows written: one per (provider, model) of the period, read from ``cost_1d``, plus the report
    row. Breakdowns are capped to :data:`STORED_LINES` lines (plus ``(other)``) in the stored JSON."""
    rows = []
    for row in provider_model_rows(store, report.project_id, report.period):
        m = metrics_from_row(row)
        if m.calls == 0:
            continue
        details = _metric_details(m, sorted(row["price_versions"]), report.period.end)
        rows.append(_stored_row(report, "computed", str(row["provider"]), str(row["model"]), m, details))
    stored = report.to_dict()
    for item, breakdown in zip(stored["breakdowns"], report.breakdowns):
        item["lines"] = [line.to_dict() for line in cap_lines(breakdown.lines, STORED_LINES)]
    details = _metric_details(report.totals, [v.price_version for v in report.price_versions], report.period.end)
    details["report"] = json.dumps(stored, separators=(",", ":"))
    rows.append(_stored_row(report, "report", "", "", report.totals, details))
    store.insert_columns("cost_reports", [list(column) for column in zip(*rows)], _REPORT_COLUMNS)
    return len(rows)


def load_cost_report(store: Store, project_id: str, period: str, start: date) -> dict[str, Any] | None:
    """The stored report (the JSON of :meth:`CostReport.to_dict`, capped) of a project, period and start day,
    or None. Reads with ``FINAL``: the latest save wins."""
    rows = store.query(
        f"SELECT details['report'] FROM {store.table('cost_reports')} FINAL WHERE project_id = {{p:String}} "
        "AND period_type = {kind:String} AND period_start = {start:Date} AND source = 'report'",
        {"p": project_id, "kind": period, "start": start}).result_rows
    return json.loads(rows[0][0]) if rows else None



@dataclass(frozen=True)
class JobResult:
    """What one run of :func:`run_cost_report_job` stored, and which projects failed (with the error)."""

    day: date
    saved: tuple[tuple[str, str, float], ...]  # (project, period, cost_usd)
    failed: tuple[tuple[str, str], ...]  # (project, error)


def active_projects(store: Store, first: date, last: date) -> list[str]:
    """Projects with calls in ``cost_1d`` between ``first`` and ``last`` (inclusive)."""
    rows = store.query(f"SELECT project_id, sum(calls) FROM {store.table('cost_1d')} WHERE day >= {{a:Date}} "
                       "AND day <= {b:Date} GROUP BY project_id ORDER BY project_id",  # by_dims answers it
                       {"a": first, "b": last}).result_rows
    return [str(project) for project, _ in rows]


def run_cost_report_job(store: Store, now: datetime | None = None) -> JobResult:
    """The daily job: for every project with calls this month or in the equally long period before it, store the
    report of the last complete UTC day (yesterday) and of its month to date, with every dimension. Run it after
    midnight UTC; running it again the same day replaces what it stored. On the 1st it stores the previous
    month's final report. One project's failure is logged and reported, and does not stop the others."""
    now = now or datetime.now(UTC)
    day = now.astimezone(UTC).date() - timedelta(days=1)
    month = period_bounds("month", day)
    saved: list[tuple[str, str, float]] = []
    failed: list[tuple[str, str]] = []
    for project in active_projects(store, month.previous_start, day):
        try:
            for kind in PERIODS:
                report = compute_cost_report(store, project, kind, day, by=tuple(DIMENSIONS), now=now,
                                             limit=STORED_LINES)
                save_cost_report(store, report)
                saved.append((project, kind, report.totals.cost_usd))
        except Exception as exc:  # one bad project must not stop the others; the scheduler sees it in `failed`
            log.exception("cost report for project %s failed", project)
            failed.append((project, f"{type(exc).__name__}: {exc}"))
    return JobResult(day, tuple(saved), tuple(failed))
