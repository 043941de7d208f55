"""Numerical checks of the rules in ssad/rules/scipy_stats.py."""

import autograd
import autograd.numpy as anp
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.stats
import scipy.stats as st
from scipy import special, stats
from scipy.stats import multivariate_normal, norm

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.rules import scipy_incomplete as incomplete
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, assert_transpose, case_id

rng = np.random.default_rng(2718)


def uniform(low, high, *shape):
    return rng.uniform(low, high, size=shape)


def spd(n):
    g = rng.uniform(-1.0, 1.0, size=(n, n))
    return g @ g.T + n * np.eye(n)


METHODS = ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf")

# Points: z = (x - loc) / scale inside the support and away from laplace's kink at 0.
X = np.array([-1.7, -0.6, 0.45, 1.2, 2.3])
X_POSITIVE = uniform(0.6, 3.0, 5)  # gamma, chi2, expon: x - loc > 0
X_UNIT = uniform(0.3, 1.9, 5)  # beta with loc 0.1, scale 2: z in (0.1, 0.9)
LOC_ROW = np.array([0.15, -0.2, 0.3, 0.05, -0.1])

# (family, points, shapes of the densities, shapes of the cdf-like methods, loc, scale)
FAMILIES = [
    ("norm", X, (), (), 0.4, 1.3),
    ("laplace", X, (), (), 0.1, 0.8),
    ("cauchy", X, (), (), 0.4, 1.3),
    ("logistic", X, (), (), 0.4, 1.3),
    ("expon", X_POSITIVE, (), (), 0.2, 1.4),
    ("t", X, (3.5,), (2.5,), 0.4, 1.3),
    ("gamma", X_POSITIVE, (2.5,), (0.7,), 0.1, 0.9),
    ("chi2", X_POSITIVE, (3.5,), (4.5,), 0.1, 0.9),
    ("beta", X_UNIT, (2.5, 1.7), (0.8, 2.6), 0.1, 2.0),
]


def _family_cases():
    cases = []
    for family, x, density_shapes, tail_shapes, loc, scale in FAMILIES:
        distribution = getattr(stats, family)
        for method in METHODS:
            primitive = getattr(distribution, method)
            shapes = density_shapes if method in ("logpdf", "pdf") else tail_shapes
            label = f"{family}.{method}"
            cases.append(Case(primitive, (x, *shapes, loc, scale), id=label))
            cases.append(Case(primitive, (x, *shapes, loc + LOC_ROW * 0.1, scale), id=f"{label}-loc-array"))
            cases.append(Case(primitive, (x[2], *shapes, loc, scale), id=f"{label}-scalar"))
    return cases


K = np.array([0, 1, 3, 4, 7])
MU = uniform(0.5, 4.0, 5)
X_MVN, MEAN, COV = uniform(-1.0, 1.0, 4, 3), uniform(-0.5, 0.5, 3), spd(3)
ALPHA = uniform(0.8, 3.0, 3)
X_SIMPLEX = rng.dirichlet(np.ones(3), size=4).T  # 4 points, components along the first axis


def _poisson_cases():
    cases = []
    for method in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"):
        primitive = getattr(stats.poisson, method)
        cases.append(Case(primitive, (K, MU), id=f"poisson.{method}"))
        cases.append(Case(primitive, (K, 2.5), id=f"poisson.{method}-scalar-mu"))
        cases.append(Case(primitive, (K + 2, MU, 2), id=f"poisson.{method}-loc"))
    return cases


CASES = [
    *_family_cases(),
    *_poisson_cases(),
    Case(multivariate_normal.logpdf, (X_MVN, MEAN, COV), id="multivariate_normal.logpdf"),
    Case(multivariate_normal.logpdf, (X_MVN[0], MEAN, COV), id="multivariate_normal.logpdf-one-point"),
    Case(multivariate_normal.pdf, (X_MVN, MEAN, COV), id="multivariate_normal.pdf"),
    Case(multivariate_normal.pdf, (X_MVN[1], MEAN, COV), id="multivariate_normal.pdf-one-point"),
    Case(stats.dirichlet.logpdf, (X_SIMPLEX, ALPHA), id="dirichlet.logpdf"),
    Case(stats.dirichlet.logpdf, (X_SIMPLEX[:, 0], ALPHA), id="dirichlet.logpdf-one-point"),
    Case(stats.dirichlet.logpdf, (X_SIMPLEX[:2, 1], ALPHA), id="dirichlet.logpdf-k-minus-one"),
    Case(stats.dirichlet.pdf, (X_SIMPLEX, ALPHA), id="dirichlet.pdf"),
    Case(stats.dirichlet.pdf, (X_SIMPLEX[:, 2], ALPHA), id="dirichlet.pdf-one-point"),
]


# ----- Inputs that live on a subset: checked through a function of every entry -----


def mvn_logpdf_of_symmetric_part(x, mean, cov):
    """multivariate_normal.logpdf at (cov + cov^T) / 2: a function of every entry of cov,
    whose gradient at a symmetric cov is the symmetrized gradient the rule returns."""
    return multivariate_normal.logpdf(x, mean, (cov + cov.T) / 2)


def mvn_pdf_of_symmetric_part(x, mean, cov):
    return multivariate_normal.pdf(x, mean, (cov + cov.T) / 2)


def dirichlet_logpdf_on_simplex(x, alpha):
    """dirichlet.logpdf's formula written out with NumPy: SciPy evaluates it only on the
    simplex, the formula at every point (the rule's gradient is the formula's)."""
    from scipy.special import gammaln

    full = x if np.shape(x)[0] == np.shape(alpha)[0] else np.concatenate([x, 1 - np.sum(x, 0, keepdims=True)])
    column = np.reshape(alpha, (-1,) + (1,) * (np.ndim(full) - 1))
    return np.sum((column - 1) * np.log(full), axis=0) - np.sum(gammaln(alpha)) + gammaln(np.sum(alpha))


def dirichlet_pdf_on_simplex(x, alpha):
    return np.exp(dirichlet_logpdf_on_simplex(x, alpha))


def dirichlet_logpdf_of_normalized(x, alpha):
    """dirichlet.logpdf at x / sum(x): a function SciPy evaluates at every positive x."""
    return stats.dirichlet.logpdf(x / np.sum(x, axis=0), alpha)


def dirichlet_pdf_of_normalized(x, alpha):
    return stats.dirichlet.pdf(x / np.sum(x, axis=0), alpha)


COVARIANCE_INPUT = {
    multivariate_normal.logpdf: mvn_logpdf_of_symmetric_part,
    multivariate_normal.pdf: mvn_pdf_of_symmetric_part,
}
# For test_second_order: the function checked there instead of the primitive, one defined
# at every point near the case's inputs, whose second derivatives run through the rule.
SYMMETRIC_INPUT = {
    **COVARIANCE_INPUT,
    stats.dirichlet.logpdf: dirichlet_logpdf_of_normalized,
    stats.dirichlet.pdf: dirichlet_pdf_of_normalized,
}
# SciPy's dirichlet refuses points off the simplex, so differences in x use the formula.
REFERENCE = {
    **COVARIANCE_INPUT,
    stats.dirichlet.logpdf: dirichlet_logpdf_on_simplex,
    stats.dirichlet.pdf: dirichlet_pdf_on_simplex,
}


def test_references_agree_with_scipy():
    for case in CASES:
        if case.primitive in REFERENCE:
            np.testing.assert_allclose(REFERENCE[case.primitive](*case.args), case.primitive(*case.args), rtol=1e-12)


def _floats(args):
    return [
        i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    ]


def check_against_reference(case, seed=0):
    """The rule's adjoints against central differences of the reference function."""
    reference = REFERENCE[case.primitive]
    y = case.primitive(*case.args)
    dy = np.random.default_rng(seed).uniform(-1.5, 1.5, size=np.shape(y))
    adjoints = REGISTRY.adjoint_rule(case.primitive)(dy, y, *case.args)
    for i in _floats(case.args):

        def pairing(v, i=i):
            args = list(case.args)
            args[i] = v
            return np.sum(dy * reference(*args))

        expected = numerical_gradient(pairing, case.args[i])
        assert_close(f"{case_id(case)} argument {i}", adjoints[i], expected, 1e-5, 1e-7)
    if case.primitive in COVARIANCE_INPUT:
        np.testing.assert_array_equal(adjoints[2], adjoints[2].T)


def check_tangent_against_reference(case, seed=0):
    reference = REFERENCE[case.primitive]
    generator = np.random.default_rng(seed)
    y = case.primitive(*case.args)
    tangents = [generator.uniform(-1.0, 1.0, np.shape(a)) if i in _floats(case.args) else None
                for i, a in enumerate(case.args)]
    if case.primitive in COVARIANCE_INPUT:
        tangents[2] = tangents[2] + tangents[2].T  # a symmetric direction: the derivative of SciPy's own
    got = REGISTRY.tangent_rule(case.primitive)(tuple(tangents), y, *case.args)
    eps = 1e-6
    shifted = [[a + s * eps * t if t is not None else a for a, t in zip(case.args, tangents, strict=True)]
               for s in (1, -1)]
    primal = case.primitive if case.primitive in COVARIANCE_INPUT else reference
    expected = (primal(*shifted[0]) - primal(*shifted[1])) / (2 * eps)
    assert_close(f"{case_id(case)} tangent", got, expected, 1e-5, 1e-7)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    if case.primitive in REFERENCE:
        check_against_reference(case)
    else:
        check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    if case.primitive in REFERENCE:
        check_tangent_against_reference(case)
    else:
        check_tangent(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent_is_the_transpose_of_the_adjoint(case):
    assert_transpose(case.primitive, *case.args, **case.kwargs)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import scipy_stats

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == scipy_stats.__name__}
    assert rules == {case.primitive for case in CASES}
    assert all(REGISTRY.tangent_rule(p) is not None for p in rules)


# ----- Second order through the rules, with keywords and broadcasting -----

SECOND_ORDER = [
    Case(norm.logpdf, (X,), {"loc": 0.4, "scale": 1.3}, id="norm.logpdf-keywords"),
    Case(norm.logcdf, (X, LOC_ROW, 1.3), id="norm.logcdf-loc-array"),
    Case(stats.logistic.logsf, (X, 0.4, 1.3), id="logistic.logsf"),
    Case(stats.t.cdf, (X, 3, 0.4, 1.3), id="t.cdf-integer-df"),
    Case(stats.beta.logcdf, (X_UNIT, 2, 3, 0.1, 2.0), id="beta.logcdf"),
    Case(stats.poisson.logcdf, (K, MU), id="poisson.logcdf"),
    Case(multivariate_normal.logpdf, (X_MVN[0], MEAN, COV), id="multivariate_normal.logpdf-one-point"),
    Case(stats.dirichlet.logpdf, (X_SIMPLEX[:, 0], ALPHA), id="dirichlet.logpdf-one-point"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_variants(case):
    primitive = SYMMETRIC_INPUT.get(case.primitive, case.primitive)
    check_second_order(primitive, *case.args, **case.kwargs)


# ----- Against autograd.scipy.stats -----

# (autograd's function, SciPy's, arguments): autograd's beta, gamma and chi2 take no loc or scale.
AUTOGRAD = [
    (astats.norm.logpdf, norm.logpdf, (X, 0.4, 1.3)),
    (astats.norm.pdf, norm.pdf, (X, 0.4, 1.3)),
    (astats.norm.cdf, norm.cdf, (X, 0.4, 1.3)),
    (astats.norm.logcdf, norm.logcdf, (X, 0.4, 1.3)),
    (astats.norm.sf, norm.sf, (X, 0.4, 1.3)),
    (astats.norm.logsf, norm.logsf, (X, 0.4, 1.3)),
    (astats.t.logpdf, stats.t.logpdf, (X, 3.5, 0.4, 1.3)),
    (astats.t.pdf, stats.t.pdf, (X, 3.5, 0.4, 1.3)),
    (astats.beta.logpdf, stats.beta.logpdf, (X_UNIT / 2.0, 2.5, 1.7)),
    (astats.beta.pdf, stats.beta.pdf, (X_UNIT / 2.0, 2.5, 1.7)),
    (astats.gamma.logpdf, stats.gamma.logpdf, (X_POSITIVE, 2.5)),
    (astats.gamma.pdf, stats.gamma.pdf, (X_POSITIVE, 2.5)),
    (astats.chi2.logpdf, stats.chi2.logpdf, (X_POSITIVE, 3)),
    (astats.chi2.pdf, stats.chi2.pdf, (X_POSITIVE, 3)),
    (astats.poisson.logpmf, stats.poisson.logpmf, (K, MU)),
    (astats.poisson.pmf, stats.poisson.pmf, (K, MU)),
    (astats.poisson.cdf, stats.poisson.cdf, (K, MU)),
    (astats.multivariate_normal.logpdf, multivariate_normal.logpdf, (X_MVN, MEAN, COV)),
    (astats.multivariate_normal.pdf, multivariate_normal.pdf, (X_MVN, MEAN, COV)),
    (astats.dirichlet.logpdf, stats.dirichlet.logpdf, (X_SIMPLEX[:, 0], ALPHA)),
]
# autograd gives the cdfs (t, beta, gamma, chi2) a gradient in x only: compared there.
AUTOGRAD_X_ONLY = [
    (astats.t.cdf, stats.t.cdf, (X, 3, 0.4, 1.3)),
    (astats.t.logcdf, stats.t.logcdf, (X, 3, 0.4, 1.3)),
    (astats.beta.cdf, stats.beta.cdf, (X_UNIT / 2.0, 2, 3)),
    (astats.gamma.cdf, stats.gamma.cdf, (X_POSITIVE, 2)),
    (astats.chi2.cdf, stats.chi2.cdf, (X_POSITIVE, 3)),
]


def _compiled(source, **namespace):
    """The function `source` defines, with its source readable (ssad reads it); its calls
    name the distributions statically, as users write them."""
    import linecache

    filename = f"<scipy.stats test {len(linecache.cache)}: {source.splitlines()[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"np": np, "anp": anp, "stats": stats, "astats": astats, **namespace}
    exec(compile(source, filename, "exec"), scope)
    return scope["f"]


def _call_source(module, qualname, args, np_name):
    parameters = ", ".join(f"a{i}" for i in range(len(args)))
    call = f"{module}.{qualname}({parameters})"
    return f"def f({parameters}):\n    return {np_name}.sum({np_name}.sin({call}) * weights)\n"


def _qualname(plain):
    return f"{type(plain.__self__).__name__.removesuffix('_gen')}.{plain.__name__}"


@pytest.mark.parametrize("boxed, plain, args", AUTOGRAD, ids=lambda v: getattr(v, "__name__", "") or None)
def test_gradients_match_autograd(boxed, plain, args):
    weights = rng.uniform(0.5, 1.5, size=np.shape(plain(*args)))
    wrt = tuple(_floats(args))
    name = _qualname(plain)
    ours = ssad.grad(_compiled(_call_source("stats", name, args, "np"), weights=weights), wrt=wrt)(*args)
    theirs = autograd.grad(_compiled(_call_source("astats", name, args, "anp"), weights=weights), wrt)(*args)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"{name} argument {wrt[i]}")


@pytest.mark.parametrize("boxed, plain, args", AUTOGRAD_X_ONLY, ids=lambda v: getattr(v, "__name__", "") or None)
def test_cdf_gradients_in_x_match_autograd(boxed, plain, args):
    weights = rng.uniform(0.5, 1.5, size=np.shape(plain(*args)))
    name = _qualname(plain)
    ours = ssad.grad(_compiled(_call_source("stats", name, args, "np"), weights=weights))(*args)
    theirs = autograd.grad(_compiled(_call_source("astats", name, args, "anp"), weights=weights))(*args)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_hessian_matches_autograd():
    def t_model(x, df, scale):
        return np.sum(stats.t.logpdf(x, df, 0.2, scale))

    def t_model_autograd(x, df, scale):
        return anp.sum(astats.t.logpdf(x, df, 0.2, scale))

    for argnum, point in ((1, 3.5), (2, 1.3)):
        args = [X, 3.5, 1.3]
        args[argnum] = point
        ours = ssad.hessian(t_model, wrt=argnum)(*args)
        theirs = autograd.hessian(t_model_autograd, argnum)(*args)
        np.testing.assert_allclose(ours, theirs, rtol=1e-8)


# ----- Conventions -----


def test_outside_the_support_every_derivative_is_zero():
    x = np.array([-0.5, 0.0, 0.5, 2.5])  # gamma and chi2: two points outside; beta (0, 1): three
    for primitive, shapes in ((stats.gamma.logpdf, (2.5,)), (stats.chi2.pdf, (3.5,)), (stats.beta.logpdf, (2.5, 1.7))):
        y = primitive(x, *shapes)
        adjoints = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, *shapes)
        outside = ~np.isfinite(primitive(x, *shapes)) if "log" in primitive.__name__ else primitive(x, *shapes) == 0
        for adjoint in adjoints:
            assert np.all(np.isfinite(adjoint))
        assert np.all(adjoints[0][outside] == 0.0)
    y = stats.gamma.logcdf(x, 2)
    (d_x, *_) = REGISTRY.adjoint_rule(stats.gamma.logcdf)(np.ones(4), y, x, 2)
    np.testing.assert_array_equal(d_x[:2], 0.0)
    assert np.all(np.isfinite(d_x))


def test_expon_slope_at_loc_is_the_one_from_inside():
    y = stats.expon.logpdf(0.5, 0.5, 2.0)
    d_x, d_loc, d_scale = REGISTRY.adjoint_rule(stats.expon.logpdf)(1.0, y, 0.5, 0.5, 2.0)
    assert (d_x, d_loc, d_scale) == (-0.5, 0.5, -0.5)


def test_laplace_at_its_kink_has_slope_zero():
    y = stats.laplace.logpdf(0.3, 0.3, 2.0)
    d_x, d_loc, d_scale = REGISTRY.adjoint_rule(stats.laplace.logpdf)(1.0, y, 0.3, 0.3, 2.0)
    assert (d_x, d_loc, d_scale) == (0.0, 0.0, -0.5)


def test_poisson_at_zero_rate_and_zero_count():
    y = stats.poisson.logpmf(0, 0.0)
    (d_k, d_mu) = REGISTRY.adjoint_rule(stats.poisson.logpmf)(1.0, y, 0, 0.0)
    assert d_k is None and d_mu == -1.0


def test_far_tails_stay_finite():
    x = np.array([-40.0, 40.0])
    for method in (norm.logcdf, norm.logsf):
        y = method(x)
        (d_x, _, _) = REGISTRY.adjoint_rule(method)(np.ones(2), y, x)
        assert np.all(np.isfinite(d_x))
    np.testing.assert_allclose(REGISTRY.adjoint_rule(norm.logcdf)(1.0, norm.logcdf(-40.0), -40.0)[0], 40.0, rtol=1e-3)


# ----- Shape derivatives of the cdfs: the primitives of ssad/rules/scipy_incomplete.py -----
# Checked against five-point differences of SciPy's own functions, taken on the side of x
# that holds less probability (gammainc or gammaincc, betainc or betaincc, t.cdf or t.sf),
# where the differences keep their relative accuracy deep in the tails; the second
# derivatives against differences of the first (checked first).

CHECKED_ELSEWHERE = [
    incomplete._gammainc_da, incomplete._gammainc_daa, incomplete._betainc_da, incomplete._betainc_db,
    incomplete._betainc_daa, incomplete._betainc_dab, incomplete._betainc_dbb, incomplete._t_cdf_ddf,
    incomplete._t_cdf_ddf2,
]
GAMMA_POINTS = [(a, x) for a in (0.05, 0.7, 2.5, 40.0) for x in (1e-6, 0.3, 2.0, 45.0, 150.0)]
BETA_POINTS = [(a, b, x) for a in (0.3, 2.5, 30.0) for b in (0.5, 4.0) for x in (1e-5, 0.2, 0.7, 0.999)]
T_POINTS = [(x, df) for df in (0.6, 3.5, 40.0) for x in (-60.0, -2.0, -0.3, 1e-4, 1.2, 1.6, 25.0)]


def _difference(function, at, step):
    """The derivative of `function` at `at`, by five-point central differences."""
    values = [function(at + k * step) for k in (-2, -1, 1, 2)]
    return (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * step)


def _smaller_side(lower, upper, at, step):
    """Differences of `lower`, or minus those of `upper` = 1 - lower where lower(at) > 1/2."""
    if lower(at) <= 0.5:
        return _difference(lower, at, step)
    return -_difference(upper, at, step)


@pytest.mark.parametrize("a, x", GAMMA_POINTS)
def test_gammainc_derivatives_in_a_against_scipy(a, x):
    step = 1e-4 * min(a, 1.0)
    expected = _smaller_side(lambda v: special.gammainc(v, x), lambda v: special.gammaincc(v, x), a, step)
    assert_close("d/da gammainc", incomplete._gammainc_da(a, x), expected, 1e-8, 0.0)
    expected = _difference(lambda v: incomplete._gammainc_da(v, x), a, step)
    assert_close("d2/da2 gammainc", incomplete._gammainc_daa(a, x), expected, 1e-6, 0.0)


@pytest.mark.parametrize("a, b, x", BETA_POINTS)
def test_betainc_derivatives_in_a_and_b_against_scipy(a, b, x):
    def lower(a, b):
        return special.betainc(a, b, x)

    def upper(a, b):
        return special.betaincc(a, b, x)

    step_a, step_b = 1e-4 * min(a, 1.0), 1e-4 * min(b, 1.0)
    expected = _smaller_side(lambda v: lower(v, b), lambda v: upper(v, b), a, step_a)
    assert_close("d/da betainc", incomplete._betainc_da(a, b, x), expected, 1e-8, 0.0)
    expected = _smaller_side(lambda v: lower(a, v), lambda v: upper(a, v), b, step_b)
    assert_close("d/db betainc", incomplete._betainc_db(a, b, x), expected, 1e-8, 0.0)
    firsts = {"da": incomplete._betainc_da, "db": incomplete._betainc_db}
    in_a = {name: _difference(lambda v, f=f: f(v, b, x), a, step_a) for name, f in firsts.items()}
    in_b = {name: _difference(lambda v, f=f: f(a, v, x), b, step_b) for name, f in firsts.items()}
    assert_close("d2/da2 betainc", incomplete._betainc_daa(a, b, x), in_a["da"], 1e-6, 0.0)
    assert_close("d2/dadb betainc", incomplete._betainc_dab(a, b, x), in_b["da"], 1e-6, 0.0)
    assert_close("d2/dbda betainc", incomplete._betainc_dab(a, b, x), in_a["db"], 1e-6, 0.0)
    assert_close("d2/db2 betainc", incomplete._betainc_dbb(a, b, x), in_b["db"], 1e-6, 0.0)


@pytest.mark.parametrize("x, df", T_POINTS)
def test_t_cdf_derivatives_in_df_against_scipy(x, df):
    step = 1e-4 * df
    if abs(x) < 1:  # F - 1/2 = sign(x) betainc(1/2, df / 2, x² / (df + x²)) / 2 keeps its digits near 0
        expected = _difference(lambda v: np.sign(x) * special.betainc(0.5, v / 2, x * x / (v + x * x)) / 2, df, step)
    else:
        expected = _smaller_side(lambda v: stats.t.cdf(x, v), lambda v: stats.t.sf(x, v), df, step)
    assert_close("d/ddf t.cdf", incomplete._t_cdf_ddf(x, df), expected, 1e-8, 0.0)
    expected = _difference(lambda v: incomplete._t_cdf_ddf(x, v), df, step)
    assert_close("d2/ddf2 t.cdf", incomplete._t_cdf_ddf2(x, df), expected, 1e-6, 0.0)


def test_the_primitives_are_elementwise_and_zero_outside_the_support():
    a, x = np.array([[0.4], [3.0]]), np.array([0.2, 1.5, 7.0])
    np.testing.assert_array_equal(incomplete._gammainc_da(a, x), [[incomplete._gammainc_da(u, v) for v in x] for u in a[:, 0]])
    assert np.shape(incomplete._betainc_db(np.array([0.5, 2.0]), 3.0, 0.4)) == (2,)
    assert np.ndim(incomplete._t_cdf_ddf2(0.5, 3.0)) == 0
    np.testing.assert_array_equal(incomplete._gammainc_daa(2.0, np.array([-1.0, 0.0, np.inf])), 0.0)
    np.testing.assert_array_equal(incomplete._betainc_dab(2.0, 0.5, np.array([-0.5, 0.0, 1.0, 1.5])), 0.0)
    np.testing.assert_array_equal(incomplete._t_cdf_ddf(np.array([-np.inf, 0.0, np.inf]), 3.0), 0.0)
    assert np.isnan(incomplete._gammainc_da(-1.0, 2.0)) and np.isnan(incomplete._betainc_da(1.0, 0.0, 0.5))


# The derivatives in x (closed forms) and, for the first derivatives, in the parameters.
# The second derivatives refuse their parameters: given as integers there, which carry none.
INCOMPLETE_CASES = [
    Case(incomplete._gammainc_da, (0.7, X_POSITIVE), id="gammainc_da"),
    Case(incomplete._gammainc_daa, (2, X_POSITIVE), id="gammainc_daa"),
    Case(incomplete._betainc_da, (0.8, 2.6, X_UNIT / 2), id="betainc_da"),
    Case(incomplete._betainc_db, (2.5, 0.6, X_UNIT / 2), id="betainc_db"),
    Case(incomplete._betainc_daa, (2, 3, X_UNIT / 2), id="betainc_daa"),
    Case(incomplete._betainc_dab, (2, 3, X_UNIT / 2), id="betainc_dab"),
    Case(incomplete._betainc_dbb, (2, 3, X_UNIT / 2), id="betainc_dbb"),
    Case(incomplete._t_cdf_ddf, (X, 2.5), id="t_cdf_ddf"),
    Case(incomplete._t_cdf_ddf2, (X, 3), id="t_cdf_ddf2"),
]


def test_the_primitives_are_all_checked():
    assert {case.primitive for case in INCOMPLETE_CASES} == set(CHECKED_ELSEWHERE)


@pytest.mark.parametrize("case", INCOMPLETE_CASES, ids=case_id)
def test_rules_of_the_incomplete_functions(case):
    check_rule(case.primitive, *case.args)
    check_tangent(case.primitive, *case.args)
    assert_transpose(case.primitive, *case.args)


# ----- Shape derivatives of the cdfs, end to end -----

# (family, points from near 0 to the far tails, shapes with one below 1, loc, scale)
SHAPE_FAMILIES = [
    ("t", np.array([-30.0, -1.7, -0.2, 1e-3, 0.9, 2.3, 15.0]), (2.5,), 0.2, 1.3),
    ("gamma", np.array([0.002, 0.3, 1.4, 6.0, 35.0]), (0.7,), 0.0, 0.9),
    ("chi2", np.array([0.01, 0.8, 3.0, 12.0, 60.0]), (4.5,), 0.0, 1.2),
    ("beta", np.array([0.003, 0.1, 0.5, 0.93, 0.98]), (0.8, 2.6), 0.0, 1.0),
]


@pytest.mark.parametrize("family, x, shapes, loc, scale", SHAPE_FAMILIES, ids=[f[0] for f in SHAPE_FAMILIES])
@pytest.mark.parametrize("method", ("cdf", "sf", "logcdf", "logsf"))
def test_cdfs_in_their_shapes_end_to_end(family, x, shapes, loc, scale, method):
    """`dist.method(x, *shapes, loc, scale)` differentiated in x and the shapes: the gradient
    against central differences, the tangent against the gradient, and the second
    derivatives (reverse over reverse, forward over reverse) against differences of the
    gradient."""
    names = ", ".join(f"s{i}" for i in range(len(shapes)))
    call = f"stats.{family}.{method}(v, {names}, {loc!r}, {scale!r})"
    weights = np.linspace(0.5, 1.5, np.size(x))
    f = _compiled(f"def f(v, {names}):\n    return np.sum(weights * np.sin({call}))\n", weights=weights)
    args = (x, *shapes)
    grads = ssad.grad(f, wrt=tuple(range(len(args))))(*args)
    for i in range(len(args)):
        assert_close(f"{family}.{method} argument {i}", grads[i], _central(f, args, i), 1e-6, 1e-8)
    direction = (np.linspace(-1.0, 1.0, np.size(x)), *(0.6 - 0.9 * k for k in range(len(shapes))))
    _, slope = ssad.jvp(f, args, direction)
    np.testing.assert_allclose(slope, sum(np.sum(g * d) for g, d in zip(grads, direction, strict=True)), rtol=1e-9)
    ssad.check_grads(f, args, order=2)


def test_shape_slopes_outside_the_support_are_zero():
    x = np.array([-0.5, 0.0, 0.5, 2.5])  # gamma: two points outside; beta (0, 1): three
    for primitive, values in ((stats.gamma.logcdf, (1.7,)), (stats.chi2.sf, (3.0,)), (stats.beta.logsf, (1.8, 2.6))):
        shapes = [np.full(4, v) for v in values]  # one slope per point
        y = primitive(x, *shapes, 0.0, 1.0)
        adjoints = REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, x, *shapes, 0.0, 1.0)
        outside = (x <= 0) | ((x >= 1) & (primitive is stats.beta.logsf))
        for adjoint in adjoints[1 : 1 + len(shapes)]:
            assert np.all(np.isfinite(adjoint))
            np.testing.assert_array_equal(adjoint[outside], 0.0)


def gamma_cdf_in_a(a, x):
    return np.sum(np.sin(st.gamma.cdf(x, a, scale=1.5)))


def beta_logsf_in_b(b, x):
    return np.sum(np.sin(stats.beta.logsf(x, 1.5, b)))


def t_logcdf_in_df(df, x):
    return np.sum(np.sin(stats.t.logcdf(x, df)))


@pytest.mark.parametrize(
    "function, shape, x, pattern",
    [
        (gamma_cdf_in_a, 0.7, X_POSITIVE, r"gammainc\(a, x\) .*`a`"),
        (beta_logsf_in_b, 0.6, X_UNIT / 2, r"betainc\(a, b, x\) .*`b`"),
        (t_logcdf_in_df, 2.5, X, r"t\.cdf\(x, df\) .*`df`"),
    ],
    ids=["gamma", "beta", "t"],
)
def test_third_derivatives_in_the_shape_are_refused(function, shape, x, pattern):
    first, second = ssad.grad(function), ssad.grad(ssad.grad(function))
    assert_close("second derivative", second(shape, x), numerical_gradient(lambda v: first(v, x), shape), 1e-6, 1e-8)
    with pytest.raises(ssad.SsadError, match=pattern):
        ssad.grad(second)(shape, x)
    with pytest.raises(ssad.SsadError, match=pattern):
        ssad.jvp(second, (shape, x), (1.0, np.zeros_like(x)))
    # in x, the third derivative is a closed form
    expected = numerical_gradient(lambda v: second(shape, v), x)
    assert_close("third derivative in x", ssad.grad(second, wrt=1)(shape, x), expected, 1e-5, 1e-7)


def gamma_logcdf_in_x(x, a):
    return np.sum(st.gamma.logcdf(x, a, scale=2.0))


def test_the_other_parameters_of_a_cdf_still_differentiate():
    g = ssad.grad(gamma_logcdf_in_x)(X_POSITIVE, 2.5)
    expected = numerical_gradient(lambda v: gamma_logcdf_in_x(v, 2.5), X_POSITIVE)
    assert_close("gamma.logcdf in x", g, expected, 1e-6, 1e-8)
    value, slope = ssad.jvp(gamma_logcdf_in_x, (X_POSITIVE, 2.5), (np.ones(5), 0.0))
    np.testing.assert_allclose(slope, np.sum(expected), rtol=1e-6)


# ----- Frozen distributions -----


def frozen_model(x, mu, s):
    d = norm(mu, s)
    return np.sum(d.logpdf(x)) + np.sum(d.cdf(x) ** 2)


def frozen_model_by_hand(x, mu, s):
    return anp.sum(astats.norm.logpdf(x, mu, s)) + anp.sum(astats.norm.cdf(x, mu, s) ** 2)


def frozen_gamma_and_multivariate(a, theta, mean, cov, x, points):
    g = st.gamma(a, scale=theta)
    d = multivariate_normal(mean, cov)
    return np.sum(g.logpdf(x)) + np.sum(d.logpdf(points))


def frozen_in_a_loop_then_rebound(mu, x):
    total = 0.0
    for k in range(3):
        d = stats.norm(mu * k, 1.0 + k)
        mu = mu * 1.5  # the distribution keeps the parameters it was made with
        total = total + np.sum(d.logpdf(x))
    return total


def frozen_passed_on(x, mu):
    d = norm(mu, 1.0)
    return _log_density(d, x)


def _log_density(d, x):
    return np.sum(d.logpdf(x))


POINTS = np.array([[0.5, 0.1], [0.0, -1.0], [1.2, 0.3]])
COV = np.array([[2.0, 0.3], [0.3, 1.0]])


def test_frozen_distributions_with_gradients_are_their_family_functions():
    """`d = norm(mu, s); d.logpdf(x)` is `norm.logpdf(x, mu, s)`: the parameters' gradients
    flow, in both modes and at second order (checked against autograd and differences)."""
    args = (X, 0.4, 1.3)
    got = ssad.grad(frozen_model, wrt=(0, 1, 2))(*args)
    expected = autograd.grad(frozen_model_by_hand, (0, 1, 2))(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    ssad.check_grads(frozen_model, args, wrt=(0, 1, 2), order=2)
    assert "norm.logpdf(x, d_arg0, d_arg1)" in ssad.show(frozen_model, wrt=(1, 2)).source
    args = (2.5, 1.5, np.array([0.1, -0.2]), COV, X_POSITIVE, POINTS)
    ssad.check_grads(frozen_gamma_and_multivariate, args, wrt=(0, 1, 2))
    # cov's gradient is the symmetrized one (docs/conventions.md), as the family function's
    d_cov = ssad.grad(frozen_gamma_and_multivariate, wrt=3)(*args)
    family = ssad.grad(lambda mean, cov: np.sum(multivariate_normal.logpdf(POINTS, mean, cov)), wrt=1)(args[2], COV)
    np.testing.assert_allclose(d_cov, family, rtol=1e-12, atol=1e-14)
    ssad.check_grads(frozen_in_a_loop_then_rebound, (0.3, X), wrt=(0,), order=2)


def test_a_frozen_distribution_with_gradients_used_otherwise_is_refused_at_the_users_line():
    with pytest.raises(ssad.MissingRuleError) as info:
        ssad.grad(frozen_passed_on, wrt=(0, 1))(X, 0.4)
    assert info.value.line.strip() == "d = norm(mu, 1.0)"
    assert info.value.lineno == frozen_passed_on.__code__.co_firstlineno + 1
    assert "makes a frozen scipy.stats distribution" in info.value.message
    assert "`norm.logpdf(x, loc, scale)`" in info.value.message


FROZEN_STANDARD = norm(0.1, 2.0)


def _close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def frozen_with_constant_parameters(x):
    return (np.sum(norm(0.1, 2.0).logpdf(x)) + np.sum(FROZEN_STANDARD.cdf(x))
            + np.sum(st.gamma(2.0, scale=1.5).logpdf(x + 3.0)) + np.sum(st.t(4.0).logsf(x)))


def module_functions(x):
    return (np.sum(norm.logpdf(x, 0.1, 2.0)) + np.sum(norm.cdf(x, 0.1, 2.0))
            + np.sum(st.gamma.logpdf(x + 3.0, 2.0, scale=1.5)) + np.sum(st.t.logsf(x, 4.0)))


def test_frozen_distributions_with_constant_parameters_are_their_family_functions():
    # `norm(0.1, 2.0).logpdf(x)` is `norm.logpdf(x, 0.1, 2.0)`: the same rules, in every mode and order
    _close(ssad.grad(frozen_with_constant_parameters)(X), ssad.grad(module_functions)(X))
    tangent = np.linspace(-1.0, 1.0, np.size(X)).reshape(np.shape(X))
    _close(ssad.jvp(frozen_with_constant_parameters, (X,), (tangent,))[1], ssad.jvp(module_functions, (X,), (tangent,))[1])
    _close(ssad.hessian(frozen_with_constant_parameters)(X), ssad.hessian(module_functions)(X))
    ssad.check_grads(frozen_with_constant_parameters, (X,), order=2)


# ----- End to end: the ways users write the calls -----


@pytest.mark.parametrize("family, x, density_shapes, tail_shapes, loc, scale", FAMILIES, ids=[f[0] for f in FAMILIES])
@pytest.mark.parametrize("method", METHODS)
def test_defaults_and_keywords_end_to_end(family, x, density_shapes, tail_shapes, loc, scale, method):
    """`dist.method(x, *shapes)` (standard loc and scale) and `dist.method(x, *shapes, loc=l,
    scale=s)` differentiated in x, loc and scale, in both modes."""
    shapes = density_shapes if method in ("logpdf", "pdf") else tail_shapes
    weights = np.linspace(0.5, 1.5, np.size(x))

    constants = "".join(f", {c!r}" for c in shapes)
    call = f"stats.{family}.{method}"
    standard = _compiled(f"def f(v):\n    return np.sum(weights * {call}(v{constants}))\n", weights=weights)
    keywords = _compiled(
        f"def f(v, l, s):\n    return np.sum(weights * {call}(v{constants}, loc=l, scale=s))\n", weights=weights
    )

    assert_close("standard", ssad.grad(standard)(x), numerical_gradient(standard, x), 1e-6, 1e-8)
    args = (x, loc, scale)
    grads = ssad.grad(keywords, wrt=(0, 1, 2))(*args)
    for i in range(3):
        assert_close(f"{family}.{method} argument {i}", grads[i], _central(keywords, args, i), 1e-6, 1e-8)
    direction = (np.linspace(-1.0, 1.0, np.size(x)), 0.3, -0.7)
    _, slope = ssad.jvp(keywords, args, direction)
    np.testing.assert_allclose(slope, sum(np.sum(g * d) for g, d in zip(grads, direction, strict=True)), rtol=1e-9)


def spellings(x, mu, s):
    return (
        np.sum(scipy.stats.norm.logpdf(x, mu, s))
        + np.sum(norm.logpdf(x, loc=mu, scale=s))
        + np.sum(stats.t.logpdf(x, 4.0, mu, s))
        + np.sum(st.logistic.cdf(x, scale=s))
        + np.sum(stats.cauchy.logsf(x, loc=mu))
        + np.sum(stats.laplace.logpdf(x, mu, scale=s))
    )


def _central(function, args, index):
    def along(v):
        moved = list(args)
        moved[index] = v
        return function(*moved)

    return numerical_gradient(along, args[index])


def test_spellings_end_to_end():
    args = (X, 0.35, 1.2)
    grads = ssad.grad(spellings, wrt=(0, 1, 2))(*args)
    for i in range(3):
        assert_close(f"argument {i}", grads[i], _central(spellings, args, i), 1e-6, 1e-8)
    direction = (rng.uniform(-1, 1, 5), 0.7, -0.4)
    _, slope = ssad.jvp(spellings, args, direction)
    expected = sum(np.sum(g * d) for g, d in zip(grads, direction, strict=True))
    np.testing.assert_allclose(slope, expected, rtol=1e-10)
    hessian = ssad.hessian(spellings, wrt=2)(*args)
    expected = numerical_gradient(lambda s: ssad.grad(spellings, wrt=2)(X, 0.35, s), 1.2)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6)
    hessian = ssad.hessian(spellings, wrt=0)(*args)
    expected = _jacobian(lambda v: ssad.grad(spellings, wrt=0)(v, 0.35, 1.2), X)
    np.testing.assert_allclose(hessian, expected, rtol=1e-6)


# A Bayesian linear regression with a Student-t likelihood, a normal prior on the
# weights, a gamma prior on the noise scale and a multivariate normal prior on the
# intercepts: the log joint density, as in autograd's variational inference examples.
DESIGN = uniform(-1.0, 1.0, 12, 3)
TARGETS = DESIGN @ np.array([0.5, -1.0, 2.0]) + 0.3 * rng.standard_normal(12)
PRIOR_COV = spd(2) / 4
COUNTS = np.array([1, 0, 4, 2, 3, 1])


def log_joint(w, log_scale, b):
    scale = np.exp(log_scale)
    prediction = DESIGN @ w + b[0]
    likelihood = np.sum(stats.t.logpdf(TARGETS, 5.0, loc=prediction, scale=scale))
    prior = np.sum(norm.logpdf(w, 0.0, 2.0)) + scipy.stats.gamma.logpdf(scale, 2.0, scale=0.5)
    prior = prior + multivariate_normal.logpdf(b, np.zeros(2), PRIOR_COV)
    rates = np.exp(b[1] + 0.1 * np.arange(6))
    return likelihood + prior + np.sum(stats.poisson.logpmf(COUNTS, rates))


def log_joint_autograd(w, log_scale, b):
    scale = anp.exp(log_scale)
    prediction = anp.dot(DESIGN, w) + b[0]
    likelihood = anp.sum(astats.t.logpdf(TARGETS, 5.0, prediction, scale))
    prior = anp.sum(astats.norm.logpdf(w, 0.0, 2.0)) + astats.gamma.logpdf(scale / 0.5, 2.0) - anp.log(0.5)
    prior = prior + astats.multivariate_normal.logpdf(b, anp.zeros(2), PRIOR_COV)
    rates = anp.exp(b[1] + 0.1 * anp.arange(6))
    return likelihood + prior + anp.sum(astats.poisson.logpmf(COUNTS, rates))


def test_bayesian_model_end_to_end():
    args = (np.array([0.4, -0.8, 1.7]), -0.9, np.array([0.2, 0.5]))
    np.testing.assert_allclose(log_joint(*args), log_joint_autograd(*args), rtol=1e-12)
    grads = ssad.grad(log_joint, wrt=(0, 1, 2))(*args)
    theirs = autograd.grad(log_joint_autograd, (0, 1, 2))(*args)
    for i in range(3):
        assert_close(f"argument {i}", grads[i], _central(log_joint, args, i), 1e-6, 1e-8)
        np.testing.assert_allclose(grads[i], theirs[i], rtol=1e-9, atol=1e-12)
    direction = (rng.uniform(-1, 1, 3), 0.6, rng.uniform(-1, 1, 2))
    _, slope = ssad.jvp(log_joint, args, direction)
    np.testing.assert_allclose(slope, sum(np.sum(g * d) for g, d in zip(grads, direction, strict=True)), rtol=1e-10)
    for i in range(3):
        hessian = ssad.hessian(log_joint, wrt=i)(*args)
        expected = autograd.hessian(log_joint_autograd, i)(*args)
        np.testing.assert_allclose(hessian, expected, rtol=1e-8, atol=1e-10)
        numeric = _jacobian(lambda v, i=i: ssad.grad(log_joint, wrt=i)(*_with(args, i, v)), args[i])
        np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-6)


def _with(args, index, value):
    moved = list(args)
    moved[index] = value
    return moved


def _jacobian(function, x, eps=1e-6):
    """Central differences of a vector-valued `function` at `x`: shape f(x).shape + x.shape."""
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        step = step.reshape(x.shape)
        up, down = function(x + step if x.ndim else float(x + step)), function(x - step if x.ndim else float(x - step))
        columns.append((np.asarray(up) - np.asarray(down)) / (2 * eps))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(columns[0]) + x.shape)
