"""Numerical checks of the reduction, scan and sort rules (ssad/rules/reductions.py)."""

import numpy as np
import pytest

import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.testing import check_rule, check_tangent

from .cases import Case, case_id

rng = np.random.default_rng(20240611)

# Distinct values (no ties for max/min, no zeros for prod/cumprod) away from kinks.
V = rng.uniform(0.5, 1.5, size=5) * rng.choice([-1.0, 1.0], size=5)
M = rng.uniform(0.5, 1.5, size=(3, 4)) * rng.choice([-1.0, 1.0], size=(3, 4))
T = rng.uniform(0.5, 1.5, size=(2, 3, 4)) * rng.choice([-1.0, 1.0], size=(2, 3, 4))
M_ZERO = np.array([[0.7, 0.0, -1.2, 1.1], [0.9, 1.3, 0.0, 0.0], [0.6, -0.8, 1.4, 1.05]])
V_ZERO = np.array([1.3, -0.7, 0.0, 1.1, 0.0, 0.9])

CASES = []


# axis (and keepdims, and ddof) passed positionally: the function and the unbound method
# take the same positional arguments, e.g. np.sum(a, axis, dtype, out, keepdims).
POSITIONAL = {
    "sum": (T, 1, None, None, True),
    "mean": (T, (0, 2), None, None, True),
    "prod": (T, -1, None, None, True),
    "max": (T, 1, None, True),
    "min": (T, (0, -1), None, True),
    "var": (T, 2, None, None, 1, True),
    "std": (T, -2, None, None, 1, True),
}


def _reduction_cases(primitive, name, method=False):
    """The axis/keepdims matrix every reduction is checked on."""
    base = name.split(".")[-1].replace("amax", "max").replace("amin", "min")
    calls = [
        ((T,), {}, "all"),
        ((M,), {"axis": 1}, "axis1"),
        ((T,), {"axis": -1}, "axis-neg"),
        ((T,), {"axis": (0, 2)}, "axis-tuple"),
        ((T,), {"axis": (-1, 0)}, "axis-tuple-neg"),
        ((T,), {"axis": 1, "keepdims": True}, "keepdims"),
        ((T,), {"keepdims": True}, "all-keepdims"),
        ((M,), {"axis": (0, 1)}, "axis-every"),
        ((V,), {}, "vector"),
        ((T, -2), {}, "positional-axis"),
        (POSITIONAL[base], {}, "positional-keepdims"),
    ]
    if not method and base != "std":  # std has no derivative at a single value
        calls.append(((1.3,), {}, "python-float"))
    for args, kwargs, tag in calls:
        CASES.append(Case(primitive, args, kwargs, id=f"{name}-{tag}"))


for _primitive, _name in [
    (np.sum, "sum"), (np.mean, "mean"), (np.prod, "prod"), (np.max, "max"), (np.min, "min"),
    (np.amax, "amax"), (np.amin, "amin"), (np.var, "var"), (np.std, "std"),
    (np.ndarray.sum, "ndarray.sum"), (np.ndarray.mean, "ndarray.mean"),
    (np.ndarray.prod, "ndarray.prod"), (np.ndarray.max, "ndarray.max"),
    (np.ndarray.min, "ndarray.min"), (np.ndarray.var, "ndarray.var"),
    (np.ndarray.std, "ndarray.std"),
]:
    _reduction_cases(_primitive, _name, method=_name.startswith("ndarray."))

CASES += [
    # ddof, by keyword and by position
    Case(np.var, (T,), {"axis": 1, "ddof": 1}, id="var-ddof"),
    Case(np.std, (T,), {"axis": (0, 2), "ddof": 1, "keepdims": True}, id="std-ddof-keepdims"),
    Case(np.std, (M, None, None, None, 2), {}, id="std-ddof-positional"),
    Case(np.ndarray.var, (M, 0, None, None, 1), {}, id="ndarray.var-ddof-positional"),
    Case(np.ndarray.std, (M,), {"ddof": 1}, id="ndarray.std-ddof"),
    # sum and mean with a mask, where= (broadcast against the array, or a whole slice masked out of a sum)
    Case(np.sum, (T,), {"where": T > 0}, id="sum-where"),
    Case(np.sum, (T,), {"axis": 1, "where": np.array([True, False, True, True]), "keepdims": True}, id="sum-where-row"),
    Case(np.ndarray.sum, (M,), {"axis": 0, "where": np.array([[True], [False], [True]])}, id="ndarray.sum-where"),
    Case(np.mean, (T,), {"where": T > -0.9}, id="mean-where"),
    Case(np.mean, (T,), {"axis": (0, 2), "where": T < 1.2}, id="mean-where-axes"),
    Case(np.ndarray.mean, (M,), {"axis": 1, "keepdims": True, "where": np.array([True, True, False, True])},
         id="ndarray.mean-where"),
    # max/min with initial
    Case(np.max, (M,), {"axis": 0, "initial": -5.0}, id="max-initial"),
    Case(np.ndarray.min, (M,), {"axis": 0, "initial": -0.9}, id="ndarray.min-initial-wins-somewhere"),
    # prod with zeros: one zero in a slice, two zeros in a slice, a zero in the whole array
    Case(np.prod, (M_ZERO,), {"axis": 1}, id="prod-zeros-axis1"),
    Case(np.prod, (M_ZERO,), {"axis": 0}, id="prod-zeros-axis0"),
    Case(np.prod, (V_ZERO,), {}, id="prod-two-zeros"),
    Case(np.prod, (M_ZERO,), {"axis": (0, 1), "keepdims": True}, id="prod-zeros-tuple"),
    # ptp
    Case(np.ptp, (T,), {}, id="ptp"),
    Case(np.ptp, (T,), {"axis": -2}, id="ptp-axis"),
    Case(np.ptp, (T, (0, 2), None, True), {}, id="ptp-positional-keepdims"),
    # scans
    Case(np.cumsum, (T,), {}, id="cumsum-flat"),
    Case(np.cumsum, (T,), {"axis": 1}, id="cumsum-axis1"),
    Case(np.cumsum, (T, -1), {}, id="cumsum-positional-neg"),
    Case(np.ndarray.cumsum, (M, 0), {}, id="ndarray.cumsum"),
    Case(np.ndarray.cumsum, (M,), {}, id="ndarray.cumsum-flat"),
    Case(np.cumprod, (T,), {}, id="cumprod-flat"),
    Case(np.cumprod, (T,), {"axis": 1}, id="cumprod-axis1"),
    Case(np.cumprod, (T, -1), {}, id="cumprod-positional-neg"),
    Case(np.cumprod, (M_ZERO,), {"axis": 1}, id="cumprod-zeros"),
    Case(np.cumprod, (M_ZERO,), {"axis": 0}, id="cumprod-zeros-axis0"),
    Case(np.cumprod, (V_ZERO,), {}, id="cumprod-two-zeros"),
    Case(np.ndarray.cumprod, (M, 1), {}, id="ndarray.cumprod"),
    Case(np.ndarray.cumprod, (M_ZERO,), {}, id="ndarray.cumprod-zeros-flat"),
    # sorting
    Case(np.sort, (M,), {}, id="sort"),
    Case(np.sort, (T, 1), {}, id="sort-axis1"),
    Case(np.sort, (T,), {"axis": None}, id="sort-flat"),
    Case(np.sort, (V,), {"kind": "stable"}, id="sort-vector"),
    # NumPy 2's cumulative_sum and cumulative_prod: keyword-only axis and include_initial
    Case(np.cumulative_sum, (M,), {"axis": 1, "include_initial": True}, id="cumulative_sum"),
    Case(np.cumulative_sum, (V,), {}, id="cumulative_sum-1d"),
    Case(np.cumulative_sum, (T,), {"axis": -2}, id="cumulative_sum-negative-axis"),
    Case(np.cumulative_prod, (M,), {"axis": 0, "include_initial": True}, id="cumulative_prod"),
    Case(np.cumulative_prod, (V,), {}, id="cumulative_prod-1d"),
    Case(np.cumulative_prod, (M_ZERO,), {"axis": 1}, id="cumulative_prod-zeros"),
    Case(np.cumulative_prod, (V_ZERO,), {"include_initial": True}, id="cumulative_prod-two-zeros-initial"),
]

NONDIFFERENTIABLE = [
    np.argmax,
    np.argmin,
    np.argsort,
    np.count_nonzero,
    np.any,
    np.all,
    np.nonzero,
    np.flatnonzero,
    np.argwhere,
    np.searchsorted,
    np.ndarray.argmax,
    np.ndarray.argmin,
    np.ndarray.argsort,
    np.ndarray.any,
    np.ndarray.all,
    np.ndarray.nonzero,
    np.ndarray.searchsorted,
    np.nanargmax,
    np.nanargmin,
    np.argpartition,
    np.ndarray.argpartition,
    np.lexsort,
    np.digitize,
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE, ids=lambda p: p.__name__)
def test_nondifferentiable(primitive):
    assert REGISTRY.is_nondifferentiable(primitive)
    assert REGISTRY.adjoint_rule(primitive) is None


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import reductions

    primitives = REGISTRY.adjoint_primitives()
    rules = {p for p in primitives if REGISTRY.adjoint_rule(p).__module__ == reductions.__name__}
    assert rules == {case.primitive for case in CASES}


# ----- Exact values at kinks -----


def test_max_ties_split_evenly():
    rule = REGISTRY.adjoint_rule(np.max)
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])
    (dx,) = rule(np.array([6.0, 3.0]), np.max(x, axis=1), x, axis=1)
    np.testing.assert_array_equal(dx, [[0.0, 3.0, 3.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    (dx,) = rule(2.0, np.max(x), x)
    np.testing.assert_array_equal(dx, [[0.0, 0.0, 0.0, 0.0], [2 / 3, 2 / 3, 2 / 3, 0.0]])


def test_min_ties_split_evenly_with_keepdims():
    rule = REGISTRY.adjoint_rule(np.ndarray.min)
    x = np.array([[1.0, 2.0], [4.0, 2.0], [1.0, 3.0]])
    y = x.min(0, keepdims=True)
    (dx,) = rule(np.array([[3.0, 4.0]]), y, x, 0, None, True)
    np.testing.assert_array_equal(dx, [[1.5, 2.0], [0.0, 2.0], [1.5, 0.0]])


def test_ptp_of_a_constant_slice_has_zero_gradient():
    rule = REGISTRY.adjoint_rule(np.ptp)
    x = np.array([[2.0, 2.0], [1.0, 3.0]])
    (dx,) = rule(np.array([1.0, 1.0]), np.ptp(x, axis=1), x, axis=1)
    np.testing.assert_array_equal(dx, [[0.0, 0.0], [-1.0, 1.0]])


def test_prod_with_one_zero():
    rule = REGISTRY.adjoint_rule(np.prod)
    x = np.array([2.0, 0.0, 3.0, -1.5])
    (dx,) = rule(2.0, np.prod(x), x)
    np.testing.assert_array_equal(dx, [0.0, 2.0 * 2.0 * 3.0 * -1.5, 0.0, 0.0])


def test_prod_with_two_zeros():
    rule = REGISTRY.adjoint_rule(np.prod)
    x = np.array([[2.0, 0.0, 3.0, 0.0], [1.0, 2.0, 0.0, 4.0]])
    (dx,) = rule(np.array([1.0, 0.5]), np.prod(x, axis=1), x, axis=1)
    np.testing.assert_array_equal(dx, [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 0.0]])


def test_cumprod_with_zeros():
    rule = REGISTRY.adjoint_rule(np.cumprod)
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    dy = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    (dx,) = rule(dy, np.cumprod(x), x)
    # y = [x0, x0 x1, x0 x1 x2, ...]; at x1 = x3 = 0 only the terms without a second zero survive
    np.testing.assert_array_equal(dx, [1.0, 10.0 * 2 + 100.0 * 2 * 3, 0.0, 0.0, 0.0])


def test_std_and_var_ddof():
    x = np.array([1.0, 2.0, 4.0])
    (dx,) = REGISTRY.adjoint_rule(np.var)(1.0, np.var(x, ddof=1), x, ddof=1)
    np.testing.assert_allclose(dx, 2 * (x - x.mean()) / 2, rtol=1e-15)
    (dx,) = REGISTRY.adjoint_rule(np.std)(1.0, np.std(x), x)
    np.testing.assert_allclose(dx, (x - x.mean()) / (3 * np.std(x)), rtol=1e-15)


def test_sort_routes_gradient_back():
    x = np.array([3.0, 1.0, 2.0])
    (dx,) = REGISTRY.adjoint_rule(np.sort)(np.array([10.0, 20.0, 30.0]), np.sort(x), x)
    np.testing.assert_array_equal(dx, [30.0, 10.0, 20.0])


# ----- Shapes and dtypes -----


@pytest.mark.parametrize("primitive", [np.sum, np.mean, np.prod, np.max, np.var, np.std])
def test_float32_stays_float32(primitive):
    x = np.linspace(0.5, 1.5, 6, dtype=np.float32).reshape(2, 3)
    # the seed of a float32 output is a float32 one; it must not be promoted
    (dx,) = REGISTRY.adjoint_rule(primitive)(np.float32(1.0), primitive(x), x)
    assert dx.dtype == np.float32 and dx.shape == x.shape
    for kwargs in ({"axis": 1}, {"axis": 0, "keepdims": True}):
        y = primitive(x, **kwargs)
        (dx,) = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, **kwargs)
        assert dx.dtype == np.float32 and dx.shape == x.shape


def test_integer_input_gives_float_adjoint():
    x = np.arange(6).reshape(2, 3)
    (dx,) = REGISTRY.adjoint_rule(np.sum)(1.0, np.sum(x, axis=0), x, axis=0)
    assert dx.dtype == np.float64
    np.testing.assert_array_equal(dx, np.ones((2, 3)))


# ===== Tangent (forward-mode) rules =====


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_every_adjoint_rule_of_the_module_has_a_tangent_rule():
    from ssad.rules import reductions

    primitives = [
        p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == reductions.__name__
    ]
    assert primitives
    missing = [primitive_name(p) for p in primitives if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


# ----- Exact tangents at kinks -----


def test_max_tangent_at_ties_is_the_mean_of_the_tied_tangents():
    rule = REGISTRY.tangent_rule(np.max)
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])
    t = np.array([[10.0, 20.0, 40.0, 80.0], [1.0, 2.0, 6.0, 100.0]])
    np.testing.assert_array_equal(rule((t,), np.max(x, axis=1), x, axis=1), [30.0, 3.0])
    np.testing.assert_array_equal(rule((t,), np.max(x), x), 3.0)
    np.testing.assert_array_equal(rule((t,), np.max(x, 1, keepdims=True), x, 1, None, True), [[30.0], [3.0]])


def test_min_tangent_at_ties_with_keepdims():
    rule = REGISTRY.tangent_rule(np.ndarray.min)
    x = np.array([[1.0, 2.0], [4.0, 2.0], [1.0, 3.0]])
    t = np.array([[3.0, 4.0], [5.0, 8.0], [6.0, 7.0]])
    np.testing.assert_array_equal(rule((t,), x.min(0, keepdims=True), x, 0, None, True), [[4.5, 6.0]])


def test_max_tangent_where_initial_wins_is_zero():
    rule = REGISTRY.tangent_rule(np.max)
    x = np.array([[1.0, -3.0], [2.0, -4.0]])
    y = np.max(x, axis=0, initial=0.0)
    np.testing.assert_array_equal(rule((np.ones_like(x),), y, x, axis=0, initial=0.0), [1.0, 0.0])


def test_ptp_tangent_of_a_constant_slice_is_zero():
    rule = REGISTRY.tangent_rule(np.ptp)
    x = np.array([[2.0, 2.0], [1.0, 3.0]])
    t = np.array([[5.0, 7.0], [1.0, 10.0]])
    np.testing.assert_array_equal(rule((t,), np.ptp(x, axis=1), x, axis=1), [0.0, 9.0])


def test_prod_tangent_with_one_zero():
    rule = REGISTRY.tangent_rule(np.prod)
    x = np.array([2.0, 0.0, 3.0, -1.5])
    t = np.array([1.0, 2.0, 3.0, 4.0])
    # only the term that differentiates the zero survives: t1 * 2 * 3 * -1.5
    assert rule((t,), np.prod(x), x) == 2.0 * 2.0 * 3.0 * -1.5


def test_prod_tangent_with_two_zeros():
    rule = REGISTRY.tangent_rule(np.ndarray.prod)
    x = np.array([[2.0, 0.0, 3.0, 0.0], [1.0, 2.0, 0.0, 4.0]])
    t = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    got = rule((t,), x.prod(1), x, 1)
    np.testing.assert_array_equal(got, [0.0, 7.0 * 1.0 * 2.0 * 4.0])
    assert np.all(np.isfinite(got))


def test_cumprod_tangent_with_zeros():
    rule = REGISTRY.tangent_rule(np.cumprod)
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    t = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    # d(x0) = t0; d(x0 x1) = x0 t1; d(x0 x1 x2) = x0 t1 x2; after the second zero every term vanishes
    np.testing.assert_array_equal(rule((t,), np.cumprod(x), x), [1.0, 20.0, 60.0, 0.0, 0.0])


def test_sort_tangent_follows_the_elements():
    x = np.array([3.0, 1.0, 2.0])
    t = np.array([30.0, 10.0, 20.0])
    np.testing.assert_array_equal(REGISTRY.tangent_rule(np.sort)((t,), np.sort(x), x), [10.0, 20.0, 30.0])


def test_std_tangent_uses_the_result():
    x = np.array([1.0, 2.0, 4.0])
    t = np.array([0.5, -1.0, 2.0])
    y = np.std(x, ddof=1)
    got = REGISTRY.tangent_rule(np.std)((t,), y, x, ddof=1)
    np.testing.assert_allclose(got, np.sum((x - x.mean()) * t) / (2 * y), rtol=1e-15)


# ----- The tangent is the transpose of the adjoint -----


def _random(shape, rng):
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _with_ties(shape, rng):
    """Small integers: many ties for extrema and sorting."""
    return rng.integers(-2, 3, size=shape).astype(np.float64)


def _with_zeros(shape, rng):
    x = _random(shape, rng)
    x[rng.uniform(size=shape) < 0.3] = 0.0
    return x


def assert_tangent_transposes_adjoint(primitive, args, kwargs, rng):
    """<adjoint(dy), t> == <dy, tangent(t)> for random dy and random tangents t of the
    arguments the adjoint rule differentiates."""
    y = primitive(*args, **kwargs)
    dy = _random(np.shape(y), rng)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    tangents = tuple(
        _random(np.shape(arg), rng) if i < len(adjoints) and adjoints[i] is not None else None
        for i, arg in enumerate(args)
    )
    d_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    assert np.shape(d_y) == np.shape(y)
    forward = float(np.sum(dy * d_y))
    backward = sum(float(np.sum(adjoints[i] * t)) for i, t in enumerate(tangents) if t is not None)
    np.testing.assert_allclose(forward, backward, rtol=1e-12, atol=1e-12)


TRANSPOSE_CASES = [
    (np.max, lambda rng: (_with_ties((3, 4, 5), rng),), {"axis": 1}, "max-ties"),
    (np.amax, lambda rng: (_with_ties((4, 5), rng),), {"axis": 0, "initial": 1.0}, "amax-ties-initial"),
    (np.ndarray.min, lambda rng: (_with_ties((3, 4, 5), rng), (0, -1), None, True), {}, "ndarray.min-ties-keepdims"),
    (np.min, lambda rng: (_with_ties((6,), rng),), {}, "min-ties-all"),
    (np.ptp, lambda rng: (_with_ties((3, 4, 5), rng),), {"axis": -2}, "ptp-ties"),
    (np.prod, lambda rng: (_with_zeros((3, 4, 5), rng),), {"axis": 1}, "prod-zeros"),
    (np.ndarray.prod, lambda rng: (_with_zeros((3, 4), rng), None, None, None, True), {}, "ndarray.prod-zeros-all"),
    (np.cumprod, lambda rng: (_with_zeros((4, 6), rng),), {}, "cumprod-zeros-flat"),
    (np.ndarray.cumprod, lambda rng: (_with_zeros((6, 4), rng), 0), {}, "ndarray.cumprod-zeros-axis0"),
    (np.sort, lambda rng: (_with_ties((4, 6), rng),), {"axis": None}, "sort-ties-flat"),
    (np.sort, lambda rng: (_with_ties((4, 6), rng), 0), {}, "sort-ties-axis0"),
    (np.std, lambda rng: (_random((3, 4, 5), rng),), {"axis": (0, 2), "ddof": 1}, "std"),
    (np.ndarray.var, lambda rng: (_random((3, 4), rng), 1, None, None, 1, True), {}, "ndarray.var"),
    (np.mean, lambda rng: (_random((3, 4, 5), rng),), {"axis": (-1, 0)}, "mean"),
    (np.sum, lambda rng: (_random((3, 4, 5), rng),), {"axis": 2, "keepdims": True}, "sum"),
    (np.cumsum, lambda rng: (_random((3, 4, 5), rng),), {"axis": 1}, "cumsum"),
    (np.ndarray.cumsum, lambda rng: (_random((3, 4), rng),), {}, "ndarray.cumsum-flat"),
    (np.cumulative_sum, lambda rng: (_random((3, 4, 5), rng),), {"axis": 1, "include_initial": True}, "cumulative_sum"),
    (np.cumulative_prod, lambda rng: (_with_zeros((4, 6), rng),), {"axis": -1, "include_initial": True},
     "cumulative_prod-zeros"),
    (np.cumulative_prod, lambda rng: (_with_zeros((7,), rng),), {}, "cumulative_prod-zeros-1d"),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("primitive, make_args, kwargs, tag", TRANSPOSE_CASES, ids=[c[-1] for c in TRANSPOSE_CASES])
def test_tangent_is_the_transpose_of_the_adjoint(primitive, make_args, kwargs, tag, seed):
    rng = np.random.default_rng(seed)
    assert_tangent_transposes_adjoint(primitive, make_args(rng), kwargs, rng)


def test_transpose_cases_have_ties_and_zeros():
    rng = np.random.default_rng(0)
    x = _with_ties((3, 4, 5), rng)
    assert np.any(np.sum(x == np.max(x, axis=1, keepdims=True), axis=1) > 1)
    assert np.any(_with_zeros((3, 4, 5), rng) == 0)


# ----- NumPy 2's cumulative_sum and cumulative_prod: as cumsum and cumprod, with include_initial -----


def test_cumulative_sum_matches_cumsum():
    dy = rng.standard_normal((3, 5))
    y = np.cumulative_sum(M, axis=1, include_initial=True)
    (got,) = REGISTRY.adjoint_rule(np.cumulative_sum)(dy, y, M, axis=1, include_initial=True)
    # the initial 0 is a constant: its adjoint dy[:, 0] reaches no element
    (expected,) = REGISTRY.adjoint_rule(np.cumsum)(dy[:, 1:], np.cumsum(M, 1), M, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-15)


def test_cumulative_prod_with_zeros_and_initial():
    dy = rng.standard_normal(7)
    y = np.cumulative_prod(V_ZERO, include_initial=True)
    (got,) = REGISTRY.adjoint_rule(np.cumulative_prod)(dy, y, V_ZERO, include_initial=True)
    (expected,) = REGISTRY.adjoint_rule(np.cumprod)(dy[1:], np.cumprod(V_ZERO), V_ZERO)
    np.testing.assert_allclose(got, expected, rtol=1e-15)
    assert np.all(np.isfinite(got))
    t = rng.standard_normal(6)
    tangent = REGISTRY.tangent_rule(np.cumulative_prod)((t,), y, V_ZERO, include_initial=True)
    assert tangent[0] == 0.0  # the initial 1 does not move
    np.testing.assert_allclose(tangent[1:], REGISTRY.tangent_rule(np.cumprod)((t,), y[1:], V_ZERO), rtol=1e-15)


def cumulative(x):
    return (
        np.sum(np.sin(np.cumulative_sum(x, axis=1, include_initial=True)) * np.arange(15.0).reshape(3, 5))
        + np.sum(np.cumulative_prod(x, axis=0) ** 2)
        + np.sum(np.cumulative_prod(x[0], include_initial=True))
    )


def test_cumulative_user_function_gradient_jvp_hessian():
    import ssad
    from ssad.testing import assert_close, numerical_gradient

    x = M
    assert_close("cumulative gradient", ssad.grad(cumulative)(x), numerical_gradient(cumulative, x), rtol=1e-6, atol=1e-7)
    v = rng.uniform(0.5, 1.5, x.shape) * rng.choice([-1.0, 1.0], x.shape)
    value, slope = ssad.jvp(cumulative, (x,), (v,))
    assert value == pytest.approx(cumulative(x), rel=1e-12)
    eps = 1e-6
    expected = (cumulative(x + eps * v) - cumulative(x - eps * v)) / (2 * eps)
    assert_close("cumulative jvp", slope, expected, rtol=1e-6, atol=1e-7)
    hessian = ssad.hessian(cumulative)(x)
    gradient = ssad.grad(cumulative)
    step = 1e-5
    columns = [(gradient(x + e) - gradient(x - e)) / (2 * step) for e in np.reshape(np.eye(x.size) * step, (x.size,) + x.shape)]
    assert_close("cumulative hessian", hessian, np.reshape(np.array(columns), x.shape * 2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "case",
    [
        Case(np.cumulative_sum, (T,), {"axis": 2, "include_initial": True}, id="cumulative_sum-initial"),
        Case(np.cumulative_prod, (M_ZERO,), {"axis": 1, "include_initial": True}, id="cumulative_prod-zeros-initial"),
    ],
    ids=case_id,
)
def test_cumulative_second_order(case):
    from ssad.testing import check_second_order

    check_second_order(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("primitive", [np.nanargmax, np.nanargmin, np.argpartition, np.digitize])
def test_index_results_carry_no_derivative(primitive):
    # registered non-differentiable: their results are integer positions
    args = {np.argpartition: (V, 2), np.digitize: (V, np.array([-1.0, 0.0, 1.0]))}.get(primitive, (V,))
    assert np.issubdtype(np.asarray(primitive(*args)).dtype, np.integer)
