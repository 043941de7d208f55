"""Forms lowered to others: `filter(f, xs)`, `dict(zip(ks, vs))`, `reversed(xs)`, `del xs[i]`,
`np.add.at(a, i, b)` and the scalar types called as
functions (`np.float64(x)`, `complex(re, im)`) in differentiated code: exact in both
modes and at second order, checked against central differences."""

import functools

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

from .conftest import check_every_order


def positive_sum(x):
    ys = [x, x * 2.0, -x, x * x]
    return sum(filter(lambda v: v > 0.1, ys))


def truthy_squares(x):
    ys = [x, x * 0.0, -x, x * x]
    t = 0.0
    for v in filter(None, ys):
        t = t + v * v
    return t


def filtered_rows(w):
    rows = [w * 1.0, w * -2.0, w ** 2]
    kept = list(filter(lambda r: np.sum(r) > 0, rows))
    return np.sum(np.stack(kept) ** 2)


def zipped_dict(x):
    d = dict(zip(["a", "b"], [x, x * 3.0], strict=True))
    return d["b"] * d["a"]


def keyword_dict(x):
    d = dict(a=x, b=np.sin(x))
    return d["b"] * d["a"]


def walked_dict(x):
    d = dict(zip(["a", "b", "c"], [x, x * 3.0, np.cos(x)], strict=True))
    s = 0.0
    for _key, v in d.items():
        s = s + v * v
    return s


def float64_cast(x):
    return np.float64(x) ** 2 * np.sin(np.float64(x * 3.0))


def complex_parts(x):
    z = complex(x, x * x)
    return abs(z) + (z * z).real


def complex128_cast(x):
    z = np.complex128(x) * (1 + 2j)
    return abs(z) ** 2 + np.angle(z * np.exp(1j * x))


SCALAR_FUNCTIONS = [positive_sum, truthy_squares, zipped_dict, keyword_dict, walked_dict, float64_cast,
                    complex_parts, complex128_cast]


@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_first_order_in_both_modes(f):
    x = 0.7
    expected = numerical_gradient(f, x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (x,), (1.0,))[1], expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order(f):
    x = 0.7
    gradient = ssad.grad(f)
    expected = numerical_gradient(gradient, x)
    np.testing.assert_allclose(ssad.grad(gradient)(x), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ssad.hessian(f)(x), expected, rtol=1e-5, atol=1e-7)


def test_filter_of_arrays():
    w = np.array([0.3, -1.2, 0.8])
    expected = numerical_gradient(filtered_rows, w)
    np.testing.assert_allclose(ssad.grad(filtered_rows)(w), expected, rtol=1e-6, atol=1e-8)
    tangent = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(ssad.jvp(filtered_rows, (w,), (tangent,))[1], expected @ tangent, rtol=1e-6)


def test_float32_cast_keeps_the_gradient_in_the_input_precision():
    def f(x):
        return np.float32(x) * 2.0

    assert ssad.grad(f)(0.75) == 2.0
    assert ssad.jvp(f, (0.75,), (1.0,))[1] == 2.0


def filter_read_twice(x):
    kept = filter(lambda v: v > 0, [x, -x, x * 2.0])
    return sum(kept) + sum(kept)


def test_a_filter_held_in_a_name_is_still_read_once():
    # Python's filter is an iterator: the second sum sees nothing. ssad refuses rather
    # than read a list twice.
    with pytest.raises(ssad.SsadError, match="filter"):
        ssad.grad(filter_read_twice)(0.5)


def deleted_item(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    del xs[1]
    return xs[0] * 3.0 + xs[1] ** 2


def deleted_key(x):
    d = {"a": x[0], "b": x[1] * 2.0}
    del d["a"]
    d["c"] = x[2]
    s = 0.0
    for v in d.values():
        s = s + v * v
    return s


def deleted_in_a_loop(x):
    xs = [x[0], x[1], x[2]]
    for _ in range(2):
        del xs[0]
        xs.append(xs[-1] * np.sin(xs[0]))
    y = xs[0] * 2.0
    total = np.sum(y) + xs[1]
    del y
    return total


@pytest.mark.parametrize("f", [deleted_item, deleted_key, deleted_in_a_loop], ids=lambda f: f.__name__)
def test_del_of_an_item_or_a_name(f):
    x = np.array([0.3, 1.2, -0.8])
    expected = numerical_gradient(f, x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    tangents = np.array([ssad.jvp(f, (x,), (t,))[1] for t in np.eye(3)])
    np.testing.assert_allclose(tangents, expected, rtol=1e-6, atol=1e-8)
    hessian = np.array([numerical_gradient(lambda v, k=k: ssad.grad(f)(v)[k], x) for k in range(3)])
    np.testing.assert_allclose(ssad.hessian(f)(x), hessian, rtol=1e-5, atol=1e-6)


def deleted_slice(x):
    xs = [x[0], x[1], x[2]]
    del xs[0:2]
    return xs[0]


def test_del_of_a_slice_is_refused_with_what_to_write():
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"xs = xs\[:i\] \+ xs\[j:\]") as refused:
        ssad.grad(deleted_slice)(np.ones(3))
    assert refused.value.lineno == deleted_slice.__code__.co_firstlineno + 2


def paired_with_reversed(x):
    hs = [x, 2.0 * x, np.sin(x)]
    pairs = list(zip(hs, reversed(hs), strict=True))
    return sum(np.dot(a, b) for a, b in pairs) + np.sum(list(reversed(hs))[0] * hs[0])


def reversed_rows(w):
    m = w.reshape(2, 3) * 1.0
    rows = list(reversed(m))
    return np.sum(rows[0] * np.cos(rows[1]))


@pytest.mark.parametrize("f", [paired_with_reversed, reversed_rows], ids=lambda f: f.__name__)
def test_reversed_outside_a_loop_header(f):
    x = np.array([0.5, -1.0, 0.3, 1.2, -0.4, 0.9])[: 2 if f is paired_with_reversed else 6]
    expected = numerical_gradient(f, x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    tangent = np.linspace(-1.0, 1.0, x.size)
    np.testing.assert_allclose(ssad.jvp(f, (x,), (tangent,))[1], expected @ tangent, rtol=1e-6, atol=1e-8)
    hessian = np.array([numerical_gradient(lambda v, k=k: ssad.grad(f)(v)[k], x) for k in range(x.size)])
    np.testing.assert_allclose(ssad.hessian(f)(x), hessian, rtol=1e-5, atol=1e-6)


def reversed_read_twice(x):
    backwards = reversed([x, 2.0 * x])
    return sum(backwards) + sum(backwards)


def test_a_reversed_held_in_a_name_is_read_once():
    with pytest.raises(ssad.SsadError, match="read more than once"):
        ssad.grad(reversed_read_twice)(0.5)


EDGES = np.array([0, 2, 0, 1, 2, 2])


def scattered(x, v):
    y = x * 1.0
    np.add.at(y, EDGES, v * x[EDGES])
    return np.sum(np.sin(y) * y)


def scattered_in_a_loop(x, v):
    h = x * 1.0
    for _ in range(2):
        messages = np.tanh(h[EDGES] * v)
        agg = np.zeros(3)
        np.add.at(agg, EDGES, messages)
        h = h + agg
    return np.sum(h ** 2)


@pytest.mark.parametrize("f", [scattered, scattered_in_a_loop], ids=lambda f: f.__name__)
def test_np_add_at_accumulates_repeated_indices(f):
    x, v = np.array([0.3, -0.7, 1.1]), np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.5])
    for p, point in ((0, x), (1, v)):
        def moved(value, p=p):
            return f(*(value if k == p else a for k, a in enumerate((x, v))))

        expected = numerical_gradient(moved, point)
        np.testing.assert_allclose(ssad.grad(f, wrt=p)(x, v), expected, rtol=1e-6, atol=1e-8)
        tangent = np.linspace(-1.0, 1.0, point.size)
        tangents = tuple(tangent if k == p else None for k in range(2))
        np.testing.assert_allclose(ssad.jvp(f, (x, v), tangents)[1], expected @ tangent, rtol=1e-6, atol=1e-8)
    hessian = np.array([numerical_gradient(lambda w, k=k: ssad.grad(f)(w, v)[k], x) for k in range(3)])
    np.testing.assert_allclose(ssad.hessian(f)(x, v), hessian, rtol=1e-5, atol=1e-6)


def scattered_into_a_view(x):
    y = x * 1.0
    head = y[:2]
    np.add.at(y, np.array([0, 0]), x[:2])
    return np.sum(head * x[:2])


def test_np_add_at_into_an_array_a_view_shares_is_refused():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="head"):
        ssad.grad(scattered_into_a_view)(np.ones(3))


def pairs_mapped(x):
    # map with two iterables walks their zip: it was refused as a call of zip "through a variable"
    return sum(map(lambda a, b: a * b, x, x[::-1]))


def weighs_the_largest_by_its_position(x):
    xs = list(x)
    i = xs.index(max(xs))  # a position: no derivative, at any order
    return x[i] * np.sum(x ** 2)


@pytest.mark.parametrize("f", [pairs_mapped, weighs_the_largest_by_its_position])
def test_map_of_two_lists_and_list_positions_at_every_order(f):
    x, v = np.array([0.3, -0.4, 1.1]), np.array([1.0, 0.5, -0.3])
    expected = numerical_gradient(f, x.copy())
    np.testing.assert_allclose(ssad.grad(f)(x.copy()), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(f, (x.copy(),), (v,))[1], expected @ v, rtol=1e-6, atol=1e-8)
    grad_f = ssad.grad(f)
    second = numerical_gradient(lambda u: float(np.dot(grad_f(u), v)), x.copy())
    np.testing.assert_allclose(ssad.hvp(f)(x.copy(), v), second, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(lambda u: np.dot(grad_f(u), v))(x.copy()), second, rtol=1e-5, atol=1e-6)


def summed_squares_by_reduce(x):
    return functools.reduce(lambda a, b: a + b * b, [x[0], x[1], x[2]], 0.0)


def reduced_without_a_start(x):
    return functools.reduce(lambda a, b: a * b + np.sin(b), [x[0], x[1] * 2.0, x[2]])


def matrices_reduced_by_dot(x):
    a = np.outer(x, x) * 0.3 + np.eye(3)
    return np.sum(functools.reduce(np.dot, [a, np.diag(x), a]))


def reduce_capturing_a_scale(x):
    scale = np.sum(x) * 0.5
    return functools.reduce(lambda acc, v: acc + scale * v**3, x, 1.0)


def rows_reduced(x):
    rows = np.reshape(x, (3, 1)) * np.array([[1.0, -0.5]])
    return np.sum(functools.reduce(lambda a, r: a * 0.5 + np.tanh(r), rows))


@pytest.mark.parametrize("f", [summed_squares_by_reduce, reduced_without_a_start, matrices_reduced_by_dot,
                               reduce_capturing_a_scale, rows_reduced], ids=lambda f: f.__name__)
def test_functools_reduce_is_its_loop_at_every_order(f):
    # was refused ("no adjoint rule for functools.reduce"); now the loop it runs
    check_every_order(f, np.array([0.5, -1.2, 0.8]), np.array([0.3, 1.0, -0.7]))


def test_functools_reduce_matches_autograd():
    import autograd
    import autograd.numpy as anp

    def matrices_autograd(x):
        a = anp.outer(x, x) * 0.3 + anp.eye(3)
        return anp.sum(functools.reduce(anp.dot, [a, anp.diag(x), a]))

    x = np.array([0.5, -1.2, 0.8])
    np.testing.assert_allclose(ssad.grad(matrices_reduced_by_dot)(x), autograd.grad(matrices_autograd)(x), rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(matrices_reduced_by_dot)(x), autograd.hessian(matrices_autograd)(x),
                               rtol=1e-10, atol=1e-12)


def first_item_times_sum(x):
    return next(iter(x)) * np.sum(x)


def first_square_of_a_generator(x):
    return next(iter(v * v for v in x)) + x[1]


def first_value_of_a_dict(x):
    params = {"w": x[:2] * 2.0, "b": x[2:]}
    w = next(iter(params.values()))
    return np.sum(w**2) + np.sum(params["b"] * w[0])


@pytest.mark.parametrize("f", [first_item_times_sum, first_square_of_a_generator, first_value_of_a_dict],
                         ids=lambda f: f.__name__)
def test_next_of_iter_is_the_first_item_at_every_order(f):
    # was refused ("no adjoint rule for next"); now `list(xs)[0]`
    check_every_order(f, np.array([0.5, -1.2, 0.8]), np.array([0.3, 1.0, -0.7]))
