"""Higher order: generated code is ordinary Python that ssad differentiates again."""

import math

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches
from .programs import control, straight


def cubic_sine(x):
    return np.sin(x) * x * x


def test_second_and_third_derivatives_against_closed_forms():
    x = 0.7
    first = ssad.grad(cubic_sine)
    second = ssad.grad(first)
    third = ssad.grad(second)
    assert first(x) == pytest.approx(np.cos(x) * x * x + 2 * x * np.sin(x), rel=1e-12)
    assert second(x) == pytest.approx(-np.sin(x) * x * x + 4 * x * np.cos(x) + 2 * np.sin(x), rel=1e-12)
    assert third(x) == pytest.approx(-np.cos(x) * x * x - 6 * x * np.sin(x) + 6 * np.cos(x), rel=1e-12)


def exp_power(x):
    return np.exp(2.0 * x) / (1.0 + x * x)


def test_grad_of_grad_of_a_quotient():
    x = 0.3
    second = ssad.grad(ssad.grad(exp_power))

    def closed_form_first(v):
        return (2 * np.exp(2 * v) * (1 + v * v) - np.exp(2 * v) * 2 * v) / (1 + v * v) ** 2

    assert_gradient_matches(closed_form_first, (x,), 0, second(x))


def loop_and_branch(x, y):
    z = x * y + np.sin(x)
    for _ in range(3):
        z = np.tanh(z) * y
        if z > 0.1:
            z = z * z
    return z


def while_loop(x):
    k = 0
    y = x
    while k < 4:
        y = y * x + np.cos(y)
        k = k + 1
    return y


def helper(v):
    return np.exp(v) * v


def calls_a_helper(x):
    return helper(x * 2.0) + np.sin(helper(x))


@pytest.mark.parametrize(
    "function, args",
    [(loop_and_branch, (0.4, 0.9)), (loop_and_branch, (-0.6, 1.3)), (while_loop, (0.3,)), (calls_a_helper, (0.25,))],
    ids=["loop_and_branch-a", "loop_and_branch-b", "while_loop", "calls_a_helper"],
)
def test_second_derivative_through_control_flow_and_calls(function, args):
    first = ssad.grad(function)
    second = ssad.grad(first)
    assert_gradient_matches(first, args, 0, second(*args))
    ssad.check_grads(function, args, wrt=0, order=2)


def matrix_loss(W, x):
    h = np.tanh(x @ W)
    return np.sum(h**2) + np.sum(W * W) * 0.1


def test_hessian_against_finite_differences_of_the_gradient():
    rng = np.random.default_rng(8)
    W, x = rng.standard_normal((3, 2)) * 0.5, rng.standard_normal((4, 3))
    H = ssad.hessian(matrix_loss)(W, x)
    assert H.shape == (3, 2, 3, 2)
    gradient = ssad.grad(matrix_loss)
    eps = 1e-6
    for index in np.ndindex(W.shape):
        step = np.zeros_like(W)
        step[index] = eps
        column = (gradient(W + step, x) - gradient(W - step, x)) / (2 * eps)
        np.testing.assert_allclose(H[(...,) + index], column, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H.reshape(6, 6), H.reshape(6, 6).T, atol=1e-10)


def test_hessian_vector_product_recipe():
    rng = np.random.default_rng(9)
    W, x = rng.standard_normal((3, 2)) * 0.5, rng.standard_normal((4, 3))
    v = rng.standard_normal((3, 2))
    _, hvp = ssad.jvp(ssad.grad(matrix_loss), (W, x), (v, None))
    H = ssad.hessian(matrix_loss)(W, x)
    np.testing.assert_allclose(hvp, np.tensordot(H, v, axes=2), rtol=1e-10)


def vector_map(x, W):
    return np.tanh(x @ W) * x[0]


@pytest.mark.parametrize("mode", ["forward", "reverse", None])
def test_jacobian_in_each_mode(mode):
    rng = np.random.default_rng(10)
    x, W = rng.standard_normal(3), rng.standard_normal((3, 5))
    J = ssad.jacobian(vector_map, mode=mode)(x, W)
    assert J.shape == (5, 3)
    for i in range(5):
        assert_gradient_matches(lambda x_, W_, i=i: vector_map(x_, W_)[i], (x, W), 0, J[i])


# Every case but one: the spectral norm's gradient is made of singular vectors, and
# np.linalg.svd has no rules, so its second derivative is refused with the reason.
SECOND_ORDER = [c for c in straight.CASES if c[0].__name__ != "keyword_arguments"]


@pytest.mark.parametrize("function, args", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_check_grads_order_two_on_the_straight_line_corpus(function, args):
    positions = [i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]
    ssad.check_grads(function, args, wrt=tuple(positions), order=2)


@pytest.mark.parametrize(
    "function, args",
    [c for c in control.CASES if c[0] in (control.euler_decay, control.horner, control.fixed_point_cos)],
    ids=lambda c: getattr(c, "__name__", None),
)
def test_check_grads_order_two_on_loops(function, args):
    ssad.check_grads(function, args, order=2)


# ----- check_grads catches wrong rules -----


def wrongly_ruled(x):
    return x * x


@ssad.adjoint(wrongly_ruled)
def wrongly_ruled_adjoint(dy, y, x):
    return (dy * 3.0 * x,)  # should be 2x


@ssad.tangent(wrongly_ruled)
def wrongly_ruled_tangent(tangents, y, x):
    return tangents[0] * 2.0 * x  # right


def uses_wrong_rule(x):
    return np.sum(wrongly_ruled(x))


def test_check_grads_catches_a_wrong_adjoint_rule_and_names_the_mode():
    with pytest.raises(AssertionError, match="reverse mode"):
        ssad.check_grads(uses_wrong_rule, (np.array([0.5, -1.0]),))
    ssad.check_grads(uses_wrong_rule, (np.array([0.5, -1.0]),), modes=("forward",))


def wrongly_tangented(x):
    return np.sin(x)


@ssad.adjoint(wrongly_tangented)
def wrongly_tangented_adjoint(dy, y, x):
    return (dy * np.cos(x),)


@ssad.tangent(wrongly_tangented)
def wrongly_tangented_tangent(tangents, y, x):
    return tangents[0] * np.sin(x)  # should be cos


def uses_wrong_tangent(x):
    return np.sum(wrongly_tangented(x))


def test_check_grads_catches_a_wrong_tangent_rule():
    with pytest.raises(AssertionError, match="forward mode"):
        ssad.check_grads(uses_wrong_tangent, (np.array([0.5, -1.0]),))


def test_second_order_through_a_varargs_rule():
    ssad.check_grads(straight.scalar_math, (0.7, -0.4), order=2)


# ----- Second derivatives through the rules of single primitives -----
# Each rule's helpers are differentiated again: forward mode passes tangents through their
# `*args`, and what they call (np.take_along_axis, summed_at, pack_like, ...) has rules.


def clipped(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 * x)


def hypotenuse(x):
    return math.hypot(x[0], x[1] * x[3]) * x[2]


def builtin_max(x):
    return max(x[0] * x[3], x[1] * 2.0) * x[2]


def builtin_min(x):
    return min(x[0], x[1] * x[2], x[3]) ** 2


def cumulative_product(x):
    return np.sum(np.cumprod(x) * x)


def repeated(x):
    return np.sum(np.repeat(x, 2) ** 3) + np.sum(np.repeat(x, [1, 0, 2, 3]) ** 2 * x[0])


def transposed_reshape(x):
    return np.sum(np.sin(x.reshape(2, 2).T.reshape(4)) * x)


def vector_norm(x):
    return np.linalg.norm(x) * np.sum(x) + np.linalg.norm(x, 3)


def frobenius_norm(x):
    return np.linalg.norm(np.outer(x, x + 1.0), axis=(0, 1)) * x[0]


def trace_of_outer(x):
    return np.sin(np.trace(np.outer(x, np.sin(x) * 2.0)))


def sum_of_a_comprehension(x):
    return sum([e * e * e for e in x]) * sum([np.sin(e) for e in x])


_M = np.array([[0.3, -0.2, 0.5, 1.1], [0.7, 0.1, -0.4, 0.2], [-0.6, 0.9, 0.3, 0.8]])


def contractions(x):
    # a matrix-vector product, an outer product traced by a repeated label, a broadcast
    # length-1 axis, an ellipsis and implicit output
    outer = np.einsum("i,j->ij", np.sin(x), x)
    return (
        np.sum(np.einsum("ij,j->i", _M, np.tanh(x)) ** 2)
        + np.einsum("ii", outer) ** 2
        + np.sum(np.einsum("ij,kj->ik", x[None, :], outer) ** 2)
        + np.sum(np.einsum("...j,j", outer, x) ** 3)
    )


def diagonal_of_outer(x):
    return np.sum(np.diagonal(np.outer(x, np.sin(x)), 1) ** 2) + np.sum(np.outer(x, x).diagonal() ** 3)


PRIMITIVES = [
    clipped, hypotenuse, builtin_max, builtin_min, cumulative_product, repeated, transposed_reshape,
    vector_norm, frobenius_norm, trace_of_outer, sum_of_a_comprehension, contractions, diagonal_of_outer,
]


@pytest.mark.parametrize("f", PRIMITIVES, ids=lambda f: f.__name__)
def test_second_derivatives_through_primitive_rules(f):
    x = np.array([0.3, -0.7, 1.1, 0.45])  # away from every kink and tie
    gradient = ssad.grad(f)
    eps = 1e-6
    expected = np.empty((4, 4))
    for i in range(4):
        step = np.zeros(4)
        step[i] = eps
        expected[:, i] = (gradient(x + step) - gradient(x - step)) / (2 * eps)
    np.testing.assert_allclose(ssad.hessian(f)(x), expected, rtol=1e-5, atol=1e-7)  # forward over reverse
    np.testing.assert_allclose(ssad.jacobian(gradient, mode="reverse")(x), expected, rtol=1e-5, atol=1e-7)
    ssad.check_grads(f, (x,), order=2)


def _energy(x):
    return np.sum(np.sin(x) * x)


_d_energy = ssad.grad(_energy)


def _squared_gradient_norm(x):
    return np.sum(_d_energy(x) ** 2)  # a gradient function called inside differentiated code


def _squared_gradient_norm_made_inside(x):
    g = ssad.grad(_energy)
    return np.sum(g(x) ** 2)


@pytest.mark.parametrize("f", [_squared_gradient_norm, _squared_gradient_norm_made_inside])
def test_a_gradient_called_inside_a_differentiated_function(f):
    x = np.array([0.3, -0.8, 1.2])
    first = np.cos(x) * x + np.sin(x)
    second = 2 * np.cos(x) - np.sin(x) * x
    np.testing.assert_allclose(ssad.grad(f)(x), 2 * first * second, rtol=1e-12)
    ssad.check_grads(f, (x,))


def _loop_the_gradient_does_not_read(a, b):
    acc = math.tanh(b[2])
    for _ in range(1, 2):
        z = np.tanh(b + acc)
        acc += z[2]
        z = np.tanh(a)  # a dead store: the gradient in `a` is zero, and reads none of the loop's tape
    return acc


def _wrapped_loop(x, y):
    return _loop_the_gradient_does_not_read(x, np.sin(y))


_d_wrapped_loop = ssad.grad(_wrapped_loop, wrt=0)


def _calls_the_gradient_of_the_loop(x, y):
    return np.sum(_d_wrapped_loop(x, y) * y) + np.sum(np.sin(x) * y)


def test_a_gradient_whose_backward_sweep_reads_none_of_its_tape_differentiated_again():
    # its tape's zero adjoint was made after the backward sweep had popped it, and came out
    # empty: `IndexError: pop from empty list` (random program 4010 in `grad_inside`)
    x, y = np.array([1.44, 1.02, 0.6, 1.14]), np.array([0.66, 0.84, -0.07, 0.25])
    got = ssad.grad(_calls_the_gradient_of_the_loop, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(got[0], np.cos(x) * y, rtol=1e-12)
    np.testing.assert_allclose(got[1], np.sin(x), rtol=1e-12)


def _sum_sin_sorted(x):
    return np.sum(np.sin(np.sort(x)) * np.array([1.0, 2.0, 3.0, 4.0]))


def test_second_derivative_through_sort():
    # sort's adjoint used to fill its result with np.put_along_axis, a write the second
    # transformation did not see: the Hessian came out zero.
    x = np.array([0.3, -1.2, 0.8, 2.0])
    weights = np.empty(4)
    weights[np.argsort(x)] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(ssad.hessian(_sum_sin_sorted)(x), np.diag(-np.sin(x) * weights), atol=1e-12)
    ssad.check_grads(_sum_sin_sorted, (x,), order=2)


def _sum_sinc(x):
    return np.sum(np.sinc(x) * np.array([1.0, 2.0, 3.0]))


def test_second_derivative_of_sinc_at_zero():
    # sinc's derivative is 0 at x == 0, and was written there as a constant: its own
    # derivative came out 0 instead of -pi**2 / 3.
    x = np.array([0.0, 0.3, -1.2])
    hessian = ssad.hessian(_sum_sinc)(x)
    np.testing.assert_allclose(hessian[0, 0], -np.pi**2 / 3, rtol=1e-12)
    v = x[1:]
    closed_form = (2 * np.sin(np.pi * v) - 2 * np.pi * v * np.cos(np.pi * v) - (np.pi * v) ** 2 * np.sin(np.pi * v)) / (
        np.pi * v**3
    )
    np.testing.assert_allclose(np.diag(hessian)[1:], closed_form * np.array([2.0, 3.0]), rtol=1e-10)
    # finite differences of the gradient across 0 lose digits to cancellation in
    # (cos(pi x) - sinc(x)) / x, so check_grads runs at a point away from 0
    ssad.check_grads(_sum_sinc, (np.array([0.2, 0.3, -1.2]),), order=2)


# ----- Every corpus program whose first gradient works, at second and third order -----

from .conftest import case_ids, float_positions  # noqa: E402
from .programs import functions  # noqa: E402

# stop_gradient's programs are left out: their Hessian holds the stopped value constant
# (as JAX's does), so it is not the differences of their gradient; see the test below.
# Programs whose arguments are all structures or large arrays have no dense Hessian to
# check here; test_autograd_oracle.py compares their second order with autograd.
_LARGEST = 16


def _small_float_positions(args):
    return [p for p in float_positions(args) if np.size(args[p]) <= _LARGEST]


_SECOND_ORDER_CASES = [
    (f"{kind}/{i}", case)
    for kind, cases in (("straight", straight.CASES), ("control", control.CASES), ("functions", functions.CASES))
    for i, case in zip(case_ids(cases), cases, strict=True)
    if not case[0].__name__.startswith("stop_gradient") and _small_float_positions(case[1])
]
CORPUS = [case for _, case in _SECOND_ORDER_CASES]
CORPUS_IDS = [i for i, _ in _SECOND_ORDER_CASES]

# What second order still refuses, by a clean SsadError naming the construct, though the
# first order works: nothing now (`np.linalg.norm(x, ord=2)` of a matrix differentiates
# again through the rules of np.linalg.svd).
REFUSED_AT_SECOND_ORDER = set()


def _differences_of(gradient, args, position, step=1e-6):
    """Central differences of `gradient(*args)` (an array) along each element of args[position]."""
    x = np.asarray(args[position], dtype=float)
    columns = []
    for k in range(x.size):
        direction = np.zeros(x.size)
        direction[k] = step
        moved_up, moved_down = list(args), list(args)
        moved_up[position] = (x.ravel() + direction).reshape(x.shape) if x.ndim else float(x + step)
        moved_down[position] = (x.ravel() - direction).reshape(x.shape) if x.ndim else float(x - step)
        up = np.asarray(gradient(*moved_up), dtype=float)
        down = np.asarray(gradient(*moved_down), dtype=float)
        columns.append((up - down) / (2 * step))
    return np.stack(columns, axis=-1).reshape(np.shape(gradient(*args)) + x.shape)


# The sum of a gradient, a function ssad differentiates (so reverse over reverse), one per
# number of arguments: ssad takes no `*args` in a call of a function value.
def _summed_1(a, gradient):
    return np.sum(gradient(a))


def _summed_2(a, b, gradient):
    return np.sum(gradient(a, b))


def _summed_3(a, b, c, gradient):
    return np.sum(gradient(a, b, c))


def _summed_4(a, b, c, d, gradient):
    return np.sum(gradient(a, b, c, d))


_SUMMED = {1: _summed_1, 2: _summed_2, 3: _summed_3, 4: _summed_4}


@pytest.mark.parametrize("function, args, case", [(*c, i) for c, i in zip(CORPUS, CORPUS_IDS, strict=True)],
                         ids=CORPUS_IDS)
def test_hessian_and_grad_of_grad_of_every_corpus_program(function, args, case):
    positions = _small_float_positions(args)
    if case in REFUSED_AT_SECOND_ORDER:
        with pytest.raises(ssad.SsadError):
            for position in positions:
                ssad.hessian(function, wrt=position)(*args)
                ssad.grad(_SUMMED[len(args)], wrt=position)(*args, ssad.grad(function, wrt=position))
        return
    for position in positions:
        gradient = ssad.grad(function, wrt=position)
        try:
            expected = _differences_of(gradient, args, position)
        except FloatingPointError:
            continue
        hessian = ssad.hessian(function, wrt=position)(*args)
        scale = 1.0 + np.max(np.abs(expected))
        np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6 * scale)

        summed = _SUMMED[len(args)]
        np.testing.assert_allclose(
            ssad.grad(summed, wrt=position)(*args, gradient), np.sum(expected, axis=tuple(range(np.ndim(args[position])))),
            rtol=1e-5, atol=1e-6 * scale,
        )


def test_the_hessian_holds_a_stopped_value_constant():
    from .programs.functions import stop_gradient_baseline

    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(ssad.hessian(stop_gradient_baseline)(x), 2.0 * np.eye(3), rtol=1e-12)


# ----- Hessian-vector products of scalar loops -----


def euler_steps(y, k, dt):
    for _ in range(50):
        y = y + dt * (-k * y + np.sin(y))
    return y


def test_the_hvp_of_a_scalar_loop_spreads_no_tangent_and_is_right():
    # The gradient pushes floats on its tape; a pop gives one back, so the jvp of the
    # gradient knows every value of its backward loop is a float and calls no
    # broadcast_like (the cost of a Hessian-vector product is then about that of the
    # arithmetic: benchmarks/run.py).
    from ssad.backend.driver import compiled
    from ssad.runtime.handles import JVP

    gradient = ssad.grad(euler_steps, wrt=(0, 1))
    args, direction = (0.5, 0.3, 0.01), (1.0, 0.5)
    _, hvp = ssad.jvp(gradient, args, direction + (None,))
    entry = compiled(gradient.variants.for_args(args).function, ("y", "k"), JVP, True, frozenset({"y", "k", "dt"}))
    assert "broadcast_like" not in entry.source
    step = 1e-6
    up = gradient(0.5 + step * direction[0], 0.3 + step * direction[1], 0.01)
    down = gradient(0.5 - step * direction[0], 0.3 - step * direction[1], 0.01)
    np.testing.assert_allclose(hvp, (np.array(up) - np.array(down)) / (2 * step), rtol=1e-7)


# ----- ssad.jvp inside a function being differentiated: reverse over forward -----


def _sines_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.sin(x * (i + 1)) * x)
    return total


_V = np.array([1.0, 0.5, -2.0])


def _directional_derivative(x):
    return ssad.jvp(_sines_in_a_loop, (x,), (_V,))[1]


def _directional_derivative_along(x, v):
    return ssad.jvp(_sines_in_a_loop, (x,), (v,))[1]


def test_grad_of_a_function_calling_jvp_is_a_hessian_vector_product():
    x = np.array([0.3, -0.2, 0.7])
    # d/dx sum_i sin(k x) x = k cos(k x) x + sin(k x); d2/dx2 = -k^2 sin(k x) x + 2 k cos(k x)
    second = sum(-(k**2) * np.sin(k * x) * x + 2 * k * np.cos(k * x) for k in (1, 2, 3))
    np.testing.assert_allclose(ssad.grad(_directional_derivative)(x), second * _V, rtol=1e-12)
    # in the direction: the gradient itself
    np.testing.assert_allclose(ssad.grad(_directional_derivative_along, wrt=1)(x, _V),
                               ssad.grad(_sines_in_a_loop)(x), rtol=1e-12)


def test_forward_mode_over_jvp_is_a_second_directional_derivative_and_a_third_order_is_refused():
    x = np.array([0.3, -0.2, 0.7])
    second = sum(-(k**2) * np.sin(k * x) * x + 2 * k * np.cos(k * x) for k in (1, 2, 3))
    value, along = ssad.jvp(_directional_derivative, (x,), (_V,))  # forward over forward: v' H v
    assert value == pytest.approx(float(ssad.grad(_sines_in_a_loop)(x) @ _V), rel=1e-12)
    assert along == pytest.approx(float(np.sum(second * _V * _V)), rel=1e-12)
    with pytest.raises(ssad.SsadError, match="third derivative through ssad.jvp"):
        ssad.hessian(_directional_derivative)(x)  # forward over reverse over forward
    with pytest.raises(ssad.SsadError, match="third derivative through ssad.jvp"):
        ssad.grad(_summed_gradient_of_a_directional_derivative)(x)


_GRAD_OF_DIRECTIONAL = ssad.grad(_directional_derivative)


def _summed_gradient_of_a_directional_derivative(x):
    return np.sum(_GRAD_OF_DIRECTIONAL(x))


# ----- cumprod and prod at inputs that hold an exact zero -----


def _weighted_cumulative_products(x):
    w = np.array([0.5, -1.0, 2.0, 0.7, 1.3])
    return np.sum(np.cumprod(x) * w) + np.prod(x[::-1] + 0.5) * np.prod(x)


@pytest.mark.parametrize("x", [
    np.array([0.9, 1.2, 0.0, 1.1, -0.8]),
    np.array([0.0, 1.2, 0.3, 1.1, -0.8]),
    np.array([0.9, 0.0, 0.5, 0.0, 1.0]),
    np.array([0.9, 1.2, 0.5, 1.1, 0.0]),
], ids=["zero-inside", "zero-first", "two-zeros", "zero-last"])
def test_second_derivatives_of_cumprod_and_prod_through_an_exact_zero(x):
    # The first-order rules never divide by an element that may be zero; differentiated
    # again, neither may they hold one constant (the zero's own influence on the gradient).
    gradient = ssad.grad(_weighted_cumulative_products)
    expected = _differences_of(gradient, (x,), 0)
    np.testing.assert_allclose(ssad.hessian(_weighted_cumulative_products)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ssad.jacobian(gradient, mode="reverse")(x), expected, rtol=1e-6, atol=1e-8)
