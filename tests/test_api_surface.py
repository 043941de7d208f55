"""The API surface an autograd or JAX user expects: any callable (a NumPy or SciPy function
with a rule, a partial, a bound method, a callable object), `elementwise_grad`,
`has_aux`, `vjp(..., wrt=)`, integer arguments, Hessian blocks, `hvp`, forward over
forward through `ssad.jvp`, one-element outputs, `flatten`, and the type information.

Every derivative is compared with central differences in float64, a closed form or
autograd, in reverse and forward mode, and at second order where it applies.
"""

import dataclasses
import functools
import inspect
import math
import pathlib
import types
import warnings
from typing import NamedTuple

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import numpy as np
import pytest
import scipy.optimize
import scipy.special

import ssad
from tests import oracle
from tests.programs import control, functions, straight

from .conftest import case_ids, float_positions

EPS = 1e-6
RTOL, ATOL = 1e-6, 1e-8


# ----- central differences -----


def differences(f, x, eps=EPS):
    """d f / d x by central differences, shaped `np.shape(f(x)) + np.shape(x)`."""
    x = np.asarray(x, dtype=np.float64)
    out_shape = np.shape(f(x if x.shape else float(x)))
    columns = []
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = eps
        up, down = x + step, x - step
        if not x.shape:
            up, down = float(up), float(down)
        columns.append((np.asarray(f(up), dtype=np.float64) - np.asarray(f(down), dtype=np.float64)) / (2 * eps))
    if not columns:
        return np.zeros(out_shape + x.shape)
    return np.moveaxis(np.array(columns), 0, -1).reshape(out_shape + x.shape)


def differences_at(f, args, position, eps=EPS):
    """Central differences of f(*args) with respect to args[position]."""

    def moved(value):
        changed = list(args)
        changed[position] = value
        return f(*changed)

    return differences(moved, args[position], eps)


def directional(f, x, v, eps=EPS):
    """The derivative of f at x along v, by central differences."""
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


def close(got, expected, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64), rtol, atol)


X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, -1.0, 2.0])


# ----- 1. any callable: a function with a rule -----


ELEMENTWISE = [np.sin, np.tanh, np.exp, scipy.special.expit, np.log1p]


@pytest.mark.parametrize("primitive", ELEMENTWISE)
def test_grad_of_an_elementwise_function_with_a_rule(primitive):
    slope = ssad.grad(primitive)
    curvature = ssad.grad(ssad.grad(primitive))
    for s in (0.3, -0.45):
        close(slope(s), differences(primitive, s))
        close(curvature(s), differences(slope, s))
        value, tangent = ssad.jvp(primitive, (s,), (1.0,))
        assert value == pytest.approx(float(primitive(s)), rel=1e-15)
        close(tangent, differences(primitive, s))
        close(ssad.jvp(slope, (s,), (1.0,))[1], differences(slope, s))  # forward over reverse
        value, gradient = ssad.value_and_grad(primitive)(s)
        assert value == pytest.approx(float(primitive(s)), rel=1e-15) and gradient == pytest.approx(slope(s))
    close(ssad.jacobian(primitive)(X), differences(primitive, X))
    d_x = ssad.vjp(primitive, X)[1](V)
    assert isinstance(d_x, tuple) and len(d_x) == 1
    close(d_x[0], V @ differences(primitive, X))


def test_second_derivatives_of_sin_in_closed_form():
    assert ssad.grad(ssad.grad(np.sin))(0.7) == pytest.approx(-np.sin(0.7), rel=1e-14)
    assert ssad.hessian(np.sin)(0.7) == pytest.approx(-np.sin(0.7), rel=1e-14)
    assert ssad.grad(ssad.grad(ssad.grad(np.sin)))(0.7) == pytest.approx(-np.cos(0.7), rel=1e-14)
    assert ssad.grad(math.exp)(0.4) == pytest.approx(math.exp(0.4), rel=1e-15)
    assert ssad.grad(scipy.special.expit)(0.0) == pytest.approx(0.25, rel=1e-15)


REDUCTIONS = [np.sum, np.mean, np.prod, np.linalg.norm, np.max, scipy.special.logsumexp]


@pytest.mark.parametrize("primitive", REDUCTIONS)
def test_grad_jvp_and_hessian_of_a_reduction_with_a_rule(primitive):
    gradient = ssad.grad(primitive)(X)
    assert gradient.shape == X.shape
    close(gradient, differences(primitive, X))
    close(ssad.jvp(primitive, (X,), (V,))[1], directional(primitive, X, V))
    close(ssad.hessian(primitive)(X), differences(ssad.grad(primitive), X), atol=1e-7)
    close(ssad.hvp(primitive)(X, V), ssad.hessian(primitive)(X) @ V, rtol=1e-12, atol=1e-12)


def test_a_function_with_a_rule_takes_the_optional_parameters_its_rule_understands():
    matrix = np.array([[0.3, -0.7, 1.1], [2.0, 0.5, -1.5]])
    rows = ssad.jacobian(np.sum)(matrix, axis=1)
    assert rows.shape == (2, 2, 3)
    close(rows, differences(lambda m: np.sum(m, axis=1), matrix))
    value, pullback = ssad.vjp(np.sum, matrix, axis=0, keepdims=True)
    assert value.shape == (1, 3)
    (d_matrix,) = pullback(np.array([[1.0, 2.0, 3.0]]))
    close(d_matrix, np.array([[1.0, 2.0, 3.0]] * 2))
    close(ssad.jvp(np.mean, (matrix,), (np.ones((2, 3)),))[1], 1.0)
    assert "out" not in inspect.signature(ssad.grad(np.sum)).parameters
    with pytest.raises(TypeError):
        ssad.grad(np.sum)(matrix, out=np.zeros(3))


def test_a_function_with_a_rule_is_differentiated_by_position_and_name():
    a, b = np.array([1.0, 2.0]), np.array([0.5, -0.25])
    close(ssad.grad(np.dot, wrt=1)(a, b), a)
    d_a, d_b = ssad.grad(np.dot, wrt=("b", "a"))(a, b)
    close(d_a, a)
    close(d_b, b)
    close(ssad.grad(np.arctan2, wrt=(0, 1))(0.3, 0.8), [0.8 / 0.73, -0.3 / 0.73], rtol=1e-14)


def test_each_stand_in_computes_what_its_primitive_computes():
    """Sweep every per-rule sample: the stand-in ssad compiles for a function with a rule
    returns what the function returns, or refuses (TypeError) arguments it does not take;
    never a different value."""
    from ssad.stand_ins import as_function
    from tests.oracle import rule_cases

    compared = 0
    for case in _quietly(rule_cases):
        primitive = case.primitive
        if not callable(primitive) or isinstance(primitive, type):
            continue
        function = as_function(primitive)
        if function is None or function is primitive:
            continue
        try:
            expected = _quietly(primitive, *case.args, **case.kwargs)
        except Exception:  # noqa: BLE001 - a sample meant to make the primitive raise
            continue
        try:
            got = _quietly(function, *case.args, **case.kwargs)
        except TypeError:
            continue  # an argument the stand-in does not take (`out`, a positional keepdims)
        compared += 1
        for g, e in zip(_leaves(got), _leaves(expected), strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e), err_msg=case.id or repr(primitive))
    assert compared > 500


def _quietly(f, *args, **kwargs):
    """f(*args, **kwargs) with NumPy's deprecation warnings silenced (samples of old call forms)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


# ----- 1. any callable: partials, bound methods, callable objects -----


def weighted(x, a, b=2.0):
    return np.sum(np.sin(x) * a) * b + a ** 3


def weighted_autograd(x, a, b=2.0):
    return anp.sum(anp.sin(x) * a) * b + a ** 3


def test_grad_of_a_partial_with_a_keyword_bound():
    partial = functools.partial(weighted, a=1.5)
    gradient = ssad.grad(partial)(X)
    close(gradient, differences(lambda x: weighted(x, 1.5), X))
    close(gradient, autograd.grad(weighted_autograd)(X, 1.5), rtol=1e-12)
    # `a` is keyword-only now, with its bound value as default: it is named, and may be overridden
    assert ssad.grad(partial, wrt="a")(X) == pytest.approx(float(differences(lambda a: weighted(X, a), 1.5)), rel=RTOL)
    close(ssad.grad(partial)(X, a=-0.5), differences(lambda x: weighted(x, -0.5), X))
    close(ssad.jvp(partial, (X,), (V,))[1], directional(lambda x: weighted(x, 1.5), X, V))
    hessian = ssad.hessian(partial)(X)
    close(hessian, autograd.hessian(weighted_autograd)(X, 1.5), rtol=1e-12, atol=1e-14)
    close(hessian, differences(ssad.grad(partial), X), atol=1e-7)
    close(ssad.hvp(partial)(X, V), hessian @ V, rtol=1e-12)
    with pytest.raises(ssad.SsadError, match="out of range.*1 positional parameter"):
        ssad.grad(partial, wrt=1)


def test_grad_of_a_partial_with_positional_arguments_bound():
    partial = functools.partial(weighted, X)  # leaves (a, b=2.0)
    assert ssad.grad(partial)(1.5) == pytest.approx(float(differences(lambda a: weighted(X, a), 1.5)), rel=RTOL)
    d_a, d_b = ssad.grad(partial, wrt=(0, 1))(1.5, 3.0)
    assert d_b == pytest.approx(float(np.sum(np.sin(X)) * 1.5), rel=1e-14)
    assert d_a == pytest.approx(float(np.sum(np.sin(X)) * 3.0 + 3 * 1.5 ** 2), rel=1e-14)
    assert ssad.grad(ssad.grad(partial))(1.5) == pytest.approx(6 * 1.5, rel=1e-14)
    value, pullback = ssad.vjp(partial, 1.5, 3.0)
    assert value == pytest.approx(weighted(X, 1.5, 3.0), rel=1e-15)
    got = pullback(1.0)
    assert got[0] == pytest.approx(d_a, rel=1e-14) and got[1] == pytest.approx(d_b, rel=1e-14)
    assert ssad.jvp(partial, (1.5, 3.0), (1.0, 0.0))[1] == pytest.approx(d_a, rel=1e-14)


def test_a_partial_of_a_function_with_a_rule_and_a_partial_of_a_partial():
    along_rows = functools.partial(np.sum, axis=1)
    matrix = np.array([[0.3, -0.7, 1.1], [2.0, 0.5, -1.5]])
    close(ssad.jacobian(along_rows)(matrix), differences(along_rows, matrix))
    close(ssad.jvp(along_rows, (matrix,), (np.ones((2, 3)),))[1], [3.0, 3.0])
    inner = functools.partial(weighted, b=4.0)
    outer = functools.partial(inner, a=0.5)
    close(ssad.grad(outer)(X), differences(lambda x: weighted(x, 0.5, 4.0), X))
    with pytest.raises(ssad.SsadError, match="binds arguments"):
        ssad.grad(functools.partial(np.sin, nonsense=1.0))


class Layer:
    def __init__(self, w):
        self.w = w

    def loss(self, x, scale=1.0):
        return np.sum(np.tanh(self.w * x) ** 2) * scale

    def outputs(self, x):
        return np.tanh(self.w * x)

    def __call__(self, x):
        return np.sum(self.w * x ** 3)


def _layer_loss_autograd(x, w, scale=1.0):
    return anp.sum(anp.tanh(w * x) ** 2) * scale


def test_grad_of_a_bound_method_counts_parameters_after_self():
    layer = Layer(np.array([1.0, -2.0, 0.5]))
    gradient = ssad.grad(layer.loss)(X)
    close(gradient, differences(layer.loss, X))
    close(gradient, autograd.grad(_layer_loss_autograd)(X, layer.w), rtol=1e-12)
    assert ssad.grad(layer.loss, wrt=1)(X, 2.0) == pytest.approx(layer.loss(X), rel=1e-14)
    assert ssad.grad(layer.loss, wrt="scale")(X, 2.0) == pytest.approx(layer.loss(X), rel=1e-14)
    close(ssad.jvp(layer.loss, (X,), (V,))[1], directional(layer.loss, X, V))
    close(ssad.hessian(layer.loss)(X), autograd.hessian(_layer_loss_autograd)(X, layer.w), rtol=1e-12, atol=1e-14)
    close(ssad.jacobian(layer.outputs)(X), differences(layer.outputs, X))
    (d_x,) = ssad.vjp(layer.outputs, X)[1](V)
    close(d_x, V @ differences(layer.outputs, X))
    close(ssad.value_and_grad(layer.loss)(X)[0], layer.loss(X), rtol=1e-15)


def test_grad_of_a_callable_object():
    layer = Layer(np.array([1.0, -2.0, 0.5]))
    close(ssad.grad(layer)(X), 3 * layer.w * X ** 2, rtol=1e-14)
    close(ssad.hessian(layer)(X), np.diag(6 * layer.w * X), rtol=1e-14)
    close(ssad.jvp(layer, (X,), (V,))[1], directional(layer, X, V))
    close(ssad.grad(layer)(X), differences(layer, X))


def test_callables_ssad_cannot_differentiate_are_refused_with_what_to_do():
    vectorized = np.frompyfunc(math.sin, 1, 1)
    for api in (ssad.grad, ssad.value_and_grad, ssad.elementwise_grad, ssad.hessian, ssad.hvp, ssad.jacobian):
        with pytest.raises(ssad.SsadError, match=r"ssad\.\w+ differentiates a Python function.*register a rule"):
            api(vectorized)
    with pytest.raises(ssad.SsadError, match=r"ssad\.vjp differentiates"):
        ssad.vjp(print, 1.0)
    with pytest.raises(ssad.SsadError, match=r"ssad\.jvp differentiates"):
        ssad.jvp(functools.partial(print, "x"), (1.0,), (1.0,))
    with pytest.raises(ssad.SsadError, match=r"ssad\.show differentiates"):
        ssad.show(vectorized)
    with pytest.raises(ssad.SsadError, match="cannot be called"):
        ssad.grad(3.0)


def test_show_prints_the_code_of_a_function_with_a_rule_and_of_a_partial():
    shown = str(ssad.show(np.sin))
    assert "def grad_sin(x):" in shown and "np.cos(x)" in shown
    shown = str(ssad.show(functools.partial(weighted, a=1.5)))
    assert "def grad_weighted(x, *, a=1.5, b=2.0):" in shown


# ----- 2. elementwise_grad -----


def bump(x):
    return np.sin(x) * x ** 2 + np.exp(-x)


def bump_autograd(x):
    return anp.sin(x) * x ** 2 + anp.exp(-x)


def test_elementwise_grad_against_autograd_and_differences():
    grid = np.array([[0.3, -0.7, 1.1], [2.0, 0.5, -1.5]])
    first = ssad.elementwise_grad(bump)(grid)
    assert first.shape == grid.shape and first.dtype == np.float64
    close(first, autograd.elementwise_grad(bump_autograd)(grid), rtol=1e-13)
    close(first, np.einsum("ijij->ij", differences(bump, grid)))
    second = ssad.elementwise_grad(ssad.elementwise_grad(bump))(grid)
    close(second, autograd.elementwise_grad(autograd.elementwise_grad(bump_autograd))(grid), rtol=1e-12)
    # forward over reverse: the tangent of the elementwise derivative along a direction
    direction = np.ones_like(grid)
    close(ssad.jvp(ssad.elementwise_grad(bump), (grid,), (direction,))[1], second, rtol=1e-12)
    assert ssad.elementwise_grad(bump)(0.4) == pytest.approx(float(differences(bump, 0.4)), rel=RTOL)


def test_elementwise_grad_of_functions_with_rules_and_by_wrt():
    close(ssad.elementwise_grad(np.tanh)(X), 1 - np.tanh(X) ** 2, rtol=1e-14)
    close(ssad.elementwise_grad(ssad.elementwise_grad(np.tanh))(X),
          autograd.elementwise_grad(autograd.elementwise_grad(anp.tanh))(X), rtol=1e-12)
    close(ssad.elementwise_grad(scipy.special.expit)(X),
          autograd.elementwise_grad(aspecial.expit)(X), rtol=1e-13)

    def scaled(s, x):
        return np.tanh(s * x)

    close(ssad.elementwise_grad(scaled, wrt=1)(0.7, X), 0.7 * (1 - np.tanh(0.7 * X) ** 2), rtol=1e-14)
    close(ssad.elementwise_grad(scaled, wrt="x")(0.7, X), 0.7 * (1 - np.tanh(0.7 * X) ** 2), rtol=1e-14)


# ----- 3. has_aux -----


def loss_with_stats(x, s):
    h = np.tanh(x * s)
    value = np.sum(h ** 2)
    return value, {"h": h, "positive": np.mean(h > 0), "note": "tanh", "floors": _FLOOR(h)}


_FLOOR = np.frompyfunc(math.floor, 1, 1)  # a C function ssad has no rule for


def _value_only(x, s):
    return np.sum(np.tanh(x * s) ** 2)


def test_grad_with_aux_returns_the_gradient_and_the_aux_untouched():
    gradient, aux = ssad.grad(loss_with_stats, has_aux=True)(X, 2.0)
    close(gradient, differences_at(_value_only, (X, 2.0), 0))
    close(gradient, autograd.grad(lambda x: anp.sum(anp.tanh(x * 2.0) ** 2))(X), rtol=1e-13)
    expected = loss_with_stats(X, 2.0)[1]
    assert sorted(aux) == ["floors", "h", "note", "positive"]
    close(aux["h"], expected["h"], rtol=0, atol=0)
    assert aux["note"] == "tanh" and aux["positive"] == expected["positive"]
    assert list(aux["floors"]) == list(expected["floors"])  # made by a function without a rule: never differentiated


def test_value_and_grad_with_aux_and_a_tuple_wrt():
    (value, aux), (d_x, d_s) = ssad.value_and_grad(loss_with_stats, wrt=(0, "s"), has_aux=True)(X, 2.0)
    assert value == pytest.approx(_value_only(X, 2.0), rel=1e-15)
    assert aux["note"] == "tanh"
    close(d_x, differences_at(_value_only, (X, 2.0), 0))
    close(d_s, differences_at(_value_only, (X, 2.0), 1))


def returns_in_branches(x, flag):
    if flag > 0:
        out = (np.sum(x ** 3), ["cubes", x ** 3])
        return out
    return np.sum(x ** 2), None


def test_aux_from_any_return_and_through_partials_and_methods():
    gradient, aux = ssad.grad(returns_in_branches, has_aux=True)(X, 1)
    close(gradient, 3 * X ** 2, rtol=1e-14)
    assert aux[0] == "cubes"
    close(aux[1], X ** 3, rtol=0, atol=0)
    gradient, aux = ssad.grad(returns_in_branches, has_aux=True)(X, -1)
    close(gradient, 2 * X, rtol=1e-14)
    assert aux is None
    gradient, aux = ssad.grad(functools.partial(loss_with_stats, s=2.0), has_aux=True)(X)
    close(gradient, differences_at(_value_only, (X, 2.0), 0))
    assert aux["note"] == "tanh"

    class Model:
        def __init__(self, s):
            self.s = s

        def loss(self, x):
            value = np.sum(np.tanh(x * self.s) ** 2)
            return value, str(round(float(value), 3))

    gradient, aux = ssad.grad(Model(2.0).loss, has_aux=True)(X)
    close(gradient, differences_at(_value_only, (X, 2.0), 0))
    assert aux == str(round(float(_value_only(X, 2.0)), 3))
    gradient, aux = ssad.grad(lambda x: (np.sum(np.sin(x)), np.cos(x)), has_aux=True)(X)
    close(gradient, np.cos(X), rtol=1e-14)
    close(aux, np.cos(X), rtol=0, atol=0)


def test_aux_is_not_differentiated_by_the_generated_code():
    from ssad.backend.driver import compiled
    from ssad.runtime.handles import VJP
    from ssad.stand_ins import as_function

    entry = compiled(as_function(loss_with_stats, "aux"), ("x",), VJP)
    backward = entry.source[entry.source.index("def backward"):]
    code = "\n".join(line for line in backward.splitlines() if not line.strip().startswith("#"))
    assert "d_value = d_result[0]" in code
    for aux_value in ("h_gt_0", "mean", "FLOOR", "stop_gradient", "d_result[1]"):
        assert aux_value not in code


def test_has_aux_errors_say_what_to_return():
    with pytest.raises(ssad.SsadError, match=r"returns a pair \(value, aux\).*returned a float"):
        ssad.grad(lambda x: np.sum(x) * 1.0, has_aux=True)(1.0)
    with pytest.raises(ssad.SsadError, match="returned a tuple of 3 items"):
        ssad.grad(lambda x: (x, x, x), has_aux=True)(1.0)
    with pytest.raises(ssad.SsadError, match="returns a scalar"):
        ssad.grad(lambda x: (x * 2.0, None), has_aux=True)(X)
    gradient_with_aux = ssad.grad(loss_with_stats, has_aux=True)
    with pytest.raises(ssad.SsadError, match=r"has_aux=True\) is not supported"):
        ssad.grad(gradient_with_aux)


# ----- 4. vjp with wrt, and integer arguments -----


def spread(x, s, *, offset=0.0):
    return np.tanh(x * s) + offset * s


def spread_autograd(x, s, offset=0.0):
    return anp.tanh(x * s) + offset * s


def test_vjp_with_wrt_gives_only_the_adjoints_named():
    value, pullback = ssad.vjp(spread, X, 2.0, wrt=1)
    close(value, spread(X, 2.0), rtol=1e-15)
    d_s = pullback(V)
    assert isinstance(d_s, float)
    assert d_s == pytest.approx(float(V @ differences_at(spread, (X, 2.0), 1)), rel=RTOL)
    assert d_s == pytest.approx(float(autograd.make_vjp(spread_autograd, 1)(X, 2.0)[0](V)), rel=1e-13)
    d_s2, d_x = ssad.vjp(spread, X, 2.0, wrt=("s", 0))[1](V)
    assert d_s2 == pytest.approx(d_s, rel=1e-15)
    close(d_x, V @ differences_at(spread, (X, 2.0), 0))
    # keyword arguments still reach f, and may be named
    value, pullback = ssad.vjp(spread, X, 2.0, offset=0.5, wrt="offset")
    close(value, spread(X, 2.0, offset=0.5), rtol=1e-15)
    assert pullback(V) == pytest.approx(float(np.sum(V) * 2.0), rel=1e-15)
    d_x, d_s, d_offset = ssad.vjp(spread, X, 2.0, offset=0.5, wrt=(0, 1, "offset"))[1](V)
    assert d_s == pytest.approx(float(V @ differences(lambda s: spread(X, s, offset=0.5), 2.0)), rel=RTOL)
    # the default: one adjoint per positional argument
    assert len(ssad.vjp(spread, X, 2.0)[1](V)) == 2
    with pytest.raises(ssad.SsadError, match="not a parameter"):
        ssad.vjp(spread, X, 2.0, wrt="y")


def collect(*xs):
    return np.sum(xs[0] * xs[1]) + xs[1][0]


def test_vjp_wrt_star_args_and_functions_with_rules():
    a, b = np.array([1.0, 2.0]), np.array([0.5, -1.5])
    d_xs = ssad.vjp(collect, a, b, wrt="xs")[1](1.0)
    assert isinstance(d_xs, tuple)
    close(d_xs[0], b)
    close(d_xs[1], a + np.array([1.0, 0.0]))
    close(ssad.vjp(np.multiply, a, b, wrt=1)[1](np.ones(2)), a)


def scaled_rest(a, *rest):
    return a * np.sum(rest[0]) + np.sin(rest[1])


def test_jvp_of_star_args_takes_a_tangent_per_argument():
    # the arguments past the named parameters go to `*xs`, whose tangent is a tuple (zeros for None);
    # before, "collect takes 0 positional arguments, got 2"
    a, b = np.array([1.0, 2.0]), np.array([0.5, -1.5])
    value, tangent = ssad.jvp(collect, (a, b), (V[:2], None))
    assert value == pytest.approx(collect(a, b))
    close(tangent, V[:2] @ b)
    w = np.array([0.3, -0.2])
    d_a, d_b = ssad.vjp(collect, a, b, wrt="xs")[1](1.0)
    close(ssad.jvp(collect, (a, b), (V[:2], w))[1], d_a @ V[:2] + d_b @ w)
    args = (0.5, a, 0.3)
    for tangents in ((1.0, None, None), (None, V[:2], None), (None, None, 1.0), (1.0, V[:2], -2.0)):
        expected = sum(directional(lambda u, k=k: scaled_rest(*args[:k], u, *args[k + 1:]), args[k], t)
                       for k, t in enumerate(tangents) if t is not None)
        assert ssad.jvp(scaled_rest, args, tangents)[1] == pytest.approx(float(expected), rel=RTOL)


def passes_on(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@passes_on
def decorated(x, y):
    return np.sum(x * y)


def test_a_wrt_past_the_named_parameters_says_how_to_name_the_rest():
    with pytest.raises(ssad.SsadError, match=r"0 positional parameters \(\); the rest are `\*xs`: differentiate "
                                             r"them with wrt='xs'"):
        ssad.grad(collect)(X, X)
    # a decorator's wrapper passes on `*args, **kwargs`: the way out is the function it wraps
    with pytest.raises(ssad.SsadError, match=r"as a decorator's wrapper does.*`f.__wrapped__`"):
        ssad.grad(decorated)(X, V)
    close(ssad.grad(decorated.__wrapped__)(X, V), V)


def indexed(x, i, n, scale):
    total = 0.0
    for k in range(n):
        total = total + x[i] ** 2 * (k + 1)
    return total * scale + np.sum(x[np.array([i, 0])])


def test_integer_arguments_get_a_float_zero_everywhere():
    args = (X, 1, 3, 2)
    d_x, d_i, d_n, d_scale = ssad.grad(indexed, wrt=(0, 1, 2, 3))(*args)
    close(d_x, differences_at(indexed, args, 0))
    assert type(d_i) is float and d_i == 0.0 and type(d_n) is float and d_n == 0.0
    assert type(d_scale) is float  # an integer used as a number has the derivative of its value
    assert d_scale == pytest.approx(float(differences(lambda s: indexed(X, 1, 3, s), 2.0)), rel=RTOL)
    adjoints = ssad.vjp(indexed, *args)[1](1.0)
    assert adjoints[1] == 0.0 and adjoints[2] == 0.0 and type(adjoints[1]) is float
    assert ssad.vjp(indexed, *args, wrt=1)[1](1.0) == 0.0
    assert ssad.jacobian(indexed, wrt=1)(*args) == 0.0
    blocks = ssad.hessian(indexed, wrt=(0, 1))(*args)
    assert blocks[0][1].shape == (3,) and not np.any(blocks[0][1]) and blocks[1][1] == 0.0
    close(blocks[0][0], differences(lambda x: ssad.grad(indexed)(x, 1, 3, 2), X), atol=1e-7)
    # forward mode takes None or any tangent for an index, and gives the same
    along = ssad.jvp(indexed, args, (V, None, None, None))[1]
    assert ssad.jvp(indexed, args, (V, 1.0, 1.0, None))[1] == pytest.approx(along, rel=1e-15)
    assert along == pytest.approx(float(directional(lambda x: indexed(x, 1, 3, 2), X, V)), rel=RTOL)


def test_integer_arrays_get_float64_and_bools_none():
    def gather(x, index, mask, flag):
        return np.sum(x[index] ** 2 * mask) * (2.0 if flag else 1.0)

    index, mask = np.array([0, 2]), np.array([True, False])
    d_x, d_index, d_mask, d_flag = ssad.grad(gather, wrt=(0, 1, 2, 3))(X, index, mask, True)
    close(d_x, differences_at(gather, (X, index, mask, True), 0))
    assert d_index.dtype == np.float64 and d_index.shape == (2,) and not np.any(d_index)
    assert d_mask is None and d_flag is None
    adjoints = ssad.vjp(gather, X, index, mask, True)[1](1.0)
    assert adjoints[2] is None and adjoints[3] is None and not np.any(adjoints[1])
    assert ssad.jacobian(gather, wrt=2)(X, index, mask, True).shape == (2,)


# ----- 5. Hessian blocks -----


def coupled(x, y, s):
    return np.sum(np.sin(x) * y[:3]) * s + np.sum(y ** 2) * s ** 2 + np.prod(x)


def coupled_autograd(x, y, s):
    return anp.sum(anp.sin(x) * y[:3]) * s + anp.sum(y ** 2) * s ** 2 + anp.prod(x)


Y = np.array([[0.2, -0.4], [1.3, 0.6]]).ravel()


def test_hessian_blocks_of_a_tuple_wrt():
    args = (X, Y, 0.8)
    blocks = ssad.hessian(coupled, wrt=(0, 1, 2))(*args)
    assert isinstance(blocks, tuple) and all(isinstance(row, tuple) and len(row) == 3 for row in blocks)
    shapes = [np.shape(a) for a in args]
    for i in range(3):
        for j in range(3):
            assert blocks[i][j].shape == shapes[i] + shapes[j]
            expected = autograd.jacobian(autograd.grad(coupled_autograd, i), j)(*args)
            close(blocks[i][j], expected, rtol=1e-12, atol=1e-14)
    for i in range(3):  # and against central differences of the gradient
        gradient = ssad.grad(coupled, wrt=i)
        for j in range(3):
            close(blocks[i][j], differences_at(gradient, args, j), atol=1e-7)
    close(blocks[0][1], np.swapaxes(blocks[1][0], 0, 1), rtol=1e-12)


def test_hessian_blocks_by_name_of_a_partial_and_of_matrices():
    partial = functools.partial(coupled, s=0.8)
    (hxx, hxy), (hyx, hyy) = ssad.hessian(partial, wrt=("y", "x"))(X, Y)
    expected = autograd.hessian(lambda y: coupled_autograd(X, y, 0.8))(Y)
    close(hxx, expected, rtol=1e-12, atol=1e-14)
    close(hyy, autograd.hessian(lambda x: coupled_autograd(x, Y, 0.8))(X), rtol=1e-12, atol=1e-14)
    close(hxy, autograd.jacobian(autograd.grad(lambda y, x: coupled_autograd(x, y, 0.8)), 1)(Y, X), rtol=1e-12)

    def bilinear(A, B):
        return np.sum(np.tanh(A @ B))

    A, B = np.array([[0.3, -0.5], [0.9, 0.1]]), np.array([[1.0, 0.2, -0.3], [0.4, -0.8, 0.5]])
    ((haa, hab), (hba, hbb)) = ssad.hessian(bilinear, wrt=(0, 1))(A, B)
    assert haa.shape == (2, 2, 2, 2) and hab.shape == (2, 2, 2, 3) and hbb.shape == (2, 3, 2, 3)
    close(hab, autograd.jacobian(autograd.grad(lambda a, b: anp.sum(anp.tanh(a @ b))), 1)(A, B), rtol=1e-12)
    close(hba, differences_at(ssad.grad(bilinear, wrt=1), (A, B), 0), atol=1e-7)
    with pytest.raises(ssad.SsadError, match="made by ssad.hessian with a tuple wrt"):
        ssad.jacobian(ssad.hessian(bilinear, wrt=(0, 1)))


# ----- 6. hvp -----


def test_hvp_is_the_hessian_times_the_vector():
    args = (X, Y, 0.8)
    product = ssad.hvp(coupled)(*args, V)
    hessian = ssad.hessian(coupled)(*args)
    close(product, hessian @ V, rtol=1e-12, atol=1e-14)
    close(product, autograd.hessian_tensor_product(coupled_autograd)(*args, V), rtol=1e-12, atol=1e-14)
    close(product, directional(lambda x: ssad.grad(coupled)(x, Y, 0.8), X, V))
    u = np.linspace(-1.0, 1.0, 4)
    close(ssad.hvp(coupled, wrt="y")(*args, u), ssad.hessian(coupled, wrt=1)(*args) @ u, rtol=1e-12, atol=1e-14)
    assert ssad.hvp(coupled, wrt=2)(*args, 1.5) == pytest.approx(float(ssad.hessian(coupled, wrt=2)(*args)) * 1.5)


def test_hvp_of_a_tuple_wrt_is_the_tuple_of_block_products():
    args = (X, Y, 0.8)
    u = np.linspace(-1.0, 1.0, 4)
    d_x, d_y, d_s = ssad.hvp(coupled, wrt=(0, 1, 2))(*args, (V, u, 0.5))
    blocks = ssad.hessian(coupled, wrt=(0, 1, 2))(*args)
    vectors = (V, u, 0.5)
    for got, row in zip((d_x, d_y, d_s), blocks, strict=True):
        expected = sum(np.tensordot(block, w, axes=np.ndim(w)) for block, w in zip(row, vectors, strict=True))
        close(got, expected, rtol=1e-12, atol=1e-13)
    assert isinstance(d_s, float)


def test_hvp_of_methods_and_keywords_and_its_errors():
    layer = Layer(np.array([1.0, -2.0, 0.5]))
    close(ssad.hvp(layer.loss)(X, V, scale=3.0),
          autograd.hessian(_layer_loss_autograd)(X, layer.w, 3.0) @ V, rtol=1e-12, atol=1e-14)
    with pytest.raises(ssad.SsadError, match="v last"):
        ssad.hvp(coupled, wrt=(0, 1))(X, Y, 0.8, V)
    with pytest.raises(ssad.SsadError, match="takes its arguments and then the vector"):
        ssad.hvp(coupled)()
    with pytest.raises(ssad.SsadError, match="made by ssad.hvp"):
        ssad.grad(ssad.hvp(coupled))


# ----- 7. forward over forward, and Jacobians of Jacobians -----


def wave(x):
    return np.sin(x) * x ** 2


def test_jvp_of_jvp_is_the_second_derivative():
    def slope(x):
        return ssad.jvp(wave, (x,), (1.0,))[1]

    for x0 in (0.7, -1.3):
        value, curvature = ssad.jvp(slope, (x0,), (1.0,))
        assert value == pytest.approx(np.cos(x0) * x0 ** 2 + 2 * x0 * np.sin(x0), rel=1e-14)
        assert curvature == pytest.approx(-np.sin(x0) * x0 ** 2 + 4 * x0 * np.cos(x0) + 2 * np.sin(x0), rel=1e-13)
        assert curvature == pytest.approx(float(differences(slope, x0)), rel=RTOL)
    assert ssad.jvp(lambda x: ssad.jvp(wave, (x,), (1.0,))[1], (0.7,), (1.0,))[1] == pytest.approx(
        ssad.grad(ssad.grad(wave))(0.7), rel=1e-13)


def scaled_wave(x, *, scale=2.0, d_y=3.0):  # keywords of its own, one named like a tangent
    return np.sin(x) * scale * d_y


def test_jvp_of_jvp_of_a_function_with_keywords_and_a_partial():
    def slope(x):
        return ssad.jvp(scaled_wave, (x,), (1.0,))[1]

    assert ssad.jvp(slope, (0.5,), (1.0,))[1] == pytest.approx(-6.0 * np.sin(0.5), rel=1e-14)

    def partial_slope(x):
        return ssad.jvp(functools.partial(weighted, a=1.5), (x,), (V,))[1]

    close(ssad.jvp(partial_slope, (X,), (V,))[1], V @ autograd.hessian(weighted_autograd)(X, 1.5) @ V, rtol=1e-12)


def _piece(x, k):
    return np.sin(x) * k


def _composed(x):
    return _piece(x, 2.0) ** 2 + _piece(x * 2.0, 1.0)


def _composed_autograd(x):
    return (anp.sin(x) * 2.0) ** 2 + anp.sin(x * 2.0)


def _series(x, n):
    if n == 0:
        return 1.0
    return 1.0 + x * _series(x, n - 1)


def test_jvp_of_jvp_through_the_functions_it_calls_and_recursion():
    def slope(x):
        return ssad.jvp(_composed, (x,), (1.0,))[1]

    for x0 in (0.4, -1.2):
        second = autograd.grad(autograd.grad(_composed_autograd))(x0)
        assert ssad.jvp(slope, (x0,), (1.0,))[1] == pytest.approx(second, rel=1e-13)

    def series_slope(x):
        return ssad.jvp(_series, (x, 4), (1.0, None))[1]

    # d2/dx2 (1 + x + x^2 + x^3 + x^4) = 2 + 6 x + 12 x^2
    assert ssad.jvp(series_slope, (0.3,), (1.0,))[1] == pytest.approx(2 + 6 * 0.3 + 12 * 0.09, rel=1e-14)
    assert ssad.jvp(series_slope, (0.3,), (1.0,))[1] == pytest.approx(float(differences(series_slope, 0.3)), rel=RTOL)


_CORPUS_IDS = [f"straight/{i}" for i in case_ids(straight.CASES)] + [
    f"control/{i}" for i in case_ids(control.CASES)] + [f"functions/{i}" for i in case_ids(functions.CASES)]
# the programs with a float argument (or a float array) to take the second derivative by
CORPUS, CORPUS_IDS = zip(*[
    (case, name)
    for case, name in zip([*straight.CASES, *control.CASES, *functions.CASES], _CORPUS_IDS, strict=True)
    if float_positions(case[1])
], strict=True)


def _along(function, args, p, v):
    """x -> the derivative of function at args (x in place p) along v, by ssad.jvp."""
    before, after = tuple(args[:p]), tuple(args[p + 1:])
    tangents = tuple(v if i == p else None for i in range(len(args)))

    def along(x):
        return ssad.jvp(function, before + (x,) + after, tangents)[1]

    return along


@pytest.mark.parametrize("function, args", CORPUS, ids=CORPUS_IDS)
def test_jvp_of_jvp_on_the_program_corpora(function, args):
    """Forward over forward, `ssad.jvp(x -> ssad.jvp(f, x, v)[1], x, v)`, is v' H v: against
    autograd's Hessian-vector product where autograd runs the program, else central
    differences of the inner jvp. Through a call of a function value it is refused, saying so."""
    p = float_positions(args)[0]
    v = np.random.default_rng(7).standard_normal(np.shape(args[p])) if np.ndim(args[p]) else 0.7
    along = _along(function, args, p, v)
    try:
        got = ssad.jvp(along, (args[p],), (v,))[1]
    except ssad.SsadError as error:
        assert "forward mode over ssad.jvp of a function that calls a function value" in str(error)
        return
    translated, _ = oracle.for_autograd(function)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "output seems independent of input": a zero second derivative
            expected = np.sum(autograd.hessian_tensor_product(translated, p)(*args, v) * v)
    except Exception:  # noqa: BLE001 - a program autograd cannot run (in-place writes): differences
        expected = directional(along, args[p], v)
    close(got, expected, rtol=1e-6, atol=1e-7)


def test_jvp_of_jvp_of_a_vector_function_along_two_directions():
    def field(x):
        return np.tanh(x) * np.sum(x ** 2)

    def field_autograd(x):
        return anp.tanh(x) * anp.sum(x ** 2)

    u = np.array([1.0, 0.25, -0.5])

    def along_u(x):
        return ssad.jvp(field, (x,), (u,))[1]

    value, second = ssad.jvp(along_u, (X,), (V,))
    close(value, autograd.jacobian(field_autograd)(X) @ u, rtol=1e-12)
    hessian = autograd.jacobian(autograd.jacobian(field_autograd))(X)  # (out, in, in)
    close(second, np.einsum("ijk,j,k->i", hessian, u, V), rtol=1e-12, atol=1e-14)
    close(second, directional(along_u, X, V))

    # the tangent of the tangent argument: jvp is linear in it
    def along(direction):
        return ssad.jvp(field, (X,), (direction,))[1]

    close(ssad.jvp(along, (u,), (V,))[1], autograd.jacobian(field_autograd)(X) @ V, rtol=1e-12)


def test_jacobian_of_jacobian_still_matches_autograd():
    def field(x):
        return np.tanh(x) * np.sum(x ** 2)

    def field_autograd(x):
        return anp.tanh(x) * anp.sum(x ** 2)

    close(ssad.jacobian(ssad.jacobian(field))(X), autograd.jacobian(autograd.jacobian(field_autograd))(X),
          rtol=1e-12, atol=1e-14)
    close(ssad.jacobian(ssad.jacobian(np.tanh))(X), autograd.jacobian(autograd.jacobian(anp.tanh))(X),
          rtol=1e-12, atol=1e-14)


# ----- 8. one-element outputs -----


def one_by_one(x, s):
    return np.reshape(np.sum(np.sin(x) * x) * s ** 2, (1, 1))


def one_of(x):
    row = np.array([[1.0, 2.0, -0.5]])
    return row @ np.tanh(x)  # shape (1,)


def test_grad_of_one_element_outputs():
    gradient = ssad.grad(one_by_one)(X, 1.5)
    assert gradient.shape == X.shape
    close(gradient, differences_at(lambda x, s: one_by_one(x, s)[0, 0], (X, 1.5), 0))
    d_s = ssad.grad(one_by_one, wrt=1)(X, 1.5)
    assert type(d_s) is float and d_s == pytest.approx(float(np.sum(np.sin(X) * X) * 3.0), rel=1e-14)
    value, gradient = ssad.value_and_grad(one_of)(X)
    assert value.shape == (1,)
    close(gradient, autograd.grad(lambda x: anp.dot(anp.array([[1.0, 2.0, -0.5]]), anp.tanh(x))[0])(X), rtol=1e-13)
    close(ssad.jvp(one_of, (X,), (V,))[1], directional(one_of, X, V))


def test_second_order_through_one_element_outputs():
    close(ssad.hessian(one_of)(X), differences(ssad.grad(one_of), X), atol=1e-7)
    close(ssad.hessian(one_by_one, wrt=(0, 1))(X, 1.5)[0][1], differences(lambda s: ssad.grad(one_by_one)(X, s), 1.5),
          atol=1e-7)
    assert ssad.grad(ssad.grad(lambda s: np.array([s ** 3])))(2.0) == pytest.approx(12.0, rel=1e-14)
    (value, aux), gradient = ssad.value_and_grad(lambda x: (one_of(x), "one"), has_aux=True)(X)
    assert value.shape == (1,) and aux == "one"
    close(gradient, ssad.grad(one_of)(X), rtol=1e-15)


def test_larger_outputs_are_still_refused():
    with pytest.raises(ssad.SsadError, match=r"returns a scalar \(or an array of one element\).*shape \(2,\)"):
        ssad.grad(lambda x: x[:2] * 2.0)(X)
    with pytest.raises(ssad.SsadError, match="complex"):
        ssad.grad(lambda x: np.array([1j * x]))(0.5)


# ----- 9. flatten -----


class Pair(NamedTuple):
    left: np.ndarray
    right: float


@dataclasses.dataclass
class Settings:
    rate: float
    steps: int
    name: str


def _parameters():
    return {
        "W": np.arange(6.0).reshape(2, 3) / 10,
        "layers": [np.array([0.5, -0.5], dtype=np.float32), (1.5, Pair(np.ones(2), 2.5))],
        "settings": Settings(0.1, 3, "adam"),
        "extra": types.SimpleNamespace(bias=0.25, frozen=True, note=None),
    }


def test_flatten_round_trips_structure_shapes_and_types():
    params = _parameters()
    vector, unflatten = ssad.flatten(params)
    assert vector.ndim == 1 and vector.dtype == np.float64
    assert vector.size == 6 + 2 + 1 + (2 + 1) + 1 + 1 + 1  # W, the float32 pair, 1.5, Pair, rate, steps, bias
    back = unflatten(vector)
    assert list(back) == list(params)
    assert back["W"].shape == (2, 3) and back["W"].dtype == np.float64
    assert back["layers"][0].dtype == np.float32
    assert isinstance(back["layers"], list) and isinstance(back["layers"][1], tuple)
    assert isinstance(back["layers"][1][1], Pair) and back["layers"][1][1].right == 2.5
    assert isinstance(back["settings"], Settings) and back["settings"].steps == 3 and back["settings"].name == "adam"
    assert type(back["settings"].steps) is int
    assert isinstance(back["extra"], types.SimpleNamespace) and back["extra"].frozen is True
    assert back["extra"].note is None
    np.testing.assert_array_equal(ssad.flatten(back)[0], vector)
    moved = unflatten(vector + 1.0)
    close(moved["W"], params["W"] + 1.0, rtol=0, atol=0)
    assert moved["settings"].steps == 4 and moved["extra"].bias == 1.25
    assert params["W"][0, 0] == 0.0  # the structure flattened is left as it was
    with pytest.raises(ssad.SsadError, match="1-D vector of 15 numbers"):
        unflatten(vector[:-1])
    with pytest.raises(ssad.SsadError, match="complex"):
        ssad.flatten({"z": 1j})


def _structured_loss(params):
    W = params["W"] * params["settings"].rate
    left, pair = params["layers"][0], params["layers"][1][1]
    scale = params["layers"][1][0] * params["extra"].bias * params["settings"].steps
    return np.sum(np.tanh(W) ** 2) * scale + np.sum(left * pair.left) * pair.right


def test_the_gradient_of_a_nested_structure_flattens_in_line_with_it():
    params = _parameters()
    vector, unflatten = ssad.flatten(params)
    gradient = ssad.grad(_structured_loss)(params)
    assert gradient["extra"].frozen is None and gradient["extra"].note is None and gradient["settings"].name is None
    assert type(gradient["settings"].steps) is float  # an integer leaf: a float derivative, in the vector too
    flat = ssad.flatten(gradient)[0]
    assert flat.shape == vector.shape
    # differences over the same structure with the integer and the float32 leaf made float64,
    # which unflatten would round and cast
    as_floats = _parameters()
    as_floats["settings"].steps = 3.0
    as_floats["layers"][0] = as_floats["layers"][0].astype(np.float64)
    same, unflatten_floats = ssad.flatten(as_floats)
    np.testing.assert_array_equal(same, vector)
    close(flat, differences(lambda v: _structured_loss(unflatten_floats(v)), vector))


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2) + 0.01 * (np.sum(params["W1"] ** 2) + np.sum(params["W2"] ** 2))


def _data():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 1))
    params = {"W1": 0.3 * rng.normal(size=(3, 4)), "b1": np.zeros(4), "W2": 0.3 * rng.normal(size=(4, 1)), "b2": 0.0}
    return params, x, y


def test_a_flattened_gradient_lines_up_with_the_flattened_parameters():
    params, x, y = _data()
    vector, unflatten = ssad.flatten(params)
    flat_gradient = ssad.flatten(ssad.grad(mlp_loss)(params, x, y))[0]
    assert flat_gradient.shape == vector.shape
    close(flat_gradient, differences(lambda v: mlp_loss(unflatten(v), x, y), vector))
    autograd_flat, autograd_unflatten = autograd.misc.flatten(params)
    # autograd orders dict keys by name; ssad keeps the dict's own order: compare through the structure
    by_autograd = autograd.grad(lambda v: mlp_loss(autograd_unflatten(v), x, y))(autograd_flat)
    close(ssad.flatten(autograd_unflatten(by_autograd))[0], flat_gradient, rtol=1e-12)


def test_scipy_minimize_over_a_parameter_dict():
    params, x, y = _data()
    vector, unflatten = ssad.flatten(params)
    gradient = ssad.grad(mlp_loss)

    def objective(v):
        return mlp_loss(unflatten(v), x, y)

    def jac(v):
        return ssad.flatten(gradient(unflatten(v), x, y))[0]

    found = scipy.optimize.minimize(objective, vector, jac=jac, method="BFGS")
    assert found.success
    assert found.fun < 0.5 * objective(vector)
    fitted = unflatten(found.x)
    assert sorted(fitted) == sorted(params) and fitted["W1"].shape == (3, 4) and type(fitted["b2"]) is float
    assert np.max(np.abs(jac(found.x))) < 1e-5
    # the same run with autograd's gradient of the flattened objective takes the same steps
    autograd_flat, autograd_unflatten = autograd.misc.flatten(params)
    order = ssad.flatten(autograd_unflatten(np.arange(float(vector.size))))[0].astype(int)

    def autograd_jac(v):
        flat = np.empty_like(v)
        flat[order] = v  # ssad's order to autograd's
        by_autograd = autograd.grad(lambda w: mlp_loss(autograd_unflatten(w), x, y))(flat)
        return ssad.flatten(autograd_unflatten(by_autograd))[0]

    close(jac(vector), autograd_jac(vector), rtol=1e-12)
    reference = scipy.optimize.minimize(objective, vector, jac=autograd_jac, method="BFGS")
    assert reference.success
    close(found.x, reference.x, rtol=1e-6, atol=1e-8)
    assert found.fun == pytest.approx(reference.fun, rel=1e-12)


def test_unflatten_inside_a_differentiated_function():
    params, x, y = _data()
    vector, unflatten = ssad.flatten(params)

    def objective(v):
        return mlp_loss(unflatten(v), x, y)

    flat_gradient = ssad.flatten(ssad.grad(mlp_loss)(params, x, y))[0]
    close(ssad.grad(objective)(vector), flat_gradient, rtol=1e-13, atol=1e-15)
    direction = np.linspace(-1.0, 1.0, vector.size)
    close(ssad.jvp(objective, (vector,), (direction,))[1], flat_gradient @ direction, rtol=1e-12)
    hessian = ssad.hessian(objective)(vector)
    autograd_flat, autograd_unflatten = autograd.misc.flatten(params)

    def autograd_objective(v):
        p = autograd_unflatten(v)
        h = anp.tanh(anp.dot(x, p["W1"]) + p["b1"])
        out = anp.dot(h, p["W2"]) + p["b2"]
        return anp.mean((out - y) ** 2) + 0.01 * (anp.sum(p["W1"] ** 2) + anp.sum(p["W2"] ** 2))

    order = ssad.flatten(autograd_unflatten(np.arange(float(vector.size))))[0].astype(int)  # ssad position -> autograd's
    close(hessian, autograd.hessian(autograd_objective)(autograd_flat)[np.ix_(order, order)], rtol=1e-10, atol=1e-13)
    close(ssad.hvp(objective)(vector, direction), hessian @ direction, rtol=1e-12, atol=1e-14)


# ----- 10. names, types, packaging -----


def test_the_new_names_are_exported():
    for name in ("elementwise_grad", "hvp", "flatten"):
        assert name in ssad.__all__ and callable(getattr(ssad, name))


def test_public_functions_are_annotated_and_the_package_ships_py_typed():
    for function in (ssad.grad, ssad.value_and_grad, ssad.elementwise_grad, ssad.jacobian, ssad.hessian,
                     ssad.hvp, ssad.show):
        signature = inspect.signature(function)
        assert signature.return_annotation is not inspect.Signature.empty, function.__name__
        assert signature.parameters["f"].annotation is not inspect.Parameter.empty, function.__name__
    for function in (ssad.vjp, ssad.jvp, ssad.flatten):
        assert inspect.signature(function).return_annotation is not inspect.Signature.empty
    root = pathlib.Path(ssad.__file__).parent
    assert (root / "py.typed").is_file()
    pyproject = (root.parent / "pyproject.toml").read_text()
    assert '[tool.setuptools.package-data]\nssad = ["py.typed"]' in pyproject
