"""What alerts say: the message of each ``alert_events`` row and the :class:`AlertNotification` sent for it.

Messages name the signal, the group, the value in the signal's unit and the condition (threshold, baseline or
the drift test's statistic and evidence window), so a page can be acted on without opening the dashboard.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from .alert_state import AlertEvent, Series, nan_if_none
from .lifecycle import Notice, Observation, SeriesState, Transition
from .rules import BaselineSpec, DetectorSpec, Rule, RuleSet, Threshold, format_value
from .timeutil import iso_s as _iso

if TYPE_CHECKING:  # the notifiers are imported when a notification is built, not with this module
    from .notifiers.base import AlertNotification


def transition_event(series: Series, transition: Transition, rule: Rule, obs: Observation) -> AlertEvent:
    """The ``alert_events`` row of ``series`` making ``transition`` on ``obs``."""
    st = series.state
    labels = {**series.labels, "dedup_key": st.dedup_key, "title": rule.headline, **obs.details}
    if obs.baseline is not None:
        labels["baseline"] = f"{obs.baseline:.6g}"
    return AlertEvent(st.project_id, rule.id, st.series_key, transition.at, transition.to, rule.severity,
                      rule.signal.name, nan_if_none(obs.value if obs.value is not None else st.last_value),
                      nan_if_none(obs.threshold), rule.window_s, message(rule, series, transition.to, obs),
                      labels, series.channels)


def retired_event(prev: Series, state: SeriesState, end: datetime) -> AlertEvent:
    """The ``alert_events`` row of a series ended at ``end`` because its rule is gone (or no longer covers its
    project); ``state`` is the series' new state."""
    st = prev.state
    text = (f"Alert {st.rule_id} ({st.series_key}) ended: the rule is no longer in the rules file or no "
            "longer covers this project.")
    return AlertEvent(st.project_id, st.rule_id, st.series_key, end, state.state, prev.severity, "",
                      st.last_value, nan_if_none(prev.threshold), 0, text,
                      {**prev.labels, "dedup_key": st.dedup_key, "reason": "rule removed"}, prev.channels)


def _where(series: Series) -> str:
    return f"{series.state.project_id}" + (f" / {', '.join(f'{k} {v}' for k, v in series.labels.items())}"
                                            if series.labels else "")


def _window_text(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}" if n != 1 else f"{unit}"
    return f"{seconds} s"


def message(rule: Rule, series: Series, state: str, obs: Observation) -> str:
    """The sentence for ``series`` in ``state``: the value, the group, the window and what it is judged against."""
    signal = rule.signal
    value = obs.value if obs.value is not None else series.state.last_value
    where = _where(series)
    if state == "no_data":
        return (f"No data for {signal.name} in {where}: fewer than {max(1, rule.min_requests)} calls per "
                f"{_window_text(rule.window_s)} since {_iso(series.state.nodata_since)}.")
    if state in ("resolved", "ok"):
        verb = "recovered" if state == "resolved" else "is back within bounds before the alert fired"
        return (f"{signal.description.capitalize()} in {where} {verb}: {format_value(signal, value)} over the "
                f"last {_window_text(rule.window_s)}.")
    text = (f"{signal.description.capitalize()} in {where} is {format_value(signal, value)} over the last "
            f"{_window_text(rule.window_s)}")
    cond = rule.condition
    if isinstance(cond, Threshold):
        text += f" (threshold {cond.describe(signal)}"
        bound = obs.details.get("lower_bound") or obs.details.get("upper_bound")
        if bound is not None:
            side = "lower" if "lower_bound" in obs.details else "upper"
            events = obs.details.get("events", "?")
            text += f": {side} bound {format_value(signal, float(bound))} from {events} events"
        if "buckets_breaching" in obs.details:
            text += f"; {obs.details['buckets_breaching'].replace('/', ' of the last ')} minutes breaching"
        text += ")"
    elif isinstance(cond, BaselineSpec):
        text += (f", against a baseline of {format_value(signal, obs.baseline)} (fires {cond.op} "
                 f"{cond.factor:g}x, i.e. {format_value(signal, obs.threshold)})")
    elif isinstance(cond, DetectorSpec):
        d = obs.details
        base = f"{obs.baseline:.1f} tokens" if signal.kind == "per_call" else format_value(signal, obs.baseline)
        now = f"{value:.1f} tokens" if signal.kind == "per_call" else format_value(signal, value)
        text = (f"{signal.description.capitalize()} in {where} is {now} against a baseline of {base} "
                f"({d.get('method', cond.kind)}: statistic {d.get('statistic')} vs {d.get('critical')}"
                + (f", p = {d['p_value']}" if "p_value" in d else "") + f"; evidence {d.get('window_start')} to "
                f"{d.get('window_end')}, baseline from {d.get('baseline_start')})")
    if state == "pending":
        return text + f"; firing if it holds for {_window_text(rule.for_s)}."
    if state == "firing" and rule.resolve_after_s:
        return text + f"; resolves after {_window_text(rule.resolve_after_s)} back in bounds."
    return text + "."


def notification_for(series: Series, notice: Notice, rule: Rule | None, ruleset: RuleSet, event_time: datetime
                     ) -> AlertNotification:
    """What the channels receive for ``notice`` (``rule`` None: the series' rule is gone from the rules file)."""
    from .notifiers.base import AlertNotification

    st = series.state
    title = (rule.headline if rule else st.rule_id) + f" for {_where(series)}"
    if rule is not None:
        signal_name = rule.signal.name
        obs = Observation(True, st.last_value, series.threshold, series.baseline)
        text = message(rule, series, "resolved" if notice.kind == "resolved" else st.state, obs)
    else:
        signal_name = ""
        text = f"Alert {st.rule_id} ({st.series_key}) ended: its rule is no longer in the rules file."
    if notice.renotify:
        text = f"Still firing since {_iso(st.since)}. " + text
    return AlertNotification(
        project_id=st.project_id, rule_id=st.rule_id, series_key=st.series_key, state=notice.kind,
        severity=series.severity if series.severity in ("critical", "warning", "info") else "warning",
        title=title, message=text, signal=signal_name, value=nan_if_none(st.last_value),
        threshold=series.threshold, baseline=series.baseline, labels=dict(series.labels),
        started_at=st.incident_start, event_time=event_time, dedup_key=notice.dedup_key,
        dashboard_url=ruleset.dashboard_url)

