"""A backward half pops its tape: code that differentiates a gradient, and a pullback run
twice, must still find the residuals as the forward half left them (`runtime.unspent`)."""

import numpy as np
import pytest

import ssad
from ssad.errors import UnsupportedSyntaxError

X = np.array([-0.95, 0.52, -0.36, 1.35])
Y = np.array([0.07, -0.31, -0.09, 0.63])
V = np.array([1.0, 2.0, 3.0, 4.0])


def looped_sum(a, b):
    total = np.sum(b)
    for _ in a:
        total = total + a[np.argmin(b)]
    return total


def calls_a_helper_whose_adjoint_the_second_order_drops(x, y):
    # the helper's backward half runs in grad(f) (items carries a gradient as a list), but
    # its result reaches no output of grad(f, wrt=1): grad of grad(f) does not differentiate
    # that call, which still pops the tape the helper's forward half pushed
    sine = np.sin(y)
    items = [np.cos(x)]
    h = looped_sum(x, items[-1]) - sine
    for w in y:
        items.append(y + w)
    return np.dot(h, V) + np.sum(np.cos(items[-1]))


GRADIENT_WRT_Y = ssad.grad(calls_a_helper_whose_adjoint_the_second_order_drops, wrt=1)


def directional_gradient(x, y):
    return np.sum(GRADIENT_WRT_Y(x, y) * V)


def test_reverse_over_reverse_through_a_helper_whose_backward_half_is_not_differentiated():
    got = ssad.grad(directional_gradient, wrt=1)(X, Y)
    step = 1e-6
    expected = np.array([
        (directional_gradient(X, Y + step * e) - directional_gradient(X, Y - step * e)) / (2 * step)
        for e in np.eye(4)
    ])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_forward_over_reverse_through_the_same_helper():
    _, tangent = ssad.jvp(GRADIENT_WRT_Y, (X, Y), (np.zeros(4), V))
    step = 1e-6
    expected = (GRADIENT_WRT_Y(X, Y + step * V) - GRADIENT_WRT_Y(X, Y - step * V)) / (2 * step)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def loop_through_helper(x):
    for _ in range(3):
        x = looped_sum(x, np.sin(x)) * x
    return x


def test_a_pullback_that_reads_a_callee_tape_runs_twice_with_the_same_result():
    _, pullback = ssad.vjp(loop_through_helper, X)
    first = pullback(V)
    second = pullback(V)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_allclose(first[0], ssad.jacobian(loop_through_helper)(X).T @ V, rtol=1e-12)


def take_last(items):
    return items.pop()


def pops_through_a_helper(x):
    items = [x * 2.0, x * 3.0]
    return take_last(items) * 10.0 + np.sin(items[0])


def pops_its_argument(items):
    return items.pop() * 10.0 + np.sin(items[0])


def test_a_helper_popping_a_list_its_caller_passed_in_is_refused_with_the_fix():
    # the caller would see the list shorter afterwards: a copy in the helper would hide that
    with pytest.raises(UnsupportedSyntaxError, match=r"items\.pop\(\.\.\.\)` would change an array or list the caller"):
        ssad.grad(pops_through_a_helper)(1.0)


def test_the_differentiated_function_popping_its_argument_pops_a_copy():
    items = [1.0, 2.0]
    assert ssad.grad(pops_its_argument)(items) == [np.cos(1.0), 10.0]
    assert items == [1.0, 2.0]


def take_last_of_a_copy(items):
    items = items.copy()
    return items.pop()


def pops_a_copy_through_a_helper(x):
    items = [x * 2.0, x * 3.0]
    return take_last_of_a_copy(items) * 10.0 + np.sin(items[1])


def test_popping_a_copy_of_the_list_the_caller_passed_in_works():
    assert ssad.grad(pops_a_copy_through_a_helper)(1.0) == pytest.approx(30.0 + 3.0 * np.cos(3.0), rel=1e-12)
