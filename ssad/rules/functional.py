"""Rules: functions as values (`functools.partial`).

A function value's adjoint is the adjoint of what it holds (see `ssad.dynamic`): for
`functools.partial(f, a, b)` it is the tuple of the adjoints of `a` and `b`, which
this rule hands back to those arguments. The function itself gets no gradient.
"""

import functools

from ..registry import adjoint


@adjoint(functools.partial)
def partial_adjoint(dy, y, func, *args):
    return (None,) + tuple(dy)
