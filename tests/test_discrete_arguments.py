"""Integers a helper passes on (an axis, a shift, a count) at second order.

In `def softmax(v, axis=-1)` the parameter `axis` is a value, not a literal: every
parameter of a gradient function that is differentiated again carries gradients as far
as the compiler can tell, and reaches rules (`np.expand_dims(g, axis)`) in positions that
have no derivative. Where the code runs it holds an integer, whose derivative is zero
(as for `range(n)`, docs/api.md): `discrete_only(axis, ...)` checks it there. Checked
against central differences of the first gradient."""

import numpy as np
import pytest

import ssad
from ssad.errors import MissingRuleError
from ssad.runtime.refusals import discrete_only
from ssad.testing import numerical_gradient


def softmax(v, axis=-1):
    e = np.exp(v - np.max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_loss(w):
    return np.sum(softmax(w.reshape(2, 3)) ** 2)


def layernorm(h, axis=-1):
    mu = np.mean(h, axis=axis, keepdims=True)
    sd = np.std(h, axis=axis, keepdims=True)
    return (h - mu) / (sd + 1e-3)


def layernorm_loss(w):
    return np.sum(np.tanh(layernorm(w.reshape(2, 3), 0)) * np.arange(6.0).reshape(2, 3))


def squares_over(x, axes):
    return np.sum(x ** 2, axis=axes)


def tuple_axis_loss(w):
    return np.sum(squares_over(w.reshape(2, 1, 3), (0, 2)) ** 2)


def moved(x, shift, count, first, second):
    rolled = np.roll(x, shift)
    return np.swapaxes(np.repeat(rolled, count).reshape(-1, 2, 1), first, second)


def shift_count_loss(w):
    return np.sum(np.sin(moved(w, 2, 2, 0, 2)) * np.cumsum(w.repeat(2))[::-1].reshape(1, 2, -1))


def biggest(x, axis):
    return np.max(x, axis=axis)


def max_loss(w):
    return np.sum(biggest(w.reshape(2, 3), 1) ** 3)


LOSSES = [softmax_loss, layernorm_loss, tuple_axis_loss, shift_count_loss, max_loss]
W = np.array([0.3, -1.2, 0.8, 1.1, 0.4, -0.5])
V = np.array([1.0, 0.5, -0.3, 0.2, 1.0, 0.7])


@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_second_order_through_helpers_given_integers(loss):
    gradient = ssad.grad(loss)
    expected = numerical_gradient(lambda s: gradient(W + s * V), 0.0)
    np.testing.assert_allclose(ssad.hvp(loss)(W, V), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ssad.grad(lambda w: np.dot(gradient(w), V))(W), ssad.hessian(loss)(W) @ V,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.hessian(loss)(W) @ V, expected, rtol=1e-5, atol=1e-7)


def inner_step(w):
    return layernorm_loss(w - 0.1 * ssad.grad(layernorm_loss)(w))


def test_a_gradient_step_through_such_a_helper_is_differentiated():
    expected = numerical_gradient(inner_step, W)
    np.testing.assert_allclose(ssad.grad(inner_step)(W), expected, rtol=1e-5, atol=1e-7)


def test_discrete_only_passes_integers_and_refuses_floats():
    where = ("model.py", 3, 4, "    y = f(x, s)")
    for value in (-1, (0, 2), np.int64(3), True, None, np.array([1, 2]), np.array([True, False]), "ortho"):
        assert discrete_only(value, "no gradient", *where) is value
    for value in (0.5, np.float64(2.0), np.array([1.0]), (0, 1.5), 1j):
        with pytest.raises(MissingRuleError, match="no gradient") as refused:
            discrete_only(value, "no gradient", *where)
        assert (refused.value.filename, refused.value.lineno) == ("model.py", 3)


def scaled(x, s):
    return x * 3.0


@ssad.adjoint(scaled)
def scaled_adjoint(dy, y, x, s):
    return (dy * 3.0,)  # no adjoint for s


@ssad.tangent(scaled)
def scaled_tangent(tangents, y, x, s):
    return tangents[0] * 3.0


def through_scaled(x, s):
    return np.sum(scaled(x, s * 2.0))


def test_a_float_where_a_rule_gives_no_gradient_is_still_refused():
    x = np.ones(3)
    np.testing.assert_allclose(ssad.grad(through_scaled)(x, 0.5), 3.0 * np.ones(3))
    with pytest.raises(MissingRuleError, match="gives no gradient for its argument 1") as refused:
        ssad.grad(through_scaled, wrt=1)(x, 0.5)
    assert refused.value.lineno == through_scaled.__code__.co_firstlineno + 1


def products_of_integers(a, b, x):
    return np.sum(a * x) + np.sum(a ** 2) + np.sum(a * b * x)


def test_an_integer_array_argument_gets_a_float_gradient():
    # the unit seed folded `1.0 * 2 * a` to `2 * a`, an integer array that `d_a += ...` then
    # could not hold (a UFuncOutputCastingError)
    a, b, x = np.array([1, 2, 3]), np.array([2, -1, 4]), np.array([0.5, -1.0, 2.0])
    d_a, d_b = ssad.grad(products_of_integers, wrt=(0, 1))(a, b, x)
    np.testing.assert_allclose(d_a, x + 2 * a + b * x)
    np.testing.assert_allclose(d_b, a * x)
    assert d_a.dtype == np.float64 and d_b.dtype == np.float64
