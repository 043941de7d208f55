"""Calls to the user's own functions: each is differentiated by its own generated code.

A call `t = g(a, b)` whose arguments are active, where `g` is a Python function with
source and no adjoint rule, becomes in the caller's forward sweep

    t, t_saved = forward_g(a, b)

and in its adjoint sweep

    d_a, d_b = backward_g(d_t, t_saved)

`forward_g` and `backward_g` are the two halves of `g`'s own vjp (see `api`),
compiled once per (function, parameters that receive active values) and shared by
every caller; `t_saved` holds what `backward_g` reads, `g`'s tape included. The
halves are `Lazy` handles compiled on first use, so a function may call itself,
directly or through others, to a depth the data decides.
"""

import inspect
import sys
import threading

from .errors import SsadError
from .registry import REGISTRY

_LIBRARY_PREFIXES = ("numpy", "scipy", "ssad")


def transformable(f):
    """Whether ssad differentiates calls to `f` by transforming its source."""
    if not inspect.isfunction(f):
        return False
    module = getattr(f, "__module__", None) or ""
    if module.startswith("ssad.rules."):
        return True  # helpers of the rules, which generated code calls: differentiable like any code
    top = module.split(".")[0]
    if top in _LIBRARY_PREFIXES or top in getattr(sys, "stdlib_module_names", ()):
        return False
    return True


def unwrapped(f):
    """A function made by `ssad.grad` (or `value_and_grad`) stands for its generated code,
    which has source ssad can read; any other value stands for itself."""
    generated = getattr(f, "generated", None)
    if getattr(f, "_ssad_wrapped", None) is not None and generated is not None:
        return generated
    return f


def callable_instance(value):
    """`type(value).__call__` when `value` is an instance of the user's class that defines
    `__call__` in Python (a layer, a model), else None: ssad differentiates calling it
    like a call of that method."""
    if value is None or isinstance(value, type) or inspect.isfunction(value) or inspect.ismethod(value):
        return None
    method = next((vars(k)["__call__"] for k in type(value).__mro__ if "__call__" in vars(k)), None)
    return method if transformable(method) else None


def parameters_of_operands(f, n_args, keyword_names):
    """The parameter of `f` each operand of a call binds to: [name for each positional] + keywords.

    An operand that `*args` collects binds to (name, index in the tuple).
    """
    signature = inspect.signature(f)
    placeholders = list(range(n_args))
    try:
        bound = signature.bind(*placeholders, **{k: ("kw", k) for k in keyword_names})
    except TypeError as error:
        raise SsadError(f"the call to {f.__qualname__} does not match its signature: {error}") from None
    positional = [None] * n_args
    keywords = {}
    for param, value in bound.arguments.items():
        if isinstance(value, int):
            positional[value] = param
        elif isinstance(value, tuple) and value and value[0] == "kw":
            keywords[value[1]] = param
        elif signature.parameters[param].kind is inspect.Parameter.VAR_POSITIONAL:
            for index, operand in enumerate(value):
                positional[operand] = (param, index)  # the index-th item of *param
        else:  # **kwargs collected several operands
            raise SsadError(
                f"the call to {f.__qualname__} passes values through `*{param}` or `**{param}`; "
                "name each parameter"
            )
    return positional, keywords


def function_label(function):
    """An identifier for `function` in generated names (`lambda_12` for a lambda on line 12)."""
    name = function.__name__
    return name if name.isidentifier() else f"lambda_{function.__code__.co_firstlineno}"


def vjp_name(function, wrt):
    """`layer` when differentiating all its positional parameters, else `layer_wrt_W`."""
    code = function.__code__
    positional = code.co_varnames[: code.co_argcount]
    if tuple(wrt) == tuple(positional):
        return function_label(function)
    return f"{function_label(function)}_wrt_{'_'.join(wrt)}"


class Lazy:
    """One half (`forward` or `backward`) of a function's vjp, compiled on first call.

    The two halves of a pair share one resolution, so the backward half always reads
    the residuals of the forward half it belongs to.
    """

    def __init__(self, function, wrt, half, shared):
        self.function = function
        self.wrt = wrt
        self.half = half
        self.__name__ = f"{half}_{vjp_name(function, wrt)}"
        self._shared = shared  # {"entry": the Compiled both halves come from, once resolved}

    def resolve(self):
        """The generated function this handle stands for (compiled now if needed)."""
        entry = self._shared.get("entry")
        if entry is None:
            from .api import VJP, compiled

            entry = self._shared.setdefault("entry", compiled(self.function, self.wrt, VJP))
        return entry.function if self.half == "forward" else entry.backward

    def pin(self, entry):
        """Resolve the pair to `entry` (compiled with the rules of now) unless already resolved."""
        self._shared.setdefault("entry", entry)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self):
        return f"<ssad {self.half} of {self.function.__qualname__} w.r.t. {', '.join(self.wrt)}>"


_handles = {}
_handles_lock = threading.Lock()


def handles(function, wrt):
    """The shared (forward, backward) Lazy pair of `function` w.r.t. parameters `wrt`.

    One pair per rule-registry version: code generated after a rule changed resolves
    its callees anew, with the rules of now (code generated before keeps its own).
    """
    key = (function, wrt, REGISTRY.version)
    with _handles_lock:
        pair = _handles.get(key)
        if pair is None:
            shared = {}
            pair = (Lazy(function, wrt, "forward", shared), Lazy(function, wrt, "backward", shared))
            _handles[key] = pair
        return pair
