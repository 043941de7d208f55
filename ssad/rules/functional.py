"""Rules: functions as values (`functools.partial`) and sequences (`list`, `tuple`, concatenation).

A function value's adjoint is the adjoint of what it holds (see `ssad.dynamic`): for
`functools.partial(f, a, b)` it is the tuple of the adjoints of `a` and `b`, which
this rule hands back to those arguments. The function itself gets no gradient.
"""

import functools

from ..registry import adjoint
from ..runtime import concat, pack_like


@adjoint(functools.partial)
def partial_adjoint(dy, y, func, *args):
    return (None,) + tuple(dy)


# ----- Sequences -----


@adjoint(concat)
def concat_adjoint(dy, y, a, b):
    return (type(a)(dy[: len(a)]), type(b)(dy[len(a) :]))


@adjoint(list)
@adjoint(tuple)
def sequence_adjoint(dy, y, iterable=()):
    return (pack_like(iterable, list(dy)),)
