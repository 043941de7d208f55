"""Deterministic, collision-free names for generated code.

Temporaries are named after what they hold (`sin_x`, `x_times_y`, `h_matmul_W`),
adjoints after their primal (`d_x`). A `Namer` is seeded with every name the
user's function and its namespace use, so a generated name never shadows one of
them; clashes get a numeric suffix (`d_x_1`). Nothing here is random.
"""

import builtins
import keyword
import re

import gast

MAX_LENGTH = 30

_OPERATOR_WORDS = {
    gast.Add: "plus",
    gast.Sub: "minus",
    gast.Mult: "times",
    gast.Div: "over",
    gast.FloorDiv: "floordiv",
    gast.Mod: "mod",
    gast.Pow: "pow",
    gast.MatMult: "matmul",
    gast.LShift: "lshift",
    gast.RShift: "rshift",
    gast.BitOr: "or",
    gast.BitAnd: "and",
    gast.BitXor: "xor",
}

_UNARY_WORDS = {gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not", gast.Invert: "invert"}

_COMPARE_WORDS = {
    gast.Lt: "lt",
    gast.LtE: "le",
    gast.Gt: "gt",
    gast.GtE: "ge",
    gast.Eq: "eq",
    gast.NotEq: "ne",
    gast.Is: "is",
    gast.IsNot: "is_not",
    gast.In: "in",
    gast.NotIn: "not_in",
}


class Namer:
    """Hands out fresh identifiers that avoid every name in `taken`."""

    def __init__(self, taken=()):
        # Builtin names are never handed out: a temporary called `sum` or `pow`
        # would shadow the builtin for any later code that calls it.
        self._taken = set(taken) | set(dir(builtins))
        self._user_names = set(taken)

    def is_user_name(self, name):
        return name in self._user_names

    def snapshot(self):
        return set(self._taken)

    def restore(self, snapshot):
        self._taken = set(snapshot)

    def reserve(self, name):
        self._taken.add(name)

    def copy(self):
        """A Namer that hands out what this one would, from here on apart from it."""
        twin = Namer.__new__(Namer)
        twin._taken, twin._user_names = set(self._taken), self._user_names
        return twin

    def is_taken(self, name):
        return name in self._taken

    def fresh(self, base):
        base = _identifier(base)
        name = base
        counter = 1
        while name in self._taken or keyword.iskeyword(name):
            name = f"{base}_{counter}"
            counter += 1
        self._taken.add(name)
        return name

    def adjoint_name(self, primal):
        return self.fresh(f"d_{primal}")

    def temporary_for(self, expr, local_names=frozenset()):
        """A fresh name describing `expr` (`sin_x`), shortened when it gets long.

        `local_names` tells method calls (`x.sum()`, named `sum_x`) from module
        paths (`np.linalg.norm(x)`, named `norm_x`).
        """
        return self.fresh(describe(expr, local_names))


def _identifier(text):
    if text == "_":
        return text
    text = re.sub(r"\W+", "_", text).strip("_")
    if not text:
        text = "t"
    if text[0].isdigit():
        text = f"t_{text}"
    return text


def describe(expr, local_names=frozenset()):
    """A short identifier-like description of an expression."""
    full = _describe(expr, local_names)
    if len(full) <= MAX_LENGTH:
        return full
    return _identifier(_head(expr))


def _head(expr):
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Pow):
        if isinstance(expr.right, gast.Constant) and expr.right.value == 2:
            return "squared"
    if isinstance(expr, gast.Call):
        return _callee_name(expr.func)
    if isinstance(expr, gast.BinOp):
        return _OPERATOR_WORDS.get(type(expr.op), "value")
    if isinstance(expr, gast.UnaryOp):
        return _UNARY_WORDS.get(type(expr.op), "value")
    if isinstance(expr, gast.Subscript):
        return "item"
    if isinstance(expr, gast.Attribute):
        return expr.attr
    if isinstance(expr, (gast.Tuple, gast.List)):
        return "items"
    if isinstance(expr, gast.Compare):
        return "test"
    return "t"


def _callee_name(func):
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return func.attr
    return "call"


def _describe(expr, local=frozenset()):
    if isinstance(expr, gast.Name):
        return expr.id
    if isinstance(expr, gast.Constant):
        value = expr.value
        if isinstance(value, bool) or value is None:
            return str(value)
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
            value = int(value)  # 2.0 reads as 2 in a name
        if isinstance(value, (int, float)):
            text = repr(value).replace("-", "neg").replace(".", "_").replace("+", "")
            return text
        return "c"
    if isinstance(expr, gast.BinOp):
        if isinstance(expr.op, gast.Pow) and isinstance(expr.right, gast.Constant) and expr.right.value == 2:
            return f"{_describe(expr.left, local)}_squared"
        word = _OPERATOR_WORDS.get(type(expr.op), "op")
        left, right = expr.left, expr.right
        if isinstance(expr.op, (gast.Mult, gast.Add)) and isinstance(left, gast.Constant) and not isinstance(right, gast.Constant):
            left, right = right, left  # `2.0 * x` is named x_times_2, as a person would
        return f"{_describe(left, local)}_{word}_{_describe(right, local)}"
    if isinstance(expr, gast.UnaryOp):
        return f"{_UNARY_WORDS.get(type(expr.op), 'op')}_{_describe(expr.operand, local)}"
    if isinstance(expr, gast.Compare):
        word = _COMPARE_WORDS.get(type(expr.ops[0]), "cmp")
        return f"{_describe(expr.left, local)}_{word}_{_describe(expr.comparators[0], local)}"
    if isinstance(expr, gast.Call):
        name = _callee_name(expr.func)
        args = [_describe(a, local) for a in expr.args[:2]]
        if _is_method(expr.func, local):
            args = [_describe(expr.func.value, local)] + args[:1]
        return "_".join([name] + args) if args else name
    if isinstance(expr, gast.Attribute):
        return f"{_describe(expr.value, local)}_{expr.attr}"
    if isinstance(expr, gast.Subscript):
        index = expr.slice
        if isinstance(index, gast.Constant) and isinstance(index.value, int):
            return f"{_describe(expr.value, local)}_{index.value}".replace("-", "neg")
        if isinstance(index, gast.Name):
            return f"{_describe(expr.value, local)}_at_{index.id}"
        if isinstance(index, gast.Constant) and isinstance(index.value, str) and index.value.isidentifier():
            return f"{_describe(expr.value, local)}_{index.value}"
        return f"{_describe(expr.value, local)}_part"
    if isinstance(expr, (gast.Tuple, gast.List)):
        return "_".join(_describe(e, local) for e in expr.elts) or "empty"
    return "t"


def _is_method(func, local):
    """True for `x.sum` where `x` is a value of the function, not a module path."""
    if not isinstance(func, gast.Attribute):
        return False
    root = func.value
    while isinstance(root, gast.Attribute):
        root = root.value
    return not (isinstance(root, gast.Name) and root.id not in local)


class RenameLoads(gast.NodeTransformer):
    """Replace reads (not writes) of the names in `mapping` by their new names."""

    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.mapping:
            return gast.Name(id=self.mapping[node.id], ctx=node.ctx, annotation=None, type_comment=None)
        return node
