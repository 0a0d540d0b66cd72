"""The scheduler: jobs run, every run is recorded with its outcome, a failing job never stops the scheduler and is
retried, missed daily jobs catch up, and the cost-report job's run shows the projects whose report failed.

Scheduled runs are awaited with events and generous timeouts; nothing asserts on wall-clock durations.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from inferwatch_alerts.job_runs import JobRun, last_success, run_recorded, write_run
from inferwatch_alerts.scheduler import (
    ALERT_RULES_JOB,
    BUDGETS_JOB,
    COST_REPORT_JOB,
    EXPERIMENTS_JOB,
    RETENTION_JOB,
    JobSpec,
    Scheduler,
    cost_report_job,
    default_jobs,
)
from inferwatch_collector.cost import reports as cost_reports
from inferwatch_collector.routes.budgets import recent_job_runs
from inferwatch_collector.store import Store

WAIT_S = 60.0


class Counter:
    """Counts calls of a job function and lets a test wait for the n-th; optionally fails."""

    def __init__(self, fail: bool | Callable[[int], bool] = False) -> None:
        self.calls = 0
        self.fail = fail
        self._cond = threading.Condition()

    def __call__(self, store: Store, now: datetime) -> dict[str, int]:
        with self._cond:
            self.calls += 1
            n = self.calls
            self._cond.notify_all()
        failing = self.fail(n) if callable(self.fail) else self.fail
        if failing:
            raise RuntimeError(f"planned failure {n}")
        return {"n": n}

    def wait_for(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.calls >= n, timeout=WAIT_S)


@pytest.fixture
def schedulers() -> Iterator[list[Scheduler]]:
    """Schedulers made by a test, always shut down before the store closes."""
    made: list[Scheduler] = []
    yield made
    for scheduler in made:
        scheduler.shutdown()


def test_run_recorded_records_success_and_failure_and_never_raises(store: Store) -> None:
    ok = run_recorded(store, "probe", Counter())
    failed = run_recorded(store, "probe", Counter(fail=True), trigger="manual")
    assert ok.ok and ok.details == {"n": "1"} and ok.ended_at >= ok.started_at
    assert (failed.outcome, failed.trigger) == ("failure", "manual")
    assert failed.error == "RuntimeError: planned failure 1"
    runs = recent_job_runs(store, job="probe")
    assert {r["run_id"]: r["outcome"] for r in runs} == {ok.run_id: "success", failed.run_id: "failure"}
    assert last_success(store, "probe") == ok.started_at
    assert last_success(store, "never-ran") is None


def test_a_run_that_never_ended_stays_visible_as_running(store: Store) -> None:
    started = datetime.now(UTC).replace(microsecond=0)
    write_run(store, JobRun(job="probe", run_id="r1", started_at=started, trigger="schedule"))
    (run,) = recent_job_runs(store, job="probe")
    assert (run["outcome"], run["ended_at"], run["duration_s"]) == ("running", None, None)


def test_failing_job_is_recorded_and_the_scheduler_keeps_running(store: Store, schedulers: list) -> None:
    failing, healthy = Counter(fail=True), Counter()
    scheduler = Scheduler(store, [JobSpec("failing", failing, IntervalTrigger(seconds=0.2)),
                                  JobSpec("healthy", healthy, IntervalTrigger(seconds=0.2))])
    schedulers.append(scheduler)
    scheduler.start()
    assert failing.wait_for(3) and healthy.wait_for(3)  # failed at least twice and was run again
    assert scheduler.running
    scheduler.shutdown()
    runs = recent_job_runs(store, limit=1000)
    failures = [r for r in runs if r["job"] == "failing"]
    successes = [r for r in runs if r["job"] == "healthy"]
    assert len(failures) >= 3 and {r["outcome"] for r in failures} == {"failure"}
    assert all(r["error"].startswith("RuntimeError: planned failure") for r in failures)
    assert len(successes) >= 3 and {r["outcome"] for r in successes} == {"success"}
    assert {r["trigger"] for r in runs} == {"schedule"}


def test_a_failed_daily_job_is_retried_soon_not_tomorrow(store: Store, schedulers: list) -> None:
    job = Counter(fail=lambda n: n == 1)
    daily = CronTrigger(hour=0, minute=15, timezone=UTC)
    scheduler = Scheduler(store, [JobSpec("daily", job, daily, retry_after_s=0.2)])
    schedulers.append(scheduler)
    scheduler.start()
    regular = scheduler.next_run_time("daily")
    assert scheduler.run_now("daily").outcome == "failure"
    assert scheduler.next_run_time("daily") < regular  # pulled forward
    assert job.wait_for(2)  # the retry ran (and succeeded) without waiting for 00:15
    scheduler.shutdown()
    outcomes = sorted((r["trigger"], r["outcome"]) for r in recent_job_runs(store, job="daily"))
    assert outcomes == [("manual", "failure"), ("schedule", "success")]


def test_catch_up_runs_a_daily_job_missed_while_down(store: Store, schedulers: list) -> None:
    job = Counter()
    spec = JobSpec("daily", job, CronTrigger(hour=0, minute=15, timezone=UTC), catch_up_after_s=3600)
    scheduler = Scheduler(store, [spec], start_delay_s=0)
    schedulers.append(scheduler)
    scheduler.start()
    assert job.wait_for(1)  # never succeeded before: ran right after start
    scheduler.shutdown()
    (run,) = recent_job_runs(store, job="daily")
    assert (run["trigger"], run["outcome"]) == ("catch-up", "success")
    # it succeeded just now, so a restart does not run it again
    assert Scheduler(store, [spec]).catch_up("daily") is None and job.calls == 1


def test_run_now_and_unknown_jobs(store: Store) -> None:
    job = Counter()
    scheduler = Scheduler(store, [JobSpec("probe", job, IntervalTrigger(hours=1))])
    run = scheduler.run_now("probe")
    assert run.ok and run.trigger == "manual" and job.calls == 1
    with pytest.raises(KeyError, match="unknown job 'nope'"):
        scheduler.run_now("nope")


def test_default_jobs_and_apscheduler_options(store: Store, schedulers: list) -> None:
    jobs = {spec.name: spec for spec in default_jobs(budget_interval_s=30)}
    assert set(jobs) == {BUDGETS_JOB, COST_REPORT_JOB, ALERT_RULES_JOB, RETENTION_JOB, EXPERIMENTS_JOB}
    assert jobs[BUDGETS_JOB].trigger.interval == timedelta(seconds=30)
    assert str(jobs[COST_REPORT_JOB].trigger) == "cron[hour='0', minute='15']"
    assert jobs[COST_REPORT_JOB].retry_after_s and jobs[COST_REPORT_JOB].catch_up_after_s
    scheduler = Scheduler(store)
    schedulers.append(scheduler)
    scheduler.start()
    for name in (BUDGETS_JOB, COST_REPORT_JOB):
        job = scheduler._sched.get_job(name)
        assert (job.max_instances, job.coalesce) == (1, True)
    assert scheduler._sched.get_job(BUDGETS_JOB).misfire_grace_time == 60
    assert scheduler._sched.get_job(COST_REPORT_JOB).misfire_grace_time == 3600
    # the real budget job runs through the scheduler's recording path
    run = scheduler.run_now(BUDGETS_JOB)
    assert run.ok and run.details["budgets"] == "0"


def test_cost_report_job_calls_the_report_module(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Store, datetime]] = []
    def run_cost_report_job(s: Store, now: datetime) -> dict[str, int]:
        calls.append((s, now))
        return {"reports": 3}

    monkeypatch.setattr(cost_reports, "run_cost_report_job", run_cost_report_job)
    now = datetime(2026, 11, 21, 0, 15, tzinfo=UTC)
    assert cost_report_job(store, now) == {"reports": 3} and calls == [(store, now)]
    run = Scheduler(store).run_now(COST_REPORT_JOB)
    assert run.ok and run.details == {"reports": "3"} and calls[-1][1] == run.started_at


def test_cost_report_failures_of_some_projects_fail_the_run_and_keep_the_counts(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    result = types.SimpleNamespace(day=datetime(2026, 11, 20).date(), saved=(("p1", "day", 1.0),),
                                   failed=(("p2", "RuntimeError: secret detail of p2"),))
    monkeypatch.setattr(cost_reports, "run_cost_report_job", lambda s, now: result)
    run = Scheduler(store).run_now(COST_REPORT_JOB)
    assert run.outcome == "failure" and "1 project(s) failed" in run.error and "p2" not in run.error
    assert run.details == {"day": "2026-11-20", "reports_saved": "1", "projects_failed": "1"}


def test_the_real_cost_report_job_runs_on_an_empty_database(store: Store) -> None:
    run = Scheduler(store).run_now(COST_REPORT_JOB)
    assert run.ok, run.error
    assert run.details["reports_saved"] == "0" and run.details["projects_failed"] == "0"
