"""The unit seed, an optimizer pass: a gradient of a real scalar starts from `1.0`, so
multiplying by its adjoint is no work at all.

`grad(f)` of an `f` whose result is known to be a real scalar (see `analysis.ranks`)
seeds the adjoint sweep with `d_s = 1.0`. Where that adjoint is assigned nowhere else,
its reads are the number 1.0, and `1.0 * e`, `e * 1.0` and `e / 1.0` are `e`:

    d_s = 1.0                                   d_s = 1.0
    d_x_at_i = d_s * x_at_i_minus_1      ->     d_x_at_i = x_at_i_minus_1

A product is a fresh array, which the adjoint sweep may then update in place
(`d_a += ...`), and which nothing else changes. Where folding leaves an assignment's
value a name or a call (which may return an array that something else holds), and the
assigned adjoint is updated in place later and is not a known scalar, the product
stays; a known scalar's `t += e` becomes `t = t + e` (the same for a number, and
plainly no write into what t was). A product whose folded value has no float
constant in it (`a * b` of integer arrays) stays where the adjoint is updated in place
later: `d_a += e` would not fit floats into integers. The product stays too where what it folds to names
an array that code changes in place (a write `a[i] = v`, `a += ...`, or a call for its
effect such as `restore_part(a, i, old)`, which undoes a write): `d_b = a` would change
with it.
"""


import gast

from ..frontend.builders import clone, walk


def fold_unit_seed(statements, seed, scalars):
    """`statements` with the reads of the adjoint `seed` (assigned `1.0` once) folded away,
    or None when there is nothing to fold.

    `scalars`: names known to hold real scalars, whose `+=` never writes into an array."""
    stores = [n for s in statements for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
    loads = [n for s in statements for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]
    if sum(n.id == seed for n in stores) != 1 or not any(n.id == seed for n in loads):
        return None
    updated = set()  # names some statement changes in place
    for node in (n for s in statements for n in walk(s)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            updated.add(node.target.id)
        elif isinstance(node, gast.Assign):
            updated.update(t.value.id for t in node.targets if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name))
    changed = set(updated)  # ... and the arrays calls for effect change: `restore_part(a, i, old)`
    for node in (n for s in statements for n in walk(s)):
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
            func = node.value.func
            operands = [func.value] if isinstance(func, gast.Attribute) else []
            changed.update(a.id for a in operands + list(node.value.args) if isinstance(a, gast.Name))
    aliased = set()  # scalars assigned a name or call by folding: `+=` on them becomes `= ... +`
    folded = [_fold_statement(s, seed, updated, scalars, aliased, changed) for s in statements]
    return _Rebind(aliased).visit_block(folded) if aliased else folded


def _fold_statement(statement, seed, updated, scalars, aliased, changed):
    for field in ("body", "orelse"):
        block = getattr(statement, field, None)
        if isinstance(block, list) and not isinstance(statement, gast.Assign):
            setattr(statement, field, [_fold_statement(s, seed, updated, scalars, aliased, changed) for s in block])
    if isinstance(statement, gast.Assign) and _is_the_seed(statement, seed):
        return statement
    if not isinstance(statement, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
        return statement
    if not any(isinstance(n, gast.Name) and n.id == seed for n in walk(statement)):
        return statement
    folder = _Fold(seed)
    folded = folder.visit(clone(statement))
    if folder.exposed & changed:
        return statement  # `d_b = a` would be the array `a`, which is changed in place later
    if isinstance(statement, gast.Assign) and isinstance(statement.value, (gast.BinOp, gast.UnaryOp)):
        fresh = isinstance(folded.value, (gast.BinOp, gast.UnaryOp, gast.Constant))
        targets = [t.id for t in statement.targets if isinstance(t, gast.Name)]
        if not fresh and any(t in updated and t not in scalars for t in targets):
            return statement  # the product's fresh array is updated in place later: keep it
        if not _surely_float(folded.value) and any(t in updated and t not in scalars for t in targets):
            return statement  # `d_a = a * k` of integers would hold integers, and `d_a += 0.5` fail
        if not fresh:
            aliased.update(t for t in targets if t in updated)
    return folded


def _is_the_seed(statement, seed):
    return len(statement.targets) == 1 and isinstance(statement.targets[0], gast.Name) and statement.targets[0].id == seed


class _Fold(gast.NodeTransformer):
    def __init__(self, seed):
        self.seed = seed
        self.exposed = set()  # the names a product folded to may hold itself: `a` of `1.0 * a`

    def visit_Name(self, node):
        if node.id == self.seed and isinstance(node.ctx, gast.Load):
            return gast.Constant(value=1.0, kind=None)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Mult) and _is_one(node.left):
            return self.expose(_as_float(node.right))
        if isinstance(node.op, (gast.Mult, gast.Div)) and _is_one(node.right):
            return self.expose(_as_float(node.left))
        return node

    def expose(self, operand):
        if not isinstance(operand, (gast.BinOp, gast.UnaryOp, gast.Constant)):  # not a fresh value
            self.exposed.update(n.id for n in walk(operand) if isinstance(n, gast.Name))
        return operand


def _as_float(node):
    """`2` as `2.0`: the product `1.0 * 2` it stands for is a float, and so is the adjoint made of it."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return gast.Constant(value=float(node.value), kind=None)
    return node


def _surely_float(value):
    """Whether `value` is a float whatever its names hold: a float constant, a quotient, or
    arithmetic with one of those as an operand (`2.0 * a`), which makes integers floats."""
    if isinstance(value, gast.Constant):
        return type(value.value) is float
    if isinstance(value, gast.UnaryOp):
        return _surely_float(value.operand)
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, gast.Div) or (isinstance(value.op, (gast.Mult, gast.Add, gast.Sub)) and (
            _surely_float(value.left) or _surely_float(value.right)))
    return False


def _is_one(node):
    return isinstance(node, gast.Constant) and type(node.value) is float and node.value == 1.0


class _Rebind(gast.NodeTransformer):
    """`t += e` as `t = t + e` for the names given: the same for a number, and code that reads
    `t` as another name's value then shows no write into it."""

    def __init__(self, names):
        self.names = names

    def visit_block(self, block):
        return [self.visit(s) for s in block]

    def visit_AugAssign(self, node):
        if isinstance(node.target, gast.Name) and node.target.id in self.names:
            load = gast.Name(id=node.target.id, ctx=gast.Load(), annotation=None, type_comment=None)
            value = gast.BinOp(left=load, op=node.op, right=node.value)
            return gast.copy_location(gast.Assign(targets=[node.target], value=value, type_comment=None), node)
        return node
