"""inferwatch alerts: the scheduler and its jobs (budget alerts, cost reports).

Modules: :mod:`.scheduler` (APScheduler 3.x, job specs, :func:`~.scheduler.start_scheduler`),
:mod:`.job_runs` (every run recorded in ``job_runs``), :mod:`.budget_alerts` (the budget evaluation job).
This package imports ``inferwatch_collector`` (store, budgets), never the other way round (DESIGN §1); the
collector starts the embedded scheduler through a lazy import in its lifespan.
"""
