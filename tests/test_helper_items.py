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


def _source():
    functions = ["import copy", "import numpy as np"]
    for (maker, change), (kind, (first, second, w)) in itertools.product(CASES, ITEMS.items()):
        name = f"{kind}__{maker}__{change}"
        functions.append(
            f"def helper_{name}(ys, w):\n    zs = {MAKERS[maker]}\n    {CHANGES[change]}\n    return np.sum(zs[0])\n\n\n"
            f"def {name}(x):\n    ys = [{first}, {second}]\n    r = helper_{name}(ys, {w})\n"
            f"    return r + np.sum(ys[0] * x) + np.sum(ys[-1]) * len(ys)\n")
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
