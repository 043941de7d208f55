"""Run time: the adjoints of reads by index, scattered back into arrays and lists.

`getitem_adjoint` makes the adjoint of `x` for `y = x[index]`; `add_at` adds an adjoint
part at an index (in place where it can), `added_at` is its pure form (read when
generated code is differentiated again), `zero_at` clears a part (`clear_at` in place)
and `summed_at` sums weights per position with one `np.bincount`. For a write `x[index] = v`, `written_part`
takes the adjoint of `v` out of x's (`take_part`), zero where a later element of the same
write writes the position again (`kept`).
"""

import math
import numbers

import numpy as np

from ..errors import SsadError
from .receivers import not_walked
from .structure import add_adjoint, is_other_array, zeros_like_value


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
_FLOAT = np.dtype(np.float64)  # the kind of a value with no dtype (a Python float)


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


def _spread_to(d, x, index):
    """The adjoint `d` of an array item of a list, tuple or dict, spread to the item's shape:
    the optimizer passes the adjoint of `w = items[i]` unspread where it would be for an
    array `x` (`getitem_adjoint(d_total, x, i)`, whose write broadcasts it); an entry of a
    list keeps what it is given. A zero number stands for the zero of any item."""
    try:
        item = x[index]
    except (KeyError, IndexError, TypeError):  # a key the container does not hold now
        return d
    if type(item) is np.ndarray and isinstance(d, (numbers.Number, np.ndarray)) and np.shape(d) != item.shape:
        if isinstance(d, numbers.Number) and d == 0:
            return d
        return np.broadcast_to(d, item.shape)
    return d


def getitem_adjoint(dy, x, index):
    """The adjoint of `x` for `y = x[index]`: `dy` scattered into zeros shaped like `x`."""
    if type(x) is np.ndarray and not is_other_array(dy):
        # the common case first: a NumPy array read by an index
        if x.dtype == np.float64:
            dense = _dense_row_sums(x.shape, index, dy)
            if dense is not None:
                return dense
        d_x = zeros_like_value(x)
        if d_x.dtype.kind != "c" and (type(dy) is complex or getattr(dy, "dtype", _FLOAT).kind == "c"):
            dy = dy.real  # a real input's adjoint is the real part (what the cast keeps), without its warning
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
                items[position] = _spread_to(d, x, position)
        else:
            items[index] = _spread_to(dy, x, index)
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        grads = zeros_like_value(x)
        grads[index] = _spread_to(dy, x, index)
        return grads
    if is_other_array(x) or is_other_array(dy):
        return _add_at_lazily(zeros_like_value(x), index, dy)
    if type(x) is np.ndarray and x.dtype == np.float64:
        dense = _dense_row_sums(x.shape, index, dy)
        if dense is not None:
            return dense
    not_walked(x)  # an object of the user's, indexed by its own `__getitem__`
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


def _is_complex_part(d_part):
    kind = type(d_part)
    if kind is np.ndarray:
        return d_part.dtype.kind == "c"
    return kind is not float and kind is not np.float64 and np.iscomplexobj(d_part)


def add_at(d_x, index, d_part):
    """`d_x` with `d_part` added at `index`, in place when `d_x` can be (the adjoint of x[index]).

    Repeated integer indices accumulate (`np.add.at`); basic indices, slices and
    masks select each element once, so `+=` is exact there and much faster. A `d_part`
    of None (what a function without a derivative gives back, `xs.count(v)`) adds nothing.
    """
    if d_part is None:
        return d_x
    if isinstance(d_x, np.ndarray):
        if d_x.dtype.kind != "c" and _is_complex_part(d_part):
            d_x = d_x + 0j  # a real adjoint so far (`np.real(z)`'s): a write would drop the imaginary part
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
    if isinstance(d_x, (np.generic, numbers.Number)):  # the adjoint of x[..., None] or x[()] of a scalar x
        whole = np.array(d_x, dtype=np.result_type(d_x, d_part))
        whole[index] += d_part
        return whole[()]
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
    if type(d_x) is float and d_x == 0.0:  # a zero tangent, folded to 0.0: zero already
        return d_x
    if isinstance(d_x, numbers.Number):
        d_x = np.array(d_x)  # a 0-d array's, as a number
    else:
        d_x = copy_adjoint(d_x)
    if isinstance(d_x, list) and isinstance(index, slice):  # `xs[i:j] = ys` of a list: a zero per item
        d_x[index] = [zeros_like_value(item) for item in d_x[index]]
    else:
        d_x[index] = 0.0
    return d_x


def clear_at(d_x, index):
    """`d_x` with zeros at `index`, written in place: an adjoint array the adjoint sweep owns,
    of a rank it cannot tell. The adjoint of a 0-d array may be a number, which `zero_at` makes
    an array. `zero_at` is its pure form, for code that is differentiated again."""
    if type(d_x) is np.ndarray:
        d_x[index] = 0.0
        return d_x
    return zero_at(d_x, index)


def list_adjoint(d_items, items):
    """A private copy of the adjoint of the list `items`, as a list, for the adjoints of
    `append`, `insert`, `extend` and `pop` to take items off: a NumPy function given the list
    (`np.mean(losses)`) gives its adjoint as one array shaped like it, split here into the
    adjoints of its items. A zero adjoint shorter than the list is the zero of a tape made
    after the code it was passed to had popped it (a backward sweep differentiated again
    that reads none of it): as long as the list, zeros."""
    if isinstance(d_items, list) and isinstance(items, list) and len(d_items) < len(items) and _zero(d_items):
        return type(d_items)([*copy_adjoint(d_items), *(zeros_like_value(v) for v in items[len(d_items):])])
    if isinstance(d_items, list) or not isinstance(items, list):
        return copy_adjoint(d_items)
    if type(d_items) is float and d_items == 0.0:
        return zeros_like_value(items)
    return split_like(np.broadcast_to(d_items, np.shape(items)), items)


def _zero(d):
    """Whether the adjoint `d` is zero throughout."""
    if d is None or isinstance(d, numbers.Number):
        return not d
    if isinstance(d, (np.ndarray, np.generic)):
        return not np.any(d)
    if isinstance(d, (list, tuple)):
        return all(_zero(v) for v in d)
    return isinstance(d, dict) and all(_zero(v) for v in d.values())


def split_like(g, x):
    """The adjoint of `x` from `g`, an array of x's NumPy shape, in x's structure: a list
    or tuple of the items' adjoints (recursively), an array of x's float dtype, a number."""
    if isinstance(x, (list, tuple)):
        items = [split_like(g[k], item) for k, item in enumerate(x)]
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, np.ndarray):
        return np.array(g, dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
    return np.asarray(g)[()]


def copy_adjoint(d_x):
    """A private, writable copy of an adjoint (arrays, lists, dicts), so it can be updated in place."""
    if isinstance(d_x, np.ndarray):
        return np.array(d_x, copy=True)
    if isinstance(d_x, list):
        return list(d_x)
    if isinstance(d_x, dict):
        return d_x.copy()  # a plain dict, or the derivative of a defaultdict (runtime/defaults.py)
    if is_other_array(d_x):  # dask's __setitem__ rebinds the array it is called on (np.copy would compute it)
        return d_x.copy()
    return d_x


def take_part(d_x, index):
    """The adjoint at `index` of the written value, as a copy the caller owns."""
    if type(d_x) is float and d_x == 0.0:  # a zero adjoint or tangent, folded to 0.0: each part is zero
        return d_x
    if type(d_x) is not np.ndarray and isinstance(d_x, numbers.Number):
        d_x = np.asarray(d_x)  # the adjoint of a 0-d array, held as a number (`a[()] = v`, `a[...] = v`)
    part = d_x[index]
    return np.copy(part) if isinstance(part, np.ndarray) else part


def written_part(d_x, index):
    """The adjoint of the value written by `x[index] = v`, at `index` of x's adjoint: zero
    where the index names a position again later in the same write, since NumPy keeps the
    last value written there and only it reaches the result (`x[[0, 0]] = v` keeps v[1])."""
    return kept(take_part(d_x, index), d_x, index)


def kept(part, x, index):
    """`part`, an adjoint of `x[index]`, with zeros where `x[index] = v` writes a position that a
    later element of the same write writes again; `part` itself for an index that cannot repeat."""
    if hasattr(part, "shape") and hasattr(x, "shape") and _may_repeat(index):  # NumPy or dask arrays
        return part * written_mask(x, index)
    return part


def written_mask(x, index):
    """1.0 at each element of `x[index]` that is the last write of its position, else 0.0."""
    owner = np.full(np.shape(x), -1, dtype=np.intp)  # shapes only: a lazy x is never read
    order = np.arange(np.size(owner[index])).reshape(np.shape(owner[index]))
    owner[index] = order
    return (owner[index] == order).astype(float)


def _may_repeat(index):
    """Whether an index may name one position twice: it holds an integer array of two or more."""
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, (np.ndarray, list)) and np.size(part) > 1 and np.asarray(part).dtype.kind in "iu":
            return True
    return False
