"""Numerical checks of the rules in ssad/rules/signal.py (np.convolve, np.correlate)."""

import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, assert_transpose, case_id

rng = np.random.default_rng(4410)


def rand(*shape):
    """Values in ±[0.5, 1.5]."""
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


# Lengths where the first argument is the longer, the shorter, and as long; odd and even
# excess lengths (the 'same' windows of convolve and correlate differ for odd ones).
LENGTHS = [(6, 3), (3, 6), (4, 5), (2, 7), (5, 5)]

CASES = [
    Case(np.convolve, (rand(6), rand(3)), id="convolve-full"),
    Case(np.convolve, (rand(6), rand(3), "same"), id="convolve-same"),
    Case(np.convolve, (rand(6), rand(3)), {"mode": "valid"}, id="convolve-valid-keyword"),
    Case(np.convolve, (rand(3), rand(6), "same"), id="convolve-same-second-longer"),
    Case(np.convolve, (rand(4), rand(5), "same"), id="convolve-same-odd-excess"),
    Case(np.convolve, (rand(2), rand(7), "valid"), id="convolve-valid-second-longer"),
    Case(np.convolve, (rand(5), rand(5), "valid"), id="convolve-valid-equal"),
    Case(np.convolve, (rand(5), rand(3), 1), id="convolve-mode-integer"),
    Case(np.convolve, (1.5, rand(4), "same"), id="convolve-scalar"),
    Case(np.convolve, (crand(5), crand(3), "same"), id="convolve-complex"),
    Case(np.convolve, (rand(5), crand(3)), id="convolve-real-complex"),
    Case(np.correlate, (rand(6), rand(3)), id="correlate-valid"),
    Case(np.correlate, (rand(6), rand(3), "full"), id="correlate-full"),
    Case(np.correlate, (rand(6), rand(3)), {"mode": "same"}, id="correlate-same-keyword"),
    Case(np.correlate, (rand(3), rand(6), "full"), id="correlate-full-second-longer"),
    Case(np.correlate, (rand(4), rand(5), "same"), id="correlate-same-odd-excess"),
    Case(np.correlate, (rand(2), rand(7), "same"), id="correlate-same-second-much-longer"),
    Case(np.correlate, (rand(2), rand(7), "valid"), id="correlate-valid-second-longer"),
    Case(np.correlate, (crand(5), crand(3), "full"), id="correlate-complex"),
    Case(np.correlate, (crand(3), crand(6), "same"), id="correlate-complex-second-longer"),
    Case(np.correlate, (rand(5), crand(3), "same"), id="correlate-real-complex"),
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


@pytest.mark.parametrize("primitive", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", LENGTHS)
def test_every_mode_and_length(primitive, mode, n, m):
    a, v = rand(n), rand(m)
    check_rule(primitive, a, v, mode)
    check_tangent(primitive, a, v, mode)
    assert_transpose(primitive, a, v, mode)
    check_rule(primitive, crand(n), crand(m), mode)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import signal

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == signal.__name__}
    assert rules == {case.primitive for case in CASES}
    assert all(REGISTRY.tangent_rule(p) is not None for p in rules)


@pytest.mark.parametrize("primitive, args", [
    (np.convolve, (rand(4), rand(6), "valid")),
    (np.correlate, (rand(6), rand(3), "full")),
    (np.correlate, (crand(3), crand(5), "same")),
    (np.convolve, (crand(5), crand(2), "full")),
], ids=["convolve-valid", "correlate-full", "correlate-complex-same", "convolve-complex"])
def test_second_order_of_other_modes(primitive, args):
    check_second_order(primitive, *args)


def test_unknown_mode_is_refused():
    with pytest.raises(ssad.SsadError, match="unknown mode"):
        REGISTRY.adjoint_rule(np.convolve)(np.ones(3), None, np.ones(3), np.ones(1), "bogus")


# ----- End to end: a 1-D convolutional layer -----

SIGNAL = rand(12)
TARGET = rand(10)


def conv_layer_loss(kernel, bias, x):
    """A 1-D convolution layer with a tanh, a correlation read-out and a squared error."""
    hidden = np.tanh(np.convolve(x, kernel, mode="same") + bias)
    scores = np.correlate(hidden, kernel[::-1], "valid")
    return np.mean((scores - TARGET) ** 2) + 0.1 * np.sum(kernel**2)


KERNEL, BIAS = rand(3), 0.3


def test_conv_layer_gradient_against_differences():
    d_kernel, d_bias, d_x = ssad.grad(conv_layer_loss, wrt=(0, 1, 2))(KERNEL, BIAS, SIGNAL)
    assert_close("kernel", d_kernel, numerical_gradient(lambda k: conv_layer_loss(k, BIAS, SIGNAL), KERNEL), 1e-6, 1e-8)
    assert_close("bias", d_bias, numerical_gradient(lambda b: conv_layer_loss(KERNEL, b, SIGNAL), BIAS), 1e-6, 1e-8)
    assert_close("signal", d_x, numerical_gradient(lambda s: conv_layer_loss(KERNEL, BIAS, s), SIGNAL), 1e-6, 1e-8)


def test_conv_layer_jvp_against_differences():
    direction = rand(3)
    value, slope = ssad.jvp(lambda k: conv_layer_loss(k, BIAS, SIGNAL), (KERNEL,), (direction,))
    eps = 1e-6
    expected = (conv_layer_loss(KERNEL + eps * direction, BIAS, SIGNAL)
                - conv_layer_loss(KERNEL - eps * direction, BIAS, SIGNAL)) / (2 * eps)
    assert value == pytest.approx(conv_layer_loss(KERNEL, BIAS, SIGNAL))
    assert slope == pytest.approx(expected, rel=1e-6)


def test_conv_layer_hessian_against_differences():
    hessian = ssad.hessian(conv_layer_loss)(KERNEL, BIAS, SIGNAL)
    gradient = ssad.grad(conv_layer_loss)
    expected = np.array([numerical_gradient(lambda k, i=i: gradient(k, BIAS, SIGNAL)[i], KERNEL) for i in range(3)])
    assert_close("hessian", hessian, expected, 1e-5, 1e-7)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def test_complex_correlation_gradient_against_differences():
    # conjugate-linear in its second argument: the adjoint there is conjugated
    a, v = crand(6), crand(3)

    def power(v):
        return np.sum(np.abs(np.correlate(a, v, "same")) ** 2)

    assert_close("v", ssad.grad(power)(v), numerical_gradient(power, v), 1e-6, 1e-8)


def smoothed(x):
    """Kernels written out as lists, as users write fixed filters."""
    return np.sum(np.sin(np.convolve(x, [0.25, 0.5, 0.25], "same"))) + np.sum(np.correlate(x, [1.0, -1.0]) ** 2)


def test_list_kernels_against_differences():
    x = rand(7)
    assert_close("grad", ssad.grad(smoothed)(x), numerical_gradient(smoothed, x), 1e-6, 1e-8)
    direction = rand(7)
    _, slope = ssad.jvp(smoothed, (x,), (direction,))
    assert slope == pytest.approx(np.sum(numerical_gradient(smoothed, x) * direction), rel=1e-6)
