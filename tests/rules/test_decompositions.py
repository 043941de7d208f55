"""Numerical checks of the rules in ssad/rules/decompositions.py: eig, eigvals, eigh,
eigvalsh, svd, qr, pinv, lstsq and matrix_power, rule by rule, at second order, against
autograd, and end to end through user functions."""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.rules.decompositions import _shaped
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, case_id

rng = np.random.default_rng(4417)


def rand(*shape):
    """Values in ±[0.5, 1.5]: away from zero and from ties."""
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def well_conditioned(*shape):
    n = shape[-1]
    return rng.uniform(-0.5, 0.5, size=shape) + n * np.eye(n)


def symmetric(*shape):
    """Symmetric matrices with well separated eigenvalues."""
    g = rand(*shape)
    return (g + np.swapaxes(g, -1, -2)) / 2 + np.diag(np.arange(shape[-1]) * 1.5)


def hermitian(n):
    g = crand(n, n)
    return (g + g.conj().T) / 2 + np.diag(np.arange(n) * 1.5)


def hermitian_part(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def eigh_of_hermitian_part(a, UPLO="L"):
    """np.linalg.eigh((a + a^H) / 2): a function of every entry of `a`, whose gradient is
    the symmetrized gradient of eigh at a Hermitian `a`."""
    return np.linalg.eigh(hermitian_part(a), UPLO)


def eigvalsh_of_hermitian_part(a, UPLO="L"):
    return np.linalg.eigvalsh(hermitian_part(a), UPLO)


M43, M34, M33 = rand(4, 3), rand(3, 4), rand(3, 3)

CASES = [
    # ----- singular value decomposition (real: the sign gauge is discrete) -----
    Case(np.linalg.svd, (M43,), {"full_matrices": False}, id="svd-tall-reduced"),
    Case(np.linalg.svd, (M34,), {"full_matrices": False}, id="svd-wide-reduced"),
    Case(np.linalg.svd, (M33,), id="svd-square-full"),
    Case(np.linalg.svd, (M43,), id="svd-tall-full-one-extra-column"),
    Case(np.linalg.svd, (rand(2, 3, 4), False), id="svd-batched-reduced-positional"),
    Case(np.linalg.svd, (rand(2, 4, 3),), {"compute_uv": False}, id="svd-values"),
    Case(np.linalg.svd, (crand(3, 4),), {"compute_uv": False}, id="svd-values-complex"),
    # ----- general eigendecomposition (LAPACK's normalization is differentiated) -----
    Case(np.linalg.eig, (np.array([[1.0, -2.0, 0.5], [1.5, 0.3, -0.7], [0.2, 0.9, 2.0]]),), id="eig-complex-pair"),
    Case(np.linalg.eig, (symmetric(4, 4) + 0.3 * rand(4, 4),), id="eig-real-spectrum"),
    Case(np.linalg.eig, (crand(3, 3),), id="eig-complex-matrix"),
    Case(np.linalg.eig, (rand(2, 3, 3),), id="eig-batched"),
    Case(np.linalg.eigvals, (rand(4, 4),), id="eigvals"),
    Case(np.linalg.eigvals, (crand(3, 3),), id="eigvals-complex"),
    # ----- QR -----
    Case(np.linalg.qr, (M43,), id="qr-tall-reduced"),
    Case(np.linalg.qr, (M33,), id="qr-square"),
    Case(np.linalg.qr, (M43,), {"mode": "complete"}, id="qr-tall-complete-one-extra-column"),
    Case(np.linalg.qr, (M34,), id="qr-wide"),
    Case(np.linalg.qr, (M43, "r"), id="qr-r-positional"),
    Case(np.linalg.qr, (crand(4, 3),), id="qr-complex"),
    Case(np.linalg.qr, (rand(2, 4, 3),), id="qr-batched"),
    # ----- pseudo-inverse, least squares -----
    Case(np.linalg.pinv, (M43,), id="pinv-tall"),
    Case(np.linalg.pinv, (M34,), id="pinv-wide"),
    Case(np.linalg.pinv, (crand(3, 2),), id="pinv-complex"),
    Case(np.linalg.pinv, (rand(2, 3, 4),), {"rcond": 1e-10}, id="pinv-batched-rcond"),
    Case(np.linalg.lstsq, (rand(5, 3), rand(5)), id="lstsq-tall-vector"),
    Case(np.linalg.lstsq, (rand(5, 3), rand(5, 2)), {"rcond": None}, id="lstsq-tall-matrix"),
    Case(np.linalg.lstsq, (M34, rand(3, 2)), id="lstsq-wide"),
    Case(np.linalg.lstsq, (crand(4, 2), crand(4)), id="lstsq-complex"),
    # ----- integer powers -----
    Case(np.linalg.matrix_power, (M33, 3), id="matrix_power"),
    Case(np.linalg.matrix_power, (M33, 1), id="matrix_power-1"),
    Case(np.linalg.matrix_power, (M33, 0), id="matrix_power-0"),
    Case(np.linalg.matrix_power, (well_conditioned(3, 3), -2), id="matrix_power-negative"),
    Case(np.linalg.matrix_power, (rand(2, 3, 3), 5), id="matrix_power-batched"),
    Case(np.linalg.matrix_power, (crand(2, 2), 4), id="matrix_power-complex"),
    # the identity that gives a zero tangent of a tuple component its array shape
    Case(_shaped, (rand(3, 2), rand(3, 2)), id="_shaped"),
]

# eigh and eigvalsh take a Hermitian matrix and return the symmetrized gradient: they are
# checked below through eigh((a + a^H) / 2), at first and second order (the differences of
# eigh itself in one entry see only the triangle LAPACK reads).
CHECKED_ELSEWHERE = [np.linalg.eigh, np.linalg.eigvalsh]

SYMMETRIC_INPUT = {np.linalg.eigh: eigh_of_hermitian_part, np.linalg.eigvalsh: eigvalsh_of_hermitian_part}
SYMMETRIC_CASES = [
    Case(np.linalg.eigh, (symmetric(3, 3),), id="eigh"),
    Case(np.linalg.eigh, (symmetric(4, 4), "U"), id="eigh-upper"),
    Case(np.linalg.eigh, (symmetric(2, 3, 3),), id="eigh-batched"),
    Case(np.linalg.eigvalsh, (symmetric(3, 3),), id="eigvalsh"),
    Case(np.linalg.eigvalsh, (symmetric(4, 4),), {"UPLO": "U"}, id="eigvalsh-upper"),
    Case(np.linalg.eigvalsh, (hermitian(3),), id="eigvalsh-complex"),
]


def quietly(check, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return check(*args, **kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


def _random_like(value, generator):
    if isinstance(value, tuple):
        return tuple(_random_like(v, generator) for v in value)
    draw = generator.standard_normal(np.shape(value))
    if np.iscomplexobj(value):
        draw = draw + 1j * generator.standard_normal(np.shape(value))
    return draw


def _pairing(c, t):
    if isinstance(c, tuple):
        return sum(_pairing(u, v) for u, v in zip(c, t, strict=True))
    return float(np.real(np.sum(np.asarray(c) * np.asarray(t))))


def assert_transpose(primitive, args, kwargs, seed=0):
    """Re<adjoint(dy), t> == Re<dy, tangent(t)> for random (complex where the values are) dy and t."""
    generator = np.random.default_rng(seed)
    y = primitive(*args, **kwargs)
    dy = _random_like(tuple(y) if isinstance(y, tuple) else y, generator)
    if isinstance(y, tuple):  # an integer component (a rank) has no tangent: pair it with zero
        dy = tuple(d if np.asarray(v).dtype.kind in "fc" else np.zeros(np.shape(v)) for d, v in zip(dy, y, strict=True))
    tangents = tuple(_random_like(a, generator) if np.asarray(a).dtype.kind in "fc" else None for a in args)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    t_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    backward = sum(_pairing(d, t) for d, t in zip(adjoints, tangents, strict=False) if d is not None and t is not None)
    forward = _pairing(dy, tuple(t_y) if isinstance(t_y, tuple) else t_y)
    np.testing.assert_allclose(backward, forward, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES + SYMMETRIC_CASES, ids=case_id)
@pytest.mark.parametrize("seed", [0, 1])
def test_tangent_is_the_transpose_of_the_adjoint(case, seed):
    # for eigh the tangents are not Hermitian: the identity holds for any tangent
    quietly(assert_transpose, case.primitive, case.args, case.kwargs, seed)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import decompositions

    rules = {p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == decompositions.__name__}
    assert rules == {case.primitive for case in CASES} | set(CHECKED_ELSEWHERE)
    missing = [primitive_name(p) for p in rules if REGISTRY.tangent_rule(p) is None]
    assert not missing


# ----- eigh and eigvalsh: symmetrized gradients -----


@pytest.mark.parametrize("case", SYMMETRIC_CASES, ids=case_id)
def test_symmetric_rule(case):
    a = case.args[0]
    y = case.primitive(*case.args, **case.kwargs)
    generator = np.random.default_rng(3)
    dy = _random_like(tuple(y) if isinstance(y, tuple) else y, generator)
    (da,) = REGISTRY.adjoint_rule(case.primitive)(dy, y, *case.args, **case.kwargs)
    substitute = SYMMETRIC_INPUT[case.primitive]
    rest = case.args[1:]

    def loss(s):
        out = substitute(s, *rest, **case.kwargs)
        return _pairing(dy, tuple(out) if isinstance(out, tuple) else out)

    assert_close(f"{case.id} adjoint", da, numerical_gradient(loss, a), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(da, np.conj(np.swapaxes(da, -1, -2)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", SYMMETRIC_CASES, ids=case_id)
def test_symmetric_tangent(case):
    a = case.args[0]
    y = case.primitive(*case.args, **case.kwargs)
    generator = np.random.default_rng(5)
    draw = _random_like(a, generator)
    direction = hermitian_part(draw)
    eps = 1e-6
    rule = REGISTRY.tangent_rule(case.primitive)
    rest = (None,) * (len(case.args) - 1)
    t_y = rule((direction,) + rest, y, *case.args, **case.kwargs)
    up = case.primitive(a + eps * direction, *case.args[1:], **case.kwargs)
    down = case.primitive(a - eps * direction, *case.args[1:], **case.kwargs)
    if isinstance(y, tuple):
        for k in range(len(y)):
            assert_close(f"{case.id} tangent {k}", t_y[k], (up[k] - down[k]) / (2 * eps), rtol=1e-5, atol=1e-7)
    else:
        assert_close(f"{case.id} tangent", t_y, (up - down) / (2 * eps), rtol=1e-5, atol=1e-7)
    # a tangent is read as its Hermitian part
    t_draw = rule((draw,) + rest, y, *case.args, **case.kwargs)
    for got, want in zip(t_draw if isinstance(y, tuple) else [t_draw], t_y if isinstance(y, tuple) else [t_y],
                         strict=True):
        np.testing.assert_array_equal(got, want)


W3, U33 = rand(3), rand(3, 3)


def eigh_objective(a):
    y = np.linalg.eigh(a)
    return np.sum(W3 * y[0] + U33[0] * y[0] ** 2) + np.sum(U33 * y[1] + W3 * y[1] ** 2)


def eigh_upper_objective(a):
    y = np.linalg.eigh(a, "U")
    return np.sum(np.sin(y[0])) + np.sum(U33 * np.cos(y[1]))


def eigh_batched_objective(a):
    y = np.linalg.eigh(a)
    return np.sum(np.sin(y[0])) + np.sum(U33 * y[1] ** 2)


def eigvalsh_objective(a):
    return np.sum(np.sin(np.linalg.eigvalsh(a)) * W3)


def eigvalsh_upper_objective(a):
    return np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 3 * W3)


@pytest.mark.parametrize("f, a", [
    (eigh_objective, symmetric(3, 3)), (eigh_upper_objective, symmetric(3, 3)),
    (eigh_batched_objective, symmetric(2, 3, 3)), (eigvalsh_objective, symmetric(3, 3)),
    (eigvalsh_upper_objective, symmetric(3, 3)),
], ids=["eigh", "eigh-upper", "eigh-batched", "eigvalsh", "eigvalsh-upper"])
def test_symmetric_second_order(f, a):
    """Hessian-vector products along a symmetric direction (the input stays symmetric),
    forward over reverse and reverse over reverse, against differences of the gradient."""
    direction = symmetric(*a.shape)
    gradient = ssad.grad(f)
    eps = 1e-6
    expected = (gradient(a + eps * direction) - gradient(a - eps * direction)) / (2 * eps)
    forward = ssad.jvp(gradient, (a,), (direction,))[1]
    assert_close("forward over reverse", forward, expected, rtol=1e-5, atol=1e-7)

    def pairing(x):
        return np.sum(gradient(x) * direction)

    assert_close("reverse over reverse", ssad.grad(pairing)(a), expected, rtol=1e-5, atol=1e-7)


HERMITIAN_FLAG_CASES = [
    Case(np.linalg.svd, (symmetric(3, 3),), {"compute_uv": False, "hermitian": True}, id="svd-values-hermitian"),
    Case(np.linalg.svd, (symmetric(3, 3) + 5 * np.eye(3),), {"hermitian": True}, id="svd-hermitian"),
    Case(np.linalg.pinv, (symmetric(3, 3),), {"hermitian": True}, id="pinv-hermitian"),
]


@pytest.mark.parametrize("case", HERMITIAN_FLAG_CASES, ids=case_id)
def test_hermitian_flag_gives_the_symmetrized_gradient(case):
    a = case.args[0]
    y = case.primitive(a, **case.kwargs)
    dy = _random_like(tuple(y) if isinstance(y, tuple) else y, np.random.default_rng(8))
    (da,) = REGISTRY.adjoint_rule(case.primitive)(dy, y, a, **case.kwargs)

    def loss(s):
        out = case.primitive(hermitian_part(s), **case.kwargs)
        return _pairing(dy, tuple(out) if isinstance(out, tuple) else out)

    assert_close(case.id, da, numerical_gradient(loss, a), rtol=1e-5, atol=1e-7)
    quietly(assert_transpose, case.primitive, case.args, case.kwargs)


def gauge_invariant_eigh_loss(a):
    """A loss of the eigenvectors that no phase of theirs changes: |v|^2 and v_k v_k^H."""
    w, v = np.linalg.eigh(hermitian_part(a))
    weights = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.8], [-0.5, 0.9, 1.3]])
    projector = v[:, :1] @ np.conj(v[:, :1]).T
    return np.sum(np.sin(w)) + np.sum(np.abs(v) ** 2 * weights) + np.real(np.sum(projector * weights))


def test_complex_eigh_with_a_gauge_invariant_loss():
    a = hermitian(3)
    got = ssad.grad(gauge_invariant_eigh_loss)(a)
    assert_close("eigh complex", got, numerical_gradient(gauge_invariant_eigh_loss, a), rtol=1e-5, atol=1e-7)
    direction = hermitian(3) - np.diag(np.arange(3) * 1.5)
    _, d_loss = ssad.jvp(gauge_invariant_eigh_loss, (a,), (direction,))
    eps = 1e-6
    f = gauge_invariant_eigh_loss
    expected = (f(a + eps * direction) - f(a - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(d_loss, expected, rtol=1e-6)


def test_complex_eigh_vectors_have_the_parallel_gauge():
    # the documented gauge (as JAX): Im(v^H dv) = 0 on the diagonal
    a = hermitian(4)
    y = np.linalg.eigh(a)
    _, d_v = REGISTRY.tangent_rule(np.linalg.eigh)((hermitian(4),), y, a)
    np.testing.assert_allclose(np.imag(np.diagonal(np.conj(y[1]).T @ d_v)), 0.0, atol=1e-12)


# ----- degenerate points -----


def eigenvector_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(v * np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [1.5, 0.2, -0.7]]))


def eigenvalue_loss(a):
    return np.sum(np.linalg.eigvalsh(a) * np.array([1.0, 2.0, 3.0]))


def test_repeated_eigenvalues_give_no_finite_eigenvector_gradient():
    # the derivative of the eigenvectors is undefined there: inf or NaN (as JAX), never a finite guess
    a = np.diag([1.0, 1.0, 2.0])
    with np.errstate(all="ignore"):
        g = ssad.grad(eigenvector_loss)(a)
    assert not np.all(np.isfinite(g))


def test_repeated_eigenvalues_keep_eigenvalue_gradients_finite():
    a = np.diag([1.0, 1.0, 2.0])
    with np.errstate(all="raise"):
        g = ssad.grad(eigenvalue_loss)(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(np.trace(g), 6.0, rtol=1e-12)  # the derivative along the identity


def nuclear_by_svd(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def test_a_zero_singular_value_gives_finite_gradients():
    a = np.outer([1.0, 2.0, -1.0], [0.5, 1.0, 2.0]) + np.outer([0.3, -1.0, 0.4], [1.0, -0.5, 0.2])  # rank 2
    with np.errstate(all="raise"):
        g = ssad.grad(nuclear_by_svd)(a)
        (d_a,) = REGISTRY.adjoint_rule(np.linalg.svd)(
            tuple(np.ones(np.shape(p)) for p in np.linalg.svd(a)), np.linalg.svd(a), a
        )
    u, s, vh = np.linalg.svd(a)
    np.testing.assert_allclose(g, u @ vh, rtol=1e-10, atol=1e-12)
    assert np.all(np.isfinite(d_a))


def test_lstsq_refuses_a_rank_deficient_matrix():
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0])
    y = np.linalg.lstsq(a, np.ones(4))
    with pytest.raises(ssad.SsadError, match="rank 1"):
        REGISTRY.adjoint_rule(np.linalg.lstsq)(tuple(np.zeros(np.shape(p)) for p in y), y, a, np.ones(4))


def test_qr_refuses_raw_mode():
    a = rand(3, 2)
    y = np.linalg.qr(a, mode="raw")
    with pytest.raises(ssad.SsadError, match="mode='raw'"):
        REGISTRY.adjoint_rule(np.linalg.qr)(tuple(np.ones(np.shape(p)) for p in y), y, a, mode="raw")


def low_rank_pinv(b, c):
    return np.sum(np.sin(np.linalg.pinv(b @ c)))


def test_pinv_of_a_rank_deficient_matrix_along_rank_preserving_moves():
    # a = b c has rank 2 for every b (4x2) and c (2x3): the rank stays constant
    b, c = rand(4, 2), rand(2, 3)
    d_b, d_c = ssad.grad(low_rank_pinv, wrt=(0, 1))(b, c)
    assert_close("d_b", d_b, numerical_gradient(lambda s: low_rank_pinv(s, c), b), rtol=1e-5, atol=1e-7)
    assert_close("d_c", d_c, numerical_gradient(lambda s: low_rank_pinv(b, s), c), rtol=1e-5, atol=1e-7)


# ----- gauges of complex and non-square factors -----


def gauge_invariant_svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    first = u[:, :1] @ vh[:1, :]  # u_k v_k^H: no phase of the pair changes it
    moduli = np.sum(np.abs(u) ** 2 * W42) + np.sum(np.abs(vh) ** 2 * W22)
    return np.sum(np.sin(s)) + moduli + np.real(np.sum(first * C42))


W42, W22, C42 = rand(4, 2), rand(2, 2), crand(4, 2)


def test_complex_svd_with_a_gauge_invariant_loss():
    a = crand(4, 2)
    got = ssad.grad(gauge_invariant_svd_loss)(a)
    assert_close("svd complex", got, numerical_gradient(gauge_invariant_svd_loss, a), rtol=1e-5, atol=1e-7)
    direction = crand(4, 2)
    eps = 1e-6
    f = gauge_invariant_svd_loss
    expected = (f(a + eps * direction) - f(a - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(ssad.jvp(gauge_invariant_svd_loss, (a,), (direction,))[1], expected, rtol=1e-6)


def complement_projector_loss(a):
    """Reads the extra rows of vh (full_matrices=True, wide) only through their span."""
    u, s, vh = np.linalg.svd(a)
    rest = vh[2:, :]
    return np.sum(np.sin(rest.T @ rest) * C55) + np.sum(s)


def complete_qr_projector_loss(a):
    q, r = np.linalg.qr(a, mode="complete")
    rest = q[:, 2:]
    return np.sum(np.sin(rest @ rest.T) * C55) + np.sum(np.sin(r))


C55 = rand(5, 5)


@pytest.mark.parametrize("f, a", [(complement_projector_loss, rand(2, 5)), (complete_qr_projector_loss, rand(5, 2))],
                         ids=["svd", "qr"])
def test_extra_columns_of_full_factors_through_their_span(f, a):
    assert_close(f.__name__, ssad.grad(f)(a), numerical_gradient(f, a), rtol=1e-5, atol=1e-7)
    h = ssad.hessian(f)(a)
    expected = np.stack([numerical_gradient(lambda s, k=k: ssad.grad(f)(s).ravel()[k], a) for k in range(a.size)])
    np.testing.assert_allclose(h.reshape(a.size, a.size), expected.reshape(a.size, a.size), rtol=1e-5, atol=1e-6)


def test_eig_of_a_complex_matrix_matches_differences_for_any_loss():
    # LAPACK's normalization (unit norm, largest entry real) is differentiated exactly
    a = crand(3, 3)
    check_rule(np.linalg.eig, a, seed=4)
    check_tangent(np.linalg.eig, a, seed=4)


# ----- second order of the important variants (the first case of each primitive runs in
# tests/rules/test_second_order.py) -----

SECOND_ORDER = [
    Case(np.linalg.svd, (M33,), id="svd-square-full"),
    Case(np.linalg.svd, (M34,), {"full_matrices": False}, id="svd-wide-reduced"),
    Case(np.linalg.svd, (rand(4, 3),), {"compute_uv": False}, id="svd-values"),
    Case(np.linalg.eig, (symmetric(3, 3) + 0.3 * rand(3, 3),), id="eig-real-spectrum"),
    Case(np.linalg.eig, (crand(3, 3),), id="eig-complex-matrix"),
    Case(np.linalg.eigvals, (crand(3, 3),), id="eigvals-complex"),
    Case(np.linalg.qr, (rand(4, 3),), {"mode": "complete"}, id="qr-complete"),
    Case(np.linalg.qr, (M34,), id="qr-wide"),
    Case(np.linalg.qr, (M43,), {"mode": "r"}, id="qr-r"),
    Case(np.linalg.pinv, (M34,), id="pinv-wide"),
    Case(np.linalg.lstsq, (rand(5, 3), rand(5, 2)), id="lstsq-matrix"),
    Case(np.linalg.matrix_power, (well_conditioned(3, 3), -3), id="matrix_power-negative"),
]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=case_id)
def test_second_order_of_variants(case):
    quietly(check_second_order, case.primitive, *case.args, **case.kwargs)


# ----- against autograd -----


def _sym(x):
    return (x + x.T) / 2


def _autograd_eigh(a):
    w, v = anp.linalg.eigh(_sym(a))
    return anp.sum(anp.sin(v)) + anp.sum(w**2)


def _autograd_svd(a):
    u, s, vh = anp.linalg.svd(a, full_matrices=False)
    return anp.sum(anp.sin(u)) + anp.sum(s**3)


def _autograd_eig(a):
    w, v = anp.linalg.eig(a)
    return anp.sum(anp.sin(v)) + anp.sum(w**2)


AUTOGRAD_PAIRS = [
    ("eigh", _autograd_eigh, symmetric(4, 4)),
    ("svd", _autograd_svd, rand(4, 3)),
    ("svd-values", lambda a: anp.sum(anp.sin(anp.linalg.svd(a, compute_uv=False))), rand(3, 5)),
    ("eig-real", _autograd_eig, symmetric(3, 3) + 0.3 * rand(3, 3)),
    ("pinv", lambda a: anp.sum(anp.sin(anp.linalg.pinv(a))), rand(3, 5)),
    ("norm-nuc", lambda a: anp.sin(anp.linalg.norm(a, "nuc")), rand(4, 3)),
    ("inv", lambda a: anp.sum(anp.sin(anp.linalg.inv(a))), well_conditioned(3, 3)),
    ("det", lambda a: anp.sin(anp.linalg.det(a)), well_conditioned(3, 3) / 3),
    ("slogdet", lambda a: anp.sin(anp.linalg.slogdet(a)[1]), well_conditioned(3, 3)),
    ("cholesky", lambda a: anp.sum(anp.sin(anp.linalg.cholesky(_sym(a)))), symmetric(3, 3) + 3 * np.eye(3)),
]


def eigh_loss(a):
    w, v = np.linalg.eigh(_sym(a))
    return np.sum(np.sin(v)) + np.sum(w**2)


def svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.sin(u)) + np.sum(s**3)


def svd_values_loss(a):
    return np.sum(np.sin(np.linalg.svd(a, compute_uv=False)))


def eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.sin(v)) + np.sum(w**2)


def pinv_loss(a):
    return np.sum(np.sin(np.linalg.pinv(a)))


def nuclear_loss(a):
    return np.sin(np.linalg.norm(a, "nuc"))


def inv_loss(a):
    return np.sum(np.sin(np.linalg.inv(a)))


def det_loss(a):
    return np.sin(np.linalg.det(a))


def slogdet_loss(a):
    return np.sin(np.linalg.slogdet(a)[1])


def cholesky_loss(a):
    return np.sum(np.sin(np.linalg.cholesky(_sym(a))))


SSAD_LOSSES = {
    "eigh": eigh_loss, "svd": svd_loss, "svd-values": svd_values_loss, "eig-real": eig_loss, "pinv": pinv_loss,
    "norm-nuc": nuclear_loss, "inv": inv_loss,
    "det": det_loss, "slogdet": slogdet_loss, "cholesky": cholesky_loss,
}


@pytest.mark.parametrize("name, with_autograd, a", AUTOGRAD_PAIRS, ids=[p[0] for p in AUTOGRAD_PAIRS])
def test_against_autograd(name, with_autograd, a):
    f = SSAD_LOSSES[name]
    np.testing.assert_allclose(f(a), with_autograd(a), rtol=1e-12)
    want = autograd.grad(with_autograd)(a)
    got = ssad.grad(f)(a)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    assert_close(name, got, numerical_gradient(f, a), rtol=1e-5, atol=1e-7)
    # second order: a Hessian-vector product both ways
    v = rand(*a.shape)
    want_hvp = autograd.grad(lambda x: anp.sum(autograd.grad(with_autograd)(x) * v))(a)
    got_hvp = ssad.jvp(ssad.grad(f), (a,), (v,))[1]
    np.testing.assert_allclose(got_hvp, want_hvp, rtol=1e-6, atol=1e-8)


# ----- end to end: user functions, both modes and the Hessian -----


def spectral_features(a, weights):
    """A small model reading several decompositions the way users write them."""
    q, r = np.linalg.qr(a)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    w, v = np.linalg.eigh(a.T @ a)
    low_rank = (u[:, :2] * s[:2]) @ vh[:2, :]
    return (np.sum(np.sin(r) * weights) + np.sum(np.log(s)) + np.sum(np.cos(low_rank))
            + np.sum(w[-1] * v[:, -1] ** 2) + np.linalg.norm(a, ord="nuc") + np.sum(np.linalg.pinv(a) ** 2))


def powers_and_solutions(a, b):
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    m = a.T @ a
    return np.sum(np.sin(x)) + np.sum(residuals) + np.sum(np.linalg.matrix_power(m, n=2)) * 0.01 + np.linalg.norm(a, -2)


def _hessian_by_differences(f, a, *rest):
    gradient = ssad.grad(f)
    return np.stack([numerical_gradient(lambda s, k=k: gradient(s, *rest).ravel()[k], a) for k in range(a.size)])


@pytest.mark.parametrize("f, args", [
    (spectral_features, (rand(5, 3), rand(3, 3))),
    (powers_and_solutions, (rand(5, 3), rand(5))),
], ids=["spectral_features", "powers_and_solutions"])
def test_end_to_end(f, args):
    a, rest = args[0], args[1:]
    got = ssad.grad(f)(a, *rest)
    assert_close(f.__name__, got, numerical_gradient(lambda s: f(s, *rest), a), rtol=1e-5, atol=1e-7)
    direction = rand(*a.shape)
    _, d_f = ssad.jvp(f, (a, *rest), (direction,) + tuple(np.zeros_like(r) for r in rest))
    np.testing.assert_allclose(d_f, np.sum(got * direction), rtol=1e-9)
    h = ssad.hessian(f)(a, *rest)
    np.testing.assert_allclose(h.reshape(a.size, a.size), _hessian_by_differences(f, a, *rest).reshape(a.size, a.size),
                               rtol=1e-5, atol=1e-6)
