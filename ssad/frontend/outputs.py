"""Output arguments: `np.add(x, y, out=c)`, `np.add(x, y, c)`, `z.sum(out=c)`.

Such a call writes its result into `c` in place, which the lowering cannot see: the
gradient would silently miss the change (it was 0 for `c`). The fence refuses it. A
function of the user's own may have an `out` parameter like any other; and `out=None`,
or a parameter passed on as `out` (`def f(x, out=None)`), names no array of the function.
"""

import inspect

import gast
import numpy as np


def check_no_output_argument(parsed, node, bound, call, callee):
    """Refuse `call` when it gives a NumPy or SciPy function (`callee`, the object a
    static call names), or a method (`z.sum(out=c)`, `callee` None), an output array."""
    if (callee is None and not isinstance(call.func, gast.Attribute)) or (
            callee is not None and not is_library(callee, ("numpy", "scipy"))):
        return  # a function value (a nested `def`, a lambda), a function of the user's or ssad's
    outputs = [keyword.value for keyword in call.keywords if keyword.arg == "out"]
    position = _positional_output(callee, call.args) if callee is not None else None
    if position is not None:
        outputs.append(call.args[position])
    for output in outputs:
        if not _may_be_none(output, parsed, node, bound):
            target, function = gast.unparse(output), gast.unparse(call.func)
            raise parsed.unsupported(
                call,
                f"`{function}` writes its result into `{target}` in place (its `out` argument), which ssad "
                f"cannot differentiate; assign the result instead (`{target} = {function}(...)` without `out`)",
            )


LIBRARIES = ("numpy", "scipy", "ssad", "math", "cmath", "operator")


def is_library(callee, libraries=LIBRARIES):
    """Whether `callee` comes from one of `libraries` (by default NumPy, SciPy, the
    standard library's arithmetic and ssad itself), as opposed to a function of the user's."""
    if isinstance(callee, np.ufunc):
        return True
    module = getattr(callee, "__module__", None) or getattr(type(callee), "__module__", "") or ""
    return module.split(".")[0] in libraries


def _may_be_none(expr, parsed, node, bound):
    if isinstance(expr, gast.Constant):
        return expr.value is None
    if not isinstance(expr, gast.Name):
        return False
    if expr.id in _parameter_names(node.args):
        return True
    return expr.id not in bound and expr.id in parsed.namespace and parsed.namespace[expr.id] is None


def _parameter_names(arguments):
    every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return {a.id for a in every}


def _positional_output(callee, args):
    """The index in `args` of the output array a library call is given by position
    (`np.add(x, y, c)`, `np.dot(a, b, c)`), else None."""
    if any(isinstance(a, gast.Starred) for a in args):
        return None
    if isinstance(callee, np.ufunc):
        return callee.nin if len(args) > callee.nin else None
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    for index, parameter in enumerate(parameters[: len(args)]):
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return None
        if parameter.name == "out":
            return index
    return None
