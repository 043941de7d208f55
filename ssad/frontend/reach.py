"""What a change through a name reaches of a function's parameters (see `views.effects`).

A name may hold a parameter `p` itself or a part of its memory (the token `p`), something
`p` holds (`p.`: an item at any depth, or a view of one: `t = p[0]`), or a shallow copy of
`p` (`p[]`: `y = p.copy()`, a new container of `p`'s items). A change of the name itself
reaches `p` for the first two; an item read from any of them is something `p` holds.
"""

import copy

import gast

from .builders import walk


def base(token):  # `p`, `p.` (held in p), `p[]` (a shallow copy of p) -> `p`
    return token[:-2] if token.endswith("[]") else token.rstrip(".")


def items(found):
    return {base(t) + "." for t in found}


def shallow(found):
    return {base(t) + "[]" for t in found}


def whole(found):  # the parameters whose memory a change of `found` itself reaches
    return {base(t) for t in found if not t.endswith("[]")}


def split_rebound(node, tokens):
    """A copy of the function `node` in which a parameter bound anew by a statement at its
    top level (`a = a.copy()`, one name) is another name from that statement on: there it
    holds what the new value holds, whatever came before. Not for a parameter a nested
    function or lambda mentions (it may run after the statement)."""
    nested = [n for n in walk(node) if n is not node and isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))]
    captured = {n.id for f in nested for n in walk(f) if isinstance(n, gast.Name)}
    split, renamed = {}, None
    for position, statement in enumerate(node.body):
        if (isinstance(statement, (gast.Assign, gast.AnnAssign)) and statement.value is not None
                and len(getattr(statement, "targets", [None])) == 1):
            target = statement.targets[0] if isinstance(statement, gast.Assign) else statement.target
            if isinstance(target, gast.Name) and target.id in tokens and target.id not in captured | set(split):
                renamed = renamed or copy.deepcopy(node)
                split[target.id] = target.id + SPLIT
                for later in renamed.body[position:]:
                    for n in walk(later):
                        if isinstance(n, gast.Name) and n.id == target.id and (later is not renamed.body[position] or n.ctx.__class__ is gast.Store):
                            n.id = split[target.id]
    return renamed or node


SPLIT = "'"  # not in any Python name


def may_resize(statement, target):
    """Whether `statement`, changing `target` in place, may make a list longer or shorter:
    `v += e` and `v *= n` (a list's extend and repeat), `del v[i]`, `v[a:b] = e`."""
    if isinstance(statement, gast.AugAssign) and isinstance(target, gast.Subscript):
        return isinstance(target.slice, gast.Slice)  # `v[a:b] += e` of a list
    if isinstance(statement, gast.AugAssign):
        return isinstance(statement.op, (gast.Add, gast.Mult)) and isinstance(target, gast.Name)
    if isinstance(statement, gast.Delete):
        return isinstance(target, gast.Subscript)
    return isinstance(target, gast.Subscript) and isinstance(target.slice, gast.Slice)
