"""The tape checker's values: symbolic terms for what each name holds, and expressions over them.

A value is an `_Obj` holding a term (a tuple naming how it was made); the checker
(`mirror`) runs both sweeps on terms and compares what the adjoint sweep reads with
what the forward sweep held at the same point. These methods of the run make, mix
and read terms, and evaluate expressions to terms (pure calls become a term of the
call; calls that are not pure make a fresh term).
"""


import ast

import gast
import numpy as np

from ..registry import REGISTRY


_SHAPE_READS = {("unbroadcast", 1), ("zeros_like_value", 0)}  # (helper, argument) read for its shape

_MAX_TRIPS = 3
_SEQUENCES = ("range", "reversed", "list", "tuple")  # builtins whose items the checker follows


class MirrorError(AssertionError):
    """The adjoint sweep reads a value that is not the one the forward sweep had there."""


class _Obj:
    """A value in memory: its own term, or a view of another object."""

    __slots__ = ("term", "base", "key")

    def __init__(self, term, base=None, key=None):
        self.term, self.base, self.key = term, base, key


class Terms:
    """The tape checker's values: symbolic terms for what each name holds, and expressions over them."""

    def term(self, *parts):
        found = self.terms.get(parts)
        if found is None:
            found = self.terms[parts] = len(self.by_id)
            self.by_id.append(parts)
        return found

    def new(self, label):
        self.fresh += 1
        return self.term("fresh", label, self.fresh)

    def mix(self, term, modulus):
        h = (term * 2654435761 + self.seed * 40503 + 12345) & 0xFFFFFFFF
        return (h >> 7) % modulus

    def value(self, obj):
        if obj.base is not None:
            return self.term("view", self.before_appends(self.value(obj.base), obj.key), obj.key)
        return obj.term

    def before_appends(self, term, key):
        """The list `term` without the appends after its item `key[k]` (k >= 0 a constant)
        existed: appending leaves that item as it is, so reads of it before and after an
        append are one value."""
        parts = self.parts(key)
        k = self.constant(parts[2]) if parts[0] == "sub" else None
        if not isinstance(k, int) or k < 0:
            return term
        while self.parts(term)[0] == "append" and self.length(self.parts(term)[1]) > k:
            term = self.parts(term)[1]
        return term

    def length(self, term):
        """The length of the list `term` where the checker knows it, else -1."""
        parts = self.parts(term)
        if parts[0] == "list":
            return len(parts[1])
        if parts[0] == "append":
            before = self.length(parts[1])
            return before + 1 if before >= 0 else -1
        return -1

    def shape(self, term):
        """A term standing for the shape of `term`'s value: writes keep it, views derive it."""
        parts = self.parts(term)
        if parts[0] in ("write", "restored"):
            return self.shape(parts[1])
        if parts[0] == "view":
            return self.term("view shape", self.shape(parts[1]), parts[2])
        return term

    def root(self, obj):
        while obj.base is not None:
            obj = obj.base
        return obj

    def truth(self, term, odds):
        """The branch a test takes: a constant's own truth (`stop = False`, `not skip`), else
        the scenario's choice (false once in `odds`), the same for equal terms."""
        parts = self.parts(term)
        if parts[0] == "const" and parts[1] in ("bool", "int", "NoneType"):
            return bool(ast.literal_eval(parts[2]))  # the repr of a literal
        if parts[0] == "unary" and parts[1] == "Not":
            return not self.truth(parts[2], odds)
        return self.mix(term, odds) != 0

    def items(self, term):
        """The terms a `for` over `term` binds, in order: exact for ranges of known bounds,
        reversals, slices up to a known count, `list(...)` of those and indexing into them;
        otherwise 0 to 3 items chosen by the scenario (the same for equal terms)."""
        parts = self.parts(term)
        if parts[0] == "call" and parts[1] in _SEQUENCES:
            arguments = [self.constant(a) for a in parts[2]]
            if parts[1] == "range" and arguments and all(isinstance(a, int) for a in arguments):
                return [self.term("const", "int", repr(k)) for k in range(*arguments)]
            if parts[1] == "reversed" and len(parts[2]) == 1:
                return list(reversed(self.items(parts[2][0])))
            if parts[1] in ("list", "tuple") and len(parts[2]) == 1:
                return self.items(parts[2][0])
        if parts[0] == "sub":
            upper = self.constant(parts[2])
            if isinstance(upper, tuple) and upper[0] == "upto":
                return self.items(parts[1])[: upper[1]]
        return [self.term("iter", term, k) for k in range(self.mix(term, _MAX_TRIPS + 1))]

    def item(self, sequence, index):
        """`sequence[index]`: the item itself where `items` knows it, else a term for the read."""
        k = self.constant(index)
        parts = self.parts(sequence)
        if isinstance(k, int) and parts[0] == "call" and parts[1] in _SEQUENCES:
            known = self.items(sequence)
            if -len(known) <= k < len(known):
                return known[k]
        return self.term("sub", sequence, index)

    def parts(self, term):
        return self.by_id[term]

    def constant(self, term):
        if term is None:  # a bound a slice leaves out (`xs[:]`)
            return None
        parts = self.parts(term)
        if parts[0] == "const" and parts[1] == "int":
            return int(parts[2])
        if parts[0] == "slice" and parts[1] is None and parts[3] is None:
            upper = self.constant(parts[2])
            if isinstance(upper, int):
                return ("upto", upper)
        return None

    def describe(self, term, depth=3):
        """A term as nested text, cut at `depth` (for messages)."""
        if term is None:
            return "nothing (not bound there)"
        parts = self.parts(term)
        if depth == 0:
            return f"{parts[0]}(...)"
        shown = [
            self.describe(p, depth - 1) if isinstance(p, int) and not isinstance(p, bool) and k and parts[0] != "const"
            else repr(p)
            for k, p in enumerate(parts)
        ]
        return f"{parts[0]}({', '.join(shown[1:])})"

    def read(self, name_node, shape_only=False):
        name = name_node.id
        obj = self.env.get(name)
        if obj is None:
            obj = _Obj(self.term("global" if name in self.values else "unbound", name))
        if self.backward and name in self.primal and self.mirror is not None:
            expected = self.mirror.get(name)
            got = self.value(obj)
            parts = self.parts(got)
            # A read for the shape only needs the shape; where the name is not bound yet (or
            # None, a value not computed yet) the zero it shapes is never read: any will do.
            unbound = expected is None or expected == self.term("const", "NoneType", "None")
            # A name this scenario's path never bound, read where the forward sweep had not
            # bound it either, is no stale value (running it would raise, and the tests run
            # it): the scenario took a path the program cannot take.
            never_bound = expected is None and parts[0] == "unbound"
            fine = got == expected or never_bound or (
                shape_only and (unbound or self.shape(parts[1] if parts[0] == "shape" else got) == self.shape(expected))
            )
            if not fine:
                where = f" in `# {self.comment}`" if self.comment else ""
                raise MirrorError(
                    f"the adjoint sweep{where} reads `{name}` holding a value it had at another point of the "
                    "forward sweep (another iteration or branch, or before an in-place write), scenario "
                    f"{self.seed}: it must be saved on the tape, restored, or recomputed\n"
                    f"    holds:    {self.describe(got)}\n    expected: {self.describe(expected)}"
                )
        return obj

    def expr(self, node):
        if node is None:
            return self.term("none")
        if isinstance(node, gast.Name):
            return self.value(self.read(node))
        if isinstance(node, gast.Constant):
            value = node.value
            return self.term("const", type(value).__name__, repr(value))
        if isinstance(node, gast.Call):
            popped = self.popped(node)
            if popped is not None:
                return self.value(popped)
            func = self.expr(node.func)
            helper = self.helper(node)
            args = []
            for position, a in enumerate(node.args):
                if (helper, position) in _SHAPE_READS and isinstance(a, gast.Name):
                    args.append(self.value(self.read(a, shape_only=True)))
                else:
                    args.append(self.expr(a))
            keywords = tuple((k.arg, self.expr(k.value)) for k in node.keywords)
            if isinstance(node.func, gast.Name) and node.func.id in _SEQUENCES and not keywords:
                return self.term("call", node.func.id, tuple(args))
            if isinstance(node.func, gast.Name) and node.func.id == "len" and len(args) == 1 and not keywords:
                if self.parts(args[0])[0] in ("call", "sub"):
                    return self.term("const", "int", repr(len(self.items(args[0]))))
            if not self.pure(node.func):
                return self.term("call", func, tuple(args), keywords, self.new("call"))
            return self.term("call", func, tuple(args), keywords)
        if isinstance(node, gast.Attribute):
            return self.term("attr", self.expr(node.value), node.attr)
        if isinstance(node, gast.Subscript):
            if isinstance(node.value, gast.Attribute) and node.value.attr in ("s_", "index_exp"):
                return self.expr(node.slice)  # np.s_[1:3] is the index 1:3 itself
            return self.item(self.expr(node.value), self.expr(node.slice))
        if isinstance(node, gast.Slice):
            return self.term("slice", *(self.expr(p) if p is not None else None
                                        for p in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.BinOp):
            left, right = self.expr(node.left), self.expr(node.right)
            a, b = self.constant(left), self.constant(right)
            if isinstance(node.op, gast.Add) and isinstance(a, int) and isinstance(b, int):
                return self.term("const", "int", repr(a + b))
            return self.term("binop", type(node.op).__name__, left, right)
        if isinstance(node, gast.UnaryOp):
            return self.term("unary", type(node.op).__name__, self.expr(node.operand))
        if isinstance(node, gast.BoolOp):
            return self.term("bool", type(node.op).__name__, tuple(self.expr(v) for v in node.values))
        if isinstance(node, gast.Compare):
            return self.term("compare", self.expr(node.left), tuple(type(o).__name__ for o in node.ops),
                             tuple(self.expr(c) for c in node.comparators))
        if isinstance(node, gast.IfExp):
            test = self.expr(node.test)
            return self.term("ifexp", test, self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, (gast.Tuple, gast.List)):
            kind = "tuple" if isinstance(node, gast.Tuple) else "list"
            return self.term(kind, tuple(self.expr(e) for e in node.elts))
        if isinstance(node, gast.Dict):
            return self.term("dict", tuple(self.expr(k) for k in node.keys), tuple(self.expr(v) for v in node.values))
        if isinstance(node, gast.Starred):
            return self.term("starred", self.expr(node.value))
        if isinstance(node, gast.Lambda):
            return self.new("lambda")
        raise MirrorError(f"the checker does not know expression {type(node).__name__}")

    def pure(self, func):
        """Whether calling `func` twice on equal values gives equal values and changes nothing."""
        path = []
        while isinstance(func, gast.Attribute):
            path.append(func.attr)
            func = func.value
        if isinstance(func, gast.Name) and func.id not in self.values and len(path) == 1:
            # a method of a local value: pure when it is a pure ndarray method (`x.mean()`)
            member = getattr(np.ndarray, path[0], None)
            return member is not None and REGISTRY.is_primitive(member) and REGISTRY.is_pure(member)
        if not isinstance(func, gast.Name) or func.id not in self.values:
            return False  # a function value
        callee = self.values[func.id]
        for attr in reversed(path):
            callee = getattr(callee, attr, None)
        if getattr(callee, "__module__", None) == "ssad.runtime" or callee in (range, reversed, len):
            return True
        return REGISTRY.is_primitive(callee) and REGISTRY.is_pure(callee)
