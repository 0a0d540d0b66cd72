"""HTTP routes of the alerting package (alerts, silences, rules, experiments), one router per module.

They use the collector's dependencies (store, settings, principals) and are mounted by the server's app factory
beside the collector's own routers.
"""
