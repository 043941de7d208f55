"""Whole derivative matrices: `jacobian` (by forward or reverse mode) and `hessian`
(forward over reverse), assembled from the jvp and vjp of the generated code."""

import functools

import numpy as np

from .api import _argument_getter, _check_function, grad, normalize_wrt
from .backend.driver import compiled
from .errors import SsadError
from .runtime.callables import positions, tangent_parameter, unwrapped
from .runtime.handles import JVP, VJP
from .runtime.structure import fit_gradient


def jacobian(f, wrt=0, *, mode=None):
    """A function returning the Jacobian of `f` with respect to `wrt`.

    The result has shape ``np.shape(output) + np.shape(input)`` (a tuple of them for
    a tuple `wrt`). It is built by forward mode, one jvp per input element, when the
    inputs are smaller than the output, else by reverse mode, one pullback per
    output element; `mode="forward"` or `"reverse"` chooses.
    """
    inner = getattr(f, "_ssad_jacobian", None)
    if inner is not None:  # a third derivative: jacobian(hessian(f)), jacobian(jacobian(g))
        return _jacobian_of_a_jacobian(*inner, wrt)
    f = unwrapped(f)
    _check_function(f, "jacobian")
    names, is_tuple = normalize_wrt(f, wrt)
    places = positions(f, names)
    getters = [_argument_getter(f, n, p) for n, p in zip(names, places, strict=True)]

    @functools.wraps(f)
    def jacobian_function(*args, **kwargs):
        inputs = [get(args, kwargs) for get in getters]
        value = np.asarray(f(*args, **kwargs), dtype=np.float64)
        size_in = sum(int(np.size(x)) for x in inputs)
        chosen = mode or ("forward" if size_in < value.size else "reverse")
        if chosen == "forward":
            blocks = _jacobian_forward(f, names, args, kwargs, inputs, value)
        else:
            blocks = _jacobian_reverse(f, names, args, kwargs, inputs, value)
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
    entry = compiled(compiled(g, inner_names, JVP).function, names, VJP)

    @functools.wraps(g)
    def jacobian_of_jacobian(*args, **kwargs):
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
                    block[i + j] = np.asarray(fit_gradient(adjoint, y), dtype=np.float64)
        return tuple(blocks) if is_tuple else blocks[0]

    jacobian_of_jacobian._ssad_matrix = True
    return jacobian_of_jacobian


def _jacobian_reverse(f, names, args, kwargs, inputs, value):
    entry = compiled(f, names, VJP)
    rows = [[] for _ in inputs]
    for index in np.ndindex(value.shape):
        _, residuals = entry.function(*args, **kwargs)  # a fresh forward sweep per row
        seed = np.zeros_like(value)
        seed[index] = 1.0
        adjoints = entry.backward(seed if value.shape else 1.0, residuals)
        for row, adjoint, x in zip(rows, adjoints, inputs, strict=True):
            row.append(np.asarray(fit_gradient(adjoint, x), dtype=np.float64))
    return tuple(np.stack(row).reshape(value.shape + np.shape(x)) for row, x in zip(rows, inputs, strict=True))


def _jacobian_forward(f, names, args, kwargs, inputs, value):
    entry = compiled(f, names, JVP)
    blocks = []
    for name, x in zip(names, inputs, strict=True):
        columns = []
        for index in np.ndindex(np.shape(x)):
            tangents = {tangent_parameter(n): np.zeros(np.shape(v)) if np.ndim(v) else 0.0 for n, v in zip(names, inputs, strict=True)}
            direction = np.zeros(np.shape(x))
            direction[index] = 1.0
            tangents[tangent_parameter(name)] = direction if np.ndim(x) else 1.0
            _, tangent = entry.function(*args, **kwargs, **tangents)
            columns.append(np.broadcast_to(np.asarray(tangent, dtype=np.float64), value.shape))
        stacked = np.stack(columns, axis=-1) if columns else np.zeros(value.shape + (0,))
        blocks.append(stacked.reshape(value.shape + np.shape(x)))
    return tuple(blocks)


def hessian(f, wrt=0):
    """A function returning the Hessian of scalar-valued `f` with respect to `wrt`.

    Forward over reverse: the forward mode of `f`'s generated gradient, one jvp per
    input element; the result has shape ``np.shape(x) + np.shape(x)``. For a
    Hessian-vector product without the full matrix, use
    ``ssad.jvp(ssad.grad(f), (x,), (v,))[1]``.
    """
    f = unwrapped(f)
    _check_function(f, "hessian")
    names, is_tuple = normalize_wrt(f, wrt)
    if is_tuple and len(names) != 1:
        raise SsadError("hessian takes one parameter in wrt; for several, take jacobian(grad(f, wrt=(...)))")
    gradient = grad(f, wrt=names[0])
    return jacobian(gradient.generated, wrt=names[0], mode="forward")
