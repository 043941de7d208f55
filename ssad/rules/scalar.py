"""Rules: Python builtins, the ``math`` module and the ``operator`` module.

Domain:

- ``math`` functions take real scalars (Python floats, NumPy scalars); their
  rules are plain Python arithmetic and return Python floats. Where the true
  derivative is infinite (``math.sqrt`` at 0) or undefined (``math.atan2`` at the
  origin), Python's float division raises ZeroDivisionError, as the same
  arithmetic written by hand would.
- ``operator`` functions, ``abs`` and ``pow`` are what ``a + b``, ``a ** b``,
  ``abs(x)`` ... lower to, so their rules also accept NumPy arrays of any
  broadcastable shapes and sum each adjoint back to its input's shape with
  `unbroadcast`. Sequence concatenation (``list + list``) is not covered. They
  accept complex numbers too, with the convention of ``elementwise`` (the rules of
  ``abs`` and ``pow`` are those of ``np.abs`` and ``np.power``).

Conventions where the derivative does not exist:

- ``abs``, ``math.fabs``: the slope at 0 is 0 (that of ``np.sign``); ``math.hypot``
  at the origin gives 0 to every coordinate.
- ``max``, ``min``: the gradient goes to the arguments equal to the result; when
  several are, it is split evenly among them (two tied arguments get half each).
  A NaN result came from a NaN argument: the NaN arguments share the gradient.
- ``pow(x, p)``: the slope in ``x`` is 0 where ``p == 0``, even at ``x == 0``; the
  slope in ``p`` uses ``log(x)`` only where ``x > 0`` and is 0 elsewhere.
- ``a % b``: d/da = 1 and d/db = -floor(a / b), away from the jumps where ``a / b``
  is an integer.

Each adjoint rule has a tangent (forward-mode) rule right after it, its exact
transpose (``<adjoint(dy), t> == <dy, tangent(t)>``), with the same conventions: at a
tie of ``max``/``min`` the tangent is the mean of the tied arguments' tangents. The
tangent of a list, tuple or array argument of ``max``, ``min`` and ``sum`` holds one
tangent per item.

Comparisons, identity tests, integer conversions and rounding are registered as
non-differentiable.
"""

import math
import operator

import numpy as np

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, chosen_position, pack_like, unbroadcast
from ..runtime.receivers import not_walked
from ..runtime.structure import zeros_like_value
from .elementwise import _abs_adjoint, _abs_tangent, _exponent_term, _log_of_base

# ----- math: trigonometric -----


@adjoint(math.sin)
def sin_adjoint(dy, y, x):
    return (dy * math.cos(x),)


@tangent(math.sin)
def sin_tangent(tangents, y, x):
    return tangents[0] * math.cos(x)


@adjoint(math.cos)
def cos_adjoint(dy, y, x):
    return (-dy * math.sin(x),)


@tangent(math.cos)
def cos_tangent(tangents, y, x):
    return -tangents[0] * math.sin(x)


@adjoint(math.tan)
def tan_adjoint(dy, y, x):
    return (dy * (1 + y * y),)


@tangent(math.tan)
def tan_tangent(tangents, y, x):
    return tangents[0] * (1 + y * y)


@adjoint(math.asin)
def asin_adjoint(dy, y, x):
    return (dy / math.sqrt((1 - x) * (1 + x)),)


@tangent(math.asin)
def asin_tangent(tangents, y, x):
    return tangents[0] / math.sqrt((1 - x) * (1 + x))


@adjoint(math.acos)
def acos_adjoint(dy, y, x):
    return (-dy / math.sqrt((1 - x) * (1 + x)),)


@tangent(math.acos)
def acos_tangent(tangents, y, x):
    return -tangents[0] / math.sqrt((1 - x) * (1 + x))


@adjoint(math.atan)
def atan_adjoint(dy, y, x):
    return (dy / (1 + x * x),)


@tangent(math.atan)
def atan_tangent(tangents, y, x):
    return tangents[0] / (1 + x * x)


@adjoint(math.atan2)
def atan2_adjoint(dy, y, a, b):
    # math.atan2(a, b) is the angle of the point (b, a).
    r2 = a * a + b * b
    return (dy * b / r2, -dy * a / r2)


@tangent(math.atan2)
def atan2_tangent(tangents, y, a, b):
    return (tangents[0] * b - tangents[1] * a) / (a * a + b * b)


@adjoint(math.hypot)
def hypot_adjoint(dy, y, *coordinates):
    # hypot takes any number of coordinates; at the origin every slope is 0.
    scale = dy / (y or 1.0)
    return tuple(scale * c for c in coordinates)


@tangent(math.hypot)
def hypot_tangent(tangents, y, *coordinates):
    return _dot(tangents, coordinates) / (y or 1.0)


def _dot(tangents, values):
    """The sum of tangent * value over the arguments (an argument's tangent may be None)."""
    return sum((t * v for t, v in zip(tangents, values, strict=True) if t is not None), 0.0)


# ----- math: hyperbolic -----


@adjoint(math.sinh)
def sinh_adjoint(dy, y, x):
    return (dy * math.cosh(x),)


@tangent(math.sinh)
def sinh_tangent(tangents, y, x):
    return tangents[0] * math.cosh(x)


@adjoint(math.cosh)
def cosh_adjoint(dy, y, x):
    return (dy * math.sinh(x),)


@tangent(math.cosh)
def cosh_tangent(tangents, y, x):
    return tangents[0] * math.sinh(x)


@adjoint(math.tanh)
def tanh_adjoint(dy, y, x):
    return (dy * (1 - y * y),)


@tangent(math.tanh)
def tanh_tangent(tangents, y, x):
    return tangents[0] * (1 - y * y)


# ----- math: exponents, logarithms, powers -----


@adjoint(math.exp)
def exp_adjoint(dy, y, x):
    return (dy * y,)


@tangent(math.exp)
def exp_tangent(tangents, y, x):
    return tangents[0] * y


@adjoint(math.expm1)
def expm1_adjoint(dy, y, x):
    return (dy * (y + 1),)


@tangent(math.expm1)
def expm1_tangent(tangents, y, x):
    return tangents[0] * (y + 1)


@adjoint(math.log)
def log_adjoint(dy, y, x, base=None):
    # math.log takes no keywords, so `base` is set exactly when it was passed.
    if base is None:
        return (dy / x,)
    log_base = math.log(base)
    return (dy / (x * log_base), -dy * y / (base * log_base))


@tangent(math.log)
def log_tangent(tangents, y, x, base=None):
    # y = log(x) / log(base) moves with the base too, when one is passed. Without a
    # base, the integers 0 and 1 fold away where the rule is inlined.
    base_term = 0 if base is None else tangents[1] * y / base
    log_base = 1 if base is None else math.log(base)
    return (tangents[0] / x - base_term) / log_base


@adjoint(math.log1p)
def log1p_adjoint(dy, y, x):
    return (dy / (1 + x),)


@tangent(math.log1p)
def log1p_tangent(tangents, y, x):
    return tangents[0] / (1 + x)


@adjoint(math.log2)
def log2_adjoint(dy, y, x):
    return (dy / (x * math.log(2.0)),)


@tangent(math.log2)
def log2_tangent(tangents, y, x):
    return tangents[0] / (x * math.log(2.0))


@adjoint(math.log10)
def log10_adjoint(dy, y, x):
    return (dy / (x * math.log(10.0)),)


@tangent(math.log10)
def log10_tangent(tangents, y, x):
    return tangents[0] / (x * math.log(10.0))


@adjoint(math.sqrt)
def sqrt_adjoint(dy, y, x):
    return (dy / (2 * y),)


@tangent(math.sqrt)
def sqrt_tangent(tangents, y, x):
    return tangents[0] / (2 * y)


@adjoint(math.pow)
def math_pow_adjoint(dy, y, base, exp):
    # The exponent is raised to 0 where exp == 0: slope 0 * base ** 0, even at base == 0.
    d_base = dy * exp * base ** (exp - 1 + (exp == 0))
    d_exp = (dy * y * math.log(base)) if base > 0 else 0.0
    return (d_base, d_exp)


@tangent(math.pow)
def math_pow_tangent(tangents, y, base, exp):
    return tangents[0] * exp * base ** (exp - 1 + (exp == 0)) + _math_exponent_term(tangents[1], y, base)


def _math_exponent_term(t, y, base):
    """``t * y * log(base)`` where ``base > 0``, else 0.0: the exponent's part of the
    tangent of ``math.pow(base, exp)``. A constant exponent (tangent None for an
    integer, or zero) costs no logarithm."""
    if t is None or t == 0 or not base > 0:
        return 0.0
    return t * y * math.log(base)


@adjoint(math.erf)
def erf_adjoint(dy, y, x):
    return (dy * (2 / math.sqrt(math.pi)) * math.exp(-x * x),)


@tangent(math.erf)
def erf_tangent(tangents, y, x):
    return tangents[0] * (2 / math.sqrt(math.pi)) * math.exp(-x * x)


# ----- Builtins -----


@adjoint(abs)
@adjoint(operator.abs)
@adjoint(math.fabs)
def abs_adjoint(dy, y, x):
    return (_abs_adjoint(dy, x),)


@tangent(abs)
@tangent(operator.abs)
@tangent(math.fabs)
def abs_tangent(tangents, y, x):
    return _abs_tangent(tangents[0], x)


@adjoint(operator.pow)
def pow_adjoint(dy, y, a, b):
    # As np.power: works on scalars and arrays alike. The exponent is raised to 0
    # where b == 0, so the slope in a is 0 there even at a == 0.
    d_a = dy * b * a ** (b - 1 + (b == 0))
    d_b = dy * y * _log_of_base(a)
    return (unbroadcast(d_a, a), unbroadcast(d_b, b))


@tangent(operator.pow)
def pow_tangent(tangents, y, a, b):
    # The guards of the adjoint: slope 0 in a where b == 0, log(a) only where a > 0.
    slope_a = b * a ** (b - 1 + (b == 0))
    return broadcast_like(tangents[0] * slope_a + _exponent_term(tangents[1], y, a), y)


@adjoint(pow)
def builtin_pow_adjoint(dy, y, *positional, base=None, exp=None, mod=None):
    """Adjoint of ``pow(base, exp)``, whose arguments may also be passed by keyword.

    Only the arguments passed positionally get adjoints (none for ``mod``, which
    makes the result an integer).
    """
    base_value, exp_value = (positional + tuple(v for v in (base, exp) if v is not None))[:2]
    return pow_adjoint(dy, y, base_value, exp_value)[: len(positional)]


@tangent(pow)
def builtin_pow_tangent(tangents, y, *positional, base=None, exp=None, mod=None):
    """Tangent of ``pow(base, exp)``; arguments passed by keyword carry no tangent."""
    base_value, exp_value = (positional + tuple(v for v in (base, exp) if v is not None))[:2]
    padded = tuple(tangents) + (0.0,) * (2 - len(positional))
    return pow_tangent(padded, y, base_value, exp_value)


@adjoint(float)
def float_adjoint(dy, y, x):
    return (dy,)


@tangent(float)
def float_tangent(tangents, y, x):
    return tangents[0]


# ----- Scalar types called as functions -----
# `np.float64(x)`, `np.float32(x)`, `np.complex128(z)` are casts: as for `x.astype(t)`, the
# gradient flows back in the input's precision and the tangent on in the result's, and a
# cast from complex to real keeps the real part. `complex(re, im)` is `re + 1j * im`.


@adjoint(np.float64)
@adjoint(np.float32)
@adjoint(np.float16)
@adjoint(np.complex128)
@adjoint(np.complex64)
def scalar_type_adjoint(dy, y, x=0.0):
    return (_in_precision_of(dy, x),)


@tangent(np.float64)
@tangent(np.float32)
@tangent(np.float16)
@tangent(np.complex128)
@tangent(np.complex64)
def scalar_type_tangent(tangents, y, x=0.0):
    return _in_precision_of(tangents[0], y)


@adjoint(complex)
def complex_adjoint(dy, y, *parts):
    # `complex(re, im)` is `re + 1j * im`: dy for re, dy * 1j for im (their real parts for real ones)
    return tuple(_in_precision_of(dy * factor, part) for part, factor in zip(parts, (1, 1j), strict=False))


@tangent(complex)
def complex_tangent(tangents, y, *parts):
    total = 0j
    for t, factor in zip(tangents, (1, 1j), strict=False):
        if t is not None:
            total = total + t * factor
    return complex(total)


def _in_precision_of(g, like):
    """`g` in the precision of `like` (a number, NumPy scalar or array), its real part when
    `like` is real; a NumPy scalar where `like` is one, an array where `like` is an array."""
    dtype = np.result_type(like)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    if dtype.kind == "f":
        g = np.real(g)
    return np.asarray(g, dtype=dtype)[()]


@adjoint(max)
@adjoint(min)
def max_min_adjoint(dy, y, *args, key=None, default=None):
    """Adjoint of ``max(a, b, ...)`` and ``max(items)`` (and of ``min``).

    The arguments equal to the result share the gradient evenly. For the
    one-argument form the adjoint has the type of the argument (list, tuple or
    array).
    """
    items = args[0] if len(args) == 1 else args
    if key is not None:  # the one item returned gets the gradient: what the key compares has none
        chosen = chosen_position(items, y)
        d_items = [dy if k == chosen else zeros_like_value(item) for k, item in enumerate(items)]
        return tuple(d_items) if len(args) > 1 else (pack_like(items, d_items),)
    ties = [_is_result(item, y) for item in items]
    share = dy / (sum(ties) or 1)
    d_items = [share if tie else 0.0 for tie in ties]
    if len(args) > 1:
        return tuple(d_items)
    return (pack_like(items, d_items),)  # an array, list or tuple like the argument


@tangent(max)
@tangent(min)
def max_min_tangent(tangents, y, *args, key=None, default=None):
    """Tangent of ``max(a, b, ...)`` and ``max(items)`` (and of ``min``).

    The mean of the tangents of the arguments equal to the result; for the
    one-argument form ``tangents[0]`` holds one tangent per item.
    """
    items = args[0] if len(args) == 1 else args
    item_tangents = _tangents_of_items(tangents[0], items) if len(args) == 1 else tangents
    if key is not None:
        return item_tangents[chosen_position(items, y)]
    tied = [t for item, t in zip(items, item_tangents, strict=True) if _is_result(item, y)]
    return _total(tied) / (len(tied) or 1)


def _is_result(item, y):
    """True when ``max``/``min`` may have returned `item` as `y`: equal, or both NaN."""
    return item == y or (item != item and y != y)


def _tangents_of_items(t, items):
    """One tangent per item of a list, tuple or array argument whose tangent is `t`.

    None (no tangent) or a scalar zero stands for a zero tangent of every item.
    """
    not_walked(items)  # an object of the user's taken for a sequence: `list(t)` would walk its tangent
    if t is None or (not isinstance(t, (list, tuple)) and np.ndim(t) == 0):
        return [0.0] * len(items)
    return list(t)


@adjoint(sum)
def sum_adjoint(dy, y, iterable, *positional_start, start=0):
    """Adjoint of ``sum(items)`` and ``sum(items, start)``: every term gets dy.

    The adjoint of the items has the type of the argument; a start value passed
    positionally gets its own adjoint.
    """
    if isinstance(iterable, np.ndarray):
        d_iterable = np.zeros(iterable.shape) + dy  # sum(array) adds up its rows
    else:
        d_iterable = pack_like(iterable, [unbroadcast(dy, item) for item in iterable])
    # one tuple display, no `+` on tuples: so the rule is differentiated again
    return d_iterable, _start_adjoint(dy, positional_start)


def _start_adjoint(dy, positional_start):
    """The adjoint of the start value of `sum(items, start)` passed positionally; None
    when there is none (sum takes one at most)."""
    return unbroadcast(dy, positional_start[0]) if positional_start else None


@tangent(sum)
def sum_tangent(tangents, y, iterable, *positional_start, start=0):
    """Tangent of ``sum(items)`` and ``sum(items, start)``: the sum of the terms' tangents.

    A start value passed by keyword carries no tangent.
    """
    terms = _tangents_of_items(tangents[0], iterable) + list(tangents[1:])
    return broadcast_like(_total(terms), y)


def _total(tangents):
    """The sum of tangents; None counts as zero."""
    return sum((t for t in tangents if t is not None), 0.0)


# ----- Operators -----


@adjoint(operator.add)
def add_adjoint(dy, y, a, b):
    return (unbroadcast(dy, a), unbroadcast(dy, b))


@tangent(operator.add)
def add_tangent(tangents, y, a, b):
    return broadcast_like(tangents[0] + tangents[1], y)


@adjoint(operator.sub)
def sub_adjoint(dy, y, a, b):
    return (unbroadcast(dy, a), -unbroadcast(dy, b))  # the sum of the smaller array is negated


@tangent(operator.sub)
def sub_tangent(tangents, y, a, b):
    return broadcast_like(tangents[0] - tangents[1], y)


@adjoint(operator.mul)
def mul_adjoint(dy, y, a, b):
    return (unbroadcast(dy * b, a), unbroadcast(dy * a, b))


@tangent(operator.mul)
def mul_tangent(tangents, y, a, b):
    return broadcast_like(tangents[0] * b + a * tangents[1], y)


@adjoint(operator.truediv)
def truediv_adjoint(dy, y, a, b):
    return (unbroadcast(dy / b, a), unbroadcast(-dy * y / b, b))


@tangent(operator.truediv)
def truediv_tangent(tangents, y, a, b):
    return broadcast_like((tangents[0] - tangents[1] * y) / b, y)


@adjoint(operator.mod)
def mod_adjoint(dy, y, a, b):
    # a % b == a - (a // b) * b, and a // b is piecewise constant.
    return (unbroadcast(dy, a), unbroadcast(-dy * (a // b), b))


@tangent(operator.mod)
def mod_tangent(tangents, y, a, b):
    return broadcast_like(tangents[0] - tangents[1] * (a // b), y)


@adjoint(operator.neg)
def neg_adjoint(dy, y, a):
    return (-dy,)


@tangent(operator.neg)
def neg_tangent(tangents, y, a):
    return -tangents[0]


@adjoint(operator.pos)
def pos_adjoint(dy, y, a):
    return (dy,)


@tangent(operator.pos)
def pos_tangent(tangents, y, a):
    return tangents[0]


# ----- Non-differentiable -----

nondifferentiable(
    # Comparisons, identity and truth tests.
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.not_,
    operator.truth,
    operator.is_,
    operator.is_not,
    operator.contains,
    isinstance,
    bool,
    # Integer results: piecewise constant.
    operator.floordiv,
    int,
    round,
    len,
    range,
    math.floor,
    math.ceil,
    math.trunc,
)
