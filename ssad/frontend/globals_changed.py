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
through a function value (a parameter, a lambda) is checked where it runs
(`runtime.passed.keeps_globals`, asked for by `passing`, with the keys `global_reads` gives).
Guarantees: no global the function reads is changed in place by a statement ssad lowers,
or by a function of the user's it calls by name.
"""

import gast

from .module_values import NO_GLOBAL, object_effects
from .view_names import CHANGING_METHODS


class GlobalChanges:
    """Mixin of `anf._Lowering`: `check_global_changes(statement)` before a statement is lowered."""

    def check_global_changes(self, statement):
        if self.is_generated():
            return
        reads = self.global_reads()
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

    def global_reads(self):
        """{key: (name, node)} of what the whole function reads of the objects outside it, with
        the functions it calls by name (read once)."""
        reads = self.__dict__.get("_global_reads")
        if reads is None:
            body = gast.Module(body=self.parsed.node.body, type_ignores=[])
            reads = self.__dict__.setdefault("_global_reads", self._global_effects(body)[1])
        return reads

    def _global_effects(self, statement):
        """({key: (name, what changes it)}, {key: (name, the node that reads it)}) of the
        objects outside the function `statement` changes and reads, with the functions of
        the user's it calls (`module_values.object_effects`)."""

        def global_value(node):
            if node.id in self.current or not self.is_static(node) or node.id not in self.namespace.values:
                return NO_GLOBAL
            return self.namespace.values[node.id]

        def callee_of(call):
            return self.resolve_static(call.func) if self.is_static(call.func) else None

        changes, reads = object_effects(statement, global_value, callee_of)
        return {key: (name, f"`{_spelled(node)}`") for key, (name, node) in changes.items()}, reads


def _spelled(node):
    """How the change `node` reads in a message: the call of a function (`record(...)`), or the
    statement's part that changes (`W[0]`, `LOG.append(v)`)."""
    if isinstance(node, gast.Call) and not (isinstance(node.func, gast.Attribute) and node.func.attr in CHANGING_METHODS):
        return f"{gast.unparse(node.func)}(...)"
    return gast.unparse(node).strip()[:60]
