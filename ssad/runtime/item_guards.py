"""Checks generated code runs before `y[k] += v` and `t += v`, where Python's `+=` may change
an array or a list in place that ssad's lowering replaces by a new value.

ssad lowers `t += v` to `t = t + v` and `y[k] += v` to `y[k] = y[k] + v`. For a number, and
for an array `y` (whose element or row NumPy writes in place, as the lowering does), the two
agree. For an array or a list `t`, or one held by a list or a dict `y`, Python changes that
object itself; the lowering stores a new one. The two differ only where something else holds
the object and is read afterwards; which objects a name holds is known only where the code
runs, so these checks run there and raise `UnsupportedSyntaxError` at the user's line.
"""

import dataclasses
import numbers
import types

import numpy as np

from ..errors import UnsupportedSyntaxError
from .locations import source_line


def rebound_by_augmented(value, message, filename, lineno, col):
    """Before `t += v` where `t` may share an array that another name reads afterwards
    (`t = y[2]`, `t = min(items, key=abs)`): a number, or another value `+=` cannot change,
    is rebound, which is ssad's lowering (`t = t + v`); an array, a list or any other
    value would be changed in place. Raises for those. An object of the user's class whose
    in-place methods are its own (or absent) passes: `+=` calls them, and ssad refuses a
    method that changes `self` (or an array it holds) where it differentiates one."""
    if not isinstance(value, (numbers.Number, np.generic, tuple, str, bytes, frozenset, type(None))) and not (
            _own_in_place(type(value))):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


_IN_PLACE_METHODS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
                     "__imatmul__", "__ilshift__", "__irshift__", "__ior__", "__iand__", "__ixor__")


def _own_in_place(kind):
    """Whether every in-place method of the class `kind` is a Python function or absent (and
    `kind` is no container or array of Python's or NumPy's, whose `+=` writes in place)."""
    if issubclass(kind, (np.ndarray, list, dict, set, bytearray)) or hasattr(kind, "__array_function__"):
        return False  # an array (NumPy's, or another library's) or a container
    return all(isinstance(getattr(kind, m, None), (types.FunctionType, type(None))) for m in _IN_PLACE_METHODS)


def changed_item_held_once(container, item, message, filename, lineno, col):
    """Before `y[k] += v` on a container `y` that is not an array: `item`, which `y[k]` held,
    is changed in place by Python's `+=` where it is an array or a list. Raises when `y`
    holds it at another place too (at any depth: `y = [a, [a]]`), or a view of its memory,
    which would see the change ssad's lowering (a new value at `y[k]`) does not show. A
    number, or an array `y`, passes."""
    if isinstance(container, np.ndarray):
        return
    count = sum(1 if other is item else 2 for other in _holding(container, item))  # a view counts twice
    if count > 1:
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def item_held_by(item, holder, message, filename, lineno, col):
    """Before `y[k] += v` where `y` may be `holder.copy()`: `item`, which `y[k]` held, is changed
    in place by Python's `+=` where it is an array or a list. Raises when `holder` (a dict, list
    or tuple, whose copy holds its items) holds it too, or a view of its memory; an array
    `holder` passes (its copy holds no array of its)."""
    if not isinstance(holder, np.ndarray) and any(True for _ in _holding(holder, item)):
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def item_held_elsewhere(container, item, names, *holders_and_place):
    """Before `y[k] += v` on a container `y` that is not an array: `item_held_elsewhere(y, item,
    names, *holders, message, filename, lineno, col)`, where the `holders` may see the change
    afterwards (locals read afterwards, values a function captured, a global list) and `names`
    gives their names, split by spaces, for `{holder}` in `message`. `item`, which `y[k]` held,
    is changed in place by Python's `+=` where it is an array or a list. Raises when a holder
    is that item, a view of its memory, or holds one at any depth (other than through `y`
    itself, whose place `k` the lowering does change)."""
    *holders, message, filename, lineno, col = holders_and_place
    if isinstance(container, np.ndarray) or not isinstance(item, (np.ndarray, list)):
        return
    for holder, name in zip(holders, names.split(), strict=True):
        if holder is not container and any(True for _ in _holding(holder, item, outside=container, itself=True)):
            raise UnsupportedSyntaxError(message.replace("{holder}", name), filename, lineno, col,
                                         source_line(filename, lineno))


def holds_changeable(container):
    """Whether the dict, tuple, list, dataclass record or other object of the user's
    `container` holds, at any depth, an array or a list (which `+=` changes in place): an
    attribute of an object passed in (`b.s[0] = v` in the function it is passed to)."""
    seen, stack = set(), list(held_values(container))
    while stack:
        value = stack.pop()
        if isinstance(value, (np.ndarray, list)):
            return True
        if id(value) not in seen:
            seen.add(id(value))
            stack.extend(held_values(value))
    return False


def numbers_only(value):
    """Whether `value` is a 1-D array of numbers, whose elements (`v[k]`, what `for`
    walks) are numbers, not views of it."""
    return type(value) is np.ndarray and value.ndim == 1 and value.dtype.kind in "biufc"


def _holding(container, item, outside=None, itself=False):
    """The values held by `container` (a dict, list, tuple or dataclass record, and those it
    holds in turn; with `itself`, `container` too) that are `item` or a view of its memory,
    where `item` is an array or a list (which `+=` changes in place). What an array or an
    object of another kind holds is not looked into; nor is `outside`."""
    if not isinstance(item, (np.ndarray, list)):
        return
    memory = _memory_of(item)
    seen = set()
    stack = [container] if itself else list(_held(container, outside))
    while stack:
        value = stack.pop()
        if value is item or (memory is not None and _memory_of(value) is memory):
            yield value  # each place that holds it counts
        elif id(value) not in seen:  # a container held at two places is looked into once
            seen.add(id(value))
            stack.extend(_held(value, outside))


def _held(value, outside):
    if value is outside or isinstance(value, (np.ndarray, str, bytes, numbers.Number)):
        return ()
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, (list, tuple)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, field.name, None) for field in dataclasses.fields(value)]
    return ()


def held_values(value):
    """What `value` holds: the items of a list, tuple or dict, the fields of a dataclass record,
    the attributes of another object of yours; none for an array, a number, a string, a
    class, a module or a function."""
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return ()
    held = _held(value, None)
    if held or isinstance(value, (np.ndarray, str, bytes, numbers.Number, dict, list, tuple, np.generic)):
        return held
    return list(getattr(value, "__dict__", {}).values())


def _memory_of(value):
    """The array owning the memory of the array `value` (itself, or what it is a view of)."""
    if not isinstance(value, np.ndarray):
        return None
    return value if value.base is None else value.base

