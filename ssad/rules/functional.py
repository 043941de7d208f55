"""Rules: functions as values (`functools.partial`) and sequences (`list`, `tuple`, concatenation).

A function value's adjoint is the adjoint of what it holds (see `ssad.dynamic`): for
`functools.partial(f, a, b, k=c)` it is the pair (adjoints of `a` and `b`, dict of the
adjoint of `c`). Inside differentiated code the compiler hands them back itself;
this rule serves calls to `partial` through a variable. The function gets no gradient.
"""

import functools

from ..registry import adjoint, nondifferentiable
from ..runtime import concat, pack_like


@adjoint(functools.partial)
def partial_adjoint(dy, y, func, *args):
    return (None,) + tuple(dy[0])


# ----- Sequences -----


@adjoint(concat)
def concat_adjoint(dy, y, a, b):
    return (type(a)(dy[: len(a)]), type(b)(dy[len(a) :]))


@adjoint(list)
@adjoint(tuple)
def sequence_adjoint(dy, y, iterable=()):
    return (pack_like(iterable, list(dy)),)


# ----- Dict views (iterated as lists: `for k, v in d.items()`) -----


@adjoint(dict.items)
def dict_items_adjoint(dy, y, d):
    return ({key: pair[1] for key, pair in zip(d, dy, strict=True)},)


@adjoint(dict.values)
def dict_values_adjoint(dy, y, d):
    return (dict(zip(d, dy, strict=True)),)


nondifferentiable(dict.keys)
