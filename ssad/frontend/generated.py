"""Generated code differentiated again: run-time helpers that change values in place.

A first-order gradient restores what an in-place write overwrote
(`restore_part(x, i, old)`) and undoes `list.extend` (`drop_last(items, n)`). Read
again by `grad(grad(f))` or `hessian`, both are in-place changes the second-order tape
must see, so the A-normal form spells them as what ssad already differentiates: the
write `x[i] = restored_value(old)`, and `t = list(items[len(items) - n:])` followed by
n pops.

The backward half of a callee, `backward_g(d_t, t_saved)`, pops the tape inside
`t_saved` and undoes the list changes of `forward_g`. The second-order backward sweep
undoes `forward_g` in turn, so it needs those tapes and lists as `forward_g` left
them, whether or not it differentiates the `backward_g` call (it does not when that
call's result does not reach the output): the call is given its own copy,
`backward_g(d_t, unspent(t_saved))`.
"""


import gast

from ..runtime import drop_last, insert_position, is_missing, owned, put_back, restore_part, restored_value, unspent
from ..runtime.dynamic import call_forward, method_forward
from ..runtime.handles import Handle
from ..runtime.operators import operator_forward
from ..runtime.pullbacks import call_forward_packed, method_forward_packed
from ..rules.objects import operator_forward_packed
from .builders import call, clone, name, walk


_LIST_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})


class GeneratedCodeLowering:
    """Mixed into the A-normal form's lowering: recognizes and rewrites the two helpers."""

    def is_restore_part(self, value):
        return self._calls(value, restore_part, 3)

    def without_restore_part(self, statement):
        """`restore_part(x, i, old)` as the write `x[i] = restored_value(old)`, or as
        `x.pop(i)` where the write being undone added the key `i` to a dict."""
        container, index, old = statement.value.args
        return self._filled(statement, (
            "__index__ = __i__\n"
            "__saved__ = __old__\n"
            "if __is_missing__(__saved__):\n"
            "    __x__.pop(__index__)\n"
            "else:\n"
            "    __x__[__index__] = __restored_value__(__saved__)"
        ), __x__=container, __i__=index, __old__=old, __is_missing__=is_missing, __restored_value__=restored_value,
            __index__=name(self.namer.fresh("index")), __saved__=name(self.namer.fresh("saved")))

    def is_put_back(self, statement):
        return isinstance(statement, gast.Expr) and self._calls(statement.value, put_back, 3)

    def without_put_back(self, statement):
        """`put_back(items, i, v)` as `items[i] = v` for a dict, else the list's `insert`."""
        items, index, value = statement.value.args
        return self._filled(statement, (
            "if __isinstance__(__items__, __dict__):\n"
            "    __items__[__i__] = __v__\n"
            "else:\n"
            "    __items__.insert(__position__(__items__, __i__), __v__)"
        ), __items__=items, __i__=index, __v__=value, __isinstance__=isinstance, __dict__=dict,
            __position__=insert_position)

    def is_drop_last(self, statement):
        one_target = isinstance(statement, gast.Assign) and len(statement.targets) == 1
        return (isinstance(statement, gast.Expr) or one_target) and self._calls(statement.value, drop_last, 2)

    def without_drop_last(self, statement):
        """`t = drop_last(items, n)` as `t = list(items[len(items) - n:])`, then `items.pop()` n times."""
        items, count = statement.value.args
        taken, loop = self._filled(statement, (
            "__list__(__items__[__len__(__items__) - __count__:])\n"
            "for __k__ in __range__(__count__):\n"
            "    __items__.pop()"
        ), __items__=items, __count__=count, __len__=len, __range__=range, __list__=list,
            __k__=name(self.namer.fresh("k")))
        if isinstance(statement, gast.Assign):
            return [gast.copy_location(gast.Assign(targets=statement.targets, value=taken.value, type_comment=None),
                                       statement), loop]
        return [loop]

    def _filled(self, statement, template, **parts):
        """The statements of `template` with each `__part__` replaced by an expression of
        generated code, or by a name bound in the namespace to a run-time value."""
        names = {
            key: part if isinstance(part, gast.AST) else name(self.namespace.bind(key.strip("_"), part))
            for key, part in parts.items()
        }

        class Fill(gast.NodeTransformer):
            def visit_Name(self, node):
                if node.id not in names:
                    return node
                filled = clone(names[node.id])
                if isinstance(filled, gast.Name):
                    filled.ctx = node.ctx
                return filled

        return [gast.copy_location(Fill().visit(node), statement) for node in gast.parse(template).body]

    def is_generated(self):
        filename = self.parsed.filename
        return filename.startswith("<ssad ") and not filename.startswith("<ssad closure")

    def written_in_place(self):
        """The names generated code changes in place: `x[i] = v`, `restore_part(x, i, old)`,
        `items.pop()` and the other changes of a list."""
        names = set()
        for node in walk(self.parsed.node):
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
                names.add(node.value.id)
            elif (self.is_restore_part(node) or self._calls(node, put_back, 3)) and isinstance(node.args[0], gast.Name):
                names.add(node.args[0].id)
            elif (
                isinstance(node, gast.Call)
                and isinstance(node.func, gast.Attribute)
                and node.func.attr in _LIST_CHANGES
                and isinstance(node.func.value, gast.Name)
            ):
                names.add(node.func.value.id)
        return names

    def owns_view(self, source):
        """Whether a view or a second name of the local `source` is read as a copy (see
        `runtime.owned`): generated code writes into that array, or changes that list.
        Asked of the name assigned, whether it is read as a copy of the view, second name or
        item it is assigned (`b = d_1['b']`, then `b[0] = v`): generated code writes into it,
        and reads what it came from only before the write, or after the backward sweep
        restored what the write overwrote (`d_1`'s structure, for `d_1`'s adjoint)."""
        return source is not None and any(self.current.get(n) == source for n in self.in_place_names)

    def owned(self, view):
        return call(name(self.namespace.bind("owned", owned)), name(view))

    def with_unspent_residuals(self, value):
        """`value` with each call of a callee's backward half given its own copy of the
        residuals, `backward_g(d_t, unspent(t_saved))`, and each call through a function
        value read as one whose pullback can be differentiated (see `runtime.pullbacks`):
        `call_forward(f, x, k=y)` as `call_forward_packed(f, (x,), {'k': y})`."""
        lowering = self

        class Copy(gast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                function = lowering.namespace.values.get(node.func.id) if isinstance(node.func, gast.Name) else None
                if function is call_forward or function is method_forward or function is operator_forward:
                    return gast.copy_location(lowering.packed_call(node, function), node)
                if not (isinstance(function, Handle) and function.half == "backward" and len(node.args) == 2):
                    return node
                residuals = call(name(lowering.namespace.bind("unspent", unspent)), node.args[1])
                return gast.copy_location(gast.Call(func=node.func, args=[node.args[0], residuals], keywords=[]), node)

        return Copy().visit(value)

    def packed_call(self, node, function):
        """`call_forward(f, *args, **kwargs)` as `call_forward_packed(f, args, kwargs)`, and
        `method_forward(r, "m", ...)` and `operator_forward(u, "__mul__", x)` likewise; an
        argument generated code changes in place later is passed as a copy, which the
        pullback reads when it runs."""
        leading = 1 if function is call_forward else 2
        arguments = [self.owned(a.id) if isinstance(a, gast.Name) and a.id in self.in_place_names else a
                     for a in node.args[leading:]]
        packed = [
            gast.Tuple(elts=arguments, ctx=gast.Load()),
            gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in node.keywords],
                      values=[k.value for k in node.keywords]),
        ]
        helper = {call_forward: call_forward_packed, method_forward: method_forward_packed,
                  operator_forward: operator_forward_packed}[function]
        return gast.Call(func=name(self.namespace.bind(helper.__name__, helper)), args=node.args[:leading] + packed, keywords=[])

    def _calls(self, value, helper, arity):
        return (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and self.namespace.values.get(value.func.id) is helper
            and len(value.args) == arity
            and not value.keywords
        )
