"""Rules: SciPy's special functions (scipy.special).

Registered once ``scipy.special`` is imported (see `registry.Registry.defer`).

Domain: real inputs -- Python floats, NumPy scalars and arrays that broadcast
together; every rule of a function of two arrays sums each adjoint back to its
input's shape with `unbroadcast`, and each tangent rule spreads its result to the
output's shape with `broadcast_like`. Each adjoint rule has a tangent rule right
after it, its exact transpose.

Second derivatives: every derivative below is written with functions that have rules
themselves (``digamma`` is the derivative of ``gammaln``, ``zeta(2, x)`` (= ``polygamma(1, x)``)
that of ``digamma``, ``-s zeta(s + 1, x)`` that of the Hurwitz ``zeta(s, x)``,
``polygamma(n + 1, x)`` that of ``polygamma(n, x)``; the Bessel functions
differentiate to Bessel functions of neighbouring orders), so ssad differentiates
the rules again for Hessians and gradients of gradients, to any order.

Conventions
-----------
- Orders and shapes that are integers carry no gradient: ``n`` of ``polygamma``,
  ``yn`` and ``jn``, ``d`` of ``multigammaln``; their adjoint is None.
- Continuous orders and shapes whose derivative has no closed form -- ``v`` of ``jv``,
  ``yv``, ``iv``, ``ive``, ``kv``, ``kve``, ``s`` of ``zeta`` (and the argument of
  Riemann's ``zeta(x)``) -- are refused: a
  gradient or a moving tangent asked for them raises `SsadError` naming the function
  and the parameter (`runtime.refusals`), never NaN or a silent zero. A constant order,
  even a float one, costs nothing.
- ``logsumexp``: where the result is -inf (every term of a slice is zero, e.g. all of
  ``a`` is -inf), ``a`` gets the gradient 0 and no NaN (as in JAX); ``b`` then gets
  ``exp(a)``. With ``b=`` the weights get a gradient too, ``exp(a - y)``. With
  ``return_sign=True`` the result is ``(value, sign)``; the sign is piecewise constant
  and carries no gradient (its tangent is 0).
- ``softmax``, ``log_softmax``: over ``axis`` (all elements for None), written with
  the result ``y`` so that they are exact where ``exp(x)`` would overflow.
- ``xlogy(x, y)``, ``xlog1py(x, y)``: the slope in ``x`` is ``log(y)`` (``log1p(y)``),
  -inf at ``y == 0`` (``y == -1``) as the formula gives; the slope in ``y`` is
  ``x / y`` (``x / (1 + y)``), which is 0 wherever ``x == 0``, at ``y == 0``
  (``y == -1``) too, since ``xlogy(0, y) = 0`` for every ``y``.
- ``entr(x) = -x log x``: slope ``-log(x) - 1``, which is +inf at 0 (the one-sided
  derivative, as for ``sqrt`` at 0). ``rel_entr(x, y)`` and ``kl_div``: slope in ``x``
  ``log(x / y) (+ 1)``, -inf at ``x == 0``; slope in ``y`` ``-x / y`` (``1 - x / y``),
  with ``x / y`` taken as 0 where ``x == 0``. Outside the domain (negative inputs,
  where the functions are constant ±inf) the formulas give NaN, as NumPy would.
- ``logit`` at 0 and 1: slope ``1 / (x (1 - x))`` = +inf, the true derivative.
  ``erfinv`` at ±1, ``ndtri`` at 0 and 1: +inf likewise.
- ``i0e``, ``i1e``, ``ive`` hold the factor ``exp(-|x|)``, which has a kink at 0;
  its slope there is taken as 0 (``np.sign(0)``, the convention of ``abs``).
- ``i1'(x) = (i0(x) + iv(2, x)) / 2`` and ``j1'(x) = (j0(x) - jv(2, x)) / 2``: the
  recurrences, with no division by ``x``, so exact at 0 (``i1'(0) = 1/2``).
- ``log_ndtr'(x) = exp(-x**2 / 2 - log_ndtr(x)) / sqrt(2 pi)``: finite for very
  negative ``x``, where ``ndtr(x)`` underflows to 0.
- ``gammainc(a, x)`` in ``x``: ``exp(-x + xlogy(a - 1, x) - gammaln(a))``, exact at
  ``x == 0`` for ``a == 1``; in ``a`` (and ``gammaincc`` in ``a``): an integral per
  element (`rules.scipy_incomplete`, about 0.5 ms each), whose own rules give second
  derivatives; a third derivative in ``a`` is refused.
- Complex inputs are not supported by most of these functions in SciPy; where they are
  (``erf``, ``gamma``, ``expit``...), the rules are the holomorphic formulas, which is
  what the convention of docs/conventions.md asks, but only real inputs are tested.
"""

import numpy as np
import scipy.special

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, unbroadcast
from ..runtime.refusals import no_derivative, refused_tangent
from .scipy_incomplete import _gammainc_da

_SQRT_PI = float(np.sqrt(np.pi))
_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))

# ----- Orders with no derivative -----


def _no_derivative_in_order(order, function, parameter):
    """The adjoint of a continuous order (`v` of `jv`, `a` of `gammainc`), whose derivative
    has no closed form: a `NoDerivative` that raises when used (never NaN, never a silent
    zero), dropped when the order carries no gradient; None for an integer order."""
    if isinstance(order, (int, np.integer)) or np.asarray(order).dtype.kind in "iub":
        return None
    return no_derivative(f"scipy.special.{function}", parameter)


def _order_tangent(t_order, function, parameter):
    """The tangent term of a continuous order: 0 when the order does not move (its
    tangent is None or zero); a moving order is refused (see `_no_derivative_in_order`)."""
    return refused_tangent(t_order, f"scipy.special.{function}", parameter)


# a refusal or zero: nothing to differentiate when a rule is differentiated again
nondifferentiable(_no_derivative_in_order, _order_tangent)


# ----- Piecewise constant -----

nondifferentiable(scipy.special.gammasgn)  # the sign of gamma(x)

# ----- Logistic functions -----


@adjoint(scipy.special.expit)
def expit_adjoint(dy, y, x):
    return (dy * y * (1 - y),)


@tangent(scipy.special.expit)
def expit_tangent(tangents, y, x):
    return tangents[0] * y * (1 - y)


@adjoint(scipy.special.logit)
def logit_adjoint(dy, y, x):
    return (dy / (x * (1 - x)),)


@tangent(scipy.special.logit)
def logit_tangent(tangents, y, x):
    return tangents[0] / (x * (1 - x))


@adjoint(scipy.special.log_expit)
def log_expit_adjoint(dy, y, x):
    return (dy * scipy.special.expit(-x),)


@tangent(scipy.special.log_expit)
def log_expit_tangent(tangents, y, x):
    return tangents[0] * scipy.special.expit(-x)


# ----- logsumexp, softmax, log_softmax -----


def _keep_reduced_axes(g, ndim, axis, keepdims):
    """`g`, the shape of a reduction over `axis` of an array of `ndim` dimensions, with
    the reduced axes put back as length 1, so that it broadcasts against that array."""
    if keepdims or axis is None:
        return g
    axes = axis if isinstance(axis, tuple) else (axis,)
    return np.expand_dims(g, tuple(int(ax) % ndim for ax in axes))


def _logsumexp_slopes(y, a, axis, b, keepdims, return_sign):
    """The slopes of logsumexp's value in `a` and in `b` (None without `b`), full size:
    ``sign * b * exp(a - value)`` and ``sign * exp(a - value)``. Where the value is -inf
    (every term zero) the shift is 0, so `a` gets 0 (not NaN) there."""
    ndim = max(np.ndim(a), np.ndim(b)) if b is not None else np.ndim(a)
    value = _keep_reduced_axes(y[0] if return_sign else y, ndim, axis, keepdims)
    weight = np.exp(a - np.where(value == -np.inf, 0.0, value))
    if return_sign:  # value = log|sum|: the slope of log|s| is 1 / s = sign / |s|
        weight = weight * _keep_reduced_axes(y[1], ndim, axis, keepdims)
    if b is None:
        return weight, None
    return b * weight, weight


def _weights_adjoint(d_value, slope_b, b, axis, keepdims):
    """The adjoint of logsumexp's `b=`; None when there are no weights."""
    if b is None:
        return None
    return unbroadcast(_keep_reduced_axes(d_value, np.ndim(slope_b), axis, keepdims) * slope_b, b)


@adjoint(scipy.special.logsumexp)
def logsumexp_adjoint(dy, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    slope_a, slope_b = _logsumexp_slopes(y, a, axis, b, keepdims, return_sign)
    d_value = dy[0] if return_sign else dy  # the sign carries no gradient
    d_a = unbroadcast(_keep_reduced_axes(d_value, np.ndim(slope_a), axis, keepdims) * slope_a, a)
    # `b` gets its adjoint at its own position (ssad passes an active `b=` there); without
    # `b` the call may have a single positional argument, and so does the tuple
    return (d_a, None, _weights_adjoint(d_value, slope_b, b, axis, keepdims))[: 1 if b is None else 3]


def _weights_tangent(tangents, slope_b):
    """The tangent term of logsumexp's `b=` (its tangent is the third, when `b` is given)."""
    if slope_b is None or len(tangents) < 3 or tangents[2] is None:
        return 0.0
    return tangents[2] * slope_b


@tangent(scipy.special.logsumexp)
def logsumexp_tangent(tangents, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    slope_a, slope_b = _logsumexp_slopes(y, a, axis, b, keepdims, return_sign)
    terms = tangents[0] * slope_a + _weights_tangent(tangents, slope_b)
    if return_sign:
        return (broadcast_like(np.sum(terms, axis=axis, keepdims=keepdims), y[0]), np.zeros_like(y[1]))
    return broadcast_like(np.sum(terms, axis=axis, keepdims=keepdims), y)


@adjoint(scipy.special.softmax)
def softmax_adjoint(dy, y, x, axis=None):
    return (y * (dy - np.sum(dy * y, axis=axis, keepdims=True)),)


@tangent(scipy.special.softmax)
def softmax_tangent(tangents, y, x, axis=None):
    return y * (tangents[0] - np.sum(tangents[0] * y, axis=axis, keepdims=True))


@adjoint(scipy.special.log_softmax)
def log_softmax_adjoint(dy, y, x, axis=None):
    return (dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True),)


@tangent(scipy.special.log_softmax)
def log_softmax_tangent(tangents, y, x, axis=None):
    return tangents[0] - np.sum(np.exp(y) * tangents[0], axis=axis, keepdims=True)


# ----- Gamma and beta functions -----


@adjoint(scipy.special.gammaln)
def gammaln_adjoint(dy, y, x):
    return (dy * scipy.special.digamma(x),)


@tangent(scipy.special.gammaln)
def gammaln_tangent(tangents, y, x):
    return tangents[0] * scipy.special.digamma(x)


@adjoint(scipy.special.gamma)
def gamma_adjoint(dy, y, x):
    return (dy * y * scipy.special.digamma(x),)


@tangent(scipy.special.gamma)
def gamma_tangent(tangents, y, x):
    return tangents[0] * y * scipy.special.digamma(x)


@adjoint(scipy.special.rgamma)
def rgamma_adjoint(dy, y, x):
    return (-dy * y * scipy.special.digamma(x),)


@tangent(scipy.special.rgamma)
def rgamma_tangent(tangents, y, x):
    return -tangents[0] * y * scipy.special.digamma(x)


# digamma' = polygamma(1, x) = zeta(2, x): the Hurwitz zeta function is a ufunc (a Dask
# array stays lazy), where polygamma converts its input with np.asarray.


@adjoint(scipy.special.digamma)  # also scipy.special.psi, the same ufunc
def digamma_adjoint(dy, y, x):
    return (dy * scipy.special.zeta(2, x),)


@tangent(scipy.special.digamma)
def digamma_tangent(tangents, y, x):
    return tangents[0] * scipy.special.zeta(2, x)


def _zeta_slope(x, q):
    """d/dq zeta(x, q) = -x zeta(x + 1, q) (the Hurwitz zeta function)."""
    return -x * scipy.special.zeta(x + 1, q)


@adjoint(scipy.special.zeta)
def zeta_adjoint(dy, y, x, q=None, out=None):
    # x: no closed form (refused, or None for an integer x). Riemann's zeta (q None) has one argument.
    d_q = None if q is None else unbroadcast(dy * _zeta_slope(x, q), q)
    return (_no_derivative_in_order(x, "zeta", "x"), d_q)[: 1 if q is None else 2]


def _zeta_q_tangent(tangents, x, q):
    if q is None or tangents[1] is None:
        return 0.0
    return tangents[1] * _zeta_slope(x, q)


@tangent(scipy.special.zeta)
def zeta_tangent(tangents, y, x, q=None, out=None):
    return broadcast_like(_zeta_q_tangent(tangents, x, q) + _order_tangent(tangents[0], "zeta", "x"), y)


@adjoint(scipy.special.polygamma)
def polygamma_adjoint(dy, y, n, x):
    return (None, unbroadcast(dy * scipy.special.polygamma(n + 1, x), x))


@tangent(scipy.special.polygamma)
def polygamma_tangent(tangents, y, n, x):
    return broadcast_like(tangents[1] * scipy.special.polygamma(n + 1, x), y)


def _multigammaln_slope(a, d):
    """d/da multigammaln(a, d) = sum over j < d of digamma(a - j / 2)."""
    total = 0.0
    for j in range(int(d)):
        total = total + scipy.special.digamma(a - 0.5 * j)
    return total


@adjoint(scipy.special.multigammaln)
def multigammaln_adjoint(dy, y, a, d):
    return (dy * _multigammaln_slope(a, d), None)


@tangent(scipy.special.multigammaln)
def multigammaln_tangent(tangents, y, a, d):
    return tangents[0] * _multigammaln_slope(a, d)


@adjoint(scipy.special.betaln)
def betaln_adjoint(dy, y, a, b):
    total = scipy.special.digamma(a + b)
    return (
        unbroadcast(dy * (scipy.special.digamma(a) - total), a),
        unbroadcast(dy * (scipy.special.digamma(b) - total), b),
    )


@tangent(scipy.special.betaln)
def betaln_tangent(tangents, y, a, b):
    total = scipy.special.digamma(a + b)
    slope_a, slope_b = scipy.special.digamma(a) - total, scipy.special.digamma(b) - total
    return broadcast_like(tangents[0] * slope_a + tangents[1] * slope_b, y)


@adjoint(scipy.special.beta)
def beta_adjoint(dy, y, a, b):
    total = scipy.special.digamma(a + b)
    return (
        unbroadcast(dy * y * (scipy.special.digamma(a) - total), a),
        unbroadcast(dy * y * (scipy.special.digamma(b) - total), b),
    )


@tangent(scipy.special.beta)
def beta_tangent(tangents, y, a, b):
    total = scipy.special.digamma(a + b)
    slope_a, slope_b = scipy.special.digamma(a) - total, scipy.special.digamma(b) - total
    return broadcast_like(y * (tangents[0] * slope_a + tangents[1] * slope_b), y)


def _gammainc_slope(a, x):
    """d/dx gammainc(a, x) = x**(a - 1) exp(-x) / gamma(a), in logarithms."""
    return np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))


@adjoint(scipy.special.gammainc)
def gammainc_adjoint(dy, y, a, x):
    return (unbroadcast(dy * _gammainc_da(a, x), a), unbroadcast(dy * _gammainc_slope(a, x), x))


@tangent(scipy.special.gammainc)
def gammainc_tangent(tangents, y, a, x):
    return broadcast_like(tangents[1] * _gammainc_slope(a, x) + _along_a(tangents[0], a, x), y)


@adjoint(scipy.special.gammaincc)
def gammaincc_adjoint(dy, y, a, x):
    return (unbroadcast(-dy * _gammainc_da(a, x), a), unbroadcast(-dy * _gammainc_slope(a, x), x))


@tangent(scipy.special.gammaincc)
def gammaincc_tangent(tangents, y, a, x):
    return broadcast_like(-tangents[1] * _gammainc_slope(a, x) - _along_a(tangents[0], a, x), y)


def _along_a(t_a, a, x):
    """t_a * d gammainc(a, x) / d a (an integral per element, `rules.scipy_incomplete`);
    0.0, with nothing integrated, when `a` does not move."""
    if t_a is None or not np.any(np.not_equal(t_a, 0.0)):
        return 0.0
    return t_a * _gammainc_da(a, x)


# ----- Error functions and the normal distribution -----


@adjoint(scipy.special.erf)
def erf_adjoint(dy, y, x):
    return (dy * (2 / _SQRT_PI) * np.exp(-x * x),)


@tangent(scipy.special.erf)
def erf_tangent(tangents, y, x):
    return tangents[0] * (2 / _SQRT_PI) * np.exp(-x * x)


@adjoint(scipy.special.erfc)
def erfc_adjoint(dy, y, x):
    return (dy * (-2 / _SQRT_PI) * np.exp(-x * x),)


@tangent(scipy.special.erfc)
def erfc_tangent(tangents, y, x):
    return tangents[0] * (-2 / _SQRT_PI) * np.exp(-x * x)


@adjoint(scipy.special.erfinv)
def erfinv_adjoint(dy, y, x):
    return (dy * (_SQRT_PI / 2) * np.exp(y * y),)


@tangent(scipy.special.erfinv)
def erfinv_tangent(tangents, y, x):
    return tangents[0] * (_SQRT_PI / 2) * np.exp(y * y)


@adjoint(scipy.special.erfcinv)
def erfcinv_adjoint(dy, y, x):
    return (dy * (-_SQRT_PI / 2) * np.exp(y * y),)


@tangent(scipy.special.erfcinv)
def erfcinv_tangent(tangents, y, x):
    return tangents[0] * (-_SQRT_PI / 2) * np.exp(y * y)


@adjoint(scipy.special.erfcx)
def erfcx_adjoint(dy, y, x):
    return (dy * (2 * x * y - 2 / _SQRT_PI),)


@tangent(scipy.special.erfcx)
def erfcx_tangent(tangents, y, x):
    return tangents[0] * (2 * x * y - 2 / _SQRT_PI)


@adjoint(scipy.special.ndtr)
def ndtr_adjoint(dy, y, x):
    return (dy * np.exp(-0.5 * x * x - _LOG_SQRT_2PI),)


@tangent(scipy.special.ndtr)
def ndtr_tangent(tangents, y, x):
    return tangents[0] * np.exp(-0.5 * x * x - _LOG_SQRT_2PI)


@adjoint(scipy.special.log_ndtr)
def log_ndtr_adjoint(dy, y, x):
    return (dy * np.exp(-0.5 * x * x - _LOG_SQRT_2PI - y),)


@tangent(scipy.special.log_ndtr)
def log_ndtr_tangent(tangents, y, x):
    return tangents[0] * np.exp(-0.5 * x * x - _LOG_SQRT_2PI - y)


@adjoint(scipy.special.ndtri)
def ndtri_adjoint(dy, y, x):
    return (dy * np.exp(0.5 * y * y + _LOG_SQRT_2PI),)


@tangent(scipy.special.ndtri)
def ndtri_tangent(tangents, y, x):
    return tangents[0] * np.exp(0.5 * y * y + _LOG_SQRT_2PI)


# ----- Logarithms of products, entropies -----


def _ratio(x, y):
    """x / y, taken as 0 wherever x == 0 (even at y == 0). Only the point x == y == 0 is
    moved, so the derivatives of the ratio elsewhere are those of x / y."""
    return x / np.where((x == 0) & (y == 0), 1.0, y)


@adjoint(scipy.special.xlogy)
def xlogy_adjoint(dy, y, x, z):
    return (unbroadcast(dy * np.log(z), x), unbroadcast(dy * _ratio(x, z), z))


@tangent(scipy.special.xlogy)
def xlogy_tangent(tangents, y, x, z):
    return broadcast_like(tangents[0] * np.log(z) + tangents[1] * _ratio(x, z), y)


@adjoint(scipy.special.xlog1py)
def xlog1py_adjoint(dy, y, x, z):
    return (unbroadcast(dy * np.log1p(z), x), unbroadcast(dy * _ratio(x, 1 + z), z))


@tangent(scipy.special.xlog1py)
def xlog1py_tangent(tangents, y, x, z):
    return broadcast_like(tangents[0] * np.log1p(z) + tangents[1] * _ratio(x, 1 + z), y)


@adjoint(scipy.special.entr)
def entr_adjoint(dy, y, x):
    return (dy * (-np.log(x) - 1),)


@tangent(scipy.special.entr)
def entr_tangent(tangents, y, x):
    return tangents[0] * (-np.log(x) - 1)


@adjoint(scipy.special.rel_entr)
def rel_entr_adjoint(dy, y, x, z):
    return (unbroadcast(dy * (np.log(x / z) + 1), x), unbroadcast(-dy * _ratio(x, z), z))


@tangent(scipy.special.rel_entr)
def rel_entr_tangent(tangents, y, x, z):
    return broadcast_like(tangents[0] * (np.log(x / z) + 1) - tangents[1] * _ratio(x, z), y)


@adjoint(scipy.special.kl_div)
def kl_div_adjoint(dy, y, x, z):
    return (unbroadcast(dy * np.log(x / z), x), unbroadcast(dy * (1 - _ratio(x, z)), z))


@tangent(scipy.special.kl_div)
def kl_div_tangent(tangents, y, x, z):
    return broadcast_like(tangents[0] * np.log(x / z) + tangents[1] * (1 - _ratio(x, z)), y)


# ----- Bessel functions of the first and second kind -----


@adjoint(scipy.special.j0)
def j0_adjoint(dy, y, x):
    return (-dy * scipy.special.j1(x),)


@tangent(scipy.special.j0)
def j0_tangent(tangents, y, x):
    return -tangents[0] * scipy.special.j1(x)


@adjoint(scipy.special.j1)
def j1_adjoint(dy, y, x):
    return (dy * (scipy.special.j0(x) - scipy.special.jv(2, x)) / 2,)


@tangent(scipy.special.j1)
def j1_tangent(tangents, y, x):
    return tangents[0] * (scipy.special.j0(x) - scipy.special.jv(2, x)) / 2


@adjoint(scipy.special.jv)  # also scipy.special.jn, the same ufunc
def jv_adjoint(dy, y, v, x):
    slope = (scipy.special.jv(v - 1, x) - scipy.special.jv(v + 1, x)) / 2
    return (_no_derivative_in_order(v, "jv", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.jv)
def jv_tangent(tangents, y, v, x):
    slope = (scipy.special.jv(v - 1, x) - scipy.special.jv(v + 1, x)) / 2
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "jv", "v"), y)


@adjoint(scipy.special.y0)
def y0_adjoint(dy, y, x):
    return (-dy * scipy.special.y1(x),)


@tangent(scipy.special.y0)
def y0_tangent(tangents, y, x):
    return -tangents[0] * scipy.special.y1(x)


@adjoint(scipy.special.y1)
def y1_adjoint(dy, y, x):
    return (dy * (scipy.special.y0(x) - scipy.special.yn(2, x)) / 2,)


@tangent(scipy.special.y1)
def y1_tangent(tangents, y, x):
    return tangents[0] * (scipy.special.y0(x) - scipy.special.yn(2, x)) / 2


@adjoint(scipy.special.yn)
def yn_adjoint(dy, y, n, x):
    slope = (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x)) / 2
    return (None, unbroadcast(dy * slope, x))


@tangent(scipy.special.yn)
def yn_tangent(tangents, y, n, x):
    return broadcast_like(tangents[1] * (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x)) / 2, y)


@adjoint(scipy.special.yv)
def yv_adjoint(dy, y, v, x):
    slope = (scipy.special.yv(v - 1, x) - scipy.special.yv(v + 1, x)) / 2
    return (_no_derivative_in_order(v, "yv", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.yv)
def yv_tangent(tangents, y, v, x):
    slope = (scipy.special.yv(v - 1, x) - scipy.special.yv(v + 1, x)) / 2
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "yv", "v"), y)


# ----- Modified Bessel functions -----


@adjoint(scipy.special.i0)
def i0_adjoint(dy, y, x):
    return (dy * scipy.special.i1(x),)


@tangent(scipy.special.i0)
def i0_tangent(tangents, y, x):
    return tangents[0] * scipy.special.i1(x)


@adjoint(scipy.special.i1)
def i1_adjoint(dy, y, x):
    return (dy * (scipy.special.i0(x) + scipy.special.iv(2, x)) / 2,)


@tangent(scipy.special.i1)
def i1_tangent(tangents, y, x):
    return tangents[0] * (scipy.special.i0(x) + scipy.special.iv(2, x)) / 2


@adjoint(scipy.special.iv)
def iv_adjoint(dy, y, v, x):
    slope = (scipy.special.iv(v - 1, x) + scipy.special.iv(v + 1, x)) / 2
    return (_no_derivative_in_order(v, "iv", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.iv)
def iv_tangent(tangents, y, v, x):
    slope = (scipy.special.iv(v - 1, x) + scipy.special.iv(v + 1, x)) / 2
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "iv", "v"), y)


# The exponentially scaled ones are f(x) exp(-|x|): the factor adds -sign(x) f.


@adjoint(scipy.special.i0e)
def i0e_adjoint(dy, y, x):
    return (dy * (scipy.special.i1e(x) - np.sign(x) * y),)


@tangent(scipy.special.i0e)
def i0e_tangent(tangents, y, x):
    return tangents[0] * (scipy.special.i1e(x) - np.sign(x) * y)


@adjoint(scipy.special.i1e)
def i1e_adjoint(dy, y, x):
    return (dy * ((scipy.special.i0e(x) + scipy.special.ive(2, x)) / 2 - np.sign(x) * y),)


@tangent(scipy.special.i1e)
def i1e_tangent(tangents, y, x):
    return tangents[0] * ((scipy.special.i0e(x) + scipy.special.ive(2, x)) / 2 - np.sign(x) * y)


@adjoint(scipy.special.ive)
def ive_adjoint(dy, y, v, x):
    slope = (scipy.special.ive(v - 1, x) + scipy.special.ive(v + 1, x)) / 2 - np.sign(x) * y
    return (_no_derivative_in_order(v, "ive", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.ive)
def ive_tangent(tangents, y, v, x):
    slope = (scipy.special.ive(v - 1, x) + scipy.special.ive(v + 1, x)) / 2 - np.sign(x) * y
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "ive", "v"), y)


@adjoint(scipy.special.k0)
def k0_adjoint(dy, y, x):
    return (-dy * scipy.special.k1(x),)


@tangent(scipy.special.k0)
def k0_tangent(tangents, y, x):
    return -tangents[0] * scipy.special.k1(x)


@adjoint(scipy.special.k1)
def k1_adjoint(dy, y, x):
    return (-dy * (scipy.special.k0(x) + scipy.special.kv(2, x)) / 2,)


@tangent(scipy.special.k1)
def k1_tangent(tangents, y, x):
    return -tangents[0] * (scipy.special.k0(x) + scipy.special.kv(2, x)) / 2


@adjoint(scipy.special.kv)
def kv_adjoint(dy, y, v, x):
    slope = -(scipy.special.kv(v - 1, x) + scipy.special.kv(v + 1, x)) / 2
    return (_no_derivative_in_order(v, "kv", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.kv)
def kv_tangent(tangents, y, v, x):
    slope = -(scipy.special.kv(v - 1, x) + scipy.special.kv(v + 1, x)) / 2
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "kv", "v"), y)


# k0e, k1e, kve are f(x) exp(x) (x > 0): the factor adds f.


@adjoint(scipy.special.k0e)
def k0e_adjoint(dy, y, x):
    return (dy * (y - scipy.special.k1e(x)),)


@tangent(scipy.special.k0e)
def k0e_tangent(tangents, y, x):
    return tangents[0] * (y - scipy.special.k1e(x))


@adjoint(scipy.special.k1e)
def k1e_adjoint(dy, y, x):
    return (dy * (y - (scipy.special.k0e(x) + scipy.special.kve(2, x)) / 2),)


@tangent(scipy.special.k1e)
def k1e_tangent(tangents, y, x):
    return tangents[0] * (y - (scipy.special.k0e(x) + scipy.special.kve(2, x)) / 2)


@adjoint(scipy.special.kve)
def kve_adjoint(dy, y, v, x):
    slope = y - (scipy.special.kve(v - 1, x) + scipy.special.kve(v + 1, x)) / 2
    return (_no_derivative_in_order(v, "kve", "v"), unbroadcast(dy * slope, x))


@tangent(scipy.special.kve)
def kve_tangent(tangents, y, v, x):
    slope = y - (scipy.special.kve(v - 1, x) + scipy.special.kve(v + 1, x)) / 2
    return broadcast_like(tangents[1] * slope + _order_tangent(tangents[0], "kve", "v"), y)
