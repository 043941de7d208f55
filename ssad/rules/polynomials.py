"""Rules: polynomials, interpolation, differences and integrals of sampled values.

``np.polyval``, ``np.polyfit``, ``np.vander``, ``np.polyder``, ``np.polyint``,
``np.polymul``, ``np.polyadd``, ``np.polysub``, ``np.interp``, ``np.trapezoid``,
``np.diff``, ``np.gradient``, ``np.unwrap`` and ``np.cross``.

Conventions
-----------
- Coefficients are 1-D arrays, highest power first, as NumPy's ``poly*`` functions take
  them (``np.poly1d`` objects are not differentiated). Complex inputs follow
  docs/conventions.md ("Complex numbers"): everything here but ``interp``'s sample
  positions is holomorphic (or linear) in its arrays, so the rules are the real
  formulas, and a real input's adjoint is real.
- ``polyval(p, x)``: gradients in ``p`` and ``x`` (``dy * polyval(polyder(p), x)``).
- ``vander(x, N, increasing)``: gradient in ``x``: each power times the next lower
  column, itself a ``vander`` (no negative power of ``x``), so it is exact at
  ``x == 0`` and differentiates again.
- ``polyfit(x, y, deg, w=w)``: the least-squares solution of the (weighted)
  Vandermonde system, differentiated in ``y``, ``w`` and ``x``. The derivative is that
  of the exact least-squares solution (normal equations with the columns scaled to
  unit length, as polyfit scales them), which needs a Vandermonde matrix of full
  column rank (``deg`` below the number of distinct ``x``); ``rcond`` is ignored.
  Its accuracy follows the square of that matrix's condition number: centre and
  scale ``x`` for high degrees, as for the fit itself. ``full=True`` and ``cov=True`` are refused
  with an SsadError (their extra outputs have no rule).
- ``interp(x, xp, fp, left, right)``: gradients in ``x``, ``xp``, ``fp`` and the
  ``left``/``right`` values; as JAX (autograd has no ``interp`` gradient): a point at
  a knot takes the slope of the segment to its right, except the last knot
  ``xp[-1]``, which takes the last segment's; outside ``[xp[0], xp[-1]]`` the slope in
  ``x`` is 0 and the gradient goes to ``left`` (``right``), or to ``fp[0]``
  (``fp[-1]``) when that is None. A segment of zero width (a repeated knot) has slope
  0, never NaN. ``period`` is refused with an SsadError. ``xp`` is real; the
  adjoints of ``x`` and ``xp`` are real.
- ``trapezoid(y, x, dx, axis)``: linear in ``y``; gradients in ``x`` (1-D, or shaped
  like ``y``) and in ``dx``, a scalar or an array that broadcasts.
- ``diff(a, n, axis, prepend, append)``: linear; gradients in ``a``, ``prepend`` and
  ``append`` (a scalar ``prepend``/``append`` gets the sum of its broadcast slice).
- ``gradient(f, *varargs, axis, edge_order)``: linear in ``f``; spacings are scalars
  (one for all axes, or one per axis) and get gradients too (the result is
  proportional to ``1 / h``); coordinate arrays are refused with an SsadError.
  ``edge_order`` 1 and 2. Several axes give a tuple, whose adjoint is a tuple.
- ``unwrap(p)``: ``p`` plus multiples of the period that are piecewise constant in
  ``p``; the derivative is 1 (the identity, the corrections held constant), as in
  JAX (whose corrections have derivative 0). Where a difference of neighbours sits
  exactly on the threshold the result jumps; the rule still gives 1 there.
- ``cross(a, b, axisa, axisb, axisc, axis)``: bilinear, 2- and 3-vectors, broadcasting.
- ``polyder(p, m)``, ``polyint(p, m, k)`` (``k`` an array, a scalar or None),
  ``polymul``, ``polyadd``, ``polysub``: linear or bilinear in the coefficients.
  ``polymul`` drops leading zero coefficients (NumPy reads its inputs as ``poly1d``):
  the rule takes inputs whose first coefficient is nonzero.
- Every adjoint has a tangent rule, its exact transpose. Tangent rules leave out the
  term of an argument whose tangent is zero (ssad passes the number 0.0 for the zero
  tangent of an array).
"""

import numpy as np

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, summed_at
from .elementwise import _is_complex
from .signal import _absent, _adjoint_of

# ----- Helpers -----


def _widths(ndim, axis, before, after):
    """np.pad's widths: `before` and `after` zeros along `axis` only."""
    widths = [(0, 0)] * ndim
    widths[axis % ndim] = (before, after)
    return widths


def _polyder_factors(n, m):
    """The factors np.polyder(p, m) multiplies p[:n - m] by, for p of length n."""
    return np.polyder(np.ones(n), m)


def _polyint_factors(n, m):
    """(the factors np.polyint(p, m) multiplies p by, the matrix that maps the m
    integration constants to their part of the result), for p of length n."""
    factors = np.polyint(np.ones(n), m)[:n]
    constants = np.array([np.polyint(np.zeros(n), m, k=np.eye(m)[j]) for j in range(m)]).reshape(m, n + m)
    return factors, constants


def _check_polyfit(full, cov):
    if full or cov:
        raise located(
            "np.polyfit with full=True or cov=True returns diagnostics ssad has no rule for; "
            "differentiate a call with full=False and cov=False (the default)"
        )


def _check_interp(period):
    if period is not None:
        raise located(
            "np.interp with period= has no rule; map x into one period yourself (x % period) and "
            "extend xp and fp by one sample at each end"
        )


def _gradient_axes(f, axis):
    """The axes np.gradient differentiates along, non-negative, and whether it returns a tuple."""
    ndim = np.ndim(f)
    if axis is None:
        axes = list(range(ndim))
    elif isinstance(axis, (tuple, list)):
        axes = [int(ax) % ndim for ax in axis]
    else:
        return [int(axis) % ndim], False
    return axes, len(axes) > 1


def _check_spacings(varargs):
    if any(np.ndim(h) != 0 for h in varargs):
        raise located(
            "np.gradient with coordinate arrays has no rule; pass scalar spacings "
            "(one for all axes, or one per axis)"
        )


def _spacing(varargs, k):
    """The spacing of the k-th differentiated axis (a differentiable selection)."""
    if len(varargs) == 0:
        return 1.0
    if len(varargs) == 1:
        return varargs[0]
    return varargs[k]


nondifferentiable(_widths, _polyder_factors, _polyint_factors, _check_polyfit, _check_interp,
                  _gradient_axes, _check_spacings)  # shapes, constants and checks


def _tangent_or_zeros(t, x):
    """The tangent `t` of `x`, or zeros shaped like `x` where it has none."""
    if _absent(t, x):
        dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype  # a list's too; no dask array computed
        return np.zeros(np.shape(x), dtype=np.result_type(dtype, 1.0))
    return t


def _part(tangents, k):
    """tangents[k], None past its end (an argument the call did not pass)."""
    return tangents[k] if len(tangents) > k else None


def _count_before_trailing_nones(adjoints):
    count = len(adjoints)
    while count > 1 and adjoints[count - 1] is None:
        count -= 1
    return count


nondifferentiable(_count_before_trailing_nones)  # a length


def _passed(adjoints):
    """The list of adjoints as a tuple without the Nones at its end: no more adjoints
    than arguments the call passed (an argument left at its default None gets none)."""
    return tuple(adjoints[: _count_before_trailing_nones(adjoints)])


def _scatter(positions, weights, n):
    """The sum of `weights` at each of `n` positions (np.bincount, complex weights too)."""
    positions, weights = np.ravel(positions), np.ravel(weights)
    if _is_complex(weights):
        return summed_at(positions, np.real(weights), n) + 1j * summed_at(positions, np.imag(weights), n)
    return summed_at(positions, weights, n)


# ----- Polynomials -----


def _vander_slope(x, n, increasing):
    """d vander(x, n, increasing) / d x, row by row: the power times x to one less."""
    if n <= 1:
        return np.zeros((np.shape(x)[0], n))  # no power of x varies
    if increasing:
        return np.pad(np.vander(x, n - 1, True) * np.arange(1, n), ((0, 0), (1, 0)))
    return np.pad(np.vander(x, n - 1) * np.arange(n - 1, 0, -1), ((0, 0), (0, 1)))


@adjoint(np.vander)
def vander_adjoint(dy, y, x, N=None, increasing=False):
    slope = _vander_slope(x, np.shape(y)[1], increasing)
    return (_adjoint_of(np.sum(dy * slope, axis=1), x),)


@tangent(np.vander)
def vander_tangent(tangents, y, x, N=None, increasing=False):
    return np.expand_dims(tangents[0], 1) * _vander_slope(x, np.shape(y)[1], increasing)


@adjoint(np.polyval)
def polyval_adjoint(dy, y, p, x):
    powers = np.vander(np.ravel(x), np.shape(p)[0])
    d_p = np.ravel(broadcast_like(dy, y)) @ powers
    d_x = dy * np.polyval(np.polyder(p), x)
    return (_adjoint_of(d_p, p), _adjoint_of(d_x, x))


@tangent(np.polyval)
def polyval_tangent(tangents, y, p, x):
    t = 0.0
    if not _absent(tangents[0], p):
        t = t + np.polyval(tangents[0], x)
    if not _absent(tangents[1], x):
        t = t + tangents[1] * np.polyval(np.polyder(p), x)
    return broadcast_like(t, y)


@adjoint(np.polyder)
def polyder_adjoint(dy, y, p, m=1):
    n = np.shape(p)[0]
    return (np.pad(dy * _polyder_factors(n, m), (0, n - np.shape(y)[0])),)


@tangent(np.polyder)
def polyder_tangent(tangents, y, p, m=1):
    return np.polyder(tangents[0], m)


def _polyint_adjoint_k(dy, p, m, k):
    """The adjoint of the integration constants `k` of np.polyint(p, m, k)."""
    if k is None:
        return None
    _, constants = _polyint_factors(np.shape(p)[0], m)
    return _adjoint_of(constants @ dy, k)


@adjoint(np.polyint)
def polyint_adjoint(dy, y, p, m=1, k=None):
    n = np.shape(p)[0]
    factors, _ = _polyint_factors(n, m)
    return _passed([dy[:n] * factors, None, _polyint_adjoint_k(dy, p, m, k)])


@tangent(np.polyint)
def polyint_tangent(tangents, y, p, m=1, k=None):
    n = np.shape(p)[0]
    factors, constants = _polyint_factors(n, m)
    t = 0.0
    if not _absent(tangents[0], p):
        t = t + np.pad(tangents[0] * factors, (0, m))
    t_k = _part(tangents, 2)
    if k is not None and t_k is not None:
        t = t + np.broadcast_to(t_k, (m,)) @ constants
    return broadcast_like(t, y)


@adjoint(np.polymul)
def polymul_adjoint(dy, y, a1, a2):
    d_a1 = np.convolve(dy, np.ravel(a2)[::-1], "valid")
    d_a2 = np.convolve(dy, np.ravel(a1)[::-1], "valid")
    return (_adjoint_of(d_a1, a1), _adjoint_of(d_a2, a2))


@tangent(np.polymul)
def polymul_tangent(tangents, y, a1, a2):
    t = 0.0
    if not _absent(tangents[0], a1):
        t = t + np.convolve(tangents[0], a2)
    if not _absent(tangents[1], a2):
        t = t + np.convolve(a1, tangents[1])
    return broadcast_like(t, y)


def _trailing(dy, a):
    """The part of the coefficients' adjoint `dy` that lines up with `a` (its end)."""
    n = np.size(dy) - np.size(a)
    return _adjoint_of(dy[n:], a)


@adjoint(np.polyadd)
def polyadd_adjoint(dy, y, a1, a2):
    return (_trailing(dy, a1), _trailing(dy, a2))


@tangent(np.polyadd)
def polyadd_tangent(tangents, y, a1, a2):
    return np.polyadd(_tangent_or_zeros(tangents[0], a1), _tangent_or_zeros(tangents[1], a2))


@adjoint(np.polysub)
def polysub_adjoint(dy, y, a1, a2):
    return (_trailing(dy, a1), -_trailing(dy, a2))


@tangent(np.polysub)
def polysub_tangent(tangents, y, a1, a2):
    return np.polysub(_tangent_or_zeros(tangents[0], a1), _tangent_or_zeros(tangents[1], a2))


# ----- Least-squares fits -----


def _polyfit_system(x, y, deg, w):
    """(V, the weights as a column, A = w V, the right-hand sides as columns b = w y):
    the weighted least-squares system polyfit solves."""
    powers = np.vander(x, deg + 1)
    weights = np.ones((np.shape(x)[0], 1)) if w is None else np.reshape(w, (-1, 1))
    return powers, weights, weights * powers, weights * np.reshape(y, (np.shape(x)[0], -1))


def _normal_solve(a, rhs):
    """(A^T A)^-1 rhs, with A's columns scaled to unit length first (as polyfit scales
    them), for a Vandermonde matrix's poor conditioning."""
    scale = np.reshape(np.sqrt(np.sum(a * a, axis=0)), (-1, 1))
    scaled = a / scale.T
    return np.linalg.solve(scaled.T @ scaled, rhs / scale) / scale


@adjoint(np.polyfit)
def polyfit_adjoint(dy, coefficients, x, y, deg, rcond=None, full=False, w=None, cov=False):
    _check_polyfit(full, cov)
    powers, weights, a, b = _polyfit_system(x, y, deg, w)
    p = np.reshape(coefficients, (deg + 1, -1))
    z = _normal_solve(a, np.reshape(dy, np.shape(p)))
    fitted = a @ z
    d_a = (b - a @ p) @ z.T - fitted @ p.T
    d_x = np.sum(weights * d_a * _vander_slope(x, deg + 1, False), axis=1)
    d_y = np.reshape(weights * fitted, np.shape(y))
    d_w = None if w is None else np.sum(d_a * powers, axis=1) + np.sum(fitted * np.reshape(y, np.shape(b)), axis=1)
    return _passed([_adjoint_of(d_x, x), _adjoint_of(d_y, y), None, None, None, d_w])


@tangent(np.polyfit)
def polyfit_tangent(tangents, coefficients, x, y, deg, rcond=None, full=False, w=None, cov=False):
    _check_polyfit(full, cov)
    powers, weights, a, b = _polyfit_system(x, y, deg, w)
    p = np.reshape(coefficients, (deg + 1, -1))
    t_a = np.zeros(np.shape(a))
    t_b = np.zeros(np.shape(b), dtype=np.result_type(b, 1.0))
    if not _absent(tangents[0], x):
        t_a = t_a + weights * np.expand_dims(tangents[0], 1) * _vander_slope(x, deg + 1, False)
    if not _absent(tangents[1], y):
        t_b = t_b + weights * np.reshape(tangents[1], np.shape(b))
    t_w = _part(tangents, 5)
    if w is not None and not _absent(t_w, w):
        t_weights = np.reshape(t_w, (-1, 1))
        t_a = t_a + t_weights * powers
        t_b = t_b + t_weights * np.reshape(y, np.shape(b))
    rhs = a.T @ (t_b - t_a @ p) + t_a.T @ (b - a @ p)
    return broadcast_like(np.reshape(_normal_solve(a, rhs), np.shape(coefficients)), coefficients)


# ----- Interpolation -----


def _interp_segments(x, xp, fp):
    """(index of each segment's right end, fraction t of the way along it, slope, inside,
    below, above), with JAX's choice of segment at the knots."""
    xp, fp = np.asarray(xp), np.asarray(fp)
    n = np.shape(xp)[0]
    right = np.clip(np.searchsorted(xp, x, side="right"), 1, n - 1)
    width = xp[right] - xp[right - 1]
    flat = width == 0
    safe = np.where(flat, 1.0, width)
    t = np.where(flat, 0.0, (x - xp[right - 1]) / safe)
    slope = np.where(flat, 0.0, (fp[right] - fp[right - 1]) / safe)
    below = x < xp[0]
    above = x > xp[-1]
    inside = ~(below | above)
    return right, t, slope, inside, below, above


def _outside(dy, where, value):
    """The adjoint of `left` or `right`: dy summed where it was used, or None."""
    if value is None:
        return None
    return _adjoint_of(np.sum(np.where(where, dy, 0.0)), value)


@adjoint(np.interp)
def interp_adjoint(dy, y, x, xp, fp, left=None, right=None, period=None):
    _check_interp(period)
    n = np.shape(xp)[0]
    hi, t, slope, inside, below, above = _interp_segments(x, xp, fp)
    d_in = np.where(inside, dy, 0.0)
    d_x = d_in * slope
    to_first = np.where(below, dy, 0.0) if left is None else 0.0
    to_last = np.where(above, dy, 0.0) if right is None else 0.0
    d_fp = _scatter(hi - 1, d_in * (1 - t) + to_first, n) + _scatter(hi, d_in * t + to_last, n)
    d_xp = -(_scatter(hi - 1, d_x * (1 - t), n) + _scatter(hi, d_x * t, n))
    d_left = _outside(dy, below, left)
    d_right = _outside(dy, above, right)
    return _passed([_adjoint_of(d_x, x), _adjoint_of(d_xp, xp), _adjoint_of(d_fp, fp), d_left, d_right])


@tangent(np.interp)
def interp_tangent(tangents, y, x, xp, fp, left=None, right=None, period=None):
    _check_interp(period)
    hi, t, slope, inside, below, above = _interp_segments(x, xp, fp)
    t_in = 0.0
    if not _absent(tangents[0], x):
        t_in = t_in + slope * tangents[0]
    if not _absent(tangents[1], xp):
        t_xp = np.asarray(tangents[1])
        t_in = t_in - slope * ((1 - t) * t_xp[hi - 1] + t * t_xp[hi])
    t_first = 0.0
    t_last = 0.0
    if not _absent(tangents[2], fp):
        t_fp = np.asarray(tangents[2])
        t_in = t_in + (1 - t) * t_fp[hi - 1] + t * t_fp[hi]
        t_first = t_fp[0]
        t_last = t_fp[-1]
    t_left = _part(tangents, 3)
    t_right = _part(tangents, 4)
    if left is not None:
        t_first = 0.0 if t_left is None else t_left
    if right is not None:
        t_last = 0.0 if t_right is None else t_right
    t_y = np.where(inside, t_in, 0.0) + np.where(below, t_first, 0.0) + np.where(above, t_last, 0.0)
    return broadcast_like(t_y, y)


# ----- Integrals and differences of samples -----


def _trapezoid_parts(y, x, dx, axis):
    """(y with `axis` last, the mean of neighbouring samples, the widths, x with its axis
    last or None): np.trapezoid(y, x, dx, axis) is the sum over the last axis of
    means * widths."""
    samples = np.moveaxis(y, axis, -1)
    means = (samples[..., 1:] + samples[..., :-1]) / 2
    if x is None:
        return samples, means, dx, None
    points = np.moveaxis(x, axis if np.ndim(x) > 1 else -1, -1)
    widths = points[..., 1:] - points[..., :-1]
    return samples, means, widths, points


def _spread_pairs(g):
    """The adjoint of v[..., 1:] + v[..., :-1] (a sum of neighbours) for its adjoint g."""
    return np.pad(g, _widths(np.ndim(g), -1, 1, 0)) + np.pad(g, _widths(np.ndim(g), -1, 0, 1))


def _difference_pairs(g):
    """The adjoint of v[..., 1:] - v[..., :-1] (differences of neighbours) for its adjoint g."""
    return np.pad(g, _widths(np.ndim(g), -1, 1, 0)) - np.pad(g, _widths(np.ndim(g), -1, 0, 1))


@adjoint(np.trapezoid)
def trapezoid_adjoint(dy, area, y, x=None, dx=1.0, axis=-1):
    # `area` is the result; `y` the sampled values, as np.trapezoid names them
    samples, means, widths, points = _trapezoid_parts(y, x, dx, axis)
    g = np.expand_dims(dy, -1)
    d_y = np.moveaxis(_adjoint_of(_spread_pairs(broadcast_like(g * widths, means)) / 2, samples), -1, axis)
    d_widths = g * means
    if points is None:
        d_x = None
        d_dx = _adjoint_of(d_widths, dx)
    else:
        d_points = _difference_pairs(_adjoint_of(d_widths, widths))
        d_x = _adjoint_of(np.moveaxis(d_points, -1, axis if np.ndim(x) > 1 else -1), x)
        d_dx = None
    return _passed([_adjoint_of(d_y, y), d_x, d_dx])


@tangent(np.trapezoid)
def trapezoid_tangent(tangents, area, y, x=None, dx=1.0, axis=-1):
    samples, means, widths, points = _trapezoid_parts(y, x, dx, axis)
    t = 0.0
    if not _absent(tangents[0], y):
        t = t + np.trapezoid(tangents[0], x, dx, axis)
    t_x = _part(tangents, 1)
    t_dx = _part(tangents, 2)
    if points is not None and not _absent(t_x, x):
        moved = np.moveaxis(t_x, axis if np.ndim(x) > 1 else -1, -1)
        t = t + np.sum(means * (moved[..., 1:] - moved[..., :-1]), axis=-1)
    if points is None and t_dx is not None:
        t = t + np.sum(means * t_dx, axis=-1)
    return broadcast_like(t, area)


def _diff_joined(a, prepend, append, axis):
    """The array np.diff differences: `a` with `prepend` before and `append` after it
    along `axis` (a scalar spread to a slice of length 1)."""
    parts = []
    if prepend is not None:
        parts.append(_as_slice(prepend, a, axis))
    parts.append(a)
    if append is not None:
        parts.append(_as_slice(append, a, axis))
    if len(parts) == 1:
        return a
    return np.concatenate(parts, axis)


def _as_slice(v, a, axis):
    if np.ndim(v) == 0:
        shape = list(np.shape(a))
        shape[axis] = 1
        return np.broadcast_to(v, tuple(shape))
    return v


def _slice_length(v, axis):
    return 1 if np.ndim(v) == 0 else np.shape(v)[axis]


nondifferentiable(_slice_length)  # a length


def _along(x, axis, start, stop):
    """x[..., start:stop, ...] with the slice on `axis`."""
    return np.moveaxis(np.moveaxis(x, axis, -1)[..., start:stop], -1, axis)


@adjoint(np.diff)
def diff_adjoint(dy, y, a, n=1, axis=-1, prepend=None, append=None):
    # diff's adjoint is (-1)^n times the n-th difference of dy padded with n zeros each side
    padded = np.pad(dy, _widths(np.ndim(dy), axis, n, n))
    d_joined = np.diff(padded, n, axis) if n % 2 == 0 else -np.diff(padded, n, axis)
    start = 0 if prepend is None else _slice_length(prepend, axis)
    stop = start + np.shape(a)[axis]
    d_a = _along(d_joined, axis, start, stop)
    d_prepend = None if prepend is None else _adjoint_of(_along(d_joined, axis, 0, start), prepend)
    d_append = None if append is None else _adjoint_of(_along(d_joined, axis, stop, None), append)
    return _passed([d_a, None, None, d_prepend, d_append])


@tangent(np.diff)
def diff_tangent(tangents, y, a, n=1, axis=-1, prepend=None, append=None):
    t_prepend = None if prepend is None else _tangent_or_zeros(_part(tangents, 3), prepend)
    t_append = None if append is None else _tangent_or_zeros(_part(tangents, 4), append)
    joined = _diff_joined(_tangent_or_zeros(tangents[0], a), t_prepend, t_append, axis)
    return np.diff(joined, n, axis)


def _gradient_transpose(g, h, edge_order):
    """The adjoint of f for np.gradient(f, h, axis=-1, edge_order=edge_order) with adjoint g."""
    n = np.shape(g)[-1]
    inner = g[..., 1:-1] / (2.0 * h)
    d_f = np.pad(inner, _widths(np.ndim(g), -1, 2, 0)) - np.pad(inner, _widths(np.ndim(g), -1, 0, 2))
    first = g[..., :1] / h
    last = g[..., -1:] / h
    if edge_order == 1:
        start = np.concatenate([-first, first], axis=-1)
        end = np.concatenate([-last, last], axis=-1)
    else:
        start = np.concatenate([-1.5 * first, 2.0 * first, -0.5 * first], axis=-1)
        end = np.concatenate([0.5 * last, -2.0 * last, 1.5 * last], axis=-1)
    width = np.shape(start)[-1]
    return (d_f + np.pad(start, _widths(np.ndim(g), -1, 0, n - width))
            + np.pad(end, _widths(np.ndim(g), -1, n - width, 0)))


@adjoint(np.gradient)
def gradient_adjoint(dy, y, f, *varargs, axis=None, edge_order=1):
    axes, several = _gradient_axes(f, axis)
    _check_spacings(varargs)
    d_f = 0.0
    d_spacings = []  # d/dh of G(f) / h is -G(f) / h
    for k, ax in enumerate(axes):
        g = dy[k] if several else dy
        if _absent(g, f):
            d_spacings.append(0.0)
        else:
            moved = _gradient_transpose(np.moveaxis(g, ax, -1), _spacing(varargs, k), edge_order)
            d_f = d_f + np.moveaxis(moved, -1, ax)
            d_spacings.append(-np.sum(g * (y[k] if several else y)) / _spacing(varargs, k))
    adjoints = [_adjoint_of(_tangent_or_zeros(d_f, f), f)]
    if len(varargs) == 1:
        total = 0.0
        for d_h in d_spacings:
            total = total + d_h
        adjoints.append(_adjoint_of(total, varargs[0]))
    elif len(varargs) > 1:
        for k, d_h in enumerate(d_spacings):
            adjoints.append(_adjoint_of(d_h, varargs[k]))
    return tuple(adjoints)


@tangent(np.gradient)
def gradient_tangent(tangents, y, f, *varargs, axis=None, edge_order=1):
    axes, several = _gradient_axes(f, axis)
    _check_spacings(varargs)
    t_f = np.gradient(_tangent_or_zeros(tangents[0], f), *varargs, axis=axis, edge_order=edge_order)
    if len(varargs) == 0:
        return t_f
    parts = []
    for k in range(len(axes)):
        t_h = tangents[1] if len(varargs) == 1 else tangents[1 + k]
        part = t_f[k] if several else t_f
        if t_h is not None:
            part = part - (y[k] if several else y) * (t_h / _spacing(varargs, k))
        parts.append(part)
    return tuple(parts) if several else parts[0]


@adjoint(np.unwrap)
def unwrap_adjoint(dy, y, p, discont=None, axis=-1, period=2 * np.pi):
    return (_adjoint_of(dy, p),)


@tangent(np.unwrap)
def unwrap_tangent(tangents, y, p, discont=None, axis=-1, period=2 * np.pi):
    return broadcast_like(tangents[0], y)


# ----- Cross products -----


def _as_vectors(v, n):
    """`v` (vectors along the last axis) with 2-vectors extended by a zero z component."""
    if np.shape(v)[-1] == 2 and n == 3:
        return np.pad(v, _widths(np.ndim(v), -1, 0, 1))
    return v


def _cross_adjoint(dy, a, b, axisa, axisb, axisc, axis):
    """The adjoints of `a` and `b` in np.cross(a, b, axisa, axisb, axisc, axis)."""
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    a_last = np.moveaxis(a, axisa, -1)
    b_last = np.moveaxis(b, axisb, -1)
    na, nb = np.shape(a_last)[-1], np.shape(b_last)[-1]
    if na == 2 and nb == 2:  # the result is the z component alone
        d_y = np.pad(np.expand_dims(dy, -1), _widths(np.ndim(dy) + 1, -1, 2, 0))
    else:
        d_y = np.moveaxis(dy, axisc, -1)
    d_a = np.cross(_as_vectors(b_last, 3), d_y)[..., :na]
    d_b = np.cross(d_y, _as_vectors(a_last, 3))[..., :nb]
    return np.moveaxis(_adjoint_of(d_a, a_last), -1, axisa), np.moveaxis(_adjoint_of(d_b, b_last), -1, axisb)


@adjoint(np.cross)
def cross_adjoint(dy, y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d_a, d_b = _cross_adjoint(dy, a, b, axisa, axisb, axisc, axis)
    return (d_a, d_b)


@tangent(np.cross)
def cross_tangent(tangents, y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return np.cross(tangents[0], b, axisa, axisb, axisc, axis) + np.cross(a, tangents[1], axisa, axisb, axisc, axis)
