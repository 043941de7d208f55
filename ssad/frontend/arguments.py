"""Arguments the differentiated function writes into: lowered as if it copied them first.

A function that writes into an array or changes a list its caller passed in (`x[0] = v`,
`items.append(v)` where `x` and `items` are parameters) would, run by its gradient
function, change the caller's value and leave the backward sweep reading values that
are not the caller's. For the function passed to ssad's API (`ssad.grad(f)`), whose
caller is the user, `entry_function(f)` gives a twin of `f` (the same code, another
function object, so compiled and cached apart) that ssad lowers with
`p = owned_argument(p)` (a copy, whose adjoint is the identity) at its top for each
parameter `p` it writes into, directly or through an item, a field or a view of it: the
copy holds copies of the lists, dicts, objects and arrays `p` holds, so its gradient
function leaves the caller's values as they were, in every mode and at every order, and
differentiates what `f` computes from them. A function
that `f` calls keeps the refusal: its caller would see the change, which a copy hides.
"""

import inspect
import types
import weakref

import gast

from ..runtime.structure import owned_argument
from .builders import call as _call
from .builders import name as _name
from .builders import store as _store
from .builders import walk
from .fence import check
from .builders import local_names
from .parse import parse_function, parsed_to_read


_TWINS = weakref.WeakKeyDictionary()  # twin function -> the parameters it copies
_ENTRIES = weakref.WeakKeyDictionary()  # function passed to the API -> itself or its twin


class WritesIntoArguments(Exception):
    """The function writes into arrays or lists the caller passed in (`parameters`);
    `refusal` is the error for a function that may not copy them."""

    def __init__(self, parameters, refusal):
        super().__init__(parameters)
        self.parameters = parameters
        self.refusal = refusal


def entry_function(f, lower):
    """`f`, or its twin that copies the arguments it writes into, for `f` passed to the API;
    `lower` is the lowering to A-normal form (`anf.to_anf`), which tells which they are."""
    try:
        return _ENTRIES[f]
    except (KeyError, TypeError):
        pass
    entry = f
    if inspect.isfunction(f) and _may_write_into_arguments(f):
        twin = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
        twin.__kwdefaults__, twin.__qualname__, twin.__module__ = f.__kwdefaults__, f.__qualname__, f.__module__
        twin.__dict__.update(f.__dict__)  # what ssad noted on f (the gradient a generated function belongs to)
        _TWINS[twin] = set()
        try:
            parsed = parse_function(twin)
            check(parsed)
            lower(parsed)
        except Exception:  # noqa: BLE001 - the compilation itself reports what is wrong
            pass
        if _TWINS[twin]:
            entry = twin
    try:
        _ENTRIES[f] = entry
    except TypeError:
        pass
    return entry


def copies_arguments(function):
    """Whether `function` is a twin (see `entry_function`): one that may copy the arguments
    it writes into, rather than refuse to write into them."""
    return _TWINS.get(function) is not None


def _may_write_into_arguments(f):
    """A cheap first look: whether `f`'s code stores into a subscript or calls a method of a
    name that is not a module-level one (`items.append(v)` may change an argument,
    `np.sum(x)` may not)."""
    try:
        parsed = parsed_to_read(f)
    except Exception:  # noqa: BLE001 - reported when compiled
        return False
    local = local_names(parsed.node)
    for node in walk(parsed.node):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            return True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
            owner = node.func.value
            if isinstance(owner, gast.Name) and (owner.id in local or owner.id not in parsed.namespace):
                return True
    return False


def lowered_copying_arguments(parsed, lower):
    """`lower(parsed)`; for a twin (see `entry_function`), lowering it again with `p = owned_argument(p)`
    at its top for each parameter `p` it writes into, until it writes into none."""
    copied = _TWINS.get(parsed.function)
    if copied:
        copy_arguments(parsed, copied)
    while True:
        try:
            return lower(parsed)
        except WritesIntoArguments as writes:
            if copied is None or writes.parameters <= copied:
                raise writes.refusal from None
            copied |= writes.parameters
            parsed = reparsed(parsed)
            copy_arguments(parsed, copied)


def reparsed(parsed):
    """`parsed` as parsed afresh (the lowering changed its tree)."""
    again = parse_function(parsed.function)
    check(again)
    return again


def copy_arguments(parsed, parameters):
    """Begin `parsed`'s body with `p = owned_argument(p)` for each of `parameters`."""
    taken = local_names(parsed.node) | set(parsed.namespace)
    base = "owned_argument"
    helper = base if base not in taken else next(f"{base}_{k}" for k in range(1, 1000) if f"{base}_{k}" not in taken)
    parsed.namespace[helper] = owned_argument
    node = parsed.node
    first = node.body[0]
    copies = [
        gast.copy_location(gast.Assign(targets=[_store(p)], value=_call(_name(helper), _name(p)), type_comment=None),
                           first)
        for p in sorted(parameters)
    ]
    docstring = 1 if isinstance(first, gast.Expr) and isinstance(getattr(first.value, "value", None), str) else 0
    node.body[docstring:docstring] = copies
