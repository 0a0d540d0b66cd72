"""Cost reports: a project's daily and month-to-date cost by model, provider, feature, prompt template or hashed
user, read from the ``cost_1d`` rollup and stored in ``cost_reports``.

A report's totals equal the sum of its calls' stored costs to the cent: nothing is re-priced or estimated.

- :mod:`.periods`: the report periods (UTC days) and the period each is compared with.
- :mod:`.model`: the figures (:class:`Metrics`, lines, breakdowns, movers, forecast) and :class:`CostReport`
  with its JSON and CSV.
- :mod:`.forecast`: the month-end forecast and its prediction interval.
- :mod:`.build`: a report from query rows (pure): lines, the ``(other)`` line, top movers.
- :mod:`.queries`: the queries on ``cost_1d`` and :func:`compute_cost_report`.
- :mod:`.storage`: saving and loading reports in ``cost_reports``, and :func:`run_cost_report_job`, the daily
  job the scheduler imports from this package.
"""

from .build import build_breakdown, build_report, cap_lines
from .forecast import FORECAST_LEVEL, forecast_month_end
from .model import (
    CSV_COLUMNS, DEFAULT_LINE_LIMIT, DEFAULT_MOVERS, DIMENSIONS, METRIC_FIELDS, OTHER_KEY, Breakdown, CostReport,
    Forecast, Line, Metrics, Mover, PriceVersionUse, metrics_from_row,
)
from .periods import PERIODS, Period, ReportError, parse_day, period_bounds
from .queries import breakdown_rows, breakdown_sql, compute_cost_report, daily_rows, provider_model_rows
from .storage import (
    STORED_LINES, JobResult, active_projects, load_cost_report, run_cost_report_job, save_cost_report,
)

__all__ = [
    "CSV_COLUMNS", "DEFAULT_LINE_LIMIT", "DEFAULT_MOVERS", "DIMENSIONS", "FORECAST_LEVEL", "METRIC_FIELDS",
    "OTHER_KEY", "PERIODS", "STORED_LINES", "Breakdown", "CostReport", "Forecast", "JobResult", "Line", "Metrics",
    "Mover", "Period", "PriceVersionUse", "ReportError", "active_projects", "breakdown_rows", "breakdown_sql",
    "build_breakdown", "build_report", "cap_lines", "compute_cost_report", "daily_rows", "forecast_month_end",
    "load_cost_report", "metrics_from_row", "parse_day", "period_bounds", "provider_model_rows",
    "run_cost_report_job", "save_cost_report",
]
