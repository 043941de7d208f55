"""Numerical checks of the NumPy elementwise rules, and of their kink conventions."""

import warnings

import numpy as np
import pytest

import ssad.rules  # noqa: F401  (registers the rules)
from ssad.registry import REGISTRY
from ssad.testing import check_rule

from .cases import Case, case_id

rng = np.random.default_rng(20240611)


def uniform(low, high, shape=()):
    """Floats drawn from [low, high): an array of `shape`, or a Python float for ()."""
    value = rng.uniform(low, high, size=shape)
    return value if shape else float(value)


def away_from_zero(low, high, shape=()):
    """Floats with magnitude in [low, high) and random signs."""
    sign = rng.choice([-1.0, 1.0], size=shape)
    value = sign * rng.uniform(low, high, size=shape)
    return value if shape else float(value)


def rule(primitive):
    return REGISTRY.adjoint_rule(primitive)


# (primitive, sampler of inputs in its domain, away from kinks)
UNARY = [
    (np.sin, lambda s: uniform(-3, 3, s)),
    (np.cos, lambda s: uniform(-3, 3, s)),
    (np.tan, lambda s: uniform(-1.2, 1.2, s)),
    (np.arcsin, lambda s: uniform(-0.9, 0.9, s)),
    (np.arccos, lambda s: uniform(-0.9, 0.9, s)),
    (np.arctan, lambda s: uniform(-3, 3, s)),
    (np.sinh, lambda s: uniform(-2, 2, s)),
    (np.cosh, lambda s: uniform(-2, 2, s)),
    (np.tanh, lambda s: uniform(-2, 2, s)),
    (np.arcsinh, lambda s: uniform(-3, 3, s)),
    (np.arccosh, lambda s: uniform(1.1, 3, s)),
    (np.arctanh, lambda s: uniform(-0.9, 0.9, s)),
    (np.exp, lambda s: uniform(-2, 2, s)),
    (np.exp2, lambda s: uniform(-2, 2, s)),
    (np.expm1, lambda s: uniform(-2, 2, s)),
    (np.log, lambda s: uniform(0.1, 3, s)),
    (np.log2, lambda s: uniform(0.1, 3, s)),
    (np.log10, lambda s: uniform(0.1, 3, s)),
    (np.log1p, lambda s: uniform(-0.9, 3, s)),
    (np.sqrt, lambda s: uniform(0.1, 3, s)),
    (np.cbrt, lambda s: away_from_zero(0.1, 3, s)),
    (np.square, lambda s: uniform(-3, 3, s)),
    (np.reciprocal, lambda s: away_from_zero(0.2, 3, s)),
    (np.abs, lambda s: away_from_zero(0.1, 3, s)),
    (np.absolute, lambda s: away_from_zero(0.1, 3, s)),
    (np.fabs, lambda s: away_from_zero(0.1, 3, s)),
    (np.negative, lambda s: uniform(-3, 3, s)),
    (np.positive, lambda s: uniform(-3, 3, s)),
    (np.sinc, lambda s: uniform(-3, 3, s)),
    (np.deg2rad, lambda s: uniform(-200, 200, s)),
    (np.radians, lambda s: uniform(-200, 200, s)),
    (np.rad2deg, lambda s: uniform(-3, 3, s)),
    (np.degrees, lambda s: uniform(-3, 3, s)),
    (np.real, lambda s: uniform(-3, 3, s)),
    (np.conj, lambda s: uniform(-3, 3, s)),
]

# (primitive, sampler of x1, sampler of x2)
BINARY = [
    (np.add, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.subtract, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.multiply, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.divide, lambda s: uniform(-3, 3, s), lambda s: away_from_zero(0.5, 2, s)),
    (np.true_divide, lambda s: uniform(-3, 3, s), lambda s: away_from_zero(0.5, 2, s)),
    (np.maximum, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.minimum, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.fmax, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.fmin, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.power, lambda s: uniform(0.5, 2, s), lambda s: uniform(-2, 2, s)),
    (np.float_power, lambda s: uniform(0.5, 2, s), lambda s: uniform(-2, 2, s)),
    (np.hypot, lambda s: uniform(-3, 3, s), lambda s: away_from_zero(0.5, 3, s)),
    (np.arctan2, lambda s: uniform(-3, 3, s), lambda s: away_from_zero(0.5, 3, s)),
    (np.logaddexp, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
    (np.logaddexp2, lambda s: uniform(-3, 3, s), lambda s: uniform(-3, 3, s)),
]

# Pairs of shapes that broadcast against each other; () is a Python float.
BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3), ()), ((), (4,)), ((), ())]


def _shape_id(shape):
    return "x".join(map(str, shape)) if shape else "float"


CASES = []
for _primitive, _sample in UNARY:
    _name = _primitive.__name__
    CASES.append(Case(_primitive, (_sample((3, 4)),), id=f"{_name}-array"))
    CASES.append(Case(_primitive, (_sample(()),), id=f"{_name}-float"))
for _primitive, _sample1, _sample2 in BINARY:
    for _shape1, _shape2 in BROADCAST_SHAPES:
        CASES.append(
            Case(
                _primitive,
                (_sample1(_shape1), _sample2(_shape2)),
                id=f"{_primitive.__name__}-{_shape_id(_shape1)}-{_shape_id(_shape2)}",
            )
        )

_x = uniform(-2, 2, (3, 4))
CASES += [
    # Ufuncs under other names.
    Case(np.ndarray.conj, (uniform(-3, 3, (3, 4)),), id="ndarray.conj"),
    Case(np.ndarray.conjugate, (uniform(-3, 3, (3, 4)),), id="ndarray.conjugate"),
    Case(np.sinc, (np.array([0.0, 0.25, -1.5]),), id="sinc-at-zero"),
    # Powers with negative bases and integer exponents, and constant exponents.
    Case(np.power, (uniform(-2, -0.5, (3, 4)), 3), id="power-negative-base-int"),
    Case(np.power, (uniform(-2, 2, (3, 4)), 2), id="power-square"),
    Case(np.power, (2.5, uniform(-2, 2, (3, 4))), id="power-constant-base"),
    Case(np.float_power, (uniform(-2, -0.5, (4,)), 2), id="float_power-negative-base-int"),
    # where: a boolean condition, branches of broadcasting shapes.
    Case(np.where, (rng.random((3, 4)) < 0.5, uniform(-3, 3, (3, 4)), uniform(-3, 3, (4,))), id="where"),
    Case(np.where, (rng.random((3, 1)) < 0.5, uniform(-3, 3), uniform(-3, 3, (1, 4))), id="where-broadcast"),
    Case(np.where, (np.array([True, False, True]), uniform(-3, 3, (3,)), 0.0), id="where-constant"),
    # clip, with bounds that are floats, arrays, None, or passed by keyword.
    Case(np.clip, (_x, -0.5, uniform(0.2, 1, (4,))), id="clip-array-max"),
    Case(np.clip, (_x, uniform(-1, -0.2, (3, 1)), 0.7), id="clip-array-min"),
    Case(np.clip, (_x, None, 0.5), id="clip-no-min"),
    Case(np.clip, (_x, -0.5, None), id="clip-no-max"),
    Case(np.clip, (_x,), {"a_min": -0.5, "a_max": 0.5}, id="clip-keywords"),
    Case(np.clip, (_x,), {"min": -0.5, "max": 0.5}, id="clip-min-max-keywords"),
    Case(np.clip, (uniform(-2, 2), -0.5, 0.5), id="clip-float"),
    Case(np.ndarray.clip, (_x, -0.5, 0.5), id="ndarray.clip"),
    Case(np.ndarray.clip, (_x, uniform(-1, 0, (4,))), id="ndarray.clip-min"),
    Case(np.ndarray.clip, (_x,), {"max": 0.5}, id="ndarray.clip-max-keyword"),
    # astype: the cast is exact in these directions.
    Case(np.ndarray.astype, (uniform(-3, 3, (3, 4)), np.float64), id="astype-float64"),
    Case(np.ndarray.astype, (uniform(-3, 3, (3, 4)).astype(np.float32), np.float64), id="astype-32-to-64"),
    Case(np.ndarray.astype, (uniform(-3, 3, (2, 3)),), {"dtype": "float64", "copy": True}, id="astype-kw"),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


def test_every_rule_of_the_module_is_checked():
    ours = {p for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.elementwise"}
    checked = {case.primitive for case in CASES}
    missing = [p for p in ours if p not in checked]
    assert not missing, f"rules without a numerical check: {missing}"


NONDIFFERENTIABLE = [
    np.floor,
    np.ceil,
    np.round,
    np.around,
    np.rint,
    np.trunc,
    np.fix,
    np.sign,
    np.isnan,
    np.isinf,
    np.isfinite,
    np.floor_divide,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
    np.signbit,
    np.heaviside,
    np.ndarray.round,
]


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE, ids=lambda p: p.__name__)
def test_nondifferentiable(primitive):
    assert REGISTRY.is_nondifferentiable(primitive)
    assert REGISTRY.adjoint_rule(primitive) is None


# ----- Conventions at kinks -----


def test_abs_slope_at_zero_is_zero():
    x = np.array([0.0, -2.0, 3.0, -0.0])
    dy = np.array([5.0, 5.0, 5.0, 5.0])
    for primitive in (np.abs, np.absolute, np.fabs):
        (d_x,) = rule(primitive)(dy, primitive(x), x)
        np.testing.assert_array_equal(d_x, [0.0, -5.0, 5.0, 0.0])
    (d_x,) = rule(np.abs)(2.0, 0.0, 0.0)
    assert d_x == 0.0


def test_maximum_and_minimum_split_ties_evenly():
    x1 = np.array([1.0, 2.0, 3.0])
    x2 = np.array([1.0, 5.0, 0.0])
    dy = np.array([4.0, 4.0, 4.0])
    d_x1, d_x2 = rule(np.maximum)(dy, np.maximum(x1, x2), x1, x2)
    np.testing.assert_array_equal(d_x1, [2.0, 0.0, 4.0])
    np.testing.assert_array_equal(d_x2, [2.0, 4.0, 0.0])
    d_x1, d_x2 = rule(np.minimum)(dy, np.minimum(x1, x2), x1, x2)
    np.testing.assert_array_equal(d_x1, [2.0, 4.0, 0.0])
    np.testing.assert_array_equal(d_x2, [2.0, 0.0, 4.0])


def test_maximum_tie_between_scalars_and_broadcast_tie():
    d_x1, d_x2 = rule(np.maximum)(1.0, np.maximum(0.0, 0.0), 0.0, 0.0)
    assert (d_x1, d_x2) == (0.5, 0.5)
    # relu: the scalar 0.0 collects the gradient of every clipped element, half at ties.
    x = np.array([-1.0, 0.0, 2.0])
    d_x, d_zero = rule(np.maximum)(np.ones(3), np.maximum(x, 0.0), x, 0.0)
    np.testing.assert_array_equal(d_x, [0.0, 0.5, 1.0])
    assert d_zero == 1.5


def test_fmax_and_fmin_send_the_gradient_past_nan():
    x1 = np.array([np.nan, 2.0, 1.0])
    x2 = np.array([2.0, np.nan, 1.0])
    dy = np.array([1.0, 1.0, 1.0])
    for primitive in (np.fmax, np.fmin):
        d_x1, d_x2 = rule(primitive)(dy, primitive(x1, x2), x1, x2)
        np.testing.assert_array_equal(d_x1, [0.0, 1.0, 0.5])
        np.testing.assert_array_equal(d_x2, [1.0, 0.0, 0.5])


def test_clip_at_and_beyond_the_bounds():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    dy = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.clip(x, -0.5, 0.5)
    d_x, d_min, d_max = rule(np.clip)(dy, y, x, -0.5, 0.5)
    np.testing.assert_array_equal(d_x, [0.0, 2.0, 3.0, 4.0, 0.0])
    assert d_min == 1.0
    assert d_max == 5.0


def test_clip_with_array_bounds_and_none():
    x = np.array([-1.0, 0.2, 3.0])
    a_max = np.array([0.0, 0.2, 1.0])
    dy = np.array([1.0, 2.0, 3.0])
    d_x, d_min, d_max = rule(np.clip)(dy, np.clip(x, None, a_max), x, None, a_max)
    np.testing.assert_array_equal(d_x, [1.0, 2.0, 0.0])
    np.testing.assert_array_equal(d_max, [0.0, 0.0, 3.0])


def test_clip_returns_one_adjoint_per_positional_argument():
    x = np.array([-1.0, 0.2, 3.0])
    dy = np.ones(3)
    assert len(rule(np.clip)(dy, np.clip(x, -0.5, 0.5), x, -0.5, 0.5)) == 3
    assert len(rule(np.ndarray.clip)(dy, x.clip(-0.5), x, -0.5)) == 2
    (d_x,) = rule(np.ndarray.clip)(dy, x.clip(max=0.5), x, max=0.5)
    np.testing.assert_array_equal(d_x, [1.0, 1.0, 0.0])


def test_where_does_not_leak_inf_or_nan_from_the_branch_not_taken():
    condition = np.array([True, False, True])
    x = np.array([1.0, np.inf, 2.0])
    other = np.array([np.nan, 3.0, -np.inf])
    dy = np.array([1.0, 2.0, 3.0])
    d_condition, d_x, d_other = rule(np.where)(dy, np.where(condition, x, other), condition, x, other)
    assert d_condition is None
    np.testing.assert_array_equal(d_x, [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(d_other, [0.0, 2.0, 0.0])


def test_power_at_zero_base():
    x = np.array([0.0, 0.0, 0.0, 0.0])
    p = np.array([0.0, 1.0, 2.0, 3.0])
    dy = np.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rule must not divide by zero on the way
        for primitive in (np.power, np.float_power):
            d_x, d_p = rule(primitive)(dy, primitive(x, p), x, p)
            np.testing.assert_array_equal(d_x, [0.0, 1.0, 0.0, 0.0])
            np.testing.assert_array_equal(d_p, [0.0, 0.0, 0.0, 0.0])
        d_x, d_p = rule(np.power)(1.0, np.power(0.0, 0.0), 0.0, 0.0)
        assert (d_x, d_p) == (0.0, 0.0)


def test_power_negative_base_integer_exponent():
    d_x, d_p = rule(np.power)(1.0, np.power(-2.0, 3.0), -2.0, 3.0)
    assert d_x == 12.0
    assert d_p == 0.0
    d_x, d_p = rule(np.power)(1.0, np.power(-2.0, 0), -2.0, 0)
    assert (d_x, d_p) == (0.0, 0.0)


def test_sqrt_slope_at_zero_is_inf():
    with np.errstate(divide="ignore"):
        (d_x,) = rule(np.sqrt)(np.ones(2), np.sqrt(np.array([0.0, 4.0])), np.array([0.0, 4.0]))
    assert d_x[0] == np.inf
    assert d_x[1] == 0.25


def test_sinc_and_hypot_at_zero():
    (d_x,) = rule(np.sinc)(1.0, np.sinc(0.0), 0.0)
    assert d_x == 0.0
    d_x1, d_x2 = rule(np.hypot)(1.0, np.hypot(0.0, 0.0), 0.0, 0.0)
    assert (d_x1, d_x2) == (0.0, 0.0)


def test_astype_adjoint_has_the_input_precision():
    x = np.array([1.0, 2.0], dtype=np.float32)
    dy = np.array([0.5, 0.25])
    (d_x,) = rule(np.ndarray.astype)(dy, x.astype(np.float64), x, np.float64)
    assert d_x.dtype == np.float32
    np.testing.assert_array_equal(d_x, [0.5, 0.25])
    ints = np.array([1, 2])
    (d_ints,) = rule(np.ndarray.astype)(dy, ints.astype(np.float64), ints, np.float64)
    assert d_ints.dtype == np.float64


def test_unary_rules_keep_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    dy = np.ones(2, dtype=np.float32)
    for primitive in (np.sin, np.tanh, np.exp, np.log, np.sqrt, np.abs):
        (d_x,) = rule(primitive)(dy, primitive(x), x)
        assert d_x.dtype == np.float32, primitive.__name__
