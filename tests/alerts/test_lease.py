"""Two schedulers on one database do not both run the jobs (issue 8): a lease row in ClickHouse.

Waits are on events and counters with generous timeouts; nothing asserts on wall-clock durations.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime

import pytest
from apscheduler.triggers.interval import IntervalTrigger
from inferwatch_alerts.lease import SchedulerLease
from inferwatch_alerts.scheduler import JobSpec, Scheduler
from inferwatch_collector.store import Store

WAIT_S = 60.0


class Counter:
    def __init__(self) -> None:
        self.calls = 0
        self._cond = threading.Condition()

    def __call__(self, store: Store, now: datetime) -> dict[str, int]:
        with self._cond:
            self.calls += 1
            self._cond.notify_all()
        return {}

    def wait_for(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.calls >= n, timeout=WAIT_S)


def _wait(predicate, timeout: float = WAIT_S) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def schedulers() -> Iterator[list[Scheduler]]:
    made: list[Scheduler] = []
    yield made
    for scheduler in made:
        scheduler.shutdown()


def _scheduler(store: Store, holder: str, job: Counter, schedulers: list[Scheduler], *, ttl_s: float = 2.0,
               renew_s: float = 0.2) -> Scheduler:
    lease = SchedulerLease(store, holder=holder, ttl_s=ttl_s, renew_s=renew_s, settle_s=0.05)
    scheduler = Scheduler(store, [JobSpec("notify", job, IntervalTrigger(seconds=0.05))], lease=lease)
    schedulers.append(scheduler)
    return scheduler


def test_second_scheduler_stays_idle_until_the_lease_expires(store: Store, schedulers: list[Scheduler],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="inferwatch.scheduler")
    first_job, second_job = Counter(), Counter()
    first = _scheduler(store, "first", first_job, schedulers).start()
    assert first.lease is not None and first.lease.held()
    assert first_job.wait_for(3)

    second = _scheduler(store, "second", second_job, schedulers).start()
    assert second.lease is not None and not second.lease.held()
    ticks = second.lease.ticks
    assert _wait(lambda: second.lease.ticks >= ticks + 5)  # renewal rounds in which "first" kept the lease
    assert first_job.wait_for(first_job.calls + 3)
    assert second_job.calls == 0 and second.lease.other_holder == "first"
    assert any("held by first" in r.getMessage() and "stays idle" in r.getMessage() for r in caplog.records)
    assert first.lease.current().holder == "first"  # type: ignore[union-attr]

    # the first one dies without releasing (no shutdown, no renewal): the second takes over after expiry
    first._sched.shutdown(wait=True)
    stopped_at = first_job.calls
    assert second_job.wait_for(3)
    assert second.lease.held() and second.lease.current().holder == "second"  # type: ignore[union-attr]
    assert first_job.calls == stopped_at
    assert not first.lease.held()  # its local deadline passed before the lease expired in the database


def test_clean_shutdown_releases_the_lease(store: Store, schedulers: list[Scheduler]) -> None:
    first_job, second_job = Counter(), Counter()
    first = _scheduler(store, "first", first_job, schedulers, ttl_s=3600.0, renew_s=0.2).start()
    second = _scheduler(store, "second", second_job, schedulers, ttl_s=3600.0, renew_s=0.2).start()
    assert first_job.wait_for(2) and second_job.calls == 0
    first.shutdown()  # releases: no need to wait an hour
    assert second_job.wait_for(2)
    assert second.lease is not None and second.lease.held()


def test_concurrent_acquisition_has_one_winner(store: Store) -> None:
    leases = [SchedulerLease(store, holder=f"s{i}", ttl_s=60.0, renew_s=20.0, settle_s=0.5) for i in range(3)]
    barrier = threading.Barrier(len(leases))
    results: dict[str, bool] = {}

    def contend(lease: SchedulerLease) -> None:
        barrier.wait()
        results[lease.holder] = lease.tick()

    threads = [threading.Thread(target=contend, args=(lease,)) for lease in leases]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert sorted(results.values()) == [False, False, True]
    winner = next(h for h, held in results.items() if held)
    current = leases[0].current()
    assert current is not None and current.holder == winner
    # the losers stay out on their next ticks, the winner renews
    assert [lease.tick() for lease in leases] == [lease.holder == winner for lease in leases]


def test_a_late_holder_must_win_the_lease_again(store: Store) -> None:
    now = [0.0]
    lease = SchedulerLease(store, holder="paused", ttl_s=30.0, renew_s=10.0, settle_s=0.0,
                           monotonic=lambda: now[0])
    assert lease.tick()
    now[0] += 25.0  # past ttl - margin locally: it stops running jobs before anyone else could take over
    assert not lease.held()
    assert lease.tick()  # nobody else took it: re-acquired (read back), held again


def test_scheduler_without_a_lease_runs_and_a_database_failure_keeps_the_holder(store: Store,
                                                                               schedulers: list[Scheduler],
                                                                               monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    job = Counter()
    plain = Scheduler(store, [JobSpec("notify", job, IntervalTrigger(seconds=0.05))], lease=False)
    schedulers.append(plain)
    plain.start()
    assert plain.lease is None and job.wait_for(2)

    lease = SchedulerLease(store, holder="h", ttl_s=30.0, renew_s=10.0, settle_s=0.0)
    assert lease.tick()

    def down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("database down")

    monkeypatch.setattr(store, "query", down)
    assert lease.tick()  # logged, still held until the local deadline
    with pytest.raises(ValueError):
        SchedulerLease(store, ttl_s=5.0, renew_s=5.0)
