"""Alert rules: the YAML schema, loading, and validation that names the line of every mistake.

A rules file is refused whole when anything in it is wrong, with every problem's line (:class:`RulesError`).
The packaged ``default_rules.yaml`` holds the product's defaults and is the worked example of this schema.

Modules: :mod:`.model` (the rules), :mod:`.files` (which file, loading), :mod:`.parse` (validation, with
:mod:`.conditions`, :mod:`.channels` and :mod:`.durations`), :mod:`.yaml_lines` (YAML with lines, the error).

Schema (durations are ``30s``, ``5m``, ``2h``, ``1d``, ``1h30m`` or a number of seconds)::

    version: 1                      # required
    evaluation_offset: 60s          # windows end this far behind now, so late-arriving rows are not a dip
    dashboard_url: https://...      # optional; notifications link to it
    defaults:                       # optional; any rule key below that a rule may leave out
      renotify: 4h
      no_data: keep
      min_requests: 20
    channels:                       # name -> notifier spec, handed to inferwatch_alerts.notifiers.config
      slack: {type: slack, webhook_url_env: INFERWATCH_SLACK_WEBHOOK_URL}
      pagerduty: {type: pagerduty, routing_key_env: INFERWATCH_PAGERDUTY_ROUTING_KEY}
    routing:                        # severity -> channel names (a rule may name its own `channels`)
      critical: [pagerduty, slack]
      warning: [slack]
    rules:
      - id: ttft-p95-high           # required; lower-case letters, digits, - _ . (unique)
        title: TTFT p95 above 2 s   # optional; the notification's headline
        description: ...            # optional
        signal: ttft_p95            # required; see inferwatch_alerts.signals.SIGNALS
        group_by: [project, model]  # project is always included; model provider operation feature
                                    #   prompt_template prompt_version experiment variant service
        window: 5m                  # the signal is computed over this trailing window (default 5m)
        every: 1m                   # evaluation interval, a multiple of 1m (default 1m)
        for: 5m                     # the condition must hold this long before firing (default 0), or
                                    #   {breaching: 7m, of: 10m}: threshold rules only; 7 of the last 10
                                    #   one-minute buckets breach on their own data, and the window does
        resolve_after: 10m          # a firing alert resolves once clear this long without a break (default 0)
        min_requests: 20            # fewer calls in the window = no data (quiet hours do not page)
        severity: warning           # critical | warning | info
        # exactly one of threshold / baseline / detector:
        threshold: {op: ">", value: 2s}       # ops > >= < <=; latency values may be durations, rates "1%"
                                    # rates may be guarded: {op: ">", value: 1%, confidence: 0.95, min_events: 5}
                                    #   (the Wilson bound at that confidence beyond value, min_events events);
                                    #   clear: 1.6s (a firing alert is clear only at or below this level)
        baseline: {kind: daily_average, factor: 2, lookback: 24h, min_value: 0.1}
                                    # or {kind: same_hour, days: 7, factor: 2}: value op factor * baseline,
                                    #   compared when the value or the baseline reaches min_value
        detector: {kind: proportion_spike, baseline_days: 7, alpha: 0.0001, min_ratio: 1.5, min_increase: 0.01}
                                    # (also min_day_cv); length_shift {baseline_days, alpha, min_distance,
                                    #   spread_factor}
                                    # percentile_creep {reference_days, monitor_days, k, h, min_rel_sd,
                                    #   confidence}
        renotify: 4h                # re-send while firing (default: never); `never` switches it off
        no_data: keep               # keep | ok | alert (alert: missing data for max(for, window) alerts)
        channels: [slack]           # overrides routing for this rule
        projects: [shop]            # only these projects (default: every project)
        enabled: true

Which file: ``INFERWATCH_ALERT_RULES_FILE`` (or a settings field ``alert_rules_file`` when present), else the
packaged defaults.
"""

from .durations import parse_duration
from .files import RULES_FILE_ENV, configured_rules_path, load_configured, load_rules
from .model import (
    OPS,
    SEVERITIES,
    BaselineSpec,
    Condition,
    DetectorSpec,
    Rule,
    RuleSet,
    Sustain,
    Threshold,
    format_value,
    iter_rules,
)
from .parse import parse_rules
from .yaml_lines import RulesError

__all__ = [
    "OPS",
    "RULES_FILE_ENV",
    "SEVERITIES",
    "BaselineSpec",
    "Condition",
    "DetectorSpec",
    "Rule",
    "RuleSet",
    "RulesError",
    "Sustain",
    "Threshold",
    "configured_rules_path",
    "format_value",
    "iter_rules",
    "load_configured",
    "load_rules",
    "parse_duration",
    "parse_rules",
]
