"""A global the function changes in place and also reads: refused where it is changed.

ssad reads what the function finds in its globals as constants: their values when the code
runs, with no derivative through them. A function may still change one in place, as a log
(`LOG.append(loss)`, supported), or through a function of the user's it calls
(`def record(v): W[0] = v`). Where the function also reads it (`LOG[-1]`, `np.sum(W * x)`,
or through a function it calls), a read after the change sees a value computed from the
inputs, whose derivative the gradient would miss, and the adjoint of a read before the
change reads the global again in the backward sweep, after the change: silently wrong
gradients (and, for a list the function itself appended to, an internal error of the
transformation). `GlobalChanges` refuses the change, at the user's line, in both modes.

Assumes: the user's function in A-normal form's lowering (`anf._Lowering`), before each
statement is lowered. What a function of the user's changes and reads of its globals is
read from its source, through the functions it calls by name (`module_values`); a call
through a function value (a parameter, a lambda) is not looked into.
Guarantees: no global the function reads is changed in place by a statement ssad lowers,
or by a function of the user's it calls by name.
"""

import gast

from .builders import walk
from .module_values import is_state, module_objects
from .view_names import CHANGING_METHODS


class GlobalChanges:
    """Mixin of `anf._Lowering`: `check_global_changes(statement)` before a statement is lowered."""

    def check_global_changes(self, statement):
        if self.is_generated():
            return
        reads = self.__dict__.get("_global_reads")
        if reads is None:  # what the whole function reads of its globals, with the functions it calls
            body = gast.Module(body=self.parsed.node.body, type_ignores=[])
            reads = self.__dict__.setdefault("_global_reads", self._global_effects(body)[1])
        headers = {gast.If: "test", gast.While: "test", gast.For: "iter"}  # a body's statements are met one by one
        changed = self._global_effects(getattr(statement, headers.get(type(statement), ""), statement))[0]
        for key, (name, what) in changed.items():
            if key in reads:
                raise self.parsed.unsupported(
                    statement,
                    f"{what} changes `{name}`, defined outside the function, which the function reads (line "
                    f"{self.parsed.where(reads[key][1])[1]}): ssad reads a global as a constant, so the derivative "
                    f"would miss what is put into it, or read the changed value for one read before; keep the "
                    f"values in a variable of the function (and change `{name}` as well, where it is a log)",
                )

    def _global_effects(self, statement):
        """({id: (name, what changes it)}, {id: (name, the node that reads it)}) of
        the globals `statement` changes and reads, with the functions of the user's it calls."""
        changes, reads, receivers = {}, {}, set()
        for node in walk(statement):
            root = node.func.value if isinstance(node, gast.Call) and isinstance(
                node.func, gast.Attribute) and node.func.attr in CHANGING_METHODS else None
            if root is None and isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
                    node.ctx, (gast.Store, gast.Del)):
                root = node.value
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if self._global(root) is not None:
                changes.setdefault(id(self._global(root)), (root.id, f"`{gast.unparse(node).strip()[:60]}`"))
                receivers.add(id(root))
            if isinstance(node, gast.Call) and self.is_static(node.func):
                changed_there, read_there = module_objects(self.resolve_static(node.func))
                for key, name in changed_there.items():
                    changes.setdefault(key, (name, f"`{gast.unparse(node.func)}(...)`"))
                for key, name in read_there.items():
                    reads.setdefault(key, (name, node))
        for node in walk(statement):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and id(node) not in receivers \
                    and self._global(node) is not None:
                reads.setdefault(id(self._global(node)), (node.id, node))
        return changes, reads

    def _global(self, node):
        """The object of the module's that `node` names, where it is one whose memory may change."""
        if not isinstance(node, gast.Name) or node.id in self.current or not self.is_static(node):
            return None
        value = self.namespace.values.get(node.id)
        return value if is_state(value) else None
