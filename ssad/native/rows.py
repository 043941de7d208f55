"""Numba implementations of the helpers that build a row-sparse adjoint (`runtime.rows`).

Compiled code holds the rows of such an adjoint as a pair (row numbers, values): a
gather's adjoint is its rows and its adjoint rows, adding two such pairs joins them,
and `runtime.rows.as_row_gradient` sums repeated rows when the gradient is returned.
For parameters of one or two axes. Importing this module registers them; it needs Numba.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ..runtime.rows import add_rows, copy_rows, row_adjoint, zero_rows


def _table(t):
    return isinstance(t, types.Array) and t.ndim in (1, 2)


@overload(zero_rows)
def _zero_rows(parameter):
    if not _table(parameter):
        return None
    if parameter.ndim == 1:
        return lambda parameter: (np.empty(0, np.intp), np.empty(0, np.float64))
    return lambda parameter: (np.empty(0, np.intp), np.empty((0, parameter.shape[1]), np.float64))


@overload(row_adjoint)
def _row_adjoint(d_rows, parameter, index):
    if not _table(parameter):
        return None
    if isinstance(index, types.Integer):

        def one(d_rows, parameter, index):
            rows = np.empty(1, np.intp)
            rows[0] = index + parameter.shape[0] if index < 0 else index
            return rows, _values(d_rows, parameter, 1)

        return one
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and index.ndim == 1:

        def several(d_rows, parameter, index):
            rows = np.empty(index.shape[0], np.intp)
            for k in range(index.shape[0]):
                rows[k] = index[k] + parameter.shape[0] if index[k] < 0 else index[k]
            return rows, _values(d_rows, parameter, index.shape[0])

        return several
    return None


def _values(d_rows, parameter, count):
    """`d_rows` as `count` rows of the parameter's width (a Python function, compiled
    by its overload)."""
    raise NotImplementedError


@overload(_values)
def _values_typed(d_rows, parameter, count):
    if parameter.ndim == 1:

        def vector(d_rows, parameter, count):
            out = np.empty(count, np.float64)
            out[:] = d_rows
            return out

        return vector

    def matrix(d_rows, parameter, count):
        out = np.empty((count, parameter.shape[1]), np.float64)
        out[:] = d_rows
        return out

    return matrix


@overload(add_rows)
def _add_rows(parts, more):
    if isinstance(parts, types.BaseTuple) and isinstance(more, types.BaseTuple):
        return lambda parts, more: (np.concatenate((parts[0], more[0])), np.concatenate((parts[1], more[1])))
    return None


@overload(copy_rows)
def _copy_rows(parts):
    if isinstance(parts, types.BaseTuple):
        return lambda parts: (parts[0].copy(), parts[1].copy())
    return None


HELPERS = (zero_rows, row_adjoint, add_rows, copy_rows)
