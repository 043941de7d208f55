"""Broadcast folding, an optimizer pass: drop spread copies NumPy would make anyway.

Adjoint rules of reductions spread the output adjoint back over the input with
`b = np.broadcast_to(v, np.shape(w))`. When every read of `b` is inside an
elementwise expression whose result has w's shape regardless (an operand of it
has that shape and the rest are numbers or `b`), NumPy broadcasts `v` there by
itself, and the statement becomes `b = v`:

    d_s = np.broadcast_to(d_total, np.shape(s))      d_s = d_total
    d_x = d_s * 2 * x          # s = x ** 2     ->   d_x = d_s * 2 * x

The same holds where `b` is scattered back by the adjoint of the read `w = x[i]` it
was spread to: `getitem_adjoint(b, x, i)` writes into the positions `x[i]` selects,
which broadcasts `v` to w's shape by itself:

    d_p = np.broadcast_to(d_mean / size(p), np.shape(p))      d_p = d_mean / size(p)
    d_x = getitem_adjoint(d_p, x, (rows, labels))   # p = x[rows, labels]

Shapes are known equal through *shape classes*: names assigned once, at the top
level of the function (or never: parameters), whose value is an elementwise
expression (`+ - * / **`, unary minus, a ufunc called with positional operands)
of names in one class and numbers join that class. The broadcast, its reads and
any assignment of `w` must sit in one straight-line block, in that order, and
`b` must be assigned nowhere else, so a loop can never pair a spread value with
a different `w`.
"""

import gast
import numpy as np
from ..frontend.builders import walk

_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_CONSTANT = "number"
_SPREAD = "spread"


def fold_broadcasts(statements, namespace, callee):
    """`statements` with each foldable `np.broadcast_to(v, np.shape(w))` replaced by `v`.

    `callee(func, namespace)` resolves a call's function expression to its object.
    """
    stores, loads = {}, {}
    for node in _walk(statements):
        if isinstance(node, gast.Name):
            counts = stores if isinstance(node.ctx, gast.Store) else loads
            counts[node.id] = counts.get(node.id, 0) + 1
    folder = _Folder(namespace, callee, stores, loads)
    folder.learn_shapes(statements)
    folder.fold(statements)
    return statements


class _Folder:
    def __init__(self, namespace, callee, stores, loads):
        self.namespace = namespace
        self.callee = callee
        self.stores = stores
        self.loads = loads
        self.parent = {}  # union-find over names known to share a shape
        self.settled = set()  # names whose shape never changes: assigned once at top level, or never

    # ----- shape classes -----

    def find(self, name):
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def shape_class(self, name):
        if name in self.settled or self.stores.get(name, 0) == 0:
            return ("class", self.find(name))
        return ("own", name)

    def learn_shapes(self, statements):
        for statement in statements:
            if not (isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name)):
                continue
            target = statement.targets[0].id
            if self.stores.get(target) != 1:
                continue
            self.settled.add(target)
            kind = self.classify(statement.value, spread=None)
            if isinstance(kind, tuple) and kind[0] == "class":
                self.parent[self.find(target)] = kind[1]

    def elementwise(self, node):
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, _OPERATORS)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, (gast.USub, gast.UAdd))
        if isinstance(node, gast.Call) and not node.keywords and node.args:
            function, _ = self.callee(node.func, self.namespace)
            return isinstance(function, np.ufunc) and not any(isinstance(a, gast.Starred) for a in node.args)
        return False

    def classify(self, expr, spread):
        """The shape `expr` has: a number, `spread` (the folded name, broadcastable to any
        member of the target class), a shape class, or None when unknown."""
        if isinstance(expr, gast.Constant):
            return _CONSTANT if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) else None
        if isinstance(expr, gast.Name):
            return _SPREAD if expr.id == spread else self.shape_class(expr.id)
        if not self.elementwise(expr):
            return None
        operands = [expr.left, expr.right] if isinstance(expr, gast.BinOp) else (
            [expr.operand] if isinstance(expr, gast.UnaryOp) else expr.args)
        kinds = {self.classify(operand, spread) for operand in operands}
        if None in kinds:
            return None
        arrays = kinds - {_CONSTANT, _SPREAD}
        if len(arrays) > 1:
            return None
        if arrays:
            return arrays.pop()
        return _SPREAD if _SPREAD in kinds else _CONSTANT

    # ----- folding -----

    def fold(self, block):
        for position, statement in enumerate(block):
            if isinstance(statement, (gast.If, gast.For, gast.While)):
                for field in ("body", "orelse"):
                    self.fold(getattr(statement, field, None) or [])
                continue
            spread = self.spread_of(statement)
            if spread is None:
                continue
            b, value, w = spread
            if self.stores.get(b) != 1 or not self.loads.get(b):
                continue
            w_stores = self.stores.get(w, 0)
            if w_stores > 1 or (w_stores == 1 and w not in _assigned(block[:position])):
                continue
            chains = [chain for s in block[position + 1:] if not isinstance(s, (gast.If, gast.For, gast.While))
                      for chain in self.chains_of(s, b)]
            if len(chains) != self.loads[b]:
                continue  # read in a nested block, or before the broadcast
            target = self.shape_class(w)
            missed = [chain for chain in chains if not self.reaches(chain, b, target)]
            if len(missed) == self.scatters_of(block[position + 1:], b, w, block[:position]):
                statement.value = value

    def reaches(self, chain, b, target):
        """Whether some elementwise expression around a read of `b` (innermost first)
        has the shape of class `target` whatever `b`'s shape: then its value, and so
        everything built on it, is the same with `b` unspread."""
        for expression in chain:
            kind = self.classify(expression, spread=b)
            if kind == target:
                return True
            if kind not in (_SPREAD, _CONSTANT):
                return False
        return False

    def scatters_of(self, block, b, w, before):
        """How many reads of `b` in `block` are the adjoint `getitem_adjoint(b, x, i)` of a
        read `w = x[i]` made in `before`, with x and the names of i assigned once: the
        scatter broadcasts `b` to the shape of `x[i]`, which is w's, by itself."""
        from ..runtime import getitem_adjoint

        read = next((s.value for s in before if isinstance(s, gast.Assign) and len(s.targets) == 1
                     and isinstance(s.targets[0], gast.Name) and s.targets[0].id == w), None)
        if not (isinstance(read, gast.Subscript) and isinstance(read.value, gast.Name)):
            return 0
        names = [n.id for n in walk(read) if isinstance(n, gast.Name)]
        if any(self.stores.get(n, 0) > 1 for n in names):
            return 0
        index = gast.dump(read.slice)
        count = 0
        for node in _walk(block):
            if not (isinstance(node, gast.Call) and len(node.args) == 3 and not node.keywords):
                continue
            first, source, at = node.args
            if (isinstance(first, gast.Name) and first.id == b and isinstance(source, gast.Name)
                    and source.id == read.value.id and gast.dump(at) == index
                    and self.callee(node.func, self.namespace)[0] is getitem_adjoint):
                count += 1
        return count

    def chains_of(self, statement, name):
        """For each read of `name` in `statement`, the elementwise expressions around
        it, innermost first, up to the first expression that is not elementwise."""
        found = []

        def visit(node, chain):
            if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
                found.append(chain[::-1])
                return
            inner = chain + [node] if self.elementwise(node) else []
            for child in gast.iter_child_nodes(node):
                visit(child, inner)

        visit(statement, [])
        return found

    def spread_of(self, statement):
        """(b, v, w) for `b = np.broadcast_to(v, np.shape(w))`, else None."""
        if not (isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name)):
            return None
        call = statement.value
        if not (isinstance(call, gast.Call) and len(call.args) == 2 and not call.keywords):
            return None
        if self.callee(call.func, self.namespace)[0] is not np.broadcast_to:
            return None
        shape = call.args[1]
        if not (isinstance(shape, gast.Call) and len(shape.args) == 1 and isinstance(shape.args[0], gast.Name)):
            return None
        if self.callee(shape.func, self.namespace)[0] is not np.shape:
            return None
        return statement.targets[0].id, call.args[0], shape.args[0].id


def _assigned(block):
    return {n.id for s in block if isinstance(s, gast.Assign)
            for t in s.targets if not isinstance(t, gast.Subscript)
            for n in walk(t) if isinstance(n, gast.Name)}


def _walk(statements):
    pending = list(statements)
    while pending:
        node = pending.pop()
        yield node
        pending.extend(gast.iter_child_nodes(node))
