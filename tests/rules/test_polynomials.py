"""Numerical checks of the rules in ssad/rules/polynomials.py (polynomials, interpolation,
differences and integrals of samples, cross products)."""

import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, assert_transpose, case_id

# NumPy 2 deprecates 2-vectors in np.cross; they still work and are covered here
pytestmark = pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated:DeprecationWarning")

rng = np.random.default_rng(6630)


def rand(*shape):
    """Values in ±[0.5, 1.5]."""
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def increasing(n, low=-2.0, high=2.0):
    """n sorted points, at least 0.1 apart."""
    return np.sort(rng.uniform(low, high, size=n)) + 0.1 * np.arange(n)


XS, YS, WS = increasing(9), rand(9), rng.uniform(0.5, 2.0, size=9)
XP, FP = increasing(5, -1.0, 1.0), rand(5)
XQ = np.array([-1.7, -0.31, 0.07, 0.52, 0.93, 1.9])  # two outside [XP[0], XP[-1]], none at a knot
# phases wrapped into [-pi, pi): unwrap adds multiples of 2 pi where they jump
ANGLES = (np.cumsum(rng.uniform(1.0, 2.5, size=10)) + np.pi) % (2 * np.pi) - np.pi


CASES = [
    # ----- polynomials -----
    Case(np.polyval, (rand(4), rand(3, 2)), id="polyval"),
    Case(np.polyval, (rand(4), 0.7), id="polyval-scalar-x"),
    Case(np.polyval, (rand(1), rand(3)), id="polyval-constant"),
    Case(np.polyval, (crand(3), crand(4)), id="polyval-complex"),
    Case(np.vander, (rand(4),), id="vander"),
    Case(np.vander, (rand(4), 3), id="vander-N"),
    Case(np.vander, (rand(4),), {"N": 5, "increasing": True}, id="vander-increasing"),
    Case(np.vander, (rand(3), 1), id="vander-one-column"),
    Case(np.polyder, (rand(5),), id="polyder"),
    Case(np.polyder, (rand(5), 2), id="polyder-twice"),
    Case(np.polyder, (rand(3), 4), id="polyder-past-the-degree"),
    Case(np.polyint, (rand(4),), id="polyint"),
    Case(np.polyint, (rand(4), 2), id="polyint-twice"),
    Case(np.polyint, (rand(4), 2, rand(2)), id="polyint-constants"),
    Case(np.polyint, (rand(3), 3, 0.7), id="polyint-scalar-constant"),
    Case(np.polymul, (rand(3), rand(4)), id="polymul"),
    Case(np.polymul, (crand(2), crand(3)), id="polymul-complex"),
    Case(np.polyadd, (rand(3), rand(5)), id="polyadd"),
    Case(np.polyadd, (rand(5), rand(2)), id="polyadd-first-longer"),
    Case(np.polysub, (rand(3), rand(5)), id="polysub"),
    Case(np.polysub, (rand(4), rand(4)), id="polysub-equal-lengths"),
    # ----- least squares -----
    Case(np.polyfit, (XS, YS, 2), id="polyfit"),
    Case(np.polyfit, (XS, rand(9, 2), 3), id="polyfit-columns"),
    Case(np.polyfit, (XS, YS, 2, None, False, WS), id="polyfit-weights"),
    Case(np.polyfit, (XS, rand(9, 2), 1, None, False, WS), id="polyfit-weights-columns"),
    Case(np.polyfit, (XS, YS, 5), id="polyfit-degree-5"),
    # ----- interpolation -----
    Case(np.interp, (XQ, XP, FP), id="interp"),
    Case(np.interp, (XQ, XP, FP, -0.4, 2.5), id="interp-left-right"),
    Case(np.interp, (XQ.reshape(2, 3), XP, crand(5)), id="interp-complex-values"),
    Case(np.interp, (0.3, XP, FP), id="interp-scalar"),
    Case(np.interp, (XQ, XP, FP, None, 1.5), id="interp-right-only"),
    # ----- integrals and differences of samples -----
    Case(np.trapezoid, (rand(3, 5), XS[:5]), id="trapezoid"),
    Case(np.trapezoid, (rand(5, 3), XS[:5]), {"axis": 0}, id="trapezoid-axis"),
    Case(np.trapezoid, (rand(3, 4), np.cumsum(rng.uniform(0.2, 1.0, (3, 4)), axis=1)), id="trapezoid-x-like-y"),
    Case(np.trapezoid, (rand(5), None, 1.0), id="trapezoid-unit-spacing"),
    Case(np.trapezoid, (rand(3, 4), None, 0.3), id="trapezoid-dx"),
    Case(np.trapezoid, (rand(3, 4), None, rand(3, 1), 1), id="trapezoid-dx-array"),
    Case(np.diff, (rand(6),), id="diff"),
    Case(np.diff, (rand(3, 5), 2, 0), id="diff-twice-axis"),
    Case(np.diff, (rand(3, 5), 3), id="diff-three-times"),
    Case(np.diff, (rand(3, 5), 0), id="diff-zero-times"),
    Case(np.diff, (rand(3, 5), 1, 1, 0.5, rand(3, 2)), id="diff-prepend-append"),
    Case(np.diff, (rand(3, 5), 2, 0, rand(1, 5)), id="diff-prepend"),
    Case(np.diff, (crand(5),), id="diff-complex"),
    Case(np.gradient, (rand(6),), id="gradient"),
    Case(np.gradient, (rand(6), 0.3), {"edge_order": 2}, id="gradient-spacing-edge2"),
    Case(np.gradient, (rand(4, 5),), id="gradient-2d"),
    Case(np.gradient, (rand(4, 5), 0.5, 2.0), {"edge_order": 2}, id="gradient-spacing-per-axis"),
    Case(np.gradient, (rand(4, 5),), {"axis": 1}, id="gradient-axis"),
    Case(np.gradient, (rand(2, 5),), {"axis": (1,)}, id="gradient-axis-tuple-of-one"),
    Case(np.gradient, (rand(3, 4, 2), 0.7), {"axis": (0, 2)}, id="gradient-two-of-three-axes"),
    Case(np.unwrap, (ANGLES,), id="unwrap"),
    Case(np.unwrap, (np.stack([ANGLES, -ANGLES]),), {"axis": 1, "period": 5.0}, id="unwrap-axis-period"),
    # ----- cross products -----
    Case(np.cross, (rand(3), rand(3)), id="cross"),
    Case(np.cross, (rand(4, 3), rand(3)), id="cross-broadcast"),
    Case(np.cross, (rand(2), rand(2)), id="cross-2d-vectors"),
    Case(np.cross, (rand(4, 2), rand(3)), id="cross-2-and-3"),
    Case(np.cross, (rand(3, 4), rand(4, 3)), {"axisa": 0}, id="cross-axisa"),
    Case(np.cross, (rand(3, 4), rand(3, 4)), {"axis": 0}, id="cross-axis"),
    Case(np.cross, (rand(2, 5), rand(3, 5), 0, 0, 1), id="cross-axes-positional"),
    Case(np.cross, (crand(3), crand(3)), id="cross-complex"),
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
    from ssad.rules import polynomials

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == polynomials.__name__}
    assert rules == {case.primitive for case in CASES}
    assert all(REGISTRY.tangent_rule(p) is not None for p in rules)


# Second order beyond the first case of each primitive (tests/rules/test_second_order.py).
SECOND_ORDER = [
    Case(np.polyfit, (XS, rand(9, 2), 2, None, False, WS), id="polyfit-weights"),
    Case(np.interp, (XQ, XP, FP, -0.4, 2.5), id="interp-left-right"),
    Case(np.trapezoid, (rand(3, 4), None, 0.3), id="trapezoid-dx"),
    Case(np.diff, (rand(3, 5), 2, 0, rand(1, 5), 0.5), id="diff-prepend-append"),
    Case(np.gradient, (rand(4, 5), 0.5, 2.0), {"edge_order": 2}, id="gradient-spacings"),
    Case(np.cross, (rand(2, 5), rand(3, 5), 0, 0, 1), id="cross-axes"),
    Case(np.polyint, (rand(4), 2, rand(2)), id="polyint-constants"),
    Case(np.vander, (rand(4),), {"N": 5, "increasing": True}, id="vander-increasing"),
    Case(np.polyval, (crand(3), crand(4)), id="polyval-complex"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_of_other_variants(case):
    check_second_order(case.primitive, *case.args, **case.kwargs)


# ----- Conventions at knots, outside the table, at repeated knots; refusals -----


def _interp_gradients(x, xp, fp, left=None, right=None):
    y = np.interp(x, xp, fp, left, right)
    return REGISTRY.adjoint_rule(np.interp)(np.ones_like(y), y, x, xp, fp, left, right)


def test_interp_at_a_knot_takes_the_slope_on_its_right():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    d_x, d_xp, d_fp = _interp_gradients(np.array([0.0, 1.0, 3.0]), xp, fp)
    np.testing.assert_array_equal(d_x, [2.0, 0.5, 0.5])  # the last knot: the last segment's slope
    np.testing.assert_array_equal(d_fp, [1.0, 1.0, 1.0])


def test_interp_outside_the_table():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])
    x = np.array([-1.0, 4.0, 5.0])
    d_x, _, d_fp = _interp_gradients(x, xp, fp)
    np.testing.assert_array_equal(d_x, 0.0)
    np.testing.assert_array_equal(d_fp, [1.0, 0.0, 2.0])
    d_x, _, d_fp, d_left, d_right = _interp_gradients(x, xp, fp, -1.0, 7.0)
    np.testing.assert_array_equal(d_fp, 0.0)
    assert (d_left, d_right) == (1.0, 2.0)


def test_interp_repeated_knot_has_a_finite_gradient():
    xp, fp = np.array([0.0, 1.0, 1.0, 2.0]), np.array([0.0, 1.0, 3.0, 4.0])
    adjoints = _interp_gradients(np.array([0.5, 1.0, 1.5]), xp, fp)
    for adjoint in adjoints:
        assert np.all(np.isfinite(adjoint))


def test_interp_matches_jax_convention_in_forward_mode():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0])

    def f(x):
        return np.sum(np.interp(x, xp, fp))

    x = np.array([0.0, 1.0, 3.0, -1.0])
    _, slope = ssad.jvp(f, (x,), (np.array([1.0, 10.0, 100.0, 1000.0]),))
    assert slope == 2.0 + 5.0 + 50.0
    np.testing.assert_array_equal(ssad.grad(f)(x), [2.0, 0.5, 0.5, 0.0])


def test_interp_period_is_refused():
    def f(x):
        return np.sum(np.interp(x, XP, FP, period=2.0))

    with pytest.raises(ssad.SsadError, match="period="):
        ssad.grad(f)(XQ)


def polyfit_full(y):
    return np.sum(np.polyfit(XS, y, 2, full=True)[0])


def polyfit_cov(y):
    return np.sum(np.polyfit(XS, y, 2, cov=True)[0])


@pytest.mark.parametrize("f", [polyfit_full, polyfit_cov])
def test_polyfit_diagnostics_are_refused(f):
    with pytest.raises(ssad.SsadError, match="full=True or cov=True"):
        ssad.grad(f)(YS)


def test_gradient_coordinate_arrays_are_refused():
    def f(v):
        return np.sum(np.gradient(v, XS[:6]) ** 2)

    with pytest.raises(ssad.SsadError, match="coordinate arrays"):
        ssad.grad(f)(rand(6))


def test_unwrap_derivative_is_one_with_the_jumps_held():
    def f(p):
        return np.sum(np.sin(0.1 * np.unwrap(p)) * np.arange(10))

    expected = numerical_gradient(f, ANGLES)  # jumps sit far from the differences' steps
    assert_close("unwrap", ssad.grad(f)(ANGLES), expected, 1e-6, 1e-8)
    assert np.any(np.unwrap(ANGLES) != ANGLES)  # it did unwrap


def test_vander_slope_at_zero():
    def f(x):
        return np.sum(np.vander(x, 4) * np.arange(12.0).reshape(3, 4))

    x = np.array([0.0, 1.0, -2.0])
    assert_close("vander", ssad.grad(f)(x), numerical_gradient(f, x), 1e-6, 1e-8)


# ----- Against autograd (np.diff, np.cross, np.gradient), checked against differences first -----


def _compare_with_autograd(ours, theirs, *args):
    import autograd

    wrt = tuple(range(len(args)))
    expected = autograd.grad(theirs, wrt)(*args)
    for k, arg in enumerate(args):

        def moved(v, k=k):
            return ours(*args[:k], v, *args[k + 1 :])

        assert_close(f"autograd, argument {k}, vs differences", expected[k], numerical_gradient(moved, arg), 1e-6, 1e-8)
    got = ssad.grad(ours, wrt=wrt)(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n, axis", [(1, -1), (2, 0), (3, 1)])
def test_diff_matches_autograd(n, axis):
    import autograd.numpy as anp

    def ours(a):
        return np.sum(np.sin(np.diff(a, n, axis)))

    def theirs(a):
        return anp.sum(anp.sin(anp.diff(a, n, axis)))

    _compare_with_autograd(ours, theirs, rand(4, 5))


@pytest.mark.parametrize("shapes, axes", [
    (((3,), (3,)), (-1, -1, -1, None)), (((4, 3), (4, 3)), (-1, -1, -1, None)),
    (((3, 4), (4, 3)), (0, -1, -1, None)), (((3, 4), (3, 4)), (-1, -1, -1, 0)),
], ids=["vectors", "stacked", "axisa", "axis"])  # autograd's cross does not broadcast: no such case
def test_cross_matches_autograd(shapes, axes):
    import autograd.numpy as anp

    axisa, axisb, axisc, axis = axes

    def ours(a, b):
        return np.sum(np.sin(np.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)))

    def theirs(a, b):
        return anp.sum(anp.sin(anp.cross(a, b, axisa, axisb, axisc, axis)))

    _compare_with_autograd(ours, theirs, rand(*shapes[0]), rand(*shapes[1]))


@pytest.mark.parametrize("axis", [0, 1])
def test_gradient_matches_autograd(axis):
    import autograd.numpy as anp

    def ours(f):
        return np.sum(np.sin(np.gradient(f, axis=axis)))

    def theirs(f):
        return anp.sum(anp.sin(anp.gradient(f, axis=axis)))

    _compare_with_autograd(ours, theirs, rand(5, 6))


# ----- End to end: a polynomial fit -----

X_DATA = increasing(12, -1.0, 1.0)
Y_DATA = np.sin(2.0 * X_DATA) + 0.1 * rand(12)
W_DATA = rng.uniform(0.5, 1.5, size=12)
X_TEST = np.linspace(-0.9, 0.9, 7)
Y_TEST = np.sin(2.0 * X_TEST)


def fit_loss(y, w, x):
    """Fit a cubic to (x, y) with weights w; the error of the fit on test points, and a
    penalty on the coefficients' derivative."""
    coefficients = np.polyfit(x, y, 3, w=w)
    predicted = np.polyval(coefficients, X_TEST)
    slope = np.polyder(coefficients)
    return np.mean((predicted - Y_TEST) ** 2) + 0.01 * np.sum(np.polyval(slope, x) ** 2)


ARGS = (Y_DATA, W_DATA, X_DATA)


@pytest.mark.parametrize("k", [0, 1, 2], ids=["y", "w", "x"])
def test_fit_gradient_against_differences(k):
    got = ssad.grad(fit_loss, wrt=k)(*ARGS)

    def moved(v):
        return fit_loss(*ARGS[:k], v, *ARGS[k + 1 :])

    assert_close("fit", got, numerical_gradient(moved, ARGS[k]), 1e-6, 1e-8)


@pytest.mark.parametrize("k", [0, 1, 2], ids=["y", "w", "x"])
def test_fit_jvp_against_differences(k):
    direction = rand(12)
    value, slope = ssad.jvp(fit_loss, ARGS, tuple(direction if i == k else np.zeros(12) for i in range(3)))
    eps = 1e-6

    def moved(step):
        return fit_loss(*ARGS[:k], ARGS[k] + step * direction, *ARGS[k + 1 :])

    assert value == pytest.approx(fit_loss(*ARGS))
    # central differences of a loss of about 1 carry rounding errors of about 1e-10
    assert slope == pytest.approx((moved(eps) - moved(-eps)) / (2 * eps), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("k", [1, 2], ids=["w", "x"])
def test_fit_hessian_against_differences(k):
    hessian = ssad.hessian(fit_loss, wrt=k)(*ARGS)
    gradient = ssad.grad(fit_loss, wrt=k)
    expected = np.array([
        numerical_gradient(lambda v, i=i: gradient(*ARGS[:k], v, *ARGS[k + 1 :])[i], ARGS[k]) for i in range(12)
    ])
    assert_close("hessian", hessian, expected, 1e-5, 1e-7)


def samples_loss(f, h, x):
    """Differences, derivatives, integrals and interpolation of samples, as users write them."""
    rates = np.gradient(f**2, h, edge_order=2)
    steps = np.diff(f, prepend=0.0)
    area = np.trapezoid(np.sin(f), x=x)
    table = np.interp(X_TEST, x, f)
    return np.sum(rates * steps) + area**2 + np.sum(np.cos(table))


SAMPLES = (rand(8), 0.4, increasing(8, -1.0, 1.0))


def samples_loss_in_f(f):
    return samples_loss(f, SAMPLES[1], SAMPLES[2])


def samples_loss_in_h(h):
    return samples_loss(SAMPLES[0], h, SAMPLES[2])


def samples_loss_in_x(x):
    return samples_loss(SAMPLES[0], SAMPLES[1], x)


@pytest.mark.parametrize("k, loss", [(0, samples_loss_in_f), (1, samples_loss_in_h), (2, samples_loss_in_x)],
                         ids=["f", "h", "x"])
def test_samples_gradient_jvp_hessian_against_differences(k, loss):
    point = SAMPLES[k]
    expected = numerical_gradient(loss, point)
    assert_close("grad", ssad.grad(loss)(point), expected, 1e-6, 1e-8)
    direction = rand(*np.shape(point)) if np.ndim(point) else 0.7
    _, slope = ssad.jvp(loss, (point,), (direction,))
    assert slope == pytest.approx(np.sum(expected * direction), rel=1e-6)
    hessian = ssad.hessian(loss)(point)
    gradient = ssad.grad(loss)
    if np.ndim(point) == 0:
        second = numerical_gradient(gradient, point)
    else:
        second = np.array([numerical_gradient(lambda v, i=i: gradient(v)[i], point) for i in range(np.size(point))])
    assert_close("hessian", hessian, second, 1e-5, 1e-6)


def with_list_constants(p):
    """Tables, kernels and vectors written out as lists, as users write constants."""
    table = np.interp([0.2, 0.7], [0.0, 0.5, 1.0], p)
    product = np.polymul(p, [1.0, -1.0])
    turned = np.cross(p, [0.0, 1.0, 0.0])
    shifted = np.polyadd(p, [1.0, 2.0])
    return np.sum(table**2) + np.sum(product**2) + np.sum(np.sin(turned)) + np.polyval([1.0, 2.0, 3.0], np.sum(shifted))


def test_list_constants_against_differences():
    p = rand(3)
    expected = numerical_gradient(with_list_constants, p)
    assert_close("grad", ssad.grad(with_list_constants)(p), expected, 1e-6, 1e-8)
    direction = rand(3)
    _, slope = ssad.jvp(with_list_constants, (p,), (direction,))
    assert slope == pytest.approx(np.sum(expected * direction), rel=1e-6)
    hessian = ssad.hessian(with_list_constants)(p)
    gradient = ssad.grad(with_list_constants)
    second = np.array([numerical_gradient(lambda v, i=i: gradient(v)[i], p) for i in range(3)])
    assert_close("hessian", hessian, second, 1e-5, 1e-6)


def differences_of_chunks(a):
    return np.sum(np.sin(np.diff(a, axis=1, prepend=0.5))) + np.sum(np.gradient(a, axis=0) ** 2)


def test_diff_and_gradient_keep_a_dask_array_lazy():
    import dask.array as da

    a = rand(4, 6)
    lazy = da.from_array(a, chunks=(2, 3))
    gradient = ssad.grad(differences_of_chunks)(lazy)
    assert isinstance(gradient, da.Array)
    np.testing.assert_allclose(gradient.compute(), ssad.grad(differences_of_chunks)(a), rtol=1e-12)
