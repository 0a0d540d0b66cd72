"""The in-memory side of API key checks: valid keys and unknown keys in two separate, bounded caches.

Valid keys (the key -> its principal) sit in an LRU bounded by ``valid_size``; only a database lookup that found
the key, or a key created here, puts one there, so a flood of made-up keys can never push a valid key out.
Unknown keys (missing, wrong secret, revoked) are remembered by ``sha256(key)`` only, for ``unknown_ttl_s``, in
their own bounded LRU: a client retrying a bad key costs one database query per TTL, and an attacker's long
strings are not kept. Keys the revocation poll saw created recently are ``fresh``: their hashes skip the
unknown-key rate limit (see :class:`~inferwatch_collector.auth.KeyStore`).

Thread-safe; every method is O(1) except :meth:`KeyCache.forget_key_ids` (one pass over the valid keys).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .auth import Principal


class KeyCache:
    """Valid keys by key, unknown keys by hash, recently created key hashes; times are ``time.monotonic()``."""

    def __init__(self, *, valid_size: int = 10_000, unknown_size: int = 10_000, unknown_ttl_s: float = 10.0) -> None:
        self.valid_size = max(1, valid_size)
        self.unknown_size = max(1, unknown_size)
        self.unknown_ttl_s = unknown_ttl_s
        self._valid: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self._unknown: OrderedDict[str, float] = OrderedDict()
        self._fresh: dict[str, float] = {}  # hash of a key created recently (anywhere) -> until when
        self._lock = threading.Lock()

    # --- valid keys ---
    def valid(self, key: str) -> tuple[float, Principal] | None:
        """``(checked at, principal)`` of a key last found valid, or None."""
        with self._lock:
            hit = self._valid.get(key)
            if hit is not None:
                self._valid.move_to_end(key)
            return hit

    def remember_valid(self, key: str, digest: str, principal: Principal, now: float) -> None:
        """``key`` is valid as of ``now`` (its hash leaves the unknown cache); the least recently used valid key
        goes when full."""
        with self._lock:
            self._unknown.pop(digest, None)
            self._valid[key] = (now, principal)
            self._valid.move_to_end(key)
            while len(self._valid) > self.valid_size:
                self._valid.popitem(last=False)

    def forget_key_ids(self, key_ids: Iterable[str], now: float) -> int:
        """Drop the valid keys with these key ids (revoked) and remember them as unknown; how many were dropped."""
        from .auth import hash_key

        ids = set(key_ids)
        if not ids:
            return 0
        with self._lock:
            gone = [key for key, (_, principal) in self._valid.items() if principal.key_id in ids]
            for key in gone:
                del self._valid[key]
        for key in gone:
            self.remember_unknown(hash_key(key), now)
        return len(gone)

    # --- unknown keys ---
    def is_unknown(self, digest: str, now: float) -> bool:
        """Whether the key of this hash was found unknown less than ``unknown_ttl_s`` ago."""
        with self._lock:
            seen = self._unknown.get(digest)
            if seen is None:
                return False
            if now - seen < self.unknown_ttl_s:
                return True
            del self._unknown[digest]
            return False

    def remember_unknown(self, digest: str, now: float) -> None:
        """The key of this hash is unknown as of ``now``; the oldest unknown entry goes when full."""
        if self.unknown_ttl_s <= 0:
            return
        with self._lock:
            self._unknown[digest] = now
            self._unknown.move_to_end(digest)
            while len(self._unknown) > self.unknown_size:
                self._unknown.popitem(last=False)

    # --- keys created recently ---
    def mark_fresh(self, digests: Iterable[str], until: float) -> None:
        """Keys of these hashes were just created: they leave the unknown cache and skip the rate limit until
        ``until``."""
        with self._lock:
            for digest in digests:
                self._unknown.pop(digest, None)
                self._fresh[digest] = until

    def is_fresh(self, digest: str, now: float) -> bool:
        with self._lock:
            return self._fresh.get(digest, 0.0) > now

    def prune(self, now: float) -> None:
        """Drop expired unknown and fresh entries (memory only: lookups already ignore them)."""
        with self._lock:
            while self._unknown:
                digest, seen = next(iter(self._unknown.items()))
                if now - seen < self.unknown_ttl_s:
                    break
                del self._unknown[digest]
            for digest in [d for d, until in self._fresh.items() if until <= now]:
                del self._fresh[digest]

    def sizes(self) -> tuple[int, int]:
        """``(valid keys, unknown keys)`` held."""
        with self._lock:
            return len(self._valid), len(self._unknown)
