"""Rules: statistics over arrays (NaN-ignoring reductions, weighted averages, covariance
and correlation, medians and quantiles, histograms and bin counts).

Conventions
-----------
- The NaN-ignoring reductions (``nansum``, ``nanmean``, ``nanvar``, ``nanstd``,
  ``nanmax``, ``nanmin``, ``nanprod``, ``nancumsum``, ``nancumprod``) take ``axis`` as
  None, an int or a tuple where NumPy does, and ``keepdims``, positionally or by
  keyword, as the rules of ``reductions`` (whose helpers they share). A NaN element is
  ignored by the value, so it gets a zero gradient and its tangent is not read.
- An all-NaN slice: ``nansum`` is 0 and ``nanprod`` 1 there (constants: zero gradient).
  ``nanmean``, ``nanvar``, ``nanstd``, ``nanmax``, ``nanmin`` (and ``nanmedian``,
  ``nanquantile``, ``nanpercentile``) are NaN there, with a RuntimeWarning; there is
  no number for the value to depend on, so every element of the slice gets 0.
- ``nanvar``/``nanstd`` where the slice has no more numbers than ``ddof`` (NumPy gives
  NaN or inf): 0. ``nanstd`` where the numbers of a slice do not spread (one number,
  or all equal): 0, the middle of the subgradients, as ``std`` in ``reductions``.
- ``nanmax``/``nanmin``: the numbers that tie for the extremum share the gradient
  evenly (each of k gets dy / k), as ``max``/``min`` in ``reductions``.
- ``median``, ``quantile``, ``percentile`` (and the NaN-ignoring versions): the value is
  an interpolation between two neighbouring order statistics, (1 - g) s_j + g s_{j+1}
  (one of them, g = 0, for ``lower``, ``higher``, ``nearest``, ...; each 1/2 for
  ``midpoint``, for ``median`` of an even count, and ``averaged_inverted_cdf`` at a
  jump). The gradient goes to those two elements with the weights 1 - g and g. Which
  of several equal elements is s_j is decided by ``np.argsort``, as for ``sort`` in
  ``reductions``. A slice holding NaN has NaN as its median or quantile (not for the
  ``nan*`` versions): its NaN elements share the gradient evenly, as for ``max``.
- ``q`` gets its derivative wherever it has one: for the continuous methods
  (``linear``, the default, ``hazen``, ``weibull``, ``median_unbiased``,
  ``normal_unbiased``, ``interpolated_inverted_cdf``) the slope of the segment q falls
  in, (dv/dq) (s_{j+1} - s_j), with v the virtual index (for ``linear``
  v = (n - 1) q); at a kink (v an integer) the segment to its right, and at q = 1
  the last segment. Where the virtual index is clipped (q outside the range a
  method interpolates over) and for the discontinuous methods (``inverted_cdf``,
  ``averaged_inverted_cdf``, ``closest_observation``, ``lower``, ``higher``,
  ``nearest``, ``midpoint``), which are piecewise constant in q, the derivative is 0.
  ``percentile`` is ``quantile`` of q / 100. ``weights=`` of ``quantile`` is refused.
- ``average``: ``returned=True`` gives ``(average, sum of weights)``; both components
  differentiate in ``a`` and ``weights`` (the sum of weights in the weights only).
  Weights shaped like the reduced axes (NumPy's 1-D weights along ``axis``) are
  broadcast as NumPy does.
- ``cov``/``corrcoef``: ``y`` is a second differentiable input; ``aweights`` is
  differentiable (also through the normalization ``v1 - ddof v2 / v1``); ``fweights``
  are integer counts and carry no gradient. Where the degrees of freedom are <= 0,
  NumPy's value is inf or NaN, and so is the gradient. ``corrcoef`` of a variable with
  zero variance is NaN (0 / 0) and so is its gradient; the diagonal is constant 1 and
  passes nothing back. Complex inputs: ``cov`` is Hermitian, ``X W X^H``, and its rules
  follow docs/conventions.md ("Complex numbers"); ``corrcoef`` divides by the real
  standard deviations.
- ``histogram(a, bins, range, density, weights)``: differentiable in ``weights`` only.
  The counts are piecewise constant in ``a`` and in the bin edges, and the bin edges
  carry no gradient (even where NumPy computes them from ``min(a)`` and ``max(a)``):
  the rule returns None, an explicit zero, for ``a``, ``bins`` and ``range``, so
  ``np.histogram(x, bins, weights=w)[0]`` differentiates in ``w`` and gives ``x`` a zero
  gradient. With ``density=True`` the normalization by the total weight is
  differentiated too; with ``bins`` a count and ``density=True`` the value also moves
  with ``a`` through the bin widths (``max(a) - min(a)``), which is not differentiated:
  pass fixed edges for a value that does not move with ``a``.
  ``bincount(x, weights, minlength)``: the weights get ``dy[x]``; the integer ``x`` has
  no gradient.
- ``unique`` and its family share a value's adjoint equally among the elements equal to
  it (see "Unique values" below); ``histogram_bin_edges`` differentiates the evenly
  spaced edges through the minimum and maximum of ``a`` (see "Bin edges").
- Orderings (``nanmax``, ``nanmin``, medians, quantiles, histograms) are for real input.
  ``nansum``, ``nanmean``, ``nanprod``, ``nancumsum``, ``nancumprod``, ``average`` are
  holomorphic and keep their formulas for complex input; ``nanvar``/``nanstd`` are real
  and read Re(dy), as ``var``/``std``.
- Every rule with an adjoint also has a tangent (forward-mode) rule, its exact transpose.
"""

import numpy as np

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import is_other_array, size, stop_gradient, unbroadcast
from .elementwise import _conj
from .reductions import (
    _as_float,
    _axes,
    _cumprod_adjoint,
    _cumprod_tangent,
    _expand,
    _product_of_others,
    _reverse_cumsum,
    _share_among_ties,
    _sort_like,
    _unsort,
)

# ----- Helpers: NaN-ignoring reductions -----


def _numbers(a, axis):
    """How many numbers (non-NaN elements) each slice of `a` along `axis` holds, reduced
    axes kept."""
    return np.sum(~np.isnan(a), axis=axis, keepdims=True)


def _nan_centered(a, axis):
    """`a` minus the mean of the numbers of its slice (conjugated for complex `a`), 0 at
    NaN elements: the derivative of the spread, up to its scale."""
    missing = np.isnan(a)
    mean = np.nansum(a, axis=axis, keepdims=True) / np.maximum(_numbers(a, axis), 1)
    return _conj(np.where(missing, 0.0, a - mean))


def _spread_scale(a, axis, ddof):
    """2 / (numbers - ddof) per slice (reduced axes kept); 0 where that is not positive."""
    dof = _numbers(a, axis) - ddof
    return np.where(dof > 0, 2.0 / np.where(dof > 0, dof, 1), 0.0)


def _nan_extremum_share(g, y, a, axis, keepdims):
    """`g` routed to the numbers of `a` equal to the extremum `y`, split among ties. An
    all-NaN slice (whose extremum is NaN) routes nothing: no element equals 0 there."""
    extremum = _expand(y, a, axis, keepdims)
    return _share_among_ties(g, np.where(np.isnan(extremum), 0.0, extremum), a, axis)


# ----- NaN-ignoring sums, means and products -----


@adjoint(np.nansum)
def nansum_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    return (np.where(np.isnan(a), 0.0, np.broadcast_to(_expand(dy, a, axis, keepdims), np.shape(a))),)


@tangent(np.nansum)
def nansum_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    return np.sum(np.where(np.isnan(a), 0.0, tangents[0]), axis=axis, keepdims=keepdims)


@adjoint(np.nanmean)
def nanmean_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False):
    share = _expand(dy, a, axis, keepdims) / np.maximum(_numbers(a, axis), 1)
    return (np.where(np.isnan(a), 0.0, np.broadcast_to(share, np.shape(a))),)


@tangent(np.nanmean)
def nanmean_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False):
    share = np.where(np.isnan(a), 0.0, tangents[0]) / np.maximum(_numbers(a, axis), 1)
    return np.sum(share, axis=axis, keepdims=keepdims)


@adjoint(np.nanprod)
def nanprod_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False):
    missing = np.isnan(a)
    others = _product_of_others(np.where(missing, 1.0, a), axis)
    return (np.where(missing, 0.0, _expand(dy, a, axis, keepdims) * others),)


@tangent(np.nanprod)
def nanprod_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False):
    missing = np.isnan(a)
    others = _product_of_others(np.where(missing, 1.0, a), axis)
    return np.sum(np.where(missing, 0.0, tangents[0]) * others, axis=axis, keepdims=keepdims)


# ----- NaN-ignoring spread -----


@adjoint(np.nanvar)
def nanvar_adjoint(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    scale = _spread_scale(a, axis, ddof)
    return (_expand(np.real(dy), a, axis, keepdims) * _nan_centered(a, axis) * scale,)


@tangent(np.nanvar)
def nanvar_tangent(tangents, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    scale = _spread_scale(a, axis, ddof)
    return np.real(np.sum(_nan_centered(a, axis) * scale * tangents[0], axis=axis, keepdims=keepdims))


def _nanstd_slope(y, a, axis, ddof, keepdims):
    """d nanstd / d a, 0 at NaN elements and where the slope is undefined (no spread, no
    numbers, no degrees of freedom)."""
    std = _expand(y, a, axis, keepdims)
    dof = _numbers(a, axis) - ddof
    fine = (std > 0) & (dof > 0)
    return np.where(fine, _nan_centered(a, axis) / np.where(fine, std * dof, 1.0), 0.0)


@adjoint(np.nanstd)
def nanstd_adjoint(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return (_expand(np.real(dy), a, axis, keepdims) * _nanstd_slope(y, a, axis, ddof, keepdims),)


@tangent(np.nanstd)
def nanstd_tangent(tangents, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    slope = _nanstd_slope(y, a, axis, ddof, keepdims)
    return np.real(np.sum(slope * tangents[0], axis=axis, keepdims=keepdims))


# ----- NaN-ignoring extrema (ties share the gradient evenly) -----


@adjoint(np.nanmax)
@adjoint(np.nanmin)
def nan_extremum_adjoint(dy, y, a, axis=None, out=None, keepdims=False, initial=None):
    return (_nan_extremum_share(_expand(dy, a, axis, keepdims), y, a, axis, keepdims),)


@tangent(np.nanmax)
@tangent(np.nanmin)
def nan_extremum_tangent(tangents, y, a, axis=None, out=None, keepdims=False, initial=None):
    shared = _nan_extremum_share(_as_float(np.where(np.isnan(a), 0.0, tangents[0]), a), y, a, axis, keepdims)
    return np.sum(shared, axis=axis, keepdims=keepdims)


# ----- NaN-ignoring scans -----


@adjoint(np.nancumsum)
def nancumsum_adjoint(dy, y, a, axis=None, dtype=None, out=None):
    return (np.where(np.isnan(a), 0.0, np.reshape(_reverse_cumsum(dy, axis), np.shape(a))),)


@tangent(np.nancumsum)
def nancumsum_tangent(tangents, y, a, axis=None, dtype=None, out=None):
    return np.cumsum(np.where(np.isnan(a), 0.0, tangents[0]), axis=axis)


@adjoint(np.nancumprod)
def nancumprod_adjoint(dy, y, a, axis=None, dtype=None, out=None):
    missing = np.isnan(a)
    grad = _cumprod_adjoint(dy, np.where(missing, 1.0, a), axis)
    return (np.where(missing, 0.0, np.reshape(grad, np.shape(a))),)


@tangent(np.nancumprod)
def nancumprod_tangent(tangents, y, a, axis=None, dtype=None, out=None):
    missing = np.isnan(a)
    return _cumprod_tangent(np.where(missing, 0.0, tangents[0]), np.where(missing, 1.0, a), axis)


# ----- Weighted averages -----


def _weights_shape(shape, axes):
    """The shape NumPy's `average` gives weights that cover only the reduced `axes` of an
    array of `shape`: their lengths there, 1 elsewhere."""
    return tuple(n if i in axes else 1 for i, n in enumerate(shape))


nondifferentiable(_weights_shape)  # a shape


def _weights_like(w, a, axis):
    """`weights` of `np.average(a, axis, weights)` shaped to broadcast against `a`."""
    if np.shape(w) == np.shape(a):
        return w
    axes = _axes(axis, np.ndim(a))
    return np.reshape(np.transpose(w, np.argsort(axes)), _weights_shape(np.shape(a), axes))


def _weights_back(g, w, axis, a):
    """`g`, the adjoint of `_weights_like(w, a, axis)`, back in the shape of `w`."""
    if np.shape(w) == np.shape(a):
        return g
    order = np.argsort(_axes(axis, np.ndim(a)))
    return np.transpose(np.reshape(g, np.shape(np.transpose(w, order))), np.argsort(order))


def _average_parts(y, returned):
    """The average and the adjoint or tangent of the sum of weights from a result that is
    `(average, sum of weights)` when `returned`."""
    if returned:
        return y[0], y[1]
    return y, None


@adjoint(np.average)
def average_adjoint(dy, y, a, axis=None, weights=None, returned=False, keepdims=False):
    d_avg, d_total = _average_parts(dy, returned)
    avg = _expand(_average_parts(y, returned)[0], a, axis, keepdims)
    g = _expand(d_avg, a, axis, keepdims)
    if weights is None:  # the mean; the count of elements is a constant
        d_a = np.broadcast_to(g / (size(a) / size(avg)), np.shape(a))
        d_weights = None
    else:
        w = _weights_like(weights, a, axis)
        total = np.sum(w, axis=axis, keepdims=True)
        d_a = np.broadcast_to(g * w / total, np.shape(a))
        d_w = g * (a - avg) / total
        if returned:
            d_w = d_w + _expand(d_total, a, axis, keepdims)
        d_weights = _weights_back(unbroadcast(d_w, w), weights, axis, a)
    return (d_a, None, d_weights)


@tangent(np.average)
def average_tangent(tangents, y, a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        t_avg = np.mean(tangents[0], axis=axis, keepdims=keepdims)
        if returned:
            return (t_avg, np.zeros_like(y[1]))
        return t_avg
    t_w = _weights_like(_tangent_at(tangents, 2, weights), a, axis)
    w = _weights_like(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    avg = _expand(_average_parts(y, returned)[0], a, axis, keepdims)
    t_avg = np.sum((tangents[0] * w + t_w * (a - avg)) / total, axis=axis, keepdims=keepdims)
    if returned:
        t_total = np.sum(t_w, axis=axis, keepdims=keepdims)
        return (t_avg, np.broadcast_to(t_total, np.shape(y[1])))
    return t_avg


# ----- Helpers: order statistics (medians and quantiles) -----

# (alpha, beta) of the continuous quantile methods: the virtual index of q among n sorted
# values is (n + 1 - alpha - beta) q + alpha - 1, clipped to [0, n - 1] (NumPy's table).
_CONTINUOUS = {
    "linear": (1.0, 1.0),
    "hazen": (0.5, 0.5),
    "weibull": (0.0, 0.0),
    "median_unbiased": (1 / 3, 1 / 3),
    "normal_unbiased": (3 / 8, 3 / 8),
    "interpolated_inverted_cdf": (0.0, 1.0),
}


def _interpolation(counts, q, method):
    """Where the quantiles `q` of slices holding `counts` sorted numbers fall: the indices
    (j, j + 1) of the two order statistics interpolated between, the weight g of the
    second (the value is (1 - g) s_j + g s_{j+1}), and dv/dq, the rate at which the
    virtual index j + g moves with q (0 for the discontinuous methods and where the index
    is clipped). Each has the shape q.shape + counts.shape; slices with no number get
    j = 0, g = 0.

    The virtual index is read from NumPy itself: the quantile of 0, 1, ..., n - 1 is
    j + g, whatever the method."""
    q = np.asarray(q, dtype=np.float64)
    counts = np.asarray(counts)
    flat = counts.reshape(-1)
    low = np.zeros(q.shape + flat.shape, dtype=np.intp)
    high = np.zeros(q.shape + flat.shape, dtype=np.intp)
    g = np.zeros(q.shape + flat.shape)
    rate = np.zeros(q.shape + flat.shape)
    for n in np.unique(flat):
        if n == 0:
            continue
        here = flat == n
        virtual = np.quantile(np.arange(n, dtype=np.float64), q, method=method)
        j = np.clip(np.floor(virtual), 0, max(n - 2, 0))
        low[..., here] = j.astype(np.intp)[..., None]
        high[..., here] = np.minimum(j + 1, n - 1).astype(np.intp)[..., None]
        g[..., here] = (virtual - j)[..., None]
        if method in _CONTINUOUS:
            alpha, beta = _CONTINUOUS[method]
            slope = n + 1 - alpha - beta
            raw = slope * q + alpha - 1
            rate[..., here] = np.where((raw >= 0) & (raw <= n - 1), slope, 0.0)[..., None]
    shape = q.shape + counts.shape
    return low.reshape(shape), high.reshape(shape), g.reshape(shape), rate.reshape(shape)


nondifferentiable(_interpolation)  # indices, and weights that are constants given q


def _to_rows(a, axis):
    """`a` with the axes reduced over moved last and flattened into one: shape K + (n,),
    K the shape of the kept axes."""
    x = a if is_other_array(a) else np.asarray(a)
    axes = _axes(axis, np.ndim(x))
    kept = np.ndim(x) - len(axes)
    moved = np.moveaxis(x, axes, tuple(range(kept, np.ndim(x))))
    return np.reshape(moved, np.shape(moved)[:kept] + (-1,))


def _from_rows(g, a, axis):
    """`g`, shaped like `_to_rows(a, axis)`, back in the shape of `a` (its inverse)."""
    axes = _axes(axis, np.ndim(a))
    kept = np.ndim(a) - len(axes)
    last = tuple(range(kept, np.ndim(a)))
    return np.moveaxis(np.reshape(g, np.shape(np.moveaxis(np.asarray(a), axes, last))), last, axes)


def _order_weights(rows, q, method, skip_nan):
    """The weights W (shape Q + K + (n,), Q the shape of `q`) with which each quantile
    of each row of `rows` sums its sorted values, and the derivative of each quantile
    with respect to q (shape Q + K).

    W depends on q through g, the weight of the upper order statistic, so that a
    derivative of a rule built from it (a second derivative) sees q move too."""
    n = np.shape(rows)[-1]
    missing = np.isnan(rows)
    numbers = np.sum(~missing, axis=-1)
    counts = numbers if skip_nan else np.full(np.shape(numbers), n)
    low, high, g0, rate = _interpolation(counts, q, method)
    q_b = np.reshape(q, np.shape(q) + (1,) * np.ndim(numbers))
    g = g0 + rate * (q_b - stop_gradient(q_b))  # the value g0; the slope in q, rate
    position = np.arange(n)
    weights = (1 - g)[..., None] * (position == low[..., None]) + g[..., None] * (position == high[..., None])
    # a slice that holds NaN has a NaN quantile: its NaNs (sorted last) share the gradient;
    # the nan* functions ignore NaNs, and a slice of NaNs only gets nothing
    undefined = numbers == 0 if skip_nan else numbers < n
    nans = 0.0 if skip_nan else (position >= numbers[..., None]) / np.maximum(n - numbers, 1)[..., None]
    weights = np.where(undefined[..., None], nans, weights)
    ordered = np.broadcast_to(np.sort(rows, axis=-1), np.shape(weights))
    spread = np.take_along_axis(ordered, high[..., None], -1) - np.take_along_axis(ordered, low[..., None], -1)
    return weights, np.where(undefined, 0.0, rate * spread[..., 0])


def _check_quantile_call(weights):
    if weights is not None:
        raise located(
            "np.quantile/np.percentile with weights= has no gradient rule; compute the weighted quantile from "
            "the sorted values, which ssad differentiates: `order = np.argsort(x)`, `c = np.cumsum(weights[order]) "
            "/ np.sum(weights)`, then `x[order][np.searchsorted(c, q)]` (method='inverted_cdf')"
        )


nondifferentiable(_check_quantile_call)


def _quantile_adjoint(dy, a, q, axis, method, skip_nan):
    """The adjoints of `a` and `q` in a quantile of `a` (q a fraction)."""
    rows = _to_rows(a, axis)
    weights, slope = _order_weights(rows, q, method, skip_nan)
    g = np.reshape(dy, np.shape(slope))
    over_q = tuple(range(np.ndim(q)))
    d_sorted = np.sum(g[..., None] * weights, axis=over_q)
    d_a = _from_rows(_unsort(d_sorted, rows, -1, None), a, axis)
    d_q = np.reshape(np.sum(g * slope, axis=tuple(range(np.ndim(q), np.ndim(slope)))), np.shape(q))
    return d_a, d_q


def _quantile_tangent(t_a, t_q, y, a, q, axis, method, skip_nan):
    """The tangent of a quantile of `a` (q a fraction) along the tangents of `a` and `q`
    (`t_q` None when q carries none)."""
    rows = _to_rows(a, axis)
    weights, slope = _order_weights(rows, q, method, skip_nan)
    t_sorted = _sort_like(_to_rows(np.broadcast_to(t_a, np.shape(a)), axis), rows, -1, None)
    t = np.sum(weights * t_sorted, axis=-1)
    if t_q is not None:
        per_quantile = np.shape(q) + (1,) * (np.ndim(slope) - np.ndim(q))
        t = t + slope * np.reshape(np.broadcast_to(t_q, np.shape(q)), per_quantile)
    return np.reshape(t, np.shape(y))


def _method(method, interpolation):
    """NumPy's `method`, or its deprecated alias `interpolation` when given."""
    return method if interpolation is None else interpolation


nondifferentiable(_method)


def _second(tangents):
    """The tangent of the second positional argument, None when it was not passed so."""
    return tangents[1] if len(tangents) > 1 else None


# ----- Medians and quantiles -----


@adjoint(np.median)
def median_adjoint(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return (_quantile_adjoint(dy, a, 0.5, axis, "linear", False)[0],)


@tangent(np.median)
def median_tangent(tangents, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_tangent(tangents[0], None, y, a, 0.5, axis, "linear", False)


@adjoint(np.nanmedian)
def nanmedian_adjoint(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return (_quantile_adjoint(dy, a, 0.5, axis, "linear", True)[0],)


@tangent(np.nanmedian)
def nanmedian_tangent(tangents, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile_tangent(tangents[0], None, y, a, 0.5, axis, "linear", True)


@adjoint(np.quantile)
def quantile_adjoint(
    dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _quantile_adjoint(dy, a, q, axis, _method(method, interpolation), False)


@tangent(np.quantile)
def quantile_tangent(
    tangents, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _quantile_tangent(tangents[0], _second(tangents), y, a, q, axis, _method(method, interpolation), False)


@adjoint(np.nanquantile)
def nanquantile_adjoint(
    dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _quantile_adjoint(dy, a, q, axis, _method(method, interpolation), True)


@tangent(np.nanquantile)
def nanquantile_tangent(
    tangents, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _quantile_tangent(tangents[0], _second(tangents), y, a, q, axis, _method(method, interpolation), True)


def _percentile_adjoint(dy, a, q, axis, method, skip_nan):
    d_a, d_q = _quantile_adjoint(dy, a, np.true_divide(q, 100), axis, method, skip_nan)
    return d_a, d_q / 100


def _percentile_tangent(tangents, y, a, q, axis, method, skip_nan):
    t_q = _second(tangents)
    t_fraction = None if t_q is None else np.true_divide(t_q, 100)
    return _quantile_tangent(tangents[0], t_fraction, y, a, np.true_divide(q, 100), axis, method, skip_nan)


@adjoint(np.percentile)
def percentile_adjoint(
    dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _percentile_adjoint(dy, a, q, axis, _method(method, interpolation), False)


@tangent(np.percentile)
def percentile_tangent(
    tangents, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _percentile_tangent(tangents, y, a, q, axis, _method(method, interpolation), False)


@adjoint(np.nanpercentile)
def nanpercentile_adjoint(
    dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _percentile_adjoint(dy, a, q, axis, _method(method, interpolation), True)


@tangent(np.nanpercentile)
def nanpercentile_tangent(
    tangents, y, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, weights=None, interpolation=None,
):
    _check_quantile_call(weights)
    return _percentile_tangent(tangents, y, a, q, axis, _method(method, interpolation), True)


# ----- Helpers: covariance -----


def _variables(m, y, rowvar):
    """The variables x observations matrix X that `np.cov(m, y, rowvar)` reads: `m` (and
    then `y`) as rows of variables."""
    x = np.reshape(m, (1, -1)) if np.ndim(m) == 1 else m
    if not rowvar and np.ndim(m) != 1:
        x = np.transpose(x)
    if y is None:
        return x
    z = np.reshape(y, (1, -1)) if np.ndim(y) == 1 else y
    if not rowvar and np.shape(z)[0] != 1:
        z = np.transpose(z)
    return np.concatenate([x, z], axis=0)


def _variables_back(d_x, m, y, rowvar):
    """The adjoints of `m` and `y` from that of `_variables(m, y, rowvar)` (None for no `y`)."""
    rows = 1 if np.ndim(m) == 1 else np.shape(m)[0 if rowvar else 1]
    d_m = d_x[:rows]
    if not rowvar and np.ndim(m) != 1:
        d_m = np.transpose(d_m)
    if y is None:
        return np.reshape(d_m, np.shape(m)), None
    d_y = d_x[rows:]
    if not rowvar and np.shape(np.reshape(y, (1, -1)) if np.ndim(y) == 1 else y)[0] != 1:
        d_y = np.transpose(d_y)
    return np.reshape(d_m, np.shape(m)), np.reshape(d_y, np.shape(y))


def _ddof(bias, ddof):
    return (0 if bias else 1) if ddof is None else ddof


nondifferentiable(_ddof)


def _cov_parts(x, bias, ddof, fweights, aweights):
    """For c = cov(X): the weights w of the observations (frequencies times `aweights`),
    the centered X, the normalization `fact` (c = Xc diag(w) Xc^H / fact), and the
    derivative of `fact` with respect to each of `aweights` (None without them)."""
    ddof = _ddof(bias, ddof)
    observations = np.shape(x)[1]
    counts = np.ones(observations) if fweights is None else np.asarray(fweights, dtype=np.float64)
    w = counts if aweights is None else counts * aweights
    total = np.sum(w)
    centered = x - np.sum(x * w, axis=1, keepdims=True) / total
    if aweights is None:
        return w, centered, total - ddof, None
    second = np.sum(w * aweights)
    fact = total - ddof * second / total
    d_fact = counts * (1 - ddof * (2 * aweights / total - second / total**2))
    return w, centered, fact, d_fact


def _as_matrix(g, x):
    """`g`, the adjoint or tangent of `np.cov`'s squeezed result, as a square matrix."""
    n = np.shape(x)[0]
    return np.reshape(g, (n, n))


def _cov_adjoint(g, c, x, bias, ddof, fweights, aweights):
    """The adjoints of X (variables x observations) and of `aweights` in c = cov(X), for
    the adjoint `g` of c as a square matrix."""
    w, centered, fact, d_fact = _cov_parts(x, bias, ddof, fweights, aweights)
    d_x = (g + _conj(np.transpose(g))) @ _conj(centered) * (w / fact)
    if aweights is None:
        return d_x, None
    counts = np.ones(np.shape(x)[1]) if fweights is None else np.asarray(fweights, dtype=np.float64)
    quadratic = np.real(np.sum(centered * (g @ _conj(centered)), axis=0))
    d_aweights = (counts * quadratic - np.real(np.sum(g * np.reshape(c, np.shape(g)))) * d_fact) / fact
    return d_x, d_aweights


def _cov_tangent(t_x, t_aweights, c, x, bias, ddof, fweights, aweights):
    """The tangent of c = cov(X) (a square matrix) along the tangents of X and `aweights`."""
    w, centered, fact, d_fact = _cov_parts(x, bias, ddof, fweights, aweights)
    half = (t_x * w) @ _conj(np.transpose(centered))
    t_c = (half + _conj(np.transpose(half))) / fact
    if aweights is None:
        return t_c
    counts = np.ones(np.shape(x)[1]) if fweights is None else np.asarray(fweights, dtype=np.float64)
    t_w = counts * t_aweights
    c_square = np.reshape(c, np.shape(t_c))
    return t_c + ((centered * t_w) @ _conj(np.transpose(centered)) - c_square * np.sum(d_fact * t_aweights)) / fact


def _tangent_at(tangents, i, value):
    """The tangent of positional argument `i`, shaped like `value`; zeros when it was not
    passed positionally."""
    if len(tangents) > i and tangents[i] is not None:
        return np.broadcast_to(tangents[i], np.shape(value))
    return np.zeros(np.shape(value))


# ----- Covariance and correlation -----


# The result is named `c` here: `y` is np.cov's own second input.
@adjoint(np.cov)
def cov_adjoint(dy, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    x = _variables(m, y, rowvar)
    d_x, d_aweights = _cov_adjoint(_as_matrix(dy, x), c, x, bias, ddof, fweights, aweights)
    d_m, d_y = _variables_back(d_x, m, y, rowvar)
    return (d_m, d_y, None, None, None, None, d_aweights)


@tangent(np.cov)
def cov_tangent(tangents, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    x = _variables(m, y, rowvar)
    t_y = None if y is None else _tangent_at(tangents, 1, y)
    t_x = _variables(_tangent_at(tangents, 0, m), t_y, rowvar)
    t_aweights = None if aweights is None else _tangent_at(tangents, 6, aweights)
    return np.reshape(_cov_tangent(t_x, t_aweights, c, x, bias, ddof, fweights, aweights), np.shape(c))


def _deviations(c):
    """The standard deviations sqrt(Re diag c) of the variables of a covariance matrix."""
    return np.sqrt(np.real(np.diagonal(c)))


@adjoint(np.corrcoef)
def corrcoef_adjoint(dy, r, x, y=None, rowvar=True, dtype=None):
    if np.ndim(r) == 0:  # one variable: c / c, constant
        return (np.zeros(np.shape(x)), None if y is None else np.zeros(np.shape(y)))
    data = _variables(x, y, rowvar)
    c = np.cov(x, y, rowvar)
    s = _deviations(c)
    g = dy / np.outer(s, s)
    share = np.real(np.sum(dy * r, axis=0) + np.sum(dy * r, axis=1)) / (2 * s**2)
    d_c = g - np.diag(share)
    d_data = _cov_adjoint(d_c, c, data, False, None, None, None)[0]
    return _variables_back(d_data, x, y, rowvar)


@tangent(np.corrcoef)
def corrcoef_tangent(tangents, r, x, y=None, rowvar=True, dtype=None):
    if np.ndim(r) == 0:
        return np.zeros(np.shape(r))
    data = _variables(x, y, rowvar)
    t_y = None if y is None else _tangent_at(tangents, 1, y)
    t_data = _variables(_tangent_at(tangents, 0, x), t_y, rowvar)
    c = np.cov(x, y, rowvar)
    s = _deviations(c)
    t_c = _cov_tangent(t_data, None, c, data, False, None, None, None)
    relative = np.real(np.diagonal(t_c)) / (2 * s**2)  # d s / s
    return t_c / np.outer(s, s) - r * (relative[:, None] + relative[None, :])


# ----- Histograms and bin counts -----


def _bins_of(x, edges):
    """The bin of each element of the flat `x` among `edges` (NumPy's rule: [e_i, e_i+1),
    the last bin closed), clipped to a valid bin, and whether the element is counted."""
    last = np.shape(edges)[0] - 2
    index = np.where(x == edges[-1], last, np.searchsorted(edges, x, side="right") - 1)
    return np.clip(index, 0, last), (x >= edges[0]) & (x <= edges[-1])


nondifferentiable(_bins_of)  # indices and a mask


def _histogram_weights_adjoint(g, edges, a, weights, density):
    """The adjoint of `weights` in `np.histogram(a, edges, weights=weights, density=density)[0]`."""
    if weights is None:
        return None
    g = np.broadcast_to(g, (len(edges) - 1,))  # a zero comes as the number 0.0
    if density:
        widths = edges[1:] - edges[:-1]
        counts = np.histogram(a, edges, weights=weights)[0]
        total = np.sum(counts)
        g = g / (widths * total) - np.sum(g * counts / widths) / total**2
    index, counted = _bins_of(np.ravel(a), edges)
    return np.reshape(np.where(counted, g[index], 0.0), np.shape(weights))


@adjoint(np.histogram)
def histogram_adjoint(dy, y, a, bins=10, range=None, density=None, weights=None):
    # the counts are piecewise constant in `a` and in the edges: an explicit zero for both
    return (None, None, None, None, _histogram_weights_adjoint(dy[0], y[1], a, weights, density))


@tangent(np.histogram)
def histogram_tangent(tangents, y, a, bins=10, range=None, density=None, weights=None):
    edges = y[1]
    if weights is None:
        return (np.zeros(np.shape(y[0])), np.zeros(np.shape(edges)))
    t_weights = _tangent_at(tangents, 4, weights)
    t_counts = np.histogram(a, edges, weights=t_weights)[0]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = np.histogram(a, edges, weights=weights)[0]
        total = np.sum(counts)
        t_counts = t_counts / (widths * total) - counts / (widths * total**2) * np.sum(t_counts)
    return (t_counts, np.zeros(np.shape(edges)))


def _bincount_weights_adjoint(dy, x, weights):
    return None if weights is None else dy[x]


@adjoint(np.bincount)
def bincount_adjoint(dy, y, x, weights=None, minlength=0):
    return (None, _bincount_weights_adjoint(dy, x, weights))


@tangent(np.bincount)
def bincount_tangent(tangents, y, x, weights=None, minlength=0):
    if weights is None:
        return np.zeros(np.shape(y))
    return np.bincount(x, _tangent_at(tangents, 1, weights), minlength)


# ----- Unique values -----
# np.unique(x) is a selection of x's elements: each unique value is the elements equal to
# it. Their adjoint is shared equally among those elements (as ties of `max` share theirs,
# docs/conventions.md); with no ties each element gets its value's adjoint. The indices,
# inverse and counts are integers and carry no gradient. Only `axis=None` is differentiated.


def _groups(x, equal_nan=True):
    """(inverse, counts): the unique value each element of the flat `x` equals, and how many do."""
    _, inverse, counts = np.unique(np.ravel(x), return_inverse=True, return_counts=True, equal_nan=equal_nan)
    return np.ravel(inverse), counts


nondifferentiable(_groups)


def _check_unique_axis(axis):
    if axis is not None:
        raise located("np.unique(..., axis=...) has no gradient rule; differentiate np.unique of the flat array")


nondifferentiable(_check_unique_axis)


def _values_component(g, y):
    """The adjoint (or tangent) of the unique values: `g` itself, or of the first component of a tuple."""
    values = y[0] if isinstance(y, tuple) else y
    g = g[0] if isinstance(y, tuple) else g
    return np.zeros(np.shape(values)) if g is None else np.broadcast_to(g, np.shape(values))


def _unique_adjoint_of(d_values, x, equal_nan=True):
    inverse, counts = _groups(x, equal_nan)
    return np.reshape((d_values / counts)[inverse], np.shape(x))


def _unique_tangent_of(t, x, y, equal_nan=True):
    """Each unique value moves by the mean of its elements' tangents; the integer outputs do not move."""
    inverse, counts = _groups(x, equal_nan)
    flat = np.ravel(np.broadcast_to(t, np.shape(x)))
    moved = np.bincount(inverse, np.real(flat), minlength=len(counts)) / counts
    if np.iscomplexobj(flat):
        moved = moved + 1j * np.bincount(inverse, np.imag(flat), minlength=len(counts)) / counts
    if not isinstance(y, tuple):
        return moved
    return (moved,) + tuple(np.zeros(np.shape(part)) for part in y[1:])


@adjoint(np.unique)
def unique_adjoint(dy, y, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
                   equal_nan=True, sorted=True):
    _check_unique_axis(axis)
    return (_unique_adjoint_of(_values_component(dy, y), ar, equal_nan),)


@tangent(np.unique)
def unique_tangent(tangents, y, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
                   equal_nan=True, sorted=True):
    _check_unique_axis(axis)
    return _unique_tangent_of(_tangent_at(tangents, 0, ar), ar, y, equal_nan)


for _unique in (np.unique_values, np.unique_counts, np.unique_inverse, np.unique_all):

    @adjoint(_unique)
    def _unique_family_adjoint(dy, y, x):
        return (_unique_adjoint_of(_values_component(dy, y), x),)

    @tangent(_unique)
    def _unique_family_tangent(tangents, y, x):
        return _unique_tangent_of(_tangent_at(tangents, 0, x), x, y)


# ----- Bin edges -----
# np.histogram_bin_edges(a, bins) with a count (or a method name) and no `range`: the
# edges are evenly spaced from min(a) to max(a) (from a - 0.5 to a + 0.5 when all are
# equal), so edge k moves with min(a) by (1 - k / n) and with max(a) by k / n, n bins;
# ties of the minimum or maximum share its adjoint, as `min` and `max` do. The number
# of bins a method chooses is piecewise constant in `a`. With `range=` the edges do not
# depend on `a`; explicit edges (`bins` an array) are the edges themselves.


def _edge_weights(edges):
    """(weight of min(a), weight of max(a)) of each of `edges`, evenly spaced."""
    fraction = np.arange(np.shape(edges)[0]) / (np.shape(edges)[0] - 1)
    return 1.0 - fraction, fraction


nondifferentiable(_edge_weights)


def _extreme_share(a, extreme):
    """1 / (how many elements equal it) at the elements of `a` equal to `extreme`, else 0."""
    hit = np.asarray(a) == extreme
    return hit / np.sum(hit)


nondifferentiable(_extreme_share)


def _computed_edges(bins, range):
    return np.ndim(bins) == 0 and range is None


nondifferentiable(_computed_edges)


@adjoint(np.histogram_bin_edges)
def histogram_bin_edges_adjoint(dy, y, a, bins=10, range=None, weights=None):
    if not _computed_edges(bins, range):  # edges given, or spread over `range`: they do not move with `a`
        zero = np.zeros(np.shape(a))
        return (zero, dy) if np.ndim(bins) == 1 else (zero,)
    low, high = _edge_weights(y)
    d_low, d_high = np.sum(dy * low), np.sum(dy * high)
    return (d_low * _extreme_share(a, np.min(a)) + d_high * _extreme_share(a, np.max(a)),)


@tangent(np.histogram_bin_edges)
def histogram_bin_edges_tangent(tangents, y, a, bins=10, range=None, weights=None):
    if not _computed_edges(bins, range):
        return _tangent_at(tangents, 1, y) if np.ndim(bins) == 1 else np.zeros(np.shape(y))
    t_a = _tangent_at(tangents, 0, a)
    low, high = _edge_weights(y)
    t_low = np.sum(t_a * _extreme_share(a, np.min(a)))
    t_high = np.sum(t_a * _extreme_share(a, np.max(a)))
    return low * t_low + high * t_high
