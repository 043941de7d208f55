"""The public API: each function composes the stages of the compiler in the order they run.

    parse -> fence -> anf -> cse -> activity -> reverse | forward -> optimize -> emit

The stages live in `frontend`, `analysis`, `transform`, `optimize` and `backend`;
`backend.driver.compiled` runs them (`backend.pipeline`) once per function, wrt,
variant and options. This module checks what the user passed, asks the driver for the
generated code, and fits what that code returns to the structure of the inputs.
"""

import functools
import inspect
import threading
import weakref

from .backend.driver import SCALAR_TYPES, Variants, compiled, globals_read
from .errors import SsadError
from .frontend import fence, parse
from .registry import REGISTRY, adjoint, tangent
from .runtime import unspent
from .runtime.callables import parameters, tangent_parameter, unwrapped, varargs
from .runtime.dynamic import call_forward
from .runtime.handles import GRAD, JVP, VALUE_AND_GRAD, VJP
from .runtime.structure import fit_gradient, zeros_like_value


# ----- wrt -----


def normalize_wrt(f, wrt):
    """(names, is_tuple) for `wrt`: an int, a parameter name, or a tuple of them."""
    if f.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) and REGISTRY.adjoint_rule(f) is None:
        fence.check(parse.parse_function(f))  # reports `**kwargs` where it stands
    positional, keyword_only = parameters(f)
    is_tuple = isinstance(wrt, (tuple, list))
    items = list(wrt) if is_tuple else [wrt]
    if not items:
        raise SsadError("wrt is empty: name at least one parameter to differentiate")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise SsadError(f"wrt must be a parameter index or name, or a tuple of them; got {item!r}")
        if isinstance(item, int):
            if not -len(positional) <= item < len(positional):
                raise SsadError(
                    f"wrt={item} is out of range: {f.__qualname__} has {len(positional)} positional "
                    f"parameter{'' if len(positional) == 1 else 's'} ({', '.join(positional)})"
                )
            names.append(positional[item])
        else:
            if item not in positional and item not in keyword_only and item != varargs(f):
                raise SsadError(
                    f"wrt={item!r} is not a parameter of {f.__qualname__}; its parameters are "
                    f"{', '.join(positional + keyword_only)}"
                )
            names.append(item)
    if len(set(names)) != len(names):
        raise SsadError(f"wrt names a parameter twice: {wrt!r}")
    return tuple(names), is_tuple


def _check_function(f, api):
    if getattr(f, "_ssad_matrix", False):
        raise SsadError(
            f"ssad.{api} of a function made by ssad.jacobian or ssad.hessian is not supported; take its "
            "ssad.jacobian instead (a third derivative is ssad.jacobian(ssad.hessian(f)))"
        )
    parse.require_python_function(f)


def _argument_getter(f, name, position):
    """A fast accessor for one parameter's value from (args, kwargs)."""
    signature = inspect.signature(f)
    parameter = signature.parameters[name]
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        count = len(parameters(f)[0])
        return lambda args, kwargs: tuple(args[count:])
    default = parameter.default

    def get(args, kwargs):
        if position is not None and position < len(args):
            return args[position]
        return kwargs.get(name, default)

    return get


# ----- public functions -----


def grad(f, wrt=0, *, optimize=True):
    """The gradient of scalar-valued `f` with respect to `wrt`, as a function with f's signature.

    `wrt` is a parameter index or name (the gradient is returned alone) or a tuple
    of them (a tuple of gradients is returned). Each gradient has the structure
    of its input: a float for a float, an array of the same shape and dtype for an
    array. Raises SsadError at call time when `f` returns a non-scalar; use `vjp`.
    """
    return _wrapper(f, wrt, optimize, with_value=False)


def value_and_grad(f, wrt=0, *, optimize=True):
    """Like `grad`, but the function returns `(f(...), gradient)`."""
    return _wrapper(f, wrt, optimize, with_value=True)


_wrappers = weakref.WeakKeyDictionary()  # function -> {(wrt, optimize, with_value, version): wrapper}
_wrappers_lock = threading.Lock()


def _wrapper(f, wrt, optimize, with_value):
    """The gradient function of `f`, made once: a second `grad(f)` is a dictionary lookup."""
    f = unwrapped(f)
    key = (wrt if not isinstance(wrt, list) else tuple(wrt), optimize, with_value, REGISTRY.version, globals_read(f))
    try:
        return _wrappers[f][key]
    except (KeyError, TypeError):
        pass
    _check_function(f, "value_and_grad" if with_value else "grad")
    names, is_tuple = normalize_wrt(f, wrt)
    variant = VALUE_AND_GRAD if with_value else GRAD
    made = _gradient_wrapper(f, Variants(f, names, variant, optimize, is_tuple), is_tuple, with_value=with_value)
    # Threads that asked for the same gradient at once each made one; the first kept
    # wins, so every caller gets the same function (and the same variants).
    with _wrappers_lock:
        return _wrappers.setdefault(f, {}).setdefault(key, made)


def _gradient_wrapper(f, variants, is_tuple, with_value):
    entry = variants.general
    for_args = variants.for_args
    getters = [_argument_getter(f, n, p) for n, p in zip(entry.wrt, entry.positions, strict=True)]
    if not is_tuple:
        (get,) = getters
        if with_value:

            def wrapper(*args, **kwargs):
                value, gradient = for_args(args).function(*args, **kwargs)
                return value, fit_gradient(gradient, get(args, kwargs))

        else:

            def wrapper(*args, **kwargs):
                return fit_gradient(for_args(args).function(*args, **kwargs), get(args, kwargs))

    else:

        def fit_all(gradients, args, kwargs):
            return tuple(fit_gradient(g, get(args, kwargs)) for g, get in zip(gradients, getters, strict=True))

        if with_value:

            def wrapper(*args, **kwargs):
                value, gradients = for_args(args).function(*args, **kwargs)
                return value, fit_all(gradients, args, kwargs)

        else:

            def wrapper(*args, **kwargs):
                return fit_all(for_args(args).function(*args, **kwargs), args, kwargs)

    functools.update_wrapper(wrapper, f)
    wrapper.__name__ = entry.function.__name__
    wrapper.__qualname__ = entry.function.__name__
    wrapper._ssad_wrapped = VALUE_AND_GRAD if with_value else GRAD
    wrapper.generated = entry.function  # the general variant (no argument is assumed scalar)
    wrapper.variants = variants
    return wrapper


def vjp(f, *args, **kwargs):
    """`(f(*args, **kwargs), pullback)`; `pullback(d_value)` returns one adjoint per positional argument."""
    f = unwrapped(f)
    _check_function(f, "vjp")
    positional, _ = parameters(f)
    rest = varargs(f)
    if len(args) > len(positional) and rest is None:
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(args)}")
    names = tuple(positional[: len(args)]) + ((rest,) if rest is not None and len(args) > len(positional) else ())
    if not names:
        raise SsadError("vjp needs at least one positional argument to differentiate")
    mask = [type(a) in SCALAR_TYPES for a in args]
    scalars = frozenset(n for n, m in zip(positional, mask, strict=False) if m)
    entry = compiled(f, names, VJP, True, scalars)
    value, residuals = entry.function(*args, **kwargs)
    backward = entry.backward
    runs = []

    once = _writes_in_place_anywhere(entry)

    def pullback(d_value):
        if runs and once:
            raise SsadError(
                f"this pullback of {f.__qualname__} was already called: {f.__qualname__} (or a function "
                "it calls) writes into arrays in place, which the backward sweep restores, so it can run once. Call "
                "ssad.vjp again for another output adjoint"
            )
        runs.append(True)
        adjoints = backward(d_value, unspent(residuals))  # each run pops its own copy of the tapes
        if rest is not None and len(args) > len(positional):  # one adjoint per argument *args took
            adjoints = tuple(adjoints[:-1]) + tuple(adjoints[-1])
        return tuple(fit_gradient(g, x) for g, x in zip(adjoints, args, strict=True))

    return value, pullback


def _writes_in_place_anywhere(entry):
    """Whether `entry`'s code or any user function it calls, transitively, writes into an
    array in place (its backward sweep then restores it, so a pullback can run once)."""
    if entry.writes_in_place:
        return True
    seen = set()
    pending = list(entry.callees or [])
    while pending:
        function, wrt = pending.pop()
        if (function, wrt) in seen:
            continue
        seen.add((function, wrt))
        callee = compiled(function, wrt, VJP)
        if callee.writes_in_place:
            return True
        pending.extend(callee.callees or [])
    return False


def jvp(f, primals, tangents):
    """`(f(*primals), tangent of the output)` by forward mode (not by reverse mode).

    `tangents` has one tangent per primal, shaped like it (None for an argument
    that carries none).
    """
    primals, tangents = tuple(primals), tuple(tangents)
    entry, keywords = _jvp_entry(f, primals, tangents)
    value, tangent = entry.function(*primals, **keywords)
    return value, tangent


def _jvp_entry(f, primals, tangents):
    """(the generated jvp of `f` for these arguments, the keyword tangents to call it with)."""
    variants = getattr(f, "variants", None)
    # a gradient's code specialized on the arguments that are scalars here (the code
    # `f(*primals)` runs), so a Hessian-vector product differentiates that code
    f = variants.for_args(primals).function if isinstance(variants, Variants) else unwrapped(f)
    _check_function(f, "jvp")
    if len(primals) != len(tangents):
        raise SsadError(f"jvp needs one tangent per primal: got {len(primals)} primals and {len(tangents)} tangents")
    positional, _ = parameters(f)
    if len(primals) > len(positional):
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(primals)}")
    wrt = tuple(n for n, t in zip(positional, tangents, strict=False) if t is not None)
    scalars = frozenset(n for n, a in zip(positional, primals, strict=False) if type(a) in SCALAR_TYPES)
    keywords = {tangent_parameter(n): t for n, t in zip(positional, tangents, strict=False) if t is not None}
    return compiled(f, wrt, JVP, True, scalars), keywords


# ----- ssad.jvp called inside a function being differentiated -----


@adjoint(jvp)
def _jvp_adjoint(dy, y, f, primals, tangents):
    """Reverse over forward: the pullback of the generated jvp of `f` gives the adjoints of
    the primals and of the tangents."""
    primals, tangents = tuple(primals), tuple(tangents)
    entry, keywords = _jvp_entry(f, primals, tangents)
    _, pullback = call_forward(entry.function, *primals, **keywords)
    adjoints = pullback(tuple(zeros_like_value(v) if d is None else d for d, v in zip(dy, y, strict=True)))
    d_keywords = adjoints[-1]
    positional = parameters(entry.function)[0]  # the jvp's positional parameters are f's
    d_tangents = tuple(
        d_keywords.get(tangent_parameter(n)) if t is not None else None
        for n, t in zip(positional, tangents, strict=False)
    )
    return None, tuple(adjoints[1:-1]), d_tangents


@tangent(jvp)
def _jvp_tangent(tangents, y, f, primals, tangents_of_f):
    raise SsadError(
        "forward mode over ssad.jvp (the jvp of a function that calls ssad.jvp) is not supported; take "
        "ssad.grad of it (reverse over forward), or ssad.hessian of the function"
    )


@adjoint(_jvp_adjoint)
@tangent(_jvp_adjoint)
def _third_order_through_jvp(*args, **kwargs):
    raise SsadError(
        "a third derivative through ssad.jvp called inside differentiated code is not supported; "
        "take ssad.jacobian(ssad.hessian(f)) of the function instead"
    )
