"""Checks that name a local the user's code binds on some paths only.

A check the generated code runs where the user's statement runs (`aliasing.emit_guard`)
passes it the locals that may see a change: those read afterwards, say. One of them may be
bound on some paths only (`if c: a, t = ...`, or later in a loop's body, for the next
pass): where it is still unbound the check has nothing to look into, but reading it there
raises `UnboundLocalError`. `prebound` finds such names in the lowered function, which
binds each to None at its start; None holds nothing, so the check passes there.
"""

import gast

# what binds names in a scope of its own (a comprehension's variable is not the function's)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda, gast.ListComp, gast.SetComp,
           gast.DictComp, gast.GeneratorExp)


def prebound(body, guards, parameters):
    """The locals an operand of a check in `guards` (the ids of their calls) may read
    unbound, somewhere in `body` (the statements of a lowered function)."""
    maybe = set()

    def run(statements, bound):  # what is bound for sure after `statements`
        for statement in statements:
            if isinstance(statement, gast.Expr) and id(statement.value) in guards:
                maybe.update(a.id for a in statement.value.args if isinstance(a, gast.Name) and a.id not in bound)
            if isinstance(statement, gast.If):
                bound = run(statement.body, set(bound)) & run(statement.orelse, set(bound))
            elif isinstance(statement, (gast.For, gast.While)):  # may run no pass: binds nothing for sure
                inner = bound | (_stored(statement.target) if isinstance(statement, gast.For) else set())
                run(statement.body, set(inner))
                run(statement.orelse, set(bound))
            else:
                bound = bound | _stored(statement)
        return bound

    run(body, set(parameters))
    assigned = set().union(*(_stored(statement) for statement in body))
    return sorted(maybe & assigned)


def _stored(node):
    """The names `node` binds in its own scope (not in a nested function or lambda)."""
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        if isinstance(current, gast.Name) and isinstance(current.ctx, gast.Store):
            found.add(current.id)
        if isinstance(current, _SCOPES):
            found |= {current.name} if hasattr(current, "name") else set()
            continue
        stack.extend(gast.iter_child_nodes(current))
    return found
