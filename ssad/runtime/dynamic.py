"""Calls to function values, dispatched when they run.

`apply(f, x)` calls whatever `f` holds: a NumPy function, one of the user's own
functions, a closure, a `functools.partial`, a bound method. The forward sweep
calls `call_forward(f, *args, **kwargs)`, which returns the value and a pullback;
the adjoint sweep calls `pullback(d_value)`, which returns the adjoint of the
function value itself (what a closure captured, a partial's bound arguments and
function, a method's `self`; None for a plain function), one adjoint per positional
argument, and last a dict with the adjoints of the keyword arguments.
"""

import functools
import inspect

import numpy as np

from ..errors import MissingRuleError
from ..registry import REGISTRY, draw_refusal, primitive_name, undeclared_draw
from .callables import (callable_instance, made_by_ssad, refused_inside, tangent_parameter, transformable,
                        unwrapped)
from .closures import Closure, own_names, own_tangents
from .handles import JVP, VJP, resolve
from .layouts import VjpLayout, bound_positional
from .partials import partial_parts
from .locations import caller_location
from .receivers import argument_kinds
from .refusals import is_discrete
from .structure import add_attr, zeros_like_value


class _RuleKeywords(dict):
    """Keyword adjoints of a rule call: rules differentiate positional arguments only."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def __missing__(self, key):
        raise MissingRuleError(
            f"the adjoint rule of {primitive_name(self.function)} gives gradients to positional "
            f"arguments only; pass `{key}` positionally",
            *caller_location(),
        )


def call_forward(function, *args, **kwargs):
    """(function(*args, **kwargs), pullback) for a function value known only when the code runs."""
    function = unwrapped(function)
    own = getattr(type(function), "ssad_call_forward", None)
    if own is not None:  # a value that differentiates its own calls (a `pullbacks.Pullback`)
        return own(function, *args, **kwargs)
    if isinstance(function, functools.partial):
        return _partial_forward(function, args, kwargs)
    if inspect.ismethod(function) and frozen_distribution(function.__self__):
        return method_forward(function.__self__, function.__name__, *args, **kwargs)
    if inspect.ismethod(function) and REGISTRY.adjoint_rule(function) is None:
        value, inner_pullback = call_forward(function.__func__, function.__self__, *args, **kwargs)

        def method_pullback(d_value):
            adjoints = inner_pullback(d_value)
            return adjoints[1:]  # self's adjoint stands for the bound method's

        return value, method_pullback
    if isinstance(function, Closure):
        return _compiled_forward(function.template, args, kwargs, function.captured)
    rule = REGISTRY.adjoint_rule(function)
    if rule is not None:
        value = function(*args, **kwargs)

        def rule_pullback(d_value):
            return rule_adjoints(function, rule(d_value, value, *args, **kwargs), len(args))

        return value, rule_pullback
    if undeclared_draw(function):  # called here because an operand carries a gradient
        raise MissingRuleError(draw_refusal(function), *caller_location())
    if has_no_derivative(function):
        value = function(*args, **kwargs)
        return value, lambda d_value: zero_adjoints(args, kwargs)
    if transformable(function):
        return _compiled_forward(function, args, kwargs, {})
    if callable_instance(function) is not None:  # `layer(x)`: layer.__call__(x), self getting an adjoint
        value, pullback = call_forward(callable_instance(function), function, *args, **kwargs)
        return value, lambda d_value: pullback(d_value)[1:]  # self stands for the object called
    if _of_numpy(function) and all(is_discrete(a) for a in args) and all(is_discrete(v) for v in kwargs.values()):
        # a NumPy function given integers, masks, an axis only (`np.add.reduce(hits, axis=axis)`
        # with the axis a helper passes on) counts or shapes: a zero derivative, as for `range(n)`
        value = function(*args, **kwargs)
        return value, lambda d_value: (None,) * (len(args) + 1) + ({k: None for k in kwargs},)
    if made_by_ssad(function) is not None:
        raise MissingRuleError(refused_inside(function), *caller_location())
    raise MissingRuleError(
        f"no adjoint rule for {primitive_name(function)}, called through a variable with values "
        f"that carry gradients; register one with @ssad.adjoint({getattr(function, '__name__', 'f')})",
        *caller_location(),
    )




def rule_adjoints(function, adjoints, count):
    """The adjoints an adjoint rule of `function` gives its `count` positional arguments,
    as a pullback of `call_forward` gives them."""
    adjoints = tuple(adjoints)[:count]  # a rule may name optional arguments the call left out
    return (None,) + adjoints + (None,) * (count - len(adjoints)) + (_RuleKeywords(function),)


def _compiled_forward(function, args, kwargs, captured):
    """A call to the user's function (or a closure's template), differentiated by its own vjp."""
    layout = VjpLayout(function, args, kwargs, captured)
    entry = resolve(function, layout.wrt, VJP, kinds_of(function, args, {**kwargs, **captured}))
    value, residuals = entry.function(*args, **kwargs, **captured)
    backward = entry.backward

    def compiled_pullback(d_value):
        return layout.pullback_adjoints(backward(d_value, residuals))

    return value, compiled_pullback


def _partial_forward(function, args, kwargs):
    value, inner_pullback = call_forward(function.func, *function.args, *args, **{**function.keywords, **kwargs})

    def partial_pullback(d_value):
        return partial_adjoints(function, kwargs, inner_pullback(d_value))

    return value, partial_pullback


def partial_adjoints(function, kwargs, adjoints):
    """A pullback's adjoints of the call `function.func(*function.args, *args, **kwargs)` as
    those of `function(*args, **kwargs)`: the partial's adjoint is (its bound arguments',
    {its bound keywords'}, its function's: what a closure it holds captured)."""
    bound = len(function.args)
    positional = adjoints[1:-1]
    keyword = adjoints[-1]
    if isinstance(keyword, _RuleKeywords):
        # a rule differentiates no keyword: reading one that carries a gradient raises
        return (tuple(positional[:bound]), keyword, adjoints[0]), *positional[bound:], keyword
    # a keyword the call gives again is the call's: the partial's own gets none
    d_partial = (tuple(positional[:bound]), {k: None if k in kwargs else keyword[k] for k in function.keywords},
                 adjoints[0])
    return (d_partial,) + tuple(positional[bound:]) + ({k: keyword[k] for k in kwargs},)


def frozen_distribution(receiver):
    """Whether `receiver` is a frozen scipy.stats distribution (`norm(0.0, 2.0)`), whose
    method `m(x)` is the distribution's `m(x, *parameters)`."""
    return type(receiver).__module__.startswith("scipy.stats") and hasattr(receiver, "dist") and hasattr(
        receiver, "kwds")


def _distribution_method(receiver, method):
    """The method of scipy.stats's own instance of a frozen distribution's family (`scipy.stats.norm`),
    which the rules are registered on: the frozen value holds a copy of it."""
    import scipy.stats

    family = getattr(scipy.stats, getattr(receiver.dist, "name", ""), None)
    dist = family if type(family) is type(receiver.dist) else receiver.dist
    return getattr(dist, method)


def method_forward(receiver, method, *args, **kwargs):
    """(receiver.method(*args), pullback): the method's `self` gets an adjoint like any argument."""
    if frozen_distribution(receiver):  # its parameters are constants: the front end refuses others
        value, pullback = call_forward(_distribution_method(receiver, method), *args, *receiver.args,
                                       **{**receiver.kwds, **kwargs})

        def frozen_pullback(d_value):
            adjoints = pullback(d_value)
            return (None,) + tuple(adjoints[1 : 1 + len(args)]) + ({k: adjoints[-1].get(k) for k in kwargs},)

        return value, frozen_pullback
    if isinstance(receiver, super):  # `super().act(h)`: the parent's method bound to self, whose adjoint is self's
        return call_forward(getattr(receiver, method), *args, **kwargs)
    function = getattr(type(receiver), method, None)
    if function is None and not hasattr(receiver, method):
        raise MissingRuleError(
            f"a {type(receiver).__name__} has no method `{method}`; with a NumPy array use a NumPy "
            "function that has a rule, or register one with @ssad.adjoint",
            *caller_location(),
        )
    if function is None:
        bound = getattr(receiver, method)  # an attribute holding a function value
        value, pullback = call_forward(bound, *args, **kwargs)

        def attribute_pullback(d_value):
            adjoints = pullback(d_value)
            d_receiver = zeros_like_value(receiver)
            if d_receiver is not None and adjoints[0] is not None:
                d_receiver = add_attr(d_receiver, method, adjoints[0])
            return (d_receiver,) + tuple(adjoints[1:])

        return value, attribute_pullback
    value, pullback = call_forward(function, receiver, *args, **kwargs)

    def receiver_pullback(d_value):
        return pullback(d_value)[1:]

    return value, receiver_pullback


def kinds_of(function, args, kwargs):
    """The kinds of the arguments of a call of the user's `function` (see `receivers`), given
    by position and by name (a closure's captured values too): its code is compiled knowing
    which parameters hold objects of the user's (a method's `self`)."""
    names, _ = bound_positional(function, len(args))
    return argument_kinds(names + list(kwargs), args[: len(names)] + tuple(kwargs.values()))


# ----- forward mode -----


def call_jvp(function, d_function, primals, tangents, keywords=None, keyword_tangents=None):
    """(function(*primals, **keywords), its tangent) for a function value known only when it runs.

    `tangents` holds one tangent per primal and `keyword_tangents` one per keyword
    (None for none); `d_function` is the tangent of the function value itself (what
    a closure captured, a partial's bound arguments), or None.
    """
    function = unwrapped(function)
    keywords = dict(keywords or {})
    keyword_tangents = dict(keyword_tangents or {})
    own = getattr(type(function), "ssad_call_jvp", None)
    if own is not None:
        return own(function, d_function, primals, tangents, keywords, keyword_tangents)
    if isinstance(function, functools.partial):
        bound_tangents, bound_keyword_tangents, function_tangent = partial_parts(function, d_function)
        return call_jvp(
            function.func,
            function_tangent,
            tuple(function.args) + tuple(primals),
            tuple(bound_tangents) + tuple(tangents),
            {**function.keywords, **keywords},
            {**bound_keyword_tangents, **keyword_tangents},
        )
    if inspect.ismethod(function) and frozen_distribution(function.__self__):
        return method_jvp(function.__self__, None, function.__name__, primals, tangents, keywords, keyword_tangents)
    if inspect.ismethod(function) and REGISTRY.tangent_rule(function) is None:
        return call_jvp(
            function.__func__, None, (function.__self__,) + tuple(primals), (d_function,) + tuple(tangents),
            keywords, keyword_tangents,
        )
    if isinstance(function, Closure):
        captured_tangents = own_tangents(d_function or {}, own_names(function.captured))
        return _compiled_jvp(
            function.template, primals, tangents, keywords, keyword_tangents, function.captured, captured_tangents
        )
    rule = REGISTRY.tangent_rule(function)
    if rule is not None:
        if any(t is not None for t in keyword_tangents.values()):
            raise MissingRuleError(
                f"the tangent rule of {primitive_name(function)} differentiates positional arguments "
                "only; pass the keyword argument positionally",
                *caller_location(),
            )
        value = function(*primals, **keywords)
        filled = tuple(t if t is not None else zeros_like_value(p) for p, t in zip(primals, tangents, strict=True))
        return value, rule(filled, value, *primals, **keywords)
    if undeclared_draw(function) and not (_all_zero(tangents) and _all_zero(keyword_tangents.values())):
        raise MissingRuleError(draw_refusal(function), *caller_location())
    if has_no_derivative(function):
        value = function(*primals, **keywords)
        return value, zeros_like_value(value)
    if transformable(function):
        return _compiled_jvp(function, primals, tangents, keywords, keyword_tangents, {}, {})
    if callable_instance(function) is not None:
        return call_jvp(
            callable_instance(function), None, (function,) + tuple(primals), (d_function,) + tuple(tangents),
            keywords, keyword_tangents,
        )
    if _all_zero(tangents) and _all_zero(keyword_tangents.values()) and d_function is None:
        # nothing it is given moves (an axis or a count a helper passes on, a mask): neither does its value
        value = function(*primals, **keywords)
        return value, zeros_like_value(value)
    if made_by_ssad(function) is not None:
        raise MissingRuleError(refused_inside(function), *caller_location())
    raise MissingRuleError(
        f"no tangent rule for {primal_label(function)}, called through a variable with values that "
        f"carry tangents; register one with @ssad.tangent({getattr(function, '__name__', 'f')})",
        *caller_location(),
    )


def has_no_derivative(function):
    """Whether `function` is registered as having no derivative, or reads text."""
    return REGISTRY.is_nondifferentiable(function) or _of_text(function)


def zero_adjoints(args, kwargs):
    """The pullback's value for a function without a derivative: zero adjoints shaped like the
    arguments, which the caller's code adds as it adds any (a list's: a list), in every order."""
    return (None, *map(zeros_like_value, args), {k: None for k in kwargs})


def _of_numpy(function):
    """Whether `function` is NumPy's: a function of its modules, a ufunc or a ufunc's method."""
    module = getattr(function, "__module__", None) or ""
    return (module == "numpy" or module.startswith("numpy.") or isinstance(function, np.ufunc)
            or isinstance(getattr(function, "__self__", None), np.ufunc))


def _all_zero(tangents):
    """Whether every tangent is absent (None) or a number or array of zeros."""
    for t in tangents:
        if t is None:
            continue
        try:
            if not np.all(np.equal(t, 0)):
                return False
        except (TypeError, ValueError):  # a tangent of a list or dict: not looked into
            return False
    return True


def _of_text(function):
    """Whether `function` is a method of `str` or `bytes` (`k.startswith("W")`): text carries no
    derivative, whatever the code it is read in (a key iterated out of a dict of arrays, in a
    gradient that is differentiated again)."""
    return getattr(function, "__objclass__", None) in (str, bytes)


def primal_label(function):
    return primitive_name(function)


def _compiled_jvp(function, primals, tangents, keywords, keyword_tangents, captured, captured_tangents):
    names, rest = bound_positional(function, len(primals))
    given = {n: t for n, t in zip(names, tangents, strict=False) if t is not None}
    if rest and any(t is not None for t in tangents[len(names) :]):
        # the values `*args` collects take one tuple of tangents, zeros where none is given
        given[rest[0]] = tuple(
            t if t is not None else zeros_like_value(p)
            for p, t in zip(primals[len(names) :], tangents[len(names) :], strict=True)
        )
    parameters = inspect.signature(function).parameters
    given.update({k: t for k, t in keyword_tangents.items() if t is not None and k in parameters})
    options = next((p for p, v in parameters.items() if v.kind is inspect.Parameter.VAR_KEYWORD), None)
    collected = [k for k in keywords if k not in parameters] if options else []
    if any(keyword_tangents.get(k) is not None for k in collected):
        # the keywords `**options` collects take one dict of tangents, zeros where none is given
        given[options] = {k: keyword_tangents[k] if keyword_tangents.get(k) is not None else
                          zeros_like_value(keywords[k]) for k in collected}
    given.update({k: t for k, t in captured_tangents.items() if t is not None and k in captured})
    order = list(parameters)
    entry = resolve(function, tuple(sorted(given, key=order.index)), JVP,
                    kinds_of(function, primals, {**keywords, **captured}))
    tangent_keywords = {tangent_parameter(n): t for n, t in given.items()}
    return entry.function(*primals, **keywords, **captured, **tangent_keywords)


def method_jvp(receiver, d_receiver, method, primals, tangents, keywords=None, keyword_tangents=None):
    """(receiver.method(*primals), its tangent); `self` carries the tangent `d_receiver`."""
    if frozen_distribution(receiver):
        return call_jvp(_distribution_method(receiver, method), None, tuple(primals) + tuple(receiver.args),
                        tuple(tangents) + (None,) * len(receiver.args), {**receiver.kwds, **(keywords or {})},
                        keyword_tangents)
    if isinstance(receiver, super):  # the parent's method bound to self, whose tangent is self's
        return call_jvp(getattr(receiver, method), d_receiver, primals, tangents, keywords, keyword_tangents)
    function = getattr(type(receiver), method, None)
    if function is None:
        bound = getattr(receiver, method)
        d_bound = getattr(d_receiver, method, None) if d_receiver is not None else None
        return call_jvp(bound, d_bound, primals, tangents, keywords, keyword_tangents)
    return call_jvp(
        function, None, (receiver,) + tuple(primals), (d_receiver,) + tuple(tangents), keywords, keyword_tangents
    )
