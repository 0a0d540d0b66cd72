"""``inferwatch-server``: the composition root that starts and manages the platform.

One module per verb group, each with ``register(sub)`` adding its subcommands (``up``, ``dashboard``,
``collector``, ``migrate``, ``keys``, ``demo``, ``config``, ``prices``, ``costs``, ``report`` and ``whatif``,
``budgets``, ``scheduler``, ``alerts``, ``experiments``, ``plan``, ``doctor``, ``forget``). Settings come from
``INFERWATCH_*`` variables; ``--data-dir`` overrides ``INFERWATCH_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The ``inferwatch-server`` parser with every verb; each verb's ``func`` runs it.

    The verb modules are imported here, not at module level: spawned ingest workers re-import the main module,
    which imports this package, and need none of them.
    """
    from . import (
        alerts,
        budgets,
        collector,
        config,
        costs,
        dashboard,
        demo,
        doctor,
        experiments,
        forget,
        keys,
        migrate,
        plan,
        prices,
        report,
        scheduler,
        up,
    )

    verbs = (up, dashboard, collector, migrate, keys, demo, config, prices, costs, report, budgets, scheduler,
             alerts, experiments, plan, doctor, forget)  # in the order --help lists them
    parser = argparse.ArgumentParser(prog="inferwatch-server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="embedded database directory (overrides INFERWATCH_DATA_DIR)")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in verbs:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; bad input and store errors print ``error: ...`` and give 2, Ctrl-C gives 130."""
    from inferwatch_collector.logging_setup import configure_from_env

    configure_from_env()  # INFERWATCH_LOG_FORMAT (text | json), INFERWATCH_LOG_LEVEL
    args = build_parser().parse_args(argv)
    from inferwatch_collector.store import StoreError

    try:
        return args.func(args)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # bad project names, scopes, settings
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
