"""Values changed in place where Python reads them later: a `for` loop over what its body
changes, a method that changes its receiver used as a value, a slice of a list assigned.

Python's `for v in y:` reads each item when the loop reaches it; ssad walks y by index.
A write that reaches an item the loop has still to read (`y[i + 1] = ...`, through a view,
a second name, a helper that writes its argument), a list that grows or shrinks while it
is walked, a dict whose values are walked and written ahead: each gave a wrong gradient
(f_ahead: [0.6, 3, 1.4] for [5, 4.4, 1.4]) or even a wrong value, or an IndexError in
generated code, and is refused now at the user's line, in both modes. What the loop reads
as Python does (the item just read written, a dict's current key, a name rebound before
it is written, a live list's items) is differentiated, as are the rewrites the refusals
advise. `r = xs.reverse()`, `_ = y.sort()`, `[out.append(v) for v in x]` and the like
were read as calls that change nothing (zero or wrong gradients); they are refused where
the receiver is a list, dict, set or array, and left to objects of the user's. A slice
of a list assigned as many items (`xs[0:2] = [a, b]`) crashed in grad with "can only
assign an iterable"; it is differentiated, and one that changes the list's length is
refused in grad with a message about the assignment, where jvp follows it.
"""

import inspect

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

X = np.array([0.3, 1.2, -0.8])
T = np.array([1.0, -0.5, 0.25])


# ----- loops that change what they walk: refused -----


def writes_ahead_of_an_enumerate(x):
    y = x * 1.0
    t = 0.0
    for i, v in enumerate(y):
        if i + 1 < len(y):
            y[i + 1] = y[i + 1] + v  # refused
        t = t + v ** 2
    return t


def writes_ahead_of_reversed(x):
    y = x * 1.0
    t = 0.0
    for v in reversed(y):
        y[0] = y[0] * 3.0  # refused
        t = t + v
    return t


def writes_ahead_of_a_walked_slice(x):
    y = x * 1.0
    t = 0.0
    for v in y[1:]:
        y[2] = y[2] * 10.0  # refused
        t = t + v
    return t


def writes_ahead_through_a_second_name(x):
    y = x * 1.0
    z = y
    t = 0.0
    for v in y:
        z[2] = z[2] * 10.0  # refused
        t = t + v
    return t


def adds_to_the_walked_array_in_place(x):
    y = x * 1.0
    t = 0.0
    for i, v in enumerate(y):
        if i == 0:
            y[1:] += v  # refused
        t = t + v * v
    return t


def writes_ahead_of_an_outer_loop(x):
    y = x * 1.0
    t = 0.0
    for a in y:
        for b in y:
            y[2] = y[2] + 0.1 * a  # refused
            t = t + a * b
    return t


def writes_a_dict_value_ahead(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for v in d.values():
        d["b"] = d["b"] * 10.0  # refused
        t = t + v
    return t


def writes_a_dict_item_ahead(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for _k, v in d.items():
        d["b"] = v * x[2]  # refused
        t = t + v
    return t


def adds_a_key_to_the_walked_dict(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d:
        t = t + d[k]
        d["c"] = t * 2.0  # refused
    return t


def adds_a_key_to_the_dict_whose_keys_are_walked(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in d.keys():
        t = t + d[k]
        if k == "b":
            d["c"] = t * 2.0  # refused
    return t


def appends_to_a_walked_list_it_may_be_given(x, given=None):
    xs = [x[0], x[1]] if given is None else given  # a list, which ssad knows when the code runs
    t = 0.0
    for v in xs:
        if len(xs) < 3:
            xs.append(v * 2.0)  # refused
        t = t + v
    return t


def appends_to_the_walked_list(x):
    xs = [x[0]]
    t = 0.0
    for v in xs:
        if len(xs) < 3:
            xs.append(v * 2.0)  # refused
        t = t + v
    return t


def inserts_into_the_walked_list(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in xs:
        t = t + v
        if len(xs) < 5:
            xs.insert(0, 1.0)  # refused
    return t


def pops_from_the_walked_list(x):
    xs = [x[0], 2.0 * x[1], 3.0 * x[2]]
    t = 0.0
    for v in xs:
        t = t + v
        xs.pop()  # refused
    return t


def pops_a_value_from_the_walked_list(x):
    xs = [x[0], 2.0 * x[1], 3.0 * x[2]]
    t = 0.0
    for v in xs:
        t = t + v * xs.pop()  # refused
    return t


def appends_to_a_list_the_walked_list_holds(x):
    rows = [[x[0]], [x[1]], [x[2]]]
    t = 0.0
    for r in rows:
        r.append(r[0] * 2.0)  # refused
        t = t + sum(r)
    return t


def scale_second(a):
    a[1] = a[1] * 10.0
    return 0.0


def grow(a):
    a.append(a[0] * 2.0)
    return 0.0


def a_helper_writes_the_walked_array(x):
    y = x * 1.0
    t = 0.0
    for v in y:
        _ = scale_second(y)  # refused
        t = t + v
    return t


def a_helper_grows_the_walked_list(x):
    xs = [x[0], x[1]]
    t = 0.0
    for v in xs:
        if len(xs) < 4:
            r = grow(xs)  # refused
            t = t + r
        t = t + v
    return t


def _grow_through(a):
    return grow(a)


def _drop_first(a):
    del a[0]
    return 0.0


def a_helper_grows_the_walked_lists_item_through_another(x):
    rows = [[x[0]], [x[1]]]
    t = 0.0
    for r in rows:
        t = t + _grow_through(r)
        t = t + sum(r)
    return t


def a_helper_deletes_from_the_walked_lists_item(x):
    rows = [[x[0], x[1]], [x[1], x[2]]]
    t = 0.0
    for r in rows:
        t = t + _drop_first(r)
        t = t + r[0]
    return t


def writes_what_a_generator_in_the_header_reads(x):
    y = x * 1.0
    t = 0.0
    for v in (u * 2.0 for u in y):
        y[2] = y[2] * 10.0  # refused
        t = t + v
    return t


WALK_REFUSED = [
    (writes_ahead_of_an_enumerate, r"`y\[\.\.\.\] = \.\.\.` changes `y` in the loop on line \d+, which walks `y`: "
                                   r"the change reaches an item the loop has still to read.*walk the indices"),
    (writes_ahead_of_reversed, "which walks `y`: the change reaches an item the loop has still to read"),
    (writes_ahead_of_a_walked_slice, r"which walks `y\[1:\]`: the change reaches an item"),
    (writes_ahead_through_a_second_name, "changes `z` in the loop on line .* which walks `y`"),
    (adds_to_the_walked_array_in_place, "which walks `y`: the change reaches an item"),
    (writes_ahead_of_an_outer_loop, "which walks `y`: the change reaches an item"),
    (writes_a_dict_value_ahead, r"which walks the values of `d`.*walk its keys \(`for k in list\(d\):`"),
    (writes_a_dict_item_ahead, "which walks the values of `d`"),
    (adds_a_key_to_the_walked_dict, "adds or removes a key of `d` .* Python stops such a loop with RuntimeError"),
    (adds_a_key_to_the_dict_whose_keys_are_walked, "adds or removes a key of `d` .* walks the keys of `d`"),
    (appends_to_a_walked_list_it_may_be_given, r"`xs\.append\(\.\.\.\)` changes `xs` in the loop on line "
                                                r"\d+, which walks `xs`"),
    (appends_to_the_walked_list, r"`xs\.append\(\.\.\.\)` changes the length of `xs`, which the loop on line \d+ "
                                 r"walks.*walk a copy \(`for v in list\(xs\):`\)"),
    (inserts_into_the_walked_list, r"`xs\.insert\(\.\.\.\)` changes the length of `xs`"),
    (pops_from_the_walked_list, r"`xs\.pop\(\.\.\.\)` changes the length of `xs`"),
    (pops_a_value_from_the_walked_list, r"`xs\.pop\(\.\.\.\)` changes the length of `xs`"),
    (appends_to_a_list_the_walked_list_holds, r"`r\.append\(\.\.\.\)` changes the length of `r`, a list held by "
                                              r"`rows`, which the loop on line \d+ walks"),
    (a_helper_writes_the_walked_array, r"`scale_second\(\.\.\.\)` changes `y` \(through scale_second, which changes "
                                       r"its parameter `a` in place at line \d+\)"),
    (a_helper_grows_the_walked_list, r"`grow\(\.\.\.\)` changes the length of `xs` \(through grow"),
    (writes_what_a_generator_in_the_header_reads, r"which the generator `\(u \* 2\.0 for u in y\)` the loop on line "
                                                  r"\d+ walks reads as the loop runs"),
]


def _marked_line(f):
    """The line of `f`, in this file, marked `# refused`."""
    lines, first = inspect.getsourcelines(f)
    (offset,) = [k for k, text in enumerate(lines) if text.rstrip().endswith("# refused")]
    return first + offset


def _refused_in_both_modes(f, message):
    line = _marked_line(f)
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (T,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__
        assert caught.value.lineno == line


@pytest.mark.parametrize("f, message", WALK_REFUSED, ids=[f.__name__ for f, _ in WALK_REFUSED])
def test_a_loop_changing_what_it_walks_is_refused_at_the_users_line(f, message):
    _refused_in_both_modes(f, message)


@pytest.mark.parametrize("f", [a_helper_grows_the_walked_lists_item_through_another,
                               a_helper_deletes_from_the_walked_lists_item])
def test_a_helper_changing_the_length_of_a_walked_lists_item_is_refused(f):
    # where the loop gives the item (checked where the code runs), or in the helper
    message = (r"may change the length of `r` .*a list held by `rows`|`a\.(append|pop)\(\.\.\.\)` would change an "
               r"array or list the caller passed in")
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (T,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__


def test_the_refused_loops_read_the_changes_in_python():
    # what ssad's loop over indices read (the items as the loop began) differs from Python's
    x0, x1, x2 = X
    assert writes_ahead_of_reversed(X) == pytest.approx(x2 + x1 + 9.0 * x0)
    assert writes_ahead_of_a_walked_slice(X) == pytest.approx(x1 + 10.0 * x2)
    assert writes_a_dict_value_ahead(X) == pytest.approx(x0 + 10.0 * x1)
    assert appends_to_the_walked_list(X) == pytest.approx(7.0 * x0)
    assert inserts_into_the_walked_list(X) == pytest.approx(3.0 * x0 + x1 + x2)
    assert pops_from_the_walked_list(X) == pytest.approx(x0 + 2.0 * x1)
    with pytest.raises(RuntimeError, match="dictionary changed size"):
        adds_a_key_to_the_walked_dict(X)


# ----- loops that change what they walk as Python reads it: differentiated -----


def writes_the_item_just_read(x):
    y = x * 1.0
    t = 0.0
    for i, v in enumerate(y):
        y[i] = v * 2.0
        t = t + v ** 2
    return t + np.sum(y ** 2)


def writes_the_item_just_read_walking_backwards(x):
    y = x * 1.0
    t = 0.0
    for v in reversed(y):
        y[-1] = y[-1] * v
        t = t + v ** 2
    return t + np.sum(y ** 2)


def writes_ahead_only_in_the_last_iteration(x):
    y = x * 1.0
    t = 0.0
    for i, v in enumerate(y):
        if i == 2:
            y[0] = y[0] * v
        t = t + v ** 2
    return t + np.sum(y ** 2)


def walks_the_indices_instead(x):
    y = x * 1.0
    t = 0.0
    for i in range(len(y)):
        v = y[i]
        if i + 1 < len(y):
            y[i + 1] = y[i + 1] + v
        t = t + v ** 2
    return t


def rebinds_the_walked_name_then_writes(x):
    y = x * 1.0
    t = 0.0
    for v in y:
        y = y * 2.0
        y[0] = 5.0 * v
        t = t + v * np.sum(y)
    return t


def grows_the_lists_a_list_holds_by_index(x):
    rows = [[x[0]], [x[1]], [x[2]]]
    t = 0.0
    for k in range(len(rows)):
        rows[k] = rows[k] + [rows[k][0] * 2.0]
        t = t + sum(rows[k])
    return t


def writes_the_current_dict_item(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k, v in d.items():
        d[k] = v * 2.0
        t = t + v
    return t * d["a"] + d["b"]


def squares_each_value_by_its_key(x):
    d = {"a": x[0], "b": x[1] * x[2]}
    for k in d:
        d[k] = d[k] ** 2
    return d["a"] * d["b"]


def walks_a_dicts_keys_reading_values_as_they_are(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for k in list(d):
        v = d[k]
        d["b"] = d["b"] * 10.0
        t = t + v
    return t


def writes_ahead_in_a_list_it_reads_by_name(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in xs:
        xs[2] = xs[2] * 10.0
        t = t + v
    return t


def appends_to_a_copy_of_the_list_it_walks(x):
    xs = [x[0]]
    t = 0.0
    for v in list(xs):
        xs.append(v * 2.0)
        t = t + v
    return t + sum(xs)


def grows_a_list_walked_by_index(x):
    xs = [x[0]]
    t = 0.0
    k = 0
    while k < len(xs):
        v = xs[k]
        if len(xs) < 3:
            xs.append(v * x[1])
        t = t + v
        k += 1
    return t


def _halve(a, b):
    b /= 2.0  # a number given as b: the name is rebound, nothing the loop walks changes
    return a * b


def gives_each_walked_number_to_a_helper_that_divides_it(x):
    # the loop walks the array x was when it began, while the body rebinds x
    y = x[::-1] * 1.0
    for _i, v in enumerate(x):
        x = 0.5 * x + np.tanh(_halve(y, v))
    return np.sum(x * x)


def gives_each_walked_row_to_a_helper_that_scales_its_copy(x):
    m = np.outer(x, x[::-1])
    t = 0.0
    for row in m:
        t = t + np.sum(_halve(x, row * 1.0))
    return t


READ_AS_PYTHON_DOES = [
    gives_each_walked_number_to_a_helper_that_divides_it,
    gives_each_walked_row_to_a_helper_that_scales_its_copy,
    writes_the_item_just_read,
    writes_the_item_just_read_walking_backwards,
    writes_ahead_only_in_the_last_iteration,
    walks_the_indices_instead,
    rebinds_the_walked_name_then_writes,
    grows_the_lists_a_list_holds_by_index,
    writes_the_current_dict_item,
    squares_each_value_by_its_key,
    walks_a_dicts_keys_reading_values_as_they_are,
    writes_ahead_in_a_list_it_reads_by_name,
    appends_to_a_copy_of_the_list_it_walks,
    grows_a_list_walked_by_index,
]


def _matches_finite_differences(f, x=X):
    expected = numerical_gradient(f, x.copy())
    value, gradient = ssad.value_and_grad(f)(x.copy())
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    _, along = ssad.jvp(f, (x.copy(),), (T,))
    np.testing.assert_allclose(along, expected @ T, rtol=1e-6, atol=1e-8)
    grad_f = ssad.grad(f)
    hessian_t = numerical_gradient(lambda v: float(np.sum(grad_f(v) * T)), x.copy())
    np.testing.assert_allclose(ssad.hessian(f)(x.copy()) @ T, hessian_t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", READ_AS_PYTHON_DOES, ids=[f.__name__ for f in READ_AS_PYTHON_DOES])
def test_a_loop_that_reads_its_changes_as_python_does_is_differentiated(f):
    _matches_finite_differences(f)


def test_the_indices_walked_give_what_python_computes():
    # the advice of the refusal of writes_ahead_of_an_enumerate, in closed form
    x0, x1, x2 = X
    expected = np.array([2 * x0 + 2 * (x0 + x1) + 2 * (x0 + x1 + x2), 2 * (x0 + x1) + 2 * (x0 + x1 + x2),
                         2 * (x0 + x1 + x2)])
    np.testing.assert_allclose(ssad.grad(walks_the_indices_instead)(X.copy()), expected, rtol=1e-12)
    assert writes_ahead_of_an_enumerate(X) == pytest.approx(walks_the_indices_instead(X))


# ----- methods that change their receiver, used as values -----


def sorts_as_a_value(x):
    y = x * 1.0
    _ = y.sort()  # refused
    return y[0] * 3.0 + y[2]


def reverses_as_a_value(x):
    xs = [x[0], x[1], x[2]]
    _ = xs.reverse()  # refused
    return xs[0] * 2.0 + xs[2]


def updates_as_a_value(x):
    d = {"a": x[0]}
    _ = d.update(a=x[1] * 5.0)  # refused
    return d["a"]


def fills_as_a_value(x):
    y = x * 1.0
    _ = y.fill(2.0)  # refused
    return np.sum(y * x)


def extends_as_a_value(x):
    out = [x[0]]
    _ = out.extend([x[1], x[2]])  # refused
    return sum(out)


def removes_as_a_value(x):
    xs = [x[0], 5.0, x[2]]
    _ = xs.remove(5.0)  # refused
    return xs[1] * 2.0


def clears_as_a_value(x):
    xs = [x[0], x[2]]
    _ = xs.clear()  # refused
    xs.append(x[1])
    return xs[0] * 2.0


def appends_in_a_comprehension(x):
    out = []
    _ = [out.append(v * 2.0) for v in x]  # refused
    return sum(out)


def sets_a_default_as_a_value(x):
    d = {"a": x[0]}
    v = d.setdefault("b", x[1] * 3.0)  # refused
    return v * d["a"] + d["b"]


METHOD_REFUSED = [
    (sorts_as_a_value, r"`y\.sort\(\.\.\.\)` changes `y` in place; used as a value, ssad would read it as a call "
                       r"that changes nothing: sort into a new value \(`y = np\.sort\(y\)`"),
    (reverses_as_a_value, r"`xs\.reverse\(\.\.\.\)` changes `xs` in place.*`xs = xs\[::-1\]`"),
    (updates_as_a_value, r"`d\.update\(\.\.\.\)` changes `d` in place.*make a new dict"),
    (fills_as_a_value, r"`y\.fill\(\.\.\.\)` changes `y` in place.*np\.full_like"),
    (extends_as_a_value, r"`out\.extend\(\.\.\.\)` changes `out` in place.*as a statement of its own"),
    (removes_as_a_value, r"`xs\.remove\(\.\.\.\)` changes `xs` in place"),
    (clears_as_a_value, r"`xs\.clear\(\.\.\.\)` changes `xs` in place.*`xs = \[\]`"),
    (appends_in_a_comprehension, r"`out\.append\(\.\.\.\)` changes `out` in place.*in a `for` loop rather than a "
                                 r"comprehension"),
    (sets_a_default_as_a_value, r"`d\.setdefault\(\.\.\.\)` changes `d` in place"),
]


@pytest.mark.parametrize("f, message", METHOD_REFUSED, ids=[f.__name__ for f, _ in METHOD_REFUSED])
def test_a_changing_method_used_as_a_value_is_refused_at_the_users_line(f, message):
    _refused_in_both_modes(f, message)


def test_the_refused_methods_change_their_receivers_in_python():
    x0, x1, x2 = X
    assert sorts_as_a_value(X) == pytest.approx(3.0 * x2 + x1)  # 3 * min + max
    assert reverses_as_a_value(X) == pytest.approx(2.0 * x2 + x0)
    assert updates_as_a_value(X) == pytest.approx(5.0 * x1)
    assert appends_in_a_comprehension(X) == pytest.approx(2.0 * np.sum(X))


def pops_inside_an_expression(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    s = x[0] + xs.pop() * 2.0
    return s * 3.0 + xs[-1]


def pops_a_dict_value(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    v = d.pop("a")
    return v * 3.0 + d["b"]


def pops_the_first_item(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    v = xs.pop(0)
    return v * 3.0 + xs[0]


class Stepper:
    """Methods named as list, dict and array methods that change nothing and return values."""

    def __init__(self, rate):
        self.rate = rate

    def update(self, g, state):
        return g * self.rate, state + 1

    def append(self, v):
        return v * 3.0

    def extend(self, v):
        return v - 1.0


STEPPER = Stepper(0.5)


def updates_with_an_object_of_the_users(x):
    stepper = Stepper(0.5)
    step, count = stepper.update(x * x, 0)
    return np.sum(step) * count + np.sum(stepper.append(x) ** 2) + np.sum(stepper.extend(x) ** 3)


def updates_with_a_global_object_of_the_users(x):
    step, count = STEPPER.update(x * x, 1)
    return np.sum(step) * count + np.sum(STEPPER.append(x) ** 2)


METHODS_AS_VALUES = [
    pops_inside_an_expression,
    pops_a_dict_value,
    pops_the_first_item,
    updates_with_an_object_of_the_users,
    updates_with_a_global_object_of_the_users,
]


@pytest.mark.parametrize("f", METHODS_AS_VALUES, ids=[f.__name__ for f in METHODS_AS_VALUES])
def test_pops_and_methods_of_the_users_objects_are_differentiated(f):
    _matches_finite_differences(f)


def appends_in_a_comprehension_statement(x):
    out = []
    [out.append(v) for v in x]
    return sum(out)


def appends_in_a_conditional_expression_statement(x):
    out = []
    out.append(x[0]) if x[0] > 0 else out.append(x[1])
    return sum(out)


def appends_after_and(x):
    out = [x[1]]
    x[0] > 0 and out.append(x[0])
    return sum(out)


@pytest.mark.parametrize("f, instead", [
    (appends_in_a_comprehension_statement, "write a `for` loop whose body makes the calls"),
    (appends_in_a_conditional_expression_statement, "write an `if` statement whose branches make the calls"),
    (appends_after_and, "write an `if` statement whose branches make the calls"),
])
def test_an_expression_statement_made_for_its_calls_says_what_to_write(f, instead):
    lines, first = inspect.getsourcelines(f)
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"is evaluated for what its calls do.*" + instead) as caught:
        ssad.grad(f)
    assert "has no effect" not in str(caught.value)
    assert caught.value.lineno == first + 2


# ----- slices of lists assigned -----


def assigns_a_slice_of_a_list(x):
    xs = [x[0], x[1], x[2]]
    xs[0:2] = [x[1] * 10.0, x[2] * 5.0]
    return xs[0] + xs[1] * 2.0 + xs[2] * 3.0


def assigns_a_slice_of_a_list_in_a_loop(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for _ in range(2):
        xs[0:2] = [xs[1] * xs[0], xs[2] * 5.0]
        t = t + xs[0] * xs[1]
    return t + xs[0] + xs[1] * 2.0 + xs[2] * 3.0


def assigns_a_tuple_to_a_slice_of_a_list(x):
    xs = [x[0], x[1], x[2]]
    xs[1:] = (x[0] * x[1], x[2] * 5.0)
    return xs[0] * xs[1] + xs[2] * 3.0


def assigns_a_named_list_to_a_slice(x):
    xs = [x[0], x[1], x[2]]
    ys = [x[2] ** 2, x[0]]
    xs[:2] = ys
    return xs[0] * xs[1] + xs[2] * 3.0


def assigns_an_extended_slice_of_a_list(x):
    xs = [x[0], x[1], x[2], x[0] * x[1]]
    xs[::2] = [x[1] * 10.0, x[2] * 5.0]
    return xs[0] + xs[1] * 2.0 + xs[2] * 3.0 + xs[3] * 4.0


SLICES_ASSIGNED = [
    assigns_a_slice_of_a_list,
    assigns_a_slice_of_a_list_in_a_loop,
    assigns_a_tuple_to_a_slice_of_a_list,
    assigns_a_named_list_to_a_slice,
    assigns_an_extended_slice_of_a_list,
]


@pytest.mark.parametrize("f", SLICES_ASSIGNED, ids=[f.__name__ for f in SLICES_ASSIGNED])
def test_a_slice_of_a_list_assigned_as_many_items_is_differentiated(f):
    _matches_finite_differences(f)


def test_a_slice_of_a_list_assigned_in_closed_form():
    np.testing.assert_allclose(ssad.grad(assigns_a_slice_of_a_list)(X.copy()), [0.0, 10.0, 13.0], rtol=1e-12)


def grows_a_list_by_a_slice(x):
    xs = [x[0], x[1], x[2]]
    xs[1:2] = [x[1] * 10.0, x[2] * 5.0]  # refused
    return xs[0] + xs[1] * 2.0 + xs[2] * 3.0 + xs[3] * 4.0


def shrinks_a_list_by_a_slice(x):
    xs = [x[0], x[1], x[2]]
    xs[0:2] = [x[1] * 10.0]  # refused
    return xs[0] + xs[1] * 2.0


def grows_a_list_passed_in(x, xs, ys):
    xs[1:2] = ys  # refused
    return xs[0] * x + xs[1] * 2.0 + xs[2] * 3.0 + xs[3] * 4.0


@pytest.mark.parametrize("f", [grows_a_list_by_a_slice, shrinks_a_list_by_a_slice])
def test_a_slice_assignment_changing_a_lists_length_is_refused_in_grad_and_followed_by_jvp(f):
    line = _marked_line(f)
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.hessian(f)(X.copy())):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=r"`xs\[\d:2\] = \[.*\]` assigns another number of "
                                                              r"items than the slice holds, which changes the length "
                                                              r"of the list.*build the new list") as caught:
            run()
        assert (caught.value.filename, caught.value.lineno) == (__file__, line)
    expected = numerical_gradient(f, X.copy())
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(),), (T,))[1], expected @ T, rtol=1e-6, atol=1e-8)


def test_a_slice_assignment_growing_a_list_argument_is_refused_in_grad():
    line = _marked_line(grows_a_list_passed_in)
    args = (0.5, [1.0, 2.0, 3.0], [4.0, 5.0])
    for wrt in (1, 2):  # the list, or what is assigned into it, carries gradients
        with pytest.raises(ssad.UnsupportedSyntaxError, match="changes the length of the list") as caught:
            ssad.grad(grows_a_list_passed_in, wrt=wrt)(*args)
        assert caught.value.lineno == line
    assert ssad.grad(grows_a_list_passed_in, wrt=0)(*args) == pytest.approx(1.0)  # xs[0]
    _, along = ssad.jvp(grows_a_list_passed_in, args, (1.0, [0.5, 0.5, 0.5], [1.0, -1.0]))
    assert along == pytest.approx(0.5 * 0.5 + 1.0 * 1.0 + 2.0 * 1.0 + 3.0 * -1.0 + 4.0 * 0.5)


def test_the_check_of_a_list_a_walk_holds_refuses_only_lists_it_holds():
    from ssad.runtime.refusals import held_list_kept

    row, other = [1.0], [2.0]
    for walked in ([row, [3.0]], (row,), {"a": row}):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="held"):
            held_list_kept(walked, row, "held", __file__, 1, 0)
        held_list_kept(walked, other, "held", __file__, 1, 0)
    held_list_kept(np.array([1.0, 2.0]), np.float64(1.0), "held", __file__, 1, 0)
    held_list_kept([1.0, 2.0], 1.0, "held", __file__, 1, 0)


# A helper that puts a view of its parameter into a list of its own (`items.append(a.T)`)
# changes its list, not the parameter: a loop walking `[y, h]` around `helper(h)` was
# refused as if the helper changed h (random program 857). A change through the list's
# items is still one of the parameter's.


def keeps_a_view_in_its_own_list(a):
    items = list((np.sin(a), np.cos(a)))
    items.append(a.reshape(3, 1).T.reshape(3))
    return np.tanh(a) + items[0] * items[2]


def changes_a_view_held_in_its_list(a):
    items = []
    items.append(a[1:])
    items[-1] *= 2.0
    return np.tanh(a)


def changes_a_view_held_two_deep(a):
    items = [[a[1:]]]
    inner = items[0][0]
    inner[0] = inner[0] * 5.0
    return np.tanh(a)


def walks_around(helper):
    def f(x):
        h = x * 2.0
        t = 0.0
        for v in [x[::-1] * 1.0, h]:
            t = t + np.sum(helper(h) * v)
        return t
    return f


def test_a_helper_keeping_a_view_in_its_own_list_changes_nothing_walked():
    f = walks_around(keeps_a_view_in_its_own_list)
    expected = numerical_gradient(f, X)
    np.testing.assert_allclose(ssad.grad(f)(X.copy()), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(),), (T,))[1], expected @ T, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("helper", [changes_a_view_held_in_its_list, changes_a_view_held_two_deep])
def test_a_helper_changing_its_parameter_through_a_list_it_made_is_still_refused_in_a_walk(helper):
    # refused where the walk is, or where the helper writes into what its caller passed in
    message = f"through {helper.__name__}, which changes its parameter `a`|would change an array or list the caller passed"
    with pytest.raises(ssad.UnsupportedSyntaxError, match=message):
        ssad.grad(walks_around(helper))(X.copy())
    with pytest.raises(ssad.UnsupportedSyntaxError, match=message):
        ssad.jvp(walks_around(helper), (X.copy(),), (T,))
