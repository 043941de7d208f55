"""Rules: NumPy's discrete Fourier transforms (np.fft).

Conventions
-----------
- Every transform is linear over the reals, so its tangent is the transform itself
  applied to the tangent, and its adjoint is the transposed map applied to ``dy``.
  Complex values follow the convention of ``elementwise`` (docs/conventions.md,
  "Complex numbers"): an adjoint ``c`` pairs with a tangent ``t`` as ``Re(c * t)``, so
  the adjoint of a complex-linear map ``y = A x`` is ``A^T dy`` (the transpose, never
  the conjugate transpose). The DFT matrix is symmetric: the adjoint of ``fft`` is an
  ``fft`` of ``dy`` with the same ``norm``, that of ``ifft`` an ``ifft``.
- ``n`` and ``s`` pad the input with zeros or truncate it before transforming; the
  adjoint undoes that on the way back: it truncates the transformed ``dy`` to the
  input's length where the input was padded, and pads it with zeros where the input
  was truncated. ``axis``/``axes`` (negative, repeated, or omitted with ``s`` given, as
  NumPy reads them) and ``norm`` in {None, "backward", "ortho", "forward"} are read as
  NumPy reads them; ``out`` is ignored.
- A real input gets a real adjoint, the real part of the transposed map's value
  (``rfft``, ``ihfft``, and the complex transforms of a real array).
- ``irfft`` (and the last axis of ``irfftn``) reads the half spectrum ``c`` of length
  ``n // 2 + 1`` (after cropping or padding) and returns the real signal whose full
  spectrum is ``c`` and its Hermitian mirror. Each interior bin thus appears twice,
  the bin 0 (DC) once, and for even ``n`` the last bin (Nyquist) once; the imaginary
  parts of those one or two bins are ignored. The adjoint is ``ifft(Re(dy))`` cropped
  to ``n // 2 + 1`` bins, with the interior bins doubled and DC and Nyquist not: it is
  real at DC and Nyquist, where the imaginary part has no effect. ``hfft`` is the same
  map with a conjugated input; its adjoint is ``fft(Re(dy))`` weighted the same way.
  The outputs of ``irfft``, ``irfftn`` and ``hfft`` are real, so their rules read only
  the real part of ``dy``.
- ``fftshift`` and ``ifftshift`` are permutations: the adjoint of one is the other,
  along the same ``axes``.
- ``fftfreq(n, d)`` and ``rfftfreq(n, d)`` are ``k / (d * n)`` for integers ``k``: the
  sample spacing ``d`` gets a gradient (the slope is ``-y / d``), the integer ``n``
  none.
- The rules compute only with np.fft functions, slicing, ``np.pad``, ``np.real`` and
  products, each with rules of its own, so ssad differentiates them again (second
  order). Every adjoint rule has a tangent rule, its exact transpose.
- On Dask arrays the rules stay lazy: Dask transforms only along an axis held in one
  chunk, so an adjoint ``dy`` split along a transformed axis is rechunked first.
"""

import numpy as np

from ..registry import adjoint, nondifferentiable, tangent
from ..runtime import unbroadcast
from ..runtime.structure import is_other_array
from .elementwise import _is_complex

# ----- Helpers: which transform runs along which axis -----


def _cooked(shape, s, axes, inverse_real=False):
    """(s, axes) as lists, as NumPy reads them for an n-D transform of an array of
    `shape`; an int `axes` means a 1-D transform with `s` its `n`. Axes are made
    non-negative; an entry -1 or None of `s` is the input's length (for the last axis
    of an inverse real transform, None is 2 * (m - 1))."""
    ndim = len(shape)
    if isinstance(axes, (int, np.integer)):
        axes, s = [axes], (None if s is None else [s])
    given = s is not None
    if axes is None:
        axes = list(range(-len(s), 0)) if given else list(range(ndim))
    axes = [int(a) % ndim for a in axes]
    s = list(s) if given else [shape[a] for a in axes]
    if inverse_real and (not given or s[-1] is None):
        s[-1] = 2 * (shape[axes[-1]] - 1)
    s = [shape[a] if (n is None or n == -1) else int(n) for n, a in zip(s, axes, strict=True)]
    return s, axes


def _lengths_before(shape, s, axes, order, half_first=False):
    """For each step of a transform that transforms along axes[i] to length s[i], taking
    the steps i in `order`: the length of that axis just before the step (the input's
    length, or the previous step's length along a repeated axis). With `half_first`,
    the first step is an rfft, whose result has s[i] // 2 + 1 bins."""
    lengths = list(shape)
    before = [0] * len(axes)
    for k, i in enumerate(order):
        before[i] = lengths[axes[i]]
        lengths[axes[i]] = s[i] // 2 + 1 if half_first and k == 0 else s[i]
    return before


def _complex_steps(shape, s, axes):
    """[(axis, input length)] of the 1-D transforms fftn(x, s, axes) runs (last axis
    first), in the order their transposes run: the reverse order."""
    s, axes = _cooked(shape, s, axes)
    before = _lengths_before(shape, s, axes, range(len(axes) - 1, -1, -1))
    return [(axes[i], before[i]) for i in range(len(axes))]


def _real_forward_steps(shape, s, axes):
    """rfftn(x, s, axes) is an rfft along the last axis, then ffts along the others (last
    first): ((axis, n, input length) of the rfft, [(axis, input length)] of the ffts in
    the order their transposes run)."""
    s, axes = _cooked(shape, s, axes)
    last = len(axes) - 1
    before = _lengths_before(shape, s, axes, [last] + list(range(last - 1, -1, -1)), half_first=True)
    return (axes[last], s[last], before[last]), [(axes[i], before[i]) for i in range(last)]


def _real_inverse_steps(shape, s, axes):
    """irfftn(c, s, axes) is iffts along all but the last axis (first first), then an
    irfft along the last: ((axis, n, input length) of the irfft, [(axis, input length)]
    of the iffts in the order their transposes run)."""
    s, axes = _cooked(shape, s, axes, inverse_real=True)
    last = len(axes) - 1
    before = _lengths_before(shape, s, axes, range(len(axes)))
    return (axes[last], s[last], before[last]), [(axes[i], before[i]) for i in range(last - 1, -1, -1)]


def _leading(ndim, axis, length):
    """The index of the first `length` entries along `axis`."""
    return tuple(slice(0, length) if k == axis else slice(None) for k in range(ndim))


def _trailing_zeros(ndim, axis, count):
    """np.pad widths adding `count` zeros at the end of `axis`."""
    return tuple((0, count) if k == axis else (0, 0) for k in range(ndim))


def _hermitian_weights(n, axis, ndim, like):
    """How often each bin of a half spectrum of a real signal of length `n` appears in
    the full spectrum: 1 for DC and (even `n`) Nyquist, 2 for every other bin, along
    `axis`, in the real precision of `like`."""
    weights = np.full(n // 2 + 1, 2.0, dtype=np.real(np.zeros((), like.dtype)).dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return np.reshape(weights, [n // 2 + 1 if k == axis else 1 for k in range(ndim)])


nondifferentiable(_cooked, _lengths_before, _complex_steps, _real_forward_steps, _real_inverse_steps)
nondifferentiable(_leading, _trailing_zeros, _hermitian_weights)  # indices, widths and constants

# ----- Helpers: transposed transforms -----


def _resize(g, length, axis):
    """`g` cropped or padded with zeros to `length` along `axis`: the transpose of the
    padding or cropping `n` does (each is the other's transpose)."""
    current = np.shape(g)[axis]
    if current > length:
        return g[_leading(np.ndim(g), axis, length)]
    if current < length:
        return np.pad(g, _trailing_zeros(np.ndim(g), axis, length - current))
    return g


def _like(g, x):
    """The adjoint `g` of `x`: its real part for a real `x`."""
    return g if _is_complex(x) else np.real(g)


def _in_one_chunk(g, axis):
    """`g`, with `axis` in one chunk if it is a chunked array of another library (Dask
    transforms only along an axis held in one chunk, and an adjoint `dy` may come split
    along it); a NumPy array as it is."""
    if is_other_array(g) and hasattr(g, "rechunk"):
        return g.rechunk({axis: -1})
    return g


@adjoint(_in_one_chunk)
def _in_one_chunk_adjoint(dy, y, g, axis):
    return (dy,)


@tangent(_in_one_chunk)
def _in_one_chunk_tangent(tangents, y, g, axis):
    return tangents[0]


def _fft_along(g, axis, norm, inverse, n=None):
    """fft (or ifft, when `inverse`) of `g` along `axis`, with `n` as NumPy's."""
    g = _in_one_chunk(g, axis)
    if inverse:
        return np.fft.ifft(g, n, axis, norm)
    return np.fft.fft(g, n, axis, norm)


def _complex_adjoint(dy, x, s, axes, norm, inverse):
    """Adjoint of `x` in fftn(x, s, axes, norm) (ifftn when `inverse`); an int `axes` is
    the `axis` of fft/ifft, `s` then its `n`. Each 1-D step is symmetric: its transpose
    is the same transform, then the input's length restored."""
    g = dy
    for axis, length in _complex_steps(np.shape(x), s, axes):
        g = _resize(_fft_along(g, axis, norm, inverse), length, axis)
    return _like(g, x)


def _real_forward_adjoint(dy, x, s, axes, norm, inverse):
    """Adjoint of the real `x` in rfftn(x, s, axes, norm) (an int `axes`: rfft), or, when
    `inverse`, in ihfft(x, n, axis, norm) = ifft(x, n, axis, norm)[: n // 2 + 1]. The
    half spectrum is padded with zeros back to `n` bins before the transposed step."""
    (axis, n, length), others = _real_forward_steps(np.shape(x), s, axes)
    g = dy
    for other, other_length in others:
        g = _resize(_fft_along(g, other, norm, False), other_length, other)
    return np.real(_resize(_fft_along(g, axis, norm, inverse, n), length, axis))


def _real_inverse_adjoint(dy, c, s, axes, norm, hermitian):
    """Adjoint of `c` in irfftn(c, s, axes, norm) (an int `axes`: irfft), or, when
    `hermitian`, in hfft(c, n, axis, norm) = irfft(conj(c), n, axis, swapped norm). The
    last step's transpose keeps the first n // 2 + 1 bins of ifft(dy) (of fft(dy) for
    hfft), doubled where the full spectrum holds the bin twice."""
    (axis, n, length), others = _real_inverse_steps(np.shape(c), s, axes)
    spectrum = _resize(_fft_along(np.real(dy), axis, norm, not hermitian), n // 2 + 1, axis)
    g = _resize(spectrum * _hermitian_weights(n, axis, np.ndim(spectrum), spectrum), length, axis)
    for other, other_length in others:
        g = _resize(_fft_along(g, other, norm, True), other_length, other)
    return _like(g, c)


# ----- Complex transforms -----


@adjoint(np.fft.fft)
def fft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_complex_adjoint(dy, a, n, axis, norm, inverse=False),)


@tangent(np.fft.fft)
def fft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.fft(tangents[0], n, axis, norm)


@adjoint(np.fft.ifft)
def ifft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_complex_adjoint(dy, a, n, axis, norm, inverse=True),)


@tangent(np.fft.ifft)
def ifft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.ifft(tangents[0], n, axis, norm)


@adjoint(np.fft.fft2)
def fft2_adjoint(dy, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return (_complex_adjoint(dy, a, s, axes, norm, inverse=False),)


@tangent(np.fft.fft2)
def fft2_tangent(tangents, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return np.fft.fft2(tangents[0], s, axes, norm)


@adjoint(np.fft.ifft2)
def ifft2_adjoint(dy, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return (_complex_adjoint(dy, a, s, axes, norm, inverse=True),)


@tangent(np.fft.ifft2)
def ifft2_tangent(tangents, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return np.fft.ifft2(tangents[0], s, axes, norm)


@adjoint(np.fft.fftn)
def fftn_adjoint(dy, y, a, s=None, axes=None, norm=None, out=None):
    return (_complex_adjoint(dy, a, s, axes, norm, inverse=False),)


@tangent(np.fft.fftn)
def fftn_tangent(tangents, y, a, s=None, axes=None, norm=None, out=None):
    return np.fft.fftn(tangents[0], s, axes, norm)


@adjoint(np.fft.ifftn)
def ifftn_adjoint(dy, y, a, s=None, axes=None, norm=None, out=None):
    return (_complex_adjoint(dy, a, s, axes, norm, inverse=True),)


@tangent(np.fft.ifftn)
def ifftn_tangent(tangents, y, a, s=None, axes=None, norm=None, out=None):
    return np.fft.ifftn(tangents[0], s, axes, norm)


# ----- Real transforms -----


@adjoint(np.fft.rfft)
def rfft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_real_forward_adjoint(dy, a, n, axis, norm, inverse=False),)


@tangent(np.fft.rfft)
def rfft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.rfft(tangents[0], n, axis, norm)


@adjoint(np.fft.irfft)
def irfft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_real_inverse_adjoint(dy, a, n, axis, norm, hermitian=False),)


@tangent(np.fft.irfft)
def irfft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.irfft(tangents[0], n, axis, norm)


@adjoint(np.fft.rfft2)
def rfft2_adjoint(dy, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return (_real_forward_adjoint(dy, a, s, axes, norm, inverse=False),)


@tangent(np.fft.rfft2)
def rfft2_tangent(tangents, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return np.fft.rfft2(tangents[0], s, axes, norm)


@adjoint(np.fft.irfft2)
def irfft2_adjoint(dy, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return (_real_inverse_adjoint(dy, a, s, axes, norm, hermitian=False),)


@tangent(np.fft.irfft2)
def irfft2_tangent(tangents, y, a, s=None, axes=(-2, -1), norm=None, out=None):
    return np.fft.irfft2(tangents[0], s, axes, norm)


@adjoint(np.fft.rfftn)
def rfftn_adjoint(dy, y, a, s=None, axes=None, norm=None, out=None):
    return (_real_forward_adjoint(dy, a, s, axes, norm, inverse=False),)


@tangent(np.fft.rfftn)
def rfftn_tangent(tangents, y, a, s=None, axes=None, norm=None, out=None):
    return np.fft.rfftn(tangents[0], s, axes, norm)


@adjoint(np.fft.irfftn)
def irfftn_adjoint(dy, y, a, s=None, axes=None, norm=None, out=None):
    return (_real_inverse_adjoint(dy, a, s, axes, norm, hermitian=False),)


@tangent(np.fft.irfftn)
def irfftn_tangent(tangents, y, a, s=None, axes=None, norm=None, out=None):
    return np.fft.irfftn(tangents[0], s, axes, norm)


# ----- Hermitian transforms -----


@adjoint(np.fft.hfft)
def hfft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_real_inverse_adjoint(dy, a, n, axis, norm, hermitian=True),)


@tangent(np.fft.hfft)
def hfft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.hfft(tangents[0], n, axis, norm)


@adjoint(np.fft.ihfft)
def ihfft_adjoint(dy, y, a, n=None, axis=-1, norm=None, out=None):
    return (_real_forward_adjoint(dy, a, n, axis, norm, inverse=True),)


@tangent(np.fft.ihfft)
def ihfft_tangent(tangents, y, a, n=None, axis=-1, norm=None, out=None):
    return np.fft.ihfft(tangents[0], n, axis, norm)


# ----- Shifts -----


@adjoint(np.fft.fftshift)
def fftshift_adjoint(dy, y, x, axes=None):
    return (_like(np.fft.ifftshift(dy, axes), x),)


@tangent(np.fft.fftshift)
def fftshift_tangent(tangents, y, x, axes=None):
    return np.fft.fftshift(tangents[0], axes)


@adjoint(np.fft.ifftshift)
def ifftshift_adjoint(dy, y, x, axes=None):
    return (_like(np.fft.fftshift(dy, axes), x),)


@tangent(np.fft.ifftshift)
def ifftshift_tangent(tangents, y, x, axes=None):
    return np.fft.ifftshift(tangents[0], axes)


# ----- Sample frequencies -----


@adjoint(np.fft.fftfreq)
@adjoint(np.fft.rfftfreq)
def fftfreq_adjoint(dy, y, n, d=1.0, device=None):
    # y = k / (d * n): dy/dd = -y / d; the length n is an integer
    return (None, unbroadcast(-dy * y / d, d))


@tangent(np.fft.fftfreq)
@tangent(np.fft.rfftfreq)
def fftfreq_tangent(tangents, y, n, d=1.0, device=None):
    return y * (-tangents[1] / d)
