"""What a function of the user's changes of its parameters through a list, tuple or dict it
builds around them (`c = [a, p]; t = c[1]; t *= s`), as its callers see it (`views.effects`).

An item read from a display holding `p` is `p` itself, and from one holding `p[0]` that
element: a caller passing a 1-D array of numbers, whose elements a rebinding leaves alone,
is not refused; one passing an array the change writes into is. So is an element read at
an index `np.argmin` gives. Random programs 1420, 1542 and 2158 of the five-mode sweep were
refused at second order (a function calling `ssad.grad(f)` and `f`) for the first kind.
"""

import copy
import types

import numpy as np
import pytest

import ssad
from ssad.frontend.passing import changed_parameters
from ssad.testing import numerical_gradient


def item_of_a_list(p, s):
    c = [0.0, p]
    t = c[1]
    t *= s
    return 0.0


def element_in_a_tuple(p, s):
    c = (p[0], 1.0)
    t = c[0]
    t *= s
    return 0.0


def item_two_lists_down(p, s):
    c = [[p], 0.0]
    t = c[0][0]
    t *= s
    return 0.0


def inner_list_extended(p, s):
    c = [[p], 0.0]
    t = c[0]
    t += [s]  # the inner list is the function's own: p is left alone
    return 0.0


def value_of_a_dict(p, s):
    c = {"w": p, "b": 0.0}
    t = c["w"]
    t *= s
    return 0.0


def item_of_a_list_made_from_a_tuple(p, s):
    c = list((p, 1.0))
    t = c[0]
    t *= s
    return 0.0


def larger_of_two_elements(p, s):
    t = max(p[0], p[1])
    t *= s
    return 0.0


def largest_row(p, s):
    t = max(p, key=np.sum)
    t *= s
    return 0.0


def larger_of_two(p, q, s):
    t = max(q, p)
    t *= s
    return 0.0


def largest_of_a_list(p, q, s):
    t = max([p, q], key=np.sum)
    t *= s
    return 0.0


def element_of_a_chosen_pair(p, s):
    t = max([(max(p[3], -0.06), 0.5), (np.sum(p), -1.5)], key=lambda e: e[0] * e[1])[0]
    t *= s
    return 0.0


def element_at_the_smallest(p, s):
    t = p[np.argmin(np.abs(p))]  # an integer: an element (with an axis, integers: a new array)
    t *= s
    return 0.0


def four_lists_down(p, s):
    c = [[[[p]]]]
    t = c[0][0][0][0]
    t *= s
    return 0.0


def nested_in_a_loop(p, s):
    c = [p]
    for _ in range(5):
        c = [c]
    t = c
    for _ in range(6):
        t = t[0]
    t *= s
    return 0.0


def number_from_a_dict_holding_it(p, s):
    d = {"a": p, "b": 0.63}
    t = max(d["b"], 0.4)  # the number at "b": nothing of p
    t *= s
    return 0.0


def array_from_a_dict_holding_it(p, s):
    d = {"a": p, "b": 0.63}
    t = max(d["b"], 0.4) if s > 5.0 else d["a"]
    t *= s
    return 0.0


def put_into_a_dict(p, s):
    d = {"a": 0.5}
    d["b"] = p
    t = d["b"]
    t *= s
    return 0.0


def appended_to_a_list(p, s):
    items = []
    items.append(p)
    t = items[0]
    t *= s
    return 0.0


def added_to_a_list(p, s):
    items = [0.5]
    items += [p]
    for t in items:
        t *= s
    return 0.0


def put_into_an_object_field(p, s, o):
    o.w = p
    t = o.w
    t *= s
    return 0.0


def element_of_a_copy(p, s):
    c = p.copy()  # of a list, the same items; of an array, a new one
    t = c[1]
    t *= s
    return 0.0


def scales_its_first_item(c, s):
    t = c[0]
    t *= s
    return 0.0


def passes_a_list_holding_it(p, s):
    return scales_its_first_item([p, 1.0], s)


def passes_a_tuple_holding_an_element(p, s):
    return scales_its_first_item((p[0], 1.0), s)


def passes_a_list_of_a_list(p, s):
    return scales_its_first_item([[p]], s)


def third_of(a, b, scale=0.5):
    return b[2]


def third_or_all(b, whole):
    return b if whole else b[2]


def rebinds_what_a_helper_returns(p, s):
    t = third_of(p, p)
    t *= s
    return 0.0


def rebinds_what_a_helper_may_return_whole(p, s):
    t = third_or_all(p, s > 1)
    t *= s
    return 0.0


CHANGES = [  # (function, what it changes of `p`: itself, an element, nothing)
    (item_of_a_list, "itself"),
    (element_in_a_tuple, "elements"),
    (item_two_lists_down, "itself"),
    (inner_list_extended, None),
    (value_of_a_dict, "itself"),
    (item_of_a_list_made_from_a_tuple, "itself"),
    (larger_of_two_elements, "elements"),
    (largest_row, "elements"),
    (larger_of_two, "itself"),
    (largest_of_a_list, "itself"),
    (element_of_a_chosen_pair, "elements"),
    (element_at_the_smallest, "elements"),
    (four_lists_down, "itself"),
    (nested_in_a_loop, "itself"),
    (number_from_a_dict_holding_it, None),
    (array_from_a_dict_holding_it, "itself"),
    (put_into_a_dict, "itself"),
    (appended_to_a_list, "itself"),
    (added_to_a_list, "itself"),
    (put_into_an_object_field, "itself"),
    (element_of_a_copy, "elements"),
    (passes_a_list_holding_it, "itself"),
    (passes_a_tuple_holding_an_element, "elements"),
    (passes_a_list_of_a_list, None),  # its item is the inner list, the caller's own
    (rebinds_what_a_helper_returns, "elements"),
    (rebinds_what_a_helper_may_return_whole, "itself"),
]


@pytest.mark.parametrize(("function", "kind"), CHANGES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_what_a_function_changes_through_a_display_it_builds(function, kind):
    found = changed_parameters(function)
    assert found.get("p", (None, None))[1] == kind


def test_a_change_through_a_display_reaches_the_parameter_in_python_as_told():
    # what `changed_parameters` says covers what Python running the functions changes: a change
    # of the parameter itself writes into a matrix, a vector and a list (`t *= 2` repeats it in
    # place), of an element into a matrix and a list of lists only
    inputs = [(np.arange(1.0, 5.0).reshape(4, 1), ("itself", "elements")), (np.arange(1.0, 5.0), ("itself",)),
              (np.array([[3.0]]), ("itself", "elements")), (np.array([3.0]), ("itself",)),
              ([[1.0], [2.0], [3.0], [4.0]], ("itself", "elements")), ([1.0, 2.0, 3.0, 4.0], ("itself",))]
    for function, kind in CHANGES:
        for p, reached in inputs:
            p = copy.deepcopy(p)
            before = copy.deepcopy(p)
            given = {"p": p, "q": copy.deepcopy(p), "s": 2, "o": types.SimpleNamespace()}
            args = [given[n] for n in function.__code__.co_varnames[: function.__code__.co_argcount]]
            try:
                function(*args)
            except (TypeError, ValueError, IndexError):  # `c[0]` of a number, `max(q, p)` of arrays of
                continue  # more than one element, `p[3]` of one, `np.sum` of a list of lists: Python refuses these
            assert np.array_equal(np.asarray(p, dtype=object), np.asarray(before, dtype=object)) or kind in reached, (
                function.__name__, p)


# ----- as the callers see it


def shifts(a, b, scale=0.5):
    b += scale  # a number passed: rebound, nothing of the caller's changes
    return np.sum(np.sin(a))


def reads_an_element_through_a_list(y):
    items = [y * 2.0, y]
    return shifts(y, items[1][0]) + np.sum(y * y)


def calls_it_and_reads_y_again(y):
    return reads_an_element_through_a_list(y) + np.sum(np.cos(y))


def element_chosen_by_max(x):
    acc = max([(max(x[3], -0.06), 0.5), (np.sum(x), 1.5)], key=lambda p: p[0] * p[1])[0]
    acc += np.min(x) + 0.3 * acc * acc
    return acc * np.sum(x)


def calls_the_chooser_and_reads_x_again(x):
    return element_chosen_by_max(x) + np.sum(np.sin(x))


def element_at_the_smallest_rebound(x):
    t = x[np.argmin(np.cos(x))] if x[1] < 0.0 else min([x[1], 0.3], key=abs)
    t /= 1.0 + np.square(x[2])
    return t * np.sum(x)


def calls_it_and_reads_x_again(x):
    return element_at_the_smallest_rebound(x) + np.sum(np.sin(x))


def number_beside_it_in_a_dict(x, y):
    d = {"a": y, "b": 0.63}
    t = max(d["b"], 0.4)
    t *= np.tanh(np.sum(y))
    return t * np.sum(d["a"] * x)


def calls_it_with_y_and_reads_y_again(y):
    return number_beside_it_in_a_dict(y * 0.5, y) + np.sum(np.sin(y))


def scales_through_a_list(m, s):
    c = [m, 0.0]
    t = c[0]
    t *= s  # an array passed: written into
    return np.sum(m)


def calls_the_scaler_and_reads_m_again(m):
    return scales_through_a_list(m, 2.0) + np.sum(m * m)


def helper_element_after_a_rebinding(x):
    # random program 5290: `t += ...` on the name before it holds what the helper returns
    t = min([x[2], 0.3], key=abs)
    t += 0.5
    t = third_of(x, x)
    return np.sum(x * x) + np.sin(t)


def calls_the_helper_user_and_reads_x_again(x):
    return helper_element_after_a_rebinding(x) + np.sum(np.sin(x))


def scales_a_row_a_helper_returns(m, s):
    t = third_of(m, m)
    t *= s  # of a matrix, a row: written into
    return np.sum(m)


def calls_the_row_scaler_and_reads_m_again(m):
    return scales_a_row_a_helper_returns(m, 2.0) + np.sum(m * m)


Y = np.array([0.3, -0.7, 1.1, 0.4])


@pytest.mark.parametrize("function", [calls_it_and_reads_y_again, calls_the_chooser_and_reads_x_again,
                                      calls_it_and_reads_x_again, calls_it_with_y_and_reads_y_again,
                                      calls_the_helper_user_and_reads_x_again],
                         ids=lambda f: f.__name__)
def test_an_element_rebound_through_a_display_leaves_the_callers_vector_alone(function):
    # refused before: "changes its argument `y` ... in place"
    np.testing.assert_allclose(ssad.grad(function)(Y), numerical_gradient(function, Y), rtol=1e-6, atol=1e-8)


def test_an_array_written_through_a_display_is_refused_for_its_caller():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="changes its argument `m`"):
        ssad.grad(calls_the_scaler_and_reads_m_again)(Y)


def test_a_row_a_helper_returns_written_into_is_refused_for_its_caller():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="changes its argument `m`"):
        ssad.grad(calls_the_row_scaler_and_reads_m_again)(Y.reshape(4, 1) * np.ones((1, 2)))


@pytest.mark.parametrize("function", [reads_an_element_through_a_list, element_chosen_by_max,
                                      element_at_the_smallest_rebound, helper_element_after_a_rebinding],
                         ids=lambda f: f.__name__)
def test_a_function_calling_the_gradient_and_the_function_itself(function):
    # the second-order shape the sweep runs as `grad_inside`
    gradient = ssad.grad(function)

    def inside(y):
        return 0.5 * function(y) + np.sum(np.sin(gradient(y)) * y)

    np.testing.assert_allclose(ssad.grad(inside)(Y), numerical_gradient(inside, Y), rtol=1e-5, atol=1e-7)


def kept_and_doubled_through_a_dict(x):
    c = np.ones(3)
    t = np.sum(c * x)  # the gradient reads c: ones
    put_into_a_dict(c, 2.0)  # runs as written (nothing passed carries a gradient): doubles c
    return t + np.sum(c)


def kept_and_doubled_through_a_list(x):
    c = np.ones(3)
    t = np.sum(c * x)
    appended_to_a_list(c, 2.0)
    return t + np.sum(c)


@pytest.mark.parametrize("function", [kept_and_doubled_through_a_dict, kept_and_doubled_through_a_list],
                         ids=lambda f: f.__name__)
def test_a_value_put_into_a_container_and_changed_there_is_the_callers(function):
    # ssad gave [2, 2, 2]: the change through `d["b"]` or `items[0]` went unseen by the caller
    np.testing.assert_allclose(numerical_gradient(function, Y[:3]), [1.0, 1.0, 1.0], atol=1e-6)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="changes its argument `c`"):
        ssad.grad(function)(Y[:3])


# ----- a write into an array after reading an element of it through a list or tuple


def element_through_a_repeated_list(x, y):
    z = x * 1.0
    t = ([y.mean(), z[np.argmin(y)]] * 2)[3]  # a number of the vector z, which the write leaves alone
    z[1:2] *= np.sum(x * x)
    return np.sum(z) + np.sum(t**2)


def element_through_joined_tuples(x, y):
    z = x * 1.0
    t = ((z[2],) + (y[1], 0.5) * 2)[-5]
    z[0] -= ([abs(0.57), 0.48] * 2)[-2]
    return np.sum(z**2) + np.sum(t) * np.sum(y)


def list_holding_a_view_through_a_repeated_list(x, y):
    z = x * 1.0
    held = [z[1:]]
    t = ([held, 1.0] * 2)[0]  # a list holding a view of z, which the write changes
    z[1:2] *= 3.0
    return np.sum(t[0] * y[1:])


@pytest.mark.parametrize("function", [element_through_a_repeated_list, element_through_joined_tuples],
                         ids=lambda f: f.__name__)
def test_an_element_read_through_a_list_before_a_write_is_checked_where_it_runs(function):
    # refused before (random programs 3422 and 3478 at first order): `not_a_view_of` passes a number
    x, y = Y[:3], Y[1:] * 2.0
    got = ssad.grad(function, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda v: function(v, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[1], numerical_gradient(lambda v: function(x, v), y), rtol=1e-6, atol=1e-8)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array"):
        ssad.grad(function, wrt=(0, 1))(np.ones((3, 2)) * x[:, None], y)  # a row of a matrix: a view


def test_a_list_read_through_a_list_before_a_write_is_refused():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that `t` shares"):
        ssad.grad(list_holding_a_view_through_a_repeated_list)(Y[:3], Y[1:])


def element_or_number_kept_over_a_change(x, y, s):
    # random program 7779: `t` is `s` on one path and an element of `z` on the other, read after `z *= ...`
    z = x.copy()
    t = s if y[0] >= 0.75 else ((0.99,) + (z[1], 0.5) * 2)[1]
    z *= np.tanh(x)
    return np.sum(z) + np.sum(t) * s


@pytest.mark.parametrize("first", [0.1, 0.9])
def test_an_element_or_a_number_read_before_a_change_of_the_whole_array(first):
    y = np.array([first, 0.2, -0.3, 0.4])
    args = (Y, y, 0.7)
    got = ssad.grad(element_or_number_kept_over_a_change, wrt=(0, 2))(*args)
    expected = (numerical_gradient(lambda x: element_or_number_kept_over_a_change(x, y, 0.7), Y),
                numerical_gradient(lambda s: element_or_number_kept_over_a_change(Y, y, s), 0.7))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_a_row_read_before_a_change_of_the_whole_matrix_is_refused_where_it_runs():
    m = Y.reshape(4, 1) * np.array([[1.0, -0.5]])
    y = np.array([0.1, 0.2, -0.3, 0.4])  # the path reading `z[1]`, a row
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`z \\*= ...` would change"):
        ssad.grad(element_or_number_kept_over_a_change)(m, y, 0.7)
    np.testing.assert_allclose(  # the other path reads `s`
        ssad.grad(element_or_number_kept_over_a_change)(m, y + 1.0, 0.7),
        numerical_gradient(lambda m: element_or_number_kept_over_a_change(m, y + 1.0, 0.7), m), rtol=1e-6, atol=1e-8)
