"""The runtime ClickHouse user: what the collector, scheduler and CLI verbs run as, created by ``migrate``.

Two accounts on a ClickHouse server: the *migration* user (``INFERWATCH_CLICKHOUSE_USER`` of the ``migrate``
step) owns the DDL and access management; the *runtime* user (``INFERWATCH_RUNTIME_USER``) gets only what the
services run on the inferwatch database (:data:`RUNTIME_GRANTS`). A leaked collector password then reads and
writes inferwatch data, but cannot drop a table, read another database, or create users.

The password never travels in clear: the statement carries ``sha256_hash BY '<hex>' SALT '<hex>'`` (SHA-256 of
password + salt, computed here), so neither the query log nor a network capture holds it. The user name is an
identifier pasted into DDL, so it must match :data:`USER_NAME`. Running it again resets the password and replaces
the grants (``WITH REPLACE OPTION``): what an older version granted and this one no longer needs is gone.

Embedded chDB has no users or grants (one process owns the data directory): :func:`ensure_runtime_user` is not
called there.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field

from .migrations import Target
from .settings import USER_NAME, Settings
from .store import Store

RESERVED_NAMES = frozenset({"default"})
MIN_PASSWORD_CHARS = 12

#: Privileges on ``<database>.*`` and why the runtime needs each (checked against the code's SQL by
#: tests/collector/test_db_users.py).
RUNTIME_GRANTS: dict[str, str] = {
    "SELECT": "every query, the API's reads, the scheduler's jobs, key lookups",
    "INSERT": "ingest, keys, feedback, budgets, alert state, job runs, the scheduler lease",
    "ALTER UPDATE": "forget blanks feedback text; cost recompute re-prices calls",
    "ALTER DELETE": "forget deletes prompt logs; retention and recompute run DELETE FROM (lightweight delete "
                    "needs ALTER DELETE)",
}
#: Global privileges a clustered runtime needs, and why.
CLUSTER_GRANTS: dict[str, str] = {
    "CLUSTER": "sharded: forget, retention and recompute mutate each shard's _local tables ON CLUSTER",
}
#: ``system`` tables the runtime reads (``select_from_system_db_requires_grant`` is on by default).
SYSTEM_TABLES: dict[str, str] = {
    "parts": "/metrics reports inserts' parts: active parts per table and partition, parts created",
}
#: ``system`` tables a clustered runtime reads as well.
CLUSTER_SYSTEM_TABLES: dict[str, str] = {
    "clusters": "migration_mode=auto asks system.clusters whether the cluster is replicated or sharded",
}


class RuntimeUserError(ValueError):
    """The runtime user's settings cannot be used; the message names the setting."""


@dataclass(frozen=True)
class RuntimeUser:
    """The account the services use; ``password`` is never shown in a repr."""

    name: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if not USER_NAME.fullmatch(self.name) or self.name in RESERVED_NAMES:
            raise RuntimeUserError("INFERWATCH_RUNTIME_USER must be a lower-case identifier (letters, digits, "
                                   f"underscore) other than {', '.join(sorted(RESERVED_NAMES))}, "
                                   f"got {self.name!r}")
        if len(self.password) < MIN_PASSWORD_CHARS:
            raise RuntimeUserError(f"INFERWATCH_RUNTIME_PASSWORD must have at least {MIN_PASSWORD_CHARS} "
                                   "characters")


def runtime_user_from(settings: Settings) -> RuntimeUser | None:
    """The runtime user ``settings`` ask for, or None when ``INFERWATCH_RUNTIME_USER`` is empty.

    Refuses the account the settings connect as: replacing its grants would lock the migration user out.
    """
    if not settings.runtime_user:
        return None
    if settings.runtime_user == settings.clickhouse_user:
        raise RuntimeUserError(f"INFERWATCH_RUNTIME_USER ({settings.runtime_user}) must differ from the migration "
                               "user INFERWATCH_CLICKHOUSE_USER: its grants would replace the migration user's "
                               "own")
    return RuntimeUser(settings.runtime_user, settings.runtime_password)


def password_hash(password: str, salt: str) -> str:
    """ClickHouse's ``sha256_hash`` with ``SALT``: hex SHA-256 of the password followed by the salt."""
    return hashlib.sha256((password + salt).encode("utf-8")).hexdigest()


def grants_of(target: Target) -> list[str]:
    """The runtime user's grants on ``target``, as ``PRIVILEGE[, ...] ON object`` items of one GRANT."""
    grants = [f"{', '.join(RUNTIME_GRANTS)} ON {target.database}.*"]
    grants += [f"SELECT ON system.{table}" for table in SYSTEM_TABLES]
    if target.clustered:
        grants += [f"SELECT ON system.{table}" for table in CLUSTER_SYSTEM_TABLES]
    if target.mode == "sharded":
        grants.append(f"{', '.join(CLUSTER_GRANTS)} ON *.*")
    return grants


def runtime_user_statements(user: RuntimeUser, target: Target, *, salt: str | None = None) -> list[str]:
    """The statements that create the user (or reset its password) and set its grants on ``target``.

    ``salt`` (hex) defaults to a fresh random one. On a clustered target every statement runs ``ON CLUSTER``, so
    each server's access storage gets the same user; sharded targets add :data:`CLUSTER_GRANTS`.
    """
    salt = salt if salt is not None else secrets.token_hex(16)
    if not re.fullmatch(r"[0-9a-f]{2,64}", salt):
        raise RuntimeUserError("salt must be lower-case hex")
    on_cluster = f" ON CLUSTER {target.cluster}" if target.clustered else ""
    identified = f"IDENTIFIED WITH sha256_hash BY '{password_hash(user.password, salt)}' SALT '{salt}'"
    return [
        f"CREATE USER IF NOT EXISTS {user.name}{on_cluster} {identified} DEFAULT DATABASE {target.database}",
        f"ALTER USER {user.name}{on_cluster} {identified} DEFAULT DATABASE {target.database}",
        f"GRANT{on_cluster} {', '.join(grants_of(target))} TO {user.name} WITH REPLACE OPTION",
    ]


def ensure_runtime_user(store: Store, target: Target, user: RuntimeUser) -> None:
    """Create or update ``user`` with exactly its grants; run by ``migrate`` as the migration user.

    Refuses to touch the account ``store`` is connected as (replacing its grants would lock it out).
    """
    if user.name == store.settings.clickhouse_user:
        raise RuntimeUserError(f"the runtime user {user.name} is the account migrate connects as")
    settings = {"distributed_ddl_task_timeout": 120} if target.clustered else None
    for statement in runtime_user_statements(user, target):
        store.command(statement, settings=settings)
