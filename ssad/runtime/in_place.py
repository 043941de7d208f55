"""NumPy's functions that write into an array, as the indexed writes they are.

`np.fill_diagonal(a, val)` and `np.put_along_axis(a, indices, values, axis)` change `a`
in place. The front end reads each as the write `a[index] = value` (`frontend.desugar`),
which ssad differentiates like any other (the overwritten elements are restored on the
tape, a position named twice keeps its last value): these helpers compute the index
and the written value as NumPy does.
"""

import numpy as np


def diagonal_index(a, wrap=False):
    """The index of the elements `np.fill_diagonal(a, val, wrap)` writes: the main diagonal
    (of a square n-d array; of a 2-d array, down to its last row when `wrap`)."""
    a = np.asarray(a)
    if a.ndim < 2:
        raise ValueError("np.fill_diagonal needs an array of at least 2 dimensions")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("np.fill_diagonal of an array of more than 2 dimensions needs all of them equal")
        step = 1 + int(np.sum(np.cumprod(a.shape[:-1])))
        end = a.size
    return np.unravel_index(np.arange(0, end, step), a.shape)


def diagonal_fill(val, a, wrap=False):
    """The values `np.fill_diagonal(a, val, wrap)` writes, one per diagonal element: `val`
    flattened and repeated (or cut) to their number, as NumPy's flat assignment does."""
    count = np.shape(diagonal_index(a, wrap)[0])[0]
    return np.resize(np.ravel(val), count)


def along_axis_index(arr, indices, axis):
    """The index of the elements `np.put_along_axis(arr, indices, values, axis)` writes."""
    arr = np.asarray(arr)
    indices = np.asarray(indices)
    if axis is None:
        return np.unravel_index(np.ravel(indices) % arr.size, arr.shape)
    axis = axis % arr.ndim
    if indices.ndim != arr.ndim:
        raise ValueError("np.put_along_axis needs `indices` with as many dimensions as the array")
    index = []
    for dimension, length in enumerate(arr.shape):
        if dimension == axis:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[dimension] = length
            index.append(np.arange(length).reshape(shape))
    return tuple(index)
