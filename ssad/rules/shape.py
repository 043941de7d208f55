"""Rules: reshaping, joining, indexing and array constructors.

Every primitive here only moves, copies or selects elements, so each adjoint sends
`dy` back to where the elements came from:

- a rearrangement (reshape, transpose, flip, roll, ...) applies the inverse
  rearrangement to `dy`;
- a selection (diagonal, take, the interior of a padded array) scatters `dy` into
  zeros shaped like the input, adding where one element was selected more than once;
- a duplication (broadcast_to, tile, repeat) sums `dy` over the copies.

Each of these primitives is linear in its float arguments, so each tangent rule (placed
after the adjoint rule of its primitive) applies the primitive itself to the tangents:
a list of tangents is joined like the list, a split gives a list of tangents, and a
border or fill that does not depend on the input gets a zero tangent.

Conventions:

- An adjoint has the shape of its input and the input's float dtype (float64 for
  integer inputs). A Python number's adjoint is a NumPy float scalar.
- The adjoint of a list or tuple argument (np.concatenate, np.stack, np.array of a
  list, ...) is a list or tuple of the same type and length, one adjoint per item,
  each shaped like its item.
- Method rules (`np.ndarray.reshape`, ...) receive the array the method is called on
  as their first argument after `dy, y`.
- Rules that need branching call a private helper defined at the end of the module,
  so each rule stays one line that the compiler can inline.
- Functions that build arrays from shapes alone (np.zeros, np.arange, ...) and
  functions that return shapes or indices are non-differentiable. np.full,
  np.full_like and np.linspace have rules, since their values depend on a fill value
  or on the endpoints.
- np.logspace is base ** np.linspace(start, stop): start, stop and base get gradients
  (base's is y * e / base, so base must be positive, as for a real power). np.geomspace
  is start ** (1 - t) * stop ** t along the samples (signs kept, real inputs): its
  adjoints are (1 - t) y / start and t y / stop summed over the samples. Integer samples
  (dtype=int) are truncated: zero gradient. num, endpoint and axis carry none.
- np.kaiser(M, beta) has a derivative in beta, (r I1(beta r) - y I1(beta)) / I0(beta),
  0 for M <= 1. The other windows (np.hanning, np.hamming, np.blackman, np.bartlett) take
  only an integer length: non-differentiable.
"""

import math
import numbers

import numpy as np

from ..runtime.defaults import dict_derivative
from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, c_, is_other_array, pack_like, r_, size, summed_at, unbroadcast, zeros_like_value
from .elementwise import _i1, _through_cast


# ----- Reshaping -----


@adjoint(np.reshape)
def reshape_adjoint(dy, y, a, shape=None, order="C", *, newshape=None, copy=None):
    return (_reshape_like(dy, a, order),)


@tangent(np.reshape)
def reshape_tangent(tangents, y, a, shape=None, order="C", *, newshape=None, copy=None):
    return _reshape_tangent(tangents[0], a, np.shape(y), order)


@adjoint(np.ravel)
def ravel_adjoint(dy, y, a, order="C"):
    return (_reshape_like(dy, a, order),)


@tangent(np.ravel)
def ravel_tangent(tangents, y, a, order="C"):
    return _reshape_tangent(tangents[0], a, np.shape(y), order)


@adjoint(np.squeeze)
def squeeze_adjoint(dy, y, a, axis=None):
    return (np.reshape(dy, np.shape(a)),)


@tangent(np.squeeze)
def squeeze_tangent(tangents, y, a, axis=None):
    return np.reshape(tangents[0], np.shape(y))


@adjoint(np.expand_dims)
def expand_dims_adjoint(dy, y, a, axis):
    return (np.reshape(dy, np.shape(a)),)


@tangent(np.expand_dims)
def expand_dims_tangent(tangents, y, a, axis):
    return _reshape_tangent(tangents[0], a, np.shape(y), "C")  # a zero tangent may be a scalar


# np.atleast_1d(a) returns one array; np.atleast_1d(a, b, ...) a tuple of them


@adjoint(np.atleast_1d)
def atleast_1d_adjoint(dy, y, *arys):
    return _unatleast(dy, arys)


@tangent(np.atleast_1d)
def atleast_1d_tangent(tangents, y, *arys):
    return _atleast_tangent(tangents, y, arys)


@adjoint(np.atleast_2d)
def atleast_2d_adjoint(dy, y, *arys):
    return _unatleast(dy, arys)


@tangent(np.atleast_2d)
def atleast_2d_tangent(tangents, y, *arys):
    return _atleast_tangent(tangents, y, arys)


@adjoint(np.atleast_3d)
def atleast_3d_adjoint(dy, y, *arys):
    return _unatleast(dy, arys)


@tangent(np.atleast_3d)
def atleast_3d_tangent(tangents, y, *arys):
    return _atleast_tangent(tangents, y, arys)


@adjoint(np.transpose)
def transpose_adjoint(dy, y, a, axes=None):
    return (_untranspose(dy, axes),)


@tangent(np.transpose)
def transpose_tangent(tangents, y, a, axes=None):
    return np.transpose(tangents[0], axes)


@adjoint(np.swapaxes)
def swapaxes_adjoint(dy, y, a, axis1, axis2):
    return (np.swapaxes(dy, axis1, axis2),)


@tangent(np.swapaxes)
def swapaxes_tangent(tangents, y, a, axis1, axis2):
    return np.swapaxes(tangents[0], axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis_adjoint(dy, y, a, source, destination):
    return (np.moveaxis(dy, destination, source),)


@tangent(np.moveaxis)
def moveaxis_tangent(tangents, y, a, source, destination):
    return np.moveaxis(tangents[0], source, destination)


@adjoint(np.broadcast_to)
def broadcast_to_adjoint(dy, y, array, shape, subok=False):
    return (unbroadcast(dy, array),)


@tangent(np.broadcast_to)
def broadcast_to_tangent(tangents, y, array, shape, subok=False):
    return np.broadcast_to(tangents[0], np.shape(y))


@adjoint(np.flip)
def flip_adjoint(dy, y, m, axis=None):
    return (np.flip(dy, axis),)


@tangent(np.flip)
def flip_tangent(tangents, y, m, axis=None):
    return np.flip(tangents[0], axis)


@adjoint(np.fliplr)
def fliplr_adjoint(dy, y, m):
    return (np.fliplr(dy),)


@tangent(np.fliplr)
def fliplr_tangent(tangents, y, m):
    return np.fliplr(tangents[0])


@adjoint(np.flipud)
def flipud_adjoint(dy, y, m):
    return (np.flipud(dy),)


@tangent(np.flipud)
def flipud_tangent(tangents, y, m):
    return np.flipud(tangents[0])


@adjoint(np.roll)
def roll_adjoint(dy, y, a, shift, axis=None):
    return (np.roll(dy, np.negative(shift), axis),)


@tangent(np.roll)
def roll_tangent(tangents, y, a, shift, axis=None):
    return np.roll(tangents[0], shift, axis)


@adjoint(np.tile)
def tile_adjoint(dy, y, A, reps):
    return (_untile(dy, A, reps),)


@tangent(np.tile)
def tile_tangent(tangents, y, A, reps):
    return np.tile(tangents[0], reps)


@adjoint(np.repeat)
def repeat_adjoint(dy, y, a, repeats, axis=None):
    return (_unrepeat(dy, a, repeats, axis),)


@tangent(np.repeat)
def repeat_tangent(tangents, y, a, repeats, axis=None):
    return np.repeat(tangents[0], repeats, axis)


# The keywords are np.pad's own (it takes them as **kwargs); only `reflect_type` changes a
# mode these rules describe. The widths are integers: no gradient.
@adjoint(np.pad)
def pad_adjoint(
    dy, y, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
    reflect_type="even",
):
    return (_unpad(dy, array, pad_width, mode, reflect_type), None)


@tangent(np.pad)
def pad_tangent(
    tangents, y, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
    reflect_type="even",
):
    return _pad_tangent(tangents[0], array, pad_width, mode, reflect_type)


@adjoint(np.array)
def array_adjoint(
    dy, y, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None
):
    return (_unpack_like(np.reshape(_through_cast(dy, y), np.shape(object)), object),)


@tangent(np.array)
def array_tangent(
    tangents, y, object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None
):
    return _through_cast(np.reshape(np.array(_filled(tangents[0], object), dtype=_float_dtype(y)), np.shape(y)), y)


@adjoint(np.asarray)
def asarray_adjoint(dy, y, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return (_unpack_like(_through_cast(dy, y), a),)


@tangent(np.asarray)
def asarray_tangent(tangents, y, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return _through_cast(np.asarray(_filled(tangents[0], a), dtype=_float_dtype(y)), y)


@adjoint(np.copy)
def copy_adjoint(dy, y, a, order="K", subok=False):
    return (_unpack_like(dy, a),)


@tangent(np.copy)
def copy_tangent(tangents, y, a, order="K", subok=False):
    return np.array(_filled(tangents[0], a), dtype=_float_dtype(y))


# ----- Reshaping: ndarray methods and attributes -----


@adjoint(np.ndarray.reshape)
def ndarray_reshape_adjoint(dy, y, a, *shape, order="C", copy=None):
    return (_reshape_like(dy, a, order),)


@tangent(np.ndarray.reshape)
def ndarray_reshape_tangent(tangents, y, a, *shape, order="C", copy=None):
    return _reshape_tangent(tangents[0], a, np.shape(y), order)


@adjoint(np.ndarray.ravel)
def ndarray_ravel_adjoint(dy, y, a, order="C"):
    return (_reshape_like(dy, a, order),)


@tangent(np.ndarray.ravel)
def ndarray_ravel_tangent(tangents, y, a, order="C"):
    return _reshape_tangent(tangents[0], a, np.shape(y), order)


@adjoint(np.ndarray.flatten)
def ndarray_flatten_adjoint(dy, y, a, order="C"):
    return (_reshape_like(dy, a, order),)


@tangent(np.ndarray.flatten)
def ndarray_flatten_tangent(tangents, y, a, order="C"):
    # flatten always copies: so does its tangent, which must not alias the tangent of `a`
    return np.copy(_reshape_tangent(tangents[0], a, np.shape(y), order))


def _item_position(a, index):
    """The flat position `a.item(*index)` reads: 0 for a one-element array, a flat index,
    or the position of a tuple of indices (negative ones counted from the end)."""
    shape = np.shape(a)
    if len(index) == 0:
        return 0
    if len(index) == 1 and not isinstance(index[0], tuple):
        return index[0] % max(np.size(a), 1)
    indices = index[0] if len(index) == 1 else index
    return int(np.ravel_multi_index(tuple(i % n for i, n in zip(indices, shape, strict=True)), shape))


nondifferentiable(_item_position)  # a position, not a value


@adjoint(np.ndarray.item)
def ndarray_item_adjoint(dy, y, a, *index):
    # the element read gets dy; a one-hot of a's shape, so it differentiates again
    return (np.reshape((np.arange(np.size(a)) == _item_position(a, index)) * dy, np.shape(a)),)


@tangent(np.ndarray.item)
def ndarray_item_tangent(tangents, y, a, *index):
    return np.ravel(broadcast_like(tangents[0], a))[_item_position(a, index)].item()


@adjoint(np.ndarray.squeeze)
def ndarray_squeeze_adjoint(dy, y, a, axis=None):
    return (np.reshape(dy, np.shape(a)),)


@tangent(np.ndarray.squeeze)
def ndarray_squeeze_tangent(tangents, y, a, axis=None):
    return np.reshape(tangents[0], np.shape(y))


@adjoint(np.ndarray.transpose)
def ndarray_transpose_adjoint(dy, y, a, *axes):
    return (_untranspose(dy, _method_axes(axes)),)


@tangent(np.ndarray.transpose)
def ndarray_transpose_tangent(tangents, y, a, *axes):
    return np.transpose(tangents[0], _method_axes(axes))


@adjoint(np.ndarray.T)
def ndarray_T_adjoint(dy, y, x):
    return (np.transpose(dy),)


@tangent(np.ndarray.T)
def ndarray_T_tangent(tangents, y, x):
    return np.transpose(tangents[0])


@adjoint(np.ndarray.swapaxes)
def ndarray_swapaxes_adjoint(dy, y, a, axis1, axis2):
    return (np.swapaxes(dy, axis1, axis2),)


@tangent(np.ndarray.swapaxes)
def ndarray_swapaxes_tangent(tangents, y, a, axis1, axis2):
    return np.swapaxes(tangents[0], axis1, axis2)


@adjoint(np.ndarray.copy)
def ndarray_copy_adjoint(dy, y, a, order="C"):
    return (dy,)


@tangent(np.ndarray.copy)
def ndarray_copy_tangent(tangents, y, a, order="C"):
    if isinstance(a, (dict, list)):  # `d.copy()` of a dict or a list: its tangent is one too (or a zero), copied
        if isinstance(tangents[0], dict):  # the copy's own (a defaultdict's reads the keys the copy makes)
            return dict_derivative(y, dict(tangents[0]), zeros_like_value)
        return tangents[0].copy() if isinstance(tangents[0], list) else tangents[0]
    return np.copy(tangents[0])


@adjoint(np.ndarray.repeat)
def ndarray_repeat_adjoint(dy, y, a, repeats, axis=None):
    return (_unrepeat(dy, a, repeats, axis),)


@tangent(np.ndarray.repeat)
def ndarray_repeat_tangent(tangents, y, a, repeats, axis=None):
    return np.repeat(tangents[0], repeats, axis)


# ----- Joining and splitting -----


@adjoint(np.concatenate)
def concatenate_adjoint(dy, y, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return (_unconcatenate(dy, arrays, axis),)


@tangent(np.concatenate)
def concatenate_tangent(tangents, y, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return np.concatenate(_filled(tangents[0], arrays), axis)


@adjoint(np.stack)
def stack_adjoint(dy, y, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return (_unpack_like(np.moveaxis(dy, axis, 0), arrays),)


@tangent(np.stack)
def stack_tangent(tangents, y, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return np.stack(_filled(tangents[0], arrays), axis)


@adjoint(np.hstack)
def hstack_adjoint(dy, y, tup, *, dtype=None, casting="same_kind"):
    return (_unconcatenate(dy, tup, _hstack_axis(tup), np.atleast_1d),)


@tangent(np.hstack)
def hstack_tangent(tangents, y, tup, *, dtype=None, casting="same_kind"):
    return np.hstack(_filled(tangents[0], tup))


@adjoint(np.vstack)
def vstack_adjoint(dy, y, tup, *, dtype=None, casting="same_kind"):
    return (_unconcatenate(dy, tup, 0, np.atleast_2d),)


@tangent(np.vstack)
def vstack_tangent(tangents, y, tup, *, dtype=None, casting="same_kind"):
    return np.vstack(_filled(tangents[0], tup))


@adjoint(np.dstack)
def dstack_adjoint(dy, y, tup):
    return (_unconcatenate(dy, tup, 2, np.atleast_3d),)


@tangent(np.dstack)
def dstack_tangent(tangents, y, tup):
    return np.dstack(_filled(tangents[0], tup))


@adjoint(np.column_stack)
def column_stack_adjoint(dy, y, tup):
    return (_unconcatenate(dy, tup, 1, _as_column),)


@tangent(np.column_stack)
def column_stack_tangent(tangents, y, tup):
    return np.column_stack(_filled(tangents[0], tup))


# np.r_[a, b] and np.c_[a, b]: ssad lowers the subscripts to the calls r_(a, b) and c_(a, b)


@adjoint(r_)
def r_adjoint(dy, y, *pieces):
    _check_no_directive(pieces, "np.r_")
    return tuple(_unconcatenate(dy, pieces, 0, np.atleast_1d))


@tangent(r_)
def r_tangent(tangents, y, *pieces):
    _check_no_directive(pieces, "np.r_")
    return r_(*_filled(tangents, pieces))


@adjoint(c_)
def c_adjoint(dy, y, *pieces):
    _check_no_directive(pieces, "np.c_")
    return tuple(_unconcatenate(dy, pieces, -1, _c_piece))


@tangent(c_)
def c_tangent(tangents, y, *pieces):
    _check_no_directive(pieces, "np.c_")
    return c_(*_filled(tangents, pieces))


@adjoint(np.split)
def split_adjoint(dy, y, ary, indices_or_sections, axis=0):
    return (np.concatenate(dy, axis),)


@tangent(np.split)
def split_tangent(tangents, y, ary, indices_or_sections, axis=0):
    return np.split(tangents[0], indices_or_sections, axis)


@adjoint(np.array_split)
def array_split_adjoint(dy, y, ary, indices_or_sections, axis=0):
    return (np.concatenate(dy, axis),)


@tangent(np.array_split)
def array_split_tangent(tangents, y, ary, indices_or_sections, axis=0):
    return np.array_split(tangents[0], indices_or_sections, axis)


@adjoint(np.hsplit)
def hsplit_adjoint(dy, y, ary, indices_or_sections):
    return (np.concatenate(dy, 0 if np.ndim(ary) == 1 else 1),)


@tangent(np.hsplit)
def hsplit_tangent(tangents, y, ary, indices_or_sections):
    return np.hsplit(tangents[0], indices_or_sections)


@adjoint(np.vsplit)
def vsplit_adjoint(dy, y, ary, indices_or_sections):
    return (np.concatenate(dy, 0),)


@tangent(np.vsplit)
def vsplit_tangent(tangents, y, ary, indices_or_sections):
    return np.vsplit(tangents[0], indices_or_sections)


@adjoint(np.dsplit)
def dsplit_adjoint(dy, y, ary, indices_or_sections):
    return (np.concatenate(dy, 2),)


@tangent(np.dsplit)
def dsplit_tangent(tangents, y, ary, indices_or_sections):
    return np.dsplit(tangents[0], indices_or_sections)


# ----- Indexing -----


@adjoint(np.take)
def take_adjoint(dy, y, a, indices, axis=None, out=None, mode="raise"):
    return (_untake(dy, a, indices, axis, mode),)


@tangent(np.take)
def take_tangent(tangents, y, a, indices, axis=None, out=None, mode="raise"):
    return np.take(tangents[0], indices, axis, mode=mode)


@adjoint(np.ndarray.take)
def ndarray_take_adjoint(dy, y, a, indices, axis=None, out=None, mode="raise"):
    return (_untake(dy, a, indices, axis, mode),)


@tangent(np.ndarray.take)
def ndarray_take_tangent(tangents, y, a, indices, axis=None, out=None, mode="raise"):
    return np.take(tangents[0], indices, axis, mode=mode)


@adjoint(np.take_along_axis)
def take_along_axis_adjoint(dy, y, arr, indices, axis=-1):
    return (_untake_along_axis(dy, arr, indices, axis),)


@tangent(np.take_along_axis)
def take_along_axis_tangent(tangents, y, arr, indices, axis=-1):
    return np.take_along_axis(tangents[0], indices, axis)


@adjoint(np.diag)
def diag_adjoint(dy, y, v, k=0):
    return (_undiag(dy, v, k),)


@tangent(np.diag)
def diag_tangent(tangents, y, v, k=0):
    return np.diag(tangents[0], k)


@adjoint(np.diagonal)
def diagonal_adjoint(dy, y, a, offset=0, axis1=0, axis2=1):
    return (_undiagonal(dy, a, offset, axis1, axis2),)


@tangent(np.diagonal)
def diagonal_tangent(tangents, y, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(tangents[0], offset, axis1, axis2)


@adjoint(np.ndarray.diagonal)
def ndarray_diagonal_adjoint(dy, y, a, offset=0, axis1=0, axis2=1):
    return (_undiagonal(dy, a, offset, axis1, axis2),)


@tangent(np.ndarray.diagonal)
def ndarray_diagonal_tangent(tangents, y, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(tangents[0], offset, axis1, axis2)


@adjoint(np.triu)
def triu_adjoint(dy, y, m, k=0):
    # unbroadcast: np.triu of a 1-D array repeats it into a square matrix
    return (unbroadcast(np.triu(dy, k), m),)


@tangent(np.triu)
def triu_tangent(tangents, y, m, k=0):
    return np.triu(broadcast_like(tangents[0], m), k)  # a zero tangent may come as the float 0.0


@adjoint(np.tril)
def tril_adjoint(dy, y, m, k=0):
    return (unbroadcast(np.tril(dy, k), m),)


@tangent(np.tril)
def tril_tangent(tangents, y, m, k=0):
    return np.tril(broadcast_like(tangents[0], m), k)  # a zero tangent may come as the float 0.0


# ----- Constructors -----


@adjoint(np.full)
def full_adjoint(dy, y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    return (None, unbroadcast(dy, fill_value))


@tangent(np.full)
def full_tangent(tangents, y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    return np.full(np.shape(y), tangents[1], dtype=_float_dtype(y))


@adjoint(np.full_like)
def full_like_adjoint(
    dy, y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    return (None, unbroadcast(dy, fill_value))


@tangent(np.full_like)
def full_like_tangent(
    tangents, y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None
):
    # the values of `a` do not reach y: only the fill value's tangent does
    return np.full(np.shape(y), tangents[1], dtype=_float_dtype(y))


@adjoint(np.linspace)
def linspace_adjoint(
    dy, y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None
):
    grads = _unlinspace(dy, y, start, stop, num, endpoint, retstep, axis)
    return (grads[0], grads[1])


@tangent(np.linspace)
def linspace_tangent(
    tangents, y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None
):
    return _linspace_tangent(tangents[0], tangents[1], y, start, stop, num, endpoint, retstep, axis)


@adjoint(np.logspace)
def logspace_adjoint(dy, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return _unlogspace(dy, y, start, stop, num, endpoint, base, axis)


@tangent(np.logspace)
def logspace_tangent(tangents, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    t_base = tangents[4] if len(tangents) > 4 else None
    return _logspace_tangent(tangents[0], tangents[1], t_base, y, start, stop, num, endpoint, base, axis)


@adjoint(np.geomspace)
def geomspace_adjoint(dy, y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return _ungeomspace(dy, y, start, stop, num, endpoint, axis)


@tangent(np.geomspace)
def geomspace_tangent(tangents, y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return _geomspace_tangent(tangents[0], tangents[1], y, start, stop, num, endpoint, axis)


@adjoint(np.kaiser)
def kaiser_adjoint(dy, y, M, beta):
    return (None, np.sum(dy * _kaiser_slope(y, M, beta)))


@tangent(np.kaiser)
def kaiser_tangent(tangents, y, M, beta):
    return broadcast_like(0.0 if tangents[1] is None else tangents[1], y) * _kaiser_slope(y, M, beta)


# ----- Constructors (non-differentiable) -----

nondifferentiable(
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.arange,
    np.eye,
    np.identity,
    np.tri,
    np.indices,
)

# window functions of an integer length M
nondifferentiable(np.hanning, np.hamming, np.blackman, np.bartlett, np.mask_indices)

# ----- Shapes, indices and types (non-differentiable) -----

nondifferentiable(
    np.shape,
    np.ndim,
    np.size,
    np.ndarray.shape,
    np.ndarray.ndim,
    np.ndarray.size,
    np.ndarray.dtype,
    np.nonzero,
    np.ndarray.nonzero,
    np.flatnonzero,
    np.diag_indices,
    np.diag_indices_from,
    np.tril_indices,
    np.tril_indices_from,
    np.triu_indices,
    np.triu_indices_from,
    np.result_type,
    np.isscalar,
    np.ravel_multi_index,
    np.unravel_index,
    np.ix_,
    np.broadcast_shapes,
    np.einsum_path,
    # dtypes and memory
    np.can_cast,
    np.min_scalar_type,
    np.mintypecode,
    np.common_type,
    np.promote_types,
    np.isdtype,
    np.issubdtype,
    np.may_share_memory,
    np.shares_memory,
)

# ----- Tests, comparisons and integer arithmetic (non-differentiable: boolean or integer results) -----

nondifferentiable(
    np.isclose,
    np.allclose,
    np.array_equal,
    np.array_equiv,
    np.isin,
    np.isreal,
    np.iscomplex,
    np.isrealobj,
    np.iscomplexobj,
    np.isneginf,
    np.isposinf,
    np.isnat,
    # integer-only ufuncs (np.bitwise_not, np.bitwise_invert are np.invert; np.bitwise_left_shift is np.left_shift)
    np.gcd,
    np.lcm,
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.invert,
    np.bitwise_count,
    np.left_shift,
    np.right_shift,
)


# ----- Helpers -----


def _float_dtype(x):
    """The dtype of x's adjoint: x's own dtype when inexact, float64 otherwise."""
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype  # np.asarray would compute a dask array
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


nondifferentiable(_float_dtype)  # a dtype carries no gradient, even when read from an input that does


def _reshape_like(dy, a, order):
    """Undo np.reshape(a, ..., order) or np.ravel(a, order): `dy` back in a's shape.

    'C' and 'F' are fixed index orders, so reshaping back with the same order inverts
    them. 'A' and 'K' choose the order from a's memory layout, which dy need not share,
    so they are resolved against `a`.
    """
    if order == "A":
        order = "F" if isinstance(a, np.ndarray) and np.isfortran(a) else "C"
    elif order == "K" and isinstance(a, np.ndarray) and not a.flags.c_contiguous:
        return _unravel_memory_order(dy, a)
    elif order == "K":
        order = "C"
    if order == "C":  # the default, which dask's reshape (no `order`) also follows
        return np.reshape(dy, np.shape(a))
    return np.reshape(dy, np.shape(a), order=order)


def _unravel_memory_order(dy, a):
    """Undo np.ravel(a, order='K'), which reads a non-contiguous `a` in memory order."""
    _check_memory_order(a)
    axes = _memory_axes(a)
    # ravel 'K' reads `a` transposed to `axes` in index order: reshape to that, transpose back
    laid_out = np.reshape(dy, _memory_shape(a, axes))
    return np.transpose(laid_out, np.argsort(axes)).astype(_float_dtype(a), copy=False)


def _memory_axes(a):
    """The axes of `a` from the slowest-varying in memory to the fastest: the order in which
    np.ravel(a, order='K') reads them (an axis with a negative stride is still read in index
    order)."""
    return np.argsort([-abs(stride) for stride in a.strides], kind="stable")


def _memory_shape(a, axes):
    """The shape of `a` transposed to `axes`."""
    return tuple(a.shape[k] for k in axes)


def _check_memory_order(a):
    """Refuse np.ravel(a, order='K') of a broadcast view, whose element order the shape does not fix."""
    if any(stride == 0 and n > 1 for stride, n in zip(a.strides, a.shape, strict=True)):
        raise located(
            "cannot differentiate np.ravel(x, order='K') where x is a broadcast view "
            "(it has a zero stride): NumPy's element order is not defined by the shape. "
            "Use order='C', or copy x first (np.ascontiguousarray(x))."
        )


# strides, shapes and checks: no gradient, and not transformed when a rule is differentiated again
nondifferentiable(_check_memory_order, _memory_axes, _memory_shape)


def _reshape_tangent(t, a, shape, order):
    """np.reshape(a, shape, order) or np.ravel(a, order) applied to the tangent `t` of `a`.

    'C' and 'F' are index orders, so `t` reshapes with the same order as `a`. 'A' and 'K'
    choose the order from a's memory layout, which t need not share, so they are resolved
    against `a`. A zero tangent may arrive as the scalar 0.0: it is spread to a's shape.
    """
    if np.ndim(t) == 0 and np.ndim(a) != 0:
        t = np.broadcast_to(t, np.shape(a))
    if order == "A":
        order = "F" if isinstance(a, np.ndarray) and np.isfortran(a) else "C"
    elif order == "K" and isinstance(a, np.ndarray) and not a.flags.c_contiguous:
        return np.reshape(_ravel_memory_order(t, a), shape)
    elif order == "K":
        order = "C"
    return np.reshape(t, shape, order=order)


def _ravel_memory_order(t, a):
    """np.ravel(a, order='K') applied to `t`: the elements of `t` read in a's memory order."""
    _check_memory_order(a)
    # empty_like keeps a's axis order in memory (with positive strides), so ravel 'K'
    # reads this copy of t in the order it reads a
    laid_out = np.empty_like(a, dtype=np.result_type(t))
    laid_out[...] = t
    return np.ravel(laid_out, order="K")


def _unatleast(dy, arys):
    """Undo np.atleast_1d/2d/3d(*arys): each adjoint reshaped back to its input (one array
    for one input, a tuple of them for several)."""
    if len(arys) == 1:
        return (np.reshape(dy, np.shape(arys[0])),)
    return tuple([np.reshape(d, np.shape(a)) for d, a in zip(dy, arys, strict=True)])


def _atleast_tangent(tangents, y, arys):
    """np.atleast_1d/2d/3d(*arys) applied to the tangents: reshaped like the results."""
    if len(arys) == 1:
        return np.reshape(_filled(tangents[0], arys[0]), np.shape(y))
    return tuple([np.reshape(_filled(t, a), np.shape(out)) for t, a, out in zip(tangents, arys, y, strict=True)])


def _untranspose(dy, axes):
    """Undo np.transpose(x, axes): transpose `dy` by the inverse permutation."""
    if axes is None:
        return np.transpose(dy)  # reversing the axes is its own inverse
    return np.transpose(dy, np.argsort(np.mod(axes, np.ndim(dy))).tolist())


def _method_axes(axes):
    """The `axes` of np.transpose for x.transpose(*axes): x.transpose(1, 0), ((1, 0)), () ..."""
    if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
        return axes[0]
    return axes or None


def _split_axis(shape, axis):
    """View an array of `shape` as (outer, n, inner) around `axis` (None: flattened)."""
    if axis is None:
        return 1, math.prod(shape), 1
    axis = axis % len(shape)
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


def _scatter_add(dy, index, outer, n, inner, dtype):
    """Sum `dy`, viewed as (outer, index.size, inner), into slots `index` of (outer, n, inner).

    Returns the flat result. Repeated indices add up. np.bincount over flat positions
    does this in one pass; np.add.at computes the same sums but measured 3-4x slower
    for row gathers such as 512 rows of a 943x32 matrix.
    """
    positions = (
        np.arange(outer)[:, None, None] * (n * inner)
        + np.ravel(index)[None, :, None] * inner
        + np.arange(inner)[None, None, :]
    )
    positions = np.ravel(positions)
    weights = np.ravel(dy)
    size = outer * n * inner
    if np.iscomplexobj(weights):  # bincount takes real weights only
        real = summed_at(positions, weights.real, size)
        total = real + 1j * summed_at(positions, weights.imag, size)
    else:
        total = summed_at(positions, weights, size)
    return total.astype(dtype, copy=False)


def _untake(dy, a, indices, axis, mode):
    """Undo np.take(a, indices, axis, mode=mode): scatter-add `dy` into zeros like `a`."""
    shape = np.shape(a)
    outer, n, inner = _split_axis(shape, axis)
    index = np.asarray(indices, dtype=np.intp)
    if mode == "clip":
        index = np.clip(index, 0, n - 1)
    else:
        # 'wrap' wraps every index; 'raise' accepted only indices in [-n, n), where a
        # negative index counts from the end, which the same modulo gives.
        index = np.mod(index, n)
    grad = _scatter_add(dy, index, outer, n, inner, _float_dtype(a))
    return np.reshape(grad, shape)


def _untake_along_axis(dy, arr, indices, axis):
    """Undo np.take_along_axis(arr, indices, axis): scatter-add `dy` into zeros like `arr`.

    Along the other axes each element of `dy` comes from the same position of `arr`, or
    from position 0 where `arr` has length 1 there and was broadcast.
    """
    shape = np.shape(arr)
    if axis is None:  # indices into the flattened array
        return _untake(dy, arr, indices, None, "raise")
    axis = axis % len(shape)
    where = []
    for k, n in enumerate(shape):
        if k == axis:
            where.append(np.mod(indices, n))
        else:
            where.append(np.reshape(np.arange(n), [n if j == k else 1 for j in range(len(shape))]))
    positions = np.ravel_multi_index(tuple(np.broadcast_to(w, np.shape(dy)) for w in where), shape)
    grad = _scatter_add(dy, positions, 1, math.prod(shape), 1, _float_dtype(arr))
    return np.reshape(grad, shape)


def _unrepeat(dy, a, repeats, axis):
    """Undo np.repeat(a, repeats, axis): sum `dy` over the copies of each element."""
    shape = np.shape(a)
    outer, n, inner = _split_axis(shape, axis)
    counts = np.ravel(repeats)
    if counts.size == 1:
        # every element is copied the same number of times: the copies sit side by side
        copies = np.reshape(dy, (outer, n, int(counts[0]), inner))
        grad = np.sum(copies, axis=2).astype(_float_dtype(a), copy=False)
    else:
        grad = _scatter_add(dy, np.repeat(np.arange(n), counts), outer, n, inner, _float_dtype(a))
    return np.reshape(grad, shape)


def _untile(dy, A, reps):
    """Undo np.tile(A, reps): sum `dy` over the tiles."""
    shape = np.shape(A)
    reps = tuple(int(r) for r in np.ravel(reps))
    ndim = max(len(shape), len(reps))
    # np.tile pads both A's shape and reps with leading ones to a common length
    full_shape = (1,) * (ndim - len(shape)) + shape
    full_reps = (1,) * (ndim - len(reps)) + reps
    # each output axis of length r * s splits into (tile number r, position s)
    split = tuple(size for pair in zip(full_reps, full_shape, strict=True) for size in pair)
    tiles = np.reshape(dy, split)
    return np.reshape(np.sum(tiles, axis=tuple(range(0, 2 * ndim, 2))), shape)


def _pad_widths(pad_width, ndim):
    """np.pad's `pad_width` as an (ndim, 2) integer array of (before, after) pairs."""
    if isinstance(pad_width, dict):
        widths = np.zeros((ndim, 2), dtype=np.intp)
        for axis, width in pad_width.items():
            widths[axis] = np.broadcast_to(width, (2,))
        return widths
    return np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (ndim, 2))


# np.pad modes that fill the border with copies of elements of the input
_COPYING_PAD_MODES = ("edge", "wrap", "reflect", "symmetric")


def _unpad(dy, array, pad_width, mode, reflect_type):
    """Undo np.pad(array, pad_width, mode, reflect_type=reflect_type)."""
    _check_pad_mode(mode, reflect_type, "gradient", "adjoint")
    shape = np.shape(array)
    widths = _pad_widths(pad_width, len(shape))
    if mode in ("constant", "empty"):
        # the border does not depend on `array`: its adjoint is the interior of dy
        interior = tuple(slice(before, before + n) for (before, _), n in zip(widths, shape, strict=True))
        return dy[interior]
    # a copying mode: pad the element numbers of `array` the same way to learn which
    # element each output value copies, then add dy into those elements
    source = np.pad(np.arange(math.prod(shape)).reshape(shape), widths, mode)
    grad = _scatter_add(dy, source, 1, math.prod(shape), 1, _float_dtype(array))
    return np.reshape(grad, shape)


def _pad_tangent(t, array, pad_width, mode, reflect_type):
    """np.pad(array, pad_width, mode, reflect_type=reflect_type) applied to the tangent `t` of `array`.

    A constant (or uninitialized) border does not depend on `array`: its tangent is zero.
    The copying modes copy tangents the way they copy values. A zero tangent may come as
    the number 0.0 (when only the widths carry one): it is padded shaped like `array`.
    """
    _check_pad_mode(mode, reflect_type, "tangent", "tangent")
    t = broadcast_like(t, array)
    if mode in ("constant", "empty"):
        return np.pad(t, pad_width)
    return np.pad(t, pad_width, mode)


def _check_pad_mode(mode, reflect_type, what, decorator):
    """Refuse the np.pad modes whose border the rules do not describe, at the user's line,
    saying how to build that border from what ssad differentiates."""
    if mode in ("constant", "empty"):
        return
    if mode in _COPYING_PAD_MODES and reflect_type == "even":
        return
    supported = f"'constant', 'empty', {', '.join(map(repr, _COPYING_PAD_MODES))}"
    if mode in _COPYING_PAD_MODES:  # reflect_type='odd'
        raise located(
            f"no {what} for np.pad with mode={mode!r} and reflect_type={reflect_type!r}: ssad differentiates "
            f"the modes {supported} with the default reflect_type='even'. Padding one axis by less than its "
            f"length, `2 * np.pad(x, w, mode='edge') - np.pad(x, w, mode={mode!r})` gives the same values, and "
            "ssad differentiates it (pad the axes one after another for more); or register a rule with "
            f"@ssad.{decorator}(np.pad) that covers it"
        )
    raise located(
        f"no {what} for np.pad with mode={mode!r}: ssad differentiates the modes {supported}. Build the border "
        f"from the values it copies instead: {_PAD_ADVICE.get(mode, 'with np.concatenate')}; or register a rule "
        f"with @ssad.{decorator}(np.pad) that covers it"
    )


# how to write the border of each other np.pad mode with functions ssad differentiates
_PAD_ADVICE = {
    "maximum": "`m = np.max(x, axis=0, keepdims=True)`, then `np.concatenate([m] * k + [x] + [m] * k, axis=0)` "
               "pads axis 0 with k rows",
    "minimum": "`m = np.min(x, axis=0, keepdims=True)`, then `np.concatenate([m] * k + [x] + [m] * k, axis=0)` "
               "pads axis 0 with k rows",
    "mean": "`m = np.mean(x, axis=0, keepdims=True)`, then `np.concatenate([m] * k + [x] + [m] * k, axis=0)` "
            "pads axis 0 with k rows",
    "median": "`m = np.median(x, axis=0, keepdims=True)`, then `np.concatenate([m] * k + [x] + [m] * k, axis=0)` "
              "pads axis 0 with k rows",
    "linear_ramp": "the k rows before the first row of axis 0 are `np.linspace(end, x[0], k, endpoint=False)`, "
                   "joined to x with np.concatenate (those after the last row likewise, reversed)",
}


nondifferentiable(_check_pad_mode)


def _undiagonal(dy, a, offset, axis1, axis2):
    """Undo np.diagonal(a, offset, axis1, axis2): put `dy` on that diagonal of zeros like `a`."""
    # the diagonal's two axes last, written into, then moved back: no write through a
    # view, so that this helper is differentiated again (a second derivative of diagonal)
    planes = np.zeros(np.shape(np.moveaxis(a, (axis1, axis2), (-2, -1))), dtype=_float_dtype(a))
    rows = np.arange(np.shape(dy)[-1]) + max(-offset, 0)
    planes[..., rows, rows + offset] = dy
    return np.moveaxis(planes, (-2, -1), (axis1, axis2))


def _undiag(dy, v, k):
    """Undo np.diag(v, k), which builds a matrix from a 1-D `v` and reads one from a 2-D `v`."""
    if np.ndim(v) == 1:
        return np.diag(dy, k)
    return _undiagonal(dy, v, k, 0, 1)


def _unpack_like(g, x):
    """The adjoint of `x` from `g`, an array of x's NumPy shape, in x's structure.

    Lists and tuples give lists and tuples of the same type (item by item, recursively),
    arrays give arrays of x's float dtype, and numbers give NumPy float scalars.
    """
    if isinstance(x, (list, tuple)):
        return pack_like(x, [_unpack_like(g[i], item) for i, item in enumerate(x)])
    if isinstance(x, np.ndarray) or is_other_array(x):
        return np.reshape(g, x.shape).astype(_float_dtype(x), copy=False)
    return np.asarray(g)[()]


def _unconcatenate(dy, arrays, axis, promote=None):
    """Split `dy` back into one adjoint per item of `arrays`, as np.concatenate joined them.

    `promote` is what the joining function applies to each item first (np.atleast_2d for
    np.vstack, ...): it only reshapes, so each piece of dy reshapes back to its item.
    """
    items = list(arrays)
    if axis is None:
        dy = np.ravel(dy)
        axis = 0
        sizes = [size(item) for item in items]
    else:
        sizes = [np.shape(promote(item) if promote else item)[axis] for item in items]
    # slices rather than np.split, which dask does not implement
    ends = np.cumsum(sizes).tolist()
    before = (slice(None),) * (axis % np.ndim(dy))
    pieces = [dy[before + (slice(end - n, end),)] for n, end in zip(sizes, ends, strict=True)]
    grads = [
        _unpack_like(np.reshape(piece, np.shape(item)), item)
        for piece, item in zip(pieces, items, strict=True)
    ]
    return pack_like(arrays, grads)


def _filled(t, x):
    """The tangent `t` of an argument `x` of a joining function, ready to join like `x`.

    For a list or tuple `x`, `t` holds one tangent per item (recursively); an item that
    carries none (None, for an integer item) or a scalar zero gets zeros shaped like it.
    """
    if isinstance(x, (list, tuple)):
        items = t if isinstance(t, (list, tuple)) else [t] * len(x)
        return [_filled(t_item, item) for t_item, item in zip(items, x, strict=True)]
    return broadcast_like(0.0 if t is None else t, x)


def _check_no_directive(pieces, label):
    """Refuse np.r_[...] or np.c_[...] with a string directive (`np.r_['0,2', a, b]`), which
    changes how the pieces are joined."""
    if any(isinstance(piece, str) for piece in pieces):
        raise located(
            f"cannot differentiate {label}[...] with a string directive: write the join with "
            "np.concatenate, np.stack or np.column_stack instead"
        )


nondifferentiable(_check_no_directive)


def _c_piece(item):
    """What np.c_ makes of one piece before joining along the last axis: at least 2-D, a
    1-D array (or a number) as a column."""
    return np.c_[item]


def _hstack_axis(tup):
    """The axis np.hstack joins along: 0 for 1-D (and scalar) items, 1 otherwise."""
    return 0 if np.ndim(tup[0]) <= 1 else 1


def _as_column(item):
    """What np.column_stack makes of one item: 1-D arrays become columns."""
    item = np.asarray(item)
    return np.reshape(item, (-1, 1)) if item.ndim < 2 else item


def _unlinspace(dy, y, start, stop, num, endpoint, retstep, axis):
    """Undo np.linspace: sample i is start * (1 - t_i) + stop * t_i with t_i = i / div."""
    samples = y[0] if retstep else y
    if not np.issubdtype(np.asarray(samples).dtype, np.inexact):
        return None, None  # integer samples are floored: piecewise constant
    d_samples = dy[0] if retstep else dy
    div = num - 1 if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    d_samples = np.moveaxis(d_samples, axis, 0)
    t = np.reshape(t, (num,) + (1,) * (np.ndim(d_samples) - 1))
    d_stop = np.sum(d_samples * t, axis=0)
    d_start = np.sum(d_samples, axis=0) - d_stop
    if retstep and div > 0:  # step = (stop - start) / div
        d_stop = d_stop + dy[1] / div
        d_start = d_start - dy[1] / div
    return unbroadcast(d_start, start), unbroadcast(d_stop, stop)


def _linspace_tangent(d_start, d_stop, y, start, stop, num, endpoint, retstep, axis):
    """The tangent of np.linspace: its samples and step are linear in (start, stop).

    An endpoint without a tangent (None for an integer, or a scalar zero standing for an
    array's) gets zeros shaped like it, so the tangent broadcasts like the samples. Integer
    samples are floored, piecewise constant: zero tangent. With a single sample and
    endpoint=True the step is undefined (NaN) and gets a zero tangent.
    """
    samples, step = y if retstep else (y, None)
    d_start = np.broadcast_to(0.0 if d_start is None else d_start, np.shape(start))
    d_stop = np.broadcast_to(0.0 if d_stop is None else d_stop, np.shape(stop))
    if np.issubdtype(np.asarray(samples).dtype, np.inexact):
        d_samples, d_step = np.linspace(
            d_start, d_stop, num, endpoint, retstep=True, dtype=np.asarray(samples).dtype, axis=axis
        )
    else:
        d_samples, d_step = np.zeros(np.shape(samples)), None
    if d_step is None or (num - 1 if endpoint else num) <= 0:
        d_step = np.zeros(np.shape(step))[()]
    return (d_samples, d_step) if retstep else d_samples



def _logspace_parts(start, stop, num, endpoint, base, axis):
    """np.logspace as NumPy computes it: the exponents np.linspace(start, stop) and the base,
    both with leading axes of length 1 up to the rank of start, stop and base broadcast
    together, the base with one more at `axis`."""
    ndim = _common_ndim(start, stop, base)
    low, high = _leading_ones(start, ndim), _leading_ones(stop, ndim)
    exponents = np.linspace(low, high, num, endpoint, axis=axis)
    return low, high, exponents, np.expand_dims(_leading_ones(base, ndim), axis)


def _common_ndim(*values):
    """The rank of `values` broadcast together."""
    return len(np.broadcast_shapes(*[np.shape(v) for v in values]))


nondifferentiable(_common_ndim)


def _leading_ones(a, ndim):
    """`a` with leading axes of length 1 up to `ndim` axes (np.array(a, ndmin=ndim))."""
    return np.reshape(a, (1,) * (ndim - np.ndim(a)) + np.shape(a))


def _unlogspace(dy, y, start, stop, num, endpoint, base, axis):
    """Undo np.logspace: y = base ** e with e = np.linspace(start, stop), so
    dy/de = y log(base) and dy/dbase = y e / base."""
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return None, None  # integer samples are truncated: piecewise constant
    low, high, exponents, b = _logspace_parts(start, stop, num, endpoint, base, axis)
    d_exponents = unbroadcast(dy * y * np.log(b), exponents)
    grads = _unlinspace(d_exponents, exponents, low, high, num, endpoint, False, axis)
    d_base = np.reshape(unbroadcast(dy * y * exponents / b, b), np.shape(base))
    return unbroadcast(grads[0], start), unbroadcast(grads[1], stop), None, None, _unpack_like(d_base, base)


def _logspace_tangent(t_start, t_stop, t_base, y, start, stop, num, endpoint, base, axis):
    """The tangent of np.logspace (the transpose of `_unlogspace`)."""
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return np.zeros(np.shape(y))
    low, high, exponents, b = _logspace_parts(start, stop, num, endpoint, base, axis)
    t_start = np.broadcast_to(0.0 if t_start is None else t_start, np.shape(start))
    t_stop = np.broadcast_to(0.0 if t_stop is None else t_stop, np.shape(stop))
    t_exponents = _linspace_tangent(t_start, t_stop, exponents, low, high, num, endpoint, False, axis)
    t_b = np.expand_dims(_leading_ones(broadcast_like(0.0 if t_base is None else t_base, base), np.ndim(low)), axis)
    return y * (np.log(b) * t_exponents + exponents / b * t_b)


def _geomspace_weights(num, endpoint, y, axis):
    """The fraction t_i of the way from start to stop of sample i of np.geomspace (in
    log space), shaped to broadcast along `axis` of its result `y`."""
    t = np.linspace(0.0, 1.0, num, endpoint)
    return np.reshape(t, [num if k == axis % np.ndim(y) else 1 for k in range(np.ndim(y))])


nondifferentiable(_geomspace_weights)


def _ungeomspace(dy, y, start, stop, num, endpoint, axis):
    """Undo np.geomspace: sample i is start ** (1 - t_i) * stop ** t_i (signs kept), so
    dy_i/dstart = (1 - t_i) y_i / start and dy_i/dstop = t_i y_i / stop."""
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return None, None
    t = _geomspace_weights(num, endpoint, y, axis)
    d_start = np.sum(dy * y * (1.0 - t), axis=axis) / start
    d_stop = np.sum(dy * y * t, axis=axis) / stop
    return unbroadcast(d_start, start), unbroadcast(d_stop, stop)


def _geomspace_tangent(t_start, t_stop, y, start, stop, num, endpoint, axis):
    """The tangent of np.geomspace (the transpose of `_ungeomspace`)."""
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return np.zeros(np.shape(y))
    t = _geomspace_weights(num, endpoint, y, axis)
    t_start = 0.0 if t_start is None else t_start
    t_stop = 0.0 if t_stop is None else t_stop
    relative = _along(t_start / start, y, axis) * (1.0 - t) + _along(t_stop / stop, y, axis) * t
    return y * relative


def _along(v, y, axis):
    """`v`, shaped like the endpoints broadcast together, with an axis of length 1 at `axis`
    of the samples `y`."""
    shape = list(np.shape(y))
    del shape[axis % len(shape)]
    return np.expand_dims(np.broadcast_to(v, tuple(shape)), axis)


def _kaiser_slope(y, M, beta):
    """d/dbeta of np.kaiser(M, beta) = I0(beta r) / I0(beta), r = sqrt(1 - (n / alpha - 1) ** 2):
    (r I1(beta r) - y I1(beta)) / I0(beta); 0 for M <= 1 (the window is [1.] or empty)."""
    if M <= 1:
        return np.zeros(np.shape(y))
    alpha = (M - 1) / 2.0
    r = np.sqrt(1.0 - ((np.arange(0, M) - alpha) / alpha) ** 2)
    return (r * _i1(beta * r) - y * _i1(beta)) / np.i0(beta)
