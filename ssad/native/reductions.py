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
