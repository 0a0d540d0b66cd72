"""Recording scheduled job runs in ``job_runs`` (migration 0004), so failures are visible, not only logged.

Every run is written twice with the same ``run_id``: as ``running`` when it starts, then with its outcome when it
ends (the table is a ReplacingMergeTree on ``updated_at``). A process that dies mid-run therefore leaves a
``running`` row behind instead of nothing. :func:`run_recorded` is the one wrapper every job goes through: it
never raises, because a job's failure must not reach the scheduler (it is recorded and retried instead), and a
failure to record must not stop the job from running.

The collector serves these rows at ``GET /api/v1/jobs/runs``; it reads the table with its own query because the
collector never imports this package (architecture §1: ``inferwatch_alerts`` depends on the collector, not
the reverse).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from inferwatch_collector.store import Store
from .timeutil import to_ms as _ms

log = logging.getLogger("inferwatch.jobs")

Outcome = Literal["running", "success", "failure"]
COLUMNS: Final = ("job", "run_id", "started_at", "ended_at", "outcome", "error", "trigger", "host", "details",
                  "updated_at")
MAX_ERROR_CHARS: Final = 4000
_MAX_DETAIL_CHARS = 500
HOST: Final = f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class JobRun:
    """One run of one job, as recorded."""

    job: str
    run_id: str
    started_at: datetime
    trigger: str
    outcome: Outcome = "running"
    ended_at: datetime | None = None
    error: str = ""
    host: str = HOST
    details: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome == "success"


class JobFailed(RuntimeError):
    """A job that did part of its work and failed the rest: recorded as a failure, with ``details`` kept."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})


def describe_error(exc: BaseException) -> str:
    """``Type: message``, bounded: what a person needs to see in the runs list (the traceback goes to the log)."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def details_of(result: Any) -> dict[str, str]:
    """A job's return value as run details: a mapping, or an object with ``details()``; anything else: none."""
    details = getattr(result, "details", None)
    if callable(details):
        result = details()
    if not isinstance(result, Mapping):
        return {}
    return {str(k)[:100]: str(v)[:_MAX_DETAIL_CHARS] for k, v in result.items()}


def write_run(store: Store, run: JobRun, *, updated_at: datetime | None = None) -> None:
    """Insert one version of a run (the newest ``updated_at`` wins)."""
    stamp = updated_at or run.ended_at or run.started_at
    store.insert_columns("job_runs", [[run.job], [run.run_id], [run.started_at], [run.ended_at], [run.outcome],
                                      [run.error], [run.trigger], [run.host], [dict(run.details)], [stamp]],
                         COLUMNS)


def last_success(store: Store, job: str) -> datetime | None:
    """When the job's newest successful run started; None if it never succeeded (within the table's TTL)."""
    rows = store.query(
        "SELECT max(started_at) FROM job_runs FINAL WHERE job = {j:String} AND outcome = 'success'",
        {"j": job},
    ).result_rows
    value = rows[0][0] if rows else None
    if value is None or value.timestamp() <= 0:  # max() over no rows is the epoch
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def run_recorded(store: Store, job: str, func: Callable[[Store, datetime], Any], *, trigger: str = "schedule",
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> JobRun:
    """Run ``func(store, now)`` and record the run; returns the finished run and never raises.

    ``now`` is the run's start time, passed in so that every job computes "today" and "this month" from the
    same instant and can be replayed at any time in tests.
    """
    started = _ms(clock())
    run = JobRun(job=job, run_id=uuid.uuid4().hex, started_at=started, trigger=trigger)
    _safely(store, run, "start")
    try:
        result = func(store, started)
    except Exception as exc:  # a job's failure is recorded and retried, never propagated to the scheduler
        log.exception("job %s failed (run %s)", job, run.run_id)
        run = replace(run, outcome="failure", error=describe_error(exc), ended_at=_after(started, clock()),
                      details=details_of(getattr(exc, "details", None)))
    else:
        run = replace(run, outcome="success", details=details_of(result), ended_at=_after(started, clock()))
        log.debug("job %s succeeded in %.3f s", job, (run.ended_at - started).total_seconds())
    _safely(store, run, "end")
    return run


def _safely(store: Store, run: JobRun, what: str) -> None:
    try:
        write_run(store, run)
    except Exception:
        log.exception("could not record the %s of job %s (run %s)", what, run.job, run.run_id)


def _after(started: datetime, ended: datetime) -> datetime:
    """The end stamp, strictly after the start so the outcome row always replaces the ``running`` one."""
    ended = _ms(ended)
    return ended if ended > started else started + timedelta(milliseconds=1)
