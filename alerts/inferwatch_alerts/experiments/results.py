"""The A/B results job: per-variant metrics, tests against the control, sequential p-values and a verdict,
written to ``ab_results`` (one row per experiment, metric, variant and window) and ``ab_verdicts``.

Windows. An experiment is analysed from its start to now (or its end). The stored window runs to the end of the
current UTC day, so the hourly recompute replaces the day's rows (both tables are ReplacingMergeTrees keyed by the
window) and each past day keeps its last recompute: a daily series of looks. Those looks are what the sequential
tests need: the group-sequential boundary of today's look depends on the information of every earlier look, and
the sequential p-value is the minimum over the looks. They are read back from the tables (``details['z']``,
``details['msprt_p']`` and the verdict's ``users``) and recomputed each run, so editing the plan (planned users)
re-derives every boundary consistently.

Layers: :func:`analyze` is pure (statistics and rules on fetched data, tested without a database);
:func:`analyze_project` fetches and analyses; :func:`save_reports` writes; :func:`run_experiments_job` is the
scheduled job (discovery of unregistered experiments, then every active experiment of every project).

``ab_results`` rows, per window:

* one per tested metric and variant: ``value`` the variant's estimate and ``ci_low``/``ci_high`` its own
  confidence interval; for a treatment ``lift`` (relative to the control) and ``p_value`` (fixed-horizon test);
  ``details`` holds the difference and its interval, the lift's interval, the Holm-adjusted p-value across the
  arm's metrics, the sequential p-value and interval, and the test's internals (method, statistic, se, df);
* one per descriptive percentile (TTFT and latency p50/p95) and variant, ``method = 'descriptive'``;
* one ``users`` row per variant: users, observed share, configured weight, and the SRM p-value.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import numpy as np
from inferwatch_collector.store import Store
from scipy.special import ndtr

from ..job_runs import JobFailed
from . import JOB_NAME  # noqa: F401  (re-exported: the job's name)
from . import metrics as m
from . import stats
from .registry import Experiment, discover, get_experiment, list_experiments
from .verdict import ArmOutcome, MetricOutcome, Plan, VerdictResult, decide
from ..timeutil import iso_s as _iso, utc as _utc

log = logging.getLogger("inferwatch.experiments")

#: Ended experiments are still recomputed this long after their end (late-exported calls and feedback).
FINAL_GRACE: Final = timedelta(days=2)
RESULT_COLUMNS: Final = ("project_id", "experiment", "metric", "variant", "window_start", "window_end",
                         "computed_at", "n", "value", "ci_low", "ci_high", "control", "lift", "p_value", "method",
                         "details")
VERDICT_COLUMNS: Final = ("project_id", "experiment", "window_start", "window_end", "computed_at", "data_until",
                          "verdict", "trustworthy", "winner", "primary_metric", "users", "srm_p_value", "reason",
                          "details")
_NAN = math.nan


@dataclass(frozen=True)
class Window:
    """What one analysis covers: calls in ``[start, data_until)``, stored under ``[start, end]``."""

    start: datetime
    end: datetime  # end of the current UTC day, or the experiment's end if sooner: the stored window's key
    data_until: datetime


def window_for(exp: Experiment, now: datetime) -> Window:
    """The window of the analysis made at ``now``: stored per UTC day, data up to now or the planned end."""
    start = exp.start.replace(microsecond=0)
    data_until = min(now, exp.end) if exp.end else now
    last = data_until - timedelta(microseconds=1)  # data up to midnight belongs to the day that just ended
    day_end = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    end = min(day_end, exp.end.replace(microsecond=0)) if exp.end else day_end
    return Window(start=start, end=max(end, start + timedelta(seconds=1)), data_until=data_until)


def is_active(exp: Experiment, now: datetime) -> bool:
    """Started, and not ended more than :data:`FINAL_GRACE` ago."""
    return exp.start < now and (exp.end is None or now < exp.end + FINAL_GRACE)


@dataclass(frozen=True)
class Look:
    """An earlier stored analysis of the same window start: its information and per-metric statistics."""

    window_end: datetime
    data_until: datetime
    users: int
    z: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (metric, variant) -> z statistic
    msprt_p: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (metric, variant) -> look's 1/Lambda


@dataclass(frozen=True)
class ResultRow:
    """One ``ab_results`` row."""

    metric: str
    variant: str
    n: int
    value: float
    ci_low: float
    ci_high: float
    control: str
    lift: float
    p_value: float
    method: str
    details: Mapping[str, float | str]

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "variant": self.variant, "n": self.n, "value": _num(self.value),
                "ci_low": _num(self.ci_low), "ci_high": _num(self.ci_high), "control": self.control,
                "lift": _num(self.lift), "p_value": _num(self.p_value), "method": self.method,
                "details": {k: (_num(v) if isinstance(v, float) else v) for k, v in self.details.items()}}


@dataclass(frozen=True)
class ExperimentReport:
    """One analysis of one experiment: what is written to the tables and shown by the CLI."""

    experiment: Experiment
    window: Window
    computed_at: datetime
    users: Mapping[str, int]
    srm: stats.SrmResult
    rows: Sequence[ResultRow]
    verdict: VerdictResult
    details: Mapping[str, float | str]
    warnings: Sequence[str] = ()

    def to_json(self) -> dict[str, Any]:
        return {"experiment": self.experiment.to_json(), "window_start": _iso(self.window.start),
                "window_end": _iso(self.window.end), "data_until": _iso(self.window.data_until),
                "computed_at": _iso(self.computed_at), "verdict": self.verdict.verdict,
                "trustworthy": self.verdict.trustworthy, "winner": self.verdict.winner,
                "reason": self.verdict.reason, "arms": dict(self.verdict.arms), "users": dict(self.users),
                "srm": {"p_value": _num(self.srm.p_value), "chi2": _num(self.srm.chi2),
                        "flagged": self.srm.flagged, "unexpected_variants": list(self.srm.unexpected)},
                "warnings": list(self.warnings),
                "details": {k: (_num(v) if isinstance(v, float) else v) for k, v in self.details.items()},
                "results": [r.to_json() for r in self.rows]}


# ------------------------------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class Design:
    """The looks of a group-sequential test: which looks (indices into history, ``len(history)`` = the current
    one) at which information fractions, and whether the current look still has a boundary."""

    looks: tuple[int, ...]
    fractions: tuple[float, ...]
    current_in_design: bool
    current_fraction: float


def design_for(exp: Experiment, window: Window, history: Sequence[Look], users_now: int) -> Design | None:
    """Which looks the group-sequential test uses and at what information fractions; None without a plan.

    Information is users over planned users (or, with only an end, elapsed over planned duration). Looks must
    have strictly increasing information: an earlier look with as much information as a later one is dropped.
    Once a look has reached the plan (fraction 1), later looks get no boundary: the plan's alpha is spent.
    """
    if not exp.has_plan:
        return None

    def fraction(users: int, until: datetime) -> float:
        if exp.planned_users:
            return users / exp.planned_users
        assert exp.end is not None
        return (until - exp.start).total_seconds() / max((exp.end - exp.start).total_seconds(), 1.0)

    current = len(history)
    candidates = [(i, fraction(look.users, look.data_until)) for i, look in enumerate(history)]
    current_fraction = fraction(users_now, window.data_until)
    candidates.append((current, current_fraction))
    kept: list[tuple[int, float]] = []
    in_design = False
    for index, t in candidates:
        if t <= 0 or (kept and kept[-1][1] >= 1.0):
            continue
        t = min(t, 1.0)
        while kept and kept[-1][1] >= t:
            kept.pop()
        kept.append((index, t))
        in_design = index == current
    return Design(looks=tuple(i for i, _ in kept), fractions=tuple(t for _, t in kept),
                  current_in_design=in_design, current_fraction=current_fraction)


def analyze(exp: Experiment, window: Window, data: m.ExperimentData | None, history: Sequence[Look],
            now: datetime) -> ExperimentReport:
    """Statistics, sequential p-values and the verdict of one experiment (pure: no I/O)."""
    alpha = exp.alpha
    variants = dict(data.variants) if data else {}
    users = {v: variants[v].users for v in variants}
    srm = stats.srm_test({v: users.get(v, 0) for v in set(users) | set(exp.variants)}, exp.weight_map)
    total_users = sum(users.values())
    control = variants.get(exp.control)
    treatments = [v for v in list(exp.treatments) + sorted(set(variants) - set(exp.variants)) if v in variants]
    warnings = _warnings(exp, data, users)

    design = design_for(exp, window, history, total_users) if exp.sequential else None
    boundaries = stats.spending_boundaries(design.fractions, alpha) if design is not None else ()
    info_fraction = design.current_fraction if design is not None else _NAN

    rows: list[ResultRow] = []
    arms: list[ArmOutcome] = []
    primary_users_needed = _NAN
    if control is not None:
        rows.extend(_control_row(name, metric, exp.control, control) for name, metric in m.METRICS.items())
    for variant in treatments if control is not None else ():
        vd = variants[variant]
        tested: list[tuple[str, ResultRow, stats.Comparison | None, float]] = []
        for name, metric in m.METRICS.items():
            row, comparison, p_seq = _treatment_row(exp, name, metric, variant, control, vd, design, boundaries,
                                                    history)
            tested.append((name, row, comparison, p_seq))
        adjusted = stats.holm([r.p_value for _, r, c, _ in tested])
        outcomes: dict[str, MetricOutcome] = {}
        for (name, row, comparison, p_seq), p_holm in zip(tested, adjusted):
            details = dict(row.details)
            details["p_holm"] = p_holm
            decision_p = p_seq if exp.sequential else row.p_value
            details["p_decision"] = decision_p
            metric = m.METRICS[name]
            if comparison is not None and metric.direction != 0:
                outcomes[name] = MetricOutcome(metric=name, p_decision=decision_p, lift=row.lift,
                                               lift_ci=(float(comparison.lift_ci_low),
                                                        float(comparison.lift_ci_high)),
                                               delta=float(comparison.delta), direction=metric.direction)
            if name == exp.primary_metric and comparison is not None:
                needed, mde_now = _power(exp, control.moments[name], vd.moments[name],
                                         srm.observed, comparison)
                details["users_needed"] = float(needed)
                details["mde_relative"] = float(mde_now)
                primary_users_needed = float(needed) if not math.isfinite(primary_users_needed) else \
                    max(primary_users_needed, float(needed))
            rows.append(replace(row, details=details))
        arms.append(ArmOutcome(variant=variant, primary=outcomes.get(exp.primary_metric),
                               guardrails=[outcomes[g] for g in exp.guardrails if g in outcomes]))
    rows.extend(_percentile_rows(exp, variants))
    rows.extend(_user_rows(exp, variants, srm))

    plan = _plan(exp, window, total_users, primary_users_needed, info_fraction)
    decisions_valid = exp.sequential or plan.complete
    verdict = decide(primary_metric=exp.primary_metric, alpha=alpha, control=exp.control, users=users, srm=srm,
                     arms=arms, plan=plan, decisions_valid=decisions_valid, sequential=exp.sequential,
                     weights_assumed=exp.source == "auto")
    details: dict[str, float | str] = {
        "users_needed": primary_users_needed, "plan": plan.description,
        "plan_complete": str(plan.complete).lower(),
        "info_fraction": info_fraction, "sequential_method": _sequential_method(exp),
        "mixed_users": float(data.mixed_users if data else 0),
        "anonymous_calls": float(data.anonymous_calls if data else 0),
        "feedback_matched_by_trace": float(data.feedback_matched_by_trace if data else 0),
        "srm_chi2": srm.chi2,
        "boundary_z": boundaries[-1] if design is not None and design.current_in_design else _NAN,
    }
    return ExperimentReport(experiment=exp, window=window, computed_at=now, users=users, srm=srm, rows=rows,
                            verdict=verdict, details=details, warnings=warnings)


def _sequential_method(exp: Experiment) -> str:
    if not exp.sequential:
        return "fixed"
    return "obf_spending" if exp.has_plan else "msprt"


def _control_row(name: str, metric: m.MetricDef, variant: str, vd: m.VariantData) -> ResultRow:
    moments = vd.moments[name]
    usable = _usable(moments)
    low, high = stats.value_interval(metric.kind, moments) if usable else (_NAN, _NAN)
    return ResultRow(metric=name, variant=variant, n=vd.users, value=float(moments.value) if usable else _NAN,
                     ci_low=float(low), ci_high=float(high), control=variant, lift=0.0, p_value=_NAN,
                     method=metric.kind if usable else "insufficient_data",
                     details=_base_details(metric, vd, name))


def _base_details(metric: m.MetricDef, vd: m.VariantData, name: str) -> dict[str, float | str]:
    return {"kind": metric.kind, "direction": float(metric.direction), "unit": metric.unit,
            "users_with_data": float(vd.users_with_data[name]), "denominator": vd.denominators[name],
            "calls": float(vd.calls)}


def _usable(moments: stats.Moments) -> bool:
    """Two or more users, a positive denominator and finite variances: the test's inputs exist."""
    values = (moments.n, moments.mean_y, moments.var_y, moments.mean_x, moments.var_x, moments.cov_xy)
    return float(moments.n) >= 2 and float(moments.mean_x) > 0 and all(math.isfinite(float(v)) for v in values)


def _treatment_row(exp: Experiment, name: str, metric: m.MetricDef, variant: str, control: m.VariantData,
                   vd: m.VariantData, design: Design | None, boundaries: tuple[float, ...], history: Sequence[Look]
                   ) -> tuple[ResultRow, stats.Comparison | None, float]:
    c, t = control.moments[name], vd.moments[name]
    details = _base_details(metric, vd, name)
    if not (_usable(c) and _usable(t)):
        row = ResultRow(metric=name, variant=variant, n=vd.users, value=float(t.value) if _usable(t) else _NAN,
                        ci_low=_NAN, ci_high=_NAN, control=exp.control, lift=_NAN, p_value=_NAN,
                        method="insufficient_data", details=details)
        return row, None, _NAN
    cmp = stats.compare(metric.kind, c, t, exp.alpha)
    low, high = stats.value_interval(metric.kind, t, exp.alpha)
    z = float(cmp.statistic)
    details.update({"delta": float(cmp.delta), "delta_ci_low": float(cmp.ci_low),
                    "delta_ci_high": float(cmp.ci_high), "lift_ci_low": float(cmp.lift_ci_low),
                    "lift_ci_high": float(cmp.lift_ci_high), "se": float(cmp.se), "statistic": z,
                    "df": float(cmp.df), "z": z, "control_value": float(cmp.control), "control_n": float(c.n),
                    "test": cmp.method})
    p_seq = _NAN
    if exp.sequential:
        key = (name, variant)
        variance = float(cmp.se) ** 2
        if design is not None:  # group-sequential, O'Brien-Fleming spending
            p_looks = []
            for index, bound in zip(design.looks, boundaries):
                look_z = z if index == len(history) else history[index].z.get(key, _NAN)
                if math.isfinite(look_z):
                    p_nominal = 2 * float(ndtr(-abs(look_z)))
                    p_looks.append(float(stats.boundary_scaled_p(p_nominal, bound, exp.alpha)))
            p_seq = min(p_looks) if p_looks else 1.0
            bound = boundaries[-1] if design.current_in_design else math.inf
            half = bound * float(cmp.se) if math.isfinite(bound) else _NAN
            details.update({"boundary_z": bound if math.isfinite(bound) else _NAN,
                            "seq_ci_low": float(cmp.delta) - half, "seq_ci_high": float(cmp.delta) + half})
        else:  # always-valid mSPRT
            pooled_unit = float((c.unit_variance + t.unit_variance) / 2)
            tau2 = stats.msprt_tau2(float(cmp.control), pooled_unit, exp.mde)
            look_p = float(stats.msprt_p(float(cmp.delta), variance, tau2))
            earlier = [h.msprt_p[key] for h in history if math.isfinite(h.msprt_p.get(key, _NAN))]
            p_seq = min([look_p, *earlier]) if math.isfinite(look_p) else (min(earlier) if earlier else _NAN)
            seq_low, seq_high = stats.msprt_interval(float(cmp.delta), variance, tau2, exp.alpha)
            details.update({"msprt_p": look_p, "tau2": tau2, "seq_ci_low": float(seq_low),
                            "seq_ci_high": float(seq_high)})
        details["p_sequential"] = p_seq
    row = ResultRow(metric=name, variant=variant, n=vd.users, value=float(cmp.treatment), ci_low=float(low),
                    ci_high=float(high), control=exp.control, lift=float(cmp.lift), p_value=float(cmp.p_value),
                    method=cmp.method, details=details)
    return row, cmp, p_seq


def _power(exp: Experiment, c: stats.Moments, t: stats.Moments, observed: Mapping[str, int],
           comparison: stats.Comparison) -> tuple[float, float]:
    """Users needed in total for 80 % power at the registered relative MDE, and the relative MDE now."""
    total = sum(observed.values()) or 1
    share_c = observed.get(exp.control, 0) / total
    share_t = float(t.n) / total
    effect = exp.mde * abs(float(comparison.control))
    needed = stats.users_needed(c, t, effect, share_c, share_t, exp.alpha) if effect > 0 else _NAN
    control_value = abs(float(comparison.control))
    mde_now = stats.minimum_detectable_effect(float(comparison.se), exp.alpha) / control_value \
        if control_value > 0 else _NAN
    return needed, mde_now


def _plan(exp: Experiment, window: Window, users: int, users_needed: float, info_fraction: float) -> Plan:
    parts: list[str] = []
    complete = False
    if exp.planned_users:
        parts.append(f"{users:,} of {exp.planned_users:,} planned users")
        complete = complete or users >= exp.planned_users
    if exp.end is not None:
        ended = window.data_until >= exp.end
        parts.append("planned end passed" if ended else f"planned end {_iso(exp.end)}")
        complete = complete or ended
    if not parts:  # no plan: complete once the registered effect would have been detected with 80% power
        parts.append(f"{users:,} users (no planned size or end)")
        complete = math.isfinite(users_needed) and users >= users_needed
    return Plan(complete=complete, users=users, users_needed=users_needed, description="; ".join(parts))


def _percentile_rows(exp: Experiment, variants: Mapping[str, m.VariantData]) -> list[ResultRow]:
    rows = []
    for variant, vd in variants.items():
        for name, value in vd.percentiles.items():
            rows.append(ResultRow(metric=name, variant=variant, n=vd.calls, value=_NAN if value is None else value,
                                  ci_low=_NAN, ci_high=_NAN, control=exp.control, lift=_NAN, p_value=_NAN,
                                  method="descriptive", details={"source": "ab_rollup_1h"}))
    return rows


def _user_rows(exp: Experiment, variants: Mapping[str, m.VariantData], srm: stats.SrmResult) -> list[ResultRow]:
    total = sum(vd.users for vd in variants.values()) or 1
    weights = exp.weight_map
    rows = []
    for variant in list(exp.variants) + sorted(set(variants) - set(exp.variants)):
        vd = variants.get(variant)
        users = vd.users if vd else 0
        rows.append(ResultRow(metric="users", variant=variant, n=users, value=users / total, ci_low=_NAN,
                              ci_high=_NAN, control=exp.control, lift=_NAN, p_value=srm.p_value,
                              method="srm_chi2", details={"weight": weights.get(variant, 0.0),
                                                          "expected_users": srm.expected.get(variant, 0.0),
                                                          "calls": float(vd.calls if vd else 0),
                                                          "srm_flagged": str(srm.flagged).lower()}))
    return rows


def _warnings(exp: Experiment, data: m.ExperimentData | None, users: Mapping[str, int]) -> list[str]:
    out = []
    if exp.source == "auto":
        out.append("registered automatically: equal weights and the default primary metric are assumed; register "
                   "the experiment to state its real weights, metric and plan")
    for variant in exp.variants:
        if users.get(variant, 0) == 0 and exp.weight_map.get(variant, 0) > 0:
            out.append(f"registered variant {variant!r} has no users")
    for variant in sorted(set(users) - set(exp.variants)):
        out.append(f"variant {variant!r} appears in traffic but is not registered")
    if data is not None:
        total = sum(users.values()) + data.mixed_users
        if data.mixed_users and data.mixed_users > 0.01 * max(total, 1):
            out.append(f"{data.mixed_users:,} users ({data.mixed_users / total:.1%}) were seen in more than one "
                       "variant and are excluded: was the assignment changed during the experiment?")
        if data.anonymous_calls:
            out.append(f"{data.anonymous_calls:,} calls had no user and are excluded (tag calls with "
                       "inferwatch.tags(user_id=...))")
    return out


# ------------------------------------------------------------------------------------------- I/O


def load_history(store: Store, project_id: str, windows: Mapping[str, Window]) -> dict[str, list[Look]]:
    """Earlier looks of each experiment (same window start, earlier window end), oldest first."""
    if not windows:
        return {}
    names = list(windows)
    params = {"p": project_id, "names": names}
    verdicts = store.query(
        "SELECT experiment, window_start, window_end, data_until, users FROM ab_verdicts FINAL "
        "WHERE project_id = {p:String} AND experiment IN {names:Array(String)} ORDER BY experiment, window_end",
        params).result_rows
    looks: dict[tuple[str, datetime], dict[str, Any]] = {}
    for name, start, end, until, users in verdicts:
        window = windows[name]
        if _utc(start) == window.start and _utc(end) < window.end:
            looks[(name, _utc(end))] = {"data_until": _utc(until), "users": int(users), "z": {}, "msprt_p": {}}
    if not looks:
        return {}
    stats_rows = store.query(
        "SELECT experiment, window_start, window_end, metric, variant, details['z'], details['msprt_p'] "
        "FROM ab_results FINAL WHERE project_id = {p:String} AND experiment IN {names:Array(String)} "
        "AND (mapContains(details, 'z') OR mapContains(details, 'msprt_p'))", params).result_rows
    for name, start, end, metric, variant, z, msprt_p in stats_rows:
        look = looks.get((name, _utc(end)))
        if look is None or _utc(start) != windows[name].start:
            continue
        look["z"][(metric, variant)] = _parse(z)
        look["msprt_p"][(metric, variant)] = _parse(msprt_p)
    out: dict[str, list[Look]] = {}
    for (name, end), look in sorted(looks.items(), key=lambda item: (item[0][0], item[0][1])):
        out.setdefault(name, []).append(Look(window_end=end, **look))
    return out


def analyze_project(store: Store, project_id: str, experiments: Sequence[Experiment], now: datetime
                    ) -> list[ExperimentReport]:
    """Fetch and analyse experiments of one project (one scan of the calls for all of them)."""
    windows = {e.name: window_for(e, now) for e in experiments}
    data = m.fetch(store, project_id, {name: (w.start, w.data_until) for name, w in windows.items()})
    history = load_history(store, project_id, windows)
    return [analyze(e, windows[e.name], data.get(e.name), history.get(e.name, []), now) for e in experiments]


def report_for(store: Store, project_id: str, name: str, now: datetime | None = None) -> ExperimentReport | None:
    """A fresh analysis of one experiment, not stored (the CLI's ``experiments report``); None if unknown."""
    exp = get_experiment(store, project_id, name)
    if exp is None:
        return None
    return analyze_project(store, project_id, [exp], now or datetime.now(UTC))[0]


def save_reports(store: Store, reports: Sequence[ExperimentReport]) -> None:
    """Write every report's ``ab_results`` rows and its ``ab_verdicts`` row (replacing the window's previous)."""
    results: list[list[Any]] = []
    verdicts: list[list[Any]] = []
    for r in reports:
        e, w = r.experiment, r.window
        for row in r.rows:
            results.append([e.project_id, e.name, row.metric, row.variant, w.start, w.end, r.computed_at, row.n,
                            row.value, row.ci_low, row.ci_high, row.control, row.lift, row.p_value, row.method,
                            _details(row.details)])
        verdicts.append([e.project_id, e.name, w.start, w.end, r.computed_at, w.data_until, r.verdict.verdict,
                         r.verdict.trustworthy, r.verdict.winner, e.primary_metric, sum(r.users.values()),
                         r.srm.p_value, r.verdict.reason,
                         _details({**r.details, **{f"arm.{k}": v for k, v in r.verdict.arms.items()},
                                   **{f"warning.{i}": text for i, text in enumerate(r.warnings)}})])
    if results:
        store.insert_columns("ab_results", [list(c) for c in zip(*results)], RESULT_COLUMNS)
    if verdicts:
        store.insert_columns("ab_verdicts", [list(c) for c in zip(*verdicts)], VERDICT_COLUMNS)


def run_experiments_job(store: Store, now: datetime) -> dict[str, Any]:
    """The scheduled job: register experiments seen in traffic, analyse every active one, store the results.

    One project's failure does not stop the others; the run is then a failure naming how many failed (the log
    has the projects and errors, as job runs are readable by every project's keys).
    """
    found = discover(store, now)
    active = [e for e in list_experiments(store) if is_active(e, now)]
    by_project: dict[str, list[Experiment]] = {}
    for exp in active:
        by_project.setdefault(exp.project_id, []).append(exp)
    counts: dict[str, int] = {}
    failed = 0
    for project, experiments in sorted(by_project.items()):
        try:
            reports = analyze_project(store, project, experiments, now)
            save_reports(store, reports)
        except Exception:
            failed += 1
            log.exception("the experiments of project %s could not be analysed", project)
            continue
        for report in reports:
            counts[report.verdict.verdict] = counts.get(report.verdict.verdict, 0) + 1
    details = {"experiments": sum(counts.values()), "auto_registered": len(found.registered),
               "auto_updated": len(found.updated), **{f"verdict_{k}": v for k, v in sorted(counts.items())}}
    if failed:
        raise JobFailed(f"the experiments of {failed} project(s) could not be analysed (the scheduler log names "
                        "them)", {**details, "projects_failed": failed})
    return details


# ------------------------------------------------------------------------------------------ helpers


def _details(values: Mapping[str, float | str]) -> dict[str, str]:
    return {k: (repr(float(v)) if isinstance(v, (float, int, np.floating)) else str(v)) for k, v in values.items()}


def _parse(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return _NAN


def _num(value: float) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None
