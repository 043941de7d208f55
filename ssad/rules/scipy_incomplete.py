"""Rules: the derivatives of the regularized incomplete gamma and beta functions in their
parameters, and of Student's t cdf in its degrees of freedom -- the private primitives the
rules of ``scipy.stats``'s ``gamma``, ``chi2``, ``beta`` and ``t`` cdfs (``cdf``, ``sf``,
``logcdf``, ``logsf``) call for their shape parameters (`rules.scipy_stats`).

The primitives, each elementwise over arguments that broadcast together:

- ``_gammainc_da(a, x)``, ``_gammainc_daa(a, x)``: dP/da and d²P/da² of
  ``P = scipy.special.gammainc(a, x)``;
- ``_betainc_da``, ``_betainc_db``, ``_betainc_daa``, ``_betainc_dab``, ``_betainc_dbb``,
  all ``(a, b, x)``: the first and second derivatives of ``I = scipy.special.betainc(a, b, x)``
  in ``a`` and ``b``;
- ``_t_cdf_ddf(x, df)``, ``_t_cdf_ddf2(x, df)``: dF/ddf and d²F/ddf² of
  ``F = scipy.stats.t.cdf(x, df)``.

Method
------
With f the density of the distribution (gamma(a), beta(a, b), t(df)) and s = d log f / d(shape)
its score, the first derivative of the cdf at x is the integral of f s up to x, and the
second the integral of f (s s' + d s / d(shape')). The score's mean over the whole line is
0, and its second moment is known (trigamma terms), so each derivative is also minus the
integral over the other side of x; the integral is taken, with `scipy.integrate.quad`,
over the side that holds less probability, which keeps its value free of cancellation
deep in either tail. Gamma integrates in ``log t``, beta in ``logit t``, t in ``t`` near 0
and in ``log |t|`` in its tails: the integrands are smooth there, and the endpoint
singularities of ``a < 1`` or ``b < 1`` become exponential tails.

Accuracy, against mpmath at 30-50 digits: relative 1e-12 or better for gamma (``a`` in
[0.05, 300], ``x`` from 1e-8 to 400, values down to 1e-177) and for t with ``df`` up to
30 (``x`` from -300 to 1000); 4e-10 for t at ``df = 400``, where the score itself loses
digits to cancellation (as the logpdf rule's does); 4e-10 for beta (``a`` in [0.1, 30],
``b`` in [0.2, 40], ``x`` from 1e-9 to 1 - 1e-6), except that a second derivative whose
two terms nearly cancel (``d²I/db²`` at ``a = 1`` and ``x`` near 0) keeps only an
absolute accuracy of about 1e-16 times ``I``.

Conventions
-----------
- Outside the support (``x <= 0`` for gamma, ``x`` outside ``(0, 1)`` for beta, and at
  ``x = ±inf``) the cdf does not move with its parameters: every derivative is 0.
  Non-positive parameters give NaN, as SciPy does.
- The derivatives in ``x`` are closed forms (the density times powers of the centred
  log terms), written with functions that have rules, so a rule that calls one of
  these primitives differentiates again: second derivatives of the cdfs in (shape, x,
  loc, scale) work in both modes. Third derivatives in the shape parameters are
  refused: the second-derivative primitives give ``a``, ``b`` and ``df`` a
  `runtime.refusals.NoDerivative` adjoint, and their tangent rules raise for a moving
  tangent there.
"""

import math

import numpy as np
from scipy import integrate, special, stats

from ..registry import adjoint, tangent
from ..runtime import broadcast_like, unbroadcast
from ..runtime.refusals import no_derivative, refused_tangent

_RTOL = 1e-12
_EXP_LIMIT = 700.0  # exp of more overflows a float

# ----- Helpers: one integral per element -----


def _integral(integrand, pieces, mass):
    """The sum of `integrand`'s integrals over `pieces` ((start, end) pairs, ends may be
    infinite; empty pieces are skipped), to `_RTOL` relative to the result or 1e-14 of
    `mass`, the probability the pieces hold."""
    total = 0.0
    for start, end in pieces:
        if start < end:
            total += integrate.quad(integrand, start, end, epsabs=1e-14 * mass, epsrel=_RTOL, limit=200)[0]
    return total


def _side(end, mode, lower):
    """The pieces of (-inf, end] (`lower`) or [end, inf), split at `mode` when it lies inside."""
    if lower:
        return [(-math.inf, min(mode, end)), (min(mode, end), end)]
    return [(end, max(mode, end)), (max(mode, end), math.inf)]


def _elementwise(kernel, *args):
    """`kernel` of float scalars, applied to every element of the broadcast `args`: a float
    array of their broadcast shape (a NumPy float for scalars)."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in args))
    result = np.empty(arrays[0].shape)
    for index in np.ndindex(result.shape):
        result[index] = kernel(*(float(a[index]) for a in arrays))
    return result[()]


def _softplus(u):
    """log(1 + exp(u)) without overflow."""
    return max(u, 0.0) + math.log1p(math.exp(-abs(u)))


# ----- Incomplete gamma: P(a, x), the cdf of gamma(a) -----
# With u = log t - digamma(a), the a-derivative of the density f is f u, so dP/da is the
# integral of f u up to x, and d²P/da² that of f (u² - trigamma(a)). Over (0, inf) f u
# integrates to 0 and f u² to trigamma(a) (log t has mean digamma(a) and variance
# trigamma(a)), so both are also minus their integrals from x to inf.


def _gamma_kernel(a, x, order):
    """d^order P / da^order at one point (order 1 or 2)."""
    if not (a > 0) or math.isnan(x):
        return math.nan
    if x <= 0 or math.isinf(x):
        return 0.0
    p, q = special.gammainc(a, x), special.gammaincc(a, x)
    shift, log_norm = special.digamma(a), special.gammaln(a)

    def integrand(s):  # t = exp(s)
        if s > _EXP_LIMIT:
            return 0.0
        return (s - shift) ** order * math.exp(a * s - math.exp(s) - log_norm)

    lower = p <= q
    mass = p if lower else q
    moment = _integral(integrand, _side(math.log(x), math.log(a), lower), mass)
    if order == 2:
        moment -= special.polygamma(1, a) * mass
    return moment if lower else -moment


def _gammainc_da(a, x):
    """d/da scipy.special.gammainc(a, x), elementwise; 0 for x <= 0 and x = inf."""
    return _elementwise(lambda a, x: _gamma_kernel(a, x, 1), a, x)


def _gammainc_daa(a, x):
    """d²/da² scipy.special.gammainc(a, x), elementwise; 0 for x <= 0 and x = inf."""
    return _elementwise(lambda a, x: _gamma_kernel(a, x, 2), a, x)


def _gamma_terms(a, x):
    """(density of gamma(a) at x, log x - digamma(a)), both 0 where x <= 0."""
    inside = x > 0
    w = np.where(inside, x, 1.0)
    return stats.gamma.pdf(x, a), np.where(inside, np.log(w) - special.digamma(a), 0.0)


def _gammainc_da_slope(a, x):
    """d/dx of dP/da: the density times log x - digamma(a)."""
    density, u = _gamma_terms(a, x)
    return density * u


def _gammainc_daa_slope(a, x):
    density, u = _gamma_terms(a, x)
    return density * (u * u - special.polygamma(1, a))


_THIRD_IN_A = "d²/da² scipy.special.gammainc(a, x) (a third derivative of gamma's or chi2's cdf in the shape)"


@adjoint(_gammainc_da)
def _gammainc_da_adjoint(dy, y, a, x):
    return (unbroadcast(dy * _gammainc_daa(a, x), a), unbroadcast(dy * _gammainc_da_slope(a, x), x))


@tangent(_gammainc_da)
def _gammainc_da_tangent(tangents, y, a, x):
    return broadcast_like(tangents[0] * _gammainc_daa(a, x) + tangents[1] * _gammainc_da_slope(a, x), y)


@adjoint(_gammainc_daa)
def _gammainc_daa_adjoint(dy, y, a, x):
    return (no_derivative(_THIRD_IN_A, "a"), unbroadcast(dy * _gammainc_daa_slope(a, x), x))


@tangent(_gammainc_daa)
def _gammainc_daa_tangent(tangents, y, a, x):
    t_a = refused_tangent(tangents[0], _THIRD_IN_A, "a")
    return broadcast_like(t_a + tangents[1] * _gammainc_daa_slope(a, x), y)


# ----- Incomplete beta: I(a, b, x), the cdf of beta(a, b) -----
# With u = log t - digamma(a) + digamma(a + b) and v = log(1 - t) - digamma(b) + digamma(a + b),
# dI/da and dI/db integrate f u and f v up to x; the second derivatives f (u² - Va),
# f (u v + trigamma(a + b)) and f (v² - Vb), Va = trigamma(a) - trigamma(a + b) and
# Vb = trigamma(b) - trigamma(a + b) being the variances of log t and log(1 - t), and
# -trigamma(a + b) their covariance. Over (0, 1) each integrates to 0, as for gamma.


def _beta_kernel(a, b, x, i, j):
    """d^(i + j) I / da^i db^j at one point (i + j is 1 or 2)."""
    if not (a > 0 and b > 0) or math.isnan(x):
        return math.nan
    if x <= 0 or x >= 1:
        return 0.0
    p, q = special.betainc(a, b, x), special.betaincc(a, b, x)
    both = special.digamma(a + b)
    shift_a, shift_b = special.digamma(a) - both, special.digamma(b) - both
    log_norm = special.betaln(a, b)

    def integrand(s):  # t = 1 / (1 + exp(-s))
        log_t, log_1mt = -_softplus(-s), -_softplus(s)
        weight = (log_t - shift_a) ** i * (log_1mt - shift_b) ** j
        return weight * math.exp(a * log_t + b * log_1mt - log_norm)

    lower = p <= q
    mass = p if lower else q
    moment = _integral(integrand, _side(math.log(x) - math.log1p(-x), math.log(a / b), lower), mass)
    if i + j == 2:  # the integral of f (u v - their covariance), say, for i = j = 1
        covariance = -special.polygamma(1, a + b)
        if i == 2:
            covariance += special.polygamma(1, a)
        elif j == 2:
            covariance += special.polygamma(1, b)
        moment -= covariance * mass
    return moment if lower else -moment


def _betainc_da(a, b, x):
    """d/da scipy.special.betainc(a, b, x), elementwise; 0 for x outside (0, 1)."""
    return _elementwise(lambda a, b, x: _beta_kernel(a, b, x, 1, 0), a, b, x)


def _betainc_db(a, b, x):
    """d/db scipy.special.betainc(a, b, x), elementwise; 0 for x outside (0, 1)."""
    return _elementwise(lambda a, b, x: _beta_kernel(a, b, x, 0, 1), a, b, x)


def _betainc_daa(a, b, x):
    """d²/da² scipy.special.betainc(a, b, x), elementwise; 0 for x outside (0, 1)."""
    return _elementwise(lambda a, b, x: _beta_kernel(a, b, x, 2, 0), a, b, x)


def _betainc_dab(a, b, x):
    """d²/da db scipy.special.betainc(a, b, x), elementwise; 0 for x outside (0, 1)."""
    return _elementwise(lambda a, b, x: _beta_kernel(a, b, x, 1, 1), a, b, x)


def _betainc_dbb(a, b, x):
    """d²/db² scipy.special.betainc(a, b, x), elementwise; 0 for x outside (0, 1)."""
    return _elementwise(lambda a, b, x: _beta_kernel(a, b, x, 0, 2), a, b, x)


def _beta_terms(a, b, x):
    """(density of beta(a, b) at x, u, v) as above, all 0 where x is outside (0, 1)."""
    inside = (x > 0) & (x < 1)
    w = np.where(inside, x, 0.5)
    both = special.digamma(a + b)
    u, v = np.log(w) - special.digamma(a) + both, np.log1p(-w) - special.digamma(b) + both
    return stats.beta.pdf(x, a, b), np.where(inside, u, 0.0), np.where(inside, v, 0.0)


def _betainc_da_slope(a, b, x):
    density, u, v = _beta_terms(a, b, x)
    return density * u


def _betainc_db_slope(a, b, x):
    density, u, v = _beta_terms(a, b, x)
    return density * v


def _betainc_daa_slope(a, b, x):
    density, u, v = _beta_terms(a, b, x)
    return density * (u * u - special.polygamma(1, a) + special.polygamma(1, a + b))


def _betainc_dab_slope(a, b, x):
    density, u, v = _beta_terms(a, b, x)
    return density * (u * v + special.polygamma(1, a + b))


def _betainc_dbb_slope(a, b, x):
    density, u, v = _beta_terms(a, b, x)
    return density * (v * v - special.polygamma(1, b) + special.polygamma(1, a + b))


_THIRD_IN_AB = "a second derivative of scipy.special.betainc(a, b, x) in a and b (a third derivative of beta's cdf in its shapes)"


@adjoint(_betainc_da)
def _betainc_da_adjoint(dy, y, a, b, x):
    return (
        unbroadcast(dy * _betainc_daa(a, b, x), a),
        unbroadcast(dy * _betainc_dab(a, b, x), b),
        unbroadcast(dy * _betainc_da_slope(a, b, x), x),
    )


@tangent(_betainc_da)
def _betainc_da_tangent(tangents, y, a, b, x):
    t_shapes = tangents[0] * _betainc_daa(a, b, x) + tangents[1] * _betainc_dab(a, b, x)
    return broadcast_like(t_shapes + tangents[2] * _betainc_da_slope(a, b, x), y)


@adjoint(_betainc_db)
def _betainc_db_adjoint(dy, y, a, b, x):
    return (
        unbroadcast(dy * _betainc_dab(a, b, x), a),
        unbroadcast(dy * _betainc_dbb(a, b, x), b),
        unbroadcast(dy * _betainc_db_slope(a, b, x), x),
    )


@tangent(_betainc_db)
def _betainc_db_tangent(tangents, y, a, b, x):
    t_shapes = tangents[0] * _betainc_dab(a, b, x) + tangents[1] * _betainc_dbb(a, b, x)
    return broadcast_like(t_shapes + tangents[2] * _betainc_db_slope(a, b, x), y)


def _betainc_second_adjoint(dy, y, a, b, x, slope):
    """Adjoints of a second derivative of I: refused in a and b, `slope` in x."""
    return (no_derivative(_THIRD_IN_AB, "a"), no_derivative(_THIRD_IN_AB, "b"), unbroadcast(dy * slope, x))


def _betainc_second_tangent(tangents, y, slope):
    refused = refused_tangent(tangents[0], _THIRD_IN_AB, "a") + refused_tangent(tangents[1], _THIRD_IN_AB, "b")
    return broadcast_like(refused + tangents[2] * slope, y)


@adjoint(_betainc_daa)
def _betainc_daa_adjoint(dy, y, a, b, x):
    return _betainc_second_adjoint(dy, y, a, b, x, _betainc_daa_slope(a, b, x))


@tangent(_betainc_daa)
def _betainc_daa_tangent(tangents, y, a, b, x):
    return _betainc_second_tangent(tangents, y, _betainc_daa_slope(a, b, x))


@adjoint(_betainc_dab)
def _betainc_dab_adjoint(dy, y, a, b, x):
    return _betainc_second_adjoint(dy, y, a, b, x, _betainc_dab_slope(a, b, x))


@tangent(_betainc_dab)
def _betainc_dab_tangent(tangents, y, a, b, x):
    return _betainc_second_tangent(tangents, y, _betainc_dab_slope(a, b, x))


@adjoint(_betainc_dbb)
def _betainc_dbb_adjoint(dy, y, a, b, x):
    return _betainc_second_adjoint(dy, y, a, b, x, _betainc_dbb_slope(a, b, x))


@tangent(_betainc_dbb)
def _betainc_dbb_tangent(tangents, y, a, b, x):
    return _betainc_second_tangent(tangents, y, _betainc_dbb_slope(a, b, x))


# ----- Student's t cdf in df -----
# With g = d log f / d df (`_t_df_partial`) and g' = d g / d df, dF/ddf integrates f g up to x
# and d²F/ddf² integrates f (g² + g'). Both integrands are even in t and integrate to 0
# over the line, so each derivative is the integral from 0 to x (taken for |x| <= 1.5) or
# minus that from x to ±inf (taken in log |t| beyond).


def _t_kernel(x, df, order):
    """d^order F / ddf^order at one point (order 1 or 2)."""
    if not (df > 0) or math.isnan(x):
        return math.nan
    if x == 0 or math.isinf(x):
        return 0.0
    half = 0.5 * (df + 1.0)
    log_norm = special.gammaln(half) - special.gammaln(0.5 * df) - 0.5 * math.log(df * math.pi)
    shift = special.digamma(half) - special.digamma(0.5 * df) - 1.0 / df
    curvature = 0.25 * (special.polygamma(1, half) - special.polygamma(1, 0.5 * df)) + 0.5 / (df * df)

    def integrand(log_ratio, share, inverse, log_jacobian=0.0):
        """f (g or g² + g') from log1p(t²/df), t² / (df + t²) and 1 / (df + t²), times exp(log_jacobian)."""
        h = (df + 1.0) / df * share
        score = 0.5 * (shift - log_ratio + h)
        weight = score
        if order == 2:
            weight = score * score + curvature + 0.5 * (share / df + h * (1.0 / (df + 1.0) - 1.0 / df - inverse))
        return weight * math.exp(log_norm - half * log_ratio + log_jacobian)

    def near(t):
        t2 = t * t
        return integrand(math.log1p(t2 / df), t2 / (df + t2), 1.0 / (df + t2))

    def far(s):  # |t| = exp(s) >= 1.5: in terms of exp(-2 s), which cannot overflow
        e = df * math.exp(-2.0 * s)
        return integrand(2.0 * s - math.log(df) + math.log1p(e), 1.0 / (1.0 + e), e / df / (1.0 + e), s)

    sign, tail = math.copysign(1.0, x), special.stdtr(df, -abs(x))
    if abs(x) <= 1.5:
        return sign * _integral(near, [(0.0, abs(x))], 0.5 - tail)
    return -sign * _integral(far, [(math.log(abs(x)), math.inf)], tail)


def _t_cdf_ddf(x, df):
    """d/ddf scipy.stats.t.cdf(x, df), elementwise; 0 at x = 0 and x = ±inf."""
    return _elementwise(lambda x, df: _t_kernel(x, df, 1), x, df)


def _t_cdf_ddf2(x, df):
    """d²/ddf² scipy.stats.t.cdf(x, df), elementwise; 0 at x = 0 and x = ±inf."""
    return _elementwise(lambda x, df: _t_kernel(x, df, 2), x, df)


def _t_df_partial(z, df):
    """d/ddf of scipy.stats.t.logpdf(z, df)."""
    z2 = z * z
    return 0.5 * (
        special.digamma((df + 1.0) / 2.0) - special.digamma(df / 2.0) - 1.0 / df
        - np.log1p(z2 / df) + (df + 1.0) * z2 / (df * (df + z2))
    )


def _t_df_partial_slope(z, df):
    """d/ddf of `_t_df_partial`."""
    z2 = z * z
    share = z2 / (df + z2)
    h = (df + 1.0) / df * share
    trigammas = 0.25 * (special.polygamma(1, (df + 1.0) / 2.0) - special.polygamma(1, df / 2.0))
    return trigammas + 0.5 / (df * df) + 0.5 * (share / df + h * (1.0 / (df + 1.0) - 1.0 / df - 1.0 / (df + z2)))


def _t_cdf_ddf_slope(x, df):
    """d/dx of dF/ddf: the density times the score."""
    return stats.t.pdf(x, df) * _t_df_partial(x, df)


def _t_cdf_ddf2_slope(x, df):
    g = _t_df_partial(x, df)
    return stats.t.pdf(x, df) * (g * g + _t_df_partial_slope(x, df))


_THIRD_IN_DF = "d²/ddf² scipy.stats.t.cdf(x, df) (a third derivative of t's cdf in df)"


@adjoint(_t_cdf_ddf)
def _t_cdf_ddf_adjoint(dy, y, x, df):
    return (unbroadcast(dy * _t_cdf_ddf_slope(x, df), x), unbroadcast(dy * _t_cdf_ddf2(x, df), df))


@tangent(_t_cdf_ddf)
def _t_cdf_ddf_tangent(tangents, y, x, df):
    return broadcast_like(tangents[0] * _t_cdf_ddf_slope(x, df) + tangents[1] * _t_cdf_ddf2(x, df), y)


@adjoint(_t_cdf_ddf2)
def _t_cdf_ddf2_adjoint(dy, y, x, df):
    return (unbroadcast(dy * _t_cdf_ddf2_slope(x, df), x), no_derivative(_THIRD_IN_DF, "df"))


@tangent(_t_cdf_ddf2)
def _t_cdf_ddf2_tangent(tangents, y, x, df):
    t_df = refused_tangent(tangents[1], _THIRD_IN_DF, "df")
    return broadcast_like(tangents[0] * _t_cdf_ddf2_slope(x, df) + t_df, y)
