"""The rules of the rank analysis (`ranks`): what each kind of value gives, from its operands.

`value_fact(value, program, facts)` is the Fact (or `Shape`, range, or no fact) of the
right-hand side of an ANF assignment, given the facts of the names it reads; the
lattice's meet is `meet`. See `ranks` for what the facts mean and how they are used.
"""

import builtins
import math
import operator

import gast
import numpy as np

from ..frontend import primitives
from ..runtime import copy_adjoint, iterated, owned, seed, shape_only, zeros_like_value

_ANY = "any"  # not yet narrowed by an assignment (the top of the lattice)


_NONE = None  # no rank: assignments disagree, or an operation without a rule here


_RANGE = "range"  # a range object (what a `for` loop of ANF iterates)


_INTEGER_OPERATORS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg}


_ELEMENTWISE_OPERATORS = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
    operator.floordiv, operator.neg, operator.pos, operator.abs,
}


_SCALAR_BUILTINS = {builtins.abs, builtins.round, builtins.pow}


_TO_SCALAR = {builtins.float: (0, False), builtins.bool: (0, False), math.fsum: (0, False),
              builtins.len: (0, True), builtins.int: (0, True)}


_REDUCTIONS = {
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var,
    np.ndarray.sum, np.ndarray.mean, np.ndarray.prod, np.ndarray.max, np.ndarray.min, np.ndarray.std,
    np.ndarray.var,
}


_FULL_ONLY = {np.linalg.det, np.trace, np.vdot}


_SAME_RANK = {
    np.ndarray.copy, np.copy, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.asarray, np.ascontiguousarray, shape_only, zeros_like_value, owned, copy_adjoint,
}


_TRANSPOSES = {np.transpose, np.ndarray.transpose, np.ndarray.T}


_MAKERS = {np.zeros, np.ones, np.empty, np.full}


_PRODUCTS = {np.dot, np.ndarray.dot, np.matmul, operator.matmul}


class Fact(tuple):
    """What is known of every value a name holds.

    rank: the number of dimensions; integer: whether it holds integers; units: per
    dimension, True (length 1), False (not 1) or None (unknown); one: for an integer
    scalar that is a length, whether it is 1 (True, False or None)."""

    __slots__ = ()

    def __new__(cls, rank, integer=False, units=None, one=None):
        return super().__new__(cls, (rank, integer, (None,) * rank if units is None else tuple(units), one))

    rank = property(lambda self: self[0])
    integer = property(lambda self: self[1])
    units = property(lambda self: self[2])
    one = property(lambda self: self[3])


class Shape(tuple):
    """A tuple of lengths (`x.shape`, `(n, m)`): per entry, whether it is 1 (True, False, None)."""

    __slots__ = ()


def _unit(a, b):
    return a if a == b else None


def _elementwise_primitive(primitive):
    if isinstance(primitive, np.ufunc):  # not divmod, modf, frexp (tuples), nor matvec, vecdot (gufuncs)
        return primitive.nout == 1 and primitive.signature is None
    return primitive in _ELEMENTWISE_OPERATORS or primitive in _SCALAR_BUILTINS


def meet(a, b):
    """The facts both `a` and `b` agree on (the lattice's meet; `_ANY` is its top)."""
    if a == _ANY:
        return b
    if b == _ANY:
        return a
    if a == b:
        return a
    if isinstance(a, Fact) and isinstance(b, Fact) and a.rank == b.rank:
        units = [_unit(x, y) for x, y in zip(a.units, b.units, strict=True)]
        return Fact(a.rank, a.integer and b.integer, units, _unit(a.one, b.one))
    if isinstance(a, Shape) and isinstance(b, Shape) and len(a) == len(b):
        return Shape(_unit(x, y) for x, y in zip(a, b, strict=True))
    return _NONE


def fact_of(expr, facts):
    """The fact of an operand: a name's, or a number literal's."""
    if isinstance(expr, gast.Constant):
        if isinstance(expr.value, bool) or expr.value is None:
            return _NONE
        if isinstance(expr.value, int):
            return Fact(0, True, (), expr.value == 1)
        if isinstance(expr.value, float):
            return Fact(0)
        return _NONE
    if isinstance(expr, gast.Name):
        return facts.get(expr.id, _NONE)
    return _NONE


def value_fact(value, program, facts):
    op = primitives.operation(value, program)
    if op.kind == primitives.CONSTANT:
        return fact_of(value, facts) if isinstance(value, gast.Constant) else _NONE
    if op.kind == primitives.COPY:
        return fact_of(op.args[0], facts)
    if op.kind == primitives.INACTIVE:  # comparisons: elementwise, boolean
        found = _elementwise([fact_of(a, facts) for a in op.args])
        return Fact(found.rank, False, found.units) if isinstance(found, Fact) else found
    if op.kind == primitives.PACK and isinstance(value, gast.Tuple):
        found = [fact_of(a, facts) for a in op.args]
        if _ANY in found:
            return _ANY
        return Shape(f.one for f in found) if all(_is_integer(f) for f in found) else _NONE
    if op.kind == primitives.GETITEM:
        return _index_fact(value, facts)
    if op.kind == primitives.ATTRIBUTE:
        return _NONE
    if op.kind != primitives.PRIMITIVE or op.primitive is None:
        return _NONE
    return _primitive_fact(op, facts)


def _primitive_fact(op, facts):
    primitive = op.primitive
    args = [fact_of(a, facts) for a in op.args]
    if any(isinstance(a, gast.Starred) for a in op.args):
        return _NONE
    if primitive is np.ndarray.shape or primitive is np.shape:
        return Shape(args[0].units) if len(args) == 1 and isinstance(args[0], Fact) and not op.keywords else _NONE
    if primitive is builtins.range:
        return _RANGE if not op.keywords and all(_is_integer(a) for a in args) else _NONE
    if primitive is builtins.reversed or primitive is iterated:  # `iterated` gives a range back as it is
        return _RANGE if args == [_RANGE] else _NONE
    if primitive is builtins.len:
        known = len(args) == 1 and isinstance(args[0], Fact) and args[0].rank >= 1
        return Fact(0, True, (), args[0].units[0] if known else None)
    if primitive in _TO_SCALAR:
        return Fact(*_TO_SCALAR[primitive])
    if getattr(primitive, "__module__", None) == "math":  # of numbers (a one-element array too)
        return Fact(0) if all(isinstance(a, Fact) and a.rank == 0 for a in args) and not op.keywords else _NONE
    if primitive is seed:
        return args[0] if args and isinstance(args[0], Fact) and args[0].rank == 0 else _NONE
    if primitive is np.ndarray.transpose and len(args) > 1:
        return _NONE
    if primitive in _SAME_RANK:
        if len(args) != 1 or (op.keywords and primitive not in (zeros_like_value, shape_only)):
            return _NONE
        return Fact(args[0].rank, False, args[0].units) if isinstance(args[0], Fact) else args[0]
    if primitive in _TRANSPOSES:
        if len(args) != 1 or op.keywords:
            return _NONE
        return Fact(args[0].rank, args[0].integer, args[0].units[::-1]) if isinstance(args[0], Fact) else args[0]
    if primitive in _MAKERS:
        if not args or len(args) > (2 if primitive is np.full else 1) or set(op.keywords) - {"dtype"}:
            return _NONE
        if isinstance(args[0], Shape):
            return Fact(len(args[0]), False, args[0])
        return Fact(1, False, (args[0].one,)) if _is_integer(args[0]) else (_ANY if args[0] == _ANY else _NONE)
    if primitive is np.arange:
        if op.keywords or not args or not all(isinstance(a, Fact) and a.rank == 0 for a in args):
            return _NONE
        return Fact(1, all(a.integer for a in args))
    if primitive in _PRODUCTS:
        return _product(primitive, args, op.keywords)
    if primitive in _REDUCTIONS or primitive in _FULL_ONLY:
        return _reduction(primitive, args, op.keywords)
    if primitive is np.outer:
        if len(args) == 2 and all(isinstance(a, Fact) and a.rank == 1 for a in args):
            return Fact(2, False, args[0].units + args[1].units)
        return _NONE
    if _elementwise_primitive(primitive):
        if op.keywords:
            return _NONE
        found = _elementwise(args)
        if isinstance(found, Fact) and not (primitive in _INTEGER_OPERATORS and found.integer):
            return Fact(found.rank, False, found.units)
        return found
    return _NONE


def _elementwise(args):
    if not args:
        return _NONE
    if any(a == _ANY for a in args):
        return _ANY
    if not all(isinstance(a, Fact) for a in args):
        return _NONE
    rank = max(a.rank for a in args)
    units = []
    for k in range(rank):  # aligned from the right, as NumPy broadcasts
        flags = [a.units[a.rank - rank + k] for a in args if a.rank - rank + k >= 0]
        units.append(False if False in flags else (True if all(f is True for f in flags) else None))
    one = args[0].one if len(args) == 1 else None
    return Fact(rank, all(a.integer for a in args), units, one)


def _product(primitive, args, keywords):
    if keywords or len(args) != 2:
        return _NONE
    if _ANY in args:
        return _ANY
    if not all(isinstance(a, Fact) for a in args):
        return _NONE
    a, b = args
    ranks = (a.rank, b.rank)
    by_ranks = {(1, 1): (), (2, 1): a.units[:1], (1, 2): b.units[1:], (2, 2): a.units[:1] + b.units[1:]}
    if ranks in by_ranks:
        return Fact(len(by_ranks[ranks]), False, by_ranks[ranks])
    if primitive in (np.dot, np.ndarray.dot) and 0 in ranks:
        return Fact(max(ranks), False, a.units if a.rank else b.units)
    return _NONE


def _reduction(primitive, args, keywords):
    if len(args) != 1:
        return _NONE
    if args[0] == _ANY:
        return _ANY
    if not isinstance(args[0], Fact):
        return _NONE
    rank = args[0].rank
    extra = set(keywords) - {"axis", "keepdims"}
    if extra:
        return _NONE
    axis, keepdims = keywords.get("axis"), keywords.get("keepdims")
    if axis is None and keepdims is None:
        return Fact(0)
    if primitive in _FULL_ONLY:
        return _NONE
    kept = None
    if keepdims is not None:
        if not (isinstance(keepdims, gast.Constant) and keepdims.value in (True, False)):
            return _NONE
        kept = keepdims.value
    if axis is None:
        return Fact(rank, False, (True,) * rank) if kept else Fact(0)
    if isinstance(axis, gast.Constant) and isinstance(axis.value, int) and -rank <= axis.value < rank:
        k = axis.value % rank
        units = list(args[0].units)
        if kept:
            units[k] = True
        else:
            del units[k]
        return Fact(len(units), False, units)
    return _NONE


def _is_integer(fact):
    return isinstance(fact, Fact) and fact.integer and fact.rank == 0


def _index_fact(value, facts):
    """The fact of `a[index]`: one dimension fewer per integer, the same per slice."""
    base = fact_of(value.value, facts)
    index = value.slice
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if isinstance(base, Shape):
        if len(parts) == 1 and isinstance(parts[0], gast.Constant) and isinstance(parts[0].value, int):
            k = parts[0].value
            return Fact(0, True, (), base[k]) if -len(base) <= k < len(base) else _NONE
        return Fact(0, True) if len(parts) == 1 and _is_integer(fact_of(parts[0], facts)) else _NONE
    if base == _ANY:
        return _ANY
    if base == _RANGE:  # an item of a range: an integer
        position = fact_of(parts[0], facts) if len(parts) == 1 and not isinstance(parts[0], gast.Slice) else _NONE
        return _ANY if position == _ANY else (Fact(0, True) if _is_integer(position) else _NONE)
    if not isinstance(base, Fact):
        return _NONE
    if len(parts) > base.rank:
        return _NONE
    units, arrays = [], []
    for k, part in enumerate(parts):
        if isinstance(part, gast.Slice):
            whole = part.lower is None and part.upper is None and part.step is None
            units.append(base.units[k] if whole else None)
            continue
        fact = fact_of(part, facts)
        if fact == _ANY:
            return _ANY
        if not isinstance(fact, Fact) or not fact.integer:
            return _NONE
        if fact.rank:
            arrays.append(fact.rank)
    rest = list(base.units[len(parts):])
    if arrays:  # integer arrays: their broadcast shape, placed by NumPy's rules; lengths unknown
        return Fact(max(arrays) + len(units) + len(rest), base.integer)
    return Fact(len(units) + len(rest), base.integer, units + rest)
