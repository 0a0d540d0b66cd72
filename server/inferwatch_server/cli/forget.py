"""``inferwatch-server forget --project P --user-hash H``: a user's data request.

The deletion is :mod:`inferwatch_collector.forget`; this module parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import open_store, settings_from


def register(subparsers: Any) -> None:
    """Add ``forget`` to the ``inferwatch-server`` parser."""
    parser = subparsers.add_parser(
        "forget", help="delete a user's prompt logs and blank their feedback text",
        description="Deletes the prompt logs of every trace in which the user made an LLM call and blanks the "
                    "comment and label of their feedback, in one project. Call metrics (tokens, latency, cost) "
                    "are kept. Idempotent: running it again changes nothing.")
    parser.add_argument("--project", required=True, help="project id")
    parser.add_argument("--user-hash", required=True, help="the user's hash (hex), as the SDK sends it")
    parser.set_defaults(func=cmd_forget)


def cmd_forget(args: argparse.Namespace) -> int:
    from inferwatch_collector.forget import ForgetError, forget
    from inferwatch_collector.migrations import target_for

    settings = settings_from(args)
    store = open_store(settings)
    try:
        target = None if settings.embedded else target_for(settings, store)
        result = forget(store, args.project, args.user_hash, target=target)
    except ForgetError as exc:
        print(f"error: {exc}")
        return 2
    finally:
        store.close()
    print(f"project {result.project_id}, user {result.user_hash}: {result.calls_found} calls in "
          f"{result.traces} traces; deleted {result.prompt_logs_deleted} prompt logs, blanked "
          f"{result.feedback_blanked} feedback comments/labels")
    return 0
