"""Rules for function values, checked through whole gradients (their outputs are functions)."""

import collections
import copy
import dataclasses
import functools

import numpy as np
import pytest

import ssad
from ssad.registry import REGISTRY
from ssad.runtime import concat, iterated, merged, repeated, repeats_summed, zipped
from ssad.runtime.closures import joined
from ssad.runtime.defaults import dict_derivative
from ssad.runtime.replace import fields_at, replaced
from ssad.runtime.structure import zeros_like_value
from ssad.runtime.partials import made_partial_adjoint, made_partial_tangent
from ssad.testing import assert_close

from ..conftest import assert_gradient_matches

CASES = []
CHECKED_ELSEWHERE = [functools.partial, concat, repeated, repeats_summed, list, tuple, dict.items, dict.values,
                     iterated, merged, zipped, dict.get, sorted, dict,  # these six: test_dicts_sorted_and_iteration_rules
                     made_partial_adjoint, made_partial_tangent,  # below, and test_recursive_closures_and_partials
                     joined, REGISTRY.adjoint_rule(joined), dict_derivative,
                     replaced, fields_at,  # below, and test_records_and_lists
                     copy.deepcopy, copy.copy]  # test_python_surface


def scaled_by_partial(x, w):
    f = functools.partial(np.multiply, w)
    g = functools.partial(np.add, f(x))
    return np.sum(np.sin(g(x * w)))


def test_partial_hands_gradients_to_its_bound_arguments():
    rng = np.random.default_rng(2)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    for position in (0, 1):
        gradient = ssad.grad(scaled_by_partial, wrt=position)(*args)
        assert_gradient_matches(scaled_by_partial, args, position, gradient)


def test_partial_rule_hands_each_part_its_adjoint():
    # the adjoint of a partial is (bound arguments', {bound keywords'}, the function's)
    rule = REGISTRY.adjoint_rule(functools.partial)
    made = functools.partial(np.add, 3.0, 4.0)
    assert rule(((1.0, 2.0), {}, None), made, np.add, 3.0, 4.0) == (None, 1.0, 2.0)
    assert rule(((1.0, 2.0), {}, {"w": 5.0}), made, np.add, 3.0, 4.0) == ({"w": 5.0}, 1.0, 2.0)
    assert rule(None, made, np.add, 3.0, 4.0) == (None, 0.0, 0.0)  # no adjoint came: zeros


def test_partial_of_a_partial_reads_back_as_the_code_wrote_it():
    # Python flattens `partial(partial(f, a), b)` into `partial(f, a, b)`: the outer
    # statement's adjoint gives b its part and the inner partial the rest
    inner = functools.partial(np.multiply, 2.0)
    outer = functools.partial(inner, 3.0)
    assert outer.args == (2.0, 3.0)
    d_args, d_keywords, d_inner = made_partial_adjoint(((10.0, 20.0), {}, {"c": 1.0}), outer, inner, 1, ())
    assert d_args == (20.0,) and d_keywords == {} and d_inner == ((10.0,), {}, {"c": 1.0})


def test_sequence_rules_against_finite_differences():
    from ssad.testing import numerical_gradient

    a, b = [0.5, -1.0], [2.0]
    d = [0.3, -0.7, 1.1]
    d_a, d_b = REGISTRY.adjoint_rule(concat)(d, concat(a, b), a, b)
    assert d_a == [0.3, -0.7] and d_b == [1.1]
    rows = np.array([[1.0, 2.0], [3.0, -4.0]])
    (d_rows,) = REGISTRY.adjoint_rule(list)([np.ones(2), 2 * np.ones(2)], list(rows), rows)
    expected = numerical_gradient(lambda r: float(np.sum(np.ones(2) * r[0] + 2 * r[1])), rows)
    np.testing.assert_allclose(d_rows, expected, rtol=1e-6)
    (d_pair,) = REGISTRY.adjoint_rule(tuple)([1.5, 2.5], (0.1, 0.2), (0.1, 0.2))
    assert d_pair == (1.5, 2.5)


def joins_sequences(x, y):
    parts = [x, x * 2.0] + [np.sin(y)]
    pair = tuple(parts)
    return np.sum(parts[1] * parts[2]) + np.sum(list(pair)[0])


def test_joined_sequences_carry_gradients():
    rng = np.random.default_rng(4)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    for position in (0, 1):
        assert_gradient_matches(joins_sequences, args, position, ssad.grad(joins_sequences, wrt=position)(*args))


def over_items(params, x):
    total = 0.0
    for _name, value in params.items():
        total = total + np.sum(np.sin(value * x))
    return total + sum(np.sum(v) for v in params.values())


def test_dict_views_carry_gradients_to_their_dict():
    params = {"a": np.array([0.3, -0.2]), "b": np.array([1.1, 0.4])}
    x = np.array([0.5, 1.5])
    gradient = ssad.grad(over_items)(params, x)
    for key in params:
        expected = np.cos(params[key] * x) * x + 1.0
        np.testing.assert_allclose(gradient[key], expected, rtol=1e-12)
    assert REGISTRY.is_nondifferentiable(dict.keys)


# ----- Tangent rules -----

EPS = 1e-6


def pairing(a, b):
    """sum(a * b) over nested tuples, lists and dicts; None on either side pairs to zero."""
    if a is None or b is None:
        return 0.0
    if isinstance(a, dict):
        return sum(pairing(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return sum(pairing(u, v) for u, v in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def test_partial_tangent_is_the_tangent_of_its_bound_arguments():
    rng = np.random.default_rng(6)
    a, b, t_a, t_b = rng.standard_normal((4, 3))
    rule = REGISTRY.tangent_rule(functools.partial)
    positional, keywords, t_function = rule((None, t_a, t_b), functools.partial(np.add, a, b), np.add, a, b)
    assert t_function is None  # np.add holds nothing that moves
    up = functools.partial(np.add, a + EPS * t_a, b + EPS * t_b)
    down = functools.partial(np.add, a - EPS * t_a, b - EPS * t_b)
    assert type(positional) is tuple and len(positional) == 2 and keywords == {}
    for got, u, d in zip(positional, up.args, down.args, strict=True):
        assert_close("partial bound argument", got, (u - d) / (2 * EPS), rtol=1e-5, atol=1e-7)


def test_partial_tangent_gives_bound_keywords_zero_tangents():
    x = np.array([0.5, 1.5])
    rule = REGISTRY.tangent_rule(functools.partial)
    value = functools.partial(np.clip, x, a_min=0.2, a_max=np.array([1.0, 1.0]), casting="unsafe")
    positional, keywords, _ = rule((None, np.ones(2)), value, np.clip, x, a_min=0.2, a_max=np.array([1.0, 1.0]), casting="unsafe")
    np.testing.assert_array_equal(positional[0], np.ones(2))
    assert keywords.keys() == {"a_min", "a_max", "casting"}
    assert keywords["a_min"] == 0.0 and keywords["casting"] is None  # a string has no tangent
    np.testing.assert_array_equal(keywords["a_max"], np.zeros(2))


def test_partial_tangent_is_transpose_of_adjoint():
    rng = np.random.default_rng(7)
    a, b, t_a, t_b, d_a, d_b = rng.standard_normal((6, 3))
    value = functools.partial(np.multiply, a, b)
    dy = ((d_a, d_b), {}, None)
    adjoints = REGISTRY.adjoint_rule(functools.partial)(dy, value, np.multiply, a, b)
    t_y = REGISTRY.tangent_rule(functools.partial)((None, t_a, t_b), value, np.multiply, a, b)
    left = pairing(list(adjoints), [None, t_a, t_b])
    assert left != 0.0
    assert abs(left - pairing(dy, t_y)) <= 1e-12 * abs(left)


def _keywords_taken(x, y, z=0.0, w=0.0):
    return x * y + z * w


def test_made_partial_adjoint_is_the_transpose_of_made_partial_tangent():
    # flat, flattened (a partial of a partial), and flattened with a keyword given again
    rng = np.random.default_rng(8)
    a, b, c, e, t_a, t_b, t_c, t_e, d_a, d_b, d_c, d_e = rng.standard_normal(12)
    flat = functools.partial(_keywords_taken, a, z=c)
    cases = [(flat, _keywords_taken, None, (t_a,), {"z": t_c}, ((d_a,), {"z": d_c}, None))]
    for keyword in ("w", "z"):
        outer = functools.partial(flat, b, **{keyword: e})
        t_flat = ((t_a,), {"z": t_c}, None)
        d_outer = ((d_a, d_b), {"z": d_c, "w": d_e} if keyword == "w" else {"z": d_e}, None)
        cases.append((outer, flat, t_flat, (t_b,), {keyword: t_e}, d_outer))
    for made, function, t_function, t_args, t_keywords, d_made in cases:
        t_made = made_partial_tangent(made, function, t_function, t_args, t_keywords)
        d_args, d_keywords, d_function = made_partial_adjoint(d_made, made, function, len(t_args), tuple(t_keywords))
        left = pairing(d_made, t_made)
        right = pairing(d_args, t_args) + pairing(d_keywords, t_keywords) + pairing(d_function, t_function)
        assert left != 0.0
        assert abs(left - right) <= 1e-12 * abs(left)


def test_joined_hands_its_adjoint_to_the_shared_captured_values():
    adjoint_rule, tangent_rule = REGISTRY.adjoint_rule(joined), REGISTRY.tangent_rule(joined)
    d_captured = {"x": 2.0}
    assert adjoint_rule(d_captured, None, None, None, "odd") == (None, d_captured, None)
    assert tangent_rule((None, d_captured, None), None, None, None, "odd") is d_captured


def test_dict_derivative_is_linear_in_its_items_and_keeps_a_defaultdicts_zeros():
    from collections import defaultdict

    primal = defaultdict(float, {"a": 1.0, "b": np.array([2.0, 3.0])})
    items, t_items = {"a": 0.5, "b": np.array([1.0, -1.0])}, {"a": -0.25, "b": np.array([0.5, 2.0])}
    made = dict_derivative(primal, items, zeros_like_value)
    t_made = REGISTRY.tangent_rule(dict_derivative)((None, t_items, None), made, primal, items, zeros_like_value)
    assert t_made["a"] == -0.25 and t_made["missing"] == 0.0  # a key read anew has a zero, as in the primal
    dy = {"a": 3.0, "b": np.array([0.7, -0.2])}
    (_, d_items, _) = REGISTRY.adjoint_rule(dict_derivative)(dy, made, primal, items, zeros_like_value)
    left = pairing(d_items, t_items)
    assert left != 0.0 and abs(left - pairing(dy, {k: t_made[k] for k in dy})) <= 1e-12 * abs(left)
    zero = REGISTRY.tangent_rule(dict_derivative)((None, None, None), made, primal, items, zeros_like_value)
    assert zero["a"] == 0.0 and np.all(zero["b"] == 0.0)


def test_concat_tangent():
    rule = REGISTRY.tangent_rule(concat)
    a, b = [0.5, np.array([1.0, -1.0])], [2.0]
    t_a, t_b = [0.3, np.array([0.1, 0.2])], [-0.7]
    got = rule((t_a, t_b), concat(a, b), a, b)
    up = concat([0.5 + EPS * 0.3, a[1] + EPS * t_a[1]], [2.0 - EPS * 0.7])
    down = concat([0.5 - EPS * 0.3, a[1] - EPS * t_a[1]], [2.0 + EPS * 0.7])
    assert type(got) is list and len(got) == 3
    for k, (g, u, d) in enumerate(zip(got, up, down, strict=True)):
        assert_close(f"concat item {k}", g, (np.asarray(u) - np.asarray(d)) / (2 * EPS), rtol=1e-5, atol=1e-7)
    pair = rule(((1.0,), (2.0, 3.0)), (0.1, 0.2, 0.3), (0.1,), (0.2, 0.3))
    assert pair == (1.0, 2.0, 3.0)


def test_repetition_tangent_and_adjoint_against_differences():
    # `[a, b] * 3`: the tangent repeats the items' tangents; the adjoint sums the copies'
    a, t_a = [0.5, np.array([1.0, -2.0])], [0.3, np.array([0.25, 1.5])]
    tangent = REGISTRY.tangent_rule(repeated)((t_a, None), repeated(a, 3), a, 3)
    up, down = repeated([a[0] + EPS * t_a[0], a[1] + EPS * t_a[1]], 3), repeated([a[0] - EPS * t_a[0], a[1] - EPS * t_a[1]], 3)
    assert type(tangent) is list and len(tangent) == 6
    for k, (g, u, d) in enumerate(zip(tangent, up, down, strict=True)):
        assert_close(f"repeated item {k}", g, (np.asarray(u) - np.asarray(d)) / (2 * EPS), rtol=1e-5, atol=1e-7)
    dy = [1.0, np.array([2.0, 3.0]), -1.0, np.array([0.5, 0.5]), 4.0, np.array([1.0, 0.0])]
    d_a, d_times = REGISTRY.adjoint_rule(repeated)(dy, repeated(a, 3), a, 3)
    assert d_times is None and type(d_a) is list
    assert d_a[0] == 4.0
    np.testing.assert_array_equal(d_a[1], [3.5, 3.5])
    d_pair, _ = REGISTRY.adjoint_rule(repeated)((1.0, 2.0), (0.5, 0.7), (0.5, 0.7), 1)
    assert d_pair == (1.0, 2.0)
    d_none, _ = REGISTRY.adjoint_rule(repeated)([], [], a, 0)  # repeated no time: zeros
    assert d_none[0] == 0.0
    np.testing.assert_array_equal(d_none[1], [0.0, 0.0])


def test_concat_tangent_of_a_sequence_without_tangents():
    # a sequence with nothing to differentiate (None) gives every item no tangent
    got = REGISTRY.tangent_rule(concat)(([0.5], None), [1.0, 2, 3], [1.0], [2, 3])
    assert got == [0.5, None, None]


def test_sequence_tangents():
    rows = np.array([[1.0, 2.0], [3.0, -4.0]])
    t = np.array([[0.5, -0.5], [2.0, 1.0]])
    got = REGISTRY.tangent_rule(list)((t,), list(rows), rows)
    assert type(got) is list and len(got) == 2
    for k, (g, u, d) in enumerate(zip(got, list(rows + EPS * t), list(rows - EPS * t), strict=True)):
        assert_close(f"list item {k}", g, (u - d) / (2 * EPS), rtol=1e-5, atol=1e-7)
    got = REGISTRY.tangent_rule(tuple)(([1.5, 2.5],), (0.1, 0.2), [0.1, 0.2])
    assert got == (1.5, 2.5)
    assert REGISTRY.tangent_rule(list)(({"a": 1.0},), ["a"], {"a": 2.0}) == [None]  # list(d) is d's keys


def test_dict_view_tangents():
    d = {"b": np.array([0.3, -0.2]), "a": 1.5}
    t = {"a": 2.0, "b": np.array([1.0, 4.0])}
    items = REGISTRY.tangent_rule(dict.items)((t,), d.items(), d)
    values = REGISTRY.tangent_rule(dict.values)((t,), d.values(), d)
    assert [key for key, _ in items] == [None, None]
    for got in ([v for _, v in items], values):
        assert type(got) is list
        np.testing.assert_array_equal(got[0], [1.0, 4.0])  # in d's key order
        assert got[1] == 2.0
    up = {k: v + EPS * t[k] for k, v in d.items()}
    down = {k: v - EPS * t[k] for k, v in d.items()}
    for k, (g, u, w) in enumerate(zip(values, up.values(), down.values(), strict=True)):
        assert_close(f"dict value {k}", g, (np.asarray(u) - np.asarray(w)) / (2 * EPS), rtol=1e-5, atol=1e-7)


def test_sequence_tangents_are_transposes_of_adjoints():
    rng = np.random.default_rng(8)
    rows, t_rows = rng.standard_normal((2, 3, 2))
    a, b = [rng.standard_normal(2), 0.7], (rng.standard_normal(3),)
    t_a, t_b = [rng.standard_normal(2), -1.3], (rng.standard_normal(3),)
    d = {"x": rng.standard_normal(2), "y": 0.4}
    t_d = {"x": rng.standard_normal(2), "y": 1.2}
    cases = [
        (concat, ([0.5, 1.5], [2.5]), ([1.0, -2.0], [3.0])),
        (concat, (tuple(a), b), (tuple(t_a), t_b)),
        (repeated, (a, 3), (t_a, None)),
        (repeated, (tuple(a), 2), (tuple(t_a), None)),
        (repeats_summed, ([0.5, rng.standard_normal(2), 1.5, rng.standard_normal(2)], a, 2),
         ([0.3, rng.standard_normal(2), -0.2, rng.standard_normal(2)], None, None)),
        (list, (rows,), (t_rows,)),
        (tuple, (a,), (t_a,)),
        (dict.items, (d,), (t_d,)),
        (dict.values, (d,), (t_d,)),
    ]
    for primitive, args, tangents in cases:
        y = primitive(*args)
        t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args)
        dy = [(None, rng.standard_normal(np.shape(v))) for _, v in t_y] if primitive is dict.items else [
            rng.standard_normal(np.shape(v)) for v in t_y
        ]
        adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args)
        left = pairing(list(adjoints), list(tangents))
        assert left != 0.0
        assert abs(left - pairing(dy, t_y)) <= 1e-12 * abs(left), primitive


def test_every_functional_adjoint_rule_has_a_tangent_rule():
    from ssad.rules import functional

    mine = [p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == functional.__name__]
    assert set(mine) == set(CHECKED_ELSEWHERE)
    missing = [repr(p) for p in mine if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


def _dict_pairing(a, b):
    if isinstance(a, dict):
        return sum(_dict_pairing(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return sum(_dict_pairing(u, v) for u, v in zip(a, b, strict=True))
    if a is None or b is None:
        return 0.0
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def _difference(f, args, tangents, step=1e-6):
    """Central difference of f along tangents (dict and list arguments moved item by item)."""

    def moved(sign):
        out = []
        for a, t in zip(args, tangents, strict=True):
            if t is None:
                out.append(a)
            elif isinstance(a, dict):
                out.append({k: a[k] + sign * step * t[k] for k in a})
            elif isinstance(a, list):
                out.append([u + sign * step * v for u, v in zip(a, t, strict=True)])
            else:
                out.append(a + sign * step * t)
        return f(*out)

    up, down = moved(1), moved(-1)
    if isinstance(up, dict):
        return {k: (up[k] - down[k]) / (2 * step) for k in up}
    if isinstance(up, (list, tuple)):
        return type(up)(_difference_of(u, d, step) for u, d in zip(up, down, strict=True))
    return (up - down) / (2 * step)


def _difference_of(up, down, step):
    if isinstance(up, (list, tuple)):
        return type(up)(_difference_of(u, d, step) for u, d in zip(up, down, strict=True))
    return (up - down) / (2 * step)


def test_dicts_sorted_and_iteration_rules():
    """Each rule's tangent against central differences, and its adjoint against the tangent
    (<adjoint(dy), t> == <dy, tangent(t)>)."""
    rng = np.random.default_rng(7)
    a = {"w": 0.4, "b": np.array([1.0, -2.0]), "c": -0.3}
    b = {"b": np.array([0.5, 0.25]), "z": 2.0}
    t_a = {"w": 0.7, "b": np.array([-0.2, 0.9]), "c": 1.1}
    t_b = {"b": np.array([0.3, -0.6]), "z": -0.4}
    values = [0.9, -1.2, 0.3, 2.5]
    cases = [
        (merged, (a, b), (t_a, t_b), {}),
        (dict, (a,), (t_a,), {}),
        (dict.get, (a, "b"), (t_a, None), {}),
        (dict.get, (a, "missing", 1.5), (t_a, None, 0.8), {}),
        (sorted, (values,), ([0.1, -0.4, 0.7, 0.2],), {}),
        (sorted, (values,), ([0.1, -0.4, 0.7, 0.2],), {"reverse": True}),
        (sorted, (values,), ([0.1, -0.4, 0.7, 0.2],), {"key": abs}),
        (iterated, (np.array([1.0, 2.0, 3.0]),), (np.array([0.5, -1.0, 2.0]),), {}),
        (iterated, (values,), ([0.1, -0.4, 0.7, 0.2],), {}),
        (zipped, (values, [1.5, -0.5, 2.0]), ([0.1, -0.4, 0.7, 0.2], [0.3, 0.2, -0.1]), {}),
    ]
    for primitive, args, tangents, keywords in cases:
        y = primitive(*args, **keywords)
        t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **keywords)
        expected = _difference(lambda *xs, p=primitive, kw=keywords: p(*xs, **kw), args, tangents)
        assert _dict_pairing(t_y, t_y) > 0.0, primitive
        assert abs(_dict_pairing(t_y, t_y) - _dict_pairing(expected, t_y)) <= 1e-6 * _dict_pairing(t_y, t_y), primitive
        if isinstance(y, dict):
            dy = {k: rng.standard_normal(np.shape(v)) if np.ndim(v) else float(rng.standard_normal()) for k, v in y.items()}
        elif isinstance(y, list):
            dy = [tuple(float(rng.standard_normal()) for _ in item) if isinstance(item, tuple)
                  else float(rng.standard_normal()) for item in y]
        else:
            dy = rng.standard_normal(np.shape(y)) if np.ndim(y) else float(rng.standard_normal())
        adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **keywords)
        left = sum(_dict_pairing(d, t) for d, t in zip(adjoints, tangents, strict=False) if t is not None)
        right = _dict_pairing(dy, t_y)
        assert abs(left - right) <= 1e-12 * max(1.0, abs(left)), (primitive, left, right)
    # dict(pairs): each key's last pair gives its value; a pair a later one replaced gets none
    pairs = [("u", 0.5), ("v", np.array([1.0, 2.0])), ("u", 1.5)]
    t_pairs = [(None, 0.3), (None, np.array([-0.1, 0.4])), (None, 0.8)]
    t_y = REGISTRY.tangent_rule(dict)((t_pairs,), dict(pairs), pairs)
    assert t_y.keys() == {"u", "v"} and t_y["u"] == 0.8
    np.testing.assert_array_equal(t_y["v"], [-0.1, 0.4])
    (d_pairs,) = REGISTRY.adjoint_rule(dict)({"u": 2.0, "v": np.array([3.0, 4.0])}, dict(pairs), pairs)
    assert [d[1] for d in d_pairs][::2] == [0.0, 2.0]
    np.testing.assert_array_equal(d_pairs[1][1], [3.0, 4.0])
    # a dict walked by a `for` loop: its keys carry no gradient, so its adjoint is zero
    (d_keys,) = REGISTRY.adjoint_rule(iterated)(["w", "b"], ["w", "b"], {"w": 1.0, "b": 2.0})
    assert d_keys == {"w": 0.0, "b": 0.0}


@dataclasses.dataclass
class _Fields:
    w: np.ndarray
    b: float
    tag: str = "t"


_FieldPair = collections.namedtuple("_FieldPair", ["w", "b"])


def _record_pairing(a, b):
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        return _dict_pairing(a, b)
    return sum(_dict_pairing(getattr(a, f), getattr(b, f)) for f in ("w", "b"))


def test_replaced_and_fields_at_are_linear_and_each_others_transposes():
    # dataclasses.replace(p, b=v) and p._replace(w=v) (runtime/replace.py): <adjoint(dy), t> == <dy, tangent(t)>
    rng = np.random.default_rng(4)
    for make, names in ((lambda w, b: _Fields(w, b), ("b",)), (lambda w, b: _FieldPair(w, b), ("w",))):
        record = make(rng.standard_normal(3), 0.4)
        values = (rng.standard_normal(3),) if names == ("w",) else (1.7,)
        y = replaced(record, names, values)
        t_record, t_values = make(rng.standard_normal(3), -0.8), (rng.standard_normal(3),) if names == ("w",) else (0.6,)
        dy = make(rng.standard_normal(3), 2.5)
        t_y = REGISTRY.tangent_rule(replaced)((t_record, None, t_values), y, record, names, values)
        d_record, _, d_values = REGISTRY.adjoint_rule(replaced)(dy, y, record, names, values)
        left = _record_pairing(d_record, t_record) + _dict_pairing(d_values, t_values)
        assert left == pytest.approx(_record_pairing(dy, t_y), rel=1e-12)
        # fields_at reads back what replaced set: its rules are the transposes of each other too
        t_fields = REGISTRY.tangent_rule(fields_at)((t_record, None), fields_at(record, names), record, names)
        (d_from_fields, _) = REGISTRY.adjoint_rule(fields_at)(d_values, fields_at(record, names), record, names)
        assert _record_pairing(d_from_fields, t_record) == pytest.approx(_dict_pairing(d_values, t_fields), rel=1e-12)
        assert getattr(t_y, names[0]) is t_values[0]  # the named field's tangent is the value's
