"""The value of a nested `def` or `lambda` at run time: a template and what it captured.

See `frontend.closures` for how a nested function becomes a template.
"""


class Closure:
    """A function made inside a differentiated function: a template and its captured values."""

    def __init__(self, template, captured, name):
        self.template = template
        self.captured = captured
        self.__name__ = name
        self.__qualname__ = name
        for key, value in captured.items():
            if value is _SELF:  # the function refers to itself (recursion)
                captured[key] = self

    def __call__(self, *args, **kwargs):
        return self.template(*args, **self.captured, **kwargs)

    def __repr__(self):
        return f"<ssad closure {self.__name__} capturing {', '.join(self.captured) or 'nothing'}>"


class _Self:
    def __repr__(self):
        return "SELF"


_SELF = _Self()


def closure(template, **captured):
    """The value of a nested `def` or `lambda`: `template` with `captured` values."""
    return Closure(template, captured, template.__name__.rsplit("_template", 1)[0])


SELF = _SELF


def gradient_closure(f, wrt, grad):
    """`ssad.grad(f, wrt)` of a closure `f` made inside a differentiated function: the closure
    of the template's generated gradient over the same captured values.

    The captured values stay inputs of the gradient (not constants baked into it), so code
    that differentiates a function calling `ssad.grad(inner)`, where `inner` reads the
    outer function's variables, differentiates through them too (nested differentiation
    without perturbation confusion: each gradient has its own generated code)."""
    template = f.template
    code = template.__code__
    positional = code.co_varnames[: code.co_argcount]
    items = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    names = tuple(positional[w] if isinstance(w, int) else w for w in items)
    if any(n not in positional for n in names):
        from ..errors import SsadError

        raise SsadError(f"wrt={wrt!r} names no parameter of {f.__name__}; its parameters are {', '.join(positional)}")
    gradient = grad(template, wrt=names if isinstance(wrt, (tuple, list)) else names[0])
    return Closure(gradient.variants.general.function, dict(f.captured), f"grad_{f.__name__}")


class Unset:
    """The default of a parameter whose default value the enclosing function computes
    (`lambda v, k=k: ...`): the template's body takes the value captured when the
    function was made in its place (see `frontend.closures.make_template`)."""

    def __repr__(self):
        return "UNSET"


UNSET = Unset()
