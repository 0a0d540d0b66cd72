"""One in-flight budget for every route that decodes a request body (traces, metrics, logs, feedback).

A request reserves what its body costs *decompressed* (plus its compressed bytes, also held) before anything
decodes it, and releases it once its rows are written (or it failed). The decompressed size of a gzip body is
read from its trailer (ISIZE, the last member's size mod 2^32) without inflating anything: a trailer above the
size limit is a 413 at once, and a trailer that lies is caught by the decoder, which inflates at most what was
reserved (:func:`decode_cap`). Charging decompressed bytes bounds what is queued by the work it causes (decoding
time grows with them) and the memory it holds; a 50 KiB gzip body that inflates to 15 MiB costs 15 MiB.

Fairness: a project may hold at most ``project_share`` of the budget (a project that holds nothing is always let in
when the total allows it), so one tenant's flood leaves the rest to the others and their requests are admitted at
once. A request that does not fit waits at most ``max_wait_s`` (well inside an exporter's 10 s timeout) and is
then answered 429 (its project is over its share) or 503 (the collector is full), both with ``Retry-After``: the
OTLP specification, the OpenTelemetry exporters and our SDK retry both. Waiters are woken least-holding project
first, so a quiet project's request goes before a flooding one's.

The compressed body is read before it reserves (at most ``max_body_bytes`` per request, and it must cross the
network first); what the budget bounds is what bodies become. Decoding one body still needs several times its
decompressed size while it runs (Python objects of a parsed JSON body); that happens one body at a time per ingest
worker (:mod:`.ingest_pool`).

Thread-safe: releases come from the writer's thread (a request's write committed) as well as from the event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Awaitable, Callable, TypeVar

from .otlp_decode import PayloadTooLarge

T = TypeVar("T")
_GZIP = frozenset({"gzip", "x-gzip"})


class Overloaded(Exception):
    """The budget had no room within the wait: answer ``status`` (429/503) with ``Retry-After``."""

    def __init__(self, status: int, retry_after_s: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s
        self.message = message


class TooLarge(Exception):
    """The body says (gzip trailer) it inflates beyond the size limit: 413 without inflating it."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"decompressed request body exceeds the limit of {limit} bytes")
        self.message = str(self)


def decompressed_estimate(body: bytes, content_encoding: str | None, max_bytes: int) -> int:
    """What ``body`` will be once decompressed, from its gzip trailer (identity: its length), at most
    ``max_bytes``; raises :class:`TooLarge` when the trailer says more than ``max_bytes``.

    A trailer is a claim, not a proof (several members, or a lie): the decoder is given this figure as its cap
    and overrunning it is handled by :func:`decode_cap`'s caller (grow the reservation or refuse)."""
    encoding = (content_encoding or "").strip().lower()
    if encoding not in _GZIP or len(body) < 18 or body[:2] != b"\x1f\x8b":
        return min(len(body), max_bytes)
    isize = int.from_bytes(body[-4:], "little")
    if isize > max_bytes:  # the true size is congruent to it mod 2^32, so at least as large
        raise TooLarge(max_bytes)
    return max(isize, min(len(body), max_bytes))


def decode_cap(estimate: int, max_bytes: int) -> int:
    """The decompressed size a decoder may produce for a body reserved at ``estimate``: a little slack over the
    trailer's claim (a few members, rounding), never more than ``max_bytes``."""
    return min(max_bytes, estimate + max(64 * 1024, estimate // 8))


def body_cost(body: bytes, content_encoding: str | None, max_bytes: int) -> tuple[int, int]:
    """``(charge, cap)`` of one body: the bytes to reserve (decompressed, plus the compressed body also held)
    and the most its decoder may inflate. Raises :class:`TooLarge` (see :func:`decompressed_estimate`)."""
    estimate = decompressed_estimate(body, content_encoding, max_bytes)
    compressed = (content_encoding or "").strip().lower() in _GZIP
    cap = decode_cap(estimate, max_bytes) if compressed else max_bytes
    return (len(body) + cap if compressed else len(body)), cap


async def decode_within(reservation: "Reservation", cap: int, max_bytes: int,
                        decode: Callable[[int], Awaitable[T]]) -> T:
    """``await decode(cap)``; when the body inflates past ``cap`` (its gzip trailer understated it), grow the
    reservation to ``max_bytes`` if that fits now and decode again, else :class:`Overloaded` (503). A body
    beyond ``max_bytes`` raises the decoder's ``PayloadTooLarge`` (413)."""
    try:
        return await decode(cap)
    except PayloadTooLarge:
        if cap >= max_bytes:
            raise
    if not reservation.try_grow(reservation.size - cap + max_bytes):
        raise Overloaded(503, 1, "collector is overloaded; retry later")
    return await decode(max_bytes)


@dataclass(eq=False)
class _Waiter:
    project: str
    size: int
    seq: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future
    granted: bool = False


@dataclass
class Reservation:
    """Bytes held by one request; :meth:`release` (idempotent, any thread) gives them back."""

    budget: "InflightBudget"
    project: str
    size: int
    released: bool = False

    def resize(self, size: int) -> None:
        """Hold ``size`` instead (shrinking after decoding: only the encoded rows wait for the writer)."""
        self.budget._resize(self, max(0, size))

    def try_grow(self, size: int) -> bool:
        """Hold ``size`` if it fits now (never waits: a request waiting while holding could deadlock others)."""
        return self.budget._try_grow(self, size)

    def release(self) -> None:
        self.budget._release(self)


@dataclass
class _Counters:
    waits: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # route -> requests that waited
    rejected: defaultdict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))  # (route, why)


class InflightBudget:
    """Admission by decompressed bytes, with a per-project share and a bounded wait (see the module docstring)."""

    def __init__(self, limit: int, *, project_share: float = 0.5, max_wait_s: float = 2.0) -> None:
        if limit < 1 or not 0 < project_share <= 1 or max_wait_s < 0:
            raise ValueError("limit >= 1, 0 < project_share <= 1 and max_wait_s >= 0 are required")
        self.limit = limit
        self.project_cap = max(1, int(limit * project_share))
        self.max_wait_s = max_wait_s
        self.used = 0
        self.held: dict[str, int] = {}
        self.counters = _Counters()
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    # --- admission -------------------------------------------------------------------------------------------
    def _fits(self, project: str, size: int) -> bool:
        if self.used and self.used + size > self.limit:
            return False
        held = self.held.get(project, 0)
        return not held or held + size <= self.project_cap

    def _take(self, project: str, size: int) -> None:
        self.used += size
        self.held[project] = self.held.get(project, 0) + size

    def _give(self, project: str, size: int) -> None:
        self.used -= size
        left = self.held.get(project, 0) - size
        if left > 0:
            self.held[project] = left
        else:
            self.held.pop(project, None)

    def try_reserve(self, project: str, size: int) -> Reservation | None:
        """A reservation of ``size`` for ``project`` if it fits now, else None."""
        with self._lock:
            if not self._fits(project, size):
                return None
            self._take(project, size)
            return Reservation(self, project, size)

    async def reserve(self, project: str, size: int, route: str) -> Reservation:
        """Reserve ``size`` bytes for ``project``, waiting at most ``max_wait_s``; raises :class:`Overloaded`."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._fits(project, size):
                self._take(project, size)
                return Reservation(self, project, size)
            waiter = _Waiter(project, size, next(self._seq), loop, loop.create_future())
            self._waiters.append(waiter)
            self.counters.waits[route] += 1
        try:
            await asyncio.wait_for(asyncio.shield(waiter.future), self.max_wait_s)
        except BaseException as exc:  # timed out, or the request was cancelled (client gone)
            with self._lock:
                if not waiter.granted:
                    self._waiters.remove(waiter)
                    held = self.held.get(project, 0)  # 429 when this project's own share is what blocks it
                    over_share = bool(held) and held + size > self.project_cap and self.project_cap < self.limit
            if waiter.granted:  # granted while timing out: keep it unless cancelled
                reservation = Reservation(self, project, size)
                if not isinstance(exc, asyncio.TimeoutError):
                    reservation.release()
                    raise
                return reservation
            if not isinstance(exc, asyncio.TimeoutError):
                raise
            retry = max(1, math.ceil(self.max_wait_s))
            if over_share:
                self.counters.rejected[(route, "project_share")] += 1
                raise Overloaded(429, retry, "this project has too many request bytes in flight; retry later") \
                    from None
            self.counters.rejected[(route, "budget_full")] += 1
            raise Overloaded(503, retry, "collector is overloaded; retry later") from None
        return Reservation(self, project, size)

    # --- release ---------------------------------------------------------------------------------------------
    def _release(self, reservation: Reservation) -> None:
        with self._lock:
            if reservation.released:
                return
            reservation.released = True
            self._give(reservation.project, reservation.size)
            woken = self._wake()
        _notify(woken)

    def _resize(self, reservation: Reservation, size: int) -> None:
        with self._lock:
            if reservation.released or size >= reservation.size:
                return
            self._give(reservation.project, reservation.size - size)
            reservation.size = size
            woken = self._wake()
        _notify(woken)

    def _try_grow(self, reservation: Reservation, size: int) -> bool:
        with self._lock:
            if reservation.released:
                return False
            extra = size - reservation.size
            if extra <= 0:
                return True
            held = self.held.get(reservation.project, 0)
            alone = held == reservation.size  # a project's only request may grow past its share
            if self.used + extra > self.limit or (held + extra > self.project_cap and not alone):
                return False
            self._take(reservation.project, extra)
            reservation.size = size
            return True

    def _wake(self) -> list[_Waiter]:
        """Grant every waiter that fits now, least-holding project first (call with the lock held)."""
        woken = []
        for waiter in sorted(self._waiters, key=lambda w: (self.held.get(w.project, 0), w.seq)):
            if self._fits(waiter.project, waiter.size):
                self._take(waiter.project, waiter.size)
                waiter.granted = True
                self._waiters.remove(waiter)
                woken.append(waiter)
        return woken

    # --- observability ---------------------------------------------------------------------------------------
    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def metric_lines(self) -> list[str]:
        """Prometheus lines: bytes in flight and the limit, requests waiting, waits and rejections by route."""
        c = self.counters
        return [
            "# TYPE inferwatch_inflight_request_bytes gauge",
            f"inferwatch_inflight_request_bytes {self.used}",
            "# TYPE inferwatch_inflight_limit_bytes gauge",
            f"inferwatch_inflight_limit_bytes {self.limit}",
            "# TYPE inferwatch_inflight_waiting_requests gauge",
            f"inferwatch_inflight_waiting_requests {self.waiting}",
            "# TYPE inferwatch_inflight_waits_total counter",
            *(f'inferwatch_inflight_waits_total{{route="{route}"}} {n}' for route, n in sorted(c.waits.items())),
            "# TYPE inferwatch_inflight_rejections_total counter",
            *(f'inferwatch_inflight_rejections_total{{route="{route}",reason="{why}"}} {n}'
              for (route, why), n in sorted(c.rejected.items())),
        ]


def _notify(woken: list[_Waiter]) -> None:
    for waiter in woken:
        waiter.loop.call_soon_threadsafe(_resolve, waiter.future)


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
