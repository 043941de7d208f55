"""Programs written as users write them, not for ssad, whose derivatives once failed:
each is checked against central differences (or a closed form) at every order it failed."""

import warnings

import numpy as np
import pytest
import scipy.linalg

import ssad
from ssad.testing import numerical_gradient


def sorted_quantiles(x):
    s = np.sort(x)
    c = np.cumsum(s)
    return np.sum(c * np.linspace(0, 1, x.shape[0])) + np.median(x)


def smooth_quantiles(x):
    return np.sum(np.sin(x) * np.cumsum(np.sort(x))) + np.median(np.tanh(x)) ** 2


def test_reverse_over_reverse_through_a_median():
    # the median's adjoint indexes its seed, a NumPy scalar, as seed[..., None]: the adjoint
    # of that index is added into a scalar (once "cannot index an adjoint of type float64")
    t = np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.9])
    x = np.random.default_rng(0).standard_normal(6)
    for f in (sorted_quantiles, smooth_quantiles):
        gradient = ssad.grad(f)

        def directional(x, gradient=gradient):
            return np.sum(gradient(x) * t)

        got = ssad.grad(directional)(x)
        expected = numerical_gradient(lambda x, directional=directional: float(directional(x)), x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        hessian_t = ssad.jvp(gradient, (x,), (t,))[1]
        np.testing.assert_allclose(hessian_t, got, rtol=1e-8, atol=1e-10)
        if f is sorted_quantiles:  # piecewise linear
            np.testing.assert_allclose(got, np.zeros(6), atol=1e-12)


def expanded(x):
    return np.sum(np.sin(x)[..., None] * np.array([1.0, 2.0]))


def indexed_scalar(x):
    return np.sum(x[None] * 3.0) + x[()] ** 2


@pytest.mark.parametrize("f", [expanded, indexed_scalar])
@pytest.mark.parametrize("kind", ["0-d array", "NumPy scalar"])
def test_a_number_is_the_tangent_of_a_numpy_scalar(f, kind):
    # `jvp(f, (np.float64(2.0),), (1.0,))`: the tangent, a Python float, is indexed as its
    # primal is (once "'float' object is not subscriptable" from the generated code)
    x = np.array(0.7) if kind == "0-d array" else np.float64(0.7)
    value, tangent = ssad.jvp(f, (x,), (1.0,))
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx((f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6)
    _, tangent = ssad.jvp(f, (x,), (0.5,))
    assert tangent == pytest.approx(0.5 * (f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6)


def test_a_number_is_the_tangent_of_every_entry_of_an_array():
    def f(x):
        return np.sum(x[:, None] * x[None, :])

    x = np.array([0.5, -1.0, 2.0])
    _, tangent = ssad.jvp(f, (x,), (1.0,))
    assert tangent == pytest.approx(np.sum(ssad.grad(f)(x)))
    _, tangents = ssad.jvp(lambda xs: f(xs[0]) * xs[1], ([x, 2.0],), ([1.0, 0.0],))
    assert tangents == pytest.approx(2.0 * np.sum(ssad.grad(f)(x)))


def gp_negative_log_likelihood(log_scale, X, y):
    scale = np.exp(log_scale)
    d = X[:, None, :] - X[None, :, :]
    K = np.exp(-0.5 * np.sum(d**2, axis=-1) / scale**2) + 1e-2 * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = scipy.linalg.solve_triangular(L, y, lower=True)
    return 0.5 * alpha @ alpha + np.sum(np.log(np.diag(L)))


def test_forward_mode_through_a_triangular_solve_with_a_constant_right_side():
    # the tangent rule's `0.0 if d_b is None else d_b`, given no tangent for b, once printed
    # `0.0 if 0.0 is None else 0.0`, which Python warns about when it compiles the code
    rng = np.random.default_rng(0)
    args = (0.3, rng.standard_normal((6, 2)), rng.standard_normal(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        _, tangent = ssad.jvp(gp_negative_log_likelihood, args, (1.0, None, None))
        _, curvature = ssad.jvp(ssad.grad(gp_negative_log_likelihood), args, (1.0, None, None))
    f = gp_negative_log_likelihood
    step = 1e-5
    assert tangent == pytest.approx((f(0.3 + step, *args[1:]) - f(0.3 - step, *args[1:])) / (2 * step), rel=1e-6)
    gradient = ssad.grad(f)
    expected = (gradient(0.3 + step, *args[1:]) - gradient(0.3 - step, *args[1:])) / (2 * step)
    assert curvature == pytest.approx(expected, rel=1e-5)
    assert "0.0 is None" not in str(ssad.show(f, mode="forward"))


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


def affine_model(W, x):
    layer = Affine(W, 0.5)
    return np.sum(np.tanh(layer(x)) ** 2)


def test_a_class_built_from_active_values_is_refused_alike_in_both_modes():
    W, x = np.ones((3, 2)), np.ones((4, 3))
    with pytest.raises(ssad.MissingRuleError, match="constructing an Affine from values that carry gradients"):
        ssad.grad(affine_model)(W, x)
    with pytest.raises(ssad.MissingRuleError, match="constructing an Affine from values that carry tangents"):
        ssad.jvp(affine_model, (W, x), (W, None))


def logistic_loss(p, X, y):
    z = X @ p["w"] + p["b"]
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.1 * np.sum(p["w"] ** 2)


def two_layers(ws, X):
    return np.sum(np.tanh(X @ ws[0]) * ws[1])


def _data():
    rng = np.random.default_rng(0)
    p = {"w": rng.standard_normal(3), "b": 0.1}
    ws = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    return p, ws, rng.standard_normal((8, 3)), np.sign(rng.standard_normal(8))


def test_check_grads_takes_a_dict_or_a_list_of_parameters_at_both_orders():
    # once "'float' object is not subscriptable": directions are drawn over the flat vector
    p, ws, X, y = _data()
    for order in (1, 2):
        ssad.check_grads(logistic_loss, (p, X, y), wrt=0, order=order)
        ssad.check_grads(two_layers, (ws, X), wrt=0, order=order)


def off_by_a_percent(x):
    return np.sin(x)


@ssad.adjoint(off_by_a_percent)
def _off_by_a_percent_adjoint(dy, y, x):
    return (dy * np.cos(x) * 1.01,)


def wrong_inside_a_list(ws, X):
    return np.sum(off_by_a_percent(X @ ws[0]) * ws[1])


def test_check_grads_still_finds_a_wrong_rule_through_a_list():
    _, ws, X, _ = _data()
    with pytest.raises(AssertionError, match="reverse mode"):
        ssad.check_grads(wrong_inside_a_list, (ws, X), wrt=0, modes=("reverse",))


def test_a_matrix_of_a_dict_parameter_is_refused_with_the_flat_way_round():
    p, _, X, y = _data()
    for matrix in (ssad.hessian, ssad.jacobian):
        with pytest.raises(ssad.SsadError, match=r"`p` is a dict: flatten it"):
            matrix(logistic_loss)(p, X, y)
    vector, unflatten = ssad.flatten(p)

    def flat_loss(v):
        return logistic_loss(unflatten(v), X, y)

    H = ssad.hessian(flat_loss)(vector)
    product = ssad.hvp(logistic_loss)(p, X, y, {"w": np.array([1.0, 0.0, 0.0]), "b": 0.0})
    np.testing.assert_allclose(ssad.flatten(product)[0], H[:, 0], rtol=1e-10)
    expected = numerical_gradient(lambda v: float(ssad.grad(flat_loss)(v)[0]), vector)
    np.testing.assert_allclose(H[0], expected, rtol=1e-5, atol=1e-7)
