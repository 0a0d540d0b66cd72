"""The scheduler: APScheduler 3.x running inferwatch's periodic jobs, each run recorded in ``job_runs``.

Where it runs (architecture §2): inside the collector process in embedded mode, because only that process may open
the chDB directory (the app's lifespan calls :func:`start_scheduler`); as ``inferwatch-server scheduler``,
its own process, against a ClickHouse server, exactly one active (alert deduplication reads the database, so
two active schedulers could both decide an alert is due in the same minute). A lease row in ClickHouse enforces
that (:mod:`inferwatch_alerts.lease`): jobs run on schedule only while this scheduler holds it.

How a job runs: APScheduler's ``BackgroundScheduler`` with ``max_instances=1`` (a slow run is never overlapped
by the next), ``coalesce=True`` (runs missed while the process was busy collapse into one) and a misfire grace
per job. Every run goes through :func:`inferwatch_alerts.job_runs.run_recorded`, which records start, end,
outcome and error and never raises, so a failing job cannot take the scheduler down; it simply runs again at its
next tick, or sooner when its spec has ``retry_after_s`` (a daily job should not wait a day to retry). Jobs are
plain ``func(store, now)`` functions, so tests call them directly, or through :meth:`Scheduler.run_now`.

Jobs are held in memory and re-added on every start (fixed ids), so nothing replays a backlog after a restart;
a job with ``catch_up_after_s`` instead runs shortly after start when its last recorded success (in the
database) is older than that, so a daily report missed while the scheduler was down is still produced.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from inferwatch_collector.cost import reports as cost_reports
from inferwatch_collector.store import Store

from .budget_notify import BudgetsJob
from .experiments import JOB_NAME as EXPERIMENTS_JOB
from .evaluate import RuleEvaluationJob
from .job_runs import JobFailed, JobRun, last_success, run_recorded
from .lease import SchedulerLease

log = logging.getLogger("inferwatch.scheduler")

BUDGETS_JOB: Final = "budgets"
COST_REPORT_JOB: Final = "cost_report"
ALERT_RULES_JOB: Final = "alert_rules"
RETENTION_JOB: Final = "retention"
LEASE_JOB: Final = "scheduler-lease"  # renews inferwatch_alerts.lease; not a recorded job
#: Delay before catch-up runs after a start, so a collector that is started and stopped at once (tests, a
#: misconfigured deploy) does not run a daily job on the way.
DEFAULT_START_DELAY_S: Final = 60.0


@dataclass(frozen=True)
class JobSpec:
    """A periodic job: what to call, when, and how failures and downtime are handled."""

    name: str
    func: Callable[[Store, datetime], Any]
    trigger: BaseTrigger
    misfire_grace_s: int = 30
    retry_after_s: float | None = None  # after a failure, run again this soon (if sooner than the next tick)
    catch_up_after_s: float | None = None  # at start, run if the last success is older than this


def cost_report_job(store: Store, now: datetime) -> Any:
    """Daily cost reports (daily and month-to-date), computed by
    :func:`inferwatch_collector.cost.reports.run_cost_report_job`."""
    return _report_outcome(cost_reports.run_cost_report_job(store, now))


def _report_outcome(result: Any) -> Any:
    """The report job's result as run details; projects whose report failed make the run a failure.

    ``run_cost_report_job`` returns ``day``, ``saved`` (project, period, cost) and ``failed`` (project, error)
    instead of raising, so that one project does not stop the others; the run must still show the failure. The
    recorded error counts the projects and leaves their names and errors to the log (job runs are readable by
    every project's keys).
    """
    saved, failed = getattr(result, "saved", None), getattr(result, "failed", None)
    if saved is None and failed is None:
        return result
    details = {"day": str(getattr(result, "day", "")), "reports_saved": len(saved or ()),
               "projects_failed": len(failed or ())}
    if failed:
        raise JobFailed(f"the cost reports of {len(failed)} project(s) failed (the scheduler log names them)",
                        details)
    return details


def experiments_job(store: Store, now: datetime) -> Any:
    """The A/B results job (:func:`inferwatch_alerts.experiments.results.run_experiments_job`), imported when it
    first runs: its numpy and scipy are not loaded by an idle collector."""
    from .experiments.results import run_experiments_job

    return run_experiments_job(store, now)


def retention_job(store: Store, now: datetime) -> Any:
    """Per-project retention (``project_retention_days``): delete each listed project's older rows, daily."""
    from inferwatch_collector.forget import apply_project_retention
    from inferwatch_collector.migrations import target_for

    days = store.settings.project_retention_days
    if not days:
        return {"projects": "0"}
    deleted = apply_project_retention(store, dict(days), target=target_for(store.settings, store))
    return {"projects": str(len(deleted)),
            "rows_deleted": str(sum(sum(tables.values()) for tables in deleted.values()))}


def default_jobs(*, budget_interval_s: float = 60.0, cost_report_hour: int = 0, cost_report_minute: int = 15
                 ) -> list[JobSpec]:
    """The jobs the platform runs: budget evaluation and alert rules every minute, cost reports daily at 00:15
    UTC, per-project retention daily at 03:30 UTC, A/B results hourly.

    The cost report runs a quarter of an hour after midnight so that calls of the day that just ended, exported
    late by SDK batching and retries, are in before the day is reported. The alert rules come from
    ``INFERWATCH_ALERT_RULES_FILE`` (else the packaged defaults) and are loaded here, so an invalid file stops
    the scheduler from starting with its line and reason (:class:`inferwatch_alerts.rules.RulesError`).
    """
    return [
        # budget alerts go out through the alert rules' channels, routed by severity (budget_notify)
        JobSpec(BUDGETS_JOB, BudgetsJob(), IntervalTrigger(seconds=budget_interval_s, timezone=UTC),
                misfire_grace_s=max(int(budget_interval_s), 1)),
        JobSpec(COST_REPORT_JOB, cost_report_job,
                CronTrigger(hour=cost_report_hour, minute=cost_report_minute, timezone=UTC),
                misfire_grace_s=3600, retry_after_s=600.0, catch_up_after_s=24 * 3600.0),
        JobSpec(ALERT_RULES_JOB, RuleEvaluationJob(), IntervalTrigger(seconds=60, timezone=UTC),
                misfire_grace_s=60),
        JobSpec(RETENTION_JOB, retention_job, CronTrigger(hour=3, minute=30, timezone=UTC), misfire_grace_s=3600,
                retry_after_s=600.0),
        # A/B results hourly (each UTC day's last run is that day's look for the sequential tests)
        JobSpec(EXPERIMENTS_JOB, experiments_job, CronTrigger(minute=20, timezone=UTC), misfire_grace_s=1800,
                retry_after_s=600.0),
    ]


class Scheduler:
    """A started-once scheduler of :class:`JobSpec` jobs over one store."""

    def __init__(self, store: Store, jobs: Sequence[JobSpec] | None = None, *, workers: int = 2,
                 start_delay_s: float = DEFAULT_START_DELAY_S,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 lease: SchedulerLease | bool = True) -> None:
        self.store = store
        # Scheduled runs happen only while this scheduler holds the lease (inferwatch_alerts.lease): a second
        # scheduler started by mistake on the same database stays idle. False: no lease (tests, one-off tools).
        self.lease: SchedulerLease | None = SchedulerLease(store) if lease is True else (lease or None)
        self.jobs = {spec.name: spec for spec in (default_jobs() if jobs is None else jobs)}
        self._clock = clock
        self._start_delay_s = start_delay_s
        # One lock per job: max_instances covers the scheduler's own runs, the lock also covers run_now().
        self._locks = {name: threading.Lock() for name in self.jobs}
        self._sched = BackgroundScheduler(
            timezone=UTC, executors={"default": ThreadPoolExecutor(max_workers=workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 30},
        )

    @property
    def running(self) -> bool:
        return bool(self._sched.running)

    def start(self) -> Scheduler:
        """Add every job (fixed ids) and start the background thread."""
        for spec in self.jobs.values():
            self._sched.add_job(self._tick, spec.trigger, args=(spec.name, "schedule"), id=spec.name,
                                name=spec.name, replace_existing=True, misfire_grace_time=spec.misfire_grace_s)
            if spec.catch_up_after_s is not None:
                self._sched.add_job(self.catch_up, "date", args=(spec.name,), id=f"{spec.name}:catch-up",
                                    run_date=self._clock() + timedelta(seconds=self._start_delay_s),
                                    replace_existing=True, misfire_grace_time=None)
        if self.lease is not None:
            self.lease.tick()  # at once, so the jobs' first ticks find it decided
            self._sched.add_job(self.lease.tick, IntervalTrigger(seconds=self.lease.renew_s, timezone=UTC),
                                id=LEASE_JOB, name=LEASE_JOB, replace_existing=True, misfire_grace_time=None)
        self._sched.start()
        log.info("scheduler started: %s", ", ".join(f"{n} ({s.trigger})" for n, s in self.jobs.items()))
        return self

    def shutdown(self, wait: bool = True) -> None:
        """Stop scheduling; with ``wait`` (default) a running job finishes first (it holds the store)."""
        if self._sched.running:
            self._sched.shutdown(wait=wait)
            if self.lease is not None:
                self.lease.release()
            log.info("scheduler stopped")

    def next_run_time(self, name: str) -> datetime | None:
        """When the job runs next (None when the scheduler is stopped or paused)."""
        job = self._sched.get_job(name)
        return job.next_run_time if job is not None else None

    def run_now(self, name: str, trigger: str = "manual") -> JobRun:
        """Run a job on this thread, recorded like a scheduled run (waits for a run already in progress)."""
        if name not in self.jobs:
            raise KeyError(f"unknown job {name!r}; jobs: {', '.join(self.jobs)}")
        with self._locks[name]:
            return self._execute(self.jobs[name], trigger)

    # --- internals ------------------------------------------------------------------------------------------
    def _tick(self, name: str, trigger: str) -> JobRun | None:
        if self.lease is not None and not self.lease.held():
            log.debug("job %s: this scheduler does not hold the lease; tick skipped", name)
            return None
        lock = self._locks[name]
        if not lock.acquire(blocking=False):
            log.info("job %s is already running (run_now); this tick is skipped", name)
            return None
        try:
            return self._execute(self.jobs[name], trigger)
        finally:
            lock.release()

    def catch_up(self, name: str) -> JobRun | None:
        """Run the job now if its last recorded success is older than its ``catch_up_after_s`` (or missing);
        None when it is recent enough. Runs once, ``start_delay_s`` after :meth:`start`, for such jobs."""
        spec = self.jobs[name]
        if self.lease is not None and self.running and not self.lease.held():
            # another scheduler is active (it catches up itself), or ours is not decided yet: look again later
            self._sched.add_job(self.catch_up, "date", args=(name,), id=f"{name}:catch-up", replace_existing=True,
                                run_date=self._clock() + timedelta(seconds=self.lease.renew_s),
                                misfire_grace_time=None)
            return None
        try:
            last = last_success(self.store, name)
        except Exception:
            log.exception("could not read the last run of job %s; running it to be safe", name)
            last = None
        now = self._clock()
        if last is not None and (now - last).total_seconds() < (spec.catch_up_after_s or 0):
            return None
        log.info("job %s last succeeded %s: catching up", name, last.isoformat() if last else "never")
        return self._tick(name, "catch-up")

    def _execute(self, spec: JobSpec, trigger: str) -> JobRun:
        run = run_recorded(self.store, spec.name, spec.func, trigger=trigger, clock=self._clock)
        if not run.ok and spec.retry_after_s is not None:
            self._retry_soon(spec)
        return run

    def _retry_soon(self, spec: JobSpec) -> None:
        """Pull the job's next run forward to ``retry_after_s`` from now, if that is sooner than its next tick."""
        try:
            job = self._sched.get_job(spec.name)
            if job is None or job.next_run_time is None or spec.retry_after_s is None:
                return
            retry_at = self._clock() + timedelta(seconds=spec.retry_after_s)
            if retry_at < job.next_run_time:
                self._sched.modify_job(spec.name, next_run_time=retry_at)
                log.info("job %s will be retried at %s", spec.name, retry_at.isoformat())
        except Exception:  # e.g. shutting down; the job keeps its regular schedule
            log.exception("could not schedule an early retry of job %s", spec.name)


def start_scheduler(store: Store, jobs: Sequence[JobSpec] | None = None, **options: Any) -> Scheduler:
    """Start a scheduler with the platform's jobs (or ``jobs``) over ``store``; stop it with ``shutdown()``."""
    return Scheduler(store, jobs, **options).start()
