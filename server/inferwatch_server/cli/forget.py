"""``inferwatch-server forget --project P (--user-hash H | --user-id ID)``: a user's data request (erasure).

The deletion is :mod:`inferwatch_collector.forget`; this module parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import open_store, settings_from


def register(subparsers: Any) -> None:
    """Add ``forget`` to the ``inferwatch-server`` parser."""
    parser = subparsers.add_parser(
        "forget", help="remove or blank everything stored about a user",
        description="In one project: deletes the prompt logs of the user's traces, scrubs their spans and calls "
                    "(names, status messages, free-text attributes, the user's hash), blanks their feedback text, "
                    "moves their per-user cost to a random pseudonym and deletes budgets on them. Numbers "
                    "(tokens, latency, cost) are kept. Prints what changed per table. Idempotent: running it "
                    "again changes nothing.")
    parser.add_argument("--project", required=True, help="project id")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user-hash", help="the user's hash (hex), as the SDK sends it")
    who.add_argument("--user-id", help="the user's raw id (as apps put it in enduser.id): hashed with the "
                                       "deployment's user-hash key, never stored or printed")
    parser.set_defaults(func=cmd_forget)


def cmd_forget(args: argparse.Namespace) -> int:
    from inferwatch_collector.forget import ForgetError, forget
    from inferwatch_collector.migrations import target_for
    from inferwatch_collector.user_ids import UserHasher, load_user_hash_key

    settings = settings_from(args)
    store = open_store(settings)
    try:
        target = None if settings.embedded else target_for(settings, store)
        user_hash = args.user_hash
        if user_hash is None:
            user_hash = UserHasher(load_user_hash_key(settings, store)).hash(args.user_id)
        result = forget(store, args.project, user_hash, target=target)
    except ForgetError as exc:
        print(f"error: {exc}")
        return 2
    finally:
        store.close()
    print(f"project {result.project_id}, user {result.user_hash}: {result.calls_found} calls in "
          f"{result.traces} traces; deleted {result.prompt_logs_deleted} prompt logs, blanked "
          f"{result.feedback_blanked} feedback comments/labels")
    for table, rows in result.changed.items():
        print(f"  {table}: {rows} rows changed")
    return 0
