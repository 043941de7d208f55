"""What a callable is to ssad: the user's own code, a callable object, or a library function.

Both the compiler (which calls become calls of generated code) and generated code at
run time (a function value known only when the code runs) ask these questions, so
they live here, below both.
"""

import inspect
import sys

_LIBRARY_PREFIXES = ("numpy", "scipy", "ssad")


def transformable(f):
    """Whether ssad differentiates calls to `f` by transforming its source."""
    if not inspect.isfunction(f) or made_by_ssad(f) is not None:
        return False
    module = getattr(f, "__module__", None) or ""
    if module.startswith("ssad.rules."):
        return True  # helpers of the rules, which generated code calls: differentiable like any code
    top = module.split(".")[0]
    if top in _LIBRARY_PREFIXES or top in getattr(sys, "stdlib_module_names", ()):
        return False
    return True


def made_by_ssad(f):
    """"ssad.hessian" (or the like) for a function ssad.hessian, ssad.jacobian, ssad.hvp or
    `has_aux=True` made, whose code is not generated code ssad can read; else None."""
    if getattr(f, "_ssad_matrix", False):
        return "ssad.jacobian or ssad.hessian"
    return getattr(f, "_ssad_made_by", None)


def refused_inside(f):
    """What to say of calling `f`, made by ssad (see `made_by_ssad`), in differentiated code."""
    return (f"a function made by {made_by_ssad(f)} is called inside a function being differentiated, "
            "which ssad does not differentiate: ssad differentiates ssad.grad and ssad.value_and_grad (without "
            "has_aux) and ssad.jvp called inside; write a Hessian-vector product as "
            "ssad.jvp(ssad.grad(f), (x,), (v,)), or take the derivative you need of f outside")


def unwrapped(f):
    """A function made by `ssad.grad` (or `value_and_grad`) stands for its generated code,
    which has source ssad can read; any other value stands for itself."""
    variants = getattr(f, "variants", None)
    if getattr(f, "_ssad_wrapped", None) is not None and variants is not None:
        return variants.general.function
    return f


def callable_instance(value):
    """`type(value).__call__` when `value` is an instance of the user's class that defines
    `__call__` in Python (a layer, a model), else None: ssad differentiates calling it
    like a call of that method."""
    if value is None or isinstance(value, type) or inspect.isfunction(value) or inspect.ismethod(value):
        return None
    method = next((vars(k)["__call__"] for k in type(value).__mro__ if "__call__" in vars(k)), None)
    return method if transformable(method) else None


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


def parameters(f):
    """(positional parameter names, keyword-only parameter names) of the Python function `f`."""
    code = f.__code__
    positional = list(code.co_varnames[: code.co_argcount])
    keyword_only = list(code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount])
    return positional, keyword_only


def varargs(f):
    """The name of f's `*args` parameter, or None."""
    code = f.__code__
    if code.co_flags & inspect.CO_VARARGS:
        return code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    return None


def parameter_order(function):
    """The names of `function`'s parameters in the order its signature lists them."""
    code = function.__code__
    count = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
             + bool(code.co_flags & inspect.CO_VARKEYWORDS))
    return code.co_varnames[:count]


def positions(f, wrt):
    """The position of each name of `wrt` among f's positional parameters (None if keyword-only)."""
    positional, _ = parameters(f)
    return tuple(positional.index(n) if n in positional else None for n in wrt)


def tangent_parameter(param):
    """The keyword a forward-mode function takes the tangent of `param` by: `d_x`."""
    return f"d_{param}"
