"""Rules: objects of the user's. `super()`, and operators in code that is differentiated again.

`super(C, obj)` (what ssad reads `super()` in a method as, see `frontend.methods`) is
`obj` seen from C's parent: its adjoint and its tangent are obj's.

First-order code computes `u * x` on an object as `operator_forward(u, "__mul__", x)`
(see `runtime.operators`). Differentiated again (`hessian`, `grad(grad(f))`), the front
end reads that call as `operator_forward_packed(u, "__mul__", (x,), {})` (see
`frontend.generated`): the method Python calls, bound to the left operand through one of
the helpers below, called as any function value is (`runtime.pullbacks`), whose
`Pullback` can be differentiated. The helpers are code ssad reads and differentiates.
"""

import types

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime.operators import chosen, operator_jvp, walkable
from ..runtime.pullbacks import call_forward_packed, packed_adjoint, packed_tangent, third_order_error


@adjoint(super)
def super_adjoint(dy, y, cls, obj):
    return (None, dy)


@tangent(super)
def super_tangent(tangents, y, cls, obj):
    return tangents[1]


def applied(left, function):
    """`-u`: u's `__neg__` (`abs(u)`: its `__abs__`, ...)."""
    return function(left)


def walked(left, function):
    """`for v in p`: p's `__iter__`, what it returns checked to be what a loop walks."""
    items = function(left)
    walkable(items, left)
    return items


nondifferentiable(walkable)


def applied_to(left, right, function):
    """`u * x`: u's `__mul__` (or the operator itself, `operator.mul`)."""
    return function(left, right)


def reflected(left, right, function):
    """`x * u`: u's `__rmul__`, which takes u first."""
    return function(right, left)


def operator_forward_packed(left, method, args, kwargs):
    """`operator_forward(left, method, *args)` read again: (its value, its `Pullback`), the
    call being that of a method bound to `left`, so the pullback gives (left's adjoint, the
    right operand's, the method's, {})."""
    args = tuple(args)
    function, swapped = chosen(left, method, args)
    helper = (walked if method == "__iter__" else applied) if not args else reflected if swapped else applied_to
    return call_forward_packed(types.MethodType(helper, left), args + (function,), {})


@tangent(operator_forward_packed)
def operator_forward_packed_tangent(tangents, y, left, method, args, kwargs):
    pullback = y[1]
    given = tuple(tangents[2]) if isinstance(tangents[2], (tuple, list)) else (None,) * len(args)
    return packed_tangent(pullback.function, tangents[0], pullback.args, given + (None,), {}, {})


@adjoint(operator_forward_packed)
def operator_forward_packed_adjoint(dy, y, left, method, args, kwargs):
    pullback = y[1]
    d_left, d_args, _ = packed_adjoint(dy[0], dy[1], pullback.function, pullback.args, {})
    return d_left, None, tuple(d_args[: len(args)]), {}


def _third_order(*args, **kwargs):
    raise third_order_error()


adjoint(operator_jvp)(_third_order)  # the tangent code's call, differentiated again (as `call_jvp`)
tangent(operator_jvp)(_third_order)
