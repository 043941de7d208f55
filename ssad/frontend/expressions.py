"""Stage 3, A-normal form, expressions: each operand becomes a name or a constant.

Methods of the lowering (see `anf`) that turn an expression into an atom, emitting one
statement per operation: calls and operators (`a @ b`, `x.sum()` as the primitive),
boolean operators and conditional expressions as branches, comprehensions as loops (see
`comprehensions`), subscripts, attribute reads, and the function values of nested functions.
"""

import builtins
import dataclasses
import functools
import itertools

import gast
import numpy as np

from .builders import call as _call, clone, constant_key, walk
from .builders import name as _name
from .namespace import named_object
from ..runtime import concat, repeated, zipped
from ..runtime.replace import replaced
from .comprehensions import ComprehensionLowering, dict_as_comprehension, filter_as_comprehension, map_as_comprehension
from .joins import JoinLowering
from .spreads import SpreadLowering


_LIST_CHANGES = frozenset({"pop", "remove", "clear"})  # list methods that change the list and return a value


_SCALAR_RESULTS = {np.sum, np.mean, np.prod, np.max, np.min, np.std, np.var, np.linalg.det, np.trace, float, int, len}


def makes_sequence(value, lowering):
    """Whether `value` is known to produce a list or tuple."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return True
    if isinstance(value, gast.Name):
        return value.id in lowering.sequences
    if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice):
        return makes_sequence(value.value, lowering)  # a slice of a list or tuple
    if isinstance(value, gast.Call):
        if lowering.is_builtin_call(value, "list") or lowering.is_builtin_call(value, "tuple"):
            return True
        func = value.func
        return isinstance(func, gast.Name) and lowering.namespace.values.get(func.id) in (concat, repeated)
    return False


def short_label(atom):
    return atom.id if isinstance(atom, gast.Name) else "items"


def reads_name(node, name):
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == name for n in walk(node))


def assigns_name(node, name):
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name for n in walk(node))


def _is_negative_literal(expr):
    return (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, (gast.USub, gast.UAdd))
        and isinstance(expr.operand, gast.Constant)
        and isinstance(expr.operand.value, (int, float))
        and not isinstance(expr.operand.value, bool)
    )


class ExpressionLowering(JoinLowering, SpreadLowering, ComprehensionLowering):
    """Stage 3, A-normal form, expressions: each operand becomes a name or a constant."""

    def note_augmented(self):
        """Note the name that `a += v`, just lowered, assigns `a + v` to (inside control flow a
        temporary, copied into `a`): an object's `+=` tries its `__iadd__` first."""
        assigned = [s for s in self.out[-2:] if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]
        if len(assigned) == 2 and isinstance(assigned[1].value, gast.Name) and assigned[1].value.id == assigned[
                0].targets[0].id:
            assigned.pop()  # `t = a + v` then `a = t`
        if assigned and isinstance(assigned[-1].value, gast.BinOp):
            self.augmented_names.add(assigned[-1].targets[0].id)

    def builtin(self, name):
        """A name for a builtin in generated code (`len`, unless the user shadows it)."""
        bound = self.namespace.bind(name, getattr(builtins, name))
        return _name(bound)

    def is_builtin_call(self, expr, name):
        return (
            isinstance(expr, gast.Call)
            and isinstance(expr.func, gast.Name)
            and expr.func.id not in self.current
            and self.namespace.values.get(expr.func.id) is getattr(builtins, name)
        )

    def is_sequence(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.sequences

    def may_be_a_number(self, value):
        """Whether `value` may be a number where it may also be an array: an element read
        (`y[i]`, `y[i, j]`; a row where `y` is a matrix), or what builtin min or max chose."""
        if isinstance(value, gast.Subscript):
            parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
            return not any(isinstance(p, gast.Slice) or (isinstance(p, gast.Constant) and p.value in (None, Ellipsis))
                           for p in parts)
        if isinstance(value, gast.Name):
            return value.id in self.maybe_numbers
        return self.is_builtin_call(value, "min") or self.is_builtin_call(value, "max")

    def is_number(self, value):
        """Whether `value` is known to be a number (so `x = value` shares nothing)."""
        if isinstance(value, gast.Call) and self.is_static(value.func) and not value.keywords and len(value.args) == 1:
            from .primitives import static_value

            try:
                callee = static_value(value.func, self)
            except Exception:  # noqa: BLE001 - a path that does not resolve is reported elsewhere
                callee = None
            if callee in _SCALAR_RESULTS or getattr(callee, "__module__", None) == "math":
                return True  # np.sum(x) is an immutable NumPy scalar
        if isinstance(value, gast.Constant):
            return isinstance(value.value, (int, float, complex, bool))
        if isinstance(value, gast.Name):
            return value.id in self.numbers
        if isinstance(value, gast.BinOp):
            return self.is_number(value.left) and self.is_number(value.right)
        if isinstance(value, gast.UnaryOp):
            return self.is_number(value.operand)
        if isinstance(value, gast.Compare):
            return True
        return self.is_builtin_call(value, "len")

    def is_static(self, expr):
        """A free name or an attribute path from one (`np`, `np.pi`, `np.linalg.norm`)."""
        while isinstance(expr, gast.Attribute):
            expr = expr.value
        return isinstance(expr, gast.Name) and expr.id in self.namespace.values and expr.id not in self.current

    def resolve_static(self, expr):
        """The object a static expression names (`np.linalg.norm`, a function of the user's)."""
        return named_object(expr, self.namespace.values)

    def atom(self, expr, name_hint=None):
        if isinstance(expr, gast.Constant):
            return gast.Constant(value=expr.value, kind=None)
        if isinstance(expr, gast.Name):
            return self.load(expr.id)
        if self.is_static(expr):
            return expr
        if _is_negative_literal(expr):
            value = expr.operand.value
            return gast.Constant(value=-value if isinstance(expr.op, gast.USub) else value, kind=None)
        if isinstance(expr, (gast.IfExp, gast.BoolOp)):
            return self.choice(expr, name_hint)
        if isinstance(expr, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self.comprehension(expr, name_hint)
        if isinstance(expr, gast.Lambda):
            return self.atom_of_simple(self.function_value(expr, name_hint or "function"), name_hint or "function")
        if self.is_builtin_call(expr, "map") and len(expr.args) >= 2:
            return self.comprehension(map_as_comprehension(expr, self.namer, self.builtin("zip")), name_hint)
        if self.is_builtin_call(expr, "filter") and len(expr.args) == 2 and not expr.keywords:
            return self.comprehension(filter_as_comprehension(expr, self.namer), name_hint)
        if self.is_builtin_call(expr, "reversed") and len(expr.args) == 1 and not expr.keywords:
            # the items in reverse order, as a list (a `for` header walks `reversed(xs)` itself)
            items = gast.Call(func=self.builtin("list"), args=[expr.args[0]], keywords=[])
            backwards = gast.Slice(lower=None, upper=None, step=gast.Constant(value=-1, kind=None))
            return self.atom(gast.Subscript(value=items, slice=backwards, ctx=gast.Load()), name_hint)
        if self.makes_a_dict(expr):
            return self.comprehension(dict_as_comprehension(expr, self.namer), name_hint)
        if self.is_reduce(expr):
            return self.reduction(expr, name_hint)
        if self.is_replace(expr):  # `dataclasses.replace(p, b=v)`, `p._replace(b=v)`: one operation with rules
            record = expr.func.value if isinstance(expr.func, gast.Attribute) and expr.func.attr == "_replace" else expr.args[0]
            names = gast.Tuple(elts=[gast.Constant(value=k.arg, kind=None) for k in expr.keywords], ctx=gast.Load())
            values = gast.Tuple(elts=[k.value for k in expr.keywords], ctx=gast.Load())
            helper = _name(self.namespace.bind("replaced", replaced))
            return self.atom(gast.Call(func=helper, args=[record, names, values], keywords=[]), name_hint)
        if self.is_first_item(expr):  # `next(iter(xs))`: the first item, as `list(xs)[0]` reads it
            listed = gast.Call(func=self.builtin("list"), args=[expr.args[0].args[0]], keywords=[])
            return self.atom(gast.Subscript(value=listed, slice=gast.Constant(value=0, kind=None), ctx=gast.Load()), name_hint)
        return self.atom_of_simple(self.simple(expr), name_hint)

    def held(self, simple):
        """`simple` evaluated now into a name no later assignment rebinds: inside control flow
        a name keeps its name across assignments, so `a, b = b, a` must read `a` before `a = b`."""
        if not isinstance(simple, gast.Name) or simple.id not in self.defined:
            return self.atom_of_simple(simple)
        name = self.namer.fresh(f"{simple.id}_before")
        self.defined.add(name)
        self.emit_assign(name, simple)
        return _name(name)

    def atom_of_simple(self, simple, name_hint=None):
        if isinstance(simple, (gast.Name, gast.Constant)) or self.is_static(simple):
            return simple
        name = self.namer.fresh(name_hint) if name_hint else self.namer.temporary_for(simple, self.defined)
        self.defined.add(name)
        self.emit_assign(name, simple)
        return _name(name)

    def choice(self, expr, name_hint):
        """`a if c else b`, `a and b`, `a or b` as `if` statements assigning one name."""
        name = self.namer.fresh(name_hint or ("choice" if isinstance(expr, gast.IfExp) else "either"))
        self.defined.add(name)
        if isinstance(expr, gast.IfExp):
            test = self.atom(expr.test)
            body, orelse = self.branches(name, expr.body, expr.orelse)
            self.emit(gast.If(test=test, body=body, orelse=orelse))
            return _name(name)
        # `a and b` is `b if a else a`; `a or b` is `a if a else b` (a evaluated once).
        first = self.atom(expr.values[0])
        for value in expr.values[1:]:
            if isinstance(expr.op, gast.And):
                body, orelse = self.branches(name, value, first)
            else:
                body, orelse = self.branches(name, first, value)
            self.emit(gast.If(test=first, body=body, orelse=orelse))
            if value is not expr.values[-1]:
                # The next test reads a copy: an `if` never assigns its own test.
                so_far = self.namer.fresh(f"{name}_so_far")
                self.defined.add(so_far)
                self.emit_assign(so_far, _name(name))
                first = _name(so_far)
        return _name(name)

    def branches(self, name, value, other):
        """The two branches assigning `name` one of two values; after them `name` shares
        what either value shares."""
        before, kinds = self.sharing.snapshot(), self.path_kinds()
        body = self.branch(name, value)
        after_body, kinds_after_body = self.sharing.snapshot(), self.path_kinds()
        if not self.is_generated():
            self.sharing.join(before)
            self.join_paths(kinds)
        orelse = self.branch(name, other)
        if not self.is_generated():
            self.join_paths(kinds_after_body, self.path_kinds())
            after = self.sharing.snapshot()
            if after_body[0].get(name) != after[0].get(name):  # `s if c else y[1]`: which one, the running code tells
                self.uncertain.add(name)
            self.sharing.join(after_body, after)
        return body, orelse

    def branch(self, name, value):
        saved, self.out = self.out, []
        self.depth += 1
        self.emit_assign(name, self.simple(value))
        self.depth -= 1
        lowered, self.out = self.out, saved
        return lowered

    def load(self, name):
        return _name(self.current.get(name, name))

    def lowered_as_comprehension(self, expr):
        """Whether `expr` is a `map(f, xs, ...)` or `filter(f, xs)` that `atom` lowers as a comprehension."""
        return (self.is_builtin_call(expr, "map") and len(expr.args) >= 2) or (
            self.is_builtin_call(expr, "filter") and len(expr.args) == 2 and not expr.keywords) or self.makes_a_dict(expr) or (
            self.is_builtin_call(expr, "reversed") and len(expr.args) == 1 and not expr.keywords) or self.is_reduce(expr) or (
            self.is_first_item(expr) or self.is_replace(expr))

    def is_reduce(self, expr):
        """`functools.reduce(f, xs)` or `(f, xs, start)`, which `atom` lowers as its loop."""
        return (isinstance(expr, gast.Call) and self.is_static(expr.func) and len(expr.args) in (2, 3)
                and not expr.keywords and self.resolve_static(expr.func) is functools.reduce)

    def is_replace(self, expr):
        """`dataclasses.replace(p, b=v)` or `p._replace(b=v)` with named keywords, which `atom` lowers to `replaced`."""
        if not (isinstance(expr, gast.Call) and expr.keywords and all(k.arg is not None for k in expr.keywords)):
            return False
        if isinstance(expr.func, gast.Attribute) and expr.func.attr == "_replace" and not self.is_static(expr.func):
            return not expr.args
        return len(expr.args) == 1 and self.is_static(expr.func) and self.resolve_static(expr.func) is dataclasses.replace

    def is_first_item(self, expr):
        """`next(iter(xs))`, which `atom` lowers as `list(xs)[0]`."""
        return (self.is_builtin_call(expr, "next") and len(expr.args) == 1 and not expr.keywords
                and self.is_builtin_call(expr.args[0], "iter") and len(expr.args[0].args) == 1 and not expr.args[0].keywords)

    def makes_a_dict(self, expr):
        """`dict(zip(ks, vs))`, which `atom` lowers as a dict comprehension."""
        return (self.is_builtin_call(expr, "dict") and len(expr.args) == 1 and not expr.keywords
                and self.is_builtin_call(expr.args[0], "zip"))

    def simple(self, expr):
        """`expr` as one operation on atoms (emitting temporaries for its operands)."""
        if isinstance(expr, gast.Lambda):
            return self.function_value(expr, "function")
        if isinstance(expr, (gast.Name, gast.Constant, gast.IfExp, gast.BoolOp, gast.ListComp, gast.GeneratorExp,
                             gast.DictComp)) or self.is_static(expr) or self.lowered_as_comprehension(expr):
            return self.atom(expr)
        if isinstance(expr, gast.BinOp):
            left, right = self.atom(expr.left), self.atom(expr.right)
            if isinstance(expr.op, gast.Add) and (self.is_sequence(left) or self.is_sequence(right)):
                # `xs + ys` on lists or tuples joins them: not arithmetic
                helper = self.namespace.bind("concat", concat)
                return _call(_name(helper), left, right)
            if isinstance(expr.op, gast.Mult) and (self.is_sequence(left) or self.is_sequence(right)):
                # `xs * n` or `n * xs` on a list or tuple repeats it: not arithmetic
                items, times = (left, right) if self.is_sequence(left) else (right, left)
                return _call(_name(self.namespace.bind("repeated", repeated)), items, times)
            return gast.BinOp(left=left, op=expr.op, right=right)
        if isinstance(expr, gast.UnaryOp):
            if _is_negative_literal(expr):
                return self.atom(expr)
            return gast.UnaryOp(op=expr.op, operand=self.atom(expr.operand))
        if isinstance(expr, gast.Compare):
            return gast.Compare(
                left=self.atom(expr.left), ops=expr.ops, comparators=[self.atom(c) for c in expr.comparators]
            )
        if isinstance(expr, gast.Call):
            if self.is_builtin_call(expr, "zip") and all(k.arg == "strict" for k in expr.keywords):
                # outside a loop's header (`a, b = zip(*rows)`): the list of its tuples
                zip_call = _call(_name(self.namespace.bind("zipped", zipped)),
                                 *[atom for a in expr.args for atom in self.arguments(a)])
                zip_call.keywords = [gast.keyword(arg="strict", value=self.atom(k.value)) for k in expr.keywords]
                return zip_call
            if self.is_builtin_call(expr, "enumerate") and expr.args and not isinstance(expr.args[0], gast.Starred):
                # outside a loop's header (`pairs = list(enumerate(xs))`): zip's pairs with a count
                start = expr.args[1:] or [k.value for k in expr.keywords if k.arg == "start"]
                counter = self.atom(_call(_name(self.namespace.bind("count", itertools.count)), *map(self.atom, start)))
                return _call(_name(self.namespace.bind("zipped", zipped)), counter, self.atom(expr.args[0]))
            if self.is_builtin_call(expr, "dict") and not expr.args and all(k.arg for k in expr.keywords):
                # `dict(a=a, b=b)` is the display `{'a': a, 'b': b}`: its values carry gradients
                return gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in expr.keywords],
                                 values=[self.atom(k.value) for k in expr.keywords])
            if self.is_builtin_call(expr, "dict") and expr.keywords and len(expr.args) <= 1 and not any(
                    isinstance(a, gast.Starred) for a in expr.args):
                # `dict(d, k=v, **e)` is the display `{**dict(d), 'k': v, **e}` (see `joins`)
                keys = [None if k.arg is None else gast.Constant(value=k.arg, kind=None) for k in expr.keywords]
                values = [k.value for k in expr.keywords]
                copied = [gast.Call(func=expr.func, args=expr.args, keywords=[])] if expr.args else []
                return self.simple(gast.Dict(keys=[None] * len(copied) + keys, values=copied + values))
            if _pops_with_default(expr):
                raise self.parsed.unsupported(
                    expr, "`d.pop(key, default)` is not supported (its undo cannot tell whether the key was there); "
                    "test `key in d` and call `d.pop(key)`"
                )
            func = self.callee(expr.func)
            args = [atom for a in expr.args for atom in self.arguments(a)]
            keywords = [keyword for k in expr.keywords for keyword in self.keywords(k)]
            self.guard_call(expr, func, args, keywords)
            return gast.Call(func=func, args=args, keywords=keywords)
        if isinstance(expr, gast.Attribute):
            return gast.Attribute(value=self.atom(expr.value), attr=expr.attr, ctx=gast.Load())
        if isinstance(expr, gast.Subscript):
            joined = self.index_concatenation(expr)
            if joined is not None:
                return joined
            return gast.Subscript(value=self.atom(expr.value), slice=self.index(expr.slice), ctx=gast.Load())
        if isinstance(expr, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        if isinstance(expr, gast.List):
            return gast.List(elts=[self.atom(e) for e in expr.elts], ctx=gast.Load())
        if isinstance(expr, gast.Dict) and any(k is None for k in expr.keys):
            return self.merged_dict(expr)
        if isinstance(expr, gast.Dict):
            return gast.Dict(
                keys=[clone(constant_key(k)) for k in expr.keys], values=[self.atom(v) for v in expr.values]
            )
        raise self.parsed.unsupported(expr, f"`{type(expr).__name__}` expressions are not supported")

    def callee(self, func):
        if self.is_static(func):
            return func
        if isinstance(func, gast.Attribute) and func.attr in _LIST_CHANGES and isinstance(func.value, gast.Name):
            # `items.pop()`: refused on a list the caller passed in, as `items.append(v)` is
            self.check_not_shared(
                func.value.id, self.origin, f"{func.value.id}.{func.attr}(...)", write=True, list_change=True
            )
        if isinstance(func, gast.Attribute):
            receiver = self.atom(func.value)
            self.check_method_value(func, receiver)  # `r = xs.sort()`: see `in_place_calls`
            return gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load())
        # A function value: a parameter, a nested def, a lambda, an item of a container.
        return self.atom(func)

    def index(self, index):
        if isinstance(index, gast.Slice):
            return gast.Slice(
                lower=None if index.lower is None else self.atom(index.lower),
                upper=None if index.upper is None else self.atom(index.upper),
                step=None if index.step is None else self.atom(index.step),
            )
        if isinstance(index, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in index.elts], ctx=gast.Load())
        return self.atom(index)


def _pops_with_default(call):
    """`items.pop(key, default)` on a local value: a dict's pop, whose undo would need to
    know whether the key was there."""
    func = call.func
    return isinstance(func, gast.Attribute) and func.attr == "pop" and isinstance(func.value, gast.Name) and len(call.args) > 1
