"""Release, an optimizer pass: `del` the values a function made once no later statement reads them.

Code in A-normal form names every intermediate value, and Python frees a local only
when its name is rebound or the function returns, so every array the code made stays
alive until the end. The peak of memory is then the sum of all of them, where a person
writing the same code in nested expressions holds a few at once. Past glibc's trim
threshold that peak is returned to the system at each return and taken back, page by
page, at the next call: a Hessian-vector product of the BPR benchmark took 3–4 ms
this way and 1.1 ms with its dead values released. It runs on the code of forward mode
(`jvp`, and so Hessian-vector products), whose every value dies a statement or two after
it is made; in a gradient most values made forward live until the backward sweep reads
them, and the `del` lines would only crowd the code people read most.

After each statement at the top level of the function, the values made at the top level
(so bound there on every path) that neither it nor any later statement reads are
deleted, in one `del` line:

    margin = np.sum(u_times_minus, axis=1)
    d_margin = np.sum(d_u_times_minus, axis=1, keepdims=False)
    del u_times_minus, d_u_times_minus

Numbers and shapes are left alone (a constant, `x.shape`, `size(x)`, `len(x)`,
`range(n)` and arithmetic of them: nothing to release), parameters too (the caller
holds them), and so is a function with a nested function or lambda (which may read a
name later). ssad's front end drops these `del` lines when it reads generated code
again (`desugar.without_deletes`), so what it emits stays inside what it differentiates.
"""

import gast

from ..frontend.builders import is_marker, walk


def release_dead_values(statements, params):
    """`statements`, the body of a function with parameters `params`, with a `del` after
    each top-level statement for the top-level values it reads last."""
    if any(isinstance(n, (gast.FunctionDef, gast.Lambda, gast.AsyncFunctionDef)) for s in statements for n in walk(s)):
        return statements
    reads = [{n.id for n in walk(s) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store)}
             for s in statements]
    later = [set() for _ in statements]  # names read after each statement
    seen = set()
    for position in range(len(statements) - 1, -1, -1):
        later[position] = set(seen)
        seen |= reads[position]
    bound = set()
    small = set()  # names of numbers and shapes: nothing to release
    out = []
    for position, statement in enumerate(statements):
        out.append(statement)
        if isinstance(statement, gast.Assign):
            names = {n.id for t in statement.targets if not isinstance(t, gast.Subscript)
                     for n in walk(t) if isinstance(n, gast.Name)}
            bound |= names
            if _is_small(statement.value, small):
                small |= names
            else:
                small -= names
        if all(isinstance(s, gast.Return) or is_marker(s) for s in statements[position + 1:]):
            continue  # the function returns next: it releases everything then
        dead = sorted((reads[position] & bound) - later[position] - set(params) - small)
        if dead:
            targets = [gast.Name(id=n, ctx=gast.Del(), annotation=None, type_comment=None) for n in dead]
            out.append(gast.Delete(targets=targets))
            bound -= set(dead)
    return out


_SIZES = frozenset({"shape", "ndim", "size", "dtype"})
_SIZE_CALLS = frozenset({"size", "len", "range", "shape", "ndim"})


def _is_small(value, small):
    """Whether `value` is a number or a shape: a constant, `x.shape`, `size(x)`, `len(x)`,
    `range(n)`, or arithmetic and indexing of those."""
    if isinstance(value, gast.Constant):
        return True
    if isinstance(value, gast.Name):
        return value.id in small
    if isinstance(value, gast.Attribute):
        return value.attr in _SIZES
    if isinstance(value, gast.Call):
        func = value.func
        called = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
        return called in _SIZE_CALLS
    if isinstance(value, gast.Subscript):
        return _is_small(value.value, small) and _is_small(value.slice, small)
    if isinstance(value, gast.BinOp):
        return _is_small(value.left, small) and _is_small(value.right, small)
    if isinstance(value, gast.UnaryOp):
        return _is_small(value.operand, small)
    if isinstance(value, gast.Tuple):
        return all(_is_small(e, small) for e in value.elts)
    return False
