"""The adjoint and the tangent of a `functools.partial`, as the value Python made.

The adjoint of `q = functools.partial(f, *args, **keywords)` is the triple (the bound
arguments' adjoints, {the bound keywords'}, the adjoint of `f`: the dict of what a
closure `f` captured, the triple of a partial `f`), and its tangent the same triple of
tangents. It follows the value `q` itself: when `f` is itself a partial, Python
flattens (`q.func` is `f.func`, `q.args` is `f.args + args`), and so does its
adjoint. The statement that made `q` reads it back as the code wrote it
(`made_partial_adjoint`), and builds its tangent the way the value is
(`made_partial_tangent`).
"""

import functools

from .structure import zeros_like_value


def partial_parts(function, d_function):
    """(the tangents of the bound arguments, {of the bound keywords}, of the function) of the
    partial `function`, from its tangent `d_function` (None for a zero); its adjoint alike."""
    if not isinstance(d_function, tuple):
        return (None,) * len(function.args), {}, None
    bound = d_function[0] if isinstance(d_function[0], (tuple, list)) else (None,) * len(function.args)
    keywords = d_function[1] if isinstance(d_function[1], dict) else {}
    return tuple(bound), keywords, d_function[2] if len(d_function) > 2 else None


def _flattened(made, function):
    """Whether Python flattened the partial `function` into `made` (see the module docstring)."""
    return isinstance(function, functools.partial) and made.func is not function


def made_partial_adjoint(d_made, made, function, count, keywords):
    """The adjoint `d_made` of `made = functools.partial(function, *args, **keywords)` (`count`
    positional `args`, `keywords` their names) as (the adjoints of `args`, {of `keywords`},
    of `function`), zeros where none came."""
    d_bound, d_keywords, d_function = partial_parts(made, d_made)
    d_bound = tuple(zeros_like_value(v) if d is None else d for d, v in zip(d_bound, made.args, strict=True))
    if not hasattr(type(d_keywords), "__missing__"):  # a rule's keywords refuse any read: kept so
        d_keywords = {k: zeros_like_value(v) if d_keywords.get(k) is None else d_keywords[k]
                      for k, v in made.keywords.items()}
    if not _flattened(made, function):
        return d_bound, d_keywords, d_function
    inner = len(function.args)
    if hasattr(type(d_keywords), "__missing__"):
        return d_bound[inner:], d_keywords, (d_bound[:inner], d_keywords, d_function)
    # a keyword `keywords` gives again is theirs: the inner partial's own gets none
    inner_keywords = {k: zeros_like_value(v) if k in keywords else d_keywords[k] for k, v in function.keywords.items()}
    return d_bound[inner:], {k: d_keywords[k] for k in keywords}, (d_bound[:inner], inner_keywords, d_function)


def made_partial_tangent(made, function, t_function, t_args, t_keywords):
    """The tangent of `made = functools.partial(function, *args, **keywords)` from the tangents
    of `function`, of `args` (a tuple) and of `keywords` (a dict)."""
    if not _flattened(made, function):
        return tuple(t_args), dict(t_keywords), t_function
    t_bound, t_bound_keywords, t_inner = partial_parts(function, t_function)
    return tuple(t_bound) + tuple(t_args), {**t_bound_keywords, **t_keywords}, t_inner
