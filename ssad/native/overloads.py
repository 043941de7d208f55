"""Numba implementations of what generated code calls besides NumPy.

Each `@overload` gives Numba a compiled form of one runtime helper or rule helper,
chosen when the compiled gradient is typed: the number of dimensions and scalar
versus array are known then, so `unbroadcast(g, x)` on two arrays of one shape is
a shape test, on a scalar and an array a sum. A case these do not cover raises a
Numba typing error, and the gradient falls back to its NumPy code (see `compile`).
Importing this module registers the implementations, with those of `parts` (parts of
arrays and their adjoints) and `reductions` (NumPy reductions along an axis); it needs Numba.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ..rules.linalg import (
    _trace_adjoint, dot_left_adjoint, dot_right_adjoint, matmul_left_adjoint, matmul_right_adjoint,
)
from ..rules.elementwise import _abs_adjoint, _is_complex
from ..rules.shape import _through_cast, _unpack_like
from ..runtime import broadcast_like, iterated, owned, seed, size, stop_gradient, unbroadcast
from ..runtime.refusals import keys_unchanged
from ..runtime.scatter import copy_adjoint
from ..runtime.receivers import not_walked
from ..runtime.item_guards import changed_item_held_once, item_held_by, item_held_elsewhere
from ..runtime.refusals import fresh_result, list_changed
from ..runtime.structure import add_adjoint, owned_argument, zeros_like_value
from .lower import array_of
from .parts import HELPERS as PART_HELPERS
from .rows import HELPERS as ROW_HELPERS
from .reductions import HELPERS as REDUCTION_HELPERS
from .reductions import REDUCTIONS  # noqa: F401  (what lowered code calls; compile reads it here)

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


@overload(owned_argument)
def _owned_argument(x):
    return _owned(x)  # an array or a number; a container is not compiled


@overload(changed_item_held_once)
def _changed_item_held_once(container, item, message, filename, lineno, col):
    if isinstance(container, types.Array):  # an array's item is written in place, as NumPy does
        return lambda container, item, message, filename, lineno, col: None
    return None


@overload(item_held_by)
def _item_held_by(item, holder, message, filename, lineno, col):
    if isinstance(holder, types.Array):  # a copy of an array holds none of its arrays
        return lambda item, holder, message, filename, lineno, col: None
    return None


@overload(item_held_elsewhere)
def _item_held_elsewhere(container, item, names, *holders_and_place):
    if isinstance(container, types.Array) or isinstance(item, (types.Number, types.Boolean)):
        return lambda container, item, names, *holders_and_place: None  # written as NumPy does
    return None


@overload(not_walked)
def _not_walked(value):
    return lambda value: None  # what compiled code holds (arrays, numbers, lists) is no object of the user's


@overload(list_changed)
def _list_changed(receiver, method, text, filename, lineno, col):
    return lambda receiver, method, text, filename, lineno, col: None  # a list: its own methods


@overload(fresh_result)
def _fresh_result(result, receiver, method, text, filename, lineno, col):
    return lambda result, receiver, method, text, filename, lineno, col: None  # an array's, a list's own method


@overload(copy_adjoint)
def _copy_adjoint(d_x):
    if isinstance(d_x, types.Array):
        return lambda d_x: d_x.copy()
    if _is_number(d_x):
        return lambda d_x: d_x
    return None


@overload(iterated)
def _iterated(xs):
    if isinstance(xs, (types.Array, types.BaseTuple, types.List, types.RangeType)):
        return lambda xs: xs
    return None


@overload(add_adjoint)
def _add_adjoint(a, b):
    if isinstance(a, types.NoneType):
        return lambda a, b: b
    if isinstance(b, types.NoneType):
        return lambda a, b: a
    if (_is_number(a) or isinstance(a, types.Array)) and (_is_number(b) or isinstance(b, types.Array)):
        return lambda a, b: a + b
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


@overload(dot_left_adjoint)
def _dot_left_adjoint(dy, a, b):
    # np.dot of vectors and matrices is their matmul; of more axes, a tensordot (not compiled)
    if isinstance(a, types.Array) and isinstance(b, types.Array) and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2:
        return lambda dy, a, b: matmul_left_adjoint(dy, a, b)
    return None


@overload(dot_right_adjoint)
def _dot_right_adjoint(dy, a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2:
        return lambda dy, a, b: matmul_right_adjoint(dy, a, b)
    return None


@overload(array_of)
def _array_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if isinstance(x, (types.List, types.BaseTuple)):
        return lambda x: np.array(x)
    return None


@overload(_is_complex)
def _is_complex_typed(x):
    dtype = x.dtype if isinstance(x, types.Array) else x
    complex_ = isinstance(dtype, types.Complex)
    return lambda x: complex_


@overload(_abs_adjoint)
def _abs_adjoint_typed(dy, x):
    dtype = x.dtype if isinstance(x, types.Array) else x
    return None if isinstance(dtype, types.Complex) else (lambda dy, x: dy * np.sign(x))


@overload(_unpack_like)
def _unpack_like_typed(g, x):
    # the adjoint of an array read as an array (`np.array(x)`, `np.asarray(x)`) is one
    if isinstance(g, types.Array) and isinstance(x, types.Array) and isinstance(g.dtype, types.Float):
        return lambda g, x: np.ascontiguousarray(g).reshape(x.shape)
    return None


@overload(_through_cast)
def _through_cast_typed(g, y):
    # a conversion to floats passes the derivative on; to integers or booleans, zero
    dtype = y.dtype if isinstance(y, types.Array) else y
    if isinstance(dtype, (types.Float, types.Complex)):
        return lambda g, y: g
    if isinstance(g, types.Array) and isinstance(dtype, (types.Integer, types.Boolean)):
        return lambda g, y: np.zeros(g.shape)
    return None


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


@overload(keys_unchanged)
def _keys_unchanged(walked, target, index, message, filename, lineno, col):
    if isinstance(walked, types.Array):  # a loop over an array's items: no dict whose keys could change

        def unchanged(walked, target, index, message, filename, lineno, col):
            return None

        return unchanged
    return None


# the helpers above: generated code that reads one of these from its namespace can be compiled
HELPERS = (
    seed, zeros_like_value, size, stop_gradient, owned, owned_argument, changed_item_held_once, item_held_by,
    item_held_elsewhere,
    broadcast_like,
    unbroadcast, copy_adjoint, iterated, add_adjoint, matmul_left_adjoint, matmul_right_adjoint, dot_left_adjoint,
    dot_right_adjoint, _trace_adjoint, array_of, _unpack_like, _through_cast, _is_complex, _abs_adjoint, keys_unchanged,
    not_walked, list_changed, fresh_result,
) + PART_HELPERS + REDUCTION_HELPERS + ROW_HELPERS
