"""Numerical checks of the shape, joining and indexing rules (ssad/rules/shape.py)."""

import collections

import numpy as np
import pytest

import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.errors import SsadError
from ssad.registry import REGISTRY
from ssad.runtime import pack_like
from ssad.testing import assert_close, check_rule, numerical_gradient

from .cases import Case, case_id

_rng = np.random.default_rng(20240611)


def rand(*shape):
    return _rng.standard_normal(shape)


def inner(dy, y):
    """sum(dy * y) over arrays, or over the items of lists of arrays."""
    if isinstance(y, (list, tuple)):
        return sum(inner(d, v) for d, v in zip(dy, y, strict=True))
    return float(np.sum(np.asarray(dy) * np.asarray(y)))


def fortran(*shape):
    return np.asfortranarray(rand(*shape))


def strided(*shape):
    """A non-contiguous view with permuted, negative and skipping strides."""
    base = rand(*(2 * n for n in reversed(shape)))
    return np.transpose(base)[(slice(None, None, -2),) * len(shape)]


CASES = [
    # ----- Reshaping -----
    Case(np.reshape, (rand(3, 4), (2, 6)), id="reshape"),
    Case(np.reshape, (rand(3, 4), (4, -1)), {"order": "F"}, id="reshape-F"),
    Case(np.reshape, (rand(3, 4),), {"shape": (12,)}, id="reshape-shape-keyword"),
    Case(np.reshape, (1.5, (1, 1)), id="reshape-scalar"),
    Case(np.ravel, (rand(2, 3, 4),), id="ravel"),
    Case(np.ravel, (rand(2, 3, 4), "F"), id="ravel-F"),
    Case(np.squeeze, (rand(3, 1, 4, 1),), id="squeeze"),
    Case(np.squeeze, (rand(3, 1, 4, 1),), {"axis": -1}, id="squeeze-axis"),
    Case(np.expand_dims, (rand(3, 4), -1), id="expand_dims"),
    Case(np.expand_dims, (rand(3, 4), (0, 2)), id="expand_dims-tuple"),
    Case(np.atleast_1d, (0.7,), id="atleast_1d-scalar"),
    Case(np.atleast_1d, (rand(3),), id="atleast_1d"),
    Case(np.atleast_2d, (rand(3),), id="atleast_2d"),
    Case(np.atleast_3d, (rand(3, 4),), id="atleast_3d"),
    Case(np.transpose, (rand(3, 4, 2),), id="transpose"),
    Case(np.transpose, (rand(3, 4, 2), (2, 0, 1)), id="transpose-axes"),
    Case(np.transpose, (rand(3, 4, 2),), {"axes": (1, -1, 0)}, id="transpose-negative-axes"),
    Case(np.swapaxes, (rand(3, 4, 2), 0, -1), id="swapaxes"),
    Case(np.moveaxis, (rand(3, 4, 2), 0, -1), id="moveaxis"),
    Case(np.moveaxis, (rand(3, 4, 2, 5), (0, 1), (-1, 1)), id="moveaxis-several"),
    Case(np.broadcast_to, (rand(3, 1), (2, 3, 4)), id="broadcast_to"),
    Case(np.broadcast_to, (0.4, (2, 3)), id="broadcast_to-scalar"),
    Case(np.flip, (rand(3, 4),), id="flip"),
    Case(np.flip, (rand(3, 4, 2), -1), id="flip-axis"),
    Case(np.flip, (rand(3, 4, 2), (0, 2)), id="flip-axes"),
    Case(np.fliplr, (rand(3, 4),), id="fliplr"),
    Case(np.flipud, (rand(3, 4),), id="flipud"),
    Case(np.roll, (rand(3, 4), 5), id="roll-flat"),
    Case(np.roll, (rand(3, 4), -1, 1), id="roll-axis"),
    Case(np.roll, (rand(3, 4), (1, -2), (0, -1)), id="roll-tuple"),
    Case(np.roll, (rand(3, 4), (1, 2), 1), id="roll-tuple-same-axis"),
    Case(np.tile, (rand(3), 2), id="tile"),
    Case(np.tile, (rand(2, 3), (2, 1, 3)), id="tile-more-reps"),
    Case(np.tile, (rand(2, 3, 2), (2, 3)), id="tile-fewer-reps"),
    Case(np.tile, (0.3, 4), id="tile-scalar"),
    Case(np.repeat, (rand(2, 3), 2), id="repeat-flat"),
    Case(np.repeat, (rand(2, 3), 3, -1), id="repeat-axis"),
    Case(np.repeat, (rand(2, 3), [2, 0, 3]), {"axis": 1}, id="repeat-array"),
    Case(np.repeat, (rand(2, 3), np.array([1, 0, 2, 3, 0, 1])), id="repeat-array-flat"),
    Case(np.pad, (rand(3, 4), 2), id="pad-int"),
    Case(np.pad, (rand(3, 4), ((1, 2), (0, 3))), id="pad-per-axis"),
    Case(np.pad, (rand(3, 4), (2, 1)), {"constant_values": 5.0}, id="pad-pair"),
    Case(np.pad, (rand(3, 4), {1: (2, 1)}), id="pad-dict"),
    Case(np.pad, (rand(3, 4), ((1, 2), (2, 3)), "edge"), id="pad-edge"),
    Case(np.pad, (rand(3, 4), ((1, 2), (2, 3)), "reflect"), id="pad-reflect"),
    Case(np.pad, (rand(3, 4), ((1, 2), (2, 3)), "symmetric"), id="pad-symmetric"),
    Case(np.pad, (rand(3, 4), ((4, 2), (2, 7)), "wrap"), id="pad-wrap"),
    Case(np.array, (rand(3, 4),), id="array"),
    Case(np.array, (rand(3, 4),), {"ndmin": 4}, id="array-ndmin"),
    Case(np.array, (0.8,), id="array-scalar"),
    Case(np.asarray, (rand(3, 4),), id="asarray"),
    Case(np.asarray, (rand(3, 4).astype(np.float32), np.float64), id="asarray-cast"),
    Case(np.copy, (rand(3, 4),), id="copy"),
    Case(np.copy, (0.3,), id="copy-scalar"),
    # ----- Reshaping: ndarray methods -----
    Case(np.ndarray.reshape, (rand(3, 4), 2, 6), id="ndarray.reshape-ints"),
    Case(np.ndarray.reshape, (rand(3, 4), (6, 2)), id="ndarray.reshape-tuple"),
    Case(np.ndarray.reshape, (rand(3, 4), 2, 6), {"order": "F"}, id="ndarray.reshape-F"),
    Case(np.ndarray.ravel, (rand(3, 4),), id="ndarray.ravel"),
    Case(np.ndarray.flatten, (rand(3, 4),), id="ndarray.flatten"),
    Case(np.ndarray.flatten, (rand(3, 4), "F"), id="ndarray.flatten-F"),
    Case(np.ndarray.squeeze, (rand(1, 3, 1),), id="ndarray.squeeze"),
    Case(np.ndarray.squeeze, (rand(1, 3, 1), 0), id="ndarray.squeeze-axis"),
    Case(np.ndarray.transpose, (rand(3, 4, 2),), id="ndarray.transpose"),
    Case(np.ndarray.transpose, (rand(3, 4, 2), 1, 2, 0), id="ndarray.transpose-ints"),
    Case(np.ndarray.transpose, (rand(3, 4, 2), (2, -3, 1)), id="ndarray.transpose-tuple"),
    Case(np.ndarray.transpose, (rand(3, 4), None), id="ndarray.transpose-none"),
    Case(np.ndarray.transpose, (rand(3), 0), id="ndarray.transpose-1d"),
    Case(np.ndarray.swapaxes, (rand(3, 4, 2), -1, 1), id="ndarray.swapaxes"),
    Case(np.ndarray.copy, (rand(3, 4),), id="ndarray.copy"),
    Case(np.ndarray.repeat, (rand(2, 3), 2), id="ndarray.repeat"),
    Case(np.ndarray.repeat, (rand(2, 3), [1, 3]), {"axis": 0}, id="ndarray.repeat-array"),
    # ----- Joining and splitting (array arguments; lists are checked below) -----
    Case(np.concatenate, (rand(3, 2, 4),), id="concatenate-ndarray"),
    Case(np.concatenate, (rand(3, 2, 4),), {"axis": None}, id="concatenate-ndarray-flat"),
    Case(np.stack, (rand(3, 2, 4), -1), id="stack-ndarray"),
    Case(np.split, (rand(6, 4), 3), id="split"),
    Case(np.split, (rand(6, 4), [1, 3]), {"axis": -1}, id="split-indices"),
    Case(np.array_split, (rand(7, 4), 3), id="array_split"),
    Case(np.hsplit, (rand(3, 4), 2), id="hsplit"),
    Case(np.hsplit, (rand(6), [2, 5]), id="hsplit-1d"),
    Case(np.vsplit, (rand(4, 3), [1]), id="vsplit"),
    Case(np.dsplit, (rand(2, 3, 4), 2), id="dsplit"),
    # ----- Indexing -----
    Case(np.take, (rand(5), np.array([0, 3, 3, -1, 3])), id="take-flat-repeated"),
    Case(np.take, (rand(3, 4), np.array([[0, 5], [5, 11]])), id="take-flat-2d-indices"),
    Case(np.take, (rand(3, 4, 2), np.array([2, 0, 2, -1]), 1), id="take-axis-repeated"),
    Case(np.take, (rand(3, 4, 2), 1), {"axis": -1}, id="take-scalar-index"),
    Case(np.take, (rand(3, 4), np.array([[1, 1], [0, 2]])), {"axis": 0}, id="take-2d-indices"),
    Case(np.take, (rand(4), np.array([7, -6, 1])), {"mode": "wrap"}, id="take-wrap"),
    Case(np.take, (rand(4), np.array([7, -6, 1])), {"mode": "clip"}, id="take-clip"),
    Case(np.take, (rand(4), 2), id="take-scalar"),
    Case(np.ndarray.take, (rand(3, 4), [3, 3, 0], 1), id="ndarray.take"),
    Case(np.ndarray.take, (rand(3, 4), [3, 3, 0]), id="ndarray.take-flat"),
    Case(np.diag, (rand(4),), id="diag-build"),
    Case(np.diag, (rand(4), 2), id="diag-build-k"),
    Case(np.diag, (rand(4), -1), id="diag-build-negative-k"),
    Case(np.diag, (rand(4, 4),), id="diag-extract"),
    Case(np.diag, (rand(3, 5), 1), id="diag-extract-k"),
    Case(np.diag, (rand(5, 3), -2), id="diag-extract-negative-k"),
    Case(np.diagonal, (rand(3, 4),), id="diagonal"),
    Case(np.diagonal, (rand(2, 3, 4), 1, -1, 0), id="diagonal-axes"),
    Case(
        np.diagonal, (rand(4, 3, 2),), {"offset": -1, "axis1": 1, "axis2": 0}, id="diagonal-swapped"
    ),
    Case(np.ndarray.diagonal, (rand(3, 4),), id="ndarray.diagonal"),
    Case(np.ndarray.diagonal, (rand(3, 4, 2), 1, 1, 2), id="ndarray.diagonal-axes"),
    Case(np.triu, (rand(4, 5),), id="triu"),
    Case(np.triu, (rand(2, 4, 5), -1), id="triu-k-batched"),
    Case(np.triu, (rand(4), 1), id="triu-1d"),
    Case(np.tril, (rand(4, 5),), id="tril"),
    Case(np.tril, (rand(4, 5), 2), id="tril-k"),
    # ----- Constructors -----
    Case(np.full, ((2, 3), 1.5), id="full"),
    Case(np.full, ((2, 3), rand(3)), id="full-array"),
    Case(np.full_like, (rand(2, 3), 0.25), id="full_like"),
    Case(np.full_like, (rand(2, 3), rand(2, 1)), id="full_like-array"),
    Case(np.linspace, (0.3, 1.7, 5), id="linspace"),
    Case(np.linspace, (0.3, 1.7), {"num": 4, "endpoint": False}, id="linspace-no-endpoint"),
    Case(np.linspace, (0.5, 0.5, 3), id="linspace-equal-endpoints"),
    Case(np.linspace, (0.3, 1.7, 1), id="linspace-one"),
    Case(np.linspace, (rand(2), rand(3, 1), 4), {"axis": -1}, id="linspace-arrays"),
    Case(np.linspace, (0.3, 1.7, 5), {"retstep": True}, id="linspace-retstep"),
]

# Checked by the dedicated tests below rather than through CASES.
CHECKED_ELSEWHERE = [np.ndarray.T, np.hstack, np.vstack, np.dstack, np.column_stack]

NONDIFFERENTIABLE = [
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
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE, ids=repr)
def test_nondifferentiable(primitive):
    assert REGISTRY.is_nondifferentiable(primitive)
    assert REGISTRY.adjoint_rule(primitive) is None


def test_every_rule_of_this_module_is_checked():
    from ssad.rules import shape

    mine = {
        p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == shape.__name__
    }
    checked = {case.primitive for case in CASES} | set(CHECKED_ELSEWHERE)
    assert mine - checked == set()


def test_transpose_attribute():
    x = rand(3, 4, 2)
    dy = rand(2, 4, 3)
    rule = REGISTRY.adjoint_rule(np.ndarray.T)
    (d_x,) = rule(dy, x.T, x)
    expected = numerical_gradient(lambda v: inner(dy, v.T), x)
    assert_close("ndarray.T", d_x, expected, rtol=1e-5, atol=1e-7)


# ----- Orders that depend on memory layout -----


def layout_gradient(fn, x, eps=1e-6):
    """Central differences of `fn` at `x`, perturbing `x` in place so its memory layout is kept.

    ssad.testing.numerical_gradient works on a fresh array, whose layout can differ from
    x's; np.ravel(x, order="K") and order="A" depend on that layout.
    """
    grad = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + eps
        up = fn(x)
        x[index] = old - eps
        down = fn(x)
        x[index] = old
        grad[index] = (up - down) / (2 * eps)
    return grad


LAYOUT_CASES = [
    (np.reshape, fortran(3, 4), ((2, 6),), {"order": "A"}, "reshape-A-fortran"),
    (np.reshape, strided(3, 4), ((2, 6),), {"order": "A"}, "reshape-A-strided"),
    (np.ravel, fortran(3, 4), (), {"order": "A"}, "ravel-A-fortran"),
    (np.ravel, fortran(3, 4, 2), (), {"order": "K"}, "ravel-K-fortran"),
    (np.ravel, strided(3, 4, 2), (), {"order": "K"}, "ravel-K-strided"),
    (np.ravel, np.transpose(rand(2, 3, 4), (1, 0, 2)), (), {"order": "K"}, "ravel-K-permuted"),
    (np.ndarray.reshape, fortran(3, 4), (-1,), {"order": "A"}, "ndarray.reshape-A"),
    (np.ndarray.ravel, strided(2, 3, 2), ("K",), {}, "ndarray.ravel-K"),
    (np.ndarray.flatten, fortran(2, 3), ("A",), {}, "ndarray.flatten-A"),
]


@pytest.mark.parametrize(
    "primitive, x, args, kwargs", [c[:4] for c in LAYOUT_CASES], ids=[c[4] for c in LAYOUT_CASES]
)
def test_layout_dependent_order(primitive, x, args, kwargs):
    y = primitive(x, *args, **kwargs)
    dy = rand(*np.shape(y))
    # dy in the other layout, so a rule that followed dy's layout would fail
    dy = np.asfortranarray(dy) if x.flags.c_contiguous else np.ascontiguousarray(dy)
    (d_x,) = REGISTRY.adjoint_rule(primitive)(dy, y, x, *args, **kwargs)
    expected = layout_gradient(lambda v: inner(dy, primitive(v, *args, **kwargs)), x)
    assert_close(primitive.__name__, d_x, expected, rtol=1e-5, atol=1e-7)


# ----- List and tuple arguments -----


def check_sequence_rule(primitive, items, *args, **kwargs):
    """Check the adjoint of a list/tuple first argument item by item against finite differences.

    Returns the adjoint, after checking it has the container type and length of `items`
    and each entry the shape of its item.
    """
    rule = REGISTRY.adjoint_rule(primitive)
    y = primitive(items, *args, **kwargs)
    dy = np.random.default_rng(7).uniform(0.5, 1.5, np.shape(y)) * np.sign(rand(*np.shape(y)))
    d_items = rule(dy, y, items, *args, **kwargs)[0]
    assert type(d_items) is type(items)
    assert len(d_items) == len(items)
    for i, (item, d_item) in enumerate(zip(items, d_items, strict=True)):

        def scalar_fn(value, i=i):
            moved = list(items)
            moved[i] = value
            return inner(dy, primitive(pack_like(items, moved), *args, **kwargs))

        expected = numerical_gradient(scalar_fn, item)
        assert np.shape(d_item) == np.shape(item)
        assert_close(f"{primitive.__name__} item {i}", d_item, expected, rtol=1e-5, atol=1e-7)
    return d_items


SEQUENCE_CASES = [
    (np.concatenate, [rand(2, 3), rand(4, 3), rand(1, 3)], {}, "concatenate-list"),
    (np.concatenate, (rand(2, 3), rand(2, 1)), {"axis": -1}, "concatenate-tuple-axis"),
    (np.concatenate, [rand(2, 3), rand(4), 0.5], {"axis": None}, "concatenate-flat-scalar"),
    (np.concatenate, [rand(3), rand(0), rand(2)], {}, "concatenate-empty-item"),
    (np.stack, [rand(2, 3), rand(2, 3), rand(2, 3)], {}, "stack"),
    (np.stack, (rand(2, 3), rand(2, 3)), {"axis": -1}, "stack-negative-axis"),
    (np.stack, [rand(2, 3), rand(2, 3)], {"axis": 1}, "stack-middle-axis"),
    (np.stack, [0.5, 1.5, np.array(2.5)], {}, "stack-scalars"),
    (np.hstack, [rand(2), rand(3), 0.7], {}, "hstack-1d"),
    (np.hstack, (rand(2, 1), rand(2, 3)), {}, "hstack-2d"),
    (np.vstack, [rand(3), rand(2, 3)], {}, "vstack"),
    (np.vstack, (0.2, np.array([1.5])), {}, "vstack-scalars"),
    (np.dstack, [rand(3), rand(3)], {}, "dstack-1d"),
    (np.dstack, [rand(2, 3), rand(2, 3, 2)], {}, "dstack"),
    (np.column_stack, [rand(3), rand(3, 2), rand(3)], {}, "column_stack"),
    (np.array, [0.5, 1.5, 2.5], {}, "array-of-floats"),
    (np.array, (rand(3), rand(3)), {}, "array-of-arrays"),
    (np.array, [rand(2), rand(2)], {"ndmin": 3}, "array-ndmin"),
    (np.asarray, [0.5, np.float64(1.5), np.array(2.5)], {}, "asarray-of-scalars"),
    (np.copy, [rand(2, 2), rand(2, 2)], {}, "copy-list"),
]


@pytest.mark.parametrize(
    "primitive, items, kwargs", [c[:3] for c in SEQUENCE_CASES], ids=[c[3] for c in SEQUENCE_CASES]
)
def test_sequence_argument(primitive, items, kwargs):
    check_sequence_rule(primitive, items, **kwargs)


def test_nested_list_argument():
    rule = REGISTRY.adjoint_rule(np.array)
    items = [[0.5, 1.5], (np.float64(2.5), -0.5)]
    dy = np.array([[1.0, 2.0], [3.0, 4.0]])
    (d_items,) = rule(dy, np.array(items), items)
    assert type(d_items) is list and type(d_items[0]) is list and type(d_items[1]) is tuple
    assert [[float(v) for v in row] for row in d_items] == [[1.0, 2.0], [3.0, 4.0]]


def test_namedtuple_argument():
    Pair = collections.namedtuple("Pair", "left right")
    items = Pair(rand(2, 2), rand(1, 2))
    d_items = check_sequence_rule(np.concatenate, items)
    assert isinstance(d_items, Pair)


# ----- Dtypes and structure -----


@pytest.mark.parametrize(
    "primitive, args, kwargs",
    [
        (np.take, (np.array([3, 3, 0, 1]),), {}),
        (np.repeat, ([1, 0, 2],), {"axis": 1}),
        (np.repeat, (2,), {"axis": 0}),
        (np.diag, (), {}),
        (np.diagonal, (), {}),
        (np.pad, (1,), {"mode": "reflect"}),
        (np.ravel, (), {"order": "K"}),
        (np.tile, ((2, 1),), {}),
    ],
    ids=["take", "repeat-array", "repeat-int", "diag", "diagonal", "pad", "ravel-K", "tile"],
)
def test_float32_adjoint_keeps_dtype(primitive, args, kwargs):
    x = rand(3, 3).astype(np.float32)
    y = primitive(x, *args, **kwargs)
    (d_x,) = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, *args, **kwargs)
    assert d_x.dtype == np.float32
    assert d_x.shape == x.shape


def test_list_items_keep_their_dtype():
    items = [rand(2).astype(np.float32), rand(3)]
    y = np.concatenate(items)
    (d_items,) = REGISTRY.adjoint_rule(np.concatenate)(np.ones_like(y), y, items)
    assert [d.dtype for d in d_items] == [np.float32, np.float64]


def test_array_of_python_float_gives_a_float():
    (d_x,) = REGISTRY.adjoint_rule(np.asarray)(np.array(2.5), np.array(0.5), 0.5)
    assert isinstance(d_x, float) and d_x == 2.5


def test_take_scatter_adds_repeated_indices():
    x = rand(3, 2)
    index = np.array([2, 0, 2, 2])
    dy = np.arange(8.0).reshape(4, 2)
    (d_x,) = REGISTRY.adjoint_rule(np.take)(dy, np.take(x, index, axis=0), x, index, axis=0)
    np.testing.assert_array_equal(d_x, [[2.0, 3.0], [0.0, 0.0], [0.0 + 4 + 6, 1.0 + 5 + 7]])


def test_take_complex_adjoint():
    x = rand(4) + 1j * rand(4)
    index = np.array([1, 1, 3])
    dy = np.array([1 + 2j, 3 - 1j, 0.5j])
    (d_x,) = REGISTRY.adjoint_rule(np.take)(dy, np.take(x, index), x, index)
    np.testing.assert_array_equal(d_x, [0, 4 + 1j, 0, 0.5j])


def test_split_pieces_join_back():
    x = rand(5, 2)
    pieces = np.array_split(x, 3)
    d_pieces = [np.full(p.shape, float(i)) for i, p in enumerate(pieces)]
    (d_x,) = REGISTRY.adjoint_rule(np.array_split)(d_pieces, pieces, x, 3)
    np.testing.assert_array_equal(d_x[:, 0], [0.0, 0.0, 1.0, 1.0, 2.0])


# ----- Errors -----


def test_pad_unsupported_mode_says_what_to_do():
    x = rand(3)
    y = np.pad(x, 1, mode="mean")
    with pytest.raises(SsadError, match="mode='mean'.*ssad.adjoint"):
        REGISTRY.adjoint_rule(np.pad)(np.ones_like(y), y, x, 1, "mean")


def test_ravel_k_of_broadcast_view_is_refused():
    x = np.broadcast_to(rand(3, 1), (3, 4))[::-1]
    y = np.ravel(x, order="K")
    with pytest.raises(SsadError, match="zero stride"):
        REGISTRY.adjoint_rule(np.ravel)(np.ones_like(y), y, x, "K")
