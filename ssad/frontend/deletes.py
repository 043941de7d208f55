"""`del` statements: lowered in the user's code, dropped from generated code.

- `del xs[i]` and `del d[k]` remove an item of a list or dict: they are `xs.pop(i)` and
  `d.pop(k)` for their effect, which the lowering differentiates (`lower_deletes`);
- `del name` unbinds a name no later statement of a program that runs reads: dropped;
- `del xs[i:j]` and `del obj.attr` are refused, saying what to write instead;
- in generated code, `del` of plain names releases values no later statement reads
  (`optimize.release`) and changes nothing: dropped (`without_deletes`).
"""

import gast

from .builders import walk


def lower_deletes(parsed):
    """Lower the `del` statements of the user's function `parsed` (see the module)."""

    class Lower(gast.NodeTransformer):
        def visit_Delete(self, statement):
            lowered = []
            for target in statement.targets:
                if isinstance(target, gast.Name):
                    continue
                if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and not isinstance(
                        target.slice, gast.Slice):
                    pop = gast.Attribute(value=gast.Name(id=target.value.id, ctx=gast.Load(), annotation=None,
                                                         type_comment=None), attr="pop", ctx=gast.Load())
                    popped = gast.copy_location(gast.Call(func=pop, args=[target.slice], keywords=[]), statement)
                    lowered.append(gast.copy_location(gast.Expr(value=popped), statement))
                    continue
                if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                    advice = (f"`del {target.value.id}[...]` of a slice is not supported; build the list "
                              f"without those items (`{target.value.id} = {target.value.id}[:i] + "
                              f"{target.value.id}[j:]`)")
                else:
                    advice = ("`del` is supported for names and for one item of a list or dict held in a "
                              "name (`del xs[i]`, `del d[k]`); assign the value you want instead")
                raise parsed.unsupported(statement, advice)
            return lowered

    Lower().visit(parsed.node)
    _filled(parsed.node)


def without_deletes(node):
    """The function `node` with every `del` of plain names dropped: in generated code they
    release values no later statement reads (`optimize.release`), and change none."""

    class Drop(gast.NodeTransformer):
        def visit_Delete(self, statement):
            return None if all(isinstance(t, gast.Name) for t in statement.targets) else statement

    Drop().visit(node)
    _filled(node)
    return node


def _filled(node):
    """Every block left empty (a body that held only a `del`) holds a `pass`."""
    for inner in walk(node):
        if isinstance(getattr(inner, "body", None), list) and not inner.body:
            inner.body = [gast.Pass()]
