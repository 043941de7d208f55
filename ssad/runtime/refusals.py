"""Derivatives a rule cannot compute, refused when they are used rather than returned as a
number: `no_derivative(function, parameter)` is the adjoint a rule gives a parameter whose
derivative has no closed form (the shape parameter of a distribution's cdf, the continuous
order of a Bessel function), and `refused_tangent` the matching tangent term.

A rule returns one adjoint per argument whether or not the argument carries a gradient;
the compiler drops the adjoints of arguments that carry none, so a `NoDerivative` is never
touched unless the user differentiates with respect to that parameter. Then any use of it
(adding it to another adjoint, returning it as a gradient, computing with it) raises
`SsadError` naming the function and the parameter. Never a NaN, never a silent zero.
"""

import numbers

import numpy as np

from ..errors import SourceError, UnsupportedSyntaxError
from .locations import caller_location


class NoDerivative:
    """The adjoint of a parameter a rule cannot differentiate; any use of it raises."""

    __slots__ = ("function", "parameter", "where", "reason")
    # read by code that sizes adjoints before using them; any arithmetic on the value raises
    shape = ()
    dtype = np.dtype(np.float64)

    def __init__(self, function, parameter, reason=None):
        self.function = function
        self.parameter = parameter
        self.where = caller_location()  # the user's line of the call, for the error when it is used
        self.reason = reason  # what to say, where it is not the lack of a closed form

    def error(self):
        if self.reason is not None:
            return SourceError(self.reason, *self.where)
        return SourceError(
            f"{self.function} has no derivative ssad can compute in `{self.parameter}` (it has no closed "
            f"form); keep `{self.parameter}` constant (wrap it with ssad.stop_gradient) or differentiate only "
            "the other parameters",
            *self.where,
        )

    def _refuse(self, *args, **kwargs):
        raise self.error()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __neg__ = __float__ = __array__ = __array_ufunc__ = __array_function__ = __getitem__ = _refuse

    def __repr__(self):
        return f"NoDerivative({self.function!r}, {self.parameter!r})"


def no_derivative(function, parameter, reason=None):
    """The adjoint of `parameter` of `function` (a readable name), which has no derivative
    (`reason`: the message, where it has none at this point only)."""
    return NoDerivative(function, parameter, reason)


def defined(derivative):
    """`derivative` (a tangent, with the structure of a function's output), after raising the
    error of a `NoDerivative` in it: one a rule gave that reached the output unused."""
    if isinstance(derivative, NoDerivative):
        raise derivative.error()
    if isinstance(derivative, (tuple, list)):
        for part in derivative:
            defined(part)
    elif isinstance(derivative, dict):
        for part in derivative.values():
            defined(part)
    return derivative


def refused_tangent(t, function, parameter):
    """0.0 for a zero (or absent) tangent of a parameter with no derivative; raises for any other."""
    if t is None or np.all(np.equal(t, 0.0)):
        return 0.0
    raise NoDerivative(function, parameter).error()


def check_assertion(test, message):
    """An `assert` of a differentiated function, as its forward sweep runs it."""
    if not test:
        raise AssertionError(message)


def unchanged_by_call(value, message, filename, lineno, col):
    """Before a call of a function of the user's that changes its parameter in place by an
    augmented assignment (`v /= s`), where the caller reads the argument `value` again:
    a number is rebound and nothing of the caller's changes, an array is written into,
    which ssad's lowering (`v = v / s`) would not show. Raises for an array (or a list,
    which `+=` extends in place)."""
    if isinstance(value, (np.ndarray, list)):
        raise UnsupportedSyntaxError(message, filename, lineno, col, _source_line(filename, lineno))


def rebound_by_augmented(value, message, filename, lineno, col):
    """Before `t += v` where `t` may share an array that another name reads afterwards
    (`t = y[2]`, `t = min(items, key=abs)`): a number, or another value `+=` cannot change,
    is rebound, which is ssad's lowering (`t = t + v`); an array, a list or any other
    value would be changed in place. Raises for those."""
    if not isinstance(value, (numbers.Number, np.generic, tuple, str, bytes, frozenset, type(None))):
        raise UnsupportedSyntaxError(message, filename, lineno, col, _source_line(filename, lineno))


def changed_item_held_once(container, item, message, filename, lineno, col):
    """Before `y[k] += v` on a container `y` that is not an array: `item`, which `y[k]` held,
    is changed in place by Python's `+=` where it is an array or a list. Raises when `y`
    holds it at another place too, or a view of its memory, which would see the change
    ssad's lowering (a new value at `y[k]`) does not show. A number, or an array `y`, passes."""
    if isinstance(container, np.ndarray) or not isinstance(item, (np.ndarray, list)):
        return
    held = container.values() if isinstance(container, dict) else container
    if not isinstance(held, (list, tuple, type({}.values()))):
        return  # another kind of container: what it holds is not known
    memory = _memory_of(item)
    count = 0
    for other in held:
        if other is item:
            count += 1
        elif isinstance(other, np.ndarray) and memory is not None and _memory_of(other) is memory:
            count += 2  # a view of the same array
    if count > 1:
        raise UnsupportedSyntaxError(message, filename, lineno, col, _source_line(filename, lineno))


def _memory_of(value):
    """The array owning the memory of the array `value` (itself, or what it is a view of)."""
    if not isinstance(value, np.ndarray):
        return None
    return value if value.base is None else value.base


def not_a_view_of(value, array, message, filename, lineno, col):
    """Before `y[0], y[1] = y[1], y[0]` writes: an element read from `y` must not be a view
    of it (a row, a slice), which the first write would change before it is stored.
    Raises for one; a number or a copy passes."""
    if isinstance(value, np.ndarray) and isinstance(array, np.ndarray) and np.may_share_memory(value, array):
        raise UnsupportedSyntaxError(message, filename, lineno, col, _source_line(filename, lineno))


def index_only(value, text, filename, lineno, col):
    """`value`, a part of an index built as a value (`np.s_[:, k]`), when it is one: an
    integer, a boolean, None, `...`, a slice, an integer or boolean array, or a tuple or list
    of these. Such a part carries no gradient. Raises for any other (a float), which NumPy
    would not take as an index either."""
    if not _is_index(value):
        raise SourceError(
            f"`{text}` in an index built with `np.s_[...]` (or `np.index_exp[...]`) is a "
            f"{type(value).__name__}, not an index (an integer, a slice, None, or an integer or boolean "
            "array); ssad differentiates these only as indices: build a value with NumPy functions instead "
            "(np.stack, np.concatenate, np.asarray)",
            filename, lineno, col, _source_line(filename, lineno),
        )
    return value


def _is_index(value):
    if value is None or value is Ellipsis or isinstance(value, (numbers.Integral, np.integer, np.bool_, slice)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iub"
    if isinstance(value, (tuple, list)):
        return all(_is_index(v) for v in value)
    return False


def _source_line(filename, lineno):
    import linecache

    return linecache.getline(filename, lineno) if filename and lineno else None
