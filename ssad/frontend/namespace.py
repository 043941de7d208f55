"""The generated function's globals: every free name bound to exactly one live object.

The frontend binds what the user's code reads (`np`, a closure's template); every later
pass binds the helpers and rules its code calls, under names that collide with
nothing the user wrote.
"""

import builtins
import collections
import keyword
import re

import gast
import numpy as np

from ..errors import SsadError
from ..runtime.receivers import refuse_an_array_subclass
from .builders import walk

_MISSING = object()


class Namespace:
    """The generated function's globals: each free name bound to exactly one object."""

    def __init__(self, namer, initial):
        self.namer = namer
        self.values = dict(initial)
        self.pure = []  # callables bound here that have no side effects (adjoint rules)

    def copy(self, namer):
        """The same bindings, apart from this namespace, handing out names with `namer`."""
        twin = Namespace(namer, self.values)
        twin.pure = list(self.pure)
        return twin

    def bind(self, preferred, value):
        """A name for `value` in generated code.

        The name already bound to that very object when there is one (so rules
        read numpy through the user's own alias, `xp.cos`), else `preferred` when
        it is free, else a fresh variant of it (`np_1`).
        """
        preferred = _identifier(preferred)
        if self.values.get(preferred, _MISSING) is value:
            return preferred
        for name, bound in self.values.items():
            if bound is value:
                return name
        if getattr(builtins, preferred, None) is value and not self.namer.is_user_name(preferred):
            self.values[preferred] = value  # a builtin the user's code does not shadow
            return preferred
        if preferred not in self.values and not self.namer.is_taken(preferred):
            self.namer.reserve(preferred)
            self.values[preferred] = value
            return preferred
        name = self.namer.fresh(preferred)
        while name in self.values:  # a pass that restored the namer (a loop's fixpoint) freed a bound name
            name = self.namer.fresh(preferred)
        self.values[name] = value
        return name


def named_object(expr, values):
    """The object an attribute chain from a free name names (`np.linalg.norm`, `helper`),
    looked up in `values` (free name -> object); None where an attribute is missing."""
    path = []
    while isinstance(expr, gast.Attribute):
        path.append(expr.attr)
        expr = expr.value
    value = values.get(expr.id) if isinstance(expr, gast.Name) else None
    for attr in reversed(path):
        value = getattr(value, attr, None)
    return value


def _identifier(preferred):
    """`preferred` as a name generated code can use (`<lambda>` becomes `lambda_`)."""
    if preferred.isidentifier() and not keyword.iskeyword(preferred):
        return preferred
    cleaned = re.sub(r"\W", "_", preferred).strip("_") or "value"
    if not cleaned[0].isalpha():
        cleaned = f"value_{cleaned}"
    return f"{cleaned}_" if keyword.iskeyword(cleaned) else cleaned


def index_aliases(function, is_static):
    """{name: `np.r_` or `np.c_`} for each local the function binds once, at its top level, to one
    of them (`rr = np.r_`), so `rr[a, b]` is the concatenation `np.r_[a, b]` is."""
    stores = collections.Counter(
        n.id for n in walk(function) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    )
    aliases = {}
    for statement in function.body:
        if (
            isinstance(statement, gast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], gast.Name)
            and stores[statement.targets[0].id] == 1
            and isinstance(statement.value, gast.Attribute)
            and statement.value.attr in ("r_", "c_")
            and is_static(statement.value)
        ):
            aliases[statement.targets[0].id] = statement.value
    return aliases


def refuse_array_subclasses(parsed):
    """A free name denoting a subclass of np.ndarray (`M = np.matrix(...)`) is refused where the
    function first reads it (`runtime.receivers.refuse_an_array_subclass`)."""
    others = {name for name, value in parsed.namespace.items() if isinstance(value, np.ndarray) and type(value) is not np.ndarray}
    for node in walk(parsed.node) if others else ():
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in others:
            try:
                refuse_an_array_subclass(parsed.namespace[node.id], f"`{node.id}`")
            except SsadError as error:
                raise parsed.unsupported(node, str(error)) from None
