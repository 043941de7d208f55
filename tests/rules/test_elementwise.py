"""Numerical checks of the NumPy elementwise rules (adjoint and tangent), and of their kink conventions."""

import ast
import inspect
import textwrap
import warnings

import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the rules)
from ssad.errors import MissingRuleError, SsadError
from ssad.registry import REGISTRY, primitive_name
from ssad.rules.elementwise import _conj, _i1
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, Samples, assert_transpose, case_id

samples = Samples(20240611)
rng = samples.rng
uniform, away_from_zero = samples.uniform, samples.away_from_zero


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


# ----- Remainders, mantissas, exponents, non-finite values and I0 -----
# Points away from the jumps of the remainders (x1 / x2 is not near an integer).

_numerators = np.array([[2.7, -1.3, 0.4, 5.9], [-4.45, 3.3, -0.2, 1.05], [0.8, -2.35, 4.1, -3.75]])
_divisors = np.array([1.5, -0.7, 2.2, 0.9])

CASES += [
    Case(np.remainder, (_numerators, _divisors), id="remainder"),
    Case(np.remainder, (2.65, _divisors), id="remainder-float"),
    Case(np.remainder, (_numerators, 1.17), id="remainder-float-divisor"),
    Case(np.mod, (np.array([-5.25, 7.5]), np.array([[2.0], [-3.0]])), id="mod-broadcast"),
    Case(np.fmod, (_numerators, _divisors), id="fmod"),
    Case(np.fmod, (-2.7, 0.8), id="fmod-float"),
    Case(np.divmod, (_numerators, _divisors), id="divmod"),
    Case(np.modf, (_numerators,), id="modf"),
    Case(np.ldexp, (uniform(-2, 2, (3, 4)), np.array([1, -2, 3, 0])), id="ldexp"),
    Case(np.ldexp, (uniform(-2, 2, (4,)), 3), id="ldexp-int"),
    Case(np.frexp, (away_from_zero(0.1, 20, (3, 4)),), id="frexp"),
    Case(np.copysign, (away_from_zero(0.1, 3, (3, 4)), away_from_zero(0.1, 3, (4,))), id="copysign"),
    Case(np.copysign, (away_from_zero(0.1, 3, (3,)), -0.5), id="copysign-float"),
    Case(np.nextafter, (uniform(-3, 3, (3, 4)), uniform(-3, 3, (4,))), id="nextafter"),
    Case(np.nan_to_num, (uniform(-3, 3, (3, 4)),), id="nan_to_num"),
    Case(np.nan_to_num, (uniform(-3, 3, (4,)),), {"nan": 1.0, "posinf": 5.0, "neginf": -5.0}, id="nan_to_num-values"),
    Case(np.real_if_close, (uniform(-3, 3, (3, 4)),), id="real_if_close-real"),
    Case(np.real_if_close, (uniform(-3, 3, (4,)) + 1j * uniform(0.5, 1, (4,)),), id="real_if_close-complex"),
    Case(np.i0, (uniform(-4, 4, (3, 4)),), id="i0"),
    Case(np.i0, (np.array([-21.0, 22.5, 19.5]),), id="i0-large"),
    Case(np.i0, (np.array([0.0, 0.25]),), id="i0-zero"),
    Case(np.i0, (1.5,), id="i0-float"),
    Case(_i1, (np.array([0.0, 0.3, -2.5, 4.5]),), id="i1"),
    Case(_i1, (np.array([19.9, 20.1, -22.5]),), id="i1-either-side-of-the-series"),
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
    np.spacing,
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


# ----- Tangent (forward-mode) rules -----


def tangent_rule(primitive):
    return REGISTRY.tangent_rule(primitive)


TANGENT_CASES = [case for case in CASES if rule(case.primitive).__module__ == "ssad.rules.elementwise"]


@pytest.mark.parametrize("case", TANGENT_CASES, ids=case_id)
def test_tangent_rule(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_every_adjoint_rule_of_the_module_has_a_tangent_rule():
    ours = [p for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.elementwise"]
    missing = [primitive_name(p) for p in ours if tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"
    elsewhere = [primitive_name(p) for p in ours if tangent_rule(p).__module__ != "ssad.rules.elementwise"]
    assert not elsewhere, f"tangent rules registered outside the module: {elsewhere}"


# Tangent rules that read *args (as their adjoints do) and are called; every other
# one must be inlinable.
CALLED_TANGENT_RULES = set()


def test_tangent_rules_are_inlinable():
    ours = {tangent_rule(p) for p in REGISTRY.adjoint_primitives() if rule(p).__module__ == "ssad.rules.elementwise"}
    called = sorted(r.__name__ for r in ours if not is_inlinable(r))
    assert called == sorted(CALLED_TANGENT_RULES)


_NOT_INLINABLE = (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.NamedExpr)


def is_inlinable(function):
    """True when the body is assignments to names and one `return` reading no *args or
    **kwargs parameter, and every default is a literal: the form a rule is inlined in."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
    variadic = {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    read = {n.id for statement in body for n in ast.walk(statement) if isinstance(n, ast.Name)}
    return (
        bool(body)
        and isinstance(body[-1], ast.Return)
        and body[-1].value is not None
        and all(isinstance(s, ast.Assign) and [type(t) for t in s.targets] == [ast.Name] for s in body[:-1])
        and all(isinstance(d, ast.Constant) for d in defaults)
        and not variadic & read
        and not any(isinstance(n, _NOT_INLINABLE) for n in ast.walk(node))
    )


def test_abs_tangent_at_zero_is_zero():
    x = np.array([0.0, -2.0, 3.0, -0.0])
    t = np.array([5.0, 5.0, 5.0, 5.0])
    for primitive in (np.abs, np.absolute, np.fabs):
        t_y = tangent_rule(primitive)((t,), primitive(x), x)
        np.testing.assert_array_equal(t_y, [0.0, -5.0, 5.0, 0.0])
    assert tangent_rule(np.abs)((2.0,), 0.0, 0.0) == 0.0


def test_maximum_and_minimum_tangents_at_ties_are_the_mean():
    x1 = np.array([1.0, 2.0, 3.0])
    x2 = np.array([1.0, 5.0, 0.0])
    t1 = np.array([4.0, 4.0, 4.0])
    t2 = np.array([2.0, 2.0, 2.0])
    t_y = tangent_rule(np.maximum)((t1, t2), np.maximum(x1, x2), x1, x2)
    np.testing.assert_array_equal(t_y, [3.0, 2.0, 4.0])
    t_y = tangent_rule(np.minimum)((t1, t2), np.minimum(x1, x2), x1, x2)
    np.testing.assert_array_equal(t_y, [3.0, 4.0, 2.0])
    assert tangent_rule(np.maximum)((1.0, 3.0), np.maximum(0.0, 0.0), 0.0, 0.0) == 2.0
    # relu: half the tangent at the kink, spread to the result's shape.
    x = np.array([-1.0, 0.0, 2.0])
    t_y = tangent_rule(np.maximum)((np.ones(3), 0.0), np.maximum(x, 0.0), x, 0.0)
    np.testing.assert_array_equal(t_y, [0.0, 0.5, 1.0])
    t_y = tangent_rule(np.maximum)((0.0, 2.0), np.maximum(x, 0.0), x, 0.0)
    np.testing.assert_array_equal(t_y, [2.0, 1.0, 0.0])


def test_fmax_and_fmin_tangents_come_from_the_number_past_nan():
    x1 = np.array([np.nan, 2.0, 1.0])
    x2 = np.array([2.0, np.nan, 1.0])
    t1 = np.array([1.0, 1.0, 1.0])
    t2 = np.array([3.0, 3.0, 3.0])
    for primitive in (np.fmax, np.fmin):
        t_y = tangent_rule(primitive)((t1, t2), primitive(x1, x2), x1, x2)
        np.testing.assert_array_equal(t_y, [3.0, 1.0, 2.0])


def test_clip_tangent_at_and_beyond_the_bounds():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    t = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.clip(x, -0.5, 0.5)
    t_y = tangent_rule(np.clip)((t, 10.0, 20.0), y, x, -0.5, 0.5)
    np.testing.assert_array_equal(t_y, [10.0, 2.0, 3.0, 4.0, 20.0])
    # Bounds passed by keyword carry no tangent; the bounds themselves still pass a's.
    t_y = tangent_rule(np.clip)((t,), y, x, a_min=-0.5, a_max=0.5)
    np.testing.assert_array_equal(t_y, [0.0, 2.0, 3.0, 4.0, 0.0])
    t_y = tangent_rule(np.ndarray.clip)((t,), x.clip(max=0.5), x, max=0.5)
    np.testing.assert_array_equal(t_y, [1.0, 2.0, 3.0, 4.0, 0.0])


def test_clip_tangent_with_array_bounds_and_none():
    x = np.array([-1.0, 0.2, 3.0])
    a_max = np.array([0.0, 0.2, 1.0])
    t = np.array([1.0, 2.0, 3.0])
    t_max = np.array([10.0, 20.0, 30.0])
    t_y = tangent_rule(np.clip)((t, None, t_max), np.clip(x, None, a_max), x, None, a_max)
    np.testing.assert_array_equal(t_y, [1.0, 2.0, 30.0])


def test_where_tangent_does_not_leak_inf_or_nan_from_the_branch_not_taken():
    condition = np.array([True, False, True])
    x = np.array([1.0, np.inf, 2.0])
    other = np.array([np.nan, 3.0, -np.inf])
    t_x = np.array([1.0, np.inf, 3.0])
    t_other = np.array([np.nan, 2.0, -np.inf])
    t_y = tangent_rule(np.where)((None, t_x, t_other), np.where(condition, x, other), condition, x, other)
    assert np.all(np.isfinite(t_y))
    np.testing.assert_array_equal(t_y, [1.0, 2.0, 3.0])


def test_power_tangent_at_zero_base():
    x = np.array([0.0, 0.0, 0.0, 0.0])
    p = np.array([0.0, 1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rule must not divide by zero on the way
        for primitive in (np.power, np.float_power):
            t_y = tangent_rule(primitive)((np.ones(4), np.ones(4)), primitive(x, p), x, p)
            np.testing.assert_array_equal(t_y, [0.0, 1.0, 0.0, 0.0])
        assert tangent_rule(np.power)((1.0, 1.0), np.power(0.0, 0.0), 0.0, 0.0) == 0.0


def test_power_tangent_with_negative_base_and_integer_exponent():
    assert tangent_rule(np.power)((1.0, 1.0), np.power(-2.0, 3.0), -2.0, 3.0) == 12.0
    # An integer exponent carries no tangent (None).
    assert tangent_rule(np.power)((1.0, None), np.power(-2.0, 3), -2.0, 3) == 12.0
    assert tangent_rule(np.power)((1.0, None), np.power(-2.0, 0), -2.0, 0) == 0.0


def test_tangents_at_zero_of_sqrt_sinc_and_hypot():
    with np.errstate(divide="ignore"):
        t_y = tangent_rule(np.sqrt)((np.ones(2),), np.sqrt(np.array([0.0, 4.0])), np.array([0.0, 4.0]))
    np.testing.assert_array_equal(t_y, [np.inf, 0.25])
    assert tangent_rule(np.sinc)((1.0,), np.sinc(0.0), 0.0) == 0.0
    assert tangent_rule(np.hypot)((1.0, 1.0), np.hypot(0.0, 0.0), 0.0, 0.0) == 0.0


def test_tangents_keep_float32_and_astype_gives_the_result_precision():
    x = np.array([0.5, 1.5], dtype=np.float32)
    t = np.ones(2, dtype=np.float32)
    for primitive in (np.sin, np.tanh, np.exp, np.log, np.sqrt, np.abs):
        assert tangent_rule(primitive)((t,), primitive(x), x).dtype == np.float32, primitive.__name__
    t_y = tangent_rule(np.ndarray.astype)((t,), x.astype(np.float64), x, np.float64)
    assert t_y.dtype == np.float64
    np.testing.assert_array_equal(t_y, [1.0, 1.0])


# ----- Tangents are the transposes of the adjoints -----


_ties = np.array([[0.5, -1.0, 2.0, 0.0], [1.0, 3.0, -2.0, 0.0], [0.5, 3.0, 2.0, 1.5]])
_row = np.array([0.5, 3.0, 2.0, 0.0])
TRANSPOSE_CASES = [
    Case(np.maximum, (_ties, _row), id="maximum-ties-broadcast"),
    Case(np.minimum, (_row, _ties), id="minimum-ties-broadcast"),
    Case(np.maximum, (_ties, 0.0), id="maximum-relu"),
    Case(np.fmax, (np.array([np.nan, 2.0, 1.0, 0.5]), np.array([2.0, np.nan, 1.0, 0.5])), id="fmax-nan-ties"),
    Case(np.abs, (np.array([0.0, -2.0, 3.0, -0.0]),), id="abs-zeros"),
    Case(np.clip, (_ties, -0.5, np.array([0.5, 3.0, 1.0, 1.5])), id="clip-at-bounds"),
    Case(np.clip, (_ties, None, 1.0), id="clip-none"),
    Case(np.ndarray.clip, (_ties, 0.0), {"max": 1.0}, id="ndarray.clip-keyword"),
    Case(np.where, (_ties > 0.6, _ties, _row), id="where-broadcast"),
    Case(np.where, (_ties > 0.6, 1.5, _row), id="where-scalar-branch"),
    Case(np.hypot, (np.array([0.0, 3.0, 0.0]), np.array([0.0, 4.0, -1.0])), id="hypot-origin"),
    Case(np.power, (np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.0, 0.0])), id="power-zero-base"),
    Case(np.power, (np.array([[0.5], [-1.5]]), 3), id="power-int-exponent"),
    Case(np.float_power, (np.array([0.0, 1.5, 2.0]), np.array([1.0, 0.0, -1.0])), id="float_power-zeros"),
    Case(np.sinc, (np.array([0.0, 0.25, -1.5]),), id="sinc-zero"),
    Case(np.divide, (_ties, np.array([[1.5], [-2.0], [0.5]])), id="divide-broadcast"),
    Case(np.multiply, (np.array([[1.5], [-2.0]]), _row), id="multiply-broadcast"),
    Case(np.arctan2, (_ties, 2.0), id="arctan2-scalar"),
    Case(np.logaddexp, (1.5, _row), id="logaddexp-scalar"),
    Case(np.tanh, (_ties,), id="tanh"),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case):
    for seed in range(3):
        assert_transpose(case.primitive, *case.args, seed=seed, **case.kwargs)


# ----- Complex inputs -----
# Checked in the complex plane by check_rule / check_tangent (ssad's convention: the
# adjoint of z = x + 1j y is dL/dx - 1j dL/dy). Points away from branch cuts.


def complex_uniform(low, high, shape=()):
    value = uniform(low, high, shape) + 1j * uniform(low, high, shape)
    return value if shape else complex(value)


def complex_away_from_axes(low, high, shape=()):
    """Complex numbers whose real and imaginary parts both have magnitude in [low, high)."""
    value = away_from_zero(low, high, shape) + 1j * away_from_zero(low, high, shape)
    return value if shape else complex(value)


# (primitive, sampler of complex inputs), away from branch cuts (which lie on the axes)
COMPLEX_UNARY = [
    (np.sin, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.cos, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.tan, lambda s: complex_uniform(-0.7, 0.7, s)),
    (np.arcsin, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.arccos, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.arctan, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.sinh, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.cosh, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.tanh, lambda s: complex_uniform(-0.7, 0.7, s)),
    (np.arcsinh, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.arccosh, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.arctanh, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.exp, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.exp2, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.expm1, lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.log, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.log2, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.log10, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.log1p, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.sqrt, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.square, lambda s: complex_uniform(-2, 2, s)),
    (np.reciprocal, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.abs, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.absolute, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.negative, lambda s: complex_uniform(-2, 2, s)),
    (np.positive, lambda s: complex_uniform(-2, 2, s)),
    (np.sinc, lambda s: complex_away_from_axes(0.2, 1.5, s)),
    (np.real, lambda s: complex_uniform(-2, 2, s)),
    (np.imag, lambda s: complex_uniform(-2, 2, s)),
    (np.angle, lambda s: complex_away_from_axes(0.2, 2, s)),
    (np.conj, lambda s: complex_uniform(-2, 2, s)),
    (np.conjugate, lambda s: complex_uniform(-2, 2, s)),
    (np.ndarray.conj, lambda s: complex_uniform(-2, 2, (3, 4))),
    (np.ndarray.conjugate, lambda s: complex_uniform(-2, 2, (3, 4))),
    (np.ndarray.real, lambda s: complex_uniform(-2, 2, s)),
    (np.ndarray.imag, lambda s: complex_uniform(-2, 2, s)),
    (_conj, lambda s: complex_uniform(-2, 2, s)),
]

# (primitive, sampler of x1, sampler of x2); each also with one real operand
COMPLEX_BINARY = [
    (np.add, lambda s: complex_uniform(-2, 2, s), lambda s: complex_uniform(-2, 2, s)),
    (np.subtract, lambda s: complex_uniform(-2, 2, s), lambda s: complex_uniform(-2, 2, s)),
    (np.multiply, lambda s: complex_uniform(-2, 2, s), lambda s: complex_uniform(-2, 2, s)),
    (np.divide, lambda s: complex_uniform(-2, 2, s), lambda s: complex_away_from_axes(0.5, 2, s)),
    (np.power, lambda s: complex_away_from_axes(0.5, 2, s), lambda s: complex_uniform(-1.5, 1.5, s)),
    (np.float_power, lambda s: complex_away_from_axes(0.5, 2, s), lambda s: complex_uniform(-1.5, 1.5, s)),
]

COMPLEX_CASES = []
for _primitive, _sample in COMPLEX_UNARY:
    _name = _primitive.__name__
    COMPLEX_CASES.append(Case(_primitive, (_sample((3, 4)),), id=f"complex-{_name}-array"))
    COMPLEX_CASES.append(Case(_primitive, (_sample(()),), id=f"complex-{_name}-scalar"))
for _primitive, _sample1, _sample2 in COMPLEX_BINARY:
    _name = _primitive.__name__
    COMPLEX_CASES += [
        Case(_primitive, (_sample1((3, 4)), _sample2((3, 4))), id=f"complex-{_name}-both"),
        Case(_primitive, (_sample1((3, 4)), _sample2((4,))), id=f"complex-{_name}-broadcast"),
        Case(_primitive, (_sample1(()), _sample2((3,))), id=f"complex-{_name}-scalar"),
        Case(_primitive, (uniform(0.5, 2, (3, 4)), _sample2((3, 4))), id=f"complex-{_name}-real-first"),
        Case(_primitive, (_sample1((3, 4)), uniform(0.5, 2, (4,))), id=f"complex-{_name}-real-second"),
    ]
COMPLEX_CASES += [
    Case(np.angle, (complex_away_from_axes(0.2, 2, (3, 4)),), {"deg": True}, id="complex-angle-deg"),
    Case(np.power, (complex_away_from_axes(0.5, 2, (3, 4)), 3), id="complex-power-int"),
    Case(np.where, (rng.random((3, 4)) < 0.5, complex_uniform(-2, 2, (3, 4)), complex_uniform(-2, 2, (4,))), id="complex-where"),
    Case(np.ndarray.astype, (uniform(-2, 2, (3, 4)), np.complex128), id="complex-astype-from-real"),
    Case(np.ndarray.astype, (complex_uniform(-2, 2, (3, 4)).astype(np.complex64), np.complex128), id="complex-astype-64-to-128"),
]
# The rules only complex numbers need, at real inputs too (the cases other test modules,
# such as tests/test_dask.py, read from CASES are real).
CASES += [
    Case(np.imag, (uniform(-2, 2, (3, 4)),), id="imag-of-real"),
    Case(np.angle, (away_from_zero(0.2, 2, (3, 4)),), id="angle-of-real"),
    Case(np.ndarray.real, (uniform(-2, 2, (3, 4)),), id="ndarray.real"),
    Case(np.ndarray.imag, (uniform(-2, 2, (3, 4)),), id="ndarray.imag"),
    Case(_conj, (uniform(-2, 2, (3, 4)),), id="_conj"),
]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=case_id)
def test_complex_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=case_id)
def test_complex_tangent_rule(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_rules_of_real_results_read_the_real_part_of_dy():
    # an imaginary part in the adjoint of a real value means nothing (it pairs with a real tangent)
    z = complex_away_from_axes(0.2, 2, (5,))
    for primitive in (np.abs, np.real, np.imag, np.angle):
        y = primitive(z)
        dy = uniform(-1, 1, (5,))
        (plain,) = rule(primitive)(dy, y, z)
        (with_imaginary,) = rule(primitive)(dy + 1j * uniform(-1, 1, (5,)), y, z)
        np.testing.assert_array_equal(plain, with_imaginary)


def test_real_rules_keep_their_real_formulas():
    x = away_from_zero(0.2, 2, (4,))
    np.testing.assert_array_equal(rule(np.abs)(1.5 * x, np.abs(x), x)[0], 1.5 * x * np.sign(x))
    np.testing.assert_array_equal(rule(np.arcsinh)(x, np.arcsinh(x), x)[0], x / np.hypot(x, 1.0))
    assert _conj(x) is x



# ----- Remainders, non-finite values, signs and I0: conventions -----


def test_remainders_match_the_percent_operator():
    import operator

    x1, x2 = _numerators, _divisors
    dy = uniform(-1, 1, (3, 4))
    expected = rule(operator.mod)(dy, x1 % x2, x1, x2)
    for primitive in (np.mod, np.remainder):
        got = rule(primitive)(dy, primitive(x1, x2), x1, x2)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-15)
    # fmod truncates where remainder floors: the slopes in x2 differ where signs differ
    d_x1, d_x2 = rule(np.fmod)(np.ones(4), np.fmod(x1[0], x2), x1[0], x2)
    np.testing.assert_array_equal(d_x1, np.ones(4))
    np.testing.assert_array_equal(d_x2, -np.trunc(x1[0] / x2))


def test_fmod_quotient_is_exact_where_the_division_rounds():
    # 0.3 / 0.1 is 2.9999999999999996 in floating point and fmod(0.3, 0.1) is 0.1 - 2**-55:
    # the quotient is 2, which the rule reads back from the result
    d_x1, d_x2 = rule(np.fmod)(1.0, np.fmod(0.3, 0.1), 0.3, 0.1)
    assert (d_x1, d_x2) == (1.0, -2.0)


def test_nan_to_num_passes_the_gradient_only_where_x_is_finite():
    x = np.array([1.5, np.nan, np.inf, -2.0, -np.inf])
    dy = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    (d_x,) = rule(np.nan_to_num)(dy, np.nan_to_num(x), x)
    np.testing.assert_array_equal(d_x, [1.0, 0.0, 0.0, 4.0, 0.0])
    t = tangent_rule(np.nan_to_num)((dy,), np.nan_to_num(x, nan=3.0), x, nan=3.0)
    np.testing.assert_array_equal(t, [1.0, 0.0, 0.0, 4.0, 0.0])
    # complex: the real and imaginary parts are replaced separately
    z = np.array([complex(1.0, np.nan), complex(np.inf, 2.0)])
    dz = np.array([1.0 + 2.0j, 3.0 + 4.0j])
    (d_z,) = rule(np.nan_to_num)(dz, np.nan_to_num(z), z)
    np.testing.assert_array_equal(d_z, [1.0, 4.0j])
    np.testing.assert_array_equal(tangent_rule(np.nan_to_num)((dz,), np.nan_to_num(z), z), [1.0, 4.0j])


def nan_to_num_loss(x):
    return np.sum(np.sin(np.nan_to_num(np.log(x), neginf=-5.0)) * x)


def test_nan_to_num_end_to_end_at_replaced_points():
    x = np.array([0.0, 0.5, 2.0])  # log(0) = -inf is replaced by -5
    with np.errstate(divide="ignore", invalid="ignore"):
        got = ssad.grad(nan_to_num_loss)(x)
        slope = ssad.jvp(nan_to_num_loss, (x,), (np.array([0.0, 1.0, -1.0]),))[1]
    # at 0: d/dx (sin(-5) * x) = sin(-5); elsewhere the chain rule through log
    expected = np.array([np.sin(-5.0), np.cos(np.log(0.5)) / 0.5 * 0.5 + np.sin(np.log(0.5)),
                         np.cos(np.log(2.0)) / 2.0 * 2.0 + np.sin(np.log(2.0))])
    # the adjoint of log at 0 is 0 * (1 / 0) = nan: the replaced element's gradient is
    # NaN through log, as in every reverse-mode system (docs/conventions.md, "Masking NaN")
    assert np.isnan(got[0])
    np.testing.assert_allclose(got[1:], expected[1:], rtol=1e-12)
    np.testing.assert_allclose(slope, expected[1] - expected[2], rtol=1e-12)


def test_nan_to_num_in_place_is_refused():
    x = np.array([1.0, np.nan])
    y = np.nan_to_num(x.copy(), copy=False)
    with pytest.raises(SsadError, match="copy=False"):
        rule(np.nan_to_num)(np.ones(2), y, x, False)


def test_nan_to_num_replacement_values_carry_no_gradient():
    def replaced(x, fill):
        return np.sum(np.nan_to_num(x, nan=fill))

    with pytest.raises(MissingRuleError):
        ssad.grad(replaced, wrt=1)(np.array([1.0, np.nan]), 2.0)


def test_copysign_slope_at_zero_is_zero_and_follows_the_sign_bit():
    x1 = np.array([0.0, 1.5, -1.5, 2.0])
    x2 = np.array([-1.0, -0.0, 3.0, np.nan])
    d_x1, d_x2 = rule(np.copysign)(np.ones(4), np.copysign(x1, x2), x1, x2)
    np.testing.assert_array_equal(d_x1, [0.0, -1.0, -1.0, 1.0])
    assert d_x2 is None


def test_nextafter_has_slope_one_in_its_first_argument():
    d_x1, d_x2 = rule(np.nextafter)(np.ones((2, 3)), np.nextafter(np.ones(3), 2.0), np.ones(3), 2.0)
    np.testing.assert_array_equal(d_x1, [2.0, 2.0, 2.0])
    assert d_x2 is None


def test_i1_matches_scipy_and_its_series_at_zero():
    special = pytest.importorskip("scipy.special")  # installed with the test extras; the rule itself needs no SciPy
    x = np.concatenate([np.linspace(-60.0, 60.0, 1201), [0.0, 1e-9, 19.999999, 20.0, 20.000001, 300.0, 700.0]])
    np.testing.assert_allclose(_i1(x), special.i1(x), rtol=4e-15, atol=0)
    assert _i1(0.0) == 0.0
    # I0'' = I1' = I0 - I1 / x, 1/2 at 0
    (d_x,) = rule(_i1)(1.0, _i1(0.0), 0.0)
    assert d_x == 0.5
    assert _i1(np.float32(2.0)).dtype == np.float32


def test_real_if_close_drops_the_imaginary_part_of_the_gradient_where_it_drops_it_from_the_value():
    z = uniform(-3, 3, (4,)) + 0j
    assert not np.iscomplexobj(np.real_if_close(z))
    check_rule(np.real_if_close, z)  # the imaginary direction makes the value complex, with a real part unchanged
    dy = uniform(-1, 1, (4,))
    (d_z,) = rule(np.real_if_close)(dy, np.real_if_close(z), z)
    np.testing.assert_array_equal(d_z, dy)
    # along real directions (where the result stays real) the tangent is the real part
    t = uniform(-1, 1, (4,)) + 1j * uniform(-1, 1, (4,))
    got = tangent_rule(np.real_if_close)((t,), np.real_if_close(z), z)
    assert not np.iscomplexobj(got)
    np.testing.assert_array_equal(got, np.real(t))
    # where the imaginary part is kept, the gradient is kept whole
    w = z + 1j
    np.testing.assert_array_equal(rule(np.real_if_close)(dy + 2j, np.real_if_close(w), w)[0], dy + 2j)


def test_frexp_and_ldexp_round_trip():
    x = away_from_zero(0.1, 50, (5,))
    mantissa, exponent = np.frexp(x)
    dy = uniform(-1, 1, (5,))
    (d_x,) = rule(np.frexp)((dy, np.zeros(5)), (mantissa, exponent), x)
    np.testing.assert_array_equal(d_x, dy / 2.0**exponent)
    d_m, d_e = rule(np.ldexp)(dy, x, mantissa, exponent)
    np.testing.assert_array_equal(d_m, dy * 2.0**exponent)
    assert d_e is None


_REMAINDER_AND_FRIENDS = (np.remainder, np.fmod, np.divmod, np.modf, np.ldexp, np.frexp, np.copysign, np.nextafter,
                          np.nan_to_num, np.real_if_close, np.i0, _i1)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.primitive in _REMAINDER_AND_FRIENDS and not np.iscomplexobj(c.args[0])], ids=case_id
)
def test_new_tangents_are_the_transposes_of_the_adjoints(case):
    for seed in range(3):
        assert_transpose(case.primitive, *case.args, seed=seed, **case.kwargs)


# ----- End to end: user functions through ssad.grad, ssad.jvp and ssad.hessian -----


def wrapped_phase(x):
    return np.sum(np.sin(np.mod(x * 3.0, 2.0)) * x) + np.sum(np.remainder(x, 0.7) ** 2) + np.sum((x % 1.3) ** 3)


def truncated_remainders(x):
    return np.sum(np.fmod(x * x + 1.0, x[::-1] + 3.0) ** 2) + np.sum(np.cos(np.modf(x * 2.5)[0]))


def divided(x):
    quotient, rest = np.divmod(x * 4.0, 1.5)
    return np.sum(rest ** 2 * quotient)


def mantissas(x):
    mantissa, exponent = np.frexp(x * 7.0)
    return np.sum(np.sin(mantissa) * exponent) + np.sum(np.ldexp(x, np.array([1, -1, 2, 0])) ** 2)


def signs(x):
    return np.sum(np.copysign(x * x + 0.5, x[::-1]) * x) + np.sum(np.sin(np.nextafter(x, np.inf)))


def bessel(x):
    return np.sum(np.i0(x) * np.sin(x)) + np.sum(np.log(np.i0(x * 9.0)))


def finite_parts(x):
    return np.sum(np.nan_to_num(x * x, posinf=1.0) * np.sin(x)) + np.sum(np.real_if_close(x + 0j) ** 3)


def smooth_maximum(x):
    return np.sum(np.logaddexp2(x, x[::-1] * 0.5) ** 2) + np.sum(np.sinc(x) * x)


ELEMENTWISE_USER_FUNCTIONS = [
    (wrapped_phase, np.array([0.45, -1.15, 2.3, 0.85])),
    (truncated_remainders, np.array([0.45, -1.15, 2.3, 0.85])),
    (divided, np.array([0.45, -1.15, 2.3, 0.85])),
    (mantissas, np.array([0.45, -1.15, 2.3, 0.85])),
    (signs, np.array([0.45, -1.15, 2.3, 0.85])),
    (bessel, np.array([0.45, -1.15, 2.3, 0.85])),
    (finite_parts, np.array([0.45, -1.15, 2.3, 0.85])),
    (smooth_maximum, np.array([0.45, -1.15, 2.3, 0.85])),
]
ELEMENTWISE_USER_IDS = [f.__name__ for f, _ in ELEMENTWISE_USER_FUNCTIONS]


@pytest.mark.parametrize("f, x", ELEMENTWISE_USER_FUNCTIONS, ids=ELEMENTWISE_USER_IDS)
def test_user_function_gradient_jvp_and_hessian(f, x):
    assert_close(f"{f.__name__} gradient", ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-7)
    v = np.array([0.7, -1.2, 0.9, 1.4])
    value, slope = ssad.jvp(f, (x,), (v,))
    step = 1e-6
    assert value == pytest.approx(f(x), rel=1e-12)
    assert_close(f"{f.__name__} jvp", slope, (f(x + step * v) - f(x - step * v)) / (2 * step), rtol=1e-6, atol=1e-7)
    hessian = ssad.hessian(f)(x)
    gradient = ssad.grad(f)
    columns = [(gradient(x + e) - gradient(x - e)) / 2e-5 for e in np.eye(x.size) * 1e-5]
    assert_close(f"{f.__name__} hessian", hessian, np.array(columns), rtol=1e-5, atol=1e-6)


SECOND_ORDER_CASES = [
    Case(np.fmod, (_numerators, _divisors), id="fmod"),
    Case(np.divmod, (_numerators, _divisors), id="divmod"),
    Case(np.frexp, (away_from_zero(0.1, 20, (3, 4)),), id="frexp"),
    Case(np.nan_to_num, (np.array([1.5, np.nan, np.inf, -2.0]),), {"posinf": 3.0}, id="nan_to_num-replaced"),
    Case(np.i0, (np.array([-21.0, 22.5, 19.5]),), id="i0-large"),
    Case(np.i0, (np.array([0.0, 3.0, -0.5]),), id="i0-zero"),
    Case(np.copysign, (away_from_zero(0.1, 3, (3, 4)), away_from_zero(0.1, 3, (4,))), id="copysign"),
]


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=case_id)
def test_second_order_variants(case):
    with np.errstate(invalid="ignore"):
        check_second_order(case.primitive, *case.args, **case.kwargs)


# ----- Against autograd (its answers checked against finite differences first) -----

agnp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")


def _programs(np_):
    """(name, loss of one real array written with the namespace np_, input); autograd has
    every function used here."""
    x = np.array([0.45, -1.15, 2.3, 0.85, -0.35])
    return [
        ("mod", lambda v: np_.sum(np_.sin(np_.mod(v * 3.0, 2.0)) * v), x),
        ("remainder", lambda v: np_.sum(np_.remainder(v * v, v[::-1] + 3.0) ** 2), x),
        ("nan_to_num", lambda v: np_.sum(np_.nan_to_num(v * 2.0) ** 3), x),
        ("real_if_close", lambda v: np_.sum(np_.real_if_close(v * (1 + 0j)) ** 3), x),
        ("logaddexp2", lambda v: np_.sum(np_.logaddexp2(v, v[::-1] * 0.5) ** 2), x),
        ("sinc", lambda v: np_.sum(np_.sinc(v) * v), x),
    ]


NUMPY_PROGRAMS = _programs(np)
AUTOGRAD_PROGRAMS = _programs(agnp)


@pytest.mark.parametrize("k", range(len(NUMPY_PROGRAMS)), ids=[p[0] for p in NUMPY_PROGRAMS])
def test_gradient_matches_autograd(k):
    name, program, x = NUMPY_PROGRAMS[k]
    theirs = autograd.grad(AUTOGRAD_PROGRAMS[k][1])(x)
    assert_close(f"autograd {name}", theirs, numerical_gradient(program, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(program)(x), theirs, rtol=1e-9, atol=1e-10)
