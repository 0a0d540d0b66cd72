"""The demo's populated project: weeks of history before the live traffic, so every dashboard page has data at once.

``inferwatch-server up --demo-traffic`` calls :func:`populate` once the collector listens, before it starts the
demo app:

1. **History** (unless the project already has calls older than a day: a second start does not backfill twice):
   ``examples/demo_history.py`` in a child process of its own writes :data:`HISTORY_DAYS` days of simulated
   traffic (diurnal and weekly volume, several models, features, prompt versions, cached tokens, the
   ``concise-answers`` A/B experiment, issue 30's planted incidents in the last whole week) through the normal
   OTLP ingest, printing a progress line every few seconds.
2. **Experiment and budget** through the API with the demo's admin key: ``concise-answers`` registered from the
   history's first day (its concise variant really is shorter, so it reaches a verdict), and a monthly project
   budget sized from the history's spend (so the month-to-date forecast is close to it). Both have fixed names:
   registering them again answers 409, which is fine.
3. **Past alerts**: the configured rules (the demo's, delivering to the local receiver) replayed by the real
   backtest (``persist=True``, the demo's dispatcher) over a few of the planted incidents, so ``alert_events``,
   ``alert_state`` and ``notifications`` hold fired-and-resolved alerts and their deliveries.
4. **Jobs once**: cost report, A/B results, budgets, run now rather than at their next schedule.

The capacity planner needs nothing more: it plans from the last week of observed traffic.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from inferwatch_collector.store import Store

HISTORY_DAYS: Final = 21
#: Mean LLM calls/s over the history (its peak is ~2x): ~180k calls in 21 days, about a minute on 2 loaded cores.
HISTORY_RATE: Final = 0.1
HISTORY_USERS: Final = 1000  # 40% in the experiment: ~200 users per variant, over the verdict's minimum of 100
EXPERIMENT: Final = "concise-answers"
BUDGET_ID: Final = "demo-monthly"
#: The planted incidents replayed through the rules: ones the packaged rules catch at the history's volume (the
#: error burst is too few calls at 0.1 calls/s; the creep runs for days; blips must stay quiet).
REPLAYED: Final = ("ttft-regression", "cost-spike", "truncation-spike")
_BEFORE, _AFTER = timedelta(minutes=10), timedelta(minutes=40)  # replay window around an incident (at least)
_LONGEST_WINDOW_S = 3 * 3600  # rules over longer windows (days: a creep) say nothing in a replay of hours


@dataclass
class Populated:
    """What :func:`populate` did (for the start-up lines and tests)."""

    backfilled: bool = False
    calls_before: int = 0
    backfill_s: float = 0.0
    alerts_fired: int = 0
    deliveries: int = 0
    jobs: dict[str, str] = field(default_factory=dict)


def history_calls(store: Store, project: str) -> int:
    """The project's calls that started more than a day ago (0: no history yet)."""
    return int(store.query(
        "SELECT count() FROM llm_calls WHERE project_id = {p:String} AND start_time < now() - INTERVAL 1 DAY",
        {"p": project}).first_row[0])


def backfill(base: str, ingest_key: str, root: str, children: list[subprocess.Popen], *,
             days: float = HISTORY_DAYS, rate: float = HISTORY_RATE, users: int = HISTORY_USERS
             ) -> dict[str, Any]:
    """Run ``examples.demo_history`` (progress lines pass through to stderr) and return its JSON answer. The
    child is appended to ``children`` so that the caller can stop it (its own process group: Ctrl-C reaches only
    the parent)."""
    cmd = [sys.executable, "-m", "examples.demo_history", "--url", base, "--key", ingest_key,
           "--days", str(days), "--rate", str(rate), "--users", str(users)]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True, process_group=0)
    children.append(proc)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the history backfill exited with status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def _post(base: str, path: str, key: str, body: dict[str, Any]) -> int:
    """POST ``body`` as JSON; the HTTP status (409 included: already there)."""
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        if exc.code == 409:
            return 409
        raise RuntimeError(f"POST {path}: {exc.code} {exc.read()[:300]!r}") from exc


def register_experiment(base: str, admin_key: str, start: datetime) -> int:
    """``concise-answers`` as the demo traffic assigns it (two equal variants), judged on cost per call."""
    return _post(base, "/api/v1/experiments", admin_key, {
        "name": EXPERIMENT, "variants": [{"name": "control", "weight": 1}, {"name": "concise", "weight": 1}],
        "control": "control", "primary_metric": "cost_per_call", "start": start.isoformat(), "mde": 0.05,
        "description": "Does the concise prompt (search v4, chat v7) cut cost without hurting quality?"})


def monthly_spend(store: Store, project: str, now: datetime) -> float:
    """The last week's spend scaled to a 30-day month (USD)."""
    week = store.query(
        "SELECT sum(cost_usd) FROM llm_calls WHERE project_id = {p:String} "
        "AND start_time >= fromUnixTimestamp({s:Int64})",
        {"p": project, "s": int((now - timedelta(days=7)).timestamp())}).first_row[0] or 0.0
    return float(week) / 7 * 30


def create_budget(base: str, admin_key: str, monthly_usd: float) -> int:
    """A soft monthly project budget a little above the history's pace (its forecast lands close to it)."""
    limit = max(1.0, math.ceil(monthly_usd * 1.1))
    return _post(base, "/api/v1/budgets", admin_key, {
        "budget_id": BUDGET_ID, "scope_type": "project", "period": "month", "kind": "soft", "limit_usd": limit})


def replay_incidents(store: Store, planted: Sequence[dict[str, Any]], project: str,
                     names: Sequence[str] = REPLAYED) -> tuple[int, int]:
    """Backtest the configured rules over the windows of the ``names`` incidents with ``persist=True`` and the
    configured channels, oldest first; (alerts fired, deliveries made).

    Each window replays only the rules that watch its incident's ``signals`` (as ``examples.demo_history``
    reports them) over windows of hours at most, and runs on until the slowest of them can resolve: a rule on another
    signal could fire inside a short window on a slower change (the week's TTFT creep) and be left firing at the
    window's end, a stale alert the live evaluation would show as current.
    """
    from inferwatch_alerts import rules
    from inferwatch_alerts.backtest import backtest
    from inferwatch_alerts.evaluate import build_channels
    from inferwatch_alerts.notifiers.dispatch import Dispatcher

    ruleset = rules.load_configured(store.settings)
    dispatcher = Dispatcher(build_channels(ruleset), store)
    fired = sent = 0
    try:
        for p in sorted((p for p in planted if p["name"] in names), key=lambda p: p["start"]):
            signals = set(p["signals"])
            watching = dataclasses.replace(ruleset, rules=tuple(
                r for r in ruleset.rules if r.signal.name in signals and r.window_s <= _LONGEST_WINDOW_S))
            # long enough after the incident for its slowest rule to see a clear window and resolve
            after = max([_AFTER] + [timedelta(seconds=r.window_s + r.every_s + (r.resolve_after_s or 0)) + _BEFORE
                                    for r in watching.rules])
            report = backtest(store, watching, datetime.fromisoformat(p["start"]) - _BEFORE,
                              datetime.fromisoformat(p["end"]) + after, projects=[project],
                              dispatcher=dispatcher, persist=True)
            fired += len(report.incidents())
            sent += len(report.sent)
    finally:
        dispatcher.close()
    return fired, sent


def run_jobs_once(scheduler: Any, names: Sequence[str]) -> dict[str, str]:
    """Run each job now on ``scheduler`` (recorded like a scheduled run); name -> outcome."""
    outcomes: dict[str, str] = {}
    for name in names:
        try:
            run = scheduler.run_now(name, trigger="demo")
            outcomes[name] = run.outcome
        except Exception as exc:  # a job's failure is recorded in job_runs; the demo goes on
            outcomes[name] = f"failed: {exc}"
    return outcomes


def populate(store: Store, scheduler: Any, base: str, keys: dict[str, str], root: str, project: str,
             children: list[subprocess.Popen], say: Callable[[str], None]) -> Populated:
    """Steps 1-4 of the module docstring; ``say`` prints a line."""
    from inferwatch_alerts.scheduler import BUDGETS_JOB, COST_REPORT_JOB, EXPERIMENTS_JOB

    done = Populated(calls_before=history_calls(store, project))
    if done.calls_before:
        say(f"history: {done.calls_before:,} calls older than a day already there; no backfill")
    else:
        say(f"history: backfilling {HISTORY_DAYS} days of simulated traffic through the OTLP ingest ...")
        began = time.monotonic()
        answer = backfill(base, keys["ingest"], root, children)
        done.backfilled, done.backfill_s = True, time.monotonic() - began
        say(f"history: backfilled in {done.backfill_s:.0f} s")
        now = datetime.now(UTC)
        register_experiment(base, keys["admin"], datetime.fromisoformat(answer["start"]))
        create_budget(base, keys["admin"], monthly_spend(store, project, now))
        say(f"history: experiment '{EXPERIMENT}' and budget '{BUDGET_ID}' registered; replaying the rules over "
            f"{len(REPLAYED)} planted incidents ...")
        done.alerts_fired, done.deliveries = replay_incidents(store, answer["planted"], project)
        say(f"history: {done.alerts_fired} alert(s) fired and resolved, {done.deliveries} delivered")
    if scheduler is not None:
        done.jobs = run_jobs_once(scheduler, (COST_REPORT_JOB, EXPERIMENTS_JOB, BUDGETS_JOB))
        say("history: jobs run once: " + ", ".join(f"{k} {v}" for k, v in done.jobs.items()))
    return done
