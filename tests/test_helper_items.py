"""A function of the user's that copies the list or dict it is passed and changes an item of
the copy in place: the item is the caller's, and the caller reads it afterwards.

`helper(ys, x)` makes `zs` from its parameter (`ys.copy()`, `list(ys)`, `dict(d)`, `{**d}`,
...) and changes it (`zs[0] += x`, `b = zs.pop(); b *= x`, `for b in zs: b *= x`, ...); the
caller then reads `ys`. A shallow copy holds the caller's arrays, so Python's `+=` on one of
them changes the caller's array; ssad's lowering stores a new value. Each program must be
differentiated exactly (gradient, forward derivative and Hessian-vector product, against
central differences) or refused at a line of the program. On the code before this file,
`zs = ys.copy(); zs[0] += x`, `b = zs.pop(); b *= x` on a `.copy()`, and `dict(d)`, `{**d}`
with `e['a'] *= x` gave a wrong derivative: the caller's array changed in Python and not in
ssad. Where the items are numbers, nothing of the caller's changes, and the programs are
differentiated (what the list holds is checked where the code runs); only `ys[:]`, taken for a
view of the caller's list as for an array, and the changes of `ys` itself are refused there.
"""

import functools
import inspect
import itertools

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

from .program_matrix import load, outcome

MAKERS = {
    "copy_method": "ys.copy()", "list": "list(ys)", "slice": "ys[:]", "copy_copy": "copy.copy(ys)",
    "comprehension": "[v for v in ys]", "name": "ys",
}
CHANGES = {
    "add_to_item": "zs[0] += w",
    "scale_popped": "b = zs.pop()\n    b *= w",
    "scale_item_by_name": "b = zs[0]\n    b *= w",
    "scale_walked": "for b in zs:\n        b *= w",
    "replace_item": "zs[0] = zs[0] * w",
    "append": "zs.append(w * 3.0)",
}
DICT_MAKERS = {"dict_copied": "dict(d)", "dict_spread": "{**d}", "dict_copy_method": "d.copy()",
               "dict_copy_copy": "copy.copy(d)", "dict_name": "d"}
DICT_CHANGES = {
    "add_to_entry": "e['a'] += w",
    "scale_popped": "b = e.pop('a')\n    b *= w",
    "scale_entry_by_name": "b = e['a']\n    b *= w",
    "add_to_what_get_gives": "b = e.get('a')\n    b += w",
    "scale_values": "for b in e.values():\n        b *= w",
    "replace_entry": "e['a'] = e['a'] * w",
}
CASES = list(itertools.product(MAKERS, CHANGES))
DICT_CASES = list(itertools.product(DICT_MAKERS, DICT_CHANGES))
# the caller's items: arrays (which `+=` changes in place) or numbers (which it rebinds)
ITEMS = {"arrays": ("x * 1.0", "x * 2.0", "x"), "numbers": ("x[0] * 1.0", "x[1] * 2.0", "x[0]")}


def _list_program(name, maker, change, w, caller):
    """`helper_name(ys, w)`, which makes `zs` from `ys` and changes it, and `name(x)`, whose
    body is the lines `caller` with CALL standing for the call of the helper."""
    return (f"def helper_{name}(ys, w):\n    zs = {MAKERS[maker]}\n    {CHANGES[change]}\n    return np.sum(zs[0])\n\n\n"
            f"def {name}(x):\n" + "".join(f"    {line}\n" for line in caller).replace("CALL", f"helper_{name}(ys, {w})"))


def _source():
    functions = ["import copy", "import numpy as np"]
    for (maker, change), (kind, (first, second, w)) in itertools.product(CASES, ITEMS.items()):
        functions.append(_list_program(f"{kind}__{maker}__{change}", maker, change, w, [
            f"ys = [{first}, {second}]", "r = CALL", "return r + np.sum(ys[0] * x) + np.sum(ys[-1]) * len(ys)"]))
    for (maker, change), (kind, (first, second, w)) in itertools.product(DICT_CASES, ITEMS.items()):
        name = f"{kind}__{maker}__{change}"
        functions.append(
            f"def helper_{name}(d, w):\n    e = {DICT_MAKERS[maker]}\n    {DICT_CHANGES[change]}\n"
            f"    return np.sum(e.get('a', 1.0))\n\n\n"
            f"def {name}(x):\n    d = {{'a': {first}, 'b': {second}}}\n    r = helper_{name}(d, {w})\n"
            f"    return r + np.sum(d['a'] * x) + np.sum(d['b']) * len(d)\n")
    return "\n\n".join(functions)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return load(tmp_path_factory.mktemp("helper_items"), "helper_items_programs", _source())


# The caller reads the item by a name of its own, not through the list: `v = x * 1.0;
# ys = [v, ...]; helper(ys, w); ... v ...`. Wrong before for every maker (the check of the
# call looked only at the names sharing `ys`, not at those of what it holds).
ITEM_CHANGES = ["add_to_item", "scale_popped", "scale_item_by_name", "scale_walked"]
BY_NAME = list(itertools.product(MAKERS, ITEM_CHANGES, ITEMS))


def _source_read_by_name():
    functions = ["import copy", "import numpy as np"]
    for maker, change, kind in BY_NAME:
        first, second, w = ITEMS[kind]
        functions.append(_list_program(f"{kind}__{maker}__{change}", maker, change, w, [
            f"v = {first}", f"ys = [v, {second}]", "r = CALL", "return r + np.sum(v * x)"]))
    return "\n\n".join(functions)


@pytest.fixture(scope="module")
def read_by_name(tmp_path_factory):
    return load(tmp_path_factory.mktemp("helper_items_by_name"), "helper_items_by_name", _source_read_by_name())


def test_a_helper_changing_an_item_the_caller_reads_by_its_own_name(read_by_name):
    outcomes = {case: outcome(getattr(read_by_name, "__".join((case[2], case[0], case[1])))) for case in BY_NAME}
    # numbers are rebound, nothing of the caller's changes; `ys[:]` and `pop` of the list itself are refused
    assert {case for case in BY_NAME if case[2] == "numbers" and case[0] not in ("slice", "name")
            } <= {case for case, result in outcomes.items() if result == "exact"}
    assert all(outcomes[case] == "refused" for case in BY_NAME if case[2] == "arrays")


@pytest.mark.parametrize("kind", list(ITEMS))
def test_a_helper_changing_a_list_it_copied(programs, kind):
    outcomes = {case: outcome(getattr(programs, f"{kind}__{case[0]}__{case[1]}")) for case in CASES}
    exact = {case for case, result in outcomes.items() if result == "exact"}
    # a change of the copy itself is none of the caller's
    assert {("copy_method", "replace_item"), ("copy_method", "append"), ("list", "append"),
            ("copy_copy", "replace_item")} <= exact
    if kind == "numbers":  # `+=` of a number rebinds: nothing the caller holds changes
        # (`ys[:]` is taken for a view of the caller's list, as for an array: refused)
        assert {(maker, "add_to_item") for maker in MAKERS if maker not in ("name", "slice")} <= exact
        for change in ("scale_item_by_name", "scale_walked"):
            assert {(maker, change) for maker in MAKERS} <= exact, change
        # `pop` of the caller's list itself (or of `ys[:]`, taken for a view of it) is refused
        assert {(maker, "scale_popped") for maker in MAKERS if maker not in ("name", "slice")} <= exact


@pytest.mark.parametrize("kind", list(ITEMS))
def test_a_helper_changing_a_dict_it_copied(programs, kind):
    outcomes = {case: outcome(getattr(programs, f"{kind}__{case[0]}__{case[1]}")) for case in DICT_CASES}
    exact = {case for case, result in outcomes.items() if result == "exact"}
    assert {("dict_copied", "replace_entry"), ("dict_spread", "replace_entry")} <= exact
    if kind == "numbers":
        assert {(maker, "add_to_entry") for maker in DICT_MAKERS if maker != "dict_name"} <= exact


def scale(a):
    a *= 2.0
    return np.sum(a)


def scales_a_number_item(x):
    vals = [x[0] * 1.0, x[1] * 2.0]
    s = scale(vals[0])  # a number: `a *= 2.0` rebinds, and the caller's list is as it was
    return s + vals[0] * x[2]


def test_a_helper_changing_a_number_it_is_passed_is_differentiated():
    x = np.array([0.3, -0.7, 1.1])
    got = ssad.grad(scales_a_number_item)(x)
    np.testing.assert_allclose(got, numerical_gradient(scales_a_number_item, x), rtol=1e-6)


def bumped(a, w):
    a = a.copy()  # binds `a` anew: the writes below change the copy, not the caller's array
    a[0:2] += np.sin(a)[0:2] * w
    return np.sum(a * a)


def walks_and_calls(x, w):
    t = 0.0
    for v in x:
        t = t + v * bumped(x, w)
    return t


def test_a_helper_that_copies_its_parameter_first_is_differentiated_in_a_loop_walking_it():
    # refused before: the analysis of what `bumped` changes ignored that `a` was bound anew
    x, w = np.array([0.3, -0.7, 1.1]), 0.8
    got = ssad.grad(walks_and_calls, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda z: walks_and_calls(z, w), x), rtol=1e-6)
    np.testing.assert_allclose(got[1], numerical_gradient(lambda z: walks_and_calls(x, z), w), rtol=1e-6)


def copies_and_adds(xs):
    ys = xs.copy()
    ys[0] += 1.0
    return np.sum(ys[0] * ys[1])


def test_a_function_passed_to_the_api_changing_an_item_of_a_copy_is_differentiated():
    # the caller is the user: the gradient function copies the arrays first and leaves them as they were
    x = np.array([0.3, -0.7, 1.1])
    xs = [x * 1.0, x * 2.0]
    got = ssad.grad(copies_and_adds)(xs)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda z: copies_and_adds([z, x * 2.0]), x), rtol=1e-6)
    np.testing.assert_allclose(xs[0], x)


# ----- a function of the user's changing what it is passed, called anywhere in a statement


def doubles(a):
    a *= 2.0  # a number is rebound; an array (the caller's) is written into
    return np.sum(a)


def doubles_first(a):
    b = a[0]
    b *= 2.0  # the caller's first item, where that is an array
    return np.sum(b)


def shrinks(a, b):
    b /= 1.0 + a[0] ** 2  # `b` a number below: nothing of the caller's changes
    return np.sum(a) * b


def part_that_is_an_array(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles(xs[0])  # Python doubles the caller's xs[0]
    return s + np.sum(xs[0] * x)


def read_in_the_same_return(x):
    xs = [x * 1.0, x * 2.0]
    return doubles_first(xs) + np.sum(xs[0] * x)


def read_before_the_call_in_the_statement(x):
    xs = [x * 1.0, x * 2.0]
    return np.sum(xs[0] * doubles_first(xs))  # xs[0] is the array the call then doubles


def read_in_the_body_of_an_if(x):
    xs = [x * 1.0, x * 2.0]
    if doubles_first(xs) > -100.0:
        return np.sum(xs[0] * x)
    return np.sum(x)


def called_in_a_while_test(x):
    xs = [x * 1.0, x * 2.0]
    k = 0
    while k < 2 and doubles_first(xs) > -100.0:
        k += 1
    return np.sum(xs[0] * x)


def added_to_a_total(x):
    xs = [x * 1.0, x * 2.0]
    t = 0.0
    t += doubles_first(xs)
    return t + np.sum(xs[0] * x)


def part_in_a_conditional_expression(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles(xs[0]) if x[0] > 0 else 0.0
    return s + np.sum(xs[0] * x)


def called_in_a_comprehension(x):
    xs = [x * 1.0, x * 2.0]
    return sum([doubles_first(xs) for _ in range(2)]) + np.sum(x)


def parts_in_a_comprehension(x):
    xs = [x * 1.0, x * 2.0]
    t = sum([doubles(xs[i]) for i in range(2)])
    return t + np.sum(xs[0] * x)


def first(a):
    return a[0]


def chosen_part(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles(xs[0] if x[0] > 0 else xs[1])
    return s + np.sum(xs[0] * x)


def new_list_of_the_items(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles_first(list(xs))  # a new list, the same arrays
    return s + np.sum(xs[0] * x)


def part_returned_by_a_function(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles(first(xs))
    return s + np.sum(xs[0] * x)


def view_made_by_numpy(x):
    z = x * 1.0
    s = doubles(np.ravel(z))
    return s + np.sum(z * x)


def part_at_a_computed_index(x):
    xs = [x * 1.0, x * 2.0]
    s = doubles(xs[int(np.argmax(x)) % 2])
    return s + np.sum(xs[0] * x)


CHANGED = [  # (function, ssad's gradient at X before this check, central differences)
    (part_that_is_an_array, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (read_in_the_same_return, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (read_before_the_call_in_the_statement, None, None),
    (read_in_the_body_of_an_if, None, None),
    (called_in_a_while_test, None, None),
    (added_to_a_total, None, None),
    (part_in_a_conditional_expression, None, None),
    (called_in_a_comprehension, None, None),
    (parts_in_a_comprehension, None, None),
    (chosen_part, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (new_list_of_the_items, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (part_returned_by_a_function, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (view_made_by_numpy, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
    (part_at_a_computed_index, [2.6, 0.6, 4.2], [3.2, -0.8, 6.4]),
]
X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("function", [c[0] for c in CHANGED], ids=lambda f: f.__name__)
def test_a_call_changing_an_array_read_afterwards_is_refused_where_it_runs(function):
    # Python's derivative differs from the one the lowering (a new value for `a *= 2.0`) gives
    python = numerical_gradient(function, X)
    expected = {c[0]: c[2] for c in CHANGED}[function]
    if expected is not None:
        np.testing.assert_allclose(python, expected, atol=1e-6)
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"changes its argument `") as refused:
        ssad.grad(function)(X)
    assert refused.value.filename == __file__
    lines, start = inspect.getsourcelines(function)
    assert start < refused.value.lineno < start + len(lines)  # the line of the call in `function`
    assert "pass a copy" in str(refused.value)


def number_part(x):
    return shrinks(x, x[2]) + np.sum(x * x)


def number_part_in_a_conditional_expression(x):
    t = shrinks(x, x[1]) if x[0] > 0 else 0.0
    return t + np.sum(x * x)


def number_parts_in_a_comprehension(x):
    return sum([shrinks(x, x[i]) for i in range(3)]) + np.sum(x * x)


def number_part_by_keyword(x):
    return shrinks(x, b=x[2]) + np.sum(x * x)


def number_part_in_a_for_header(x):
    t = 0.0
    for v in [shrinks(x, x[0]), 1.0]:
        t = t + v * x[1]
    return t


def copied_first_then_changed(y, x):
    y = y.copy()  # bound anew at the top level: the change below is the copy's
    y *= np.tanh(x)
    return np.sum(y)


def calls_one_that_copies_first(x, y):
    return copied_first_then_changed(y, x) + np.sum(y * x)


@pytest.mark.parametrize("function", [number_part, number_part_in_a_conditional_expression,
                                      number_parts_in_a_comprehension, number_part_by_keyword,
                                      number_part_in_a_for_header], ids=lambda f: f.__name__)
def test_a_call_changing_a_number_it_is_passed_is_differentiated(function):
    # the element of an array is a number: `b /= ...` rebinds it, and the caller's array is as it was
    np.testing.assert_allclose(ssad.grad(function)(X), numerical_gradient(function, X), rtol=1e-6, atol=1e-9)
    tangent = np.array([0.5, -1.0, 0.25])
    _, derivative = ssad.jvp(function, (X,), (tangent,))
    np.testing.assert_allclose(derivative, numerical_gradient(function, X) @ tangent, rtol=1e-6, atol=1e-9)


def test_a_parameter_bound_anew_after_other_uses_is_not_the_callers():
    # `y` is read before `y = y.copy()`: the change after it is still the copy's (refused before)
    y = np.array([0.4, -0.2, 0.9])
    got = ssad.grad(calls_one_that_copies_first, wrt=(0, 1))(X, y)
    np.testing.assert_allclose(got[0], numerical_gradient(lambda z: calls_one_that_copies_first(z, y), X), rtol=1e-6)
    np.testing.assert_allclose(got[1], numerical_gradient(lambda z: calls_one_that_copies_first(X, z), y), rtol=1e-6)


# ----- the function itself runs (nothing passed carries a gradient): a value read before changes


def kept_for_the_gradient(x):
    c = np.ones(3)
    t = np.sum(c * x)  # the gradient reads c: ones
    s = doubles(c)  # nothing here carries a gradient: doubles runs as written and doubles c
    return t + s


def kept_for_the_gradient_call_alone(x):
    c = np.ones(3)
    t = np.sum(c * x)
    doubles(c)
    return t


def fills_a_buffer(x):
    buffer = np.zeros(3)
    doubles(buffer)  # runs as written; what reads the buffer afterwards sees what Python sees
    return np.sum((buffer + 1.0) * x)


def test_a_call_changing_a_value_read_before_is_refused():
    for function in (kept_for_the_gradient, kept_for_the_gradient_call_alone):
        # ssad gave [2, 2, 2]: the gradient read c after the call had doubled it
        np.testing.assert_allclose(numerical_gradient(function, X), [1.0, 1.0, 1.0], atol=1e-6)
        with pytest.raises(ssad.UnsupportedSyntaxError, match="changes its argument `c`"):
            ssad.grad(function)(X)


def test_a_call_alone_changing_a_value_read_only_afterwards_is_differentiated():
    np.testing.assert_allclose(ssad.grad(fills_a_buffer)(X), numerical_gradient(fills_a_buffer, X), atol=1e-9)


# ----- a call through a function value: the function is known when the code runs


def apply(fn, a):
    return fn(a)


def rest_doubles(*a):
    t = a[0]
    t *= 2.0
    return np.sum(t)


class Scaler:
    def scale(self, a):
        a *= 2.0
        return np.sum(a)


def through_a_name(x):
    xs = [x * 1.0, x * 2.0]
    g = doubles
    s = g(xs[0])
    return s + np.sum(xs[0] * x)


def through_a_parameter(x):
    xs = [x * 1.0, x * 2.0]
    s = apply(doubles, xs[0])
    return s + np.sum(xs[0] * x)


def through_star_args(x):
    xs = [x * 1.0, x * 2.0]
    s = rest_doubles(xs[0])
    return s + np.sum(xs[0] * x)


def through_a_method(x):
    xs = [x * 1.0, x * 2.0]
    s = Scaler().scale(xs[0])
    return s + np.sum(xs[0] * x)


def through_a_nested_function(x):
    xs = [x * 1.0, x * 2.0]

    def inner(a):
        a *= 2.0
        return np.sum(a)

    s = inner(xs[0])
    return s + np.sum(xs[0] * x)


def through_a_partial(x):
    xs = [x * 1.0, x * 2.0]
    s = functools.partial(doubles)(xs[0])
    return s + np.sum(xs[0] * x)


def through_a_list_of_functions(x):
    xs = [x * 1.0, x * 2.0]
    fs = [doubles]
    s = fs[0](xs[0])
    return s + np.sum(xs[0] * x)


def through_a_name_taped(x):
    c = np.ones(3)
    t = np.sum(c * x)
    g = doubles
    s = g(c)
    return t + s


@pytest.mark.parametrize("function", [through_a_name, through_a_parameter, through_star_args, through_a_method,
                                      through_a_nested_function, through_a_partial, through_a_list_of_functions,
                                      through_a_name_taped], ids=lambda f: f.__name__)
def test_a_call_through_a_function_value_changing_an_array_is_refused(function):
    # each gave a wrong gradient: [2.6, 0.6, 4.2] for [3.2, -0.8, 6.4], or [2, 2, 2] for [1, 1, 1]
    python = numerical_gradient(function, X)
    np.testing.assert_allclose(python, [1.0, 1.0, 1.0] if function is through_a_name_taped else [3.2, -0.8, 6.4],
                               atol=1e-6)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="in place") as refused:
        ssad.grad(function)(X)
    assert refused.value.filename == __file__


def halves_a_number(a, b):
    b *= 0.5  # a number: rebound
    return np.sum(a) * b


def through_a_name_given_numbers(x):
    g = halves_a_number
    return g(x, x[0]) + np.sum(x * x)


def test_a_call_through_a_function_value_changing_a_number_is_differentiated():
    function = through_a_name_given_numbers
    np.testing.assert_allclose(ssad.grad(function)(X), numerical_gradient(function, X), rtol=1e-6, atol=1e-9)


def doubles_in_a_while_test(x):
    z = x * 1.0
    g = doubles if x[0] > -10.0 else np.sum  # Python doubles z in each test
    k = 0
    while g(z[0:2]) < 50.0 and k < 3:
        k += 1
    return np.sum(z * x)


def test_a_call_through_a_function_value_in_a_while_test_is_checked():
    # the test of a `while` was not checked: ssad gave [5.1, -11.9, 2.2]; Python doubles
    # z[0:2] in each of the 4 tests: sum(16 x[:2] * x[:2]) + x[2] ** 2
    np.testing.assert_allclose(numerical_gradient(doubles_in_a_while_test, X), [9.6, -22.4, 2.2], rtol=1e-6)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="calls doubles") as refused:
        ssad.grad(doubles_in_a_while_test)(X)
    assert refused.value.filename == __file__


# ----- one step removed: a function passing an element of its parameter to one that rebinds it


def rebinds(a, b):
    b /= 1.0 + np.sum(a * a)  # `b` a number: rebound; a row of the caller's matrix: written into
    return np.sum(a) * b


def passes_a_constant_element(x):
    return rebinds(x, x[1])


def passes_what_enumerate_walks(x):
    t = 0.0
    for i, v in enumerate(x):
        t = t + rebinds(x, v) * (i + 1)
    return t


def passes_an_element_a_range_indexes(x):
    t = 0.0
    for i in range(len(x) - 1, 0, -1):
        t = t + rebinds(x, x[i - 1])
    return t


def passes_what_for_walks(x):
    t = 0.0
    for v in reversed(x):
        t = t + rebinds(x, v)
    return t


def passes_what_zip_walks(x):
    t = 0.0
    for v, w in zip(x, x * 2.0, strict=True):
        t = t + rebinds(x, v) * w
    return t


def passes_a_slice(x):
    return rebinds(x, x[1:])  # a view of the caller's array, for any array


def passes_a_row_of_a_view(x):
    return rebinds(x, x.reshape(len(x), 1)[0])  # a 1-D view of x: its `b /= ...` writes into x


def passes_an_item_of_a_list(x):
    return rebinds(x, [x, x][0])  # x itself


K = slice(1, None)


def passes_at_a_global_index(x):
    ks = [K * 2 for K in range(2)]  # this K is the comprehension's own
    return rebinds(x, x[K]) + ks[1]  # the global K: a slice


def passes_what_it_is_told(x, k):
    return rebinds(x, x[k])  # `k` may be a slice


ELEMENT_PASSERS = [passes_a_constant_element, passes_what_enumerate_walks, passes_an_element_a_range_indexes,
                   passes_what_for_walks, passes_what_zip_walks]
PART_PASSERS = [passes_a_slice, passes_a_row_of_a_view, passes_an_item_of_a_list, passes_at_a_global_index]


def reads_again(function):
    def caller(x):
        return function(x) + np.sum(np.sin(x) * x)  # reads x after the call

    return caller


def reads_again_by_name(x):
    return passes_a_constant_element(x) + np.sum(np.sin(x) * x)


@pytest.mark.parametrize("function", ELEMENT_PASSERS, ids=lambda f: f.__name__)
def test_a_caller_of_a_function_passing_an_element_on_is_differentiated_for_a_vector(function):
    # refused before, for any array: the element counted as anything the parameter holds
    caller = reads_again(function)
    np.testing.assert_allclose(ssad.grad(caller)(X), numerical_gradient(caller, X), rtol=1e-6, atol=1e-9)
    _, tangent = ssad.jvp(caller, (X,), (np.array([0.5, -1.0, 2.0]),))
    np.testing.assert_allclose(tangent, numerical_gradient(caller, X) @ [0.5, -1.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(ssad.grad(reads_again_by_name)(X), numerical_gradient(reads_again_by_name, X),
                               rtol=1e-6)


@pytest.mark.parametrize("function", ELEMENT_PASSERS, ids=lambda f: f.__name__)
def test_a_caller_of_a_function_passing_a_row_on_is_refused_for_a_matrix(function):
    # a row of a 2-D array is a view: `b /= ...` writes into the caller's matrix
    m = np.array([[0.3, -0.7], [1.1, 0.4]])
    changed = m.copy()
    function(changed)
    assert not np.array_equal(changed, m)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="in place") as refused:
        ssad.grad(reads_again(function))(m)
    assert refused.value.filename == __file__


@pytest.mark.parametrize("function", PART_PASSERS, ids=lambda f: f.__name__)
def test_a_caller_of_a_function_passing_a_part_on_is_refused_for_a_vector(function):
    changed = X.copy()
    function(changed)
    assert not np.array_equal(changed, X)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="in place") as refused:
        ssad.grad(reads_again(function))(X)
    assert refused.value.filename == __file__


def test_a_caller_of_a_function_passing_an_element_at_an_index_it_is_given_is_refused():
    def caller(x):
        return passes_what_it_is_told(x, 1) + np.sum(np.sin(x) * x)

    with pytest.raises(ssad.UnsupportedSyntaxError, match="in place") as refused:
        ssad.grad(caller)(X)
    assert refused.value.filename == __file__


# ----- a parameter passed on as NumPy's output (`def h(a): np.multiply(a, 2.0, out=a)`)


def doubles_into_itself(a):
    np.multiply(a, 2.0, out=a)  # `a` a parameter: None passes as "no output", an array is written into
    return np.sum(a)


def passes_an_output(x):
    z = x * 1.0
    s = doubles_into_itself(z)
    return s + np.sum(z * x)


def test_an_array_given_as_the_output_through_a_parameter_is_refused_where_it_runs():
    # ssad gave [1.9, -1.1, 4.3]: the output argument was taken for one that may be None
    np.testing.assert_allclose(numerical_gradient(passes_an_output, X), [3.2, -0.8, 6.4], atol=1e-6)
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"`a` in place \(its `out` argument\)") as refused:
        ssad.grad(passes_an_output)(X)
    assert refused.value.filename == __file__
