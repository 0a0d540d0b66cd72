"""inferwatch alerts: scheduled jobs and notifiers (arrives with the alerting issue)."""
