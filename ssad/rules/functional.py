"""Rules: functions as values (`functools.partial`) and sequences (`list`, `tuple`, concatenation).

A function value's adjoint is the adjoint of what it holds (see `ssad.dynamic`): for
`functools.partial(f, a, b, k=c)` it is the pair (adjoints of `a` and `b`, dict of the
adjoint of `c`). Inside differentiated code the compiler hands them back itself;
this rule serves calls to `partial` through a variable. The function gets no gradient.

Tangents mirror that format: the tangent of a partial is the pair (tangents of its bound
positional arguments, dict of the tangents of its bound keywords). A sequence's tangent
is a sequence of the same type with one tangent per item; a dict's is a dict.
"""

import functools

import numpy as np

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import concat, iterated, merged, pack_like, repeated, repeats_summed, zipped
from ..runtime.receivers import not_walked
from ..runtime.structure import is_other_array, zeros_like_value


@adjoint(functools.partial)
def partial_adjoint(dy, y, func, *args):
    return (None,) + tuple(dy[0])


@tangent(functools.partial)
def partial_tangent(tangents, y, func, *args, **kwargs):
    # tangent rules see positional tangents only: bound keywords get zero tangents,
    # just as the adjoint rule gives them no gradient
    return (tuple(tangents[1:]), _keyword_zeros(kwargs))


# ----- Sequences -----


@adjoint(concat)
def concat_adjoint(dy, y, a, b):
    return (pack_like(a, dy[: len(a)]), pack_like(b, dy[len(a) :]))


@tangent(concat)
def concat_tangent(tangents, y, a, b):
    return pack_like(y, _item_tangents(tangents[0], a) + _item_tangents(tangents[1], b))


@adjoint(repeated)
def repeated_adjoint(dy, y, items, times):
    return (repeats_summed(dy, items, times), None)


@tangent(repeated)
def repeated_tangent(tangents, y, items, times):
    return repeated(pack_like(items, _item_tangents(tangents[0], items)), times)


@adjoint(repeats_summed)
def repeats_summed_adjoint(dz, z, dy, items, times):
    return (pack_like(dy, repeated(list(dz), times)), None, None)


@tangent(repeats_summed)
def repeats_summed_tangent(tangents, z, dy, items, times):
    return repeats_summed(pack_like(dy, _item_tangents(tangents[0], dy)), items, times)


@adjoint(list)
@adjoint(tuple)
def sequence_adjoint(dy, y, iterable=()):
    return (pack_like(iterable, list(dy)),)


@tangent(list)
@tangent(tuple)
def sequence_tangent(tangents, y, iterable=None):
    return type(y)(_item_tangents(tangents[0], iterable))


# ----- Dict views (iterated as lists: `for k, v in d.items()`) -----


@adjoint(dict.items)
def dict_items_adjoint(dy, y, d):
    return ({key: pair[1] for key, pair in zip(d, dy, strict=True)},)


@tangent(dict.items)
def dict_items_tangent(tangents, y, d):
    # a key carries no tangent
    return list(zip([None] * len(d), _value_tangents(tangents[0], d), strict=True))


@adjoint(dict.values)
def dict_values_adjoint(dy, y, d):
    return ({key: d_value for key, d_value in zip(d, dy, strict=True)},)  # a display ssad differentiates again


@tangent(dict.values)
def dict_values_tangent(tangents, y, d):
    return _value_tangents(tangents[0], d)


nondifferentiable(dict.keys)


@adjoint(zipped)
def zipped_adjoint(dy, y, *sequences, strict=False):
    """Item k of sequence i went to tuple k, place i (items past the shortest sequence: none)."""
    adjoints = []
    for i, sequence in enumerate(sequences):
        items = []
        for k, item in enumerate(sequence):
            items.append(dy[k][i] if k < len(dy) else zeros_like_value(item))
        adjoints.append(pack_like(sequence, items))
    return tuple(adjoints)


@tangent(zipped)
def zipped_tangent(tangents, y, *sequences, strict=False):
    columns = [_item_tangents(t, s) for t, s in zip(tangents, sequences, strict=True)]
    return [tuple(column[k] for column in columns) for k in range(len(y))]


@adjoint(iterated)
def iterated_adjoint(dy, y, xs):
    if walked_as_is(xs):
        return (dy,)
    not_walked(xs)  # an object of the user's, walked by its own `__iter__`
    return (zeros_like_value(xs),)  # a dict's keys, a set's items: they carry no gradient


@tangent(iterated)
def iterated_tangent(tangents, y, xs):
    if walked_as_is(xs):
        return tangents[0]
    not_walked(xs)
    return zeros_like_value(y)  # a dict's keys: one zero tangent each (indexed by the loop)


def walked_as_is(xs):
    """Whether `iterated(xs)` is xs itself (never by identity: saved values may be copies)."""
    return isinstance(xs, (list, tuple, np.ndarray, range, str)) or is_other_array(xs)


nondifferentiable(walked_as_is)


@adjoint(merged)
def merged_adjoint(dy, y, a, b):
    """`{**a, **b}`: each key's adjoint goes to the dict whose value the result holds."""
    d_a, d_b = {}, {}
    for k in a:
        d_a[k] = zeros_like_value(a[k]) if k in b else dy[k]
    for k in b:
        d_b[k] = dy[k]
    return (d_a, d_b)


@tangent(merged)
def merged_tangent(tangents, y, a, b):
    return {**dict(zip(a, _value_tangents(tangents[0], a), strict=True)),
            **dict(zip(b, _value_tangents(tangents[1], b), strict=True))}


@adjoint(dict.get)
def dict_get_adjoint(dy, y, d, key, default=None):
    """`d.get(key, default)`: the value read (d's, or the default's where key is missing)."""
    if key in d:
        return ({k: (dy if k == key else zeros_like_value(v)) for k, v in d.items()}, None, zeros_like_value(default))
    return ({k: zeros_like_value(v) for k, v in d.items()}, None, dy)


@tangent(dict.get)
def dict_get_tangent(tangents, y, d, key, default=None):
    if key in d:
        return _value_tangents(tangents[0], d)[list(d).index(key)]
    return tangents[2] if len(tangents) > 2 else None


# ----- sorted: a permutation of the items, chosen by values that carry no gradient -----


def sort_order(items, key=None, reverse=False):
    """The positions of `items` in the order `sorted(items, key=key, reverse=reverse)` puts them
    (stable, as `sorted` is: equal items keep their order)."""
    values = [key(item) for item in items] if key is not None else list(items)
    return sorted(range(len(values)), key=values.__getitem__, reverse=reverse)


def inverse_order(order):
    """Where each item went: `inverse[order[j]] == j`."""
    inverse = [0] * len(order)
    for position, item in enumerate(order):
        inverse[item] = position
    return inverse


nondifferentiable(sort_order, inverse_order)


@adjoint(sorted)
def sorted_adjoint(dy, y, iterable, key=None, reverse=False):
    inverse = inverse_order(sort_order(iterable, key, reverse))
    return (pack_like(iterable, [dy[k] for k in inverse]),)


@tangent(sorted)
def sorted_tangent(tangents, y, iterable, key=None, reverse=False):
    items = _item_tangents(tangents[0], iterable)
    return [items[k] for k in sort_order(iterable, key, reverse)]


# ----- Helpers -----


def _keyword_zeros(kwargs):
    """Zero tangents for the keywords bound by a partial (None for non-float values)."""
    return {key: zeros_like_value(value) for key, value in kwargs.items()}


def _item_tangents(t, x):
    """The tangent `t` of the sequence (or array) `x` as a list, one tangent per item.

    A tangent that is not itself a sequence (a scalar zero, or None for a sequence with
    nothing to differentiate) stands for every item.
    """
    if isinstance(t, (list, tuple, np.ndarray)):
        return list(t)
    if isinstance(t, dict):
        return [None] * len(x)  # list(d) holds d's keys, which carry no tangent
    not_walked(x)  # an object of the user's taken for a sequence (its tangent an object of its class)
    return [t] * len(x)


def _value_tangents(t, d):
    """The tangents of the values of dict `d`, in key order, from the dict tangent `t`."""
    if isinstance(t, dict):
        return [t.get(key) for key in d]
    return [t] * len(d)
