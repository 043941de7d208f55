"""Rules: building arrays from parts, and choosing parts of arrays.

Domain: NumPy arrays, Python numbers and lists or tuples of them. Every primitive here
only moves, copies, selects or broadcasts elements, so it is linear in its float
arguments:

- an adjoint sends `dy` back to where each element came from (a rotation or an axis
  move applies the inverse move, a selection scatters `dy` into zeros shaped like the
  input, a broadcast sums `dy` over the copies);
- a tangent rule applies the primitive itself to the tangents, filling in zeros for
  arguments that carry none (integer items of a list, a constant default).

Conventions:

- An adjoint has the shape of its input and the input's float dtype (float64 for
  integer inputs); the adjoint of a list or tuple argument (``np.select``'s
  choicelist, ``np.choose``'s choices) is a list or tuple of the same type and length,
  one adjoint per item, each shaped like its item. A Python number's adjoint is a
  NumPy float scalar.
- Functions that return several arrays (``np.meshgrid``, ``np.broadcast_arrays``)
  receive a tuple ``dy`` with one adjoint per output, and their tangent rules return a
  tuple of tangents.
- Conditions, indices, ``kth`` and axes carry no gradient.
- ``np.select``: each choice gets the gradient where it was selected (the first true
  condition), the default where no condition holds, zero elsewhere -- routed with
  ``np.where``, so an inf in a choice not taken never leaks.
- ``np.choose``: choice ``j`` gets the gradient where the (wrapped or clipped) index is
  ``j``.
- ``np.partition``: the gradient follows each element to the place the partition moved
  it, as for ``np.sort``; equal elements are matched in order (a stable sort of the input
  against a stable sort of the output), so each gets the gradient of one output slot.
- ``np.block``: the adjoint of its nested lists is nested lists of the same shape, each
  array's piece of ``dy`` cut out along the axis its list joined along (the innermost
  list along the last axis) and reshaped back to the array.
- ``np.delete``, ``np.insert``, ``np.resize``: each element of the result copies one
  element of an input (or, for ``np.insert``, one element of ``values`` broadcast); its
  gradient goes back there, repeated copies adding up. Which element that is, is found by
  applying the function to element numbers. A float inserted into an integer array is
  truncated: zero gradient. ``obj`` and ``new_shape`` carry none.
- ``np.trim_zeros``: the kept elements (zeros between them included) get their gradient
  and the trimmed zeros get none. Its result's shape changes as soon as a trimmed zero
  moves off zero, so this is the derivative along changes that keep the zeros at the ends.
- ``np.ediff1d``: to_end and to_begin get their parts of ``dy``; ``ary`` the adjoint of
  ``np.diff`` of its flattened values.
- ``np.sort_complex``: as ``np.sort``, ordered by real part then imaginary part (ties
  matched by a stable ordering); a real input's adjoint is the real part of ``dy``.
- ``np.ascontiguousarray``, ``np.asfortranarray``, ``np.asarray_chkfinite``: copies;
  ``np.astype`` follows ``x.astype`` (elementwise.py): the adjoint in the input's
  precision, the real part where the cast drops an imaginary part.
"""

import numpy as np

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import is_other_array, pack_like, size, unbroadcast
from .elementwise import _cast
from .shape import _filled, _float_dtype, _through_cast, _unconcatenate, _unpack_like, _untake


# ----- Rotating and moving axes -----


@adjoint(np.rot90)
def rot90_adjoint(dy, y, m, k=1, axes=(0, 1)):
    return (np.rot90(dy, -k, axes),)


@tangent(np.rot90)
def rot90_tangent(tangents, y, m, k=1, axes=(0, 1)):
    return np.rot90(tangents[0], k, axes)


@adjoint(np.rollaxis)
def rollaxis_adjoint(dy, y, a, axis, start=0):
    moved = _rollaxis_move(np.ndim(a), axis, start)
    return (np.moveaxis(dy, moved[1], moved[0]),)


@tangent(np.rollaxis)
def rollaxis_tangent(tangents, y, a, axis, start=0):
    return np.rollaxis(tangents[0], axis, start)


# ----- Joining -----


@adjoint(np.append)
def append_adjoint(dy, y, arr, values, axis=None):
    # np.append(arr, values, axis) is np.concatenate((arr, values), axis), both raveled for axis=None
    return tuple(_unconcatenate(dy, (arr, values), axis))


@tangent(np.append)
def append_tangent(tangents, y, arr, values, axis=None):
    filled = _filled(list(tangents[:2]), [arr, values])
    return np.append(filled[0], filled[1], axis)


# np.row_stack is NumPy 1's name of np.vstack (deprecated in NumPy 2.0; it may be removed)
if hasattr(np, "row_stack"):

    @adjoint(np.row_stack)
    def row_stack_adjoint(dy, y, tup, *, dtype=None, casting="same_kind"):
        return (_unconcatenate(dy, tup, 0, np.atleast_2d),)

    @tangent(np.row_stack)
    def row_stack_tangent(tangents, y, tup, *, dtype=None, casting="same_kind"):
        return np.vstack(_filled(tangents[0], tup))


@adjoint(np.diagflat)
def diagflat_adjoint(dy, y, v, k=0):
    return (_unpack_like(np.reshape(np.diagonal(dy, k), np.shape(v)), v),)


@tangent(np.diagflat)
def diagflat_tangent(tangents, y, v, k=0):
    return np.diagflat(_filled(tangents[0], v), k)


# ----- Grids and broadcasting (several outputs) -----


@adjoint(np.meshgrid)
def meshgrid_adjoint(dy, y, *xi, copy=True, sparse=False, indexing="xy"):
    return _unmeshgrid(dy, xi, indexing)


@tangent(np.meshgrid)
def meshgrid_tangent(tangents, y, *xi, copy=True, sparse=False, indexing="xy"):
    return np.meshgrid(*_filled(list(tangents), list(xi)), copy=copy, sparse=sparse, indexing=indexing)


@adjoint(np.broadcast_arrays)
def broadcast_arrays_adjoint(dy, y, *args, subok=False):
    return tuple([unbroadcast(d, x) for d, x in zip(dy, args, strict=True)])


@tangent(np.broadcast_arrays)
def broadcast_arrays_tangent(tangents, y, *args, subok=False):
    filled = _filled(list(tangents), list(args))
    return tuple([np.broadcast_to(t, np.shape(out)) for t, out in zip(filled, y, strict=True)])


# ----- Choosing -----


@adjoint(np.select)
def select_adjoint(dy, y, condlist, choicelist, default=0):
    chosen = _selected(condlist)
    d_choices = pack_like(
        choicelist,
        [unbroadcast(np.where(mask, dy, 0.0), choice) for mask, choice in zip(chosen[0], choicelist, strict=True)],
    )
    return (None, d_choices, unbroadcast(np.where(chosen[1], dy, 0.0), default))


@tangent(np.select)
def select_tangent(tangents, y, condlist, choicelist, default=0):
    t_default = tangents[2] if len(tangents) > 2 and tangents[2] is not None else 0.0
    return np.select(condlist, _filled(tangents[1], choicelist), t_default)


@adjoint(np.choose)
def choose_adjoint(dy, y, a, choices, out=None, mode="raise"):
    return (None, _unchoose(dy, _choice_index(a, len(choices), mode), choices))


@tangent(np.choose)
def choose_tangent(tangents, y, a, choices, out=None, mode="raise"):
    return np.choose(a, _filled(tangents[1], choices), mode=mode)


@adjoint(np.compress)
def compress_adjoint(dy, y, condition, a, axis=None, out=None):
    return (None, _untake(dy, a, np.flatnonzero(condition), axis, "raise"))


@tangent(np.compress)
def compress_tangent(tangents, y, condition, a, axis=None, out=None):
    return np.compress(condition, _filled(tangents[1], a), axis)


@adjoint(np.ndarray.compress)
def ndarray_compress_adjoint(dy, y, a, condition, axis=None, out=None):
    return (_untake(dy, a, np.flatnonzero(condition), axis, "raise"),)


@tangent(np.ndarray.compress)
def ndarray_compress_tangent(tangents, y, a, condition, axis=None, out=None):
    return np.compress(condition, tangents[0], axis)


@adjoint(np.extract)
def extract_adjoint(dy, y, condition, arr):
    return (None, _untake(dy, arr, np.flatnonzero(condition), None, "raise"))


@tangent(np.extract)
def extract_tangent(tangents, y, condition, arr):
    return np.extract(condition, _filled(tangents[1], arr))


@adjoint(np.partition)
def partition_adjoint(dy, y, a, kth, axis=-1, kind="introselect", order=None):
    return (_unpartition(dy, _partition_positions(y, a, axis), a, axis),)


@tangent(np.partition)
def partition_tangent(tangents, y, a, kth, axis=-1, kind="introselect", order=None):
    return _partition_like(tangents[0], _partition_sources(y, a, axis), a, axis)


# ----- Helpers -----


def _rollaxis_move(ndim, axis, start):
    """np.rollaxis(a, axis, start) as np.moveaxis(a, source, destination): (source, destination)."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    destination = start - 1 if axis < start else start
    return axis, destination


def _meshgrid_axis(i, n, indexing):
    """The axis of np.meshgrid's i-th output along which its input varies."""
    if indexing == "xy" and n > 1 and i < 2:
        return 1 - i  # 'xy' swaps the first two axes
    return i


def _selected(condlist):
    """Where np.select takes each choice (its condition is the first true one), and where it
    takes the default (no condition is true)."""
    taken = np.zeros(np.broadcast_shapes(*[np.shape(c) for c in condlist]), dtype=bool)
    masks = []
    for condition in condlist:
        masks.append(condition & ~taken)
        taken = taken | condition
    return masks, ~taken


def _choice_index(a, n, mode):
    """np.choose's index array after its mode: wrapped, clipped, or as given ('raise')."""
    if mode == "wrap":
        return np.mod(a, n)
    if mode == "clip":
        return np.clip(a, 0, n - 1)
    return np.asarray(a)


def _sum_to_shape(g, shape):
    """Sum `g` over the axes that broadcasting added or stretched to reach its shape from `shape`."""
    extra = np.ndim(g) - len(shape)
    summed = np.sum(g, axis=tuple(range(extra))) if extra > 0 else g
    stretched = tuple(k for k, n in enumerate(shape) if n == 1 and np.shape(summed)[k] != 1)
    return np.reshape(np.sum(summed, axis=stretched, keepdims=True), shape)


def _unchoose(dy, index, choices):
    """The adjoint of `choices` in np.choose: choice j gets `dy` where `index == j`."""
    if isinstance(choices, (list, tuple)):
        return pack_like(
            choices, [_unpack_like(unbroadcast(np.where(index == j, dy, 0.0), c), c) for j, c in enumerate(choices)]
        )
    # an array of choices: the first axis numbers them, the others broadcast against `index`
    item_shape = np.shape(choices)[1:]
    d_items = [_sum_to_shape(np.where(index == j, dy, 0.0), item_shape) for j in range(np.shape(choices)[0])]
    return np.stack(d_items).astype(_float_dtype(choices), copy=False)


def _partition_positions(y, a, axis):
    """For each element of `a`, the position np.partition moved it to, along `axis`
    (flat positions for axis=None). Equal elements are matched in order."""
    if axis is None:
        a = np.ravel(a)
        axis = 0
    rank = np.argsort(np.argsort(a, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(np.argsort(y, axis=axis, kind="stable"), rank, axis=axis)


def _partition_sources(y, a, axis):
    """For each position of np.partition's result, the position of `a` its element came
    from: the inverse of `_partition_positions`."""
    if axis is None:
        a = np.ravel(a)
        axis = 0
    rank = np.argsort(np.argsort(y, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(np.argsort(a, axis=axis, kind="stable"), rank, axis=axis)


nondifferentiable(_rollaxis_move, _meshgrid_axis, _selected, _choice_index, _partition_positions, _partition_sources)


def _unpartition(dy, positions, a, axis):
    """`dy`, shaped like np.partition's result, read back at the positions of `a`'s elements."""
    if axis is None:
        return np.reshape(np.ravel(dy)[positions], np.shape(a))
    return np.take_along_axis(dy, positions, axis=axis)


def _partition_like(t, sources, a, axis):
    """The tangent `t` of `a` moved the way np.partition moved `a` (the transpose of `_unpartition`)."""
    if axis is None:
        return np.ravel(t)[sources]
    return np.take_along_axis(np.broadcast_to(t, np.shape(a)), sources, axis=axis)


def _unmeshgrid(dy, xi, indexing):
    """The adjoints of np.meshgrid's inputs: each output summed over the axes its input
    was copied along, back in the input's shape."""
    n = len(xi)
    return tuple([_ungrid(d, x, _meshgrid_axis(i, n, indexing)) for i, (d, x) in enumerate(zip(dy, xi, strict=True))])


def _ungrid(d, x, axis):
    """The adjoint of one input of np.meshgrid from that of its output, where it varies along `axis`."""
    return _unpack_like(np.reshape(np.sum(d, axis=_other_axes(np.ndim(d), axis)), np.shape(x)), x)


def _other_axes(ndim, axis):
    """Every axis of an array with `ndim` axes but `axis`."""
    return tuple(k for k in range(ndim) if k != axis)


nondifferentiable(_other_axes)


# ----- Blocks, insertions and deletions -----


@adjoint(np.block)
def block_adjoint(dy, y, arrays):
    return (_unblock(dy, arrays, _block_depth(arrays)),)


@tangent(np.block)
def block_tangent(tangents, y, arrays):
    return np.block(_filled(tangents[0], arrays))


@adjoint(np.delete)
def delete_adjoint(dy, y, arr, obj, axis=None):
    return (_untake(dy, arr, _labels_after(np.delete, arr, obj, axis), None, "raise"),)


@tangent(np.delete)
def delete_tangent(tangents, y, arr, obj, axis=None):
    return np.delete(_filled(tangents[0], arr), obj, axis)


@adjoint(np.insert)
def insert_adjoint(dy, y, arr, obj, values, axis=None):
    if not np.issubdtype(y.dtype, np.inexact):  # values inserted into an integer array are truncated
        return (_zeros_like_input(arr), None, _zeros_like_input(values))
    labels = _insert_labels(arr, obj, values, axis)
    return (_copied_back(dy, labels[0], arr), None, _copied_back(dy, labels[1], values))


@tangent(np.insert)
def insert_tangent(tangents, y, arr, obj, values, axis=None):
    if not np.issubdtype(y.dtype, np.inexact):
        return np.zeros(np.shape(y))
    return np.insert(_filled(tangents[0], arr), obj, _filled(tangents[2], values), axis)


@adjoint(np.resize)
def resize_adjoint(dy, y, a, new_shape):
    return (_untake(dy, a, np.resize(np.arange(size(a)), new_shape), None, "raise"),)


@tangent(np.resize)
def resize_tangent(tangents, y, a, new_shape):
    return np.resize(_filled(tangents[0], a), new_shape)


@adjoint(np.trim_zeros)
def trim_zeros_adjoint(dy, y, filt, trim="fb", axis=None):
    return (_unpack_like(np.pad(dy, _kept_box(filt, trim, axis)[1]), filt),)


@tangent(np.trim_zeros)
def trim_zeros_tangent(tangents, y, filt, trim="fb", axis=None):
    return _like_result(_array_of(_filled(tangents[0], filt))[_kept_box(filt, trim, axis)[0]], y)


@adjoint(np.unstack)
def unstack_adjoint(dy, y, x, *, axis=0):
    return (np.stack(dy, axis=axis),)


@tangent(np.unstack)
def unstack_tangent(tangents, y, x, *, axis=0):
    return np.unstack(tangents[0], axis=axis)


@adjoint(np.ediff1d)
def ediff1d_adjoint(dy, y, ary, to_end=None, to_begin=None):
    pieces = _ediff1d_pieces(dy, ary, to_end, to_begin)
    inner = pieces[1]
    d_ary = np.pad(inner, (1, 0)) - np.pad(inner, (0, 1))
    return (_unpack_like(d_ary, ary), _ediff1d_end(pieces[2], to_end), _ediff1d_end(pieces[0], to_begin))


@tangent(np.ediff1d)
def ediff1d_tangent(tangents, y, ary, to_end=None, to_begin=None):
    t_end = None if to_end is None else _filled(_nth(tangents, 1), to_end)
    t_begin = None if to_begin is None else _filled(_nth(tangents, 2), to_begin)
    return np.ediff1d(_filled(tangents[0], ary), to_end=t_end, to_begin=t_begin).astype(_float_dtype(y), copy=False)


@adjoint(np.sort_complex)
def sort_complex_adjoint(dy, y, a):
    d_a = np.take_along_axis(dy, _complex_rank(a), axis=-1)
    return (_real_unless_complex(d_a, a),)


@tangent(np.sort_complex)
def sort_complex_tangent(tangents, y, a):
    return np.take_along_axis(_filled(tangents[0], a), _complex_order(a), axis=-1).astype(y.dtype)


# ----- Copies, layouts and casts -----


@adjoint(np.ascontiguousarray)
def ascontiguousarray_adjoint(dy, y, a, dtype=None, *, like=None):
    return (_unpack_like(np.reshape(_through_cast(dy, y), np.shape(a)), a),)


@tangent(np.ascontiguousarray)
def ascontiguousarray_tangent(tangents, y, a, dtype=None, *, like=None):
    return _cast_like(_filled(tangents[0], a), y)


@adjoint(np.asfortranarray)
def asfortranarray_adjoint(dy, y, a, dtype=None, *, like=None):
    return (_unpack_like(np.reshape(dy, np.shape(a)), a),)


@tangent(np.asfortranarray)
def asfortranarray_tangent(tangents, y, a, dtype=None, *, like=None):
    return _cast_like(_filled(tangents[0], a), y)


@adjoint(np.asarray_chkfinite)
def asarray_chkfinite_adjoint(dy, y, a, dtype=None, order=None):
    return (_unpack_like(np.reshape(_through_cast(dy, y), np.shape(a)), a),)


@tangent(np.asarray_chkfinite)
def asarray_chkfinite_tangent(tangents, y, a, dtype=None, order=None):
    return _cast_like(_filled(tangents[0], a), y)


@adjoint(np.astype)
def np_astype_adjoint(dy, y, x, dtype, *, copy=True, device=None):
    # as x.astype(dtype): the gradient flows through the cast, back in the input's precision
    grad_dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else None
    return (_cast(dy, grad_dtype, y),)


@tangent(np.astype)
def np_astype_tangent(tangents, y, x, dtype, *, copy=True, device=None):
    tangent_dtype = y.dtype if np.issubdtype(y.dtype, np.inexact) else None
    return _cast(tangents[0], tangent_dtype, y)


# ----- Helpers of blocks, insertions and deletions -----


def _block_depth(arrays):
    """How deeply np.block's argument nests lists (0 for an array or a number)."""
    depth = 0
    while isinstance(arrays, list):
        arrays = arrays[0]
        depth += 1
    return depth


def _block_extent(item, level, k):
    """The length along axis -k of the block `item` forms, where `item` sits `level` lists
    above the arrays (a list at level m joins its items along axis -m; an array's missing
    leading axes have length 1)."""
    if level == 0:
        shape = np.shape(item)
        return shape[-k] if len(shape) >= k else 1
    if k == level:
        return sum(_block_extent(sub, level - 1, k) for sub in item)
    return _block_extent(item[0], level - 1, k)


def _block_ends(item, level):
    """Where each item of the list `item` (at `level`) ends along axis -level of its block."""
    return np.cumsum([_block_extent(sub, level - 1, level) for sub in item]).tolist()


def _block_slice(start, end, level):
    """The index of positions start:end along axis -level."""
    return (Ellipsis, slice(start, end)) + (slice(None),) * (level - 1)


nondifferentiable(_block_depth, _block_extent, _block_ends, _block_slice)


def _unblock(dy, item, level):
    """The adjoint of np.block's argument `item` (`level` lists above its arrays) from `dy`,
    the adjoint of the block it forms: split along the axis each list joined along."""
    if level == 0:
        return _unpack_like(np.reshape(dy, np.shape(item)), item)
    ends = _block_ends(item, level)
    starts = [0] + ends[:-1]
    return pack_like(
        item,
        [_unblock(dy[_block_slice(s, e, level)], sub, level - 1) for s, e, sub in zip(starts, ends, item, strict=True)],
    )


def _labels_after(move, a, *args):
    """The flat position in `a` of each element of `move(a, *args)` (np.delete, ...)."""
    return move(np.reshape(np.arange(size(a)), np.shape(a)), *args)


def _insert_labels(arr, obj, values, axis):
    """For each element of np.insert(arr, obj, values, axis): 1 + its flat position in `arr`
    (0 where a value was inserted), and 1 + its flat position in `values` (0 where it came
    from `arr`); np.insert broadcasts the labels of `values` as it broadcasts `values`."""
    labels = np.reshape(np.arange(1, size(arr) + 1), np.shape(arr))
    from_arr = np.insert(labels, obj, np.zeros(np.shape(values), dtype=np.intp), axis)
    zeros = np.zeros(np.shape(arr), dtype=np.intp)
    from_values = np.insert(zeros, obj, np.reshape(np.arange(1, size(values) + 1), np.shape(values)), axis)
    return from_arr, from_values


def _copied_positions(labels):
    """Flat positions where `labels` is positive, and the source positions they name."""
    positions = np.flatnonzero(labels)
    return positions, np.ravel(labels)[positions] - 1


def _kept_box(filt, trim, axis):
    """The part np.trim_zeros(filt, trim, axis) keeps, as an index of `filt`, and as np.pad
    widths that put it back in place."""
    shape = np.shape(filt)
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in np.ravel(axis)]
    nonzero = np.asarray(filt) != 0
    index, widths = [slice(None)] * len(shape), [(0, 0)] * len(shape)
    for k in axes:
        found = np.flatnonzero(np.any(nonzero, axis=tuple(j for j in range(len(shape)) if j != k)))
        start = (found[0] if found.size else 0) if "f" in trim.lower() else 0
        stop = (found[-1] + 1 if found.size else 0) if "b" in trim.lower() else shape[k]
        stop = max(stop, start)
        index[k], widths[k] = slice(int(start), int(stop)), (int(start), int(shape[k] - stop))
    return tuple(index), widths


def _nth(items, n):
    """items[n], or None past its end (a shorter tuple of tangents)."""
    return items[n] if len(items) > n else None


def _ediff1d_counts(ary, to_begin):
    """The lengths of np.ediff1d's three parts: to_begin, the differences, to_end."""
    begin = 0 if to_begin is None else size(to_begin)
    return begin, max(size(ary) - 1, 0)


def _complex_order(a):
    """The permutation np.sort_complex applies along the last axis: by real part, then imaginary."""
    return np.lexsort((np.imag(a), np.real(a)), axis=-1)


def _complex_rank(a):
    """Where np.sort_complex moves each element of `a` (the inverse of `_complex_order`)."""
    return np.argsort(_complex_order(a), axis=-1, kind="stable")


nondifferentiable(_labels_after, _insert_labels, _copied_positions, _kept_box, _ediff1d_counts)
nondifferentiable(_complex_order, _complex_rank)


def _copied_back(dy, labels, x):
    """Sum `dy` into zeros like `x` at the positions `labels` name (1 + a flat position of
    `x`; 0: not from `x`)."""
    found = _copied_positions(labels)
    return _unpack_like(_untake(np.ravel(dy)[found[0]], x, found[1], None, "raise"), x)


def _zeros_like_input(x):
    """A zero adjoint of `x`, in x's structure."""
    return _unpack_like(np.zeros(np.shape(x)), x)


def _ediff1d_pieces(dy, ary, to_end, to_begin):
    """np.ediff1d's adjoint `dy` split into its to_begin, differences and to_end parts."""
    counts = _ediff1d_counts(ary, to_begin)
    middle = counts[0] + counts[1]
    return dy[: counts[0]], dy[counts[0] : middle], dy[middle:]


def _ediff1d_end(d, end):
    """The adjoint of to_begin or to_end from its part of np.ediff1d's adjoint (None when not passed)."""
    if end is None:
        return None
    return _unpack_like(np.reshape(d, np.shape(end)), end)


def _real_unless_complex(g, a):
    """`g` for a complex `a`; its real part, in a's float dtype, for a real `a`."""
    if np.iscomplexobj(a):
        return g
    return _unpack_like(np.real(g), a)


def _array_of(t):
    """`t` as an array: a list of tangents (of a list argument) joined with np.array."""
    if isinstance(t, np.ndarray) or is_other_array(t):
        return t
    return np.array(t)


def _like_result(t, y):
    """The tangent `t` of a result `y` in y's structure: a list item by item (np.trim_zeros
    slices a list it is given)."""
    if isinstance(y, list):
        return [t[i] for i in range(len(y))]
    return t


def _cast_like(t, y):
    """The tangent `t` reshaped and cast like the copy `y` (the float dtype of y); zero
    where y holds integers or booleans."""
    t = _through_cast(t, y)
    if is_other_array(t):
        return np.reshape(t, np.shape(y)).astype(_float_dtype(y))
    return np.reshape(np.asarray(t, dtype=_float_dtype(y)), np.shape(y))
