"""The alert lifecycle of one series (project, rule, group): a pure state machine.

States::

    OK ──breach──▶ PENDING ──breach held for `for`──▶ FIRING ──clear──▶ RESOLVED ──breach──▶ PENDING ...
     ▲               │ clear                            │ no data (policy alert, after a grace)
     └───────────────┘                                  ▼
                                                     NO_DATA ──data, clear──▶ RESOLVED

``for: 0`` goes from OK straight to FIRING. RESOLVED behaves as OK (it says "this fired and recovered").

What a missing observation means is the rule's ``no_data`` policy: ``keep`` (default: nothing changes, an
incident stays open until data says it is over), ``ok`` (absence counts as healthy) or ``alert`` (absence for
longer than a grace period is itself an incident, state NO_DATA; an incident already firing continues as
NO_DATA under the same dedup key).

Notifications are derived from the state, not from the transition (:func:`notifications_due`): what the
receivers were last told (``notified``, ``notified_key``, ``last_notified_at``) is part of the state, so

* a firing incident is paged once, then again only every ``renotify_s``;
* a resolve goes out exactly once, with the key that was paged, and only if a page went out;
* a silence holds back pages (a silenced incident that is still firing when the silence ends is paged then),
  never the resolve of a page that already went out;
* a restart cannot re-page or forget a resolve: the evaluator reads this state back from ``alert_state``, and
  a notification that was due but not yet marked as sent (a crash in between) is simply still due.

Nothing here reads a clock or a database: times are arguments, so the scheduler, the backtest and the tests
drive the same code.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

State = Literal["ok", "pending", "firing", "resolved", "no_data"]
NoDataPolicy = Literal["keep", "ok", "alert"]
ALERTING: Final = frozenset({"firing", "no_data"})
ACTIVE: Final = frozenset({"pending", "firing", "no_data"})
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Policy:
    """A rule's timing: how long a breach must hold, re-notification, and what missing data means."""

    for_s: float = 0.0
    renotify_s: float | None = None
    no_data: NoDataPolicy = "keep"
    no_data_grace_s: float = 0.0  # policy "alert": how long data must be missing before NO_DATA
    resolve_after_s: float = 0.0  # a firing alert resolves once clear for this long (hysteresis)


@dataclass(frozen=True)
class Observation:
    """One evaluation of one series: ``breaching`` None means no data (or too little to judge).

    ``clear`` says whether a firing alert may count this evaluation towards its resolve; None means "when not
    breaching". A threshold with a clear level (or a statistical guard) leaves a band in between that is
    neither: the alert keeps firing there, so a value hovering at the threshold is one incident.
    """

    breaching: bool | None
    value: float | None = None
    threshold: float | None = None
    baseline: float | None = None
    details: dict[str, str] = field(default_factory=dict)
    clear: bool | None = None

    @property
    def has_data(self) -> bool:
        return self.breaching is not None

    @property
    def is_clear(self) -> bool:
        return self.clear if self.clear is not None else self.breaching is False


NO_DATA: Final = Observation(None)


@dataclass(frozen=True)
class SeriesState:
    """Everything remembered about one series between evaluations (one row of ``alert_state``)."""

    project_id: str
    rule_id: str
    series_key: str
    state: State = "ok"
    since: datetime = EPOCH  # when the current state began
    last_value: float = float("nan")
    incident_start: datetime = EPOCH  # when the current (or last) incident began: the dedup key's seed
    dedup_key: str = ""
    notified: Literal["", "firing"] = ""  # what the receivers were last told about `notified_key`
    notified_key: str = ""
    last_notified_at: datetime = EPOCH
    nodata_since: datetime = EPOCH  # start of the current gap in the data (policy alert), EPOCH if none
    clear_since: datetime = EPOCH  # an alerting series clear since then (its quiet period), EPOCH if not clear
    last_eval_at: datetime = EPOCH
    updated_at: datetime = EPOCH  # the row version written last (the store's business)

    @property
    def alerting(self) -> bool:
        return self.state in ALERTING

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


@dataclass(frozen=True)
class Transition:
    """A change of state, recorded in ``alert_events`` (``to`` is the new state; ``ok`` = a pending cleared)."""

    frm: State
    to: State
    at: datetime


@dataclass(frozen=True)
class Notice:
    """A notification that is due: a page (``firing``, possibly a re-notification) or a resolve."""

    kind: Literal["firing", "resolved"]
    dedup_key: str
    renotify: bool = False


def dedup_key(project_id: str, rule_id: str, series_key: str, incident_start: datetime) -> str:
    """Stable per incident: the same for its trigger, re-notifications and resolve, across restarts."""
    seed = f"{project_id}\x1f{rule_id}\x1f{series_key}\x1f{int(incident_start.timestamp() * 1000)}"
    return "iw-" + hashlib.sha256(seed.encode()).hexdigest()[:32]


def initial(project_id: str, rule_id: str, series_key: str, now: datetime) -> SeriesState:
    """A series seen for the first time: OK since now."""
    return SeriesState(project_id, rule_id, series_key, since=now)


def advance(prev: SeriesState, obs: Observation, now: datetime, policy: Policy
            ) -> tuple[SeriesState, Transition | None]:
    """The series' state after observing ``obs`` at ``now``, and the transition made (None: same state)."""
    state = replace(prev, last_eval_at=now)
    if obs.value is not None:
        state = replace(state, last_value=obs.value)
    breaching, clear = obs.breaching, obs.is_clear
    if breaching is None:
        if policy.no_data == "keep":
            return state, None
        if policy.no_data == "alert":
            return _no_data(state, now, policy)
        breaching, clear = False, True  # policy "ok": absence is health
    elif state.nodata_since != EPOCH:
        state = replace(state, nodata_since=EPOCH)
    if breaching:
        return _breach(state, now, policy)
    return _clear(state, now, policy, clear)


def _move(state: SeriesState, to: State, now: datetime) -> tuple[SeriesState, Transition]:
    return replace(state, state=to, since=now), Transition(state.state, to, now)


def _new_incident(state: SeriesState, now: datetime) -> SeriesState:
    return replace(state, incident_start=now,
                   dedup_key=dedup_key(state.project_id, state.rule_id, state.series_key, now))


def _breach(state: SeriesState, now: datetime, policy: Policy) -> tuple[SeriesState, Transition | None]:
    if state.clear_since != EPOCH:  # bad again: the quiet period starts over
        state = replace(state, clear_since=EPOCH)
    if state.state in ("ok", "resolved"):
        state = _new_incident(state, now)
        return _move(state, "firing" if policy.for_s <= 0 else "pending", now)
    if state.state == "no_data":  # data is back and still bad: the same incident goes on
        return _move(state, "firing", now)
    if state.state == "pending" and (now - state.incident_start).total_seconds() >= policy.for_s:
        return _move(state, "firing", now)
    return state, None


def _clear(state: SeriesState, now: datetime, policy: Policy, clear: bool
           ) -> tuple[SeriesState, Transition | None]:
    """Not breaching. A pending series is back to OK at once; an alerting one resolves only once the value has
    been clear (``clear``) for ``policy.resolve_after_s`` without a break (hysteresis)."""
    if state.state == "pending":
        return _move(state, "ok", now)
    if state.state not in ALERTING:
        return state, None
    if not clear:  # between the clear level and the threshold: still the same incident
        return (replace(state, clear_since=EPOCH) if state.clear_since != EPOCH else state), None
    if state.clear_since == EPOCH:
        state = replace(state, clear_since=now)
    if (now - state.clear_since).total_seconds() < policy.resolve_after_s:
        return state, None
    return _move(replace(state, clear_since=EPOCH), "resolved", now)


def _no_data(state: SeriesState, now: datetime, policy: Policy) -> tuple[SeriesState, Transition | None]:
    if state.state == "no_data":
        return state, None
    if state.nodata_since == EPOCH:
        state = replace(state, nodata_since=now)
    if (now - state.nodata_since).total_seconds() < policy.no_data_grace_s:
        return state, None
    if state.state != "firing":  # an incident already firing keeps its key: same incident, no second page
        state = _new_incident(state, state.nodata_since)
    return _move(state, "no_data", now)


def notifications_due(state: SeriesState, now: datetime, policy: Policy, *, silenced: bool) -> list[Notice]:
    """What the receivers must be told now so that they agree with ``state``.

    A page that went out for an incident that is no longer alerting (or was replaced by a newer one) is
    resolved first; a silence never holds back a resolve.
    """
    due: list[Notice] = []
    if state.notified == "firing" and (not state.alerting or state.notified_key != state.dedup_key):
        due.append(Notice("resolved", state.notified_key))
    if state.alerting and not silenced:
        if state.notified != "firing" or state.notified_key != state.dedup_key:
            due.append(Notice("firing", state.dedup_key))
        elif policy.renotify_s and now - state.last_notified_at >= timedelta(seconds=policy.renotify_s):
            due.append(Notice("firing", state.dedup_key, renotify=True))
    return due


def mark_sent(state: SeriesState, notices: list[Notice], now: datetime) -> SeriesState:
    """The state once ``notices`` went out (delivered or given up on after the dispatcher's retries)."""
    for notice in notices:
        if notice.kind == "firing":
            state = replace(state, notified="firing", notified_key=notice.dedup_key, last_notified_at=now)
        elif notice.dedup_key == state.notified_key:
            state = replace(state, notified="", notified_key="")
    return state
