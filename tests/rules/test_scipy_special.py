"""Numerical checks of the rules in ssad/rules/scipy_special.py."""

import numpy as np
import pytest
import scipy.special
import scipy.special as sp
from scipy.special import expit, gammaln, logsumexp

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.testing import check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, Samples, assert_transpose, case_id

S = Samples(20261126)

# Inputs in each function's domain, away from its kinks and singularities.
REAL = S.away_from_zero(0.3, 1.5, (2, 3))  # any sign
POSITIVE = S.uniform(0.4, 3.0, (2, 3))
UNIT = S.uniform(0.1, 0.9, (2, 3))  # inside (0, 1)
SYMMETRIC_UNIT = S.uniform(-0.8, 0.8, (2, 3))  # inside (-1, 1)
ROW = S.uniform(0.5, 2.5, (3,))  # broadcasts against the (2, 3) arrays
T = S.away_from_zero(0.2, 2.0, (2, 3, 4))
B = S.uniform(0.3, 2.0, (2, 3, 4))
B_SIGNED = S.away_from_zero(0.3, 2.0, (2, 3, 4))
BESSEL_X = S.uniform(0.5, 4.0, (2, 3))  # positive: y0, y1, yn, yv, kv are defined for x > 0

CASES = [
    # logistic functions
    Case(sp.expit, (REAL,), id="expit"),
    Case(sp.expit, (0.7,), id="expit-float"),
    Case(sp.logit, (UNIT,), id="logit"),
    Case(sp.log_expit, (REAL * 3,), id="log_expit"),
    # logsumexp: axis, keepdims, b= (positional and keyword), return_sign
    Case(sp.logsumexp, (T,), {"axis": 1}, id="logsumexp-axis"),
    Case(sp.logsumexp, (T,), {}, id="logsumexp-all"),
    Case(sp.logsumexp, (T,), {"axis": -1, "keepdims": True}, id="logsumexp-keepdims"),
    Case(sp.logsumexp, (T,), {"axis": (0, 2)}, id="logsumexp-axis-tuple"),
    Case(sp.logsumexp, (T,), {"keepdims": True}, id="logsumexp-all-keepdims"),
    Case(sp.logsumexp, (T, 1, B), {}, id="logsumexp-b-positional"),
    Case(sp.logsumexp, (T, -1, B[0, 0]), {"keepdims": True}, id="logsumexp-b-broadcast"),
    Case(sp.logsumexp, (T, None, B), {}, id="logsumexp-b-all"),
    Case(sp.logsumexp, (T, 2, B_SIGNED, False, True), {}, id="logsumexp-b-signed-return_sign"),
    Case(sp.logsumexp, (T,), {"axis": 0, "keepdims": True, "return_sign": True}, id="logsumexp-return_sign"),
    Case(sp.logsumexp, (T[0, 0],), {}, id="logsumexp-vector"),
    # softmax, log_softmax
    Case(sp.softmax, (T,), {"axis": 1}, id="softmax-axis"),
    Case(sp.softmax, (T,), {}, id="softmax-all"),
    Case(sp.softmax, (T, (0, 2)), {}, id="softmax-axis-tuple-positional"),
    Case(sp.log_softmax, (T,), {"axis": -1}, id="log_softmax-axis"),
    Case(sp.log_softmax, (T,), {}, id="log_softmax-all"),
    Case(sp.log_softmax, (T, 0), {}, id="log_softmax-positional"),
    # gamma and beta functions
    Case(sp.gammaln, (POSITIVE,), id="gammaln"),
    Case(sp.gammaln, (np.array([-2.5, -0.3, 0.2, 7.5]),), id="gammaln-negative"),
    Case(sp.gammaln, (2.3,), id="gammaln-float"),
    Case(sp.gamma, (POSITIVE,), id="gamma"),
    Case(sp.gamma, (np.array([-1.5, -0.5, 0.5, 4.2]),), id="gamma-negative"),
    Case(sp.rgamma, (POSITIVE,), id="rgamma"),
    Case(sp.digamma, (POSITIVE,), id="digamma"),
    Case(sp.psi, (np.array([-1.5, -0.5, 0.5, 4.2]),), id="psi-negative"),
    Case(sp.polygamma, (1, POSITIVE), id="polygamma"),
    Case(sp.polygamma, (0, POSITIVE), id="polygamma-0"),
    Case(sp.polygamma, (3, 1.7), id="polygamma-3-float"),
    Case(sp.polygamma, (np.array([0, 1, 2]), POSITIVE), id="polygamma-array-n"),
    Case(sp.zeta, (2, POSITIVE), id="zeta"),
    Case(sp.zeta, (3, np.array([-1.5, -0.5, 0.5, 4.2])), id="zeta-negative-q"),
    Case(sp.zeta, (4, 1.7), id="zeta-float"),
    Case(sp.multigammaln, (POSITIVE + 1.5, 3), id="multigammaln"),
    Case(sp.multigammaln, (4.2, 5), id="multigammaln-float"),
    Case(sp.betaln, (POSITIVE, ROW), id="betaln"),
    Case(sp.beta, (POSITIVE, ROW), id="beta"),
    Case(sp.gammainc, (2, POSITIVE), id="gammainc"),
    Case(sp.gammainc, (1, POSITIVE), id="gammainc-a1"),
    Case(sp.gammaincc, (3, POSITIVE), id="gammaincc"),
    # error functions and the normal distribution
    Case(sp.erf, (REAL,), id="erf"),
    Case(sp.erfc, (REAL,), id="erfc"),
    Case(sp.erfinv, (SYMMETRIC_UNIT,), id="erfinv"),
    Case(sp.erfcinv, (SYMMETRIC_UNIT + 1,), id="erfcinv"),
    Case(sp.erfcx, (REAL,), id="erfcx"),
    Case(sp.ndtr, (REAL * 2,), id="ndtr"),
    Case(sp.log_ndtr, (REAL * 4,), id="log_ndtr"),
    Case(sp.log_ndtr, (np.array([-40.0, -12.0, 3.0]),), id="log_ndtr-far-tail"),
    Case(sp.ndtri, (UNIT,), id="ndtri"),
    # logarithms of products, entropies
    Case(sp.xlogy, (REAL, POSITIVE), id="xlogy"),
    Case(sp.xlogy, (ROW, POSITIVE), id="xlogy-broadcast"),
    Case(sp.xlog1py, (REAL, UNIT - 0.5), id="xlog1py"),
    Case(sp.entr, (POSITIVE,), id="entr"),
    Case(sp.rel_entr, (POSITIVE, ROW), id="rel_entr"),
    Case(sp.kl_div, (POSITIVE, ROW), id="kl_div"),
    # Bessel functions
    Case(sp.j0, (REAL * 3,), id="j0"),
    Case(sp.j1, (REAL * 3,), id="j1"),
    Case(sp.jv, (2, REAL * 3), id="jv"),
    Case(sp.jn, (0, REAL * 3), id="jn-0"),
    Case(sp.jv, (np.array([0, 1, 3]), REAL * 3), id="jv-array-order"),
    Case(sp.y0, (BESSEL_X,), id="y0"),
    Case(sp.y1, (BESSEL_X,), id="y1"),
    Case(sp.yn, (2, BESSEL_X), id="yn"),
    Case(sp.yn, (0, BESSEL_X), id="yn-0"),
    Case(sp.yv, (3, BESSEL_X), id="yv"),
    Case(sp.i0, (REAL * 2,), id="i0"),
    Case(sp.i1, (REAL * 2,), id="i1"),
    Case(sp.iv, (2, REAL * 2), id="iv"),
    Case(sp.iv, (0, REAL * 2), id="iv-0"),
    Case(sp.i0e, (REAL * 2,), id="i0e"),
    Case(sp.i1e, (REAL * 2,), id="i1e"),
    Case(sp.ive, (3, REAL * 2), id="ive"),
    Case(sp.k0, (BESSEL_X,), id="k0"),
    Case(sp.k1, (BESSEL_X,), id="k1"),
    Case(sp.kv, (2, BESSEL_X), id="kv"),
    Case(sp.k0e, (BESSEL_X,), id="k0e"),
    Case(sp.k1e, (BESSEL_X,), id="k1e"),
    Case(sp.kve, (1, BESSEL_X), id="kve"),
]

NONDIFFERENTIABLE = [sp.gammasgn]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    with np.errstate(all="ignore"):
        check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case):
    assert_transpose(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("primitive", NONDIFFERENTIABLE, ids=lambda p: p.__name__)
def test_nondifferentiable(primitive):
    assert REGISTRY.is_nondifferentiable(primitive)
    assert REGISTRY.adjoint_rule(primitive) is None


def signed_gamma(x):
    return np.sum(sp.gammasgn(x) * sp.gammaln(x))


def test_gammasgn_carries_no_gradient():
    x = np.array([-1.5, -0.5, 0.5, 3.0])
    np.testing.assert_allclose(ssad.grad(signed_gamma)(x), np.sign(sp.gamma(x)) * sp.digamma(x), rtol=1e-14)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import scipy_special

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == scipy_special.__name__}
    assert rules == {case.primitive for case in CASES}
    missing = [primitive_name(p) for p in rules if REGISTRY.tangent_rule(p) is None]
    assert not missing


# ----- Second order beyond the first case of each primitive -----

SECOND_ORDER = [
    Case(sp.logsumexp, (T,), {"axis": -1, "keepdims": True}, id="logsumexp-keepdims"),
    Case(sp.logsumexp, (T, 1, B), {}, id="logsumexp-b"),
    Case(sp.logsumexp, (T,), {"axis": (0, 2), "return_sign": True}, id="logsumexp-return_sign"),
    Case(sp.logsumexp, (T, 2, B_SIGNED, False, True), {}, id="logsumexp-b-signed-return_sign"),
    Case(sp.softmax, (T,), {}, id="softmax-all"),
    Case(sp.log_softmax, (T, (0, 1)), {}, id="log_softmax-axis-tuple"),
    Case(sp.polygamma, (2, POSITIVE), id="polygamma-2"),
    Case(sp.psi, (1.3,), id="psi-float"),
    Case(sp.jn, (3, REAL * 3), id="jn-3"),
    Case(sp.yn, (0, BESSEL_X), id="yn-0"),
    Case(sp.iv, (0, REAL * 2), id="iv-0"),
    Case(sp.i1, (np.array([0.0, 0.4, -1.3]),), id="i1-at-zero"),
    Case(sp.gammaincc, (1, POSITIVE), id="gammaincc-a1"),
    Case(sp.log_ndtr, (np.array([-30.0, -5.0, 2.0]),), id="log_ndtr-tail"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_variants(case):
    with np.errstate(all="ignore"):
        check_second_order(case.primitive, *case.args, **case.kwargs)


# ----- Against autograd -----

ag = pytest.importorskip("autograd")
agnp = pytest.importorskip("autograd.numpy")
agsp = pytest.importorskip("autograd.scipy.special")


def _unary(name, x):
    """(name, f for ssad, f for autograd, x) for a one-argument function of both modules."""
    return (name, getattr(sp, name), getattr(agsp, name), x)


def _order_first(name, order, x):
    """The same for `f(order, x)`, differentiated in x."""

    def ours(v):
        return getattr(sp, name)(order, v)

    def theirs(v):
        return getattr(agsp, name)(order, v)

    return (f"{name}-{order}", ours, theirs, x)


def _beta_in_a(a):
    return sp.beta(a, ROW)


def _beta_in_a_autograd(a):
    return agsp.beta(a, ROW)


def _betaln_both(a):
    return sp.betaln(a, a[::-1] + 0.5)


def _betaln_both_autograd(a):
    return agsp.betaln(a, a[::-1] + 0.5)


def _multigammaln(a):
    return sp.multigammaln(a, 3)


def _multigammaln_autograd(a):
    return agsp.multigammaln(a, 3)


def _logsumexp_keepdims(a):
    return sp.logsumexp(a, axis=1, keepdims=True)


def _logsumexp_keepdims_autograd(a):
    return agsp.logsumexp(a, axis=1, keepdims=True)


def _logsumexp_weighted(a):
    return sp.logsumexp(a, axis=2, b=B)


def _logsumexp_weighted_autograd(a):
    return agsp.logsumexp(a, axis=2, b=B)


AGAINST_AUTOGRAD = [
    _unary("expit", REAL),
    _unary("logit", UNIT),
    _unary("gammaln", POSITIVE),
    _unary("gamma", POSITIVE),
    _unary("rgamma", POSITIVE),
    _unary("digamma", POSITIVE),
    _unary("psi", POSITIVE),
    _order_first("polygamma", 2, POSITIVE),
    ("multigammaln", _multigammaln, _multigammaln_autograd, POSITIVE + 1.5),
    ("beta", _beta_in_a, _beta_in_a_autograd, POSITIVE),
    ("betaln", _betaln_both, _betaln_both_autograd, POSITIVE),
    _order_first("gammainc", 2.5, POSITIVE),
    _order_first("gammaincc", 2.5, POSITIVE),
    _unary("erf", REAL),
    _unary("erfc", REAL),
    _unary("erfinv", SYMMETRIC_UNIT),
    _unary("erfcinv", SYMMETRIC_UNIT + 1),
    _unary("j0", REAL * 3),
    _unary("j1", REAL * 3),
    _order_first("jn", 2, REAL * 3),
    _unary("y0", BESSEL_X),
    _unary("y1", BESSEL_X),
    _order_first("yn", 2, BESSEL_X),
    _unary("i0", REAL * 2),
    _unary("i1", REAL * 2),
    _order_first("iv", 1.5, POSITIVE),
    _order_first("ive", 2, REAL * 2),
    _unary("logsumexp", T),
    ("logsumexp-axis-keepdims", _logsumexp_keepdims, _logsumexp_keepdims_autograd, T),
    ("logsumexp-b", _logsumexp_weighted, _logsumexp_weighted_autograd, T),
]


def _weights(out):
    return np.linspace(0.5, 1.5, np.size(out)).reshape(np.shape(out))


@pytest.mark.parametrize("name, ours, theirs, x", AGAINST_AUTOGRAD, ids=[c[0] for c in AGAINST_AUTOGRAD])
def test_matches_autograd(name, ours, theirs, x):
    weights = _weights(ours(x))  # sum(sin(f(x)) * w): a non-uniform seed on every output element

    def objective(v):
        return np.sum(np.sin(ours(v)) * weights)

    def objective_autograd(v):
        return agnp.sum(agnp.sin(theirs(v)) * weights)

    np.testing.assert_allclose(ssad.grad(objective)(x), ag.grad(objective_autograd)(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ssad.hessian(objective)(x), ag.hessian(objective_autograd)(x), rtol=1e-7, atol=1e-9)


def logsumexp_in_weights(b):
    """logsumexp with weights passed by keyword (autograd has no gradient in b= to compare with)."""
    return np.sum(np.sin(sp.logsumexp(T, axis=1, b=b)) * np.arange(1.0, 9.0).reshape(2, 4))


def test_logsumexp_weights_given_by_keyword():
    expected = numerical_gradient(logsumexp_in_weights, B)
    np.testing.assert_allclose(ssad.grad(logsumexp_in_weights)(B), expected, rtol=1e-6, atol=1e-9)
    direction = _weights(B)
    _, slope = ssad.jvp(logsumexp_in_weights, (B,), (direction,))
    assert slope == pytest.approx(np.sum(expected * direction), rel=1e-6)
    gradient = ssad.grad(logsumexp_in_weights)
    column = numerical_gradient(lambda b: np.sum(gradient(b) * direction), B)
    hessian = ssad.hessian(logsumexp_in_weights)(B)
    np.testing.assert_allclose(np.tensordot(hessian, direction, axes=3), column, rtol=1e-5, atol=1e-7)


# ----- Conventions at degenerate points -----


def _rule(primitive):
    return REGISTRY.adjoint_rule(primitive)


def test_logsumexp_of_all_minus_inf_has_gradient_zero():
    a = np.array([[-np.inf, -np.inf, -np.inf], [0.5, -np.inf, 1.0]])
    y = sp.logsumexp(a, axis=1)
    (d_a,) = _rule(sp.logsumexp)(np.array([2.0, 3.0]), y, a, axis=1)
    e = np.exp(a[1] - y[1])
    np.testing.assert_array_equal(d_a[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(d_a[1], 3.0 * e, rtol=1e-15)
    t = REGISTRY.tangent_rule(sp.logsumexp)((np.ones_like(a),), y, a, axis=1)
    np.testing.assert_allclose(t, [0.0, 1.0], rtol=1e-15)

    def f(x):
        return sp.logsumexp(x - np.array([np.inf, np.inf]))

    np.testing.assert_array_equal(ssad.grad(f)(np.array([1.0, 2.0])), [0.0, 0.0])


def test_logsumexp_sign_carries_no_gradient():
    a, b = np.array([0.3, 1.2, -0.4]), np.array([1.0, -2.0, 0.5])
    value, sign = sp.logsumexp(a, b=b, return_sign=True)
    assert sign == -1.0
    d_a, _, d_b = _rule(sp.logsumexp)((1.0, 100.0), (value, sign), a, None, b, False, True)
    total = np.sum(b * np.exp(a))
    np.testing.assert_allclose(d_a, b * np.exp(a) / total, rtol=1e-14)
    np.testing.assert_allclose(d_b, np.exp(a) / total, rtol=1e-14)


def test_xlogy_at_x_zero():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 3.0])
    with np.errstate(divide="ignore"):
        d_x, d_y = _rule(sp.xlogy)(np.ones(3), sp.xlogy(x, y), x, y)
    np.testing.assert_array_equal(d_x, [-np.inf, np.log(3.0), np.log(3.0)])
    np.testing.assert_array_equal(d_y, [0.0, 0.0, 2.0 / 3.0])
    with np.errstate(divide="ignore"):
        d_x, d_y = _rule(sp.xlog1py)(np.ones(2), sp.xlog1py(x[:2], y[:2] - 1), x[:2], y[:2] - 1)
    np.testing.assert_array_equal(d_x, [-np.inf, np.log1p(2.0)])
    np.testing.assert_array_equal(d_y, [0.0, 0.0])


def test_xlogy_mixed_second_derivative_at_x_zero():
    # d2/dx dy xlogy(x, y) = 1 / y, also at x == 0, both ways round
    def f(v):
        return sp.xlogy(v[0], v[1])

    h = ssad.hessian(f)(np.array([0.0, 2.0]))
    np.testing.assert_allclose(h, [[0.0, 0.5], [0.5, 0.0]], atol=1e-15)


def test_entropies_at_zero():
    with np.errstate(divide="ignore"):
        (d,) = _rule(sp.entr)(1.0, sp.entr(0.0), np.float64(0.0))
        assert d == np.inf
        d_x, d_y = _rule(sp.rel_entr)(1.0, sp.rel_entr(0.0, 2.0), np.float64(0.0), np.float64(2.0))
    assert d_x == -np.inf and d_y == 0.0
    d_x, d_y = _rule(sp.kl_div)(1.0, sp.kl_div(0.0, 2.0), np.float64(0.5), np.float64(0.0) + 2.0)
    assert d_y == 1 - 0.25


def test_logit_at_the_ends_is_infinite():
    with np.errstate(divide="ignore"):
        (d,) = _rule(sp.logit)(np.ones(2), sp.logit(np.array([0.0, 1.0])), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(d, [np.inf, np.inf])


def test_bessel_derivatives_at_zero():
    zero = np.array([0.0])
    np.testing.assert_array_equal(_rule(sp.i1)(np.ones(1), sp.i1(zero), zero)[0], [0.5])
    np.testing.assert_array_equal(_rule(sp.j1)(np.ones(1), sp.j1(zero), zero)[0], [0.5])
    np.testing.assert_array_equal(_rule(sp.i0e)(np.ones(1), sp.i0e(zero), zero)[0], [0.0])  # kink of exp(-|x|)
    np.testing.assert_array_equal(_rule(sp.i1e)(np.ones(1), sp.i1e(zero), zero)[0], [0.5])
    # second derivatives at 0: i1'' = 0, j1'' = 0, i0'' = 1/2, j0'' = -1/2
    for primitive, expected in [(sp.i1, 0.0), (sp.j1, 0.0), (sp.i0, 0.5), (sp.j0, -0.5)]:
        h = ssad.hessian(lambda x, f=primitive: f(x))(0.0)
        np.testing.assert_allclose(h, expected, atol=1e-15)


def test_log_ndtr_slope_in_the_far_tail_is_finite():
    x = np.array([-1e3, -60.0])
    (d,) = _rule(sp.log_ndtr)(np.ones(2), sp.log_ndtr(x), x)
    # log_ndtr'(x) = -x - 1 / x + 2 / x**3 + O(x**-5) for x -> -inf
    np.testing.assert_allclose(d, -x - 1 / x + 2 / x**3, rtol=1e-9)


def test_gammainc_slope_at_zero_for_shape_one():
    (_, d) = _rule(sp.gammainc)(1.0, sp.gammainc(1, 0.0), 1, np.float64(0.0))
    assert d == 1.0


@pytest.mark.parametrize("function", [sp.gammainc, sp.gammaincc], ids=["gammainc", "gammaincc"])
def test_the_incomplete_gamma_functions_in_their_shape(function):
    """`a` of gammainc and gammaincc: reverse, forward and second order against differences."""
    x = np.array([0.05, 0.7, 1.9, 12.0])

    def total(a, x):
        return np.sum(function(a, x))

    for a in (0.4, 2.5):
        d_a, d_x = ssad.grad(total, wrt=(0, 1))(a, x)
        # (differences of a slope near 1e-7 keep about 1e-10 of it: an absolute bound there)
        np.testing.assert_allclose(d_a, numerical_gradient(lambda v: total(v, x), a), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(d_x, numerical_gradient(lambda v, a=a: total(a, v), x), rtol=1e-7, atol=1e-9)
        assert ssad.jvp(total, (a, x), (1.0, np.zeros(4)))[1] == pytest.approx(d_a, rel=1e-10)
        second = ssad.grad(ssad.grad(total))(a, x)
        h = 1e-4
        expected = (ssad.grad(total)(a + h, x) - ssad.grad(total)(a - h, x)) / (2 * h)
        np.testing.assert_allclose(second, expected, rtol=1e-6)


# ----- Orders with no derivative -----


def test_a_gradient_in_a_continuous_order_is_refused_never_nan_or_zero():
    x = np.array([0.7, 1.9])

    def bessel(v, x):
        return np.sum(sp.jv(v, x))

    for function, name, order in ((bessel, "jv", "v"),):
        message = f"scipy.special.{name} has no derivative ssad can compute in `{order}`"
        with pytest.raises(ssad.SsadError, match=message):
            ssad.grad(function, wrt=(0, 1))(1.5, x)
        with pytest.raises(ssad.SsadError, match=message):
            ssad.jvp(function, (1.5, x), (1.0, np.ones(2)))
        d_x = ssad.grad(function, wrt=1)(1.5, x)  # a constant order costs nothing
        np.testing.assert_allclose(d_x, numerical_gradient(lambda v, f=function: f(1.5, v), x), rtol=1e-7)
        assert ssad.jvp(function, (1.5, x), (0.0, np.ones(2)))[1] == pytest.approx(np.sum(d_x), rel=1e-12)

    def riemann(s):
        return sp.zeta(s)

    with pytest.raises(ssad.SsadError, match="scipy.special.zeta has no derivative ssad can compute in `x`"):
        ssad.grad(riemann)(2.5)


def test_a_constant_float_order_through_a_function_value():
    # a function called through a variable is differentiated by calling its rule whole
    x = np.array([0.7, 1.9])
    bessel = sp.iv

    def f(x):
        return np.sum(bessel(1.5, x) * np.array([1.0, -2.0]))

    np.testing.assert_allclose(ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-7)


def test_a_constant_float_order_is_fine():
    x = np.array([0.7, 1.9])

    def f(x):
        return np.sum(np.sin(sp.jv(1.5, x)) + sp.iv(0.5, x) + sp.kv(2.5, x) + sp.gammainc(0.7, x))

    expected = numerical_gradient(f, x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-7)
    _, slope = ssad.jvp(f, (x,), (np.array([1.0, -2.0]),))
    np.testing.assert_allclose(slope, expected @ np.array([1.0, -2.0]), rtol=1e-7)
    np.testing.assert_allclose(ssad.hessian(f)(x), ssad.jacobian(ssad.grad(f))(x), rtol=1e-12)


# ----- End to end: a model written the way autograd users write it -----


def mixture_objective(params, data):
    """A Dirichlet-multinomial-flavoured log likelihood with a softmax mixture."""
    logits, log_alpha = params[:6].reshape(2, 3), params[6:]
    alpha = np.exp(log_alpha)
    log_weights = logits - logsumexp(logits, axis=1, keepdims=True)
    gates = expit(logits)
    norm = gammaln(np.sum(alpha)) - np.sum(gammaln(alpha))
    entropy = -np.sum(sp.xlogy(gates, gates))
    spread = np.sum(sp.digamma(alpha + data) * data)
    mixed = logsumexp(log_weights + np.log(data), axis=0)
    return norm + entropy + spread + np.sum(mixed) + sp.logsumexp(log_weights, b=data)


def mixture_objective_autograd(params, data):
    logits, log_alpha = params[:6].reshape(2, 3), params[6:]
    alpha = agnp.exp(log_alpha)
    log_weights = logits - agsp.logsumexp(logits, axis=1, keepdims=True)
    gates = agsp.expit(logits)
    norm = agsp.gammaln(agnp.sum(alpha)) - agnp.sum(agsp.gammaln(alpha))
    entropy = -agnp.sum(gates * agnp.log(gates))
    spread = agnp.sum(agsp.digamma(alpha + data) * data)
    mixed = agsp.logsumexp(log_weights + agnp.log(data), axis=0)
    return norm + entropy + spread + agnp.sum(mixed) + agsp.logsumexp(log_weights, b=data)


PARAMS = S.away_from_zero(0.2, 1.2, (9,))
DATA = S.uniform(0.5, 2.0, (2, 3))


def test_end_to_end_gradient():
    got = ssad.grad(mixture_objective)(PARAMS, DATA)
    np.testing.assert_allclose(got, numerical_gradient(lambda p: mixture_objective(p, DATA), PARAMS), rtol=1e-6)
    np.testing.assert_allclose(got, ag.grad(mixture_objective_autograd)(PARAMS, DATA), rtol=1e-11)


def test_end_to_end_jvp():
    direction = S.away_from_zero(0.5, 1.5, (9,))
    value, slope = ssad.jvp(lambda p: mixture_objective(p, DATA), (PARAMS,), (direction,))
    assert value == pytest.approx(mixture_objective(PARAMS, DATA), rel=1e-14)
    expected = numerical_gradient(lambda p: mixture_objective(p, DATA), PARAMS) @ direction
    assert slope == pytest.approx(expected, rel=1e-6)


def test_end_to_end_hessian():
    got = ssad.hessian(lambda p: mixture_objective(p, DATA))(PARAMS)
    gradient = ssad.grad(mixture_objective)
    numerical = np.stack(
        [numerical_gradient(lambda p, i=i: gradient(p, DATA)[i], PARAMS) for i in range(PARAMS.size)]
    )
    np.testing.assert_allclose(got, numerical, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got, ag.hessian(mixture_objective_autograd)(PARAMS, DATA), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(got, got.T, rtol=1e-12, atol=1e-12)


def softmax_classifier(weights, inputs, labels):
    """Cross-entropy of a softmax classifier, written with scipy.special by module path."""
    scores = inputs @ weights.reshape(3, 4)
    probabilities = scipy.special.softmax(scores, axis=1)
    log_probabilities = scipy.special.log_softmax(scores, axis=1)
    return -np.sum(labels * log_probabilities) + 0.1 * np.sum(sp.entr(probabilities))


INPUTS = S.away_from_zero(0.2, 1.5, (5, 3))
LABELS = np.eye(4)[[0, 2, 1, 3, 2]]


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_end_to_end_softmax_classifier(mode):
    w = S.away_from_zero(0.2, 1.0, (12,))

    def f(v):
        return softmax_classifier(v, INPUTS, LABELS)

    expected = numerical_gradient(f, w)
    if mode == "grad":
        np.testing.assert_allclose(ssad.grad(f)(w), expected, rtol=1e-6, atol=1e-9)
    elif mode == "jvp":
        direction = np.linspace(-1.0, 1.0, 12)
        assert ssad.jvp(f, (w,), (direction,))[1] == pytest.approx(expected @ direction, rel=1e-6)
    else:
        gradient = ssad.grad(f)
        numerical = np.stack([numerical_gradient(lambda v, i=i: gradient(v)[i], w) for i in range(12)])
        np.testing.assert_allclose(ssad.hessian(f)(w), numerical, rtol=1e-5, atol=1e-7)
