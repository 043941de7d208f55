"""Constant folding of substituted rule bodies, and the symbolic zero.

An inlined tangent rule receives `ZERO` for an operand without a tangent; `fold`
simplifies what that leaves (`ZERO * x` is `ZERO`, `a + ZERO` is `a`), so a zero is
never computed; `materialize_zeros` turns a zero that must remain into `0.0`.
`plain_forms` replaces a helper call whose arguments' ranks are known by its plain form
(`REGISTRY.specialized_form`), and folds what that leaves.
"""

import inspect
import operator

import gast
import numpy as np

from ..frontend.builders import clone, name
from ..registry import REGISTRY

ZERO = "__ssad_zero__"  # the symbolic zero tangent, substituted into inlined tangent rules

# Functions linear in their first argument: a zero there makes the result zero.
_LINEAR_IN_FIRST = {
    "broadcast_like", "broadcast_to", "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "ravel", "sum", "mean", "cumsum", "flip", "fliplr", "flipud", "roll", "take", "diag", "diagonal", "triu",
    "tril", "real", "conj", "conjugate", "negative", "positive", "copy", "atleast_1d", "atleast_2d",
    "atleast_3d", "tile", "repeat", "pad", "trace", "unbroadcast", "rot90", "asarray", "array", "sort",
}
# Functions linear in every array argument (bilinear products): a zero anywhere makes zero.
_PRODUCTS = {"dot", "matmul", "outer", "inner", "tensordot", "kron", "vdot", "multiply", "cross"}


def is_zero(node):
    return isinstance(node, gast.Name) and node.id == ZERO


def _zero():
    return gast.Name(id=ZERO, ctx=gast.Load(), annotation=None, type_comment=None)


def _called_name(func):
    if isinstance(func, gast.Attribute):
        return func.attr
    if isinstance(func, gast.Name):
        return func.id
    return None


class _Fold(gast.NodeTransformer):
    """Fold arithmetic on literals, the identities x*1, 1*x, x**1, x+0, 0+x, x-0, x/1, and
    the symbolic zero tangent: 0*x, x@0, 0/x, -0, linear functions of 0 are 0; x+0 is x."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        value, index = node.value, node.slice
        if isinstance(value, gast.Tuple) and isinstance(index, gast.Constant) and isinstance(index.value, int):
            if -len(value.elts) <= index.value < len(value.elts):
                return value.elts[index.value]  # (a, b)[0] is a
        if is_zero(value):
            return _zero()
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        called = _called_name(node.func)
        if node.args and is_zero(node.args[0]) and called in _LINEAR_IN_FIRST:
            return _zero()
        if called in _PRODUCTS and any(is_zero(a) for a in node.args):
            return _zero()
        if called == "einsum" and any(is_zero(a) for a in node.args[1:]):
            return _zero()
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if is_zero(left) or is_zero(right):
            if isinstance(node.op, (gast.Mult, gast.MatMult)):
                return _zero()
            if isinstance(node.op, gast.Div) and is_zero(left):
                return _zero()
            if isinstance(node.op, gast.Add):
                return right if is_zero(left) else left
            if isinstance(node.op, gast.Sub):
                if is_zero(right):
                    return left
                return gast.UnaryOp(op=gast.USub(), operand=right)
        if _number(left) and _number(right):
            try:
                value = _apply(node.op, left.value, right.value)
            except (ArithmeticError, ValueError):
                return node
            if isinstance(value, bool):
                value = int(value)
            return gast.Constant(value=value, kind=None)
        if isinstance(node.op, gast.Mult):
            if _is(right, 1):
                return left
            if _is(left, 1):
                return right
        if isinstance(node.op, gast.Pow) and _is(right, 1):
            return left
        if isinstance(node.op, gast.Add):
            if _is(right, 0):
                return left
            if _is(left, 0):
                return right
        if isinstance(node.op, gast.Sub) and _is(right, 0):
            return left
        if isinstance(node.op, gast.Div) and _is(right, 1):
            return left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if is_zero(node.operand) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return _zero()
        if isinstance(node.op, gast.USub) and _number(node.operand):
            return gast.Constant(value=-node.operand.value, kind=None)
        if isinstance(node.op, gast.Not) and isinstance(node.operand, gast.Constant):
            return gast.Constant(value=not node.operand.value, kind=None)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot)):
            # `t is not None` of a rule given the zero or a literal for t: the zero becomes 0.0, never
            # None (and `0.0 is not None`, printed, is a SyntaxWarning when the code compiles)
            pair = (node.left, node.comparators[0])
            if any(_is_none(e) for e in pair) and all(_is_none(e) or _never_none(e) for e in pair):
                same = _is_none(pair[0]) and _is_none(pair[1])
                return gast.Constant(value=same == isinstance(node.ops[0], gast.Is), kind=None)
        if len(node.ops) == 1 and _literal(node.left) and _literal(node.comparators[0]):
            left, right = node.left.value, node.comparators[0].value
            compare = _COMPARISONS.get(type(node.ops[0]))
            if compare is not None:
                try:
                    return gast.Constant(value=bool(compare(left, right)), kind=None)
                except TypeError:
                    return node
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, gast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_BoolOp(self, node):
        # Leading literals decide or drop out: `True or k` is True, `False or k` is k.
        self.generic_visit(node)
        values = list(node.values)
        deciding = (lambda v: bool(v)) if isinstance(node.op, gast.Or) else (lambda v: not v)
        while values and isinstance(values[0], gast.Constant):
            if deciding(values[0].value) or len(values) == 1:
                return values[0]
            values.pop(0)
        if len(values) == 1:
            return values[0]
        node.values = values
        return node


_COMPARISONS = {
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
    gast.Is: operator.is_,
    gast.IsNot: operator.is_not,
}


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _never_none(node):
    """Whether `node` is a value that cannot be None: the symbolic zero, a literal, a display."""
    if isinstance(node, gast.Constant):
        return node.value is not None
    return is_zero(node) or isinstance(node, (gast.Tuple, gast.List, gast.Dict, gast.Set))


def _literal(node):
    return isinstance(node, gast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str)))


def _number(node):
    # bool counts as a number here: `1 + (p == 0)` folds to 1 once `p == 0` is False.
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float))


def _is(node, number):
    # Only exact Python ints: folding `x * 1.0` could change an integer result's type.
    return _number(node) and type(node.value) is int and node.value == number


def _apply(op, a, b):
    if isinstance(op, gast.Add):
        return a + b
    if isinstance(op, gast.Sub):
        return a - b
    if isinstance(op, gast.Mult):
        return a * b
    if isinstance(op, gast.Div):
        return a / b
    if isinstance(op, gast.Pow):
        if abs(b) > 64:
            raise ValueError("too large to fold")
        return a**b
    raise ValueError("not folded")


def fold(node):
    return _Fold().visit(node)


class _Materialize(gast.NodeTransformer):
    def visit_Name(self, node):
        return gast.Constant(value=0.0, kind=None) if node.id == ZERO else node

    def visit_IfExp(self, node):
        # `zero if d is None else d` of a rule, given the zero for d: the branch for a zero
        # that is not None (`0.0 is None` would be printed, which Python warns about)
        test = node.test
        if (isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (gast.Is, gast.IsNot))
                and is_zero(test.left) and _is_none(test.comparators[0])):
            return self.visit(node.orelse if isinstance(test.ops[0], gast.Is) else node.body)
        node = self.generic_visit(node)
        if all(isinstance(e, gast.Constant) and type(e.value) is float and e.value == 0.0 for e in (node.body, node.orelse)):
            return node.body  # `0.0 if len(tangents) > 2 else 0.0`: zero either way (a rule's tests have no effects)
        return node


def materialize_zeros(node):
    """Symbolic zeros left where they cannot fold away become the literal 0.0."""
    return _Materialize().visit(node)


def plain_forms(output, namespace, ranks):
    """`output` with each call of a helper that has a plain form for its arguments' ranks
    (`REGISTRY.specialized_form`) replaced by that form, its parameters bound to the arguments."""

    def rank(expr):
        if isinstance(expr, gast.Name):
            return ranks.get(expr.id)
        if isinstance(expr, gast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            return 0
        return None

    class Specialize(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if not isinstance(node.func, gast.Name) or node.keywords:
                return node
            helper = namespace.values.get(node.func.id)
            if helper is None or not callable(helper):
                return node
            known = [rank(a) for a in node.args]
            if None in known:
                return node
            source = REGISTRY.specialized_form(helper, known)
            if source is None:
                return node
            params = list(inspect.signature(helper).parameters)[: len(node.args)]
            bound = dict(zip(params, node.args, strict=True))
            bound["np"] = name(namespace.bind("np", np))
            self.changed = True
            return _bind(gast.parse(source).body[0].value, bound)

    specialize = Specialize()
    specialize.changed = False
    output = specialize.visit(output)
    return fold(output) if specialize.changed else output  # `size(a) / 1` where the form was a constant


def _bind(expr, bound):
    class Bind(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in bound:
                return clone(bound[node.id])
            return node

    return Bind().visit(expr)
