"""Shift invariance: stabilizing maxima whose derivative is exactly zero.

Numerically careful code subtracts a maximum before exponentiating:

    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    log_probs = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))

The result does not depend on `m` at all: adding any constant c to a row of `m`
subtracts c from that row of `s` and of the log-sum-exp alike, and they cancel.
So the derivative through `m` is exactly zero, and computing it (a reduction, a
comparison to find the maximum and a division among ties) is wasted work. This
pass proves that cancellation and reports such `m`, which the activity analysis
then treats as a constant, like `stop_gradient(m)` written by hand but checked.

The proof perturbs `m` by a symbolic per-slice amount d (constant along the
reduced axes) and follows every value it reaches. Each value is either
untouched, *shifted* (value + k*d) or *scaled* (value * exp(k*d)), for a rational
k:

- `m` is shifted by d; `x - m`, with x the array m reduces, is shifted by -d;
- `a + b`, `a - b`, `-a` add the shifts; `a * b`, `a / b` add the scales; a
  number may be added to a shift, multiply or divide it (scaling k), or multiply
  or divide a scale (leaving k); the arithmetic on k is exact (fractions);
- `exp` turns a shift into a scale and `log` a scale into a shift;
- `sum`, `mean` and `max` over exactly m's axes with `keepdims=True` keep a
  scale (sum, mean) or a shift (max), since d is constant along those axes.

A value whose k comes back to 0 is untouched again, whatever its uses. Any other
use of a perturbed value (another operation, a branch or loop, a call, an array
operand the pass cannot align, the returned value itself) abandons the proof for
that `m`, and its gradient is computed in full as usual.
"""

import math
import operator
from fractions import Fraction

import gast
import numpy as np

from ..frontend import primitives
from ..frontend.builders import walk

_MAXIMA = {np.max, np.amax, np.min, np.amin, np.ndarray.max, np.ndarray.min}
_SUMS = {np.sum, np.mean, np.ndarray.sum, np.ndarray.mean}
_SHIFT, _SCALE = "shift", "scale"


def invariant_maxima(program):
    """Names of top-level `m = np.max(x, axis=A, keepdims=True)` (or min) that the
    returned value provably does not depend on."""
    top = [s for s in program.body if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)]
    assignments = {}
    for statement in _all_assignments(program.body):
        for name in statement:
            assignments[name] = assignments.get(name, 0) + 1
    found = set()
    for statement in top:
        target = statement.targets[0].id
        origin = _stabilizer(statement, program)
        if origin is None or assignments.get(target) != 1:
            continue
        source, axes = origin
        if assignments.get(source, 0) > 1:
            continue
        if _cancels(program, top, target, source, axes, assignments):
            found.add(target)
    return found


def _all_assignments(block):
    for statement in block:
        if isinstance(statement, gast.Assign):
            yield [n.id for t in statement.targets for n in walk(t) if isinstance(n, gast.Name)]
        elif isinstance(statement, gast.For):
            yield [n.id for n in walk(statement.target) if isinstance(n, gast.Name)]
        for field in ("body", "orelse"):
            yield from _all_assignments(getattr(statement, field, None) or [])


def _axes_keepdims(op):
    """(axis literal, keepdims) of a reduction written with constant keywords, else None."""
    if len(op.args) != 1 or set(op.keywords) != {"axis", "keepdims"}:
        return None
    axis, keepdims = op.keywords["axis"], op.keywords["keepdims"]
    if not (isinstance(keepdims, gast.Constant) and keepdims.value is True):
        return None
    if isinstance(axis, gast.Constant) and type(axis.value) is int:
        return axis.value
    if isinstance(axis, gast.Tuple) and all(isinstance(e, gast.Constant) and type(e.value) is int for e in axis.elts):
        return tuple(e.value for e in axis.elts)
    return None


def _stabilizer(statement, program):
    op = primitives.operation(statement.value, program)
    if op.kind != primitives.PRIMITIVE or op.primitive not in _MAXIMA:
        return None
    axes = _axes_keepdims(op)
    if axes is None or not isinstance(op.args[0], gast.Name):
        return None
    return op.args[0].id, axes


def _cancels(program, top, m, source, axes, assignments):
    """Whether perturbing `m` leaves the returned value untouched."""
    perturbed = {m: (_SHIFT, 1)}
    at_top = {id(s) for s in top}
    for statement in _walk(program.body):
        if not _reads(statement) & set(perturbed):
            continue
        if id(statement) not in at_top:  # in a branch, a loop or its header, a return
            return False
        target = statement.targets[0].id
        effect = _effect(primitives.operation(statement.value, program), perturbed, source, axes)
        if effect is None or assignments.get(target) != 1:
            return False
        if effect[1] != 0:
            perturbed[target] = effect
    result = program.result
    return not (isinstance(result, gast.Name) and result.id in perturbed)


def _reads(statement):
    """Names a statement reads; for `if`, `for` and `while`, only in its header."""
    if isinstance(statement, (gast.If, gast.While)):
        parts = [statement.test]
    elif isinstance(statement, gast.For):
        parts = [statement.iter]
    else:
        parts = [statement]
    return {n.id for part in parts for n in walk(part) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _walk(block):
    for statement in block:
        yield statement
        for field in ("body", "orelse"):
            yield from _walk(getattr(statement, field, None) or [])


def _number(expr):
    """A number literal as an exact fraction, else None."""
    if isinstance(expr, gast.Constant) and type(expr.value) in (int, float) and math.isfinite(expr.value):
        return Fraction(expr.value)
    return None


def _effect(op, perturbed, source, axes):
    """The perturbation of an operation's result, or None when the proof cannot follow it."""
    if op.kind == primitives.COPY:
        return perturbed.get(op.args[0].id, (_SHIFT, 0))
    if op.kind != primitives.PRIMITIVE or op.keywords and op.primitive not in _MAXIMA | _SUMS:
        return None
    operands = op.args
    if any(not isinstance(a, (gast.Name, gast.Constant)) for a in operands):
        return None

    def of(a):
        return perturbed.get(a.id) if isinstance(a, gast.Name) else None

    f = op.primitive
    if f in (operator.add, operator.sub) and len(operands) == 2:
        left, right = (of(a) for a in operands)
        sign = 1 if f is operator.add else -1
        if left and right:
            if left[0] != _SHIFT or right[0] != _SHIFT:
                return None
            return _SHIFT, left[1] + sign * right[1]
        alone, other = (left, operands[1]) if left else (right, operands[0])
        if alone[0] != _SHIFT:
            return None
        # the other operand must not change the shape: a number, or the array m reduces
        if not isinstance(other, gast.Constant) and not (isinstance(other, gast.Name) and other.id == source):
            return None
        return _SHIFT, alone[1] if left else sign * alone[1]
    if f is operator.neg:
        (only,) = (of(a) for a in operands)
        return (_SHIFT, -only[1]) if only[0] == _SHIFT else None
    if f in (operator.mul, operator.truediv) and len(operands) == 2:
        left, right = (of(a) for a in operands)
        sign = 1 if f is operator.mul else -1
        if left and right:
            if left[0] != _SCALE or right[0] != _SCALE:
                return None
            return _SCALE, left[1] + sign * right[1]
        alone, other = (left, operands[1]) if left else (right, operands[0])
        factor = _number(other)
        if factor is None or (right and f is operator.truediv):
            return None
        if alone[0] == _SCALE:  # a constant factor joins the scale
            return alone
        if factor == 0:
            return None
        # a shift times a number is a shift by that multiple
        return _SHIFT, alone[1] * factor if f is operator.mul else alone[1] / factor
    (only,) = [of(a) for a in operands] if len(operands) == 1 else [None]
    if only is None:
        return None
    if f is np.exp and only[0] == _SHIFT:
        return _SCALE, only[1]
    if f is np.log and only[0] == _SCALE:
        return _SHIFT, only[1]
    if _axes_keepdims(op) == axes:
        if f in _SUMS and only[0] == _SCALE:
            return only
        if f in (np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min) and only[0] == _SHIFT:
            return only
    return None
