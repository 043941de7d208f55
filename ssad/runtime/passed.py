"""The check before a call through a function value (`g(z)`, `fn(xs[0])`, `obj.scale(z)`),
whose function is known only when the code runs.

A function of the user's that changes its parameter in place by an augmented assignment
(`v *= s`) writes into the caller's array. Where the caller reads what it passes elsewhere,
ssad would not agree with Python (see `frontend.passing`); for a call to a function named
in the source the front end checks the argument where it is passed. Here the function is
known only now: `keeps_arguments` asks the front end, through the hook the compile driver
installs, which parameters the function changes, and raises for an array (or a container
holding one) passed to one of them. It cannot tell which of them the caller reads again,
so it refuses each.
"""

import functools
import inspect

import numpy as np

from ..errors import UnsupportedSyntaxError
from .callables import unwrapped
from .closures import Closure
from .item_guards import holds_changeable, numbers_only
from .locations import source_line

_hook = {}  # "changes": function -> {parameter: (line, kind)}; "globals": function -> (changed, read) (see `install`)

# methods that change a list, dict or array in place (push: the Tape of generated code); the
# front end reads them as such, and checks one of an object of the user's where it is lowered
CHANGING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update", "setdefault", "popitem",
    "fill", "put", "itemset", "resize", "partition", "setflags", "push",
})


def install(changes, globals_changed):
    """`changes(function)`: the parameters the user's `function` changes in place, each with
    the line and what of it changes: "itself", "items" (what it holds) or "elements" (an
    element of it), or {}. `globals_changed(function)`: ({key: name} of the objects outside
    it that the function changes in place, {key: name} of those it reads), with the
    functions it calls (`frontend.module_values.module_objects`)."""
    _hook["changes"], _hook["globals"] = changes, globals_changed


def keeps_globals(call_text, filename, lineno, col, function, method, read):
    """Before a call through a function value (`g(v)`, `fs[0](v)`, `obj.log(v)`), in a function
    that reads objects defined outside it (`read`: their keys, see `object_effects`): raise
    where the function called changes one of them in place (`W[0] = v`, `LOG.append(v)`,
    `config.S = v`), as a function called by its name is refused where it is lowered
    (`frontend.globals_changed`): ssad reads them as constants, so the derivative would miss
    the change, or read the changed value again for a read before the call."""
    found = _hook.get("globals")
    if method is not None:
        function = getattr(function, method, None)
    function = _plain(function, (), {})[0]
    if found is None or not inspect.isfunction(function):
        return
    changed = found(function)[0]
    both = [name for key, name in changed.items() if key in read]
    if both:
        label = getattr(function, "__name__", "the function").rsplit("_template", 1)[0]
        label = "the lambda" if label == "<lambda>" else label
        raise UnsupportedSyntaxError(
            f"`{call_text}` calls {label}, which changes `{both[0]}`, defined outside the function, which the function "
            f"reads: ssad reads a global as a constant, so the derivative would miss what is put into it, or read the "
            f"changed value for one read before; keep the values in a variable of the function",
            filename, lineno, col, source_line(filename, lineno))


def keeps_arguments(call_text, filename, lineno, col, function, method, *args, **kwargs):
    """Before `function(*args, **kwargs)`, or `function.method(...)` where `method` is a
    name (the source `call_text`, at `filename`:`lineno`): raise where the function changes
    a parameter given an array, or a value holding one, or (a method) its object."""
    changes = _hook.get("changes")
    # the object of a method it may change (one named like a list's change is checked elsewhere)
    receiver = function if method is not None and method not in CHANGING_METHODS and not method.startswith("_") else None
    if method is not None:
        function = getattr(function, method, None)
    function, args, kwargs = _plain(function, args, kwargs)
    found = changes(function) if changes is not None and inspect.isfunction(function) else None
    if not found:
        return
    try:
        bound = inspect.signature(function).bind_partial(*args, **kwargs)
    except TypeError:  # the call itself raises it, as Python would
        return
    for parameter, (line, kind) in found.items():
        if parameter not in bound.arguments:
            continue
        value = bound.arguments[parameter]
        if kind == "elements" and numbers_only(value):
            continue  # its elements are numbers, which the function rebinds
        if isinstance(value, np.ndarray) or (kind == "itself" and isinstance(value, list)) or holds_changeable(value) or (
                receiver is not None and value is receiver):  # `m.bump(v)` changing m, an object of the user's
            label = getattr(function, "__name__", "the function").rsplit("_template", 1)[0]  # a closure's: its own
            label = "the lambda" if label == "function" else label
            raise UnsupportedSyntaxError(
                f"`{call_text}` calls {label}, which changes its parameter `{parameter}` in place (line {line}), and "
                f"passes it an array, an object or a value holding one, which the code reads elsewhere: ssad would "
                f"see the change where Python does not, or the other way round (the derivative of a read before "
                f"the call reads it again after it); in {label} assign a new array (`{parameter} = {parameter} * s` "
                f"for `{parameter} *= s`, a copy before `{parameter}[i] = e`), or pass a copy",
                filename, lineno, col, source_line(filename, lineno))


def output_is_none(value, message, filename, lineno, col):
    """Before a NumPy call given a parameter of the function as its output (`np.sin(x,
    out=out)`, `def f(x, out=None)`): None passes, an array would be written into."""
    if value is not None:
        raise UnsupportedSyntaxError(message, filename, lineno, col, source_line(filename, lineno))


def _plain(function, args, kwargs):
    """The Python function a call of `function` runs, with the arguments it gets."""
    for _ in range(16):
        function = unwrapped(function)
        if isinstance(function, functools.partial):
            function, args, kwargs = function.func, function.args + args, {**function.keywords, **kwargs}
        elif inspect.ismethod(function):
            function, args = function.__func__, (function.__self__,) + args
        elif isinstance(function, Closure):
            function, kwargs = function.template, {**kwargs, **function.captured}
        elif not inspect.isfunction(function) and inspect.isfunction(vars(type(function)).get("__call__")):
            function, args = vars(type(function))["__call__"], (function,) + args
        else:
            break
    return function, args, kwargs
