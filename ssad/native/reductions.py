"""Numba implementations of NumPy's reductions along an axis and with `keepdims`.

Numba takes `np.sum(x, axis)` but not `keepdims`, nor an axis for `np.max`, `np.min`,
`np.mean` or `np.prod`; `lower` rewrites such calls in generated code into calls of
the functions here (`max_keepdims(logits, 1)`), which compute what NumPy computes
and are compiled as plain loops (Numba compiles its own axis reductions slowly).
Importing this module registers them; it needs Numba.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..rules.elementwise import _conj
from ..rules.reductions import _as_float, _expand, _share_among_ties

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


# ----- the helpers of the reductions' rules, for what compiled code holds: numbers and
# real arrays (a reduced adjoint is a number where the NumPy code has a 0-d array) -----


def _real(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean)) or (
        isinstance(t, types.Array) and not isinstance(t.dtype, types.Complex))


@overload(_as_float)
def _as_float_typed(g, a):
    if isinstance(g, (types.Float, types.Integer, types.Boolean)):
        return lambda g, a: float(g)
    if isinstance(g, types.Array) and isinstance(g.dtype, types.Float):
        return lambda g, a: g
    if isinstance(g, types.Array) and _real(g):
        return lambda g, a: g.astype(np.float64)
    return None


@overload(_expand)
def _expand_typed(g, a, axis, keepdims):
    if not (_real(g) and isinstance(a, types.Array)):
        return None
    whole = isinstance(axis, (types.NoneType, types.Omitted))
    kept = isinstance(keepdims, types.BooleanLiteral) and keepdims.literal_value
    if whole or kept or not isinstance(g, types.Array):  # broadcasts against `a` as it is
        return lambda g, a, axis, keepdims: _as_float(g, a)
    if isinstance(axis, types.Integer) and isinstance(keepdims, types.BooleanLiteral):
        return lambda g, a, axis, keepdims: np.expand_dims(_as_float(g, a), axis)
    return None


@overload(_conj)
def _conj_typed(x):
    return (lambda x: x) if _real(x) else None


@overload(_share_among_ties)
def _share_among_ties_typed(g, m, a, axis):
    if not (isinstance(a, types.Array) and _real(a)):
        return None
    if isinstance(axis, (types.NoneType, types.Omitted)) and isinstance(m, (types.Float, types.Integer)):

        def whole(g, m, a, axis):
            hits = a != a if m != m else a == m  # a NaN extremum: the NaNs share the gradient
            return hits * (g / max(hits.sum(), 1))

        return whole
    if isinstance(axis, types.Integer) and isinstance(m, types.Array) and m.ndim == a.ndim:

        def along(g, m, a, axis):  # m has the reduced axis kept
            hits = (a == m) | ((m != m) & (a != a))
            count = np.expand_dims(np.sum(hits, axis), axis)
            return hits * (g / np.maximum(count, 1))

        return along
    return None


HELPERS = tuple(REDUCTIONS.values()) + (_as_float, _expand, _conj, _share_among_ties)
