"""Giving gradients the structure of their inputs.

`fit_gradient(g, x)` turns the adjoint the generated code computed for input `x`
into what a user expects: a float for a Python float or int, an array of the
same shape and (floating) dtype for an array, a writable array never shared with
the gradient's internals.
"""

import numbers

import numpy as np


def _float_dtype(dtype):
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def fit_gradient(g, x):
    if isinstance(x, np.ndarray):
        dtype = _float_dtype(x.dtype)
        if type(g) is np.ndarray and g.shape == x.shape and g.dtype == dtype and g.flags.writeable:
            return g
        return np.array(np.broadcast_to(g, x.shape), dtype=dtype)
    if isinstance(x, np.generic):
        return _float_dtype(x.dtype).type(g)
    if isinstance(x, numbers.Real):
        return float(g)
    if isinstance(x, numbers.Complex):
        return complex(g)
    return g
