"""Numerical checks of the rules (adjoint and tangent) for builtins, math and operator, and of their conventions."""

import math
import operator
import warnings

import numpy as np
import pytest

import ssad.rules  # noqa: F401  (registers the rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.testing import check_rule, check_tangent, numerical_gradient

from .cases import Case, Samples, assert_transpose, case_id
from .test_elementwise import is_inlinable

samples = Samples(7261)
rng = samples.rng
uniform, away_from_zero = samples.uniform, samples.away_from_zero


def rule(primitive):
    return REGISTRY.adjoint_rule(primitive)


# (math function, low, high): Python float inputs inside the domain.
MATH_UNARY = [
    (math.sin, -3, 3),
    (math.cos, -3, 3),
    (math.tan, -1.2, 1.2),
    (math.asin, -0.9, 0.9),
    (math.acos, -0.9, 0.9),
    (math.atan, -3, 3),
    (math.sinh, -2, 2),
    (math.cosh, -2, 2),
    (math.tanh, -2, 2),
    (math.exp, -2, 2),
    (math.expm1, -2, 2),
    (math.log, 0.1, 3),
    (math.log1p, -0.9, 3),
    (math.log2, 0.1, 3),
    (math.log10, 0.1, 3),
    (math.sqrt, 0.1, 3),
    (math.erf, -2, 2),
]


def _mod_operands(shape):
    """a and b > 0 with a / b at least 0.1 away from an integer (the jumps of a % b)."""
    b = uniform(0.8, 2, shape)
    a = (rng.integers(-3, 3, size=shape) + uniform(0.1, 0.9, shape)) * b
    return a, b


_mod_a, _mod_b = _mod_operands((3, 4))

CASES = [Case(f, (uniform(lo, hi),), id=f"math.{f.__name__}") for f, lo, hi in MATH_UNARY]
CASES += [
    # math
    Case(math.sin, (np.float64(0.3),), id="math.sin-numpy-scalar"),
    Case(math.fabs, (away_from_zero(0.1, 3),), id="math.fabs"),
    Case(math.log, (uniform(0.1, 3), uniform(1.5, 4)), id="math.log-base"),
    Case(math.log, (uniform(0.1, 3), uniform(0.2, 0.8)), id="math.log-base-below-1"),
    Case(math.pow, (uniform(0.5, 2), uniform(-2, 2)), id="math.pow"),
    Case(math.pow, (-1.5, 3), id="math.pow-negative-base"),
    Case(math.atan2, (uniform(-3, 3), away_from_zero(0.5, 3)), id="math.atan2"),
    Case(math.atan2, (away_from_zero(0.5, 3), -1.0), id="math.atan2-left-half-plane"),
    Case(math.hypot, (uniform(-3, 3), away_from_zero(0.5, 3)), id="math.hypot-2"),
    Case(math.hypot, (uniform(-3, 3), uniform(-3, 3), away_from_zero(0.5, 3)), id="math.hypot-3"),
    # builtins
    Case(abs, (away_from_zero(0.1, 3),), id="abs-float"),
    Case(abs, (away_from_zero(0.1, 3, (3, 4)),), id="abs-array"),
    Case(pow, (uniform(0.5, 2), uniform(-2, 2)), id="pow-float"),
    Case(pow, (uniform(0.5, 2, (3, 4)), uniform(-2, 2, (4,))), id="pow-array"),
    Case(pow, (uniform(0.5, 2),), {"exp": 2.5}, id="pow-exp-keyword"),
    Case(float, (np.float64(2.5),), id="float-numpy-scalar"),
    Case(float, (np.array(-1.25),), id="float-0d-array"),
    Case(float, (0.75,), id="float-float"),
    # scalar types called as functions: casts (float32 and float16 in closed form below)
    Case(np.float64, (0.75,), id="np.float64-float"),
    Case(np.float64, (uniform(-3, 3, (3,)),), id="np.float64-array"),
    Case(np.complex128, (0.75,), id="np.complex128-float"),
    Case(np.complex128, (0.75 - 0.5j,), id="np.complex128-complex"),
    Case(complex, (uniform(-3, 3), uniform(-3, 3)), id="complex-real-imag"),
    Case(complex, (uniform(-3, 3),), id="complex-real"),
    Case(complex, (0.5 + 0.25j, 1.0 - 2j), id="complex-of-complex-parts"),
    Case(max, (1.3, 2.7, -0.4), id="max-3"),
    Case(max, (uniform(-3, 3), uniform(-3, 3)), id="max-2"),
    Case(min, (1.3, 2.7, -0.4), id="min-3"),
    Case(min, (np.float64(0.5), -1.5), id="min-numpy-scalar"),
    Case(sum, ([1.0, 2.0, 3.0], 0.5), id="sum-start"),
    Case(sum, ((uniform(-3, 3, (3,)), uniform(-3, 3, (3,))), uniform(-3, 3, (3,))), id="sum-arrays-start"),
    # operators, on floats and on broadcasting arrays
    Case(operator.add, (uniform(-3, 3), uniform(-3, 3)), id="add-float"),
    Case(operator.add, (uniform(-3, 3, (3, 4)), uniform(-3, 3, (4,))), id="add-array"),
    Case(operator.add, (uniform(-3, 3, (3, 1)), uniform(-3, 3)), id="add-array-float"),
    Case(operator.sub, (uniform(-3, 3), uniform(-3, 3)), id="sub-float"),
    Case(operator.sub, (uniform(-3, 3, (3, 1)), uniform(-3, 3, (1, 4))), id="sub-array"),
    Case(operator.mul, (uniform(-3, 3), uniform(-3, 3)), id="mul-float"),
    Case(operator.mul, (uniform(-3, 3, (3, 4)), uniform(-3, 3, (4,))), id="mul-array"),
    Case(operator.mul, (uniform(-3, 3), uniform(-3, 3, (2, 3))), id="mul-float-array"),
    Case(operator.truediv, (uniform(-3, 3), away_from_zero(0.5, 2)), id="truediv-float"),
    Case(operator.truediv, (uniform(-3, 3, (3, 4)), away_from_zero(0.5, 2, (3, 1))), id="truediv-array"),
    Case(operator.truediv, (uniform(-3, 3, (4,)), away_from_zero(0.5, 2)), id="truediv-array-float"),
    Case(operator.pow, (uniform(0.5, 2), uniform(-2, 2)), id="pow-operator-float"),
    Case(operator.pow, (uniform(0.5, 2, (3, 4)), uniform(-2, 2, (3, 1))), id="pow-operator-array"),
    Case(operator.pow, (uniform(-2, 2, (3, 4)), 2), id="pow-operator-square"),
    Case(operator.pow, (uniform(-2, -0.5), 3), id="pow-operator-negative-base"),
    Case(operator.pow, (2.0, uniform(-2, 2, (4,))), id="pow-operator-constant-base"),
    Case(operator.mod, (5.3, 1.7), id="mod-float"),
    Case(operator.mod, (-5.3, 1.7), id="mod-negative"),
    Case(operator.mod, (_mod_a, _mod_b), id="mod-array"),
    Case(operator.mod, (_mod_a, 1.3), id="mod-array-float"),
    Case(operator.neg, (uniform(-3, 3),), id="neg-float"),
    Case(operator.neg, (uniform(-3, 3, (3, 4)),), id="neg-array"),
    Case(operator.pos, (uniform(-3, 3, (3, 4)),), id="pos-array"),
    Case(operator.abs, (away_from_zero(0.1, 3, (3, 4)),), id="abs-operator"),
    Case(operator.matmul, (uniform(-1, 1, (3, 4)), uniform(-1, 1, (4, 2))), id="matmul-matrix-matrix"),
    Case(operator.matmul, (uniform(-1, 1, (4,)), uniform(-1, 1, (4, 2))), id="matmul-vector-matrix"),
    Case(operator.matmul, (uniform(-1, 1, (3, 4)), uniform(-1, 1, (4,))), id="matmul-matrix-vector"),
    Case(operator.matmul, (uniform(-1, 1, (4,)), uniform(-1, 1, (4,))), id="matmul-vector-vector"),
    Case(operator.matmul, (uniform(-1, 1, (2, 3, 4)), uniform(-1, 1, (4, 2))), id="matmul-batch-matrix"),
    Case(operator.matmul, (uniform(-1, 1, (2, 1, 3, 4)), uniform(-1, 1, (3, 4, 2))), id="matmul-batch-bcast"),
    Case(operator.matmul, (uniform(-1, 1, (4,)), uniform(-1, 1, (2, 4, 3))), id="matmul-vector-batch"),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


def test_every_rule_of_the_module_is_checked():
    ours = {p for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.scalar"}
    checked = {case.primitive for case in CASES} | set(LOW_PRECISION_CASTS)
    missing = [p for p in ours if p not in checked]
    assert not missing, f"rules without a numerical check: {missing}"


NONDIFFERENTIABLE = [
    operator.floordiv,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.not_,
    operator.truth,
    operator.is_,
    operator.is_not,
    operator.contains,
    int,
    bool,
    round,
    len,
    range,
    isinstance,
    math.floor,
    math.ceil,
    math.trunc,
]


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE, ids=lambda p: p.__name__)
def test_nondifferentiable(primitive):
    assert REGISTRY.is_nondifferentiable(primitive)
    assert REGISTRY.adjoint_rule(primitive) is None


# ----- Containers: max/min over a list, sum -----


def _list_gradient(f, items):
    """Central differences of f(list) with respect to each item."""
    grads = []
    for i in range(len(items)):

        def moved(value, i=i):
            return f(items[:i] + [value] + items[i + 1 :])

        grads.append(numerical_gradient(moved, items[i]))
    return grads


def test_max_and_min_of_a_list_match_finite_differences():
    items = [0.3, -1.2, 2.5, 1.1]
    for primitive in (max, min):
        (d_items,) = rule(primitive)(3.0, primitive(items), items)
        assert type(d_items) is list
        expected = _list_gradient(lambda xs, p=primitive: 3.0 * p(xs), items)
        np.testing.assert_allclose(d_items, expected, rtol=1e-6, atol=1e-9)


def test_max_of_a_tuple_and_of_an_array():
    (d_items,) = rule(max)(2.0, 5.0, (1.0, 5.0, 3.0))
    assert d_items == (0.0, 2.0, 0.0)
    values = np.array([1.0, 5.0, 3.0])
    (d_values,) = rule(min)(2.0, 1.0, values)
    np.testing.assert_array_equal(d_values, [2.0, 0.0, 0.0])


def test_max_and_min_split_ties_evenly():
    assert rule(max)(1.0, 2.0, 2.0, 2.0, 1.0) == (0.5, 0.5, 0.0)
    assert rule(min)(1.0, 1.0, 2.0, 1.0) == (0.0, 1.0)
    assert rule(min)(1.0, -1.0, -1.0, 3.0, -1.0) == (0.5, 0.0, 0.5)
    (d_items,) = rule(max)(3.0, 4.0, [4.0, 4.0, 1.0, 4.0])
    assert d_items == [1.0, 1.0, 0.0, 1.0]
    # relu written with the builtin: the kink at 0 splits the gradient.
    assert rule(max)(1.0, 0.0, 0.0, 0.0) == (0.5, 0.5)


def test_max_with_key_and_default():
    items = [-3.0, 2.0]
    (d_items,) = rule(max)(1.0, max(items, key=abs), items, key=abs)
    assert d_items == [1.0, 0.0]
    (d_empty,) = rule(max)(1.0, 0.0, [], default=0.0)
    assert d_empty == []


def test_sum_of_a_list_matches_finite_differences():
    items = [0.3, -1.2, 2.5]
    d_items, d_start = rule(sum)(2.0, sum(items, 0.5), items, 0.5)
    assert type(d_items) is list
    np.testing.assert_allclose(d_items, _list_gradient(lambda xs: 2.0 * sum(xs, 0.5), items), rtol=1e-6)
    assert d_start == 2.0


def test_sum_adjoint_has_the_argument_structure():
    # (the start value's adjoint is None when no start value is passed positionally)
    assert rule(sum)(1.5, 3.0, (1.0, 2.0)) == ((1.5, 1.5), None)
    assert rule(sum)(1.5, 3.5, [1.0, 2.0], start=0.5) == ([1.5, 1.5], None)
    # A scalar item summed with arrays gets the sum of the adjoint over the array.
    d_items, _ = rule(sum)(np.array([1.0, 2.0]), None, [0.5, np.array([1.0, 1.0])])
    assert d_items[0] == 3.0
    np.testing.assert_array_equal(d_items[1], [1.0, 2.0])
    # sum(array) adds up the rows.
    rows = np.arange(6.0).reshape(3, 2)
    d_rows, _ = rule(sum)(np.array([1.0, 2.0]), sum(rows), rows)
    np.testing.assert_array_equal(d_rows, [[1.0, 2.0]] * 3)


# ----- Conventions at kinks -----


def test_abs_slope_at_zero_is_zero():
    for primitive in (abs, operator.abs, math.fabs):
        assert rule(primitive)(2.0, 0.0, 0.0) == (0.0,)
        assert rule(primitive)(2.0, 1.5, -1.5) == (-2.0,)
    x = np.array([0.0, -1.0, 2.0])
    (d_x,) = rule(abs)(np.ones(3), abs(x), x)
    np.testing.assert_array_equal(d_x, [0.0, -1.0, 1.0])


def test_pow_at_zero_base():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for primitive in (pow, operator.pow, math.pow):
            assert rule(primitive)(1.0, primitive(0.0, 0.0), 0.0, 0.0) == (0.0, 0.0)
            assert rule(primitive)(1.0, primitive(0.0, 1.0), 0.0, 1.0) == (1.0, 0.0)
            assert rule(primitive)(1.0, primitive(0.0, 2.0), 0.0, 2.0) == (0.0, 0.0)
            assert rule(primitive)(1.0, primitive(0.0, 0), 0.0, 0) == (0.0, 0.0)
        x = np.zeros(3)
        p = np.array([0.0, 1.0, 2.0])
        d_x, d_p = rule(operator.pow)(np.ones(3), x**p, x, p)
        np.testing.assert_array_equal(d_x, [0.0, 1.0, 0.0])
        np.testing.assert_array_equal(d_p, [0.0, 0.0, 0.0])


def test_pow_negative_base_has_no_exponent_slope():
    for primitive in (pow, operator.pow, math.pow):
        assert rule(primitive)(1.0, primitive(-2.0, 3.0), -2.0, 3.0) == (12.0, 0.0)


def test_builtin_pow_returns_one_adjoint_per_positional_argument():
    assert rule(pow)(1.0, 8.0, 2.0, 3.0) == (12.0, pytest.approx(8.0 * math.log(2.0)))
    assert rule(pow)(1.0, 8.0, 2.0, exp=3.0) == (12.0,)
    assert rule(pow)(1.0, 8.0, base=2.0, exp=3.0) == ()


def test_math_log_returns_one_adjoint_per_argument():
    assert rule(math.log)(1.0, math.log(2.0), 2.0) == (0.5,)
    d_x, d_base = rule(math.log)(1.0, math.log(8.0, 2.0), 8.0, 2.0)
    assert math.isclose(d_x, 1 / (8.0 * math.log(2.0)))
    assert math.isclose(d_base, -3.0 / (2.0 * math.log(2.0)))


def test_hypot_at_the_origin():
    assert rule(math.hypot)(1.0, 0.0, 0.0, 0.0) == (0.0, 0.0)
    assert rule(math.hypot)(1.0, 5.0, 3.0, 4.0) == pytest.approx((0.6, 0.8), rel=1e-15)


def test_mod_slopes():
    # 5.5 % 2.0 == 1.5 == 5.5 - 2 * 2.0; -5.5 % 2.0 == 0.5 == -5.5 - (-3) * 2.0
    assert rule(operator.mod)(1.0, 5.5 % 2.0, 5.5, 2.0) == (1.0, -2.0)
    assert rule(operator.mod)(1.0, -5.5 % 2.0, -5.5, 2.0) == (1.0, 3.0)


def test_math_rules_return_python_floats():
    for f, lo, hi in MATH_UNARY:
        x = (lo + hi) / 2 + 0.1
        (d_x,) = rule(f)(1.0, f(x), x)
        assert type(d_x) is float, f.__name__


LOW_PRECISION_CASTS = {np.float32: np.float64(0.75), np.float16: np.float32(-1.5), np.complex64: 0.75}


CHECKED_ELSEWHERE = set(LOW_PRECISION_CASTS)  # in closed form, by the test below


@pytest.mark.parametrize("cast", LOW_PRECISION_CASTS, ids=lambda p: p.__name__)
def test_low_precision_casts_pass_the_gradient_through(cast):
    """The derivative of a cast is 1 (finite differences in float32 or float16 cannot see it):
    the gradient comes back in the input's precision, the tangent goes on in the result's."""
    x = LOW_PRECISION_CASTS[cast]
    y = cast(x)
    (d_x,) = rule(cast)(np.float32(2.5), y, x)
    assert d_x == 2.5 and np.result_type(d_x) == np.result_type(x)
    t = REGISTRY.tangent_rule(cast)((0.5,), y, x)
    assert t == 0.5 and np.result_type(t) == np.result_type(y)


def test_float_passes_the_gradient_through():
    assert rule(float)(2.0, 1.0, np.float32(1.0)) == (2.0,)


# ----- Tangent (forward-mode) rules -----


def tangent_rule(primitive):
    return REGISTRY.tangent_rule(primitive)


# operator.matmul has its rules in the linear algebra module.
TANGENT_CASES = [case for case in CASES if rule(case.primitive).__module__ == "ssad.rules.scalar"]


@pytest.mark.parametrize("case", TANGENT_CASES, ids=case_id)
def test_tangent_rule(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_every_adjoint_rule_of_the_module_has_a_tangent_rule():
    ours = [p for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.scalar"]
    missing = [primitive_name(p) for p in ours if tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"
    elsewhere = [primitive_name(p) for p in ours if tangent_rule(p).__module__ != "ssad.rules.scalar"]
    assert not elsewhere, f"tangent rules registered outside the module: {elsewhere}"


# Tangent rules that read *args (as their adjoints do) and are called; every other one must be inlinable.
CALLED_TANGENT_RULES = {"hypot_tangent", "builtin_pow_tangent", "max_min_tangent", "complex_tangent"}


def test_tangent_rules_are_inlinable():
    ours = {tangent_rule(p) for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.scalar"}
    called = sorted(r.__name__ for r in ours if not is_inlinable(r))
    assert called == sorted(CALLED_TANGENT_RULES)


def test_math_tangents_are_python_floats():
    for f, lo, hi in MATH_UNARY:
        x = (lo + hi) / 2 + 0.1
        assert type(tangent_rule(f)((1.0,), f(x), x)) is float, f.__name__
    assert type(tangent_rule(math.log)((1.0, 1.0), math.log(8.0, 2.0), 8.0, 2.0)) is float
    assert type(tangent_rule(math.pow)((1.0, None), math.pow(2.0, 3), 2.0, 3)) is float


def test_abs_tangent_at_zero_is_zero():
    for primitive in (abs, operator.abs, math.fabs):
        assert tangent_rule(primitive)((2.0,), 0.0, 0.0) == 0.0
        assert tangent_rule(primitive)((2.0,), 1.5, -1.5) == -2.0
    x = np.array([0.0, -1.0, 2.0])
    np.testing.assert_array_equal(tangent_rule(abs)((np.ones(3),), abs(x), x), [0.0, -1.0, 1.0])


def test_max_and_min_tangents_at_ties_are_the_mean():
    assert tangent_rule(max)((1.0, 3.0, 5.0), 2.0, 2.0, 2.0, 1.0) == 2.0
    assert tangent_rule(min)((1.0, 3.0), 1.0, 2.0, 1.0) == 3.0
    assert tangent_rule(min)((1.0, 2.0, 4.0), -1.0, -1.0, 3.0, -1.0) == 2.5
    assert tangent_rule(max)(([1.0, 2.0, 3.0, 6.0],), 4.0, [4.0, 4.0, 1.0, 4.0]) == 3.0
    # relu written with the builtin: half the tangent at the kink.
    assert tangent_rule(max)((1.0, 0.0), 0.0, 0.0, 0.0) == 0.5
    assert tangent_rule(max)((1.0, 0.0), 2.0, 2.0, 0.0) == 1.0


def test_max_tangent_of_a_tuple_an_array_and_with_key_and_default():
    assert tangent_rule(max)(((1.0, 2.0, 3.0),), 5.0, (1.0, 5.0, 3.0)) == 2.0
    values = np.array([1.0, 5.0, 3.0])
    assert tangent_rule(min)((np.array([4.0, 5.0, 6.0]),), 1.0, values) == 4.0
    items = [-3.0, 2.0]
    assert tangent_rule(max)(([7.0, 5.0],), max(items, key=abs), items, key=abs) == 7.0
    assert tangent_rule(max)(([],), 0.0, [], default=0.0) == 0.0
    # A list argument without a tangent (None) or with a zero one.
    assert tangent_rule(max)((None,), 3.0, [1.0, 3.0]) == 0.0
    assert tangent_rule(max)((0.0,), 3.0, [1.0, 3.0]) == 0.0


def test_max_and_min_of_a_list_tangent_matches_finite_differences():
    items = [0.3, -1.2, 2.5, 1.1]
    direction = [0.7, -0.4, 1.3, 0.2]
    up = [x + 1e-6 * d for x, d in zip(items, direction, strict=True)]
    down = [x - 1e-6 * d for x, d in zip(items, direction, strict=True)]
    for primitive in (max, min):
        expected = (primitive(up) - primitive(down)) / 2e-6
        got = tangent_rule(primitive)((direction,), primitive(items), items)
        assert got == pytest.approx(expected, rel=1e-6)


def test_sum_tangent_adds_up_the_terms():
    assert tangent_rule(sum)(([1.0, 2.0], 3.0), sum([1.0, 2.0], 0.5), [1.0, 2.0], 0.5) == 6.0
    assert tangent_rule(sum)(((1.5, 2.5),), 3.0, (1.0, 2.0)) == 4.0
    assert tangent_rule(sum)(([1.5, 2.5],), 3.5, [1.0, 2.0], start=0.5) == 4.0
    assert tangent_rule(sum)((None, 2.0), 3.5, [1, 2], 0.5) == 2.0
    # A scalar item summed with arrays: its tangent spreads to the result's shape.
    t_y = tangent_rule(sum)(([2.0, np.array([1.0, 3.0])],), np.array([1.5, 1.5]), [0.5, np.array([1.0, 1.0])])
    np.testing.assert_array_equal(t_y, [3.0, 5.0])
    # sum(array) adds up the rows.
    rows = np.arange(6.0).reshape(3, 2)
    t_y = tangent_rule(sum)((np.ones((3, 2)),), sum(rows), rows)
    np.testing.assert_array_equal(t_y, [3.0, 3.0])
    t_y = tangent_rule(sum)((None,), sum(rows), rows)
    np.testing.assert_array_equal(t_y, [0.0, 0.0])


def test_pow_tangent_at_zero_base():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for primitive in (pow, operator.pow, math.pow):
            assert tangent_rule(primitive)((1.0, 1.0), primitive(0.0, 0.0), 0.0, 0.0) == 0.0
            assert tangent_rule(primitive)((1.0, 1.0), primitive(0.0, 1.0), 0.0, 1.0) == 1.0
            assert tangent_rule(primitive)((1.0, 1.0), primitive(0.0, 2.0), 0.0, 2.0) == 0.0
            assert tangent_rule(primitive)((1.0, None), primitive(0.0, 0), 0.0, 0) == 0.0
        x = np.zeros(3)
        p = np.array([0.0, 1.0, 2.0])
        t_y = tangent_rule(operator.pow)((np.ones(3), np.ones(3)), x**p, x, p)
        np.testing.assert_array_equal(t_y, [0.0, 1.0, 0.0])


def test_pow_tangent_with_negative_base_has_no_exponent_part():
    for primitive in (pow, operator.pow, math.pow):
        assert tangent_rule(primitive)((1.0, 1.0), primitive(-2.0, 3.0), -2.0, 3.0) == 12.0


def test_builtin_pow_tangent_with_keywords():
    assert tangent_rule(pow)((1.0, 1.0), 8.0, 2.0, 3.0) == pytest.approx(12.0 + 8.0 * math.log(2.0))
    assert tangent_rule(pow)((1.0,), 8.0, 2.0, exp=3.0) == 12.0
    assert tangent_rule(pow)((), 8.0, base=2.0, exp=3.0) == 0.0


def test_math_log_tangent_with_and_without_base():
    assert tangent_rule(math.log)((1.0,), math.log(2.0), 2.0) == 0.5
    t_y = tangent_rule(math.log)((1.0, 0.0), math.log(8.0, 2.0), 8.0, 2.0)
    assert math.isclose(t_y, 1 / (8.0 * math.log(2.0)))
    t_y = tangent_rule(math.log)((0.0, 1.0), math.log(8.0, 2.0), 8.0, 2.0)
    assert math.isclose(t_y, -3.0 / (2.0 * math.log(2.0)))


def test_hypot_tangent_at_the_origin():
    assert tangent_rule(math.hypot)((1.0, 1.0), 0.0, 0.0, 0.0) == 0.0
    assert tangent_rule(math.hypot)((1.0, 2.0), 5.0, 3.0, 4.0) == pytest.approx(2.2, rel=1e-15)
    assert tangent_rule(math.hypot)((1.0, None), 5.0, 3.0, 4) == pytest.approx(0.6, rel=1e-15)


def test_mod_tangent():
    assert tangent_rule(operator.mod)((1.0, 1.0), 5.5 % 2.0, 5.5, 2.0) == -1.0
    assert tangent_rule(operator.mod)((1.0, 1.0), -5.5 % 2.0, -5.5, 2.0) == 4.0


def test_float_passes_the_tangent_through():
    assert tangent_rule(float)((2.0,), 1.0, np.float32(1.0)) == 2.0


# ----- Tangents are the transposes of the adjoints -----


_array = np.array([[0.0, -1.5, 2.0, 0.5], [1.0, 0.0, -2.0, 0.5], [0.5, 3.0, 2.0, 1.5]])
TRANSPOSE_CASES = [
    Case(max, (2.0, 2.0, 1.0), id="max-tie"),
    Case(max, (0.0, 0.0), id="max-relu-kink"),
    Case(min, (-1.0, 3.0, -1.0), id="min-tie"),
    Case(max, ([4.0, 4.0, 1.0, 4.0],), id="max-list-ties"),
    Case(min, ((1.0, -2.0, 3.0),), id="min-tuple"),
    Case(sum, ([1.0, -2.0, 3.0], 0.5), id="sum-list-start"),
    Case(sum, ([np.array([1.0, 2.0]), 0.5],), id="sum-broadcast-items"),
    Case(abs, (np.array([0.0, -2.0, 3.0, -0.0]),), id="abs-zeros"),
    Case(math.fabs, (0.0,), id="fabs-zero"),
    Case(operator.pow, (np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.0, 0.0])), id="pow-zero-base"),
    Case(operator.pow, (_array, 2), id="pow-int-exponent"),
    Case(pow, (1.5,), {"exp": 2.5}, id="builtin-pow-keyword"),
    Case(math.pow, (0.0, 2.0), id="math.pow-zero-base"),
    Case(operator.mod, (_mod_a, _mod_b[0]), id="mod-broadcast"),
    Case(operator.truediv, (_array, np.array([[1.5], [-2.0], [0.5]])), id="truediv-broadcast"),
    Case(operator.mul, (2.5, _array), id="mul-scalar-array"),
    Case(operator.sub, (np.array([[1.0], [2.0]]), np.array([0.5, 1.5, 2.5])), id="sub-outer"),
    Case(math.log, (3.0, 2.0), id="math.log-base"),
    Case(math.hypot, (0.0, 0.0, 0.0), id="hypot-origin"),
    Case(math.hypot, (1.0, -2.0, 2.0), id="hypot-3"),
    Case(math.atan2, (-1.0, 0.5), id="atan2"),
    Case(float, (np.float64(1.25),), id="float"),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case):
    for seed in range(3):
        assert_transpose(case.primitive, *case.args, seed=seed, **case.kwargs)
