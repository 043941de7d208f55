"""Whole derivative matrices: `jacobian` (by forward or reverse mode) and `hessian`
(forward over reverse), assembled from the jvp and vjp of the generated code; and `hvp`,
the Hessian-vector product, without the matrix."""

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .api import Compile, Wrt, _argument_getter, _native_mode, differentiable, grad, normalize_wrt
from .backend.driver import argument_facts, code_for, compiled
from .errors import SsadError
from .runtime.effects import check_one_run
from .runtime.callables import parameters, positions, tangent_parameter
from .runtime.handles import JVP, VJP
from .runtime.structure import fit_gradient


def jacobian(
    f: Callable[..., Any], wrt: Wrt = 0, *, mode: str | None = None, compile: Compile = False
) -> Callable[..., Any]:
    """A function returning the Jacobian of `f` with respect to `wrt`.

    The result has shape ``np.shape(output) + np.shape(input)`` (a tuple of them for
    a tuple `wrt`). It is built by forward mode, one jvp per input element, when the
    inputs are smaller than the output, else by reverse mode, one pullback per
    output element; `mode="forward"` or `"reverse"` chooses. `compile` compiles the
    jvp (or the vjp's halves) with Numba, as for `grad`.
    """
    inner = getattr(f, "_ssad_jacobian", None)
    if inner is not None:  # a third derivative: jacobian(hessian(f)), jacobian(jacobian(g))
        return _jacobian_of_a_jacobian(*inner, wrt)
    f = differentiable(f, "jacobian")
    check_one_run(f, "ssad.jacobian")
    native = _native_mode(compile)
    names, is_tuple = normalize_wrt(f, wrt)
    places = positions(f, names)
    getters = [_argument_getter(f, n, p) for n, p in zip(names, places, strict=True)]

    @functools.wraps(f)
    def jacobian_function(*args, **kwargs):
        check_one_run(f, "ssad.jacobian", (args, kwargs))
        inputs = _arrays_or_numbers(names, [get(args, kwargs) for get in getters])
        value = np.asarray(code_for(f, args, kwargs)(*args, **kwargs), dtype=np.float64)
        size_in = sum(int(np.size(x)) for x in inputs)
        chosen = mode or ("forward" if size_in < value.size else "reverse")
        if chosen == "forward":
            blocks = _jacobian_forward(f, names, args, kwargs, inputs, value, native)
        else:
            blocks = _jacobian_reverse(f, names, args, kwargs, inputs, value, native)
        return blocks if is_tuple else blocks[0]

    jacobian_function._ssad_jacobian = (f, names)
    jacobian_function._ssad_matrix = True  # other derivatives of it are refused (api._check_function)
    return jacobian_function


def _jacobian_of_a_jacobian(g, inner_names, wrt):
    """The Jacobian of `jacobian(g, inner)`: reverse mode over the jvp of `g`'s generated
    code. With J(x) e_j the jvp of g along e_j, the row of dJ[i, j]/d(wrt) is the pullback
    of the seed e_i on the tangent of that jvp: one forward and one backward sweep per
    (i, j). The result has shape ``np.shape(g(x)) + np.shape(x) + np.shape(wrt)``."""
    if len(inner_names) != 1:
        raise SsadError("jacobian of a jacobian takes a jacobian with respect to one parameter")
    names, is_tuple = normalize_wrt(g, wrt)
    outer = [_argument_getter(g, n, p) for n, p in zip(names, positions(g, names), strict=True)]
    (inner_place,) = positions(g, inner_names)
    inner = _argument_getter(g, inner_names[0], inner_place)
    tangent_name = tangent_parameter(inner_names[0])
    check_one_run(g, "ssad.jacobian of a jacobian")
    entry = compiled(compiled(g, inner_names, JVP).function, names, VJP)

    @functools.wraps(g)
    def jacobian_of_jacobian(*args, **kwargs):
        check_one_run(g, "ssad.jacobian of a jacobian", (args, kwargs))
        x, inputs = inner(args, kwargs), [get(args, kwargs) for get in outer]
        value_shape = np.shape(g(*args, **kwargs))
        blocks = [np.zeros(value_shape + np.shape(x) + np.shape(y)) for y in inputs]
        for j in np.ndindex(np.shape(x)):
            direction = np.zeros(np.shape(x))
            direction[j] = 1.0
            for i in np.ndindex(value_shape):
                (value, _), residuals = entry.function(*args, **kwargs, **{tangent_name: direction if j else 1.0})
                seed = np.zeros(value_shape)
                seed[i] = 1.0
                adjoints = entry.backward((np.zeros_like(value), seed if i else 1.0), residuals)
                for block, adjoint, y in zip(blocks, adjoints, inputs, strict=True):
                    block[i + j] = _dense(fit_gradient(adjoint, y), y)
        return tuple(blocks) if is_tuple else blocks[0]

    jacobian_of_jacobian._ssad_matrix = True
    return jacobian_of_jacobian


def _arrays_or_numbers(names, inputs):
    """`inputs`, or SsadError for a dict, list or tuple: a matrix has one row or column per
    number of an array or a number."""
    for name, x in zip(names, inputs, strict=True):
        if isinstance(x, (dict, list, tuple)):
            raise SsadError(
                f"jacobian and hessian take arrays and numbers, and `{name}` is a {type(x).__name__}: flatten "
                f"it (`v, unflatten = ssad.flatten({name})`) and differentiate `lambda v: f(unflatten(v), ...)`, "
                "or use hvp, which takes it as it is"
            )
    return inputs


def _dense(g, x):
    """A derivative block as float64 (zeros for an input without a gradient: a bool)."""
    return np.zeros(np.shape(x)) if g is None else np.asarray(g, dtype=np.float64)


def _jvp_function(entry, native):
    """The jvp code of `entry`, compiled with Numba if `native` asks."""
    if not native:
        return entry.function
    from .native import native_function

    return native_function(entry, native == "strict").function


def _for_arguments(f, args, kwargs):
    """(the code of `f` for `args` and `kwargs`, the facts about its parameters they give): the
    code of a gradient ssad made specialized for them, knowing which hold objects of the user's."""
    f = code_for(f, args, kwargs)
    return f, argument_facts(parameters(f)[0], args, kwargs)


def _jacobian_reverse(f, names, args, kwargs, inputs, value, native=False):
    f, facts = _for_arguments(f, args, kwargs)
    entry = compiled(f, names, VJP, True, facts)
    forward, backward = entry.function, entry.backward
    if native:
        from .native import vjp_halves

        forward, backward = vjp_halves(entry, native == "strict", args, kwargs)
    rows = [[] for _ in inputs]
    for index in np.ndindex(value.shape):
        _, residuals = forward(*args, **kwargs)  # a fresh forward sweep per row
        seed = np.zeros_like(value)
        seed[index] = 1.0
        adjoints = backward(seed if value.shape else 1.0, residuals)
        for row, adjoint, x in zip(rows, adjoints, inputs, strict=True):
            row.append(_dense(fit_gradient(adjoint, x), x))
    return tuple(np.stack(row).reshape(value.shape + np.shape(x)) for row, x in zip(rows, inputs, strict=True))


def _jacobian_forward(f, names, args, kwargs, inputs, value, native=False):
    f, facts = _for_arguments(f, args, kwargs)
    entry = compiled(f, names, JVP, True, facts)
    jvp_function = _jvp_function(entry, native)
    blocks = []
    for name, x in zip(names, inputs, strict=True):
        columns = []
        for index in np.ndindex(np.shape(x)):
            tangents = {tangent_parameter(n): np.zeros(np.shape(v)) if np.ndim(v) else 0.0 for n, v in zip(names, inputs, strict=True)}
            direction = np.zeros(np.shape(x))
            direction[index] = 1.0
            tangents[tangent_parameter(name)] = direction if np.ndim(x) else 1.0
            _, tangent = jvp_function(*args, **kwargs, **tangents)
            columns.append(np.broadcast_to(np.asarray(tangent, dtype=np.float64), value.shape))
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(value.shape + (0,))
        blocks.append(stacked.reshape(value.shape + np.shape(x)))
    return tuple(blocks)


def hessian(f: Callable[..., Any], wrt: Wrt = 0, *, compile: Compile = False) -> Callable[..., Any]:
    """A function returning the Hessian of scalar-valued `f` with respect to `wrt`.

    Forward over reverse: the forward mode of `f`'s generated gradient, one jvp per
    input element. For one parameter the result has shape ``np.shape(x) + np.shape(x)``;
    for a tuple `wrt` it is the blocks as nested tuples, ``H[i][j]`` of shape
    ``np.shape(x_i) + np.shape(x_j)`` (as JAX's ``hessian(f, argnums=(0, 1))``). For a
    Hessian-vector product without the matrix, use `hvp`. `compile` compiles the jvp of
    the gradient's code with Numba, as for `grad`.
    """
    f = differentiable(f, "hessian")
    check_one_run(f, "ssad.hessian")
    native = _native_mode(compile)
    names, is_tuple = normalize_wrt(f, wrt)
    if not is_tuple:
        gradient = grad(f, wrt=names[0])
        return jacobian(gradient.variants.general.function, wrt=names[0], mode="forward", compile=native)
    gradient = grad(f, wrt=names).variants.general.function
    getters = [_argument_getter(f, n, p) for n, p in zip(names, positions(f, names), strict=True)]

    @functools.wraps(f)
    def hessian_blocks(*args, **kwargs):
        check_one_run(f, "ssad.hessian", (args, kwargs))
        inputs = _arrays_or_numbers(names, [get(args, kwargs) for get in getters])
        blocks = [[None] * len(names) for _ in names]
        code, facts = _for_arguments(gradient, args, kwargs)
        for j, (name, x) in enumerate(zip(names, inputs, strict=True)):
            jvp_function = _jvp_function(compiled(code, (name,), JVP, True, facts), native)
            columns = [[] for _ in names]
            for index in np.ndindex(np.shape(x)):  # one jvp of the gradient per element of x_j
                direction = np.zeros(np.shape(x))
                direction[index] = 1.0
                _, tangent = jvp_function(*args, **kwargs, **{tangent_parameter(name): direction if index else 1.0})
                for column, t, y in zip(columns, tangent, inputs, strict=True):
                    column.append(_dense(fit_gradient(t, y), y))
            for i, y in enumerate(inputs):
                stacked = np.stack(columns[i], axis=-1) if columns[i] else np.zeros(np.shape(y) + (0,))
                blocks[i][j] = stacked.reshape(np.shape(y) + np.shape(x))
        return tuple(tuple(row) for row in blocks)

    hessian_blocks._ssad_made_by = "ssad.hessian with a tuple wrt"
    return hessian_blocks


def hvp(f: Callable[..., Any], wrt: Wrt = 0) -> Callable[..., Any]:
    """A function `(*args, v, **kwargs)` returning the Hessian-vector product H·v of
    scalar-valued `f` at `args`, the vector `v` shaped like the argument `wrt` names and
    passed last (as autograd's ``hessian_tensor_product``). For a tuple `wrt`, `v` is a
    tuple with one vector per parameter and the result the tuple of the blocks of H·v.

    Forward over reverse, `ssad.jvp(ssad.grad(f, wrt), args, v)`: one forward sweep of
    the gradient's code, never the Hessian itself.
    """
    f = differentiable(f, "hvp")
    names, is_tuple = normalize_wrt(f, wrt)
    gradient = grad(f, wrt=names if is_tuple else names[0])
    positional = parameters(f)[0]
    getters = [_argument_getter(f, n, p) for n, p in zip(names, positions(f, names), strict=True)]

    def hessian_vector_product(*args_and_v, **kwargs):
        if not args_and_v:
            raise SsadError(f"hvp of {f.__qualname__} takes its arguments and then the vector v, last; got none")
        *args, v = args_and_v
        vectors = tuple(v) if is_tuple and isinstance(v, (tuple, list)) else (v,)
        if len(vectors) != len(names):
            raise SsadError(
                f"hvp of {f.__qualname__} with respect to {', '.join(names)} takes v last: "
                + (f"a tuple of {len(names)} vectors" if is_tuple else "one vector shaped like " + names[0])
            )
        code = gradient.variants.for_args(args, kwargs).function  # the gradient's code for these arguments
        scalars = argument_facts(positional, args, kwargs)
        given = {n: u for n, u in zip(names, vectors, strict=True) if u is not None}
        entry = compiled(code, tuple(given), JVP, True, scalars)
        _, tangent = entry.function(*args, **kwargs, **{tangent_parameter(n): u for n, u in given.items()})
        tangents = tangent if is_tuple else (tangent,)
        products = tuple(fit_gradient(t, get(args, kwargs)) for t, get in zip(tangents, getters, strict=True))
        return products if is_tuple else products[0]

    hessian_vector_product.__name__ = hessian_vector_product.__qualname__ = f"hvp_{f.__name__}"
    hessian_vector_product._ssad_made_by = "ssad.hvp"
    return hessian_vector_product
