"""Numba implementations of the helpers that read, write and scatter parts of arrays.

`x[index]` in generated code, its adjoint (`getitem_adjoint`, `add_at`) and the undoing
of writes (`saved_part`, `restore_part`, `zero_at`, `clear_at`, `take_part`, `written_part`), for indices Numba
types: integers, slices, tuples of them, boolean masks of vectors, and integer arrays (whose repeated entries
accumulate, as `np.add.at`). Importing this module registers them; it needs Numba.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..runtime import restore_part, saved_part, take_part, written_part
from ..runtime.scatter import add_at, clear_at, getitem_adjoint, zero_at


def _is_number(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _is_basic(index):
    """Whether an index of this type selects each element once (integers and slices)."""
    if isinstance(index, (types.Integer, types.SliceType)):
        return True
    return isinstance(index, types.BaseTuple) and all(isinstance(i, (types.Integer, types.SliceType)) for i in index)


def _is_mask(index, x):
    """Whether `index` is a boolean array picking elements of a vector `x` (each at most once)."""
    return (isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim == 1
            and isinstance(x, types.Array) and x.ndim == 1)


def _part_is_number(x, index):
    """Whether `x[index]` is one element of `x` (every axis indexed by an integer)."""
    if isinstance(index, types.Integer):
        return x.ndim == 1
    return isinstance(index, types.BaseTuple) and len(index) == x.ndim and all(
        isinstance(i, types.Integer) for i in index)


@overload(saved_part)
def _saved_part(container, index):
    if _is_number(container):
        return lambda container, index: container
    if not (isinstance(container, types.Array) and (_is_basic(index) or _is_mask(index, container))):
        return None
    if _part_is_number(container, index):
        return lambda container, index: container[index]
    return lambda container, index: container[index].copy()


@overload(take_part)
def _take_part(d_x, index):
    if _is_number(d_x):
        return lambda d_x, index: d_x
    if not (isinstance(d_x, types.Array) and (_is_basic(index) or _is_mask(index, d_x))):
        return None
    if _part_is_number(d_x, index):
        return lambda d_x, index: d_x[index]
    return lambda d_x, index: d_x[index].copy()


@overload(written_part)
def _written_part(d_x, index):
    return _take_part(d_x, index)  # a basic index or a mask names each position once


@overload(restore_part)
def _restore_part(container, index, old):
    if isinstance(container, types.Array) and (_is_basic(index) or _is_mask(index, container)):

        def restore(container, index, old):
            container[index] = old

        return restore
    return None


@overload(zero_at)
def _zero_at(d_x, index):
    if _is_number(d_x):
        return lambda d_x, index: d_x * 0.0  # the adjoint of a 0-d array, as a number
    if isinstance(d_x, types.Array) and (_is_basic(index) or _is_mask(index, d_x)):

        def zeroed(d_x, index):
            copy = d_x.copy()
            copy[index] = 0.0
            return copy

        return zeroed
    return None


@overload(clear_at)
def _clear_at(d_x, index):
    if _is_number(d_x):
        return lambda d_x, index: d_x * 0.0
    if isinstance(d_x, types.Array) and (_is_basic(index) or _is_mask(index, d_x)):

        def cleared(d_x, index):
            d_x[index] = 0.0
            return d_x

        return cleared
    return None


def _scatter_add(index, x):
    """The implementation of `out[index] += part` for an `index` of type `index`, repeated
    integers accumulating (np.add.at), on an array of type `x`; None if not covered."""
    if (_is_basic(index) and not isinstance(index, types.Integer)) or _is_mask(index, x):

        def basic(out, index, part):
            out[index] += part

        return basic
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


HELPERS = (saved_part, take_part, written_part, restore_part, zero_at, clear_at, getitem_adjoint, add_at)
