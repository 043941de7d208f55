"""A list changed in place while another name may hold it or its items: every way of making
the second name against every change, each differentiated exactly or refused.

`zs` is made from `ys = [x * 1.0, x * 2.0]` (the same list under another name, a copy holding
the same arrays, a list of them built otherwise), then `ys` or one of its arrays is changed
in place, then `zs` is read. Python's result then depends on what `zs` shares; ssad's lowering
stores new values, so it must either match Python (checked against central differences in
the gradient, the forward derivative and the Hessian-vector product) or refuse with an
`SsadError` at the line. The same for a dict. On the code before this file, 22 of the 180
programs of a list gave a wrong derivative and one crashed, and 12 of the 110 of a dict gave a
wrong one and two crashed.
"""

import dataclasses
import itertools

import numpy as np
import pytest

from .program_matrix import load, outcome

MAKERS = {
    "name": "ys", "ifexp": "ys if x[0] > 0 else [x, x]", "next_iter": "next(iter([ys]))", "item": "[ys][0]",
    "tuple_item": "(ys, 1)[0]", "dict_item": "{'k': ys}['k']", "max_key": "max([ys, [x]], key=len)",
    "list": "list(ys)", "slice": "ys[:]", "copy_method": "ys.copy()", "copy_copy": "copy.copy(ys)",
    "plus": "ys + []", "reversed": "list(reversed(ys))", "sorted_key": "sorted(ys, key=lambda v: v[0])",
    "comprehension": "[v for v in ys]", "tuple": "tuple(ys)", "zip": "[a for a, b in zip(ys, ys, strict=True)]",
    "repeat": "ys * 1", "copy_on_one_path": "list(ys) if x[0] > 0 else ys", "in_a_loop": None,
}
CHANGES = {
    "add_to_item": "ys[0] += x",
    "replace_item": "ys[0] = ys[0] * x",
    "append": "ys.append(x * 3.0)",
    "scale_an_item_by_name": "a = ys[0]\n    a *= x",
    "write_into_an_item": "a = ys[0]\n    a[0] = x[1] * 5.0",
    "pop": "ys.pop()",
    "insert": "ys.insert(0, x * 4.0)",
    "extend": "ys.extend([x * 2.0])",
    "add_a_list": "ys += [x * 6.0]",
    "write_into_the_item_by_its_own_name": "v[0] = x[1] * 5.0",  # `v` is ys[0]
    "scale_the_item_by_its_own_name": "v *= x",
}
CASES = list(itertools.product(MAKERS, CHANGES))
# the same for a dict `d = {'a': x * 1.0, 'b': x * 2.0}`
DICT_MAKERS = {
    "dict_name": "d", "dict_copied": "dict(d)", "dict_spread": "{**d}", "dict_copy_method": "d.copy()",
    "dict_copy_copy": "copy.copy(d)", "dict_comprehension": "{k: v for k, v in d.items()}",
    "dict_ifexp": "d if x[0] > 0 else {'a': x, 'b': x}", "dict_item": "[d][0]", "dict_keyword": "dict(d, c=x)",
    "dict_zip": "dict(zip(d.keys(), d.values(), strict=True))", "dict_items": "dict(d.items())",
}
DICT_CHANGES = {
    "add_to_entry": "d['a'] += x", "replace_entry": "d['a'] = d['a'] * x", "new_key": "d['c'] = x * 3.0",
    "scale_an_entry_by_name": "a = d['a']\n    a *= x", "write_into_an_entry": "a = d['a']\n    a[0] = x[1] * 5.0",
    "pop": "d.pop('b')", "update": "d.update({'a': x * 7.0})", "setdefault": "d.setdefault('e', x * 2.0)",
    "delete": "del d['b']", "add_to_what_get_gives": "a = d.get('a')\n    a += x",
    "write_into_the_entry_by_its_own_name": "v[0] = x[1] * 5.0", "scale_the_entry_by_its_own_name": "v *= x",
}
DICT_CASES = list(itertools.product(DICT_MAKERS, DICT_CHANGES))


def _source():
    functions = ["import copy", "import numpy as np"]
    for maker, change in CASES:
        made = ("for k in range(2):\n        zs = ys" if MAKERS[maker] is None else f"zs = {MAKERS[maker]}")
        functions.append(
            f"def {maker}__{change}(x):\n    v = x * 1.0\n    ys = [v, x * 2.0]\n    {made}\n    {CHANGES[change]}\n"
            f"    return np.sum(zs[0] * x) + np.sum(zs[-1]) * len(zs)\n")
    for maker, change in DICT_CASES:
        functions.append(
            f"def {maker}__{change}(x):\n    v = x * 1.0\n    d = {{'a': v, 'b': x * 2.0}}\n    zs = {DICT_MAKERS[maker]}\n"
            f"    {DICT_CHANGES[change]}\n    return np.sum(zs['a'] * x) * len(zs)\n")
    return "\n\n".join(functions)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return load(tmp_path_factory.mktemp("shared_items"), "shared_items_programs", _source())


def test_each_program_is_exact_or_refused_at_its_line(programs):
    outcomes = {case: outcome(getattr(programs, f"{case[0]}__{case[1]}")) for case in CASES}
    exact = {case for case, result in outcomes.items() if result == "exact"}
    # what Python and the lowering agree on is differentiated, not refused
    assert {("list", "replace_item"), ("list", "append"), ("slice", "pop"), ("copy_copy", "insert"),
            ("tuple", "extend"), ("comprehension", "add_a_list")} <= exact
    assert len(exact) >= 60, len(exact)


def test_each_program_of_a_dict_is_exact_or_refused_at_its_line(programs):
    outcomes = {case: outcome(getattr(programs, f"{case[0]}__{case[1]}")) for case in DICT_CASES}
    exact = {case for case, result in outcomes.items() if result == "exact"}
    assert {("dict_copied", "replace_entry"), ("dict_spread", "new_key"), ("dict_copy_copy", "pop"),
            ("dict_comprehension", "delete")} <= exact
    assert len(exact) >= 30, len(exact)


# An item read from a shallow copy before the item changes by a name of its own: the copy
# holds the same arrays. Each gave a wrong derivative before (`.copy()` of a list or dict was
# taken to hold nothing, and a record made by `dataclasses.replace` to share nothing).
def _read_from_a_dict_copy(x):
    v = x * 1.0
    d = {"v": v}
    w = d.copy()["v"]
    v[0] = 3.0
    return np.sum(w * x)


def _read_from_a_list_copy(x):
    v = x * 1.0
    xs = [v, x]
    c = xs.copy()
    w = c[0]
    v *= x
    return np.sum(w * x)


def _popped_from_a_list_copy(x):
    v = x * 1.0
    w = [v, x].copy().pop(0)
    v[0] = 3.0
    return np.sum(w * x)


def _read_from_a_copy_of_nested_lists(x):
    v = x * 1.0
    xs = [[v], [x]]
    w = xs.copy()[0][0]
    v[0] = 3.0
    return np.sum(w * x)


def _made(x):
    return {"v": x * 1.0}


def _read_from_a_copy_of_a_dict_of_unknown_items(x):
    d = _made(x)
    c = d.copy()
    w = c["v"]
    v = d["v"]
    v[0] = 3.0
    return np.sum(w * x)


@dataclasses.dataclass
class _Pair:
    a: np.ndarray
    s: float


def _read_from_a_replaced_record(x):
    v = x * 1.0
    p = dataclasses.replace(_Pair(v, 1.0), s=2.0)
    v[0] = 3.0
    return np.sum(p.a * x)


@pytest.mark.parametrize("f", [_read_from_a_dict_copy, _read_from_a_list_copy, _popped_from_a_list_copy,
                               _read_from_a_copy_of_nested_lists, _read_from_a_copy_of_a_dict_of_unknown_items,
                               _read_from_a_replaced_record])
def test_an_item_read_from_a_shallow_copy_is_the_item(f):
    assert outcome(f) == "refused"


def _copy_of_an_array_then_write(x):
    v = x * 1.0
    w = v.copy()  # an array's copy holds nothing of it
    v[0] = 3.0
    return np.sum(w * x)


def _copy_of_a_list_of_numbers(x):
    xs = [x[0] * 1.0, x[1]]
    c = xs.copy()
    xs[0] = 3.0
    return c[0] * x[1]


@pytest.mark.parametrize("f", [_copy_of_an_array_then_write, _copy_of_a_list_of_numbers])
def test_copies_that_hold_nothing_changed_are_differentiated(f):
    assert outcome(f) == "exact"
