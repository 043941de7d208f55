"""Forward mode, the public function: `jvp`, a value and its tangent in one sweep.

Asks the driver for the generated jvp of the function (specialised on the arguments
that are scalars, and on a gradient's variant when the function is one ssad made) and
calls it; `inner_jvp` gives the rules of `jvp` called inside differentiated code.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from .api import Compile, _native_mode, differentiable
from .backend.driver import Variants, argument_facts, compiled
from .errors import SsadError
from .runtime.callables import parameters, tangent_parameter, varargs
from .runtime.defaults import dict_derivative
from .runtime.handles import JVP
from .runtime.apart import apart_from
from .runtime.refusals import defined
from .runtime.structure import zeros_like_value


def jvp(f: Callable[..., Any], primals: tuple, tangents: tuple, *, compile: Compile = False) -> tuple:
    """`(f(*primals), tangent of the output)` by forward mode (not by reverse mode).

    `tangents` has one tangent per primal, shaped like it (None for an argument
    that carries none). `compile` as for `grad`.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    entry, keywords = _jvp_entry(f, primals, tangents)
    if _native_mode(compile):
        from .native import native_function

        value, tangent = native_function(entry, compile == "strict").function(*primals, **keywords)
    else:
        value, tangent = entry.function(*primals, **keywords)
    return value, apart_from(defined(tangent), primals, tangents)  # not an input's memory


def _jvp_entry(f, primals, tangents):
    """(the generated jvp of `f` for these arguments, the keyword tangents to call it with)."""
    variants = getattr(f, "variants", None)
    # a gradient's code specialized on the arguments that are scalars here (the code
    # `f(*primals)` runs), so a Hessian-vector product differentiates that code
    f = variants.for_args(primals).function if isinstance(variants, Variants) else differentiable(f, "jvp")
    if len(primals) != len(tangents):
        raise SsadError(f"jvp needs one tangent per primal: got {len(primals)} primals and {len(tangents)} tangents")
    positional, _ = parameters(f)
    rest = varargs(f)
    if len(primals) > len(positional) and rest is None:
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(primals)}")
    wrt = tuple(n for n, t in zip(positional, tangents, strict=False) if t is not None)
    scalars = argument_facts(positional, primals)
    keywords = {
        tangent_parameter(n): _fitted(p, t) for n, p, t in zip(positional, primals, tangents, strict=False)
        if t is not None
    }
    spread = list(zip(primals[len(positional):], tangents[len(positional):], strict=True))
    if any(t is not None for _, t in spread):  # `def f(*xs)`: the tangent of xs, a tuple, zeros for None
        wrt += (rest,)
        keywords[tangent_parameter(rest)] = tuple(zeros_like_value(p) if t is None else _fitted(p, t) for p, t in spread)
    return compiled(f, wrt, JVP, True, scalars), keywords


def _fitted(primal, tangent):
    """`tangent` as the kind of value `primal` is, where it is a Python number standing for
    the tangent of a NumPy array or scalar (`jvp(f, (np.array(2.0),), (1.0,))`), or a real
    array for a complex one: the generated code treats a tangent as its primal is treated,
    and may index it and write into it."""
    if isinstance(tangent, (int, float, complex)) and not isinstance(tangent, bool):
        if isinstance(primal, np.ndarray):
            return np.full(primal.shape, tangent, dtype=np.result_type(primal.dtype, type(tangent), float))
        if isinstance(primal, np.generic):
            return np.result_type(primal.dtype, type(tangent), float).type(tangent)
        return tangent
    if isinstance(primal, (list, tuple)) and isinstance(tangent, (list, tuple)) and len(primal) == len(tangent):
        fitted = [t if t is None else _fitted(p, t) for p, t in zip(primal, tangent, strict=True)]
        if isinstance(tangent, list):
            return fitted
        return type(tangent)(*fitted) if hasattr(tangent, "_fields") else tuple(fitted)
    if isinstance(primal, dict) and isinstance(tangent, dict):
        fitted = {k: t if t is None or k not in primal else _fitted(primal[k], t) for k, t in tangent.items()}
        return dict_derivative(primal, fitted, zeros_like_value)  # a defaultdict's: a key read anew has a zero
    if isinstance(tangent, np.ndarray) and tangent.dtype.kind != "c" and np.iscomplexobj(primal):
        return tangent + 0j  # a complex array's tangent is complex: a write into it keeps the imaginary part
    return tangent
