"""ssad: source-to-source automatic differentiation for Python and NumPy.

    import ssad
    dloss = ssad.grad(loss)        # a generated Python function
    print(ssad.show(loss))         # its source
"""

from . import rules as _rules  # noqa: F401  (registers the built-in rules)
from . import inner_jvp as _inner_jvp  # noqa: F401  (registers the rules of ssad.jvp called in differentiated code)
from . import inner_grad as _inner_grad  # noqa: F401  (registers the rules of ssad.grad called in differentiated code)
from .api import elementwise_grad, grad, value_and_grad, vjp
from .forward_mode import jvp
from .display import show, stages
from .matrices import hessian, hvp, jacobian
from .errors import MissingRuleError, NativeWarning, SsadError, UnsupportedSyntaxError
from .registry import adjoint, impure, nondifferentiable, tangent
from .runtime import stop_gradient
from .runtime.rematerialize import checkpoint
from .runtime.rows import RowGradient
from .runtime.structure import aux_of
from .checks import check_grads
from .trees import flatten

nondifferentiable(stop_gradient, aux_of)

__version__ = "0.1.0"

__all__ = [
    "MissingRuleError",
    "NativeWarning",
    "RowGradient",
    "SsadError",
    "UnsupportedSyntaxError",
    "adjoint",
    "checkpoint",
    "check_grads",
    "elementwise_grad",
    "flatten",
    "grad",
    "hessian",
    "hvp",
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
