"""Token buckets: per API key for ingest (``ingest_rate_limit_per_key`` requests/s, ``ingest_rate_burst`` burst),
and one global bucket for database lookups of keys the collector does not know (see ``auth.KeyStore``).

For ingest, one bucket per API key id: a client that floods the collector is answered 429 + ``Retry-After`` (OTLP exporters
back off and retry on 429) while every other key keeps its own full rate. Buckets live in memory, per collector
process (with N collector replicas behind a load balancer a key gets up to N times the rate); idle buckets are
dropped so the table stays bounded whatever the number of keys.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Callable


class RateLimiter:
    """Token bucket per key: ``rate`` tokens/s refill, at most ``burst`` tokens held. ``rate <= 0``: no limit."""

    def __init__(self, rate: float, burst: int | None = None, *, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000) -> None:
        self.rate = float(rate)
        self.burst = float(max(1, burst if burst is not None else math.ceil(rate)))
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill time)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def acquire(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from ``key``'s bucket: 0.0 when allowed, else the seconds until it would be."""
        if not self.enabled:
            return 0.0
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            allowed = tokens >= cost
            self._buckets[key] = (tokens - cost if allowed else tokens, now)
            if len(self._buckets) > self._max_keys:
                self._prune(now)
            return 0.0 if allowed else (cost - tokens) / self.rate

    def refund(self, key: str, cost: float = 1.0) -> None:
        """Give back ``cost`` tokens taken by :meth:`acquire` for work that turned out not to count (at most up to
        the burst)."""
        if not self.enabled:
            return
        with self._lock:
            held = self._buckets.get(key)
            if held is not None:
                self._buckets[key] = (min(self.burst, held[0] + cost), held[1])

    def _prune(self, now: float) -> None:
        """Drop buckets that have refilled completely (they hold no state worth keeping)."""
        full_after = self.burst / self.rate
        for key in [k for k, (_, last) in self._buckets.items() if now - last >= full_after]:
            del self._buckets[key]
        if len(self._buckets) > self._max_keys:  # still too many active keys: forget the lot (fail open)
            self._buckets.clear()


def retry_after_header(wait_s: float) -> str:
    """``Retry-After`` in whole seconds, at least 1."""
    return str(max(1, math.ceil(wait_s)))
