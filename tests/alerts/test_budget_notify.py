"""Budget alerts go out through the alert channels: routed by severity, one incident (dedup key) per period."""

from __future__ import annotations

from datetime import timedelta

from inferwatch_alerts.budget_notify import BudgetsJob
from inferwatch_alerts.rules import parse_rules
from inferwatch_collector.store import Store

from tests.helpers.notif_receiver import Receiver
from tests.helpers.budget_data import LATE, make, spend

RULES = """
version: 1
channels:
  finops-hook:
    type: webhook
    url_env: BUDGET_HOOK_URL
    signing_key_env: BUDGET_HOOK_KEY
routing:
  warning: [finops-hook]
  critical: [finops-hook]
rules: []
"""


def test_thresholds_are_sent_once_each_through_the_routed_channel(store: Store) -> None:
    make(store, limit_usd=100, kind="hard")
    with Receiver() as hook:
        env = {"BUDGET_HOOK_URL": hook.url + "/budget", "BUDGET_HOOK_KEY": "k" * 32}
        job = BudgetsJob(parse_rules(RULES, "test rules"), env=env)
        spend(store, LATE - timedelta(hours=2), 60.0)  # 60%: the 50% threshold
        job(store, LATE)
        job(store, LATE + timedelta(minutes=1))  # nothing new: nothing sent
        spend(store, LATE - timedelta(hours=1), 45.0)  # 105%: a jump past 80% and 100% sends the highest one
        BudgetsJob(parse_rules(RULES, "test rules"), env=env)(store, LATE + timedelta(minutes=2))  # a restart
        sent = [request.json() for request in hook.requests]
    assert [(n["state"], n["severity"], n["labels"]["threshold"]) for n in sent] == [
        ("firing", "warning", "0.5"), ("firing", "critical", "1.0")]  # critical: a hard budget at 100%
    assert sent[0]["title"] == "Budget b1 (project): 50% reached"
    assert len({n["dedup_key"] for n in sent}) == 1  # one incident for the period
    assert all(n["project_id"] == "p1" and n["signal"] == "budget_spend_usd" for n in sent)
    assert sent[-1]["value"] == 105.0 and sent[-1]["threshold"] == 100.0
    delivered = store.query("SELECT count(), countIf(ok) FROM notifications").result_rows
    assert delivered == [(2, 2)]
