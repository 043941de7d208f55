"""The public API: each function composes the stages of the compiler in the order they run.

    parse -> fence -> anf -> cse -> activity -> reverse | forward -> optimize -> emit

The stages live in `frontend`, `analysis`, `transform`, `optimize` and `backend`;
`backend.driver.compiled` runs them (`backend.pipeline`) once per function, wrt,
variant and options. This module checks what the user passed, turns a callable that is
not a `def` into one (`stand_ins`), asks the driver for the generated code, and fits
what that code returns to the structure of the inputs.
"""

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

from .analysis.row_reads import row_read_parameters
from .backend.driver import Variants, argument_class, argument_facts, compiled
from .backend.sparse_rows import sparse_entry
from .errors import SsadError
from .frontend import anf, parse
from .frontend.arguments import entry_function
from .registry import REGISTRY
from .runtime import seed, unspent
from .runtime.callables import function_label, parameters, positions, unwrapped, varargs
from .runtime.checkpoints import validate as validate_checkpoint
from .runtime.closures import Closure, gradient_closure
from .runtime.handles import GRAD, VALUE_AND_GRAD, VJP
from .runtime.apart import apart_from, kept_apart, taken_out
from .runtime.reads import keep, kept, still_read, values_read, watch
from .runtime.rows import gradient_fitter
from .wrt import _argument_getter, normalize_wrt  # noqa: F401  (display and matrices read them here)
from .runtime.structure import fit_gradient
from .stand_ins import as_function

Wrt = int | str | tuple | list  # a parameter's position or name, or a tuple or list of them
Compile = bool | str  # False, True (Numba where it can, else NumPy after a warning) or "strict"
Sparse = bool | int | str | tuple  # False, True (the wrt parameters read by row gathers), or which of them
Checkpoint = str | tuple | None  # None, "sqrt", ("revolve", snapshots) or ("every", iterations)


# ----- what can be differentiated -----


def differentiable(f, api, how=None):
    """The Python function ssad compiles for `f`, passed to `ssad.<api>`: f itself for a `def`
    or lambda, the generated code of a gradient ssad made, a stand-in for any other callable
    it can read or has a rule for (see `stand_ins`); SsadError for the rest."""
    if not callable(f):
        raise SsadError(f"ssad.{api} takes a function to differentiate; got {f!r}, which cannot be called")
    f = unwrapped(f)
    made_by = getattr(f, "_ssad_made_by", None)
    if made_by is not None or getattr(f, "_ssad_matrix", False):
        if made_by is None:
            raise SsadError(
                f"ssad.{api} of a function made by ssad.jacobian or ssad.hessian is not supported; take its "
                "ssad.jacobian instead (a third derivative is ssad.jacobian(ssad.hessian(f)))"
            )
        raise SsadError(
            f"ssad.{api} of a function made by {made_by} is not supported; differentiate the function "
            f"{made_by} was given instead"
        )
    function = as_function(f, how)
    parse.refuse_a_generator(function, api)
    if function is not None:
        function = entry_function(function, anf.to_anf)  # a twin copying the arguments it writes into
    if function is None:
        raise SsadError(
            f"ssad.{api} differentiates a Python function (`def` or `lambda`) whose source it can read, "
            f"a functools.partial or bound method of one, an object whose class defines __call__ in "
            f"Python, or a function ssad has a rule for; got {f!r}, which is none of these. For a builtin "
            f"or C function, register a rule with @ssad.adjoint (and @ssad.tangent for forward mode)."
        )
    return function


# ----- public functions -----


def grad(
    f: Callable[..., Any], wrt: Wrt = 0, *, optimize: bool = True, has_aux: bool = False, compile: Compile = False,
    sparse: Sparse = False, checkpoint: Checkpoint = None,
) -> Callable[..., Any]:
    """The gradient of scalar-valued `f` with respect to `wrt`, as a function with f's signature.

    `wrt` is a parameter index or name (the gradient is returned alone) or a tuple
    of them (a tuple of gradients is returned). Each gradient has the structure
    of its input: a float for a float, an array of the same shape and dtype for an
    array. `f` may return a scalar or an array of one element; anything larger raises
    SsadError at call time (use `vjp`). With `has_aux=True`, `f` returns `(value, aux)`
    and the function returns `(gradient, aux)`; aux carries no gradient.

    With `compile=True` the generated code is compiled with Numba for the types of
    each call (docs/performance.md); what Numba cannot compile runs as NumPy code
    after one `NativeWarning`, and with `compile="strict"` raises an SsadError.

    With `sparse=True` (or a tuple of the names or positions in `wrt` it applies to),
    the gradient of a parameter the function reads only by row gathers (`V[rows]`,
    `np.take(V, rows, axis=0)`) is a `ssad.RowGradient`: the rows read and their
    gradients, not a dense array (docs/sparse.md). With a tuple `wrt`, `sparse=True`
    applies to the parameters that are read so; a parameter named in `sparse` that is
    read otherwise raises SsadError naming the line.

    With `checkpoint="sqrt"`, `("revolve", s)` or `("every", k)`, the outermost loops of `f`
    keep snapshots of their state instead of recording every iteration, and the backward
    sweep runs each segment again from its snapshot (docs/checkpointing.md): memory falls
    from n iterations' records to about 2 sqrt(n) (sqrt), s snapshots (revolve) or n/k + k
    (every), for one to three more forward runs of the loop.
    """
    return _wrapper(f, wrt, optimize, with_value=False, has_aux=has_aux, native=compile, sparse=sparse,
                    checkpoint=checkpoint)


def value_and_grad(
    f: Callable[..., Any], wrt: Wrt = 0, *, optimize: bool = True, has_aux: bool = False, compile: Compile = False,
    sparse: Sparse = False, checkpoint: Checkpoint = None,
) -> Callable[..., Any]:
    """Like `grad`, but the function returns `(f(...), gradient)`; with `has_aux=True`,
    `((value, aux), gradient)`."""
    return _wrapper(f, wrt, optimize, with_value=True, has_aux=has_aux, native=compile, sparse=sparse,
                    checkpoint=checkpoint)


def elementwise_grad(f: Callable[..., Any], wrt: Wrt = 0, *, optimize: bool = True) -> Callable[..., Any]:
    """The gradient of `np.sum(f(...))` with respect to `wrt`: for `f` acting elementwise, the
    derivative of each output element by its input element, shaped like the input (the vjp
    of `f` with a cotangent of ones, as autograd's `elementwise_grad`)."""
    return grad(differentiable(f, "elementwise_grad", "summed"), wrt, optimize=optimize)


# function -> {(wrt, optimize, with_value, version, ...): ((values read, wrapper), ...)}, newest first
_wrappers = weakref.WeakKeyDictionary()
_wrappers_lock = threading.Lock()


def _wrapper(f, wrt, optimize, with_value, has_aux, native=False, sparse=False, checkpoint=None):
    """The gradient function of `f`, made once: a second `grad(f)` is a dictionary lookup,
    while f and the functions it calls read the same globals and closure cells
    (`runtime.reads`); after one was rebound, a new gradient function with new code."""
    api = "value_and_grad" if with_value else "grad"
    native = _native_mode(native)
    checkpoint = checkpoint_strategy(checkpoint)
    if native and has_aux:
        raise SsadError(f"{api}(..., has_aux=True) is not compiled with Numba yet; leave out compile=")
    if sparse is not False and has_aux:
        raise SsadError(f"{api}(..., has_aux=True) does not give sparse gradients yet; leave out sparse=")
    if isinstance(f, Closure) and not with_value and not has_aux and sparse is False and checkpoint is None:
        return gradient_closure(f, wrt, grad)  # `ssad.grad(inner)` inside a differentiated function
    f = differentiable(f, api, "aux" if has_aux else None)
    key = (wrt if not isinstance(wrt, list) else tuple(wrt), optimize, with_value, REGISTRY.version,
           native, sparse if not isinstance(sparse, list) else tuple(sparse), checkpoint)
    read = values_read(f)
    try:
        found = kept(_wrappers[f][key], read)
    except (KeyError, TypeError):
        found = None
    if found is not None:
        return found
    names, is_tuple = normalize_wrt(f, wrt)
    if has_aux:
        made = _aux_gradient_wrapper(f, names, is_tuple, optimize, with_value, checkpoint)
    else:
        variant = VALUE_AND_GRAD if with_value else GRAD
        variants = Variants(f, names, variant, optimize, is_tuple, checkpoint)
        made = _gradient_wrapper(f, variants, is_tuple, with_value, native, sparse_names(f, names, sparse))
    # Threads that asked for the same gradient at once each made one; the first kept
    # wins, so every caller gets the same function (and the same variants).
    with _wrappers_lock:
        entries = _wrappers.setdefault(f, {})
        found = kept(entries.get(key, ()), read)
        if found is None:
            entries[key] = keep(entries.get(key, ()), read, made)
            found = made
        return found


def checkpoint_strategy(checkpoint):
    """`checkpoint=` as the compiler takes it (None, "sqrt", ("revolve", s), ("every", k))"""
    if checkpoint is None:
        return None
    try:
        return validate_checkpoint(checkpoint)
    except ValueError as error:
        raise SsadError(str(error)) from None


def _native_mode(native):
    if native not in (False, True, "strict"):
        raise SsadError(f"compile={native!r}: compile is True, False or 'strict'")
    return native


def sparse_names(f, names, sparse):
    """The names among `names` whose gradient is a RowGradient, for `sparse=`."""
    if sparse is False or sparse is None:
        return ()
    asked = names if sparse is True else normalize_wrt(f, sparse)[0]
    return row_read_parameters(parse.parse_function(f), names, asked, explicit=sparse is not True or len(names) == 1)


def _gradient_wrapper(f, variants, is_tuple, with_value, native=False, sparse=()):
    wrt = variants.wrt
    for_args = variants.for_args
    if sparse:
        variant = VALUE_AND_GRAD if with_value else GRAD

        def for_args(args, kwargs=None, for_args=for_args):
            return sparse_entry(for_args(args, kwargs), f, sparse, variant)

    if native:
        from .native import native_function

        strict = native == "strict"

        def for_args(args, kwargs=None, for_args=for_args):
            return native_function(for_args(args, kwargs), strict)

    getters = [_argument_getter(f, n, p) for n, p in zip(wrt, positions(f, wrt), strict=True)]
    if not is_tuple:
        (get,) = getters
        fit = gradient_fitter(wrt, sparse)
        if with_value:

            def wrapper(*args, **kwargs):
                value, gradient = for_args(args, kwargs).function(*args, **kwargs)
                return value, apart_from(fit(gradient, get(args, kwargs)), args, kwargs)

        else:

            def wrapper(*args, **kwargs):
                return apart_from(fit(for_args(args, kwargs).function(*args, **kwargs), get(args, kwargs)), args, kwargs)

    else:

        fitters = list(zip(getters, [gradient_fitter((n,), sparse) for n in wrt], strict=True))
        given = positions(f, wrt)
        # the common call: every parameter of wrt given by position, none sparse
        direct = None if sparse or None in given else (max(given), list(given))

        def fit_all(gradients, args, kwargs):
            if direct is not None and not kwargs and len(args) > direct[0]:
                fitted = tuple([fit_gradient(g, args[p]) for g, p in zip(gradients, direct[1], strict=True)])
            else:
                fitted = tuple([fit(g, get(args, kwargs)) for g, (get, fit) in zip(gradients, fitters, strict=True)])
            return apart_from(fitted, args, kwargs)  # none the memory of an argument's, or another's

        if with_value:

            def wrapper(*args, **kwargs):
                value, gradients = for_args(args, kwargs).function(*args, **kwargs)
                return value, fit_all(gradients, args, kwargs)

        else:

            def wrapper(*args, **kwargs):
                return fit_all(for_args(args, kwargs).function(*args, **kwargs), args, kwargs)

    functools.update_wrapper(wrapper, f)
    wrapper.__name__ = wrapper.__qualname__ = f"{variants.variant}_{function_label(f)}"
    wrapper._ssad_wrapped = VALUE_AND_GRAD if with_value else GRAD
    wrapper.variants = variants  # its generated code: `variants.general.function` assumes no shapes
    return wrapper


def _aux_gradient_wrapper(f, names, is_tuple, optimize, with_value, checkpoint=None):
    """`grad(f, has_aux=True)`: one forward sweep gives `(value, aux)`, one backward sweep from
    the value alone (aux reaches the result only through `stop_gradient`: see
    `backend.pipeline.aux_cut_off`) gives the gradients."""
    positional = parameters(f)[0]
    getters = [_argument_getter(f, n, p) for n, p in zip(names, positions(f, names), strict=True)]
    by_mask = {}
    made_with = [watch(f)]  # the objects f reads: code made before one was rebound is dropped

    def wrapper(*args, **kwargs):
        if not still_read(made_with[0]):
            made_with[0] = watch(f)
            by_mask.clear()
        mask = tuple([argument_class(a) for a in args]) + tuple(sorted(argument_facts((), (), kwargs)))
        entry = by_mask.get(mask)
        if entry is None:
            scalars = argument_facts(positional, args, kwargs)
            entry = by_mask.setdefault(mask, compiled(f, names, VJP, optimize, scalars, checkpoint=checkpoint))
        (value, aux), residuals = entry.function(*args, **kwargs)
        aux = taken_out(aux)  # as the forward half left it: the backward half undoes its changes in place
        adjoints = entry.backward((seed(value), None), residuals)
        gradients = apart_from(tuple(fit_gradient(g, get(args, kwargs)) for g, get in zip(adjoints, getters, strict=True)),
                               args, kwargs)
        gradient = gradients if is_tuple else gradients[0]
        return ((value, aux), gradient) if with_value else (gradient, aux)

    functools.update_wrapper(wrapper, f)
    wrapper._ssad_made_by = f"ssad.{'value_and_grad' if with_value else 'grad'}(..., has_aux=True)"
    return wrapper


def vjp(
    f: Callable[..., Any], *args: Any, wrt: Wrt | None = None, sparse: Sparse = False, compile: Compile = False,
    checkpoint: Checkpoint = None, **kwargs: Any,
) -> tuple:
    """`(f(*args, **kwargs), pullback)`; `pullback(d_value)` returns the adjoints of the
    arguments `wrt` names (an int or name: that adjoint alone; a tuple: a tuple of them in
    its order), by default one adjoint per positional argument, as a tuple. `sparse`
    makes the adjoints of parameters read only by row gathers `RowGradient`s,
    `compile` compiles both halves with Numba, and `checkpoint` checkpoints the outermost
    loops, as for `grad`. The pullback reads the arguments and the value as the forward
    half had them, whatever the caller changes in place in between (`kept_apart`).

    `wrt`, `sparse`, `compile` and `checkpoint` are taken by vjp itself, never passed on to `f`.
    """
    f = differentiable(f, "vjp")
    positional, _ = parameters(f)
    rest = varargs(f)
    if len(args) > len(positional) and rest is None:
        raise SsadError(f"{f.__qualname__} takes {len(positional)} positional arguments, got {len(args)}")
    if wrt is None:
        names = tuple(positional[: len(args)]) + ((rest,) if rest is not None and len(args) > len(positional) else ())
        if not names:
            raise SsadError("vjp needs at least one positional argument to differentiate, or wrt= naming one")
        is_tuple = True
        values = lambda: args  # noqa: E731 - one adjoint per positional argument
    else:
        names, is_tuple = normalize_wrt(f, wrt)
        getters = [_argument_getter(f, n, p) for n, p in zip(names, positions(f, names), strict=True)]
        values = lambda: tuple(get(args, kwargs) for get in getters)  # noqa: E731
    scalars = argument_facts(positional, args, kwargs)
    entry = compiled(f, names, VJP, True, scalars, checkpoint=checkpoint_strategy(checkpoint))
    chosen = sparse_names(f, names, sparse)
    if chosen:
        entry = sparse_entry(entry, f, chosen, VJP)
    fits = [gradient_fitter((n,), chosen) for n in names]
    forward, backward = entry.function, entry.backward
    if _native_mode(compile):
        from .native import vjp_halves

        forward, backward = vjp_halves(entry, compile == "strict", args, kwargs)
    value, residuals = forward(*args, **kwargs)
    residuals = kept_apart(residuals, (args, kwargs, value))  # the caller may change those before the pullback
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
        fitters = fits
        if wrt is None and rest is not None and len(args) > len(positional):  # one adjoint per argument *args took
            fitters = fits[:-1] + [fits[-1]] * len(adjoints[-1])
            adjoints = tuple(adjoints[:-1]) + tuple(adjoints[-1])
        fitted = apart_from(tuple(fit(g, x) for g, x, fit in zip(adjoints, values(), fitters, strict=True)),
                            args, kwargs, d_value)
        return fitted if is_tuple else fitted[0]

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
