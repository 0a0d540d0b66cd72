"""``inferwatch-server forget --project P --user-hash H``: a user's data request (see :mod:`forget`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .settings import Settings


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
    from .forget import ForgetError, forget
    from .migrations import target_for
    from .store import Store

    data_dir = getattr(args, "data_dir", None)  # the global --data-dir
    settings = Settings(**({"data_dir": Path(data_dir)} if data_dir else {}))
    store = Store.open(settings)
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
