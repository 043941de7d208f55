"""Stage 1b, desugar: a generator function as the function returning the list of what it yields.

ssad differentiates a generator where the function it calls consumes it (`list(gen())`,
`sum(gen())`, a `for` over it, a `zip` with it): running it to its end at once yields the
same values in the same order. A generator that never ends (`while True:` around a
`yield`, with no `break` or `return`) has no end to run to, and is refused.

Assumes: a `Parsed` generator function, its free names resolved.
Guarantees: its `yield` statements append to a list it returns, and every `return` returns it.
"""

import gast

from .builders import local_names, walk
from .desugar import _rewritten


def lower_generator(parsed):
    """`yield v` becomes `yielded.append(v)`, `yield from e` `yielded.extend(e)`, and every
    `return` returns the list."""
    node = parsed.node
    refuse_an_endless_loop(parsed)
    taken = local_names(node) | set(parsed.namespace) | {n.id for n in walk(node) if isinstance(n, gast.Name)}
    out = next(name for name in ("yielded", *(f"yielded_{k}" for k in range(1, 1000))) if name not in taken)

    def collected():
        return gast.Name(id=out, ctx=gast.Load(), annotation=None, type_comment=None)

    def lower(statement):
        if isinstance(statement, gast.Expr) and isinstance(statement.value, (gast.Yield, gast.YieldFrom)):
            value = statement.value.value
            if value is None:
                value = gast.Constant(value=None, kind=None)
            method = "append" if isinstance(statement.value, gast.Yield) else "extend"
            call = gast.Call(func=gast.Attribute(value=collected(), attr=method, ctx=gast.Load()),
                             args=[value], keywords=[])
            return [gast.copy_location(gast.Expr(value=gast.copy_location(call, statement)), statement)]
        if isinstance(statement, gast.Return):
            return [gast.copy_location(gast.Return(value=collected()), statement)]
        return None

    for child in walk(node):
        if isinstance(child, (gast.Yield, gast.YieldFrom)) and not _is_yield_statement(node, child):
            raise parsed.unsupported(
                child, "a `yield` whose value is used (`x = yield v`, `send`) cannot be differentiated; "
                       "yield values only, or build a list and return it")
    start = gast.Assign(targets=[gast.Name(id=out, ctx=gast.Store(), annotation=None, type_comment=None)],
                        value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
    body = _rewritten(node.body, lower)
    first = node.body[0] if node.body else node
    node.body = [gast.copy_location(start, first), *body, gast.copy_location(gast.Return(value=collected()), first)]


def refuse_an_endless_loop(parsed):
    """Raise UnsupportedSyntaxError at a `while True:` of the generator that yields and that
    nothing leaves (no `break` of its own, no `return` or `raise` in it): the list of what it
    yields would never be complete (the caller's `zip` or `break` stops Python's generator)."""
    for loop in walk(parsed.node):
        if not (isinstance(loop, gast.While) and isinstance(loop.test, gast.Constant) and loop.test.value):
            continue
        within = list(_own_nodes(loop.body, loops=True))
        yields = any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in within)
        leaves = any(isinstance(n, (gast.Return, gast.Raise)) for n in within) or any(
            isinstance(n, gast.Break) for n in _own_nodes(loop.body, loops=False))
        if yields and not leaves:
            raise parsed.unsupported(
                loop, "this generator never ends (`while True:` with no `break` or `return`), and ssad runs a "
                      "generator to its end where it is called, making the list of what it yields; yield a number "
                      "of items given to it (`for _ in range(n):`), or end the loop where the caller stops")


def _own_nodes(block, loops):
    """The nodes of `block`, not those of nested functions, nor (unless `loops`) of nested loops."""
    todo = list(block)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
            continue
        if not loops and isinstance(node, (gast.For, gast.While, gast.AsyncFor)):
            todo.extend(node.orelse)  # a `break` in a nested loop's body leaves that loop only
            continue
        todo.extend(child for child in gast.iter_child_nodes(node))


def _is_yield_statement(function, node):
    """Whether the yield `node` stands alone as a statement of `function` (not in a nested def)."""
    for child in walk(function):
        if isinstance(child, gast.Expr) and child.value is node:
            return True
    return False
