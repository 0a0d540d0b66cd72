"""``inferwatch-server report`` and ``inferwatch-server whatif``: cost reports and what-if repricing from the
command line (the maths is in :mod:`inferwatch_collector.cost.reports` and :mod:`inferwatch_collector.cost.whatif`;
this module parses and prints)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inferwatch_collector.cost.reports import DIMENSIONS, PERIODS, STORED_LINES, Breakdown, CostReport, Metrics
from inferwatch_collector.cost.whatif import WhatIfResult

from .common import open_migrated, open_store, settings_from

PRINTED_LINES = 25
CSV_LINES = 100_000


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``report`` and ``whatif`` to the inferwatch-server parser."""
    report = sub.add_parser(
        "report", help="a project's cost report for a day or month to date (print, CSV, or store)",
        description="Calls, tokens, cost, cost per successful call, cache hit ratio and caching savings "
                    "(provider prompt caching and the app-side cache), unpriced and usage-missing calls, top "
                    "movers against the previous period of the same length, a month-end forecast with a 90%% "
                    "range, and the price versions used; from the cost_1d rollup.")
    report.add_argument("--project", required=True, help="project id")
    report.add_argument("--period", choices=PERIODS, default="month", help="day, or month to date (default)")
    report.add_argument("--date", help="last day of the period, YYYY-MM-DD (default: today, UTC)")
    report.add_argument("--by", action="append", choices=list(DIMENSIONS),
                        help="breakdown; repeat for several (default: model)")
    report.add_argument("--limit", type=int,
                        help=f"lines per breakdown, the rest summed as '(other)' (default {PRINTED_LINES}; "
                             f"with --csv {CSV_LINES})")
    report.add_argument("--csv", action="store_true", help="print CSV (one row per line of each breakdown)")
    report.add_argument("--save", action="store_true",
                        help="also store the report, with every breakdown, in cost_reports (replaces an earlier "
                             "save of the same project, period and start)")
    report.set_defaults(func=cmd_report)

    whatif = sub.add_parser(
        "whatif", help="re-price a period's traffic under another model mix or a cascade",
        description="Rules are KEY=VALUE lists. Scope keys: provider, model, feature, prompt_template. "
                    "--mix 'feature=simple,share=0.7,to_model=gpt-4o-mini' moves 70%% of those calls to "
                    "gpt-4o-mini; --cascade 'feature=simple,cheap_model=gpt-4o-mini,escalation_rate=0.2' sends "
                    "every call to gpt-4o-mini first and escalates 20%% to the original model. A call follows "
                    "the first rule that matches it (mix rules first).")
    whatif.add_argument("--project", required=True, help="project id")
    whatif.add_argument("--period", choices=PERIODS, default="month", help="day, or month to date (default)")
    whatif.add_argument("--date", help="last day of the period, YYYY-MM-DD (default: today, UTC)")
    whatif.add_argument("--mix", action="append", default=[], metavar="RULE", help="a model-mix rule (repeatable)")
    whatif.add_argument("--cascade", action="append", default=[], metavar="RULE",
                        help="a cascade rule (repeatable)")
    whatif.add_argument("--scenario", help="a JSON file with the API's request body (mix, cascade, period, date)")
    whatif.add_argument("--prices-file", help="user price file laid over the bundled table")
    whatif.add_argument("--json", action="store_true", help="print the result as JSON")
    whatif.set_defaults(func=cmd_whatif)


def cmd_report(args: argparse.Namespace) -> int:
    from inferwatch_collector.cost.reports import compute_cost_report, parse_day, save_cost_report

    limit = args.limit or (CSV_LINES if args.csv else PRINTED_LINES)
    store = open_migrated(settings_from(args))
    try:
        now = datetime.now(UTC)
        day = parse_day(args.date, now.date(), "--date")
        if args.save:
            full = compute_cost_report(store, args.project, args.period, day, by=tuple(DIMENSIONS), now=now,
                                       limit=STORED_LINES)
            save_cost_report(store, full)
        report = compute_cost_report(store, args.project, args.period, day, by=args.by or ["model"], now=now,
                                     limit=limit)
    finally:
        store.close()
    print(report.to_csv() if args.csv else format_report(report), end="")
    return 0


def parse_rule(text: str, option: str) -> dict[str, Any]:
    """``key=value,key=value`` as a rule object; numbers become numbers (the what-if parser checks the rest)."""
    rule: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} {text!r}: expected KEY=VALUE pairs separated by commas")
        value = value.strip()
        try:
            rule[key.strip()] = float(value) if key.strip() in ("share", "escalation_rate") else value
        except ValueError:
            rule[key.strip()] = value
    return rule


def cmd_whatif(args: argparse.Namespace) -> int:
    from inferwatch_collector.cost.price_table import load_table
    from inferwatch_collector.cost.whatif import run_whatif

    settings = settings_from(args)
    request: dict[str, Any] = {}
    if args.scenario:
        request = json.loads(Path(args.scenario).read_text())
        if not isinstance(request, dict):
            raise ValueError(f"--scenario {args.scenario}: expected a JSON object")
    request.setdefault("period", args.period)
    if args.date:
        request["date"] = args.date
    if args.mix:
        request["mix"] = [*request.get("mix", []), *(parse_rule(text, "--mix") for text in args.mix)]
    if args.cascade:
        request["cascade"] = [*request.get("cascade", []),
                              *(parse_rule(text, "--cascade") for text in args.cascade)]
    table = load_table(args.prices_file or settings.prices_file)
    store = open_store(settings)
    try:
        result = run_whatif(store, args.project, request, table, retention_days=settings.retention_days)
    finally:
        store.close()
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_whatif(result))
    return 0


# --------------------------------------------------------------------------------------------------- printing


def _usd(value: float | None) -> str:
    if value is None:
        return "-"
    sign = "-" if value < 0 else ""
    value = abs(value)
    return f"{sign}${value:,.2f}" if value >= 1 or value == 0 else f"{sign}${value:,.4f}"


def _signed_usd(value: float) -> str:
    return ("+" if value >= 0 else "") + _usd(value)


def _pct(value: float | None, signed: bool = False) -> str:
    return "-" if value is None else (f"{value:+.1%}" if signed else f"{value:.1%}")


def _period(kind: str, start: Any, end: Any) -> str:
    return f"{start} .. {end}" if kind == "month" else f"{end}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    out = []
    for row in (header, *rows):
        cells = [str(cell).ljust(w) if i == 0 else str(cell).rjust(w) for i, (cell, w) in
                 enumerate(zip(row, widths))]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def _breakdown_lines(item: Breakdown) -> list[str]:
    header = [item.dimension, "calls", "cost", "$/success", "cache hit", "cache saved", "app hits", "avoided",
              "unpriced", "no usage", "vs previous"]
    rows = []
    for line in item.lines:
        m = line.metrics
        key = line.key if line.keys == 1 else f"{line.key} ({line.keys:,} keys)"
        rows.append([key or "(none)", f"{m.calls:,}", _usd(m.cost_usd), _usd(m.cost_per_successful_call_usd),
                     _pct(m.cache_hit_ratio), _usd(m.cache_savings_usd), f"{m.cache_hits:,}",
                     _usd(m.cost_avoided_usd), f"{m.unpriced:,}", f"{m.usage_missing:,}",
                     _signed_usd(line.delta_usd)])
    out = [f"By {item.dimension} ({item.keys_total:,} keys):", *_table(header, rows)]
    if item.movers:
        out.append(f"Top movers by {item.dimension}:")
        out += _table(["key", "cost", "previous", "change", "%"],
                      [[m.key or "(none)", _usd(m.cost_usd), _usd(m.previous_cost_usd), _signed_usd(m.delta_usd),
                        _pct(m.delta_pct, signed=True)] for m in item.movers])
    return out


def _totals_lines(t: Metrics) -> list[str]:
    return [
        (f"Total {_usd(t.cost_usd)} over {t.calls:,} calls ({t.errors:,} errors); "
         f"{_usd(t.cost_per_successful_call_usd)} per successful call"),
        (f"Tokens: input {t.input_tokens:,} (cache read {t.cache_read_tokens:,} = {_pct(t.cache_hit_ratio)}, "
         f"cache write {t.cache_write_tokens:,}), output {t.output_tokens:,} (reasoning {t.reasoning_tokens:,})"),
        (f"Caching: provider prompt caching saved {_usd(t.cache_savings_usd)}; app-side cache answered "
         f"{t.cache_hits:,} calls ({_pct(t.app_cache_hit_rate)}) and avoided {_usd(t.cost_avoided_usd)}"),
        f"Unpriced calls: {t.unpriced:,}   Usage missing: {t.usage_missing:,}   (these cost 0 in the figures)",
    ]


def format_report(report: CostReport) -> str:
    """The report as text for a terminal."""
    p, f = report.period, report.forecast
    state = ", partial: the last day is not over" if report.partial else ""
    versions = ", ".join(f"{v.price_version or '(none)'} ({v.calls:,} calls, {_usd(v.cost_usd)})"
                         for v in report.price_versions) or "-"
    out = [(f"Cost report: project {report.project_id}, {'month to date' if p.kind == 'month' else 'day'} "
            f"{_period(p.kind, p.start, p.end)} ({p.days} days{state})"),
           f"Price versions: {versions}", *_totals_lines(report.totals),
           (f"Previous period {_period(p.kind, p.previous_start, p.previous_end)}: "
            f"{_usd(report.previous_totals_cost_usd)} ({_pct(report.delta_pct, signed=True)})")]
    if f.month_end_usd is None:
        out.append(f"Month-end forecast ({f.month}): none ({f.method})")
    else:
        band = (f", {f.level:.0%} range {_usd(f.low_usd)} - {_usd(f.high_usd)}" if f.low_usd is not None
                else "")
        out.append(f"Month-end forecast ({f.month}): {_usd(f.month_end_usd)}{band} (spent {_usd(f.spent_usd)}; "
                   f"complete days sampled: {f.days_sampled}, days left: {f.days_remaining:.1f})")
    for item in report.breakdowns:
        out += ["", *_breakdown_lines(item)]
    return "\n".join(out) + "\n"


def format_whatif(result: WhatIfResult) -> str:
    """A what-if result as text for a terminal."""
    p = result.period
    out = [(f"What-if: project {result.project_id}, {'month to date' if p.kind == 'month' else 'day'} "
            f"{_period(p.kind, p.start, p.end)}, prices {result.price_version}"),
           (f"Observed cost {_usd(result.observed_cost_usd)} (price versions "
            f"{', '.join(v or '(none)' for v in result.observed_price_versions) or '-'})"),
           (f"Baseline at these prices {_usd(result.baseline_cost_usd)}; "
            f"scenario {_usd(result.scenario_cost_usd)}: {_signed_usd(result.delta_usd)} "
            f"({_pct(result.delta_pct, signed=True)})")]
    if result.rules:
        out.append("Rules:")
        out += _table(["rule", "matched calls", "before", "after"],
                      [[r.rule, f"{r.matched_calls:,}", _usd(r.baseline_cost_usd), _usd(r.scenario_cost_usd)]
                       for r in result.rules])
    out.append("Models:")
    out += _table(["model", "calls", "cost", "scenario calls", "scenario cost"],
                  [[m.model, f"{m.baseline_calls:,.0f}", _usd(m.baseline_cost_usd), f"{m.scenario_calls:,.1f}",
                    _usd(m.scenario_cost_usd)] for m in result.models])
    if result.unpriced_calls:
        out.append(f"Left out, no price in the table: {result.unpriced_calls:,} calls of "
                   f"{', '.join(result.unpriced_models)}")
    out.append(f"Calls no provider charged (app-side cache hits, usage missing): {result.excluded_calls:,}")
    if result.approximate:
        out.append("APPROXIMATE: " + "; ".join(result.notes))
    return "\n".join(out)
