"""A SciPy sparse matrix read as a constant (a global, a captured value) in `A @ x`.

The adjoint of `@` transposed its operands with np.swapaxes, which makes a 0-d object
array of a sparse matrix: `grad` of `np.sum((A @ x) ** 2)` with a global csr matrix
crashed in the rule with NumPy's AxisError. A sparse matrix is transposed by its own `.T`
now; the derivatives are checked against the closed forms.
"""

import numpy as np
import pytest

import ssad

sparse = pytest.importorskip("scipy.sparse")

A = sparse.random(5, 4, density=0.5, random_state=0, format="csr")
A_ARRAY = sparse.csr_array(A)
D = A.toarray()
X = np.array([0.3, -1.2, 0.7, 1.5])
V = np.array([1.0, -0.5, 0.25, 2.0])


def least_squares(x):
    return np.sum((A @ x) ** 2)


def least_squares_array(x):
    return np.sum((A_ARRAY @ x) ** 2)


def transposed(x):
    return np.sum(np.sin(x @ A.T))


def quadratic_form(x):
    return x @ (A.T @ (A @ x))


def made_inside(x):
    L = A.T @ A  # sparse times sparse: a constant too
    return np.sum(np.tanh(L @ x))


def test_gradients_and_hessians_through_a_sparse_matrix_match_the_closed_forms():
    want = 2 * D.T @ (D @ X)
    for f in (least_squares, least_squares_array, quadratic_form):
        np.testing.assert_allclose(ssad.grad(f)(X), want, rtol=1e-12)
        np.testing.assert_allclose(ssad.jvp(f, (X,), (V,))[1], want @ V, rtol=1e-12)
        np.testing.assert_allclose(ssad.hvp(f)(X, V), 2 * D.T @ (D @ V), rtol=1e-12)
        np.testing.assert_allclose(ssad.hessian(f)(X), 2 * D.T @ D, rtol=1e-12, atol=1e-15)
        reverse_over_reverse = ssad.grad(lambda x, f=f: np.sum(ssad.grad(f)(x) * V))(X)
        np.testing.assert_allclose(reverse_over_reverse, 2 * D.T @ (D @ V), rtol=1e-12)
    np.testing.assert_allclose(ssad.grad(transposed)(X), D.T @ np.cos(D @ X), rtol=1e-12)
    L = D.T @ D
    np.testing.assert_allclose(ssad.grad(made_inside)(X), L.T @ (1 - np.tanh(L @ X) ** 2), rtol=1e-12)


def test_a_sparse_matrix_passed_as_an_argument_is_refused_naming_the_way_round():
    with pytest.raises(ssad.MissingRuleError, match=r"`@` here runs the operator method of a csr_matrix.*global"):
        ssad.grad(lambda x, M: np.sum((M @ x) ** 2))(X, A)
