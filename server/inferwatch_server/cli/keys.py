"""``inferwatch-server keys create|list|revoke``: projects' API keys.

A new key is printed once: only its hash is stored, so it cannot be shown again. ``keys create --langfuse``
prints it as a Langfuse SDK's environment instead (``LANGFUSE_PUBLIC_KEY``/``LANGFUSE_SECRET_KEY``/``LANGFUSE_HOST``):
the same key, re-encoded (see ``inferwatch_collector.auth.langfuse_pair``), an ``ingest`` key unless ``--scope`` says
otherwise.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import open_store, settings_from

if TYPE_CHECKING:
    from inferwatch_collector.settings import Settings


def register(sub: Any) -> None:
    """Add ``keys`` to the ``inferwatch-server`` parser."""
    keys = sub.add_parser("keys", help="manage projects' API keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key (printed once)")
    create.add_argument("--project", required=True)
    create.add_argument("--scope", action="append",
                        choices=["ingest", "read", "prompts:read", "admin"],
                        help="repeat for several scopes (required unless --langfuse, which defaults to ingest)")
    create.add_argument("--name", help="a label for the key")
    create.add_argument("--langfuse", action="store_true",
                        help="print the key as a Langfuse SDK's LANGFUSE_PUBLIC_KEY/SECRET_KEY/HOST, so a Langfuse "
                             "app sends its traces here by changing only those")
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
            scopes = args.scope or (["ingest"] if args.langfuse else None)
            if not scopes:
                raise ValueError("keys create needs --scope (or --langfuse, which creates an ingest key)")
            key = keys.create_key(args.project, scopes, args.name or "")
            print(f"created a key for project {args.project!r} with scopes {', '.join(scopes)}.",
                  file=sys.stderr)
            print("Store it now: it is shown only once.", file=sys.stderr)
            if args.langfuse:
                print(_langfuse_environment(key, settings))
            else:
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


def _langfuse_environment(key: str, settings: Settings) -> str:
    """The key as a Langfuse SDK's environment, with the collector's address as its host."""
    from inferwatch_collector.auth import langfuse_pair

    public, secret = langfuse_pair(key)
    host = "localhost" if settings.host in ("0.0.0.0", "::", "") else settings.host
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return "\n".join((f"LANGFUSE_PUBLIC_KEY={public}", f"LANGFUSE_SECRET_KEY={secret}",
                      f"LANGFUSE_HOST=http://{host}:{settings.port}"))
