"""Methods read outside their class: `super()` with no arguments, `return iter(...)` in `__iter__`.

Python gives a method defined in a class body a `__class__` cell, which `super()` with
no arguments reads together with the method's first argument. Code ssad generates is
compiled outside the class, where that cell does not exist, so `super()` is read as
what it stands for, `super(__class__, self)`: `__class__` then resolves, like any free
name, to the class the method's cell holds.

Assumes: a parsed function whose free names are not yet resolved (see `parse`).
Guarantees: each `super()` of the function's own body (not of a nested function or
lambda, which Python does not give the cell's meaning either) names its class and the
function's first parameter, when the function has that cell and a first parameter.

A method `__iter__` returns an iterator that Python's protocol walks at once (a loop,
`list(p)`, an unpacking): `return iter(items)` there is read as `return iterated(items)`,
the list (or the tuple, the array) of the same items, which ssad differentiates and walks
by index (see `runtime.operators`).
"""

import builtins

import gast

from ..runtime import iterated
from .builders import local_names, name, walk


def lower_zero_argument_super(parsed):
    """Rewrite `super()` to `super(__class__, <first parameter>)` in `parsed` (see the module)."""
    function = parsed.function
    arguments = parsed.node.args
    first = (arguments.posonlyargs + arguments.args)[:1]
    if "__class__" not in function.__code__.co_freevars or not first:
        return

    class Super(gast.NodeTransformer):
        def visit_FunctionDef(self, node):  # a nested function's `super()` is its own
            return node if node is not parsed.node else self.generic_visit(node)

        def visit_Lambda(self, node):
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            if isinstance(node.func, gast.Name) and node.func.id == "super" and not node.args and not node.keywords:
                node.args = [gast.copy_location(name("__class__"), node), gast.copy_location(name(first[0].id), node)]
            return node

    Super().visit(parsed.node)


def lower_iter_returns(parsed):
    """Rewrite `return iter(items)` to `return iterated(items)` in a method `__iter__` (see the module)."""
    node = parsed.node
    if node.name != "__iter__" or parsed.namespace.get("iter") is not builtins.iter:
        return
    taken = local_names(node) | set(parsed.namespace) | {n.id for n in walk(node) if isinstance(n, gast.Name)}
    helper = next(n for n in ("iterated", *(f"iterated_{k}" for k in range(2, 1000))) if n not in taken)

    class Returns(gast.NodeTransformer):
        def visit_FunctionDef(self, inner):  # a nested function's returns are its own
            return inner if inner is not node else self.generic_visit(inner)

        def visit_Lambda(self, inner):
            return inner

        def visit_Return(self, statement):
            value = statement.value
            if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "iter"
                    and len(value.args) == 1 and not value.keywords and not isinstance(value.args[0], gast.Starred)):
                value.func = gast.copy_location(name(helper), value.func)
                parsed.namespace[helper] = iterated
            return statement

    Returns().visit(node)
