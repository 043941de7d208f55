"""Small gast builders and questions every pass asks, written once.

Builders: `name(id)`, `store(id)`, `param(id)`, `assign(target, value)`,
`call(func, *args)`, `constant(value)`, and the marker statements `comment(text)`
and `blank()` that `backend.emit` prints as a comment and an empty line.
Questions: `assigned_names(statements)`, `stored_names(statements)`,
`loaded_names(statements)`, `is_loop_exit(statement)`.
"""

import gast

COMMENT = "__ssad_comment__"
BLANK = "__ssad_blank__"
MIRROR = "__ssad_mirror__"  # checker markers (see `transform.mirror`), removed before emitting


def name(identifier):
    """`identifier`, read."""
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def store(identifier):
    """`identifier`, assigned."""
    return gast.Name(id=identifier, ctx=gast.Store(), annotation=None, type_comment=None)


def param(identifier):
    """`identifier`, a parameter."""
    return gast.Name(id=identifier, ctx=gast.Param(), annotation=None, type_comment=None)


def assign(target, value):
    """`target = value`; `target` is a name or a gast target."""
    target = store(target) if isinstance(target, str) else target
    return gast.Assign(targets=[target], value=value, type_comment=None)


def call(func, *args):
    """`func(*args)`; `func` is a name or a gast expression."""
    func = name(func) if isinstance(func, str) else func
    return gast.Call(func=func, args=list(args), keywords=[])


def constant(value):
    return gast.Constant(value=value, kind=None)


# ----- markers -----


def comment(text):
    """A statement that becomes `# text` in the emitted source."""
    return gast.Expr(value=call(COMMENT, constant(text)))


def blank():
    """A statement that becomes an empty line in the emitted source."""
    return gast.Expr(value=call(BLANK))


def is_marker(statement):
    return (
        isinstance(statement, gast.Expr)
        and isinstance(statement.value, gast.Call)
        and isinstance(statement.value.func, gast.Name)
        and statement.value.func.id in (COMMENT, BLANK, MIRROR)
    )


# ----- questions -----


def assigned_names(statements):
    """The names `statements` assign anywhere, in the order they first appear."""
    names = []
    for statement in statements:
        for node in gast.walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id not in names:
                names.append(node.id)
    return names


def stored_names(statements):
    """The set of names `statements` assign anywhere."""
    return {n.id for s in statements for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def loaded_names(statements):
    """The set of names `statements` read anywhere."""
    return {n.id for s in statements for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def is_loop_exit(statement):
    """True for the `if stop: break` a loop body ends with when it can stop early."""
    return (
        isinstance(statement, gast.If)
        and len(statement.body) == 1
        and isinstance(statement.body[0], gast.Break)
        and not statement.orelse
    )
