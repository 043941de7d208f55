"""Reverse mode on straight-line code, against central finite differences."""

import numpy as np
import pytest

import ssad
from ssad.runtime.callables import parameters
from ssad.runtime.receivers import ARRAY
from ssad.frontend.anf import to_anf
from ssad.frontend.validate import validate
from ssad.frontend.fence import check
from ssad.frontend.parse import parse_function

from .conftest import assert_gradient_matches, float_positions
from .programs import straight

IDS = [f.__name__ for f, _ in straight.CASES]


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_gradient_of_each_argument(function, args):
    for position in float_positions(args):
        gradient = ssad.grad(function, wrt=position)(*args)
        assert_gradient_matches(function, args, position, gradient)


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_all_arguments_at_once_with_random_output_seed(function, args):
    positions = tuple(float_positions(args))
    ssad.check_grads(function, args, wrt=positions)


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_value_and_grad_returns_the_value(function, args):
    value, gradient = ssad.value_and_grad(function)(*args)
    assert value == pytest.approx(function(*args), rel=1e-12)
    np.testing.assert_allclose(gradient, ssad.grad(function)(*args), rtol=1e-12)


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_anf_is_valid(function, args):
    parsed = parse_function(function)
    check(parsed)
    validate(to_anf(parsed))


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_generated_source_is_deterministic(function, args):
    first = ssad.show(function, optimize=True).source
    # show() without arguments shows the code for NumPy arrays of any shape
    arrays = frozenset((p, ARRAY) for p in parameters(function)[0] + parameters(function)[1])
    again = ssad.backend.pipeline.build(function, ssad.api.normalize_wrt(function, 0)[0], "grad", True,
                                        stage="optimized", scalars=arrays)
    assert first == again


@pytest.mark.parametrize("function, args", straight.CASES, ids=IDS)
def test_unoptimized_code_gives_the_same_gradient(function, args):
    optimized = ssad.grad(function)(*args)
    plain = ssad.grad(function, optimize=False)(*args)
    np.testing.assert_allclose(plain, optimized, rtol=1e-12, atol=1e-15)


def vector_valued(x, W):
    return np.tanh(x @ W) * x[0]


def tuple_valued(x, y):
    return np.sin(x) * y, np.sum(x * y)


def test_vjp_of_a_vector_output_with_non_uniform_seed():
    rng = np.random.default_rng(5)
    x, W = rng.standard_normal(3), rng.standard_normal((3, 4))
    ssad.check_grads(vector_valued, (x, W))
    value, pullback = ssad.vjp(vector_valued, x, W)
    np.testing.assert_allclose(value, vector_valued(x, W))
    d_x, d_W = pullback(np.sin(np.arange(4.0)) + 2.0)
    assert d_x.shape == x.shape and d_W.shape == W.shape


def test_vjp_of_a_tuple_output():
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    value, pullback = ssad.vjp(tuple_valued, x, y)
    seed = (np.array([0.3, -1.2, 2.0]), 0.7)
    d_x, d_y = pullback(seed)

    def scalar(x_, y_):
        a, b = tuple_valued(x_, y_)
        return np.sum(seed[0] * a) + seed[1] * b

    assert_gradient_matches(scalar, (x, y), 0, d_x)
    assert_gradient_matches(scalar, (x, y), 1, d_y)


def test_pullback_can_be_called_twice():
    x = np.array([0.1, 0.2, 0.3])
    W = np.ones((3, 2))
    _, pullback = ssad.vjp(vector_valued, x, W)
    first = pullback(np.ones(2))
    second = pullback(np.ones(2))
    np.testing.assert_array_equal(first[0], second[0])


def test_jacobian_against_finite_differences():
    rng = np.random.default_rng(7)
    x, W = rng.standard_normal(3), rng.standard_normal((3, 4))
    jac = ssad.jacobian(vector_valued)(x, W)
    assert jac.shape == (4, 3)
    for i in range(4):
        assert_gradient_matches(lambda x_, W_, i=i: vector_valued(x_, W_)[i], (x, W), 0, jac[i])
    jac_W = ssad.jacobian(vector_valued, wrt=1)(x, W)
    assert jac_W.shape == (4, 3, 4)
