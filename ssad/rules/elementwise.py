"""Rules: NumPy elementwise functions (ufuncs and their close relatives).

Domain: floating inputs -- Python floats, NumPy scalars and arrays of any shapes
that broadcast together. Every rule of a binary function sums each adjoint back to
its input's shape with `unbroadcast`.

Complex inputs follow one convention (docs/conventions.md, "Complex numbers"), that
of autograd and JAX: the adjoint ``c`` of a value pairs with a tangent ``t`` as
``Re(c * t)``, so a holomorphic function's adjoint is ``dy * f'(z)``, unchanged from
the real formula, and ``grad`` of a real ``f`` is ``df/dx - 1j * df/dy``. Rules of
holomorphic functions (``exp``, ``log``, ``sin``, the products...) therefore hold
for complex inputs as written. Rules whose result is real although the input may be
complex (``abs``, ``real``, ``imag``, ``angle``) read only the real part of ``dy``
(the adjoint of a real value may carry an imaginary part that means nothing, from a
product with a complex number), and their tangents are real. Where a formula differs
for complex inputs (``arcsinh``, ``arccosh``, the ``log`` of a power's base), a
helper branches on the dtype and real inputs keep their formula. Functions NumPy
defines for real inputs only (``hypot``, ``arctan2``, ``logaddexp``, ``cbrt``...) and
orderings (``maximum``, ``clip``) are for real inputs.

Each adjoint rule has a tangent (forward-mode) rule right after it, its exact
transpose: ``<adjoint(dy), t> == <dy, tangent(t)>``. The tangent rule of a binary
function spreads its result to the output's shape with `broadcast_like`, and the
conventions below hold in both modes (a tie of ``maximum`` gives the mean of the
two tangents, for example).

Conventions where the derivative does not exist, chosen so that no rule turns a
finite input into NaN:

- ``abs``, ``fabs``: the slope at 0 is 0 (that of ``np.sign``). ``hypot`` at the
  origin likewise gives 0 to both inputs.
- ``maximum``, ``minimum``, ``fmax``, ``fmin``: the gradient goes to the input the
  result equals; where the two inputs are equal, each gets half of it. Where an
  input is NaN, the gradient goes to the input the function returned: the NaN for
  ``maximum``/``minimum`` (the first input when both are NaN), the number for
  ``fmax``/``fmin``.
- ``clip``: ``a`` gets the gradient wherever it lies in ``[a_min, a_max]``, bounds
  included, and where it is NaN (clip returns it); where ``a`` was clipped, the
  bound it was clipped to gets it instead (this assumes ``a_min <= a_max``). A bound
  may be None.
- ``where``: each branch gets the gradient only where it was selected, so an inf
  or NaN in the branch not taken never leaks into the adjoint.
- ``power(x, p)``: the slope in ``x`` is 0 where ``p == 0``, even at ``x == 0``; the
  slope in ``p`` uses ``log(x)`` only where ``x > 0`` and is 0 elsewhere.
- ``sinc`` at 0 has slope 0. Where the true derivative is infinite (``sqrt`` or
  ``cbrt`` at 0, ``arcsin`` at 1) the rule returns inf, as NumPy would.
- ``remainder`` (``mod``, the ``%`` operator's rule), ``fmod``, ``divmod``, ``modf``:
  slope 1 in the dividend and minus the quotient (floored, or truncated for ``fmod``) in
  the divisor, also at the jumps, where the quotient NumPy computed decides; the quotient
  and the integral part of ``modf`` are piecewise constant.
- ``copysign(x1, x2)``: slope ``sign(x1)`` times the sign of ``x2``'s sign bit in ``x1``
  (0 at ``x1 == 0``, as for ``abs``), 0 in ``x2``. ``nextafter(x1, x2)``: slope 1 in
  ``x1`` (it moves ``x1`` by one unit in the last place), 0 in ``x2``. ``ldexp`` and
  ``frexp``: the integer exponent has no gradient.
- ``nan_to_num``: slope 1 where ``x`` is finite, 0 where NaN or inf was replaced (for
  complex ``x``, real and imaginary parts apart); the replacement values get no gradient.
  ``copy=False`` on an array is refused: it overwrites the input the rule reads.
- ``real_if_close``: the adjoint of ``np.real`` where the imaginary part was dropped, the
  identity elsewhere.
- ``i0``: slope I1, computed without SciPy (power series up to 20, asymptotic series
  beyond), itself a primitive whose slope ``I0(x) - I1(x) / x`` is 1/2 at 0.

Rounding, sign, spacing and comparison functions are registered as non-differentiable.
"""

import numpy as np

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, is_other_array, unbroadcast

# ----- Complex numbers -----


def _is_complex(x):
    """True for a complex number or an array of complex dtype (read from the dtype, cheaply)."""
    dtype = getattr(x, "dtype", None)
    return dtype.kind == "c" if dtype is not None else isinstance(x, complex)


nondifferentiable(_is_complex)  # a flag read from the dtype


def _conj(x):
    """`np.conj(x)` for complex `x`; a real `x` itself, with no copy."""
    return np.conj(x) if _is_complex(x) else x


@adjoint(_conj)
def _conj_adjoint(dy, y, x):
    return (_conj(dy),)


@tangent(_conj)
def _conj_tangent(tangents, y, x):
    return _conj(tangents[0])


def _unit(z):
    """`z / |z|` for complex `z` (0 at 0): the sign of a complex number."""
    r = np.abs(z)
    return z / np.where(r == 0, 1.0, r)


def _abs_adjoint(dy, x):
    """The adjoint of `x` in `abs(x)`: `dy * sign(x)`; for complex x, Re(dy) * conj(x / |x|)."""
    if _is_complex(x):
        return np.real(dy) * np.conj(_unit(x))
    return dy * np.sign(x)


def _abs_tangent(t, x):
    """The tangent of `abs(x)`: `t * sign(x)`; for complex x, the real Re(conj(x / |x|) * t)."""
    if _is_complex(x):
        return np.real(np.conj(_unit(x)) * t)
    return t * np.sign(x)


def _angle_slope(z, deg):
    """The adjoint of `z` in `np.angle(z, deg)` per unit of (real) `dy`: -1j conj(z) / |z|**2
    (0 at 0, and 0 for real z, where the angle is piecewise constant)."""
    if not _is_complex(z):
        return np.zeros_like(z, dtype=np.result_type(z, 1.0))
    r2 = np.real(z * np.conj(z))
    scale = 180 / np.pi if deg else 1.0
    return (-1j * scale) * np.conj(z) / np.where(r2 == 0, 1.0, r2)


def _hypot1(x):
    """sqrt(1 + x**2), the slope of arcsinh's inverse: `np.hypot(x, 1.0)` (no overflow) for real x."""
    if _is_complex(x):
        return np.sqrt(1 + x * x)
    return np.hypot(x, 1.0)


def _arccosh_root(x):
    """sqrt(x - 1) * sqrt(x + 1), one over arccosh's slope; one root of the product for real x."""
    if _is_complex(x):
        return np.sqrt(x - 1) * np.sqrt(x + 1)  # the product's root has the wrong sign where Re x < 0
    return np.sqrt((x - 1) * (x + 1))


def _log_of_base(base):
    """log(base) for the slope of `base ** p` in `p`: only where `base > 0` (0 elsewhere) for
    real bases; the principal logarithm (0 at 0) for complex ones."""
    if _is_complex(base):
        return np.log(np.where(base == 0, 1.0, base))
    return np.log(np.where(base > 0, base, 1.0))


# ----- Trigonometric -----


@adjoint(np.sin)
def sin_adjoint(dy, y, x):
    return (dy * np.cos(x),)


@tangent(np.sin)
def sin_tangent(tangents, y, x):
    return tangents[0] * np.cos(x)


@adjoint(np.cos)
def cos_adjoint(dy, y, x):
    return (-dy * np.sin(x),)


@tangent(np.cos)
def cos_tangent(tangents, y, x):
    return -tangents[0] * np.sin(x)


@adjoint(np.tan)
def tan_adjoint(dy, y, x):
    return (dy * (1 + y * y),)


@tangent(np.tan)
def tan_tangent(tangents, y, x):
    return tangents[0] * (1 + y * y)


@adjoint(np.arcsin)
def arcsin_adjoint(dy, y, x):
    return (dy / np.sqrt((1 - x) * (1 + x)),)


@tangent(np.arcsin)
def arcsin_tangent(tangents, y, x):
    return tangents[0] / np.sqrt((1 - x) * (1 + x))


@adjoint(np.arccos)
def arccos_adjoint(dy, y, x):
    return (-dy / np.sqrt((1 - x) * (1 + x)),)


@tangent(np.arccos)
def arccos_tangent(tangents, y, x):
    return -tangents[0] / np.sqrt((1 - x) * (1 + x))


@adjoint(np.arctan)
def arctan_adjoint(dy, y, x):
    return (dy / (1 + x * x),)


@tangent(np.arctan)
def arctan_tangent(tangents, y, x):
    return tangents[0] / (1 + x * x)


@adjoint(np.arctan2)
def arctan2_adjoint(dy, y, x1, x2):
    # arctan2(x1, x2) is the angle of the point (x2, x1).
    r2 = x1 * x1 + x2 * x2
    return (unbroadcast(dy * x2 / r2, x1), unbroadcast(-dy * x1 / r2, x2))


@tangent(np.arctan2)
def arctan2_tangent(tangents, y, x1, x2):
    return broadcast_like((tangents[0] * x2 - tangents[1] * x1) / (x1 * x1 + x2 * x2), y)


@adjoint(np.hypot)
def hypot_adjoint(dy, y, x1, x2):
    scale = dy / np.where(y == 0, 1.0, y)
    return (unbroadcast(scale * x1, x1), unbroadcast(scale * x2, x2))


@tangent(np.hypot)
def hypot_tangent(tangents, y, x1, x2):
    return broadcast_like((tangents[0] * x1 + tangents[1] * x2) / np.where(y == 0, 1.0, y), y)


def _sinc_derivative(y, x):
    """sinc'(x) = (cos(pi x) - sinc(x)) / x; at x == 0 it is 0, written as -pi**2 / 3 * x,
    the leading term of its series, so that differentiating it again gives sinc''(0)."""
    at_zero = x == 0
    return np.where(at_zero, (-np.pi**2 / 3) * x, (np.cos(np.pi * x) - y) / np.where(at_zero, 1.0, x))


@adjoint(np.sinc)
def sinc_adjoint(dy, y, x):
    return (dy * _sinc_derivative(y, x),)


@tangent(np.sinc)
def sinc_tangent(tangents, y, x):
    return tangents[0] * _sinc_derivative(y, x)


@adjoint(np.deg2rad)
@adjoint(np.radians)
def deg2rad_adjoint(dy, y, x):
    return (dy * (np.pi / 180),)


@tangent(np.deg2rad)
@tangent(np.radians)
def deg2rad_tangent(tangents, y, x):
    return tangents[0] * (np.pi / 180)


@adjoint(np.rad2deg)
@adjoint(np.degrees)
def rad2deg_adjoint(dy, y, x):
    return (dy * (180 / np.pi),)


@tangent(np.rad2deg)
@tangent(np.degrees)
def rad2deg_tangent(tangents, y, x):
    return tangents[0] * (180 / np.pi)


# ----- Hyperbolic -----


@adjoint(np.sinh)
def sinh_adjoint(dy, y, x):
    return (dy * np.cosh(x),)


@tangent(np.sinh)
def sinh_tangent(tangents, y, x):
    return tangents[0] * np.cosh(x)


@adjoint(np.cosh)
def cosh_adjoint(dy, y, x):
    return (dy * np.sinh(x),)


@tangent(np.cosh)
def cosh_tangent(tangents, y, x):
    return tangents[0] * np.sinh(x)


@adjoint(np.tanh)
def tanh_adjoint(dy, y, x):
    return (dy * (1 - y * y),)


@tangent(np.tanh)
def tanh_tangent(tangents, y, x):
    return tangents[0] * (1 - y * y)


@adjoint(np.arcsinh)
def arcsinh_adjoint(dy, y, x):
    return (dy / _hypot1(x),)


@tangent(np.arcsinh)
def arcsinh_tangent(tangents, y, x):
    return tangents[0] / _hypot1(x)


@adjoint(np.arccosh)
def arccosh_adjoint(dy, y, x):
    return (dy / _arccosh_root(x),)


@tangent(np.arccosh)
def arccosh_tangent(tangents, y, x):
    return tangents[0] / _arccosh_root(x)


@adjoint(np.arctanh)
def arctanh_adjoint(dy, y, x):
    return (dy / ((1 - x) * (1 + x)),)


@tangent(np.arctanh)
def arctanh_tangent(tangents, y, x):
    return tangents[0] / ((1 - x) * (1 + x))


# ----- Exponents and logarithms -----


@adjoint(np.exp)
def exp_adjoint(dy, y, x):
    return (dy * y,)


@tangent(np.exp)
def exp_tangent(tangents, y, x):
    return tangents[0] * y


@adjoint(np.exp2)
def exp2_adjoint(dy, y, x):
    return (dy * y * np.log(2.0),)


@tangent(np.exp2)
def exp2_tangent(tangents, y, x):
    return tangents[0] * y * np.log(2.0)


@adjoint(np.expm1)
def expm1_adjoint(dy, y, x):
    return (dy * (y + 1),)


@tangent(np.expm1)
def expm1_tangent(tangents, y, x):
    return tangents[0] * (y + 1)


@adjoint(np.log)
def log_adjoint(dy, y, x):
    return (dy / x,)


@tangent(np.log)
def log_tangent(tangents, y, x):
    return tangents[0] / x


@adjoint(np.log2)
def log2_adjoint(dy, y, x):
    return (dy / (x * np.log(2.0)),)


@tangent(np.log2)
def log2_tangent(tangents, y, x):
    return tangents[0] / (x * np.log(2.0))


@adjoint(np.log10)
def log10_adjoint(dy, y, x):
    return (dy / (x * np.log(10.0)),)


@tangent(np.log10)
def log10_tangent(tangents, y, x):
    return tangents[0] / (x * np.log(10.0))


@adjoint(np.log1p)
def log1p_adjoint(dy, y, x):
    return (dy / (1 + x),)


@tangent(np.log1p)
def log1p_tangent(tangents, y, x):
    return tangents[0] / (1 + x)


@adjoint(np.logaddexp)
def logaddexp_adjoint(dy, y, x1, x2):
    # d/dx1 log(e^x1 + e^x2) = e^x1 / (e^x1 + e^x2) = e^(x1 - y), which cannot overflow.
    return (unbroadcast(dy * np.exp(x1 - y), x1), unbroadcast(dy * np.exp(x2 - y), x2))


@tangent(np.logaddexp)
def logaddexp_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] * np.exp(x1 - y) + tangents[1] * np.exp(x2 - y), y)


@adjoint(np.logaddexp2)
def logaddexp2_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy * np.exp2(x1 - y), x1), unbroadcast(dy * np.exp2(x2 - y), x2))


@tangent(np.logaddexp2)
def logaddexp2_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] * np.exp2(x1 - y) + tangents[1] * np.exp2(x2 - y), y)


# ----- Powers and roots -----


@adjoint(np.sqrt)
def sqrt_adjoint(dy, y, x):
    return (dy / (2 * y),)


@tangent(np.sqrt)
def sqrt_tangent(tangents, y, x):
    return tangents[0] / (2 * y)


@adjoint(np.cbrt)
def cbrt_adjoint(dy, y, x):
    return (dy / (3 * y * y),)


@tangent(np.cbrt)
def cbrt_tangent(tangents, y, x):
    return tangents[0] / (3 * y * y)


@adjoint(np.square)
def square_adjoint(dy, y, x):
    return (dy * 2 * x,)


@tangent(np.square)
def square_tangent(tangents, y, x):
    return tangents[0] * 2 * x


@adjoint(np.reciprocal)
def reciprocal_adjoint(dy, y, x):
    return (-dy * y * y,)


@tangent(np.reciprocal)
def reciprocal_tangent(tangents, y, x):
    return -tangents[0] * y * y


@adjoint(np.power)
def power_adjoint(dy, y, x1, x2):
    # Slope in x1: x2 * x1 ** (x2 - 1). Where x2 == 0 the exponent is raised to 0, so
    # the slope is 0 * x1 ** 0 = 0 rather than 0 * 0 ** -1 = nan at x1 == 0.
    d_x1 = dy * x2 * np.power(x1, x2 - 1 + (x2 == 0))
    d_x2 = dy * y * _log_of_base(x1)
    return (unbroadcast(d_x1, x1), unbroadcast(d_x2, x2))


@tangent(np.power)
def power_tangent(tangents, y, x1, x2):
    # The guards of the adjoint: slope 0 in x1 where x2 == 0, log(x1) only where x1 > 0.
    slope1 = x2 * np.power(x1, x2 - 1 + (x2 == 0))
    return broadcast_like(tangents[0] * slope1 + _exponent_term(tangents[1], y, x1), y)


def _exponent_term(t, y, base):
    """``t * y * log(base)``: the exponent's part of the tangent of ``base ** exponent``.

    ``log(base)`` is taken only where ``base > 0`` (0 elsewhere, as in the adjoint).
    A constant exponent adds nothing and costs no logarithm: its tangent is None
    (an integer exponent) or a zero made concrete as the Python float 0.0.
    """
    if t is None or (type(t) is float and t == 0.0):
        return 0.0
    return t * y * _log_of_base(base)


@adjoint(np.float_power)
def float_power_adjoint(dy, y, x1, x2):
    # As for np.power, in float64.
    d_x1 = dy * x2 * np.float_power(x1, x2 - 1 + (x2 == 0))
    d_x2 = dy * y * _log_of_base(x1)
    return (unbroadcast(d_x1, x1), unbroadcast(d_x2, x2))


@tangent(np.float_power)
def float_power_tangent(tangents, y, x1, x2):
    slope1 = x2 * np.float_power(x1, x2 - 1 + (x2 == 0))
    return broadcast_like(tangents[0] * slope1 + _exponent_term(tangents[1], y, x1), y)


# ----- Arithmetic -----


@adjoint(np.add)
def add_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy, x1), unbroadcast(dy, x2))


@tangent(np.add)
def add_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] + tangents[1], y)


@adjoint(np.subtract)
def subtract_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy, x1), -unbroadcast(dy, x2))  # the sum of the smaller array is negated


@tangent(np.subtract)
def subtract_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] - tangents[1], y)


@adjoint(np.multiply)
def multiply_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy * x2, x1), unbroadcast(dy * x1, x2))


@tangent(np.multiply)
def multiply_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] * x2 + x1 * tangents[1], y)


# np.true_divide is np.divide; registering both keeps older NumPy versions covered.
@adjoint(np.divide)
@adjoint(np.true_divide)
def divide_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy / x2, x1), unbroadcast(-dy * y / x2, x2))


@tangent(np.divide)
@tangent(np.true_divide)
def divide_tangent(tangents, y, x1, x2):
    return broadcast_like((tangents[0] - tangents[1] * y) / x2, y)


@adjoint(np.negative)
def negative_adjoint(dy, y, x):
    return (-dy,)


@tangent(np.negative)
def negative_tangent(tangents, y, x):
    return -tangents[0]


@adjoint(np.positive)
def positive_adjoint(dy, y, x):
    return (dy,)


@tangent(np.positive)
def positive_tangent(tangents, y, x):
    return tangents[0]


@adjoint(np.abs)
@adjoint(np.absolute)
@adjoint(np.fabs)
def abs_adjoint(dy, y, x):
    return (_abs_adjoint(dy, x),)


@tangent(np.abs)
@tangent(np.absolute)
@tangent(np.fabs)
def abs_tangent(tangents, y, x):
    return _abs_tangent(tangents[0], x)


@adjoint(np.real)
@adjoint(np.ndarray.real)
def real_adjoint(dy, y, val):
    return (np.real(dy),)


@tangent(np.real)
@tangent(np.ndarray.real)
def real_tangent(tangents, y, val):
    return np.real(tangents[0])


@adjoint(np.imag)
@adjoint(np.ndarray.imag)
def imag_adjoint(dy, y, val):
    # imag(z) = Re(-1j * z); of a real value, the constant 0 (a real adjoint, as every real value's)
    return (-1j * np.real(dy) if np.iscomplexobj(val) else np.zeros_like(np.real(dy)),)


@tangent(np.imag)
@tangent(np.ndarray.imag)
def imag_tangent(tangents, y, val):
    return np.imag(tangents[0])


@adjoint(np.angle)
def angle_adjoint(dy, y, z, deg=False):
    return (np.real(dy) * _angle_slope(z, deg),)


@tangent(np.angle)
def angle_tangent(tangents, y, z, deg=False):
    return np.real(_angle_slope(z, deg) * tangents[0])


@adjoint(np.conj)
@adjoint(np.conjugate)
@adjoint(np.ndarray.conj)
@adjoint(np.ndarray.conjugate)
def conj_adjoint(dy, y, x):
    return (np.conj(dy),)


@tangent(np.conj)
@tangent(np.conjugate)
@tangent(np.ndarray.conj)
@tangent(np.ndarray.conjugate)
def conj_tangent(tangents, y, x):
    return np.conj(tangents[0])


# ----- Selection -----


@adjoint(np.maximum)
@adjoint(np.minimum)
def extremum_adjoint(dy, y, x1, x2):
    # x1 gets the gradient where the result is x1, and half of it at ties. A NaN
    # input is what maximum returns (x1 when both are), so it gets the gradient.
    share1 = ((y == x1) | (x1 != x1)) - 0.5 * (x1 == x2)
    return (unbroadcast(dy * share1, x1), unbroadcast(dy * (1 - share1), x2))


@tangent(np.maximum)
@tangent(np.minimum)
def extremum_tangent(tangents, y, x1, x2):
    # The tangent of the input the result equals (of a NaN input); the mean of both at ties.
    share1 = ((y == x1) | (x1 != x1)) - 0.5 * (x1 == x2)
    return broadcast_like(tangents[0] * share1 + tangents[1] * (1 - share1), y)


@adjoint(np.fmax)
@adjoint(np.fmin)
def nan_ignoring_extremum_adjoint(dy, y, x1, x2):
    # As for maximum, but fmax returns the number past a NaN, so that input gets it.
    share1 = (y == x1) - 0.5 * (x1 == x2)
    return (unbroadcast(dy * share1, x1), unbroadcast(dy * (1 - share1), x2))


@tangent(np.fmax)
@tangent(np.fmin)
def nan_ignoring_extremum_tangent(tangents, y, x1, x2):
    share1 = (y == x1) - 0.5 * (x1 == x2)
    return broadcast_like(tangents[0] * share1 + tangents[1] * (1 - share1), y)


@adjoint(np.where)
def where_adjoint(dy, y, condition, a, b):
    # np.where's arguments are positional-only; `a` and `b` are its x and y.
    d_a = np.where(condition, dy, 0.0)
    d_b = np.where(condition, 0.0, dy)
    return (None, unbroadcast(d_a, a), unbroadcast(d_b, b))


@tangent(np.where)
def where_tangent(tangents, y, condition, a, b):
    # Selected, never multiplied: the tangent of the branch not taken cannot leak.
    return np.where(condition, tangents[1], tangents[2])


@adjoint(np.clip)
@adjoint(np.ndarray.clip)
def clip_adjoint(dy, y, a, *bounds, a_min=None, a_max=None, out=None, min=None, max=None):
    """Adjoint of ``np.clip(a, a_min, a_max)`` and ``a.clip(min, max)``.

    Bounds passed positionally get adjoints; bounds passed by keyword
    (``a_min=``, ``a_max=``, ``min=``, ``max=``) do not, so the number of adjoints
    returned always matches the positional arguments of the call.
    """
    # Inside the bounds y equals a; where a was clipped, y is the bound (above a for
    # the lower bound, below a for the upper one). A NaN in a is returned as it is,
    # so it gets the gradient (a NaN bound gets none).
    d_a = unbroadcast(np.where((y == a) | (a != a), dy, 0.0), a)
    d_bounds = (np.where(y > a, dy, 0.0), np.where(y < a, dy, 0.0))
    return (d_a,) + tuple(unbroadcast(d, bound) for d, bound in zip(d_bounds, bounds, strict=False))  # fewer bounds than two when passed by keyword


@tangent(np.clip)
@tangent(np.ndarray.clip)
def clip_tangent(tangents, y, a, *bounds, a_min=None, a_max=None, out=None, min=None, max=None):
    """Tangent of ``np.clip(a, a_min, a_max)`` and ``a.clip(min, max)``.

    The tangent of ``a`` inside the bounds (bounds included), that of the bound
    ``a`` was clipped to elsewhere. Bounds passed by keyword carry no tangent.
    """
    t_lower = _bound_tangent(tangents, 1)
    t_upper = _bound_tangent(tangents, 2)
    return np.where((y == a) | (a != a), tangents[0], np.where(y > a, t_lower, np.where(y < a, t_upper, 0.0)))


def _bound_tangent(tangents, position):
    """The tangent of a clip bound: 0.0 for one passed by keyword, or passed as None."""
    return tangents[position] if position < len(tangents) and tangents[position] is not None else 0.0


# ----- Remainders, mantissas and exponents -----


# np.mod is np.remainder. x1 % x2 == x1 - floor(x1 / x2) * x2, and the quotient is piecewise
# constant: the rule of the `%` operator, with NumPy's own quotient (np.floor_divide rounds
# exactly as np.remainder does).
@adjoint(np.remainder)
def remainder_adjoint(dy, y, x1, x2):
    return (unbroadcast(dy, x1), unbroadcast(-dy * np.floor_divide(x1, x2), x2))


@tangent(np.remainder)
def remainder_tangent(tangents, y, x1, x2):
    return broadcast_like(_tangent_of(tangents, 0) - _tangent_of(tangents, 1) * np.floor_divide(x1, x2), y)


@adjoint(np.fmod)
def fmod_adjoint(dy, y, x1, x2):
    # fmod(x1, x2) == x1 - trunc(x1 / x2) * x2; the quotient read back from the result is exact
    return (unbroadcast(dy, x1), unbroadcast(-dy * _fmod_quotient(y, x1, x2), x2))


@tangent(np.fmod)
def fmod_tangent(tangents, y, x1, x2):
    return broadcast_like(_tangent_of(tangents, 0) - _tangent_of(tangents, 1) * _fmod_quotient(y, x1, x2), y)


@adjoint(np.divmod)
def divmod_adjoint(dy, y, x1, x2):
    # (floor_divide, remainder): the quotient is piecewise constant, only the remainder's dy counts
    return (unbroadcast(dy[1], x1), unbroadcast(-dy[1] * y[0], x2))


@tangent(np.divmod)
def divmod_tangent(tangents, y, x1, x2):
    return (np.zeros_like(y[0]), broadcast_like(_tangent_of(tangents, 0) - _tangent_of(tangents, 1) * y[0], y[1]))


@adjoint(np.modf)
def modf_adjoint(dy, y, x):
    # (fractional part, integral part): x - trunc(x) has slope 1, trunc(x) slope 0
    return (dy[0],)


@tangent(np.modf)
def modf_tangent(tangents, y, x):
    return (broadcast_like(tangents[0], y[0]), np.zeros_like(y[1]))


@adjoint(np.ldexp)
def ldexp_adjoint(dy, y, x1, x2):
    # x1 * 2**x2 with an integer exponent: x2 has no gradient (zero, even when it was computed
    # from differentiated values, like the exponent np.frexp returns)
    return (unbroadcast(np.ldexp(dy, x2), x1), None)


@tangent(np.ldexp)
def ldexp_tangent(tangents, y, x1, x2):
    return broadcast_like(np.ldexp(tangents[0], x2), y)


@adjoint(np.frexp)
def frexp_adjoint(dy, y, x):
    # x == mantissa * 2**exponent: the mantissa is x * 2**-exponent, the exponent an integer
    return (np.ldexp(dy[0], -y[1]),)


@tangent(np.frexp)
def frexp_tangent(tangents, y, x):
    return (np.ldexp(broadcast_like(tangents[0], y[0]), -y[1]), np.zeros_like(y[1]))


@adjoint(np.copysign)
def copysign_adjoint(dy, y, x1, x2):
    # |x1| with the sign of x2: slope sign(x1) * (+-1) in x1 (0 at x1 == 0, as for abs), 0 in x2
    return (unbroadcast(dy * _copysign_slope(x1, x2), x1), None)


@tangent(np.copysign)
def copysign_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0] * _copysign_slope(x1, x2), y)


@adjoint(np.nextafter)
def nextafter_adjoint(dy, y, x1, x2):
    # x1 moved by one unit in the last place: slope 1 in x1, 0 in the direction x2
    return (unbroadcast(dy, x1), None)


@tangent(np.nextafter)
def nextafter_tangent(tangents, y, x1, x2):
    return broadcast_like(tangents[0], y)


def _tangent_of(tangents, position):
    """The tangent of a positional argument: 0.0 for one that carries none (an integer)."""
    return 0.0 if tangents[position] is None else tangents[position]


def _fmod_quotient(y, x1, x2):
    """The integer q with fmod(x1, x2) == x1 - q * x2, read back from the result y."""
    return np.round((x1 - y) / x2)


def _copysign_slope(x1, x2):
    """The slope of copysign(x1, x2) in x1: sign(x1), negated where x2's sign bit is set."""
    return np.sign(x1) * np.where(np.signbit(x2), -1.0, 1.0)


nondifferentiable(_fmod_quotient, _copysign_slope)


# ----- Non-finite values and complex results -----


@adjoint(np.nan_to_num)
def nan_to_num_adjoint(dy, y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # slope 1 where x is finite, 0 where NaN or inf was replaced (the replacements get none)
    return (_finite_part(dy, x, copy),)


@tangent(np.nan_to_num)
def nan_to_num_tangent(tangents, y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return _finite_part(tangents[0], x, copy)


def _finite_part(g, x, copy):
    """`g` where `x` is finite, 0 where nan_to_num replaced it (real and imaginary parts apart)."""
    _check_copied(x, copy)
    if _is_complex(x):
        real = np.where(np.isfinite(np.real(x)), np.real(g), 0.0)
        return real + 1j * np.where(np.isfinite(np.imag(x)), np.imag(g), 0.0)
    return np.where(np.isfinite(x), g, 0.0)


def _check_copied(x, copy):
    """Refuse np.nan_to_num(x, copy=False) on an array: it overwrites x, so the rule can no
    longer tell which elements were replaced."""
    if not copy and isinstance(x, np.ndarray) and x.ndim > 0:
        raise located(
            "cannot differentiate np.nan_to_num(x, copy=False): it overwrites x in place, so which "
            "elements were NaN or inf is lost. Use copy=True (the default)."
        )


nondifferentiable(_check_copied)


@adjoint(np.real_if_close)
def real_if_close_adjoint(dy, y, a, tol=100):
    # a's real part when its imaginary part is negligible (the adjoint of np.real), else a itself
    return (_real_if_real(dy, y, a),)


@tangent(np.real_if_close)
def real_if_close_tangent(tangents, y, a, tol=100):
    return _real_if_real(tangents[0], y, a)


def _real_if_real(g, y, a):
    """`np.real(g)` where np.real_if_close dropped the imaginary part of a complex `a`; `g` otherwise."""
    if _is_complex(a) and not _is_complex(y):
        return np.real(g)
    return g


# ----- Bessel function I0 -----


@adjoint(np.i0)
def i0_adjoint(dy, y, x):
    return (dy * _i1(x),)


@tangent(np.i0)
def i0_tangent(tangents, y, x):
    return tangents[0] * _i1(x)


def _i1(x):
    """The modified Bessel function I1(x) = I0'(x), which NumPy does not have (SciPy's i1,
    without SciPy): its power series for |x| <= 20, its asymptotic series beyond."""
    z = np.abs(x)
    small = z <= 20.0
    # sum over k of (x/2)**(2k+1) / (k! (k+1)!): positive terms, no cancellation
    half = np.where(small, x, 0.0) / 2
    term = half
    total = half
    for k in range(1, 60):
        term = term * half * half / (k * (k + 1))
        total = total + term
    # e**z / sqrt(2 pi z) * sum over k of (-1)**k prod_j (4 - (2j - 1)**2) / (k! (8 z)**k)
    big = np.where(small, 21.0, z)
    factor = 1.0
    series = 1.0
    for k in range(1, 30):
        factor = factor * ((2 * k - 1) ** 2 - 4) / (8 * k * big)
        series = series + factor
    with np.errstate(over="ignore"):
        asymptotic = np.sign(x) * np.exp(big) / np.sqrt(2 * np.pi * big) * series
    return np.where(small, total, asymptotic)


@adjoint(_i1)
def _i1_adjoint(dy, y, x):
    return (dy * _i1_slope(y, x),)


@tangent(_i1)
def _i1_tangent(tangents, y, x):
    return tangents[0] * _i1_slope(y, x)


def _i1_slope(y, x):
    """I1'(x) = I0(x) - I1(x) / x, which is 1/2 at 0."""
    at_zero = x == 0
    return np.where(at_zero, 0.5, np.i0(x) - y / np.where(at_zero, 1.0, x))


# ----- Casts -----


@adjoint(np.ndarray.astype)
def astype_adjoint(dy, y, x, dtype=None, order="K", casting="unsafe", subok=True, copy=True):
    # The gradient flows through the cast, back in the input's precision.
    grad_dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else None
    return (_cast(dy, grad_dtype, y),)


@tangent(np.ndarray.astype)
def astype_tangent(tangents, y, x, dtype=None, order="K", casting="unsafe", subok=True, copy=True):
    # The tangent flows through the cast, in the result's precision.
    tangent_dtype = y.dtype if np.issubdtype(y.dtype, np.inexact) else None
    return _cast(tangents[0], tangent_dtype, y)


def _cast(g, dtype, y):
    """`np.asarray(g, dtype)`; an array of another library (dask) is cast lazily instead.

    Where `dtype` or the cast's result `y` is real, the real part of `g` (a cast from
    complex to real keeps the real part; a real value's adjoint is its real part).
    """
    if y.dtype.kind in "iub":
        return _through_cast(g, y)
    if (y.dtype.kind != "c" or (dtype is not None and dtype.kind != "c")) and _is_complex(g):
        g = np.real(g)
    if is_other_array(g):
        return g if dtype is None else g.astype(dtype)
    return np.asarray(g, dtype=dtype)


def _through_cast(g, y):
    """The derivative `g` through a conversion whose result is `y`: zero where `y` holds
    integers or booleans (`np.asarray(x, dtype)` with an integer dtype known only when the
    code runs: the conversion is piecewise constant there)."""
    if getattr(getattr(y, "dtype", None), "kind", "f") in "iub":
        return np.zeros_like(g, dtype=float)
    return g


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
    # The gap between neighbouring floats: piecewise constant.
    np.spacing,
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
