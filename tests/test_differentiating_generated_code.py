"""Generated code differentiated again: the run-time helpers that change values in place.

A first-order gradient restores what an in-place write overwrote (`restore_part`) and
undoes `list.extend` (`drop_last`). Differentiated again, both are in-place changes the
second-order tape must see; a gradient that missed them read the restored array where
it needed the written one (silently wrong), or popped an empty list.
"""

from collections import namedtuple

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

from .conftest import finite_difference_gradient

V = np.array([1.0, 2.0, 3.0, 4.0])
X = np.array([0.53, 0.55, 1.04, -0.41])
Y = np.array([1.34, 0.44, 0.61, 0.08])


def written_in_place(x, y):
    z = y.copy()
    z[1:3] += x[1:3]
    return np.sum(np.sin(z))


GRAD_WRITTEN = ssad.grad(written_in_place, wrt=0)


def weighted_gradient_of_a_write(x, y):
    return np.sum(GRAD_WRITTEN(x, y) * V)


def test_reverse_over_reverse_through_a_restored_write():
    expected = -np.sin(Y + X * np.array([0, 1, 1, 0])) * V * np.array([0, 1, 1, 0])
    for position in (0, 1):
        got = ssad.grad(weighted_gradient_of_a_write, wrt=position)(X, Y)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
        expected_by_differences = finite_difference_gradient(weighted_gradient_of_a_write, (X, Y), position)
        np.testing.assert_allclose(got, expected_by_differences, rtol=1e-6, atol=1e-9)


def extended_then_popped(x, y):
    items = [x[0] * x[1]]
    items.extend([y * 2.0, np.sin(x[2])])
    last = items.pop()
    return items[0] * last + items[1] * x[3]


GRAD_EXTENDED = ssad.grad(extended_then_popped)


def weighted_gradient_of_an_extend(x, y):
    return np.sum(GRAD_EXTENDED(x, y) * V)


def test_reverse_over_reverse_through_an_undone_extend():
    got = ssad.grad(weighted_gradient_of_an_extend)(X, 0.7)
    expected = numerical_gradient(lambda v: weighted_gradient_of_an_extend(v, 0.7), X)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    hessian = ssad.hessian(extended_then_popped)(X, 0.7)
    columns = [numerical_gradient(lambda v, k=k: GRAD_EXTENDED(v, 0.7)[k], X) for k in range(4)]
    np.testing.assert_allclose(hessian, np.array(columns), rtol=1e-6, atol=1e-8)


Pair = namedtuple("Pair", "W b")


def namedtuple_built_inside(x):
    q = Pair(W=x * 2.0, b=x)
    return np.sum(q.W * q.b)


def test_forward_over_reverse_through_a_record_built_inside():
    # The adjoint of the record starts from a zero record; its tangent arrived as 0.0.
    x, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.3])
    value, tangent = ssad.jvp(ssad.grad(namedtuple_built_inside), (x,), (v,))
    np.testing.assert_allclose(value, 4 * x, rtol=1e-12)
    np.testing.assert_allclose(tangent, 4 * v, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(namedtuple_built_inside)(x), 4 * np.eye(3), rtol=1e-12)


def sine_of_kron(a, b):
    return np.sum(np.sin(np.kron(a, b)))


def test_second_order_through_kron():
    # kron's adjoint reshapes by shapes it computes: they carry no gradient, and a zero
    # tangent arriving as 0.0 is spread before it is reshaped.
    a, b = np.array([[0.3, 0.2]]), np.array([[0.5], [0.1], [-0.4]])
    gradient = ssad.grad(sine_of_kron)
    columns = [finite_difference_gradient(lambda u, k=k: gradient(u, b).ravel()[k], (a,), 0) for k in range(2)]
    expected = np.array(columns).reshape(1, 2, 1, 2)
    np.testing.assert_allclose(ssad.hessian(sine_of_kron)(a, b), expected, rtol=1e-6, atol=1e-9)

    def weighted(u, v):
        return np.sum(gradient(u, v) * np.array([[1.0, 2.0]]))

    np.testing.assert_allclose(ssad.grad(weighted)(a, b), finite_difference_gradient(weighted, (a, b), 0),
                               rtol=1e-6, atol=1e-9)


def dict_item_overwritten(x, y, s):
    d = {"a": x, "b": x.sum()}
    d["a"] = np.expm1(np.sin(x))
    return s + np.sum(np.sin(d["a"])) + np.sum(np.sin(d["b"]))


GRAD_DICT = ssad.grad(dict_item_overwritten, wrt=(0, 1, 2))


def weighted_gradient_of_a_dict_write(x, y, s):
    gx, gy, gs = GRAD_DICT(x, y, s)
    return np.sum(gx * V) + np.sum(gy * V) + gs


def test_reverse_over_reverse_through_a_dict_written_by_key():
    # The gradient's adjoint of the dict is a dict (made by zero_at, add_at...): read
    # again, its own adjoint accumulates as a dict, never with `+=`.
    x = np.array([0.3, -0.2, 0.5, 0.9])
    got = ssad.grad(weighted_gradient_of_a_dict_write)(x, x, 0.3)
    expected = finite_difference_gradient(weighted_gradient_of_a_dict_write, (x, x, 0.3), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


# ----- A view of an array the gradient writes into, read again after the write -----
# The first-order gradient of `z[1:3] *= c` reads `z_part = z[1:3]` (a view) before the
# write and again after the backward sweep restored z. Differentiated again, that view is
# read as a copy (`owned`), so the second-order code sees no array two names share.


def written_through_parts(x, y):
    z = y * 1.0
    z[1:3] *= np.sin(x)
    z[0] = x * z[2]
    return np.sum(z * z)


def written_in_a_loop(x, y):
    z = y * 1.0
    for _ in range(3):
        z *= 1.0 + 0.5 * np.tanh(x)  # rebinds z each pass: the gradient keeps one name for it
        z[2:4] *= np.sqrt(1.5 + x * x)
        x = x + np.sum(z) * 0.1
    return np.sum(np.sort(z) * V) + x


def last_item_read_then_appended(x, y):
    states = [x * y]
    for _ in range(3):
        h = states[-1]  # an item of the list, not a view of it: the append leaves h as it is
        states.append(np.tanh(h * 2.0 + y))
        x = x + h
    return np.sum(states[-1] * V) + np.sum(x)


@pytest.mark.parametrize("function", [written_through_parts, written_in_a_loop, last_item_read_then_appended])
def test_second_order_of_a_gradient_that_writes_into_arrays(function):
    x, y = (0.7, Y) if function is not last_item_read_then_appended else (X, Y)
    gradient = ssad.grad(function, wrt=(0, 1))

    def directional(x, y):
        gx, gy = gradient(x, y)
        return np.sum(gx * 0.5) + np.sum(gy * V)

    for position in (0, 1):
        got = ssad.grad(directional, wrt=position)(x, y)
        np.testing.assert_allclose(got, finite_difference_gradient(directional, (x, y), position), rtol=1e-6, atol=1e-8)
    tangents = (np.ones_like(x) * 0.3, V * 0.1)
    _, tangent = ssad.jvp(gradient, (x, y), tangents)
    step = 1e-6
    up = gradient(x + step * tangents[0], y + step * tangents[1])
    down = gradient(x - step * tangents[0], y - step * tangents[1])
    for got, u, d in zip(tangent, up, down, strict=True):
        np.testing.assert_allclose(got, (u - d) / (2 * step), rtol=1e-6, atol=1e-8)
    hessian = ssad.hessian(function, wrt=1)(x, y)
    np.testing.assert_allclose(hessian, ssad.jacobian(ssad.grad(function, wrt=1), wrt=1)(x, y), rtol=1e-9, atol=1e-12)


def test_the_first_order_gradient_of_an_item_read_then_appended_matches_autograd():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")

    def reference(x, y):
        states = [x * y]
        for _ in range(3):
            h = states[-1]
            states.append(anp.tanh(h * 2.0 + y))
            x = x + h
        return anp.sum(states[-1] * V) + anp.sum(x)

    for position in (0, 1):
        np.testing.assert_allclose(
            ssad.grad(last_item_read_then_appended, wrt=position)(X, Y), autograd.grad(reference, position)(X, Y),
            rtol=1e-12,
        )


def logistic_loss_over_rows(w, X, t):
    total = 0.0
    z = np.zeros(len(t))
    for i in range(len(t)):
        z[i] = X[i] @ w  # a write into an array the loop made: refused at second order once
        total = total + np.log1p(np.exp(-t[i] * z[i]))
    return total + 0.5 * np.sum(w * w)


def test_the_hessian_of_a_loss_written_row_by_row_is_the_closed_form():
    rng = np.random.default_rng(3)
    X, t, w = rng.standard_normal((6, 3)), np.sign(rng.standard_normal(6)), rng.standard_normal(3)
    p = 1.0 / (1.0 + np.exp(-t * (X @ w)))  # sigma(t x.w): the Hessian is X^T diag(p (1 - p)) X + I
    expected = X.T @ (X * (p * (1 - p))[:, None]) + np.eye(3)
    np.testing.assert_allclose(ssad.hessian(logistic_loss_over_rows)(w, X, t), expected, rtol=1e-12, atol=1e-14)
    gradient = ssad.grad(logistic_loss_over_rows)

    def squared_gradient_norm(w, X, t):
        return np.sum(gradient(w, X, t) ** 2)

    np.testing.assert_allclose(
        ssad.grad(squared_gradient_norm)(w, X, t), 2.0 * expected @ gradient(w, X, t), rtol=1e-10, atol=1e-12
    )


def dict_entry_rewritten_in_a_loop(x, y):
    record = {"a": y * 0.3, "b": np.dot(x, x)}
    k = 0
    while k < 2:
        k += 1
        record["a"] = y * x[2]  # the gradient zeroes this entry's adjoint: a scalar 0.0 from then on
    return np.sum(np.sin(record["a"])) + np.sum(np.sin(record["b"]))


GRAD_REWRITTEN_ENTRY = ssad.grad(dict_entry_rewritten_in_a_loop, wrt=(0, 1))


def summed_gradient_of_a_dict_entry(x, y):
    gx, gy = GRAD_REWRITTEN_ENTRY(x, y)
    return np.sum(gx) + np.sum(gy)


def test_reverse_over_reverse_through_an_adjoint_entry_set_to_a_scalar_zero():
    for position in (0, 1):
        got = ssad.grad(summed_gradient_of_a_dict_entry, wrt=position)(X, Y)
        expected = finite_difference_gradient(summed_gradient_of_a_dict_entry, (X, Y), position)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def dict_entry_written_in_a_loop_after_an_update(x, y, s):
    # The gradient updates the dict's adjoint (`add_at`), takes a copy of it (`owned`:
    # it writes the entry next) and zeroes the entry: read again, the copy's own adjoint
    # is a dict like the others, accumulated as one.
    record = {"a": np.log(np.square(x) + 0.5), "b": s}
    t = x.mean()
    other = {"a": x.reshape(2, 2).T.reshape(4)}
    for _ in range(3):
        record["b"] = t
        t = t - np.max(np.outer(record["a"], other["a"]).sum(axis=0))
    return np.sin(s) + t + np.sum(np.sin(record["a"])) + np.sum(np.sin(record["b"]))


GRAD_UPDATED_ENTRY = ssad.grad(dict_entry_written_in_a_loop_after_an_update, wrt=(0, 1, 2))


def summed_gradient_of_an_updated_entry(x, y, s):
    gx, gy, gs = GRAD_UPDATED_ENTRY(x, y, s)
    return np.sum(gx * V) + np.sum(gy) + gs


def test_reverse_over_reverse_through_a_copied_dict_adjoint():
    x, y = np.array([0.3, -0.2, 0.5, 0.1]), np.array([0.4, 0.1, -0.3, 0.7])
    for position in (0, 2):
        got = ssad.grad(summed_gradient_of_an_updated_entry, wrt=position)(x, y, 0.3)
        expected = finite_difference_gradient(summed_gradient_of_an_updated_entry, (x, y, 0.3), position)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
