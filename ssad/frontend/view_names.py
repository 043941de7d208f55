"""Which calls, methods and attributes may hand back memory of their operands.

The names the sharing analysis (`views`) looks up: NumPy's functions and array methods
whose result may be a view of (or be) an operand, always or for some operands only, those
that copy unless told not to, the builtins and lowered operations that build a new
container holding their operands' items, and the builtins whose results are new values.
`tests/test_numpy_views.py` checks the NumPy lists against what the installed NumPy returns.
"""

import copy

import gast
import numpy as np

from ..runtime import concat, merged, repeated, zipped
from ..runtime.passed import CHANGING_METHODS  # noqa: F401 - the names ssad reads as a list's or an array's change

# Methods and NumPy functions whose result may be a view of (or be) their first operand.
VIEW_METHODS = {
    "reshape", "ravel", "transpose", "swapaxes", "squeeze", "view", "diagonal", "T", "mT", "real", "imag",
    "flat", "base", "astype", "__array__", "conj", "conjugate",  # `z.conj()` of a real array is z
}
VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "squeeze", "expand_dims",
    "broadcast_to", "asarray", "asanyarray", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "flip", "fliplr", "flipud", "real", "imag", "asarray_chkfinite", "require", "stop_gradient",
    "matrix_transpose", "permute_dims", "rot90", "trim_zeros", "ascontiguousarray", "asfortranarray",
    "asmatrix", "real_if_close", "as_strided", "sliding_window_view",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack",  # lists of views
    "iterated",  # what a `for` loop walks: the array or list itself
    "frombuffer", "from_dlpack",  # a's memory
}
# ... and those whose result is a view of (or is) their first operand for some operands only:
# `np.diag(m)` of a matrix (of a vector, a new matrix), `np.diff(a, 0)`, `np.polyder(p, 0)`,
# a scalar type called on an array of its dtype (`np.float64(a)` is a), `np.nditer(a, ...)`,
# `np.histogram(a, bins=e)` (its edges are `e` itself, given as an array).
VIEW_SOMETIMES = {"diag", "diff", "polyder", "polyint", "nditer", "nested_iters", "histogram", "histogram_bin_edges"} | {
    name for name in dir(np) if isinstance(getattr(np, name), type) and issubclass(getattr(np, name), np.generic)}
ORDER_ARGUMENTS = {"diff": "n", "polyder": "m", "polyint": "m"}  # a view when it is 0; 1 by default
# NumPy functions whose result is their first operand itself (or views of their operands)
# unless `copy=True`, the default: `np.array(a, copy=None)` and `copy=False` are `a`,
# `np.astype(a, t, copy=False)` too, `np.meshgrid(x, y, copy=False)` views x and y.
VIEW_UNLESS_COPIED = {"array", "astype", "meshgrid"}
# Attributes of an array that share nothing with it; any other attribute of a local value
# (a field of your object, `state.h`) may be part of it, or a view (`y.T`).
FIELD_FACTS = {"shape", "size", "ndim", "dtype", "nbytes", "itemsize", "strides", "flags", "__class__", "__name__"}


def shares_attribute(attr):
    """Whether `value.attr` may share the memory of `value`."""
    return attr in VIEW_METHODS or attr not in FIELD_FACTS


# Methods of the values Python and NumPy make (of a list, dict, set, string, tuple or array): a
# method of any other name is one of your objects', which may return a field of the object
# (`return self.a`), a view of one (`return self.a[:2]`) or an operand.
VALUE_METHODS = frozenset(n for kind in (list, dict, set, str, tuple, np.ndarray) for n in dir(kind))
# Methods of a dict whose result holds (or is) one of its values: `for v in d.values()`
# walks the very lists and arrays `d` holds.
CONTAINER_READS = {"values", "items", "get", "setdefault"}
ITEM_READS = CONTAINER_READS | {"pop", "popitem"}  # and those whose result is one of its items
# Calls whose result may share any operand: `np.einsum("ij->ji", a)` is a view of a, `np.ix_(a, b)`
# and `np.atleast_1d(a, b)` view a and b, `np.histogram(a, e)` returns e, `replaced(p, names,
# values)` (`dataclasses.replace(p, ...)`) holds the fields of p.
VIEW_OF_ANY = {"broadcast_arrays", "einsum", "ix_", "atleast_1d", "atleast_2d", "atleast_3d", "histogram",
               "histogram_bin_edges", "replaced"}
# Builtins that build a new container of the operands' items (which may be shared), and how
# ssad lowers others: `merged` is `{**d, **e}`, `concat` is `xs + ys`, `repeated` is `xs * n`,
# `zipped` is `zip(xs, ys)` (a list of tuples of their items). `copy.copy` is one too: a new
# list, dict or record whose items are the operand's (of an array, a new array, which holding
# its operand only overstates).
NEW_CONTAINERS = (list, tuple, dict, sorted, merged, concat, repeated, zipped, copy.copy)
# Builtins that build new values (numbers, strings, ranges) rather than hand back an
# operand or its parts, as `list(z)` (the rows of z), `max(rows, key=f)` and `next(it)` do.
FRESH_BUILTINS = {
    "len", "range", "float", "int", "complex", "bool", "str", "repr", "abs", "round", "pow", "sum", "divmod",
    "isinstance", "issubclass", "hasattr", "callable", "print", "any", "all", "hash", "id", "type", "format",
}


def views_first(name, call):
    """Whether the library function `name`, called as `call`, may return its first operand
    or a view of it."""
    if name in VIEW_UNLESS_COPIED:
        return not copies(call)
    if name in ORDER_ARGUMENTS:
        told = call.args[1:2] + [k.value for k in call.keywords if k.arg == ORDER_ARGUMENTS[name]]
        return bool(told) and not (isinstance(told[0], gast.Constant) and told[0].value not in (0, False))
    return name in VIEW_FUNCTIONS or name in VIEW_SOMETIMES


def copies(call):
    """Whether `call` is told to copy: no `copy=` (True is the default) or `copy=True`."""
    told = [k.value for k in call.keywords if k.arg == "copy"]
    return not told or (isinstance(told[0], gast.Constant) and told[0].value is True)

# those that may make a list longer or shorter
RESIZING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "resize", "push"}


def chooses_an_operand(call, is_static, resolve):
    """Whether `call` is the builtin `max` or `min` given its operands by position: its result
    is one of them (or one item of the one it is given)."""
    return (is_static(call.func) and resolve(call.func) in (max, min) and call.args
            and not any(isinstance(a, gast.Starred) for a in call.args)
            and all(k.arg in ("key", "default") for k in call.keywords))
