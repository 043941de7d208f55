"""ssad: source-to-source automatic differentiation for Python and NumPy.

    import ssad
    dloss = ssad.grad(loss)        # a generated Python function
    print(ssad.show(loss))         # its source
"""

from . import rules as _rules  # noqa: F401  (registers the built-in rules)
from .api import grad, jvp, value_and_grad, vjp
from .display import show, stages
from .matrices import hessian, jacobian
from .errors import MissingRuleError, SsadError, UnsupportedSyntaxError
from .registry import adjoint, impure, nondifferentiable, tangent
from .runtime import stop_gradient
from .checks import check_grads

nondifferentiable(stop_gradient)

__version__ = "0.1.0"

__all__ = [
    "MissingRuleError",
    "SsadError",
    "UnsupportedSyntaxError",
    "adjoint",
    "check_grads",
    "grad",
    "hessian",
    "impure",
    "jacobian",
    "jvp",
    "nondifferentiable",
    "show",
    "stages",
    "stop_gradient",
    "tangent",
    "value_and_grad",
    "vjp",
]
