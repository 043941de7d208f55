"""What a name holds after a branch or a loop is what any path may leave in it (`control.join_numbers`).

A name that is a number on one path and a view of an array on another is not a number after the
join: a write into the array the view shares, later, changes what the name reads. Before the join
kept only the last path's kind, `t = y[1:3]` in one branch and `t = 0.5` in the other made `t` a
number, and the gradient read the array as the write had left it: silently wrong. Random program
7863 has a name bound in a loop to an element chosen by `max` and, before the loop, to a number.
A name rebound since it shared the array (`acc = z[3]`, then `acc = acc + v` before `z[0] = ...`)
no longer shares it where the write runs (random program 8908, refused before: `Sharing.others(now=True)`).
"""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

X = np.array([0.3, -0.5, 0.8, 0.1])
Y = np.array([0.1, 0.2, -0.3, 0.4])


def view_or_number_then_write(x, c):
    y = x * 1.0
    if c > 0:
        t = y[1:3]
    else:
        t = 0.5
    u = t
    y[1] = 5.0 * x[0]
    return np.sum(u * x[1:3]) + np.sum(y)


def view_or_number_by_expression(x, c):
    y = x * 1.0
    t = y[1:3] if c > 0 else 0.5
    y[1] = 5.0 * x[0]
    return np.sum(t * x[1:3]) + np.sum(y)


def view_bound_in_a_loop_or_before_it(x, n):
    y = x * 1.0
    t = 0.5
    for _ in range(n):
        t = y[1:3]
    y[1] = 5.0 * x[0]
    return np.sum(t * x[1:3]) + np.sum(y)


def test_the_path_that_binds_a_number_is_exact():
    np.testing.assert_allclose(ssad.grad(view_or_number_then_write)(X, -1.0),
                               numerical_gradient(lambda x: view_or_number_then_write(x, -1.0), X),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function, bound_to_a_view, bound_to_a_number", [
    (view_or_number_then_write, 1.0, -1.0),
    (view_or_number_by_expression, 1.0, -1.0),
    (view_bound_in_a_loop_or_before_it, 2, 0),
], ids=["if", "conditional-expression", "loop"])
def test_a_name_a_view_on_some_path_is_not_a_number_after_the_join(function, bound_to_a_view, bound_to_a_number):
    with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that"):
        ssad.grad(function)(X, bound_to_a_view)
    np.testing.assert_allclose(ssad.grad(function)(X, bound_to_a_number),
                               numerical_gradient(lambda x: function(x, bound_to_a_number), X),
                               rtol=1e-6, atol=1e-8)


def element_chosen_in_a_loop(x, y, s):
    # random program 7863
    t5 = 0.5 * s
    z6 = y.copy()
    for i7 in range(1, 4):
        z9 = x.copy()
        t5 = max([(z6[i7], 0.5), (z9[3], 1.5)], key=lambda p: p[0] * p[1])[0]
    z6[2:4] *= s
    return np.sum(z6) + t5 * s


def test_an_element_chosen_in_a_loop_then_a_write_into_its_array():
    got = ssad.grad(element_chosen_in_a_loop, wrt=(0, 1, 2))(X, Y, 0.7)
    expected = (numerical_gradient(lambda x: element_chosen_in_a_loop(x, Y, 0.7), X),
                numerical_gradient(lambda y: element_chosen_in_a_loop(X, y, 0.7), Y),
                numerical_gradient(lambda s: element_chosen_in_a_loop(X, Y, s), 0.7))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def element_rebound_before_a_write_in_a_loop(x, y, s):
    # random program 8908: `acc` is an element of `z` before the loop and a new number in it
    z = y.copy()
    acc = s * 1.0
    if s > 0.5:
        acc = ((z[3],) + (s, 0.5) * 2)[1]
    else:
        acc = z[3]
    k = 0
    while k < 3:
        k += 1
        acc = acc + 0.83 * x[k]
        z[3], z[0] = z[0], z[3]
    return np.sum(z * x) + 0.5 * acc ** 2


@pytest.mark.parametrize("s", [0.7, 0.2])
def test_a_name_rebound_before_a_write_no_longer_shares_the_array(s):
    got = ssad.grad(element_rebound_before_a_write_in_a_loop, wrt=(0, 1, 2))(X, Y, s)
    expected = (numerical_gradient(lambda x: element_rebound_before_a_write_in_a_loop(x, Y, s), X),
                numerical_gradient(lambda y: element_rebound_before_a_write_in_a_loop(X, y, s), Y),
                numerical_gradient(lambda s: element_rebound_before_a_write_in_a_loop(X, Y, s), s))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def view_rebound_on_one_path(x, c):
    z = x * 1.0
    t = z[1:3]
    if c > 0:
        t = 0.5
    z[1] = 5.0 * x[0]
    return np.sum(t * x[1:3]) + np.sum(z)


def view_bound_after_the_write_of_a_later_iteration(x, c):
    z = x * 1.0
    t = 0.5
    acc = 0.0
    for _ in range(2):
        z[1] = 5.0 * x[0]
        acc = acc + np.sum(t * x[1:3])
        t = z[1:3]
        if c > 0:
            t = t * 1.0
    return acc + np.sum(z)


def second_name_kept_when_the_first_is_rebound(x, c):
    z = x * 1.0
    t = z[1:3]
    u = t
    t = c * 0.5
    z[1] = 5.0 * x[0]
    return np.sum(u * x[1:3]) + np.sum(z) + t


def view_rebound_in_a_loop_that_may_not_run(x, n):
    z = x * 1.0
    t = z[1:3]
    for _ in range(n):
        t = 0.5
    z[1] = 5.0 * x[0]
    return np.sum(t * x[1:3]) + np.sum(z)


@pytest.mark.parametrize("function, argument", [
    (view_rebound_on_one_path, -1.0),
    (view_bound_after_the_write_of_a_later_iteration, -1.0),
    (second_name_kept_when_the_first_is_rebound, 1.0),
    (view_rebound_in_a_loop_that_may_not_run, 0),
], ids=["if", "later-iteration", "second-name", "loop-may-not-run"])
def test_a_view_that_still_shares_the_array_where_the_write_runs_is_refused(function, argument):
    with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that"):
        ssad.grad(function)(X, argument)


@pytest.mark.parametrize("function, argument", [
    (view_rebound_on_one_path, 1.0),
    (view_bound_after_the_write_of_a_later_iteration, 1.0),
    (view_rebound_in_a_loop_that_may_not_run, 2),
], ids=["if", "later-iteration", "loop-runs"])
def test_where_the_view_was_rebound_the_gradient_is_exact(function, argument):
    np.testing.assert_allclose(ssad.grad(function)(X, argument),
                               numerical_gradient(lambda x: function(x, argument), X), rtol=1e-6, atol=1e-8)
