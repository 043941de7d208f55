"""Numba implementations of what generated code calls besides NumPy.

Each `@overload` gives Numba a compiled form of one runtime helper or rule helper,
chosen when the compiled gradient is typed: the number of dimensions and scalar
versus array are known then, so `unbroadcast(g, x)` on two arrays of one shape is
a shape test, on a scalar and an array a sum. A case these do not cover raises a
Numba typing error, and the gradient falls back to its NumPy code (see `compile`).
Importing this module registers the implementations; it needs Numba.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..rules.linalg import _trace_adjoint, matmul_left_adjoint, matmul_right_adjoint
from ..runtime import broadcast_like, owned, seed, size, stop_gradient, unbroadcast
from ..runtime.scatter import add_at, copy_adjoint, getitem_adjoint
from ..runtime.structure import zeros_like_value

_NUMBER = (types.Float, types.Integer, types.Boolean)


def _is_number(t):
    return isinstance(t, _NUMBER)


@overload(seed)
def _seed(result):
    if _is_number(result):
        return lambda result: 1.0
    if isinstance(result, types.Array) and isinstance(result.dtype, types.Float):

        def seed_array(result):
            if result.size != 1:
                raise ValueError("grad needs a function that returns a scalar (or an array of one element)")
            return np.ones(result.shape, result.dtype)

        return seed_array
    return None


@overload(zeros_like_value)
def _zeros_like_value(x):
    if _is_number(x):
        return lambda x: 0.0
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, types.Float) else types.float64
        return lambda x: np.zeros(x.shape, dtype)
    if isinstance(x, (types.NoneType, types.Omitted)) or x is None:
        return lambda x: 0.0
    return None


@overload(size)
def _size(x):
    if _is_number(x):
        return lambda x: 1
    if isinstance(x, types.Array):
        return lambda x: x.size
    return None


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(owned)
def _owned(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if _is_number(x):
        return lambda x: x
    return None


@overload(copy_adjoint)
def _copy_adjoint(d_x):
    if isinstance(d_x, types.Array):
        return lambda d_x: d_x.copy()
    if _is_number(d_x):
        return lambda d_x: d_x
    return None


@overload(broadcast_like)
def _broadcast_like(t, y):
    if _is_number(y):
        return lambda t, y: t
    if isinstance(y, types.Array):
        if isinstance(t, types.Array) and t.ndim == y.ndim:

            def same_rank(t, y):
                if t.shape == y.shape:
                    return t
                return np.broadcast_to(t, y.shape)

            return same_rank
        return lambda t, y: np.broadcast_to(t, y.shape)
    return None


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x: g
        if isinstance(g, types.Array):
            return lambda g, x: g.sum()
        return None
    if not isinstance(x, types.Array) or x.ndim > 2:
        return None
    if _is_number(g):
        return lambda g, x: np.full(x.shape, g)
    if not isinstance(g, types.Array) or g.ndim > 2 or g.ndim < x.ndim:
        return None
    if g.ndim == x.ndim == 1:

        def vector(g, x):
            if g.shape == x.shape:
                return g
            out = np.empty(x.shape, g.dtype)
            out[0] = g.sum()
            return out

        return vector
    if g.ndim == 2 and x.ndim == 1:

        def rows(g, x):
            summed = np.zeros(g.shape[1], g.dtype)  # loops: Numba compiles `g.sum(axis=0)` slowly
            for i in range(g.shape[0]):
                for j in range(g.shape[1]):
                    summed[j] += g[i, j]
            if summed.shape == x.shape:
                return summed
            out = np.empty(x.shape, g.dtype)
            out[0] = summed.sum()
            return out

        return rows

    def matrix(g, x):
        if g.shape == x.shape:
            return g
        out = np.zeros(x.shape, g.dtype)
        keep_rows = x.shape[0] != 1
        keep_columns = x.shape[1] != 1
        for i in range(g.shape[0]):
            for j in range(g.shape[1]):
                out[i if keep_rows else 0, j if keep_columns else 0] += g[i, j]
        return out

    return matrix


@overload(matmul_left_adjoint)
def _matmul_left_adjoint(dy, a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    if a.ndim == 2 and b.ndim == 2:
        return lambda dy, a, b: dy @ b.T
    if a.ndim == 1 and b.ndim == 2:
        return lambda dy, a, b: b @ dy
    if a.ndim == 2 and b.ndim == 1:
        return lambda dy, a, b: np.outer(dy, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda dy, a, b: dy * b
    return None


@overload(matmul_right_adjoint)
def _matmul_right_adjoint(dy, a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        return None
    if a.ndim == 2 and b.ndim == 2:
        return lambda dy, a, b: a.T @ dy
    if a.ndim == 1 and b.ndim == 2:
        return lambda dy, a, b: np.outer(a, dy)
    if a.ndim == 2 and b.ndim == 1:
        return lambda dy, a, b: a.T @ dy
    if a.ndim == 1 and b.ndim == 1:
        return lambda dy, a, b: dy * a
    return None


def _scatter_add(index, x):
    """The implementation of `out[index] += part` for an `index` of type `index`, repeated
    integers accumulating (np.add.at), on an array of type `x`; None if not covered."""
    if isinstance(index, types.Integer):
        if x.ndim == 1:

            def element(out, index, part):
                out[index] += part

            return element

        def row(out, index, part):
            out[index] += part

        return row
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and index.ndim == 1:
        if x.ndim == 1:

            def elements(out, index, part):
                spread = np.broadcast_to(part, index.shape)
                for k in range(index.shape[0]):
                    out[index[k]] += spread[k]

            return elements
        if x.ndim == 2:

            def rows(out, index, part):
                spread = np.broadcast_to(part, (index.shape[0], out.shape[1]))
                for k in range(index.shape[0]):
                    out[index[k]] += spread[k]

            return rows
        return None
    if (
        isinstance(index, types.BaseTuple)
        and len(index) == 2
        and x.ndim == 2
        and all(isinstance(i, types.Array) and isinstance(i.dtype, types.Integer) and i.ndim == 1 for i in index)
    ):

        def pairs(out, index, part):
            first, second = index
            spread = np.broadcast_to(part, first.shape)
            for k in range(first.shape[0]):
                out[first[k], second[k]] += spread[k]

        return pairs
    return None


@overload(getitem_adjoint)
def _getitem_adjoint(dy, x, index):
    if not isinstance(x, types.Array):
        return None
    scatter = _scatter_add(index, x)
    if scatter is None:
        return None
    scatter = njit(scatter)
    dtype = x.dtype if isinstance(x.dtype, types.Float) else types.float64

    def impl(dy, x, index):
        out = np.zeros(x.shape, dtype)
        scatter(out, index, dy)
        return out

    return impl


@overload(add_at)
def _add_at(d_x, index, d_part):
    if not isinstance(d_x, types.Array):
        return None
    scatter = _scatter_add(index, d_x)
    if scatter is None:
        return None
    scatter = njit(scatter)

    def impl(d_x, index, d_part):
        scatter(d_x, index, d_part)
        return d_x

    return impl


# ----- NumPy reductions along an axis, which Numba takes only for np.sum without keepdims -----

REDUCTIONS = {}  # (NumPy function name, keepdims) -> the function lowered code calls


_COMBINE = {
    "sum": lambda a, b: a + b, "mean": lambda a, b: a + b, "prod": lambda a, b: a * b,
    "max": lambda a, b: a if a >= b else b, "amax": lambda a, b: a if a >= b else b,
    "min": lambda a, b: a if a <= b else b, "amin": lambda a, b: a if a <= b else b,
}


def _reduction(name, keepdims):
    numpy_function = getattr(np, name)
    combine = njit(_COMBINE[name])  # plain loops: Numba compiles its axis reductions slowly
    first = name in ("max", "min", "amax", "amin")  # start from the first value, not from 0 or 1
    start = 1.0 if name == "prod" else 0.0
    mean = name == "mean"

    @njit
    def line(x, k, along_rows, length):
        """The reduction of row (or column) k of the matrix x."""
        acc = (x[k, 0] if along_rows else x[0, k]) if first else start
        for m in range(1 if first else 0, length):
            acc = combine(acc, x[k, m] if along_rows else x[m, k])
        return acc / length if mean else acc

    @njit
    def whole(x):
        flat = x.ravel()
        acc = flat[0] if first else start
        for m in range(1 if first else 0, flat.size):
            acc = combine(acc, flat[m])
        return acc / flat.size if mean else acc

    def reference(x, axis):  # what it computes, for a reader and for the NumPy code
        return numpy_function(x, axis=axis, keepdims=keepdims)

    reference.__name__ = f"{name}_keepdims" if keepdims else f"{name}_along"

    @overload(reference)
    def typed(x, axis):
        if not isinstance(x, types.Array) or x.ndim > 2:
            return None
        dtype = types.float64 if mean else x.dtype
        if isinstance(axis, (types.NoneType, types.Omitted)) or x.ndim == 1:
            if not (isinstance(axis, (types.NoneType, types.Omitted, types.Integer))):
                return None
            if keepdims:
                shape = (1,) * x.ndim
                return lambda x, axis: np.full(shape, whole(np.ascontiguousarray(x)), dtype)
            return lambda x, axis: whole(np.ascontiguousarray(x))
        if not isinstance(axis, types.Integer):
            return None

        def matrix(x, axis):
            along_rows = axis % 2 == 1
            count = x.shape[0] if along_rows else x.shape[1]
            length = x.shape[1] if along_rows else x.shape[0]
            out = np.empty(count, dtype)
            for k in range(count):
                out[k] = line(x, k, along_rows, length)
            if keepdims:
                return out.reshape((count, 1)) if along_rows else out.reshape((1, count))
            return out

        return matrix

    REDUCTIONS[(name, keepdims)] = reference
    return reference


for _name in ("sum", "max", "min", "amax", "amin", "mean", "prod"):
    for _keepdims in (False, True):
        _reduction(_name, _keepdims)


@overload(_trace_adjoint)
def _trace_adjoint_typed(dy, a, offset, axis1, axis2):
    if not isinstance(a, types.Array) or a.ndim != 2:
        return None

    def impl(dy, a, offset, axis1, axis2):
        eye = np.eye(a.shape[axis1], a.shape[axis2], offset)
        if axis1 % 2 < axis2 % 2:
            return dy * eye
        return dy * np.ascontiguousarray(eye.T)

    return impl


# the helpers above: generated code that reads one of these from its namespace can be compiled
HELPERS = (
    seed, zeros_like_value, size, stop_gradient, owned, broadcast_like, unbroadcast, copy_adjoint,
    matmul_left_adjoint, matmul_right_adjoint, getitem_adjoint, add_at, _trace_adjoint,
) + tuple(REDUCTIONS.values())
