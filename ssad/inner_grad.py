"""`ssad.grad` called inside a function being differentiated: its adjoint and tangent rules.

`g = ssad.grad(inner)` of a closure `inner` made in the function closes over what
`inner` captured (see `runtime.closures.gradient_closure`); the rules here carry the
adjoints and tangents of those values through the making of `g`, so derivatives of
derivatives of such functions work.
"""

from .api import grad
from .errors import SsadError
from .registry import adjoint, tangent
from .runtime.closures import Closure


@adjoint(grad)
def _grad_adjoint(dy, y, f, *rest, **options):
    """`g = ssad.grad(inner)` of a closure `inner` made in the function: `g` closes over what
    `inner` captured (see `runtime.closures.gradient_closure`), so g's adjoint, the dict of the
    adjoints of those values, is inner's."""
    if not isinstance(f, Closure):
        raise SsadError(
            f"ssad.grad of {f!r}, inside a differentiated function, with values that carry gradients bound into "
            "it: ssad differentiates through ssad.grad of a nested `def` or `lambda` only; write one"
        )
    return (dy,) + (None,) * len(rest)


@tangent(grad)
def _grad_tangent(tangents, y, f, *rest, **options):
    return tangents[0]


@adjoint(_grad_adjoint)
def _grad_adjoint_adjoint(d_adjoints, adjoints, dy, y, f, *rest, **options):
    return (d_adjoints[0], None, None) + (None,) * len(rest)


@tangent(_grad_adjoint)
def _grad_adjoint_tangent(tangents, adjoints, dy, y, f, *rest, **options):
    return (tangents[0],) + (None,) * len(rest)
