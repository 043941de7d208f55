"""The compile driver: generated code made once per function, wrt, variant and options.

Assumes: the pipeline (`pipeline.build`) and nothing of the public API.
Guarantees: `compiled(f, wrt, variant, ...)` returns the cached `Compiled`, keyed by
(f's code, wrt, variant, optimize, scalar parameters, tuple result, rule-registry
version), building it at most once per key even when threads ask at once; a second
`grad(f)` costs a dictionary lookup. At import it installs itself as the resolver of
`runtime.handles`, through which generated code and the passes reach the code of
the functions they call.
"""

import threading
import weakref

import numpy as np

from ..registry import REGISTRY
from ..runtime import handles
from ..runtime.callables import parameters
from .pipeline import build

_cache = weakref.WeakKeyDictionary()  # function -> {key: Compiled}
_cache_lock = threading.RLock()


_in_progress = threading.local()


def under_way(f, wrt, variant):
    """Whether this very compilation is already under way in this thread (recursion)."""
    return (f, wrt, variant) in getattr(_in_progress, "keys", set())


def compiled(f, wrt, variant, optimize=True, scalars=frozenset(), as_tuple=False, checkpoint=None):
    """The cached Compiled for (f, wrt names, variant, optimize, scalar parameters, tuple result,
    loop checkpointing strategy)."""
    key = (wrt, variant, optimize, scalars, REGISTRY.version, f.__code__, as_tuple, globals_read(f), checkpoint)
    try:
        return _cache[f][key]
    except KeyError:
        pass
    with _cache_lock:
        entries = _cache.setdefault(f, {})
        if key not in entries:
            building = getattr(_in_progress, "keys", None)
            if building is None:
                building = _in_progress.keys = set()
            building.add((f, wrt, variant))
            try:
                entries[key] = build(
                    f, wrt, variant, optimize, scalars=scalars, as_tuple=as_tuple, checkpoint=checkpoint
                )
            finally:
                building.discard((f, wrt, variant))
        return entries[key]


# Types whose values are real scalars: arguments of these types get code specialized on it.
# Not complex ones: the adjoint of a real operand of `x * s` must stay an `unbroadcast`
# (which takes its real part) when s is complex.
SCALAR_TYPES = frozenset({
    float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
})


class Variants:
    """The generated functions of one (f, wrt, variant), specialized per scalar arguments.

    `for_args(args)` costs one type test per positional argument and a dict lookup.
    """

    def __init__(self, f, wrt, variant, optimize, as_tuple=False, checkpoint=None):
        self.f, self.wrt, self.variant, self.optimize, self.as_tuple = f, wrt, variant, optimize, as_tuple
        self.checkpoint = checkpoint
        self.positional = parameters(f)[0]
        self.general = compiled(f, wrt, variant, optimize, as_tuple=as_tuple, checkpoint=checkpoint)
        self.by_mask = {}

    def for_args(self, args):
        mask = tuple([type(a) in SCALAR_TYPES for a in args])
        entry = self.by_mask.get(mask)
        if entry is None:
            scalars = frozenset(name for name, is_scalar in zip(self.positional, mask, strict=False) if is_scalar)
            entry = (
                compiled(self.f, self.wrt, self.variant, self.optimize, scalars, self.as_tuple, self.checkpoint)
                if scalars
                else self.general
            )
            self.by_mask[mask] = entry
        return entry


handles.install(compiled, under_way)


def globals_read(f):
    """The identities of the module globals `f` reads (nested functions included).

    Generated code holds the objects its free names had when it was made; a global
    rebound since (`K = np.cos` where it was `np.sin`) makes a new entry.
    """
    module = getattr(f, "__globals__", None)
    if module is None:
        return ()
    return tuple(id(module[n]) for n in _names_read(f.__code__) if n in module)


def _names_read(code):
    names = code.co_names
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names = names + _names_read(const)
    return names
