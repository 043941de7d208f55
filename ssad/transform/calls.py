"""Calls to the user's own functions: each is differentiated by its own generated code.

A call `t = g(a, b)` whose arguments are active, where `g` is a Python function with
source and no adjoint rule, becomes in the caller's forward sweep

    t, t_saved = forward_g(a, b)

and in its adjoint sweep

    d_a, d_b = backward_g(d_t, t_saved)

`forward_g` and `backward_g` are the two halves of `g`'s own vjp (see `backend.assemble`),
compiled once per (function, parameters that receive active values) and shared by
every caller; `t_saved` holds what `backward_g` reads, `g`'s tape included. The
halves are `Handle`s (see `runtime.handles`) compiled on first use, so a function
may call itself, directly or through others, to a depth the data decides.

Both modes bind a call's operands to the callee's parameters here.
"""

import inspect

from ..errors import SourceError, SsadError


def parameters_of_operands(f, n_args, keyword_names):
    """The parameter of `f` each operand of a call binds to: [name for each positional] + keywords.

    An operand that `*args` collects binds to (name, index in the tuple); a keyword that
    `**kwargs` collects, to (name, key in the dict).
    """
    signature = inspect.signature(f)
    placeholders = list(range(n_args))
    try:
        bound = signature.bind(*placeholders, **{k: ("kw", k) for k in keyword_names})
    except TypeError as error:
        raise SsadError(f"the call to {f.__qualname__} does not match its signature: {error}") from None
    positional = [None] * n_args
    keywords = {}
    for param, value in bound.arguments.items():
        if isinstance(value, int):
            positional[value] = param
        elif isinstance(value, tuple) and value and value[0] == "kw":
            keywords[value[1]] = param
        elif signature.parameters[param].kind is inspect.Parameter.VAR_POSITIONAL:
            for index, operand in enumerate(value):
                positional[operand] = (param, index)  # the index-th item of *param
        else:  # the keywords **param collected
            for key, operand in value.items():
                keywords[operand[1]] = (param, key)  # the item `key` of the dict **param
    return positional, keywords


def bind_operands(op, program, statement):
    """[(parameter, operand)] of a call to the user's function; `*t` passed on binds to *args whole."""
    args = list(op.args)
    starred = None
    rest = None
    if op.passes_through:
        starred = args.pop().value
        code = op.primitive.__code__
        rest = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & inspect.CO_VARARGS else None
        if rest is None or len(args) != code.co_argcount:
            raise SourceError(
                f"`*{getattr(starred, 'id', 'args')}` is passed to {op.primitive.__qualname__} in place of named "
                "parameters; ssad passes a tuple on only as the callee's own `*args`: pass values one by one",
                *program.parsed.where(statement),
            )
    positional, keywords = parameters_of_operands(op.primitive, len(args), list(op.keywords))
    bound = list(zip(positional, args, strict=True)) + [(keywords[k], v) for k, v in op.keywords.items()]
    if starred is not None:
        bound.append((rest, starred))
    return bound
