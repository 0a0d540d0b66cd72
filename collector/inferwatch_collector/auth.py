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
import logging
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

from .key_cache import KeyCache
from .ratelimit import RateLimiter
from .store import Store

log = logging.getLogger(__name__)

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


@dataclass
class KeyStats:
    """What key checks cost and refused, for ``/metrics`` (written under the key store's lock, read without)."""

    lookups: dict[str, int] = field(default_factory=lambda: {"valid": 0, "unknown": 0, "failed": 0})
    refused_by_limit: int = 0  # unknown-key lookups not made (over the global limit): 503 + Retry-After
    unknown_cache_hits: int = 0
    malformed: int = 0  # not shaped like a key: refused without a lookup
    stale_answers: int = 0  # keys answered past cache_seconds while the database was unreachable
    polls: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0})
    revocations_applied: int = 0  # valid cached keys dropped because the poll saw them revoked


class KeyStore:
    """Projects and keys in ClickHouse (``projects``, ``api_keys``; ReplacingMergeTree, read with FINAL), and the
    checks of keys on every request.

    A valid key is cached for ``cache_seconds``; an unknown one (by hash) for ``unknown_cache_seconds``, in a
    separate bounded cache (:class:`~inferwatch_collector.key_cache.KeyCache`). Database lookups of keys in
    neither cache take a token from one global bucket (``unknown_lookups_per_s``, ``unknown_lookup_burst``), given
    back when the key turns out valid: a flood of made-up keys costs at most that many queries, and over it a key
    is answered 503 + Retry-After without a query (a legitimate client with a brand-new key retries; one created
    through this collector is cached at once, one created elsewhere skips the bucket once the poll has seen it).

    Revocations reach every collector within the poll interval (setting ``key_poll_s``, 2 s): :meth:`start_polling`
    runs :meth:`poll_key_changes` in a thread, one small query for the key rows changed lately, which drops revoked
    keys from the cache (a key revoked here is dropped at once). No new table: revoking already writes a newer
    ``api_keys`` row.
    """

    #: Seconds of clock difference between collectors that the poll's look-back tolerates.
    CLOCK_SKEW_S = 60.0

    def __init__(self, store: Store, cache_seconds: float = 30.0, *, unknown_cache_seconds: float = 10.0,
                 unknown_cache_size: int = 10_000, valid_cache_size: int = 10_000,
                 unknown_lookups_per_s: float = 20.0, unknown_lookup_burst: int = 100) -> None:
        self._store = store
        self._cache_seconds = cache_seconds
        self.cache = KeyCache(valid_size=valid_cache_size, unknown_size=unknown_cache_size,
                              unknown_ttl_s=min(unknown_cache_seconds, cache_seconds))
        self._unknown_limiter = RateLimiter(unknown_lookups_per_s, unknown_lookup_burst)
        self.stats = KeyStats()
        self._stats_lock = threading.Lock()
        self._poller: threading.Thread | None = None
        self._stop = threading.Event()
        self._poll_failing = False

    @property
    def stale_answers(self) -> int:
        return self.stats.stale_answers

    def _count(self, counter: str, label: str | None = None, n: int = 1) -> None:
        with self._stats_lock:
            if label is None:
                setattr(self.stats, counter, getattr(self.stats, counter) + n)
            else:
                getattr(self.stats, counter)[label] += n

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
        """Create a key (and its project if new); the only time the full key is ever available. The key works
        through this collector at once (it is cached as valid)."""
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
        principal = Principal(project_id=project_id, key_id=key_id, scopes=frozenset(scopes))
        self.cache.remember_valid(key, hash_key(key), principal, time.monotonic())
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
        """Revoke a key; with ``project_id`` only a key of that project. False when no such key. Refused here at
        once, by other collectors after their next poll."""
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
        self.cache.forget_key_ids([kid], time.monotonic())
        return True

    def authenticate(self, key: str) -> Principal:
        """The key's principal, or :class:`AuthError`: 401 for a malformed, unknown or revoked key; 503 when it
        cannot be checked now (database unreachable, or too many unknown keys being looked up).

        When the database cannot be reached, the last answer for a valid key, however old, stands (exporters keep
        sending through an outage and the writer spools what they send; counted in ``stale_answers``); a key not
        seen valid before is a 503, which exporters retry."""
        match = _KEY_RE.fullmatch(key)
        if not match:
            self._count("malformed")
            raise AuthError(401, "invalid or revoked API key")
        now = time.monotonic()
        hit = self.cache.valid(key)
        if hit is not None and now - hit[0] < self._cache_seconds:
            return hit[1]
        digest = hash_key(key)
        if hit is None:
            if self.cache.is_unknown(digest, now):
                self._count("unknown_cache_hits")
                raise AuthError(401, "invalid or revoked API key")
            limited = not self.cache.is_fresh(digest, now) and self._unknown_limiter.acquire("unknown") > 0
            if limited:
                self._count("refused_by_limit")
                raise AuthError(503, "too many unrecognised API keys are being checked; retry later")
        try:
            principal = self._lookup(match.group(1), digest)
        except Exception as exc:  # the database is unreachable (any driver or connection error)
            self._count("lookups", "failed")
            if hit is None:
                raise AuthError(503, "API keys cannot be checked now (the database is unreachable); "
                                     "retry later") from exc
            self._count("stale_answers")
            return hit[1]
        if principal is None:
            self._count("lookups", "unknown")
            if hit is not None:
                self.cache.forget_key_ids([hit[1].key_id], now)
            self.cache.remember_unknown(digest, now)
            raise AuthError(401, "invalid or revoked API key")
        self._count("lookups", "valid")
        if hit is None:
            self._unknown_limiter.refund("unknown")  # the bucket is for unknown keys only
        self.cache.remember_valid(key, digest, principal, now)
        return principal

    def _lookup(self, key_id: str, digest: str) -> Principal | None:
        rows = self._store.query(
            "SELECT project_id, key_hash, scopes, revoked FROM api_keys FINAL WHERE key_id = {k:String}",
            {"k": key_id},
        ).result_rows
        if not rows:
            return None
        project_id, stored_hash, scopes, revoked = rows[0]
        if revoked or not hmac.compare_digest(stored_hash, digest):
            return None
        return Principal(project_id=project_id, key_id=key_id, scopes=frozenset(scopes))

    # --- revocations and new keys made by other collectors ---
    def poll_key_changes(self) -> int:
        """One poll: the key rows changed lately (revoked or created, by any collector); revoked keys leave the
        valid cache, new keys leave the unknown cache. Returns how many cached keys were dropped.

        Looks back ``max(cache_seconds, unknown TTL) + CLOCK_SKEW_S``: an entry older than its TTL is looked up
        again anyway, so only changes that young matter, and looking at them on every poll covers a lookup that
        raced with the revocation. Never raises: a failed poll (database unreachable) changes nothing, so
        last-known-good keys keep working through an outage."""
        now = time.monotonic()
        look_back_s = max(self._cache_seconds, self.cache.unknown_ttl_s) + self.CLOCK_SKEW_S
        try:
            rows = self._store.query(
                "SELECT key_id, key_hash, max(revoked) FROM api_keys "
                "WHERE updated_at >= fromUnixTimestamp64Milli({since:Int64}) GROUP BY key_id, key_hash",
                {"since": _now_ms() - int(look_back_s * 1000)},
            ).result_rows
        except Exception as exc:  # noqa: BLE001 - the database is down: keep every cached answer
            self._count("polls", "failed")
            if not self._poll_failing:
                log.warning("API key revocation poll failed (%s); cached keys stand until it succeeds",
                            type(exc).__name__)
            self._poll_failing = True
            return 0
        self._poll_failing = False
        self._count("polls", "ok")
        self.cache.mark_fresh((digest for _, digest, revoked in rows if not revoked), now + look_back_s)
        dropped = self.cache.forget_key_ids((key_id for key_id, _, revoked in rows if revoked), now)
        self.cache.prune(now)
        self._count("revocations_applied", n=dropped)
        return dropped

    def start_polling(self, interval_s: float) -> None:
        """Run :meth:`poll_key_changes` every ``interval_s`` in a daemon thread until :meth:`stop_polling`."""
        if interval_s <= 0 or self._poller is not None:
            return
        self._stop.clear()

        def run() -> None:
            while not self._stop.wait(interval_s):
                self.poll_key_changes()

        self._poller = threading.Thread(target=run, name="inferwatch-key-poll", daemon=True)
        self._poller.start()

    def stop_polling(self) -> None:
        if self._poller is not None:
            self._stop.set()
            self._poller.join(timeout=5)
            self._poller = None

    def metric_lines(self) -> list[str]:
        """Prometheus lines: key lookups by outcome, refusals, cache sizes, polls."""
        stats = self.stats
        valid, unknown = self.cache.sizes()
        return [
            "# TYPE inferwatch_api_key_lookups_total counter",
            *(f'inferwatch_api_key_lookups_total{{outcome="{o}"}} {n}' for o, n in stats.lookups.items()),
            "# TYPE inferwatch_api_key_lookups_refused_total counter",
            f"inferwatch_api_key_lookups_refused_total {stats.refused_by_limit}",
            "# TYPE inferwatch_api_key_unknown_cache_hits_total counter",
            f"inferwatch_api_key_unknown_cache_hits_total {stats.unknown_cache_hits}",
            "# TYPE inferwatch_api_key_malformed_total counter",
            f"inferwatch_api_key_malformed_total {stats.malformed}",
            "# TYPE inferwatch_api_key_stale_answers_total counter",
            f"inferwatch_api_key_stale_answers_total {stats.stale_answers}",
            "# TYPE inferwatch_api_key_cache_entries gauge",
            f'inferwatch_api_key_cache_entries{{cache="valid"}} {valid}',
            f'inferwatch_api_key_cache_entries{{cache="unknown"}} {unknown}',
            "# TYPE inferwatch_api_key_polls_total counter",
            *(f'inferwatch_api_key_polls_total{{outcome="{o}"}} {n}' for o, n in stats.polls.items()),
            "# TYPE inferwatch_api_key_revocations_applied_total counter",
            f"inferwatch_api_key_revocations_applied_total {stats.revocations_applied}",
        ]


def require(principal: Principal, scope: str) -> Principal:
    """403 unless the principal holds ``scope``."""
    if not principal.allows(scope):
        raise AuthError(403, f"this API key lacks the '{scope}' scope")
    return principal
