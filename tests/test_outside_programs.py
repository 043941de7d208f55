"""Programs written as users write them, not for ssad, whose derivatives once failed:
each is checked against central differences (or a closed form) at every order it failed."""

import warnings

import numpy as np
import pytest
import scipy.linalg

import ssad
from ssad.testing import numerical_gradient


def sorted_quantiles(x):
    s = np.sort(x)
    c = np.cumsum(s)
    return np.sum(c * np.linspace(0, 1, x.shape[0])) + np.median(x)


def smooth_quantiles(x):
    return np.sum(np.sin(x) * np.cumsum(np.sort(x))) + np.median(np.tanh(x)) ** 2


def test_reverse_over_reverse_through_a_median():
    # the median's adjoint indexes its seed, a NumPy scalar, as seed[..., None]: the adjoint
    # of that index is added into a scalar (once "cannot index an adjoint of type float64")
    t = np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.9])
    x = np.random.default_rng(0).standard_normal(6)
    for f in (sorted_quantiles, smooth_quantiles):
        gradient = ssad.grad(f)

        def directional(x, gradient=gradient):
            return np.sum(gradient(x) * t)

        got = ssad.grad(directional)(x)
        expected = numerical_gradient(lambda x, directional=directional: float(directional(x)), x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        hessian_t = ssad.jvp(gradient, (x,), (t,))[1]
        np.testing.assert_allclose(hessian_t, got, rtol=1e-8, atol=1e-10)
        if f is sorted_quantiles:  # piecewise linear
            np.testing.assert_allclose(got, np.zeros(6), atol=1e-12)


def expanded(x):
    return np.sum(np.sin(x)[..., None] * np.array([1.0, 2.0]))


def indexed_scalar(x):
    return np.sum(x[None] * 3.0) + x[()] ** 2


@pytest.mark.parametrize("f", [expanded, indexed_scalar])
@pytest.mark.parametrize("kind", ["0-d array", "NumPy scalar"])
def test_a_number_is_the_tangent_of_a_numpy_scalar(f, kind):
    # `jvp(f, (np.float64(2.0),), (1.0,))`: the tangent, a Python float, is indexed as its
    # primal is (once "'float' object is not subscriptable" from the generated code)
    x = np.array(0.7) if kind == "0-d array" else np.float64(0.7)
    value, tangent = ssad.jvp(f, (x,), (1.0,))
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx((f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6)
    _, tangent = ssad.jvp(f, (x,), (0.5,))
    assert tangent == pytest.approx(0.5 * (f(x + 1e-6) - f(x - 1e-6)) / 2e-6, rel=1e-6)


def test_a_number_is_the_tangent_of_every_entry_of_an_array():
    def f(x):
        return np.sum(x[:, None] * x[None, :])

    x = np.array([0.5, -1.0, 2.0])
    _, tangent = ssad.jvp(f, (x,), (1.0,))
    assert tangent == pytest.approx(np.sum(ssad.grad(f)(x)))
    _, tangents = ssad.jvp(lambda xs: f(xs[0]) * xs[1], ([x, 2.0],), ([1.0, 0.0],))
    assert tangents == pytest.approx(2.0 * np.sum(ssad.grad(f)(x)))


def gp_negative_log_likelihood(log_scale, X, y):
    scale = np.exp(log_scale)
    d = X[:, None, :] - X[None, :, :]
    K = np.exp(-0.5 * np.sum(d**2, axis=-1) / scale**2) + 1e-2 * np.eye(X.shape[0])
    L = np.linalg.cholesky(K)
    alpha = scipy.linalg.solve_triangular(L, y, lower=True)
    return 0.5 * alpha @ alpha + np.sum(np.log(np.diag(L)))


def test_forward_mode_through_a_triangular_solve_with_a_constant_right_side():
    # the tangent rule's `0.0 if d_b is None else d_b`, given no tangent for b, once printed
    # `0.0 if 0.0 is None else 0.0`, which Python warns about when it compiles the code
    rng = np.random.default_rng(0)
    args = (0.3, rng.standard_normal((6, 2)), rng.standard_normal(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        _, tangent = ssad.jvp(gp_negative_log_likelihood, args, (1.0, None, None))
        _, curvature = ssad.jvp(ssad.grad(gp_negative_log_likelihood), args, (1.0, None, None))
    f = gp_negative_log_likelihood
    step = 1e-5
    assert tangent == pytest.approx((f(0.3 + step, *args[1:]) - f(0.3 - step, *args[1:])) / (2 * step), rel=1e-6)
    gradient = ssad.grad(f)
    expected = (gradient(0.3 + step, *args[1:]) - gradient(0.3 - step, *args[1:])) / (2 * step)
    assert curvature == pytest.approx(expected, rel=1e-5)
    assert "0.0 is None" not in str(ssad.show(f, mode="forward"))


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


def affine_model(W, x):
    layer = Affine(W, 0.5)
    return np.sum(np.tanh(layer(x)) ** 2)


def test_a_class_built_from_active_values_is_refused_alike_in_both_modes():
    W, x = np.ones((3, 2)), np.ones((4, 3))
    with pytest.raises(ssad.MissingRuleError, match="constructing an Affine from values that carry gradients"):
        ssad.grad(affine_model)(W, x)
    with pytest.raises(ssad.MissingRuleError, match="constructing an Affine from values that carry tangents"):
        ssad.jvp(affine_model, (W, x), (W, None))


def logistic_loss(p, X, y):
    z = X @ p["w"] + p["b"]
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.1 * np.sum(p["w"] ** 2)


def two_layers(ws, X):
    return np.sum(np.tanh(X @ ws[0]) * ws[1])


def _data():
    rng = np.random.default_rng(0)
    p = {"w": rng.standard_normal(3), "b": 0.1}
    ws = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    return p, ws, rng.standard_normal((8, 3)), np.sign(rng.standard_normal(8))


def test_check_grads_takes_a_dict_or_a_list_of_parameters_at_both_orders():
    # once "'float' object is not subscriptable": directions are drawn over the flat vector
    p, ws, X, y = _data()
    for order in (1, 2):
        ssad.check_grads(logistic_loss, (p, X, y), wrt=0, order=order)
        ssad.check_grads(two_layers, (ws, X), wrt=0, order=order)


def off_by_a_percent(x):
    return np.sin(x)


@ssad.adjoint(off_by_a_percent)
def _off_by_a_percent_adjoint(dy, y, x):
    return (dy * np.cos(x) * 1.01,)


def wrong_inside_a_list(ws, X):
    return np.sum(off_by_a_percent(X @ ws[0]) * ws[1])


def test_check_grads_still_finds_a_wrong_rule_through_a_list():
    _, ws, X, _ = _data()
    with pytest.raises(AssertionError, match="reverse mode"):
        ssad.check_grads(wrong_inside_a_list, (ws, X), wrt=0, modes=("reverse",))


def test_a_matrix_of_a_dict_parameter_is_refused_with_the_flat_way_round():
    p, _, X, y = _data()
    for matrix in (ssad.hessian, ssad.jacobian):
        with pytest.raises(ssad.SsadError, match=r"`p` is a dict: flatten it"):
            matrix(logistic_loss)(p, X, y)
    vector, unflatten = ssad.flatten(p)

    def flat_loss(v):
        return logistic_loss(unflatten(v), X, y)

    H = ssad.hessian(flat_loss)(vector)
    product = ssad.hvp(logistic_loss)(p, X, y, {"w": np.array([1.0, 0.0, 0.0]), "b": 0.0})
    np.testing.assert_allclose(ssad.flatten(product)[0], H[:, 0], rtol=1e-10)
    expected = numerical_gradient(lambda v: float(ssad.grad(flat_loss)(v)[0]), vector)
    np.testing.assert_allclose(H[0], expected, rtol=1e-5, atol=1e-7)


def sum_into_buffer(x, y):
    c = np.zeros(3)
    np.multiply(x, y, out=c)
    return np.sum(c ** 2)


def add_into_buffer_by_position(x, y):
    c = np.zeros(3)
    np.add(x, y, c)
    return np.sum(c ** 2)


def dot_into_buffer_by_position(x, y):
    c = np.zeros(3)
    np.dot(np.outer(x, y), x, c)
    return np.sum(c)


def clip_in_place(x, y):
    z = x * y
    np.clip(z, -0.5, 0.5, out=z)
    return np.sum(z ** 2)


def method_into_buffer(x, y):
    c = np.zeros(())
    total = (x * y).sum(out=c)
    return total + np.sum(c)


@pytest.mark.parametrize("f", [sum_into_buffer, add_into_buffer_by_position, dot_into_buffer_by_position,
                               clip_in_place, method_into_buffer])
def test_an_output_argument_is_refused_in_both_modes(f):
    # `np.multiply(x, y, out=c)` writes into `c` in place: the gradient was silently zero
    # (np.clip(z, ..., out=z): the gradient of the unclipped z)
    x, y = np.array([0.3, -0.7, 0.9]), np.array([1.2, 0.4, -0.8])
    for run in (lambda: ssad.grad(f)(x, y), lambda: ssad.jvp(f, (x, y), (np.ones(3), np.ones(3)))):
        with pytest.raises(ssad.SsadError, match=r"in place \(its `out` argument\)") as refused:
            run()
        assert "test_outside_programs.py" in str(refused.value)


def out_is_the_users_own_parameter(x):
    return scaled_copy(x, out=2.0) + np.sum(x)


def scaled_copy(x, out):
    return np.sum(x * out)


def test_an_out_parameter_of_the_users_own_function_is_an_ordinary_argument():
    x = np.array([0.3, -0.7, 0.9])
    np.testing.assert_allclose(ssad.grad(out_is_the_users_own_parameter)(x), np.full(3, 3.0))


def solve_with_constant_matrix(s, b, assume_a, transposed):
    m = s @ s.T + 3.0 * np.eye(3) if assume_a in ("pos", "sym", "gen") else s + 3.0 * np.eye(3)
    if assume_a == "upper triangular":
        m = np.triu(m)
    elif assume_a == "lower triangular":
        m = np.tril(m)
    elif assume_a == "diagonal":
        m = np.diag(np.diag(m))
    elif assume_a == "tridiagonal":
        m = np.triu(np.tril(m, 1), -1)
    return np.sum(np.sin(scipy.linalg.solve(m, b, assume_a=assume_a, transposed=transposed)))


@pytest.mark.parametrize("assume_a", ["gen", "sym", "pos", "diagonal", "tridiagonal", "upper triangular",
                                      "lower triangular"])
@pytest.mark.parametrize("transposed", [False, True])
def test_forward_mode_through_a_solve_with_a_constant_matrix(assume_a, transposed):
    # only the right side moves: the matrix's tangent is the float 0.0, which the
    # structure's projection and the product once failed on (matmul of a scalar, np.triu(0.0))
    if transposed and assume_a in ("sym", "pos"):
        return  # scipy.linalg.solve refuses transposed=True with these structures
    rng = np.random.default_rng(5)
    s, b, t = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal(3)

    def along(step):
        return solve_with_constant_matrix(s, b + step * t, assume_a, transposed)

    expected = (along(1e-6) - along(-1e-6)) / 2e-6
    _, got = ssad.jvp(solve_with_constant_matrix, (s, b, assume_a, transposed), (None, t, None, None))
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-8)
    gradient = ssad.grad(solve_with_constant_matrix, wrt=1)
    hvp = ssad.jvp(gradient, (s, b, assume_a, transposed), (None, t, None, None))[1]
    expected_hvp = (gradient(s, b + 1e-5 * t, assume_a, transposed)
                    - gradient(s, b - 1e-5 * t, assume_a, transposed)) / 2e-5
    np.testing.assert_allclose(hvp, expected_hvp, rtol=1e-5, atol=1e-7)


# ----- writes through a view that a call returned -----


def first_two(v):
    return v[:2]


def halves(v):
    return v[:2], v[2:]


def same(v):
    return v


def through_reshape(v):
    u = v.reshape(2, 2)
    return first_row(u)


def first_row(m):
    return m[0]


def doubled(v):
    return v * 2.0


def write_through_helper_view(x):
    z = x * 2.0
    head = first_two(z)
    head[0] = 5.0
    return np.sum(z ** 2)


def write_through_helper_tuple(x):
    z = x * 2.0
    a, b = halves(z)
    b[0] = 5.0
    return np.sum(z ** 2 * np.arange(4))


def add_through_helper_identity(x):
    z = x * 2.0
    w = same(z)
    w += 1.0
    return np.sum(z ** 2)


def write_through_helper_chain(x):
    z = x * 2.0
    w = through_reshape(z)
    w[0] = 5.0
    return np.sum(z ** 2)


def write_through_nested_function(x):
    def head(v):
        return v[:2]

    z = x * 2.0
    h = head(z)
    h[0] = 5.0
    return np.sum(z ** 2)


def write_through_lambda(x):
    tail = lambda v: v[1:]  # noqa: E731
    z = x * 2.0
    h = tail(z)
    h[0] = 5.0
    return np.sum(z ** 2)


def write_through_split(x):
    z = x * 2.0
    a, b = np.split(z, 2)
    a[0] = 5.0
    return np.sum(z ** 2)


def write_through_array_split_item(x):
    z = x * 2.0
    parts = np.array_split(z, 2)
    p = parts[1]
    p[0] = 5.0
    return np.sum(z ** 2 * np.arange(4))


def write_through_unstack(x):
    z = np.outer(x, x + 1.0)
    rows = np.unstack(z)
    r = rows[0]
    r[1] = 5.0
    return np.sum(z * np.arange(16).reshape(4, 4))


def write_through_permute_dims(x):
    z = np.outer(x, x + 1.0)
    y = np.permute_dims(z, (1, 0))
    y[0, 1] = 5.0
    return np.sum(z * np.arange(16).reshape(4, 4))


def write_through_matrix_transpose(x):
    z = np.outer(x, x + 1.0)
    y = np.matrix_transpose(z)
    y[0, 1] = 5.0
    return np.sum(z * np.arange(16).reshape(4, 4))


def write_through_mT(x):
    z = np.outer(x, x + 1.0)
    y = z.mT
    y[0, 1] = 5.0
    return np.sum(z * np.arange(16).reshape(4, 4))


def write_through_list_item(x):
    z = x * 2.0
    held = [x, z]
    w = held[1]
    w[0] = 5.0
    return np.sum(z ** 2)


def write_into_argument_through_helper(x):
    head = first_two(x)
    head[0] = 5.0
    return np.sum(head ** 2)


@pytest.mark.parametrize("f", [
    write_through_helper_view, write_through_helper_tuple, add_through_helper_identity, write_through_helper_chain,
    write_through_nested_function, write_through_lambda, write_through_split, write_through_array_split_item,
    write_through_unstack, write_through_permute_dims, write_through_matrix_transpose, write_through_mT,
    write_through_list_item,
])
def test_a_write_through_a_view_a_call_returned_is_refused(f):
    # each changed `z` through the view, and ssad's gradient missed it: 20.0 where the
    # derivative is 0 (the element was overwritten), or the gradient of the unchanged z
    x = np.array([0.3, -0.7, 1.2, 0.5])
    for run in (lambda: ssad.grad(f)(x), lambda: ssad.jvp(f, (x,), (np.ones(4),))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="shares"):
            run()


def test_a_write_through_a_helper_view_of_an_argument_is_made_on_a_copy():
    # the view shares the caller's array: the gradient function copies it, as for x[0] = v
    x = np.array([0.3, -0.7, 1.2, 0.5])
    got = ssad.grad(write_into_argument_through_helper)(x)
    np.testing.assert_allclose(got, [0.0, -1.4, 0.0, 0.0])
    np.testing.assert_allclose(x, [0.3, -0.7, 1.2, 0.5])


def write_into_fresh_helper_result(x):
    z = x * 2.0
    w = doubled(z)
    w[0] = 5.0
    return np.sum(z ** 2) + np.sum(w * x)


def append_to_a_list_of_arguments(x, y):
    items = list((x, y))
    items.append(x * y)
    total = [x]
    total.append(y)
    return np.sum(items[2] ** 2) + np.sum(total[1])


@pytest.mark.parametrize("f, args", [
    (write_into_fresh_helper_result, (np.array([0.3, -0.7, 1.2, 0.5]),)),
    (append_to_a_list_of_arguments, (np.array([0.3, -0.7]), np.array([1.1, 0.4]))),
])
def test_new_values_from_calls_and_new_lists_are_still_written(f, args):
    # a helper that returns a new array, and a new list of arguments: nothing shared changes
    for p in range(len(args)):
        got = ssad.grad(f, wrt=p)(*args)
        expected = numerical_gradient(lambda v, p=p: float(f(*args[:p], v, *args[p + 1:])), args[p])
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
        gradient = ssad.grad(f, wrt=p)
        t = np.linspace(0.5, 1.0, args[p].size)
        hvp = ssad.jvp(gradient, args, tuple(t if k == p else None for k in range(len(args))))[1]
        shifted = [(gradient(*args[:p], args[p] + s * t, *args[p + 1:])) for s in (1e-5, -1e-5)]
        np.testing.assert_allclose(hvp, (shifted[0] - shifted[1]) / 2e-5, rtol=1e-5, atol=1e-7)


# ----- a function of yours that changes an array it is given -----


def normalize_in_place(v):
    v /= np.sum(v)
    return v


def scale_in_place(v):
    v *= 2.0
    return 0.0


def scale_through(v):
    return scale_in_place(v) + 1.0


def advance(t, dt):
    t += dt
    return t


def normalized_then_reread(x):
    z = x * 2.0
    y = normalize_in_place(z)
    return np.sum(z ** 2) + np.sum(y)


def scaled_then_reread(x):
    z = x * 2.0
    _ = scale_in_place(z)
    return np.sum(z ** 2)


def scaled_two_calls_down(x):
    z = x * 2.0
    c = scale_through(z)
    return np.sum(z ** 2) * c


@pytest.mark.parametrize("f", [normalized_then_reread, scaled_then_reread, scaled_two_calls_down])
def test_a_helper_changing_its_argument_read_afterwards_is_refused(f):
    # Python reads the changed z after the call; ssad lowers `v /= s` as `v = v / s`, so its
    # gradient was that of the unchanged z (normalized_then_reread: [2.4, 5.6, 9.6, 4.0]
    # where the derivative is about [-0.148, -0.039, 0.099, -0.093])
    x = np.array([0.3, 0.7, 1.2, 0.5])
    for run in (lambda: ssad.grad(f)(x), lambda: ssad.jvp(f, (x,), (np.ones(4),))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=r"changes its argument `z` \(an array, or an array it holds\) in place") as refused:
            run()
        assert refused.value.lineno == f.__code__.co_firstlineno + 2


def rebound_by_the_call(x):
    z = x * 2.0
    z = normalize_in_place(z)
    return np.sum(z ** 2)


def time_stepped(x):
    t = 0.0
    t2 = advance(t, 0.5)
    return np.sum(np.sin(x * t2)) + t


def stepped_from_a_number_argument(x, s):
    u = advance(s, 0.5)
    return np.sum(np.sin(x * u)) * s


def test_a_helper_changing_an_argument_no_one_reads_again_is_differentiated():
    # `z = helper(z)` reads only the result afterwards, and `t += dt` on a number rebinds it
    x = np.array([0.3, 0.7, 1.2, 0.5])
    for f in (rebound_by_the_call, time_stepped):
        np.testing.assert_allclose(ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-8)
    # `s` is read again, and may be an array until the call runs: a number is rebound
    for p, point in ((0, x), (1, 0.8)):
        args = [x, 0.8]

        def moved(v, p=p, args=args):
            return float(stepped_from_a_number_argument(*args[:p], v, *args[p + 1:]))

        got = ssad.grad(stepped_from_a_number_argument, wrt=p)(x, 0.8)
        np.testing.assert_allclose(got, numerical_gradient(moved, point), rtol=1e-6, atol=1e-8)
        hvp = ssad.jvp(ssad.grad(stepped_from_a_number_argument, wrt=p), (x, 0.8),
                       tuple(np.ones_like(point) if k == p else None for k in range(2)))[1]
        gradient = ssad.grad(stepped_from_a_number_argument, wrt=p)
        shifted = [gradient(*args[:p], point + e * np.ones_like(point), *args[p + 1:]) for e in (1e-5, -1e-5)]
        np.testing.assert_allclose(hvp, (shifted[0] - shifted[1]) / 2e-5, rtol=1e-5, atol=1e-7)


# ----- changes ssad would not see: of a captured value, of a module's array -----


def nested_function_writes_what_it_captures(x):
    z = x * 2.0

    def poke(v):
        z[0] = v
        return v

    _ = poke(x[1] ** 2)
    return np.sum(z ** 2)


def lambda_appends_to_what_it_captures(x):
    held = [x * 2.0]
    keep = lambda v: held.append(v) or v  # noqa: E731
    _ = keep(x * 3.0)
    return np.sum(held[-1] ** 2)


def nested_function_scales_a_second_name(x):
    z = x * 2.0

    def scale(c):
        zz = z
        zz *= c
        return c

    u = scale(3.0)
    return np.sum(z ** 2) + u


BUFFERS = [np.zeros(4)]
WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0])


def writes_into_a_module_array(x):
    buf = BUFFERS[0]
    buf[:] = x
    return np.sum(BUFFERS[0] ** 2)


def adds_into_a_module_array(x):
    w = WEIGHTS
    w += x
    return np.sum(WEIGHTS * x)


@pytest.mark.parametrize("f, says", [
    (nested_function_writes_what_it_captures, "changes `z`, which it captures"),
    (lambda_appends_to_what_it_captures, "changes `held`, which it captures"),
    (nested_function_scales_a_second_name, "changes `z`, which it captures"),
    (writes_into_a_module_array, "defined outside the function"),
    (adds_into_a_module_array, "defined outside the function"),
])
def test_changes_ssad_would_not_see_are_refused(f, says):
    # each gave the gradient of the unchanged value: [1.96, -5.6, 9.6, 4.0] where the first
    # element was overwritten, and a zero gradient through the module's array
    x = np.array([0.3, -0.7, 1.2, 0.5])
    before = (BUFFERS[0].copy(), WEIGHTS.copy())
    for run in (lambda: ssad.grad(f)(x), lambda: ssad.jvp(f, (x,), (np.ones(4),))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=says):
            run()
    np.testing.assert_array_equal(BUFFERS[0], before[0])
    np.testing.assert_array_equal(WEIGHTS, before[1])


def reads_a_module_array_and_a_captured_one(x):
    w = WEIGHTS
    scaled = w * 2.0

    def weigh(v):
        return np.sum(v * scaled)

    z = x * 1.0
    z[0] = weigh(x)
    return np.sum(z ** 2) + weigh(z)


def test_reading_what_is_captured_or_module_level_is_still_differentiated():
    x = np.array([0.3, -0.7, 1.2, 0.5])
    f = reads_a_module_array_and_a_captured_one
    np.testing.assert_allclose(ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-8)


# ----- a name that shares an array on one path only -----


def shares_on_one_branch(x):
    z = x * 2.0
    if x[0] > 0:
        y = z
    else:
        y = x * 1.0
    y[2] = 1.0
    return np.sum(z ** 2)


def shares_by_a_conditional_expression(x):
    z = x * 2.0
    y = z if z is not None else None
    y[1] = 5.0
    return np.sum(z ** 2)


def shares_from_the_second_iteration(x):
    z = x * 2.0
    y = x * 1.0
    for i in range(2):
        if i == 1:
            y = z
        y[0] = 3.0
    return np.sum(z ** 2)


def shares_from_the_end_of_the_last_iteration(x):
    z = x * 2.0
    y = x * 1.0
    for _ in range(2):
        y[0] = 3.0
        y = z
    return np.sum(z ** 2)


@pytest.mark.parametrize("f", [shares_on_one_branch, shares_by_a_conditional_expression,
                               shares_from_the_second_iteration, shares_from_the_end_of_the_last_iteration])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_write_through_a_name_sharing_on_some_paths_is_refused(f, sign):
    # shares_on_one_branch took y's last binding on the `else` path for all paths: the write
    # through the `if` path's y into z went unseen (gradient [2.4, -5.6, 4.0, 4.0], the third
    # element 0); the conditional expression gave 20.0 where z[1] was overwritten, and the
    # write before `y = z` in a loop went into z in the second iteration ([12.0, ...])
    x = sign * np.array([0.3, -0.7, 1.2, 0.5])
    with pytest.raises(ssad.UnsupportedSyntaxError, match="shares"):
        ssad.grad(f)(x)


def fresh_on_every_path(x):
    z = x * 2.0
    if x[0] > 0:
        y = z * 1.0
    else:
        y = x * 1.0
    y[2] = 1.0
    return np.sum(z ** 2) + np.sum(y * x)


def rebound_to_a_new_array_before_the_write(x):
    z = x * 2.0
    s = 0.0
    for i in range(3):
        y = z[i:i + 2]
        s = s + np.sum(y)
        y = y * 2.0
        y[0] = 1.0
        s = s + np.sum(y * y)
    return s + np.sum(z * x)


@pytest.mark.parametrize("f", [fresh_on_every_path, rebound_to_a_new_array_before_the_write])
def test_a_write_through_a_name_fresh_on_every_path_is_differentiated(f):
    # the view `y = z[i:i + 2]` is replaced by a new array before the write, in every iteration
    for sign in (1.0, -1.0):
        x = sign * np.array([0.3, -0.7, 1.2, 0.5])
        np.testing.assert_allclose(ssad.grad(f)(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-8)


def smaller_of_two_numbers(x, s):
    t = min(s, 0.5)
    t /= 2.0
    u = max(x[1], 0.1)
    u += 1.0
    return np.sum(x ** 2) * t + s + u * x[1]


def longest_row_written(x):
    rows = [x * 2.0, x * 3.0]
    longest = max(rows, key=np.sum)
    longest[0] = 5.0
    return np.sum(rows[0] ** 2) + np.sum(rows[1])


def test_min_and_max_of_numbers_are_new_values_and_with_a_key_they_may_be_an_operand():
    # `t = min(s, 0.5); t /= 2.0` rebinds t, a number: once refused as a write into s
    x = np.array([0.3, 0.7, 1.2, 0.5])
    for p, point in ((0, x), (1, 0.3)):
        args = [x, 0.3]

        def moved(v, p=p, args=args):
            return float(smaller_of_two_numbers(*args[:p], v, *args[p + 1:]))

        got = ssad.grad(smaller_of_two_numbers, wrt=p)(x, 0.3)
        np.testing.assert_allclose(got, numerical_gradient(moved, point), rtol=1e-6, atol=1e-8)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="shares"):
        ssad.grad(longest_row_written)(x)


# ----- tuple assignments that write into an array -----
def swaps_two_elements(x):
    y = x * 1.0
    y[0], y[1] = y[1], y[0]
    return y[0] * 3.0 + y[1] * np.sin(y[2])


def swaps_an_element_and_a_name(x):
    y = x * 1.0
    t = x[3]
    y[0], t = t, y[0]
    return y[0] * 3.0 + t * y[1]


def rotates_three_elements(x):
    y = x * 1.0
    y[0], y[1], y[2] = y[1], y[2], y[0]
    return np.sum(y * np.array([1.0, 2.0, 3.0, 4.0]) * y)


def swaps_rows_with_a_copy(m):
    a = m * 1.0
    a[0], a[1] = a[1], a[0].copy()
    return np.sum(a * np.arange(6.0).reshape(2, 3) * a)


def _second_order_checks(f, x, t):
    gradient = ssad.grad(f)
    np.testing.assert_allclose(gradient(x), numerical_gradient(f, x), rtol=1e-6, atol=1e-8)
    _, along = ssad.jvp(f, (x,), (t,))
    np.testing.assert_allclose(along, np.sum(numerical_gradient(f, x) * t), rtol=1e-6, atol=1e-8)
    expected = numerical_gradient(lambda v: float(np.sum(gradient(v) * t)), x)
    np.testing.assert_allclose(ssad.jvp(gradient, (x,), (t,))[1], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.grad(lambda v: np.sum(gradient(v) * t))(x), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [swaps_two_elements, swaps_an_element_and_a_name, rotates_three_elements])
def test_a_tuple_assignment_reads_every_element_before_it_writes(f):
    # `y[0], y[1] = y[1], y[0]` was lowered as `y[0] = y[1]; y[1] = y[0]`: the value and both
    # derivatives were those of y[1] twice (gradient [0, 4, 0, 0] for [1, 3, 0, 0])
    x = np.array([0.3, -0.7, 1.2, 0.5])
    assert f(x) != pytest.approx(f(np.array([x[1], x[1], x[2], x[3]])))
    _second_order_checks(f, x, np.array([0.5, -1.0, 0.25, 2.0]))


def swaps_rows_through_views(m):
    a = m * 1.0
    a[0], a[1] = a[1], a[0]  # in NumPy both rows end up as the old a[1]
    return np.sum(a * a)


def test_a_row_swap_through_views_is_refused_and_through_a_copy_differentiated():
    m = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    for run in (lambda: ssad.grad(swaps_rows_through_views)(m),
                lambda: ssad.jvp(swaps_rows_through_views, (m,), (np.ones((2, 3)),))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=r"reads `a\[0\]`, a view of `a`"):
            run()
    _second_order_checks(swaps_rows_with_a_copy, m, np.arange(6.0).reshape(2, 3) - 2.0)


# ----- lists and tuples joined and repeated -----
def repeats_a_list(x):
    t = [x[0], x[1] * x[2]] * 2
    return t[0] * t[3] + t[2] ** 2


def repeats_a_tuple_from_the_left(x):
    t = 3 * (x[1], np.sin(x[0]))
    return t[0] * t[5] + t[2] * t[3]


def repeats_a_list_in_place(x):
    t = [x[0], x[1]]
    t *= 2
    t += [x[2]]
    return t[0] * t[3] * t[4]


def joins_tuples(x):
    t = (x[0],) + (x[1], x[2]) * 2
    return t[3] * t[4] + t[0] * t[2]


@pytest.mark.parametrize("f", [repeats_a_list, repeats_a_tuple_from_the_left, repeats_a_list_in_place, joins_tuples])
def test_a_repeated_or_joined_sequence_is_differentiated_at_every_order(f):
    # `[a, b] * 2` got the adjoint of an arithmetic product, `d_t * 2`, itself a repetition:
    # only the first copy's adjoints reached a and b (gradient [-0.7, 0, 0] for [-0.7, 0.3, 0]);
    # joining, `a + b`, was refused at second order (`type(a)(...)` in the gradient's code)
    x = np.array([0.3, -0.7, 1.2])
    _second_order_checks(f, x, np.array([0.5, -1.0, 0.25]))


def repeats_what_a_helper_is_given(t):
    return t * 2


def repeats_a_tuple_it_cannot_see(x):
    u = repeats_what_a_helper_is_given((x[0], x[1]))
    return u[0] * u[3]


def test_a_repetition_ssad_cannot_see_is_refused_in_reverse_mode_and_right_in_forward():
    x = np.array([0.3, -0.7, 1.2])
    with pytest.raises(ssad.SsadError, match=r"write `list\(xs\) \+ list\(ys\)` or `list\(xs\) \* n`"):
        ssad.grad(repeats_a_tuple_it_cannot_see)(x)
    t = np.array([1.0, 2.0, 3.0])
    _, along = ssad.jvp(repeats_a_tuple_it_cannot_see, (x,), (t,))
    assert along == pytest.approx(np.sum(numerical_gradient(repeats_a_tuple_it_cannot_see, x) * t))


# ----- max and min with a key -----
def best_pair(x):
    pairs = [(x[0], 1.0), (x[1], 2.0), (x[2] * x[0], 3.0)]
    best = max(pairs, key=lambda p: p[0] * p[1])
    worst = min(pairs, key=lambda p: p[0] * p[1])
    return best[0] * best[1] + np.sin(worst[0])


def largest_in_size(x):
    return max(x[0], x[1], x[2], key=abs) * min([x[0] ** 2, x[2]], key=abs)


@pytest.mark.parametrize("f", [best_pair, largest_in_size])
def test_max_and_min_with_a_key_give_the_item_they_chose_its_gradient(f):
    # once "unsupported operand type(s) for /: 'tuple' and 'int'": the rule shared the
    # gradient between ties of the items, which with a key are not what is compared
    x = np.array([0.3, -0.7, 1.2])
    _second_order_checks(f, x, np.array([0.5, -1.0, 0.25]))


# ----- arrays held in lists -----
def stacks_then_writes(x, y):
    # a random program (seed 468): `np.stack([z1, x])` put z1 and x in one list, and the
    # write into z1 was refused as a write into x
    z1 = x.copy()
    t = np.stack([z1, x]).mean(axis=0)
    z1[2] = np.min(y + z1)
    return np.dot(z1, y) + np.sum(np.cos(np.tanh(z1)) * x) + np.sum(t ** 2)


def test_a_list_holding_two_arrays_does_not_make_them_share():
    x, y = np.array([-0.04, -1.33, 0.12, -0.75]), np.array([-0.01, 1.32, 0.43, 0.25])
    for p, point in ((0, x), (1, y)):
        def moved(v, p=p):
            args = [x, y]
            args[p] = v
            return stacks_then_writes(*args)

        got = ssad.grad(stacks_then_writes, wrt=p)(x, y)
        np.testing.assert_allclose(got, numerical_gradient(moved, point), rtol=1e-6, atol=1e-8)


def writes_an_appended_array(x, y):
    z = x * 1.0
    held = []
    held.append(z)
    held.append(y)
    w = held[0]
    w[0] = 5.0
    return np.sum(z * y)


def writes_a_popped_array(x, y):
    z = x * 1.0
    held = [y]
    held.append(z)
    w = held.pop()
    w *= 2.0
    return np.sum(z * y)


def writes_an_array_put_in_a_list(x, y):
    z = x * 1.0
    held = [y, y]
    held[1] = z
    w = held[1]
    w[1] = 0.0
    return np.sum(z * y)


@pytest.mark.parametrize("f", [writes_an_appended_array, writes_a_popped_array, writes_an_array_put_in_a_list])
def test_a_write_into_an_array_a_list_was_given_is_refused(f):
    # `held.append(z); w = held[0]; w[0] = 5.0` gave the gradient of the unchanged z
    # ([1.1, 0.4, -0.2, 0.8] where the first element's derivative is 0)
    x, y = np.array([0.3, -0.7, 1.2, 0.5]), np.array([1.1, 0.4, -0.2, 0.8])
    for run in (lambda: ssad.grad(f)(x, y), lambda: ssad.jvp(f, (x, y), (np.ones(4), None))):
        # (a list whose positions are not known may hold either: the message names one)
        with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that `[yz]` shares"):
            run()


def squares_each_value_of_a_dict(x):
    d = {"a": x[0], "b": x[1] * x[2]}
    for k in d:
        d[k] = d[k] ** 2
    return d["a"] * d["b"]


def test_a_loop_over_a_dicts_keys_at_second_order():
    # the tangent of the list of keys was None, and the Hessian-vector product's code
    # indexed it (once "'NoneType' object is not subscriptable")
    _second_order_checks(squares_each_value_of_a_dict, np.array([0.3, -0.7, 1.2]), np.array([0.5, -1.0, 0.25]))


def reads_a_pair_through_two_names(p):
    a = p
    b = p
    return a[0] * b[1]


def passes_a_pair_to_a_helper(x):
    return reads_a_pair_through_two_names((x[0], x[1] * 2.0))


def test_adjoints_of_a_parameter_holding_a_tuple_add_up_as_tuples():
    # the two adjoints of `p` (through a and b) were added with `+`, which joined the two
    # tuples: the gradient lost x[0]'s part ([0, 0.6, 0] for [-1.4, 0.6, 0]); the gradient
    # of max_min's own rule at second order lost its `dy` the same way
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(ssad.grad(passes_a_pair_to_a_helper)(x), [-1.4, 0.6, 0.0])
    _second_order_checks(passes_a_pair_to_a_helper, x, np.array([0.5, -1.0, 0.25]))


# ----- casts to integers and booleans -----
def weighs_by_integer_parts(x):
    return np.sum(x.astype(int) * x) + np.sum(np.astype(x, np.int64) * np.sin(x))


def weighs_by_a_mask_and_a_truncated_sum(x):
    return np.sum(x.astype(bool) * x ** 2) + np.sum(x, dtype=int) * x[0] + np.sum(np.asarray(x, dtype=int) * x)


def weighs_by_a_cast_to_what_it_is_given(x, dtype):
    return np.sum(x.astype(dtype) * x) + np.sum(np.array(x, dtype) * x)


@pytest.mark.parametrize("f", [weighs_by_integer_parts, weighs_by_a_mask_and_a_truncated_sum])
def test_a_cast_to_integers_carries_no_gradient(f):
    # `x.astype(int)` was differentiated as the identity: the gradient of sum(x.astype(int) * x)
    # came out [0.3, -0.7, 2.2, 0.5] for [0, 0, 1, 0] (its integer parts, piecewise constant)
    x = np.array([0.3, -0.7, 1.2, 0.5])
    _second_order_checks(f, x, np.array([0.5, -1.0, 0.25, 2.0]))


@pytest.mark.parametrize("dtype, expected", [(int, [0.0, 0.0, 1.0, 0.0]), (bool, [1.0, 1.0, 1.0, 1.0]),
                                             (np.float32, [0.6, -1.4, 2.4, 1.0])])
def test_a_cast_to_a_dtype_known_when_the_code_runs(dtype, expected):
    x = np.array([0.3, -0.7, 1.2, 0.5])

    def f(v):
        return weighs_by_a_cast_to_what_it_is_given(v, dtype)

    got = ssad.grad(weighs_by_a_cast_to_what_it_is_given)(x, dtype)
    np.testing.assert_allclose(got, 2 * np.asarray(expected), rtol=1e-6)  # two casts of one kind
    _, along = ssad.jvp(weighs_by_a_cast_to_what_it_is_given, (x, dtype), (np.ones(4), None))
    assert along == pytest.approx(float(np.sum(got)), rel=1e-6)


# ----- unpacking into an array -----
def unpacks_into_an_array(x):
    y = x * 1.0
    pair = (x[2] * 2.0, x[3])
    y[0], t = pair
    y[1], (y[2], u) = t, pair
    return np.sum(y * np.arange(1.0, 5.0) * y) + t * u


def unpacks_into_an_array_at_an_index_it_then_changes(x):
    y = x * 1.0
    i = 0
    pair = (x[3] * 5.0, 2)
    y[i], i = pair  # Python writes y[0], then binds i
    return np.sum(y ** 2) * (i + 1)


@pytest.mark.parametrize("f", [unpacks_into_an_array, unpacks_into_an_array_at_an_index_it_then_changes])
def test_unpacking_into_an_element_of_an_array(f):
    # once "AttributeError: 'Subscript' object has no attribute 'elts'" from inside ssad
    _second_order_checks(f, np.array([0.3, -0.7, 1.2, 0.5]), np.array([0.5, -1.0, 0.25, 2.0]))


def picks_by_a_key_that_captures_an_input(x):
    w = x[2] ** 2
    pairs = [(x[0], 1.0), (x[1], 2.0)]
    best = max(pairs, key=lambda p: p[0] * p[1] * w)
    return best[0] * best[1] + np.sin(min([x[0], x[1] * w], key=lambda v: abs(v - w)))


def test_a_key_that_captures_a_differentiated_value_carries_no_gradient():
    # the choice is piecewise constant in what the key captures; at second order the key, a
    # closure read back from the tape, was refused: "the keyword argument `key=` of max
    # depends on the differentiated inputs" (random program, seed 224)
    _second_order_checks(picks_by_a_key_that_captures_an_input, np.array([0.3, -0.7, 1.2]), np.array([0.5, -1.0, 0.25]))


# ----- a name rebound to a copy, then a join of paths -----


def copies_after_a_loop_that_may_return(x, y):
    h = 0.0
    for i in range(1, 0):
        if x[3] <= 0.88:
            return np.sum(y * x)
        h = [x[i], y[3]][-1] * x
    y = y.copy()
    z = np.array([np.sin(e) * e for e in x])
    y[0] += y[3]
    return np.sum(y * x) + np.sum(z) + np.sum(h)


def writes_into_its_copy_in_a_helper(x):
    y = np.cos(x)
    return copies_after_a_loop_that_may_return(x, y) + np.sum(y * y)


def test_a_name_rebound_to_a_copy_does_not_share_the_argument_after_paths_join():
    # `y[3]`, read in the loop, shared the argument y; after `y = y.copy()` the join at the
    # end of the comprehension's loop put the copy back in the argument's group, and the
    # write `y[0] += ...` into the copy was refused as a write into the caller's array (at
    # first order in a helper, and in a gradient called inside differentiated code: random
    # program 224)
    x = np.array([0.3, -0.7, 1.2, 0.5])
    _second_order_checks(writes_into_its_copy_in_a_helper, x, np.array([0.5, -1.0, 0.25, 2.0]))


# ----- `t += v` on a value that may be a number -----


def adds_to_an_element(x):
    y = np.tanh(x)
    t = y[2]
    t += np.sum(y)
    return np.sum(y * t)


def adds_to_the_smallest_in_size(x, s):
    h = np.tanh(x)
    t = min([s * 2.0, h[2], 0.3], key=abs)
    t += np.linalg.norm(h)
    return np.sum(h * t) + np.sin(t)


def adds_to_a_row(x):
    m = np.outer(x, x)
    r = m[1]
    r += 1.0
    return np.sum(m)


def test_adding_in_place_to_an_element_rebinds_and_to_a_row_is_refused():
    # `t = y[2]; t += ...` with y read afterwards was refused as a write into y, though an
    # element of a vector is a number, which `+=` rebinds (random program 485: `t1 = min([...,
    # h2[2], 0.3], key=abs)` then `t1 += ...`); what t holds is known when the code runs
    x = np.array([0.3, -0.7, 1.2, 0.5])
    _second_order_checks(adds_to_an_element, x, np.array([0.5, -1.0, 0.25, 2.0]))
    for s in (0.1, -2.0):
        f = lambda v, s=s: adds_to_the_smallest_in_size(v, s)  # noqa: E731
        _second_order_checks(f, x, np.array([0.5, -1.0, 0.25, 2.0]))
    gradient = ssad.grad(adds_to_a_row)  # a row of a matrix is an array: written in place
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`r \\+= ...` would change an array that `m` shares"):
        gradient(x)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that `m` shares"):
        ssad.jvp(adds_to_a_row, (x,), (x,))



def subtracts_from_an_operand_of_min(x, s):
    y = np.tanh(x)
    t = min([y[2], s, 0.3], key=abs)
    s -= y @ y
    return np.sum(y * t) + s ** 2


def writes_into_an_operand_max_no_longer_needs(x):
    a = x * 1.0
    b = x * 2.0
    best = max([a, b], key=np.sum)
    total = np.sum(best * x)
    a[0] = 5.0  # changes best, which is not read again, and not b
    return total + np.sum(a * x) + np.sum(b * x)


def writes_into_an_operand_max_may_have_chosen(x):
    a = x * 1.0
    b = x * 2.0
    best = max([a, b], key=np.sum)
    a[0] = 5.0
    return np.sum(best * x) + np.sum(b)


def writes_into_what_max_chose(x):
    a = x * 1.0
    b = x * 2.0
    best = max([a, b], key=np.sum)
    best[0] = 5.0
    return np.sum(a * x) + np.sum(b)


def divides_a_number_a_selection_may_hold(x):
    t = 0.3 * x[0] + np.sum(np.tanh(x))
    u = max([(x[3], 0.5), (t, 1.5)], key=lambda p: p[0] * p[1])[0]
    t /= 1.0 + t * t
    return t + np.sin(u)


def divides_an_array_a_selection_may_hold(x):
    t = np.tanh(x)
    u = max([(x, 0.5), (t, 1.5)], key=lambda p: np.sum(p[0]) * p[1])[0]
    t /= 2.0
    return np.sum(t * u)


def chooses_an_element_or_a_parameter(x, y, s):
    z = np.full(4, np.sum(y))
    choice = min(-0.29, z[0]) if y[0] < -0.38 else s  # the caller's s on one path, an element of z on the other
    z[1] *= np.tanh(np.sum(x))  # a write into z: nothing of the caller's
    return np.sum(z * x) + choice * np.sum(y)


_CHOOSES_GRADIENT_X = ssad.grad(chooses_an_element_or_a_parameter, wrt="x")


def calls_the_gradient_of_a_choice(x, y, s):
    gx = _CHOOSES_GRADIENT_X(x, y, s)
    return 0.5 * chooses_an_element_or_a_parameter(x, y, s) + np.sum(np.sin(gx)) + s * np.sum(gx * y)


def test_a_write_into_an_array_a_choice_may_have_read_is_not_the_callers():
    # random program 757 of the five-mode sweep, inside a differentiated function: `z[1] *= ...`
    # was refused as a write into the caller's array, through `choice`, which may be s or z[0]
    x, s = np.array([-1.29, -1.33, -0.94, 0.86]), 0.45
    for y in (np.array([-0.53, -1.21, -0.22, 1.23]), np.array([0.33, -1.21, -0.22, 1.23])):
        got = ssad.grad(calls_the_gradient_of_a_choice, wrt=(0, 1, 2))(x, y, s)
        args = (x, y, s)
        for k, (g, value) in enumerate(zip(got, args, strict=True)):
            def moved(v, k=k, args=args):
                return calls_the_gradient_of_a_choice(*[v if i == k else a for i, a in enumerate(args)])
            np.testing.assert_allclose(g, numerical_gradient(moved, value), rtol=1e-5, atol=1e-7)


def test_a_value_min_or_max_chose_shares_each_operand_and_they_not_each_other():
    # `t1 = min([y[2], s, 0.3], key=abs)` then `s -= y @ y` was refused as a write into y
    # (random program 100263): what min chose was recorded as sharing all its operands'
    # memory at once, which made s and y share each other
    x = np.array([0.3, -0.7, 1.2, 0.5])
    t = np.array([0.5, -1.0, 0.25, 2.0])
    for s in (0.05, -2.0):
        _second_order_checks(lambda v, s=s: subtracts_from_an_operand_of_min(v, s), x, t)
        g = ssad.grad(subtracts_from_an_operand_of_min, wrt=1)
        np.testing.assert_allclose(g(x, s), numerical_gradient(lambda w: subtracts_from_an_operand_of_min(x, w), s),
                                   rtol=1e-6, atol=1e-8)
    _second_order_checks(writes_into_an_operand_max_no_longer_needs, x, t)
    # which array max chose is known when the code runs: the generated code checks it before the write
    _second_order_checks(writes_into_an_operand_max_may_have_chosen, x, t)  # b: the write into a leaves it
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`a\\[...\\] = ...` would change an array that `best`"):
        ssad.grad(writes_into_an_operand_max_may_have_chosen)(-x)  # a
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`best\\[...\\] = ...` would change an array that `b`"):
        ssad.grad(writes_into_what_max_chose)(x)


def test_augmented_assignment_to_a_name_a_selection_may_hold_is_judged_when_it_runs():
    # `t8 = max([(y[3], 0.5), (t1, 1.5)], key=...)[0]` then `t1 /= ...` was refused as a write
    # into t8 (random program 100059), though t1 is a number there, which `/=` rebinds
    x = np.array([0.3, -0.7, 1.2, 0.5])
    _second_order_checks(divides_a_number_a_selection_may_hold, x, np.array([0.5, -1.0, 0.25, 2.0]))
    gradient = ssad.grad(divides_an_array_a_selection_may_hold)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`t /= ...` would change an array that `u` shares"):
        gradient(x)


# ----- functions stored into a dict or list by item assignment -----


def stores_lambdas_in_a_dict(x):
    fs = {}
    for name, k in (("a", 1), ("b", 2)):
        fs[name] = lambda v, k=k, w=x[k]: v * w + k
    return fs["a"](x[0]) * fs["b"](x[3])


def stores_nested_functions_in_a_list(x):
    fs = [None, None]
    for i in range(2):
        def scaled(v, i=i):
            return np.sin(v * x[i + 1])

        fs[i] = scaled
    return fs[0](x[0]) * fs[1](x[3])


def test_functions_stored_by_item_assignment_at_second_order():
    # reverse over reverse raised TypeError (float + dict): the adjoint of `fs[k] = f` zeroes
    # the entry's adjoint with the number 0.0, which the adjoint of that adjoint added to the
    # dict of what the closure captured
    x = np.array([0.3, -0.7, 1.2, 0.5])
    for f in (stores_lambdas_in_a_dict, stores_nested_functions_in_a_list):
        _second_order_checks(f, x, np.array([0.5, -1.0, 0.25, 2.0]))


def _tanh_of_scaled(w):
    return lambda v: np.tanh(v * w)


def writes_over_a_stored_function(x):
    fs = {}
    for i in range(2):
        fs[i] = _tanh_of_scaled(x[i])
    fs[0] = _tanh_of_scaled(x[2])
    return fs[0](x[3]) + fs[1](x[3])


def writes_over_stored_tuples_and_dicts(x):
    pairs = [(x[0], x[1]), (x[2], x[3])]
    pairs[0] = (x[3], x[2])
    tables = [{"a": x[0]}, {"a": x[1]}]
    tables[1] = {"a": x[2] * 2.0}
    held = {"p": (x[0], x[1])}
    held["p"] = (x[2], np.sin(x[3]))
    return pairs[0][0] * pairs[1][1] + pairs[0][1] + tables[0]["a"] * tables[1]["a"] + held["p"][0] * held["p"][1]


def _sum_of_calls(fs, v):
    return sum(f(v) for f in fs.values())


def calls_the_values_of_a_dict(x):
    fs = {"s": _tanh_of_scaled(x[0]), "t": _tanh_of_scaled(x[1])}
    fs["u"] = _tanh_of_scaled(x[2])
    return _sum_of_calls(fs, x[3]) * x[0]


def writes_a_constant_tuple_over_a_state(x):
    history = []
    h = (x[0], x[1])
    for _ in range(3):
        h = (h[1] * 0.5 + x[2], np.sin(h[0]) * x[3])
        history.append(h)
    history[0] = (0.0, 0.0)
    return sum(a * b for a, b in history)


def test_entries_written_over_that_held_functions_tuples_or_dicts():
    # the adjoint of an entry written over later is the number 0.0: the closure it held read
    # 0.0['w'] (TypeError at first order), a tuple was taken for a repeated sequence (a false
    # SourceError), a dict read 0.0['a']; and the rule of dict.values built its adjoint with
    # dict(zip(...)), which ssad could not differentiate again
    x = np.array([0.3, -0.7, 1.2, 0.5])
    # writing the constant (0.0, 0.0) gave its entry the tangent 0.0, which `for a, b in
    # history` could not unpack (jvp at first order), nor the rule of pack_like at second
    for f in (writes_over_a_stored_function, writes_over_stored_tuples_and_dicts, calls_the_values_of_a_dict,
              writes_a_constant_tuple_over_a_state):
        _second_order_checks(f, x, np.array([0.5, -1.0, 0.25, 2.0]))


# ----- a slice of a list is a new list -----


def reverses_a_list_then_swaps(x):
    items = [x[0], x[1], x[2]]
    items = items[::-1]
    items[0], items[2] = items[2] * 2.0, items[0]
    return items[0] * items[1] + items[2]


def writes_through_an_item_of_a_reversed_list(x):
    a = x * 1.0
    b = x * 2.0
    items = [a, b]
    reversed_items = items[::-1]
    w = reversed_items[0]
    w[0] = 5.0  # writes into b, which items[1] reads
    return np.sum(items[1] * x)


def test_a_slice_of_a_list_is_a_new_list_holding_the_same_items():
    # the generated gradient of reverses_a_list_then_swaps reads the list before the slice
    # again, so differentiating it again refused the write into the slice as a write into a
    # view of that list (a slice of an array is one; of a list, a new list)
    x = np.array([0.3, -0.7, 1.2, 0.5])
    _second_order_checks(reverses_a_list_then_swaps, x, np.array([0.5, -1.0, 0.25, 2.0]))
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`w\\[...\\] = ...` would change an array that `items`"):
        ssad.grad(writes_through_an_item_of_a_reversed_list)


def adds_to_a_number_a_loop_variable_copied(x, s):
    # random program 6333 (hypothesis): `v = s`, then `s += ...` on the next turn, where
    # `s` (a parameter) may be a number or an array; refused before the code ran
    total = 0.0
    for v, w in zip(x, x):  # noqa: B905  (the program as written)
        if np.sum(x) > 10.0:
            v = 0.5
        else:
            v = 0.3 * v
        k = 0
        while k < 2:
            k += 1
            s += np.sum(x * w)
            v = s
        v = v + 1.0
        total = total + v * w
    return total + s * s


def test_an_augmented_number_parameter_shared_by_a_loop_variable():
    x, s = np.array([0.3, -0.4, 0.6]), 0.2
    ssad.check_grads(adds_to_a_number_a_loop_variable_copied, (x, s))
    ssad.check_grads(adds_to_a_number_a_loop_variable_copied, (x, s), order=2)
    expected = numerical_gradient(lambda z: adds_to_a_number_a_loop_variable_copied(z, s), x)
    np.testing.assert_allclose(ssad.grad(adds_to_a_number_a_loop_variable_copied)(x, s), expected, rtol=1e-6)
    # an array `s` would be changed in place under `v`: refused where it runs
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"test_outside_programs.py:\d+.*`s \+= \.\.\.` would change"):
        ssad.grad(adds_to_a_number_a_loop_variable_copied, wrt=(0, 1))(x, np.array([0.2, 0.1, 0.0]))
