"""inferwatch alerts: the scheduler and its jobs (alert rules, budget alerts, A/B results) and the notifiers.

Modules: :mod:`.scheduler` (APScheduler 3.x, job specs, :func:`~.scheduler.start_scheduler`; :mod:`.lease`,
:mod:`.job_runs`); the alert rules: :mod:`.rules`, :mod:`.signals`, :mod:`.observations`, :mod:`.drift`,
:mod:`.lifecycle`, :mod:`.alert_state`, :mod:`.alert_messages`, :mod:`.silences`, :mod:`.evaluate` (one
evaluation and the job) and :mod:`.backtest`; budgets: :mod:`.budget_alerts`, :mod:`.budget_notify`;
:mod:`.experiments` (A/B results); :mod:`.notifiers` (Slack, PagerDuty, webhook, the dispatcher).
This package imports ``inferwatch_collector`` (store, budgets), never the other way round (DESIGN §1); the
collector starts the embedded scheduler through a lazy import in its lifespan.
"""
