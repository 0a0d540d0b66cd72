"""A lease in ClickHouse so that two schedulers started by mistake do not both run the jobs (and double-page).

ClickHouse has no compare-and-set, so the lease is a ``ReplacingMergeTree`` row (``scheduler_lease``, migration
0008) and the protocol relies on every reader agreeing on which version wins (the newest ``updated_at``; on a tie
the last inserted):

* **Renew** (the holder, in time): the lease is ours and live, and our local deadline has not passed: insert a
  new version with a later ``expires_at``. Nobody contests a live lease, so no read-back is needed.
* **Acquire** (no lease, an expired one, or ours but we were late): insert our version, wait ``settle_s`` so that
  a contender's concurrent insert has landed too, then read back with ``FINAL``: we hold the lease only if our
  version won. Two contenders read the same table and agree on one winner.
* **Otherwise** (another holder's live lease): stay idle, log it once, look again at the next tick.

Times come from the database (``now64()``), never from the scheduler's host, so clock skew between hosts does not
matter. Locally, a lease counts as held only until ``ttl_s - margin_s`` after the insert that won it (measured with
the monotonic clock from before that insert), so a holder that was paused (GC, a stopped VM) stops running jobs
before another scheduler can take over, and must win an acquisition again. A read or insert that fails keeps the
local deadline: a database blip does not stop the holder, and a non-holder stays idle.

On a clean shutdown the holder releases the lease (a version that expires at once), so a standby takes over at its
next tick instead of after ``ttl_s``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from inferwatch_collector.store import Store
from .timeutil import utc as _utc

log = logging.getLogger("inferwatch.scheduler")

TABLE: Final = "scheduler_lease"
COLUMNS: Final = ("name", "holder", "acquired_at", "expires_at", "updated_at")
DEFAULT_NAME: Final = "scheduler"
DEFAULT_TTL_S: Final = 30.0
DEFAULT_RENEW_S: Final = 10.0
DEFAULT_SETTLE_S: Final = 2.0


@dataclass(frozen=True)
class LeaseRow:
    holder: str
    acquired_at: datetime
    expires_at: datetime
    db_now: datetime

    @property
    def live(self) -> bool:
        return self.expires_at > self.db_now


class SchedulerLease:
    """The lease of one scheduler process. :meth:`tick` every ``renew_s``; :meth:`held` before running a job."""

    def __init__(self, store: Store, *, name: str = DEFAULT_NAME, holder: str | None = None,
                 ttl_s: float = DEFAULT_TTL_S, renew_s: float = DEFAULT_RENEW_S, settle_s: float | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if not 0 < renew_s < ttl_s:
            raise ValueError("the lease must be renewed more often than it expires (0 < renew_s < ttl_s)")
        self.store = store
        self.name = name
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.ttl_s = ttl_s
        self.renew_s = renew_s
        # embedded chDB: one process per data directory, so no other process can contend; no need to wait
        embedded = bool(getattr(getattr(store, "settings", None), "embedded", False))
        self.settle_s = settle_s if settle_s is not None else (0.0 if embedded else DEFAULT_SETTLE_S)
        self.margin_s = min(renew_s, ttl_s / 3)
        self._monotonic = monotonic
        self._valid_until = float("-inf")  # local monotonic deadline of our lease
        self._acquired_at: datetime | None = None
        self._lock = threading.Lock()
        self._last_logged: tuple[str, str] | None = None
        self.ticks = 0
        self.other_holder: str = ""  # the holder seen when it is not us ("" when none or us)

    # --- state --------------------------------------------------------------------------------------------------
    def held(self) -> bool:
        """True while this scheduler holds a live lease (by the local deadline of the insert that won it)."""
        return self._monotonic() < self._valid_until

    def current(self) -> LeaseRow | None:
        """The lease as the database sees it now (None when never taken)."""
        rows = self.store.query(
            f"SELECT holder, acquired_at, expires_at, now64(3) FROM {TABLE} FINAL WHERE name = {{n:String}} "
            "ORDER BY updated_at DESC LIMIT 1", {"n": self.name}).result_rows
        if not rows:
            return None
        holder, acquired, expires, now = rows[0]
        return LeaseRow(holder, _utc(acquired), _utc(expires), _utc(now))

    # --- protocol -----------------------------------------------------------------------------------------------
    def tick(self) -> bool:
        """Renew, acquire or stay idle; returns :meth:`held`. Never raises (failures are logged)."""
        with self._lock:
            self.ticks += 1
            try:
                self._tick()
            except Exception:
                log.exception("scheduler lease %s: could not read or write the lease (held: %s)", self.name,
                              self.held())
            return self.held()

    def _tick(self) -> None:
        row = self.current()
        if row is not None and row.live and row.holder != self.holder:
            self._valid_until = float("-inf")
            self.other_holder = row.holder
            self._log_once("idle", row.holder,
                           "scheduler lease %s is held by %s until %s: this scheduler (%s) stays idle and runs "
                           "no jobs until the lease expires", self.name, row.holder, row.expires_at.isoformat(),
                           self.holder)
            return
        self.other_holder = ""
        started = self._monotonic()
        if row is not None and row.live and row.holder == self.holder and self.held():
            self._write(self._acquired_at or row.acquired_at, self.ttl_s)
            self._valid_until = started + self.ttl_s - self.margin_s
            return
        # acquire: insert, let a contender's insert land, read back
        self._write(None, self.ttl_s)
        if self.settle_s:
            time.sleep(self.settle_s)
        won = self.current()
        if won is not None and won.holder == self.holder and won.live:
            self._acquired_at = won.acquired_at
            self._valid_until = started + self.ttl_s - self.margin_s
            self._log_once("held", self.holder, "scheduler lease %s acquired by %s (expires after %.0f s "
                           "without renewal)", self.name, self.holder, self.ttl_s)
        else:
            self._valid_until = float("-inf")
            self.other_holder = won.holder if won is not None else ""
            self._log_once("lost", self.other_holder, "scheduler lease %s: %s took it first; this scheduler "
                           "(%s) stays idle", self.name, self.other_holder, self.holder)

    def release(self) -> None:
        """Give the lease up now if we hold it (clean shutdown). Never raises."""
        with self._lock:
            if not self.held():
                return
            self._valid_until = float("-inf")
            try:
                self._write(self._acquired_at, 0.0)
                log.info("scheduler lease %s released by %s", self.name, self.holder)
            except Exception:
                log.exception("scheduler lease %s: could not release it (it expires by itself)", self.name)

    # --- internals ----------------------------------------------------------------------------------------------
    def _write(self, acquired_at: datetime | None, ttl_s: float) -> None:
        """Insert a version of the lease held by us until ``ttl_s`` from now; every time is the database's (the
        version too, in µs, so a later write by any host is a newer version whatever the hosts' clocks say)."""
        acquired = "now64(3)" if acquired_at is None else "{a:DateTime64(3, 'UTC')}"
        params: dict[str, object] = {"n": self.name, "h": self.holder, "ttl": int(ttl_s * 1000)}
        if acquired_at is not None:
            params["a"] = acquired_at
        self.store.command(
            f"INSERT INTO {self.store.table(TABLE)} ({', '.join(COLUMNS)}) SELECT {{n:String}}, {{h:String}}, "
            f"{acquired}, now64(3) + toIntervalMillisecond({{ttl:UInt64}}), now64(6)", params)

    def _log_once(self, state: str, who: str, message: str, *args: object) -> None:
        if self._last_logged != (state, who):
            self._last_logged = (state, who)
            log.warning(message, *args) if state != "held" else log.info(message, *args)
