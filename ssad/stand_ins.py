"""Any callable as a Python function ssad compiles: a stand-in for what is not a `def`.

ssad compiles Python functions. A `functools.partial`, a bound method, an object whose
class defines `__call__`, and a function ssad has a rule for (`np.sin`, `np.sum`,
`scipy.special.expit`) each become a stand-in: a generated one-line `def` with the
signature the callable is called with, which calls it::

    def loss(x, *, a=1.0):          # functools.partial(loss, a=1.0)
        return loss(x, a=a)

Its source is registered in linecache, so ssad reads it like any function's; its
parameters are what `wrt` names (a partial's remaining ones, a method's without `self`).

Assumes: the rule registry, and `callables` for what the user's own code is.
Guarantees: `as_function(f)` is f itself for a `def` or lambda, a stand-in otherwise, or
None for a callable ssad can neither read nor differentiate; a stand-in calls a primitive
only with parameters its rules take at the primitive's own defaults, so it computes what
the primitive computes.
"""

import builtins
import functools
import inspect
import itertools
import keyword
import linecache
import math
import threading
import types
import weakref

import numpy as np

from .errors import SsadError
from .registry import REGISTRY
from .runtime.callables import callable_instance, function_label, unwrapped


_NO_VALUE = getattr(np, "_NoValue", object())  # NumPy's "not passed" default
_LITERALS = (int, float, bool, str, type(None))
_stand_in_lock = threading.Lock()
_stand_in_count = itertools.count(1)
_kept = weakref.WeakKeyDictionary()  # callable -> {how: (rule-registry version, function)}
_kept_strongly = {}  # the same for callables without weak references (np.sin lives for good)


def as_function(f, how=None):
    """`f` as a Python function ssad compiles, or None when ssad can neither read nor
    differentiate it (a C function without a rule).

    A `def` or lambda is itself; a partial, a bound method, a callable object or a function
    with a registered rule is a stand-in calling it. `how="summed"` makes a stand-in that
    returns `np.sum` of f's result (`elementwise_grad`); `how="aux"` a function ssad compiles
    with the aux of each `return value, aux` cut off from the gradient (`has_aux=True`).
    """
    if how is None and inspect.isfunction(f):
        return f
    version = REGISTRY.version  # a rule registered since may change the parameters of a stand-in
    kept = _kept_for(f, how)
    made_then, made = kept.get(how, (None, None)) if kept is not None else (None, None)
    if made_then != version:
        made = _made(f, how)
        if kept is not None and made is not None:
            with _stand_in_lock:
                kept[how] = (version, made)
    return made


def _kept_for(f, how):
    """Where the functions made of `f` are kept, or None where they are not: a bound method
    is made anew at each `obj.method`, and a function summed would be kept alive by its
    stand-in, which calls it. Primitives live for good: they are kept in a plain dict."""
    with _stand_in_lock:
        if _has_rule(f):
            try:
                return _kept_strongly.setdefault(f, {})
            except TypeError:  # unhashable
                return None
        if inspect.ismethod(f) or callable_instance(f) is not None or (how == "summed" and inspect.isfunction(f)):
            return None
        try:
            return _kept.setdefault(f, {})
        except TypeError:
            return None


def _made(f, how):
    if how == "aux" and inspect.isfunction(f):
        return _aux_copy(f)
    call = _call_of(f)
    if call is None:
        return None
    if how == "summed":
        return call.stand_in(outer=np.sum, outer_label="sum")
    if how == "aux":
        if inspect.isfunction(call.callee):
            call.callee = _aux_copy(call.callee)
        made = call.stand_in()
        made._ssad_has_aux = True
        return made
    return call.stand_in()


def _aux_copy(f):
    """A copy of `f` (same code, globals, closure and defaults) the compiler reads with the
    aux of each `return value, aux` cut off from the gradient (`backend.pipeline.aux_cut_off`)."""
    copied = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    copied.__kwdefaults__ = f.__kwdefaults__
    copied.__qualname__ = f.__qualname__
    copied.__module__ = f.__module__
    copied.__doc__ = f.__doc__
    copied._ssad_has_aux = True
    return copied


def _has_rule(f):
    return (
        REGISTRY.adjoint_rule(f) is not None
        or REGISTRY.tangent_rule(f) is not None
        or REGISTRY.is_nondifferentiable(f)
    )


class _Call:
    """How a callable is called: its parameters (a list of `inspect.Parameter`), how each is
    passed on ("positional", "keyword" or "star"), the callable called, and the positional
    arguments bound ahead of them (a partial's, a method's `self`) as [(name, value)]."""

    def __init__(self, label, qualname, parameters, passing, callee, bound=()):
        self.label, self.qualname = label, qualname
        self.parameters, self.passing = parameters, passing
        self.callee, self.bound = callee, list(bound)

    def bound_by(self, args, keywords, label=None, qualname=None):
        """The call of `functools.partial(<this callable>, *args, **keywords)`."""
        signature = inspect.Signature(self.parameters)
        standing = lambda *a, **k: None  # noqa: E731 - only its signature is read
        standing.__signature__ = signature
        try:
            partial = inspect.signature(functools.partial(standing, *args, **keywords))
        except (TypeError, ValueError) as error:
            raise SsadError(
                f"{qualname or self.qualname} binds arguments {self.qualname} does not take as ssad calls it "
                f"({error}); bind only the parameters of {self.qualname}{signature}"
            ) from None
        positional = [p for p in self.parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in self.parameters if p.kind is p.VAR_POSITIONAL), "args")
        names = [p.name for p in positional[: len(args)]]
        names += [f"{star}_{i}" for i in range(len(args) - len(names))]
        parameters = list(partial.parameters.values())
        passing = {
            p.name: "keyword" if p.kind is p.KEYWORD_ONLY else self.passing.get(p.name, "keyword")
            for p in parameters
        }
        return _Call(label or self.label, qualname or self.qualname, parameters, passing, self.callee,
                     self.bound + list(zip(names, args, strict=True)))

    def stand_in(self, outer=None, outer_label=None):
        """The generated `def` with these parameters that calls the callee (inside `outer`, if given)."""
        parameters = [p for p in self.parameters if p.kind is not p.VAR_KEYWORD]
        taken = {p.name for p in parameters}
        callee = _fresh(self.label, taken)
        bound = [(_fresh(name, taken), value) for name, value in self.bound]
        scope = {callee: self.callee, **dict(bound)}
        passed = [name for name, _ in bound]
        for p in parameters:
            how = self.passing.get(p.name, "keyword")
            passed.append(f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name if how == "positional"
                          else f"{p.name}={p.name}")
        body = f"{callee}({', '.join(passed)})"
        if outer is not None:
            name = _fresh(outer_label, taken)
            scope[name] = outer
            body = f"{name}({body})"
        source = f"def {self.label}({_header(parameters)}):\n    return {body}\n"
        filename = f"<ssad stand-in for {self.qualname} #{next(_stand_in_count)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = compile(source, filename, "exec")
        function = types.FunctionType(
            next(c for c in code.co_consts if isinstance(c, types.CodeType)),
            {"__builtins__": builtins, "__name__": "ssad_generated", **scope},
            self.label,
        )
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        defaults = [p.default for p in positional if p.default is not p.empty]
        function.__defaults__ = tuple(defaults) or None
        function.__kwdefaults__ = {
            p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY and p.default is not p.empty
        } or None
        function.__qualname__ = self.qualname
        function.__doc__ = getattr(self.callee, "__doc__", None)
        return function


def _call_of(f):
    """The `_Call` of `f`, or None when ssad can neither read nor differentiate it."""
    f = unwrapped(f)
    if inspect.isfunction(f):
        return _function_call(f)
    if _has_rule(f):
        return _primitive_call(f)
    if isinstance(f, functools.partial):
        inner = _call_of(f.func)
        if inner is None:
            return None
        return inner.bound_by(f.args, f.keywords, qualname=f"partial({inner.qualname})")
    if inspect.ismethod(f):
        inner = _call_of(f.__func__)
        return None if inner is None else inner.bound_by((f.__self__,), {})
    method = callable_instance(f)
    if method is not None:
        cls = type(f).__name__
        return _function_call(method).bound_by((f,), {}, label=_identifier(cls), qualname=f"{cls}.__call__")
    return None


def _function_call(f):
    parameters = list(inspect.signature(f).parameters.values())
    passing, in_order = {}, True
    for p in parameters:
        in_order = in_order and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        passing[p.name] = "positional" if in_order else "keyword"
    return _Call(function_label(f), f.__qualname__, parameters, passing, f)


def _primitive_call(f):
    """A primitive called with its required parameters (and those its rules require, as x and
    y of `np.where`), and, for one written in Python, with the optional ones its rules take
    with the same defaults (`axis`, `keepdims` of `np.sum`; never `out`). Parameters after one
    left out are keyword-only, so no argument lands in another's place."""
    rules = [r for r in (REGISTRY.adjoint_rule(f), REGISTRY.tangent_rule(f)) if r is not None]
    rule_parameters = [list(inspect.signature(r).parameters.values())[2:] for r in rules]
    label = _identifier(getattr(f, "__name__", None) or "primitive")
    qualname = getattr(f, "__qualname__", label)
    try:
        own = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        own = None
    if own is None or {p.kind for p in own} >= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
        return _call_by_rule(f, label, qualname, rule_parameters[0] if rule_parameters else None)
    in_python = inspect.isfunction(inspect.unwrap(f))
    parameters, passing, keyword_only, optional = [], {}, False, False
    for index, p in enumerate(own):
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            parameters.append(p)
            passing[p.name] = "star"
            keyword_only = True
            continue
        kind = p.KEYWORD_ONLY if keyword_only or p.kind is p.KEYWORD_ONLY else _POSITIONAL
        if p.default is p.empty or (
            not optional and kind is _POSITIONAL and any(_requires(ps, index) for ps in rule_parameters)
        ):
            parameters.append(p.replace(kind=kind, default=p.empty))
            passing[p.name] = "keyword" if kind is p.KEYWORD_ONLY else "positional"
        elif in_python and rule_parameters and p.name != "out" and all(_same_default(p, ps) for ps in rule_parameters):
            parameters.append(p.replace(kind=kind, default=next(q.default for q in rule_parameters[0] if q.name == p.name)))
            passing[p.name] = "keyword"
            optional = optional or kind is _POSITIONAL
        else:
            keyword_only = keyword_only or kind is _POSITIONAL  # later ones keep their names, not places
    return _Call(label, qualname, parameters, passing, f)


_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _call_by_rule(f, label, qualname, rule_parameters):
    """A primitive whose own signature says nothing (`*args, **kwargs`), called as its adjoint
    rule takes it: the rule's positional parameters up to the first optional one without a
    literal default (`loc=0.0, scale=1.0` of a distribution's `pdf`) and its `*args`, all
    passed by position."""
    if rule_parameters is None:
        parameters = [inspect.Parameter("x", _POSITIONAL)]
    else:
        parameters = []
        for p in rule_parameters:
            if p.kind is p.VAR_POSITIONAL:
                parameters.append(p)
                break
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            if p.default is not p.empty and (p.default is None or not _is_literal(p.default)):
                break  # a None default stands for "not passed", which only leaving it out says
            parameters.append(p.replace(kind=_POSITIONAL))
    passing = {p.name: "star" if p.kind is p.VAR_POSITIONAL else "positional" for p in parameters}
    return _Call(label, qualname, parameters, passing, f)


def _requires(rule_parameters, index):
    """Whether a rule takes a required positional parameter at position `index`."""
    if index >= len(rule_parameters):
        return False
    q = rule_parameters[index]
    return q.default is q.empty and q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)


def _same_default(p, rule_parameters):
    """Whether a rule takes `p` with the default the primitive has, so that passing the rule's
    default on changes nothing."""
    q = next((q for q in rule_parameters if q.name == p.name and q.kind is not q.VAR_KEYWORD), None)
    if q is None or q.default is q.empty or not isinstance(q.default, _LITERALS):
        return False
    if p.default is _NO_VALUE:  # "not passed": the same as False only for NumPy's `keepdims`
        return p.name == "keepdims" and q.default is False
    return type(p.default) is type(q.default) and p.default == q.default


def _header(parameters):
    """The parameter list of a `def`: literal defaults written out, the others set after."""
    pieces, star = [], False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    show_positional = all(_is_literal(p.default) for p in positional if p.default is not p.empty)
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            pieces.append(f"*{p.name}")
            star = True
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            pieces.append("*")
            star = True
        shown = p.default is not p.empty and _is_literal(p.default) and (p.kind is p.KEYWORD_ONLY or show_positional)
        pieces.append(f"{p.name}={p.default!r}" if shown else p.name)
    return ", ".join(pieces)


def _is_literal(value):
    if type(value) is float:
        return math.isfinite(value)
    return type(value) in _LITERALS


def _identifier(name):
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))
    return name if name.isidentifier() and not keyword.iskeyword(name) else f"f_{name}"


def _fresh(name, taken):
    """`name`, or `name_2`, `name_3`... : the first not in `taken` (which it joins)."""
    candidate, n = name, 1
    while candidate in taken or keyword.iskeyword(candidate):
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate
