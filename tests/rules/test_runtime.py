"""Rules of ssad's runtime helpers (what generated code calls), checked numerically."""

import collections
import types

import numpy as np
import ssad
from ssad.runtime.in_place import diagonal_fill
import pytest

import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.runtime import (
    Tape,
    add_at,
    added_at,
    broadcast_like,
    copy_adjoint,
    getitem_adjoint,
    list_adjoint,
    owned,
    pack_like,
    restored_value,
    saved_part,
    summed_at,
    take_part,
    kept,
    written_part,
    unbroadcast,
    unspent,
    zero_at,
)
from ssad.runtime.dynamic import call_jvp, method_jvp
from ssad.runtime.operators import operator_jvp
from ssad.runtime.refusals import rule_adjoints
from ssad.rules.objects import operator_forward_packed
from ssad.runtime.pullbacks import call_forward_packed, method_forward_packed, packed_adjoint, packed_tangent
from ssad.runtime.structure import add_adjoint, add_attr, attribute_part, field_tangent, owned_argument, record_tangent
from ssad.testing import check_rule, check_tangent

from .cases import Case, case_id

rng = np.random.default_rng(17)
A34 = rng.standard_normal((3, 4))
R4 = rng.standard_normal(4)
C31 = rng.standard_normal((3, 1))

CASES = [
    Case(unbroadcast, (A34, R4), id="unbroadcast-rows"),
    Case(unbroadcast, (A34, C31), id="unbroadcast-columns"),
    Case(unbroadcast, (A34, A34), id="unbroadcast-same"),
    Case(unbroadcast, (1.5, R4), id="unbroadcast-scalar-spread-up"),
    Case(broadcast_like, (R4, A34), id="broadcast_like"),
    Case(added_at, (A34, (1, 2), 0.7), id="added_at-element"),
    Case(added_at, (A34, np.s_[1:], R4), id="added_at-rows"),
    Case(added_at, (R4, np.array([0, 2, 2]), np.array([0.5, -1.0, 2.0])), id="added_at-repeated"),
    Case(getitem_adjoint, (np.array([0.5, -1.0, 2.0]), R4, np.array([0, 2, 2])), id="getitem_adjoint-repeated"),
    Case(getitem_adjoint, (R4, A34, 1), id="getitem_adjoint-row"),
    Case(
        getitem_adjoint,
        (rng.standard_normal((130, 32)), rng.standard_normal((40, 32)), rng.integers(-40, 40, 130)),
        id="getitem_adjoint-dense",  # 130 * 32 >= 4096 elements: one bincount writes the whole adjoint
    ),
    Case(add_adjoint, (A34, A34 * 2.0), id="add_adjoint"),
    Case(copy_adjoint, (A34,), id="copy_adjoint"),
    Case(zero_at, (A34, np.s_[:, 1]), id="zero_at"),
    Case(take_part, (A34, np.s_[1:, 2]), id="take_part"),
    Case(written_part, (A34, np.s_[1:, 2]), id="written_part"),
    Case(written_part, (A34, (np.array([0, 2, 0]), np.array([1, 3, 1]))), id="written_part-repeated"),
    Case(kept, (A34[(np.array([0, 2, 0]), np.array([1, 3, 1]))], A34, (np.array([0, 2, 0]), np.array([1, 3, 1]))),
         id="kept"),
    Case(diagonal_fill, (0.7, A34), id="diagonal_fill-number"),
    Case(diagonal_fill, (np.array([0.7, -1.2]), A34, True), id="diagonal_fill-repeated"),
    Case(summed_at, (np.array([0, 2, 2, 5]), R4, 6), id="summed_at"),
    Case(saved_part, (A34, np.s_[1:, 2]), id="saved_part"),
    Case(restored_value, (R4,), id="restored_value"),
    Case(owned, (A34[1:, ::2],), id="owned"),
    Case(owned_argument, (A34[1:, ::2],), id="owned_argument"),
    Case(list_adjoint, (A34, list(A34 * 2.0)), id="list_adjoint-split"),
    Case(list_adjoint, (R4[:3], [0.5, -1.0, 2.0]), id="list_adjoint-numbers"),
]
CHECKED_ELSEWHERE = [add_at, pack_like, add_attr, unspent]
# the adjoint of a record's attribute, read by second-order code: third derivatives through
# attribute reads in tests/test_third_order.py, its rules below
CHECKED_ELSEWHERE += [attribute_part]
# the tangents of a record built in the function and of its field (forward code): rules
# below, and differentiated again on the records of tests/test_records_and_lists.py
CHECKED_ELSEWHERE += [field_tangent, record_tangent]
# Calls through function values read again: their rules run the callee's generated vjp
# under forward or reverse mode, checked against closed forms and differences in
# tests/test_function_values_at_second_order.py and on the corpora in
# tests/test_higher_order.py. What the second-order code calls for them has rules that
# refuse a third derivative, checked there too.
CHECKED_ELSEWHERE += [call_forward_packed, method_forward_packed, packed_tangent, packed_adjoint, call_jvp, method_jvp]
# ssad.checkpoint(block): the adjoint of the block passes through (tests/test_checkpoint.py, closures and methods)
CHECKED_ELSEWHERE += [ssad.checkpoint]
# what a user's adjoint rule ssad cannot read returned, checked and passed on: differentiated
# again through a lambda rule in tests/test_custom_rules.py
CHECKED_ELSEWHERE += [rule_adjoints]
# `super()` in a method and operators of objects read again: checked against closed forms and
# differences, at first and second order, in tests/test_objects_and_methods.py
CHECKED_ELSEWHERE += [super, operator_forward_packed, operator_jvp]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_adjoint_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent_rule(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def test_add_at_in_place_has_the_rules_of_its_pure_form():
    # add_at updates its first argument in place; its rules are those of added_at.
    assert REGISTRY.adjoint_rule(add_at) is REGISTRY.adjoint_rule(added_at)
    d_x = np.zeros(3)
    assert add_at(d_x, 1, 2.0) is d_x and d_x[1] == 2.0
    (d_base, _, d_part) = REGISTRY.adjoint_rule(add_at)(np.array([1.0, 2.0, 3.0]), None, np.zeros(3), 1, 5.0)
    np.testing.assert_array_equal(d_base, [1.0, 2.0, 3.0])
    assert d_part == 2.0


def test_pack_like_and_add_attr_rules():
    rule = REGISTRY.adjoint_rule(pack_like)
    assert rule((1.0, 2.0), None, (0.5, 0.25), (0.0, 0.0)) == (None, (1.0, 2.0))
    stacked = rule(np.array([[1.0, 2.0], [3.0, 4.0]]), None, np.zeros((2, 2)), [np.zeros(2), np.zeros(2)])[1]
    np.testing.assert_array_equal(stacked[1], [3.0, 4.0])
    tangent = REGISTRY.tangent_rule(pack_like)((None, (1.5, 2.5)), None, (0.0, 0.0), (0.0, 0.0))
    assert tangent == (1.5, 2.5)
    d_object = types.SimpleNamespace(w=np.ones(2), c=3.0)
    _, _, d_part, d_primal = REGISTRY.adjoint_rule(add_attr)(d_object, None, None, "w", None)
    np.testing.assert_array_equal(d_part, np.ones(2))
    assert d_primal is None  # the object itself, passed for its structure, gets no adjoint
    base = types.SimpleNamespace(w=np.zeros(2), c=0.0)
    grown = REGISTRY.tangent_rule(add_attr)((base, None, np.array([1.0, 2.0])), None, base, "w", None)
    np.testing.assert_array_equal(grown.w, [1.0, 2.0])
    # a constant of the object's class (`self.scale`) is no field: nothing goes there, nothing comes back
    primal = _WithAConstant(np.ones(2))
    assert add_attr(base, "scale", 5.0, primal) is base
    assert REGISTRY.adjoint_rule(add_attr)(d_object, None, base, "scale", 5.0, primal)[2] == 0.0
    grown = REGISTRY.tangent_rule(add_attr)((base, None, 1.0, None), None, base, "scale", 5.0, primal)
    assert vars(grown).keys() == {"w", "c"}


class _WithAConstant:
    scale = 3.0

    def __init__(self, w):
        self.w = w


def test_attribute_part_and_its_rules():
    d_object = types.SimpleNamespace(w=np.ones(2), c=3.0)
    np.testing.assert_array_equal(attribute_part(d_object, "w"), np.ones(2))
    assert attribute_part({"y": 2.0}, "y") == 2.0 and attribute_part({"y": 2.0}, "t") is None
    d_part, d_name, d_primal = REGISTRY.adjoint_rule(attribute_part)(np.array([1.0, 2.0]), None, d_object, "w")
    np.testing.assert_array_equal(d_part.w, [1.0, 2.0])
    assert d_part.c == 0.0 and d_name is None and d_primal is None
    assert attribute_part(d_object, "scale", _WithAConstant(np.ones(2))) == 0.0  # a class's constant
    assert REGISTRY.adjoint_rule(attribute_part)(4.0, None, {"y": 1.0, "t": 2.0}, "t")[0] == {"y": 0.0, "t": 4.0}
    tangent = REGISTRY.tangent_rule(attribute_part)((d_object, None), None, d_object, "c")
    assert tangent == 3.0
    # transposes: <adjoint(u), v> == <u, tangent(v)>
    u, v = 1.5, types.SimpleNamespace(w=np.array([0.5, -1.0]), c=2.0)
    (adjoint_of_u, _, _) = REGISTRY.adjoint_rule(attribute_part)(u, None, v, "c")
    assert adjoint_of_u.c * v.c == u * REGISTRY.tangent_rule(attribute_part)((v, None), None, v, "c")


@pytest.mark.parametrize(
    "shape, index, d_part",
    [
        ((7, 3), np.array([0, 6, -1, 2, 0, 0]), rng.standard_normal((6, 3))),  # repeats, a negative index
        ((5,), np.array([[1, 1], [4, -5]]), rng.standard_normal((2, 2))),  # a 2-d index into a vector
        ((4, 2, 3), np.array([3, 3, 1]), 0.5),  # a number broadcast over every row read
        ((4, 2), np.array([], dtype=int), np.zeros((0, 2))),  # nothing read
        ((300, 20), rng.integers(-300, 300, 400), rng.standard_normal((400, 20))),  # large: the bincount path
        ((50, 4, 30), rng.integers(0, 50, (10, 4)), 1.5),  # large, 2-d index, a broadcast number
    ],
)
def test_gather_adjoints_sum_every_read_row(shape, index, d_part):
    # What x[index] reads, element by element: each read adds its adjoint to that row.
    expected = np.zeros(shape)
    rows = np.broadcast_to(d_part, index.shape + shape[1:])
    for position in np.ndindex(index.shape):
        expected[index[position]] += rows[position]
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(getitem_adjoint(rows, x, index), expected, rtol=1e-14)
    start = rng.standard_normal(shape)
    np.testing.assert_allclose(add_at(start.copy(), index, d_part), start + expected, rtol=1e-14)


def test_unspent_copies_every_container_a_backward_sweep_changes_and_only_those():
    tape = Tape([1.0, R4])
    items = [A34]
    residuals = (R4, tape, (items, tape), {"k": items})
    copied = unspent(residuals)
    assert copied[0] is R4  # arrays are read, never changed, by a backward sweep: shared
    assert type(copied[1]) is Tape and copied[1] == tape and copied[1] is not tape
    assert copied[2][1] is copied[1]  # one tape reachable twice stays one tape
    assert copied[2][0] is copied[3]["k"] and copied[2][0] is not items
    copied[1].pop()
    copied[2][0].pop()
    assert len(tape) == 2 and len(items) == 1  # the forward half's residuals are left as they were


def test_unspent_rules_pass_adjoints_and_tangents_through_unchanged():
    residuals = (R4, [A34], {"k": R4})
    d_residuals = (2 * R4, [3 * A34], {"k": -R4})
    (back,) = REGISTRY.adjoint_rule(unspent)(d_residuals, unspent(residuals), residuals)
    assert back is d_residuals
    forward = REGISTRY.tangent_rule(unspent)((d_residuals,), unspent(residuals), residuals)
    assert forward[0] is d_residuals[0] and forward[1] is not d_residuals[1]
    assert np.array_equal(forward[1][0], d_residuals[1][0]) and np.array_equal(forward[2]["k"], -R4)


def test_record_tangent_and_field_tangent_rules():
    import collections

    point = collections.namedtuple("Point", "a b", defaults=[2.0])
    p = point(R4)
    t = record_tangent(p, {"a": R4 * 3.0})
    assert type(t) is point and t.b == 0.0  # the default is a constant
    np.testing.assert_array_equal(t.a, R4 * 3.0)
    d_value, d_tangents = REGISTRY.adjoint_rule(record_tangent)(point(A34[0], 1.0), t, p, {"a": R4})
    assert d_value is None
    np.testing.assert_array_equal(d_tangents["a"], A34[0])
    tangent = REGISTRY.tangent_rule(record_tangent)((None, {"a": R4}), t, p, {"a": R4 * 3.0})
    np.testing.assert_array_equal(tangent.a, R4) and tangent.b == 0.0
    record = types.SimpleNamespace(w=A34, c=R4)
    np.testing.assert_array_equal(field_tangent(record, "w"), A34)
    d_record, _, _ = REGISTRY.adjoint_rule(field_tangent)(A34 * 2.0, A34, record, "w")
    np.testing.assert_array_equal(d_record.w, A34 * 2.0)
    np.testing.assert_array_equal(d_record.c, np.zeros(4))
    np.testing.assert_array_equal(REGISTRY.tangent_rule(field_tangent)((record, None), A34, record, "w"), A34)
    # given the object, a constant of its class has a zero tangent, and passes no adjoint back
    primal = _WithAConstant(A34)
    assert field_tangent(types.SimpleNamespace(w=A34), "scale", primal) == 0.0
    d_record, _, _ = REGISTRY.adjoint_rule(field_tangent)(2.0, 3.0, types.SimpleNamespace(w=A34), "scale", primal)
    np.testing.assert_array_equal(d_record.w, np.zeros((3, 4)))


def test_field_tangent_of_a_namedtuple_whose_tangent_is_a_plain_tuple():
    # a rule's tangent of np.linalg.slogdet is the plain tuple (0, d logabsdet): the primal,
    # a namedtuple, names the field's position, in the helper and in both of its rules
    point = collections.namedtuple("Point", "a b")
    p = point(R4, A34)
    d_p = (R4 * 2.0, A34 * 3.0)
    np.testing.assert_array_equal(field_tangent(d_p, "b", p), A34 * 3.0)
    d_tangent, d_name, d_primal = REGISTRY.adjoint_rule(field_tangent)(A34, A34, d_p, "b", p)
    assert type(d_tangent) is tuple and d_name is None and d_primal is None
    np.testing.assert_array_equal(d_tangent[0], np.zeros(4))
    np.testing.assert_array_equal(d_tangent[1], A34)
    tangent = REGISTRY.tangent_rule(field_tangent)(((R4, A34 * 5.0), None, None), A34, d_p, "b", p)
    np.testing.assert_array_equal(tangent, A34 * 5.0)
    # transposes: <adjoint(u), v> == <u, tangent(v)>
    u, v = A34 * 0.5, (R4 * -1.0, A34 + 1.0)
    left = sum(np.sum(a * b) for a, b in zip(REGISTRY.adjoint_rule(field_tangent)(u, A34, d_p, "b", p)[0], v, strict=True))
    right = np.sum(u * REGISTRY.tangent_rule(field_tangent)((v, None, None), A34, d_p, "b", p))
    np.testing.assert_allclose(left, right)
