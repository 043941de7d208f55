"""What a value is, where a name NumPy arrays share with other objects is used on it.

`x.sum(axis=0)`, `x.dot(y)`, `x.T` and `a * b` are NumPy's method, attribute and operator
when `x`, `a` or `b` is an array or a number, and the value's own when it is an object
of the user's: a model with a method named `sum`, a dataclass with `__mul__`, a module
passed in as `m` (`m.mean(...)`). The compiler tells which where it can (see
`analysis.kinds`): from what the function computes, and from the arguments a gradient
is called with, whose kinds `argument_kind` gives as facts about the parameters
(`ARRAY`, `OBJECT`). An object's members and operators are dispatched when the code
runs (`dynamic.method_forward`, `operators`). Where the compiler cannot tell (an
attribute of an object, an item of a container, a call's result), the code takes
NumPy's meaning, and `numpy_member` checks the value when the code runs: an object
there is refused at the user's line, never differentiated as an array.
"""

import numbers
import types

import numpy as np

from ..errors import MissingRuleError, SsadError
from .locations import caller_location, source_line
from .structure import is_other_array

ARRAY = "array"  # the parameter holds a NumPy value or a number: NumPy's members and operators
OBJECT = "object"  # the parameter holds an object whose members and operators are its own
COMPLEX = "complex"  # the parameter holds a complex number or array (`backend.driver.argument_class`)

# Values that are neither: their members are Python's, which NumPy's names do not reach
# (a list's `copy`, a string's `partition`) or reach as the rules expect.
_PLAIN = (list, tuple, dict, set, frozenset, str, bytes, bool, type(None), range, slice)


def is_numpy_value(value):
    """An array (NumPy's or another library's that dispatches NumPy's protocol), a NumPy
    scalar or a number."""
    return isinstance(value, (np.ndarray, np.generic, numbers.Number)) or is_other_array(value)


def is_object(value):
    """Whether `value` is an object whose members named like NumPy's are its own: an
    instance of the user's class (a namedtuple too), a module, a class. Not a NumPy value,
    a number, a builtin container, a string or None."""
    if isinstance(value, _PLAIN):
        return isinstance(value, tuple) and hasattr(type(value), "_fields")  # `p.T` is p's field T
    return not is_numpy_value(value)


def refuse_an_array_subclass(value, label):
    """Raise SsadError where `value` is a subclass of np.ndarray (np.memmap, whose operators
    and reductions are np.ndarray's, apart): np.matrix's `*` is a matrix product and
    np.ma.MaskedArray leaves masked elements out of its sums, where ssad's rules, written for
    np.ndarray, would give the derivative of something else."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray and not isinstance(value, np.memmap):
        kind = type(value)
        raise SsadError(
            f"{label} is a {kind.__module__}.{kind.__qualname__}, a subclass of np.ndarray whose operators or "
            "reductions may differ from np.ndarray's (`*` is a matrix product for np.matrix; np.ma.MaskedArray "
            "leaves its masked elements out): ssad differentiates np.ndarray and would give the derivative of "
            "another function; pass np.asarray(...) (for a masked array, .filled(...) or .compressed())"
        )


def argument_kind(value):
    """ARRAY, OBJECT or None (a container, a string, None): the fact about a parameter
    called with `value`."""
    if is_numpy_value(value):
        return ARRAY
    return OBJECT if is_object(value) else None


def argument_kinds(names, args):
    """frozenset of (parameter, kind) for the positional `args` bound to `names`."""
    return frozenset((n, kind) for n, a in zip(names, args, strict=False) if (kind := argument_kind(a)) is not None)


def numpy_member(receiver, member, text, filename, lineno, col):
    """Before `receiver.member` (a call or an attribute named like NumPy's, `t.sum(...)`,
    `t.T`) where the compiler could not tell what `receiver` holds and took NumPy's
    meaning: passes for a NumPy value, a number or a container; raises for an object,
    whose own `member` the derivative code would take for NumPy's."""
    if type(receiver) is np.ndarray or not is_object(receiver):
        return
    kind = type(receiver).__name__
    if isinstance(receiver, (type, types.ModuleType)):
        owner, through = f"the {kind} {receiver.__name__}", ""
    else:
        owner, through = f"a {kind}", f", or call the method through its class (`{kind}.{member}(obj, ...)`)"
    raise MissingRuleError(
        f"`{text}` uses `{member}` of {owner}, which ssad took for NumPy's `ndarray.{member}`: where the gradient "
        f"is made it cannot tell what this value holds (an attribute, an item of a container or a call's result). "
        f"Pass the object to the function as an argument, which ssad looks at{through}",
        filename, lineno, col, source_line(filename, lineno),
    )


def not_walked(value):
    """Raise MissingRuleError, at the user's line, where a rule (or a tangent) would walk or
    index `value`, an object of the user's whose class iterates or indexes itself (its own
    `__iter__` or `__getitem__`), as if it were a list or an array: where the gradient is
    made ssad could not tell what the value holds (an attribute, an item of a container, a
    call's result), so the method Python calls is not differentiated."""
    kind = type(value)
    if kind is np.ndarray or kind is float:
        return  # the common case first: this runs before subscripts in forward-mode code
    if is_object(value) and not isinstance(value, tuple) and any(
            isinstance(getattr(kind, m, None), types.FunctionType) for m in ("__iter__", "__getitem__")):
        raise MissingRuleError(
            f"this walks or indexes a {kind.__name__} (its own `__iter__` or `__getitem__`), which ssad took for "
            "a list or an array: where the gradient is made it cannot tell what this value holds (an attribute, "
            "an item of a container or a call's result). Pass the object to the function as an argument, which "
            "ssad looks at",
            *caller_location(),
        )
