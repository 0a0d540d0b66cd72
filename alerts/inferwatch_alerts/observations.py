"""Observations: the signal windows of one rule turned into one :class:`~.lifecycle.Observation` per group.

The windows are read through :mod:`.signals`; a group under the rule's ``min_requests`` is no data. The
condition decides how a value becomes a verdict: a threshold comparison, a baseline comparison (trailing daily
average, or the same window on previous days: their mean, or their median with the daily mean as fallback), or
a drift test (:mod:`.drift`) against earlier days.

A baseline-relative rule (baseline or detector) never judges a series before it has the history its condition
needs (``history_days``): until then the series is *learning*, an observation without a verdict whose details
say ``learning: has 1 of 3 days``. Without that, a fresh install pages in its first hours (a day that is mostly
empty averages low).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from datetime import UTC, datetime
from typing import Final

from inferwatch_collector.store import Store

from . import drift
from .alert_state import series_key
from .guards import guarded, guarded_quantile
from .lifecycle import NO_DATA, Observation
from .rules import OPS, BaselineSpec, DetectorSpec, Rule, Threshold
from .signals import (
    Source,
    WindowRow,
    choose_source,
    read_first_seen,
    read_length_histograms,
    read_sliding,
    read_windows,
    value_of,
)
from .timeutil import iso_s as _iso

DAY: Final = 86400
MINUTE: Final = 60
HOUR: Final = 3600
LEARNING: Final = "learning"  # the details key of a learning observation


def learning_text(has: int, needs: int) -> str:
    """What a learning series (or rule) shows: ``learning: has 1 of 3 days``."""
    return f"learning: has {has} of {needs} day{'s' if needs != 1 else ''}"


@dataclass
class _History:
    """Days of history per series (since its first call, within ``days`` + 1 days), read once per evaluation
    and only when some series needs it (a warm series' baseline windows already prove its history)."""

    store: Store
    rule: Rule
    end: int
    days: int
    projects: Sequence[str] | None
    _seen: dict[tuple[str, tuple[str, ...]], int] | None = field(default=None, init=False)

    def days_of(self, project: str, values: tuple[str, ...]) -> int:
        if self._seen is None:
            since = self.end - self.end % HOUR - (self.days + 1) * DAY
            until = self.end - self.end % HOUR + HOUR
            self._seen = read_first_seen(self.store, self.rule.signal, self.rule.group_by, since, until,
                                         self.projects)
        first = self._seen.get((project, values))
        return 0 if first is None else max(0, min(self.days + 1, (self.end - first) // DAY))


def _learning(value: float | None, has: int, needs: int, details: Mapping[str, str]) -> Observation:
    return Observation(None, value, details={**details, LEARNING: learning_text(has, needs)})


@dataclass(frozen=True)
class Observed:
    """One group's observation; ``labels`` are the group's values (project excluded)."""

    labels: Mapping[str, str]
    observation: Observation


Observations = dict[tuple[str, str], Observed]  # (project, series key) -> observation


def _labels(rule: Rule, values: Sequence[str]) -> dict[str, str]:
    return dict(zip([g for g in rule.group_by if g != "project"], values))


@lru_cache(maxsize=256)  # every series of an evaluation has the same window: format it once
def _span_of(start: int, end: int) -> tuple[tuple[str, str], ...]:
    return (("window_start", _iso(datetime.fromtimestamp(start, UTC))),
            ("window_end", _iso(datetime.fromtimestamp(end, UTC))))


def _span(start: int, end: int) -> dict[str, str]:
    return dict(_span_of(start, end))


def _by_series(rule: Rule, rows: Iterable[WindowRow]) -> dict[tuple[str, tuple[str, ...]], dict[int, WindowRow]]:
    out: dict[tuple[str, tuple[str, ...]], dict[int, WindowRow]] = {}
    for row in rows:
        out.setdefault((row.project_id, row.labels), {})[row.k] = row
    return out


def observe(store: Store, rule: Rule, end: datetime, projects: Sequence[str] | None = None) -> Observations:
    """Every group's observation of ``rule`` for the window ending at ``end``; groups with no calls at all are
    absent (the caller treats a known series that is absent as no data)."""
    e = int(end.timestamp())
    cond = rule.condition
    if isinstance(cond, Threshold):
        return _threshold(store, rule, cond, e, projects)
    if isinstance(cond, BaselineSpec):
        return _baseline(store, rule, cond, e, projects)
    if cond.kind == "percentile_creep":
        return _creep(store, rule, cond, e, projects)
    windows = _proportion_windows(rule, cond, e)[0]
    if cond.kind == "length_shift":
        return _length(store, rule, cond, windows, projects)
    return _proportion(store, rule, cond, windows, projects)


def _proportion_windows(rule: Rule, cond: DetectorSpec, e: int) -> tuple[list[tuple[int, int]], list[int]]:
    """A drift test's windows at ``e`` (the current one, then the same window on each baseline day)."""
    w = rule.window_s
    days = int(cond.params["baseline_days"])
    return [(e - d * DAY - w, e - d * DAY) for d in range(days + 1)], [w] * (days + 1)


def observe_many(store: Store, rule: Rule, ends: Sequence[datetime], projects: Sequence[str] | None = None
                 ) -> dict[datetime, Observations]:
    """:func:`observe` at each of ``ends`` (minute-aligned window ends), with a few queries for all of them
    instead of a few per end, for threshold, baseline and proportion-drift rules (others: :func:`observe` at
    each end).

    What an observation says depends only on the data and its window end, never on alert state, so a backtest
    can read a block of upcoming evaluations at once and replay the state machine from memory. Each window
    aggregates exactly the rows a read of it alone does, from the table that read would choose, and the
    per-series logic is the same code, so the observations are identical to :func:`observe`'s; the
    returned mapping holds one block's rows, so memory grows with the block, not the replay.
    """
    cond = rule.condition
    stamps = {int(t.timestamp()): t for t in ends}
    if any(e % MINUTE for e in stamps):
        raise ValueError("window ends must be whole minutes")
    if isinstance(cond, Threshold):
        grouped = _threshold_blocks(store, rule, sorted(stamps), projects)
        return {t: _threshold_of(rule, cond, e, grouped.get(e, {})) for e, t in stamps.items()}
    # a read of several windows puts a row in the first that holds it: read a block only if they are disjoint
    if isinstance(cond, BaselineSpec):
        plans = {e: _baseline_windows(rule, cond, e) for e in stamps}
        if all(_disjoint(windows) for windows, _ in plans.values()):
            grouped = _read_blocks(store, rule, plans, projects)
            return {t: _baseline_of(store, rule, cond, e, projects, *plans[e], grouped[e])
                    for e, t in stamps.items()}
    elif cond.kind == "proportion_spike":
        plans = {e: _proportion_windows(rule, cond, e) for e in stamps}
        if all(_disjoint(windows) for windows, _ in plans.values()):
            grouped = _read_blocks(store, rule, plans, projects)
            return {t: _proportion_of(store, rule, cond, plans[e][0], projects, grouped[e])
                    for e, t in stamps.items()}
    return {t: observe(store, rule, t, projects) for t in stamps.values()}


def _disjoint(windows: Sequence[tuple[int, int]]) -> bool:
    spans = sorted(windows)
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


Grouped = dict[tuple[str, tuple[str, ...]], dict[int, WindowRow]]


def _threshold_blocks(store: Store, rule: Rule, ends: Sequence[int], projects: Sequence[str] | None
                      ) -> dict[int, Grouped]:
    """Per window end, what :func:`_threshold`'s read gives: window 0 from one sliding read (per table its
    windows would be read from) and the one-minute buckets of every end from one read of the whole span."""
    w, sustain = rule.window_s, rule.sustain
    out: dict[int, Grouped] = {}
    by_source: dict[str, tuple[Source, list[int]]] = {}
    for e in ends:
        spans = [(e - w, e), *([(e - MINUTE, e)] if sustain else [])]  # as read_windows chooses
        source = choose_source(rule.signal, rule.group_by, spans)
        by_source.setdefault(source.name, (source, []))[1].append(e)
    for source, block in by_source.values():
        for row in read_sliding(store, rule.signal, rule.group_by, block, w, projects, source=source,
                                quantile_grid=_needs_grid(rule, rule.condition)):
            out.setdefault(block[row.k], {}).setdefault((row.project_id, row.labels), {})[0] = row
    if sustain is None:
        return out
    last = ends[-1]
    span = (last - ends[0]) // MINUTE + sustain.of
    minutes: dict[int, list[WindowRow]] = {}
    for row in read_windows(store, rule.signal, rule.group_by, [(last - span * MINUTE, last)], projects,
                            buckets=span, quantile_grid=_needs_grid(rule, rule.condition)):
        if row.k > 0:
            minutes.setdefault(row.k, []).append(row)
    for e, grouped in out.items():
        shift = (last - e) // MINUTE  # bucket k of the window ending at e is bucket k + shift of the span
        for k in range(1, sustain.of + 1):
            for row in minutes.get(k + shift, ()):
                series = grouped.get((row.project_id, row.labels))
                if series is not None:
                    series[k] = row
    return out


def _read_blocks(store: Store, rule: Rule, plans: Mapping[int, tuple[Sequence[tuple[int, int]], Sequence[int]]],
                 projects: Sequence[str] | None) -> dict[int, Grouped]:
    """Per end of ``plans`` (end -> its windows and their lengths), the rows :func:`read_windows` gives for its
    windows, from one sliding read per window index (the same window on day d of every end: a short range)
    and the table a read of that end's windows alone would use."""
    reads: dict[tuple[int, int, str], dict[int, list[tuple[int, int]]]] = {}  # -> window end -> [(end, index)]
    sources: dict[str, Source] = {}
    for e, (windows, lengths) in plans.items():
        source = choose_source(rule.signal, rule.group_by, windows)
        sources[source.name] = source
        for i, ((_, end), length) in enumerate(zip(windows, lengths)):
            reads.setdefault((i, length, source.name), {}).setdefault(end, []).append((e, i))
    grouped: dict[int, Grouped] = {e: {} for e in plans}
    for (_, length, name), targets in reads.items():
        source = sources[name]
        block = sorted(targets)
        for row in read_sliding(store, rule.signal, rule.group_by, block, length, projects, source=source):
            for e, i in targets[block[row.k]]:
                grouped[e].setdefault((row.project_id, row.labels), {})[i] = row
    return grouped


def _enough(rule: Rule, row: WindowRow | None) -> bool:
    return row is not None and row.measures.get(rule.signal.volume, 0.0) >= max(1, rule.min_requests)


def _needs_grid(rule: Rule, cond: object) -> bool:
    """Whether a threshold read needs the percentile's quantile grid (a guarded latency percentile)."""
    return isinstance(cond, Threshold) and cond.confidence is not None and rule.signal.kind == "quantile"


def _threshold(store: Store, rule: Rule, cond: Threshold, e: int, projects: Sequence[str] | None
               ) -> Observations:
    """The whole window against the threshold (with its guard on ratio signals), and for a sustained rule
    (``for: {breaching, of}``) its last ``of`` one-minute buckets each on their own data, in one read.

    Breaching: the window breaches and, if sustained, at least ``breaching`` buckets do (a bucket with no data
    does not). Clear: the window's point value is on the good side of the clear level."""
    rows = read_windows(store, rule.signal, rule.group_by, [(e - rule.window_s, e)], projects,
                        buckets=rule.sustain.of if rule.sustain else 0, quantile_grid=_needs_grid(rule, cond))
    return _threshold_of(rule, cond, e, _by_series(rule, rows))


def _threshold_of(rule: Rule, cond: Threshold, e: int,
                  grouped: Mapping[tuple[str, tuple[str, ...]], Mapping[int, WindowRow]]) -> Observations:
    """:func:`_threshold` from the rows read: per series, window 0 and one-minute buckets ``1..of``."""
    start = e - rule.window_s
    sustain = rule.sustain
    signal = rule.signal
    out: Observations = {}
    for (project, values), windows in grouped.items():
        labels = _labels(rule, values)
        row = windows.get(0)
        value = value_of(signal, row.measures, rule.window_s) if _enough(rule, row) and row else None
        details = {**_span(start, e), "volume": f"{row.measures.get(signal.volume, 0):.0f}" if row else "0"}
        if value is None:
            out[(project, series_key(labels))] = Observed(labels, Observation(None, value, cond.value,
                                                                              details=details))
            continue
        assert row is not None
        breaching = OPS[cond.op](value, cond.value)
        if cond.guarded:
            if signal.kind == "quantile":
                verdict = guarded_quantile(cond, row.quantiles, signal.level, row.measures.get(signal.volume, 0.0))
            else:
                verdict = guarded(cond, row.measures.get(signal.numerator, 0.0),
                                  row.measures.get(signal.denominator, 0.0))
                details["events"] = f"{verdict.events:.0f}"
            breaching = verdict.breaching
            if cond.confidence is not None:
                side = "upper" if cond.op in ("<", "<=") else "lower"
                details[f"{side}_bound"] = f"{verdict.compared:.6g}"
                details["confidence"] = f"{cond.confidence:g}"
        if sustain is not None:
            bad = sum(1 for k in range(1, sustain.of + 1) if _bucket_breaches(rule, cond, windows.get(k)))
            details["buckets_breaching"] = f"{bad}/{sustain.of}"
            breaching = breaching and bad >= sustain.breaching
        clear = not OPS[cond.op](value, cond.clear_level)
        out[(project, series_key(labels))] = Observed(labels, Observation(breaching, value, cond.value,
                                                                          details=details, clear=clear))
    return out


def _bucket_breaches(rule: Rule, cond: Threshold, row: WindowRow | None) -> bool:
    """A one-minute bucket's own value beyond the threshold (no data: not breaching). A guarded rate or
    percentile is judged by its bound at the threshold's confidence, or the bucket confidence of
    ``for: {..., confidence}`` (min_events is the window's: a minute holds few events), so one background error
    among 60 calls (1.7%) is not a bad minute for a 1% threshold, while 2 or more are."""
    signal = rule.signal
    if row is None or row.measures.get(signal.volume, 0.0) <= 0:
        return False
    if rule.sustain is not None and rule.sustain.confidence is not None and cond.confidence is not None:
        cond = replace(cond, confidence=rule.sustain.confidence)
    if cond.confidence is not None and signal.kind == "quantile":
        return guarded_quantile(cond, row.quantiles, signal.level, row.measures[signal.volume]).breaching
    if cond.confidence is not None:
        return guarded(replace(cond, min_events=0), row.measures.get(signal.numerator, 0.0),
                       row.measures.get(signal.denominator, 0.0)).breaching
    value = value_of(signal, row.measures, MINUTE)
    return value is not None and OPS[cond.op](value, cond.value)


def _baseline(store: Store, rule: Rule, cond: BaselineSpec, e: int, projects: Sequence[str] | None
              ) -> Observations:
    windows, lengths = _baseline_windows(rule, cond, e)
    return _baseline_of(store, rule, cond, e, projects, windows, lengths,
                        _by_series(rule, read_windows(store, rule.signal, rule.group_by, windows, projects)))


def _baseline_windows(rule: Rule, cond: BaselineSpec, e: int) -> tuple[list[tuple[int, int]], list[int]]:
    """The windows a baseline rule reads at window end ``e`` (the current one first) and their lengths."""
    w = rule.window_s
    if cond.kind == "daily_average":
        return [(e - w, e), (e - w - cond.lookback_s, e - w)], [w, cond.lookback_s]
    return [(e - w, e)] + [(e - d * DAY - w, e - d * DAY) for d in cond.offsets], [w] * (1 + len(cond.offsets))


def _baseline_of(store: Store, rule: Rule, cond: BaselineSpec, e: int, projects: Sequence[str] | None,
                 windows: Sequence[tuple[int, int]], lengths: Sequence[int],
                 grouped: Mapping[tuple[str, tuple[str, ...]], Mapping[int, WindowRow]]) -> Observations:
    """:func:`_baseline` from the rows read (window ``k`` of ``windows``); history and the daily-mean fallback
    are still read at ``e``, when a series needs them."""
    w = rule.window_s
    current = windows[0]
    history = _History(store, rule, e, max(cond.min_days, cond.lookback_s // DAY, *cond.offsets), projects)
    fallback = _DailyMean(store, rule, e, cond.days, projects)
    out: Observations = {}
    for (project, values), rows in grouped.items():
        labels = _labels(rule, values)
        row = rows.get(0)
        value = value_of(rule.signal, row.measures, w) if row is not None and _enough(rule, row) else None
        # a seasonal baseline takes every earlier window with calls (a quiet hour is a real low level; the
        # median keeps one odd day out); the others need min_requests in each, like the current window
        base_values = [value_of(rule.signal, rows[k].measures, lengths[k]) for k in range(1, len(windows))
                       if (rows.get(k) is not None and rows[k].measures.get(rule.signal.volume, 0.0) > 0
                           if cond.kind == "seasonal" else _enough(rule, rows.get(k)))]
        usable = [v for v in base_values if v is not None]
        details = {**_span(*current), "baseline_windows": str(len(usable)),
                   "baseline_start": _iso(datetime.fromtimestamp(min(s for s, _ in windows[1:]), UTC))}
        baseline: float | None = None
        if cond.kind == "daily_average":
            has = history.days_of(project, values)
            baseline = usable[0] if usable and has >= cond.min_days else None
        elif len(usable) >= max(1, cond.min_days):
            has = len(usable)
            baseline = statistics.median(usable) if cond.kind == "seasonal" else sum(usable) / len(usable)
        else:
            has = history.days_of(project, values) if cond.kind == "seasonal" else len(usable)
            if cond.kind == "seasonal" and has >= cond.min_days:
                baseline = fallback.value(project, values, history)
                details["baseline"] = "daily mean (too few same-hour windows with data)"
        if value is not None and has < cond.min_days:
            obs = _learning(value, has, cond.min_days, details)
        elif value is None or baseline is None:
            obs = Observation(None, value, baseline=baseline, details=details)
        else:
            limit = cond.factor * baseline
            breaching = OPS[cond.op](value, limit) and max(value, baseline) >= cond.min_value
            obs = Observation(breaching, value, limit, baseline, details)
        out[(project, series_key(labels))] = Observed(labels, obs)
    return out


@dataclass
class _DailyMean:
    """A seasonal baseline's fallback: the series' mean over the previous ``days`` (read once, when first
    needed), over the whole days it has existed: time before its first call does not count, so a new series
    does not average low."""

    store: Store
    rule: Rule
    end: int
    days: int
    projects: Sequence[str] | None
    _rows: dict[tuple[str, tuple[str, ...]], WindowRow] | None = field(default=None, init=False)

    def value(self, project: str, values: tuple[str, ...], history: _History) -> float | None:
        until = self.end - self.end % HOUR
        since = until - self.days * DAY
        if self._rows is None:
            rows = read_windows(self.store, self.rule.signal, self.rule.group_by, [(since, until)], self.projects)
            self._rows = {(r.project_id, r.labels): r for r in rows}
        row = self._rows.get((project, values))
        seen = history.days_of(project, values)
        span = min(self.days * DAY, max(HOUR, seen * DAY))
        return value_of(self.rule.signal, row.measures, span) if row is not None else None


def _drift_observation(result: drift.DriftResult | None, window: tuple[int, int],
                       baseline_start: int) -> Observation:
    if result is None:
        return NO_DATA
    details = {**_span(*window), "baseline_start": _iso(datetime.fromtimestamp(baseline_start, UTC)),
               "method": result.method, "statistic": f"{result.statistic:.4g}",
               "critical": f"{result.critical:.4g}", **dict(result.details)}
    if result.p_value is not None:
        details["p_value"] = f"{result.p_value:.3g}"
    return Observation(result.finding, result.value, None, result.baseline, details)


def _proportion(store: Store, rule: Rule, cond: DetectorSpec, windows: Sequence[tuple[int, int]],
                projects: Sequence[str] | None) -> Observations:
    return _proportion_of(store, rule, cond, windows, projects,
                          _by_series(rule, read_windows(store, rule.signal, rule.group_by, windows, projects)))


def _proportion_of(store: Store, rule: Rule, cond: DetectorSpec, windows: Sequence[tuple[int, int]],
                   projects: Sequence[str] | None,
                   grouped: Mapping[tuple[str, tuple[str, ...]], Mapping[int, WindowRow]]) -> Observations:
    """:func:`_proportion` from the rows read (window ``k`` of ``windows``)."""
    signal, p = rule.signal, cond.params

    def counts(row: WindowRow | None) -> drift.Counts:
        if row is None:
            return drift.Counts(0, 0)
        return drift.Counts(row.measures.get(signal.numerator, 0.0), row.measures.get(signal.denominator, 0.0))

    minimum = max(1, rule.min_requests)
    tests = sum(1 for rows in grouped.values() if counts(rows.get(0)).trials >= minimum)
    history = _History(store, rule, windows[0][1], len(windows) - 1, projects)
    needs = cond.history_days
    out: Observations = {}
    for (project, values), rows in grouped.items():
        labels = _labels(rule, values)
        now = counts(rows.get(0))
        days = [counts(rows.get(k)) for k in range(1, len(windows))]
        usable = sum(1 for d in days if d.trials >= minimum)
        if now.trials >= minimum and usable < needs and (has := history.days_of(project, values)) < needs:
            obs = _learning(now.rate, has, needs, _span(*windows[0]))
        else:
            result = drift.proportion_spike(
                now, days, tests=tests, alpha=p["alpha"], min_volume=minimum,
                min_baseline_days=int(p["min_baseline_days"]), min_ratio=p["min_ratio"],
                min_increase=p["min_increase"], min_day_cv=p["min_day_cv"], prior_cv=p["prior_cv"])
            obs = _drift_observation(result, windows[0], windows[-1][0])
        out[(project, series_key(labels))] = Observed(labels, obs)
    return out


def _length(store: Store, rule: Rule, cond: DetectorSpec, windows: Sequence[tuple[int, int]],
            projects: Sequence[str] | None) -> Observations:
    p = cond.params
    grouped = read_length_histograms(store, rule.group_by, windows, projects)
    minimum = max(1, rule.min_requests)
    tests = sum(1 for hists in grouped.values() if 0 in hists and hists[0].n >= minimum)
    history = _History(store, rule, windows[0][1], len(windows) - 1, projects)
    needs = cond.history_days
    out: Observations = {}
    for (project, values), hists in grouped.items():
        labels = _labels(rule, values)
        current = hists.get(0)
        days = [hists[k] for k in range(1, len(windows)) if k in hists]
        result = None
        if (current is not None and current.n >= minimum and sum(1 for d in days if d.n >= minimum) < needs
                and (has := history.days_of(project, values)) < needs):
            out[(project, series_key(labels))] = Observed(labels, _learning(current.mean, has, needs,
                                                                            _span(*windows[0])))
            continue
        if current is not None:
            base_n = sum(h.n for h in days)
            result = drift.length_shift(
                current.counts, [h.counts for h in days], current_mean=current.mean,
                baseline_mean=sum(h.tokens for h in days) / base_n if base_n else 0.0, tests=tests,
                alpha=p["alpha"], min_volume=minimum, min_baseline_days=int(p["min_baseline_days"]),
                min_distance=p["min_distance"], spread_factor=p["spread_factor"])
        out[(project, series_key(labels))] = Observed(labels, _drift_observation(result, windows[0],
                                                                                  windows[-1][0]))
    return out


def _creep(store: Store, rule: Rule, cond: DetectorSpec, e: int, projects: Sequence[str] | None) -> Observations:
    p = cond.params
    w = rule.window_s
    n = int(p["reference_days"] + p["monitor_days"])
    windows = [(e - (n - i) * w, e - (n - i - 1) * w) for i in range(n)]  # oldest first, current last
    history = _History(store, rule, e, n * w // DAY, projects)
    needs = cond.history_days
    out: Observations = {}
    for (project, values), rows in _by_series(rule, read_windows(
            store, rule.signal, rule.group_by, windows, projects, quantile_noise=True)).items():
        labels = _labels(rule, values)
        usable = [rows[i] if _enough(rule, rows.get(i)) else None for i in range(n)]
        daily = [value_of(rule.signal, r.measures, w) if r is not None else None for r in usable]
        noise = [r.measures.get("q_noise") if r is not None else None for r in usable]
        reference = sum(1 for v in daily[:int(p["reference_days"])] if v is not None)
        if (daily[-1] is not None and reference < p["min_reference"]
                and (has := history.days_of(project, values)) < needs):
            out[(project, series_key(labels))] = Observed(labels, _learning(daily[-1], has, needs,
                                                                            _span(*windows[-1])))
            continue
        result = drift.percentile_creep(daily, noise=noise, reference_days=int(p["reference_days"]), k=p["k"],
                                        h=p["h"], min_rel_sd=p["min_rel_sd"],
                                        min_reference=int(p["min_reference"]), confidence=p["confidence"],
                                        max_z=p["max_z"])
        out[(project, series_key(labels))] = Observed(labels, _drift_observation(result, windows[-1],
                                                                                  windows[0][0]))
    return out

