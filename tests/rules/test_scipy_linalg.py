"""Numerical checks of the rules in ssad/rules/scipy_linalg.py: rule by rule, at second
order, against autograd, and end to end through a Gaussian-process marginal likelihood."""

import warnings

import autograd
import autograd.numpy as anp
import autograd.scipy.linalg as asl
import numpy as np
import pytest
import scipy.linalg

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, case_id

rng = np.random.default_rng(2203)

REGISTRY.is_nondifferentiable(len)  # loads the deferred SciPy rules (scipy.linalg is imported)


def rand(*shape):
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def well_conditioned(*shape):
    n = shape[-1]
    return rng.uniform(-0.5, 0.5, size=shape) + n * np.eye(n)


def spd(n):
    g = rng.uniform(-1.0, 1.0, size=(n, n))
    return g @ g.T + n * np.eye(n)


def symmetric_part(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def cholesky_of_symmetric_part(a):
    """scipy.linalg.cholesky((a + a^T) / 2): a function of every entry of `a`, whose
    gradient is the symmetrized gradient of cholesky at a symmetric `a`."""
    return scipy.linalg.cholesky(symmetric_part(a))


def cho_factor_of_symmetric_part(a):
    """The factor of scipy.linalg.cho_factor((a + a^T) / 2) (the flag has no derivative)."""
    return scipy.linalg.cho_factor(symmetric_part(a))[0]


A3, B3, B32 = well_conditioned(3, 3), rand(3), rand(3, 2)
TRIANGLE = np.tril(rand(3, 3)) + 3 * np.eye(3)

CASES = [
    # ----- triangular solves (only the triangle read gets a gradient) -----
    Case(scipy.linalg.solve_triangular, (TRIANGLE, B3), {"lower": True}, id="solve_triangular-lower"),
    Case(scipy.linalg.solve_triangular, (well_conditioned(3, 3), B32), id="solve_triangular-upper-full-input"),
    Case(scipy.linalg.solve_triangular, (well_conditioned(3, 3), B32), {"trans": "T", "lower": True},
         id="solve_triangular-T"),
    Case(scipy.linalg.solve_triangular, (well_conditioned(3, 3), B32, 1, False, True),
         id="solve_triangular-unit-positional"),
    Case(scipy.linalg.solve_triangular, (well_conditioned(3, 3) + 1j * rand(3, 3), crand(3, 2)),
         {"trans": "C", "lower": True}, id="solve_triangular-C-complex"),
    Case(scipy.linalg.solve_triangular, (well_conditioned(2, 3, 3), rand(2, 3, 2)), {"lower": True},
         id="solve_triangular-batched"),
    # ----- factorizations with a symmetric input (symmetrized gradient, see test_rule) -----
    Case(scipy.linalg.cholesky, (spd(3),), id="cholesky-upper-default"),
    Case(scipy.linalg.cholesky, (spd(4),), {"lower": True}, id="cholesky-lower"),
    Case(scipy.linalg.cho_factor, (spd(3),), id="cho_factor"),
    Case(scipy.linalg.cho_factor, (spd(4),), {"lower": True}, id="cho_factor-lower"),
    Case(scipy.linalg.cho_solve, (scipy.linalg.cho_factor(spd(3)), B32), id="cho_solve"),
    Case(scipy.linalg.cho_solve, (scipy.linalg.cho_factor(spd(3), lower=True), B3), id="cho_solve-lower-vector"),
    # ----- solves, inverses, determinants -----
    Case(scipy.linalg.solve, (A3, B3), id="solve"),
    Case(scipy.linalg.solve, (A3, B32), {"transposed": True}, id="solve-transposed"),
    Case(scipy.linalg.solve, (A3, B32), {"transposed": True, "assume_a": "upper triangular"},
         id="solve-transposed-upper-triangular"),
    Case(scipy.linalg.solve, (A3, B32), {"assume_a": "upper triangular"}, id="solve-upper-triangular"),
    Case(scipy.linalg.solve, (A3, B32), {"assume_a": "lower triangular"}, id="solve-lower-triangular"),
    Case(scipy.linalg.solve, (A3, B32), {"assume_a": "tridiagonal"}, id="solve-tridiagonal"),
    Case(scipy.linalg.solve, (A3, B32), {"assume_a": "diagonal"}, id="solve-diagonal"),
    Case(scipy.linalg.solve, (A3 + 1j * rand(3, 3), crand(3)), {"assume_a": "gen"}, id="solve-complex"),
    Case(scipy.linalg.inv, (A3,), id="inv"),
    Case(scipy.linalg.inv, (A3,), {"assume_a": "upper triangular"}, id="inv-upper-triangular"),
    Case(scipy.linalg.inv, (A3 + 1j * rand(3, 3),), id="inv-complex"),
    Case(scipy.linalg.det, (rand(3, 3),), id="det"),
    Case(scipy.linalg.det, (well_conditioned(2, 3, 3),), id="det-batched"),
    # ----- LU -----
    Case(scipy.linalg.lu_factor, (rand(4, 4),), id="lu_factor"),
    Case(scipy.linalg.lu_solve, (scipy.linalg.lu_factor(rand(4, 4)), rand(4)), id="lu_solve"),
    Case(scipy.linalg.lu_solve, (scipy.linalg.lu_factor(rand(3, 3)), B32), {"trans": 1}, id="lu_solve-trans-1"),
    Case(scipy.linalg.lu_solve, (scipy.linalg.lu_factor(rand(3, 3) + 1j * rand(3, 3)), crand(3, 2)), {"trans": 2},
         id="lu_solve-trans-2-complex"),
    # ----- matrix functions (derivative blocks) -----
    Case(scipy.linalg.expm, (rand(3, 3),), id="expm"),
    Case(scipy.linalg.expm, (crand(3, 3) / 2,), id="expm-complex"),
    Case(scipy.linalg.expm, (rand(2, 3, 3) / 2,), id="expm-batched"),
    Case(scipy.linalg.sqrtm, (spd(3),), id="sqrtm"),
    Case(scipy.linalg.sqrtm, (well_conditioned(3, 3) + 0.5 * rand(3, 3),), id="sqrtm-nonsymmetric"),
    Case(scipy.linalg.logm, (well_conditioned(3, 3),), id="logm"),
    Case(scipy.linalg.logm, (spd(3) + 1j * rand(3, 3) / 4,), id="logm-complex"),
]

# Primitives whose rule returns the gradient restricted to symmetric perturbations.
SYMMETRIC_INPUT = {
    scipy.linalg.cholesky: cholesky_of_symmetric_part, scipy.linalg.cho_factor: cho_factor_of_symmetric_part,
}


def _symmetric_version(primitive, kwargs):
    lower = kwargs.get("lower", False)

    def version(s):
        return primitive(symmetric_part(s), lower=lower)

    return version


def _pairing(c, t):
    if isinstance(c, tuple):
        return sum(_pairing(u, v) for u, v in zip(c, t, strict=True) if u is not None and v is not None)
    return float(np.real(np.sum(np.asarray(c) * np.asarray(t))))


def _random_like(value, generator):
    if isinstance(value, tuple):
        return tuple(_random_like(v, generator) for v in value)
    if isinstance(value, (bool, np.bool_)) or np.asarray(value).dtype.kind not in "fc":
        return None
    draw = generator.standard_normal(np.shape(value))
    if np.iscomplexobj(value):
        draw = draw + 1j * generator.standard_normal(np.shape(value))
    return draw


def check_symmetric_rule(primitive, a, seed=0, **kwargs):
    y = primitive(a, **kwargs)
    dy = _random_like(y, np.random.default_rng(seed))
    if isinstance(y, tuple):
        dy = (dy[0], 0.0)
    (da,) = REGISTRY.adjoint_rule(primitive)(dy, y, a, **kwargs)
    version = _symmetric_version(primitive, kwargs)
    expected = numerical_gradient(lambda s: _pairing(dy, version(s)), a)
    assert_close(f"{primitive_name(primitive)} argument 0", da, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(da, np.swapaxes(da, -1, -2))


def check_symmetric_tangent(primitive, a, seed=0, **kwargs):
    rule = REGISTRY.tangent_rule(primitive)
    y = primitive(a, **kwargs)
    draw = np.random.default_rng(seed).uniform(-1.5, 1.5, size=np.shape(a))
    eps = 1e-6
    version = _symmetric_version(primitive, kwargs)
    for direction, function in [(symmetric_part(draw), lambda s: primitive(s, **kwargs)), (draw, version)]:
        up, down = function(a + eps * direction), function(a - eps * direction)
        got = rule((direction,), y, a, **kwargs)
        if isinstance(y, tuple):
            up, down, got = up[0], down[0], got[0]
        assert_close(f"{primitive_name(primitive)} tangent", got, (up - down) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    if case.primitive in SYMMETRIC_INPUT:
        check_symmetric_rule(case.primitive, *case.args, **case.kwargs)
    else:
        check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    if case.primitive in SYMMETRIC_INPUT:
        check_symmetric_tangent(case.primitive, *case.args, **case.kwargs)
    else:
        check_tangent(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("seed", [0, 1])
def test_tangent_is_the_transpose_of_the_adjoint(case, seed):
    """Re<adjoint(dy), t> == Re<dy, tangent(t)>, tuples of a factor and a flag included
    (the tangent of the factor of cho_solve and lu_solve is checked here too)."""
    generator = np.random.default_rng(seed)
    y = case.primitive(*case.args, **case.kwargs)
    dy = _random_like(y, generator)
    if isinstance(y, tuple):
        dy = tuple(d if d is not None else np.zeros(np.shape(v)) for d, v in zip(dy, y, strict=True))
    tangents = tuple(_random_like(a, generator) for a in case.args)
    adjoints = REGISTRY.adjoint_rule(case.primitive)(dy, y, *case.args, **case.kwargs)
    t_y = REGISTRY.tangent_rule(case.primitive)(tangents, y, *case.args, **case.kwargs)
    backward = sum(_pairing(d, t) for d, t in zip(adjoints, tangents, strict=False) if d is not None and t is not None)
    np.testing.assert_allclose(backward, _pairing(dy, t_y), rtol=1e-10, atol=1e-10)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import scipy_linalg

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == scipy_linalg.__name__}
    assert rules == {case.primitive for case in CASES}
    assert not [primitive_name(p) for p in rules if REGISTRY.tangent_rule(p) is None]


# ----- the factor arguments of cho_solve and lu_solve -----


@pytest.mark.parametrize("solver, factor, b, kwargs", [
    (scipy.linalg.cho_solve, scipy.linalg.cho_factor(spd(3)), B32, {}),
    (scipy.linalg.cho_solve, scipy.linalg.cho_factor(spd(3), lower=True), B3, {}),
    (scipy.linalg.lu_solve, scipy.linalg.lu_factor(rand(3, 3)), B32, {}),
    (scipy.linalg.lu_solve, scipy.linalg.lu_factor(rand(3, 3)), B3, {"trans": 1}),
], ids=["cho-upper", "cho-lower", "lu", "lu-trans-1"])
def test_the_factor_gets_its_gradient(solver, factor, b, kwargs):
    # the solvers read one triangle (cho) or both packed triangles (lu) of the factor;
    # differences in each entry of the factor see exactly that
    y = solver(factor, b, **kwargs)
    dy = rand(*np.shape(y))
    (d_factor, flag), _ = REGISTRY.adjoint_rule(solver)(dy, y, factor, b, **kwargs)
    assert flag is None

    def loss(c):
        return np.sum(dy * solver((c, factor[1]), b, **kwargs))

    assert_close("factor", d_factor, numerical_gradient(loss, factor[0]), rtol=1e-5, atol=1e-7)
    direction = rand(*np.shape(factor[0]))
    t_y = REGISTRY.tangent_rule(solver)(((direction, None), np.zeros_like(b)), y, factor, b, **kwargs)
    eps = 1e-6
    expected = (solver((factor[0] + eps * direction, factor[1]), b, **kwargs)
                - solver((factor[0] - eps * direction, factor[1]), b, **kwargs)) / (2 * eps)
    assert_close("factor tangent", t_y, expected, rtol=1e-5, atol=1e-7)


def test_lu_factor_of_a_stack_is_factored_matrix_by_matrix():
    # SciPy returns [lu, piv] (a list) for a stack; each matrix has its own pivots
    a = rand(2, 3, 3)
    y = scipy.linalg.lu_factor(a)
    d_lu, t = rand(2, 3, 3), rand(2, 3, 3)
    (d_a,) = REGISTRY.adjoint_rule(scipy.linalg.lu_factor)((d_lu, np.zeros(np.shape(y[1]))), y, a)
    t_lu, _ = REGISTRY.tangent_rule(scipy.linalg.lu_factor)((t,), y, a)
    for k in range(2):
        single = scipy.linalg.lu_factor(a[k])
        (expected,) = REGISTRY.adjoint_rule(scipy.linalg.lu_factor)((d_lu[k], np.zeros(3)), single, a[k])
        np.testing.assert_allclose(d_a[k], expected, rtol=1e-12)
        (t_single, _) = REGISTRY.tangent_rule(scipy.linalg.lu_factor)((t[k],), single, a[k])
        np.testing.assert_allclose(t_lu[k], t_single, rtol=1e-12)


def test_cho_factor_keeps_the_other_triangle_of_a():
    a = spd(4)
    c, lower = scipy.linalg.cho_factor(a)
    np.testing.assert_array_equal(np.tril(c, -1), np.tril(a, -1))  # what the rule differentiates


@pytest.mark.parametrize("assume_a", ["sym", "her", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_symmetric_solves_give_the_symmetrized_gradient(assume_a, lower):
    a, b = spd(3), rand(3, 2)
    y = scipy.linalg.solve(a, b, assume_a=assume_a, lower=lower)
    dy = rand(3, 2)
    d_a, d_b = REGISTRY.adjoint_rule(scipy.linalg.solve)(dy, y, a, b, assume_a=assume_a, lower=lower)
    expected = numerical_gradient(lambda s: np.sum(dy * scipy.linalg.solve(symmetric_part(s), b, assume_a=assume_a)), a)
    assert_close("a", d_a, expected, rtol=1e-5, atol=1e-7)
    assert_close("b", d_b, numerical_gradient(lambda s: np.sum(dy * scipy.linalg.solve(a, s)), b), rtol=1e-5, atol=1e-7)
    inverse = scipy.linalg.inv(a, assume_a=assume_a, lower=lower)
    (d_a,) = REGISTRY.adjoint_rule(scipy.linalg.inv)(dy[:, :1] * dy[:, 1], inverse, a, assume_a=assume_a, lower=lower)
    expected = numerical_gradient(lambda s: np.sum(dy[:, :1] * dy[:, 1] * np.linalg.inv(symmetric_part(s))), a)
    assert_close("inv", d_a, expected, rtol=1e-5, atol=1e-7)


def test_hermitian_solve_of_a_complex_matrix():
    g = crand(3, 3)
    a = g @ g.conj().T + 3 * np.eye(3)
    b = crand(3)
    y = scipy.linalg.solve(a, b, assume_a="her")
    dy = crand(3)
    d_a, d_b = REGISTRY.adjoint_rule(scipy.linalg.solve)(dy, y, a, b, assume_a="her")
    hermitian = lambda s: (s + s.conj().T) / 2  # noqa: E731
    expected = numerical_gradient(lambda s: np.real(np.sum(dy * scipy.linalg.solve(hermitian(s), b))), a)
    assert_close("a", d_a, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(d_a, d_a.conj().T, rtol=1e-12)


def test_banded_is_refused():
    a, b = A3, B3
    with pytest.raises(ssad.SsadError, match="assume_a='banded'"):
        REGISTRY.adjoint_rule(scipy.linalg.solve)(b, b, a, b, assume_a="banded")


def test_matrix_function_blocks_agree_with_scipy_frechet():
    a, e = rand(4, 4), rand(4, 4)
    _, frechet = scipy.linalg.expm_frechet(a, e)
    got = REGISTRY.tangent_rule(scipy.linalg.expm)((e,), scipy.linalg.expm(a), a)
    np.testing.assert_allclose(got, frechet, rtol=1e-10, atol=1e-12)


# ----- second order of important variants (the first case of each primitive runs in
# tests/rules/test_second_order.py) -----

SECOND_ORDER = [
    Case(scipy.linalg.solve_triangular, (well_conditioned(3, 3), B32, "T", True, True), id="solve_triangular-T-unit"),
    Case(scipy.linalg.solve, (A3, B32), {"assume_a": "lower triangular", "transposed": True},
         id="solve-triangular-transposed"),
    Case(scipy.linalg.lu_solve, (scipy.linalg.lu_factor(rand(3, 3)), B32), {"trans": 1}, id="lu_solve-trans-1"),
    Case(scipy.linalg.sqrtm, (well_conditioned(3, 3) + 0.5 * rand(3, 3),), id="sqrtm-nonsymmetric"),
    Case(scipy.linalg.expm, (crand(2, 2) / 2,), id="expm-complex"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_of_variants(case):
    with np.errstate(all="ignore"):
        check_second_order(case.primitive, *case.args, **case.kwargs)


def cholesky_lower_of_symmetric_part(a):
    return scipy.linalg.cholesky(symmetric_part(a), lower=True)


def test_second_order_of_the_lower_cholesky():
    check_second_order(cholesky_lower_of_symmetric_part, spd(3))


# ----- against autograd -----


def triangular_loss(a, b):
    return np.sum(np.sin(scipy.linalg.solve_triangular(a, b, trans=1, lower=True)))


def autograd_triangular_loss(a, b):
    return anp.sum(anp.sin(asl.solve_triangular(a, b, trans=1, lower=True)))


def sqrtm_loss(a):
    return np.sum(np.sin(scipy.linalg.sqrtm(a)))


def autograd_sqrtm_loss(a):
    return anp.sum(anp.sin(asl.sqrtm(a)))


def test_solve_triangular_against_autograd():
    a, b = TRIANGLE, rand(3, 2)
    for position in (0, 1):
        got = ssad.grad(triangular_loss, wrt=position)(a, b)
        np.testing.assert_allclose(got, autograd.grad(autograd_triangular_loss, position)(a, b), rtol=1e-10, atol=1e-12)


def test_sqrtm_against_autograd():
    a = spd(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = autograd.grad(autograd_sqrtm_loss)(a)
    np.testing.assert_allclose(ssad.grad(sqrtm_loss)(a), want, rtol=1e-7, atol=1e-9)


# ----- end to end: a Gaussian-process marginal likelihood -----

X = np.linspace(-1.0, 1.0, 6) + rng.uniform(-0.05, 0.05, size=6)
Y = np.sin(3 * X) + 0.1 * rand(6)


def kernel_matrix(params, x):
    amplitude, length, noise = np.exp(params[0]), np.exp(params[1]), np.exp(params[2])
    gaps = x[:, None] - x[None, :]
    return amplitude * np.exp(-0.5 * gaps**2 / length**2) + noise * np.eye(len(x))


def gp_negative_log_likelihood(params, x, y):
    """The negative log marginal likelihood of a GP, written three ways at once."""
    k = kernel_matrix(params, x)
    low = scipy.linalg.cholesky(k, lower=True)
    z = scipy.linalg.solve_triangular(low, y, lower=True)
    alpha = scipy.linalg.cho_solve((low, True), y)
    sign, logdet = np.linalg.slogdet(k)
    return 0.25 * np.dot(z, z) + 0.25 * np.dot(y, alpha) + 0.5 * logdet + 0.5 * len(y) * np.log(2 * np.pi)


def gp_with_cho_factor(params, x, y):
    factor, lower = scipy.linalg.cho_factor(kernel_matrix(params, x))
    alpha = scipy.linalg.cho_solve((factor, lower), y)
    return 0.5 * np.dot(y, alpha) + np.sum(np.log(np.diag(factor)))


def autograd_gp(params, x, y):
    amplitude, length, noise = anp.exp(params[0]), anp.exp(params[1]), anp.exp(params[2])
    gaps = x[:, None] - x[None, :]
    k = amplitude * anp.exp(-0.5 * gaps**2 / length**2) + noise * anp.eye(len(x))
    low = anp.linalg.cholesky(k)
    z = asl.solve_triangular(low, y, lower=True)
    alpha = asl.solve_triangular(low, z, trans="T", lower=True)
    sign, logdet = anp.linalg.slogdet(k)
    return 0.25 * anp.dot(z, z) + 0.25 * anp.dot(y, alpha) + 0.5 * logdet + 0.5 * len(y) * anp.log(2 * anp.pi)


PARAMS = np.array([0.3, -0.7, -2.0])


def test_gp_value_matches_the_textbook_formula():
    k = kernel_matrix(PARAMS, X)
    expected = 0.5 * Y @ np.linalg.solve(k, Y) + 0.5 * np.linalg.slogdet(k)[1] + 3 * np.log(2 * np.pi)
    np.testing.assert_allclose(gp_negative_log_likelihood(PARAMS, X, Y), expected, rtol=1e-12)
    np.testing.assert_allclose(gp_with_cho_factor(PARAMS, X, Y) + 3 * np.log(2 * np.pi), expected, rtol=1e-12)


@pytest.mark.parametrize("f", [gp_negative_log_likelihood, gp_with_cho_factor])
def test_gp_gradient_jvp_and_hessian(f):
    expected = numerical_gradient(lambda p: f(p, X, Y), PARAMS)
    got = ssad.grad(f)(PARAMS, X, Y)
    assert_close("grad", got, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, autograd.grad(autograd_gp)(PARAMS, X, Y), rtol=1e-9)
    direction = np.array([0.4, -1.1, 0.7])
    _, d_f = ssad.jvp(f, (PARAMS, X, Y), (direction, np.zeros_like(X), np.zeros_like(Y)))
    np.testing.assert_allclose(d_f, got @ direction, rtol=1e-10)
    hessian = ssad.hessian(f)(PARAMS, X, Y)
    by_differences = np.stack([numerical_gradient(lambda p, k=k: ssad.grad(f)(p, X, Y)[k], PARAMS) for k in range(3)])
    np.testing.assert_allclose(hessian, by_differences, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hessian, autograd.hessian(autograd_gp)(PARAMS, X, Y), rtol=1e-8, atol=1e-10)


def test_gp_gradient_in_the_data():
    # y enters through solve_triangular and cho_solve's right-hand sides
    got = ssad.grad(gp_negative_log_likelihood, wrt=2)(PARAMS, X, Y)
    np.testing.assert_allclose(got, autograd.grad(autograd_gp, 2)(PARAMS, X, Y), rtol=1e-10)
    x_gradient = ssad.grad(gp_negative_log_likelihood, wrt=1)(PARAMS, X, Y)
    assert_close("x", x_gradient, numerical_gradient(lambda x: gp_negative_log_likelihood(PARAMS, x, Y), X),
                 rtol=1e-6, atol=1e-8)
