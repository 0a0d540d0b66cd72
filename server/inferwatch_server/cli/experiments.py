"""``inferwatch-server experiments create|list|report``: the A/B experiment registry and a report in the terminal.

Every command opens the configured store directly (global ``--data-dir`` / ``INFERWATCH_*``), so on the embedded
database the collector must be stopped (one process per chDB directory); against a running collector use the
API (``/api/v1/experiments``). ``report NAME`` analyses the experiment now, from the raw calls, with the daily
looks stored by the scheduled job (it stores nothing itself; ``--save`` stores the analysis like the job).
``inferwatch_alerts`` is imported when a command runs, so ``--help`` stays quick.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import UTC, datetime
from typing import Any

from .common import open_migrated, settings_from


def register(sub: Any) -> None:
    """Add ``experiments`` to the ``inferwatch-server`` parser."""
    experiments = sub.add_parser("experiments", help="A/B experiments: create, list, report")
    commands = experiments.add_subparsers(dest="experiments_command", required=True)

    create = commands.add_parser(
        "create", help="register an experiment (or confirm one registered automatically)",
        description="Variants in the order the app passes them to inferwatch.experiment(); the first is the "
                    "control unless --control. With --planned-users or --end the sequential test spends its "
                    "alpha by that plan; without either it uses the always-valid mSPRT.")
    create.add_argument("name")
    create.add_argument("--project", required=True, help="project id")
    create.add_argument("--variant", action="append", required=True, metavar="NAME=WEIGHT",
                        help="a variant and its weight; repeat (at least two)")
    create.add_argument("--control", help="the control variant (default: the first)")
    create.add_argument("--primary", default="cost_per_call", help="the decision metric (default cost_per_call)")
    create.add_argument("--guardrail", action="append", metavar="METRIC",
                        help="a metric that must not get worse; repeat (default: error_rate, refusal_rate, "
                             "latency_ms)")
    create.add_argument("--start", type=_datetime, help="ISO 8601 (default: now)")
    create.add_argument("--end", type=_datetime, help="planned end, ISO 8601")
    create.add_argument("--planned-users", type=int, help="planned users in total")
    create.add_argument("--mde", type=float, default=0.05, help="minimum relative effect to detect (default 0.05)")
    create.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    create.add_argument("--fixed-horizon", action="store_true",
                        help="no sequential test: verdicts only once the plan is complete")
    create.add_argument("--description", default="")
    create.add_argument("--replace", action="store_true", help="replace an experiment registered by hand")
    create.set_defaults(func=cmd_experiments)

    lst = commands.add_parser("list", help="list experiments and their latest verdicts")
    lst.add_argument("--project", help="only this project")
    lst.set_defaults(func=cmd_experiments)

    report = commands.add_parser("report", help="analyse an experiment now and print the results")
    report.add_argument("name")
    report.add_argument("--project", required=True, help="project id")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.add_argument("--save", action="store_true", help="store the analysis like the scheduled job")
    report.set_defaults(func=cmd_experiments)


def _datetime(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date/time: {text!r}") from exc
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _variants(items: list[str]) -> list[tuple[str, float]]:
    out = []
    for item in items:
        name, sep, weight = item.rpartition("=")
        if not sep or not name:
            raise ValueError(f"--variant {item!r}: expected NAME=WEIGHT")
        try:
            out.append((name, float(weight)))
        except ValueError:
            raise ValueError(f"--variant {item!r}: the weight must be a number") from None
    return out


def cmd_experiments(args: argparse.Namespace) -> int:
    from inferwatch_alerts.experiments import registry, results

    store = open_migrated(settings_from(args))
    try:
        if args.experiments_command == "create":
            try:
                exp = registry.validate_experiment(
                    project_id=args.project, name=args.name, variants=_variants(args.variant),
                    control=args.control,
                    primary_metric=args.primary, guardrails=args.guardrail, start=args.start, end=args.end,
                    planned_users=args.planned_users, mde=args.mde, alpha=args.alpha,
                    sequential=not args.fixed_horizon, source="cli", description=args.description)
                stored = registry.save_experiment(store, exp, replace_existing=args.replace)
            except (ValueError, registry.ExperimentExists) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"registered experiment {stored.name} in project {stored.project_id}: {_describe(stored)}")
            return 0
        if args.experiments_command == "list":
            latest = _latest(store, args.project)
            for exp in registry.list_experiments(store, args.project):
                verdict = latest.get((exp.project_id, exp.name), "not analysed yet")
                print(f"{exp.project_id:16} {exp.name:28} {verdict:22} {_describe(exp)}")
            return 0
        report = results.report_for(store, args.project, args.name, datetime.now(UTC))
        if report is None:
            print(f"no experiment {args.name!r} in project {args.project!r}", file=sys.stderr)
            return 1
        if args.save:
            results.save_reports(store, [report])
        if args.json:
            print(json.dumps(report.to_json(), indent=2))
        else:
            print_report(report)
        return 0
    finally:
        store.close()


def _describe(exp: Any) -> str:
    variants = " / ".join(f"{v} {w:g}" for v, w in zip(exp.variants, exp.weights))
    plan = []
    if exp.planned_users:
        plan.append(f"{exp.planned_users:,} users")
    if exp.end:
        plan.append(f"until {exp.end:%Y-%m-%d %H:%M} UTC")
    return (f"{variants} (control {exp.control}); primary {exp.primary_metric}; guardrails "
            f"{', '.join(exp.guardrails) or 'none'}; plan {', '.join(plan) or 'none'}; "
            f"{'sequential' if exp.sequential else 'fixed horizon'}; {exp.source}")


def _latest(store: Any, project: str | None) -> dict[tuple[str, str], str]:
    where = "WHERE project_id = {p:String}" if project else ""
    rows = store.query(f"SELECT project_id, experiment, verdict FROM ab_verdicts FINAL {where} "
                       "ORDER BY project_id, experiment, window_end DESC LIMIT 1 BY project_id, experiment",
                       {"p": project or ""}).result_rows
    return {(p, e): v for p, e, v in rows}


def _fmt(value: float, unit: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "-"
    if unit == "ratio":
        return f"{value:.2%}"
    if unit == "USD":
        return f"${value:.5f}" if abs(value) < 1 else f"${value:,.2f}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def _p(value: Any) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def print_report(report: Any) -> None:
    """The report as a table: verdict, assignment, then each metric per variant against the control."""
    exp, window = report.experiment, report.window
    print(f"experiment {exp.name} (project {exp.project_id}), {window.start:%Y-%m-%d %H:%M} to "
          f"{window.data_until:%Y-%m-%d %H:%M} UTC")
    untrustworthy = "" if report.verdict.trustworthy else " (untrustworthy)"
    winner = f", winner {report.verdict.winner}" if report.verdict.winner else ""
    print(f"verdict: {report.verdict.verdict.upper()}{untrustworthy}{winner}")
    print(f"  {report.verdict.reason}")
    total = sum(report.users.values()) or 1
    weights = exp.weight_map
    assignment = ", ".join(f"{v} {report.users.get(v, 0):,} ({report.users.get(v, 0) / total:.1%}, configured "
                           f"{weights.get(v, 0):.1%})" for v in list(exp.variants) +
                           sorted(set(report.users) - set(exp.variants)))
    print(f"users: {assignment}; SRM p = {_p(report.srm.p_value)}")
    print(f"plan: {report.details.get('plan', '')}; "
          f"sequential test: {report.details.get('sequential_method', '')}")
    for warning in report.warnings:
        print(f"warning: {warning}")
    print()
    print(f"{'metric':18} {'variant':12} {'users':>8} {'value':>12} {'95% CI':>24} {'lift':>8} {'lift CI':>18} "
          f"{'p':>8} {'p Holm':>8} {'p seq':>8}")
    for row in report.rows:
        if row.method in ("srm_chi2",):
            continue
        unit = str(row.details.get("unit", ""))
        ci = f"[{_fmt(row.ci_low, unit)}, {_fmt(row.ci_high, unit)}]" if math.isfinite(row.ci_low) else ""
        lift = "" if row.variant == row.control or not math.isfinite(row.lift) else f"{row.lift:+.1%}"
        lift_ci = ""
        low, high = row.details.get("lift_ci_low"), row.details.get("lift_ci_high")
        if isinstance(low, float) and isinstance(high, float) and math.isfinite(low) and math.isfinite(high):
            lift_ci = f"[{low:+.1%}, {high:+.1%}]"
        print(f"{row.metric:18} {row.variant[:12]:12} {row.n:>8,} {_fmt(row.value, unit):>12} {ci:>24} {lift:>8} "
              f"{lift_ci:>18} {_p(row.p_value):>8} {_p(row.details.get('p_holm')):>8} "
              f"{_p(row.details.get('p_sequential')):>8}")
