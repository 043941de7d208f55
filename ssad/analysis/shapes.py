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
import operator

import gast
import numpy as np

from ..frontend import primitives
from .ranks import Fact, rank_facts
from ..frontend.builders import clone, walk

_ELEMENTWISE_OPERATORS = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.mod,
    operator.floordiv, operator.neg, operator.pos, operator.abs,
}
_SCALAR_BUILTINS = {builtins.abs, builtins.float, builtins.int, builtins.len, builtins.round, builtins.pow,
                    builtins.bool}


def is_elementwise(primitive):
    return (
        (isinstance(primitive, np.ufunc) and primitive.signature is None)  # not a gufunc (np.matvec)
        or primitive in _ELEMENTWISE_OPERATORS
        or getattr(primitive, "__module__", None) == "math"
        or primitive in _SCALAR_BUILTINS
    )


_COMPLEX_MAKERS = {complex, np.complex64, np.complex128, np.linalg.eig, np.linalg.eigvals, np.roots}
_COMPLEX_MODULES = ("numpy.fft", "numpy.lib.scimath", "numpy.emath", "scipy.fft", "scipy.fftpack")
_REAL_TYPES = {float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_}


def may_be_complex(program):
    """Whether `program` itself may make a complex value from real ones: a complex literal
    (`1j * x`), a complex array or number it reads from its globals or closure, an FFT,
    `np.emath`, `complex(...)`, a conversion to a dtype that is not known to be real. Then no `unbroadcast` is dropped: it takes the real part of a real
    operand's adjoint (docs/conventions.md), which a dropped one would leave complex."""

    def static(expr):
        try:
            return primitives.static_value(expr, program)
        except Exception:  # noqa: BLE001 - not a static path: not a maker this test knows
            return None

    for node in walk(gast.Module(body=program.body, type_ignores=[])):
        if isinstance(node, gast.Constant) and isinstance(node.value, complex):
            return True
        if isinstance(node, (gast.Name, gast.Attribute)) and isinstance(node.ctx, gast.Load) \
                and primitives.is_static(node, program) and _complex_value(static(node)):
            return True  # a global or captured complex array or number
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
        module = getattr(maker, "__module__", None) or ""
        if maker in _COMPLEX_MAKERS or module.startswith(_COMPLEX_MODULES) or (
                module.startswith("scipy.signal") and getattr(maker, "__name__", "") == "hilbert"):
            return True
    return False


def _complex_value(value):
    return isinstance(value, (complex, np.complexfloating)) or (isinstance(value, np.ndarray) and value.dtype.kind == "c")


def scalar_names(program, facts):
    """The names whose every assignment produces a real scalar (rank 0), given the facts of
    the parameters: (name, Fact) pairs from `driver.argument_facts`, or bare names of the
    parameters that are real scalars."""
    return {n for n, fact in rank_facts(program, parameter_facts(facts)).items() if fact.rank == 0}


def parameter_facts(facts):
    """{parameter: Fact} from (name, Fact) pairs or bare names (real scalars); a kind
    (`runtime.receivers`: a NumPy value or an object) says nothing of a shape."""
    return dict((item, Fact(0)) if isinstance(item, str) else item for item in facts
                if isinstance(item, str) or isinstance(item[1], Fact))


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
    # `xs * n` repeats a list or tuple: its result has not the operand's shape. An operand
    # not known to be a number keeps the call unless the other is a float literal (the
    # rank facts, which know arrays, may still drop it: `ranks.unbroadcast_is_identity`).
    repeats = op.primitive is operator.mul and not known(operand) and not all(
        isinstance(a, gast.Constant) and isinstance(a.value, float) for a in others)
    identity = (known(operand) and y in scalar) or (
        op.primitive is not None and is_elementwise(op.primitive) and all(known(a) for a in others) and not repeats
    )
    if not identity:
        return output

    if not isinstance(operand, gast.Name):
        return output
    return without_shape_calls(output, unbroadcast_names, operand.id)


def without_shape_calls(output, helper_names, operand):
    """`output` with each `helper(g, operand)` (a helper named in `helper_names`) as `g`:
    where the shapes already match, summing or spreading g to operand's shape is g."""
    return _shape_calls_replaced(output, helper_names, operand, lambda g: g)


def summed_shape_calls(output, helper_names, operand, leading, units, rank):
    """`output` with each `helper(g, operand)` (a helper named in `helper_names`) as the plain
    sum it comes to, from g's leading axes `leading` and the unit axes `units` of the
    operand (of rank `rank`) that g may not share (`ranks.unbroadcast_axes`): `g.sum()` for a
    scalar, `g.sum(axis=0)` for a bias added to every row, `g.sum(axis=1, keepdims=True)`
    for a column. Other combinations keep the helper."""
    if not leading and not units:
        return without_shape_calls(output, helper_names, operand)
    if rank == 0:
        keywords = []
    elif len(leading) == 1 and not units:
        keywords = [gast.keyword(arg="axis", value=gast.Constant(value=0, kind=None))]
    elif not leading and len(units) == 1:
        keywords = [gast.keyword(arg="axis", value=gast.Constant(value=units[0], kind=None)),
                    gast.keyword(arg="keepdims", value=gast.Constant(value=True, kind=None))]
    else:
        return output

    def summed(g):
        method = gast.Attribute(value=g, attr="sum", ctx=gast.Load())
        return gast.Call(func=method, args=[], keywords=[clone(k) for k in keywords])

    return _shape_calls_replaced(output, helper_names, operand, summed)


def _shape_calls_replaced(output, helper_names, operand, replacement):
    """`output` with each `helper(g, operand)` (a helper named in `helper_names`) as `replacement(g)`."""

    class Replace(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if (
                isinstance(node.func, gast.Name)
                and node.func.id in helper_names
                and len(node.args) == 2
                and isinstance(node.args[1], gast.Name)
                and node.args[1].id == operand
            ):
                return replacement(node.args[0])
            return node

    return Replace().visit(output)
