"""Calls to function values, dispatched when they run.

`apply(f, x)` calls whatever `f` holds: a NumPy function, one of the user's own
functions, a closure, a `functools.partial`, a bound method. The forward sweep
calls `call_forward(f, *args)`, which returns the value and a pullback; the
adjoint sweep calls `pullback(d_value)`, which returns the adjoint of the
function value itself (what a closure captured, a partial's arguments, a method's
`self`; None for a plain function) followed by one adjoint per argument.
"""

import functools
import inspect

from .errors import MissingRuleError
from .registry import REGISTRY, primitive_name


def call_forward(function, *args):
    """(function(*args), pullback) for a function value known only when the code runs."""
    from .api import VJP, compiled
    from .calls import transformable
    from .closures import Closure

    if isinstance(function, functools.partial):
        inner = function.func
        bound = len(function.args)
        if function.keywords:
            raise MissingRuleError(
                f"calling functools.partial({getattr(inner, '__name__', inner)!r}, ...) with keyword "
                "arguments on differentiated values is not supported; bind them positionally"
            )
        value, inner_pullback = call_forward(inner, *function.args, *args)

        def partial_pullback(d_value):
            adjoints = inner_pullback(d_value)
            return (tuple(adjoints[1 : 1 + bound]),) + tuple(adjoints[1 + bound :])

        return value, partial_pullback
    if inspect.ismethod(function):
        value, inner_pullback = call_forward(function.__func__, function.__self__, *args)

        def method_pullback(d_value):
            adjoints = inner_pullback(d_value)
            return (adjoints[1],) + tuple(adjoints[2:])

        return value, method_pullback
    if isinstance(function, Closure):
        template = function.template
        names = _positional(template)[: len(args)]
        captured = tuple(function.captured)
        entry = compiled(template, tuple(names) + captured, VJP)
        value, residuals = entry.function(*args, **function.captured)
        backward = entry.backward

        def closure_pullback(d_value):
            adjoints = backward(d_value, *residuals)
            d_captured = dict(zip(captured, adjoints[len(names) :], strict=True))
            return (d_captured,) + tuple(adjoints[: len(names)])

        return value, closure_pullback
    rule = REGISTRY.adjoint_rule(function)
    if rule is not None:
        value = function(*args)

        def rule_pullback(d_value):
            adjoints = rule(d_value, value, *args)
            return (None,) + tuple(adjoints) + (None,) * (len(args) - len(adjoints))

        return value, rule_pullback
    if REGISTRY.is_nondifferentiable(function):
        value = function(*args)
        return value, lambda d_value: (None,) * (len(args) + 1)
    if transformable(function):
        names = _positional(function)[: len(args)]
        entry = compiled(function, tuple(names), VJP)
        value, residuals = entry.function(*args)
        backward = entry.backward

        def function_pullback(d_value):
            return (None,) + tuple(backward(d_value, *residuals))

        return value, function_pullback
    raise MissingRuleError(
        f"no adjoint rule for {primitive_name(function)}, called through a variable with values "
        f"that carry gradients; register one with @ssad.adjoint({getattr(function, '__name__', 'f')})"
    )


def method_forward(receiver, method, *args):
    """(receiver.method(*args), pullback): the method's `self` gets an adjoint like any argument."""
    function = getattr(type(receiver), method, None)
    if function is None and not hasattr(receiver, method):
        raise MissingRuleError(
            f"a {type(receiver).__name__} has no method `{method}`; with a NumPy array use a NumPy "
            "function that has a rule, or register one with @ssad.adjoint"
        )
    if function is None:
        bound = getattr(receiver, method)  # an attribute holding a function value
        value, pullback = call_forward(bound, *args)

        def attribute_pullback(d_value):
            adjoints = pullback(d_value)
            from .structure import zeros_like_value

            d_receiver = zeros_like_value(receiver)
            if d_receiver is not None and adjoints[0] is not None:
                from .structure import add_attr

                d_receiver = add_attr(d_receiver, method, adjoints[0])
            return (d_receiver,) + tuple(adjoints[1:])

        return value, attribute_pullback
    value, pullback = call_forward(function, receiver, *args)

    def receiver_pullback(d_value):
        adjoints = pullback(d_value)
        return (adjoints[1],) + tuple(adjoints[2:])

    return value, receiver_pullback


def _positional(function):
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount])
