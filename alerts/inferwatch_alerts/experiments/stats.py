"""Pure statistics of A/B experiments: no I/O, only numpy and scipy, every function array-friendly.

The unit of analysis is the user, because users are what the SDK randomises (sticky assignment by a hash of the
user id). A heavy user's hundred calls are one sample, not a hundred: treating calls as independent makes every
interval too narrow and the false-positive rate far above alpha whenever users differ from one another (they do:
some users hit errors or refusals much more than others). So each metric is summarised per user first as a
numerator ``Y`` and a denominator ``X`` (cost and calls, errors and calls, thumbs-up and thumbs), and the tests
below work on the per-user sufficient statistics :class:`Moments` (n, means, variances, covariance). The SQL that
feeds them lives in :mod:`.metrics`; this module never sees a database.

Methods, with the reasons and the references:

* **Means of per-user values** (cost per user, calls per user): Welch's t-test (Welch 1947), unequal variances,
  Welch-Satterthwaite degrees of freedom: it equals ``scipy.stats.ttest_ind(equal_var=False)`` on the per-user
  values and does not assume the variants share a variance (a variant that changes cost usually changes its
  spread too).
* **Ratio metrics** (cost per call, latency per call, error rate = errors / calls): the delta method for a ratio
  of means, ``Var(Ybar / Xbar) ~ (s_Y^2 - 2 R s_XY + R^2 s_X^2) / (n Xbar^2)`` (Deng, Knoblich & Lu 2018,
  "Applying the Delta Method in Metric Analytics", KDD). It is what keeps rates "per-user aware": the variance
  comes from the spread between users, not from counting calls.
* **Rates with one trial per user** (each user contributes exactly one 0/1 outcome): the classic pooled
  two-proportion z-test; with one trial per user the delta method and the z-test agree, the pooled variance is the
  textbook choice under the null.
* **Confidence intervals** on the difference (treatment - control) and on the relative lift
  ``treatment / control - 1``; the lift's standard error is the delta method for a ratio of two independent
  estimates.
* **Sample ratio mismatch**: Pearson's chi-square of the users per variant against the configured weights
  (Kohavi, Tang & Xu 2020, "Trustworthy Online Controlled Experiments", ch. 21). The threshold is strict
  (p < 0.001) because the check runs on every recompute and a false alarm discards a valid experiment.
* **Multiple metrics**: Holm's step-down adjustment (Holm 1979), which controls the family-wise error rate under
  any dependence between the metrics (they are correlated: cost per call and cost per user move together).
* **Power**: users needed for 80 % power at the observed per-user variance, and the minimum detectable effect at
  the current sample (the normal approximation used by every sample-size calculator).
* **Sequential looks** (the dashboard is read every day; a fixed-horizon test read daily and stopped at the first
  p < 0.05 has a false-positive rate several times alpha):

  - with a planned sample size (or a planned end), a group-sequential test with the Lan-DeMets O'Brien-Fleming
    alpha-spending function (Lan & DeMets 1983): the boundary of each look is computed for the information
    fractions actually observed (recursive numerical integration, Armitage, McPherson & Rowe 1969; Jennison &
    Turnbull 2000, ch. 19), so looks need not be planned or equally spaced, and the whole alpha is spent by the
    planned size: the false-positive rate under daily looks is alpha, not less.
  - without a plan, the mixture sequential probability ratio test (mSPRT) with a normal mixture (Robbins 1970;
    Johari, Koomen, Pekelis & Walsh 2017, "Peeking at A/B Tests", KDD): an always-valid p-value, valid at any
    stopping time, for ever. Its price is conservatism at a finite horizon: with daily looks its false-positive
    rate is well below alpha (about 1-2 % at alpha = 5 %, see the tests), which is why the spending test is used
    whenever the experiment has a plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize
from scipy import stats as st
from scipy.special import ndtr, ndtri, stdtr, stdtrit

#: A float, or an array of floats when many experiments are computed at once (simulations).
Num = float | NDArray[np.float64]
Kind = Literal["mean", "ratio", "rate"]

KINDS: Final = ("mean", "ratio", "rate")
#: SRM threshold: strict, because the check runs on every recompute (Kohavi et al. 2020 use 0.0005-0.001).
SRM_THRESHOLD: Final = 0.001
DEFAULT_POWER: Final = 0.8
_GRID_POINTS: Final = 161  # Simpson grid per look (odd); boundaries accurate to ~1e-4 in z
_Z_MAX: Final = 8.0  # the continuation region is truncated here: P(|Z| > 8) ~ 1e-15
_NO_BOUNDARY: Final = math.inf


# ------------------------------------------------------------------------------------------- moments


@dataclass(frozen=True)
class Moments:
    """Per-user sufficient statistics of one variant for one metric: numerator ``Y`` and denominator ``X``.

    ``n`` users; sample means, sample variances (ddof = 1) and covariance of the per-user values. For a mean
    metric ``X`` is 1 for every user (``mean_x = 1``, ``var_x = cov_xy = 0``), so one formula serves both: the
    metric's value is ``mean_y / mean_x`` and its variance the delta-method variance of that ratio.
    """

    n: Num
    mean_y: Num
    var_y: Num
    mean_x: Num = 1.0
    var_x: Num = 0.0
    cov_xy: Num = 0.0

    @classmethod
    def of(cls, y: ArrayLike, x: ArrayLike | None = None, axis: int = -1) -> Moments:
        """Moments of per-user values along ``axis`` (``x`` None: a mean metric)."""
        y_arr = np.asarray(y, dtype=np.float64)
        n = float(y_arr.shape[axis]) if y_arr.ndim else 1.0
        mean_y = y_arr.mean(axis=axis)
        var_y = y_arr.var(axis=axis, ddof=1)
        if x is None:
            return cls(n=n, mean_y=mean_y, var_y=var_y)
        x_arr = np.asarray(x, dtype=np.float64)
        mean_x = x_arr.mean(axis=axis)
        cov = ((y_arr - np.expand_dims(mean_y, axis)) * (x_arr - np.expand_dims(mean_x, axis))).sum(axis=axis)
        return cls(n=n, mean_y=mean_y, var_y=var_y, mean_x=mean_x, var_x=x_arr.var(axis=axis, ddof=1),
                   cov_xy=cov / (n - 1))

    @classmethod
    def from_sums(cls, n: Num, s_y: Num, q_y: Num, s_x: Num | None = None, q_x: Num | None = None,
                  p_xy: Num | None = None) -> Moments:
        """Moments from power sums over users: ``S = sum y``, ``Q = sum y^2``, ``P = sum x y``.

        ``mean = S / n``, ``variance = (Q - S^2 / n) / (n - 1)``, covariance likewise: what the database returns
        (plain sums are the cheapest aggregates there are), and what cumulative looks add up. Accurate in float64
        unless the variance is below ~1e-8 of the squared mean (every user nearly alike), where the tests'
        relative tolerances apply. Fewer than two users give NaN variances.
        """
        n_arr = np.asarray(n, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = np.where(n_arr >= 2, n_arr - 1, np.nan)
            mean_y = np.divide(s_y, n_arr)
            var_y = np.maximum((np.asarray(q_y) - np.asarray(s_y) * mean_y) / df, 0.0)
            if s_x is None or q_x is None or p_xy is None:
                return cls(n=_scalar(n_arr), mean_y=_scalar(mean_y),
                           var_y=_scalar(np.where(df > 0, var_y, np.nan)))
            mean_x = np.divide(s_x, n_arr)
            var_x = np.maximum((np.asarray(q_x) - np.asarray(s_x) * mean_x) / df, 0.0)
            cov = (np.asarray(p_xy) - np.asarray(s_x) * mean_y) / df
        return cls(n=_scalar(n_arr), mean_y=_scalar(mean_y), var_y=_scalar(np.where(df > 0, var_y, np.nan)),
                   mean_x=_scalar(mean_x), var_x=_scalar(np.where(df > 0, var_x, np.nan)), cov_xy=_scalar(cov))

    @property
    def value(self) -> Num:
        """The metric: mean of ``Y`` over mean of ``X`` (= sum Y / sum X over users)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(self.mean_y, self.mean_x)

    @property
    def unit_variance(self) -> Num:
        """Per-user variance of the linearised metric, ``(s_Y^2 - 2 R s_XY + R^2 s_X^2) / Xbar^2`` (Deng et al.
        2018); for a mean metric simply ``s_Y^2``. Power calculations scale it by the number of users."""
        r = self.value
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (self.var_y - 2 * r * self.cov_xy + r * r * self.var_x) / np.square(self.mean_x)
        return np.maximum(v, 0.0)

    @property
    def variance(self) -> Num:
        """Variance of :attr:`value` (delta method; ``s^2 / n`` for a mean)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(self.unit_variance, self.n)

    @property
    def single_trial(self) -> bool:
        """Every user contributes exactly one trial (X = 1 for all): the two-proportion z-test applies."""
        return bool(np.all(np.asarray(self.mean_x) == 1.0) and np.all(np.asarray(self.var_x) == 0.0))


# ---------------------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class Comparison:
    """Treatment against control on one metric: difference, relative lift, their intervals, the test."""

    method: str
    control: Num
    treatment: Num
    delta: Num  # treatment - control
    se: Num  # standard error of delta
    ci_low: Num
    ci_high: Num
    lift: Num  # treatment / control - 1
    lift_ci_low: Num
    lift_ci_high: Num
    statistic: Num
    p_value: Num
    df: Num  # degrees of freedom of the t reference (inf: normal)


# scipy.special's ufuncs rather than scipy.stats' distribution objects: the same functions (Student's t CDF and its
# inverse; with df = inf they are the standard normal's) without the distribution objects' argument checks.
def _p_two_sided(stat: Num, df: Num) -> Num:
    return stdtr(df, -np.abs(stat)) * 2


def _t_crit(alpha: float, df: Num) -> Num:
    """Two-sided critical value ``t_{1 - alpha/2, df}``."""
    return -stdtrit(df, alpha / 2)


def _finish(method: str, c_value: Num, t_value: Num, c_var: Num, t_var: Num, se: Num, test_se: Num, df: Num,
            alpha: float) -> Comparison:
    """Shared tail of every test: statistic, p-value and intervals from the estimates and their variances.

    ``se`` is the standard error for the interval, ``test_se`` the one under the null (they differ only for the
    pooled two-proportion test). A zero standard error means no spread at all: p = 1 when the estimates agree,
    0 when they differ.
    """
    delta = np.subtract(t_value, c_value)
    crit = _t_crit(alpha, df)
    # Relative tolerances: values that are equal up to rounding (every user alike) must not look "different".
    scale = np.maximum(np.maximum(np.abs(c_value), np.abs(t_value)), 1e-300)
    spread = np.asarray(test_se) > 1e-12 * scale
    same = np.abs(delta) <= 1e-9 * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(spread, np.divide(delta, test_se), np.where(same, 0.0, np.inf))
        p = np.where(spread, _p_two_sided(stat, df), np.where(same, 1.0, 0.0))
        lift = np.divide(t_value, c_value) - 1.0
        # Var(T / C) ~ Var(T) / C^2 + T^2 Var(C) / C^4 for independent T and C (delta method).
        lift_se = np.sqrt(np.divide(t_var, np.square(c_value))
                          + np.divide(np.square(t_value) * c_var, np.power(c_value, 4)))
    lift = np.where(np.isfinite(lift), lift, np.nan)
    return Comparison(
        method=method, control=_scalar(c_value), treatment=_scalar(t_value), delta=_scalar(delta), se=_scalar(se),
        ci_low=_scalar(delta - crit * se), ci_high=_scalar(delta + crit * se), lift=_scalar(lift),
        lift_ci_low=_scalar(lift - crit * lift_se), lift_ci_high=_scalar(lift + crit * lift_se),
        statistic=_scalar(stat), p_value=_scalar(p),
        df=_scalar(np.broadcast_to(np.asarray(df, dtype=np.float64), np.shape(delta))),
    )


def welch(control: Moments, treatment: Moments, alpha: float = 0.05) -> Comparison:
    """Welch's unequal-variance t-test on per-user means (``ttest_ind(equal_var=False)`` on the raw values)."""
    vc, vt = control.variance, treatment.variance
    se = np.sqrt(vc + vt)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.square(vc + vt) / (np.square(vc) / (control.n - 1) + np.square(vt) / (treatment.n - 1))
    df = np.where(np.isfinite(df), df, np.inf)
    return _finish("welch_t", control.value, treatment.value, vc, vt, se, se, df, alpha)


def delta_ratio(control: Moments, treatment: Moments, alpha: float = 0.05) -> Comparison:
    """Difference of two ratio metrics with delta-method variances (Deng et al. 2018), normal reference."""
    vc, vt = control.variance, treatment.variance
    se = np.sqrt(vc + vt)
    return _finish("delta", control.value, treatment.value, vc, vt, se, se, np.inf, alpha)


def two_proportion(control: Moments, treatment: Moments, alpha: float = 0.05) -> Comparison:
    """Pooled two-proportion z-test (one 0/1 trial per user); the interval uses the unpooled Wald error."""
    pc, pt = control.value, treatment.value
    nc, nt = control.n, treatment.n
    pooled = (pc * nc + pt * nt) / (nc + nt)
    test_se = np.sqrt(pooled * (1 - pooled) * (1 / nc + 1 / nt))
    vc, vt = pc * (1 - pc) / nc, pt * (1 - pt) / nt
    return _finish("z_two_proportion", pc, pt, vc, vt, np.sqrt(vc + vt), test_se, np.inf, alpha)


def compare(kind: Kind, control: Moments, treatment: Moments, alpha: float = 0.05) -> Comparison:
    """The test for a metric of this kind: Welch for means, delta method for ratios and rates, and the
    two-proportion z-test for a rate whose users contribute one trial each."""
    if kind == "mean":
        return welch(control, treatment, alpha)
    if kind == "rate" and control.single_trial and treatment.single_trial:
        return two_proportion(control, treatment, alpha)
    if kind in ("ratio", "rate"):
        return delta_ratio(control, treatment, alpha)
    raise ValueError(f"unknown metric kind {kind!r}; expected one of {', '.join(KINDS)}")


def value_interval(kind: Kind, moments: Moments, alpha: float = 0.05) -> tuple[Num, Num]:
    """Confidence interval of one variant's own value (t with n - 1 df for means, normal otherwise)."""
    se = np.sqrt(moments.variance)
    crit = _t_crit(alpha, np.maximum(np.asarray(moments.n) - 1, 1) if kind == "mean" else np.inf)
    value = moments.value
    return _scalar(value - crit * se), _scalar(value + crit * se)


def _scalar(value: ArrayLike) -> Num:
    arr = np.asarray(value, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


# ------------------------------------------------------------------------------------------------ SRM


@dataclass(frozen=True)
class SrmResult:
    """Users per variant against the configured weights."""

    chi2: float
    df: int
    p_value: float
    flagged: bool
    observed: Mapping[str, int]
    expected: Mapping[str, float]
    unexpected: tuple[str, ...]  # variants with users but no (or zero) configured weight


def srm_test(observed: Mapping[str, int], weights: Mapping[str, float],
             threshold: float = SRM_THRESHOLD) -> SrmResult:
    """Pearson chi-square goodness of fit of the observed users per variant to ``weights`` (normalised).

    A variant that has users but no weight is a mismatch by definition (p = 0): the SDK and the registry disagree
    on the variants. Variants of weight zero without users are left out of the test.
    """
    total = int(sum(observed.values()))
    weight_sum = float(sum(w for w in weights.values() if w > 0))
    unexpected = tuple(sorted(v for v, count in observed.items() if count > 0 and weights.get(v, 0.0) <= 0))
    names = [v for v, w in weights.items() if w > 0]
    expected = {v: total * weights[v] / weight_sum for v in names} if weight_sum > 0 else {}
    if unexpected or (total > 0 and weight_sum <= 0):
        return SrmResult(math.inf, max(len(names) - 1, 0), 0.0, True, dict(observed), expected, unexpected)
    if total == 0 or len(names) < 2:
        return SrmResult(0.0, max(len(names) - 1, 0), 1.0, False, dict(observed), expected, ())
    f_obs = np.array([observed.get(v, 0) for v in names], dtype=np.float64)
    f_exp = np.array([expected[v] for v in names])
    chi2, p = st.chisquare(f_obs, f_exp)
    return SrmResult(float(chi2), len(names) - 1, float(p), bool(p < threshold), dict(observed), expected, ())


# ------------------------------------------------------------------------------------- multiplicity


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1); NaN entries stay NaN and are not counted.

    Rejecting every hypothesis whose adjusted p-value is below alpha controls the family-wise error rate at alpha
    under any dependence (Holm 1979).
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    if m == 0:
        return out.tolist()
    order = valid[np.argsort(p[valid], kind="stable")]
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out.tolist()


# --------------------------------------------------------------------------------------------- power


def users_needed(control: Moments, treatment: Moments, effect: float, share_control: float,
                 share_treatment: float, alpha: float = 0.05, power: float = DEFAULT_POWER) -> float:
    """Total users of the experiment for ``power`` to detect an absolute ``effect`` at two-sided ``alpha``.

    ``N = (z_{1-alpha/2} + z_power)^2 (s_c^2 / w_c + s_t^2 / w_t) / effect^2`` with the per-user (linearised)
    variances observed so far and each arm's share ``w`` of all the experiment's users: the fixed-horizon normal
    approximation. Infinite when the effect is zero; NaN when a variance is unknown.
    """
    if share_control <= 0 or share_treatment <= 0:
        return math.nan
    z = -ndtri(alpha / 2) + ndtri(power)
    spread = float(control.unit_variance) / share_control + float(treatment.unit_variance) / share_treatment
    if not math.isfinite(spread):
        return math.nan
    if effect == 0:
        return math.inf
    return z * z * spread / (effect * effect)


def minimum_detectable_effect(se: float, alpha: float = 0.05, power: float = DEFAULT_POWER) -> float:
    """Absolute effect detectable with ``power`` at the current standard error of the difference."""
    return float((-ndtri(alpha / 2) + ndtri(power)) * se)


# ------------------------------------------------------------------------------------ sequential tests


def obf_spending(t: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """Lan-DeMets O'Brien-Fleming-type spending for a two-sided test, alpha/2 on each side:
    ``alpha(t) = 4 - 4 Phi(z_{1-alpha/4} / sqrt(t))``, alpha at t >= 1 (DeMets & Lan 1994; gsDesign's sfLDOF
    applied to each side). It spends almost nothing early (a day-one fluke cannot end the experiment) and keeps
    the final boundary close to the fixed-horizon 1.96, so little power is lost by looking."""
    t_arr = np.clip(np.asarray(t, dtype=np.float64), 1e-12, 1.0)
    return 4 * ndtr(ndtri(alpha / 4) / np.sqrt(t_arr))


def _simpson(half_width: float, points: int = _GRID_POINTS) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    z = np.linspace(-half_width, half_width, points)
    w = np.ones(points)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return z, w * (z[1] - z[0]) / 3.0


_SQRT_2PI: Final = math.sqrt(2 * math.pi)


@lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    t = np.asarray(fractions)
    increments = np.diff(obf_spending(t, alpha), prepend=0.0)
    bounds: list[float] = []
    z_prev, weights = _simpson(0.0)
    w_prev = weights  # (density x Simpson weight) on the previous look's continuation region
    for k in range(len(t)):
        target = float(increments[k])
        if k == 0:
            c = float(-ndtri(target / 2)) if target > 1e-15 else _NO_BOUNDARY
            z_prev, weights = _simpson(min(c, _Z_MAX))
            w_prev = np.exp(-0.5 * z_prev * z_prev) / _SQRT_2PI * weights
            bounds.append(c)
            continue
        # Z_k = Z_{k-1} sqrt(t_{k-1} / t_k) + N(0, (t_k - t_{k-1}) / t_k): independent increments of the score.
        mean = z_prev * math.sqrt(t[k - 1] / t[k])
        sd = math.sqrt((t[k] - t[k - 1]) / t[k])

        def crossing(c_k: float, mean: NDArray[np.float64] = mean, sd: float = sd,
                     w: NDArray[np.float64] = w_prev) -> float:
            return float(np.dot(w, ndtr((mean - c_k) / sd) + ndtr((-c_k - mean) / sd)))

        if target <= 1e-15 or crossing(_Z_MAX + 4) >= target:
            c = _NO_BOUNDARY
        else:
            c = float(optimize.brentq(lambda c_k: crossing(c_k) - target, 0.0, _Z_MAX + 4, xtol=1e-7))
        bounds.append(c)
        z_new, weights = _simpson(min(c, _Z_MAX))
        u = (z_new[:, None] - mean[None, :]) / sd
        density = np.exp(-0.5 * u * u) @ w_prev / (sd * _SQRT_2PI)
        z_prev, w_prev = z_new, density * weights
    return tuple(bounds)


def spending_boundaries(fractions: Sequence[float], alpha: float = 0.05) -> tuple[float, ...]:
    """Two-sided critical |z| of each look, for looks at information ``fractions`` (increasing, in (0, 1]).

    Each look's boundary spends exactly ``alpha(t_k) - alpha(t_{k-1})`` of the false-positive probability given
    the earlier boundaries, by recursive numerical integration of the joint normal distribution of the
    cumulative z-statistics. Looks need not be equally spaced nor planned in advance (Lan & DeMets 1983); a look
    once the plan is complete (t = 1 reached before) has no boundary left (inf).
    """
    rounded = tuple(round(min(float(f), 1.0), 6) for f in fractions)
    if not rounded:
        return ()
    if rounded[0] <= 0 or any(b <= a for a, b in zip(rounded, rounded[1:])):
        raise ValueError(f"information fractions must be positive and strictly increasing, got {rounded}")
    return _boundaries(rounded, round(float(alpha), 9))


def boundary_scaled_p(p_value: Num, boundary: float, alpha: float) -> Num:
    """A look's p-value on the experiment's alpha scale: ``p * alpha / alpha_k``, where ``alpha_k`` is the
    nominal two-sided level of the look's boundary, so that it is below alpha exactly when |z| crosses the
    boundary. Its running minimum over the looks is the sequential p-value the dashboard shows; read it against
    the experiment's alpha only (the boundaries were built for that level)."""
    nominal = 2 * float(ndtr(-boundary)) if math.isfinite(boundary) else 0.0
    if nominal <= 0:
        return _scalar(np.ones_like(np.asarray(p_value, dtype=np.float64)))
    return _scalar(np.minimum(np.asarray(p_value, dtype=np.float64) * alpha / nominal, 1.0))


def msprt_p(delta: Num, variance: Num, tau2: Num) -> Num:
    """One look's always-valid p-value ``min(1, 1 / Lambda)`` of the normal-mixture SPRT for H0: difference 0.

    ``Lambda = sqrt(V / (V + tau^2)) exp(tau^2 delta^2 / (2 V (V + tau^2)))`` with ``V`` the variance of the
    estimated difference and ``tau^2`` the variance of the mixing normal (Johari et al. 2017). The running minimum
    of these over the looks is the always-valid p-value.
    """
    v = np.asarray(variance, dtype=np.float64)
    tau2_arr = np.asarray(tau2, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_lambda = 0.5 * np.log(v / (v + tau2_arr)) + tau2_arr * np.square(delta) / (2 * v * (v + tau2_arr))
    p = np.exp(-np.maximum(log_lambda, 0.0))
    return _scalar(np.where(np.isfinite(log_lambda), p, np.where(np.isnan(log_lambda), np.nan, 0.0)))


def msprt_interval(delta: Num, variance: Num, tau2: Num, alpha: float) -> tuple[Num, Num]:
    """Always-valid confidence interval: the differences the mSPRT would not reject at ``alpha`` at this look,
    ``delta +- sqrt(V (V + tau^2) / tau^2 (2 log(1 / alpha) + log((V + tau^2) / V)))``."""
    v = np.asarray(variance, dtype=np.float64)
    tau2_arr = np.asarray(tau2, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.sqrt(v * (v + tau2_arr) / tau2_arr * (2 * math.log(1 / alpha) + np.log((v + tau2_arr) / v)))
    return _scalar(delta - half), _scalar(delta + half)


def msprt_tau2(control_value: float, unit_variance: float, relative_effect: float) -> float:
    """Variance of the mixing normal: the squared effect the experiment cares about (``relative_effect`` of the
    control's value), so the test is most sensitive to effects of that size (Johari et al. 2017, section 4.3);
    ``relative_effect`` of the per-user standard deviation when the control's value is zero."""
    if math.isfinite(control_value) and control_value != 0:
        return (relative_effect * control_value) ** 2
    return relative_effect ** 2 * unit_variance if unit_variance > 0 else math.nan
