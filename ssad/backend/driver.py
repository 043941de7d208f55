"""The compile driver: generated code made once per function, wrt, variant and options.

Assumes: the pipeline (`pipeline.build`) and nothing of the public API.
Guarantees: `compiled(f, wrt, variant, ...)` returns the cached `Compiled`, keyed by
(wrt, variant, optimize, scalar parameters, tuple result, rule-registry version) and
made with the objects f and the functions it calls read now (`runtime.reads`: their
code, globals and closure cells), building it at most once per key and objects even
when threads ask at once; a second `grad(f)` costs a dictionary lookup and a walk over
those objects. At import it installs itself as the resolver of `runtime.handles`,
through which generated code and the passes reach the code of the functions they call.
"""

import threading
import weakref

import numpy as np

from ..registry import REGISTRY
from ..frontend.module_values import module_objects
from ..frontend.passing import changed_or_written
from ..runtime import handles, passed
from ..runtime.callables import parameters
from ..runtime.reads import keep, kept, still_read, values_read, watch
from ..runtime.receivers import COMPLEX, OBJECT, is_object, refuse_an_array_subclass
from ..analysis.ranks import Fact
from .pipeline import build, check

_cache = weakref.WeakKeyDictionary()  # function -> {key: ((values read, Compiled), ...)}, newest first
_cache_lock = threading.RLock()


_in_progress = threading.local()


def under_way(f, wrt, variant):
    """Whether this very compilation is already under way in this thread (recursion)."""
    return (f, wrt, variant) in getattr(_in_progress, "keys", set())


def compiled(f, wrt, variant, optimize=True, scalars=frozenset(), as_tuple=False, checkpoint=None):
    """The cached Compiled for (f, wrt names, variant, optimize, shape facts of the parameters,
    tuple result, loop checkpointing strategy).

    `scalars`: frozenset of (parameter, Fact) from `argument_facts`; a bare parameter name
    stands for a real scalar. Code made while f, or a function it calls, read other
    objects (a global or a closure cell rebound since) is not reused: see `runtime.reads`."""
    key = (wrt, variant, optimize, scalars, REGISTRY.version, as_tuple, checkpoint)
    read = values_read(f)
    try:
        found = kept(_cache[f][key], read)
    except KeyError:
        found = None
    if found is not None:
        return found
    with _cache_lock:
        entries = _cache.setdefault(f, {})
        found = kept(entries.get(key, ()), read)
        if found is None:
            building = getattr(_in_progress, "keys", None)
            if building is None:
                building = _in_progress.keys = set()
            building.add((f, wrt, variant))
            try:
                found = build(f, wrt, variant, optimize, scalars=scalars, as_tuple=as_tuple, checkpoint=checkpoint)
            finally:
                building.discard((f, wrt, variant))
            entries[key] = keep(entries.get(key, ()), read, found)
        return found


# Types whose values are real scalars: arguments of these types get code specialized on it.
# Not complex ones: the adjoint of a real operand of `x * s` must stay an `unbroadcast`
# (which takes its real part) when s is complex.
SCALAR_TYPES = frozenset({
    float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
})
_INTEGER_TYPES = frozenset({int, np.int64, np.int32})
_SCALAR_FACTS = {t: Fact(0, t in _INTEGER_TYPES) for t in SCALAR_TYPES}
_ARRAY_FACTS = {}  # (shape, dtype character) -> Fact or None
_MOST_SHAPES = 4096


def argument_class(a):
    """The shape class code is specialized on: a Fact for a real scalar or a real NumPy array
    (not a subclass): its rank, whether it holds integers, which of its dimensions have
    length 1; OBJECT for an object of the user's, whose methods, attributes and operators
    are its own (`runtime.receivers`); COMPLEX for a complex number or NumPy array (its real
    inputs' gradients are then made real in the generated code, see `reverse`); else None
    (a list, a Dask array...)."""
    fact = _SCALAR_FACTS.get(type(a))
    if fact is not None:
        return fact
    if type(a) is np.ndarray:
        shape = a.shape
        key = (shape, a.dtype.char)
        try:
            return _ARRAY_FACTS[key]  # every call of a gradient function asks: keep it a lookup
        except KeyError:
            pass
        kind = a.dtype.kind
        fact = Fact(len(shape), kind in "iu", tuple([n == 1 for n in shape])) if kind in "fiu" else (
            COMPLEX if kind == "c" else None)
        if len(_ARRAY_FACTS) >= _MOST_SHAPES:
            _ARRAY_FACTS.clear()
        _ARRAY_FACTS[key] = fact
        return fact
    if isinstance(a, (complex, np.complexfloating)):
        return COMPLEX
    refuse_an_array_subclass(a, "an argument")
    return OBJECT if is_object(a) else None


def argument_facts(positional, args, kwargs=None):
    """frozenset of (parameter, Fact) for the positional arguments with a shape class, and of
    (parameter, OBJECT) for the objects of the user's passed by name (`kwargs`)."""
    return frozenset(
        (n, fact) for n, a in zip(positional, args, strict=False) if (fact := argument_class(a)) is not None
    ) | _keyword_kinds(kwargs)


def _keyword_kinds(kwargs):
    """frozenset of (parameter, OBJECT) for the objects of the user's among `kwargs`."""
    if not kwargs:
        return frozenset()
    for k, v in kwargs.items():
        refuse_an_array_subclass(v, f"the argument {k}=")
    return frozenset((k, OBJECT) for k, v in kwargs.items() if is_object(v))


class Variants:
    """The generated functions of one (f, wrt, variant), specialized per shape class of the
    arguments (`argument_class`: real scalar, or real array of a given rank).

    Made, it has run the pipeline on `f` up to the transformation, raising what ssad
    refuses in it (`pipeline.check`), but compiled nothing: the first call compiles the
    code for its arguments' classes, and the general code (no shape assumed) is compiled
    when first asked for, so `grad(f)` and its first call compile once. `for_args(args)`
    looks that the globals and closure cells `f` and its callees read are still the
    objects the code was made with (`runtime.reads.still_read`; after one was rebound,
    `f` is checked and compiled anew: a gradient function never runs code made for
    objects its function no longer reads), then costs one dict lookup keyed by the
    arguments' exact shapes and dtypes (`by_shapes`); a new key is classed once
    (`by_mask`: the arguments' classes).
    """

    def __init__(self, f, wrt, variant, optimize, as_tuple=False, checkpoint=None):
        self.f, self.wrt, self.variant, self.optimize, self.as_tuple = f, wrt, variant, optimize, as_tuple
        self.checkpoint = checkpoint
        self.positional = parameters(f)[0]
        check(f, wrt, variant)
        self._made_with()

    def _made_with(self):
        """Forget the code made with objects f no longer reads (the code made next raises
        what ssad refuses with the objects of now)."""
        self.reads = watch(self.f)  # each call looks that f still reads these objects
        self._general = None
        self.by_mask = {}
        self.by_shapes = {}  # (shape, dtype) or type per argument -> the entry of their classes

    @property
    def general(self):
        """The Compiled code that assumes nothing of the arguments' shapes."""
        if not still_read(self.reads):
            self._made_with()
        if self._general is None:
            self._general = compiled(
                self.f, self.wrt, self.variant, self.optimize, as_tuple=self.as_tuple, checkpoint=self.checkpoint
            )
            # code that differentiates this code again is made, for the arguments it is called
            # with, from the code specialized for them (see `code_for`)
            self._general.function._ssad_variants = self
        return self._general

    def for_args(self, args, kwargs=None):
        # every call of a gradient function asks: are the globals and closure cells f and its
        # callees read still those the code was made with (a notebook rebinds `W`), then one
        # key of the arguments' exact shapes, which determine their classes
        if not still_read(self.reads):
            self._made_with()
        key = tuple([(a.shape, a.dtype.char) if type(a) is np.ndarray else type(a) for a in args])
        if kwargs:  # by name, an object of the user's is a class of its own too
            key += tuple([(k, type(v)) for k, v in kwargs.items()])
        try:
            return self.by_shapes[key]
        except KeyError:
            pass
        classes, named = tuple([argument_class(a) for a in args]), _keyword_kinds(kwargs)
        mask = classes + tuple(sorted(named))
        entry = self.by_mask.get(mask)
        if entry is None:
            facts = frozenset((n, fact) for n, fact in zip(self.positional, classes, strict=False) if fact is not None)
            facts |= named
            entry = (
                compiled(code_for(self.f, args, kwargs), self.wrt, self.variant, self.optimize, facts, self.as_tuple,
                         self.checkpoint)
                if facts else self.general
            )
            self.by_mask[mask] = entry
        if len(self.by_shapes) >= _MOST_SHAPES:
            self.by_shapes.clear()
        self.by_shapes[key] = entry
        return entry


def code_for(f, args, kwargs=None):
    """`f`, or, for the general code of a gradient ssad made (`grad(f)` differentiated again),
    that gradient's code specialized for `args` and `kwargs`: what the kinds of the arguments
    tell (an object's own operators and methods, `runtime.receivers`) is in that code, not in
    the general one."""
    variants = getattr(f, "_ssad_variants", None)
    return f if variants is None else variants.for_args(args, kwargs).function


handles.install(compiled, under_way)
passed.install(changed_or_written, module_objects)
