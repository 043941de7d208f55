"""Row-sparse gradients: `RowGradient`, and the helpers generated code calls to build one.

Assumes: the parameter whose adjoint these build is read by the function only through
row gathers (`V[idx]`, `np.take(V, idx, axis=0)`), as `analysis.row_reads` proves, so
its adjoint is a sum of rows scattered into zeros.
Guarantees: with `sparse=`, the generated code's statements on that adjoint call
`zero_rows`, `row_adjoint`, `add_rows` and `copy_rows` (see `backend.sparse_rows`)
instead of making a dense array; the rows they collect become one `RowGradient` with
sorted, unique indices (duplicates summed) when the gradient is returned. Compiled
code (`ssad.native`) holds the rows as a pair (row numbers, values) instead.
"""

import numpy as np

from ..errors import SsadError
from .structure import fit_gradient


class RowGradient:
    """The gradient of a parameter read only by row gathers: nonzero on a few rows.

    `indices` are the rows (sorted, each once), `values[k]` the gradient of row
    `indices[k]` (rows gathered more than once have their parts summed), and `shape`
    the parameter's shape. `np.asarray(g)` is the dense gradient; `g.apply_to(V,
    scale=-rate)` adds `scale * g` to `V` in place, touching only those rows.
    """

    __slots__ = ("indices", "values", "shape")
    __array_priority__ = 20  # `array + g` and `array - g` call this class's methods

    def __init__(self, indices, values, shape):
        self.indices = indices
        self.values = values
        self.shape = tuple(shape)

    @classmethod
    def from_rows(cls, rows, values, shape):
        """The RowGradient of `values[k]` added at row `rows[k]`, rows in any order, repeated or not."""
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        values = np.asarray(values).reshape((rows.shape[0],) + tuple(shape[1:]))
        if rows.shape[0] == 0:
            return cls(rows, values, shape)
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
        repeated = np.concatenate(([False], rows[1:] == rows[:-1]))
        if not repeated.any():
            return cls(rows, values, shape)
        starts = np.flatnonzero(~repeated)
        summed = np.add.reduceat(values, starts, axis=0)  # the parts of each row, added in the order read
        return cls(rows[~repeated], summed, shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __array__(self, dtype=None, copy=None):
        dense = np.zeros(self.shape, dtype=dtype or self.values.dtype)
        dense[self.indices] = self.values
        return dense

    def dense(self):
        """The gradient as a NumPy array of the parameter's shape."""
        return np.asarray(self)

    def scaled(self, factor):
        """`factor` times this gradient, still row-sparse."""
        return RowGradient(self.indices, self.values * factor, self.shape)

    def apply_to(self, parameter, scale=1.0):
        """Add `scale` times this gradient to `parameter` in place, row by row; return it.
        `g.apply_to(V, scale=-rate)` is a step of SGD on the rows the batch read."""
        if tuple(np.shape(parameter)) != self.shape:
            raise SsadError(f"apply_to: the gradient has shape {self.shape}, the parameter {np.shape(parameter)}")
        parameter[self.indices] += scale * self.values
        return parameter

    def __mul__(self, factor):
        if not np.isscalar(factor) and np.ndim(factor) != 0:
            return NotImplemented
        return self.scaled(factor)

    __rmul__ = __mul__

    def __truediv__(self, factor):
        return self * (1.0 / factor)

    def __neg__(self):
        return self.scaled(-1)

    def __add__(self, other):
        if isinstance(other, RowGradient):
            if other.shape != self.shape:
                raise SsadError(f"cannot add RowGradients of shapes {self.shape} and {other.shape}")
            return RowGradient.from_rows(
                np.concatenate((self.indices, other.indices)), np.concatenate((self.values, other.values)), self.shape
            )
        if isinstance(other, (int, float)) and other == 0:  # sum() starts from 0
            return self
        return np.asarray(self) + other

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"RowGradient(shape={self.shape}, rows={self.indices.tolist() if len(self.indices) <= 8 else len(self.indices)})"


class RowParts:
    """The rows of an adjoint collected during the backward sweep, turned into one
    RowGradient when returned (so a loop that reads one row per step adds in O(1))."""

    __slots__ = ("rows", "values", "shape")

    def __init__(self, shape):
        self.rows, self.values, self.shape = [], [], shape


def zero_rows(parameter):
    """The adjoint of `parameter` before any row of it is read."""
    return RowParts(np.shape(parameter))


def row_adjoint(d_rows, parameter, index):
    """The adjoint of `parameter` from `parameter[index]` (a gather along its first axis)."""
    parts = RowParts(np.shape(parameter))
    _add_gather(parts, d_rows, parameter, index)
    return parts


def add_rows(parts, more):
    """`parts` with the rows of `more` added (in place: `parts` is the sweep's own)."""
    parts.rows.extend(more.rows)
    parts.values.extend(more.values)
    return parts


def copy_rows(parts):
    """A copy of `parts` that later additions to either do not share."""
    copy = RowParts(parts.shape)
    copy.rows, copy.values = list(parts.rows), list(parts.values)
    return copy


def _add_gather(parts, d_rows, parameter, index):
    count = parts.shape[0]
    if isinstance(index, np.ndarray) and index.dtype.kind in "iu" or isinstance(index, (int, np.integer)):
        rows = np.asarray(index, dtype=np.intp)
        if rows.size and rows.min() < 0:
            rows = np.where(rows < 0, rows + count, rows)
    else:  # a mask, a slice, a list: the row numbers it gathers, in order
        rows = np.arange(count)[index]
    tail = tuple(parts.shape[1:])
    # a copy: the sweep may later write into d_rows in place
    values = np.array(np.broadcast_to(d_rows, rows.shape + tail)).reshape((-1,) + tail)
    parts.rows.append(rows.reshape(-1))
    parts.values.append(values)


def gradient_fitter(names, sparse):
    """How the gradient of the one parameter in `names` is fitted to its argument: as a
    RowGradient if it is among `sparse`, else to the argument's structure."""
    if len(names) == 1 and names[0] in sparse:
        return as_row_gradient
    return fit_gradient


def as_row_gradient(parts, parameter):
    """What the generated code returned for a sparse parameter, as a RowGradient."""
    shape = np.shape(parameter)
    if isinstance(parts, RowParts):
        if not parts.rows:
            dtype = parameter.dtype if np.issubdtype(parameter.dtype, np.inexact) else np.float64
            return RowGradient(np.zeros(0, np.intp), np.zeros((0,) + tuple(shape[1:]), dtype), shape)
        if len(parts.rows) == 1:
            return RowGradient.from_rows(parts.rows[0], parts.values[0], shape)
        return RowGradient.from_rows(np.concatenate(parts.rows), np.concatenate(parts.values), shape)
    if isinstance(parts, tuple) and len(parts) == 2:  # compiled code's (rows, values)
        return RowGradient.from_rows(parts[0], parts[1], shape)
    raise SsadError(f"internal: a sparse gradient came back as {type(parts).__name__}")
