"""Rules: SciPy's convolutions (``scipy.signal.convolve``, ``correlate``, ``fftconvolve``,
``oaconvolve``, ``convolve2d``, ``correlate2d``); registered once SciPy is imported.

Conventions
-----------
- Both inputs carry gradients, N-dimensional (2-D for ``convolve2d``/``correlate2d``),
  in every mode (``'full'``, ``'same'``, ``'valid'``), whichever input is the larger.
  ``method='auto'``, ``'direct'`` and ``'fft'`` compute the same function, so they get
  the same derivative; the adjoint convolves with the method of the call.
  ``fftconvolve``/``oaconvolve`` take ``axes``: the other axes multiply elementwise
  (with broadcasting), and their adjoints are summed back to each input's shape.
- Each mode is a window of the full convolution, centred as SciPy centres it (for
  ``correlate2d``'s ``'same'`` half a sample further on; its ``'valid'`` result with the
  second input the larger is the conjugate of ``correlate``'s, and so is its adjoint).
  The adjoint pads ``dy`` with zeros back to the full shape and convolves it in
  ``'valid'`` mode with the other input flipped, so that the rules are convolutions
  too and differentiate again.
- ``correlate(a, b)`` is the convolution of ``a`` with ``conj(flip(b))``. Complex inputs
  follow docs/conventions.md ("Complex numbers"): convolutions are holomorphic in both
  inputs, correlations conjugate-linear in the second, whose adjoint is conjugated.
- ``convolve2d``/``correlate2d``: only ``boundary='fill'`` with ``fillvalue=0`` (a
  convolution of the inputs alone); other boundaries are refused with an SsadError.
- Bilinear: no kinks. Every adjoint has a tangent rule, its exact transpose, which
  leaves out the term of an input whose tangent is zero.
"""

import numpy as np
import scipy.signal

from ..runtime.locations import located
from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import broadcast_like
from .elementwise import _conj
from .signal import _absent, _adjoint_of

# ----- Helpers -----


def _conv_axes(ndim, axes):
    """The convolved axes, non-negative: all of them for `axes` None."""
    if axes is None:
        return list(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    return [int(ax) % ndim for ax in axes]


def _pads(shape1, shape2, out_shape, axes, later):
    """(zeros before, zeros after) per axis that put a window of shape `out_shape`
    back into the full convolution of inputs of shapes `shape1`, `shape2` over `axes`;
    `later` centres a window of odd excess half a sample further on (correlate2d)."""
    pads = []
    for ax, n in enumerate(out_shape):
        if ax not in axes:
            pads.append((0, 0))
            continue
        extra = shape1[ax] + shape2[ax] - 1 - n
        before = (extra + 1) // 2 if later else extra // 2
        pads.append((before, extra - before))
    return pads


def _valid_swapped(shape1, shape2, mode):
    """Whether SciPy swaps the inputs of a 'valid' correlate2d (the second is the larger)."""
    return mode == "valid" and not all(m >= n for m, n in zip(shape1, shape2, strict=True))


def _check_boundary(boundary, fillvalue):
    if boundary not in ("fill", "pad") or fillvalue != 0:
        raise located(
            f"scipy.signal.convolve2d/correlate2d with boundary={boundary!r}, fillvalue={fillvalue!r}: "
            "ssad differentiates only boundary='fill' with fillvalue=0; pad the input yourself "
            "(np.pad with mode='wrap' or 'symmetric') and convolve with the default boundary"
        )


nondifferentiable(_conv_axes, _pads, _valid_swapped, _check_boundary)  # axes, shapes and checks


def _full(dy, in1, in2, axes, later):
    """dy with zeros around it: the adjoint of the full convolution whose window it is."""
    return np.pad(dy, _pads(np.shape(in1), np.shape(in2), np.shape(dy), _conv_axes(np.ndim(in1), axes), later))


def _flip_axes(x, axes):
    return np.flip(x, tuple(_conv_axes(np.ndim(x), axes)))


# ----- Convolution -----


@adjoint(scipy.signal.convolve)
def convolve_adjoint(dy, y, in1, in2, mode="full", method="auto"):
    d_full = _full(dy, in1, in2, None, False)
    d_in1 = scipy.signal.convolve(d_full, np.flip(in2), "valid", method)
    d_in2 = scipy.signal.convolve(d_full, np.flip(in1), "valid", method)
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.convolve)
def convolve_tangent(tangents, y, in1, in2, mode="full", method="auto"):
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.convolve(tangents[0], in2, mode, method)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.convolve(in1, tangents[1], mode, method)
    return broadcast_like(t, y)


@adjoint(scipy.signal.correlate)
def correlate_adjoint(dy, y, in1, in2, mode="full", method="auto"):
    d_full = _full(dy, in1, in2, None, False)
    d_in1 = scipy.signal.convolve(d_full, _conj(in2), "valid", method)
    d_in2 = _conj(np.flip(scipy.signal.convolve(d_full, np.flip(in1), "valid", method)))
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.correlate)
def correlate_tangent(tangents, y, in1, in2, mode="full", method="auto"):
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.correlate(tangents[0], in2, mode, method)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.correlate(in1, tangents[1], mode, method)
    return broadcast_like(t, y)


# ----- FFT and overlap-add convolution, over some axes -----


@adjoint(scipy.signal.fftconvolve)
def fftconvolve_adjoint(dy, y, in1, in2, mode="full", axes=None):
    d_full = _full(dy, in1, in2, axes, False)
    d_in1 = scipy.signal.fftconvolve(d_full, _flip_axes(in2, axes), "valid", axes)
    d_in2 = scipy.signal.fftconvolve(d_full, _flip_axes(in1, axes), "valid", axes)
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.fftconvolve)
def fftconvolve_tangent(tangents, y, in1, in2, mode="full", axes=None):
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.fftconvolve(tangents[0], in2, mode, axes)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.fftconvolve(in1, tangents[1], mode, axes)
    return broadcast_like(t, y)


@adjoint(scipy.signal.oaconvolve)
def oaconvolve_adjoint(dy, y, in1, in2, mode="full", axes=None):
    d_full = _full(dy, in1, in2, axes, False)
    d_in1 = scipy.signal.oaconvolve(d_full, _flip_axes(in2, axes), "valid", axes)
    d_in2 = scipy.signal.oaconvolve(d_full, _flip_axes(in1, axes), "valid", axes)
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.oaconvolve)
def oaconvolve_tangent(tangents, y, in1, in2, mode="full", axes=None):
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.oaconvolve(tangents[0], in2, mode, axes)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.oaconvolve(in1, tangents[1], mode, axes)
    return broadcast_like(t, y)


# ----- 2-D convolution and correlation -----


@adjoint(scipy.signal.convolve2d)
def convolve2d_adjoint(dy, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    _check_boundary(boundary, fillvalue)
    d_full = _full(dy, in1, in2, None, False)
    d_in1 = scipy.signal.convolve2d(d_full, np.flip(in2), "valid")
    d_in2 = scipy.signal.convolve2d(d_full, np.flip(in1), "valid")
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.convolve2d)
def convolve2d_tangent(tangents, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    _check_boundary(boundary, fillvalue)
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.convolve2d(tangents[0], in2, mode)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.convolve2d(in1, tangents[1], mode)
    return broadcast_like(t, y)


@adjoint(scipy.signal.correlate2d)
def correlate2d_adjoint(dy, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    _check_boundary(boundary, fillvalue)
    if _valid_swapped(np.shape(in1), np.shape(in2), mode):
        dy = _conj(dy)  # SciPy returns the conjugate of the correlation here
    d_full = _full(dy, in1, in2, None, mode == "same")
    d_in1 = scipy.signal.convolve2d(d_full, _conj(in2), "valid")
    d_in2 = _conj(np.flip(scipy.signal.convolve2d(d_full, np.flip(in1), "valid")))
    return (_adjoint_of(d_in1, in1), _adjoint_of(d_in2, in2))


@tangent(scipy.signal.correlate2d)
def correlate2d_tangent(tangents, y, in1, in2, mode="full", boundary="fill", fillvalue=0):
    _check_boundary(boundary, fillvalue)
    t = 0.0
    if not _absent(tangents[0], in1):
        t = t + scipy.signal.correlate2d(tangents[0], in2, mode)
    if not _absent(tangents[1], in2):
        t = t + scipy.signal.correlate2d(in1, tangents[1], mode)
    return broadcast_like(t, y)
