"""User adjoint rules: `None` means a zero derivative, the same whether ssad inlines the
rule or calls it, and a rule that is inconsistent about it is refused; a keyword argument
that carries gradients reaches the rule's parameter of the same name."""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


def scale(x, s):
    return x * s


@ssad.adjoint(scale)
def scale_adjoint(dy, y, x, s):
    return (dy * s, None)  # s declared to have no influence, whatever it is


def branchy_scale(x, s):
    return x * s


@ssad.adjoint(branchy_scale)
def branchy_scale_adjoint(dy, y, x, s):
    if np.ndim(x) > 5:  # a branch: ssad calls this rule rather than inlining it
        return (dy * s, None)
    return (dy * s, None)


def sometimes_zero(x, s):
    return x * s


@ssad.adjoint(sometimes_zero)
def sometimes_zero_adjoint(dy, y, x, s):
    if np.ndim(x) > 5:
        return (dy * s, None)
    return (dy * s, dy * x)


X = np.array([0.5, 2.0])


@pytest.mark.parametrize("primitive", [scale, branchy_scale], ids=["inlined", "called"])
def test_none_in_a_rule_is_a_zero_derivative_inlined_or_called(primitive):
    def f(x):
        return np.sum(primitive(x, x))

    # the rule says d/ds = 0, so only the first argument's path counts: d/dx = s = x
    np.testing.assert_allclose(ssad.grad(f)(X), X, rtol=1e-12)


def test_a_rule_returning_none_only_sometimes_is_refused():
    def f(x):
        return np.sum(sometimes_zero(x, x))

    with pytest.raises(ssad.MissingRuleError, match="returns None for its argument 1 in some cases"):
        ssad.grad(f)(X)


def test_x_times_x_is_one_contribution_and_right():
    def f(x):
        return np.sum(np.sin(x) * (x * x))

    source = str(ssad.show(f))
    assert "2 * x" in source and "unbroadcast(d_x_times_x * x, x)" not in source, source
    x = np.array([0.3, -1.2, 2.0])
    expected = np.cos(x) * x * x + 2 * x * np.sin(x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-12)


def standardized(x, loc=0.0, scale=1.0):
    return (x - loc) / scale


@ssad.adjoint(standardized)
def standardized_adjoint(dy, y, x, loc=0.0, scale=1.0):
    return (
        ssad.runtime.unbroadcast(dy / scale, x),
        ssad.runtime.unbroadcast(-dy / scale, loc),
        ssad.runtime.unbroadcast(-dy * (x - loc) / scale**2, scale),
    )


@ssad.tangent(standardized)
def standardized_tangent(tangents, y, x, loc=0.0, scale=1.0):
    return ssad.runtime.broadcast_like(tangents[0] / scale - tangents[1] / scale - tangents[2] * y / scale, y)


def _keyword_loss(x, s):
    return np.sum(standardized(x, scale=s) ** 2 * x)


def test_a_keyword_argument_carrying_gradients_reaches_the_rule_parameter_of_its_name():
    x, s = np.array([0.3, -0.7, 1.2]), 1.3
    d_x, d_s = ssad.grad(_keyword_loss, wrt=(0, 1))(x, s)
    np.testing.assert_allclose(d_x, numerical_gradient(lambda v: _keyword_loss(v, s), x), rtol=1e-7)
    np.testing.assert_allclose(d_s, numerical_gradient(lambda v: _keyword_loss(x, v), s), rtol=1e-7)
    t_x, t_s = np.array([0.5, -1.0, 0.25]), 0.7
    _, tangent = ssad.jvp(_keyword_loss, (x, s), (t_x, t_s))
    np.testing.assert_allclose(tangent, np.dot(d_x, t_x) + d_s * t_s, rtol=1e-10)
    # at second order, the rule's default for `loc` is passed in its place
    hessian = ssad.hessian(_keyword_loss, wrt=1)(x, s)
    np.testing.assert_allclose(hessian, numerical_gradient(lambda v: ssad.grad(_keyword_loss, wrt=1)(x, v), s), rtol=1e-6)
