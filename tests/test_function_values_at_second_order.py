"""Second and third derivatives through calls of function values.

The first-order gradient calls a function value through `call_forward` and its
pullback; differentiated again, the pullback is a `runtime.pullbacks.Pullback`, whose
own call is differentiated by running the callee's generated vjp under `call_jvp` or
`call_forward`. Each case is checked against a closed form or against central
differences of ssad's own first-order gradient (itself checked against differences of
the function elsewhere).
"""

import dataclasses
import functools

import numpy as np
import pytest

import ssad

from .conftest import check_every_order

X = np.array([0.3, -0.7, 1.1])


def cubic_through_a_closure(x, a):
    def g(t):
        return a * t**3 + np.sin(t)

    return g(x)


def test_second_derivative_through_a_closure_is_the_closed_form():
    second = ssad.grad(ssad.grad(cubic_through_a_closure))
    for x in (0.4, -1.3):
        np.testing.assert_allclose(second(x, 2.5), 6 * 2.5 * x - np.sin(x), rtol=1e-12)
        np.testing.assert_allclose(ssad.hessian(cubic_through_a_closure)(x, 2.5), 6 * 2.5 * x - np.sin(x), rtol=1e-12)


def test_a_third_derivative_through_a_function_value_is_refused():
    third = ssad.grad(ssad.grad(ssad.grad(cubic_through_a_closure)))
    with pytest.raises(ssad.SsadError, match="third derivative through a call of a function value"):
        third(0.4, 2.5)


def weighted_power(w, t, power=2.0):
    return w * t**power


def partial_with_a_differentiated_keyword(x, p):
    f = functools.partial(weighted_power, power=p)
    return np.sum(f(1.5, x))


def test_mixed_second_derivative_through_a_keyword_bound_by_a_partial():
    # d/dp d/dx sum(1.5 x^p) = 1.5 x^(p-1) (1 + p log x)
    x, p = np.array([0.4, 1.3, 2.0]), 2.5
    mixed = ssad.jacobian(ssad.grad(partial_with_a_differentiated_keyword, wrt=0), wrt=1)(x, p)
    np.testing.assert_allclose(mixed, 1.5 * x ** (p - 1) * (1 + p * np.log(x)), rtol=1e-10)


@dataclasses.dataclass
class Quadratic:
    A: np.ndarray

    def energy(self, x):
        return 0.5 * x @ self.A @ x + np.sum(np.cos(x))


def energy_of(x, q):
    return q.energy(x)


def test_hessian_through_a_method_is_the_closed_form():
    A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])
    expected = A - np.diag(np.cos(X))
    np.testing.assert_allclose(ssad.hessian(energy_of)(X, Quadratic(A)), expected, rtol=1e-12)
    summed = ssad.grad(lambda x: np.sum(ssad.grad(energy_of)(x, Quadratic(A))))
    np.testing.assert_allclose(summed(X), expected.sum(axis=0), rtol=1e-12)


def apply(f, x):
    return f(x)


def numpy_function_passed_as_a_value(x):
    return np.sum(apply(np.tanh, x) * apply(np.exp, 0.5 * x))


def test_hessian_through_numpy_functions_passed_as_values_is_the_closed_form():
    # d2/dx2 tanh(x) e^(x/2), elementwise
    t, e = np.tanh(X), np.exp(0.5 * X)
    d1, d2 = 1 - t**2, -2 * t * (1 - t**2)
    expected = np.diag(d2 * e + d1 * e + 0.25 * t * e)
    np.testing.assert_allclose(ssad.hessian(numpy_function_passed_as_a_value)(X), expected, rtol=1e-12)


def closures_made_in_a_loop(x, w):
    total = 0.0
    for k in range(3):
        def step(t, k):
            return np.tanh(w[k] * t)

        total = total + np.sum(step(x, k) ** 2)
    return total


@pytest.mark.parametrize("position", [0, 1])
def test_second_order_through_closures_made_in_a_loop_matches_differences(position):
    w = np.array([0.5, -1.2, 0.8])
    gradient = ssad.grad(closures_made_in_a_loop, wrt=position)
    args = [X, w]
    step = 1e-6
    columns = []
    for k in range(3):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[position][k] += step
        down[position][k] -= step
        columns.append((gradient(*up) - gradient(*down)) / (2 * step))
    expected = np.stack(columns, axis=-1)
    np.testing.assert_allclose(ssad.hessian(closures_made_in_a_loop, wrt=position)(X, w), expected, rtol=1e-6, atol=1e-8)
    summed = ssad.grad(lambda a, b: np.sum(gradient(a, b)), wrt=position)
    np.testing.assert_allclose(summed(X, w), expected.sum(axis=0), rtol=1e-6, atol=1e-8)


class Holder:
    def __init__(self, scale):
        self.scale = scale
        self.act = lambda t: np.tanh(self.scale * t)


def through_a_function_held_in_an_attribute(x, h):
    return np.sum(h.act(x) ** 2)


def test_a_function_held_in_an_attribute_is_refused_at_second_order_with_a_way_out():
    h = Holder(0.7)
    gradient = ssad.grad(through_a_function_held_in_an_attribute)(X, h)
    np.testing.assert_allclose(gradient, 2 * np.tanh(0.7 * X) * 0.7 * (1 - np.tanh(0.7 * X) ** 2), rtol=1e-12)
    with pytest.raises(ssad.SsadError, match="held in an attribute.*call it through a local name"):
        ssad.hessian(through_a_function_held_in_an_attribute)(X, h)


def through_a_local_name_of_that_function(x, h):
    act = h.act
    return np.sum(act(x) ** 2)


def test_the_way_out_a_local_name_gives_the_closed_form_hessian():
    t = np.tanh(0.7 * X)
    s = 1 - t**2
    expected = np.diag(2 * 0.49 * (s * s - 2 * t * t * s))
    np.testing.assert_allclose(ssad.hessian(through_a_local_name_of_that_function)(X, Holder(0.7)), expected, rtol=1e-12)


def _network(xp):
    """A small regression network written the way users write them: a nested activation,
    a layer function, `functools.partial` binding the activation, NumPy's tanh as a value."""

    def softplus(t):
        return xp.log1p(xp.exp(-xp.abs(t))) + xp.maximum(t, 0.0)

    def layer(W, h, act):
        return act(h @ W)

    def loss(w, inputs, targets):
        W1 = xp.reshape(w[:12], (3, 4))
        W2 = xp.reshape(w[12:16], (4, 1))
        hidden = functools.partial(layer, act=xp.tanh)
        out = layer(W2, hidden(W1, inputs), softplus)
        return xp.mean((out[:, 0] - targets) ** 2)

    return loss


def test_second_derivatives_of_a_network_built_from_function_values_match_autograd():
    autograd = pytest.importorskip("autograd")
    anp = autograd.numpy
    rng = np.random.default_rng(0)
    inputs, targets, w, v = rng.normal(size=(5, 3)), rng.normal(size=5), 0.5 * rng.normal(size=16), rng.normal(size=16)
    expected = autograd.hessian(_network(anp))(w, inputs, targets)
    np.testing.assert_allclose(ssad.hessian(_network(np))(w, inputs, targets), expected, rtol=1e-9, atol=1e-12)
    gradient = ssad.grad(_network(np))
    np.testing.assert_allclose(ssad.jvp(gradient, (w, inputs, targets), (v, None, None))[1], expected @ v,
                               rtol=1e-9, atol=1e-12)

    def penalty(weights):
        return np.sum(gradient(weights, inputs, targets) ** 2)

    autograd_gradient = autograd.grad(_network(anp))
    np.testing.assert_allclose(
        ssad.grad(penalty)(w),
        autograd.grad(lambda weights: anp.sum(autograd_gradient(weights, inputs, targets) ** 2))(w),
        rtol=1e-9, atol=1e-12,
    )


def counted_in_a_loop(x):
    total = 0.0
    xs = []
    for i in range(3):
        xs.append(x[i] * x[i])
        total = total + xs.count(x[0] * x[0]) * xs[-1]
    return total


def test_a_method_without_a_derivative_gives_zeros_at_second_order():
    # `xs.count(v)` has no derivative: its pullback gives zeros at first order, and gave None
    # at second order, which the code that differentiates the gradient multiplied (TypeError)
    x = np.array([0.5, 1.5, 0.7])
    # each count is 1 (x2 is not x0): total = x0**2 + x1**2 + x2**2
    np.testing.assert_allclose(ssad.hessian(counted_in_a_loop)(x), 2.0 * np.eye(3))
    check_every_order(counted_in_a_loop, x, np.array([0.3, -1.2, 0.8]))
    # at x2 == x0 the last count is 2, held constant as a count is: total = x0**2 + x1**2 + 2 * x2**2
    np.testing.assert_allclose(ssad.hessian(counted_in_a_loop)(np.array([0.5, 1.5, 0.5])), np.diag([2.0, 2.0, 4.0]))
