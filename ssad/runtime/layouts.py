"""How the vjp of a function called through a value orders its adjoints.

The vjp of the user's function (or of a closure's template) differentiates with
respect to a flat tuple of names: its positional parameters, its `*args`, its
keywords, its captured values. A pullback of `dynamic.call_forward` gives them as
(the function value's adjoint, one per positional argument, {keyword: adjoint}),
the function value's adjoint being the dict of the captured values' adjoints.
`VjpLayout` maps one to the other, both ways; for a closure that calls itself, what its
calls of itself gave its captured values is added in (`closures.fold_own`).
"""

import inspect

from .callables import parameters
from .closures import fold_own, own_names, unfold_own
from .structure import zeros_like_value


class VjpLayout:
    """How the vjp of the user's function (or a closure's template) called with `args`,
    `kwargs` and `captured` orders its adjoints (`wrt`: the positional parameters, the
    `*args` parameter if it takes some, the keywords, the captured names), and how a
    pullback of `call_forward` gives them: (d_function, one per positional argument,
    {keyword: adjoint}), d_function being the dict of the captured adjoints."""

    def __init__(self, function, args, kwargs, captured):
        self.names, self.rest = bound_positional(function, len(args))
        parameters = inspect.signature(function).parameters
        self.keywords = [k for k in kwargs if k in parameters]
        # the keywords a `**options` parameter collects: one dict, differentiated whole
        self.options = next((p for p, v in parameters.items() if v.kind is inspect.Parameter.VAR_KEYWORD), None)
        self.collected = [k for k in kwargs if k not in parameters] if self.options else []
        self.captured = list(captured)
        self.own = own_names(captured)  # a closure calling itself holds itself: see `closures.fold_own`
        self.wrt = (tuple(self.names) + tuple(self.rest) + tuple(self.keywords)
                    + ((self.options,) if self.collected else ()) + tuple(self.captured))

    def pullback_adjoints(self, adjoints):
        """The adjoints of the vjp's backward half, as a pullback of `call_forward` gives them."""
        count = len(self.names) + len(self.rest)
        positional = tuple(adjoints[: len(self.names)])
        if self.rest:  # one adjoint per argument `*args` took, as vjp gives them
            positional += tuple(adjoints[len(self.names)])
        keyword = dict(zip(self.keywords, adjoints[count : count + len(self.keywords)], strict=True))
        count += len(self.keywords)
        if self.collected:
            d_options = adjoints[count] or {}
            keyword.update({k: d_options.get(k) for k in self.collected})
            count += 1
        captured = adjoints[count:]
        d_function = fold_own(dict(zip(self.captured, captured, strict=True)), self.own) if self.captured else None
        return (d_function,) + positional + (keyword,)

    def backward_adjoints(self, adjoints, like):
        """The inverse of `pullback_adjoints`: a pullback's adjoints as the backward half
        gives them, None filled with zeros shaped like the entry of `like` it stands for."""
        d_function, positional, keyword = unfold_own(adjoints[0] or {}, self.own), adjoints[1:-1], adjoints[-1] or {}
        flat = list(positional[: len(self.names)])
        if self.rest:
            flat.append(tuple(positional[len(self.names) :]))
        flat += [keyword.get(k) for k in self.keywords]
        if self.collected:
            flat.append({k: keyword.get(k) for k in self.collected})
        flat += [d_function.get(k) for k in self.captured]
        return tuple(_filled(a, v) for a, v in zip(flat, like, strict=True))


def _filled(adjoint, like):
    """`adjoint` with None (also an entry of a dict of them) as zeros shaped like `like`."""
    if adjoint is None:
        return zeros_like_value(like)
    if isinstance(adjoint, dict) and isinstance(like, dict):
        return {k: zeros_like_value(like[k]) if adjoint.get(k) is None else adjoint[k] for k in like}
    return adjoint


def bound_positional(function, count):
    """(the positional parameters `count` positional arguments bind to, [the `*args` parameter]
    when it takes some of them, else [])."""
    names = parameters(function)[0]
    code = function.__code__
    if count <= len(names) or not code.co_flags & inspect.CO_VARARGS:
        return names[:count], []  # too many arguments for no `*args`: the call itself raises
    return names, [code.co_varnames[code.co_argcount + code.co_kwonlyargcount]]
