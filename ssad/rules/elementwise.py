"""Rules: NumPy elementwise functions (ufuncs and their close relatives).

Domain: real floating inputs -- Python floats, NumPy scalars and arrays of any
shapes that broadcast together. Complex inputs are not supported, except by the
trivial rules of ``np.real`` and ``np.conj``. Every rule of a binary function sums
each adjoint back to its input's shape with `unbroadcast`.

Conventions where the derivative does not exist, chosen so that no rule turns a
finite input into NaN:

- ``abs``, ``fabs``: the slope at 0 is 0 (that of ``np.sign``). ``hypot`` at the
  origin likewise gives 0 to both inputs.
- ``maximum``, ``minimum``, ``fmax``, ``fmin``: the gradient goes to the input the
  result equals; where the two inputs are equal, each gets half of it.
- ``clip``: ``a`` gets the gradient wherever it lies in ``[a_min, a_max]``, bounds
  included; where ``a`` was clipped, the bound it was clipped to gets it instead
  (this assumes ``a_min <= a_max``). A bound may be None.
- ``where``: each branch gets the gradient only where it was selected, so an inf
  or NaN in the branch not taken never leaks into the adjoint.
- ``power(x, p)``: the slope in ``x`` is 0 where ``p == 0``, even at ``x == 0``; the
  slope in ``p`` uses ``log(x)`` only where ``x > 0`` and is 0 elsewhere.
- ``sinc`` at 0 has slope 0. Where the true derivative is infinite (``sqrt`` or
  ``cbrt`` at 0, ``arcsin`` at 1) the rule returns inf, as NumPy would.

Rounding, sign and comparison functions are registered as non-differentiable.
"""

import numpy as np

from ..registry import adjoint, nondifferentiable
from ..runtime import unbroadcast

# ----- Trigonometric -----


@adjoint(np.sin)
def sin_adjoint(dy, y, x):
    return (dy * np.cos(x),)


@adjoint(np.cos)
def cos_adjoint(dy, y, x):
    return (-dy * np.sin(x),)


@adjoint(np.tan)
def tan_adjoint(dy, y, x):
    return (dy * (1 + y * y),)


@adjoint(np.arcsin)
def arcsin_adjoint(dy, y, x):
    return (dy / np.sqrt((1 - x) * (1 + x)),)


@adjoint(np.arccos)
def arccos_adjoint(dy, y, x):
    return (-dy / np.sqrt((1 - x) * (1 + x)),)


@adjoint(np.arctan)
def arctan_adjoint(dy, y, x):
    return (dy / (1 + x * x),)


@adjoint(np.arctan2)
def arctan2_adjoint(dy, y, x1, x2):
    # arctan2(x1, x2) is the angle of the point (x2, x1).
    r2 = x1 * x1 + x2 * x2
    return (unbroadcast(dy * x2 / r2, x1), unbroadcast(-dy * x1 / r2, x2))


@adjoint(np.hypot)
def hypot_adjoint(dy, y, x1, x2):
    scale = dy / np.where(y == 0, 1.0, y)
    return (unbroadcast(scale * x1, x1), unbroadcast(scale * x2, x2))


@adjoint(np.sinc)
def sinc_adjoint(dy, y, x):
    # sinc(x) = sin(pi x) / (pi x); at x == 0 the numerator below is 0 as well.
    return (dy * (np.cos(np.pi * x) - y) / np.where(x == 0, 1.0, x),)


@adjoint(np.deg2rad)
@adjoint(np.radians)
def deg2rad_adjoint(dy, y, x):
    return (dy * (np.pi / 180),)


@adjoint(np.rad2deg)
@adjoint(np.degrees)
def rad2deg_adjoint(dy, y, x):
    return (dy * (180 / np.pi),)


# ----- Hyperbolic -----


@adjoint(np.sinh)
def sinh_adjoint(dy, y, x):
    return (dy * np.cosh(x),)


@adjoint(np.cosh)
def cosh_adjoint(dy, y, x):
    return (dy * np.sinh(x),)


@adjoint(np.tanh)
def tanh_adjoint(dy, y, x):
    return (dy * (1 - y * y),)


@adjoint(np.arcsinh)
def arcsinh_adjoint(dy, y, x):
    return (dy / np.hypot(x, 1.0),)


@adjoint(np.arccosh)
def arccosh_adjoint(dy, y, x):
    return (dy / np.sqrt((x - 1) * (x + 1)),)


@adjoint(np.arctanh)
def arctanh_adjoint(dy, y, x):
    return (dy / ((1 - x) * (1 + x)),)


# ----- Exponents and logarithms -----


@adjoint(np.exp)
def exp_adjoint(dy, y, x):
    return (dy * y,)


@adjoint(np.exp2)
def exp2_adjoint(dy, y, x):
    return (dy * y * np.log(2.0),)


@adjoint(np.expm1)
def expm1_adjoint(dy, y, x):
    return (dy * (y + 1),)


@adjoint(np.log)
def log_adjoint(dy, y, x):
    return (dy / x,)


@adjoint(np.log2)
def log2_adjoint(dy, y, x):
    return (dy / (x * np.log(2.0)),)


@adjoint(np.log10)
def log10_adjoint(dy, y, x):
    return (dy / (x * np.log(10.0)),)


@adjoint(np.log1p)
def log1p_adjoint(dy, y, x):
    return (dy / (1 + x),)


@adjoint(np.logaddexp)
def logaddexp_adjoint(dy, y, x1, x2):
    # d/dx1 log(e^x1 + e^x2) = e^x1 / (e^x1 + e^x2) = e^(x1 - y), which cannot overflow.
    return (unbroadcast(dy * np.exp(x1 - y), x1), unbroadcast(dy * np.exp(x2 - y), x2))


@adjoint(np.logaddexp2)
def logaddexp2_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy * np.exp2(x1 - y), x1), unbroadcast(dy * np.exp2(x2 - y), x2))


# ----- Powers and roots -----


@adjoint(np.sqrt)
def sqrt_adjoint(dy, y, x):
    return (dy / (2 * y),)


@adjoint(np.cbrt)
def cbrt_adjoint(dy, y, x):
    return (dy / (3 * y * y),)


@adjoint(np.square)
def square_adjoint(dy, y, x):
    return (dy * 2 * x,)


@adjoint(np.reciprocal)
def reciprocal_adjoint(dy, y, x):
    return (-dy * y * y,)


@adjoint(np.power)
def power_adjoint(dy, y, x1, x2):
    # Slope in x1: x2 * x1 ** (x2 - 1). Where x2 == 0 the exponent is raised to 0, so
    # the slope is 0 * x1 ** 0 = 0 rather than 0 * 0 ** -1 = nan at x1 == 0.
    d_x1 = dy * x2 * np.power(x1, x2 - 1 + (x2 == 0))
    d_x2 = dy * y * np.log(np.where(x1 > 0, x1, 1.0))
    return (unbroadcast(d_x1, x1), unbroadcast(d_x2, x2))


@adjoint(np.float_power)
def float_power_adjoint(dy, y, x1, x2):
    # As for np.power, in float64.
    d_x1 = dy * x2 * np.float_power(x1, x2 - 1 + (x2 == 0))
    d_x2 = dy * y * np.log(np.where(x1 > 0, x1, 1.0))
    return (unbroadcast(d_x1, x1), unbroadcast(d_x2, x2))


# ----- Arithmetic -----


@adjoint(np.add)
def add_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy, x1), unbroadcast(dy, x2))


@adjoint(np.subtract)
def subtract_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy, x1), unbroadcast(-dy, x2))


@adjoint(np.multiply)
def multiply_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy * x2, x1), unbroadcast(dy * x1, x2))


# np.true_divide is np.divide; registering both keeps older NumPy versions covered.
@adjoint(np.divide)
@adjoint(np.true_divide)
def divide_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy / x2, x1), unbroadcast(-dy * y / x2, x2))


@adjoint(np.negative)
def negative_adjoint(dy, y, x):
    return (-dy,)


@adjoint(np.positive)
def positive_adjoint(dy, y, x):
    return (dy,)


@adjoint(np.abs)
@adjoint(np.absolute)
@adjoint(np.fabs)
def abs_adjoint(dy, y, x):
    return (dy * np.sign(x),)


@adjoint(np.real)
def real_adjoint(dy, y, val):
    return (dy,)


@adjoint(np.conj)
@adjoint(np.conjugate)
@adjoint(np.ndarray.conj)
@adjoint(np.ndarray.conjugate)
def conj_adjoint(dy, y, x):
    return (np.conj(dy),)


# ----- Selection -----


@adjoint(np.maximum)
@adjoint(np.minimum)
@adjoint(np.fmax)
@adjoint(np.fmin)
def extremum_adjoint(dy, y, x1, x2):
    # x1 gets the gradient where the result is x1, and half of it at ties.
    share1 = (y == x1) - 0.5 * (x1 == x2)
    return (unbroadcast(dy * share1, x1), unbroadcast(dy * (1 - share1), x2))


@adjoint(np.where)
def where_adjoint(dy, y, condition, a, b):
    # np.where's arguments are positional-only; `a` and `b` are its x and y.
    d_a = np.where(condition, dy, 0.0)
    d_b = np.where(condition, 0.0, dy)
    return (None, unbroadcast(d_a, a), unbroadcast(d_b, b))


@adjoint(np.clip)
@adjoint(np.ndarray.clip)
def clip_adjoint(dy, y, a, *bounds, **keyword_bounds):
    """Adjoint of ``np.clip(a, a_min, a_max)`` and ``a.clip(min, max)``.

    Bounds passed positionally get adjoints; bounds passed by keyword
    (``a_min=``, ``a_max=``, ``min=``, ``max=``) do not, so the number of adjoints
    returned always matches the positional arguments of the call.
    """
    # Inside the bounds y equals a; where a was clipped, y is the bound (above a for
    # the lower bound, below a for the upper one). NaN in a gives no gradient.
    d_a = unbroadcast(np.where(y == a, dy, 0.0), a)
    d_bounds = (np.where(y > a, dy, 0.0), np.where(y < a, dy, 0.0))
    return (d_a,) + tuple(unbroadcast(d, bound) for d, bound in zip(d_bounds, bounds, strict=False))  # fewer bounds than two when passed by keyword


# ----- Casts -----


@adjoint(np.ndarray.astype)
def astype_adjoint(dy, y, x, dtype=None, order="K", casting="unsafe", subok=True, copy=True):
    # The gradient flows through the cast, back in the input's precision.
    grad_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else None
    return (np.asarray(dy, dtype=grad_dtype),)


# ----- Non-differentiable -----

nondifferentiable(
    # Rounding: piecewise constant.
    np.floor,
    np.ceil,
    np.round,
    np.around,
    np.rint,
    np.trunc,
    np.fix,
    np.floor_divide,
    np.ndarray.round,
    # Sign and classification.
    np.sign,
    np.signbit,
    np.heaviside,
    np.isnan,
    np.isinf,
    np.isfinite,
    # Comparisons and logic.
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
)
