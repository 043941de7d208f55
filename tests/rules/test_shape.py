"""Numerical checks of the shape, joining and indexing rules (ssad/rules/shape.py)."""

import collections

import numpy as np
import pytest

import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.errors import SsadError
from ssad.registry import REGISTRY
from ssad.runtime import c_, pack_like, r_
from ssad.testing import assert_close, check_rule, check_tangent, numerical_gradient

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


# inputs of the rules of logspace, geomspace and kaiser, from their own generator so that the
# other samples stay as they were
_spaces = np.random.default_rng(20261126)


def positive(*shape):
    return _spaces.uniform(0.5, 2.0, shape)


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
    Case(np.atleast_1d, (0.7, rand(3)), id="atleast_1d-several"),
    Case(np.atleast_2d, (rand(3), rand(2, 2), 0.5), id="atleast_2d-several"),
    Case(np.atleast_3d, (rand(3, 4), rand(2), rand(2, 1, 3, 1)), id="atleast_3d-several"),
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
    Case(r_, (rand(3), 0.5, rand(2)), id="r_"),
    Case(r_, (rand(2, 3), rand(1, 3)), id="r_-2d"),
    Case(r_, (np.arange(3), rand(2)), id="r_-integer-piece"),
    Case(c_, (rand(3), rand(3, 2), rand(3)), id="c_"),
    Case(c_, (rand(2, 2, 3), rand(2, 2, 1)), id="c_-3d"),
    Case(c_, (0.5, np.array([1.5])), id="c_-scalar"),
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
    Case(np.ndarray.item, (rand(3, 4), 5), id="ndarray.item-flat"),
    Case(np.ndarray.item, (rand(1, 1),), id="ndarray.item-one-element"),
    Case(np.ndarray.item, (rand(3, 4), (2, -1)), id="ndarray.item-tuple"),
    Case(np.ndarray.item, (rand(3, 4), 1, 2), id="ndarray.item-indices"),
    Case(np.ndarray.item, (rand(3, 4), -2), id="ndarray.item-negative"),
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
    Case(np.take_along_axis, (rand(3, 4), np.array([[0, 3, 3], [1, 1, 0], [2, -1, 2]]), 1), id="take_along_axis"),
    Case(np.take_along_axis, (rand(3, 2), np.array([[2, 0], [2, 2]]), 0), id="take_along_axis-axis-0"),
    Case(np.take_along_axis, (rand(1, 4), np.array([[0], [2], [2]]), 1), id="take_along_axis-broadcast"),
    Case(np.take_along_axis, (rand(2, 3), np.array([5, 0, 5, -1]), None), id="take_along_axis-flat"),
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
    # base passed positionally: the rule returns an adjoint for it
    Case(np.logspace, (0.3, 1.2, 5, True, 2.5), id="logspace"),
    Case(np.logspace, (0.3, 1.2, 4, False, 10.0), id="logspace-no-endpoint"),
    Case(np.logspace, (_spaces.standard_normal(2), _spaces.standard_normal((3, 1)), 4, True, 3.0), {"axis": -1},
         id="logspace-arrays"),
    Case(np.logspace, (_spaces.standard_normal(2), 0.7, 3, True, positive(3, 1)), {"axis": 1}, id="logspace-array-base"),
    Case(np.logspace, (0.3, 1.2, 1, True, 2.0), id="logspace-one"),
    Case(np.geomspace, (0.5, 4.0, 5), id="geomspace"),
    Case(np.geomspace, (-0.5, -4.0, 4), {"endpoint": False}, id="geomspace-negative"),
    Case(np.geomspace, (positive(2), positive(3, 1), 4), {"axis": -1}, id="geomspace-arrays"),
    Case(np.geomspace, (1.5, positive(3), 3), {"axis": 1}, id="geomspace-axis"),
    Case(np.geomspace, (0.7, 2.0, 1), id="geomspace-one"),
    Case(np.kaiser, (6, 2.5), id="kaiser"),
    Case(np.kaiser, (5, 0.7), id="kaiser-odd"),
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
    np.ravel_multi_index,
    np.unravel_index,
    np.ix_,
    np.broadcast_shapes,
    np.einsum_path,
    np.can_cast,
    np.min_scalar_type,
    np.mintypecode,
    np.common_type,
    np.promote_types,
    np.isdtype,
    np.issubdtype,
    np.may_share_memory,
    np.shares_memory,
    np.hanning,
    np.hamming,
    np.blackman,
    np.bartlett,
    np.mask_indices,
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
    np.gcd,
    np.lcm,
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.bitwise_not,
    np.bitwise_invert,
    np.invert,
    np.bitwise_count,
    np.bitwise_left_shift,
    np.bitwise_right_shift,
    np.left_shift,
    np.right_shift,
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE)
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
    d_x, *others = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, *args, **kwargs)
    assert all(other is None for other in others)  # integer arguments (pad widths): no gradient
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


# ----- Tangent rules -----

EPS = 1e-6


def direction(value, rng):
    """A random tangent shaped like `value` (item by item for lists and tuples); None for non-floats."""
    if isinstance(value, (list, tuple)):
        return type(value)(direction(v, rng) for v in value)
    if not is_float(value):
        return None
    draw = rng.uniform(0.5, 1.5, np.shape(value)) * rng.choice([-1.0, 1.0], np.shape(value))
    return draw if np.ndim(value) else float(draw)


def is_float(value):
    if isinstance(value, (list, tuple)):
        return any(is_float(v) for v in value)
    if isinstance(value, bool):
        return False
    return isinstance(value, float) or (
        isinstance(value, (np.ndarray, np.generic)) and np.issubdtype(np.asarray(value).dtype, np.floating)
    )


def shifted(value, t, step):
    """value + step * t, item by item for lists and tuples (the container type kept)."""
    if isinstance(value, (list, tuple)):
        return pack_like(value, [shifted(v, d, step) for v, d in zip(value, t, strict=True)])
    if t is None:
        return value
    moved = np.asarray(value, dtype=np.float64) + step * np.asarray(t)
    return float(moved) if np.ndim(value) == 0 else moved


def pairing(a, b):
    """sum(a * b) over arrays and nested lists/tuples; None on either side pairs to zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return sum(pairing(u, v) for u, v in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def assert_tangent_matches(name, got, up, down, y):
    """Compare a tangent with central differences, component by component for lists and tuples."""
    if isinstance(y, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(y), f"{name}: expected {len(y)} tangents"
        for k, (g, u, d, v) in enumerate(zip(got, up, down, y, strict=True)):
            assert_tangent_matches(f"{name}, component {k}", g, u, d, v)
        return
    expected = (np.asarray(up, dtype=np.float64) - np.asarray(down, dtype=np.float64)) / (2 * EPS)
    assert_close(name, got, expected, rtol=1e-5, atol=1e-7)


def check_tangent_by_differences(primitive, args, kwargs, seed=0):
    """check_tangent for any float positional arguments, lists of arrays included, and any outputs.

    Each float argument alone (the others' tangents zero) and all together are moved along
    a random direction and the tangent rule compared with central differences.
    """
    rule = REGISTRY.tangent_rule(primitive)
    assert rule is not None, f"no tangent rule for {primitive!r}"
    rng = np.random.default_rng(seed)
    floats = [i for i, a in enumerate(args) if is_float(a)]
    assert floats, "no float argument to check"
    directions = [direction(a, rng) for a in args]
    zeros = [None if d is None else shifted(d, d, -1.0) for d in directions]  # d - d: zeros shaped like d
    y = primitive(*args, **kwargs)
    for chosen in [[i] for i in floats] + ([floats] if len(floats) > 1 else []):
        tangents = tuple(directions[i] if i in chosen else zeros[i] for i in range(len(args)))
        got = rule(tangents, y, *args, **kwargs)
        up = primitive(*[shifted(a, t, EPS) for a, t in zip(args, tangents, strict=True)], **kwargs)
        down = primitive(*[shifted(a, t, -EPS) for a, t in zip(args, tangents, strict=True)], **kwargs)
        assert_tangent_matches(f"{primitive!r} tangent of argument(s) {chosen}", got, up, down, y)


def ragged(y):
    return isinstance(y, list) and len({np.shape(piece) for piece in y}) > 1


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    y = case.primitive(*case.args, **case.kwargs)
    if ragged(y):
        # check_tangent compares a list output through np.asarray, which cannot hold
        # pieces of different shapes (np.split into unequal parts): compare piece by piece
        check_tangent_by_differences(case.primitive, case.args, case.kwargs)
    else:
        check_tangent(case.primitive, *case.args, **case.kwargs)


def test_split_tangents_are_lists_of_pieces():
    x = rand(7, 2)
    t = rand(7, 2)
    pieces = np.array_split(x, 3)
    got = REGISTRY.tangent_rule(np.array_split)((t, None), pieces, x, 3)
    assert isinstance(got, list) and [p.shape for p in got] == [p.shape for p in pieces]
    np.testing.assert_array_equal(np.concatenate(got), t)


def test_transpose_attribute_tangent():
    x = rand(3, 4, 2)
    t = rand(3, 4, 2)
    got = REGISTRY.tangent_rule(np.ndarray.T)((t,), x.T, x)
    expected = ((x + EPS * t).T - (x - EPS * t).T) / (2 * EPS)
    assert got.shape == (2, 4, 3)
    assert_close("ndarray.T tangent", got, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "primitive, items, kwargs", [c[:3] for c in SEQUENCE_CASES], ids=[c[3] for c in SEQUENCE_CASES]
)
def test_sequence_argument_tangent(primitive, items, kwargs):
    # every item alone, then all items together
    rule = REGISTRY.tangent_rule(primitive)
    y = primitive(items, **kwargs)
    rng = np.random.default_rng(11)
    full = direction(items, rng)
    zero = [shifted(d, d, -1.0) for d in full]
    for chosen in [[i] for i in range(len(items))] + [list(range(len(items)))]:
        t = pack_like(items, [full[i] if i in chosen else zero[i] for i in range(len(items))])
        got = rule((t,), y, items, **kwargs)
        up = primitive(shifted(items, t, EPS), **kwargs)
        down = primitive(shifted(items, t, -EPS), **kwargs)
        assert np.shape(got) == np.shape(y)
        assert_tangent_matches(f"{primitive.__name__} tangent of items {chosen}", got, up, down, y)


def test_nested_list_argument_tangent():
    items = [[0.5, 1.5], (np.float64(2.5), -0.5)]
    t = [[1.0, 2.0], (3.0, 4.0)]
    got = REGISTRY.tangent_rule(np.array)((t,), np.array(items), items)
    np.testing.assert_array_equal(got, [[1.0, 2.0], [3.0, 4.0]])


def test_namedtuple_argument_tangent():
    Pair = collections.namedtuple("Pair", "left right")
    items = Pair(rand(2, 2), rand(1, 2))
    t = Pair(rand(2, 2), rand(1, 2))
    got = REGISTRY.tangent_rule(np.concatenate)((t,), np.concatenate(items), items)
    np.testing.assert_array_equal(got, np.concatenate(t))


@pytest.mark.parametrize(
    "primitive, items, kwargs",
    [
        (np.concatenate, [rand(2), np.array([1, 2])], {}),
        (np.stack, [rand(3), np.arange(3)], {}),
        (np.hstack, [rand(2, 1), np.ones((2, 2), dtype=int)], {}),
        (np.array, [0.5, 2, rand()], {}),
        (np.column_stack, [np.arange(3), rand(3)], {}),
    ],
    ids=["concatenate", "stack", "hstack", "array", "column_stack"],
)
def test_integer_items_get_zero_tangents(primitive, items, kwargs):
    # an integer item carries no tangent (None): the join fills in zeros shaped like it
    rng = np.random.default_rng(5)
    t = [direction(item, rng) for item in items]
    y = primitive(items, **kwargs)
    got = REGISTRY.tangent_rule(primitive)((t,), y, items, **kwargs)
    up = primitive(shifted(items, t, EPS), **kwargs)
    down = primitive(shifted(items, t, -EPS), **kwargs)
    assert_tangent_matches(primitive.__name__, got, up, down, y)


def test_linspace_integer_endpoint_has_no_tangent():
    stop, t = rand(3), rand(3)
    y = np.linspace(2, stop, 5, axis=1)
    got = REGISTRY.tangent_rule(np.linspace)((None, t, None), y, 2, stop, 5, axis=1)
    expected = (np.linspace(2, stop + EPS * t, 5, axis=1) - np.linspace(2, stop - EPS * t, 5, axis=1)) / (2 * EPS)
    assert_close("linspace", got, expected, rtol=1e-5, atol=1e-7)


def test_linspace_scalar_zero_tangent_of_an_array_endpoint():
    start, stop, t = rand(3), 1.5, 0.7
    y = np.linspace(start, stop, 4)
    got = REGISTRY.tangent_rule(np.linspace)((0.0, t, None), y, start, stop, 4)
    assert got.shape == (4, 3)
    np.testing.assert_allclose(got, np.broadcast_to(np.linspace(0.0, t, 4)[:, None], (4, 3)), rtol=1e-15)


def test_linspace_step_of_one_sample_has_zero_tangent():
    y = np.linspace(0.3, 1.7, 1, retstep=True)
    samples, step = REGISTRY.tangent_rule(np.linspace)((2.0, 3.0, None), y, 0.3, 1.7, 1, retstep=True)
    np.testing.assert_array_equal(samples, [2.0])
    assert step == 0.0


def test_linspace_integer_samples_have_zero_tangents():
    y = np.linspace(0.3, 7.7, 4, dtype=int)
    got = REGISTRY.tangent_rule(np.linspace)((1.0, 1.0, None), y, 0.3, 7.7, 4, dtype=int)
    np.testing.assert_array_equal(got, np.zeros(4))


def test_full_like_ignores_the_template_values():
    a, t_a = rand(2, 3), rand(2, 3)
    got = REGISTRY.tangent_rule(np.full_like)((t_a, 2.0), np.full_like(a, 0.5), a, 0.5)
    np.testing.assert_array_equal(got, np.full((2, 3), 2.0))
    got[0, 0] = 1.0  # writable, like np.full_like's result


@pytest.mark.parametrize(
    "primitive, x, args, kwargs", [c[:4] for c in LAYOUT_CASES], ids=[c[4] for c in LAYOUT_CASES]
)
def test_layout_dependent_order_tangent(primitive, x, args, kwargs):
    # x is moved in place, so its memory layout (which orders 'A' and 'K' read) is kept
    x = x.copy(order="K") if x.flags.owndata else x
    t = rand(*x.shape)
    t = np.asfortranarray(t) if x.flags.c_contiguous else np.ascontiguousarray(t)  # t in the other layout
    original = x.copy()
    y = primitive(x, *args, **kwargs)
    got = REGISTRY.tangent_rule(primitive)((t,) + (None,) * len(args), y, x, *args, **kwargs)
    x[...] = original + EPS * t
    up = primitive(x, *args, **kwargs).copy()
    x[...] = original - EPS * t
    down = primitive(x, *args, **kwargs).copy()
    x[...] = original
    assert_close(primitive.__name__, got, (up - down) / (2 * EPS), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "primitive, args, kwargs",
    [
        (np.take, (np.array([3, 3, 0, 1]),), {}),
        (np.repeat, ([1, 0, 2],), {"axis": 1}),
        (np.diag, (), {}),
        (np.pad, (1,), {"mode": "reflect"}),
        (np.ravel, (), {"order": "K"}),
        (np.tile, ((2, 1),), {}),
        (np.array, (), {}),
        (np.asarray, (), {}),
        (np.ndarray.flatten, ("K",), {}),
        (np.full_like, (np.float32(0.5),), {}),
    ],
    ids=["take", "repeat", "diag", "pad", "ravel-K", "tile", "array", "asarray", "flatten-K", "full_like"],
)
def test_float32_tangent_keeps_dtype(primitive, args, kwargs):
    x = np.asfortranarray(rand(3, 3)).astype(np.float32)
    t = np.ones((3, 3), dtype=np.float32)
    tangents = (t,) + tuple(np.float32(1.0) if isinstance(a, np.float32) else None for a in args)
    y = primitive(x, *args, **kwargs)
    got = REGISTRY.tangent_rule(primitive)(tangents, y, x, *args, **kwargs)
    assert got.dtype == np.float32
    assert got.shape == y.shape


def test_copies_do_not_share_the_tangent():
    x, t = rand(2, 3), rand(2, 3)
    for primitive in (np.copy, np.array, np.ndarray.copy, np.ndarray.flatten):
        got = REGISTRY.tangent_rule(primitive)((t,), primitive(x), x)
        assert not np.shares_memory(got, t), primitive


def test_pad_unsupported_mode_tangent_says_what_to_do():
    x = rand(3)
    with pytest.raises(SsadError, match="mode='mean'.*ssad.tangent"):
        REGISTRY.tangent_rule(np.pad)((rand(3), None), np.pad(x, 1, mode="mean"), x, 1, "mean")


def test_ravel_k_of_broadcast_view_tangent_is_refused():
    x = np.broadcast_to(rand(3, 1), (3, 4))[::-1]
    with pytest.raises(SsadError, match="zero stride"):
        REGISTRY.tangent_rule(np.ravel)((rand(3, 4), None), np.ravel(x, order="K"), x, "K")


def test_every_adjoint_rule_of_this_module_has_a_tangent_rule():
    from ssad.rules import functional, shape

    mine = [
        p
        for p in REGISTRY.adjoint_primitives()
        if REGISTRY.adjoint_rule(p).__module__ in (shape.__name__, functional.__name__)
    ]
    assert len(mine) > 50
    missing = [repr(p) for p in mine if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


# ----- The tangent is the transpose of the adjoint: <adjoint(dy), t> == <dy, tangent(t)> -----


def has_float32(value):
    if isinstance(value, (list, tuple)):
        return any(has_float32(v) for v in value)
    return isinstance(value, (np.ndarray, np.float32)) and value.dtype == np.float32


def assert_transposes(primitive, args, kwargs, seed):
    rng = np.random.default_rng(seed)
    y = primitive(*args, **kwargs)
    dy = direction(y, rng) if not isinstance(y, (list, tuple)) else type(y)(direction(v, rng) for v in y)
    tangents = tuple(direction(a, rng) for a in args)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    left = pairing(list(adjoints), list(tangents[: len(adjoints)]))
    right = pairing(dy, t_y)
    assert left != 0.0
    # float64 rounding only; an adjoint in float32 (the dtype of a float32 input) rounds dy to float32
    rtol = 1e-6 if any(has_float32(a) for a in args) else 1e-12
    assert abs(left - right) <= rtol * max(1.0, abs(left)), f"<adjoint(dy), t> = {left!r}, <dy, tangent(t)> = {right!r}"


TRANSPOSE_CASES = (
    [(case.primitive, case.args, case.kwargs, case_id(case)) for case in CASES]
    + [(primitive, (items,), kwargs, name) for primitive, items, kwargs, name in SEQUENCE_CASES]
    + [(primitive, (x,) + args, kwargs, name) for primitive, x, args, kwargs, name in LAYOUT_CASES]
)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "primitive, args, kwargs", [c[:3] for c in TRANSPOSE_CASES], ids=[c[3] for c in TRANSPOSE_CASES]
)
def test_tangent_is_transpose_of_adjoint(primitive, args, kwargs, seed):
    assert_transposes(primitive, args, kwargs, seed)


def test_transpose_attribute_is_transpose_of_adjoint():
    x, dy, t = rand(3, 4, 2), rand(2, 4, 3), rand(3, 4, 2)
    (d_x,) = REGISTRY.adjoint_rule(np.ndarray.T)(dy, x.T, x)
    t_y = REGISTRY.tangent_rule(np.ndarray.T)((t,), x.T, x)
    assert abs(pairing(d_x, t) - pairing(dy, t_y)) <= 1e-12 * abs(pairing(d_x, t))


def random_inputs(name, rng):
    """(primitive, args, kwargs) for `name` with shapes, axes and indices drawn at random."""
    shape = tuple(int(n) for n in rng.integers(1, 5, size=rng.integers(1, 4)))
    x = rng.standard_normal(shape)
    axis = int(rng.integers(-x.ndim, x.ndim))
    if name == "reshape":
        return np.reshape, (x, (-1,) + shape[:1]), {"order": str(rng.choice(["C", "F"]))}
    if name == "transpose":
        return np.transpose, (x, tuple(rng.permutation(x.ndim))), {}
    if name == "moveaxis":
        return np.moveaxis, (x, axis, int(rng.integers(x.ndim))), {}
    if name == "take":
        return np.take, (x, rng.integers(-shape[axis], shape[axis], size=6), axis), {}
    if name == "repeat":
        counts = rng.integers(0, 3, size=shape[axis])
        counts[rng.integers(shape[axis])] = 1  # not all zero
        return np.repeat, (x, counts, axis), {}
    if name == "tile":
        return np.tile, (x, tuple(int(r) for r in rng.integers(1, 3, size=rng.integers(1, 4)))), {}
    if name == "roll":
        return np.roll, (x, int(rng.integers(-5, 6)), axis), {}
    if name == "pad":
        mode = str(rng.choice(["constant", "edge", "wrap", "reflect", "symmetric"]))
        return np.pad, (x, rng.integers(0, 3, size=(x.ndim, 2)), mode), {}
    if name == "diagonal":
        y = rng.standard_normal(shape + (3,))
        # offset k reads y[..., i, ..., i + k] with i < 3 and i + k < shape[0]: never empty
        return np.diagonal, (y, int(rng.integers(-2, shape[0])), -1, 0), {}
    if name == "concatenate":
        sizes = list(rng.integers(1, 4, 3)) + [0]  # an empty item too
        items = [rng.standard_normal(shape[: axis % x.ndim] + (int(n),) + shape[axis % x.ndim + 1 :]) for n in sizes]
        return np.concatenate, (items, axis), {}
    if name == "stack":
        return np.stack, ([rng.standard_normal(shape) for _ in range(3)], int(rng.integers(-x.ndim - 1, x.ndim + 1))), {}
    if name == "array_split":
        return np.array_split, (x, int(rng.integers(1, 5)), axis), {}
    if name == "linspace":
        return np.linspace, (rng.standard_normal(shape), rng.standard_normal(shape[-1:]), int(rng.integers(1, 6))), {"axis": -1}
    raise AssertionError(name)


RANDOM_RULES = ["reshape", "transpose", "moveaxis", "take", "repeat", "tile", "roll", "pad", "diagonal",
                "concatenate", "stack", "array_split", "linspace"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", RANDOM_RULES)
def test_tangent_is_transpose_of_adjoint_on_random_inputs(name, seed):
    rng = np.random.default_rng(1000 * seed + RANDOM_RULES.index(name))
    primitive, args, kwargs = random_inputs(name, rng)
    assert_transposes(primitive, args, kwargs, seed)


# ----- End to end: the rules as users call them, through ssad.grad, ssad.jvp and ssad.hessian -----

import ssad  # noqa: E402

_W4 = rand(4, 4)


def taken(x):
    return (
        np.sum(np.sin(np.take(x, [0, 2, -1, 2], axis=1)) * np.arange(12.0).reshape(3, 4))
        + np.sum(np.take(x, [5, -7, 13], mode="wrap") ** 2)
        + np.sum(np.cos(np.take(x, np.array([[5, -7], [1, 13]]), axis=0, mode="clip")))
        + np.sum(x.take([1, 1, 3], 1) ** 3)
    )


def triangles(x):
    return np.sum(np.sin(np.tril(x, -1)) * _W4) + np.sum(np.triu(x, k=2) ** 2) + np.sum(np.tril(x * x, k=1) * _W4)


def diagonals(x):
    return (
        np.sum(np.sin(np.diag(x, 1)))
        + np.sum(np.diag(x, k=-2) ** 2)
        + np.sum(np.diag(np.diag(x) * 2.0, -1) * _W4[:3, :3].sum())
        + np.sum(np.sin(x.diagonal(1)) * x.diagonal(-1))
    )


def promoted(x):
    a, b = np.atleast_2d(x, x[0])
    c, d = np.atleast_1d(x[1], x)
    e, f = np.atleast_3d(x, x[2])
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(c**3) + np.sum(np.sin(d) * x) + np.sum(e**2) + np.sum(np.atleast_1d(x) * f)


def axes_moved(x):
    return (
        np.sum(np.sin(np.moveaxis(x, [0, 1], [-1, 0])) * np.arange(24.0).reshape(3, 4, 2))
        + np.sum(np.swapaxes(x, 0, 2) * np.arange(24.0).reshape(4, 3, 2) ** 0.5)
        + np.sum(np.sin(x.swapaxes(1, -1)) * x.swapaxes(1, -1))
    )


def flipped_and_rolled(x):
    weights = np.arange(12.0).reshape(3, 4)
    return (
        np.sum(np.sin(np.flip(x)) * weights)
        + np.sum(np.fliplr(x) ** 2 * weights)
        + np.sum(np.flipud(x) ** 3)
        + np.sum(np.flip(x, axis=1) * weights**2)
        + np.sum(np.sin(np.roll(x, (1, -2), axis=(0, 1))) * weights)
        + np.sum(np.roll(x, shift=5) ** 2 * weights)
    )


def joined_by_index(x):
    return np.sum(np.sin(np.r_[x, x * 2.0])) + np.sum(np.c_[x, x[:, :1]] ** 2) + np.sum(np.sin(np.r_[x[0], 1.5, x[1]]))


USER_FUNCTIONS = [
    (taken, rand(3, 4)),
    (triangles, rand(4, 4)),
    (diagonals, rand(4, 4)),
    (promoted, rand(4)),
    (axes_moved, rand(2, 3, 4)),
    (flipped_and_rolled, rand(3, 4)),
    (joined_by_index, rand(3, 4)),
]


@pytest.mark.parametrize("f, x", USER_FUNCTIONS, ids=[f.__name__ for f, _ in USER_FUNCTIONS])
def test_user_function_gradient_jvp_and_hessian(f, x):
    assert_close(f"{f.__name__} gradient", ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-7)
    v = _rng.uniform(0.5, 1.5, x.shape) * _rng.choice([-1.0, 1.0], x.shape)
    value, slope = ssad.jvp(f, (x,), (v,))
    assert value == pytest.approx(f(x), rel=1e-12)
    assert_close(f"{f.__name__} jvp", slope, (f(x + EPS * v) - f(x - EPS * v)) / (2 * EPS), rtol=1e-6, atol=1e-7)
    hessian = ssad.hessian(f)(x)
    gradient = ssad.grad(f)
    columns = [(gradient(x + e) - gradient(x - e)) / 2e-5 for e in np.reshape(np.eye(x.size) * 1e-5, (x.size,) + x.shape)]
    assert_close(f"{f.__name__} hessian", hessian, np.reshape(np.array(columns), x.shape * 2), rtol=1e-5, atol=1e-6)


agnp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")


def _programs(np_):
    """(name, loss of one real array written with the namespace np_, input); autograd has
    every function used here."""
    weights = np.arange(12.0).reshape(3, 4)
    return [
        ("tril-triu-k", lambda x: np_.sum(np_.sin(np_.tril(x, -1)) * weights) + np_.sum(np_.triu(x, 2) ** 2), rand(3, 4)),
        # autograd's diag takes square matrices, and roll one shift (not tuples)
        ("diag-k", lambda x: np_.sum(np_.sin(np_.diag(x[:, :3], 1))) + np_.sum(np_.diag(x[0], -1) ** 2), rand(3, 4)),
        ("roll-axis", lambda x: np_.sum(np_.sin(np_.roll(x, -2, axis=1)) * weights), rand(3, 4)),
        ("fliplr-flipud", lambda x: np_.sum(np_.fliplr(x) ** 2 * weights + np_.flipud(x) ** 3), rand(3, 4)),
        ("moveaxis-swapaxes", lambda x: np_.sum(np_.sin(np_.moveaxis(x, 0, -1)) * np_.swapaxes(x, 0, 1).sum()), rand(3, 4)),
        ("atleast-3d", lambda x: np_.sum(np_.atleast_3d(x) ** 2 * weights[:, :, None]), rand(3, 4)),
    ]


NUMPY_PROGRAMS = _programs(np)
AUTOGRAD_PROGRAMS = _programs(agnp)


@pytest.mark.parametrize("k", range(len(NUMPY_PROGRAMS)), ids=[p[0] for p in NUMPY_PROGRAMS])
def test_gradient_matches_autograd(k):
    name, program, x = NUMPY_PROGRAMS[k]
    theirs = autograd.grad(AUTOGRAD_PROGRAMS[k][1])(x)
    assert_close(f"autograd {name}", theirs, numerical_gradient(program, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(program)(x), theirs, rtol=1e-9, atol=1e-10)


# ----- logspace, geomspace and kaiser -----


def test_logspace_is_a_power_of_linspace():
    start, stop, base = 0.4, 1.3, 2.5
    y = np.logspace(start, stop, 5, True, base)
    dy = rand(5)
    d_start, d_stop, _, _, d_base = REGISTRY.adjoint_rule(np.logspace)(dy, y, start, stop, 5, True, base)
    e = np.linspace(start, stop, 5)
    # d y_i = y_i (log(base) de_i + e_i / base dbase), e_i = start (1 - t_i) + stop t_i
    t = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(d_start, np.sum(dy * y * np.log(base) * (1 - t)), rtol=1e-13)
    np.testing.assert_allclose(d_stop, np.sum(dy * y * np.log(base) * t), rtol=1e-13)
    np.testing.assert_allclose(d_base, np.sum(dy * y * e / base), rtol=1e-13)


def test_geomspace_endpoints_move_only_their_own_sample():
    # the first sample is start and the last stop: their adjoints reach only that endpoint
    y = np.geomspace(0.5, 8.0, 4)
    d_start, d_stop = REGISTRY.adjoint_rule(np.geomspace)(np.array([1.0, 0.0, 0.0, 0.0]), y, 0.5, 8.0, 4)
    assert (d_start, d_stop) == (pytest.approx(1.0, rel=1e-14), 0.0)
    d_start, d_stop = REGISTRY.adjoint_rule(np.geomspace)(np.array([0.0, 0.0, 0.0, 1.0]), y, 0.5, 8.0, 4)
    assert (d_start, d_stop) == (0.0, pytest.approx(1.0, rel=1e-14))


def test_kaiser_length_one_has_zero_derivative():
    (_, d_beta) = REGISTRY.adjoint_rule(np.kaiser)(np.array([2.0]), np.kaiser(1, 3.0), 1, 3.0)
    assert d_beta == 0.0


def test_integer_logspace_and_geomspace_have_zero_tangents():
    y = np.logspace(0.0, 2.0, 3, True, 10.0, dtype=int)
    got = REGISTRY.tangent_rule(np.logspace)((1.0, 1.0, None, None, 1.0), y, 0.0, 2.0, 3, True, 10.0, dtype=int)
    np.testing.assert_array_equal(got, np.zeros(3))
    y = np.geomspace(1.0, 100.0, 3, dtype=int)
    got = REGISTRY.tangent_rule(np.geomspace)((1.0, 1.0, None), y, 1.0, 100.0, 3, dtype=int)
    np.testing.assert_array_equal(got, np.zeros(3))


def spaced(x):
    return (
        np.sum(np.sin(np.logspace(x[0], x[1], 5)) * np.arange(5.0))
        + np.sum(np.logspace(x[2], x[3:5], num=3, base=x[0] + 2.0, axis=-1) ** 2)
        + np.sum(np.cos(np.geomspace(x[1] + 2.0, x[2] + 3.0, 4, endpoint=False)))
        + np.sum(np.geomspace(np.exp(x[3:5]), 1.5, num=3, axis=1) * x[0])
        + np.sum(np.kaiser(7, x[4] ** 2 + 1.0) * np.arange(7.0))
    )


def test_spaced_user_function_gradient_jvp_and_hessian():
    test_user_function_gradient_jvp_and_hessian(spaced, np.array([0.3, -0.4, 0.2, 0.5, -0.6]))


@pytest.mark.parametrize(
    "case",
    [
        Case(np.logspace, (_spaces.standard_normal(2), 0.7, 3, True, positive(3, 1)), {"axis": 1}, id="logspace-array-base"),
        Case(np.geomspace, (positive(2), positive(3, 1), 4), {"axis": -1, "endpoint": False}, id="geomspace-arrays"),
        Case(np.kaiser, (5, 0.7), id="kaiser-odd"),
    ],
    ids=case_id,
)
def test_spaces_second_order(case):
    from ssad.testing import check_second_order

    check_second_order(case.primitive, *case.args, **case.kwargs)


_X = rand(3, 4)

FLAG_CALLS = [
    lambda x: np.isclose(x, 0.5), lambda x: np.allclose(x, x), lambda x: np.array_equal(x, x),
    lambda x: np.array_equiv(x, x[0]), lambda x: np.isin(x, [0.5]), lambda x: np.isreal(x),
    lambda x: np.iscomplex(x), lambda x: np.isrealobj(x), lambda x: np.iscomplexobj(x),
    lambda x: np.isneginf(x), lambda x: np.isposinf(x), lambda x: np.may_share_memory(x, x),
    lambda x: np.shares_memory(x, x), lambda x: np.can_cast(x.dtype, np.float32),
    lambda x: np.issubdtype(x.dtype, np.floating), lambda x: np.isdtype(x.dtype, "real floating"),
    lambda x: np.broadcast_shapes(x.shape, (1, 4)), lambda x: np.mintypecode([x.dtype.char]),
    lambda x: np.common_type(x), lambda x: np.min_scalar_type(x[0, 0]), lambda x: np.promote_types(x.dtype, "f4"),
    lambda x: np.mask_indices(x.shape[1], np.triu), lambda x: np.unravel_index(5, x.shape),
    lambda x: np.ravel_multi_index(([0, 2], [1, 3]), x.shape), lambda x: np.ix_([0, 2], [1, 3]),
]


@pytest.mark.parametrize("k", range(len(FLAG_CALLS)))
def test_nondifferentiable_results_are_flags_indices_shapes_or_dtypes(k):
    # a non-differentiable registration is a zero gradient: none of these results is a
    # float computed from the values of x
    result = FLAG_CALLS[k](_X)
    for leaf in result if isinstance(result, tuple) else (result,):
        assert not (isinstance(leaf, (np.ndarray, np.generic, float)) and np.asarray(leaf).dtype.kind in "fc"), leaf


def test_gradient_beside_a_tolerance_test():
    def f(x):
        close = np.isclose(x, 1.0)
        return np.sum(np.where(close, 0.0, x**2))

    x = np.array([1.0, 0.5, -2.0])
    np.testing.assert_array_equal(ssad.grad(f)(x), [0.0, 1.0, -4.0])


def item_of_a_loss(x):
    loss = np.sum(np.sin(x) * x)
    return loss.item() * x.item(1, 0) + x.item(-1) ** 2


def test_item_end_to_end():
    x = rand(3, 2)
    ssad.check_grads(item_of_a_loss, (x,), order=2)
    np.testing.assert_allclose(ssad.grad(item_of_a_loss)(x), numerical_gradient(item_of_a_loss, x), rtol=1e-7)
