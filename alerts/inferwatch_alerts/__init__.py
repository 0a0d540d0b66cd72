"""inferwatch alerts: the scheduler and its jobs, alert rules and notifiers, A/B experiments, and their API.

Modules: :mod:`.scheduler` (APScheduler 3.x, job specs, :func:`~.scheduler.start_scheduler`; :mod:`.lease`,
:mod:`.job_runs`); the alert rules: :mod:`.rules`, :mod:`.signals`, :mod:`.observations`, :mod:`.guards`, :mod:`.drift`,
:mod:`.lifecycle`, :mod:`.alert_state`, :mod:`.alert_messages`, :mod:`.silences`, :mod:`.evaluate` (one
evaluation and the job) and :mod:`.backtest`; budgets: :mod:`.budget_alerts`, :mod:`.budget_notify`;
:mod:`.experiments` (A/B results); :mod:`.notifiers` (Slack, PagerDuty, webhook, the dispatcher); :mod:`.routes`
(the HTTP API: alerts, silences, rules, experiments). This package imports ``inferwatch_collector`` (store,
budgets, API dependencies), never the other way round; the server's app factory mounts its routers and starts
the embedded scheduler.
"""
