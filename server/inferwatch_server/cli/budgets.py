"""``inferwatch-server budgets create|list|delete|status``: spending caps per project, feature or user.

The commands open the configured store directly (``--data-dir`` / ``INFERWATCH_*``), so on the embedded
database the collector must be stopped; against a running collector use the API (``/api/v1/budgets``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import open_migrated, settings_from


def register(sub: Any) -> None:
    """Add ``budgets`` to the ``inferwatch-server`` parser."""
    budgets = sub.add_parser("budgets", help="budgets per project, feature or user: create, list, delete, status")
    budgets_sub = budgets.add_subparsers(dest="budgets_command", required=True)

    create = budgets_sub.add_parser(
        "create", help="create a budget",
        description="A soft budget alerts at its thresholds; a hard one also makes the SDK's budget guard block "
                    "(or downgrade) calls once it is exceeded. Periods are UTC days or calendar months.")
    create.add_argument("--project", required=True, help="project id")
    create.add_argument("--scope", required=True, choices=["project", "feature", "user"], help="what it caps")
    create.add_argument("--value", default="", help="the feature name, or the user's hash (not for project)")
    create.add_argument("--period", required=True, choices=["day", "month"])
    create.add_argument("--kind", required=True, choices=["soft", "hard"])
    create.add_argument("--limit", required=True, help="US dollars per period")
    create.add_argument("--threshold", type=float, action="append",
                        help="alert at this fraction of the limit; repeat (default 0.5, 0.8, 1.0)")
    create.add_argument("--id", dest="budget_id", help="budget id (default: generated)")
    create.set_defaults(func=cmd_budgets)

    lst = budgets_sub.add_parser("list", help="list budgets")
    lst.add_argument("--project", help="only this project")
    lst.set_defaults(func=cmd_budgets)

    delete = budgets_sub.add_parser("delete", help="delete a budget")
    delete.add_argument("--project", required=True)
    delete.add_argument("budget_id")
    delete.set_defaults(func=cmd_budgets)

    status = budgets_sub.add_parser("status", help="spend, ratio and forecast of a project's budgets now")
    status.add_argument("--project", required=True)
    status.add_argument("--json", action="store_true", help="print the API's JSON instead of a table")
    status.set_defaults(func=cmd_budgets)


def cmd_budgets(args: argparse.Namespace) -> int:
    from inferwatch_collector.cost import budgets

    store = open_migrated(settings_from(args))
    try:
        if args.budgets_command == "create":
            try:
                spec = budgets.validate_budget(budget_id=args.budget_id, scope_type=args.scope,
                                               scope_value=args.value, period=args.period, kind=args.kind,
                                               limit_usd=args.limit, thresholds=args.threshold)
                budget = budgets.create_budget(store, args.project, spec)
            except (budgets.BudgetError, budgets.BudgetExists) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"created budget {budget.budget_id} for project {budget.project_id}: {_describe(budget)}")
        elif args.budgets_command == "list":
            for budget in budgets.list_budgets(store, args.project):
                print(f"{budget.project_id:20} {budget.budget_id:24} {_describe(budget)}")
        elif args.budgets_command == "delete":
            if not budgets.delete_budget(store, args.project, args.budget_id):
                print(f"no budget {args.budget_id!r} in project {args.project!r}", file=sys.stderr)
                return 1
            print(f"deleted budget {args.budget_id}")
        elif args.budgets_command == "status":
            report = budgets.project_status(store, args.project)
            if args.json:
                print(json.dumps(report, indent=2))
                return 0
            print(f"{'budget':24} {'scope':24} {'kind':5} {'limit':>12} {'spent':>12} {'used':>7} "
                  f"{'forecast':>12}  state")
            for entry in report["budgets"]:
                scope = entry["scope_type"] + (f"={entry['scope_value']}" if entry["scope_value"] else "")
                state = "EXCEEDED" if entry["exceeded"] else "forecast over" if entry["forecast_exceeds"] else "ok"
                print(f"{entry['budget_id']:24} {scope[:24]:24} {entry['kind']:5} {entry['limit_usd']:>12,.2f} "
                      f"{entry['spent_usd']:>12,.2f} {entry['used_ratio']:>7.1%} {entry['forecast_usd']:>12,.2f}"
                      f"  {state} (per {entry['period']} until {entry['period_end']})")
        return 0
    finally:
        store.close()


def _describe(budget: Any) -> str:
    scope = budget.scope_type + (f"={budget.scope_value}" if budget.scope_value else "")
    levels = ", ".join(f"{t:.0%}" for t in budget.thresholds)
    return f"{budget.kind} ${float(budget.limit_usd):,.2f} per {budget.period} on {scope} (alerts at {levels})"
