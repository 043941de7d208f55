"""Numerical checks of the linear algebra rules (ssad/rules/linalg.py)."""

import operator

import numpy as np
import pytest

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY, primitive_name
from ssad.rules.linalg import cofactors, differentiable_singular_values, einsum_of, invertible_part
from ssad.testing import assert_close, check_rule, check_tangent, numerical_gradient

from .cases import Case, case_id

rng = np.random.default_rng(7031)


def rand(*shape):
    """Values in ±[0.5, 1.5]: away from zero and from ties."""
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def well_conditioned(*shape):
    """Square matrices (or a stack of them) with a dominant diagonal."""
    n = shape[-1]
    return rng.uniform(-0.5, 0.5, size=shape) + n * np.eye(n)


def spd(*shape):
    """Symmetric positive-definite matrices (or a stack of them)."""
    g = rng.uniform(-1.0, 1.0, size=shape)
    return g @ np.swapaxes(g, -1, -2) + shape[-1] * np.eye(shape[-1])


def cholesky_of_symmetric_part(a, upper=False):
    """np.linalg.cholesky((a + a^T) / 2): a function of every entry of `a`, whose
    gradient is the symmetrized gradient of cholesky at a symmetric `a`."""
    return np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2, upper=upper)


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2
RANK_ONE = np.outer([1.0, -2.0, 0.5, 1.5], [2.0, 1.0, -1.0, 0.5])
_own = np.random.default_rng(5)  # the inputs of the cofactors checks, apart from the stream above
NEARLY_SINGULAR = SINGULAR + 1e-9 * _own.uniform(-1.0, 1.0, (3, 3))
REGULAR = _own.uniform(-0.5, 0.5, (3, 3)) + 3 * np.eye(3)
REGULAR_STACK = (_own.uniform(-0.5, 0.5, (2, 3, 3)) + 3 * np.eye(3)) * np.array([1.0, -1.0])[:, None, None]
V3, W3, V4 = rand(3), rand(3), rand(4)
M34, M43, M42, M33 = rand(3, 4), rand(4, 3), rand(4, 2), rand(3, 3)
B534, B542 = rand(5, 3, 4), rand(5, 4, 2)

CASES = [
    # ----- dot: every mix of 1-D and 2-D operands, N-D and scalars -----
    Case(np.dot, (V3, W3), id="dot-vec-vec"),
    Case(np.dot, (M34, V4), id="dot-mat-vec"),
    Case(np.dot, (V3, M34), id="dot-vec-mat"),
    Case(np.dot, (M34, M42), id="dot-mat-mat"),
    Case(np.dot, (2.5, M34), id="dot-scalar-mat"),
    Case(np.dot, (M34, 1.5), id="dot-mat-scalar"),
    Case(np.dot, (B534, M42), id="dot-3d-mat"),
    Case(np.dot, (M34, B542), id="dot-mat-3d"),
    Case(np.dot, (B534, V4), id="dot-3d-vec"),
    Case(np.ndarray.dot, (M34, M42), id="ndarray.dot"),
    Case(np.ndarray.dot, (V4, M42), id="ndarray.dot-vec-mat"),
    # ----- matmul: 1-D and 2-D mixes, stacks, broadcasting -----
    Case(operator.matmul, (M34, M34.T), id="operator-matmul"),
    Case(np.matmul, (V3, W3), id="matmul-vec-vec"),
    Case(np.matmul, (M34, V4), id="matmul-mat-vec"),
    Case(np.matmul, (V3, M34), id="matmul-vec-mat"),
    Case(np.matmul, (M34, M42), id="matmul-mat-mat"),
    Case(np.matmul, (B534, M42), id="matmul-batch-mat"),
    Case(np.matmul, (M34, B542), id="matmul-mat-batch"),
    Case(np.matmul, (B534, B542), id="matmul-batch-batch"),
    Case(np.matmul, (rand(2, 1, 3, 4), rand(5, 4, 2)), id="matmul-broadcast-both"),
    Case(np.matmul, (B534, V4), id="matmul-batch-vec"),
    Case(np.matmul, (V4, B542), id="matmul-vec-batch"),
    # ----- other products -----
    Case(np.vdot, (M34, rand(12)), id="vdot"),
    Case(np.vdot, (V3, W3), id="vdot-vec"),
    Case(np.inner, (V3, W3), id="inner-vec-vec"),
    Case(np.inner, (M34, rand(2, 4)), id="inner-mat-mat"),
    Case(np.inner, (B534, V4), id="inner-3d-vec"),
    Case(np.inner, (1.5, M34), id="inner-scalar"),
    Case(np.outer, (V3, V4), id="outer"),
    Case(np.outer, (M34, rand(2, 2)), id="outer-flattens"),
    Case(np.kron, (rand(2, 3), rand(3, 2)), id="kron"),
    Case(np.kron, (V3, M42), id="kron-mixed-rank"),
    # ----- contractions -----
    Case(np.tensordot, (B534, rand(3, 4, 2)), {"axes": ([1, 2], [0, 1])}, id="tensordot-pairs"),
    Case(np.tensordot, (B534, rand(4, 3, 2), ([2, 1], [0, 1])), id="tensordot-crossed"),
    Case(np.tensordot, (B534, rand(3, 4, 2)), {"axes": 2}, id="tensordot-int"),
    Case(np.tensordot, (M34, rand(4, 2)), {"axes": 1}, id="tensordot-one"),
    Case(np.tensordot, (V3, V4, 0), id="tensordot-outer"),
    Case(np.tensordot, (rand(2, 3, 4), rand(4, 2)), {"axes": (-1, 0)}, id="tensordot-int-pair"),
    Case(np.einsum, ("ij,jk->ik", M34, M42), id="einsum-matmul"),
    Case(np.einsum, ("ii->", M33), id="einsum-trace"),
    Case(np.einsum, ("ii->i", M33), id="einsum-diagonal"),
    Case(np.einsum, ("ij->", M34), id="einsum-sum"),
    Case(np.einsum, ("ij->j", M34), id="einsum-column-sums"),
    Case(np.einsum, ("ij->ji", M34), id="einsum-transpose"),
    Case(np.einsum, ("i,i->", V3, W3), id="einsum-dot"),
    Case(np.einsum, ("i,j->ij", V3, V4), id="einsum-outer"),
    Case(np.einsum, ("bij,bjk->bik", B534, B542), id="einsum-batched"),
    Case(np.einsum, ("ij,jk,kl->il", M34, M42, rand(2, 3)), id="einsum-three"),
    Case(np.einsum, ("ij,jk,kl->il", M34, M42, rand(2, 3)), {"optimize": True},
         id="einsum-three-optimize"),
    Case(np.einsum, ("ij,j->", M34, V4), id="einsum-scalar-out"),
    Case(np.einsum, ("ij,jk", M34, M42), id="einsum-implicit"),
    Case(np.einsum, ("ij, kj -> ik", M34, rand(2, 4)), id="einsum-spaces"),
    Case(np.einsum, ("...ij,...jk->...ik", rand(1, 3, 4), B542), id="einsum-ellipsis-broadcast"),
    Case(np.einsum, ("...ij,jk->...ik", B534, M42), id="einsum-ellipsis"),
    Case(np.einsum, ("iij->j", rand(3, 3, 2)), id="einsum-partial-diagonal"),
    Case(np.einsum, ("ij,ij->i", M34, rand(3, 4)), id="einsum-rowwise-dot"),
    Case(np.einsum, (M34, [0, 1], M42, [1, 2]), id="einsum-sublists"),
    Case(np.einsum, (M34, [0, 1], M42, [1, 2], [2, 0]), id="einsum-sublists-output"),
    Case(np.einsum, (B534, [Ellipsis, 0, 1], V4, [1]), id="einsum-sublists-ellipsis"),
    Case(np.einsum, (M33, [0, 0]), id="einsum-sublists-trace"),
    # ----- NumPy 2's vector and matrix products -----
    Case(np.matvec, (B534, V4), id="matvec-broadcast"),
    Case(np.matvec, (M34, rand(2, 4)), id="matvec-stack-of-vectors"),
    Case(np.vecmat, (V3, M34), id="vecmat"),
    Case(np.vecmat, (rand(5, 3), B534), id="vecmat-stack"),
    Case(np.vecmat, (V3 + 0.5j * W3, M34 - 0.3j * M34), id="vecmat-complex"),
    Case(np.vecdot, (M34, rand(3, 4)), id="vecdot"),
    Case(np.vecdot, (M34, V3), {"axis": 0}, id="vecdot-axis"),
    Case(np.vecdot, (V3 + 0.5j * W3, W3 - 0.2j * V3), id="vecdot-complex"),
    Case(np.matrix_transpose, (B534,), id="matrix_transpose"),
    Case(np.trace, (M33,), id="trace"),
    Case(np.trace, (M34, 1), id="trace-offset"),
    Case(np.trace, (M34,), {"offset": -1}, id="trace-negative-offset"),
    Case(np.trace, (rand(2, 3, 3),), {"axis1": 1, "axis2": 2}, id="trace-batched"),
    Case(np.trace, (rand(3, 2, 4), 0, 2, 0), id="trace-axes-positional"),
    Case(np.trace, (M34,), {"axis1": 1, "axis2": 0}, id="trace-swapped-axes"),
    Case(np.ndarray.trace, (M33,), id="ndarray.trace"),
    Case(np.ndarray.trace, (rand(2, 4, 3), 1, 1, 2), id="ndarray.trace-offset-axes"),
    # ----- norms -----
    Case(np.linalg.norm, (V4,), id="norm-vector"),
    Case(np.linalg.norm, (rand(2, 3, 4),), id="norm-flattened"),
    Case(np.linalg.norm, (rand(2, 3, 4),), {"keepdims": True}, id="norm-flattened-keepdims"),
    Case(np.linalg.norm, (V4, 1), id="norm-l1"),
    Case(np.linalg.norm, (V4, np.inf), id="norm-inf"),
    Case(np.linalg.norm, (V4, -np.inf), id="norm-neg-inf"),
    Case(np.linalg.norm, (V4, 3), id="norm-l3"),
    Case(np.linalg.norm, (V4, 0.5), id="norm-half"),
    Case(np.linalg.norm, (M34,), {"axis": 1}, id="norm-axis"),
    Case(np.linalg.norm, (M34, None, -2, True), id="norm-axis-neg-keepdims-positional"),
    Case(np.linalg.norm, (M34,), {"ord": 1, "axis": 0}, id="norm-l1-axis"),
    Case(np.linalg.norm, (M34,), {"ord": np.inf, "axis": 1, "keepdims": True}, id="norm-inf-axis"),
    Case(np.linalg.norm, (rand(2, 3, 4),), {"axis": (2,)}, id="norm-axis-1tuple"),
    Case(np.linalg.norm, (M34, "fro"), id="norm-fro"),
    Case(np.linalg.norm, (rand(2, 3, 4), "fro", (0, 2)), id="norm-fro-axes"),
    Case(np.linalg.norm, (rand(2, 3, 4),), {"axis": (1, 2), "keepdims": True},
         id="norm-matrix-keepdims"),
    Case(np.linalg.norm, (M34, "nuc"), id="norm-nuc"),
    Case(np.linalg.norm, (M34, 2), id="norm-spectral"),
    Case(np.linalg.norm, (M34, -2), id="norm-smallest-singular"),
    Case(np.linalg.norm, (M34, 1), id="norm-matrix-1"),
    Case(np.linalg.norm, (M34, -1), id="norm-matrix-neg-1"),
    Case(np.linalg.norm, (M34, np.inf), id="norm-matrix-inf"),
    Case(np.linalg.norm, (M34, -np.inf), id="norm-matrix-neg-inf"),
    Case(np.linalg.norm, (rand(2, 3, 4), np.inf, (2, 1)), id="norm-matrix-inf-axes-reversed"),
    Case(np.linalg.norm, (rand(2, 4, 3), "nuc", (0, 1)), id="norm-nuc-axes"),
    # ----- inverses, determinants, solves -----
    Case(np.linalg.inv, (well_conditioned(3, 3),), id="inv"),
    Case(np.linalg.inv, (well_conditioned(2, 3, 3),), id="inv-batched"),
    Case(np.linalg.det, (well_conditioned(3, 3),), id="det"),
    Case(np.linalg.det, (well_conditioned(2, 3, 3),), id="det-batched"),
    Case(np.linalg.det, (-well_conditioned(3, 3),), id="det-negative"),
    Case(np.linalg.slogdet, (-well_conditioned(3, 3),), id="slogdet"),
    Case(np.linalg.slogdet, (well_conditioned(2, 3, 3),), id="slogdet-batched"),
    # ----- determinants at singular matrices: the adjugate, through the SVD -----
    Case(np.linalg.det, (SINGULAR,), id="det-singular"),
    Case(np.linalg.det, (np.stack([SINGULAR, REGULAR, RANK_ONE[:3, :3]]),), id="det-batched-singular"),
    Case(cofactors, (REGULAR, np.linalg.det(REGULAR)), id="cofactors"),
    Case(cofactors, (REGULAR_STACK, np.linalg.det(REGULAR_STACK)), id="cofactors-batched"),
    Case(cofactors, (NEARLY_SINGULAR, np.linalg.det(NEARLY_SINGULAR)), id="cofactors-nearly-singular"),
    # at a singular matrix the determinant is exactly 0: given as the integer 0, the checks do not move it
    Case(cofactors, (SINGULAR, 0), id="cofactors-singular"),
    Case(cofactors, (RANK_ONE, 0), id="cofactors-rank-one"),
    Case(cofactors, (np.zeros((3, 3)), 0), id="cofactors-zero"),
    Case(cofactors, (np.stack([SINGULAR, 2.0 * np.eye(3)]), np.array([0, 8])), id="cofactors-batched-singular"),
    # the sign (an integer here, so the checks do not move it) marks the singular matrix
    Case(invertible_part, (np.stack([SINGULAR, REGULAR]), np.array([0, 1])), id="invertible_part"),
    Case(differentiable_singular_values, (np.array([3.0, 2.0, 0.5]),), id="differentiable_singular_values"),
    Case(np.linalg.solve, (well_conditioned(3, 3), V3), id="solve-vector"),
    Case(np.linalg.solve, (well_conditioned(3, 3), rand(3, 2)), id="solve-matrix"),
    Case(np.linalg.solve, (well_conditioned(4, 3, 3), rand(4, 3, 2)), id="solve-batched"),
    Case(np.linalg.solve, (well_conditioned(4, 3, 3), V3), id="solve-batched-shared-vector"),
    Case(np.linalg.solve, (well_conditioned(3, 3), rand(4, 3, 2)), id="solve-shared-matrix"),
    # ----- factorizations (symmetrized gradient, see test_rule) -----
    Case(np.linalg.cholesky, (spd(3, 3),), id="cholesky"),
    Case(np.linalg.cholesky, (spd(2, 4, 4),), id="cholesky-batched"),
    Case(np.linalg.cholesky, (spd(3, 3),), {"upper": True}, id="cholesky-upper"),
]


# einsum_of, the list form the einsum rules compute with, is checked below.
CHECKED_ELSEWHERE = [einsum_of]


@pytest.mark.parametrize("subscripts, operands", [
    ("ij,jk->ik", [M34, M42]), ("ii->i", [M33]), ("i,j->ij", [V3, V4]), ("ij,kj->ik", [rand(1, 4), M34]),
], ids=["matmul", "diagonal", "outer", "broadcast-row"])
def test_einsum_of_a_list_against_differences(subscripts, operands):
    y = einsum_of(subscripts, operands)
    rng = np.random.default_rng(0)
    dy = rng.uniform(-1.5, 1.5, size=np.shape(y))
    _, adjoints = REGISTRY.adjoint_rule(einsum_of)(dy, y, subscripts, operands)
    tangents = [rng.uniform(-1.0, 1.0, size=np.shape(op)) for op in operands]
    tangent = REGISTRY.tangent_rule(einsum_of)((None, tangents), y, subscripts, operands)
    for k, op in enumerate(operands):

        def inner(value, k=k):
            moved = list(operands)
            moved[k] = value
            return np.sum(dy * einsum_of(subscripts, moved))

        assert_close(f"einsum_of operand {k}", adjoints[k], numerical_gradient(inner, op), rtol=1e-6, atol=1e-8)
    step = 1e-6
    up = einsum_of(subscripts, [op + step * t for op, t in zip(operands, tangents, strict=True)])
    down = einsum_of(subscripts, [op - step * t for op, t in zip(operands, tangents, strict=True)])
    assert_close("einsum_of tangent", tangent, (up - down) / (2 * step), rtol=1e-6, atol=1e-8)


# Primitives whose rule returns the gradient restricted to symmetric perturbations.
SYMMETRIC_INPUT = {np.linalg.cholesky: cholesky_of_symmetric_part}


def check_symmetric_rule(primitive, a, seed=0, **kwargs):
    """Check a rule that returns a symmetrized gradient: compare it with finite
    differences of primitive((a + a^T) / 2) in every entry of `a`, which at a
    symmetric `a` is exactly the symmetrized gradient."""
    symmetric_version = SYMMETRIC_INPUT[primitive]
    y = primitive(a, **kwargs)
    dy = np.random.default_rng(seed).uniform(-1.5, 1.5, size=np.shape(y))
    (da,) = REGISTRY.adjoint_rule(primitive)(dy, y, a, **kwargs)
    expected = numerical_gradient(lambda s: np.sum(dy * symmetric_version(s, **kwargs)), a)
    assert_close(f"{primitive.__name__} argument 0", da, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(da, np.swapaxes(da, -1, -2))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    if case.primitive in SYMMETRIC_INPUT:
        check_symmetric_rule(case.primitive, *case.args, **case.kwargs)
    else:
        check_rule(case.primitive, *case.args, **case.kwargs)


def test_cases_cover_every_rule_of_the_module():
    from ssad.rules import linalg

    primitives = REGISTRY.adjoint_primitives()
    rules = {p for p in primitives if REGISTRY.adjoint_rule(p).__module__ == linalg.__name__}
    assert rules == {case.primitive for case in CASES} | set(CHECKED_ELSEWHERE)


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def nuclear_norm(a):
    return np.linalg.norm(a, "nuc")


def l1_matrix_norm(a):
    return np.linalg.norm(a, 1)


def smallest_singular_norm(a):
    return np.linalg.norm(a, -2)


def batched_nuclear_norm(a):
    return np.sum(np.sin(np.linalg.norm(a, "nuc", axis=(0, 2))))


@pytest.mark.parametrize("f, a", [
    (spectral_norm, M34), (nuclear_norm, M34), (smallest_singular_norm, M34), (batched_nuclear_norm, rand(3, 2, 4)),
], ids=["2", "nuc", "-2", "nuc-axes"])
def test_second_derivatives_of_singular_value_norms(f, a):
    # their gradient is made of singular vectors, differentiated by the rules of np.linalg.svd
    gradient = ssad.grad(f)
    expected = np.stack([numerical_gradient(lambda s, k=k: gradient(s).ravel()[k], a) for k in range(a.size)])
    expected = expected.reshape(a.shape + a.shape)
    np.testing.assert_allclose(ssad.hessian(f)(a), expected, rtol=1e-5, atol=1e-7)
    direction = rand(*a.shape)
    np.testing.assert_allclose(
        ssad.grad(lambda s: np.sum(gradient(s) * direction))(a),
        np.tensordot(expected, direction, a.ndim), rtol=1e-5, atol=1e-7,
    )


def test_second_derivatives_of_the_other_matrix_norms():
    H = ssad.hessian(l1_matrix_norm)(M34)
    assert H.shape == (3, 4, 3, 4)
    np.testing.assert_array_equal(H, 0.0)  # piecewise linear, away from ties


# ----- Exact values and conventions -----


@pytest.mark.parametrize(
    "ord, axis",
    [(None, None), (2, None), (1, None), (np.inf, None), (-np.inf, None), (3, None),
     ("fro", (0, 1)), (None, 1), (1, (0, 1)), (np.inf, (0, 1))],
)
def test_norm_at_zero_is_a_zero_subgradient(ord, axis):
    x = np.zeros((2, 3)) if axis is not None else np.zeros(3)
    y = np.linalg.norm(x, ord, axis)
    (dx,) = REGISTRY.adjoint_rule(np.linalg.norm)(np.ones_like(y), y, x, ord, axis)
    np.testing.assert_array_equal(dx, np.zeros_like(x))


def test_norm_with_a_zero_row():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    y = np.linalg.norm(x, axis=1)
    (dx,) = REGISTRY.adjoint_rule(np.linalg.norm)(np.array([1.0, 2.0]), y, x, axis=1)
    np.testing.assert_allclose(dx, [[0.0, 0.0], [0.6 * 2, 0.8 * 2]], rtol=1e-15)


def test_norm_inf_ties_split_evenly():
    x = np.array([2.0, -2.0, 1.0])
    (dx,) = REGISTRY.adjoint_rule(np.linalg.norm)(1.0, np.linalg.norm(x, np.inf), x, np.inf)
    np.testing.assert_array_equal(dx, [0.5, -0.5, 0.0])


def test_slogdet_sign_carries_no_gradient():
    a = -well_conditioned(3, 3)
    y = np.linalg.slogdet(a)
    rule = REGISTRY.adjoint_rule(np.linalg.slogdet)
    (da,) = rule((123.0, 0.0), y, a)
    np.testing.assert_array_equal(da, np.zeros((3, 3)))
    (da,) = rule((0.0, 1.0), y, a)
    np.testing.assert_allclose(da, np.linalg.inv(a).T, rtol=1e-12)


def test_slogdet_tuple_adjoint_against_finite_differences():
    a = well_conditioned(2, 3, 3) * np.array([1.0, -1.0])[:, None, None]
    d_logabs = rand(2)
    (da,) = REGISTRY.adjoint_rule(np.linalg.slogdet)((rand(2), d_logabs), np.linalg.slogdet(a), a)
    expected = numerical_gradient(lambda s: np.sum(d_logabs * np.linalg.slogdet(s)[1]), a)
    assert_close("slogdet argument 0", da, expected, rtol=1e-5, atol=1e-7)


def _adjugate_transposed(a):
    """The cofactor matrix from its definition, signed minors."""
    n = a.shape[-1]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) for j in range(n)]
                     for i in range(n)])


@pytest.mark.parametrize("a", [SINGULAR, RANK_ONE, np.zeros((3, 3)), NEARLY_SINGULAR, REGULAR],
                         ids=["rank-2", "rank-1", "zero", "nearly-singular", "regular"])
def test_det_adjoint_is_the_cofactor_matrix_at_singular_matrices_too(a):
    (da,) = REGISTRY.adjoint_rule(np.linalg.det)(1.0, np.linalg.det(a), a)
    np.testing.assert_allclose(da, _adjugate_transposed(a), rtol=1e-9, atol=1e-12)
    t = rand(*a.shape)
    assert REGISTRY.tangent_rule(np.linalg.det)((t,), np.linalg.det(a), a) == pytest.approx(
        np.sum(_adjugate_transposed(a) * t), abs=1e-12)


def test_slogdet_rules_at_a_singular_matrix():
    a = np.stack([SINGULAR, REGULAR])
    y = np.linalg.slogdet(a)
    assert y[0][0] == 0.0
    # the sign alone (and log|det| of the regular matrix) carries an adjoint: no inverse of the singular one
    (da,) = REGISTRY.adjoint_rule(np.linalg.slogdet)((np.ones(2), np.array([0.0, 2.0])), y, a)
    np.testing.assert_allclose(da[0], np.zeros((3, 3)))
    np.testing.assert_allclose(da[1], 2.0 * np.linalg.inv(REGULAR).T, rtol=1e-12)
    with pytest.raises(ssad.SsadError, match="logabsdet .* has no derivative at a singular matrix"):
        REGISTRY.adjoint_rule(np.linalg.slogdet)((np.zeros(2), np.ones(2)), y, a)
    sign_tangent, log_tangent = REGISTRY.tangent_rule(np.linalg.slogdet)((rand(2, 3, 3),), y, a)
    np.testing.assert_array_equal(sign_tangent, np.zeros(2))
    with pytest.raises(ssad.SsadError, match="no derivative at a singular matrix"):
        log_tangent + 1.0  # refused where it is used


def test_third_derivatives_of_det_read_singular_values_that_are_not_zero():
    rule, tangent = REGISTRY.adjoint_rule(differentiable_singular_values), REGISTRY.tangent_rule(differentiable_singular_values)
    s = np.array([3.0, 2.0, 0.5])
    np.testing.assert_array_equal(rule(s * 2.0, s, s)[0], s * 2.0)
    for zero in ([3.0, 2.0, 0.0], [3.0, 2.0, 1e-12]):
        with pytest.raises(ssad.SsadError, match="third derivative of np.linalg.det"):
            rule(s, np.array(zero), np.array(zero))
        with pytest.raises(ssad.SsadError, match="third derivative of np.linalg.det"):
            tangent((s,), np.array(zero), np.array(zero))


def test_cholesky_gradient_is_symmetric_and_matches_logdet():
    # log det A = 2 sum(log diag(L)), whose gradient is inv(A) (symmetric)
    a = spd(4, 4)
    low = np.linalg.cholesky(a)
    dy = np.diag(2 / np.diag(low))
    (da,) = REGISTRY.adjoint_rule(np.linalg.cholesky)(dy, low, a)
    np.testing.assert_allclose(da, np.linalg.inv(a), rtol=1e-12, atol=1e-14)


def test_trace_of_matrix_is_identity():
    (da,) = REGISTRY.adjoint_rule(np.trace)(2.0, 0.0, np.ones((3, 3)))
    np.testing.assert_array_equal(da, 2 * np.eye(3))


def test_einsum_subscripts_get_no_adjoint():
    adjoints = REGISTRY.adjoint_rule(np.einsum)(np.ones((3, 2)), None, "ij,jk->ik", M34, M42)
    assert len(adjoints) == 3 and adjoints[0] is None


@pytest.mark.parametrize(
    "primitive, args", [(np.matmul, (M34, M42)), (np.dot, (M34, V4)), (np.linalg.inv, (np.eye(3),))]
)
def test_float32_stays_float32(primitive, args):
    args = tuple(np.asarray(x, np.float32) for x in args)
    y = primitive(*args)
    for d in REGISTRY.adjoint_rule(primitive)(np.ones_like(y), y, *args):
        assert d.dtype == np.float32


# ===== Tangent (forward-mode) rules =====


def check_symmetric_tangent(primitive, a, seed=0, **kwargs):
    """Check a tangent rule meant for symmetric perturbations: along a random symmetric
    tangent E, compare with central differences of primitive(a + s E); along a
    non-symmetric one, with those of primitive((a + a^T) / 2) (the rule reads a tangent
    as its symmetric part)."""
    rule = REGISTRY.tangent_rule(primitive)
    y = primitive(a, **kwargs)
    draw = np.random.default_rng(seed).uniform(-1.5, 1.5, size=np.shape(a))
    symmetric = (draw + np.swapaxes(draw, -1, -2)) / 2
    eps = 1e-6
    for direction, function in [(symmetric, primitive), (draw, SYMMETRIC_INPUT[primitive])]:
        expected = (function(a + eps * direction, **kwargs) - function(a - eps * direction, **kwargs)) / (2 * eps)
        got = rule((direction,), y, a, **kwargs)
        assert_close(f"{primitive.__name__} tangent", got, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(rule((draw,), y, a, **kwargs), rule((symmetric,), y, a, **kwargs))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    if case.primitive in SYMMETRIC_INPUT:
        check_symmetric_tangent(case.primitive, *case.args, **case.kwargs)
    else:
        check_tangent(case.primitive, *case.args, **case.kwargs)


def test_every_adjoint_rule_of_the_module_has_a_tangent_rule():
    from ssad.rules import linalg

    primitives = [p for p in REGISTRY.adjoint_primitives() if REGISTRY.adjoint_rule(p).__module__ == linalg.__name__]
    assert primitives
    missing = [primitive_name(p) for p in primitives if REGISTRY.tangent_rule(p) is None]
    assert not missing, f"adjoint rules without a tangent rule: {missing}"


# ----- Exact values and conventions -----


NORMS_AT_ZERO = [
    (None, None), (2, None), (1, None), (np.inf, None), (-np.inf, None), (3, None), (0.5, None), (-1.5, None),
    (0, None), ("fro", (0, 1)), (None, 1), (1, (0, 1)), (-1, (0, 1)), (np.inf, (0, 1)), (2, (0, 1)),
    (-2, (0, 1)), ("nuc", (0, 1)),
]


@pytest.mark.parametrize("ord, axis", NORMS_AT_ZERO)
def test_norm_tangent_at_zero_is_zero(ord, axis):
    x = np.zeros((2, 3)) if axis is not None else np.zeros(3)
    y = np.linalg.norm(x, ord, axis)
    t = np.ones_like(x) * np.array([1.0, -2.0, 3.0])
    with np.errstate(all="raise"):  # no division by zero, no inf * 0 on the way
        d_y = REGISTRY.tangent_rule(np.linalg.norm)((t,), y, x, ord=ord, axis=axis)
        (d_x,) = REGISTRY.adjoint_rule(np.linalg.norm)(np.ones_like(y), y, x, ord, axis)
    np.testing.assert_array_equal(d_y, np.zeros_like(y))
    np.testing.assert_array_equal(d_x, np.zeros_like(x))


def test_norm_tangent_with_a_zero_row():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    t = np.array([[5.0, 7.0], [1.0, 2.0]])
    d_y = REGISTRY.tangent_rule(np.linalg.norm)((t,), np.linalg.norm(x, axis=1), x, axis=1)
    np.testing.assert_allclose(d_y, [0.0, 0.6 * 1.0 + 0.8 * 2.0], rtol=1e-15)


def test_norm_inf_tangent_at_ties_is_the_mean_of_the_tied_tangents():
    x = np.array([2.0, -2.0, 1.0])
    t = np.array([1.0, 3.0, 5.0])
    d_y = REGISTRY.tangent_rule(np.linalg.norm)((t, None), np.linalg.norm(x, np.inf), x, np.inf)
    assert d_y == (1.0 - 3.0) / 2


def test_norm_tangent_of_a_float_order():
    # a float ord passed positionally is a float input: d ||x||_p / dp along its tangent
    x = np.array([[0.7, -1.2, 0.0, 1.1], [0.9, 1.3, -0.6, 0.0]])
    for p in (1.5, 2.0, 3.0, 4.5):
        check_tangent(np.linalg.norm, x, p, 1)
        check_tangent(np.linalg.norm, x, p, 1, True)
    check_tangent(np.linalg.norm, np.array([0.7, -1.2, 0.4]), -1.5)


def test_norm_tangent_takes_zeros_for_arguments_without_a_tangent():
    # forward-mode code passes 0.0 as the tangent of every argument that carries none
    rule = REGISTRY.tangent_rule(np.linalg.norm)
    t = rand(3, 4)
    for args in [(None, 1, True), (2.5, 1), (np.inf, None), (1.0,)]:
        y = np.linalg.norm(M34, *args)
        expected = rule((t,) + (None,) * len(args), y, M34, *args)
        np.testing.assert_array_equal(rule((t,) + (0.0,) * len(args), y, M34, *args), expected)


def test_slogdet_tangent_is_a_tuple_with_a_zero_sign():
    a = -well_conditioned(3, 3)
    t = rand(3, 3)
    y = np.linalg.slogdet(a)
    d_sign, d_logabs = REGISTRY.tangent_rule(np.linalg.slogdet)((t,), y, a)
    np.testing.assert_array_equal(d_sign, np.zeros_like(y[0]))
    np.testing.assert_allclose(d_logabs, np.trace(np.linalg.inv(a) @ t), rtol=1e-12)


def test_inv_and_det_tangents_reuse_the_result():
    a = well_conditioned(3, 3)
    t = rand(3, 3)
    y = np.linalg.inv(a)
    np.testing.assert_allclose(REGISTRY.tangent_rule(np.linalg.inv)((t,), y, a), -y @ t @ y, rtol=1e-14)
    d = np.linalg.det(a)
    np.testing.assert_allclose(
        REGISTRY.tangent_rule(np.linalg.det)((t,), d, a), d * np.trace(np.linalg.inv(a) @ t), rtol=1e-12
    )


def test_cholesky_tangent_matches_logdet():
    # d log det A = trace(A^-1 dA) = 2 sum(diag(dL) / diag(L))
    a = spd(4, 4)
    low = np.linalg.cholesky(a)
    t = rand(4, 4)
    t = t + t.T
    d_low = REGISTRY.tangent_rule(np.linalg.cholesky)((t,), low, a)
    np.testing.assert_array_equal(d_low, np.tril(d_low))
    np.testing.assert_allclose(2 * np.sum(np.diag(d_low) / np.diag(low)), np.trace(np.linalg.inv(a) @ t), rtol=1e-12)


def test_einsum_tangent_skips_the_subscripts_and_missing_tangents():
    rule = REGISTRY.tangent_rule(np.einsum)
    y = np.einsum("ij,jk->ik", M34, M42)
    t = rand(3, 4)
    np.testing.assert_allclose(rule((None, t, None), y, "ij,jk->ik", M34, M42), t @ M42, rtol=1e-14)
    np.testing.assert_allclose(rule((None, t, 0.0), y, "ij,jk->ik", M34, M42), t @ M42, rtol=1e-14)
    np.testing.assert_array_equal(rule((None, None, None), y, "ij,jk->ik", M34, M42), np.zeros_like(y))
    # the sublist form: the tangent of the same contraction, its sublists skipped
    np.testing.assert_allclose(rule((t, None, None, None), y, M34, [0, 1], M42, [1, 2]), t @ M42, rtol=1e-14)


def test_solve_tangent_with_a_shared_vector():
    a, b = well_conditioned(4, 3, 3), V3
    y = np.linalg.solve(a, b)
    d_a, d_b = rand(4, 3, 3), rand(3)
    expected = np.linalg.solve(a, (d_b - (d_a @ y[..., None])[..., 0])[..., None])[..., 0]
    got = REGISTRY.tangent_rule(np.linalg.solve)((d_a, d_b), y, a, b)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "primitive, args", [(np.matmul, (M34, M42)), (np.dot, (M34, V4)), (np.linalg.inv, (np.eye(3),))]
)
def test_tangent_float32_stays_float32(primitive, args):
    args = tuple(np.asarray(x, np.float32) for x in args)
    y = primitive(*args)
    tangents = tuple(np.ones_like(x) for x in args)
    assert REGISTRY.tangent_rule(primitive)(tangents, y, *args).dtype == np.float32


# ----- The tangent is the transpose of the adjoint -----


def _random(shape, rng):
    return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _inner(a, b):
    if isinstance(a, tuple):
        return sum(_inner(u, v) for u, v in zip(a, b, strict=True))
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def assert_tangent_transposes_adjoint(primitive, args, kwargs, rng):
    """<adjoint(dy), t> == <dy, tangent(t)> for random dy and random tangents t of the
    arguments the adjoint rule differentiates."""
    y = primitive(*args, **kwargs)
    dy = tuple(_random(np.shape(c), rng) for c in y) if isinstance(y, tuple) else _random(np.shape(y), rng)
    adjoints = REGISTRY.adjoint_rule(primitive)(dy, y, *args, **kwargs)
    tangents = tuple(
        _random(np.shape(arg), rng) if i < len(adjoints) and adjoints[i] is not None else None
        for i, arg in enumerate(args)
    )
    d_y = REGISTRY.tangent_rule(primitive)(tangents, y, *args, **kwargs)
    forward = _inner(dy, d_y)
    backward = sum(_inner(adjoints[i], t) for i, t in enumerate(tangents) if t is not None)
    np.testing.assert_allclose(forward, backward, rtol=1e-12, atol=1e-12)


def _ties(*shape):
    return lambda rng: rng.integers(-2, 3, size=shape).astype(np.float64)


def _dominant(*shape):
    return lambda rng: rng.uniform(-0.5, 0.5, size=shape) + shape[-1] * np.eye(shape[-1])


def _rand(*shape):
    return lambda rng: _random(shape, rng)


def _spd(*shape):
    def make(rng):
        g = rng.uniform(-1.0, 1.0, size=shape)
        return g @ np.swapaxes(g, -1, -2) + shape[-1] * np.eye(shape[-1])

    return make


TRANSPOSE_CASES = [
    (np.dot, (_rand(5, 3, 4), _rand(4, 2)), {}, "dot-3d-mat"),
    (np.dot, (lambda rng: 2.5, _rand(3, 4)), {}, "dot-scalar"),
    (np.ndarray.dot, (_rand(4), _rand(4, 2)), {}, "ndarray.dot"),
    (np.matmul, (_rand(2, 1, 3, 4), _rand(5, 4, 2)), {}, "matmul-broadcast-both"),
    (operator.matmul, (_rand(4), _rand(5, 4, 2)), {}, "operator-matmul-vec-batch"),
    (np.vdot, (_rand(3, 4), _rand(12)), {}, "vdot"),
    (np.inner, (_rand(5, 3, 4), _rand(2, 4)), {}, "inner"),
    (np.outer, (_rand(3, 4), _rand(2, 2)), {}, "outer"),
    (np.kron, (_rand(3), _rand(4, 2)), {}, "kron"),
    (np.tensordot, (_rand(5, 3, 4), _rand(4, 3, 2), lambda rng: ([2, 1], [0, 1])), {}, "tensordot-crossed"),
    (np.einsum, (lambda rng: "iij->j", _rand(3, 3, 2)), {}, "einsum-partial-diagonal"),
    (np.einsum, (lambda rng: "...ij,...jk->...ik", _rand(1, 3, 4), _rand(5, 4, 2)), {}, "einsum-ellipsis"),
    (np.einsum, (lambda rng: "ij,jk,kl->il", _rand(3, 4), _rand(4, 2), _rand(2, 3)), {"optimize": True},
     "einsum-three"),
    (np.trace, (_rand(3, 2, 4), lambda rng: 0, lambda rng: 2, lambda rng: 0), {}, "trace-axes"),
    (np.ndarray.trace, (_rand(2, 4, 3), lambda rng: 1, lambda rng: 1, lambda rng: 2), {}, "ndarray.trace"),
    (np.linalg.norm, (_rand(2, 3, 4),), {"axis": 2}, "norm-2"),
    (np.linalg.norm, (_ties(4, 5),), {"ord": np.inf, "axis": 1, "keepdims": True}, "norm-inf-ties"),
    (np.linalg.norm, (_ties(4, 5),), {"ord": 3, "axis": 0}, "norm-l3-zeros"),
    (np.linalg.norm, (_ties(4, 5),), {"ord": 1}, "norm-matrix-1-ties"),
    (np.linalg.norm, (_rand(2, 4, 3),), {"ord": "nuc", "axis": (0, 1)}, "norm-nuc"),
    (np.linalg.norm, (_rand(3, 4),), {"ord": 2}, "norm-spectral"),
    (np.linalg.norm, (_rand(3, 4),), {"ord": "fro", "keepdims": True}, "norm-fro-keepdims"),
    (np.linalg.inv, (_dominant(2, 3, 3),), {}, "inv"),
    (np.linalg.det, (_dominant(2, 3, 3),), {}, "det"),
    (np.linalg.slogdet, (lambda rng: -_dominant(3, 3)(rng),), {}, "slogdet"),
    (np.linalg.solve, (_dominant(4, 3, 3), _rand(3)), {}, "solve-shared-vector"),
    (np.linalg.solve, (_dominant(3, 3), _rand(4, 3, 2)), {}, "solve-shared-matrix"),
    (np.linalg.cholesky, (_spd(2, 4, 4),), {}, "cholesky"),
    (np.linalg.cholesky, (_spd(3, 3),), {"upper": True}, "cholesky-upper"),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("primitive, makers, kwargs, tag", TRANSPOSE_CASES, ids=[c[-1] for c in TRANSPOSE_CASES])
def test_tangent_is_the_transpose_of_the_adjoint(primitive, makers, kwargs, tag, seed):
    # for cholesky the tangents are not symmetric: the identity holds for any tangent
    rng = np.random.default_rng(seed)
    assert_tangent_transposes_adjoint(primitive, tuple(make(rng) for make in makers), kwargs, rng)


def contraction_by_sublists(x, w):
    h = np.einsum(x, [0, 1], w, [1, 2], [0, 2])
    return np.sum(np.tanh(np.einsum(h, [Ellipsis, 0], h, [Ellipsis, 0])) * np.arange(1.0, 4.0))


def numpy2_products(x, w):
    return np.sum(np.sin(np.matvec(w, x))) + np.sum(np.vecdot(x, np.matrix_transpose(w)[:3]) ** 2) + np.sum(
        np.vecmat(x, w) ** 3
    )


@pytest.mark.parametrize("f", [contraction_by_sublists, numpy2_products], ids=lambda f: f.__name__)
def test_sublist_einsum_and_numpy2_products_end_to_end(f):
    x, w = rand(3, 4), rand(4, 4)
    for position, value in enumerate((x, w)):

        def partial(v, position=position):
            return f(v, w) if position == 0 else f(x, v)

        expected = numerical_gradient(partial, value)
        np.testing.assert_allclose(ssad.grad(f, wrt=position)(x, w), expected, rtol=1e-6, atol=1e-9)
        direction = rand(*value.shape)
        tangents = (direction, None) if position == 0 else (None, direction)
        np.testing.assert_allclose(ssad.jvp(f, (x, w), tangents)[1], np.sum(expected * direction), rtol=1e-6, atol=1e-8)
    ssad.check_grads(f, (x, w), order=2)
