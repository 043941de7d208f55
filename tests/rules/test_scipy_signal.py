"""Numerical checks of the rules in ssad/rules/scipy_signal.py (SciPy's convolutions)."""

import numpy as np
import pytest
import scipy.signal
from scipy import signal  # the alias users write

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, assert_transpose, case_id

rng = np.random.default_rng(5520)


def rand(*shape):
    """Values in ±[0.5, 1.5]."""
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


M54, K23 = rand(5, 4), rand(2, 3)

CASES = [
    Case(scipy.signal.convolve, (M54, K23), id="convolve-2d-full"),
    Case(scipy.signal.convolve, (rand(7), rand(3), "same"), id="convolve-1d-same"),
    Case(scipy.signal.convolve, (rand(3), rand(6), "same"), id="convolve-same-second-larger"),
    Case(scipy.signal.convolve, (M54, K23, "valid"), id="convolve-2d-valid"),
    Case(scipy.signal.convolve, (K23, M54, "valid"), id="convolve-valid-second-larger"),
    Case(scipy.signal.convolve, (rand(4, 3, 5), rand(2, 2, 3), "same"), id="convolve-3d-same"),
    Case(scipy.signal.convolve, (M54, K23), {"mode": "same", "method": "direct"}, id="convolve-direct"),
    Case(scipy.signal.convolve, (M54, K23, "same", "fft"), id="convolve-fft"),
    Case(scipy.signal.convolve, (crand(5, 4), crand(2, 3), "same"), id="convolve-complex"),
    Case(scipy.signal.convolve, (M54, crand(2, 3), "valid"), id="convolve-real-complex"),
    Case(scipy.signal.correlate, (M54, K23), id="correlate-2d-full"),
    Case(scipy.signal.correlate, (rand(7), rand(4), "same", "direct"), id="correlate-1d-same-direct"),
    Case(scipy.signal.correlate, (K23, M54, "same", "fft"), id="correlate-same-second-larger-fft"),
    Case(scipy.signal.correlate, (M54, K23), {"mode": "valid"}, id="correlate-valid"),
    Case(scipy.signal.correlate, (crand(5, 4), crand(2, 3), "same"), id="correlate-complex"),
    Case(scipy.signal.fftconvolve, (M54, K23), id="fftconvolve-full"),
    Case(scipy.signal.fftconvolve, (rand(6), rand(3), "same"), id="fftconvolve-same"),
    Case(scipy.signal.fftconvolve, (K23, M54, "valid"), id="fftconvolve-valid-second-larger"),
    Case(scipy.signal.fftconvolve, (rand(3, 6), rand(3, 2), "same", 1), id="fftconvolve-axis"),
    Case(scipy.signal.fftconvolve, (rand(3, 6), rand(1, 2)), {"mode": "valid", "axes": [1]},
         id="fftconvolve-axes-broadcast"),
    Case(scipy.signal.fftconvolve, (crand(4, 3), crand(2, 2), "full"), id="fftconvolve-complex"),
    Case(scipy.signal.oaconvolve, (rand(9), rand(3), "same"), id="oaconvolve-same"),
    Case(scipy.signal.oaconvolve, (M54, K23), id="oaconvolve-full"),
    Case(scipy.signal.oaconvolve, (rand(3, 8), rand(3, 2), "valid", -1), id="oaconvolve-axis"),
    Case(scipy.signal.convolve2d, (M54, K23), id="convolve2d-full"),
    Case(scipy.signal.convolve2d, (M54, K23, "same"), id="convolve2d-same"),
    Case(scipy.signal.convolve2d, (K23, M54, "same"), id="convolve2d-same-second-larger"),
    Case(scipy.signal.convolve2d, (M54, K23), {"mode": "valid", "boundary": "fill", "fillvalue": 0},
         id="convolve2d-valid"),
    Case(scipy.signal.convolve2d, (crand(4, 4), crand(3, 2), "same"), id="convolve2d-complex"),
    Case(scipy.signal.correlate2d, (M54, K23), id="correlate2d-full"),
    Case(scipy.signal.correlate2d, (M54, K23, "same"), id="correlate2d-same"),
    Case(scipy.signal.correlate2d, (K23, M54, "same"), id="correlate2d-same-second-larger"),
    Case(scipy.signal.correlate2d, (M54, K23, "valid"), id="correlate2d-valid"),
    Case(scipy.signal.correlate2d, (K23, M54, "valid"), id="correlate2d-valid-second-larger"),
    Case(scipy.signal.correlate2d, (crand(2, 3), crand(4, 5), "valid"), id="correlate2d-complex-valid-swapped"),
    Case(scipy.signal.correlate2d, (crand(4, 5), crand(2, 3), "same"), id="correlate2d-complex-same"),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", [c for c in CASES if not any(np.iscomplexobj(a) for a in c.args)], ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case):
    assert_transpose(case.primitive, *case.args, **case.kwargs)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import scipy_signal

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == scipy_signal.__name__}
    assert rules == {case.primitive for case in CASES}
    assert all(REGISTRY.tangent_rule(p) is not None for p in rules)


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_methods_give_the_same_derivative(method, mode):
    a, k = rand(6, 5), rand(3, 2)
    y = scipy.signal.convolve(a, k, mode, method)
    dy = rand(*np.shape(y))
    expected = REGISTRY.adjoint_rule(scipy.signal.convolve)(dy, y, a, k, mode, "direct")
    got = REGISTRY.adjoint_rule(scipy.signal.convolve)(dy, y, a, k, mode, method)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    check_rule(scipy.signal.correlate, a, k, mode, method)


@pytest.mark.parametrize("primitive, args, kwargs", [
    (scipy.signal.convolve, (rand(3, 4), rand(2, 2), "valid", "fft"), {}),
    (scipy.signal.correlate, (crand(3, 4), crand(2, 2), "same"), {}),
    (scipy.signal.fftconvolve, (rand(3, 6), rand(3, 2), "same"), {"axes": 1}),
    (scipy.signal.correlate2d, (rand(2, 3), rand(4, 4), "valid"), {}),
    (scipy.signal.convolve2d, (rand(4, 4), rand(2, 3)), {"mode": "same"}),
], ids=["convolve-valid-fft", "correlate-complex", "fftconvolve-axes", "correlate2d-swapped", "convolve2d-same"])
def test_second_order_of_other_variants(primitive, args, kwargs):
    check_second_order(primitive, *args, **kwargs)


@pytest.mark.parametrize("primitive", [scipy.signal.convolve2d, scipy.signal.correlate2d])
def test_other_boundaries_are_refused(primitive):
    def loss(a):
        return np.sum(primitive(a, K23, "same", "wrap"))

    with pytest.raises(ssad.SsadError, match="boundary='wrap'"):
        ssad.grad(loss)(M54)


# ----- Against autograd (its scipy.signal.convolve, checked against differences first) -----


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((6,), (3,)), ((3,), (6,)), ((5, 4), (2, 3)), ((2, 3), (5, 4))], ids=str)
def test_convolve_matches_autograd(mode, shapes):
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.signal import convolve as autograd_convolve

    a, k = rand(*shapes[0]), rand(*shapes[1])

    def theirs(a, k):
        return anp.sum(anp.sin(autograd_convolve(a, k, mode=mode)))

    def ours(a, k):
        return np.sum(np.sin(scipy.signal.convolve(a, k, mode)))

    expected = autograd.grad(theirs, (0, 1))(a, k)
    assert_close("autograd vs differences", expected[0], numerical_gradient(lambda v: ours(v, k), a), 1e-6, 1e-8)
    assert_close("autograd vs differences", expected[1], numerical_gradient(lambda v: ours(a, v), k), 1e-6, 1e-8)
    got = ssad.grad(ours, wrt=(0, 1))(a, k)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


# ----- End to end: a small 2-D convolutional layer -----

IMAGE = rand(6, 5)
TARGET = rand(6, 5)


def conv2d_layer_loss(kernel, image):
    """Convolve, tanh, correlate with the kernel, compare: the way users write it."""
    hidden = np.tanh(signal.convolve(image, kernel, mode="same"))
    out = signal.correlate2d(hidden, kernel, "same") + signal.fftconvolve(image, kernel[:1], mode="same")
    return np.mean((out - TARGET) ** 2)


KERNEL = rand(3, 2)


def test_conv2d_layer_gradient_against_differences():
    d_kernel, d_image = ssad.grad(conv2d_layer_loss, wrt=(0, 1))(KERNEL, IMAGE)
    assert_close("kernel", d_kernel, numerical_gradient(lambda k: conv2d_layer_loss(k, IMAGE), KERNEL), 1e-6, 1e-8)
    assert_close("image", d_image, numerical_gradient(lambda x: conv2d_layer_loss(KERNEL, x), IMAGE), 1e-6, 1e-8)


def test_conv2d_layer_jvp_against_differences():
    direction = rand(3, 2)
    _, slope = ssad.jvp(lambda k: conv2d_layer_loss(k, IMAGE), (KERNEL,), (direction,))
    eps = 1e-6
    up = conv2d_layer_loss(KERNEL + eps * direction, IMAGE)
    down = conv2d_layer_loss(KERNEL - eps * direction, IMAGE)
    expected = (up - down) / (2 * eps)
    assert slope == pytest.approx(expected, rel=1e-6)


def test_conv2d_layer_hessian_against_differences():
    hessian = ssad.hessian(conv2d_layer_loss)(KERNEL, IMAGE)
    gradient = ssad.grad(conv2d_layer_loss)
    expected = np.array([
        numerical_gradient(lambda k, i=i: gradient(k, IMAGE)[i], KERNEL) for i in np.ndindex(KERNEL.shape)
    ]).reshape(hessian.shape)
    assert_close("hessian", hessian, expected, 1e-5, 1e-7)
