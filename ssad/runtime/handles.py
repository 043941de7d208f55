"""Handles on generated code compiled on first use: how code calls the code of its callees.

Generated code that calls one of the user's functions calls a `Handle` bound in its
namespace (`forward_g`, `backward_g`, `jvp_g`), and run-time dispatch (`dynamic`)
asks for the code of a function value through `resolve`. Neither knows how code is
compiled: the compile driver installs that with `install` when ssad is imported, so
nothing below the driver imports it.

A handle remembers the rule-registry version it was made under: code generated
after a rule changed gets handles of its own, which resolve with the rules of
now, while code generated before keeps the callee entry it was compiled with
(`prepare` pins it). The same holds for what the callee reads (`reads`): code
generated after a global or a closure cell the callee, or a function it calls, reads
was rebound gets handles of its own, which compile the callee with the values of now.
"""

import threading

from ..registry import REGISTRY
from .callables import function_label, vjp_name
from .reads import keep, kept, values_read

# The variants of generated code.
GRAD = "grad"
VALUE_AND_GRAD = "value_and_grad"
VJP = "vjp"
JVP = "jvp"

_driver = {}  # "compile": (f, wrt, variant) -> Compiled; "under_way": (f, wrt, variant) -> bool


def install(compile, under_way):
    """Set how handles compile: `compile(f, wrt, variant)` returns the (cached) Compiled;
    `under_way(f, wrt, variant)` says whether that very compilation is running (recursion)."""
    _driver["compile"] = compile
    _driver["under_way"] = under_way


def resolve(function, wrt, variant, facts=frozenset()):
    """The Compiled of `function` for `wrt` and `variant`, compiled now if needed; `facts`
    are the shape facts of its parameters the caller knows (see `analysis.ranks`)."""
    if facts:
        return _driver["compile"](function, wrt, variant, True, facts)
    return _driver["compile"](function, wrt, variant)


class Handle:
    """The generated code of `function` for `wrt` and `variant`, compiled on first call.

    `half` is "forward" or "backward" for the two halves of a vjp, which share one
    resolution, so the backward half always reads the residuals of the forward half
    it belongs to; it is None for the entry function of the other variants.
    """

    def __init__(self, function, wrt, variant, half=None, shared=None, facts=frozenset()):
        self.function = function
        self.wrt = wrt
        self.variant = variant
        self.facts = facts
        self.half = half
        self.version = REGISTRY.version
        if half is None:
            self.__name__ = f"{variant}_{function_label(function)}"
        else:
            self.__name__ = f"{half}_{vjp_name(function, wrt)}"
        self._shared = {} if shared is None else shared  # {"entry": the Compiled, once resolved}

    def entry(self):
        """The Compiled this handle stands for (compiled now if needed)."""
        entry = self._shared.get("entry")
        if entry is None:
            entry = self._shared.setdefault("entry", resolve(self.function, self.wrt, self.variant, self.facts))
        return entry

    def resolve(self):
        """The generated function this handle stands for (compiled now if needed)."""
        entry = self.entry()
        return entry.backward if self.half == "backward" else entry.function

    def pin(self, entry):
        """Resolve to `entry` (compiled with the rules of now) unless already resolved."""
        self._shared.setdefault("entry", entry)

    def prepare(self):
        """Compile now, so the callee's errors surface with the caller's, and keep that code
        whatever is registered later. Does nothing while that very compilation is under way
        (a function that calls itself): the handle then resolves on first call."""
        if _driver["under_way"](self.function, self.wrt, self.variant):
            return
        self.pin(resolve(self.function, self.wrt, self.variant, self.facts))

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self):
        what = self.half or self.variant
        return f"<ssad {what} of {self.function.__qualname__} w.r.t. {', '.join(self.wrt)}>"


_handles = {}  # (function, wrt, variant, version, ...) -> ((values read, handles), ...), newest first
_handles_lock = threading.Lock()


def vjp_handles(function, wrt, facts=frozenset()):
    """The shared (forward, backward) pair of handles of `function` w.r.t. parameters `wrt`,
    for arguments with the shape `facts` the caller knows ((parameter, Fact) pairs).

    One pair per rule-registry version and per objects the function reads (`reads`):
    code generated after a rule changed, or after a global or closure cell the callee
    reads was rebound, resolves its callees anew (code generated before keeps its own).
    """

    def made():
        shared = {}
        return (
            Handle(function, wrt, VJP, "forward", shared, facts),
            Handle(function, wrt, VJP, "backward", shared, facts),
        )

    return _shared((function, wrt, VJP, REGISTRY.version, facts), function, made)


def jvp_handle(function, wrt, facts=frozenset()):
    """The shared forward-mode function of `function` for tangents of `wrt`, for arguments of
    the kinds `facts` the caller knows, one per registry version and objects the function
    reads, as for `vjp_handles`."""
    return _shared((function, wrt, JVP, REGISTRY.version, facts), function,
                   lambda: Handle(function, wrt, JVP, facts=facts))


def _shared(key, function, made):
    """The handles kept for `key` while `function` reads what it reads now, else `made()`."""
    read = values_read(function)
    with _handles_lock:
        entries = _handles.get(key, ())
        found = kept(entries, read)
        if found is None:
            found = made()
            _handles[key] = keep(entries, read, found)
        return found
