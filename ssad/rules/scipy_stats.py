"""Rules: SciPy's probability distributions (scipy.stats); registered once SciPy is imported.

The primitives are the methods of SciPy's distribution objects as users call them:
``scipy.stats.norm.logpdf(x, loc, scale)``, ``stats.t.cdf(x, df, loc=mu)``,
``from scipy.stats import norm; norm.pdf(x, scale=s)``. Each access of
``norm.logpdf`` makes a new bound method, but bound methods compare equal when their
object and function are the same, so one registered key covers every spelling.

Conventions
-----------
- Continuous families ``norm``, ``t``, ``beta``, ``gamma``, ``chi2``, ``expon``,
  ``laplace``, ``cauchy``, ``logistic``: ``logpdf``, ``pdf``, ``cdf``, ``logcdf``,
  ``sf`` and ``logsf`` in ``x``, ``loc``, ``scale`` and the shape parameters, with the
  parameters in SciPy's order (``t.logpdf(x, df, loc=0.0, scale=1.0)``); a keyword
  argument that carries a gradient flows like a positional one. Arguments broadcast
  against each other; each adjoint is summed back to its argument's shape.
- Outside the support (``gamma``, ``chi2``, ``expon`` below ``loc``; ``beta`` outside
  ``(loc, loc + scale)``) the density is the constant 0 and every derivative is 0,
  never NaN. At the edge itself ``expon`` takes its one-sided derivative from inside
  the support (``logpdf`` slope ``-1 / scale`` at ``x == loc``); ``gamma``, ``chi2`` and
  ``beta``, whose formulas take ``log(x - loc)``, count the edge as outside (0).
- ``laplace`` at ``x == loc`` (its kink): the slope of ``-abs(z)`` is 0 there, as
  ``np.abs`` has (docs/conventions.md), and ``loc`` gets 0 too.
- The cdf-like methods of ``t`` (in ``df``), ``gamma`` (``a``), ``chi2`` (``df``) and
  ``beta`` (``a``, ``b``) have no closed-form shape derivative: the rules call the
  primitives of `rules.scipy_incomplete`, which integrate the density times its score
  numerically (about 1e-10 relative or better), and whose own rules give second
  derivatives in (shape, x, loc, scale); a third derivative in the shape is refused
  with `SsadError`. ``logcdf`` and ``logsf`` divide that derivative by ``exp(y)``:
  where the cdf (the sf) underflows to 0 at a finite ``y`` the shape's slope is NaN or
  inf, never a silent number.
- ``poisson``: ``logpmf``, ``pmf``, ``cdf``, ``logcdf``, ``sf``, ``logsf`` in ``mu``.
  ``k`` gets no gradient (``None``: the pmf is a function of integers); an integer
  shift ``loc`` that carries a gradient is refused (the rules give it no adjoint). At
  ``mu == 0`` and ``k == 0`` the slope of ``logpmf`` is -1 (``k / mu`` read as 0).
- ``multivariate_normal.logpdf``/``pdf(x, mean, cov)`` in ``x``, ``mean`` and ``cov``,
  ``x`` of shape ``(d,)`` or ``(n, d)``, ``cov`` a 2-D symmetric positive definite
  matrix. SciPy reads ``cov`` through an eigendecomposition of its lower triangle, so
  the derivative with respect to single entries is not symmetric; the rule returns the
  symmetrized gradient, as ``np.linalg.cholesky``'s does (``ssad/rules/linalg.py``):
  ``dcov`` is symmetric and ``sum(dcov * E)`` is the derivative along any symmetric
  ``E``; the tangent reads a tangent ``E`` as its symmetric part. A scalar or 1-D
  ``cov`` is refused with `SsadError`.
- ``dirichlet.logpdf``/``pdf(x, alpha)``: ``x`` holds the ``K`` components along its
  first axis (or ``K - 1`` of them, the last being ``1 - sum``). The gradient in ``x``
  is that of the density's formula in every component (as autograd and JAX give it),
  not one projected onto the simplex.
- Frozen distributions made in the function (``d = norm(mu, s); d.logpdf(x)``) are read
  as their family's functions (``norm.logpdf(x, mu, s)``) by the front end
  (`frontend.distributions`); one used otherwise is not differentiated in its
  parameters.
- Every rule with an adjoint also has a tangent rule, its exact transpose.
"""

import numpy as np
from scipy import special, stats

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, unbroadcast
from .scipy_incomplete import _betainc_da, _betainc_db, _gammainc_da, _t_cdf_ddf, _t_df_partial

# ----- Helpers: arguments -----


def _tangent_of(tangents, position):
    """The tangent of argument `position`: 0.0 for one the call left out or that carries none."""
    return tangents[position] if position < len(tangents) and tangents[position] is not None else 0.0


# ----- Helpers: location-scale families -----
# A family's density is g(z; shapes) / scale with z = (x - loc) / scale. Its log density's
# slope lg'(z) gives the partials of logpdf; the derivative h(z) of a cdf-like method
# (cdf, sf, logcdf, logsf) in z gives theirs: d/dx = h / scale, d/dloc = -h / scale,
# d/dscale = -h z / scale.


def _density_adjoints(dy, slope, z, x, loc, scale):
    """Adjoints of (x, loc, scale) in logpdf, whose slope in z is `slope` (dy * pdf for pdf)."""
    d_z = dy * slope / scale
    return unbroadcast(d_z, x), unbroadcast(-d_z, loc), unbroadcast(-(d_z * z) - dy / scale, scale)


def _density_tangent(tangents, shapes, slope, z, scale):
    """Tangent of logpdf from those of x, loc and scale (after `shapes` shape parameters)."""
    t_x, t_loc, t_scale = _tangent_of(tangents, 0), _tangent_of(tangents, shapes + 1), _tangent_of(tangents, shapes + 2)
    return ((t_x - t_loc) * slope - t_scale * (z * slope + 1.0)) / scale


def _tail_adjoints(dy, h, z, x, loc, scale):
    """Adjoints of (x, loc, scale) in a cdf-like method whose derivative in z is `h`."""
    d_z = dy * h / scale
    return unbroadcast(d_z, x), unbroadcast(-d_z, loc), unbroadcast(-(d_z * z), scale)


def _tail_tangent(tangents, shapes, h, z, scale):
    t_x, t_loc, t_scale = _tangent_of(tangents, 0), _tangent_of(tangents, shapes + 1), _tangent_of(tangents, shapes + 2)
    return (t_x - t_loc - t_scale * z) * h / scale


def _log_ratio(log_density, y):
    """exp(log_density - y), the slope of log(cdf) or log(sf): 0 where the density is 0."""
    inside = log_density > -np.inf
    return np.where(inside, np.exp(np.where(inside, log_density, 0.0) - np.where(inside, y, 0.0)), 0.0)


def _per_value(d, y):
    """d / exp(y): the derivative of log(cdf) (or log(sf)), whose value is y, from that of the
    cdf (the sf), d. 0 where y is -inf (outside the support, where d is 0 too); NaN or inf
    where exp(y) underflows to 0 although y is finite."""
    outside = y == -np.inf
    return np.where(outside, 0.0, d / np.exp(np.where(outside, 0.0, y)))


def _chi2_cdf_ddf(z, df):
    """d/ddf of chi2.cdf(z, df) = gammainc(df / 2, z / 2)."""
    return 0.5 * _gammainc_da(df / 2.0, z / 2.0)


# ----- Helpers: tangents of the shapes of the cdf-like methods -----
# Their derivatives are integrals, one per element: computed only for a moving shape.


def _moving(t):
    """Whether the tangent `t` is not zero."""
    return not np.all(np.equal(t, 0.0))


def _t_df_tangent(t_df, z, df):
    """t_df * d t.cdf(z, df) / d df; 0.0 (nothing integrated) for a zero tangent."""
    if _moving(t_df):
        return t_df * _t_cdf_ddf(z, df)
    return 0.0


def _gamma_a_tangent(t_a, z, a):
    """t_a * d gamma.cdf(z, a) / d a; 0.0 (nothing integrated) for a zero tangent."""
    if _moving(t_a):
        return t_a * _gammainc_da(a, z)
    return 0.0


def _chi2_df_tangent(t_df, z, df):
    """t_df * d chi2.cdf(z, df) / d df; 0.0 (nothing integrated) for a zero tangent."""
    if _moving(t_df):
        return t_df * _chi2_cdf_ddf(z, df)
    return 0.0


def _beta_shapes_tangent(t_a, t_b, z, a, b):
    """t_a * d beta.cdf(z, a, b) / d a + t_b * d beta.cdf(z, a, b) / d b, each term 0.0
    (nothing integrated) for a zero tangent."""
    t_shapes = 0.0
    if _moving(t_a):
        t_shapes = t_shapes + t_a * _betainc_da(a, b, z)
    if _moving(t_b):
        t_shapes = t_shapes + t_b * _betainc_db(a, b, z)
    return t_shapes


# ----- Slopes of the standard log densities, and their shape derivatives -----


def _norm_slope(z):
    return -z


def _expon_slope(z):
    return np.where(z >= 0, -1.0, 0.0)


def _laplace_slope(z):
    return -np.sign(z)


def _cauchy_slope(z):
    return -2.0 * z / (1.0 + z * z)


def _logistic_slope(z):
    return -np.tanh(z / 2.0)


def _t_slope(z, df):
    return -(df + 1.0) * z / (df + z * z)


def _positive(z):
    """(inside, z with the points outside replaced by 1.0): log z is finite at every point."""
    inside = z > 0
    return inside, np.where(inside, z, 1.0)


def _gamma_slope(z, a):
    inside, w = _positive(z)
    return np.where(inside, (a - 1.0) / w - 1.0, 0.0)


def _gamma_a_partial(z, a):
    inside, w = _positive(z)
    return np.where(inside, np.log(w) - special.digamma(a), 0.0)


def _chi2_slope(z, df):
    inside, w = _positive(z)
    return np.where(inside, (df / 2.0 - 1.0) / w - 0.5, 0.0)


def _chi2_df_partial(z, df):
    inside, w = _positive(z)
    return np.where(inside, 0.5 * (np.log(w) - np.log(2.0) - special.digamma(df / 2.0)), 0.0)


def _unit(z):
    """(inside (0, 1), z with the points outside replaced by 0.5)."""
    inside = (z > 0) & (z < 1)
    return inside, np.where(inside, z, 0.5)


def _beta_slope(z, a, b):
    inside, w = _unit(z)
    return np.where(inside, (a - 1.0) / w - (b - 1.0) / (1.0 - w), 0.0)


def _beta_a_partial(z, a, b):
    inside, w = _unit(z)
    return np.where(inside, np.log(w) - special.digamma(a) + special.digamma(a + b), 0.0)


def _beta_b_partial(z, a, b):
    inside, w = _unit(z)
    return np.where(inside, np.log1p(-w) - special.digamma(b) + special.digamma(a + b), 0.0)


# ----- norm -----


@adjoint(stats.norm.logpdf)
def norm_logpdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy, _norm_slope(z), z, x, loc, scale)


@tangent(stats.norm.logpdf)
def norm_logpdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_density_tangent(tangents, 0, _norm_slope(z), z, scale), y)


@adjoint(stats.norm.pdf)
def norm_pdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy * y, _norm_slope(z), z, x, loc, scale)


@tangent(stats.norm.pdf)
def norm_pdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return y * _density_tangent(tangents, 0, _norm_slope(z), z, scale)


@adjoint(stats.norm.cdf)
def norm_cdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, stats.norm.pdf(z), z, x, loc, scale)


@tangent(stats.norm.cdf)
def norm_cdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, stats.norm.pdf(z), z, scale), y)


@adjoint(stats.norm.sf)
def norm_sf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -stats.norm.pdf(z), z, x, loc, scale)


@tangent(stats.norm.sf)
def norm_sf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -stats.norm.pdf(z), z, scale), y)


@adjoint(stats.norm.logcdf)
def norm_logcdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, _log_ratio(stats.norm.logpdf(z), y), z, x, loc, scale)


@tangent(stats.norm.logcdf)
def norm_logcdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, _log_ratio(stats.norm.logpdf(z), y), z, scale), y)


@adjoint(stats.norm.logsf)
def norm_logsf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -_log_ratio(stats.norm.logpdf(z), y), z, x, loc, scale)


@tangent(stats.norm.logsf)
def norm_logsf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -_log_ratio(stats.norm.logpdf(z), y), z, scale), y)


# ----- expon -----


@adjoint(stats.expon.logpdf)
def expon_logpdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy, _expon_slope(z), z, x, loc, scale)


@tangent(stats.expon.logpdf)
def expon_logpdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_density_tangent(tangents, 0, _expon_slope(z), z, scale), y)


@adjoint(stats.expon.pdf)
def expon_pdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy * y, _expon_slope(z), z, x, loc, scale)


@tangent(stats.expon.pdf)
def expon_pdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return y * _density_tangent(tangents, 0, _expon_slope(z), z, scale)


@adjoint(stats.expon.cdf)
def expon_cdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, stats.expon.pdf(z), z, x, loc, scale)


@tangent(stats.expon.cdf)
def expon_cdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, stats.expon.pdf(z), z, scale), y)


@adjoint(stats.expon.sf)
def expon_sf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -stats.expon.pdf(z), z, x, loc, scale)


@tangent(stats.expon.sf)
def expon_sf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -stats.expon.pdf(z), z, scale), y)


@adjoint(stats.expon.logcdf)
def expon_logcdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, _log_ratio(stats.expon.logpdf(z), y), z, x, loc, scale)


@tangent(stats.expon.logcdf)
def expon_logcdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, _log_ratio(stats.expon.logpdf(z), y), z, scale), y)


@adjoint(stats.expon.logsf)
def expon_logsf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -_log_ratio(stats.expon.logpdf(z), y), z, x, loc, scale)


@tangent(stats.expon.logsf)
def expon_logsf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -_log_ratio(stats.expon.logpdf(z), y), z, scale), y)


# ----- laplace -----


@adjoint(stats.laplace.logpdf)
def laplace_logpdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy, _laplace_slope(z), z, x, loc, scale)


@tangent(stats.laplace.logpdf)
def laplace_logpdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_density_tangent(tangents, 0, _laplace_slope(z), z, scale), y)


@adjoint(stats.laplace.pdf)
def laplace_pdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy * y, _laplace_slope(z), z, x, loc, scale)


@tangent(stats.laplace.pdf)
def laplace_pdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return y * _density_tangent(tangents, 0, _laplace_slope(z), z, scale)


@adjoint(stats.laplace.cdf)
def laplace_cdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, stats.laplace.pdf(z), z, x, loc, scale)


@tangent(stats.laplace.cdf)
def laplace_cdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, stats.laplace.pdf(z), z, scale), y)


@adjoint(stats.laplace.sf)
def laplace_sf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -stats.laplace.pdf(z), z, x, loc, scale)


@tangent(stats.laplace.sf)
def laplace_sf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -stats.laplace.pdf(z), z, scale), y)


@adjoint(stats.laplace.logcdf)
def laplace_logcdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, _log_ratio(stats.laplace.logpdf(z), y), z, x, loc, scale)


@tangent(stats.laplace.logcdf)
def laplace_logcdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, _log_ratio(stats.laplace.logpdf(z), y), z, scale), y)


@adjoint(stats.laplace.logsf)
def laplace_logsf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -_log_ratio(stats.laplace.logpdf(z), y), z, x, loc, scale)


@tangent(stats.laplace.logsf)
def laplace_logsf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -_log_ratio(stats.laplace.logpdf(z), y), z, scale), y)


# ----- cauchy -----


@adjoint(stats.cauchy.logpdf)
def cauchy_logpdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy, _cauchy_slope(z), z, x, loc, scale)


@tangent(stats.cauchy.logpdf)
def cauchy_logpdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_density_tangent(tangents, 0, _cauchy_slope(z), z, scale), y)


@adjoint(stats.cauchy.pdf)
def cauchy_pdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy * y, _cauchy_slope(z), z, x, loc, scale)


@tangent(stats.cauchy.pdf)
def cauchy_pdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return y * _density_tangent(tangents, 0, _cauchy_slope(z), z, scale)


@adjoint(stats.cauchy.cdf)
def cauchy_cdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, stats.cauchy.pdf(z), z, x, loc, scale)


@tangent(stats.cauchy.cdf)
def cauchy_cdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, stats.cauchy.pdf(z), z, scale), y)


@adjoint(stats.cauchy.sf)
def cauchy_sf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -stats.cauchy.pdf(z), z, x, loc, scale)


@tangent(stats.cauchy.sf)
def cauchy_sf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -stats.cauchy.pdf(z), z, scale), y)


@adjoint(stats.cauchy.logcdf)
def cauchy_logcdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, _log_ratio(stats.cauchy.logpdf(z), y), z, x, loc, scale)


@tangent(stats.cauchy.logcdf)
def cauchy_logcdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, _log_ratio(stats.cauchy.logpdf(z), y), z, scale), y)


@adjoint(stats.cauchy.logsf)
def cauchy_logsf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -_log_ratio(stats.cauchy.logpdf(z), y), z, x, loc, scale)


@tangent(stats.cauchy.logsf)
def cauchy_logsf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -_log_ratio(stats.cauchy.logpdf(z), y), z, scale), y)


# ----- logistic -----


@adjoint(stats.logistic.logpdf)
def logistic_logpdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy, _logistic_slope(z), z, x, loc, scale)


@tangent(stats.logistic.logpdf)
def logistic_logpdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_density_tangent(tangents, 0, _logistic_slope(z), z, scale), y)


@adjoint(stats.logistic.pdf)
def logistic_pdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _density_adjoints(dy * y, _logistic_slope(z), z, x, loc, scale)


@tangent(stats.logistic.pdf)
def logistic_pdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return y * _density_tangent(tangents, 0, _logistic_slope(z), z, scale)


@adjoint(stats.logistic.cdf)
def logistic_cdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, stats.logistic.pdf(z), z, x, loc, scale)


@tangent(stats.logistic.cdf)
def logistic_cdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, stats.logistic.pdf(z), z, scale), y)


@adjoint(stats.logistic.sf)
def logistic_sf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -stats.logistic.pdf(z), z, x, loc, scale)


@tangent(stats.logistic.sf)
def logistic_sf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -stats.logistic.pdf(z), z, scale), y)


@adjoint(stats.logistic.logcdf)
def logistic_logcdf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, _log_ratio(stats.logistic.logpdf(z), y), z, x, loc, scale)


@tangent(stats.logistic.logcdf)
def logistic_logcdf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, _log_ratio(stats.logistic.logpdf(z), y), z, scale), y)


@adjoint(stats.logistic.logsf)
def logistic_logsf_adjoint(dy, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return _tail_adjoints(dy, -_log_ratio(stats.logistic.logpdf(z), y), z, x, loc, scale)


@tangent(stats.logistic.logsf)
def logistic_logsf_tangent(tangents, y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return broadcast_like(_tail_tangent(tangents, 0, -_log_ratio(stats.logistic.logpdf(z), y), z, scale), y)


# ----- t -----


@adjoint(stats.t.logpdf)
def t_logpdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy, _t_slope(z, df), z, x, loc, scale)
    return (d_x, unbroadcast(dy * _t_df_partial(z, df), df), d_loc, d_scale)


@tangent(stats.t.logpdf)
def t_logpdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _t_df_partial(z, df)
    return broadcast_like(_density_tangent(tangents, 1, _t_slope(z, df), z, scale) + t_shapes, y)


@adjoint(stats.t.pdf)
def t_pdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy * y, _t_slope(z, df), z, x, loc, scale)
    return (d_x, unbroadcast(dy * y * _t_df_partial(z, df), df), d_loc, d_scale)


@tangent(stats.t.pdf)
def t_pdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _t_df_partial(z, df)
    return y * (_density_tangent(tangents, 1, _t_slope(z, df), z, scale) + t_shapes)


@adjoint(stats.t.cdf)
def t_cdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * stats.t.pdf(z, df) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _t_cdf_ddf(z, df), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.t.cdf)
def t_cdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _t_df_tangent(_tangent_of(tangents, 1), z, df)
    return broadcast_like(_tail_tangent(tangents, 1, stats.t.pdf(z, df), z, scale) + t_shapes, y)


@adjoint(stats.t.sf)
def t_sf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * stats.t.pdf(z, df) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _t_cdf_ddf(z, df), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.t.sf)
def t_sf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_t_df_tangent(_tangent_of(tangents, 1), z, df)
    return broadcast_like(_tail_tangent(tangents, 1, -stats.t.pdf(z, df), z, scale) + t_shapes, y)


@adjoint(stats.t.logcdf)
def t_logcdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * _log_ratio(stats.t.logpdf(z, df), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _per_value(_t_cdf_ddf(z, df), y), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.t.logcdf)
def t_logcdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _per_value(_t_df_tangent(_tangent_of(tangents, 1), z, df), y)
    return broadcast_like(_tail_tangent(tangents, 1, _log_ratio(stats.t.logpdf(z, df), y), z, scale) + t_shapes, y)


@adjoint(stats.t.logsf)
def t_logsf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * _log_ratio(stats.t.logpdf(z, df), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _per_value(_t_cdf_ddf(z, df), y), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.t.logsf)
def t_logsf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_per_value(_t_df_tangent(_tangent_of(tangents, 1), z, df), y)
    return broadcast_like(_tail_tangent(tangents, 1, -_log_ratio(stats.t.logpdf(z, df), y), z, scale) + t_shapes, y)


# ----- gamma -----


@adjoint(stats.gamma.logpdf)
def gamma_logpdf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy, _gamma_slope(z, a), z, x, loc, scale)
    return (d_x, unbroadcast(dy * _gamma_a_partial(z, a), a), d_loc, d_scale)


@tangent(stats.gamma.logpdf)
def gamma_logpdf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _gamma_a_partial(z, a)
    return broadcast_like(_density_tangent(tangents, 1, _gamma_slope(z, a), z, scale) + t_shapes, y)


@adjoint(stats.gamma.pdf)
def gamma_pdf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy * y, _gamma_slope(z, a), z, x, loc, scale)
    return (d_x, unbroadcast(dy * y * _gamma_a_partial(z, a), a), d_loc, d_scale)


@tangent(stats.gamma.pdf)
def gamma_pdf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _gamma_a_partial(z, a)
    return y * (_density_tangent(tangents, 1, _gamma_slope(z, a), z, scale) + t_shapes)


@adjoint(stats.gamma.cdf)
def gamma_cdf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * stats.gamma.pdf(z, a) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _gammainc_da(a, z), a),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.gamma.cdf)
def gamma_cdf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _gamma_a_tangent(_tangent_of(tangents, 1), z, a)
    return broadcast_like(_tail_tangent(tangents, 1, stats.gamma.pdf(z, a), z, scale) + t_shapes, y)


@adjoint(stats.gamma.sf)
def gamma_sf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * stats.gamma.pdf(z, a) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _gammainc_da(a, z), a),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.gamma.sf)
def gamma_sf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_gamma_a_tangent(_tangent_of(tangents, 1), z, a)
    return broadcast_like(_tail_tangent(tangents, 1, -stats.gamma.pdf(z, a), z, scale) + t_shapes, y)


@adjoint(stats.gamma.logcdf)
def gamma_logcdf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * _log_ratio(stats.gamma.logpdf(z, a), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _per_value(_gammainc_da(a, z), y), a),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.gamma.logcdf)
def gamma_logcdf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _per_value(_gamma_a_tangent(_tangent_of(tangents, 1), z, a), y)
    return broadcast_like(_tail_tangent(tangents, 1, _log_ratio(stats.gamma.logpdf(z, a), y), z, scale) + t_shapes, y)


@adjoint(stats.gamma.logsf)
def gamma_logsf_adjoint(dy, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * _log_ratio(stats.gamma.logpdf(z, a), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _per_value(_gammainc_da(a, z), y), a),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.gamma.logsf)
def gamma_logsf_tangent(tangents, y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_per_value(_gamma_a_tangent(_tangent_of(tangents, 1), z, a), y)
    return broadcast_like(_tail_tangent(tangents, 1, -_log_ratio(stats.gamma.logpdf(z, a), y), z, scale) + t_shapes, y)


# ----- chi2 -----


@adjoint(stats.chi2.logpdf)
def chi2_logpdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy, _chi2_slope(z, df), z, x, loc, scale)
    return (d_x, unbroadcast(dy * _chi2_df_partial(z, df), df), d_loc, d_scale)


@tangent(stats.chi2.logpdf)
def chi2_logpdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _chi2_df_partial(z, df)
    return broadcast_like(_density_tangent(tangents, 1, _chi2_slope(z, df), z, scale) + t_shapes, y)


@adjoint(stats.chi2.pdf)
def chi2_pdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy * y, _chi2_slope(z, df), z, x, loc, scale)
    return (d_x, unbroadcast(dy * y * _chi2_df_partial(z, df), df), d_loc, d_scale)


@tangent(stats.chi2.pdf)
def chi2_pdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _chi2_df_partial(z, df)
    return y * (_density_tangent(tangents, 1, _chi2_slope(z, df), z, scale) + t_shapes)


@adjoint(stats.chi2.cdf)
def chi2_cdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * stats.chi2.pdf(z, df) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _chi2_cdf_ddf(z, df), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.chi2.cdf)
def chi2_cdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _chi2_df_tangent(_tangent_of(tangents, 1), z, df)
    return broadcast_like(_tail_tangent(tangents, 1, stats.chi2.pdf(z, df), z, scale) + t_shapes, y)


@adjoint(stats.chi2.sf)
def chi2_sf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * stats.chi2.pdf(z, df) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _chi2_cdf_ddf(z, df), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.chi2.sf)
def chi2_sf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_chi2_df_tangent(_tangent_of(tangents, 1), z, df)
    return broadcast_like(_tail_tangent(tangents, 1, -stats.chi2.pdf(z, df), z, scale) + t_shapes, y)


@adjoint(stats.chi2.logcdf)
def chi2_logcdf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * _log_ratio(stats.chi2.logpdf(z, df), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _per_value(_chi2_cdf_ddf(z, df), y), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.chi2.logcdf)
def chi2_logcdf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _per_value(_chi2_df_tangent(_tangent_of(tangents, 1), z, df), y)
    return broadcast_like(_tail_tangent(tangents, 1, _log_ratio(stats.chi2.logpdf(z, df), y), z, scale) + t_shapes, y)


@adjoint(stats.chi2.logsf)
def chi2_logsf_adjoint(dy, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * _log_ratio(stats.chi2.logpdf(z, df), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _per_value(_chi2_cdf_ddf(z, df), y), df),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.chi2.logsf)
def chi2_logsf_tangent(tangents, y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_per_value(_chi2_df_tangent(_tangent_of(tangents, 1), z, df), y)
    return broadcast_like(_tail_tangent(tangents, 1, -_log_ratio(stats.chi2.logpdf(z, df), y), z, scale) + t_shapes, y)


# ----- beta -----


@adjoint(stats.beta.logpdf)
def beta_logpdf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy, _beta_slope(z, a, b), z, x, loc, scale)
    return (
        d_x,
        unbroadcast(dy * _beta_a_partial(z, a, b), a),
        unbroadcast(dy * _beta_b_partial(z, a, b), b),
        d_loc,
        d_scale,
    )


@tangent(stats.beta.logpdf)
def beta_logpdf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _beta_a_partial(z, a, b) + _tangent_of(tangents, 2) * _beta_b_partial(z, a, b)
    return broadcast_like(_density_tangent(tangents, 2, _beta_slope(z, a, b), z, scale) + t_shapes, y)


@adjoint(stats.beta.pdf)
def beta_pdf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_x, d_loc, d_scale = _density_adjoints(dy * y, _beta_slope(z, a, b), z, x, loc, scale)
    return (
        d_x,
        unbroadcast(dy * y * _beta_a_partial(z, a, b), a),
        unbroadcast(dy * y * _beta_b_partial(z, a, b), b),
        d_loc,
        d_scale,
    )


@tangent(stats.beta.pdf)
def beta_pdf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _tangent_of(tangents, 1) * _beta_a_partial(z, a, b) + _tangent_of(tangents, 2) * _beta_b_partial(z, a, b)
    return y * (_density_tangent(tangents, 2, _beta_slope(z, a, b), z, scale) + t_shapes)


@adjoint(stats.beta.cdf)
def beta_cdf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * stats.beta.pdf(z, a, b) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _betainc_da(a, b, z), a),
        unbroadcast(dy * _betainc_db(a, b, z), b),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.beta.cdf)
def beta_cdf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _beta_shapes_tangent(_tangent_of(tangents, 1), _tangent_of(tangents, 2), z, a, b)
    return broadcast_like(_tail_tangent(tangents, 2, stats.beta.pdf(z, a, b), z, scale) + t_shapes, y)


@adjoint(stats.beta.sf)
def beta_sf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * stats.beta.pdf(z, a, b) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _betainc_da(a, b, z), a),
        unbroadcast(-dy * _betainc_db(a, b, z), b),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.beta.sf)
def beta_sf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_beta_shapes_tangent(_tangent_of(tangents, 1), _tangent_of(tangents, 2), z, a, b)
    return broadcast_like(_tail_tangent(tangents, 2, -stats.beta.pdf(z, a, b), z, scale) + t_shapes, y)


@adjoint(stats.beta.logcdf)
def beta_logcdf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = dy * _log_ratio(stats.beta.logpdf(z, a, b), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(dy * _per_value(_betainc_da(a, b, z), y), a),
        unbroadcast(dy * _per_value(_betainc_db(a, b, z), y), b),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.beta.logcdf)
def beta_logcdf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = _per_value(_beta_shapes_tangent(_tangent_of(tangents, 1), _tangent_of(tangents, 2), z, a, b), y)
    return broadcast_like(_tail_tangent(tangents, 2, _log_ratio(stats.beta.logpdf(z, a, b), y), z, scale) + t_shapes, y)


@adjoint(stats.beta.logsf)
def beta_logsf_adjoint(dy, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d_z = -dy * _log_ratio(stats.beta.logpdf(z, a, b), y) / scale
    return (
        unbroadcast(d_z, x),
        unbroadcast(-dy * _per_value(_betainc_da(a, b, z), y), a),
        unbroadcast(-dy * _per_value(_betainc_db(a, b, z), y), b),
        unbroadcast(-d_z, loc),
        unbroadcast(-(d_z * z), scale),
    )


@tangent(stats.beta.logsf)
def beta_logsf_tangent(tangents, y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    t_shapes = -_per_value(_beta_shapes_tangent(_tangent_of(tangents, 1), _tangent_of(tangents, 2), z, a, b), y)
    h = -_log_ratio(stats.beta.logpdf(z, a, b), y)
    return broadcast_like(_tail_tangent(tangents, 2, h, z, scale) + t_shapes, y)


# ----- poisson -----
# The pmf of k - loc at mu; k gets no gradient, and an integer `loc` that carries one is
# refused (the adjoints stop before it).


def _poisson_slope(k, mu, loc):
    """d logpmf / d mu = k / mu - 1 at the support's integers (k / mu read as 0 at k == 0), else 0."""
    n = k - loc
    inside = (n >= 0) & (n == np.floor(n))
    return np.where(inside, n / np.where(n == 0, 1.0, mu) - 1.0, 0.0)


def _poisson_cdf_slope(k, mu, loc):
    """d cdf / d mu = -pmf(floor(k - loc), mu)."""
    return -stats.poisson.pmf(np.floor(k - loc), mu)


def _poisson_log_cdf_slope(k, mu, loc, y):
    return -_log_ratio(stats.poisson.logpmf(np.floor(k - loc), mu), y)


@adjoint(stats.poisson.logpmf)
def poisson_logpmf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(dy * _poisson_slope(k, mu, loc), mu))


@tangent(stats.poisson.logpmf)
def poisson_logpmf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(_tangent_of(tangents, 1) * _poisson_slope(k, mu, loc), y)


@adjoint(stats.poisson.pmf)
def poisson_pmf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(dy * y * _poisson_slope(k, mu, loc), mu))


@tangent(stats.poisson.pmf)
def poisson_pmf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(_tangent_of(tangents, 1) * y * _poisson_slope(k, mu, loc), y)


@adjoint(stats.poisson.cdf)
def poisson_cdf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(dy * _poisson_cdf_slope(k, mu, loc), mu))


@tangent(stats.poisson.cdf)
def poisson_cdf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(_tangent_of(tangents, 1) * _poisson_cdf_slope(k, mu, loc), y)


@adjoint(stats.poisson.sf)
def poisson_sf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(-dy * _poisson_cdf_slope(k, mu, loc), mu))


@tangent(stats.poisson.sf)
def poisson_sf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(-_tangent_of(tangents, 1) * _poisson_cdf_slope(k, mu, loc), y)


@adjoint(stats.poisson.logcdf)
def poisson_logcdf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(dy * _poisson_log_cdf_slope(k, mu, loc, y), mu))


@tangent(stats.poisson.logcdf)
def poisson_logcdf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(_tangent_of(tangents, 1) * _poisson_log_cdf_slope(k, mu, loc, y), y)


@adjoint(stats.poisson.logsf)
def poisson_logsf_adjoint(dy, y, k, mu, loc=0):
    return (None, unbroadcast(-dy * _poisson_log_sf_slope(k, mu, loc, y), mu))


@tangent(stats.poisson.logsf)
def poisson_logsf_tangent(tangents, y, k, mu, loc=0):
    return broadcast_like(-_tangent_of(tangents, 1) * _poisson_log_sf_slope(k, mu, loc, y), y)


def _poisson_log_sf_slope(k, mu, loc, y):
    """-(d logsf / d mu) = -pmf(floor(k - loc), mu) / sf."""
    return -_log_ratio(stats.poisson.logpmf(np.floor(k - loc), mu), y)


# ----- multivariate_normal -----
# logpdf = -(r^T J r + log det(2 pi cov)) / 2 for each row r = x - mean, J = cov^-1.
# With s = J r: d/dx = -s, d/dmean = s, d/dcov = (s s^T - J) / 2 (symmetric).


def _check_covariance(cov):
    if np.ndim(cov) != 2:
        raise located(
            "ssad differentiates scipy.stats.multivariate_normal with a 2-D covariance matrix only; "
            "pass `cov` as a matrix (np.diag(v) for a diagonal one, c * np.eye(d) for a scalar one)"
        )
    return cov


nondifferentiable(_check_covariance)


def _mvn_parts(x, mean, cov):
    """(r, s): the residuals x - mean and J r, one row per point."""
    _check_covariance(cov)
    r = x - _mvn_mean(mean)
    return r, np.linalg.solve(cov, r.T).T


def _mvn_mean(mean):
    if mean is None:
        return 0.0
    return mean


def _mvn_adjoints(dy, x, mean, cov):
    r, s = _mvn_parts(x, mean, cov)
    n = np.shape(cov)[-1]
    d_s = np.expand_dims(dy, -1) * s
    outer = np.reshape(d_s, (-1, n)).T @ np.reshape(s, (-1, n))
    d_cov = 0.5 * (outer - np.sum(dy) * np.linalg.inv(cov))
    return (unbroadcast(-d_s, x), unbroadcast(d_s, _mvn_mean(mean)), (d_cov + d_cov.T) / 2)


def _mvn_tangent(tangents, x, mean, cov):
    r, s = _mvn_parts(x, mean, cov)
    t_r = _tangent_of(tangents, 0) - _tangent_of(tangents, 1)
    t_cov = _tangent_of(tangents, 2) * np.ones(np.shape(cov))
    quadratic = np.sum((s @ t_cov) * s, axis=-1) - np.sum(np.linalg.inv(cov) * t_cov)
    return -np.sum(t_r * s, axis=-1) + 0.5 * quadratic


@adjoint(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf_adjoint(dy, y, x, mean=None, cov=1, allow_singular=False):
    return _mvn_adjoints(dy, x, mean, cov)


@tangent(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf_tangent(tangents, y, x, mean=None, cov=1, allow_singular=False):
    return broadcast_like(_mvn_tangent(tangents, x, mean, cov), y)


@adjoint(stats.multivariate_normal.pdf)
def multivariate_normal_pdf_adjoint(dy, y, x, mean=None, cov=1, allow_singular=False):
    return _mvn_adjoints(dy * y, x, mean, cov)


@tangent(stats.multivariate_normal.pdf)
def multivariate_normal_pdf_tangent(tangents, y, x, mean=None, cov=1, allow_singular=False):
    return y * _mvn_tangent(tangents, x, mean, cov)


# ----- dirichlet -----
# logpdf = sum((alpha - 1) log x) - sum(gammaln(alpha)) + gammaln(sum(alpha)) over the first
# axis of x; with K - 1 components given, SciPy appends 1 - sum(x) as the K-th.


def _dirichlet_full(x, alpha):
    """x with all K components along its first axis."""
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return x
    return np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)


def _column(alpha, x):
    """alpha shaped to broadcast along the first axis of x."""
    return np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))


def _dirichlet_adjoints(dy, x, alpha):
    full = _dirichlet_full(x, alpha)
    d_full = dy * (_column(alpha, full) - 1.0) / full
    d_x = d_full
    if np.shape(x)[0] != np.shape(alpha)[0]:
        d_x = d_full[:-1] - d_full[-1:]
    k = np.shape(alpha)[0]
    d_points = np.reshape(np.broadcast_to(dy, np.shape(full)[1:]), (-1,))
    logs = np.reshape(np.log(full), (k, -1))
    d_alpha = logs @ d_points + np.sum(d_points) * (special.digamma(np.sum(alpha)) - special.digamma(alpha))
    return (d_x, d_alpha)


def _dirichlet_tangent(tangents, x, alpha):
    full = _dirichlet_full(x, alpha)
    t_x = _tangent_of(tangents, 0) * np.ones(np.shape(x))
    if np.shape(x)[0] != np.shape(alpha)[0]:
        t_x = np.concatenate([t_x, -np.sum(t_x, axis=0, keepdims=True)], axis=0)
    t_alpha = _column(_tangent_of(tangents, 1) * np.ones(np.shape(alpha)), full)
    partial_alpha = np.log(full) - _column(special.digamma(alpha) - special.digamma(np.sum(alpha)), full)
    return np.sum(t_x * (_column(alpha, full) - 1.0) / full + t_alpha * partial_alpha, axis=0)


@adjoint(stats.dirichlet.logpdf)
def dirichlet_logpdf_adjoint(dy, y, x, alpha):
    return _dirichlet_adjoints(dy, x, alpha)


@tangent(stats.dirichlet.logpdf)
def dirichlet_logpdf_tangent(tangents, y, x, alpha):
    return broadcast_like(_dirichlet_tangent(tangents, x, alpha), y)


@adjoint(stats.dirichlet.pdf)
def dirichlet_pdf_adjoint(dy, y, x, alpha):
    return _dirichlet_adjoints(dy * y, x, alpha)


@tangent(stats.dirichlet.pdf)
def dirichlet_pdf_tangent(tangents, y, x, alpha):
    return y * _dirichlet_tangent(tangents, x, alpha)
