"""The rule registry: which callables are primitives, and how to differentiate them.

A primitive is a live callable (``np.sin``, ``math.exp``, ``operator.mul``,
``np.ndarray.sum``) or an attribute descriptor (``np.ndarray.T``). Keys are the
objects themselves, so ``np.sin``, ``numpy.sin`` and ``from numpy import sin`` are
one primitive.

Adjoint rules
-------------
An adjoint rule is a plain Python function::

    @adjoint(np.sin)
    def sin_adjoint(dy, y, x):
        return (dy * np.cos(x),)

``dy`` is the adjoint of the primitive's result ``y``; the remaining parameters
receive the call's positional and keyword arguments exactly as the call passed
them. The rule returns a tuple with one adjoint per positional argument of the
call (``None`` where there is no gradient, e.g. for an ``axis`` passed
positionally). An argument past the end of the returned tuple gets no gradient;
the compiler refuses to drop the gradient of an *active* argument that way.

Rules are ordinary runnable code, so each is tested numerically on its own
(``ssad.testing.check_rule``). The compiler inlines a rule's body into the
generated source when the body is only assignments to names followed by
``return (e1, e2, ...)``, and every parameter default is a literal; otherwise it
emits a call to the rule. Write rules in that simple form where the math allows.

When a primitive returns a tuple, ``dy`` is a tuple with one adjoint per
component (zeros materialized, never ``None``).

Tangent rules
-------------
A tangent rule gives forward mode: ``rule(tangents, y, *args, **kwargs)`` returns
the tangent of ``y`` (shaped like ``y``; a tuple for a primitive that returns a
tuple), where ``tangents[i]`` is the tangent of positional argument ``i``, shaped
like it, and zero where that argument carries none (non-float arguments such as an
``axis`` get ``None``)::

    @tangent(np.sin)
    def sin_tangent(tangents, y, x):
        return tangents[0] * np.cos(x)

Like adjoint rules, a body of assignments and one ``return`` is inlined into the
generated code; a zero tangent is then a literal ``0.0`` that folds away
(``0.0 * x`` is dropped, as symbolic zeros are).

Non-differentiable primitives
-----------------------------
``nondifferentiable(f, ...)`` declares callables whose results carry no gradient
(shapes, indices, comparisons, ``np.zeros_like``...). A call to one never makes its
result active.

Effects
-------
Having no derivative is not the same as being pure. A primitive is *pure* when two
calls with equal arguments return equal values and change nothing else; only then
may the compiler compute it once for two calls (common subexpressions), drop a call
whose result is unused, or recompute it in the adjoint sweep instead of saving it
(a loop-invariant value). Random draws are the common impure primitives: everything
in ``numpy.random`` and ``random``, and the methods of NumPy's ``Generator`` and
``RandomState``. ``nondifferentiable(f, pure=False)`` and ``impure(f)`` declare
others. `is_pure` is the one effect model the optimizer, the tape and CSE share.

Rules for optional libraries
----------------------------
The rules for SciPy live in modules that import SciPy. ``defer("scipy.special", module)``
registers them the first time the registry is asked anything after ``scipy.special`` has
been imported (a function that calls it has imported it), so ssad itself never imports
SciPy and works without it.
"""

import importlib
import random
import sys
import threading

import numpy as np

# Objects whose methods draw random numbers (and so change their own state).
_RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)
_IMPURE_BUILTINS = (print, input, open, next, iter)
# Impure callables whose only effect is output: they change none of their arguments, and a
# statement calling one adds nothing to a derivative.
PRINTS = (print,)


class Registry:
    """Maps primitives to adjoint and tangent rules; `version` changes on every edit."""

    def __init__(self):
        self._adjoints = {}
        self._tangents = {}
        self._nondifferentiable = {}
        self._impure = set()
        self._forms = {}  # helper -> form(*ranks) -> source of its plain form for those ranks, or None
        self._deferred = {}  # library -> rule modules registered once it is imported
        self._lock = threading.Lock()
        self.version = 0

    def defer(self, library, *modules):
        """Import the rule `modules` once `library` has been imported (see the module docstring)."""
        self._deferred.setdefault(library, []).extend(modules)
        self._load_deferred()

    def _load_deferred(self):
        if not self._deferred:
            return
        for library in [name for name in self._deferred if name in sys.modules]:
            modules = self._deferred.pop(library, ())
            for module in modules:
                importlib.import_module(module)

    # ----- registration -----

    def register_adjoint(self, primitive, rule):
        _check_hashable(primitive)
        with self._lock:
            self._adjoints[primitive] = rule
            self._nondifferentiable.pop(primitive, None)
            self.version += 1

    def register_tangent(self, primitive, rule):
        _check_hashable(primitive)
        with self._lock:
            self._tangents[primitive] = rule
            self.version += 1

    def register_nondifferentiable(self, primitive):
        _check_hashable(primitive)
        with self._lock:
            self._nondifferentiable[primitive] = True
            self.version += 1

    def register_form(self, helper, form):
        with self._lock:
            self._forms[helper] = form
            self.version += 1

    def specialized_form(self, helper, ranks):
        """The source of `helper`'s plain form for its arguments' ranks, or None (see `specialized`)."""
        form = self._forms.get(helper)
        return form(*ranks) if form is not None else None

    def register_impure(self, primitive):
        _check_hashable(primitive)
        with self._lock:
            self._impure.add(primitive)
            self.version += 1

    # ----- lookup -----

    def is_pure(self, primitive):
        """Whether equal arguments give equal results with no other effect (see "Effects")."""
        try:
            if primitive in self._impure or primitive in _IMPURE_BUILTINS:
                return False
        except TypeError:
            return False
        return not _draws_random_numbers(primitive)

    def adjoint_rule(self, primitive):
        """The adjoint rule of `primitive`, or None."""
        self._load_deferred()
        try:
            return self._adjoints.get(primitive)
        except TypeError:  # unhashable callable: cannot be a registered primitive
            return None

    def tangent_rule(self, primitive):
        self._load_deferred()
        try:
            return self._tangents.get(primitive)
        except TypeError:
            return None

    def is_nondifferentiable(self, primitive):
        self._load_deferred()
        try:
            if primitive in self._nondifferentiable:
                return True
        except TypeError:
            return False
        return is_random_draw(primitive) and primitive not in self._adjoints

    def is_primitive(self, primitive):
        """Whether `primitive` has an adjoint rule or is nondifferentiable (see `has_rule`)."""
        return self.adjoint_rule(primitive) is not None or self.is_nondifferentiable(primitive)

    def has_rule(self, primitive, mode):
        """Whether `primitive` has a rule for `mode` ("reverse": an adjoint rule, "forward": a
        tangent rule) or is nondifferentiable. A user function without one is transformed
        from its source in that mode."""
        if mode == "forward":
            rule = self.tangent_rule(primitive)
        else:
            rule = self.adjoint_rule(primitive)
        return rule is not None or self.is_nondifferentiable(primitive)

    def adjoint_primitives(self):
        self._load_deferred()
        return list(self._adjoints)

    def nondifferentiable_primitives(self):
        self._load_deferred()
        return list(self._nondifferentiable)


def _draws_random_numbers(primitive):
    """NumPy's and Python's random functions, and the methods of their generators."""
    owner = getattr(primitive, "__self__", None)
    if isinstance(owner, _RANDOM_STATES) or isinstance(primitive, _RANDOM_STATES):
        return True
    module = getattr(primitive, "__module__", None) or ""
    if module == "random" or module.startswith("numpy.random"):
        return True
    objclass = getattr(primitive, "__objclass__", None)
    return isinstance(objclass, type) and issubclass(objclass, _RANDOM_STATES)


# Draws that change no argument: non-differentiable (their values are constants of
# the function). `shuffle` writes into its argument and `seed` draws nothing: neither
# is a draw in this sense.
_NOT_DRAWS = {"shuffle", "seed", "set_state", "get_state", "bit_generator", "spawn", "jumped", "setstate", "getstate"}


def is_random_draw(primitive):
    """A random draw: no derivative, impure, and refused when a parameter carries a gradient."""
    return _draws_random_numbers(primitive) and getattr(primitive, "__name__", None) not in _NOT_DRAWS


def _check_hashable(primitive):
    try:
        hash(primitive)
    except TypeError:
        from .errors import SsadError

        raise SsadError(
            f"cannot register a rule for {primitive!r}: it is not hashable. "
            "Register the function object itself (for example np.sin, not a partial of it)."
        ) from None


REGISTRY = Registry()


def adjoint(primitive):
    """Register an adjoint rule: ``rule(dy, y, *args, **kwargs) -> tuple``.

    The rule returns one adjoint per positional argument of the call (``None`` for
    no gradient). Used as a decorator; returns the rule unchanged so it stays
    callable and testable::

        @ssad.adjoint(my_softplus)
        def my_softplus_adjoint(dy, y, x):
            return (dy / (1 + np.exp(-x)),)

    A rule on a user function wins over transforming that function's body.
    """

    def register(rule):
        REGISTRY.register_adjoint(primitive, rule)
        return rule

    return register


def tangent(primitive):
    """Register a forward-mode rule: ``rule(tangents, y, *args, **kwargs) -> tangent_of_y``.

    ``tangents[i]`` is the tangent of positional argument ``i``, shaped like it (zero
    where it carries none; ``None`` for non-float arguments); the rule returns the
    tangent of the primitive's result ``y``, shaped like ``y``. Used as a decorator;
    returns the rule unchanged::

        @ssad.tangent(my_softplus)
        def my_softplus_tangent(tangents, y, x):
            return tangents[0] / (1 + np.exp(-x))
    """

    def register(rule):
        REGISTRY.register_tangent(primitive, rule)
        return rule

    return register


def specialized(*helpers):
    """Register the plain forms of rule helpers for known ranks: ``form(*ranks) -> source``.

    A helper that generated code calls (``matmul_left_adjoint(dy, a, b)``) is general:
    it inspects its arguments' shapes at run time. When the arguments' ranks are known
    at compile time (see `analysis.ranks`), the compiler asks ``form`` with one rank per
    parameter of the helper; a string returned is an expression in the helper's parameter
    names (and ``np``) that equals the helper's result for real arguments of those ranks,
    and replaces the call. ``None`` keeps the call::

        @specialized(matmul_left_adjoint)
        def _matmul_left_form(dy, a, b):
            return {(1, 1): "dy * b", (2, 2): "dy @ b.T"}.get((a, b))
    """

    def register(form):
        for helper in helpers:
            REGISTRY.register_form(helper, form)
        return form

    return register


def nondifferentiable(*primitives, pure=True):
    """Declare primitives whose results carry no gradient (shapes, indices, tests).

    With ``pure=False`` they are also impure (see `impure`): a draw of random numbers
    has no derivative, but two draws are not the same value.
    """
    for primitive in primitives:
        REGISTRY.register_nondifferentiable(primitive)
        if not pure:
            REGISTRY.register_impure(primitive)


def impure(*primitives):
    """Declare primitives with effects: each call may return a new value or change state.

    The compiler then never merges two calls, drops an unused call, or recomputes a
    call's result instead of saving it. NumPy's and Python's random functions are
    impure without being declared.
    """
    for primitive in primitives:
        REGISTRY.register_impure(primitive)


def primitive_name(primitive):
    """A readable dotted name for a primitive, for messages: ``numpy.sin``."""
    if isinstance(primitive, str):
        return primitive
    owner = getattr(primitive, "__objclass__", None)
    name = getattr(primitive, "__qualname__", None) or getattr(primitive, "__name__", None)
    if owner is not None and name is not None:
        module = getattr(owner, "__module__", None)
        return f"{module}.{name}" if module and module != "builtins" else name
    module = getattr(primitive, "__module__", None)
    if name is None:
        return repr(primitive)
    distribution = _distribution_of(primitive)
    if distribution is not None:
        return f"scipy.stats.{distribution}.{primitive.__name__}"
    if module is None and isinstance(primitive, np.ufunc):  # SciPy's ufuncs name no module
        for library in ("numpy", "scipy.special"):
            if getattr(sys.modules.get(library), name, None) is primitive:
                return f"{library}.{name}"
    if module in (None, "builtins"):
        return name
    module = module.lstrip("_") if module in ("_operator", "_functools") else module
    if module.startswith("numpy"):
        module = "numpy" if module.startswith("numpy._core") or module.startswith("numpy.core") else module
    if module.startswith("scipy."):  # the public subpackage, not the private module defining it
        public = []
        for part in module.split("."):
            if part.startswith("_"):
                break
            public.append(part)
        module = ".".join(public)
    return f"{module}.{name}"


def _distribution_of(primitive):
    """The name of the scipy.stats distribution whose method `primitive` is (`norm` for
    `scipy.stats.norm.logpdf`), else None."""
    owner = getattr(primitive, "__self__", None)
    if owner is None or not type(owner).__module__.startswith("scipy.stats"):
        return None
    name = getattr(owner, "name", None)
    return name if isinstance(name, str) else type(owner).__name__.removesuffix("_gen")


def undeclared_draw(function):
    """A random draw (a generator's method: `rng.normal`) not registered as nondifferentiable."""
    return is_random_draw(function) and function not in REGISTRY.nondifferentiable_primitives()


def draw_refusal(function):
    """Why a draw whose parameters carry gradients is refused where the code runs."""
    return (f"`{primitive_name(function)}` draws random numbers with a parameter that carries a gradient; a draw "
            "has no derivative. Reparameterize: draw a standard sample and transform it (`mu + sigma * "
            "rng.standard_normal(shape)`), so the gradient flows through `mu` and `sigma`")
