"""Values with structure: zeros, sums and user-facing gradients of containers and objects.

Gradients have the structure of the inputs: a float for a float, an array of the same
shape and (floating) dtype for an array, the same container for tuples, lists and
dicts, the same type for namedtuples and dataclasses, and for other objects an object
with the same attribute names (a `types.SimpleNamespace`). An integer is a number: its
gradient is a float (float64 for an integer array). A bool, None and a leaf that is not
a number or an array (a string, a function) have no gradient: `None`. A real input has
a real gradient: the real part of its adjoint (see `_real_part`).
"""

import copy
import dataclasses
import functools
import inspect
import numbers
import types

import numpy as np

from ..errors import SourceError
from .locations import caller_location
from .callables import callable_instance
from .defaults import dict_derivative
from .refusals import NoDerivative


_REAL = np.dtype(np.float64)


def _float_dtype(dtype):
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)  # np.inexact, without the cost


def is_other_array(x):
    """True for an array of another library that dispatches NumPy's array-function protocol
    (a `dask.array`, say): NumPy functions applied to it return its own, possibly lazy, kind.
    Callers test the NumPy types first, so NumPy values never pay for this test."""
    return hasattr(type(x), "__array_function__") and not isinstance(x, np.ndarray)


def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_record(x):
    """A dataclass instance or a plain object with attributes (not an array, not a number)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return True
    return (
        hasattr(x, "__dict__")
        and not isinstance(x, (np.ndarray, np.generic, numbers.Number, type, types.ModuleType))
        and (not callable(x) or _is_callable_object(x))
        and not is_other_array(x)  # a dask array has a __dict__ too
    )


def _is_callable_object(x):
    """An instance of the user's class with `__call__` (a layer): a record like any object.

    Functions, methods, partials and ssad's closures are callable too, and are not records."""
    return callable_instance(x) is not None


def fields_of(x):
    if dataclasses.is_dataclass(x):
        return [f.name for f in dataclasses.fields(x)]
    return list(vars(x))


def rebuild(x, values):
    """An object like `x` (same type where possible) with attribute values `values` (a dict)."""
    if dataclasses.is_dataclass(x):
        new = copy.copy(x)
        for name, value in values.items():
            object.__setattr__(new, name, value)
        return new
    return types.SimpleNamespace(**values)


def zeros_like_value(x):
    """A zero adjoint with the structure of `x` (0.0 for Python numbers, None for non-numbers)."""
    if x is None:  # a value not yet computed: its adjoint is never read
        return 0.0
    if isinstance(x, NoDerivative):  # the derivative of a refusal is refused too, if it is ever used
        return x
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, _float_dtype(x.dtype))
    if isinstance(x, np.generic):
        return _float_dtype(x.dtype).type(0.0)
    if isinstance(x, (bool, numbers.Number)):
        return 0.0
    if is_other_array(x):  # np.zeros_like dispatches: a dask array gets lazy zeros, chunked like it
        return np.zeros_like(x, dtype=_float_dtype(x.dtype))
    if is_namedtuple(x):  # a field that holds None (a gradient's field that is no number) keeps it
        return type(x)(*[None if v is None else zeros_like_value(v) for v in x])
    if isinstance(x, (tuple, list)):
        return type(x)(zeros_like_value(v) for v in x)
    if isinstance(x, range):  # its integers, as a list holds them (a loop's header read again)
        return [0.0] * len(x)
    if isinstance(x, dict):
        return dict_derivative(x, {k: zeros_like_value(v) for k, v in x.items()}, zeros_like_value)
    if is_record(x):
        return rebuild(x, {n: None if getattr(x, n) is None else zeros_like_value(getattr(x, n)) for n in fields_of(x)})
    captured = getattr(x, "captured", None)
    if isinstance(captured, dict) and hasattr(x, "template"):  # a closure: its adjoint is a dict
        return {name: zeros_like_value(value) for name, value in captured.items()
                if getattr(value, "captured", None) is not captured}  # not itself, nor one sharing its values
    return None


def add_adjoint(a, b):
    """a + b for adjoints that may be containers or objects (None is zero, and so is the
    number 0 beside a container or an object: `d_items[k] = 0.0` zeroes an entry whatever
    it holds, a closure's adjoint, a dict, a tuple)."""
    if a is None or (is_zero_number(a) and has_structure(b)):
        return b
    if b is None or (is_zero_number(b) and has_structure(a)):
        return a
    if is_namedtuple(a):
        return type(a)(*[add_adjoint(u, v) for u, v in zip(a, b, strict=True)])
    if isinstance(a, (tuple, list)):
        return type(a)(add_adjoint(u, v) for u, v in zip(a, b, strict=True))
    if isinstance(a, dict):
        return {k: add_adjoint(a.get(k), b.get(k)) for k in {**a, **b}}
    if is_record(a):
        return rebuild(a, {name: add_adjoint(getattr(a, name), getattr(b, name)) for name in fields_of(a)})
    return a + b


def is_zero_number(value):
    """The number 0 (a folded zero adjoint or tangent), which stands for the zero of any value."""
    return (type(value) is float or type(value) is int) and value == 0


def has_structure(value):
    """A tuple, list or dict, a record (a dataclass, a namedtuple, an object) or a closure: a
    value whose adjoint is a container or an object of adjoints, never a number."""
    if isinstance(value, (dict, tuple, list)):
        return True
    if isinstance(value, (numbers.Number, np.ndarray, np.generic, str, bytes)) or value is None:
        return False
    return zeros_like_value(value) is not None


def record_tangent(value, tangents):
    """The tangent of the namedtuple or dataclass `value` a constructor has just built, from
    the tangents of the fields it was given (a dict): every other field (a default, a field
    the constructor does not take) is a constant, whose tangent is zero. The constructor is
    not called on tangents, which would take a default for a tangent."""
    names = value._fields if is_namedtuple(value) else fields_of(value)
    parts = {name: tangents[name] if name in tangents else zeros_like_value(getattr(value, name)) for name in names}
    if is_namedtuple(value):
        return tuple.__new__(type(value), [parts[name] for name in names])
    return rebuild(value, parts)


def field_tangent(d_x, name, x=None):
    """The tangent of `x.name` from the tangent `d_x` of the object `x` (its field `name`);
    raises for a property, which would compute from the tangent as if it were the object.
    A rule's tangent of a function that returns a namedtuple may be a plain tuple (the
    tangent of `np.linalg.slogdet(a)` is `(0, tangent of logabsdet)`): `x` then tells at
    which position the field is. Given `x` itself, an attribute of its class that is no
    field of `x` (`scale = 3.0` in the class body, read as `self.scale`) is a constant: its
    tangent is zero."""
    position = field_position(d_x, name, x)
    if position is not None:
        return d_x[position]
    if x is not None and is_class_constant(x, name):
        return zeros_like_value(getattr(x, name))
    refuse_a_property(d_x, name)
    return getattr(d_x, name)


def is_class_constant(x, name):
    """Whether `x.name` is a constant of a class or a module, not a field of the object `x`:
    an attribute of a class or a module itself, or one of `x`'s class that `x` does not store
    (raises for a value the class computes: see `_class_member`)."""
    if isinstance(x, (type, types.ModuleType)):
        return True
    return not _is_field(x, name) and _class_member(x, name) == _CONSTANT


def field_position(d_x, name, x):
    """The position of the field `name` in the plain tuple `d_x`, the tangent or adjoint of
    the namedtuple `x`; None when `d_x` is not such a tuple."""
    if type(d_x) is tuple and is_namedtuple(x) and name in type(x)._fields:
        return type(x)._fields.index(name)
    return None


def refuse_a_property(x, name):
    """Raise SsadError when `name` is a property of `x`'s class, not a field of `x`."""
    if _is_property(type(x), name):
        raise SourceError(
            f"`.{name}` is a property of {type(x).__name__}, computed from its fields by a method, which ssad "
            f"does not differentiate as a field; call a function of yours that computes it from the fields "
            f"(`{name}(obj)`), or make it a method and call it (`obj.{name}()`)",
            *caller_location(),
        )


@functools.lru_cache(maxsize=1024)
def _is_property(cls, name):
    return isinstance(inspect.getattr_static(cls, name, None), (property, functools.cached_property))


_CONSTANT, _METHOD = "constant", "method"


def _is_field(x, name):
    """Whether `name` is stored in the object `x` itself (or x holds no attributes of its own:
    a dict read by attribute, an object with `__slots__`, which the adjoint's own fields tell)."""
    if is_namedtuple(x):
        return name in type(x)._fields
    fields = getattr(x, "__dict__", None)
    return not isinstance(fields, dict) or isinstance(x, dict) or name in fields


def _class_member(x, name):
    """What `x.name` is when it is no field of `x`: a constant of its class (_CONSTANT), a
    method (_METHOD); raises for a value the class computes (a property, `__getattr__`)."""
    refuse_a_property(x, name)
    member = inspect.getattr_static(type(x), name, _MISSING)
    if member is _MISSING:
        raise SourceError(
            f"`.{name}` is no attribute of this {type(x).__name__} but computed by its class (`__getattr__`), "
            f"which ssad does not differentiate; read the attribute the value is stored in, or compute it in a "
            f"method of yours and call that",
            *caller_location(),
        )
    return _METHOD if callable(member) or hasattr(member, "__get__") else _CONSTANT


_MISSING = object()


def add_attr(d_x, name, d_part, x=None):
    """The adjoint of the object `x` with `d_part` added to its attribute `name` (for t = x.name).

    Given `x` itself: a class or a module (`cls.scale` in a classmethod, `config.SCALE`) holds
    constants, and so does a class's attribute that is no field of `x` (`self.scale` with
    `scale = 3.0` in the class body): nothing is added for them."""
    if x is not None and is_class_constant(x, name):
        return zeros_like_value(x) if d_x is None else d_x
    refuse_a_property(d_x, name)
    if isinstance(d_x, dict) and not hasattr(d_x, name):
        # a dict whose keys read as attributes (scipy's OdeResult, OptimizeResult): the adjoint is a dict
        return {**d_x, name: add_adjoint(d_x.get(name), d_part)}
    if _is_a_method(d_x, name) and (d_part is None or type(d_part) is type(d_x)):
        # a method of x taken as a value (`c = x.cell`): its adjoint is x's own (see `dynamic`)
        return add_adjoint(d_x, d_part)
    current = getattr(d_x, name)
    if is_namedtuple(d_x):
        return d_x._replace(**{name: add_adjoint(current, d_part)})
    new = copy.copy(d_x)
    object.__setattr__(new, name, add_adjoint(current, d_part))
    return new


def attribute_part(d_x, name, x=None):
    """The part of the adjoint `d_x` of an object at its attribute `name` (for t = x.name, the
    adjoint of t that `add_attr(d, name, d_t)` put there): what generated code reads when the
    adjoint sweep of `add_attr` is made, and itself differentiable (see `rules/runtime.py`).
    A dict read by attribute (scipy's OdeResult) gives its entry, None (zero) where it has none;
    for a method taken as a value the adjoint is x's own, as in `add_attr`. Given `x`, a
    constant of its class or module has none there: zero."""
    if x is not None and is_class_constant(x, name):
        return 0.0
    if isinstance(d_x, dict) and not hasattr(d_x, name):
        return d_x.get(name)
    if _is_a_method(d_x, name):
        return d_x
    return getattr(d_x, name)


def _is_a_method(d_x, name):
    """Whether `name` of the object whose adjoint is `d_x` is no field of it: a method (the
    adjoint of an object is made of its fields; a dataclass's still has its class's methods)."""
    if not hasattr(d_x, name):
        return True
    return is_record(d_x) and name not in fields_of(d_x) and callable(getattr(type(d_x), name, None))


def _real_part(g, dtype):
    """`g` for an input of dtype `dtype`: the real part of a complex `g` when `dtype` is real.

    With ssad's complex convention (docs/conventions.md) the adjoint `c` of a real input
    pairs with its tangent `t` as Re(c * t): only Re(c) is its gradient, and an imaginary
    part (from a product with a complex number on the way) means nothing.
    """
    if dtype.kind != "c" and np.iscomplexobj(g):
        return np.real(g)
    return g


def fit_gradient(g, x):
    """The gradient `g` of input `x`, given x's structure and a user-facing type.

    A number is differentiated as the real number it is, an integer too (its gradient is a
    float, 0.0 where it only indexes or counts); a bool (Python's or NumPy's, arrays
    included), None and any other leaf that is not a number have no gradient: None."""
    if type(x) is float and type(g) is float:  # the hot case of scalar code: nothing to fit
        return g
    if type(g) is np.ndarray and type(x) is np.ndarray and g.dtype is _REAL and x.dtype is _REAL:
        if g.shape == x.shape and g.flags.writeable:  # the hot case of array code
            return g
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "b":
            return None
        dtype = _float_dtype(x.dtype)
        if type(g) is np.ndarray and g.shape == x.shape and g.dtype == dtype and g.flags.writeable:
            return g
        if g is None:
            return np.zeros(x.shape, dtype)
        if is_other_array(g):  # a lazy gradient (of NumPy parameters applied to dask data) stays lazy
            return _fit_other_array(g, x, dtype)
        return np.array(np.broadcast_to(_real_part(g, dtype), x.shape), dtype=dtype)
    if isinstance(x, np.generic):
        if x.dtype.kind == "b":
            return None
        dtype = _float_dtype(x.dtype)
        return dtype.type(0.0 if g is None else _real_part(g, dtype))
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, numbers.Real):
        if g is None:
            return 0.0
        return float(g) if type(g) is float else float(_real_part(g, _REAL))
    if isinstance(x, numbers.Complex):
        return complex(g)
    if is_other_array(x):
        return _fit_other_array(g, x, _float_dtype(x.dtype))
    if g is None:
        g = zeros_like_value(x)
        if g is None:
            return None
    if is_namedtuple(x):
        return type(x)(*[fit_gradient(u, v) for u, v in zip(g, x, strict=True)])
    if isinstance(x, (tuple, list)):
        return type(x)(fit_gradient(u, v) for u, v in zip(g, x, strict=True))
    if isinstance(x, dict):
        return {k: fit_gradient(g.get(k) if isinstance(g, dict) else None, v) for k, v in x.items()}
    if is_record(x):
        return rebuild(x, {name: fit_gradient(getattr(g, name, None), getattr(x, name)) for name in fields_of(x)})
    return g


def _fit_other_array(g, x, dtype):
    """`fit_gradient` where `x` or `g` is an array of another library: x's shape and float
    dtype, computed by NumPy functions that dispatch, so a dask gradient is never computed."""
    if g is not None:
        g = _real_part(g, dtype)
    if g is None or np.shape(g) != np.shape(x):  # a zero, a scalar, or a broadcast gradient
        g = np.zeros_like(x, dtype=dtype) + (0.0 if g is None else g)
    return g if g.dtype == dtype else g.astype(dtype)


def aux_of(value_and_aux):
    """The aux of what a function differentiated with `has_aux=True` returned, `(value, aux)`.

    Generated code calls it where that function returns something other than a pair written
    out (`return out`); it has no gradient, so nothing flows back into aux."""
    if not isinstance(value_and_aux, (tuple, list)) or len(value_and_aux) != 2:
        what = f"a {type(value_and_aux).__name__}"
        if isinstance(value_and_aux, (tuple, list)):
            what += f" of {len(value_and_aux)} items"
        elif isinstance(value_and_aux, np.ndarray):
            what = f"an array of shape {value_and_aux.shape}"
        raise SourceError(
            f"a function differentiated with has_aux=True returns a pair (value, aux), as in "
            f"`return loss, {{'accuracy': accuracy}}`; this one returned {what}. Return the pair, "
            "or leave out has_aux=True",
            *caller_location(),
        )
    return value_and_aux[1]


def owned_argument(x):
    """A copy of the argument `x` that the differentiated function writes into, deep enough
    that nothing the function changes is the caller's: an array is copied, and so are the
    lists, tuples, dicts, namedtuples, dataclasses and objects with attributes that hold
    arrays, with what they hold (`d["b"][0] = v`, `b = d["b"]; b[0] = v`, `obj.w[0] = v`,
    `xs[0] += v`, `d["new"] = v`). An object held twice is copied once, so the copy shares
    what the argument shared; anything else (numbers, strings, functions) is kept as is."""
    if type(x) is np.ndarray:  # the common case: one array
        return x.copy()
    return _owned_part(x, {})


def _owned_part(x, copies):
    if isinstance(x, (numbers.Number, str, bytes, np.generic)) or x is None:
        return x
    known = copies.get(id(x))
    if known is not None:
        return known[1]
    if isinstance(x, np.ndarray):
        new = x.copy()
    elif is_namedtuple(x):
        new = type(x)(*[_owned_part(v, copies) for v in x])
    elif type(x) is tuple:
        new = tuple(_owned_part(v, copies) for v in x)
    elif isinstance(x, list):
        new = copy.copy(x)  # a list of its own type, whose items are replaced below
        copies[id(x)] = (x, new)  # before its items: a list holding itself holds its copy
        new[:] = [_owned_part(v, copies) for v in x]
    elif isinstance(x, dict):
        new = copy.copy(x)  # a dict of its own type (a defaultdict keeps its factory)
        copies[id(x)] = (x, new)
        for key, value in x.items():
            new[key] = _owned_part(value, copies)
    elif is_record(x) and not isinstance(x, tuple):
        new = copy.copy(x)
        copies[id(x)] = (x, new)
        for name in fields_of(x):
            object.__setattr__(new, name, _owned_part(getattr(x, name), copies))
    else:
        return x  # a function, a lazy array of another library, an object without fields
    copies[id(x)] = (x, new)  # the original is kept alive, so its id is not reused meanwhile
    return new
