"""The run time: only what generated code calls when it runs.

Assumes: nothing of the compiler (the modules here import only `errors`, `registry`
and each other, so every stage may import them).
Guarantees: the helpers generated gradient code calls (this module), gradients
shaped like their inputs (`structure`), the `Tape`, the values of nested functions
(`closures`), calls through function values dispatched when they run (`dynamic`),
the code of callees reached through `handles`, and what counts as the user's own
function (`callables`).

Everything here is small, pure and fast: the generated code must run like code
written by hand, so each helper returns its input untouched on the common path
(`unbroadcast` when shapes already match, for example).
"""

import numbers

import numpy as np

from ..errors import SourceError, SsadError
from .locations import caller_location
from .checkpoints import Checkpoints
from .endless import endless
from .scatter import add_at, added_at, copy_adjoint, getitem_adjoint, list_adjoint, split_like, summed_at, zero_at  # noqa: F401  (generated code reads them)
from .scatter import clear_at, kept, take_part, written_mask, written_part  # noqa: F401  (generated code reads them)
from .structure import add_adjoint, add_attr, is_namedtuple, is_other_array, zeros_like_value  # noqa: F401  (generated code reads them)
from .structure import has_structure, is_zero_number
from .receivers import not_walked


# Bound once: looking up `np.add.reduce` costs more than a small reduction itself.
_add_reduce = np.add.reduce


def unbroadcast(g, x):
    """Sum the adjoint `g` down to the shape of `x` (undoing NumPy broadcasting)."""
    # getattr is several times faster than np.shape on Python numbers, the hot case
    # of scalar loops; lists and tuples here mean `+`/`*` concatenated sequences.
    if type(x) is list or type(x) is tuple:
        if is_zero_number(g):
            return zeros_like_value(x)  # the adjoint of an entry written over later (see `broadcast_like`)
        if (type(g) is list or type(g) is tuple) and len(g) == len(x):
            return g  # the adjoint of the sequence itself, stored as it is (`items[k] = (a, b)`)
        # A NumPy function's adjoint (`np.std(xs)`): the sequence's shape, but for leading axes
        # it broadcast to. Split into the items' adjoints. (A join's adjoint is longer.)
        extra = np.ndim(g) - np.ndim(x)
        if isinstance(g, np.ndarray) and extra >= 0 and g.shape[extra:] == np.shape(x):
            return split_like(g.sum(axis=tuple(range(extra))) if extra else g, x)
        raise SourceError(
            "`+` or `*` on a list or tuple of differentiated values (concatenation or repetition) is "
            "not supported where ssad cannot tell the operand is one (a parameter, a call's result); "
            "write `list(xs) + list(ys)` or `list(xs) * n`, or use np.concatenate",
            *caller_location(),
        )
    shape = getattr(x, "shape", ())
    g_shape = getattr(g, "shape", ())
    if _is_complex(g) and not _is_complex(x):
        g = np.real(g)  # a real operand of a complex result: its adjoint is real (docs/conventions.md)
    if g_shape == shape:
        if type(g) is float and g == 0.0 and not shape and has_structure(x):
            return zeros_like_value(x)  # a dict, a record or a closure written over later
        return g
    extra = len(g_shape) - len(shape)
    if extra < 0:
        return np.broadcast_to(g, shape)
    # np.add.reduce is np.sum without its Python-level dispatch (a few microseconds a call)
    # a dask array has no ufunc.reduce; np.sum dispatches to its own
    reduce = _add_reduce if isinstance(g, np.ndarray) else np.sum
    if extra:
        g = reduce(g, 0 if extra == 1 else tuple(range(extra)))
        g_shape = g_shape[extra:]
        if g_shape == shape:  # a bias added to every row, the common case
            return g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g_shape[i] != 1)
    if axes:
        g = reduce(g, axes, keepdims=True)
    return g


def _is_complex(value):
    kind = type(value)
    if kind is np.ndarray:
        return value.dtype.kind == "c"
    if kind is float or kind is int or kind is np.float64:
        return False
    if kind is Shape:
        return value.complex
    return kind is complex or np.iscomplexobj(value)


def size(x):
    """`np.size(x)`, read from the array: NumPy's `np.size` would compute a dask array to count it."""
    n = getattr(x, "size", None)
    return n if type(n) is int else np.size(x)


def broadcast_like(t, y):
    """The tangent `t` spread to the shape of the result `y` it is the tangent of (complex where
    `y` is: a real tangent of `x + 0j` would drop what is written into it later). An entry
    of a list or dict written over later has adjoint 0.0: for an entry that is a tuple, a
    dict, a record or a closure that is its zero (`zeros_like_value(y)`)."""
    if type(y) is float or type(y) is np.float64:  # a scalar's tangent is a number: the hot case of scalar loops
        return t
    if is_zero_number(t) and has_structure(y):
        return zeros_like_value(y)
    if _is_complex(y) and not _is_complex(t):  # `x + 0j`: the tangent of a complex value is complex, so a
        t = t + 0j  # write of a complex tangent into it (`d_z[1] = d_v`) keeps the imaginary part
    shape = getattr(y, "shape", ())
    if getattr(t, "shape", ()) == shape:
        return t
    return np.broadcast_to(t, shape)


def seed(result):
    """The adjoint seed of a real scalar result: 1.0 (in its dtype). A real array of one
    element, shaped (1,) or (1, 1), is seeded with ones of its shape (as autograd does).
    Larger arrays and complex results are refused."""
    if type(result) is float:
        return 1.0
    if isinstance(result, (np.generic, np.ndarray)) and result.ndim == 0:
        kind = result.dtype.kind
        if kind == "c":
            _refuse_complex(result)
        return result.dtype.type(1.0) if kind == "f" else 1.0
    if isinstance(result, np.ndarray) and result.size == 1:
        if result.dtype.kind == "c":
            _refuse_complex(result)
        return np.ones(result.shape, result.dtype if result.dtype.kind == "f" else np.float64)
    if isinstance(result, numbers.Number):
        if isinstance(result, complex):
            _refuse_complex(result)
        return 1.0
    if is_other_array(result) and result.ndim == 0:  # a lazy scalar (dask): no need to compute it
        if result.dtype.kind == "c":
            _refuse_complex(result)
        return result.dtype.type(1.0) if result.dtype.kind == "f" else 1.0
    raise SsadError(
        f"grad needs a function that returns a scalar (or an array of one element), but it returned "
        f"{_describe(result)}. Use ssad.vjp(f, *args) and pass the output's adjoint "
        f"to the pullback, or reduce the output to a scalar (np.sum(...))."
    )


def _refuse_complex(result):
    raise SsadError(
        f"grad requires a real-valued output, but the function returned {_describe(result)}: "
        f"{result!r}. Its gradient is not defined by one number per input. Return a real value "
        f"(np.real(...), np.abs(...) ** 2, ...), or use ssad.vjp(f, *args) and pass the output's "
        f"adjoint to the pullback (for a holomorphic f, pullback(1.0) gives f'(z)); see "
        f"'Complex numbers' in docs/conventions.md"
    )


def _describe(value):
    if isinstance(value, np.ndarray):
        kind = "a complex array" if value.dtype.kind == "c" else "an array"
        return f"{kind} of shape {value.shape}"
    if isinstance(value, np.generic) or is_other_array(value):
        return f"a value of type {type(value).__name__} (dtype {value.dtype})"
    return f"a value of type {type(value).__name__}"


def pack_like(x, items):
    """The adjoint of `x` from the adjoints of its unpacked items (`a, b = x`)."""
    if isinstance(x, dict):  # unpacking, listing or sorting a dict walks its keys, which carry no gradient
        return zeros_like_value(x)
    if isinstance(x, np.ndarray) or is_other_array(x):
        return np.stack([np.broadcast_to(item, x.shape[1:]) for item in items])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*items)
    if isinstance(x, (tuple, list)):
        return type(x)(items)
    not_walked(x)  # an object of the user's taken for a sequence
    return tuple(items)


_MISSING = object()


def saved_part(container, index):
    """What `container[index] = v` is about to overwrite: a copy for arrays, the item itself otherwise."""
    if isinstance(container, np.ndarray):
        return np.copy(container[index])
    if isinstance(container, dict) and index not in container:
        return _MISSING
    if type(container) is float and container == 0.0:  # a zero tangent, folded to 0.0: each part is zero
        return container
    return container[index]


def restore_part(container, index, old):
    """Undo `container[index] = v` with the value `saved_part` returned."""
    if old is _MISSING:
        del container[index]
    else:
        container[index] = old


def is_missing(old):
    """Whether `saved_part` found no key to save: the write it preceded added one to a dict."""
    return old is _MISSING


def put_back(container, index, value):
    """Undo `value = container.pop(index)`: a dict gets the key back, a list the item at
    the position it had."""
    if isinstance(container, dict):
        container[index] = value
    elif isinstance(container, np.ndarray):  # the adjoint a NumPy function gave the whole list
        raise SourceError("`pop` from a list a NumPy function is given afterwards (`np.sum(items)`) is not "
                          "supported; give it `np.array(items)`", *caller_location())
    else:
        container.insert(insert_position(container, index), value)


def insert_position(items, index):
    """Where `items.insert` puts back what `items.pop(index)` took: a negative `index`
    counts from the end of the list the item was in, one longer than `items`."""
    return index if index >= 0 else len(items) + 1 + index


def owned(x):
    """A copy of the view `x` of an array, or of a list (anything else as is): how code
    that differentiates a gradient reads a part of an array the gradient later writes
    into in place, or a second name of a list it later changes. The
    gradient reads such a view only before the write and after the backward sweep
    restored what it overwrote, so the copy holds the same values there, and the
    second-order code sees no array that two names share."""
    if type(x) is np.ndarray:
        return x.copy()
    return list(x) if type(x) is list else x


def restored_value(old):
    """`old` as `restore_part` writes it back, when generated code is differentiated again
    (where a write that added a key to a dict is undone by popping the key instead)."""
    if old is _MISSING:
        raise SsadError("internal: a key a write added to a dict was restored as a value")
    return old


def drop_last(items, count):
    """Remove the last `count` items of a list (undoing `items.extend(...)`), returning them."""
    dropped = items[len(items) - count :]
    del items[len(items) - count :]
    return dropped


def concat(a, b):
    """`a + b` for two lists or two tuples (sequence concatenation, not arithmetic)."""
    if not (type(a) is list or type(a) is tuple) or not (type(b) is list or type(b) is tuple):
        _not_a_sequence("+", a, b)
    return a + b


def repeated(items, times):
    """`items * times` for a list or tuple (sequence repetition, not arithmetic)."""
    if not (type(items) is list or type(items) is tuple):
        _not_a_sequence("*", items, times)
    return items * times


def _not_a_sequence(op, *operands):
    """ssad read `op` as joining (or repeating) lists where an operand is known to be a list or
    a tuple on some path; an array there makes NumPy's arithmetic, whose derivative is another:
    refused at the user's line. Anything else is left to Python (`[1] + (2,)` raises there)."""
    if any(isinstance(o, (np.ndarray, np.generic)) for o in operands) and any(isinstance(o, (list, tuple)) for o in operands):
        raise SourceError(
            f"`{op}` of a NumPy array and a list or tuple computes NumPy's elementwise arithmetic here, where "
            f"ssad read it as {'joining' if op == '+' else 'repeating'} a list (the operand is a list on another "
            "path, or in another pass of the loop); make it one kind on every path (`np.asarray(xs)`, or "
            "`list(a)`)",
            *caller_location(),
        )


def repeats_summed(dy, items, times):
    """The adjoint of `repeated(items, times)` from the adjoint `dy` of the repetition: per
    item, the sum of the adjoints of its copies (an item repeated no time gets a zero)."""
    n = len(items)
    sums = [None] * n
    for copy in range(max(times, 0)):
        for k in range(n):
            sums[k] = add_adjoint(sums[k], dy[copy * n + k])
    return pack_like(items, [zeros_like_value(v) if d is None else d for d, v in zip(sums, items, strict=True)])


def chosen_position(items, y):
    """The position of the item `max(items, key=...)` (or `min`) returned: the first that is
    `y` itself, else the first equal to it."""
    for position, item in enumerate(items):
        if item is y:
            return position
    for position, item in enumerate(items):
        if np.all(np.equal(item, y)) if isinstance(item, np.ndarray) else item == y:
            return position
    raise AssertionError("max or min returned an object that is not one of its items")


def iterated(xs):
    """What `for x in xs` walks, as something indexable: `xs` itself when it is a list, a tuple,
    an array or a range, else the list of what iterating it gives (a dict's keys, a set's items),
    drawn as the loop reads it for an iterator that never ends (`itertools.count()`: see `endless`)."""
    if isinstance(xs, (list, tuple, np.ndarray, range, str)) or is_other_array(xs):
        return xs
    drawn = endless(xs)
    return list(xs) if drawn is None else drawn


def zipped(*sequences, strict=False):
    """`zip(*sequences, strict=...)` as a list of tuples (how ssad lowers a `zip` that is not a
    loop's header: `a, b = zip(*rows)`), so the items carry gradients by its rule."""
    return list(zip(*sequences, strict=strict))


def merged(a, b):
    """`{**a, **b}`: a new dict with b's entries over a's (how ssad lowers `{**d, 'k': v}`)."""
    return {**a, **b}


def r_(*pieces):
    """`np.r_[a, b, ...]` as a function of its pieces (ssad lowers the subscript to this call,
    with each slice piece already made into its array), so the pieces get gradients."""
    return np.r_[pieces]


def c_(*pieces):
    """`np.c_[a, b, ...]` as a function of its pieces (see `r_`)."""
    return np.c_[pieces]


class Shape:
    """What the tape keeps of an array the adjoint sweep needs only the shape (and
    whether it is complex) of."""

    __slots__ = ("shape", "complex")

    def __init__(self, shape, complex=False):
        self.shape = shape
        self.complex = complex


def formatted(template, *values):
    """An f-string of a differentiated function: `f"loss {s:.3f}"` is lowered to
    `formatted('loss {0:.3f}', s)` (see `frontend.desugar.lower_formatted_strings`)."""
    return template.format(*values)


_NO_CAUSE = object()


def raised(error, cause=_NO_CAUSE):
    """A `raise` statement of a differentiated function (`raise error` or `raise error from
    cause`), as a call (see `frontend.desugar.lower_raises`)."""
    if cause is _NO_CAUSE:
        raise error
    raise error from cause


def shape_only(x):
    """`x` for the tape when only its shape is read back (by `unbroadcast`): arrays
    are kept as their shape and kind, so the tape does not hold them alive; anything
    else as is."""
    return Shape(x.shape, x.dtype.kind == "c") if type(x) is np.ndarray else x


class Tape(list):
    """The stack the forward sweep pushes onto and the backward sweep pops from.

    A local of each generated function, never shared, so calls are reentrant.
    """

    push = list.append

    def copy(self):
        return Tape(self)


def stop_gradient(x):
    """Return `x`; no gradient flows back through this call."""
    return x


def unspent(residuals, copies=None):
    """`residuals` with every container a backward sweep changes copied, however deep.

    A backward half pops its tape (and a checkpointed loop's snapshots) and undoes the list changes of its forward half. Run
    on a copy, it leaves the residuals as the forward half made them: so a pullback may
    run again, and code that differentiates a gradient still finds, in its own backward
    sweep, the tapes and lists its forward sweep saved. A container reachable from
    several places is copied once, so every place still holds the same copy.
    """
    if copies is None:
        copies = {}
    kind = type(residuals)
    if kind is tuple:
        return tuple(unspent(item, copies) for item in residuals)
    if kind is Checkpoints:  # a checkpointed loop's snapshots, which its reversal consumes
        return copies.setdefault(id(residuals), residuals.unspent())
    if kind is Tape or kind is list or kind is dict:
        copied = copies.get(id(residuals))
        if copied is None:
            if kind is dict:
                copied = copies[id(residuals)] = {}
                copied.update((k, unspent(v, copies)) for k, v in residuals.items())
            else:
                copied = copies[id(residuals)] = kind()
                copied.extend(unspent(item, copies) for item in residuals)
        return copied
    return residuals
