"""Shape facts: which values are known to be scalars, so `unbroadcast` can go.

An adjoint rule for a broadcasting operation sums its result back to each
operand's shape with `unbroadcast(g, x)`, which must look at `x` at run time.
When ssad knows the shapes already match, the call is dropped:

- a value is *scalar* when every assignment to it produces a scalar: a number
  literal, a parameter the caller passed a Python or NumPy scalar for, an
  elementwise operation (operators, ufuncs, `math`) of scalars, or a full
  reduction (`np.sum(x)`, `x.max()` with no axis, `len`, `float`);
- `unbroadcast(g, x)` is `g` when the operation's result is scalar too, or when
  the operation is elementwise and every *other* operand is scalar (then the
  result has x's shape).

For a loop of scalar arithmetic this removes every `unbroadcast`, and with it
every value the adjoint sweep would read only for its shape, so the tape records
only what the derivatives need.
"""

import builtins
import math
import operator

import gast
import numpy as np

from ..frontend import primitives
from ..runtime import Tape, seed, zeros_like_value
from .activity import simple_statements
from ..frontend.builders import walk

_ELEMENTWISE_OPERATORS = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
    operator.floordiv, operator.neg, operator.pos, operator.abs,
}
_SCALAR_BUILTINS = {builtins.abs, builtins.float, builtins.int, builtins.len, builtins.round, builtins.pow,
                    builtins.bool}
_FULL_REDUCTIONS = {
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var,
    np.ndarray.sum, np.ndarray.mean, np.ndarray.prod, np.ndarray.max, np.ndarray.min, np.ndarray.std,
    np.ndarray.var, np.linalg.det, np.trace, np.vdot,
}


def is_elementwise(primitive):
    return (
        isinstance(primitive, np.ufunc)
        or primitive in _ELEMENTWISE_OPERATORS
        or getattr(primitive, "__module__", None) == "math"
        or primitive in _SCALAR_BUILTINS
    )


def _produces_scalar(primitive, op, scalar):
    operands = op.args + list(op.keywords.values())

    def known(expr):
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, (int, float, complex, bool))
        return isinstance(expr, gast.Name) and expr.id in scalar

    if primitive in _FULL_REDUCTIONS:
        return len(op.args) == 1 and not op.keywords.get("axis")
    if primitive in (builtins.len, builtins.float, builtins.int, builtins.bool, seed) or primitive is math.fsum:
        return True  # seed(y) is 1.0 in the dtype of the scalar result y
    if primitive is zeros_like_value:
        return all(known(e) for e in op.args)
    if is_elementwise(primitive):
        return all(known(e) for e in operands)
    return False


_COMPLEX_MAKERS = {complex, np.complex64, np.complex128, np.linalg.eig, np.linalg.eigvals, np.roots}
_COMPLEX_MODULES = ("numpy.fft", "numpy.lib.scimath", "numpy.emath")
_REAL_TYPES = {float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_}


def may_be_complex(program):
    """Whether `program` itself may make a complex value from real ones: a complex literal
    (`1j * x`), an FFT, `np.emath`, `complex(...)`, a conversion to a dtype that is not
    known to be real. Then no `unbroadcast` is dropped: it takes the real part of a real
    operand's adjoint (docs/conventions.md), which a dropped one would leave complex."""

    def static(expr):
        try:
            return primitives.static_value(expr, program)
        except Exception:  # noqa: BLE001 - not a static path: not a maker this test knows
            return None

    for node in walk(gast.Module(body=program.body, type_ignores=[])):
        if isinstance(node, gast.Constant) and isinstance(node.value, complex):
            return True
        if not isinstance(node, gast.Call):
            continue
        if any(k.arg == "dtype" for k in node.keywords):
            return True
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "astype":
            if not node.args or static(node.args[0]) not in _REAL_TYPES:
                return True
            continue
        if not (isinstance(func, (gast.Name, gast.Attribute)) and primitives.is_static(func, program)):
            continue
        maker = static(func)
        if maker in _COMPLEX_MAKERS or getattr(maker, "__module__", None) in _COMPLEX_MODULES:
            return True
    return False


def scalar_names(program, scalar_params):
    """The names whose every assignment produces a scalar, given the scalar parameters."""
    statements = [s for s in simple_statements(program.body) if isinstance(s, gast.Assign)]
    candidates = set(scalar_params)
    for statement in statements:
        target = statement.targets[0]
        if isinstance(target, gast.Name):
            candidates.add(target.id)
    loop_indices = {loop.target.id for loop in _loops(program.body) if isinstance(loop, gast.For)}
    candidates |= loop_indices  # range() yields ints
    # A parameter the caller may pass an array for is never scalar, whatever is assigned to it later.
    candidates -= set(program.params) - set(scalar_params)
    pushed = _pushed_on_tapes(program, statements)
    # Greatest fixed point: start from "all scalar", drop names any assignment disproves.
    scalar = set(candidates)
    changed = True
    while changed:
        changed = False
        for statement in statements:
            target = statement.targets[0]
            names = [n.id for n in walk(target) if isinstance(n, gast.Name)]
            tape = _popped_tape(statement.value)
            if isinstance(target, gast.Name) and tape in pushed:
                # a pop gives back one of the values pushed on that tape
                ok = all(_known(value, scalar) for value in pushed[tape])
            elif isinstance(target, gast.Name):
                ok = _value_is_scalar(statement.value, program, scalar)
            else:  # unpacking or an in-place write: make no claim
                ok = False
            if not ok:
                for name in names:
                    if name in scalar:
                        scalar.discard(name)
                        changed = True
    return scalar


def _known(expr, scalar):
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, (int, float, complex, bool))
    return isinstance(expr, gast.Name) and expr.id in scalar


def _pushed_on_tapes(program, statements):
    """{tape: [the values pushed on it]} for each name bound to a `Tape()` made here and
    used for nothing but pushes, pops and being handed back as a residual."""
    tapes = {
        s.targets[0].id for s in statements
        if isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call) and not s.value.args
        and isinstance(s.value.func, gast.Name) and program.namespace.values.get(s.value.func.id) is Tape
    }
    pushed = {tape: [] for tape in tapes}
    module = gast.Module(body=program.body, type_ignores=[])
    for parent in walk(module):
        for child in gast.iter_child_nodes(parent):
            if not (isinstance(child, gast.Name) and child.id in pushed):
                continue
            if isinstance(parent, gast.Attribute) and parent.attr in ("push", "pop"):
                continue
            if isinstance(parent, (gast.Tuple, gast.Return)) or isinstance(child.ctx, gast.Store):
                continue  # the residuals handed back, or the `Tape()` it is bound to
            pushed.pop(child.id)  # some other use: make no claim
    for statement in simple_statements(program.body):
        call = statement.value if isinstance(statement, gast.Expr) else None
        tape = _method_of(call, "push")
        if tape in pushed:
            pushed[tape] += call.args
    return {tape: values for tape, values in pushed.items() if values}


def _method_of(call, method):
    """The name `t` of a call `t.method(...)`, else None."""
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == method:
        if isinstance(call.func.value, gast.Name):
            return call.func.value.id
    return None


def _popped_tape(value):
    return _method_of(value, "pop") if isinstance(value, gast.Call) and not value.args else None


def _loops(block):
    for statement in block:
        if isinstance(statement, (gast.For, gast.While)):
            yield statement
            yield from _loops(statement.body)
        elif isinstance(statement, gast.If):
            yield from _loops(statement.body)
            yield from _loops(statement.orelse)


def _value_is_scalar(value, program, scalar):
    op = primitives.operation(value, program)
    if op.kind == primitives.CONSTANT:
        return isinstance(value, gast.Constant) and isinstance(value.value, (int, float, complex, bool))
    if op.kind == primitives.COPY:
        return op.args[0].id in scalar
    if op.kind == primitives.INACTIVE:
        return all(isinstance(a, gast.Constant) or (isinstance(a, gast.Name) and a.id in scalar) for a in op.args)
    if op.kind == primitives.PRIMITIVE and op.primitive is not None:
        return _produces_scalar(op.primitive, op, scalar)
    return False


def drop_unbroadcast(output, op, position, y, scalar, unbroadcast_names):
    """`output` without `unbroadcast(g, x)` calls the shape facts show to be identities."""

    def known(expr):
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, (int, float, complex, bool))
        return isinstance(expr, gast.Name) and expr.id in scalar

    operand = op.args[position]
    others = [a for i, a in enumerate(op.args) if i != position]
    if any(isinstance(a, gast.Constant) and isinstance(a.value, complex) for a in others):
        return output  # `1j * x`: unbroadcast takes the real part of x's adjoint when x is real
    identity = (known(operand) and y in scalar) or (
        op.primitive is not None and is_elementwise(op.primitive) and all(known(a) for a in others)
    )
    if not identity:
        return output

    if not isinstance(operand, gast.Name):
        return output
    return without_shape_calls(output, unbroadcast_names, operand.id)


def without_shape_calls(output, helper_names, operand):
    """`output` with each `helper(g, operand)` (a helper named in `helper_names`) as `g`:
    where the shapes already match, summing or spreading g to operand's shape is g."""

    class Drop(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if (
                isinstance(node.func, gast.Name)
                and node.func.id in helper_names
                and len(node.args) == 2
                and isinstance(node.args[1], gast.Name)
                and node.args[1].id == operand
            ):
                return node.args[0]
            return node

    return Drop().visit(output)
