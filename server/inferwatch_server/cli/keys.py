"""``inferwatch-server keys create|list|revoke``: projects' API keys.

A new key is printed once: only its hash is stored, so it cannot be shown again.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import open_store, settings_from


def register(sub: Any) -> None:
    """Add ``keys`` to the ``inferwatch-server`` parser."""
    keys = sub.add_parser("keys", help="manage projects' API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key (printed once)")
    create.add_argument("--project", required=True)
    create.add_argument("--scope", action="append", required=True,
                        choices=["ingest", "read", "prompts:read", "admin"], help="repeat for several scopes")
    create.add_argument("--name", help="a label for the key")
    lst = keys_sub.add_parser("list", help="list keys (never their secrets)")
    lst.add_argument("--project")
    rev = keys_sub.add_parser("revoke", help="revoke a key by its id")
    rev.add_argument("key_id")
    keys.set_defaults(func=cmd_keys)


def cmd_keys(args: argparse.Namespace) -> int:
    from inferwatch_collector.auth import KeyStore
    from inferwatch_collector.migrations import migrate, target_for

    settings = settings_from(args)
    store = open_store(settings)
    try:
        migrate(store, target_for(settings, store))
        keys = KeyStore(store, cache_seconds=0)
        if args.keys_command == "create":
            key = keys.create_key(args.project, args.scope, args.name or "")
            print(f"created a key for project {args.project!r} with scopes {', '.join(args.scope)}.",
                  file=sys.stderr)
            print("Store it now: it is shown only once.", file=sys.stderr)
            print(key)
        elif args.keys_command == "list":
            for info in keys.list_keys(args.project):
                state = "revoked" if info.revoked else "active"
                print(f"{info.key_id}  {info.project_id:20} {','.join(info.scopes):32} {state:8} "
                      f"{info.created_at}  {info.name}")
        elif args.keys_command == "revoke":
            if not keys.revoke(args.key_id):
                print(f"no key with id {args.key_id}", file=sys.stderr)
                return 1
            print(f"revoked {args.key_id}")
        return 0
    finally:
        store.close()
