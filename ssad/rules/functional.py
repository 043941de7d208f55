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
from ..runtime import concat, pack_like
from ..runtime.structure import zeros_like_value


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
    return (type(a)(dy[: len(a)]), type(b)(dy[len(a) :]))


@tangent(concat)
def concat_tangent(tangents, y, a, b):
    return pack_like(y, _item_tangents(tangents[0], a) + _item_tangents(tangents[1], b))


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
    return (dict(zip(d, dy, strict=True)),)


@tangent(dict.values)
def dict_values_tangent(tangents, y, d):
    return _value_tangents(tangents[0], d)


nondifferentiable(dict.keys)


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
    return [t] * len(x)


def _value_tangents(t, d):
    """The tangents of the values of dict `d`, in key order, from the dict tangent `t`."""
    if isinstance(t, dict):
        return [t.get(key) for key in d]
    return [t] * len(d)
