"""Numerical checks of the rules in ssad/rules/fft.py: each rule against central
differences (complex inputs in the complex plane), tangents as exact transposes of the
adjoints, second derivatives through the rules, the Hermitian weighting of irfft's
adjoint, and user functions through ssad.grad, ssad.jvp and ssad.hessian against
central differences and autograd."""

import warnings

import numpy as np
import numpy.fft as numpy_fft
import pytest
from numpy import fft as npfft
from numpy.fft import irfft, rfft

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.rules.fft import _in_one_chunk
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, Samples, case_id

samples = Samples(20260314)
rng = samples.rng


def rand(*shape):
    """Real values in ±[0.5, 1.5]."""
    return samples.away_from_zero(0.5, 1.5, shape)


def crand(*shape):
    """Complex values whose real and imaginary parts are in ±[0.5, 1.5]."""
    return rand(*shape) + 1j * rand(*shape)


F = np.fft

CASES = [
    # ----- fft, ifft: n pads or truncates, any axis, every norm -----
    Case(F.fft, (rand(3, 5), 7, 0, "ortho"), id="fft-real-pad-axis0-ortho"),
    Case(F.fft, (rand(6),), id="fft-real"),
    Case(F.fft, (crand(5),), id="fft-complex"),
    Case(F.fft, (crand(3, 5),), {"n": 3, "norm": "forward"}, id="fft-complex-truncate-forward"),
    Case(F.fft, (crand(2, 4),), {"n": 6, "axis": -2, "norm": "backward"}, id="fft-negative-axis-pad"),
    Case(F.ifft, (crand(4, 5),), {"n": 8, "axis": 0, "norm": "forward"}, id="ifft-complex-pad-axis0-forward"),
    Case(F.ifft, (rand(5),), id="ifft-real"),
    Case(F.ifft, (crand(3, 6), 4, -1, "ortho"), id="ifft-truncate-ortho"),
    # ----- fft2, ifft2, fftn, ifftn: s and axes (repeated, omitted), every norm -----
    Case(F.fft2, (rand(2, 3, 4),), {"s": (5, 2), "axes": (-2, -1)}, id="fft2-real-s"),
    Case(F.fft2, (crand(3, 4),), id="fft2-complex"),
    Case(F.fft2, (crand(3, 4, 2),), {"axes": (2, 0), "norm": "ortho"}, id="fft2-axes-reversed"),
    Case(F.ifft2, (crand(3, 4, 2),), {"axes": (0, 2), "s": (2, 5), "norm": "ortho"}, id="ifft2-axes-s"),
    Case(F.ifft2, (rand(4, 3),), {"norm": "forward"}, id="ifft2-real-forward"),
    Case(F.fftn, (rand(2, 3, 4),), {"s": (3, 2), "axes": (2, 0)}, id="fftn-real-s-axes"),
    Case(F.fftn, (crand(2, 3, 4),), id="fftn-complex"),
    Case(F.fftn, (rand(3, 4),), {"axes": (0, 0), "s": (5, 2)}, id="fftn-repeated-axis"),
    Case(F.fftn, (crand(3, 4),), {"axes": [1], "norm": "forward"}, id="fftn-one-axis"),
    Case(F.ifftn, (crand(2, 3, 4),), {"s": (4, 2, 5), "axes": (0, 1, 2), "norm": "ortho"}, id="ifftn-s"),
    Case(F.ifftn, (crand(3, 4),), {"axes": (1, 0, 1), "s": (3, 6, 2)}, id="ifftn-repeated-axes"),
    Case(F.ifftn, (rand(3, 4),), id="ifftn-real"),
    # ----- rfft: even and odd lengths, padding and truncation -----
    Case(F.rfft, (rand(3, 5), 8, 0, "ortho"), id="rfft-pad-axis0-ortho"),
    Case(F.rfft, (rand(6),), id="rfft-even"),
    Case(F.rfft, (rand(7),), id="rfft-odd"),
    Case(F.rfft, (rand(3, 6),), {"n": 4, "norm": "forward"}, id="rfft-truncate-forward"),
    Case(F.rfft, (rand(3, 6),), {"n": 5, "axis": 1}, id="rfft-truncate-odd"),
    Case(F.rfft, (rand(1),), id="rfft-length-1"),
    # ----- irfft: Hermitian doubling for n even and odd, n cropping and padding -----
    Case(F.irfft, (crand(3, 5), 7, 1, "ortho"), id="irfft-odd-n-ortho"),
    Case(F.irfft, (crand(4),), id="irfft-default-even"),
    Case(F.irfft, (crand(5),), {"n": 4}, id="irfft-crop-even"),
    Case(F.irfft, (crand(5),), {"n": 3}, id="irfft-crop-odd"),
    Case(F.irfft, (crand(3),), {"n": 9}, id="irfft-pad-odd"),
    Case(F.irfft, (crand(3),), {"n": 10, "norm": "forward"}, id="irfft-pad-even-forward"),
    Case(F.irfft, (crand(3),), {"n": 1}, id="irfft-n1"),
    Case(F.irfft, (crand(3),), {"n": 2}, id="irfft-n2"),
    Case(F.irfft, (rand(4, 3),), {"axis": 0, "norm": "forward"}, id="irfft-real-input-axis0"),
    Case(F.irfft, (crand(2, 4, 3),), {"n": 6, "axis": 1}, id="irfft-middle-axis"),
    # ----- rfft2, irfft2, rfftn, irfftn -----
    Case(F.rfft2, (rand(3, 5),), {"s": (4, 3), "axes": (1, 0), "norm": "ortho"}, id="rfft2-s-axes"),
    Case(F.rfft2, (rand(3, 4),), id="rfft2"),
    Case(F.rfft2, (rand(2, 3, 5),), {"norm": "forward"}, id="rfft2-odd-last-forward"),
    Case(F.irfft2, (crand(3, 4),), {"s": (4, 5), "norm": "ortho"}, id="irfft2-s-odd"),
    Case(F.irfft2, (crand(3, 4),), id="irfft2"),
    Case(F.irfft2, (crand(2, 3, 4),), {"axes": (0, 2), "s": (3, 4), "norm": "forward"}, id="irfft2-axes-forward"),
    Case(F.rfftn, (rand(2, 3, 5),), {"axes": (2, 0), "s": (3, 4)}, id="rfftn-s-axes"),
    Case(F.rfftn, (rand(2, 3, 5),), id="rfftn"),
    Case(F.rfftn, (rand(4, 3),), {"axes": (1, 1), "s": (5, 3), "norm": "ortho"}, id="rfftn-repeated-axis"),
    Case(F.irfftn, (crand(2, 3, 4),), {"axes": (2, 0), "s": (5, 3), "norm": "ortho"}, id="irfftn-s-axes"),
    Case(F.irfftn, (crand(2, 3, 4),), id="irfftn"),
    Case(F.irfftn, (crand(4, 3),), {"axes": (1, 1), "s": (5, 3)}, id="irfftn-repeated-axis"),
    Case(F.irfftn, (crand(3, 4),), {"axes": (0, 1), "s": (-1, 7), "norm": "forward"}, id="irfftn-minus-one"),
    # ----- hfft, ihfft -----
    Case(F.hfft, (crand(3, 5), 7, 1, "ortho"), id="hfft-odd-ortho"),
    Case(F.hfft, (crand(4),), id="hfft-default"),
    Case(F.hfft, (crand(3, 5),), {"n": 4, "axis": 0, "norm": "forward"}, id="hfft-pad-axis0-forward"),
    Case(F.hfft, (rand(6),), {"n": 6}, id="hfft-real-input-crop"),
    Case(F.ihfft, (rand(3, 5), 7, 0, "ortho"), id="ihfft-pad-ortho"),
    Case(F.ihfft, (rand(6),), id="ihfft"),
    Case(F.ihfft, (rand(7),), {"n": 4, "norm": "forward"}, id="ihfft-truncate-forward"),
    # ----- shifts: odd lengths, where fftshift and ifftshift differ -----
    Case(F.fftshift, (rand(5, 4),), id="fftshift"),
    Case(F.fftshift, (rand(5, 3), (1,)), id="fftshift-axes-positional"),
    Case(F.fftshift, (crand(5, 3),), {"axes": 0}, id="fftshift-complex-int-axis"),
    Case(F.ifftshift, (rand(5, 3),), id="ifftshift"),
    Case(F.ifftshift, (crand(5, 3),), {"axes": 0}, id="ifftshift-complex-axis"),
    Case(F.ifftshift, (rand(3, 5, 2),), {"axes": (0, -2)}, id="ifftshift-axes"),
    # ----- sample frequencies: a gradient for the spacing d -----
    Case(F.fftfreq, (8, 0.3), id="fftfreq"),
    Case(F.fftfreq, (7, 2.5), id="fftfreq-odd"),
    Case(F.rfftfreq, (7, 0.3), id="rfftfreq"),
    Case(F.rfftfreq, (8, 1.5), id="rfftfreq-even"),
    # ----- the identity the adjoints put Dask arrays in one chunk along an axis with -----
    Case(_in_one_chunk, (rand(3, 4), 1), id="_in_one_chunk"),
]

NONDIFFERENTIABLE = []


def _quiet(function, *args, **kwargs):
    # NumPy 2 deprecates `s` without `axes`; no case relies on that, but be explicit
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    _quiet(check_rule, case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    _quiet(check_tangent, case.primitive, *case.args, **case.kwargs)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import fft

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == fft.__name__}
    assert rules == {case.primitive for case in CASES}
    missing = [primitive_name(p) for p in rules if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


# ----- The tangent is the transpose of the adjoint (complex pairing Re(c * t)) -----


def _random_like(value, generator):
    shape = np.shape(value)
    draw = generator.standard_normal(shape)
    if np.iscomplexobj(value):
        draw = draw + 1j * generator.standard_normal(shape)
    return draw if shape else float(draw)


def _pairing(c, t):
    return float(np.real(np.sum(np.asarray(c) * np.asarray(t))))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case, seed):
    generator = np.random.default_rng(seed)
    args = case.args
    y = case.primitive(*args, **case.kwargs)
    dy = _random_like(y, generator)
    floats = [i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray))]
    tangents = tuple(_random_like(a, generator) if i in floats else None for i, a in enumerate(args))
    adjoints = REGISTRY.adjoint_rule(case.primitive)(dy, y, *args, **case.kwargs)
    t_y = REGISTRY.tangent_rule(case.primitive)(tangents, y, *args, **case.kwargs)
    assert np.shape(t_y) == np.shape(y)
    assert np.iscomplexobj(t_y) == np.iscomplexobj(y)
    for i in floats:  # a real input gets a real adjoint
        assert np.iscomplexobj(adjoints[i]) == np.iscomplexobj(args[i])
    backward = sum(_pairing(adjoints[i], tangents[i]) for i in floats)
    np.testing.assert_allclose(backward, _pairing(dy, t_y), rtol=1e-12, atol=1e-12)


# ----- Second order through the rules (beyond the first case of each primitive) -----

SECOND_ORDER = [
    "fft-complex-truncate-forward", "ifft-truncate-ortho", "fft2-axes-reversed", "fftn-repeated-axis",
    "ifftn-s", "rfft-odd", "rfft-truncate-forward", "irfft-crop-odd", "irfft-pad-even-forward", "irfft-n2",
    "irfft-real-input-axis0", "rfft2-odd-last-forward", "irfft2-s-odd", "rfftn-repeated-axis", "irfftn-s-axes",
    "hfft-pad-axis0-forward", "ihfft-truncate-forward", "fftshift-complex-int-axis", "ifftshift-axes",
    "rfftfreq-even",
]


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SECOND_ORDER], ids=case_id)
def test_second_order_of_more_variants(case):
    check_second_order(case.primitive, *case.args, **case.kwargs)


def test_every_listed_second_order_variant_exists():
    assert set(SECOND_ORDER) <= {c.id for c in CASES}


# ----- Exact values and conventions -----


def _irfft_adjoint(dy, c, **kwargs):
    return REGISTRY.adjoint_rule(np.fft.irfft)(dy, np.fft.irfft(c, **kwargs), c, **kwargs)[0]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8])
def test_irfft_adjoint_doubles_the_interior_bins_only(n):
    c = crand(n // 2 + 1)
    dy = rand(n)
    d_c = _irfft_adjoint(dy, c, n=n)
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    np.testing.assert_allclose(d_c, weights * np.fft.ifft(dy)[: n // 2 + 1], rtol=1e-13, atol=1e-15)
    # DC (and Nyquist for even n) are real: their imaginary part changes nothing
    assert d_c[0].imag == 0.0
    if n % 2 == 0:
        assert abs(d_c[-1].imag) < 1e-15


def test_irfft_ignores_the_imaginary_part_at_dc_and_nyquist():
    c = crand(5)
    bumped = c.copy()
    bumped[0] += 0.7j
    bumped[-1] += 0.3j
    np.testing.assert_allclose(np.fft.irfft(bumped), np.fft.irfft(c), atol=1e-15)  # n = 8: bin 4 is Nyquist
    d_c = numerical_gradient(lambda z: np.sum(np.cos(np.fft.irfft(z))), c)
    got = ssad.grad(lambda z: np.sum(np.cos(np.fft.irfft(z))))(c)
    assert_close("irfft", got, d_c, rtol=1e-6, atol=1e-8)
    assert got[0].imag == 0.0 and abs(got[-1].imag) < 1e-12


@pytest.mark.parametrize("primitive, c, kwargs", [
    (np.fft.irfft, crand(4), {"n": 7}),
    (np.fft.hfft, crand(4), {"norm": "ortho"}),
    (np.fft.irfftn, crand(2, 3), {}),
    (np.fft.irfft2, crand(3, 3), {"s": (3, 5)}),
], ids=["irfft", "hfft", "irfftn", "irfft2"])
def test_rules_of_real_results_read_the_real_part_of_dy(primitive, c, kwargs):
    y = primitive(c, **kwargs)
    dy = rand(*np.shape(y))
    rule = REGISTRY.adjoint_rule(primitive)
    (plain,) = rule(dy, y, c, **kwargs)
    (with_imaginary,) = rule(dy + 1j * rand(*np.shape(y)), y, c, **kwargs)
    np.testing.assert_array_equal(plain, with_imaginary)


def test_fft_adjoint_is_an_fft_without_conjugation():
    z, dy = crand(6), crand(6)
    (d_z,) = REGISTRY.adjoint_rule(np.fft.fft)(dy, np.fft.fft(z), z)
    np.testing.assert_allclose(d_z, np.fft.fft(dy), rtol=1e-14)
    (d_z,) = REGISTRY.adjoint_rule(np.fft.ifft)(dy, np.fft.ifft(z), z, None, -1, "ortho")
    np.testing.assert_allclose(d_z, np.fft.ifft(dy, norm="ortho"), rtol=1e-14)


def test_padding_and_cropping_are_undone():
    x = rand(5)
    (d_pad,) = REGISTRY.adjoint_rule(np.fft.fft)(crand(8), None, x, 8)
    (d_crop,) = REGISTRY.adjoint_rule(np.fft.fft)(crand(3), None, x, 3)
    assert d_pad.shape == d_crop.shape == (5,)
    assert np.all(d_crop[3:] == 0.0)  # the cropped inputs do not reach the output


@pytest.mark.parametrize("primitive, inverse", [(np.fft.fftshift, np.fft.ifftshift), (np.fft.ifftshift, np.fft.fftshift)])
def test_shift_adjoint_is_the_inverse_shift(primitive, inverse):
    x, dy = rand(5, 7), rand(5, 7)
    for axes in (None, 0, (1,), (0, 1)):
        (d_x,) = REGISTRY.adjoint_rule(primitive)(dy, primitive(x, axes), x, axes)
        np.testing.assert_array_equal(d_x, inverse(dy, axes))


@pytest.mark.parametrize("primitive, x", [
    (np.fft.fft, rand(6)), (np.fft.rfft, rand(6)), (np.fft.irfft, crand(4)), (np.fft.fft2, crand(3, 4)),
    (np.fft.rfftn, rand(3, 5)), (np.fft.irfftn, crand(3, 4)), (np.fft.hfft, crand(4)), (np.fft.ihfft, rand(5)),
    (np.fft.fftshift, rand(5)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_single_precision_stays_single(primitive, x):
    x = x.astype(np.complex64 if np.iscomplexobj(x) else np.float32)
    y = primitive(x)
    (d_x,) = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x)
    assert d_x.dtype == x.dtype
    t_y = REGISTRY.tangent_rule(primitive)((np.ones_like(x),), y, x)
    assert t_y.dtype == y.dtype


# ----- User functions, end to end -----

WINDOW = np.hanning(12) + 0.1
BAND = rng.uniform(0.5, 1.5, size=9)


def power_spectrum(x):
    """Windowed power spectrum, padded to 16 samples, weighted by band."""
    spectrum = np.fft.rfft(x * WINDOW, n=16)
    return np.sum(BAND * np.abs(spectrum) ** 2)


def convolution_loss(x, kernel):
    """Linear convolution by zero-padded FFTs, then a nonlinear loss."""
    n = x.shape[0] + kernel.shape[0] - 1
    y = irfft(rfft(x, n) * rfft(kernel, n), n)
    return np.sum(np.sin(y)) + 0.5 * np.sum(y**2)


LOWPASS = np.exp(-0.1 * np.add.outer(np.arange(-3, 4) ** 2, np.arange(-2, 3) ** 2))


def spectral_filter(image):
    """A low-pass filter in the centred 2-D spectrum (odd sizes: the shifts differ)."""
    spectrum = np.fft.fftshift(np.fft.fft2(image, norm="ortho"))
    filtered = np.fft.ifft2(np.fft.ifftshift(spectrum * LOWPASS), norm="ortho")
    return np.sum(np.real(filtered) ** 3) + np.sum(np.imag(filtered) ** 2 + np.tanh(np.real(filtered)))


FILTER_RESPONSE = np.exp(-0.3 * np.arange(5))


def odd_length_smoothing(x):
    """irfft back to an odd length (9): every bin but DC is doubled."""
    smooth = numpy_fft.irfft(numpy_fft.rfft(x) * FILTER_RESPONSE, n=x.shape[-1])
    return np.sum((smooth - 0.2) ** 4)


def volume_spectrum(v):
    """fftn with `s` (padding one axis, cropping another) and ifftn back."""
    spectrum = npfft.fftn(v, s=(4, 3), axes=(0, 2), norm="forward")
    back = npfft.ifftn(spectrum * (1.0 + 0.5j), axes=(0, 2))
    return np.sum(np.abs(back) ** 2) + np.sum(np.real(spectrum) * np.imag(spectrum))


def half_spectrum_2d(image):
    """rfft2 and irfft2 to an odd last length."""
    spectrum = np.fft.rfft2(image, norm="ortho")
    return np.sum(np.fft.irfft2(spectrum**2, s=(4, 5), norm="ortho") ** 2)


def hermitian_round_trip(x):
    """ihfft then hfft to an odd length."""
    half = np.fft.ihfft(x)
    return np.sum(np.exp(0.3 * np.fft.hfft(half * (1.0 + 0.5j), n=7)))


def complex_signal_energy(z):
    """A real loss of a complex input."""
    spectrum = np.fft.fft(z, 8)
    return np.sum(BAND[:8] * np.abs(spectrum) ** 2) + np.real(np.sum(np.fft.ifft(z * z)))


def frequency_response(d):
    """A sample spacing with a gradient: the frequencies scale as 1 / d."""
    frequencies = np.fft.fftfreq(8, d)
    half = np.fft.rfftfreq(8, d=d)
    return np.sum(np.cos(frequencies) * BAND[:8]) + np.sum(half**2)


X12, K4, IMAGE, X9, VOLUME = rand(12), rand(4), rand(7, 5), rand(9), rand(3, 2, 5)
IMAGE34, X6, Z6 = rand(3, 4), rand(6), crand(6)

USER_FUNCTIONS = [
    (power_spectrum, (X12,)),
    (convolution_loss, (rand(6), K4)),
    (spectral_filter, (IMAGE,)),
    (odd_length_smoothing, (X9,)),
    (volume_spectrum, (VOLUME,)),
    (half_spectrum_2d, (IMAGE34,)),
    (hermitian_round_trip, (X6,)),
    (complex_signal_energy, (Z6,)),
    (frequency_response, (0.7,)),
]
USER_IDS = [f.__name__ for f, _ in USER_FUNCTIONS]


def _partial(f, args, k):
    def of_one(value):
        moved = list(args)
        moved[k] = value
        return f(*moved)

    return of_one


@pytest.mark.parametrize("f, args", USER_FUNCTIONS, ids=USER_IDS)
def test_user_function_gradient(f, args):
    for k in range(len(args)):
        expected = numerical_gradient(_partial(f, args, k), args[k])
        assert_close(f"{f.__name__} argument {k}", ssad.grad(f, wrt=k)(*args), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, args", USER_FUNCTIONS, ids=USER_IDS)
def test_user_function_jvp(f, args):
    directions = tuple(_random_like(a, np.random.default_rng(3)) for a in args)
    value, slope = ssad.jvp(f, args, directions)
    step = 1e-6
    up = f(*(a + step * d for a, d in zip(args, directions, strict=True)))
    down = f(*(a - step * d for a, d in zip(args, directions, strict=True)))
    assert value == pytest.approx(f(*args), rel=1e-12)
    assert_close(f"{f.__name__} jvp", slope, (up - down) / (2 * step), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, args", [u for u in USER_FUNCTIONS if not np.iscomplexobj(u[1][0])],
                         ids=[i for i, u in zip(USER_IDS, USER_FUNCTIONS, strict=True) if not np.iscomplexobj(u[1][0])])
def test_user_function_hessian(f, args):
    x = args[0]
    hessian = ssad.hessian(f)(*args)
    gradient = ssad.grad(f)
    step = 1e-5
    columns = []  # column i: the derivative of the gradient along input element i
    for i in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[i] = step
        e = np.reshape(e, np.shape(x)) if np.ndim(x) else float(e[0])
        up, down = gradient(x + e, *args[1:]), gradient(x - e, *args[1:])
        columns.append((np.asarray(up) - np.asarray(down)) / (2 * step))
    expected = np.reshape(np.array(columns), np.shape(x) * 2)
    assert_close(f"{f.__name__} hessian", hessian, expected, rtol=1e-5, atol=1e-6)
    square = np.reshape(hessian, (np.size(x), np.size(x)))
    np.testing.assert_allclose(square, square.T, rtol=1e-9, atol=1e-9)


def test_second_order_reverse_over_reverse_and_forward_of_a_convolution():
    ssad.check_grads(convolution_loss, (rand(6), K4), order=2)
    ssad.check_grads(spectral_filter, (IMAGE,), order=2)


def test_complex_input_gradient_follows_the_convention():
    # df/dx - 1j df/dy, as autograd and JAX
    got = ssad.grad(complex_signal_energy)(Z6)
    assert np.iscomplexobj(got)
    assert_close("complex", got, numerical_gradient(complex_signal_energy, Z6), rtol=1e-6, atol=1e-7)


# ----- Against autograd (its answers checked against finite differences first) -----

agnp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")


def _programs(np_):
    """(name, loss of one real array written with the namespace np_, input); autograd has
    every function used here."""
    fft = np_.fft
    return [
        ("fft-pad-ortho", lambda x: np_.sum(np_.abs(fft.fft(x, 9, 0, "ortho")) ** 2 * np_.arange(1.0, 4.0)), rand(5, 3)),
        ("ifft-crop", lambda x: np_.sum(np_.real(fft.ifft(x * (1 + 2j), 4)) ** 3), rand(6)),
        ("fft2-s", lambda x: np_.sum(np_.abs(fft.fft2(x, s=(4, 5), axes=(0, 1))) ** 1.5), rand(3, 4)),
        ("ifft2-forward", lambda x: np_.sum(np_.imag(fft.ifft2(x, norm="forward")) ** 2), rand(3, 4)),
        ("fftn-axes", lambda x: np_.sum(np_.abs(fft.fftn(x, s=(3, 6), axes=(2, 0))) ** 2), rand(2, 3, 4)),
        ("ifftn-ortho", lambda x: np_.sum(np_.real(fft.ifftn(x * x, norm="ortho")) ** 2), rand(2, 3, 4)),
        ("rfft-pad-even", lambda x: np_.sum(np_.abs(fft.rfft(x, 8)) ** 2 * np_.arange(1.0, 6.0)), rand(5)),
        ("rfft-ortho", lambda x: np_.sum(np_.abs(fft.rfft(x, norm="ortho")) ** 3), rand(6)),
        ("irfft-even", lambda x: np_.sum(np_.sin(fft.irfft(x * (1 + 2j)))), rand(4)),
        ("irfft-crop", lambda x: np_.sum(fft.irfft(x * (1 - 1j), 4) ** 2 * np_.arange(1.0, 5.0)), rand(5)),
        ("irfft-pad", lambda x: np_.sum(np_.cos(fft.irfft(x * (2 + 1j), 10))), rand(3)),
        ("irfft-ortho", lambda x: np_.sum(fft.irfft(x * (1 + 2j), norm="ortho") ** 3), rand(4)),
        ("rfft2", lambda x: np_.sum(np_.abs(fft.rfft2(x)) ** 2 * np_.arange(1.0, 4.0)), rand(4, 4)),
        ("irfft2", lambda x: np_.sum(np_.tanh(fft.irfft2(x * (1 - 1j)))), rand(3, 4)),
        ("rfftn-s", lambda x: np_.sum(np_.abs(fft.rfftn(x, s=(4, 6), axes=(0, 2))) ** 2), rand(3, 2, 5)),
        ("irfftn", lambda x: np_.sum(fft.irfftn(x * (1 + 1j)) ** 2 * 0.7), rand(2, 3, 4)),
        ("fftshift", lambda x: np_.sum(fft.fftshift(x) ** 3 * np_.arange(15.0).reshape(5, 3)), rand(5, 3)),
        ("ifftshift-axes", lambda x: np_.sum(np_.sin(fft.ifftshift(x, axes=0)) * np_.arange(15.0).reshape(5, 3)),
         rand(5, 3)),
        ("convolution", lambda x: np_.sum(fft.irfft(fft.rfft(x, 10) * fft.rfft(x[::-1], 10), 10) ** 2), rand(6)),
    ]


NUMPY_PROGRAMS = _programs(np)
AUTOGRAD_PROGRAMS = _programs(agnp)


@pytest.mark.parametrize("k", range(len(NUMPY_PROGRAMS)), ids=[p[0] for p in NUMPY_PROGRAMS])
def test_gradient_matches_autograd(k):
    name, program, x = NUMPY_PROGRAMS[k]
    expected = numerical_gradient(program, x)
    theirs = autograd.grad(AUTOGRAD_PROGRAMS[k][1])(x)
    assert_close(f"autograd {name}", theirs, expected, rtol=1e-5, atol=1e-6)  # autograd is right here
    ours = ssad.grad(program)(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    hvp_direction = _random_like(x, np.random.default_rng(k))
    ours_hvp = ssad.jvp(ssad.grad(program), (x,), (hvp_direction,))[1]
    theirs_hvp = autograd.grad(lambda v: agnp.sum(autograd.grad(AUTOGRAD_PROGRAMS[k][1])(v) * hvp_direction))(x)
    np.testing.assert_allclose(ours_hvp, theirs_hvp, rtol=1e-8, atol=1e-9)


# Where autograd refuses or is wrong (odd real lengths; norm="forward" of the real
# transforms), ssad is checked against finite differences alone.
BEYOND_AUTOGRAD = [
    ("rfft-odd", lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.arange(1.0, 5.0)), rand(7)),
    ("irfft-odd", lambda x: np.sum(np.sin(np.fft.irfft(x * (1 + 2j), 7))), rand(4)),
    ("rfft-forward", lambda x: np.sum(np.abs(np.fft.rfft(x, norm="forward")) ** 3), rand(6)),
    ("irfft-forward", lambda x: np.sum(np.fft.irfft(x * (1 + 2j), norm="forward") ** 3), rand(4)),
    ("rfftn-odd", lambda x: np.sum(np.fft.irfftn(np.fft.rfftn(x) ** 2, s=x.shape, axes=(0, 1)) ** 2), rand(3, 5)),
]


@pytest.mark.parametrize("name, program, x", BEYOND_AUTOGRAD, ids=[p[0] for p in BEYOND_AUTOGRAD])
def test_gradient_where_autograd_has_none(name, program, x):
    assert_close(name, ssad.grad(program)(x), numerical_gradient(program, x), rtol=1e-6, atol=1e-7)
    ssad.check_grads(program, (x,), order=2)


# ----- Dask: an adjoint split along the transformed axis stays lazy -----


@pytest.mark.parametrize("primitive, x, dy_chunks, kwargs", [
    (np.fft.fft, rand(4, 6), (2, 3), {"n": 8}),
    (np.fft.rfft, rand(4, 7), (2, 2), {}),
    (np.fft.irfft, rand(4, 5), (2, 3), {"n": 9}),
    (np.fft.fft2, rand(4, 6), (2, 3), {"s": (3, 7), "axes": (0, 1)}),
    (np.fft.rfftn, rand(4, 6), (2, 2), {"axes": (0, 1)}),
    (np.fft.irfftn, rand(4, 6), (2, 3), {"s": (4, 9), "axes": (0, 1)}),
    (np.fft.hfft, rand(4, 5), (2, 3), {"n": 7}),
    (np.fft.ihfft, rand(4, 6), (2, 2), {}),
    (np.fft.fftshift, rand(5, 3), (2, 2), {}),
], ids=lambda v: getattr(v, "__name__", None))
def test_adjoints_of_dask_arrays_stay_lazy(primitive, x, dy_chunks, kwargs):
    da = pytest.importorskip("dask.array")
    lazy_x = da.from_array(x, chunks=x.shape)  # Dask transforms an axis held in one chunk
    y = primitive(x, **kwargs)
    dy = _random_like(y, np.random.default_rng(5))
    lazy_dy = da.from_array(dy, chunks=dy_chunks)
    (expected,) = REGISTRY.adjoint_rule(primitive)(dy, y, x, **kwargs)
    (got,) = REGISTRY.adjoint_rule(primitive)(lazy_dy, primitive(lazy_x, **kwargs), lazy_x, **kwargs)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(scheduler="sync"), expected, rtol=1e-12, atol=1e-12)


# ----- `s` without `axes` (deprecated in NumPy 2.0): the last len(s) axes, as NumPy reads it -----


@pytest.mark.parametrize("primitive, x, s", [
    (np.fft.fftn, rand(2, 3, 4), (5, 3)),
    (np.fft.rfftn, rand(2, 3, 4), (2, 5)),
    (np.fft.irfftn, crand(2, 3, 4), (4, 7)),
], ids=lambda v: getattr(v, "__name__", None))
def test_s_without_axes_transforms_the_last_axes(primitive, x, s):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check_rule(primitive, x, s)
        check_tangent(primitive, x, s)
