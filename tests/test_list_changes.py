"""A list changed in place under one name and read under another.

`items.append(v)` changes the list object, so every name that is that list, and every
list, tuple or dict holding it, reads the change. ssad differentiates changes of a list
under the name that holds it; a change another name would see is refused, never given a
zero or partial gradient (each function below gave one before: `[0, 0]` for `[2, 0]`).
"""

import inspect
import re
from dataclasses import dataclass

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


def appends_to_a_list_a_dict_holds(w):
    history = {"loss": []}
    losses = history["loss"]
    losses.append(w[0] * 2.0)
    return history["loss"][0]


def appends_to_a_list_a_list_holds(w):
    box = [[]]
    inner = box[0]
    inner.append(w[0] * 2.0)
    return box[0][0]


def extends_a_list_a_list_holds(w):
    box = [[w[1]]]
    inner = box[0]
    inner.extend([w[0] * 2.0])
    return box[0][1] + box[0][0]


def inserts_into_a_list_a_list_holds(w):
    box = [[w[1]]]
    inner = box[0]
    inner.insert(0, w[0] * 2.0)
    return box[0][0] * box[0][1]


def pops_from_a_list_a_list_holds(w):
    box = [[w[0], w[1] * 3.0]]
    inner = box[0]
    inner.pop()
    return sum(box[0]) + len(box[0])


def appends_through_a_second_name(w):
    a = []
    b = a
    b.append(w[0] * 2.0)
    return a[0]


def appends_after_putting_it_in_a_list(w):
    a = []
    box = [a]
    a.append(w[0] * 2.0)
    return box[0][0]


def appends_after_putting_it_in_a_dict(w):
    a = []
    d = {"k": a}
    a.append(w[0] * 2.0)
    return d["k"][0]


def appends_after_putting_it_in_a_tuple(w):
    a = []
    t = (a, 1.0)
    a.append(w[0] * 2.0)
    return t[0][0]


def appends_after_appending_it(w):
    a = []
    box = []
    box.append(a)
    a.append(w[0] * 2.0)
    return box[0][0]


def appends_to_each_list_it_walks(w):
    box = [[], []]
    for lst in box:
        lst.append(w[0] * 2.0)
    return box[0][0] + box[1][0]


def appends_to_each_value_of_a_dict(w):
    d = {"k": []}
    for lst in d.values():
        lst.append(w[0] * 2.0)
    return d["k"][0]


def writes_an_item_of_a_list_a_list_holds(w):
    a = [0.0, 0.0]
    box = [a]
    a[1] = w[0] * 2.0
    return box[0][1]


def writes_a_key_through_a_second_name(w):
    d = {}
    d2 = d
    d2["k"] = w[0] * 2.0
    return d["k"]


CHANGED_UNDER_ANOTHER_NAME = [
    (writes_a_key_through_a_second_name, "`d2[...] = ...` would change a list or dict that `d` also reads"),
    (appends_to_a_list_a_dict_holds, "`losses.append(...)` would change a list or dict that `history` also reads"),
    (appends_to_a_list_a_list_holds, "`inner.append(...)` would change a list or dict that `box` also reads"),
    (extends_a_list_a_list_holds, "`inner.extend(...)` would change a list or dict that `box` also reads"),
    (inserts_into_a_list_a_list_holds, "`inner.insert(...)` would change a list or dict that `box` also reads"),
    (pops_from_a_list_a_list_holds, "`inner.pop(...)` would change a list or dict that `box` also reads"),
    (appends_through_a_second_name, "`b.append(...)` would change a list or dict that `a` also reads"),
    (appends_after_putting_it_in_a_list, "`a.append(...)` would change a list or dict that `box` also reads"),
    (appends_after_putting_it_in_a_dict, "`a.append(...)` would change a list or dict that `d` also reads"),
    (appends_after_putting_it_in_a_tuple, "`a.append(...)` would change a list or dict that `t` also reads"),
    (appends_after_appending_it, "`a.append(...)` would change a list or dict that `box` also reads"),
    (appends_to_each_list_it_walks, "`lst.append(...)` would change a list or dict that `box` also reads"),
    (appends_to_each_value_of_a_dict, "`lst.append(...)` would change a list or dict that `d` also reads"),
    (writes_an_item_of_a_list_a_list_holds, "`a[...] = ...` would change a list or dict that `box` also reads"),
]


@pytest.mark.parametrize("f, message", CHANGED_UNDER_ANOTHER_NAME, ids=[f.__name__ for f, _ in CHANGED_UNDER_ANOTHER_NAME])
def test_a_list_changed_where_another_name_reads_it_is_refused_in_both_modes(f, message):
    # each gave a zero (or partial) gradient and tangent, or an IndexError, before
    x = np.array([1.5, 2.0])
    assert np.any(numerical_gradient(f, x) != 0.0)  # the change carries a gradient
    with pytest.raises(ssad.UnsupportedSyntaxError, match=re.escape(message)):
        ssad.grad(f)
    with pytest.raises(ssad.UnsupportedSyntaxError, match=re.escape(message)):
        ssad.jvp(f, (x,), (np.ones(2),))


def _appends(items, v):
    items.append(v)


def appends_in_a_helper(w):
    box = [[]]
    _appends(box[0], w[0] * 2.0)
    return box[0][0]


def test_a_helper_appending_to_a_list_it_is_given_is_refused():
    # the helper's parameter receives no gradient, but the value it appends does
    with pytest.raises(ssad.SsadError, match="_appends \\(line .*\\) may change one of its arguments in place"):
        ssad.grad(appends_in_a_helper)


def builds_the_list_then_stores_it(w):
    history = {}
    losses = []
    x = w * 1.0
    for _ in range(3):
        losses.append(np.sum(x ** 2))
        x = x - 0.1 * np.sin(x)
    history["loss"] = losses
    return history["loss"][-1] + 0.5 * history["loss"][0]


def rebuilds_the_list_it_stores(w):
    history = {"loss": []}
    x = w * 1.0
    for _ in range(3):
        history["loss"] = history["loss"] + [np.sum(x ** 2)]
        x = x - 0.1 * np.sin(x)
    return history["loss"][-1] + 0.5 * history["loss"][0]


def appends_after_reading_the_last(w):
    hs = [w * 1.0]
    for i in range(3):
        h = hs[-1]
        hs.append(np.tanh(h) + w[i])
    return np.sum(hs[-1]) + np.sum(h)


def walks_the_values_and_items_of_a_dict(w):
    params = {"a": w[:2] * 1.0, "b": w[1:] * 2.0}
    total = 0.0
    for _, v in params.items():
        total = total + np.sum(v ** 2)
    for v in params.values():
        total = total + np.sum(np.sin(v))
    return total + np.sum(params.get("a"))


@pytest.mark.parametrize("f", [builds_the_list_then_stores_it, rebuilds_the_list_it_stores,
                               appends_after_reading_the_last, walks_the_values_and_items_of_a_dict])
def test_the_ways_round_are_differentiated_at_every_order(f):
    # appends_after_reading_the_last also gave a wrong gradient (1.2 for 3.2 in w[2]): the
    # optimizer passed the adjoint of np.sum(hs[-1]) unspread into the list's entry, as it
    # may for an array, whose write spreads it, and the adjoint of `+ w[i]` summed a number
    x = np.array([0.3, -0.7, 1.2])
    t = np.array([0.5, -1.0, 0.25])
    gradient = ssad.grad(f)
    np.testing.assert_allclose(gradient(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (x,), (t,))[1], numerical_gradient(f, x) @ t, rtol=1e-6, atol=1e-8)
    expected = numerical_gradient(lambda v: float(gradient(v) @ t), x)
    np.testing.assert_allclose(ssad.jvp(gradient, (x,), (t,))[1], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(lambda v: gradient(v) @ t)(x), expected, rtol=1e-5, atol=1e-6)


# ----- a field of an object read into a name -----


@dataclass
class _State:
    h: np.ndarray
    c: float


def writes_into_a_field_read_out(w):
    s = _State(h=w * 1.0, c=0.0)
    h = s.h
    h[0] = w[1] * 3.0  # changes s.h
    return np.sum(s.h)


def writes_into_a_copy_of_a_field(w):
    s = _State(h=w * 1.0, c=0.0)
    h = s.h * 1.0
    h[0] = w[1] * 3.0
    return np.sum(s.h) + np.sum(h ** 2) + s.h.shape[0] * h.size


def test_a_field_read_out_of_an_object_shares_its_array():
    # `h = s.h` was taken for a new value: the write into h was differentiated as if s.h
    # were unchanged, gradient [1, 1] for [0, 4]
    with pytest.raises(ssad.UnsupportedSyntaxError, match=re.escape("`h[...] = ...` would change an array that `s`")):
        ssad.grad(writes_into_a_field_read_out)
    with pytest.raises(ssad.UnsupportedSyntaxError, match=re.escape("`h[...] = ...` would change an array that `s`")):
        ssad.jvp(writes_into_a_field_read_out, (np.ones(2),), (np.ones(2),))
    x = np.array([1.5, 2.0])
    t = np.array([0.5, -1.0])
    gradient = ssad.grad(writes_into_a_copy_of_a_field)
    expected = numerical_gradient(writes_into_a_copy_of_a_field, x)
    np.testing.assert_allclose(gradient(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(writes_into_a_copy_of_a_field, (x,), (t,))[1], expected @ t, rtol=1e-6)
    second = numerical_gradient(lambda v: float(gradient(v) @ t), x)
    np.testing.assert_allclose(ssad.jvp(gradient, (x,), (t,))[1], second, rtol=1e-5, atol=1e-6)


# ----- an array reached through a list made of another list's items -----
# `xs + ys`, `xs * n`, `zip(xs, ys)` and a comprehension of tuples hold the very arrays of `xs`:
# a change in place of one, reached through the new list, is a change of `xs`'s item (each
# gave the gradient of `p = p * x`, which leaves `xs[0]` as it was: 0.6 for 0.27).


def scales_an_item_of_a_concatenation(x):
    xs = [x * 1.0, x * 2.0]
    ys = xs + [x * 3.0]
    p = ys[0]
    p *= x
    return np.sum(xs[0] * x)


def scales_an_item_of_a_repetition(x):
    xs = [x * 1.0, x * 2.0]
    ys = xs * 2
    p = ys[3]
    p *= x
    return np.sum(xs[1] * x)


def writes_into_an_item_of_a_zip(x):
    xs = [x * 1.0, x * 2.0]
    vs = list(zip(xs, [x * 3.0, x * 4.0], strict=True))
    p = vs[0][0]
    p[0] = x[1] * 5.0
    return np.sum(xs[0] * x)


def scales_an_item_of_a_comprehension_of_pairs(x):
    xs = [x * 1.0, x * 2.0]
    pairs = [(a, 1.0) for a in xs]
    p = pairs[0][0]
    p *= x
    return np.sum(xs[0] * x)


REACHED_THROUGH_A_NEW_LIST = [
    (scales_an_item_of_a_concatenation, "p *= x"),
    (scales_an_item_of_a_repetition, "p *= x"),
    (writes_into_an_item_of_a_zip, "p[0] = x[1] * 5.0"),
    (scales_an_item_of_a_comprehension_of_pairs, "p *= x"),
]


@pytest.mark.parametrize("f, text", REACHED_THROUGH_A_NEW_LIST, ids=[f.__name__ for f, _ in REACHED_THROUGH_A_NEW_LIST])
def test_an_array_changed_through_a_list_of_another_lists_items_is_refused_at_its_line(f, text):
    x = np.array([0.3, -0.7])
    assert np.any(np.abs(numerical_gradient(f, x)) > 0.1)
    for call in (lambda: ssad.grad(f)(x), lambda: ssad.jvp(f, (x,), (np.ones(2),))):
        with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
            call()
        assert "would change an array that `xs` shares" in caught.value.message
        lines, first = inspect.getsourcelines(f)
        assert caught.value.lineno == first + next(k for k, line in enumerate(lines) if text in line)


def replaces_items_of_new_lists(x):
    xs = [x * 1.0, x * 2.0]
    ys = xs + [x * 3.0]
    ys[0] = ys[0] * x  # a new value at the new list's place: `xs[0]` is left as it is
    zs = xs * 2
    zs.append(x * x)
    total = 0.0
    for a, b in zip(xs, ys, strict=False):
        total = total + np.sum(a * b)
    pairs = [(a, k) for k, a in enumerate(zs)]
    return total + np.sum(ys[0] * xs[0]) + np.sum(pairs[4][0]) + pairs[3][1] * np.sum(zs[2])


def test_new_lists_of_another_lists_items_are_differentiated_at_every_order():
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(ssad.grad(replaces_items_of_new_lists)(x),
                               numerical_gradient(replaces_items_of_new_lists, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(replaces_items_of_new_lists, (x,), (np.ones(2),))[1],
                               numerical_gradient(replaces_items_of_new_lists, x) @ np.ones(2), rtol=1e-6)
    v = np.array([1.0, -0.5])
    gradient = ssad.grad(replaces_items_of_new_lists)
    np.testing.assert_allclose(ssad.hessian(replaces_items_of_new_lists)(x) @ v,
                               numerical_gradient(lambda z: gradient(z) @ v, x), rtol=1e-6, atol=1e-8)
