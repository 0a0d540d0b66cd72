"""Silences: hold back the notifications of one rule (or every rule) for some series, until an end time.

A silence names a project, a rule id (empty: every rule) and matchers, ``label -> value``, that a series' labels
must all equal (no matchers: every series of the rule). Evaluation is not silenced: state and history go on,
so the dashboard still shows what is firing, and an incident still firing when its silence ends is paged then.
Only pages are held back: the resolve of a page that already went out is always sent (see
:mod:`inferwatch_alerts.lifecycle`), otherwise PagerDuty would keep an incident open forever.

Stored in ``alert_silences`` (ReplacingMergeTree on ``updated_at``, migration 0006). Expiring a silence is a
re-insert with ``ends_at = now``, so its history stays readable; every read is scoped to a project.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from inferwatch_collector.store import Store
from .timeutil import iso_ms as _iso, to_ms as _ms, utc as _utc

COLUMNS: Final = ("project_id", "silence_id", "rule_id", "matchers", "starts_at", "ends_at", "comment",
                  "created_by", "created_at", "updated_at", "is_deleted")
MAX_DURATION: Final = timedelta(days=90)
MAX_COMMENT: Final = 1000
_LABEL = re.compile(r"[a-z_][a-z0-9_]{0,63}")
_RULE = re.compile(r"[a-z0-9][a-z0-9_.:-]{0,127}")


class SilenceError(ValueError):
    """An invalid silence; the message says which field and why."""


@dataclass(frozen=True)
class Silence:
    project_id: str
    silence_id: str
    rule_id: str  # '' = every rule
    matchers: Mapping[str, str]
    starts_at: datetime
    ends_at: datetime
    comment: str = ""
    created_by: str = ""
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def active(self, at: datetime) -> bool:
        return self.starts_at <= at < self.ends_at

    def matches(self, project_id: str, rule_id: str, labels: Mapping[str, str], at: datetime) -> bool:
        """Whether this silence covers the series (project, rule, labels) at ``at``."""
        return (self.project_id == project_id and self.active(at) and self.rule_id in ("", rule_id)
                and all(labels.get(k) == v for k, v in self.matchers.items()))

    def to_json(self, now: datetime | None = None) -> dict[str, Any]:
        now = now or datetime.now(UTC)
        return {"silence_id": self.silence_id, "rule_id": self.rule_id or None, "matchers": dict(self.matchers),
                "starts_at": _iso(self.starts_at), "ends_at": _iso(self.ends_at), "comment": self.comment,
                "created_by": self.created_by, "created_at": _iso(self.created_at), "active": self.active(now)}


def find_silence(silences: Iterable[Silence], project_id: str, rule_id: str, labels: Mapping[str, str],
                 at: datetime) -> Silence | None:
    """The first silence that covers the series at ``at``, or None."""
    return next((s for s in silences if s.matches(project_id, rule_id, labels, at)), None)


def validate_silence(project_id: str, *, rule_id: str | None, matchers: Mapping[str, str] | None,
                     ends_at: datetime, starts_at: datetime | None = None, comment: str = "",
                     created_by: str = "", now: datetime | None = None) -> Silence:
    """A new silence, checked: an end after its start and after now, at most 90 days, plain label names."""
    now = _utc(now or datetime.now(UTC))
    starts = _utc(starts_at) if starts_at else now
    ends = _utc(ends_at)
    rule = (rule_id or "").strip()
    if rule in ("*",):
        rule = ""
    if rule and not _RULE.fullmatch(rule):
        raise SilenceError(f"rule_id {rule!r} is not a rule id")
    labels = dict(matchers or {})
    for key, value in labels.items():
        if not isinstance(key, str) or not _LABEL.fullmatch(key):
            raise SilenceError(f"matcher label {key!r} must be a label name such as model or feature")
        if not isinstance(value, str) or len(value) > 512:
            raise SilenceError(f"matcher {key}: the value must be a string of at most 512 characters")
    if ends <= starts or ends <= now:
        raise SilenceError("ends_at must be after starts_at and in the future")
    if ends - starts > MAX_DURATION:
        raise SilenceError(f"a silence lasts at most {MAX_DURATION.days} days")
    if len(comment) > MAX_COMMENT:
        raise SilenceError(f"comment: at most {MAX_COMMENT} characters")
    return Silence(project_id, "s_" + secrets.token_hex(8), rule, labels, _ms(starts), _ms(ends), comment,
                   created_by, _ms(now))


def _row(s: Silence, updated_at: datetime) -> tuple[Any, ...]:
    return (s.project_id, s.silence_id, s.rule_id, dict(s.matchers), s.starts_at, s.ends_at, s.comment,
            s.created_by, s.created_at, updated_at, 0)


def save_silence(store: Store, silence: Silence, *, updated_at: datetime | None = None) -> Silence:
    store.insert_columns("alert_silences", [list(c) for c in zip(_row(silence, _ms(updated_at or _now())))],
                         COLUMNS)
    return silence


def create_silence(store: Store, project_id: str, **fields: Any) -> Silence:
    """Validate and store a silence; raises :class:`SilenceError`."""
    return save_silence(store, validate_silence(project_id, **fields))


def list_silences(store: Store, project_id: str | None, *, active_at: datetime | None = None,
                  include_expired: bool = True) -> list[Silence]:
    """A project's silences (every project's when None), newest first; only those active at ``active_at``
    when it is given, and only unexpired ones unless ``include_expired``."""
    where, params = ["is_deleted = 0"], {}
    if project_id is not None:
        where.append("project_id = {p:String}")
        params["p"] = project_id
    if active_at is not None:
        at = _ms(_utc(active_at))
        where.append("starts_at <= fromUnixTimestamp64Milli({at:Int64}) "
                     "AND ends_at > fromUnixTimestamp64Milli({at:Int64})")
        params["at"] = int(at.timestamp() * 1000)
    elif not include_expired:
        where.append("ends_at > now64(3)")
    rows = store.query(
        f"SELECT {', '.join(COLUMNS[:9])} FROM alert_silences FINAL WHERE {' AND '.join(where)} "
        "ORDER BY created_at DESC, silence_id", params).result_rows
    return [Silence(p, sid, rule, dict(m), _utc(s), _utc(e), c, by, _utc(created))
            for p, sid, rule, m, s, e, c, by, created in rows]


def get_silence(store: Store, project_id: str, silence_id: str) -> Silence | None:
    rows = store.query(
        f"SELECT {', '.join(COLUMNS[:9])} FROM alert_silences FINAL WHERE project_id = {{p:String}} "
        "AND silence_id = {id:String} AND is_deleted = 0", {"p": project_id, "id": silence_id}).result_rows
    if not rows:
        return None
    p, sid, rule, m, s, e, c, by, created = rows[0]
    return Silence(p, sid, rule, dict(m), _utc(s), _utc(e), c, by, _utc(created))


def expire_silence(store: Store, project_id: str, silence_id: str, *, now: datetime | None = None
                   ) -> Silence | None:
    """End a silence now (None when the project has no such silence). Already ended: returned unchanged."""
    silence = get_silence(store, project_id, silence_id)
    if silence is None:
        return None
    now = _ms(_utc(now or _now()))
    if silence.ends_at <= now:
        return silence
    ended = replace(silence, ends_at=max(now, silence.starts_at))
    return save_silence(store, ended, updated_at=max(_now(), now))


def active_silences(store: Store, at: datetime, projects: Sequence[str] | None = None) -> list[Silence]:
    """Every silence active at ``at`` (of ``projects`` when given): one query per evaluation."""
    if projects is not None and not projects:
        return []
    found = list_silences(store, None, active_at=at)
    return [s for s in found if projects is None or s.project_id in projects]


def _now() -> datetime:
    return datetime.now(UTC)
