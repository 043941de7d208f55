"""What ssad hands back is apart from the caller's memory, and what it keeps apart from what the caller changes.

A derivative function returns new arrays (`apart_from`): a rule may hand back its operand
(the adjoint of `np.dot(x, w)` with respect to `x` is `w`), one adjoint may reach two
inputs, and a caller changing a result in place must change nothing else. A pullback of
`ssad.vjp` reads what the forward half saved (`kept_apart`), though the caller changes its
arguments or the value returned in place before calling it. The aux of `has_aux=True` is
taken out before the backward half undoes what the function changed in place (`taken_out`).
"""

import collections
import copy
import dataclasses
import numbers
import operator
import types

import numpy as np

from .item_guards import held_values


def kept_apart(residuals, given):
    """`residuals` (what a forward half saved for its backward half) with each array that may
    share memory with one the caller holds (`given`: the arguments, the value returned, and
    the arrays they hold) replaced by a copy, containers copied around them. `ssad.vjp`'s
    caller may change those in place before it calls the pullback, which must read what the
    forward half read (`x[0] = 5.0`, or `y *= 2` on the value `np.exp(x)`, whose adjoint reads
    it): a silently wrong adjoint otherwise."""
    arrays, seen, stack = [], set(), [given]
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray) and value.dtype != object:
            arrays.append(value)
        elif id(value) not in seen:
            seen.add(id(value))
            stack.extend(list(value) if isinstance(value, np.ndarray) else held_values(value))
    return _apart(residuals, arrays, {}) if arrays else residuals


def _apart(value, arrays, copies):
    """`value` with its shared arrays copied; a container only where something in it was
    (the backward half may rely on which containers are the same object: a dict's view)."""
    if isinstance(value, np.ndarray):
        return value.copy() if any(np.may_share_memory(value, a) for a in arrays) else value
    if not isinstance(value, (tuple, list, dict)) or (isinstance(value, tuple) and type(value) is not tuple and not hasattr(
            type(value), "_make")):
        return value
    if id(value) in copies:
        return copies[id(value)]
    copies[id(value)] = value  # a container holding itself holds what it becomes
    items = list(value.values()) if isinstance(value, dict) else list(value)
    kept = [_apart(v, arrays, copies) for v in items]
    if all(map(operator.is_, kept, items)):
        return value
    if isinstance(value, tuple):  # a namedtuple keeps its class
        copied = tuple(kept) if type(value) is tuple else type(value)._make(kept)
    else:  # a list (the tape too) or a dict, of its own class
        copied = copy.copy(value)
        if isinstance(value, dict):
            copied.update(zip(value.keys(), kept, strict=True))
        else:
            copied[:] = kept
    copies[id(value)] = copied
    return copied


def apart_from(outputs, *inputs):
    """`outputs` (what a derivative function returns: a gradient, a tuple of them, adjoints)
    with each array whose memory is that of an array among `inputs` (the arguments as a
    tuple, the keyword arguments as a dict, a cotangent; with the arrays they hold) or of an
    earlier output replaced by a copy.

    A rule may hand back its operand (the adjoint of `np.dot(x, w)` with respect to `x` is
    `w` itself for a scalar seed), and one adjoint may reach two inputs (`x + y`): a caller
    changing a gradient in place (`g *= lr`, `x -= lr * gx`) would change an argument, or
    another gradient, where NumPy's value semantics promise a new array. Every call of a
    gradient function asks: the common values (arrays, floats) take no walk."""
    kind = type(outputs)
    if kind is float:
        return outputs
    if kind is np.ndarray and outputs.base is None and len(inputs) == 2 and not inputs[1]:
        for value in inputs[0]:  # the hot case: arrays and numbers by position, a result owning its memory
            if value is outputs or (type(value) is np.ndarray and value.base is not None and _root(value) == id(outputs)):
                return outputs.copy()
            if type(value) is not np.ndarray and type(value) is not float and type(value) is not int:
                break
        else:
            return outputs
    roots = set()
    for group in inputs:
        for value in group.values() if type(group) is dict else group if type(group) is tuple else (group,):
            held = type(value)
            if held is np.ndarray:
                roots.add(id(value) if value.base is None else _root(value))
            elif held is not float and held is not int and value is not None:
                _roots_held(value, roots)
    if kind is np.ndarray:
        return outputs.copy() if (id(outputs) if outputs.base is None else _root(outputs)) in roots else outputs
    return _owned(outputs, roots)


def _roots_held(value, roots):
    seen, stack = set(), [value]
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray):
            roots.add(_root(value))
        elif not isinstance(value, (numbers.Number, str, bytes, type(None))) and id(value) not in seen:
            seen.add(id(value))
            stack.extend(held_values(value))


def _root(array):
    """The id of the array owning `array`'s memory (itself, or what it is a view of)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return id(array)


def _owned(value, roots):
    """`value` with each array whose root is among `roots` copied; the roots of what it
    holds join them, so no two results share memory either."""
    if type(value) is float:
        return value
    if isinstance(value, np.ndarray):
        root = id(value) if value.base is None else _root(value)
        if root in roots:
            value = value.copy()
            root = id(value)
        roots.add(root)
        return value
    if type(value) is tuple or type(value) is list:
        return type(value)([_owned(v, roots) for v in value])
    if isinstance(value, tuple) and hasattr(type(value), "_make"):
        return type(value)._make([_owned(v, roots) for v in value])
    if type(value) is dict:
        return {k: _owned(v, roots) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a record `fit_gradient` made for this call
        for field in dataclasses.fields(value):
            object.__setattr__(value, field.name, _owned(getattr(value, field.name), roots))
    elif isinstance(value, types.SimpleNamespace):
        for name, v in list(vars(value).items()):
            setattr(value, name, _owned(v, roots))
    return value


def taken_out(value, copies=None):
    """`value` (the aux a function returns beside what is differentiated) in lists, dicts,
    tuples and arrays of its own, as they stand when the forward half ends. The backward half,
    which runs after, undoes in place what the function changed in place (an append is popped,
    an overwritten element restored), and aux may be those very objects: without the copy a
    list built by `append` came back empty. What two places of `value` share, their copies
    share; an object of another kind is handed back as it is."""
    copies = {} if copies is None else copies
    if type(value) is float or type(value) is int or value is None:
        return value
    if id(value) in copies:
        return copies[id(value)]
    if isinstance(value, np.ndarray):
        copied = value.copy()
    elif isinstance(value, tuple) and (type(value) is tuple or hasattr(type(value), "_make")):
        items = [taken_out(v, copies) for v in value]
        copied = tuple(items) if type(value) is tuple else type(value)._make(items)
    elif isinstance(value, (list, dict, collections.deque)):
        copied = copy.copy(value)  # of its own class (a defaultdict keeps its factory)
        copies[id(value)] = copied  # a container holding itself holds its copy
        if isinstance(value, dict):
            copied.update((k, taken_out(v, copies)) for k, v in value.items())
        else:
            items = [taken_out(v, copies) for v in value]
            copied.clear()
            copied.extend(items)
    else:
        return value
    copies[id(value)] = copied
    return copied
