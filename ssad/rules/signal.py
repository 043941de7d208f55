"""Rules: convolution and correlation of 1-D sequences (``np.convolve``, ``np.correlate``).

Conventions
-----------
- Both arguments carry gradients, in every mode (``'full'``, ``'same'``, ``'valid'``
  and NumPy's integer codes 2, 1, 0), whichever
  argument is the longer. A scalar argument is read as a sequence of length 1, as
  NumPy reads it, and its adjoint is a scalar.
- Each mode is a window of the full convolution; the adjoint pads ``dy`` with zeros
  back to the full length and convolves it in ``'valid'`` mode with the other
  argument reversed, so that the rules are convolutions too and differentiate again.
  ``np.correlate(a, v)`` is the full convolution of ``a`` with ``conj(v[::-1])``,
  windowed like NumPy's (its ``'same'`` window sits half a sample further right than
  the convolution's when ``v`` is the longer and the excess length is odd).
- Complex inputs follow docs/conventions.md ("Complex numbers"): ``convolve`` is
  holomorphic in both arguments (its adjoints are the real formulas, no conjugate);
  ``correlate`` is holomorphic in ``a`` and conjugate-linear in ``v``, whose adjoint is
  therefore conjugated. A real argument's adjoint is real.
- Both functions are bilinear: no kinks, nothing degenerate.
- Every adjoint has a tangent rule, its exact transpose. It leaves out the term of an
  argument whose tangent is zero (ssad passes the number 0.0 for the zero tangent of
  an array), since a convolution with 0.0 would have the wrong length.
"""

import numpy as np

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like, unbroadcast
from .elementwise import _conj

# ----- Helpers -----

_MODES = {0: "valid", 1: "same", 2: "full", "valid": "valid", "same": "same", "full": "full"}


def _window(n, m, mode, correlate):
    """(zeros before, zeros after) the window `mode` takes out of the full convolution of
    sequences of lengths `n` and `m` (NumPy's windows, `correlate`'s when it is true)."""
    if mode not in _MODES:
        raise located(f"np.convolve/np.correlate: unknown mode {mode!r}; use 'full', 'same' or 'valid'")
    full = n + m - 1
    length = {"full": full, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}[_MODES[mode]]
    extra = full - length
    before = (extra + 1) // 2 if correlate and n < m else extra // 2
    return before, extra - before


nondifferentiable(_window)  # lengths and a mode


def _full_adjoint(dy, a, v, mode, correlate):
    """The adjoint of the full convolution whose window `mode` has the adjoint `dy` (dy
    with zeros around it), and `a` and `v` as 1-D arrays."""
    a1, v1 = np.ravel(a), np.ravel(v)
    d_full = np.pad(dy, _window(np.size(a1), np.size(v1), mode, correlate))
    return d_full, a1, v1


def _flip(x):
    return x[::-1]


def _absent(t, x):
    """Whether `t` is no tangent of `x`: None, or the number 0.0 that stands for the zero
    tangent of an array (a convolution with it would have the wrong length)."""
    return t is None or (np.ndim(t) == 0 and np.ndim(x) > 0)


def _is_complex_list(x):
    return np.iscomplexobj(x)


nondifferentiable(_absent, _is_complex_list)  # flags read from shapes and dtypes


def _adjoint_of(g, x):
    """`g` summed back to the shape of `x` (unbroadcast), also for a list `x` (a constant
    kernel written out, say), which gets an array of its shape."""
    if isinstance(x, list):
        return np.reshape(g if _is_complex_list(x) else np.real(g), np.shape(x))
    return unbroadcast(g, x)


# ----- Convolution -----


@adjoint(np.convolve)
def convolve_adjoint(dy, y, a, v, mode="full"):
    d_full, a1, v1 = _full_adjoint(dy, a, v, mode, False)
    d_a = np.convolve(d_full, _flip(v1), "valid")
    d_v = np.convolve(d_full, _flip(a1), "valid")
    return (_adjoint_of(d_a, a), _adjoint_of(d_v, v))


@tangent(np.convolve)
def convolve_tangent(tangents, y, a, v, mode="full"):
    t = 0.0
    if not _absent(tangents[0], a):
        t = t + np.convolve(tangents[0], v, mode)
    if not _absent(tangents[1], v):
        t = t + np.convolve(a, tangents[1], mode)
    return broadcast_like(t, y)


# ----- Correlation: the convolution with conj(v[::-1]) -----


@adjoint(np.correlate)
def correlate_adjoint(dy, y, a, v, mode="valid"):
    d_full, a1, v1 = _full_adjoint(dy, a, v, mode, True)
    d_a = np.convolve(d_full, _conj(v1), "valid")
    d_v = _conj(_flip(np.convolve(d_full, _flip(a1), "valid")))
    return (_adjoint_of(d_a, a), _adjoint_of(d_v, v))


@tangent(np.correlate)
def correlate_tangent(tangents, y, a, v, mode="valid"):
    t = 0.0
    if not _absent(tangents[0], a):
        t = t + np.correlate(tangents[0], v, mode)
    if not _absent(tangents[1], v):
        t = t + np.correlate(a, tangents[1], mode)
    return broadcast_like(t, y)
