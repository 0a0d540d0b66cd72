"""The verdict of an experiment: one word a person can act on, and the sentence that justifies it.

Pure decision rules over the statistics (no I/O), applied in this order, because each one makes the next
meaningless when it fails:

1. ``srm_invalid``: the users per variant do not match the configured weights (sample ratio mismatch, or a variant
   in traffic that the registry does not know). The assignment or the logging is broken, so every comparison is
   biased: the experiment is marked untrustworthy whatever its p-values say.
2. ``keep_running`` while a variant has fewer than :data:`MIN_USERS_PER_VARIANT` users: the normal approximations
   behind every test need a minimum sample.
3. Per treatment arm, against the control:

   * ``guardrail_regression``: a guardrail metric is significantly worse. Guardrails are one family per arm,
     Holm-adjusted (Holm 1979), so three guardrails do not triple the false alarms.
   * ``primary_regression``: the primary metric is significantly worse (a verdict of its own: "do not ship" is
     not "no difference").
   * ``ship``: the primary metric is significantly better and no guardrail regressed. The primary metric is the one
     pre-registered decision metric, so it is judged at alpha itself; with several treatment arms the arms'
     primary p-values are Holm-adjusted.
   * ``no_difference`` once the plan is complete (planned users reached, planned end passed, or, without a plan,
     enough users for 80 % power at the registered minimum detectable effect) and nothing is significant.
   * ``keep_running`` otherwise, with the users still needed for 80 % power at the observed variance.

4. The experiment's verdict: ``ship`` if an arm ships (the best such arm wins), else a regression if an arm
   regressed, else ``keep_running`` if an arm needs more data, else ``no_difference``.

Which p-value decides: with ``sequential`` the sequential p-value (valid however often the results are read);
without it the fixed-horizon p-value, which is only valid at the planned horizon, so a fixed-horizon experiment
gets no ship/regression/no-difference verdict before its plan is complete (the p-values are shown, provisional).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from .stats import SrmResult, holm

Verdict = Literal["ship", "no_difference", "keep_running", "srm_invalid", "guardrail_regression",
                  "primary_regression"]
VERDICTS: Final = ("ship", "no_difference", "keep_running", "srm_invalid", "guardrail_regression",
                   "primary_regression")
MIN_USERS_PER_VARIANT: Final = 100


@dataclass(frozen=True)
class MetricOutcome:
    """One metric of one treatment arm, as the decision rules need it."""

    metric: str
    p_decision: float  # the p-value that decides (sequential or fixed, see the module docstring); NaN: untested
    lift: float  # relative: treatment / control - 1
    lift_ci: tuple[float, float]
    delta: float  # absolute: treatment - control
    direction: int  # +1 higher is better, -1 lower is better


@dataclass(frozen=True)
class ArmOutcome:
    """A treatment arm's primary metric (None when it cannot be tested yet) and guardrails."""

    variant: str
    primary: MetricOutcome | None
    guardrails: Sequence[MetricOutcome] = ()


@dataclass(frozen=True)
class Plan:
    """How far the experiment is along its plan."""

    complete: bool
    users: int
    users_needed: float  # total users for 80 % power at the minimum detectable effect (NaN: unknown)
    description: str  # e.g. "12,000 of 20,000 planned users"


@dataclass(frozen=True)
class VerdictResult:
    """The experiment's verdict, why, and each arm's own verdict."""

    verdict: Verdict
    trustworthy: bool
    reason: str
    winner: str = ""
    arms: Mapping[str, Verdict] = field(default_factory=dict)


def _pct(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:+.1%}"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _users(value: float) -> str:
    return "unknown" if not math.isfinite(value) else f"{math.ceil(value):,}"


def decide(*, primary_metric: str, alpha: float, control: str, users: Mapping[str, int], srm: SrmResult,
           arms: Sequence[ArmOutcome], plan: Plan, decisions_valid: bool, sequential: bool,
           weights_assumed: bool = False) -> VerdictResult:
    """Apply the rules of the module docstring.

    ``decisions_valid`` is False for a fixed-horizon experiment whose plan is not complete: only then may its
    p-values decide. ``weights_assumed`` marks automatically registered weights, which the SRM reason mentions.
    """
    if srm.flagged:
        return VerdictResult("srm_invalid", False, _srm_reason(srm, weights_assumed),
                             arms={a.variant: "srm_invalid" for a in arms})
    if not users or sum(users.values()) == 0:
        return VerdictResult("keep_running", True, "no users in the experiment's window yet")
    small = {v: n for v, n in users.items() if n < MIN_USERS_PER_VARIANT}
    if small or control not in users or not arms:
        shown = ", ".join(f"{v}: {n:,}" for v, n in sorted(small.items())) or f"{control}: 0"
        reason = f"minimum sample not reached ({MIN_USERS_PER_VARIANT} users per variant; {shown})"
        return VerdictResult("keep_running", True, reason, arms={a.variant: "keep_running" for a in arms})

    primary_p = holm([a.primary.p_decision if a.primary else math.nan for a in arms])
    per_arm: dict[str, Verdict] = {}
    sentences: dict[str, str] = {}
    which = "sequential p" if sequential else "p"
    for arm, p_primary in zip(arms, primary_p):
        regressions = _regressions(arm.guardrails, alpha)
        primary = arm.primary
        if not decisions_valid:
            per_arm[arm.variant] = "keep_running"
            continue
        if regressions:
            per_arm[arm.variant] = "guardrail_regression"
            sentences[arm.variant] = (f"{arm.variant} regressed guardrail " + "; ".join(
                f"{g.metric} {_pct(g.lift)} (adjusted {which} = {_p(p)})" for g, p in regressions))
        elif primary is not None and p_primary < alpha and primary.delta * primary.direction < 0:
            per_arm[arm.variant] = "primary_regression"
            sentences[arm.variant] = (f"{arm.variant} is worse on {primary_metric}: {_pct(primary.lift)} "
                                      f"[{_pct(primary.lift_ci[0])}, {_pct(primary.lift_ci[1])}] "
                                      f"({which} = {_p(p_primary)})")
        elif primary is not None and p_primary < alpha and primary.delta * primary.direction > 0:
            per_arm[arm.variant] = "ship"
            sentences[arm.variant] = (f"{arm.variant} improves {primary_metric} by {_pct(primary.lift)} "
                                      f"[{_pct(primary.lift_ci[0])}, {_pct(primary.lift_ci[1])}] "
                                      f"({which} = {_p(p_primary)}); no guardrail regressed")
        elif plan.complete and primary is not None:
            per_arm[arm.variant] = "no_difference"
            sentences[arm.variant] = (f"{arm.variant}: no detectable difference on {primary_metric} "
                                      f"({_pct(primary.lift)} [{_pct(primary.lift_ci[0])}, "
                                      f"{_pct(primary.lift_ci[1])}], {which} = {_p(p_primary)})")
        else:
            per_arm[arm.variant] = "keep_running"

    ships = [a for a in arms if per_arm.get(a.variant) == "ship" and a.primary is not None]
    if ships:
        best = max(ships, key=lambda a: a.primary.lift * a.primary.direction if a.primary else -math.inf)
        others = [sentences[v] for v, verdict in per_arm.items() if v != best.variant and v in sentences
                  and verdict != "no_difference"]
        return VerdictResult("ship", True, "; ".join([sentences[best.variant], *others]), winner=best.variant,
                             arms=per_arm)
    regressions: tuple[Verdict, ...] = ("primary_regression", "guardrail_regression")
    for regression in regressions:
        if any(value == regression for value in per_arm.values()):
            return VerdictResult(regression, True, "; ".join(sentences[v] for v in per_arm if v in sentences),
                                 arms=per_arm)
    if any(value == "keep_running" for value in per_arm.values()):
        return VerdictResult("keep_running", True, _keep_running_reason(arms, primary_p, plan, primary_metric,
                                                                        decisions_valid, which), arms=per_arm)
    return VerdictResult("no_difference", True, f"{plan.description}: " + "; ".join(
        sentences[v] for v in per_arm if v in sentences), arms=per_arm)


def _regressions(guardrails: Sequence[MetricOutcome], alpha: float) -> list[tuple[MetricOutcome, float]]:
    adjusted = holm([g.p_decision for g in guardrails])
    return [(g, p) for g, p in zip(guardrails, adjusted) if p < alpha and g.delta * g.direction < 0]


def _srm_reason(srm: SrmResult, weights_assumed: bool) -> str:
    if srm.unexpected:
        return (f"variant(s) {', '.join(srm.unexpected)} appear in traffic but not in the registry: the SDK and "
                "the registry disagree on the variants; results are untrustworthy")
    total = sum(srm.observed.values()) or 1
    weight_total = sum(srm.expected.values()) or 1
    observed = " / ".join(f"{v} {srm.observed.get(v, 0) / total:.1%}" for v in srm.expected)
    expected = " / ".join(f"{e / weight_total:.1%}" for e in srm.expected.values())
    hint = (" (weights were assumed equal when the experiment was registered automatically: register its real "
            "weights)" if weights_assumed else ": check the assignment and whether some users' calls are lost")
    return (f"sample ratio mismatch: observed {observed} against configured {expected} "
            f"(chi2 = {srm.chi2:.1f}, p = {_p(srm.p_value)}); results are untrustworthy{hint}")


def _keep_running_reason(arms: Sequence[ArmOutcome], primary_p: Sequence[float], plan: Plan, primary_metric: str,
                         decisions_valid: bool, which: str) -> str:
    untested = [a.variant for a in arms if a.primary is None]
    if untested:
        return f"no data yet for the primary metric {primary_metric} in {', '.join(untested)}"
    best = min(primary_p)
    status = "provisional, fixed-horizon test before its planned end" if not decisions_valid else \
        "no significant difference yet"
    more = max(plan.users_needed - plan.users, 0.0) if math.isfinite(plan.users_needed) else math.nan
    need = (f"; keep running: ~{_users(plan.users_needed)} users in total are needed for 80% power at the "
            f"minimum detectable effect and the observed variance ({_users(more)} more)") \
        if math.isfinite(plan.users_needed) else ""
    return f"{status} on {primary_metric} ({which} = {_p(best)}); {plan.description}{need}"
