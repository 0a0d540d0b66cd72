"""A/B experiments: registry, per-user metrics, statistics, verdicts and the hourly results job.

Modules, from pure to I/O:

* :mod:`.stats`: the statistics (Welch, delta method, two-proportion z, SRM, Holm, power, group-sequential
  O'Brien-Fleming spending and the always-valid mSPRT); numpy and scipy only, no database.
* :mod:`.verdict`: the decision rules (ship, no difference, keep running, SRM invalid, guardrail or primary
  regression); pure.
* :mod:`.metrics`: the metric catalogue and the SQL that reads per-user aggregates from ``llm_calls`` and
  ``feedback``, reduced to per-variant sufficient statistics in the database.
* :mod:`.registry`: experiment definitions (``experiments`` table, migration 0007) and automatic registration of
  experiments first seen in traffic.
* :mod:`.results`: the analysis of one experiment, the history of daily looks, and the scheduled job writing
  ``ab_results`` and ``ab_verdicts``.

The collector's API and CLI import these lazily (the collector never depends on this package at import), and
nothing that a running collector imports at start loads :mod:`.stats` or :mod:`.results`: numpy and scipy
(about 100 MiB resident) load on the first analysis, not in every idle collector.
"""

from typing import Final

#: The scheduled results job's name (here, not in :mod:`.results`, so the scheduler can name it without numpy).
JOB_NAME: Final = "experiments"
