"""Stage 3, A-normal form: comprehensions, and `map`, `filter` and `dict(zip(...))` read as them;
`functools.reduce` read as its loop.

`[f(v) for v in xs if c]` becomes a loop that appends to a new list (a dict comprehension
assigns keys), whose variables get fresh names. Methods of the lowering (see `anf` and
`expressions`).
"""

import gast

from .builders import call as _call, clone, walk
from .builders import name as _name
from .builders import store as _store


class _Rename(gast.NodeTransformer):
    """Rename the variables of a comprehension (a copy of the tree is returned)."""

    def __init__(self, renames):
        self.renames = renames

    def visit(self, node):
        return super().visit(clone(node)) if node is not None else None

    def generic_visit(self, node):
        return gast.NodeTransformer.generic_visit(self, node)

    def visit_Name(self, node):
        if node.id in self.renames:
            return gast.Name(id=self.renames[node.id], ctx=node.ctx, annotation=None, type_comment=None)
        return node


def map_as_comprehension(expr, namer, zip_function):
    """`map(f, xs, ys)` as `[f(v, w) for v, w in zip(xs, ys)]` (a list, not an iterator);
    `zip_function`, the name of the builtin zip in the code (see `ExpressionLowering.builtin`)."""
    function, iterables = expr.args[0], expr.args[1:]
    names = [namer.fresh("item") for _ in iterables]
    if len(iterables) == 1:
        target, iterable = _store(names[0]), iterables[0]
    else:
        target = gast.Tuple(elts=[_store(n) for n in names], ctx=gast.Store())
        iterable = gast.Call(func=zip_function, args=list(iterables), keywords=[])
    element = gast.Call(func=function, args=[_name(n) for n in names], keywords=[])
    generator = gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
    return gast.ListComp(elt=element, generators=[generator])


def filter_as_comprehension(expr, namer):
    """`filter(f, xs)` as `[v for v in xs if f(v)]`, `filter(None, xs)` as `[v for v in xs if v]`."""
    function, iterable = expr.args
    item = namer.fresh("item")
    test = _name(item)
    if not (isinstance(function, gast.Constant) and function.value is None):
        test = gast.Call(func=function, args=[_name(item)], keywords=[])
    generator = gast.comprehension(target=_store(item), iter=iterable, ifs=[test], is_async=0)
    return gast.ListComp(elt=_name(item), generators=[generator])


def dict_as_comprehension(expr, namer):
    """`dict(zip(ks, vs))` as `{k: v for k, v in zip(ks, vs)}`."""
    key, value = namer.fresh("key"), namer.fresh("value")
    target = gast.Tuple(elts=[_store(key), _store(value)], ctx=gast.Store())
    generator = gast.comprehension(target=target, iter=expr.args[0], ifs=[], is_async=0)
    return gast.DictComp(key=_name(key), value=_name(value), generators=[generator])


class ComprehensionLowering:
    def comprehension(self, expr, name_hint):
        """`[f(v) for v in xs if c]` as a loop that appends (a dict comprehension assigns keys).

        The comprehension's variables get fresh names: like Python's own scope for
        them, they never touch the function's variables of the same name.
        """
        name = self.namer.fresh(name_hint or ("mapping" if isinstance(expr, gast.DictComp) else "items"))
        renames = {}
        for generator in expr.generators:
            for node in walk(generator.target):
                if isinstance(node, gast.Name):
                    renames[node.id] = self.namer.fresh(node.id)
                    self.spelled[renames[node.id]] = node.id
        rename = _Rename(renames)
        origin = self.origin
        if isinstance(expr, gast.DictComp):
            start = gast.Dict(keys=[], values=[])
            target = gast.Subscript(value=_name(name), slice=rename.visit(expr.key), ctx=gast.Store())
            innermost = gast.Assign(targets=[target], value=rename.visit(expr.value), type_comment=None)
        else:
            start = gast.List(elts=[], ctx=gast.Load())
            append = gast.Attribute(value=_name(name), attr="append", ctx=gast.Load())
            innermost = gast.Expr(value=_call(append, rename.visit(expr.elt)))
        body = [gast.copy_location(innermost, origin)]
        for generator in reversed(expr.generators):
            for condition in reversed(generator.ifs):
                body = [gast.copy_location(gast.If(test=rename.visit(condition), body=body, orelse=[]), origin)]
            loop = gast.For(
                target=rename.visit(generator.target), iter=rename.visit(generator.iter), body=body, orelse=[], type_comment=None
            )
            body = [gast.copy_location(loop, origin)]
        self.defined.add(name)
        self.current[name] = name
        self.emit_assign(name, start)
        saved_origin = self.origin
        self.block(body)
        self.origin = saved_origin
        for known in (self.lengths, self.keys):  # the loop fills what started empty: `f(*items)` is not `f()`
            known.pop(name, None)
        del self.current[name]
        return _name(name)

    def reduction(self, expr, name_hint):
        """`functools.reduce(f, xs, start)` as the loop it runs, its statements lowered as the
        user's would be: `fn = f`, `acc = start`, `for item in xs: acc = fn(acc, item)`; without
        `start`, the first item starts it (`items = list(xs)`, `acc = items[0]`, then `items[1:]`)."""
        function, accumulated, item = (self.namer.fresh(n) for n in ("function", name_hint or "reduced", "item"))
        origin = self.origin
        statements = [gast.Assign(targets=[_store(function)], value=expr.args[0], type_comment=None)]
        if len(expr.args) == 3:
            start, items = expr.args[2], expr.args[1]
        else:
            whole = self.namer.fresh("items")
            listed = _call(_name(self.namespace.bind("list", list)), expr.args[1])
            statements.append(gast.Assign(targets=[_store(whole)], value=listed, type_comment=None))
            start = gast.Subscript(value=_name(whole), slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
            rest = gast.Slice(lower=gast.Constant(value=1, kind=None), upper=None, step=None)
            items = gast.Subscript(value=_name(whole), slice=rest, ctx=gast.Load())
        step = gast.Assign(targets=[_store(accumulated)], value=_call(_name(function), _name(accumulated), _name(item)),
                           type_comment=None)
        statements.append(gast.Assign(targets=[_store(accumulated)], value=start, type_comment=None))
        statements.append(gast.For(target=_store(item), iter=items, body=[gast.copy_location(step, origin)], orelse=[],
                                   type_comment=None))
        self.block([gast.copy_location(s, origin) for s in statements])
        self.origin = origin
        return self.load(accumulated)
