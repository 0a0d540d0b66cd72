"""Alerts: what is firing now, recent transitions, the rules in force (and which are still learning their
baseline), silences (create and expire), the notification log and the scheduler's job runs.

Creating and expiring silences needs a key with the ``admin`` scope; with a read key the form is shown but the
collector refuses it, and the page says so.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from inferwatch_dashboard import context, data, ui
from inferwatch_dashboard.data import Scope

CURRENT_COLUMNS = ["state", "severity", "rule_id", "series_key", "value", "threshold", "baseline", "since",
                   "silenced_until", "labels"]
HISTORY_COLUMNS = ["time", "state", "severity", "rule_id", "series_key", "signal", "value", "threshold", "message"]
DURATIONS = ("30m", "1h", "2h", "4h", "8h", "1d", "7d")


def learning_note(scope: Scope) -> None:
    """Rules that compare with the project's own history cannot fire until they have enough of it: say which,
    so a quiet first day is not mistaken for "nothing is wrong" being checked."""
    table = data.alerts(scope, "rules")
    if table.empty or "learning" not in table:
        return
    learning = table[table["learning"].fillna(False).astype(bool)]
    if learning.empty:
        return
    listed = ", ".join(f"{row['id']} ({row['learning_status']})" for _, row in learning.iterrows())
    st.info(f"{len(learning)} of {len(table)} rules are learning their baseline and cannot fire yet: {listed}.",
            icon=":material/school:")


def current(scope: Scope) -> None:
    learning_note(scope)
    alerts = data.alerts(scope, "current")
    if alerts.empty:
        st.success("Nothing is firing or pending.", icon=":material/check_circle:")
        return
    firing = int((alerts["state"] == "firing").sum()) if "state" in alerts else 0
    cols = st.columns(3)
    cols[0].metric("Firing", firing)
    cols[1].metric("Pending", int((alerts["state"] == "pending").sum()) if "state" in alerts else 0)
    cols[2].metric("No data", int((alerts["state"] == "no_data").sum()) if "state" in alerts else 0)
    ui.table(alerts, CURRENT_COLUMNS)


def history(scope: Scope) -> None:
    events = data.alerts(scope, "history")
    if events.empty:
        st.caption("No alert transitions in this range.")
    else:
        ui.table(events, HISTORY_COLUMNS)


RULE_COLUMNS = ["id", "learning_status", "severity", "signal", "group_by", "window_s", "every_s", "for_s",
                "min_requests", "condition", "history_days", "channels", "title"]


def rules(scope: Scope) -> None:
    table = data.alerts(scope, "rules")
    if table.empty:
        st.caption("No alert rules for this project.")
    else:
        ui.table(table, RULE_COLUMNS + [c for c in table.columns if c not in RULE_COLUMNS])


def _matchers(text: str) -> dict[str, str]:
    """``model=gpt-4o, feature=search`` → {"model": "gpt-4o", "feature": "search"}."""
    pairs = [part.split("=", 1) for part in text.replace("\n", ",").split(",") if "=" in part]
    return {key.strip(): value.strip() for key, value in pairs if key.strip()}


def silences(scope: Scope) -> None:
    table = data.alerts(scope, "silences")
    if table.empty:
        st.caption("No active silences.")
    else:
        ui.table(table)
    with st.form("new_silence", clear_on_submit=True):
        st.markdown("**New silence** (holds back notifications; evaluation and history go on)")
        cols = st.columns([2, 3, 1])
        rule_id = cols[0].text_input("Rule id", placeholder="empty: every rule")
        matchers = cols[1].text_input("Series labels", placeholder="model=gpt-4o, feature=search")
        duration = cols[2].selectbox("For", DURATIONS, index=2)
        comment = st.text_input("Comment", placeholder="why (shown to the on-call)")
        if st.form_submit_button("Create silence"):
            body: dict[str, Any] = {"rule_id": rule_id or None, "matchers": _matchers(matchers),
                                    "duration": duration, "comment": comment}
            created = data.create_silence(scope, body)
            st.success(f"Silence {created.get('silence_id', '')} created until {created.get('ends_at', '?')}.")
    if not table.empty and "silence_id" in table:
        active = table[table["active"]] if "active" in table else table
        if not active.empty:
            cols = st.columns([3, 1])
            chosen = cols[0].selectbox("Expire a silence", active["silence_id"].tolist(), key="expire_silence")
            if cols[1].button("Expire now", key="expire_button"):
                data.expire_silence(scope, chosen)
                st.success(f"Silence {chosen} expired.")


def notifications(scope: Scope) -> None:
    log = data.alerts(scope, "notifications")
    if log.empty:
        st.caption("No notifications sent in this range.")
        return
    failed = int((~log["ok"].astype(bool)).sum()) if "ok" in log else 0
    if failed:
        st.warning(f"{failed} of {len(log)} notifications failed after their retries; the errors are below.")
    ui.table(log, ["sent_at", "channel", "state", "ok", "attempts", "rule_id", "series_key", "error"])


def job_runs(scope: Scope) -> None:
    runs = data.job_runs(scope)
    if runs.empty:
        st.caption("No scheduled job has run in the last 7 days (is the scheduler running?).")
        return
    failed = runs[runs["outcome"] == "failure"] if "outcome" in runs else pd.DataFrame()
    if not failed.empty:
        st.warning(f"{len(failed)} of the last {len(runs)} job runs failed; their errors are in the table.")
    ui.table(runs, ["job", "outcome", "started_at", "duration_s", "trigger", "error"])


def main() -> None:
    scope = context.current()
    ui.header("Alerts", scope)
    for title, section in (("Current alerts", current), ("Recent transitions", history), ("Rules", rules),
                           ("Silences", silences), ("Notification log", notifications), ("Job runs", job_runs)):
        st.subheader(title)
        with ui.section(title):
            section(scope)


main()
