"""What a derivative is taken with respect to: `wrt=` read against the function's parameters.

An int is a positional parameter's position, a string any parameter's name (the name of a
`*args` parameter too: its gradient is a tuple, one per argument it takes), a tuple or list
several of them. A `wrt` that names no parameter is an `SsadError` that says which the
function has and how to name the rest.
"""

import inspect

from .errors import SsadError
from .frontend import fence, parse
from .registry import REGISTRY
from .runtime.callables import parameters, varargs


def normalize_wrt(f, wrt):
    """(names, is_tuple) for `wrt`: an int, a parameter name, or a tuple of them."""
    if f.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) and REGISTRY.adjoint_rule(f) is None:
        fence.check(parse.parse_function(f))  # reports `**kwargs` where it stands
    positional, keyword_only = parameters(f)
    is_tuple = isinstance(wrt, (tuple, list))
    items = list(wrt) if is_tuple else [wrt]
    if not items:
        raise SsadError("wrt is empty: name at least one parameter to differentiate")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise SsadError(f"wrt must be a parameter index or name, or a tuple of them; got {item!r}")
        if isinstance(item, int):
            if not -len(positional) <= item < len(positional):
                raise SsadError(_out_of_range(f, item, positional))
            names.append(positional[item])
        else:
            if item not in positional and item not in keyword_only and item != varargs(f):
                raise SsadError(
                    f"wrt={item!r} is not a parameter of {f.__qualname__}; its parameters are "
                    f"{', '.join(positional + keyword_only)}"
                )
            names.append(item)
    if len(set(names)) != len(names):
        raise SsadError(f"wrt names a parameter twice: {wrt!r}")
    return tuple(names), is_tuple


def _out_of_range(f, item, positional):
    """What `wrt=item`, a position past the positional parameters, tells the user."""
    message = (f"wrt={item} is out of range: {f.__qualname__} has {len(positional)} positional "
               f"parameter{'' if len(positional) == 1 else 's'} ({', '.join(positional)})")
    if f.__code__.co_flags & inspect.CO_VARKEYWORDS and varargs(f):
        return message + (f"; it passes on `*{varargs(f)}` and keywords, as a decorator's wrapper does, which ssad "
                          f"does not follow: differentiate the function it wraps (`f.__wrapped__` for one made "
                          f"with functools.wraps), or name the parameters it takes")
    if varargs(f):
        return message + f"; the rest are `*{varargs(f)}`: differentiate them with wrt={varargs(f)!r}"
    return message


def _argument_getter(f, name, position):
    """A fast accessor for one parameter's value from (args, kwargs)."""
    signature = inspect.signature(f)
    parameter = signature.parameters[name]
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        count = len(parameters(f)[0])
        return lambda args, kwargs: tuple(args[count:])
    default = parameter.default

    def get(args, kwargs):
        if position is not None and position < len(args):
            return args[position]
        return kwargs.get(name, default)

    return get
