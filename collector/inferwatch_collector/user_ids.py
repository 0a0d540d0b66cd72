"""User-identifying attribute values are stored as HMAC-SHA256 hashes, never as sent.

Which keys: ``enduser.id``, ``user.id``, ``user_id``, and any key ending in ``.user.id``, ``.user_id`` or
``.enduser.id`` (``langfuse.user.id``, ``traceloop.association.properties.user_id``, ...), compared
case-insensitively (:func:`is_user_key`); ``session.id`` or a key ending in ``.session.id`` only when its value is
an e-mail address (:func:`hashes_value`), else the value is redacted like any other.

The hash is the lower-case hex HMAC-SHA256 of ``str(value)`` with the deployment's key: exactly the SDK's
``inferwatch.context.hash_user_id`` with the same key, so a deployment that gives the SDK
(``init(user_hash_key=...)``) and the collector (``INFERWATCH_USER_HASH_KEY``) the same key gets hashes that join
with ``llm_calls.user_hash``, and ``forget`` can find a user's rows from the raw id.

The key (:func:`load_user_hash_key`): the ``user_hash_key`` setting, else a random key created once per
deployment and kept in ClickHouse (``deployment_secrets``, migration 0011), so every replica and every restart
hashes alike. Replicas that create it at the same time converge on one value: every reader takes the earliest row
(ties: the smallest value). The key is a secret: it is never logged or returned by the API.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: ingest workers hash ids without pydantic settings or a database client
    from .settings import Settings
    from .store import Store

#: Keys whose value is a user id.
USER_KEYS = frozenset({"enduser.id", "user.id", "user_id"})
USER_KEY_SUFFIXES = (".user.id", ".user_id", ".enduser.id")
#: Keys whose value is hashed only when it is an e-mail address.
SESSION_KEY = "session.id"
SESSION_KEY_SUFFIX = ".session.id"

#: The ``deployment_secrets`` row that holds the generated key.
KEY_NAME = "user_hash_key"
TABLE = "deployment_secrets"

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_MEMO_LIMIT = 10_000


def is_user_key(key: str) -> bool:
    """Whether ``key`` names a user id (its value is always hashed)."""
    lowered = key.lower()
    return lowered in USER_KEYS or lowered.endswith(USER_KEY_SUFFIXES)


def is_session_key(key: str) -> bool:
    """Whether ``key`` names a session id (hashed when its value is an e-mail address)."""
    lowered = key.lower()
    return lowered == SESSION_KEY or lowered.endswith(SESSION_KEY_SUFFIX)


def hashes_value(key: str, text: str) -> bool:
    """Whether the value ``text`` of ``key`` is stored hashed."""
    return is_user_key(key) or (is_session_key(key) and _EMAIL.fullmatch(text.strip()) is not None)


class UserHasher:
    """HMAC-SHA256 of user ids with one key; results memoised (a bounded dict: user ids repeat across spans)."""

    __slots__ = ("_key", "_memo")

    def __init__(self, key: bytes) -> None:
        if not key:
            raise ValueError("the user hash key must not be empty")
        self._key = bytes(key)
        self._memo: dict[str, str] = {}

    def __repr__(self) -> str:  # never the key
        return "UserHasher(<key>)"

    def hash(self, user_id: str) -> str:
        """Lower-case hex HMAC-SHA256 of ``str(user_id)``: ``inferwatch.context.hash_user_id`` with this key."""
        text = str(user_id)
        found = self._memo.get(text)
        if found is None:
            found = hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[text] = found
        return found


def load_user_hash_key(settings: Settings, store: Store) -> bytes:
    """The deployment's key: ``settings.user_hash_key`` (UTF-8) when set, else the one kept in ClickHouse,
    created now (64 hex characters of 32 random bytes) when there is none.

    The stored key is used as its text's UTF-8 bytes, like the setting, so an operator can copy it into the SDK's
    ``user_hash_key`` to join hashes. On a cluster the insert waits for a quorum of replicas and the read for
    every quorum write, so two collectors starting at once read the same earliest row."""
    if settings.user_hash_key:
        return settings.user_hash_key.encode()
    clustered = bool(settings.cluster) and not settings.embedded
    found = _stored_key(store, clustered)
    if found is None:
        store.client.insert(
            store.table(TABLE), [[KEY_NAME, secrets.token_hex(32)]], column_names=["name", "value"],
            settings={"insert_quorum": "auto"} if clustered else None,
        )  # fmt: skip
        found = _stored_key(store, clustered)
        if found is None:  # pragma: no cover - the insert above succeeded, so a row exists
            raise RuntimeError("the generated user hash key was not found after it was written")
    return found.encode()


def _stored_key(store: Store, clustered: bool) -> str | None:
    settings: dict[str, Any] | None = {"select_sequential_consistency": 1} if clustered else None
    rows = store.query(
        f"SELECT argMin(value, (created_at, value)), count() FROM {store.table(TABLE)} WHERE name = {{n:String}}",
        parameters={"n": KEY_NAME}, settings=settings,
    ).result_rows  # fmt: skip
    if not rows or not rows[0][1]:
        return None
    return str(rows[0][0])
