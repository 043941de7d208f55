"""Subclasses of np.ndarray whose operators or reductions differ: refused, never differentiated as plain arrays.

ssad's rules are np.ndarray's. `np.matrix` makes `*` a matrix product and `np.ma.MaskedArray`
leaves its masked elements out of sums; both reached the generated code as if they were
np.ndarray: `grad(lambda m: np.sum(m * m))` of a matrix gave the elementwise 2 m (the
derivative of the matrix product's sum is `1 Mᵀ + Mᵀ 1`), a masked element got a
gradient though the sum left it out, and a global matrix crashed with NumPy's shape error.
Each is refused now with an `SsadError` that says what to pass instead. `np.memmap`, whose
operators are np.ndarray's, is differentiated. Expected values are closed forms.
"""

import inspect
import warnings

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
X = np.array([0.3, -1.2])


def sum_of_product(m):
    return np.sum(m * m)


def sum_of_squares(a):
    return np.sum(a**2)


def scaled(x, scale=1.0):
    return np.sum(scale * x**2)


def reads_a_global_matrix(x):
    return np.sum(np.asarray(MATRIX @ x) ** 2)


def test_a_matrix_argument_is_refused_in_every_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        # what the derivative is: d/dM sum(M M) = 1 Mᵀ + Mᵀ 1, not the elementwise 2 M
        ones = np.ones((2, 2))
        expected = ones @ np.asarray(MATRIX).T + np.asarray(MATRIX).T @ ones
        np.testing.assert_allclose(numerical_gradient(lambda a: sum_of_product(np.asmatrix(a)), np.asarray(MATRIX)),
                                   expected, rtol=1e-6)
        for run in (lambda: ssad.grad(sum_of_product)(MATRIX), lambda: ssad.value_and_grad(sum_of_product)(MATRIX),
                    lambda: ssad.vjp(sum_of_product, MATRIX), lambda: ssad.jvp(sum_of_product, (MATRIX,), (MATRIX,))):
            with pytest.raises(ssad.SsadError, match="numpy.matrix, a subclass of np.ndarray .* pass np.asarray"):
                run()


def test_a_masked_array_argument_is_refused():
    assert sum_of_squares(MASKED) == pytest.approx(10.0)  # the masked 2.0 left out
    for run in (lambda: ssad.grad(sum_of_squares)(MASKED), lambda: ssad.jvp(sum_of_squares, (MASKED,), (np.ones(3),))):
        with pytest.raises(ssad.SsadError, match="numpy.ma.MaskedArray, a subclass of np.ndarray"):
            run()
    with pytest.raises(ssad.SsadError, match="the argument scale= is a numpy.ma.MaskedArray"):
        ssad.grad(scaled)(np.ones(3), scale=MASKED)


def test_a_global_matrix_is_refused_where_the_function_reads_it():
    source, first = inspect.getsourcelines(reads_a_global_matrix)
    for run in (lambda: ssad.grad(reads_a_global_matrix)(X), lambda: ssad.jvp(reads_a_global_matrix, (X,), (X,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="`MATRIX` is a numpy.matrix") as caught:
            run()
        assert caught.value.filename == __file__ and caught.value.lineno == first + 1


def test_a_matrix_a_closure_captured_is_refused():
    m = MATRIX

    def closure(x):
        return np.sum(np.asarray(m @ x))

    with pytest.raises(ssad.UnsupportedSyntaxError, match="`m` is a numpy.matrix"):
        ssad.grad(closure)(X)


def test_a_memmap_is_differentiated(tmp_path):
    mapped = np.memmap(tmp_path / "values.dat", dtype=np.float64, mode="w+", shape=(3,))
    mapped[:] = [1.0, -2.0, 0.5]
    np.testing.assert_allclose(ssad.grad(sum_of_squares)(mapped), 2 * np.array([1.0, -2.0, 0.5]), rtol=1e-12)
    np.testing.assert_allclose(ssad.grad(scaled, wrt="scale")(np.ones(3), scale=mapped[0]), 3.0, rtol=1e-12)


def test_the_same_values_as_plain_arrays_are_differentiated():
    plain = np.asarray(MATRIX)
    np.testing.assert_allclose(ssad.grad(sum_of_product)(plain), 2 * plain, rtol=1e-12)
    np.testing.assert_allclose(ssad.grad(sum_of_squares)(MASKED.filled(0.0)), [2.0, 0.0, 6.0], rtol=1e-12)
