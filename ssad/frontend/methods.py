"""Methods read outside their class: `super()` with no arguments.

Python gives a method defined in a class body a `__class__` cell, which `super()` with
no arguments reads together with the method's first argument. Code ssad generates is
compiled outside the class, where that cell does not exist, so `super()` is read as
what it stands for, `super(__class__, self)`: `__class__` then resolves, like any free
name, to the class the method's cell holds.

Assumes: a parsed function whose free names are not yet resolved (see `parse`).
Guarantees: each `super()` of the function's own body (not of a nested function or
lambda, which Python does not give the cell's meaning either) names its class and the
function's first parameter, when the function has that cell and a first parameter.
"""

import gast

from .builders import name


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
