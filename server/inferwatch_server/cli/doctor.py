"""``inferwatch-server doctor``: check configuration, connectivity, schema and directories.

The checks are :mod:`inferwatch_collector.doctor`; this module parses and prints.
"""

from __future__ import annotations

import argparse
import json

from inferwatch_collector.settings import Settings

from .common import settings_from


def cmd_doctor(args: argparse.Namespace) -> int:
    from inferwatch_collector.doctor import failed, render, run_checks

    def make_settings() -> Settings:  # built inside the checks: invalid settings are a finding, not a crash
        return settings_from(args)

    checks = run_checks(make_settings, collector_url=args.url, timeout_s=args.timeout)
    if args.json:
        print(json.dumps({"ok": not failed(checks), "checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        print(render(checks))
    return 1 if failed(checks) else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``doctor`` to the ``inferwatch-server`` subcommands."""
    doctor = sub.add_parser("doctor", help="check configuration, connectivity, schema version and directories; "
                            "print what is wrong (exit 1 when anything failed)")
    doctor.add_argument("--url", help="also check a running collector's /readyz (e.g. http://127.0.0.1:4318)")
    doctor.add_argument("--timeout", type=float, default=3.0, help="seconds per network check (default 3)")
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")
    doctor.set_defaults(func=cmd_doctor)
