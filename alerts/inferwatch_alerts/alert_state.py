"""Where alert series live between evaluations: ``alert_state`` and ``alert_events`` in ClickHouse, or memory.

A :class:`Series` is one row of ``alert_state`` (the lifecycle state of one project, rule and group, plus what is
shown and routed with it); an :class:`AlertEvent` is one appended row of ``alert_events``. The scheduler uses
:class:`DbBackend`, so a restarted scheduler carries on mid-incident; a backtest uses :class:`MemoryBackend`, so
replaying history never touches the tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Protocol

from inferwatch_collector.store import Store

from .lifecycle import EPOCH, SeriesState
from .timeutil import to_ms as _ms, utc as _utc

# alert_state and alert_events are shared with the budget job: rule series carry labels[source] = rules
SOURCE_LABEL: Final = "source"
SOURCE: Final = "rules"
EVENT_COLUMNS: Final = ("project_id", "rule_id", "event_time", "series_key", "state", "severity", "metric",
                        "value", "threshold", "window_s", "message", "labels", "channels")
STATE_COLUMNS: Final = ("project_id", "rule_id", "series_key", "state", "since", "last_value", "last_eval_at",
                        "silenced_until", "updated_at", "is_deleted", "incident_start", "dedup_key", "notified",
                        "notified_key", "last_notified_at", "nodata_since", "severity", "threshold", "baseline",
                        "labels", "channels", "clear_since")


@dataclass(frozen=True)
class Series:
    """A series' lifecycle state plus what is shown and routed with it (one ``alert_state`` row)."""

    state: SeriesState
    labels: Mapping[str, str]  # group labels (project excluded)
    severity: str
    channels: tuple[str, ...] = ()
    threshold: float | None = None
    baseline: float | None = None
    silenced_until: datetime = EPOCH

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.state.project_id, self.state.rule_id, self.state.series_key)


def series_key(labels: Mapping[str, str]) -> str:
    """``model=gpt-4o,provider=openai`` in group order; ``project`` for a project-level series."""
    if not labels:
        return "project"
    return ",".join(f"{k}={_escape(v)}" for k, v in labels.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True)
class AlertEvent:
    """One transition, as appended to ``alert_events``."""

    project_id: str
    rule_id: str
    series_key: str
    event_time: datetime
    state: str
    severity: str
    metric: str
    value: float
    threshold: float
    window_s: int
    message: str
    labels: Mapping[str, str]
    channels: tuple[str, ...]

    def row(self) -> tuple[Any, ...]:
        return (self.project_id, self.rule_id, self.event_time, self.series_key, self.state, self.severity,
                self.metric, nan_if_none(self.value), nan_if_none(self.threshold), self.window_s, self.message,
                dict(self.labels), list(self.channels))


class StateBackend(Protocol):
    """Where series states and events live: ``alert_state``/``alert_events``, or memory for a backtest."""

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]: ...

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]: ...


class DbBackend:
    """``alert_state`` (read with FINAL, one row per series) and ``alert_events`` (append-only)."""

    def __init__(self, store: Store, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.store = store
        self._clock = clock

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]:
        where = f"labels['{SOURCE_LABEL}'] = {{source:String}} AND is_deleted = 0"
        params: dict[str, Any] = {"source": SOURCE}
        if projects is not None:
            where += " AND project_id IN {projects:Array(String)}"
            params["projects"] = list(projects)
        columns = [c for c in STATE_COLUMNS if c != "is_deleted"]
        rows = self.store.query(f"SELECT {', '.join(columns)} FROM alert_state FINAL WHERE {where}",
                                params).result_rows
        out = {}
        for row in rows:
            r = dict(zip(columns, row))
            labels = {k: v for k, v in dict(r["labels"]).items() if k != SOURCE_LABEL}
            state = SeriesState(
                project_id=r["project_id"], rule_id=r["rule_id"], series_key=r["series_key"], state=r["state"],
                since=_utc(r["since"]), last_value=float(r["last_value"]),
                incident_start=_utc(r["incident_start"]), dedup_key=r["dedup_key"], notified=r["notified"],
                notified_key=r["notified_key"], last_notified_at=_utc(r["last_notified_at"]),
                nodata_since=_utc(r["nodata_since"]), clear_since=_utc(r["clear_since"]),
                last_eval_at=_utc(r["last_eval_at"]),
                updated_at=_utc(r["updated_at"]))
            series = Series(state, labels, r["severity"], tuple(r["channels"]), _finite(r["threshold"]),
                            _finite(r["baseline"]), _utc(r["silenced_until"]))
            out[series.key] = series
        return out

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]:
        """Events first (the history is the audit trail), then the states with strictly newer versions."""
        if events:
            self.store.insert_columns("alert_events", _columns(e.row() for e in events), EVENT_COLUMNS)
        if not series:
            return []
        now = _ms(self._clock())
        written = []
        for s in series:
            version = max(now, s.state.updated_at + timedelta(milliseconds=1))
            written.append(replace(s, state=replace(s.state, updated_at=version)))
        self.store.insert_columns("alert_state", _columns(_state_row(s) for s in written), STATE_COLUMNS)
        return written


class MemoryBackend:
    """States and events in memory: the backtest's default, so replaying history never touches alert_state."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, str, str], Series] = {}
        self.events: list[AlertEvent] = []

    def load(self, projects: Sequence[str] | None) -> dict[tuple[str, str, str], Series]:
        return {k: v for k, v in self.series.items() if projects is None or k[0] in projects}

    def record(self, events: Sequence[AlertEvent], series: Sequence[Series]) -> list[Series]:
        self.events.extend(events)
        for s in series:
            self.series[s.key] = s
        return list(series)


def _state_row(s: Series) -> tuple[Any, ...]:
    st = s.state
    labels = {**s.labels, SOURCE_LABEL: SOURCE}
    return (st.project_id, st.rule_id, st.series_key, st.state, st.since, nan_if_none(st.last_value),
            st.last_eval_at, s.silenced_until.replace(microsecond=0), st.updated_at, 0, st.incident_start,
            st.dedup_key, st.notified, st.notified_key, st.last_notified_at, st.nodata_since, s.severity,
            nan_if_none(s.threshold), nan_if_none(s.baseline), labels, list(s.channels), st.clear_since)


def _columns(rows: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    return [list(c) for c in zip(*rows)]


def nan_if_none(value: float | None) -> float:
    """``value`` as a float, NaN when missing (the Float64 columns have no NULL)."""
    return float("nan") if value is None else float(value)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
