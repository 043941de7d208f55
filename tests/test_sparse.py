"""Row-sparse gradients (`sparse=`): every RowGradient against the dense gradient ssad
gives for the same function, and against central finite differences on small tables;
duplicate, negative and empty indices, gathers in loops and by `np.take`, the result
type's arithmetic, the refusals that name the user's line, vjp, compile=True and Dask.
"""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


def bpr(U, V, users, positives, negatives):
    u = U[users]
    margin = np.sum(u * (V[positives] - V[negatives]), axis=1)
    penalty = np.sum(u * u) + np.sum(V[positives] ** 2) + np.sum(V[negatives] ** 2)
    return np.sum(np.logaddexp(0.0, -margin)) + 0.01 * penalty


def embedding_loop(E, tokens, w):
    total = 0.0
    for t in range(tokens.shape[0]):
        total += np.tanh(E[tokens[t]] @ w)
    return total + np.sum(np.take(E, tokens[:2], axis=0) ** 2)


def batched_tokens(E, tokens, w):
    h = np.tanh(E[tokens] @ w)  # tokens is 2-D: a batch of sequences
    return np.sum(h * h) + np.sum(E[tokens[0]] * E[tokens[-1]])


def masked_rows(b, keep, x):
    return np.sum(np.sin(b[keep]) * x[keep])


def biases(b, items):
    return np.sum(np.exp(b[items]))  # a vector: each row is one number


def _tables(seed=0):
    rng = np.random.default_rng(seed)
    U, V = rng.standard_normal((6, 3)), rng.standard_normal((9, 3))
    users = np.array([0, 2, 2, 5, -1])
    positives, negatives = np.array([1, 1, 3, 8, 1]), np.array([0, -2, 2, 7, 7])
    return U, V, users, positives, negatives


def _dense_equal(sparse, dense):
    assert isinstance(sparse, ssad.RowGradient)
    assert sparse.shape == np.shape(dense)
    np.testing.assert_allclose(np.asarray(sparse), dense, rtol=1e-13, atol=1e-15)
    assert np.all(np.diff(sparse.indices) > 0)  # sorted, each once
    rows_read = np.flatnonzero(np.any(np.reshape(dense, (dense.shape[0], -1)) != 0, axis=1))
    assert set(rows_read) <= set(sparse.indices.tolist())


def test_bpr_gradients_are_the_dense_ones_on_the_rows_read():
    args = _tables()
    sparse = ssad.grad(bpr, wrt=("U", "V"), sparse=True)(*args)
    dense = ssad.grad(bpr, wrt=("U", "V"))(*args)
    for s, d in zip(sparse, dense, strict=True):
        _dense_equal(s, d)
    # rows read more than once (2, 1, 7) and by negative indices (-1 is 5, -2 is 7) are summed into one
    assert sparse[0].indices.tolist() == [0, 2, 5]
    assert sparse[1].indices.tolist() == [0, 1, 2, 3, 7, 8]
    for position, gradient in zip((0, 1), sparse, strict=True):
        moved = lambda t, p=position: bpr(*args[:p], t, *args[p + 1:])  # noqa: E731
        np.testing.assert_allclose(np.asarray(gradient), numerical_gradient(moved, args[position]), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("function, make", [
    (embedding_loop, lambda rng: (rng.standard_normal((10, 3)), np.array([1, 4, 1, -1, 7]), rng.standard_normal(3))),
    (batched_tokens, lambda rng: (rng.standard_normal((7, 3)), np.array([[0, 3, 3], [6, 0, 2]]), rng.standard_normal(3))),
    (masked_rows, lambda rng: (rng.standard_normal(6), np.array([True, False, True, True, False, False]),
                               rng.standard_normal(6))),
    (biases, lambda rng: (rng.standard_normal(8), np.array([3, 3, 0, 7]))),
], ids=["loop_and_take", "two_axis_index", "mask", "vector"])
def test_gathers_in_loops_by_take_by_masks_and_of_vectors(function, make):
    args = make(np.random.default_rng(1))
    sparse = ssad.grad(function, sparse=True)(*args)
    _dense_equal(sparse, ssad.grad(function)(*args))
    moved = lambda t: function(t, *args[1:])  # noqa: E731
    np.testing.assert_allclose(np.asarray(sparse), numerical_gradient(moved, args[0]), rtol=1e-7, atol=1e-9)


def test_an_empty_batch_gives_a_gradient_with_no_rows():
    U, V, *_ = _tables()
    empty = np.zeros(0, dtype=int)
    d_V = ssad.grad(bpr, wrt="V", sparse=True)(U, V, empty, empty, empty)
    assert d_V.indices.shape == (0,) and d_V.values.shape == (0, 3) and d_V.shape == V.shape
    assert not np.asarray(d_V).any()


def test_value_and_grad_and_vjp_give_row_gradients():
    args = _tables(2)
    value, (d_U, d_V) = ssad.value_and_grad(bpr, wrt=("U", "V"), sparse=("V",))(*args)
    assert value == pytest.approx(bpr(*args), rel=1e-14)
    assert isinstance(d_U, np.ndarray) and isinstance(d_V, ssad.RowGradient)
    _dense_equal(d_V, ssad.grad(bpr, wrt="V")(*args))
    primal, pullback = ssad.vjp(bpr, *args, wrt=("U", "V"), sparse=True)
    assert primal == pytest.approx(value, rel=1e-14)
    d_U2, d_V2 = pullback(2.0)
    _dense_equal(d_V2, 2.0 * ssad.grad(bpr, wrt="V")(*args))
    _dense_equal(d_U2, 2.0 * d_U)


def test_with_a_tuple_wrt_sparse_true_applies_to_the_parameters_read_by_rows():
    def mixed(W, E, idx):
        return np.sum(np.tanh(E[idx] @ W)) + np.sum(W * W)

    rng = np.random.default_rng(3)
    W, E, idx = rng.standard_normal((3, 2)), rng.standard_normal((8, 3)), np.array([5, 1, 5])
    d_W, d_E = ssad.grad(mixed, wrt=("W", "E"), sparse=True)(W, E, idx)
    assert isinstance(d_W, np.ndarray) and isinstance(d_E, ssad.RowGradient)
    dense = ssad.grad(mixed, wrt=("W", "E"))(W, E, idx)
    np.testing.assert_allclose(d_W, dense[0], rtol=1e-13)
    _dense_equal(d_E, dense[1])


def reads_the_whole_table(V, idx):
    rows = V[idx]
    return np.sum(rows ** 2) + 0.1 * np.sum(V)


def passes_the_table_on(V, idx):
    return np.sum(np.take(V, idx, axis=1))


def slices_the_table(V, idx):
    return np.sum(V[1:4]) + np.sum(V[idx])


@pytest.mark.parametrize("function, said", [
    (reads_the_whole_table, "V is passed to np.sum here"),
    (passes_the_table_on, "V is passed to np.take here"),
    (slices_the_table, "reads a slice or several axes"),
], ids=["whole", "take_along_columns", "slice"])
def test_a_parameter_read_other_than_by_rows_is_refused_naming_the_line(function, said):
    V, idx = np.ones((5, 3)), np.array([0, 2])
    with pytest.raises(ssad.SsadError) as caught:
        ssad.grad(function, sparse=True)(V, idx)
    message = str(caught.value)
    assert said in message and "test_sparse.py" in message and "Leave V out of sparse=" in message


def test_sparse_names_a_parameter_wrt_does_not():
    with pytest.raises(ssad.SsadError, match="which wrt does not"):
        ssad.grad(bpr, wrt="U", sparse=("V",))


def test_a_row_gradient_does_what_an_optimizer_step_needs():
    g = ssad.RowGradient.from_rows(np.array([4, 1, 4]), np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), (6, 2))
    assert g.indices.tolist() == [1, 4] and g.values.tolist() == [[3.0, 4.0], [6.0, 8.0]]
    dense = np.asarray(g)
    assert dense.shape == (6, 2) and dense[4].tolist() == [6.0, 8.0] and not dense[[0, 2, 3, 5]].any()
    np.testing.assert_array_equal(np.asarray(g.scaled(-0.5)), -0.5 * dense)
    np.testing.assert_array_equal(np.asarray(2.0 * g), 2.0 * dense)
    other = ssad.RowGradient.from_rows(np.array([0, 1]), np.ones((2, 2)), (6, 2))
    np.testing.assert_array_equal(np.asarray(g + other), dense + np.asarray(other))
    np.testing.assert_array_equal(np.ones((6, 2)) + g, np.ones((6, 2)) + dense)
    np.testing.assert_array_equal(np.asarray(sum([g, other])), dense + np.asarray(other))
    V = np.ones((6, 2))
    same = g.apply_to(V, scale=-0.1)
    assert same is V
    np.testing.assert_allclose(V, np.ones((6, 2)) - 0.1 * dense, rtol=1e-15)
    with pytest.raises(ssad.SsadError, match="shape"):
        g.apply_to(np.ones((5, 2)))


def test_sgd_with_row_gradients_takes_the_dense_steps():
    U, V, users, positives, negatives = _tables(4)
    U2, V2 = U.copy(), V.copy()
    dense_step = ssad.value_and_grad(bpr, wrt=("U", "V"))
    sparse_step = ssad.value_and_grad(bpr, wrt=("U", "V"), sparse=True)
    for _ in range(5):
        _, (d_U, d_V) = dense_step(U, V, users, positives, negatives)
        U -= 0.1 * d_U
        V -= 0.1 * d_V
        _, (s_U, s_V) = sparse_step(U2, V2, users, positives, negatives)
        s_U.apply_to(U2, scale=-0.1)
        s_V.apply_to(V2, scale=-0.1)
    np.testing.assert_allclose(U2, U, rtol=1e-13)
    np.testing.assert_allclose(V2, V, rtol=1e-13)


def test_compiled_sparse_gradients_match_the_numpy_ones():
    pytest.importorskip("numba")
    args = _tables(5)
    compiled = ssad.grad(bpr, wrt=("U", "V"), sparse=True, compile="strict")(*args)
    for s, d in zip(compiled, ssad.grad(bpr, wrt=("U", "V"))(*args), strict=True):
        _dense_equal(s, d)
    rng = np.random.default_rng(6)
    loop_args = (rng.standard_normal((10, 3)), np.array([1, 4, 1, -1, 7]), rng.standard_normal(3))
    _dense_equal(ssad.grad(embedding_loop, sparse=True, compile="strict")(*loop_args), ssad.grad(embedding_loop)(*loop_args))


def test_dask_tables_give_row_gradients_of_numpy_values():
    da = pytest.importorskip("dask.array")
    U, V, users, positives, negatives = _tables(7)
    lazy = da.from_array(V, chunks=(3, 3))
    d_V = ssad.grad(bpr, wrt="V", sparse=True)(U, lazy, users, positives, negatives)
    _dense_equal(d_V, ssad.grad(bpr, wrt="V")(U, V, users, positives, negatives))
