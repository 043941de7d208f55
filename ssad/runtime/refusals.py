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
import operator
import types

import numpy as np

from ..errors import MissingRuleError, SourceError, UnsupportedSyntaxError
from .item_guards import changed_item_held_once, holds_changeable, item_held_by, item_held_elsewhere, numbers_only
from .item_guards import held_values, rebound_by_augmented
from .locations import caller_location, source_line


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
    which `+=` extends in place), and for a dict, tuple or record holding one at any depth."""
    if isinstance(value, (np.ndarray, list)) or holds_changeable(value):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def items_unchanged_by_call(value, message, filename, lineno, col):
    """The same where the function changes only what its parameter holds (`t = v[0]; t *= s`),
    or is passed a part of `value` (`helper(xs[0])`): raises for an array (whose rows and
    slices are its memory), and for a list, dict, tuple or record holding an array or a list."""
    if isinstance(value, np.ndarray) or holds_changeable(value):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def elements_unchanged_by_call(value, message, filename, lineno, col):
    """The same where the function rebinds only an element of its parameter (`t = v[0];
    t /= s`, `for t in v: t /= s`): a 1-D array of numbers passes (its elements are
    numbers); a 2-D one (its rows are views) and a list of lists are refused."""
    if not numbers_only(value):
        items_unchanged_by_call(value, message, filename, lineno, col)


def not_a_view_of(value, array, message, filename, lineno, col):
    """Before `y[0], y[1] = y[1], y[0]` writes: an element read from `y` must not be a view
    of it (a row, a slice), which the first write would change before it is stored.
    Raises for one; a number or a copy passes."""
    if isinstance(value, np.ndarray) and isinstance(array, np.ndarray) and np.may_share_memory(value, array):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def unshared_with(written, reader, message, filename, lineno, col):
    """Before `h[k] = v` writes into `written` where the front end cannot tell whether `reader`,
    read afterwards, shares it: what a method of your object returns (`h = o.head()` may be a
    view of a field of `o`, or a new array), `np.diag(m)` (a view of a matrix, a new array of a
    vector), `max(m)`. Raises where `reader` is `written`, shares its memory, or holds such a
    value at any depth (an item of a list, dict or tuple, a field of an object); else passes.
    Before `t += v` the same, where `t` is an array or a list; a number, a tuple or a string
    `t` is rebound, as ssad's lowering does, and passes."""
    if isinstance(written, (numbers.Number, np.generic, tuple, str, bytes, frozenset, type(None))):
        return
    seen, stack = set(), [reader]
    while stack:
        value = stack.pop()
        if value is written or (isinstance(value, np.ndarray) and isinstance(written, np.ndarray)
                                and _overlaps(value, written)):
            raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))
        if id(value) not in seen:
            seen.add(id(value))
            stack.extend(held_values(value))


def walk_unchanged(walked, position, backwards, target, index, message, filename, lineno, col):
    """Before an in-place change of `target` inside a `for` loop that walks `walked` (what
    the loop indexes; a dict whose values or items it walks, by the order of its keys):
    `target[index] = v`, or with `index` None a change of the whole (`t += v`,
    `items.append(v)`, a function of the user's writing into it). Python's loop reads each
    item when it reaches it, ssad's as the loop began: the two agree unless the change
    reaches an item the loop has still to read, or changes the length of the list it
    walks. Raises for those. `position` counts the iterations before this one (None: not
    known, every item counts as still to read); `backwards`: the loop walks from the end."""
    try:
        reaches = _reaches_unread(walked, position, backwards, target, index)
    except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError):
        return  # an index the write itself refuses (or an empty list): Python raises there
    if reaches:
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def held_list_kept(walked, target, message, filename, lineno, col):
    """Before a call of the user's function that may make its argument `target` longer or
    shorter (`b += e` in it: a list's extend, or arithmetic on a number or an array) inside
    a `for` loop that walks `walked`: raises when `target` is a list that `walked` holds,
    whose length ssad follows only under the name that holds it."""
    items = walked.values() if isinstance(walked, dict) else walked if isinstance(walked, (list, tuple)) else ()
    if isinstance(target, list) and any(item is target for item in items):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def keys_unchanged(walked, target, index, message, filename, lineno, col):
    """Before an in-place change of `target` (`target[index] = v`; with `index` None, a change
    of the whole) inside a loop over the keys of `walked`: raises when `walked` is a dict and
    the change adds or removes a key, where Python's loop raises RuntimeError."""
    if isinstance(walked, dict) and target is walked:
        try:
            adds = index is None or index not in walked
        except TypeError:
            return  # an unhashable key: the write itself raises
        if adds:
            raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def _reaches_unread(walked, position, backwards, target, index):
    if isinstance(walked, dict):
        if target is not walked:
            return False
        keys = list(walked)
        return index is None or index not in walked or any(keys[k] == index
                                                           for k in _unread(len(keys), position, backwards))
    if not isinstance(walked, (list, tuple, np.ndarray)):
        return target is walked  # an object of the user's: what its loop reads is not known
    unread = _unread(len(walked), position, backwards)
    if target is walked and isinstance(walked, list):
        if index is None:  # `xs += ys`, `xs.append(v)`: the loop runs another number of times
            return True
        count = len(walked)
        written = range(count)[index] if isinstance(index, slice) else [operator.index(index) % count]
        return any(k in unread for k in written)
    region = _written_region(target, index) if isinstance(target, np.ndarray) else None
    if isinstance(walked, np.ndarray):
        return region is not None and _overlaps(region, walked[unread.start:unread.stop])
    # a list or tuple of arrays, lists or dicts: an item still to be read, changed
    return any(item is target or (region is not None and isinstance(item, np.ndarray) and _overlaps(region, item))
               for item in (walked[k] for k in unread))


def _unread(count, position, backwards):
    """The positions a walk of `count` items has still to read after the iteration that
    follows `position` others."""
    if position is None:
        return range(count)
    current = count - 1 - position if backwards else position
    return range(0, max(current, 0)) if backwards else range(current + 1, count)


def _written_region(array, index):
    """The part of `array` that `array[index] = v` writes, as a view: the whole array for an
    index that is not basic (an integer or boolean array), whose part NumPy would copy."""
    if index is None:
        return array
    parts = index if isinstance(index, tuple) else (index,)
    basic = all(p is None or p is Ellipsis or isinstance(p, slice)
                or (isinstance(p, (numbers.Integral, np.integer)) and not isinstance(p, (bool, np.bool_)))
                for p in parts)
    if not basic:
        return array
    return array[parts if any(p is Ellipsis for p in parts) else parts + (Ellipsis,)]  # `...`: a view, even of one element


def _overlaps(a, b):
    if a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:
        return True


# Methods that change a list, dict, set or array in place, by the type that has them.
_CHANGES_IN_PLACE = (
    (list, {"append", "extend", "insert", "remove", "clear", "sort", "reverse"}),
    (dict, {"update", "setdefault", "popitem", "clear"}),
    (set, {"add", "discard", "remove", "clear", "update", "difference_update", "intersection_update",
           "symmetric_difference_update"}),
    (np.ndarray, {"sort", "fill", "put", "itemset", "resize", "partition"}),
)

CHANGES_IN_PLACE = frozenset().union(*(methods for _, methods in _CHANGES_IN_PLACE))


def not_changed_in_place(receiver, method, message, filename, lineno, col):
    """Before `receiver.method(...)` whose result is used as a value (`r = xs.sort()`, `[out.append(v)
    for v in x]`): raises when `receiver` is a list, dict, set or array and `method` one of
    those that change it in place, which ssad would read as a call that changes nothing. An
    object of the user's (`optimizer.update(grads, state)`) passes."""
    if any(isinstance(receiver, kind) and method in methods for kind, methods in _CHANGES_IN_PLACE):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def keeps_length(items, index, value, message, filename, lineno, col):
    """Before `items[index] = value` with a slice: raises when `items` is a list and the slice
    holds another number of items than `value`, which would change the list's length."""
    if not isinstance(items, list) or not isinstance(index, slice) or not hasattr(value, "__len__"):
        return
    if len(range(len(items))[index]) != len(value):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


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
            filename, lineno, col, source_line(filename, lineno),
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


def discrete_only(value, message, filename, lineno, col, line):
    """`value`, an argument whose derivative a rule does not give (an axis, a shift, a count,
    a shape), passed on when it holds integers, booleans, None or text: a discrete argument
    has a zero derivative. A float or complex one might carry a gradient the rule cannot
    give: raise `message` (a `MissingRuleError` at the user's line)."""
    if not is_discrete(value):
        raise MissingRuleError(message, filename, lineno, col, line)
    return value


def is_discrete(value):
    """Whether `value` holds integers, booleans, None, text or dtypes only: nothing that moves."""
    if value is None or isinstance(value, (bool, numbers.Integral, str, bytes, np.bool_, np.integer, np.dtype, type)):
        return True
    if isinstance(value, (tuple, list)):
        return all(is_discrete(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuUS"



def rule_adjoints(adjoints, active, label, filename, lineno, col, line):
    """What an adjoint rule whose returns ssad cannot read (a lambda, a function without
    source) returned, checked before the backward sweep reads it: a tuple or list with an
    adjoint at each position in `active` (the arguments that carry gradients), None at none
    of them. Raises a `MissingRuleError` at the user's line saying what the rule must return."""
    shape = "one adjoint per positional argument of the call, None for an argument without one"
    if not isinstance(adjoints, (tuple, list)):
        raise MissingRuleError(f"the adjoint rule of {label} returned a {type(adjoints).__name__}, where it must "
                               f"return a tuple: {shape}", filename, lineno, col, line)
    if len(adjoints) <= max(active):
        raise MissingRuleError(f"the adjoint rule of {label} returned {len(adjoints)} adjoint"
                               f"{'' if len(adjoints) == 1 else 's'}, where argument "
                               f"{max(active)} of the call carries gradients: return {shape}", filename, lineno,
                               col, line)
    for i in active:
        if adjoints[i] is None:
            raise MissingRuleError(f"the adjoint rule of {label} returned None for argument {i} of the call, which "
                                   f"carries gradients here; return a zero there (0.0, or an array of zeros shaped "
                                   f"like the argument), or write the rule with `def` returning a tuple display "
                                   f"with a literal None there, which ssad reads as a zero derivative", filename,
                                   lineno, col, line)
    return adjoints


def list_changed(receiver, method, text, filename, lineno, col):
    """Before `r.append(v)` (`extend`, `insert`, `push` as a statement, `r.pop()`), which ssad
    differentiates as a change of a list, where the compiler could not tell that `r` holds one
    (an argument, an attribute, a call's result): raises where the method is one of the
    user's class (`Acc.push`), which Python calls instead. A list's, a deque's or the tape's
    own method passes."""
    if type(receiver) is list or not isinstance(getattr(type(receiver), method, None), types.FunctionType):
        return
    kind = type(receiver).__name__
    raise UnsupportedSyntaxError(
        f"`{text}` calls the method `{method}` of a {kind} (yours), which ssad would take for a list's `{method}`: "
        f"calling a method for its side effect is not supported (a method cannot change `self`); have it "
        f"return a new {kind} and assign it (`obj = obj.{method}(...)`), or keep the values in a list",
        filename, lineno, col, source_line(filename, lineno))


_OWN_METHODS = (np.ndarray, np.generic, list, dict, set, frozenset, tuple, str, bytes)
_UNCHANGEABLE = (numbers.Number, np.generic, str, bytes, type(None), type, types.ModuleType, types.FunctionType)


def fresh_result(result, receiver, method, text, filename, lineno, col):
    """After `r = v.method(...)`, a method named like one of an array, a list, a dict, a set, a
    string or a tuple, which ssad reads as theirs (a new value; `copy` of a list, a new list
    of the same items), where the compiler could not tell that `v` holds one (an object of
    yours, passed in): raises where the method is `v`'s own and `r` shares what `v` holds (a
    field, a view of one, a list holding one, `v` itself), which a change in place of either
    would show in the other where ssad would not."""
    if isinstance(receiver, numbers.Number) or any(
            isinstance(receiver, kind) and getattr(type(receiver), method, None) is getattr(kind, method, None)
            for kind in _OWN_METHODS) or (method == "copy" and isinstance(receiver, (list, dict, set))):
        return  # NumPy's or Python's own method; a container's copy (an OrderedDict's) is shallow, as followed
    held, arrays = _reached(receiver)
    mine, own_arrays = _reached(result)
    if not (held.keys() & mine.keys()) and not any(_overlaps(a, b) for a in arrays for b in own_arrays):
        return
    kind = type(receiver).__name__
    raise UnsupportedSyntaxError(
        f"`{text}` calls the method `{method}` of a {kind} (yours), which returns a value sharing what the {kind} "
        f"holds (a field, a view of one, a list holding one); ssad reads a method named like an array's, a "
        f"list's or a dict's as theirs, which returns a new value, so a change in place of either would not show "
        f"in the other; give the method another name (`{method}_of`), or return a copy (`return self.w.copy()`)",
        filename, lineno, col, source_line(filename, lineno))


def _reached(value):
    """({id: value} of the values `value` is or holds at any depth that may change in place,
    [the arrays among them])."""
    found, seen, stack = {}, set(), [value]
    while stack:
        current = stack.pop()
        if id(current) in seen or isinstance(current, _UNCHANGEABLE):
            continue
        seen.add(id(current))
        if not isinstance(current, (tuple, frozenset)):  # these never change: what they hold may
            found[id(current)] = current
        stack.extend(held_values(current))
    return found, [v for v in found.values() if isinstance(v, np.ndarray)]


# the checks above that raise or do nothing, which generated code calls for their effect
GUARDS = (check_assertion, walk_unchanged, held_list_kept, keys_unchanged, not_a_view_of, unshared_with, rebound_by_augmented,
          unchanged_by_call, items_unchanged_by_call, elements_unchanged_by_call, not_changed_in_place, keeps_length, discrete_only,
          changed_item_held_once, item_held_by, item_held_elsewhere, list_changed, fresh_result)
