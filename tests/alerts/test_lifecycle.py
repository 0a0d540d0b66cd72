"""The lifecycle state machine, driven minute by minute: OK -> PENDING -> FIRING -> RESOLVED, NO_DATA,
edge-triggered notifications (one page, one resolve, re-notification only on the interval), silences, and what a
crash between recording and sending leaves due. Pure functions: no database, no clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from inferwatch_alerts.lifecycle import (
    EPOCH,
    NO_DATA,
    Notice,
    Observation,
    Policy,
    SeriesState,
    advance,
    dedup_key,
    initial,
    mark_sent,
    notifications_due,
)

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
BAD, GOOD = Observation(True, 2500.0, 2000.0), Observation(False, 400.0, 2000.0)


class Series:
    """Drives one series like the evaluator does: advance, then send what is due and mark it sent."""

    def __init__(self, policy: Policy, state: SeriesState | None = None) -> None:
        self.policy = policy
        self.state = state or initial("p1", "ttft", "model=gpt-4o", T0)
        self.transitions: list[tuple[datetime, str]] = []
        self.sent: list[tuple[datetime, Notice]] = []

    def step(self, at: datetime, obs: Observation, *, silenced: bool = False) -> list[Notice]:
        self.state, transition = advance(self.state, obs, at, self.policy)
        if transition is not None:
            self.transitions.append((at, transition.to))
        due = notifications_due(self.state, at, self.policy, silenced=silenced)
        self.sent += [(at, n) for n in due]
        self.state = mark_sent(self.state, due, at)
        return due

    def run(self, start: int, observations: list[Observation], **kw: bool) -> None:
        for i, obs in enumerate(observations):
            self.step(T0 + (start + i) * MIN, obs, **kw)


def test_fires_after_the_for_duration_once_and_resolves_once_with_the_same_key() -> None:
    s = Series(Policy(for_s=300))
    s.run(0, [GOOD] * 3 + [BAD] * 12 + [GOOD] * 5)
    assert s.transitions == [(T0 + 3 * MIN, "pending"), (T0 + 8 * MIN, "firing"), (T0 + 15 * MIN, "resolved")]
    assert [(t, n.kind) for t, n in s.sent] == [(T0 + 8 * MIN, "firing"), (T0 + 15 * MIN, "resolved")]
    trigger, resolve = (n for _, n in s.sent)
    assert trigger.dedup_key == resolve.dedup_key == dedup_key("p1", "ttft", "model=gpt-4o", T0 + 3 * MIN)
    assert s.state.state == "resolved" and s.state.notified == ""


def test_a_breach_shorter_than_for_never_notifies() -> None:
    s = Series(Policy(for_s=300))
    s.run(0, [BAD] * 4 + [GOOD] + [BAD] * 4 + [GOOD])
    assert [state for _, state in s.transitions] == ["pending", "ok", "pending", "ok"]
    assert s.sent == []


def test_for_zero_fires_at_once_and_a_new_incident_gets_a_new_key() -> None:
    s = Series(Policy(for_s=0))
    s.run(0, [BAD, GOOD, BAD, GOOD])
    assert [state for _, state in s.transitions] == ["firing", "resolved", "firing", "resolved"]
    keys = [n.dedup_key for _, n in s.sent]
    assert keys[0] == keys[1] != keys[2] == keys[3]


def test_renotify_only_on_the_interval() -> None:
    s = Series(Policy(for_s=0, renotify_s=3600))
    s.run(0, [BAD] * 150)
    assert [(t - T0, n.renotify) for t, n in s.sent] == [
        (timedelta(0), False), (timedelta(hours=1), True), (timedelta(hours=2), True)]
    assert len({n.dedup_key for _, n in s.sent}) == 1


def test_a_silence_holds_the_page_until_it_ends_but_never_a_resolve() -> None:
    s = Series(Policy(for_s=0))
    s.run(0, [BAD] * 10, silenced=True)
    assert s.sent == [] and s.state.state == "firing"
    s.run(10, [BAD] * 3)  # silence over, still firing: paged now
    assert [(t, n.kind) for t, n in s.sent] == [(T0 + 10 * MIN, "firing")]
    s.run(13, [BAD, GOOD], silenced=True)  # silenced again, then recovers: the page it got is resolved
    assert [n.kind for _, n in s.sent] == ["firing", "resolved"]


def test_an_incident_entirely_inside_a_silence_sends_nothing() -> None:
    s = Series(Policy(for_s=0))
    s.run(0, [BAD] * 5 + [GOOD], silenced=True)
    assert s.sent == [] and [state for _, state in s.transitions] == ["firing", "resolved"]


def test_no_data_keep_leaves_an_incident_open_and_ok_resolves_it() -> None:
    keep = Series(Policy(for_s=0, no_data="keep"))
    keep.run(0, [BAD, NO_DATA, NO_DATA, NO_DATA])
    assert keep.state.state == "firing" and [n.kind for _, n in keep.sent] == ["firing"]
    ok = Series(Policy(for_s=0, no_data="ok"))
    ok.run(0, [BAD, NO_DATA])
    assert ok.state.state == "resolved" and [n.kind for _, n in ok.sent] == ["firing", "resolved"]


def test_no_data_alert_after_its_grace_is_an_incident_of_its_own() -> None:
    s = Series(Policy(for_s=0, no_data="alert", no_data_grace_s=300))
    s.run(0, [GOOD] * 2 + [NO_DATA] * 7 + [GOOD])
    assert s.transitions == [(T0 + 7 * MIN, "no_data"), (T0 + 9 * MIN, "resolved")]
    fired, resolved = (n for _, n in s.sent)
    assert fired.kind == "firing" and resolved.kind == "resolved" and fired.dedup_key == resolved.dedup_key
    # the incident started when the data stopped
    assert s.state.incident_start == T0 + 2 * MIN


def test_a_firing_incident_that_goes_silent_continues_without_a_second_page() -> None:
    s = Series(Policy(for_s=0, no_data="alert", no_data_grace_s=120))
    s.run(0, [BAD] * 2 + [NO_DATA] * 4 + [BAD] * 2 + [GOOD])
    assert [state for _, state in s.transitions] == ["firing", "no_data", "firing", "resolved"]
    assert [n.kind for _, n in s.sent] == ["firing", "resolved"]
    assert len({n.dedup_key for _, n in s.sent}) == 1


def test_gaps_shorter_than_the_grace_change_nothing() -> None:
    s = Series(Policy(for_s=0, no_data="alert", no_data_grace_s=300))
    s.run(0, [GOOD, NO_DATA, NO_DATA, GOOD, NO_DATA, GOOD])
    assert s.transitions == [] and s.sent == []


def test_a_crash_between_recording_and_sending_leaves_the_notification_due() -> None:
    policy = Policy(for_s=0)
    state, _ = advance(initial("p1", "r", "k", T0), BAD, T0, policy)
    # the state was recorded, then the process died before sending: a new process reads it back
    assert [n.kind for n in notifications_due(state, T0 + MIN, policy, silenced=False)] == ["firing"]
    sent = mark_sent(state, notifications_due(state, T0 + MIN, policy, silenced=False), T0 + MIN)
    assert notifications_due(sent, T0 + 2 * MIN, policy, silenced=False) == []
    # the same for a resolve that was recorded but not sent
    resolved, _ = advance(sent, GOOD, T0 + 3 * MIN, policy)
    due = notifications_due(resolved, T0 + 4 * MIN, policy, silenced=True)
    assert [(n.kind, n.dedup_key) for n in due] == [("resolved", state.dedup_key)]


def test_an_unsent_resolve_of_an_old_incident_goes_out_before_the_new_page() -> None:
    policy = Policy(for_s=0)
    old = replace(initial("p1", "r", "k", T0), state="firing", incident_start=T0, dedup_key="iw-old",
                  notified="firing", notified_key="iw-old", last_notified_at=T0)
    resolved, _ = advance(old, GOOD, T0 + MIN, policy)
    again, _ = advance(resolved, BAD, T0 + 2 * MIN, policy)  # crash: the resolve was never sent
    due = notifications_due(again, T0 + 2 * MIN, policy, silenced=False)
    assert [(n.kind, n.dedup_key) for n in due] == [("resolved", "iw-old"), ("firing", again.dedup_key)]
    assert mark_sent(again, due, T0 + 2 * MIN).notified_key == again.dedup_key


def test_dedup_keys_are_stable_and_distinct() -> None:
    k = dedup_key("p1", "ttft", "model=a", T0)
    assert k == dedup_key("p1", "ttft", "model=a", T0) and k.startswith("iw-") and len(k) == 35
    assert len({k, dedup_key("p2", "ttft", "model=a", T0), dedup_key("p1", "err", "model=a", T0),
                dedup_key("p1", "ttft", "model=b", T0), dedup_key("p1", "ttft", "model=a", T0 + MIN)}) == 5


# ------------------------------------------------------------------------------------------------ hysteresis

BAND = Observation(False, 1900.0, 2000.0, clear=False)  # under the threshold, above the clear level
CLEAR = Observation(False, 1500.0, 2000.0, clear=True)


def hovering(cycles: int) -> list[Observation]:
    """A value hovering at its threshold: 3 minutes above, then 4 just under it, again and again."""
    return ([BAD] * 3 + [GOOD] * 4) * cycles


def test_without_hysteresis_a_hovering_signal_is_an_incident_per_crossing() -> None:
    s = Series(Policy(for_s=0))
    s.run(0, hovering(9))
    assert [n.kind for _, n in s.sent].count("firing") == 9


def test_a_quiet_period_makes_a_hovering_signal_one_incident() -> None:
    s = Series(Policy(for_s=0, resolve_after_s=600))
    s.run(0, hovering(9) + [GOOD] * 12)
    assert s.transitions == [(T0, "firing"), (T0 + (59 + 10) * MIN, "resolved")]  # clear from minute 59 on
    assert [(t, n.kind) for t, n in s.sent] == [(T0, "firing"), (T0 + 69 * MIN, "resolved")]
    # 4 clear minutes in each cycle never add up: a bad minute starts the quiet period over
    assert s.state.clear_since == EPOCH


def test_a_clear_level_keeps_the_alert_firing_in_the_band_below_the_threshold() -> None:
    s = Series(Policy(for_s=0))
    s.run(0, [BAD] * 2 + [BAND, BAD] * 5 + [BAND] * 30)
    assert [state for _, state in s.transitions] == ["firing"] and s.state.state == "firing"
    s.run(40, [CLEAR])  # no quiet period: the first clear evaluation resolves
    assert [state for _, state in s.transitions] == ["firing", "resolved"]
    assert [n.kind for _, n in s.sent] == ["firing", "resolved"]


def test_the_quiet_period_survives_in_the_state_and_band_minutes_restart_it() -> None:
    policy = Policy(for_s=0, resolve_after_s=300)
    s = Series(policy)
    s.run(0, [BAD, CLEAR, CLEAR, BAND, CLEAR, CLEAR])
    assert s.state.state == "firing" and s.state.clear_since == T0 + 4 * MIN
    # a new process reads the state back (alert_state) and carries on with the same quiet period
    again = Series(policy, replace(s.state))
    again.run(6, [CLEAR] * 4)
    assert again.transitions == [(T0 + 9 * MIN, "resolved")] and again.state.clear_since == EPOCH


def test_pending_still_clears_at_once_and_no_data_ok_counts_as_clear() -> None:
    s = Series(Policy(for_s=300, resolve_after_s=600))
    s.run(0, [BAD, BAND])
    assert [state for _, state in s.transitions] == ["pending", "ok"]
    ok = Series(Policy(for_s=0, no_data="ok", resolve_after_s=120))
    ok.run(0, [BAD, NO_DATA, NO_DATA, NO_DATA])
    assert [(t - T0, state) for t, state in ok.transitions] == [(0 * MIN, "firing"), (3 * MIN, "resolved")]
    keep = Series(Policy(for_s=0, resolve_after_s=120))
    keep.run(0, [BAD, CLEAR, NO_DATA, NO_DATA, CLEAR])  # gaps neither break nor end the quiet period
    assert [(t - T0, state) for t, state in keep.transitions] == [(0 * MIN, "firing"), (4 * MIN, "resolved")]
