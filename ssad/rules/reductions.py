"""Rules: reductions, scans and sorting (NumPy functions and the matching ndarray methods).

Conventions
-----------
- Every reduction accepts ``axis`` as None, an int (negative counts from the end) or a
  tuple of ints, and ``keepdims``, positionally or by keyword. The function and the
  method share one rule: ``np.sum(a, axis, dtype, out, keepdims)`` and
  ``a.sum(axis, dtype, out, keepdims)`` pass the same positional arguments.
- The adjoint of the reduced array has exactly its shape. ``sum`` and ``mean`` take
  their dtype from ``dy`` (ssad seeds a float32 output with a float32 one); the
  other rules use the float dtype shared by the array and ``dy``.
- ``max``/``min``/``ptp``: where several elements tie for the extremum, the gradient
  is split evenly among them (each of k tied maxima receives dy / k). This is a
  valid subgradient and keeps the rule symmetric in the tied elements. A slice that
  holds NaN has NaN as its extremum; its NaN elements are the ones that share it.
- ``prod`` and ``cumprod`` never divide by an element that may be zero: both are
  exact when the input holds one or several zeros, and so are their second
  derivatives (``_cumprod_adjoint`` holds no value constant there).
- ``std`` at a slice with zero spread (one element, or all equal) has no derivative; its
  rule gives 0 there, the middle of the subgradients (as for ``norm`` at the origin), so
  no finite input gets a NaN gradient.
- Complex inputs follow the convention of ``elementwise`` (docs/conventions.md):
  ``sum``, ``mean``, ``prod``, ``cumsum``, ``cumprod`` are holomorphic and keep their
  formulas; ``var`` and ``std`` are real and read Re(dy). Orderings (``max``,
  ``min``, ``ptp``, ``sort``) are for real inputs.
- ``cumulative_sum``/``cumulative_prod`` (NumPy 2) share the rules of ``cumsum`` and
  ``cumprod``; with ``include_initial=True`` the leading 0 (or 1) is a constant: its slot
  of ``dy`` reaches no element and its tangent is 0.
- ``sort``: the gradient follows each element to the place sorting moved it; for
  equal elements the order chosen by ``np.argsort`` decides which one gets which
  adjoint (any choice is a valid subgradient).
- ``sum`` and ``mean`` take the keyword-only ``where=`` (a mask that carries no
  gradient); the other reductions do not (nor ``initial=`` for ``prod``): a call that
  passes it is refused at the user's line, with the masked form to write instead.
- Every rule with an adjoint also has a tangent (forward-mode) rule, its exact
  transpose: ``<adjoint(dy), t> == <dy, tangent(t)>``. So the tangent of ``max``/``min``
  at a tie is the mean of the tied elements' tangents, and the tangents of ``prod`` and
  ``cumprod`` are exact with zeros too.
"""

import numpy as np

from ..registry import adjoint, nondifferentiable, specialized, tangent
from ..runtime import broadcast_like, is_other_array, size
from .elementwise import _conj

# ----- Helpers -----


def _as_float(g, a):
    """`g` as an array in the float dtype shared by `g` and `a`."""
    if isinstance(g, (list, tuple)):  # the tangent of a list given to np.max: a list too
        g = np.asarray(g)
    if is_other_array(g) or is_other_array(a):  # np.asarray would compute a dask array
        dtype = np.result_type(getattr(g, "dtype", g), a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype, 1.0)
        return g.astype(dtype) if is_other_array(g) else np.asarray(g, dtype=dtype)
    return np.asarray(g, dtype=np.result_type(g, np.asarray(a).dtype, 1.0))


def _expand(g, a, axis, keepdims):
    """`g`, shaped like a reduction of `a` over `axis`, with the reduced axes put back
    as length 1 so that it broadcasts against `a`; in the float dtype of `g` and `a`."""
    g = _as_float(g, a)
    if axis is None or keepdims:
        return g
    return np.expand_dims(g, axis)


def _axes(axis, ndim):
    """`axis` (None, an int or a tuple) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, tuple):
        axis = (axis,)
    return tuple(int(ax) % ndim for ax in axis)


def _share_among_ties(g, m, a, axis):
    """`g` routed to the elements of `a` equal to `m` (the extremum, reduced axes kept),
    split evenly among the elements that tie within a slice."""
    lazy = is_other_array(a)  # a dask array: no np.asarray, no .any() (each would compute it)
    a = a if lazy else np.asarray(a)
    hits = a == m
    undefined = m != m
    if lazy or undefined.any():  # a slice holding NaN has NaN as its extremum: its NaNs share the gradient
        hits = hits | (undefined & (a != a))
    count = (np.sum if lazy else np.add.reduce)(hits, axis=axis, dtype=g.dtype, keepdims=True)
    # divide the reduced-size adjoint first: one full-size product instead of two
    return hits * (g / np.maximum(count, 1))


def _product_of_others(a, axis):
    """For each element of `a`, the product of the other elements of its slice along
    `axis`: the derivative of the product. Built from products before and after each
    element, so it is exact when the slice holds zeros."""
    x = a if is_other_array(a) else np.asarray(a)
    axes = _axes(axis, x.ndim)
    if x.size == 0 or not axes:
        return np.ones_like(x)
    last = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x, axes, last)
    rows = moved.reshape(moved.shape[: x.ndim - len(axes)] + (-1,))
    one = np.ones_like(rows[..., :1])
    before = np.cumprod(np.concatenate([one, rows[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([one, rows[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((before * after).reshape(moved.shape), last, axes)


def _reverse_cumsum(g, axis):
    """Sums of `g` from each position to the end along `axis` (the adjoint of cumsum);
    `axis` None means `g` is the flat result of a cumsum over a flattened array."""
    axis = 0 if axis is None else axis
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _cumprod_adjoint(g, a, axis):
    """Adjoint of `np.cumprod(a, axis)` for the output adjoint `g`, exact with zeros.

    With y = cumprod(x) along a slice and z the position of its first zero,
    dx_j = sum_{i>=j} g_i y_i / x_j for j < z (the terms i >= z vanish), the same sum
    for j = z with x_z replaced by 1, and 0 for j > z. Only nonzero x_j are divided by.
    """
    x = np.asarray(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    x = np.moveaxis(x, axis, -1)
    g = np.moveaxis(np.asarray(g), axis, -1)
    n = x.shape[-1]
    position = np.arange(n)
    is_zero = x == 0
    if np.any(is_zero):
        return np.moveaxis(_cumprod_adjoint_through_zeros(g, x), -1, axis)
    first_zero = np.where(is_zero.any(axis=-1), is_zero.argmax(axis=-1), n)[..., None]
    at_zero = position == first_zero
    before = position < first_zero
    tail = _reverse_cumsum(g * np.cumprod(np.where(at_zero, 1, x), axis=-1), -1)
    tail_at_zero = np.take_along_axis(
        np.concatenate([tail, np.zeros_like(tail[..., :1])], axis=-1), first_zero, axis=-1
    )
    grad = np.where(before, tail - tail_at_zero, np.where(at_zero, tail_at_zero, 0))
    return np.moveaxis(grad / np.where(before, x, 1), -1, axis)


def _cumprod_adjoint_through_zeros(g, x):
    """`_cumprod_adjoint` along the last axis of an `x` that holds a zero, with no division
    and no value held constant, so that its own derivative (a second derivative of cumprod)
    is exact there too: dx_j = P_j S_j, with P_j the product of the x_k before j and
    S_j = g_j + x_{j+1} S_{j+1} (S of the last element its g)."""
    n = x.shape[-1]
    before = np.cumprod(np.concatenate([np.ones_like(x[..., :1]), x[..., :-1]], axis=-1), axis=-1)
    tail = g[..., n - 1]
    tails = [tail]
    for j in range(n - 2, -1, -1):
        tail = g[..., j] + x[..., j + 1] * tail
        tails.append(tail)
    return before * np.stack(tails[::-1], axis=-1)


def _cumprod_tangent(t, a, axis):
    """Tangent of `np.cumprod(a, axis)` along the tangent `t` of `a`, exact with zeros
    (the transpose of `_cumprod_adjoint`).

    With y = cumprod(x) along a slice, z the position of its first zero and q the
    cumulative product with x_z replaced by 1: dy_i = q_i sum_{j<=i} t_j / x_j for
    i < z, and dy_i = q_i t_z for i >= z (every other term holds the factor x_z = 0).
    Only nonzero x_j are divided by.
    """
    x = np.asarray(a)
    t = np.broadcast_to(t, x.shape)
    if axis is None:
        x, t, axis = x.reshape(-1), np.reshape(t, -1), 0
    x = np.moveaxis(x, axis, -1)
    t = np.moveaxis(t, axis, -1)
    n = x.shape[-1]
    position = np.arange(n)
    is_zero = x == 0
    first_zero = np.where(is_zero.any(axis=-1), is_zero.argmax(axis=-1), n)[..., None]
    at_zero = position == first_zero
    before = position < first_zero
    relative = np.cumsum(np.where(before, t / np.where(before, x, 1), 0), axis=-1)
    t_at_zero = np.take_along_axis(np.concatenate([t, np.zeros_like(t[..., :1])], axis=-1), first_zero, axis=-1)
    q = np.cumprod(np.where(at_zero, 1, x), axis=-1)
    return np.moveaxis(q * np.where(before, relative, t_at_zero), -1, axis)


def _unsort(g, a, axis, kind):
    """`g`, shaped like `np.sort(a, axis)`, moved back to the positions the elements
    had in `a`."""
    # read g through the inverse permutation: a gather, which ssad can differentiate again
    if axis is None:
        inverse = np.argsort(np.argsort(a, axis=None, kind=kind), kind="stable")
        return np.reshape(np.ravel(g)[inverse], np.shape(a))
    inverse = np.argsort(np.argsort(a, axis=axis, kind=kind), axis=axis, kind="stable")
    return np.take_along_axis(g, inverse, axis=axis)


def _sort_like(t, a, axis, kind):
    """`t`, shaped like `a`, permuted the way `np.sort(a, axis)` permutes `a` (the
    transpose of `_unsort`: the same `np.argsort` decides the order of equal elements)."""
    if isinstance(t, (list, tuple)):  # the tangent of a list given to np.sort: a list too
        t = np.asarray(t)
    if axis is None:
        return np.ravel(t)[np.argsort(a, axis=None, kind=kind)]
    return np.take_along_axis(t, np.argsort(a, axis=axis, kind=kind), axis=axis)


# ----- Sums and means -----


@adjoint(np.sum)
@adjoint(np.ndarray.sum)
def sum_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    # Written so that, inlined with a literal `axis` (and no `where`), the conditions fold
    # away: `np.sum(x)` gives `np.broadcast_to(d_s, np.shape(x))`. One expression that reads
    # no helper, so the folded form binds no name it does not read.
    return (np.broadcast_to(dy if axis is None or keepdims else np.expand_dims(dy, axis), np.shape(a))
            if where is True else
            np.where(where, np.broadcast_to(dy if axis is None or keepdims else np.expand_dims(dy, axis), np.shape(a)),
                     0.0),)


@tangent(np.sum)
@tangent(np.ndarray.sum)
def sum_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return (np.sum(tangents[0], axis=axis, keepdims=keepdims) if where is True
            else np.sum(np.broadcast_to(tangents[0], np.shape(a)), axis=axis, keepdims=keepdims, where=where))


@adjoint(np.mean)
@adjoint(np.ndarray.mean)
def mean_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    # with a mask, each element it keeps shares its slice's adjoint with the others it keeps
    return (np.broadcast_to((dy if axis is None or keepdims else np.expand_dims(dy, axis)) / (size(a) / size(y)),
                            np.shape(a)) if where is True else
            np.broadcast_to(np.where(where, (dy if axis is None or keepdims else np.expand_dims(dy, axis))
                                     / np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=True), 0.0),
                            np.shape(a)),)


@specialized(size)
def _size_form(x):
    """The size of a scalar is 1: the reduction's result then needs no computing for its size."""
    return "1" if x == 0 else None


@tangent(np.mean)
@tangent(np.ndarray.mean)
def mean_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    return (np.mean(tangents[0], axis=axis, keepdims=keepdims) if where is True
            else np.mean(np.broadcast_to(tangents[0], np.shape(a)), axis=axis, keepdims=keepdims, where=where))


# ----- Products -----


@adjoint(np.prod)
@adjoint(np.ndarray.prod)
def prod_adjoint(dy, y, a, axis=None, dtype=None, out=None, keepdims=False):
    return (_expand(dy, a, axis, keepdims) * _product_of_others(a, axis),)


@tangent(np.prod)
@tangent(np.ndarray.prod)
def prod_tangent(tangents, y, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(tangents[0] * _product_of_others(a, axis), axis=axis, keepdims=keepdims)


# ----- Extrema (ties share the gradient evenly) -----


@adjoint(np.max)
@adjoint(np.amax)
@adjoint(np.ndarray.max)
@adjoint(np.min)
@adjoint(np.amin)
@adjoint(np.ndarray.min)
def extremum_adjoint(dy, y, a, axis=None, out=None, keepdims=False, initial=None):
    extremum = _expand(y, a, axis, keepdims)
    return (_share_among_ties(_expand(dy, a, axis, keepdims), extremum, a, axis),)


@tangent(np.max)
@tangent(np.amax)
@tangent(np.ndarray.max)
@tangent(np.min)
@tangent(np.amin)
@tangent(np.ndarray.min)
def extremum_tangent(tangents, y, a, axis=None, out=None, keepdims=False, initial=None):
    # the mean of the tangents of the elements that tie for the extremum
    shared = _share_among_ties(_as_float(tangents[0], a), _expand(y, a, axis, keepdims), a, axis)
    return np.sum(shared, axis=axis, keepdims=keepdims)


@adjoint(np.ptp)
def ptp_adjoint(dy, y, a, axis=None, out=None, keepdims=False):
    g = _expand(dy, a, axis, keepdims)
    top = np.max(a, axis, keepdims=True)
    bottom = np.min(a, axis, keepdims=True)
    return (_share_among_ties(g, top, a, axis) - _share_among_ties(g, bottom, a, axis),)


@tangent(np.ptp)
def ptp_tangent(tangents, y, a, axis=None, out=None, keepdims=False):
    t = _as_float(tangents[0], a)
    top = np.max(a, axis, keepdims=True)
    bottom = np.min(a, axis, keepdims=True)
    spread = _share_among_ties(t, top, a, axis) - _share_among_ties(t, bottom, a, axis)
    return np.sum(spread, axis=axis, keepdims=keepdims)


# ----- Spread -----


@adjoint(np.var)
@adjoint(np.ndarray.var)
# The spread of complex numbers is real (|a - mean|**2): the rules conjugate the centered
# values and read Re(dy), and the tangents are real. For real `a` both are no-ops.


@adjoint(np.var)
@adjoint(np.ndarray.var)
def var_adjoint(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = _conj(a - np.mean(a, axis, keepdims=True))
    return (_expand(np.real(dy), a, axis, keepdims) * centered * (2 / (size(a) / size(y) - ddof)),)


@tangent(np.var)
@tangent(np.ndarray.var)
def var_tangent(tangents, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = _conj(a - np.mean(a, axis, keepdims=True))
    return np.real(np.sum(centered * tangents[0], axis=axis, keepdims=keepdims)) * (2 / (size(a) / size(y) - ddof))


@adjoint(np.std)
@adjoint(np.ndarray.std)
def std_adjoint(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = _conj(a - np.mean(a, axis, keepdims=True))
    flat = _expand(y, a, axis, keepdims) == 0  # no spread: centered is 0 there too, and so is the slope
    spread = np.where(flat, 1.0, _expand(y, a, axis, keepdims) * (size(a) / size(y) - ddof))
    return (np.where(flat, 0.0, _expand(np.real(dy), a, axis, keepdims) * centered / spread),)


@tangent(np.std)
@tangent(np.ndarray.std)
def std_tangent(tangents, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = _conj(a - np.mean(a, axis, keepdims=True))
    spread = np.where(y == 0, 1.0, y * (size(a) / size(y) - ddof))  # no spread: centered is 0, so is the slope
    return np.real(np.sum(centered * tangents[0], axis=axis, keepdims=keepdims)) / spread


# ----- Scans -----


@adjoint(np.cumsum)
@adjoint(np.ndarray.cumsum)
def cumsum_adjoint(dy, y, a, axis=None, dtype=None, out=None):
    return (np.reshape(_reverse_cumsum(dy, axis), np.shape(a)),)


@tangent(np.cumsum)
@tangent(np.ndarray.cumsum)
def cumsum_tangent(tangents, y, a, axis=None, dtype=None, out=None):
    return np.cumsum(tangents[0], axis=axis)


@adjoint(np.cumprod)
@adjoint(np.ndarray.cumprod)
def cumprod_adjoint(dy, y, a, axis=None, dtype=None, out=None):
    return (np.reshape(_cumprod_adjoint(dy, a, axis), np.shape(a)),)


@tangent(np.cumprod)
@tangent(np.ndarray.cumprod)
def cumprod_tangent(tangents, y, a, axis=None, dtype=None, out=None):
    return _cumprod_tangent(tangents[0], a, axis)


# NumPy 2's np.cumulative_sum and np.cumulative_prod: cumsum and cumprod with a keyword-only
# axis (None only for 1-D input) and include_initial, which puts the sum's 0 (the product's 1)
# in front: a constant, so its adjoint is dropped and its tangent is 0


@adjoint(np.cumulative_sum)
def cumulative_sum_adjoint(dy, y, x, *, axis=None, dtype=None, out=None, include_initial=False):
    axis = _scan_axis(x, axis)
    return (_reverse_cumsum(_without_initial(dy, axis, include_initial), axis),)


@tangent(np.cumulative_sum)
def cumulative_sum_tangent(tangents, y, x, *, axis=None, dtype=None, out=None, include_initial=False):
    return np.cumulative_sum(broadcast_like(tangents[0], x), axis=axis, include_initial=include_initial)


@adjoint(np.cumulative_prod)
def cumulative_prod_adjoint(dy, y, x, *, axis=None, dtype=None, out=None, include_initial=False):
    axis = _scan_axis(x, axis)
    return (_cumprod_adjoint(_without_initial(dy, axis, include_initial), x, axis),)


@tangent(np.cumulative_prod)
def cumulative_prod_tangent(tangents, y, x, *, axis=None, dtype=None, out=None, include_initial=False):
    axis = _scan_axis(x, axis)
    return _with_initial(_cumprod_tangent(tangents[0], x, axis), axis, include_initial)


def _scan_axis(x, axis):
    """The axis np.cumulative_sum/prod scan along, counted from 0 (None: the one axis of a 1-D x)."""
    return 0 if axis is None else axis % max(np.ndim(x), 1)


nondifferentiable(_scan_axis)


def _without_initial(dy, axis, include_initial):
    """The adjoint of a scan's own terms: `dy` without the initial value's slot along `axis`."""
    if not include_initial:
        return dy
    return dy[(slice(None),) * axis + (slice(1, None),)]


def _with_initial(t, axis, include_initial):
    """The tangent of a scan with include_initial: a zero in front of `t` along `axis`."""
    if not include_initial:
        return t
    return np.pad(t, [(1, 0) if k == axis else (0, 0) for k in range(np.ndim(t))])


# ----- Sorting -----


@adjoint(np.sort)
def sort_adjoint(dy, y, a, axis=-1, kind=None, order=None, stable=None):
    return (_unsort(dy, a, axis, kind),)


@tangent(np.sort)
def sort_tangent(tangents, y, a, axis=-1, kind=None, order=None, stable=None):
    return _sort_like(tangents[0], a, axis, kind)


# ----- Indices, counts and tests (no gradient) -----

nondifferentiable(
    np.argmax,
    np.argmin,
    np.argsort,
    np.count_nonzero,
    np.any,
    np.all,
    np.nonzero,
    np.flatnonzero,
    np.argwhere,
    np.searchsorted,
    np.ndarray.argmax,
    np.ndarray.argmin,
    np.ndarray.argsort,
    np.ndarray.any,
    np.ndarray.all,
    np.ndarray.nonzero,
    np.ndarray.searchsorted,
    np.nanargmax,
    np.nanargmin,
    np.argpartition,
    np.ndarray.argpartition,
    np.lexsort,
    np.digitize,
)
