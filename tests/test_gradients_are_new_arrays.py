"""What a derivative function returns is new memory: never an argument's, a cotangent's or another result's.

The adjoint rule of `np.dot(x, w)` hands back `w` itself as the gradient of `x` (and `x` as
that of `w`) for a scalar seed; `np.sum(x + y)` may give one array for both; a pullback of
`x + 0.0` handed back the cotangent, and jvp of it the tangent given. A caller that then
changed one in place, as an optimizer does (`x -= lr * gx`, then `w -= lr * gw`), changed
an argument or another gradient: a silently wrong step. Each result is a new array now.
"""

import numpy as np
import pytest

import ssad

X = np.array([0.3, -1.2, 0.8])
W = np.array([5.0, 6.0, 7.0])


def dot(x, w):
    return np.dot(x, w)


def total(x, y):
    return np.sum(x + y)


def _shares_nothing(results, inputs):
    results = [np.asarray(r) for r in results]
    for k, r in enumerate(results):
        assert not any(np.shares_memory(r, a) for a in inputs)
        assert not any(np.shares_memory(r, other) for other in results[:k])


def test_the_gradients_of_a_dot_product_are_new_arrays():
    x, w = X.copy(), W.copy()
    gx, gw = ssad.grad(dot, wrt=(0, 1))(x, w)
    _shares_nothing([gx, gw], [x, w])
    np.testing.assert_array_equal(gx, W)
    np.testing.assert_array_equal(gw, X)
    x -= 0.1 * gx  # a step of gradient descent, one parameter after the other
    w -= 0.1 * gw
    np.testing.assert_allclose(x, X - 0.1 * W, rtol=1e-15)
    np.testing.assert_allclose(w, W - 0.1 * X, rtol=1e-15)
    (single,) = (ssad.grad(dot)(X, W),)
    _shares_nothing([single], [X, W])


def test_value_and_grad_has_aux_and_two_gradients_of_one_sum():
    _shares_nothing(ssad.grad(total, wrt=(0, 1))(X, W), [X, W])
    value, gradient = ssad.value_and_grad(dot)(X, W)
    assert value == pytest.approx(np.dot(X, W))
    _shares_nothing([gradient], [X, W])
    gradient, aux = ssad.grad(lambda x, w: (np.dot(x, w), 1.0), has_aux=True)(X, W)
    _shares_nothing([gradient], [X, W])


def test_arrays_in_a_list_argument():
    xs = [X.copy(), W.copy()]
    (gradient,) = (ssad.grad(lambda ps: np.dot(ps[0], ps[1]))(xs),)
    _shares_nothing(gradient, xs)
    np.testing.assert_array_equal(gradient[0], W)
    np.testing.assert_array_equal(gradient[1], X)


def test_a_pullback_and_a_jvp_hand_back_no_input():
    cotangent = np.array([1.0, 2.0, 3.0])
    _, pullback = ssad.vjp(lambda x: x + 0.0, X)
    (adjoint,) = pullback(cotangent)
    _shares_nothing([adjoint], [X, cotangent])
    np.testing.assert_array_equal(adjoint, cotangent)
    tangent_in = np.array([0.5, 0.25, 1.0])
    _, tangent = ssad.jvp(lambda x: x + 0.0, (X,), (tangent_in,))
    _shares_nothing([tangent], [X, tangent_in])
    np.testing.assert_array_equal(tangent, tangent_in)
