"""What a name holds after a branch or a loop is what any path may leave in it (`control.join_paths`).

A name that is a number on one path and a view of an array on another is not a number after the
join: a write into the array the view shares, later, changes what the name reads. Before the join
kept only the last path's kind, `t = y[1:3]` in one branch and `t = 0.5` in the other made `t` a
number, and the gradient read the array as the write had left it: silently wrong. Random program
7863 has a name bound in a loop to an element chosen by `max` and, before the loop, to a number.
A name rebound since it shared the array (`acc = z[3]`, then `acc = acc + v` before `z[0] = ...`)
no longer shares it where the write runs (random program 8908, refused before: `Sharing.others(now=True)`).

The same holds for an array defined outside the function and for lists. `t = W` (a global) on one
path and `t = x * 1.0` on the other, then `t[0] = v`, wrote into W where the gradient read W as
a constant: silently wrong where `t = W` alone is refused; likewise `t = W` late in a loop's body,
written by the next pass. `t = [a, b]` before a loop whose body computes `t + t` and then binds t
to an array made the second pass add arrays with the adjoint of a concatenation: a wrong gradient
at one pass, "need at least one array to stack" at two. Such a name is no list at the loop's
start unless every assignment in the loop keeps it one (`acc = acc + [v]`).
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


W = np.array([0.5, -0.3, 0.8, 1.1])


def global_on_one_path(x, c):
    if c > 0:
        t = W
    else:
        t = x * 1.0
    u = np.sum(np.sin(W * x))
    t[0] = 3.0 * x[1]
    return u + np.sum(t * x)


def global_by_expression(x, c):
    t = W if c > 0 else x * 1.0
    u = np.sum(np.sin(W * x))
    t[0] = 3.0 * x[1]
    return u + np.sum(t * x)


def global_bound_late_in_a_loop(x, n):
    t = x * 1.0
    u = 0.0
    for _ in range(n):
        u += np.sum(np.sin(W * x))
        t[0] = 3.0 * x[1]
        t = W
    return u + np.sum(t * x)


def view_of_a_global_bound_late_in_a_loop(x, n):
    t = x * 1.0
    u = 0.0
    for _ in range(n):
        u += np.sum(np.sin(W * x))
        t[0] = 3.0 * x[1]
        a = W[0:4]
        t = a
    return u + np.sum(t * x)


@pytest.mark.parametrize("function, argument", [
    (global_on_one_path, -1.0), (global_by_expression, -1.0), (global_bound_late_in_a_loop, 2),
    (view_of_a_global_bound_late_in_a_loop, 2),
], ids=["if", "conditional-expression", "loop", "view-in-a-loop"])
def test_a_name_that_may_hold_a_global_array_is_not_written_into(function, argument):
    kept = W.copy()
    with pytest.raises(ssad.UnsupportedSyntaxError, match="defined outside the function"):
        ssad.grad(function)(X, argument)
    np.testing.assert_array_equal(W, kept)


def global_copied_on_one_path(x, c):
    t = W.copy() if c > 0 else x * 1.0
    t[0] = 3.0 * x[1]
    return np.sum(np.sin(W * x)) + np.sum(t * x)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_copy_of_the_global_on_one_path_is_exact(c):
    np.testing.assert_allclose(ssad.grad(global_copied_on_one_path)(X, c),
                               numerical_gradient(lambda x: global_copied_on_one_path(x, c), X), rtol=1e-6, atol=1e-8)


def list_then_array_in_a_loop(x, n):
    t = [x[0], x[1]]
    u = t
    for _ in range(n):
        u = t + t
        t = np.array(u[:2]) * x[2]
    return np.sum(np.array(u)) + np.sum(t)


@pytest.mark.parametrize("n", [1, 2])
def test_a_list_the_loop_rebinds_to_an_array_is_not_joined_as_a_list(n):
    with pytest.raises(ssad.SsadError, match="on a list or tuple"):
        ssad.grad(list_then_array_in_a_loop)(X, n)


def list_grown_in_a_loop(x, n):
    acc = [x[0]]
    more = [x[1]]
    for i in range(n):
        acc = acc + [x[i % 4] * x[3]]
        more += [acc[-1] * 2.0]
        both = more + acc if i % 2 else acc + more
        acc = both[1:] * 1
    return np.sum(np.array(acc)) + np.sum(np.array(more)) ** 2


def list_on_either_path(x, c):
    t = [x[0], x[1]] if c > 0 else [x[2] * x[3]]
    u = t + t
    return np.sum(np.array(u) ** 2)


@pytest.mark.parametrize("function, argument", [
    (list_grown_in_a_loop, 0), (list_grown_in_a_loop, 3), (list_on_either_path, 1.0), (list_on_either_path, -1.0),
])
def test_lists_every_path_keeps_are_still_joined_as_lists(function, argument):
    expected = numerical_gradient(lambda x: function(x, argument), X)
    np.testing.assert_allclose(ssad.grad(function)(X, argument), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(function, (X, argument), (Y, 0.0))[1], expected @ Y, rtol=1e-6, atol=1e-8)


# A name a display makes on one path and an operator on the other: its adjoint may be a list,
# whose parts add up with `add_adjoint` (`+` joined two lists: [0.325, 0.298] for [0.214, 0.482]).


def list_or_array_read_twice(x, c):
    if c > 0:
        t = [x[0], x[1]]
    else:
        t = x[:2] * 2.0
    s = np.sum(np.array(t) ** 2)
    r = np.sum(np.sin(np.array(t)))
    return s * r


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_the_adjoint_of_a_list_or_an_array_adds_up_as_either(c):
    expected = numerical_gradient(lambda x: list_or_array_read_twice(x, c), X)
    np.testing.assert_allclose(ssad.grad(list_or_array_read_twice)(X, c), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(list_or_array_read_twice, (X, c), (Y, 0.0))[1], expected @ Y, rtol=1e-6, atol=1e-8)
    hessian = ssad.hessian(list_or_array_read_twice)(X, c)
    columns = [(ssad.grad(list_or_array_read_twice)(X + 1e-6 * e, c) - ssad.grad(list_or_array_read_twice)(X - 1e-6 * e, c))
               / 2e-6 for e in np.eye(4)]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-7)


# A name can hold a global array through a call too: a helper of the user's, or a nested
# function, that returns it on some path (`return W if flag else x * 1.0`), a view of it or a
# field of a global object. `t = pick(c > 0); t[0] = v` changed W, a silently wrong gradient
# in both modes; it is refused as `t = W; t[0] = v` is. A helper that only reads W is not.


class _Model:
    def __init__(self):
        self.w = np.array([0.2, 0.4, -0.6, 0.9])


MODEL = _Model()


def _global_or_copy(x, flag):
    return W if flag else x * 1.0


def _view_of_global(x, flag):
    v = W[::-1]
    return v if flag else x * 1.0


def _field_of_global_object(x, flag):
    return MODEL.w if flag else x * 1.0


def _through_another_helper(x, flag):
    return _global_or_copy(x, flag)


def _made_from_global(x, flag):
    return W * 2.0 if flag else x * 1.0


def writes_what_a_helper_returns(helper):
    def f(x, c):
        t = helper(x, c > 0)
        t[0] = 3.0 * x[1]
        return np.sum(t * x) + np.sum(W * x) + np.sum(MODEL.w * x)
    return f


def writes_what_a_nested_function_returns(x, c):
    def pick(flag):
        return W if flag else x * 1.0
    t = pick(c > 0)
    t[0] = 3.0 * x[1]
    return np.sum(t * x) + np.sum(W * x)


def writes_what_a_lambda_returned_in_a_loop(x, n):
    pick = lambda k: W[1:] if k > 0 else x[1:] * 1.0  # noqa: E731
    t = x * 1.0
    s = 0.0
    for k in range(n):
        t[0] = 3.0 * x[1]
        s = s + np.sum(t)
        t = pick(k)
    return s + np.sum(W * x)


@pytest.mark.parametrize("f, argument", [
    (writes_what_a_helper_returns(_global_or_copy), 1.0), (writes_what_a_helper_returns(_global_or_copy), -1.0),
    (writes_what_a_helper_returns(_view_of_global), 1.0), (writes_what_a_helper_returns(_field_of_global_object), 1.0),
    (writes_what_a_helper_returns(_through_another_helper), 1.0), (writes_what_a_nested_function_returns, 1.0),
    (writes_what_a_lambda_returned_in_a_loop, 3),
], ids=["helper", "helper-other-path", "view", "field", "two-helpers", "nested", "lambda-in-a-loop"])
def test_a_global_array_a_call_may_return_is_not_written_into(f, argument):
    kept, kept_w = W.copy(), MODEL.w.copy()
    for run in (lambda: ssad.grad(f)(X.copy(), argument), lambda: ssad.jvp(f, (X.copy(), argument), (Y, 0.0))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="defined outside the function"):
            run()
    np.testing.assert_array_equal(W, kept)
    np.testing.assert_array_equal(MODEL.w, kept_w)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_helper_that_makes_a_new_array_from_a_global_is_differentiated(c):
    f = writes_what_a_helper_returns(_made_from_global)
    expected = numerical_gradient(lambda x: f(x, c), X)
    np.testing.assert_allclose(ssad.grad(f)(X.copy(), c), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(), c), (Y, 0.0))[1], expected @ Y, rtol=1e-6, atol=1e-8)


# A list bound in a loop from the list of the pass before (`ys = xs + [v]`, then `xs = ys[1:]`)
# is still joined as a list; where a later pass makes it an array (`xs = np.array(ys[1:])`),
# `xs + [v]` is NumPy's addition there, which crashed the gradient ("need at least one array
# to stack"): it is refused where it runs.


def rolls_a_window(x, n):
    xs = [x[0], x[1]]
    s = 0.0
    for i in range(n):
        ys = xs + [x[2] * i]
        s = s + np.sum(np.array(xs + ys) ** 2)
        xs = ys[1:]
    return s


def rolls_a_window_into_an_array(x, n):
    xs = [x[0], x[1]]
    s = 0.0
    for i in range(n):
        ys = xs + [x[2] * i]
        s = s + np.sum(np.array(xs + ys) ** 2)
        xs = np.array(ys[1:]) * 1.0
    return s


@pytest.mark.parametrize("function, n", [
    (rolls_a_window, 0), (rolls_a_window, 1), (rolls_a_window, 3), (rolls_a_window_into_an_array, 1),
])
def test_a_list_the_loop_keeps_a_list_is_joined_in_every_pass(function, n):
    expected = numerical_gradient(lambda x: function(x, n), X)
    np.testing.assert_allclose(ssad.grad(function)(X, n), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(function, (X, n), (Y, 0.0))[1], expected @ Y, rtol=1e-6, atol=1e-8)


def test_a_list_a_later_pass_makes_an_array_is_refused_where_it_is_added_to():
    line = rolls_a_window_into_an_array.__code__.co_firstlineno + 4
    for run in (lambda: ssad.grad(rolls_a_window_into_an_array)(X, 3),
                lambda: ssad.jvp(rolls_a_window_into_an_array, (X, 3), (Y, 0.0))):
        with pytest.raises(ssad.SsadError, match="of a NumPy array and a list or tuple") as caught:
            run()
        assert (caught.value.filename, caught.value.lineno) == (__file__, line)
