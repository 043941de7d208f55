"""Helpers that generated gradient code calls at run time.

Everything here is small, pure and fast: the generated code must run like code
written by hand, so each helper returns its input untouched on the common path
(`unbroadcast` when shapes already match, for example).
"""

import math
import numbers

import numpy as np

from .errors import SsadError
from .structure import add_adjoint, add_attr, is_namedtuple, is_other_array, zeros_like_value  # noqa: F401  (generated code reads them)


# Bound once: looking up `np.add.reduce` costs more than a small reduction itself.
_add_reduce = np.add.reduce


def unbroadcast(g, x):
    """Sum the adjoint `g` down to the shape of `x` (undoing NumPy broadcasting)."""
    # getattr is several times faster than np.shape on Python numbers, the hot case
    # of scalar loops; lists and tuples here mean `+`/`*` concatenated sequences.
    if type(x) is list or type(x) is tuple:
        raise SsadError(
            "`+` or `*` on a list or tuple of differentiated values (concatenation or "
            "repetition) is not supported; build the sequence explicitly or use np.concatenate"
        )
    shape = getattr(x, "shape", ())
    g_shape = getattr(g, "shape", ())
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    if extra < 0:
        return np.broadcast_to(g, shape)
    # np.add.reduce is np.sum without its Python-level dispatch (a few microseconds a call)
    # a dask array has no ufunc.reduce; np.sum dispatches to its own
    reduce = _add_reduce if isinstance(g, np.ndarray) else np.sum
    if extra:
        g = reduce(g, 0 if extra == 1 else tuple(range(extra)))
        g_shape = g_shape[extra:]
        if g_shape == shape:  # a bias added to every row, the common case
            return g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g_shape[i] != 1)
    if axes:
        g = reduce(g, axes, keepdims=True)
    return g


def size(x):
    """`np.size(x)`, read from the array: NumPy's `np.size` would compute a dask array to count it."""
    n = getattr(x, "size", None)
    return n if type(n) is int else np.size(x)


def broadcast_like(t, y):
    """The tangent `t` spread to the shape of the result `y` it is the tangent of."""
    shape = getattr(y, "shape", ())
    if getattr(t, "shape", ()) == shape:
        return t
    return np.broadcast_to(t, shape)


def seed(result):
    """The adjoint seed of a real scalar result: 1.0 (in its dtype). Non-scalars and
    complex results are refused."""
    if type(result) is float:
        return 1.0
    if isinstance(result, (np.generic, np.ndarray)) and result.ndim == 0:
        kind = result.dtype.kind
        if kind == "c":
            _refuse_complex(result)
        return result.dtype.type(1.0) if kind == "f" else 1.0
    if isinstance(result, numbers.Number):
        if isinstance(result, complex):
            _refuse_complex(result)
        return 1.0
    if is_other_array(result) and result.ndim == 0:  # a lazy scalar (dask): no need to compute it
        if result.dtype.kind == "c":
            _refuse_complex(result)
        return result.dtype.type(1.0) if result.dtype.kind == "f" else 1.0
    raise SsadError(
        f"grad needs a function that returns a scalar, but it returned "
        f"{_describe(result)}. Use ssad.vjp(f, *args) and pass the output's adjoint "
        f"to the pullback, or reduce the output to a scalar (np.sum(...))."
    )


def _refuse_complex(result):
    raise SsadError(
        f"grad requires a real-valued output, but the function returned {_describe(result)}: "
        f"{result!r}. Its gradient is not defined by one number per input. Return a real value "
        f"(np.real(...), np.abs(...) ** 2, ...), or use ssad.vjp(f, *args) and pass the output's "
        f"adjoint to the pullback (for a holomorphic f, pullback(1.0) gives f'(z)); see "
        f"'Complex numbers' in docs/conventions.md"
    )


def _describe(value):
    if isinstance(value, np.ndarray):
        kind = "a complex array" if value.dtype.kind == "c" else "an array"
        return f"{kind} of shape {value.shape}"
    if isinstance(value, np.generic) or is_other_array(value):
        return f"a value of type {type(value).__name__} (dtype {value.dtype})"
    return f"a value of type {type(value).__name__}"


def pack_like(x, items):
    """The adjoint of `x` from the adjoints of its unpacked items (`a, b = x`)."""
    if isinstance(x, np.ndarray) or is_other_array(x):
        return np.stack([np.broadcast_to(item, x.shape[1:]) for item in items])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*items)
    if isinstance(x, (tuple, list)):
        return type(x)(items)
    return tuple(items)


def _is_basic_index(index):
    """True when `index` is basic indexing (no integer or boolean arrays)."""
    if not isinstance(index, tuple):
        index = (index,)
    for part in index:
        if part is None or part is Ellipsis or isinstance(part, (slice, numbers.Integral)):
            continue
        if isinstance(part, np.ndarray) and part.dtype == np.bool_:
            continue  # a mask selects each element at most once
        return False
    return True


_BINCOUNT_MIN = 4096  # measured: np.add.at wins below a few thousand scattered elements


def _row_gather(shape, index, d_part):
    """`(rows read, width of a row, d_part as float64 per read row)` for a gather `x[index]`
    of rows by an integer array that `np.bincount` should sum, else None.

    Only float64 takes this path (bincount sums in float64), and only scatters of at
    least `_BINCOUNT_MIN` elements: below that `np.add.at` is faster.
    """
    if not (isinstance(index, np.ndarray) and index.dtype.kind in "iu" and len(shape) >= 1):
        return None
    width = math.prod(shape[1:])
    d_part = np.asarray(d_part)
    if d_part.dtype != np.float64 or width == 0 or index.size * width < _BINCOUNT_MIN:
        return None
    index = np.where(index < 0, index + shape[0], index)  # -1 and n - 1 are one row
    weights = np.broadcast_to(d_part, index.shape + tuple(shape[1:])).ravel()
    return index, width, weights


def _row_sums(shape, index, d_part):
    """`(rows, sums)`: for a gather `x[index]` of rows, the distinct rows read and the
    sum of `d_part` over the reads of each; None when `np.add.at` should do it.

    For an integer array `index` (embedding lookups, BPR) this is one `np.bincount`
    over positions within the rows read, about twice as fast as `np.add.at` (and it
    allocates nothing the size of `x`).
    """
    gather = _row_gather(shape, index, d_part)
    if gather is None:
        return None
    index, width, weights = gather
    rows, position = np.unique(index, return_inverse=True)
    positions = (position.reshape(-1, 1) * width + np.arange(width)).ravel()
    sums = np.bincount(positions, weights, minlength=rows.size * width)
    return rows, sums.reshape((rows.size,) + tuple(shape[1:]))


def getitem_adjoint(dy, x, index):
    """The adjoint of `x` for `y = x[index]`: `dy` scattered into zeros shaped like `x`."""
    if type(x) is np.ndarray and not is_other_array(dy):
        # the common case first: a NumPy array read by an index
        if x.dtype == np.float64:
            dense = _dense_row_sums(x.shape, index, dy)
            if dense is not None:
                return dense
        d_x = zeros_like_value(x)
        if _is_basic_index(index):
            d_x[index] = dy
        else:  # a small gather, or not float64: repeated indices must accumulate
            np.add.at(d_x, index, dy)
        return d_x
    if isinstance(x, (tuple, list)):
        items = [zeros_like_value(v) for v in x]
        if isinstance(index, slice):
            positions = range(len(x))[index]
            for position, d in zip(positions, dy, strict=True):
                items[position] = d
        else:
            items[index] = dy
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        grads = zeros_like_value(x)
        grads[index] = dy
        return grads
    if is_other_array(x) or is_other_array(dy):
        return _add_at_lazily(zeros_like_value(x), index, dy)
    if type(x) is np.ndarray and x.dtype == np.float64:
        dense = _dense_row_sums(x.shape, index, dy)
        if dense is not None:
            return dense
    d_x = zeros_like_value(np.asarray(x))
    if _is_basic_index(index):
        d_x[index] = dy
    else:
        add_at(d_x, index, dy)
    return d_x


def _dense_row_sums(shape, index, d_part):
    """For a gather `x[index]` of rows by an integer array, the whole adjoint of x at
    once: one `np.bincount` writes every element (zeros where no row was read), so no
    zero array is made first and no scatter follows. None when it does not apply."""
    gather = _row_gather(shape, index, d_part)
    if gather is None:
        return None
    index, width, weights = gather
    positions = (index.reshape(-1, 1) * width + np.arange(width)).ravel()
    return np.bincount(positions, weights, minlength=math.prod(shape)).reshape(shape)


def add_at(d_x, index, d_part):
    """`d_x` with `d_part` added at `index`, in place when `d_x` can be (the adjoint of x[index]).

    Repeated integer indices accumulate (`np.add.at`); basic indices, slices and
    masks select each element once, so `+=` is exact there and much faster.
    """
    if isinstance(d_x, np.ndarray):
        if _is_basic_index(index):
            try:
                d_x[index] += d_part
            except (TypeError, NotImplementedError):  # dask refuses to write into a NumPy array
                if not is_other_array(d_part):
                    raise
                return _add_at_lazily(d_x, index, d_part)
            return d_x
        if is_other_array(d_part):  # np.add.at (and np.asarray) would compute a dask adjoint
            return _add_at_lazily(d_x, index, d_part)
        summed = _row_sums(d_x.shape, index, d_part) if d_x.dtype == np.float64 else None
        if summed is not None:
            rows, sums = summed
            d_x[rows] += sums  # each row once: exact
        else:
            np.add.at(d_x, index, d_part)
        return d_x
    if isinstance(d_x, list):
        if isinstance(index, slice):
            for position, d in zip(range(len(d_x))[index], d_part, strict=True):
                d_x[position] = add_adjoint(d_x[position], d)
        else:
            d_x[index] = add_adjoint(d_x[index], d_part)
        return d_x
    if isinstance(d_x, tuple):
        items = list(d_x)
        add_at(items, index, d_part)
        return type(d_x)(*items) if hasattr(d_x, "_fields") else tuple(items)
    if isinstance(d_x, dict):
        d_x[index] = add_adjoint(d_x.get(index), d_part)
        return d_x
    if is_other_array(d_x):
        return _add_at_lazily(d_x, index, d_part)
    raise SsadError(f"cannot index an adjoint of type {type(d_x).__name__}")


def _add_at_lazily(d_x, index, d_part):
    """`add_at` where `d_x` or `d_part` is an array of another library (dask), built from
    operations it implements lazily: there is no `np.add.at` for a dask array.

    Slices and integers update `d_x` with `__setitem__`; integer arrays and masks, which
    may read an element more than once, add the `summed_at` of `d_part` over the flat
    positions they read. Index arrays are NumPy arrays: the positions are computed from
    them and d_x's shape, never from d_x's values.
    """
    if not is_other_array(d_x):
        d_x = np.asarray(d_x, like=d_part)  # NumPy zeros become the library's array
    parts = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(part, (np.ndarray, list)) or is_other_array(part) for part in parts):
        d_x[index] = d_x[index] + d_part
        return d_x
    positions = np.reshape(np.arange(math.prod(d_x.shape)), d_x.shape)[index]
    weights = np.broadcast_to(d_part, np.shape(positions))
    sums = summed_at(np.ravel(positions), np.ravel(weights), math.prod(d_x.shape))
    return d_x + np.reshape(sums, d_x.shape).astype(d_x.dtype)


def summed_at(positions, weights, size):
    """`np.bincount(positions, weights, minlength=size)`: the sum of the weights at each of
    `size` flat positions, for weights of any array library.

    `np.bincount` dispatches to dask's, which pairs the two arrays chunk by chunk: the
    positions (a NumPy array) are made the weights' kind of array, with their chunks.
    """
    if isinstance(weights, np.ndarray) or not is_other_array(weights):
        return np.bincount(positions, weights, size)
    positions = np.asarray(positions, like=weights)
    chunks = getattr(weights, "chunks", None)
    if chunks is not None:
        positions = positions.rechunk(chunks)
    return np.bincount(positions, weights, minlength=size)


def added_at(d_x, index, d_part):
    """`add_at` on a copy: the pure form, for code that is differentiated again."""
    return add_at(copy_adjoint(d_x), index, d_part)


def zero_at(d_x, index):
    """A copy of the adjoint `d_x` with zeros at `index` (the adjoint of x before `x[index] = v`)."""
    d_x = copy_adjoint(d_x)
    d_x[index] = 0.0
    return d_x


_MISSING = object()


def saved_part(container, index):
    """What `container[index] = v` is about to overwrite: a copy for arrays, the item itself otherwise."""
    if isinstance(container, np.ndarray):
        return np.copy(container[index])
    if isinstance(container, dict) and index not in container:
        return _MISSING
    return container[index]


def restore_part(container, index, old):
    """Undo `container[index] = v` with the value `saved_part` returned."""
    if old is _MISSING:
        del container[index]
    else:
        container[index] = old


def restored_value(old):
    """`old` as `restore_part` writes it back, when generated code is differentiated again.

    The second derivative of a write that added a key to a dict (undone by deleting the
    key) is not supported.
    """
    if old is _MISSING:
        raise SsadError(
            "a derivative of a derivative through a write that adds a new key to a dict is not supported; "
            "give the dict the key before the write"
        )
    return old


def take_part(d_x, index):
    """The adjoint at `index` of the written value, as a copy the caller owns."""
    part = d_x[index]
    return np.copy(part) if isinstance(part, np.ndarray) else part


def drop_last(items, count):
    """Remove the last `count` items of a list (undoing `items.extend(...)`), returning them."""
    dropped = items[len(items) - count :]
    del items[len(items) - count :]
    return dropped


def copy_adjoint(d_x):
    """A private, writable copy of an adjoint (arrays, lists, dicts), so it can be updated in place."""
    if isinstance(d_x, np.ndarray):
        return np.array(d_x, copy=True)
    if isinstance(d_x, list):
        return list(d_x)
    if isinstance(d_x, dict):
        return dict(d_x)
    if is_other_array(d_x):  # dask's __setitem__ rebinds the array it is called on (np.copy would compute it)
        return d_x.copy()
    return d_x


def concat(a, b):
    """`a + b` for two lists or two tuples (sequence concatenation, not arithmetic)."""
    return a + b


def r_(*pieces):
    """`np.r_[a, b, ...]` as a function of its pieces (ssad lowers the subscript to this call,
    with each slice piece already made into its array), so the pieces get gradients."""
    return np.r_[pieces]


def c_(*pieces):
    """`np.c_[a, b, ...]` as a function of its pieces (see `r_`)."""
    return np.c_[pieces]


class Shape:
    """What the tape keeps of an array the adjoint sweep needs only the shape of."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


def shape_only(x):
    """`x` for the tape when only its shape is read back (by `unbroadcast`): arrays
    are kept as their shape, so the tape does not hold them alive; anything else as is."""
    return Shape(x.shape) if type(x) is np.ndarray else x


class Tape(list):
    """The stack the forward sweep pushes onto and the backward sweep pops from.

    A local of each generated function, never shared, so calls are reentrant.
    """

    push = list.append

    def copy(self):
        return Tape(self)


def stop_gradient(x):
    """Return `x`; no gradient flows back through this call."""
    return x
