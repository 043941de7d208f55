"""Calls through function values in code that is differentiated again.

First-order code calls a function value as `v, v_pullback = call_forward(f, x)` and
later `v_pullback(d_v)`. Differentiated again (`hessian`, `grad(grad(f))`, a
gradient inside differentiated code), the front end reads that call as
`call_forward_packed(f, (x,), {})` (see `frontend.generated`), whose pullback is a
`Pullback`: a value that knows the function and the arguments of its call, so the
pullback's own call can be differentiated. Its tangent and its adjoint are those of
the call's inputs, `(the function value's, (the arguments'), {the keywords'})`.

A pullback called for its value alone runs the function's vjp then. Differentiated,
it runs the vjp of the function's generated code under `call_jvp` or `call_forward`:
the second derivative of the function, whatever the value holds (one of the user's
functions, a closure, a `functools.partial`, a bound method, a function with a rule).
"""

import functools
import inspect
import numbers
import types

from ..errors import MissingRuleError, SourceError
from ..registry import REGISTRY
from .callables import callable_instance, transformable, unwrapped
from .closures import Closure, fold_own, own_tangents
from .dynamic import (
    VjpLayout, _distribution_method, call_forward, call_jvp, frozen_distribution, has_no_derivative, kinds_of,
    partial_adjoints, primal_label, rule_adjoints, zero_adjoints,
)
from .handles import VJP, resolve
from .locations import caller_location
from .partials import partial_parts
from .structure import add_adjoint, zeros_like_value


class Pullback:
    """The pullback of `function(*args, **kwargs)`, as `call_forward` gives it."""

    def __init__(self, function, args, kwargs):
        self.function = function
        self.args = args
        self.kwargs = kwargs

    def __call__(self, d_value):
        return call_forward(self.function, *self.args, **self.kwargs)[1](d_value)

    def ssad_call_forward(self, d_value):
        """(self(d_value), its pullback), which gives (self's adjoint, d_value's, {})."""
        adjoints, pullback = pullback_vjp(self.function, d_value, self.args, self.kwargs)

        def pullback_of_pullback(d_adjoints):
            d_function, d_d_value, d_args, d_kwargs = pullback(d_adjoints)
            return (d_function, d_args, d_kwargs), d_d_value, {}

        return adjoints, pullback_of_pullback

    def ssad_call_jvp(self, d_self, primals, tangents, keywords, keyword_tangents):
        """(self(d_value), its tangent) along the tangent `d_self` of the call's inputs."""
        if keywords or len(primals) != 1:
            raise TypeError("a pullback takes one argument, the adjoint of the value")
        t_function, t_args, t_kwargs = d_self if isinstance(d_self, tuple) else (None, None, None)
        t_function = _function_tangent(t_function, self.function)
        t_args, t_kwargs = _sequence(t_args, len(self.args)), _mapping(t_kwargs, self.kwargs)
        return pullback_jvp(self.function, t_function, primals[0], tangents[0], self.args, t_args, self.kwargs, t_kwargs)


def call_forward_packed(function, args, kwargs):
    """(function(*args, **kwargs), its `Pullback`): `call_forward` read again. The value is
    the one `call_forward` gives (a function the call makes is a `Closure` there, whose
    captured values carry the adjoints the pullback gives)."""
    return call_forward(function, *args, **kwargs)[0], Pullback(function, tuple(args), dict(kwargs))


def method_forward_packed(receiver, method, args, kwargs):
    """(receiver.method(*args, **kwargs), its `Pullback`): `method_forward` read again; the
    receiver is the bound method's value, its adjoint the method's."""
    if isinstance(receiver, super):  # `super().act(h)`: the parent's method, bound to self
        return call_forward_packed(getattr(receiver, method), args, kwargs)
    function = getattr(type(receiver), method, None)
    if function is None:
        raise MissingRuleError(
            f"a second derivative through `{type(receiver).__name__}.{method}(...)`, a function value "
            "held in an attribute, is not supported; call it through a local name (`f = obj.attr; f(x)`)",
            *caller_location(),
        )
    return call_forward_packed(types.MethodType(function, receiver), args, kwargs)


def packed_tangent(function, t_function, args, t_args, kwargs, t_kwargs):
    """The tangent of `call_forward_packed(function, args, kwargs)`: the value's and the pullback's."""
    t_function = _function_tangent(t_function, function)
    t_args, t_kwargs = _sequence(t_args, len(args)), _mapping(t_kwargs, kwargs)
    _, t_value = call_jvp(function, t_function, tuple(args), t_args, kwargs, t_kwargs)
    return t_value, (t_function, t_args, t_kwargs)


def _function_tangent(given, function):
    """The tangent of a function value (a closure's dict, a partial's pair, a receiver), None
    for a zero: a function value carries no number, but a method bound to a number (the left
    operand of `x * u`, see `rules.objects`) carries that number's tangent."""
    if isinstance(function, types.MethodType) and isinstance(function.__self__, numbers.Number):
        return given
    return None if given is None or isinstance(given, numbers.Number) else given


def _sequence(given, count):
    """A tuple of `count` tangents or adjoints, for one that may be a zero (None, 0.0)."""
    return tuple(given) if isinstance(given, (tuple, list)) else (None,) * count


def _mapping(given, keywords):
    return dict(given) if isinstance(given, dict) else {k: None for k in keywords}


def packed_adjoint(d_value, d_pullback, function, args, kwargs):
    """The adjoints of (function, args, kwargs) in `call_forward_packed`: through the value
    (the function's vjp, run again) and through the pullback (`d_pullback`, its inputs')."""
    d_function, d_args, d_kwargs = None, (None,) * len(args), {k: None for k in kwargs}
    if d_value is not None:
        adjoints = call_forward(function, *args, **kwargs)[1](d_value)
        d_function, d_args, d_kwargs = adjoints[0], tuple(adjoints[1:-1]), adjoints[-1]
    if isinstance(d_pullback, tuple):
        d_function = add_adjoint(d_function, d_pullback[0])
        d_args = tuple(add_adjoint(a, b) for a, b in zip(d_args, _sequence(d_pullback[1], len(args)), strict=True))
        d_kwargs = add_adjoint(dict(d_kwargs), _mapping(d_pullback[2], kwargs))
    return d_function, d_args, d_kwargs


# ----- forward over reverse -----


def pullback_jvp(function, t_function, d_value, t_d_value, args, t_args, kwargs, t_kwargs):
    """(pullback(d_value), its tangent), for the pullback of `call_forward(function, *args,
    **kwargs)`, along the tangents of the function value, d_value, the arguments and keywords."""
    function = unwrapped(function)
    function = getattr(function, "ssad_checkpointed", function)  # a second derivative recomputes nothing
    if inspect.ismethod(function) and frozen_distribution(function.__self__):
        receiver, count = function.__self__, len(args)
        value, tangent = pullback_jvp(
            _distribution_method(receiver, function.__name__), None, d_value, t_d_value, tuple(args) + receiver.args,
            tuple(t_args) + (None,) * len(receiver.args), {**receiver.kwds, **kwargs}, dict(t_kwargs),
        )
        return _frozen_adjoints(value, count, kwargs), _frozen_adjoints(tangent, count, kwargs)
    if isinstance(function, functools.partial):
        t_bound, t_bound_keywords, t_func = partial_parts(function, t_function)
        pair = pullback_jvp(
            function.func, t_func, d_value, t_d_value, tuple(function.args) + args, tuple(t_bound) + t_args,
            {**function.keywords, **kwargs}, {**t_bound_keywords, **t_kwargs},
        )
        return tuple(partial_adjoints(function, kwargs, adjoints) for adjoints in pair)
    if (inspect.ismethod(function) and REGISTRY.adjoint_rule(function) is None) or _called_instance(function):
        method, receiver = _method_of(function)
        pair = pullback_jvp(method, None, d_value, t_d_value, (receiver,) + args, (t_function,) + t_args, kwargs, t_kwargs)
        return tuple(adjoints[1:] for adjoints in pair)  # self's adjoint stands for the function value's
    if isinstance(function, Closure):
        return _compiled_jvp(function.template, function.captured, t_function or {}, d_value, t_d_value, args, t_args, kwargs, t_kwargs)
    rule = REGISTRY.adjoint_rule(function)
    if rule is not None:
        value, t_value = call_jvp(function, None, args, t_args, kwargs, t_kwargs)
        pair = call_jvp(rule, None, (d_value, value) + args, (t_d_value, t_value) + t_args, kwargs, {})
        return tuple(rule_adjoints(function, adjoints, len(args)) for adjoints in pair)
    if has_no_derivative(function):
        return zero_adjoints(args, kwargs), zero_adjoints(args, kwargs)  # the first order's zeros, constant
    if transformable(function):
        return _compiled_jvp(function, {}, {}, d_value, t_d_value, args, t_args, kwargs, t_kwargs)
    raise _no_second_derivative(function)


def _compiled_jvp(function, captured, t_captured, d_value, t_d_value, args, t_args, kwargs, t_kwargs):
    layout = VjpLayout(function, args, kwargs, captured)
    entry = resolve(function, layout.wrt, VJP, kinds_of(function, args, {**kwargs, **captured}))
    t_captured = own_tangents(t_captured, layout.own)
    keyword_tangents = {**t_kwargs, **{k: t for k, t in t_captured.items() if k in captured}}
    (_, residuals), (_, t_residuals) = call_jvp(
        entry.function, None, args, t_args, {**kwargs, **captured}, keyword_tangents
    )
    pair = call_jvp(entry.backward, None, (d_value, residuals), (t_d_value, t_residuals))
    return tuple(layout.pullback_adjoints(adjoints) for adjoints in pair)


# ----- reverse over reverse -----


def pullback_vjp(function, d_value, args, kwargs):
    """(pullback(d_value), a pullback of that) for the pullback of `call_forward(function,
    *args, **kwargs)`; the second maps the adjoints of the first to (the function value's,
    d_value's, (the arguments'), {the keywords'})."""
    function = unwrapped(function)
    function = getattr(function, "ssad_checkpointed", function)  # a second derivative recomputes nothing
    if inspect.ismethod(function) and frozen_distribution(function.__self__):
        return _frozen_vjp(function, d_value, args, kwargs)
    if isinstance(function, functools.partial):
        return _partial_vjp(function, d_value, args, kwargs)
    if (inspect.ismethod(function) and REGISTRY.adjoint_rule(function) is None) or _called_instance(function):
        method, receiver = _method_of(function)
        adjoints, inner = pullback_vjp(method, d_value, (receiver,) + args, kwargs)

        def method_pullback(d_adjoints):
            _, d_d_value, d_args, d_kwargs = inner((None,) + tuple(d_adjoints))
            return d_args[0], d_d_value, tuple(d_args[1:]), d_kwargs

        return adjoints[1:], method_pullback
    if isinstance(function, Closure):
        return _compiled_vjp(function.template, function.captured, d_value, args, kwargs)
    rule = REGISTRY.adjoint_rule(function)
    if rule is not None:
        return _rule_vjp(function, rule, d_value, args, kwargs)
    if has_no_derivative(function):  # zeros, which no adjoint of theirs moves: zeros again
        return zero_adjoints(args, kwargs), lambda d_adjoints: (
            None, zeros_like_value(d_value), tuple(map(zeros_like_value, args)), {k: None for k in kwargs}
        )
    if transformable(function):
        return _compiled_vjp(function, {}, d_value, args, kwargs)
    raise _no_second_derivative(function)


def _frozen_adjoints(adjoints, count, kwargs):
    """The adjoints of a call of the distribution's method, as those of the frozen value's: no
    adjoint for the frozen value (its parameters are constants), the arguments' and keywords'."""
    keywords = adjoints[-1] or {}
    return (None,) + tuple(adjoints[1 : 1 + count]) + ({k: keywords.get(k) for k in kwargs},)


def _frozen_vjp(function, d_value, args, kwargs):
    """`pullback_vjp` of a method of a frozen scipy.stats distribution: its family's method with
    the parameters passed (see `dynamic.method_forward`)."""
    receiver, count = function.__self__, len(args)
    parameters, keywords = tuple(receiver.args), dict(receiver.kwds)
    method = _distribution_method(receiver, function.__name__)
    rule = REGISTRY.adjoint_rule(method)
    every = (d_value, tuple(args) + parameters, {**keywords, **kwargs})
    if rule is not None:
        adjoints, inner = _rule_vjp(method, rule, *every, constants=range(count, count + len(parameters)))
    else:
        adjoints, inner = pullback_vjp(method, *every)

    def frozen_pullback(d_adjoints):
        d_args, d_keywords = tuple(d_adjoints[1 : 1 + count]), d_adjoints[-1] or {}
        extended = (None, *d_args, *(None,) * len(parameters), {**{k: None for k in keywords}, **d_keywords})
        _, d_d_value, d_all, d_kwargs = inner(extended)
        return None, d_d_value, tuple(d_all[:count]), {k: (d_kwargs or {}).get(k) for k in kwargs}

    return _frozen_adjoints(adjoints, count, kwargs), frozen_pullback


def _partial_vjp(function, d_value, args, kwargs):
    bound = len(function.args)
    adjoints, inner = pullback_vjp(function.func, d_value, tuple(function.args) + args, {**function.keywords, **kwargs})

    def partial_pullback(d_adjoints):
        d_rest, d_keywords = d_adjoints[1:-1], d_adjoints[-1] or {}
        d_bound, d_bound_keywords, d_func = partial_parts(function, d_adjoints[0])
        inner_adjoints = (d_func, *d_bound, *d_rest, {**d_bound_keywords, **d_keywords})
        d_inner_function, d_d_value, d_args, d_kwargs = inner(inner_adjoints)
        d_function = (tuple(d_args[:bound]), {k: None if k in kwargs else d_kwargs.get(k) for k in function.keywords},
                      d_inner_function)
        return d_function, d_d_value, tuple(d_args[bound:]), {k: d_kwargs.get(k) for k in kwargs}

    return partial_adjoints(function, kwargs, adjoints), partial_pullback


def _compiled_vjp(function, captured, d_value, args, kwargs):
    layout = VjpLayout(function, args, kwargs, captured)
    entry = resolve(function, layout.wrt, VJP, kinds_of(function, args, {**kwargs, **captured}))
    (value, residuals), forward_pullback = call_forward(entry.function, *args, **kwargs, **captured)
    adjoints, backward_pullback = call_forward(entry.backward, d_value, residuals)

    def compiled_pullback(d_adjoints):
        _, d_d_value, d_residuals, _ = backward_pullback(layout.backward_adjoints(d_adjoints, adjoints))
        d_inputs = forward_pullback((zeros_like_value(value), d_residuals))
        d_keywords = d_inputs[-1]
        d_function = fold_own({k: d_keywords.get(k) for k in captured}, layout.own) if captured else None
        return d_function, d_d_value, tuple(d_inputs[1:-1]), {k: d_keywords.get(k) for k in kwargs}

    return layout.pullback_adjoints(adjoints), compiled_pullback


def _rule_vjp(function, rule, d_value, args, kwargs, constants=()):
    """`pullback_vjp` of a function with a rule; the arguments at the positions `constants`
    (a frozen distribution's parameters) get no adjoint at all, not even a refusal."""
    value, value_pullback = call_forward(function, *args, **kwargs)
    layout = VjpLayout(rule, (d_value, value) + args, {}, {})  # a rule differentiates no keyword
    entry = resolve(rule, layout.wrt, VJP)
    adjoints, residuals = entry.function(d_value, value, *args, **kwargs)
    adjoints = tuple(adjoints)

    def rule_pullback(d_adjoints):
        return layout.pullback_adjoints(entry.backward(d_adjoints, residuals))

    def rule_pullback_of_pullback(d_adjoints):
        # one per output of the rule, which may name optional arguments the call left out
        given = (tuple(d_adjoints[1 : 1 + len(args)]) + (None,) * len(adjoints))[: len(adjoints)]
        d_rule = tuple(
            a if a is not None or v is None else zeros_like_value(v) for a, v in zip(given, adjoints, strict=True)
        )
        through_rule = rule_pullback(d_rule)
        through_value = value_pullback(through_rule[2])
        d_args = tuple(
            None if i in constants else add_adjoint(a, b)
            for i, (a, b) in enumerate(zip(through_rule[3:-1], through_value[1:-1], strict=True))
        )
        return None, through_rule[1], d_args, {k: None for k in kwargs}

    return rule_adjoints(function, adjoints, len(args)), rule_pullback_of_pullback


# ----- the kinds of function value -----


def _called_instance(function):
    return not inspect.isfunction(function) and callable_instance(function) is not None


def _method_of(function):
    """(the function, its receiver) of a bound method or of an object called (`layer(x)`)."""
    if inspect.ismethod(function):
        return function.__func__, function.__self__
    return callable_instance(function), function


def third_order_error():
    return SourceError(
        "a third derivative through a call of a function value (a closure, a partial, a method, a "
        "function passed as an argument) is not supported; call the function by its name",
        *caller_location(),
    )


def _no_second_derivative(function):
    if isinstance(function, Pullback):
        return third_order_error()
    return MissingRuleError(
        f"no second derivative through {primal_label(function)}, called through a variable: it has "
        "no adjoint rule and no source ssad reads",
        *caller_location(),
    )
