"""The value of a nested `def` or `lambda` at run time: a template and what it captured.

See `frontend.closures` for how a nested function becomes a template.

A function that calls itself (`def fib(n): ... fib(n - 1) ...`, a lambda assigned to
the name it calls) captures itself under its own name. The adjoint of a closure is the
dict of the adjoints of its captured values, so the adjoint of that entry is again such
a dict: what the recursive calls gave the captured values. It is the same closure, so
`fold_own` adds that dict into the rest, and the statement that made the closure hands
every captured variable all it got; a tangent is the same for the closure and for its
entry (`own_tangents`).
"""

from .structure import add_adjoint


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


class _Later:
    """The captured value of a nested function made after the one that captures it, until
    `joined` makes it: called before, it fails as Python's read of the free variable does."""

    def __init__(self):
        self.__name__ = "LATER"

    def __call__(self, *args, **kwargs):
        raise NameError("a nested function was called before a function it calls was defined")

    def __repr__(self):
        return "LATER"


LATER = _Later()


def joined(template, first, name):
    """The value of the nested function `name` that `first`, a nested function made before it,
    calls (mutual recursion, `def even(n): ... odd(n - 1)` then `def odd(n): ... even(n - 1)`):
    `template` over `first`'s captured values, the very dict, in which it now stands under
    `name`. All such functions share one dict, each of them in it, so each is among the
    others' own names (`own_names`): the adjoint of one is a dict over the same variables,
    and what calls of the others gave is added in as what calls of itself give."""
    made = Closure(template, first.captured, name)
    first.captured[name] = made
    return made


def own_names(captured):
    """The names under which the captured values `captured` of a closure hold a closure over
    these very values: the closure itself, the functions it is mutually recursive with (see
    `joined`), or, for `ssad.grad` of a closure that calls itself, the closure it differentiates."""
    return [key for key, value in captured.items() if isinstance(value, Closure) and value.captured is captured]


def fold_own(d_captured, own):
    """The adjoint `d_captured` (a dict of the captured values' adjoints) of the closure
    whose captured values hold it under the names `own`, with the adjoint of each of
    those entries (what the closure's calls of itself gave, a dict folded the same way
    by the pullback of that call) added into the others, and the entries None."""
    if not own or not isinstance(d_captured, dict):
        return d_captured
    folded = dict(d_captured)
    for key in own:
        inner = folded.get(key)
        folded[key] = None
        if isinstance(inner, dict):
            for name, adjoint in inner.items():
                if name not in own:
                    folded[name] = add_adjoint(folded.get(name), adjoint)
    return folded


def unfold_own(d_folded, own):
    """The transpose of `fold_own` (reverse over reverse): the cotangent of a folded adjoint as
    that of the adjoint before folding, each own entry getting the cotangent of the whole."""
    if not own or not isinstance(d_folded, dict):
        return d_folded
    rest = {name: adjoint for name, adjoint in d_folded.items() if name not in own}
    return {**rest, **{key: dict(rest) for key in own}}


def own_tangents(t_captured, own):
    """The tangents of a closure's captured values from its tangent `t_captured`: the entries
    that hold the closure itself get that same tangent (a fresh dict, never a cycle)."""
    if not own or not isinstance(t_captured, dict) or all(t is None for t in t_captured.values()):
        return t_captured
    return {**t_captured, **{key: t_captured for key in own}}


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
    # the same captured values, the very dict: a closure calling itself, which `f` holds
    # among them, is then seen as the gradient's own too (see `own_names`)
    return Closure(gradient.variants.general.function, f.captured, f"grad_{f.__name__}")


class Unset:
    """The default of a parameter whose default value the enclosing function computes
    (`lambda v, k=k: ...`): the template's body takes the value captured when the
    function was made in its place (see `frontend.closures.make_template`)."""

    def __repr__(self):
        return "UNSET"


UNSET = Unset()
