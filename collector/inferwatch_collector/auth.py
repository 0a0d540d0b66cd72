"""Projects and API keys: created here, stored hashed, looked up (with a short cache) on every request.

A key looks like ``iwk_<key id>_<secret>``. The key id is public (it is how a key is listed and revoked); the
secret is 32 random bytes. Only ``sha256(key)`` is stored: the key is high-entropy random data, so a slow
password hash would add latency to every request without adding safety. Comparison is constant-time.

A key belongs to exactly one project and carries scopes; every query the collector runs is filtered by the
key's project, so a key can never read or write another project's rows.

Langfuse SDKs authenticate with HTTP Basic (``public key:secret key``). Every key is also such a pair, by a
re-encoding, with nothing more stored: ``iwk_<key id>_<secret>`` is public key ``pk-lf-<key id>`` and secret key
``sk-lf-<secret>`` (:func:`langfuse_pair`). A Basic header is turned back into the key (:func:`parse_authorization`)
and checked like a Bearer key, so a public key paired with another key's secret hashes to no stored key (401).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Iterable

from .store import Store

SCOPES = ("ingest", "read", "prompts:read", "admin")
_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_KEY_RE = re.compile(r"iwk_([0-9a-f]{12})_([A-Za-z0-9_-]{20,})")
LANGFUSE_PUBLIC_PREFIX = "pk-lf-"
LANGFUSE_SECRET_PREFIX = "sk-lf-"
_LF_PUBLIC_RE = re.compile(r"pk-lf-([0-9a-f]{12})")
_LF_SECRET_RE = re.compile(r"sk-lf-([A-Za-z0-9_-]{20,})")


#: Seconds a client is asked to wait when keys cannot be checked (the database is unreachable).
KEYS_UNAVAILABLE_RETRY_AFTER_S = 5


class AuthError(Exception):
    """Missing, malformed, unknown or revoked key (401), a key without the needed scope (403), or a key that cannot
    be checked now because the database is unreachable (503: retry after :data:`KEYS_UNAVAILABLE_RETRY_AFTER_S`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Principal:
    """Who is calling: the key's project and scopes."""

    project_id: str
    key_id: str
    scopes: frozenset[str]

    def allows(self, scope: str) -> bool:
        """``admin`` implies every other scope of the same project."""
        return scope in self.scopes or "admin" in self.scopes


@dataclass(frozen=True)
class KeyInfo:
    """A key as listed: never its secret."""

    key_id: str
    project_id: str
    name: str
    scopes: tuple[str, ...]
    created_at: str
    revoked: bool


def validate_project(name: str) -> str:
    """Project ids are short slugs so they are safe in URLs, logs and file names."""
    if not _PROJECT_RE.fullmatch(name):
        raise ValueError(
            f"project name {name!r} is invalid: use 1-63 lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    return name


def validate_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """Known scopes only, each once, in canonical order."""
    wanted = set(scopes)
    unknown = wanted - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s) {sorted(unknown)}; valid scopes: {', '.join(SCOPES)}")
    if not wanted:
        raise ValueError(f"a key needs at least one scope ({', '.join(SCOPES)})")
    return tuple(s for s in SCOPES if s in wanted)


def hash_key(key: str) -> str:
    """What is stored for a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh ``(key_id, key)``."""
    key_id = secrets.token_hex(6)
    return key_id, f"iwk_{key_id}_{secrets.token_urlsafe(32)}"


def langfuse_pair(key: str) -> tuple[str, str]:
    """The Langfuse-style ``(public key, secret key)`` of an inferwatch key (a re-encoding, nothing stored).

    A Langfuse SDK configured with this pair sends ``Authorization: Basic base64(public:secret)``, which
    :func:`parse_authorization` turns back into ``key``."""
    match = _KEY_RE.fullmatch(key)
    if not match:
        raise ValueError("not an inferwatch API key (iwk_<key id>_<secret>)")
    return LANGFUSE_PUBLIC_PREFIX + match.group(1), LANGFUSE_SECRET_PREFIX + match.group(2)


def parse_authorization(authorization: str | None, api_key_header: str | None) -> str:
    """The key from ``Authorization: Bearer <key>``, ``Authorization: Basic base64(<public key>:<secret key>)``
    (a Langfuse-style pair, see :func:`langfuse_pair`) or the ``x-inferwatch-api-key`` header.

    OTLP exporters configured with ``OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<key>`` send the first
    form, Langfuse SDKs the second; the third suits clients that cannot set Authorization. A malformed header
    is a 401 that says what is wrong with it.
    """
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() == "basic":
            return _basic_key(value.strip())
        if scheme.lower() != "bearer" or not value.strip():
            raise AuthError(401, "Authorization header must be 'Bearer <api key>' or 'Basic "
                                 "base64(<public key>:<secret key>)'")
        return value.strip()
    if api_key_header:
        return api_key_header.strip()
    raise AuthError(401, "missing API key: send 'Authorization: Bearer <api key>'")


def _basic_key(credentials: str) -> str:
    """The inferwatch key of a Basic ``base64(pk-lf-<key id>:sk-lf-<secret>)`` credential."""
    try:
        decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise AuthError(401, "Authorization Basic credentials are not valid base64 of "
                             "'<public key>:<secret key>'") from None
    public, colon, secret = decoded.partition(":")
    if not colon:
        raise AuthError(401, "Authorization Basic credentials must be '<public key>:<secret key>' "
                             "(no ':' separator found)")
    public_match, secret_match = _LF_PUBLIC_RE.fullmatch(public), _LF_SECRET_RE.fullmatch(secret)
    if public_match is None:
        raise AuthError(401, "Authorization Basic public key must look like 'pk-lf-<12 hex digits>' "
                             "(see `inferwatch-server keys create --langfuse`)")
    if secret_match is None:
        raise AuthError(401, "Authorization Basic secret key must look like 'sk-lf-<secret>' "
                             "(see `inferwatch-server keys create --langfuse`)")
    return f"iwk_{public_match.group(1)}_{secret_match.group(1)}"


def _now_ms() -> int:
    return int(time.time() * 1000)


class KeyStore:
    """Projects and keys in ClickHouse (``projects``, ``api_keys``; ReplacingMergeTree, read with FINAL)."""

    def __init__(self, store: Store, cache_seconds: float = 30.0) -> None:
        self._store = store
        self._cache_seconds = cache_seconds
        self._cache: dict[str, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()
        self.stale_answers = 0  # keys answered from the cache past cache_seconds while the database was unreachable

    # --- projects ---
    def ensure_project(self, project_id: str, name: str | None = None) -> None:
        """Create the project unless it exists (idempotent)."""
        validate_project(project_id)
        exists = self._store.query(
            "SELECT count() FROM projects FINAL WHERE project_id = {p:String}", {"p": project_id}
        ).result_rows[0][0]
        if not exists:
            now = _now_ms()
            self._store.insert_columns(
                "projects", [[project_id], [name or project_id], [now], [now], [0]],
                ["project_id", "name", "created_at", "updated_at", "is_deleted"],
            )

    def list_projects(self) -> list[str]:
        """Every project id, sorted."""
        rows = self._store.query("SELECT project_id FROM projects FINAL ORDER BY project_id").result_rows
        return [r[0] for r in rows]

    # --- keys ---
    def create_key(self, project_id: str, scopes: Iterable[str], name: str = "") -> str:
        """Create a key (and its project if new); the only time the full key is ever available."""
        scopes = validate_scopes(scopes)
        self.ensure_project(project_id)
        key_id, key = new_key()
        now = _now_ms()
        self._store.insert_columns(
            "api_keys",
            [[key_id], [project_id], [hash_key(key)], [list(scopes)], [name], [now], [now], [0], [0]],
            ["key_id", "project_id", "key_hash", "scopes", "name", "created_at", "updated_at", "revoked",
             "is_deleted"],
        )
        return key

    def list_keys(self, project_id: str | None = None) -> list[KeyInfo]:
        """Keys of one project (or all), without secrets."""
        where, params = ("WHERE project_id = {p:String}", {"p": project_id}) if project_id else ("", {})
        rows = self._store.query(
            "SELECT key_id, project_id, name, scopes, toString(created_at), revoked "
            f"FROM api_keys FINAL {where} ORDER BY project_id, created_at",
            params,
        ).result_rows
        return [KeyInfo(r[0], r[1], r[2], tuple(r[3]), r[4], bool(r[5])) for r in rows]

    def revoke(self, key_id: str, project_id: str | None = None) -> bool:
        """Revoke a key; with ``project_id`` only a key of that project. False when no such key."""
        where = "key_id = {k:String}" + (" AND project_id = {p:String}" if project_id else "")
        rows = self._store.query(
            f"SELECT key_id, project_id, key_hash, scopes, name, created_at FROM api_keys FINAL WHERE {where}",
            {"k": key_id, "p": project_id or ""},
        ).result_rows
        if not rows:
            return False
        kid, pid, khash, scopes, name, created = rows[0]
        self._store.insert_columns(
            "api_keys", [[kid], [pid], [khash], [list(scopes)], [name], [created], [_now_ms()], [1], [0]],
            ["key_id", "project_id", "key_hash", "scopes", "name", "created_at", "updated_at", "revoked",
             "is_deleted"],
        )
        with self._lock:
            self._cache.clear()
        return True

    def authenticate(self, key: str) -> Principal:
        """The key's principal, or :class:`AuthError` (401). Cached for ``cache_seconds``, misses included.

        When the database cannot be reached, the last answer for the key, however old, stands (exporters keep
        sending through an outage and the writer spools what they send; counted in ``stale_answers``); a key never
        seen before is a 503, which exporters retry."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and now - hit[0] < self._cache_seconds:
            principal = hit[1]
        else:
            try:
                principal = self._lookup(key)
            except Exception as exc:  # the database is unreachable (any driver or connection error)
                if hit is None:
                    raise AuthError(503, "API keys cannot be checked now (the database is unreachable); "
                                         "retry later") from exc
                principal = hit[1]
                with self._lock:
                    self.stale_answers += 1
            else:
                with self._lock:
                    if len(self._cache) > 10_000:  # bound memory against key-guessing floods
                        self._cache.clear()
                    self._cache[key] = (now, principal)
        if principal is None:
            raise AuthError(401, "invalid or revoked API key")
        return principal

    def _lookup(self, key: str) -> Principal | None:
        match = _KEY_RE.fullmatch(key)
        if not match:
            return None
        rows = self._store.query(
            "SELECT project_id, key_hash, scopes, revoked FROM api_keys FINAL WHERE key_id = {k:String}",
            {"k": match.group(1)},
        ).result_rows
        if not rows:
            return None
        project_id, stored_hash, scopes, revoked = rows[0]
        if revoked or not hmac.compare_digest(stored_hash, hash_key(key)):
            return None
        return Principal(project_id=project_id, key_id=match.group(1), scopes=frozenset(scopes))


def require(principal: Principal, scope: str) -> Principal:
    """403 unless the principal holds ``scope``."""
    if not principal.allows(scope):
        raise AuthError(403, f"this API key lacks the '{scope}' scope")
    return principal
