"""`flatten(tree)`: a structure of parameters as one float64 vector, and back.

An optimizer that takes a vector (`scipy.optimize.minimize`) sees the parameters of a
model as one: `vector, unflatten = ssad.flatten(params)`, and `unflatten(vector)`
rebuilds `params` (as autograd's `flatten`)::

    def objective(v):
        return loss(unflatten(v), data)

    def gradient(v):
        return ssad.flatten(ssad.grad(loss)(unflatten(v), data))[0]

The structures are those gradients have (`runtime.structure`): tuples, lists, dicts,
namedtuples, dataclasses and objects with attributes, nested, with numbers and arrays
as leaves. Each real number leaf is in the vector, in the order the structure lists it
(a dict's own key order, a dataclass's field order); an integer one too, which
`unflatten` rounds back to an integer. A bool, None, a string or any other leaf that is
not a number has no gradient, is not in the vector, and `unflatten` puts the same
object back. So the gradient of a structure flattens to a vector that lines up with
the structure's own.

`unflatten` may be called inside a function ssad differentiates (`ssad.grad(objective)`):
it is linear, and its rules say so in both modes, to any order.
"""

import copy
import functools
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import SsadError
from .registry import adjoint, tangent
from .runtime.structure import fields_of, is_namedtuple, is_record, rebuild


def flatten(tree: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """`(vector, unflatten)`: the real number leaves of `tree` as one 1-D float64 array, and the
    function that rebuilds the same structure, shapes, dtypes and container types from a
    vector of that length."""
    offset = [0]
    spec = _Spec(_spec_of(tree, offset), offset[0])
    vector = np.zeros(spec.size)
    _fill(spec.root, tree, vector)
    return vector, functools.partial(unflatten, spec)


class _Spec:
    """What `flatten` read: the structure (`root`) and the length of its vector."""

    __slots__ = ("root", "size")

    def __init__(self, root, size):
        self.root, self.size = root, size


class _Leaf:
    """A number in the vector at `start`: `kind` is "float", "int", "scalar" (a NumPy number,
    of `dtype`) or "array" (of `shape` and `dtype`)."""

    __slots__ = ("kind", "shape", "dtype", "start", "size")

    def __init__(self, kind, shape, dtype, start):
        self.kind, self.shape, self.dtype, self.start = kind, shape, dtype, start
        self.size = int(np.prod(shape, dtype=np.int64))


class _Kept:
    """A leaf without a gradient (a bool, a string, None): `unflatten` puts `value` back."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Node:
    """A container: `kind` is "namedtuple", "sequence", "dict" or "record"; `keys` the
    dict keys or attribute names; `template` the original, copied when rebuilt."""

    __slots__ = ("kind", "keys", "children", "template")

    def __init__(self, kind, keys, children, template):
        self.kind, self.keys, self.children, self.template = kind, keys, children, template


def _spec_of(x, offset):
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, str):
        return _Kept(x)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind == "c":
            _refuse_complex(x)
        if x.dtype.kind not in "iuf":  # bools, strings, objects
            return _Kept(x)
        return _leaf("array" if isinstance(x, np.ndarray) else "scalar", np.shape(x), x.dtype, offset)
    if isinstance(x, numbers.Number):
        if not isinstance(x, numbers.Real):
            _refuse_complex(x)
        return _leaf("int" if isinstance(x, numbers.Integral) else "float", (), None, offset)
    if is_namedtuple(x):
        return _Node("namedtuple", x._fields, [_spec_of(v, offset) for v in x], x)
    if isinstance(x, (tuple, list)):
        return _Node("sequence", None, [_spec_of(v, offset) for v in x], x)
    if isinstance(x, dict):
        return _Node("dict", list(x), [_spec_of(v, offset) for v in x.values()], x)
    if is_record(x):
        names = fields_of(x)
        return _Node("record", names, [_spec_of(getattr(x, n), offset) for n in names], x)
    return _Kept(x)


def _leaf(kind, shape, dtype, offset):
    leaf = _Leaf(kind, shape, dtype, offset[0])
    offset[0] += leaf.size
    return leaf


def _refuse_complex(x):
    raise SsadError(
        f"flatten takes real numbers; this structure holds a complex value ({x!r}). Keep its real "
        "and imaginary parts as two real leaves"
    )


def _fill(spec, x, vector):
    if isinstance(spec, _Leaf):
        vector[spec.start : spec.start + spec.size] = np.ravel(x)
    elif isinstance(spec, _Node):
        for child, value in zip(spec.children, _items(spec, x), strict=True):
            _fill(child, value, vector)


def _items(spec, x):
    """The children of `x`, a value of `spec`'s structure, in the spec's order (None where a
    sparse adjoint leaves one out: a dict without the key, an object without the attribute)."""
    if x is None:
        return [None] * len(spec.children)
    if spec.kind in ("dict", "record"):
        return [x.get(k) if isinstance(x, dict) else getattr(x, k, None) for k in spec.keys]
    return list(x)


# ----- rebuilding -----


def unflatten(spec, vector):
    """The structure `spec` describes, with its numbers read from `vector` (what `flatten`'s
    `unflatten` is: `functools.partial(unflatten, spec)`)."""
    return _rebuilt(spec.root, _checked(spec, vector), exact=True)


def _checked(spec, vector):
    if np.ndim(vector) != 1 or np.shape(vector)[0] != spec.size:
        raise SsadError(
            f"unflatten takes a 1-D vector of {spec.size} numbers, the length flatten gave; got "
            f"a {type(vector).__name__} of shape {np.shape(vector)}"
        )
    return vector


def _rebuilt(spec, vector, exact):
    """`exact`: each leaf of its own type and dtype (what `unflatten` returns); else as an
    adjoint or tangent of the structure: floats, float arrays, containers as gradients are."""
    if isinstance(spec, _Kept):
        return spec.value if exact else None
    if isinstance(spec, _Leaf):
        part = vector[spec.start : spec.start + spec.size]
        if spec.kind in ("float", "int"):
            number = float(part[0])
            return int(round(number)) if exact and spec.kind == "int" else number
        dtype = spec.dtype if exact or spec.dtype.kind == "f" else np.dtype(np.float64)
        if exact and dtype.kind in "iu":
            part = np.rint(part)
        if spec.kind == "scalar":
            return dtype.type(part[0])
        return np.array(part, dtype=dtype).reshape(spec.shape)
    children = [_rebuilt(child, vector, exact) for child in spec.children]
    template = spec.template
    if spec.kind == "namedtuple":
        return type(template)(*children)
    if spec.kind == "sequence":
        return type(template)(children)
    if spec.kind == "dict":
        if not exact:
            return dict(zip(spec.keys, children, strict=True))
        made = template.copy()
        made.update(zip(spec.keys, children, strict=True))
        return made
    values = dict(zip(spec.keys, children, strict=True))
    if not exact:
        return rebuild(template, values)
    made = copy.copy(template)
    for name, value in values.items():
        object.__setattr__(made, name, value)
    return made


def as_adjoint(spec, vector):
    """The structure of `spec` as an adjoint or tangent of it, numbers read from `vector`."""
    return _rebuilt(spec.root, _checked(spec, vector), exact=False)


def flat_adjoint(spec, tree):
    """The adjoint or tangent `tree` of a structure of `spec` as a vector (zeros where it has
    none: a None, a key or attribute it leaves out)."""
    vector = np.zeros(spec.size)
    _fill_adjoint(spec.root, tree, vector)
    return vector


def _fill_adjoint(spec, x, vector):
    if isinstance(spec, _Leaf):
        if x is not None:
            vector[spec.start : spec.start + spec.size] = np.ravel(np.broadcast_to(np.real(x), spec.shape))
    elif isinstance(spec, _Node):
        for child, value in zip(spec.children, _items(spec, x), strict=True):
            _fill_adjoint(child, value, vector)


# ----- rules: unflatten and its adjoint are linear -----
#
# `as_adjoint` (vector -> structure) and `flat_adjoint` (structure -> vector) are each
# other's transposes; `unflatten` is `as_adjoint` with the leaves' own types. The rules
# themselves are linear in their first argument: their own rules say so too, for a rule
# called through a function value (`unflatten` is a partial) and differentiated again.


@adjoint(unflatten)
@adjoint(as_adjoint)
def unflatten_adjoint(dy, y, spec, vector):
    return (None, flat_adjoint(spec, dy))


@tangent(unflatten)
@tangent(as_adjoint)
def unflatten_tangent(tangents, y, spec, vector):
    return as_adjoint(spec, tangents[1])


@adjoint(flat_adjoint)
def flat_adjoint_adjoint(dy, y, spec, tree):
    return (None, as_adjoint(spec, dy))


@tangent(flat_adjoint)
def flat_adjoint_tangent(tangents, y, spec, tree):
    return flat_adjoint(spec, tangents[1])


@adjoint(unflatten_adjoint)
def _unflatten_adjoint_adjoint(d_out, out, dy, y, spec, vector):
    return (as_adjoint(spec, d_out[1]),)


@tangent(unflatten_adjoint)
def _unflatten_adjoint_tangent(tangents, out, dy, y, spec, vector):
    return (None, flat_adjoint(spec, tangents[0]))


@adjoint(flat_adjoint_adjoint)
def _flat_adjoint_adjoint_adjoint(d_out, out, dy, y, spec, tree):
    return (flat_adjoint(spec, d_out[1]),)


@tangent(flat_adjoint_adjoint)
def _flat_adjoint_adjoint_tangent(tangents, out, dy, y, spec, tree):
    return (None, as_adjoint(spec, tangents[0]))


@adjoint(unflatten_tangent)
def _unflatten_tangent_adjoint(d_out, out, tangents, y, spec, vector):
    return ((None, flat_adjoint(spec, d_out)),)


@tangent(unflatten_tangent)
def _unflatten_tangent_tangent(tangents, out, tangents_of_f, y, spec, vector):
    return as_adjoint(spec, _second(tangents[0]))


@adjoint(flat_adjoint_tangent)
def _flat_adjoint_tangent_adjoint(d_out, out, tangents, y, spec, tree):
    return ((None, as_adjoint(spec, d_out)),)


@tangent(flat_adjoint_tangent)
def _flat_adjoint_tangent_tangent(tangents, out, tangents_of_f, y, spec, tree):
    return flat_adjoint(spec, _second(tangents[0]))


def _second(tangents):
    """The tangent of the vector (or structure) in the tangent of a rule's `tangents` argument."""
    return tangents[1] if isinstance(tangents, (tuple, list)) else None
