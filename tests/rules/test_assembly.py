"""Numerical checks of the rules that build arrays from parts and choose parts of arrays
(ssad/rules/assembly.py): each adjoint and tangent rule against central differences, the
tangents as transposes of the adjoints, and user functions through ssad.grad, ssad.jvp
and ssad.hessian against central differences and autograd."""

import warnings

import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.runtime import pack_like
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, case_id

_rng = np.random.default_rng(20261126)


def rand(*shape):
    return _rng.standard_normal(shape)


def spread(*shape):
    """Distinct values (no ties), so that sorting and partitioning are smooth at them."""
    return _rng.permutation(np.prod(shape, dtype=int)).reshape(shape) * 0.37 + rand(*shape) * 0.05


# inputs of the rules of blocks, insertions, deletions, copies and casts, from their own
# generator so that the other samples stay as they were
_parts = np.random.default_rng(20261127)


def part(*shape):
    return _parts.standard_normal(shape)


CASES = [
    # ----- Rotating and moving axes -----
    Case(np.rot90, (rand(3, 4),), id="rot90"),
    Case(np.rot90, (rand(3, 4, 2), 3, (2, 0)), id="rot90-k-axes"),
    Case(np.rot90, (rand(3, 4),), {"k": -2}, id="rot90-negative-k"),
    Case(np.rollaxis, (rand(2, 3, 4, 5), 3, 1), id="rollaxis"),
    Case(np.rollaxis, (rand(2, 3, 4), 0, 3), id="rollaxis-to-end"),
    Case(np.rollaxis, (rand(2, 3, 4), -1), id="rollaxis-negative"),
    Case(np.rollaxis, (rand(2, 3, 4), 1, -1), id="rollaxis-negative-start"),
    # ----- Joining -----
    Case(np.append, (rand(3), rand(2, 2)), id="append-flat"),
    Case(np.append, (rand(2, 3), rand(2, 1)), {"axis": 1}, id="append-axis"),
    Case(np.append, (rand(2, 3), rand(1, 3), 0), id="append-axis-0"),
    Case(np.diagflat, (rand(2, 2),), id="diagflat"),
    Case(np.diagflat, (rand(3), -1), id="diagflat-k"),
    Case(np.diagflat, (rand(3),), {"k": 2}, id="diagflat-k-keyword"),
    # ----- Grids and broadcasting -----
    Case(np.meshgrid, (rand(3), rand(4)), id="meshgrid"),
    Case(np.meshgrid, (rand(3), rand(4), rand(2)), {"indexing": "ij"}, id="meshgrid-ij"),
    Case(np.meshgrid, (rand(3), rand(2, 2), rand(2)), {"sparse": True}, id="meshgrid-sparse-xy"),
    Case(np.meshgrid, (rand(3), rand(4)), {"indexing": "ij", "copy": False}, id="meshgrid-views"),
    Case(np.meshgrid, (rand(3),), id="meshgrid-one"),
    Case(np.broadcast_arrays, (rand(3, 1), rand(4), 0.5), id="broadcast_arrays"),
    Case(np.broadcast_arrays, (rand(2, 3), rand(2, 3)), id="broadcast_arrays-same"),
    # ----- Choosing -----
    Case(np.select, ([np.array([True, False, False, True]), np.array([True, True, False, False])],
                     [rand(4), rand(1)], rand(4)), id="select"),
    Case(np.select, ([rand(3, 1) > 0, rand(4) > 0], [rand(3, 4), rand(3, 4)], 0.5), id="select-broadcast"),
    Case(np.select, ([rand(2, 3) > 0, rand(2, 3) > 0], [rand(2, 3), rand(2, 3)], rand(2, 3)), id="select-same-shapes"),
    Case(np.choose, (np.array([[0, 2, 1, 0], [1, 1, 2, 0]]), rand(3, 4)), id="choose"),
    Case(np.choose, (np.array([[0, 2, 1]]), rand(3, 2, 1)), id="choose-broadcast"),
    Case(np.choose, (np.array([5, -1, 1]), rand(3, 3)), {"mode": "wrap"}, id="choose-wrap"),
    Case(np.choose, (np.array([5, -1, 1]), rand(3, 3)), {"mode": "clip"}, id="choose-clip"),
    Case(np.compress, (np.array([True, False, True]), rand(3, 2)), {"axis": 0}, id="compress"),
    Case(np.compress, ([False, True, True, False, True], rand(2, 3)), id="compress-flat"),
    Case(np.compress, (np.array([True, False]), rand(3, 4), -1), id="compress-short-condition"),
    Case(np.ndarray.compress, (rand(3, 2), [False, True]), {"axis": 1}, id="ndarray.compress"),
    Case(np.extract, (np.array([[True, False, True], [False, True, True]]), rand(2, 3)), id="extract"),
    Case(np.partition, (spread(3, 6), 2), id="partition"),
    Case(np.partition, (spread(3, 6), (1, 3)), {"axis": None}, id="partition-flat"),
    Case(np.partition, (spread(4, 3), 1, 0), id="partition-axis-0"),
    Case(np.partition, (spread(7), -2), id="partition-1d"),
    # ----- Blocks, insertions and deletions -----
    Case(np.delete, (part(3, 4), [0, 2], 1), id="delete"),
    Case(np.delete, (part(3, 4), 1), {"axis": 0}, id="delete-int"),
    Case(np.delete, (part(5), slice(1, 4, 2)), id="delete-slice"),
    Case(np.delete, (part(2, 3), [5, 0, 2]), id="delete-flat"),
    Case(np.delete, (part(4, 2), np.array([True, False, True, False]), 0), id="delete-mask"),
    Case(np.insert, (part(3, 4), [1, 4], part(3, 2), 1), id="insert"),
    Case(np.insert, (part(3, 4), 1, part(3), 1), id="insert-int"),
    Case(np.insert, (part(5), [1, 1, 4], part(3)), id="insert-repeated"),
    Case(np.insert, (part(2, 3), 2, 0.5), {"axis": 0}, id="insert-scalar"),
    Case(np.insert, (part(2, 3), [3, 0], part(2, 1), 1), id="insert-broadcast"),
    Case(np.insert, (part(2, 3), 4, part(2)), id="insert-flat"),
    Case(np.resize, (part(2, 3), (4, 4)), id="resize"),
    Case(np.resize, (part(5), 3), id="resize-truncate"),
    Case(np.unstack, (part(3, 4),), id="unstack"),
    Case(np.unstack, (part(2, 3, 4),), {"axis": -1}, id="unstack-axis"),
    # to_end and to_begin passed positionally: the rule returns an adjoint for each
    Case(np.ediff1d, (part(2, 3), part(2), part(1)), id="ediff1d"),
    Case(np.ediff1d, (part(5), None, None), id="ediff1d-plain"),
    Case(np.ediff1d, (part(4), None, 0.5), id="ediff1d-begin"),
    Case(np.sort_complex, (part(2, 5),), id="sort_complex"),
    Case(np.sort_complex, (np.array([0.3, -1.2, 2.5, 0.9]),), id="sort_complex-1d"),
    # ----- Copies, layouts and casts -----
    Case(np.ascontiguousarray, (part(3, 4).T,), id="ascontiguousarray"),
    Case(np.ascontiguousarray, (1.5,), id="ascontiguousarray-scalar"),
    Case(np.asfortranarray, (part(3, 4),), id="asfortranarray"),
    Case(np.asarray_chkfinite, (part(3, 4),), id="asarray_chkfinite"),
    Case(np.astype, (part(3, 4), "float64"), id="astype"),
    Case(np.astype, (part(3), np.complex128), {"copy": False}, id="astype-complex"),
]

# np.block takes nested lists, checked item by item below; np.trim_zeros keeps a shape that
# finite differences at its trimmed zeros would change, checked along the kept elements below
CHECKED_ELSEWHERE = [np.block, np.trim_zeros]
if hasattr(np, "row_stack"):
    # a list argument: checked item by item below
    CHECKED_ELSEWHERE.append(np.row_stack)

NONDIFFERENTIABLE = []


def _quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.row_stack
        return call(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_every_rule_of_this_module_is_checked():
    from ssad.rules import assembly

    mine = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == assembly.__name__}
    assert mine - ({case.primitive for case in CASES} | set(globals().get("CHECKED_ELSEWHERE", ()))) == set()
    assert all(REGISTRY.tangent_rule(p).__module__ == assembly.__name__ for p in mine)


# ----- The tangent is the transpose of the adjoint, for list arguments and tuple results too -----


def direction(value, rng):
    """A random direction shaped like `value` (item by item for lists and tuples); None for non-floats."""
    if isinstance(value, (list, tuple)):
        return type(value)(direction(v, rng) for v in value)
    if isinstance(value, bool) or not (
        isinstance(value, float) or (isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f")
    ):
        return None
    draw = rng.uniform(0.5, 1.5, np.shape(value)) * rng.choice([-1.0, 1.0], np.shape(value))
    return draw if np.ndim(value) else float(draw)


def output_adjoint(y, rng):
    """A random adjoint of the result `y`; zeros for an integer component of a tuple, as ssad
    passes it."""
    if isinstance(y, (list, tuple)):
        return type(y)(output_adjoint(v, rng) for v in y)
    if isinstance(y, np.ndarray) and y.dtype.kind in "iub":
        return np.zeros(y.shape)
    return direction(y, rng)


def pairing(a, b):
    """sum(a * b) over arrays and nested lists/tuples; None on either side pairs to zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return sum(pairing(u, v) for u, v in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))


def assert_transposes(primitive, args, kwargs, seed):
    rng = np.random.default_rng(seed)
    y = _quietly(primitive, *args, **kwargs)
    dy = output_adjoint(y, rng)
    tangents = tuple(direction(a, rng) for a in args)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    assert type(t_y) is type(y) or (isinstance(y, np.ndarray) and isinstance(t_y, np.ndarray))
    assert [np.shape(t) for t in t_y] == [np.shape(v) for v in y] if isinstance(y, tuple) else np.shape(t_y) == np.shape(y)
    # a default passed by keyword gets an adjoint past the positional arguments: not paired
    left = pairing(list(adjoints[: len(args)]), list(tangents[: len(adjoints)]))
    right = pairing(dy, t_y)
    assert left != 0.0
    assert abs(left - right) <= 1e-12 * max(1.0, abs(left)), f"<adjoint(dy), t> = {left!r}, <dy, tangent(t)> = {right!r}"


SEQUENCE_CASES = [
    (np.select, ([rand(4) > 0, rand(4) > 0], [rand(4), rand(4), ]), {"default": 0.25}, "select-keyword-default"),
    (np.select, ([rand(2, 3) > 0, rand(3) > 0, rand(2, 1) > 0], [rand(2, 3), 1.5, rand(3)], 0.0), {},
     "select-scalar-choice"),
    (np.select, ([rand(3) > 0], [np.arange(3)], rand(3)), {}, "select-integer-choice"),
    (np.choose, (np.array([0, 2, 1, 1]), [rand(4), rand(1), 0.5]), {}, "choose-list"),
    (np.choose, (np.array([[0], [1]]), (rand(2, 3), rand(3))), {}, "choose-tuple-broadcast"),
    (np.choose, (np.array([3, -1, 0]), [rand(3), np.arange(3)]), {"mode": "wrap"}, "choose-integer-choice"),
    (np.meshgrid, (rand(3), np.arange(2), rand(2)), {}, "meshgrid-integer-input"),
    (np.broadcast_arrays, (rand(3), np.arange(3)[:, None]), {}, "broadcast_arrays-integer"),
    (np.append, (rand(3), [1.0, 2.0]), {}, "append-list"),
    (np.append, (rand(3), 0.5), {}, "append-scalar"),
    (np.diagflat, ([0.5, 1.5, 2.5],), {}, "diagflat-list"),
    (np.block, ([[part(2, 3), part(2, 1)], [part(1, 4)]],), {}, "block"),
    (np.block, ([part(3), part(2), 0.5],), {}, "block-1d"),
    (np.block, ([[[part(2, 2)], [part(1, 2)]], [[part(3, 2)]]],), {}, "block-3-levels"),
    (np.block, ([[part(2), part(1)], [part(2, 3)]],), {}, "block-promoted"),
    (np.block, ([[part(2, 2), np.ones((2, 1))], [part(1, 3)]],), {}, "block-integer-item"),
    (np.block, (part(2, 3),), {}, "block-array"),
    (np.insert, (part(5), [0, 3], [0.5, 1.5]), {}, "insert-list-values"),
    (np.asarray_chkfinite, ([0.5, 1.5],), {}, "asarray_chkfinite-list"),
    (np.ascontiguousarray, ([[0.5], [1.5]],), {}, "ascontiguousarray-list"),
    (np.ediff1d, (part(4), [0.5, 1.5], [2.5]), {}, "ediff1d-list-ends"),
]
if hasattr(np, "row_stack"):
    SEQUENCE_CASES += [((np.row_stack, ([rand(3), rand(2, 3)],), {}, "row_stack")),
                       ((np.row_stack, ((0.5, rand(1)),), {}, "row_stack-scalars"))]

# a complex result (np.sort_complex, a cast to complex): paired as real and imaginary parts below
COMPLEX_RESULT = {"sort_complex", "sort_complex-1d", "astype-complex"}
TRIMMED = [
    (np.trim_zeros, (np.array([0.0, 0.0, 1.3, 0.0, -0.7, 0.4, 0.0]),), {}, "trim_zeros"),
    (np.trim_zeros, (np.array([0.0, 1.3, -0.7, 0.0, 0.0]), "b"), {}, "trim_zeros-back"),
    (np.trim_zeros, (np.array([[0.0, 0.0, 0.0], [0.0, 1.2, -0.4], [0.0, 0.7, 0.0]]),), {}, "trim_zeros-2d"),
    (np.trim_zeros, (np.array([[0.0, 0.3, 0.0], [0.0, 1.2, 0.0]]), "F"), {"axis": 1}, "trim_zeros-axis"),
    (np.trim_zeros, (np.array([0.4, 0.0, 1.3]),), {}, "trim_zeros-nothing"),
    (np.trim_zeros, ([0.0, 0.5, 0.0, 1.5, 0.0],), {}, "trim_zeros-list"),
]
TRANSPOSE_CASES = (
    [(case.primitive, case.args, case.kwargs, case_id(case)) for case in CASES if case_id(case) not in COMPLEX_RESULT]
    + SEQUENCE_CASES
    + TRIMMED
)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "primitive, args, kwargs", [c[:3] for c in TRANSPOSE_CASES], ids=[c[3] for c in TRANSPOSE_CASES]
)
def test_tangent_is_transpose_of_adjoint(primitive, args, kwargs, seed):
    assert_transposes(primitive, args, kwargs, seed)


def shifted(value, t, step):
    """value + step * t, item by item for lists and tuples (the container type kept)."""
    if isinstance(value, (list, tuple)):
        return pack_like(value, [shifted(v, d, step) for v, d in zip(value, t, strict=True)])
    if t is None:
        return value
    moved = np.asarray(value, dtype=np.float64) + step * np.asarray(t)
    return float(moved) if np.ndim(value) == 0 else moved


@pytest.mark.parametrize(
    "primitive, args, kwargs", [c[:3] for c in SEQUENCE_CASES], ids=[c[3] for c in SEQUENCE_CASES]
)
def test_sequence_arguments(primitive, args, kwargs):
    """Adjoint and tangent of every float item of every argument, lists included, against
    central differences of <dy, f(args)>."""
    rng = np.random.default_rng(3)
    y = _quietly(primitive, *args, **kwargs)
    dy = output_adjoint(y, rng)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    full = tuple(direction(a, rng) for a in args)
    eps = 1e-6
    for position, (arg, t) in enumerate(zip(args, full, strict=True)):
        if t is None or (isinstance(t, (list, tuple)) and all(item is None for item in t)):
            continue
        assert isinstance(adjoints[position], type(arg)) or not isinstance(arg, (list, tuple))
        # the adjoint, along the direction t (one pairing per argument, lists included)
        tangents = tuple(t if k == position else None for k in range(len(args)))
        moved = [list(args), list(args)]
        moved[0][position] = shifted(arg, t, eps)
        moved[1][position] = shifted(arg, t, -eps)
        up, down = (_quietly(primitive, *m, **kwargs) for m in moved)
        expected = (pairing(dy, up) - pairing(dy, down)) / (2 * eps)
        assert abs(pairing(adjoints[position], t) - expected) <= 1e-6 * max(1.0, abs(expected))
        # the tangent of this argument alone
        got = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
        assert abs(pairing(dy, got) - expected) <= 1e-6 * max(1.0, abs(expected))


# ----- Conventions -----


def test_select_gives_each_choice_the_gradient_where_it_was_chosen():
    first = np.array([True, False, True, False])
    second = np.array([True, True, False, False])
    choices = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, np.inf, 7.0, 8.0])]
    default = np.array([9.0, 10.0, 11.0, np.nan])
    dy = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.select([first, second], choices, default)
    _, (d_first, d_second), d_default = REGISTRY.adjoint_rule(np.select)(dy, y, [first, second], choices, default)
    np.testing.assert_array_equal(d_first, [1.0, 0.0, 3.0, 0.0])  # the first true condition wins
    np.testing.assert_array_equal(d_second, [0.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(d_default, [0.0, 0.0, 0.0, 4.0])


def test_choose_wraps_and_clips_like_numpy():
    choices = rand(3, 4)
    a = np.array([4, -1, 7, 1])
    for mode, index in (("wrap", [1, 2, 1, 1]), ("clip", [2, 0, 2, 1])):
        y = np.choose(a, choices, mode=mode)
        (_, d_choices) = REGISTRY.adjoint_rule(np.choose)(np.ones(4), y, a, choices, mode=mode)
        expected = np.zeros((3, 4))
        expected[index, np.arange(4)] = 1.0
        np.testing.assert_array_equal(d_choices, expected)


def test_partition_sends_equal_elements_one_slot_each():
    a = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    y = np.partition(a, 2)
    dy = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    (d_a,) = REGISTRY.adjoint_rule(np.partition)(dy, y, a, 2)
    # every slot's adjoint lands on an element of the same value, each exactly once
    assert sorted(d_a) == sorted(dy)
    for value in (1.0, 2.0, 3.0):
        assert sorted(d_a[a == value]) == sorted(dy[y == value])


def test_float32_adjoints_keep_their_dtype():
    x = rand(3, 4).astype(np.float32)
    for primitive, args, kwargs in [
        (np.rot90, (), {}),
        (np.rollaxis, (1,), {}),
        (np.partition, (1,), {}),
        (np.diagflat, (), {}),
    ]:
        y = primitive(x, *args, **kwargs)
        (d_x,) = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, *args, **kwargs)
        assert d_x.dtype == np.float32 and d_x.shape == x.shape, primitive.__name__
    y = np.compress([True, False, True], x, axis=0)
    d_x = REGISTRY.adjoint_rule(np.compress)(np.ones_like(y), y, [True, False, True], x, axis=0)[1]
    assert d_x.dtype == np.float32
    choices = rand(2, 4).astype(np.float32)
    y = np.choose([0, 1, 1, 0], choices)
    d_choices = REGISTRY.adjoint_rule(np.choose)(np.ones_like(y), y, [0, 1, 1, 0], choices)[1]
    assert d_choices.dtype == np.float32


# ----- End to end: user functions through ssad.grad, ssad.jvp and ssad.hessian -----

W34 = rand(3, 4)
GRID = rand(5)


def rotated(x):
    return np.sum(np.sin(np.rot90(x)) * W34) + np.sum(np.rot90(x, k=3, axes=(1, 0)) ** 2 * W34)


def rolled_axes(x):
    return np.sum(np.tanh(np.rollaxis(x, 2)) * np.arange(24.0).reshape(4, 2, 3)) + np.sum(np.rollaxis(x, -1, start=1) ** 2)


def appended(x):
    flat = np.append(x, x[0] * 2.0)
    stacked = np.append(x, x[:, :1] ** 2, axis=1)
    return np.sum(np.sin(flat) * np.arange(flat.size)) + np.sum(stacked ** 3)


def grid_energy(x):
    u, v = np.meshgrid(x, GRID)
    p, q = np.meshgrid(x, x[:2], indexing="ij", sparse=True)
    r, s = np.meshgrid(x[1:], x, sparse=True, copy=False)  # a list of views
    return np.sum(np.sin(u * v)) + np.sum(np.cos(p + q) * p) + np.sum(np.tanh(r * s))


def broadcast_pair(x):
    a, b = np.broadcast_arrays(x[:, None], x[:2])
    return np.sum(np.sin(a) * b)


def selected(x):
    conditions = [x > 0.5, x < -0.5]
    return np.sum(np.select(conditions, [np.sin(x), x * x], default=np.cos(x)) * np.arange(x.size).reshape(x.shape))


def chosen(x):
    index = np.array([[0, 1, 2, 1], [2, 2, 0, 1], [1, 0, 0, 2]])
    return np.sum(np.choose(index, [x, np.sin(x), x[0] ** 2]) ** 2) + np.sum(np.choose(index, np.stack([x, x * x, -x]), mode="clip"))


def compressed(x):
    keep = np.array([True, False, True])
    return (
        np.sum(np.sin(np.compress(keep, x, axis=0)) ** 2)
        + np.sum(x.compress([False, True, True, True], axis=1) ** 3)
        + np.sum(np.extract(x > 0, x) ** 2)
    )


def flat_diagonal(x):
    return np.sum(np.sin(np.diagflat(x, k=1)) * np.arange(169.0).reshape(13, 13)) + np.sum(np.diagflat(x[0]) ** 2)


def partitioned(x):
    part = np.partition(x, 1, axis=1)
    return np.sum(np.sin(part) * np.arange(12.0).reshape(3, 4)) + np.sum(np.partition(x, (2, 5), axis=None)[:3] ** 2)


X34 = spread(3, 4)


def blocks(x):
    corner = np.block([[x, x[:, :1] ** 2], [np.sin(x[:1]), np.ones((1, 1))]])
    return np.sum(np.sin(corner) * np.arange(12.0).reshape(3, 4)) + np.sum(np.block([x[0], 2.0 * x[1], 0.5]) ** 3)


def inserted_and_deleted(x):
    kept = np.delete(x, 1, axis=1)
    flat = np.delete(x, [0, 5, 7])
    wider = np.insert(x, [0, 2], x[:, 1:2] ** 2, axis=1)
    longer = np.insert(x[0], 2, np.cos(x[1, 0]))
    return np.sum(np.sin(kept) * kept) + np.sum(flat**3) + np.sum(np.sin(wider) * np.arange(18.0).reshape(3, 6)) + np.sum(longer**2)


def resized_and_unstacked(x):
    first, second, third = np.unstack(x)
    columns = np.unstack(x, axis=1)
    return np.sum(np.sin(np.resize(x, (5, 3))) * np.arange(15.0).reshape(5, 3)) + np.sum(first * np.cos(third)) + np.sum(
        second**2
    ) + np.sum(np.sin(columns[2]) * columns[0])


TRIM_MASK = np.array([[False, True, True, False], [True, False, True, True], [False, False, False, False]])


def trimmed(x):
    # zeros that do not move with x: trim_zeros keeps the same elements near x
    held = np.where(TRIM_MASK, x, 0.0)
    return np.sum(np.sin(np.trim_zeros(held[0])) * np.arange(2.0, 4.0)) + np.sum(np.trim_zeros(held, axis=0) ** 2)


def differenced(x):
    return np.sum(np.sin(np.ediff1d(x, to_begin=x[0, 0] ** 2)) * np.arange(12.0)) + np.sum(
        np.ediff1d(x[1], x[2, :2] * 3.0) ** 2
    )


def sorted_complex(x):
    z = np.sort_complex(x[0])
    w = np.sort_complex(x[1] + 1j * x[2])
    return np.sum(np.real(z) * np.arange(4.0)) + np.sum(np.abs(w) ** 2 * np.arange(4.0)) + np.sum(np.imag(w) ** 3)


def copied_and_cast(x):
    c = np.ascontiguousarray(x.T)
    f = np.asfortranarray(x * 2.0)
    k = np.asarray_chkfinite(np.sin(x))
    z = np.astype(x, np.complex128)
    return np.sum(c**2 * np.arange(12.0).reshape(4, 3)) + np.sum(np.sin(f) * k) + np.sum(np.abs(z * (1.0 + 2.0j)) ** 2) + np.sum(
        np.astype(x, np.float32).astype(np.float64) * 0.0 + np.astype(x, "float64") ** 3
    )

USER_FUNCTIONS = [
    (rotated, rand(4, 3)),
    (rolled_axes, rand(2, 3, 4)),
    (appended, rand(3, 4)),
    (grid_energy, rand(4)),
    (broadcast_pair, rand(3)),
    (selected, np.array([[0.9, -0.8, 0.1], [0.2, 1.3, -1.1]])),
    (chosen, rand(3, 4)),
    (compressed, np.array([[0.7, -0.4, 1.2, -0.9], [0.3, 0.8, -1.5, 0.6], [-0.2, 1.1, 0.4, -0.7]])),
    (flat_diagonal, rand(3, 4)),
    (partitioned, X34),
    (blocks, part(2, 3)),
    (inserted_and_deleted, part(3, 4)),
    (resized_and_unstacked, part(3, 4)),
    (trimmed, part(3, 4)),
    (differenced, part(3, 4)),
    (sorted_complex, spread(3, 4)),
    (copied_and_cast, part(3, 4)),
]
if hasattr(np, "row_stack"):

    def rows_stacked(x):
        return np.sum(np.sin(np.row_stack([x, x * 2.0, np.cos(x)])) * np.arange(12.0).reshape(3, 4))

    USER_FUNCTIONS.append((rows_stacked, rand(4)))

USER_IDS = [f.__name__ for f, _ in USER_FUNCTIONS]


@pytest.mark.parametrize("f, x", USER_FUNCTIONS, ids=USER_IDS)
def test_user_function_gradient(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        got = ssad.grad(f)(x)
        expected = numerical_gradient(f, x)
    assert_close(f"{f.__name__} gradient", got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, x", USER_FUNCTIONS, ids=USER_IDS)
def test_user_function_jvp(f, x):
    v = np.random.default_rng(5).uniform(0.5, 1.5, np.shape(x)) * np.random.default_rng(6).choice([-1.0, 1.0], np.shape(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        value, slope = ssad.jvp(f, (x,), (v,))
        step = 1e-6
        expected = (f(x + step * v) - f(x - step * v)) / (2 * step)
        assert value == pytest.approx(f(x), rel=1e-12)
    assert_close(f"{f.__name__} jvp", slope, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, x", USER_FUNCTIONS, ids=USER_IDS)
def test_user_function_hessian(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        hessian = ssad.hessian(f)(x)
        gradient = ssad.grad(f)
        step = 1e-5
        columns = []  # column i: the derivative of the gradient along input element i
        for i in range(np.size(x)):
            e = np.zeros(np.size(x))
            e[i] = step
            e = np.reshape(e, np.shape(x))
            columns.append((gradient(x + e) - gradient(x - e)) / (2 * step))
    expected = np.reshape(np.array(columns), np.shape(x) * 2)
    assert_close(f"{f.__name__} hessian", hessian, expected, rtol=1e-5, atol=1e-6)
    square = np.reshape(hessian, (np.size(x), np.size(x)))
    np.testing.assert_allclose(square, square.T, rtol=1e-9, atol=1e-9)


# ----- Second order through the rules with keywords and other variants -----

SECOND_ORDER_CASES = [
    Case(np.rot90, (rand(3, 4, 2), 3, (2, 0)), id="rot90-k-axes"),
    Case(np.append, (rand(2, 3), rand(2, 1)), {"axis": 1}, id="append-axis"),
    Case(np.meshgrid, (rand(3), rand(4), rand(2)), {"indexing": "ij", "sparse": True}, id="meshgrid-ij-sparse"),
    Case(np.choose, (np.array([5, -1, 1]), rand(3, 3)), {"mode": "wrap"}, id="choose-wrap"),
    Case(np.compress, (np.array([True, False]), rand(3, 4), -1), id="compress-axis"),
    Case(np.partition, (spread(3, 6), (1, 3)), {"axis": None}, id="partition-flat"),
    Case(np.select, ([rand(3, 1) > 0, rand(4) > 0], [rand(3, 4), rand(3, 4)], rand(4)), id="select-default"),
    Case(np.delete, (part(4, 2), np.array([True, False, True, False]), 0), id="delete-mask"),
    Case(np.insert, (part(2, 3), [3, 0], part(2, 1), 1), id="insert-broadcast"),
    Case(np.insert, (part(5), [1, 1, 4], part(3)), id="insert-repeated"),
    Case(np.resize, (part(5), (2, 4)), id="resize-repeat"),
    Case(np.unstack, (part(2, 3, 4),), {"axis": -1}, id="unstack-axis"),
    Case(np.ediff1d, (part(2, 3), part(2), part(1)), id="ediff1d-ends"),
    Case(np.astype, (part(3), np.complex128), {"copy": False}, id="astype-complex"),
    Case(np.ascontiguousarray, (part(3, 4).T,), id="ascontiguousarray"),
]


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=case_id)
def test_second_order_variants(case):
    check_second_order(case.primitive, *case.args, **case.kwargs)


# ----- Against autograd (its answers checked against finite differences first) -----

agnp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")


def _programs(np_):
    """(name, loss of one real array written with the namespace np_, input); autograd has
    every function used here."""
    return [
        ("rot90", lambda x: np_.sum(np_.sin(np_.rot90(x, 1)) * np_.arange(12.0).reshape(4, 3)), rand(3, 4)),
        ("rollaxis", lambda x: np_.sum(np_.tanh(np_.rollaxis(x, 2, 0)) * np_.arange(24.0).reshape(4, 2, 3)), rand(2, 3, 4)),
        ("partition-1d", lambda x: np_.sum(np_.sin(np_.partition(x, 3)) * np_.arange(7.0)), spread(7)),
    ]


NUMPY_PROGRAMS = _programs(np)
AUTOGRAD_PROGRAMS = _programs(agnp)


@pytest.mark.parametrize("k", range(len(NUMPY_PROGRAMS)), ids=[p[0] for p in NUMPY_PROGRAMS])
def test_gradient_matches_autograd(k):
    name, program, x = NUMPY_PROGRAMS[k]
    theirs = autograd.grad(AUTOGRAD_PROGRAMS[k][1])(x)
    assert_close(f"autograd {name}", theirs, numerical_gradient(program, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(program)(x), theirs, rtol=1e-9, atol=1e-10)
    v = np.random.default_rng(k).standard_normal(np.shape(x))
    ours_hvp = ssad.jvp(ssad.grad(program), (x,), (v,))[1]
    theirs_hvp = autograd.grad(lambda u: agnp.sum(autograd.grad(AUTOGRAD_PROGRAMS[k][1])(u) * v))(x)
    np.testing.assert_allclose(ours_hvp, theirs_hvp, rtol=1e-8, atol=1e-9)


# ----- Structure -----


def test_select_conditions_carry_no_gradient():
    # np.select's conditions have no gradient: a differentiated value there is a condition
    # (a boolean array), which carries none, so the gradient is that of the choices only
    def f(x):
        return np.sum(np.select([x > 0], [x * 3.0], -x))

    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_array_equal(ssad.grad(f)(x), [3.0, -1.0, 3.0])


def test_partition_adjoint_is_a_permutation_of_dy():
    a = spread(9)
    y = np.partition(a, 4, kind="introselect")
    dy = rand(9)
    (d_a,) = REGISTRY.adjoint_rule(np.partition)(dy, y, a, 4, kind="introselect")
    np.testing.assert_array_equal(np.sort(d_a), np.sort(dy))


if hasattr(np, "row_stack"):

    def test_row_stack_is_vstack():
        x = rand(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            y = np.row_stack([x, x[0]])
        (d_items,) = REGISTRY.adjoint_rule(np.row_stack)(np.ones_like(y), y, [x, x[0]])
        assert [np.shape(d) for d in d_items] == [(2, 3), (3,)]
        got = REGISTRY.tangent_rule(np.row_stack)(([x, x[0]],), y, [x, x[0]])
        np.testing.assert_array_equal(got, np.vstack([x, x[0]]))


def test_meshgrid_returns_one_tangent_per_output():
    x, z = rand(3), rand(2)
    y = np.meshgrid(x, z, sparse=True)
    got = REGISTRY.tangent_rule(np.meshgrid)((rand(3), None), y, x, z, sparse=True)
    assert isinstance(got, tuple) and [g.shape for g in got] == [(1, 3), (2, 1)]
    np.testing.assert_array_equal(got[1], np.zeros((2, 1)))


# ----- End to end: rules of linalg.py and reductions.py these functions are combined with -----

_W43 = rand(4, 3)
_B243 = rand(2, 4, 3)
_V3 = rand(3)


def contracted(x):
    return (
        np.sum(np.sin(np.einsum("...ij,jk->...ik", x, _W43)))
        + np.sum(np.tensordot(x, _W43, 1) ** 2)
        + np.sum(np.sin(np.tensordot(x, _B243, axes=([0, 2], [0, 1]))))
        + np.tensordot(x, x, axes=3) * 0.5
    )


def products(x):
    m = x[0]
    return (
        np.sum(np.sin(np.inner(m, W34)))
        + np.sum(np.outer(m, _V3) ** 2)
        + np.vdot(m, m * 2.0)
        + np.sin(np.vdot(m, W34))
        + np.sum(np.sin(np.kron(m, W34[:2, :2])))
    )


def stacked_products(x):
    return (
        np.sum(np.sin(np.matmul(x, _B243)))
        + np.sum((x @ _W43) ** 2)
        + np.sum(np.sin(np.matmul(_V3, x[:, :, :3])))
        + np.sum(np.sin(x @ np.swapaxes(x, -1, -2)))
    )


def traced_and_summed(x):
    return (
        np.sum(np.sin(np.trace(x, offset=1, axis1=1, axis2=2)))
        + np.sum(np.trace(x, 0, 0, 2) ** 2)
        + np.sin(x[0].trace(-1))
        + np.sum(np.sin(np.cumsum(x, axis=1)))
        + np.sum(np.cumsum(x) ** 2)
        + np.sum(np.sin(x.cumsum(0)))
    )


LINALG_USER_FUNCTIONS = [(contracted, rand(2, 3, 4)), (products, rand(2, 3, 4)), (stacked_products, rand(2, 3, 4)),
                         (traced_and_summed, rand(2, 3, 4))]


@pytest.mark.parametrize("f, x", LINALG_USER_FUNCTIONS, ids=[f.__name__ for f, _ in LINALG_USER_FUNCTIONS])
def test_user_function_of_linalg_rules(f, x):
    test_user_function_gradient(f, x)
    test_user_function_jvp(f, x)
    test_user_function_hessian(f, x)


def _linalg_programs(np_):
    """(name, loss of one real array written with the namespace np_, input); autograd has
    every function used here."""
    return [
        ("einsum-ellipsis", lambda x: np_.sum(np_.sin(np_.einsum("...ij,jk->...ik", x, _W43))), rand(2, 3, 4)),
        ("tensordot-pairs", lambda x: np_.sum(np_.sin(np_.tensordot(x, _B243, axes=([0, 2], [0, 1])))), rand(2, 3, 4)),
        ("inner-outer", lambda x: np_.sum(np_.sin(np_.inner(x, W34))) + np_.sum(np_.outer(x[0], _V3) ** 2), rand(3, 4)),
        ("kron", lambda x: np_.sum(np_.sin(np_.kron(x, W34[:2, :2]))), rand(3, 4)),
        ("matmul-stack", lambda x: np_.sum(np_.sin(np_.matmul(x, _B243))), rand(2, 3, 4)),
        ("trace-offset", lambda x: np_.sin(np_.trace(x, 1)) * np_.trace(x, -1), rand(3, 4)),  # autograd: 2-D, offset only
        ("cumsum-axis", lambda x: np_.sum(np_.sin(np_.cumsum(x, axis=1))), rand(2, 3, 4)),
    ]


@pytest.mark.parametrize("k", range(len(_linalg_programs(np))), ids=[p[0] for p in _linalg_programs(np)])
def test_linalg_rules_match_autograd(k):
    name, program, x = _linalg_programs(np)[k]
    theirs = autograd.grad(_linalg_programs(agnp)[k][1])(x)
    assert_close(f"autograd {name}", theirs, numerical_gradient(program, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(program)(x), theirs, rtol=1e-9, atol=1e-10)


# ----- Blocks, insertions and deletions: conventions and shapes -----


def _complex_pairing(a, b):
    """Re(sum(a * b)): the real inner product of complex numbers seen as pairs of reals,
    when one side is the conjugate-free adjoint of the other's tangent."""
    return float(np.real(np.sum(np.asarray(a) * np.conj(np.asarray(b)))))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [case_id(c) for c in CASES if case_id(c) in COMPLEX_RESULT])
def test_complex_result_tangent_is_transpose_of_adjoint(k, seed):
    case = next(c for c in CASES if case_id(c) == k)
    rng = np.random.default_rng(seed)
    y = case.primitive(*case.args, **case.kwargs)
    dy = rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)
    t = rng.standard_normal(np.shape(case.args[0]))
    (d_x,) = REGISTRY.adjoint_rule(case.primitive)(dy, y, *case.args, **case.kwargs)[:1]
    t_y = REGISTRY.tangent_rule(case.primitive)((t,) + (None,) * (len(case.args) - 1), y, *case.args, **case.kwargs)
    assert d_x.dtype == np.float64 and t_y.dtype == y.dtype  # a real input's adjoint is real
    left = float(np.sum(d_x * t))
    assert left != 0.0
    assert abs(left - _complex_pairing(t_y, dy)) <= 1e-12 * max(1.0, abs(left))


@pytest.mark.parametrize("primitive, args, kwargs", [c[:3] for c in TRIMMED], ids=[c[3] for c in TRIMMED])
def test_trim_zeros_along_the_kept_elements(primitive, args, kwargs):
    """np.trim_zeros against central differences along directions that move only nonzero
    elements (a trimmed zero moved off zero would change the result's shape)."""
    filt = np.asarray(args[0])
    rng = np.random.default_rng(4)
    y = primitive(*args, **kwargs)
    dy = rng.standard_normal(np.shape(y))
    t = np.where(filt != 0, rng.uniform(0.5, 1.5, filt.shape), 0.0)
    (d_filt,) = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    eps = 1e-6
    up, down = (np.asarray(primitive(filt + step * t, *args[1:], **kwargs)) for step in (eps, -eps))
    expected = float(np.sum(dy * (up - down))) / (2 * eps)
    assert float(np.sum(d_filt * t)) == pytest.approx(expected, rel=1e-7)
    t_arg = [float(v) for v in t] if isinstance(args[0], list) else t  # a list's tangent: one per item
    t_y = REGISTRY.tangent_rule(primitive)((t_arg,) + (None,) * (len(args) - 1), y, *args, **kwargs)
    assert type(t_y) is type(y)  # a list for a list
    np.testing.assert_allclose(np.asarray(t_y), (up - down) / (2 * eps), rtol=1e-7, atol=1e-9)
    # the trimmed zeros get no gradient; every kept element gets its own
    assert np.shape(d_filt) == filt.shape
    assert np.count_nonzero(d_filt) == np.size(y)


def test_trim_zeros_of_zeros_gives_zero_gradient():
    filt = np.zeros(4)
    y = np.trim_zeros(filt)
    (d_filt,) = REGISTRY.adjoint_rule(np.trim_zeros)(np.zeros(y.shape), y, filt)
    np.testing.assert_array_equal(d_filt, np.zeros(4))


def test_block_adjoints_keep_the_nesting():
    items = [[part(2, 3), part(2, 1)], [part(1, 4)]]
    y = np.block(items)
    (d_items,) = REGISTRY.adjoint_rule(np.block)(y * 2.0, y, items)
    assert isinstance(d_items, list) and [type(d) for d in d_items] == [list, list]
    np.testing.assert_array_equal(d_items[0][1], items[0][1] * 2.0)
    np.testing.assert_array_equal(d_items[1][0], items[1][0] * 2.0)


def test_insert_routes_each_value_to_its_slot():
    # np.insert sorts the positions but keeps each value with its own position
    arr = np.array([10.0, 20.0, 30.0])
    values = np.array([1.0, 2.0, 3.0])
    y = np.insert(arr, [2, 0, 2], values)
    dy = np.arange(1.0, 7.0)
    d_arr, _, d_values = REGISTRY.adjoint_rule(np.insert)(dy, y, arr, [2, 0, 2], values)
    for v, d in zip(values, d_values, strict=True):
        assert d == dy[list(y).index(v)]
    np.testing.assert_array_equal(d_arr, dy[[list(y).index(a) for a in arr]])


def test_insert_into_an_integer_array_has_no_gradient():
    arr = np.arange(4)
    y = np.insert(arr, 1, 0.7)  # truncated to 0
    d_arr, _, d_value = REGISTRY.adjoint_rule(np.insert)(np.ones(5), y, arr, 1, 0.7)
    np.testing.assert_array_equal(d_arr, np.zeros(4))
    assert d_value == 0.0


def test_resize_adds_the_repeats():
    a = np.array([1.0, 2.0, 3.0])
    y = np.resize(a, 7)
    (d_a,) = REGISTRY.adjoint_rule(np.resize)(np.ones(7), y, a, 7)
    np.testing.assert_array_equal(d_a, [3.0, 2.0, 2.0])


def test_astype_function_matches_the_method():
    x = part(3, 2).astype(np.float32)
    dy = part(3, 2)
    y = np.astype(x, np.float64)
    (got,) = REGISTRY.adjoint_rule(np.astype)(dy, y, x, np.float64)
    (expected,) = REGISTRY.adjoint_rule(np.ndarray.astype)(dy, y, x, np.float64)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


# ----- In-place writes are refused, not differentiated wrongly -----
# (np.fill_diagonal and np.put_along_axis are read as indexed writes: tests/test_constructs.py)


def _written_in_place(x):
    y = x * 2.0
    np.put(y, np.array([0, 4]), x[:, 0] ** 2)
    return np.sum(y**2)


def _copied_into(x):
    y = x * 2.0
    np.copyto(y, x[0, 0] ** 2, where=x > 0)
    return np.sum(y**2)


@pytest.mark.parametrize("f", [_written_in_place, _copied_into])
def test_in_place_writes_are_refused(f):
    with pytest.raises(ssad.SsadError, match="writes into its argument in place.*np.where"):
        ssad.grad(f)(part(2, 3))
    with pytest.raises(ssad.SsadError, match="writes into its argument in place"):
        ssad.jvp(f, (part(2, 3),), (part(2, 3),))
