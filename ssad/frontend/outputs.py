"""Output arguments: `np.add(x, y, out=c)`, `np.add(x, y, c)`, `z.sum(out=c)`.

Such a call writes its result into `c` in place, which the lowering cannot see: the
gradient would silently miss the change (it was 0 for `c`). The fence refuses it, and
the flags that let a library function write into its operand
(`np.nan_to_num(a, copy=False)`, `scipy.linalg.solve(a, b, overwrite_a=True)`). A
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
    flag = _in_place_flag(callee, call, lambda e: _may_be_false(e, parsed, node, bound)) if callee is not None else None
    if flag is not None:
        raise parsed.unsupported(
            call,
            f"`{gast.unparse(call.func)}(..., {flag}=...)` may write into its argument in place, which ssad cannot "
            f"differentiate; leave `{flag}` at its default",
        )


def passed_on_outputs(call, callee, node):
    """The parameters of the function `node` that `call` gives a NumPy or SciPy function
    (`callee`), or a method (`callee` None), as its output (`def f(x, out=None): np.sin(x,
    out=out)`): the fence lets them pass, as None; the lowering checks where the code runs
    that one is (see `passing`)."""
    if (callee is None and not isinstance(call.func, gast.Attribute)) or (
            callee is not None and not is_library(callee, ("numpy", "scipy"))):
        return []
    outputs = [keyword.value for keyword in call.keywords if keyword.arg == "out"]
    position = _positional_output(callee, call.args) if callee is not None else None
    outputs += [call.args[position]] if position is not None else []
    parameters = _parameter_names(node.args)
    return [o.id for o in outputs if isinstance(o, gast.Name) and o.id in parameters]


def _in_place_flag(callee, call, may_be_false):
    """The argument of `call` that lets a library function write into an operand in place:
    `copy=` of np.nan_to_num other than True (it then replaces NaN and infinities in the
    array it is given, and returns that array), `overwrite_a=` and the like of SciPy other
    than False. None when there is none."""
    flags = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if not any(isinstance(a, gast.Starred) for a in call.args):
        try:
            flags = dict(inspect.signature(callee).bind_partial(*call.args, **flags).arguments)
        except (TypeError, ValueError):
            pass  # no signature to read, or arguments it does not take: the keywords as written
    for flag, value in flags.items():
        if flag.startswith("overwrite_") and not may_be_false(value):
            return flag
    if callee is np.nan_to_num and "copy" in flags:
        value = flags["copy"]
        return None if isinstance(value, gast.Constant) and value.value is True else "copy"
    return None


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


def _may_be_false(expr, parsed, node, bound):
    """Whether the flag `expr` may be False or None: a literal False or None, a parameter (as
    an `out` parameter may be None), or a global or closure name holding one."""
    if isinstance(expr, gast.Constant):
        return expr.value in (False, None)
    if not isinstance(expr, gast.Name):
        return False
    if expr.id in _parameter_names(node.args):
        return True
    value = parsed.namespace.get(expr.id, True) if expr.id not in bound else True
    return value is None or (isinstance(value, (bool, np.bool_, int)) and not value)


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
