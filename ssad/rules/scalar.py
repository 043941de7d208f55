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
  `unbroadcast`. Sequence concatenation (``list + list``) is not covered.

Conventions where the derivative does not exist:

- ``abs``, ``math.fabs``: the slope at 0 is 0 (that of ``np.sign``); ``math.hypot``
  at the origin gives 0 to every coordinate.
- ``max``, ``min``: the gradient goes to the arguments equal to the result; when
  several are, it is split evenly among them (two tied arguments get half each).
- ``pow(x, p)``: the slope in ``x`` is 0 where ``p == 0``, even at ``x == 0``; the
  slope in ``p`` uses ``log(x)`` only where ``x > 0`` and is 0 elsewhere.
- ``a % b``: d/da = 1 and d/db = -floor(a / b), away from the jumps where ``a / b``
  is an integer.

Comparisons, identity tests, integer conversions and rounding are registered as
non-differentiable.
"""

import math
import operator

import numpy as np

from ..registry import adjoint, nondifferentiable
from ..runtime import unbroadcast

# ----- math: trigonometric -----


@adjoint(math.sin)
def sin_adjoint(dy, y, x):
    return (dy * math.cos(x),)


@adjoint(math.cos)
def cos_adjoint(dy, y, x):
    return (-dy * math.sin(x),)


@adjoint(math.tan)
def tan_adjoint(dy, y, x):
    return (dy * (1 + y * y),)


@adjoint(math.asin)
def asin_adjoint(dy, y, x):
    return (dy / math.sqrt((1 - x) * (1 + x)),)


@adjoint(math.acos)
def acos_adjoint(dy, y, x):
    return (-dy / math.sqrt((1 - x) * (1 + x)),)


@adjoint(math.atan)
def atan_adjoint(dy, y, x):
    return (dy / (1 + x * x),)


@adjoint(math.atan2)
def atan2_adjoint(dy, y, a, b):
    # math.atan2(a, b) is the angle of the point (b, a).
    r2 = a * a + b * b
    return (dy * b / r2, -dy * a / r2)


@adjoint(math.hypot)
def hypot_adjoint(dy, y, *coordinates):
    # hypot takes any number of coordinates; at the origin every slope is 0.
    scale = dy / (y or 1.0)
    return tuple(scale * c for c in coordinates)


# ----- math: hyperbolic -----


@adjoint(math.sinh)
def sinh_adjoint(dy, y, x):
    return (dy * math.cosh(x),)


@adjoint(math.cosh)
def cosh_adjoint(dy, y, x):
    return (dy * math.sinh(x),)


@adjoint(math.tanh)
def tanh_adjoint(dy, y, x):
    return (dy * (1 - y * y),)


# ----- math: exponents, logarithms, powers -----


@adjoint(math.exp)
def exp_adjoint(dy, y, x):
    return (dy * y,)


@adjoint(math.expm1)
def expm1_adjoint(dy, y, x):
    return (dy * (y + 1),)


@adjoint(math.log)
def log_adjoint(dy, y, x, base=None):
    # math.log takes no keywords, so `base` is set exactly when it was passed.
    if base is None:
        return (dy / x,)
    log_base = math.log(base)
    return (dy / (x * log_base), -dy * y / (base * log_base))


@adjoint(math.log1p)
def log1p_adjoint(dy, y, x):
    return (dy / (1 + x),)


@adjoint(math.log2)
def log2_adjoint(dy, y, x):
    return (dy / (x * math.log(2.0)),)


@adjoint(math.log10)
def log10_adjoint(dy, y, x):
    return (dy / (x * math.log(10.0)),)


@adjoint(math.sqrt)
def sqrt_adjoint(dy, y, x):
    return (dy / (2 * y),)


@adjoint(math.pow)
def math_pow_adjoint(dy, y, base, exp):
    # The exponent is raised to 0 where exp == 0: slope 0 * base ** 0, even at base == 0.
    d_base = dy * exp * base ** (exp - 1 + (exp == 0))
    d_exp = (dy * y * math.log(base)) if base > 0 else 0.0
    return (d_base, d_exp)


@adjoint(math.erf)
def erf_adjoint(dy, y, x):
    return (dy * (2 / math.sqrt(math.pi)) * math.exp(-x * x),)


# ----- Builtins -----


@adjoint(abs)
@adjoint(operator.abs)
@adjoint(math.fabs)
def abs_adjoint(dy, y, x):
    return (dy * np.sign(x),)


@adjoint(operator.pow)
def pow_adjoint(dy, y, a, b):
    # As np.power: works on scalars and arrays alike. The exponent is raised to 0
    # where b == 0, so the slope in a is 0 there even at a == 0.
    d_a = dy * b * a ** (b - 1 + (b == 0))
    d_b = dy * y * np.log(np.where(a > 0, a, 1.0))
    return (unbroadcast(d_a, a), unbroadcast(d_b, b))


@adjoint(pow)
def builtin_pow_adjoint(dy, y, *positional, base=None, exp=None, mod=None):
    """Adjoint of ``pow(base, exp)``, whose arguments may also be passed by keyword.

    Only the arguments passed positionally get adjoints (none for ``mod``, which
    makes the result an integer).
    """
    base_value, exp_value = (positional + tuple(v for v in (base, exp) if v is not None))[:2]
    return pow_adjoint(dy, y, base_value, exp_value)[: len(positional)]


@adjoint(float)
def float_adjoint(dy, y, x):
    return (dy,)


@adjoint(max)
@adjoint(min)
def max_min_adjoint(dy, y, *args, key=None, default=None):
    """Adjoint of ``max(a, b, ...)`` and ``max(items)`` (and of ``min``).

    The arguments equal to the result share the gradient evenly. For the
    one-argument form the adjoint has the type of the argument (list, tuple or
    array).
    """
    items = args[0] if len(args) == 1 else args
    ties = [item == y for item in items]
    share = dy / (sum(ties) or 1)
    d_items = [share if tie else 0.0 for tie in ties]
    if len(args) > 1:
        return tuple(d_items)
    if isinstance(items, np.ndarray):
        return (np.array(d_items),)
    return (type(items)(d_items),)


@adjoint(sum)
def sum_adjoint(dy, y, iterable, *positional_start, start=0):
    """Adjoint of ``sum(items)`` and ``sum(items, start)``: every term gets dy.

    The adjoint of the items has the type of the argument; a start value passed
    positionally gets its own adjoint.
    """
    if isinstance(iterable, np.ndarray):
        d_iterable = np.zeros(iterable.shape) + dy  # sum(array) adds up its rows
    else:
        d_iterable = type(iterable)(unbroadcast(dy, item) for item in iterable)
    return (d_iterable,) + tuple(unbroadcast(dy, s) for s in positional_start)


# ----- Operators -----


@adjoint(operator.add)
def add_adjoint(dy, y, a, b):
    return (unbroadcast(dy, a), unbroadcast(dy, b))


@adjoint(operator.sub)
def sub_adjoint(dy, y, a, b):
    return (unbroadcast(dy, a), unbroadcast(-dy, b))


@adjoint(operator.mul)
def mul_adjoint(dy, y, a, b):
    return (unbroadcast(dy * b, a), unbroadcast(dy * a, b))


@adjoint(operator.truediv)
def truediv_adjoint(dy, y, a, b):
    return (unbroadcast(dy / b, a), unbroadcast(-dy * y / b, b))


@adjoint(operator.mod)
def mod_adjoint(dy, y, a, b):
    # a % b == a - (a // b) * b, and a // b is piecewise constant.
    return (unbroadcast(dy, a), unbroadcast(-dy * (a // b), b))


@adjoint(operator.neg)
def neg_adjoint(dy, y, a):
    return (-dy,)


@adjoint(operator.pos)
def pos_adjoint(dy, y, a):
    return (dy,)


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
