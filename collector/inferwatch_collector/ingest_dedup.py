"""Recognise a retried OTLP request so it lands once.

OTLP exporters retry a request byte for byte when they did not see the answer (timeout, 503, connection
reset). The writer's deduplication tokens cover retries *inside* the collector; this covers retries *from the
client*: a digest of (project, encoding, body) is remembered with the future of its write, so a retry that
arrives while the first is still being written waits for that same write, and one that arrives after it
committed is acknowledged without writing again. A failed write is forgotten, so its retry writes normally.

The memory is bounded (``capacity`` digests, oldest evicted first, each holding only the outcome of its write
once it is done, never the request); a retry older than that window would be
written again, which is why the window is sized well above what exporters retry within (minutes).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Future


def request_digest(project_id: str, content_type: str, content_encoding: str, body: bytes) -> bytes:
    """Identity of one request as an exporter would resend it."""
    h = hashlib.blake2b(digest_size=16)
    for part in (project_id, content_type, content_encoding):
        h.update(part.encode())
        h.update(b"\0")
    h.update(body)
    return h.digest()


class RecentRequests:
    """digest -> future of the write that carried it; thread-safe, bounded."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.hits = 0
        self._items: OrderedDict[bytes, Future] = OrderedDict()
        self._lock = threading.Lock()

    def begin(self, digest: bytes) -> tuple[Future, bool]:
        """Atomically find or open the write for this request.

        Returns ``(future, owner)``. When ``owner`` is true the caller must write the request and resolve the
        future (result or exception); otherwise the future belongs to an earlier identical request, pending
        or committed, and the caller only waits for it. A failed write is forgotten, so its retry writes.
        """
        future: Future = Future()
        if self.capacity <= 0:
            return future, True
        with self._lock:
            existing = self._items.get(digest)
            if existing is not None and not (existing.done() and existing.exception() is not None):
                self._items.move_to_end(digest)
                self.hits += 1
                return existing, False
            self._items[digest] = future
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

        def settle(done: Future) -> None:
            # A finished Future keeps its done-callbacks, and the request path's callbacks hold the request
            # (its body, its rows), so remembering it would keep every request of the window in memory.
            # Only the outcome is remembered: a fresh Future carrying the result alone.
            failed = done.exception() is not None
            settled: Future | None = None
            if not failed:
                settled = Future()
                settled.set_result(done.result())
            with self._lock:
                if self._items.get(digest) is done:
                    if failed:
                        del self._items[digest]
                    else:
                        self._items[digest] = settled  # type: ignore[assignment]

        future.add_done_callback(settle)
        return future, True
