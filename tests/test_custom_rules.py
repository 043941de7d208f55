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


# ----- a rule whose returns ssad cannot read (a lambda), checked where it runs -----


def _sine_product(a, b):
    return a * np.sin(b)


def _short_product(a, b):
    return a * b


def _none_product(a, b):
    return a * b


def _bare_product(a, b):
    return a * b


ssad.adjoint(_sine_product)(lambda dy, y, a, b: (dy * np.sin(b), dy * a * np.cos(b)))
ssad.tangent(_sine_product)(lambda t, y, a, b: t[0] * np.sin(b) + a * np.cos(b) * t[1])
ssad.adjoint(_short_product)(lambda dy, y, a, b: (dy * b,))
ssad.adjoint(_none_product)(lambda dy, y, a, b: (dy * b, None))
ssad.adjoint(_bare_product)(lambda dy, y, a, b: dy * b)


def _through_sine_product(x):
    return np.sum(_sine_product(x, 2.0 * x))


def test_a_lambda_rule_is_called_and_differentiated_again():
    x, v = np.array([0.3, -0.7]), np.array([1.0, 2.0])
    np.testing.assert_allclose(ssad.grad(_through_sine_product)(x), numerical_gradient(_through_sine_product, x),
                               rtol=1e-7)
    gradient = ssad.grad(_through_sine_product)
    expected = numerical_gradient(lambda u: float(np.dot(gradient(u), v)), x)
    np.testing.assert_allclose(ssad.hessian(_through_sine_product)(x) @ v, expected, rtol=1e-6)
    np.testing.assert_allclose(ssad.grad(lambda u: np.dot(gradient(u), v))(x), expected, rtol=1e-6)


@pytest.mark.parametrize("primitive, message", [
    (_short_product, "returned 1 adjoint, where argument 1 of the call carries gradients: return one adjoint per "
                     "positional argument"),
    (_none_product, "returned None for argument 1 of the call, which carries gradients here; return a zero there"),
    (_bare_product, "returned a float, where it must return a tuple"),
])
def test_a_lambda_rule_returning_the_wrong_adjoints_is_refused_at_the_users_line(primitive, message):
    def f(x):
        return primitive(x, 2.0 * x)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(ssad.MissingRuleError, match=message) as caught:
        ssad.grad(f)(1.5)
    assert (caught.value.filename, caught.value.lineno) == (__file__, line)
