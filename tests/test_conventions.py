"""The numerical conventions of docs/conventions.md, in reverse and forward mode.

At kinks, ties and jumps each differentiable primitive has one documented value,
the same in both modes. With NaN and inf inputs, a gradient holds NaN and inf
exactly where NumPy evaluating the derivative's formula would, and nothing ssad
runs raises.
"""

import math
import warnings

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches


def forward_gradient(f, x, *rest):
    """The gradient of scalar `f` at `x` by forward mode: one jvp per element of `x`."""
    if np.ndim(x) == 0:
        return ssad.jvp(f, (x,) + rest, (1.0,) + (None,) * len(rest))[1]
    columns = []
    for index in np.ndindex(np.shape(x)):
        direction = np.zeros(np.shape(x))
        direction[index] = 1.0
        columns.append(ssad.jvp(f, (x,) + rest, (direction,) + (None,) * len(rest))[1])
    return np.array(columns, dtype=np.float64).reshape(np.shape(x))


def as_forward(gradient):
    """What forward mode gives for `gradient`, one direction at a time: the sum of
    derivative times tangent, so a tangent of 0 against an infinite derivative is NaN."""
    gradient = np.asarray(gradient, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        directions = np.eye(gradient.size).reshape((gradient.size,) + gradient.shape)
        return np.array([np.sum(gradient * e) for e in directions]).reshape(gradient.shape)


def both_modes(f, x, *rest):
    """(reverse-mode gradient, forward-mode gradient) of `f` in its first argument."""
    return ssad.grad(f)(x, *rest), forward_gradient(f, x, *rest)


# ----- kinks, ties and jumps: one function per row of the table -----


def np_abs(x):
    return np.sum(np.abs(x) * np.array([1.0, 2.0, 3.0]))


def builtin_abs(x):
    return abs(x) * 3.0


def math_fabs(x):
    return math.fabs(x) * 3.0


def relu(x):
    return np.sum(np.maximum(x, 0.0) * np.array([1.0, 2.0, 3.0]))


def relu_zero_first(x):
    return np.sum(np.maximum(0.0, x) * np.array([1.0, 2.0, 3.0]))


def negative_part(x):
    return np.sum(np.minimum(x, 0.0) * np.array([1.0, 2.0, 3.0]))


def fmax_relu(x):
    return np.sum(np.fmax(x, 0.0) * np.array([1.0, 2.0, 3.0]))


def steeper_side(x):
    return np.sum(np.maximum(x, 2.0 * x))  # slopes 1 and 2 meet at 0: the mean is 3/2


def builtin_max(x):
    return max(x, 0.0) * 3.0


def builtin_min_of_three(x):
    return min(x, 1.0, x) * 3.0  # x is tied with itself: both shares reach x


def largest(x):
    return np.max(x)


def smallest(x):
    return np.min(x)


def largest_method(x):
    return x.max() * 2.0


def row_maxima(x):
    return np.sum(np.max(x, axis=1) * np.array([1.0, 2.0]))


def column_minima_kept(x):
    return np.sum(np.amin(x, axis=0, keepdims=True) * np.array([[1.0, 2.0]]))


def spread(x):
    return np.ptp(x)


def root(x):
    return np.sum(np.sqrt(x))


def half_power(x):
    return np.sum(x ** 0.5)


def clipped(x):
    return np.sum(np.clip(x, 0.0, 1.0) * np.array([1.0, 2.0, 3.0, 4.0]))


def clipped_method(x):
    return np.sum(x.clip(0.0, 1.0) * np.array([1.0, 2.0, 3.0, 4.0]))


def signs(x):
    return np.sum(np.sign(x) * x * x)  # sign contributes nothing: the gradient is sign(x) * 2x = 2|x|


def rounded(x):
    return np.sum(np.floor(x) + np.ceil(x) + np.round(x) + np.rint(x) + np.trunc(x) + np.heaviside(x, 0.5))


def rounded_scalar(x):
    return round(x) + math.floor(x) + math.ceil(x) + x // 1.0


def norm_at_origin(x):
    return np.linalg.norm(x)


def hypot_at_origin(x):
    return np.sum(np.hypot(x, 0.0))


def math_hypot(x):
    return math.hypot(x, 0.0) * 2.0


def strict_relu(x):
    return np.sum(np.where(x > 0, x, 0.0))


KINKS = [
    (np_abs, np.array([0.0, -2.0, 2.0]), [0.0, -2.0, 3.0]),
    (builtin_abs, 0.0, 0.0),
    (math_fabs, 0.0, 0.0),
    (relu, np.array([0.0, -1.0, 1.0]), [0.5, 0.0, 3.0]),
    (relu_zero_first, np.array([0.0, -1.0, 1.0]), [0.5, 0.0, 3.0]),
    (negative_part, np.array([0.0, -1.0, 1.0]), [0.5, 2.0, 0.0]),
    (fmax_relu, np.array([0.0, -1.0, 1.0]), [0.5, 0.0, 3.0]),
    (steeper_side, np.array([0.0, -1.0, 1.0]), [1.5, 1.0, 2.0]),
    (builtin_max, 0.0, 1.5),
    (builtin_min_of_three, 1.0, 2.0),
    (largest, np.array([1.0, 3.0, 3.0, 3.0]), [0.0, 1 / 3, 1 / 3, 1 / 3]),
    (smallest, np.array([1.0, 1.0, 3.0]), [0.5, 0.5, 0.0]),
    (largest_method, np.array([2.0, 2.0]), [1.0, 1.0]),
    (row_maxima, np.array([[1.0, 1.0, 0.0], [5.0, 4.0, 5.0]]), [[0.5, 0.5, 0.0], [1.0, 0.0, 1.0]]),
    (column_minima_kept, np.array([[1.0, 2.0], [1.0, 3.0]]), [[0.5, 2.0], [0.5, 0.0]]),
    (spread, np.array([1.0, 1.0, 3.0, 3.0]), [-0.5, -0.5, 0.5, 0.5]),
    (root, np.array([0.0, 4.0]), [np.inf, 0.25]),
    (half_power, np.array([0.0, 4.0]), [np.inf, 0.25]),
    (clipped, np.array([0.0, 1.0, -1.0, 2.0]), [1.0, 2.0, 0.0, 0.0]),
    (clipped_method, np.array([0.0, 1.0, 0.5, 2.0]), [1.0, 2.0, 3.0, 0.0]),
    (signs, np.array([0.0, -1.5, 2.0]), [0.0, 3.0, 4.0]),
    (rounded, np.array([0.0, 1.0, 1.5, 2.5, -0.5]), [0.0] * 5),
    (rounded_scalar, 2.0, 0.0),
    (norm_at_origin, np.zeros(3), [0.0, 0.0, 0.0]),
    (hypot_at_origin, np.zeros(2), [0.0, 0.0]),
    (math_hypot, 0.0, 0.0),
    (strict_relu, np.array([0.0, -1.0, 1.0]), [0.0, 0.0, 1.0]),
]


@pytest.mark.parametrize("f, x, expected", KINKS, ids=[f.__name__ for f, _, _ in KINKS])
def test_the_documented_derivative_at_kinks_in_both_modes(f, x, expected):
    with np.errstate(divide="ignore", invalid="ignore"):  # sqrt at 0: 0.5 / 0 is inf, as documented
        reverse, forward = both_modes(f, x)
    np.testing.assert_array_equal(np.asarray(reverse, dtype=np.float64), expected)
    np.testing.assert_array_equal(np.asarray(forward, dtype=np.float64), as_forward(expected))
    assert np.shape(reverse) == np.shape(x)


def pair_maximum(a, b):
    return np.maximum(a, b) * 3.0


def pair_minimum(a, b):
    return np.sum(np.minimum(a, b))


def clip_with_bounds(x, low, high):
    return np.sum(np.clip(x, low, high) * np.array([1.0, 2.0, 3.0]))


def test_a_tie_of_two_inputs_gives_each_half():
    assert ssad.grad(pair_maximum, wrt=(0, 1))(2.0, 2.0) == (1.5, 1.5)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    d_a, d_b = ssad.grad(pair_minimum, wrt=(0, 1))(a, b)
    np.testing.assert_array_equal(d_a, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(d_b, [0.5, 1.0, 0.0])
    tangent = ssad.jvp(pair_minimum, (a, b), (np.array([1.0, 10.0, 100.0]), np.array([3.0, 30.0, 300.0])))[1]
    assert tangent == 0.5 * (1.0 + 3.0) + 30.0 + 100.0


def test_clip_bounds_get_the_gradient_only_where_x_was_clipped_to_them():
    x = np.array([0.0, 1.0, -1.0])  # at the lower bound, at the upper bound, below
    d_x, d_low, d_high = ssad.grad(clip_with_bounds, wrt=(0, 1, 2))(x, 0.0, 1.0)
    np.testing.assert_array_equal(d_x, [1.0, 2.0, 0.0])
    assert (d_low, d_high) == (3.0, 0.0)
    tangent = ssad.jvp(clip_with_bounds, (x, 0.0, 1.0), (np.ones(3), 10.0, 100.0))[1]
    assert tangent == 1.0 + 2.0 + 3.0 * 10.0


def math_root(x):
    return math.sqrt(x)


def math_arcsine(x):
    return math.asin(x)


def float_half_power(x):
    return x ** 0.5


@pytest.mark.parametrize("f, x", [(math_root, 0.0), (math_arcsine, 1.0), (float_half_power, 0.0)])
def test_an_infinite_derivative_of_a_python_float_raises_zero_division(f, x):
    with pytest.raises(ZeroDivisionError):
        ssad.grad(f)(x)
    with pytest.raises(ZeroDivisionError):
        ssad.jvp(f, (x,), (1.0,))
    # ... and a NumPy float takes NumPy's arithmetic: inf
    if f is math_root:
        with np.errstate(divide="ignore"):
            assert ssad.grad(root)(np.array([x]))[0] == np.inf


@pytest.mark.parametrize("f, x", [(relu, np.array([0.3, -0.4, 1.2])), (largest, np.array([0.1, 0.9, 0.5])),
                                  (clipped, np.array([0.2, 0.7, -0.3, 1.4])), (np_abs, np.array([0.5, -1.0, 2.0]))])
def test_away_from_kinks_the_conventions_agree_with_finite_differences(f, x):
    assert_gradient_matches(f, (x,), 0, ssad.grad(f)(x))


# ----- NaN and inf -----

nan, inf = np.nan, np.inf
SPECIAL = np.array([0.7, nan, inf, -inf, -1.3])


def sine(x):
    return np.sum(np.sin(x))


def exponential(x):
    return np.sum(np.exp(x))


def tanh(x):
    return np.sum(np.tanh(x))


def logarithm(x):
    return np.sum(np.log(x))


def square(x):
    return np.sum(x ** 2)


def cube(x):
    return np.sum(x * x * x)


def reciprocal(x):
    return np.sum(1.0 / x)


def absolute(x):
    return np.sum(np.abs(x))


def relu_plain(x):
    return np.sum(np.maximum(x, 0.0))


def fmax_plain(x):
    return np.sum(np.fmax(x, 0.0))


def clip_plain(x):
    return np.sum(np.clip(x, -1.0, 1.0))


def mean(x):
    return np.mean(x)


def product(x):
    return np.prod(x)


def variance(x):
    return np.var(x)


def arctangent2(x):
    return np.sum(np.arctan2(x, 2.0))


def inner(x):
    return np.dot(x, x)


def running(x):
    return np.sum(np.cumsum(x) ** 2)


def norm(x):
    return np.linalg.norm(x)


def looped(x):
    for _ in range(3):
        x = np.sin(x) * 1.1
    return np.sum(x)


def _looped_derivative(x):
    d = np.ones_like(x)
    for _ in range(3):
        d = d * np.cos(x) * 1.1
        x = np.sin(x) * 1.1
    return d


def _product_of_others(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


# (function, NumPy's formula for its gradient); forward mode is checked against
# sum(gradient * tangent) per direction, or against TANGENT_FORMULAS where the
# tangent's own formula orders the products differently.
FORMULAS = [
    (sine, np.cos),
    (exponential, np.exp),
    (tanh, lambda x: 1.0 - np.tanh(x) ** 2),
    (logarithm, lambda x: 1.0 / x),
    (square, lambda x: 2.0 * x),
    (cube, lambda x: 3.0 * x * x),
    (reciprocal, lambda x: -1.0 / (x * x)),
    (absolute, np.sign),
    (mean, lambda x: np.full_like(x, 1.0 / x.size)),
    (product, _product_of_others),
    (variance, lambda x: 2.0 * (x - np.mean(x)) / x.size),
    (arctangent2, lambda x: 2.0 / (x * x + 4.0)),
    (inner, lambda x: 2.0 * x),
    (running, lambda x: np.cumsum((2.0 * np.cumsum(x))[::-1])[::-1]),
    (norm, lambda x: x / np.linalg.norm(x)),
    (looped, _looped_derivative),
    # selections: the NaN NumPy returns gets the gradient; fmax returns the number
    (relu_plain, lambda x: ((x > 0) | np.isnan(x)).astype(float)),
    (fmax_plain, lambda x: (x > 0).astype(float)),
    (clip_plain, lambda x: (((x >= -1.0) & (x <= 1.0)) | np.isnan(x)).astype(float)),
]

TANGENT_FORMULAS = {
    running: lambda x, t: np.sum(2.0 * np.cumsum(x) * np.cumsum(t)),
}

INPUTS = {
    "nan": np.array([0.7, nan, 2.5, -0.5, -1.3]),
    "inf": np.array([0.7, 3.0, inf, 0.4, -1.3]),
    "-inf": np.array([0.7, 3.0, -inf, 0.4, -1.3]),
    "all": SPECIAL,
}


def _quiet():
    return np.errstate(all="ignore")


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("f, formula", FORMULAS, ids=[f.__name__ for f, _ in FORMULAS])
def test_nan_and_inf_reach_the_gradient_where_the_formula_puts_them(f, formula, kind):
    x = INPUTS[kind]
    with _quiet():
        expected = formula(x.copy())
        got = ssad.grad(f)(x)
        forward = forward_gradient(f, x)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)
    tangent_formula = TANGENT_FORMULAS.get(f)
    if tangent_formula is None:
        expected_forward = as_forward(expected)
    else:
        with _quiet():
            expected_forward = np.array([tangent_formula(x, e) for e in np.eye(x.size)])
    np.testing.assert_allclose(forward, expected_forward, rtol=1e-12, atol=0, equal_nan=True)


def test_finite_inputs_give_finite_gradients_for_the_same_functions():
    x = np.array([0.7, 0.2, 2.5, -0.5, -1.3])
    for f, formula in FORMULAS:
        with _quiet():  # the log of a negative number is NaN; its derivative is not
            got = ssad.grad(f)(x)
        assert np.all(np.isfinite(got)), f.__name__
        np.testing.assert_allclose(got, formula(x), rtol=1e-12, atol=1e-15, err_msg=f.__name__)


def test_extrema_give_the_gradient_to_the_nan_elements():
    x = np.array([1.0, nan, 3.0, nan])
    with _quiet():
        np.testing.assert_array_equal(ssad.grad(largest)(x), [0.0, 0.5, 0.0, 0.5])
        np.testing.assert_array_equal(ssad.grad(smallest)(x), [0.0, 0.5, 0.0, 0.5])
        np.testing.assert_array_equal(forward_gradient(largest, x), [0.0, 0.5, 0.0, 0.5])
        rows = np.array([[1.0, nan, 3.0], [5.0, 4.0, 5.0]])
        np.testing.assert_array_equal(ssad.grad(row_maxima)(rows), [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
        np.testing.assert_array_equal(forward_gradient(row_maxima, rows), [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
        # +inf is an ordinary maximum
        np.testing.assert_array_equal(ssad.grad(largest)(np.array([inf, 1.0, inf])), [0.5, 0.0, 0.5])


def test_maximum_gives_the_gradient_to_the_nan_it_returns():
    a, b = np.array([nan, 1.0, nan, 2.0]), np.array([1.0, nan, nan, 2.0])
    with _quiet():
        d_a, d_b = ssad.grad(pair_minimum, wrt=(0, 1))(a, b)
    np.testing.assert_array_equal(d_a, [1.0, 0.0, 1.0, 0.5])  # np.minimum returns the first NaN
    np.testing.assert_array_equal(d_b, [0.0, 1.0, 0.0, 0.5])
    with _quiet():
        assert ssad.grad(pair_maximum, wrt=(0, 1))(nan, 1.0) == (3.0, 0.0)
        assert ssad.grad(pair_maximum, wrt=(0, 1))(1.0, nan) == (0.0, 3.0)
        assert ssad.jvp(pair_maximum, (nan, 1.0), (1.0, 10.0))[1] == 3.0


def builtin_max_of_two(a, b):
    return max(a, b) * 2.0


def test_builtin_max_gives_the_gradient_to_the_nan_it_returns():
    assert ssad.grad(builtin_max_of_two, wrt=(0, 1))(nan, 1.0) == (2.0, 0.0)
    assert ssad.grad(builtin_max_of_two, wrt=(0, 1))(1.0, nan) == (2.0, 0.0)  # max(1.0, nan) is 1.0
    assert ssad.jvp(builtin_max_of_two, (nan, 1.0), (1.0, 10.0))[1] == 2.0


def branchy(x):
    s = np.sum(x)
    if s > 0.0:
        return s * 2.0
    else:
        return s * 3.0


def scalar_branch(a):
    if a > 0.0:
        return a * a
    return -a


def halve_while_large(a):
    while a > 1.0:
        a = a * 0.5
    return a * 3.0


def test_branches_on_nan_comparisons_follow_python():
    x = np.array([1.0, nan, 2.0])
    with _quiet():
        np.testing.assert_array_equal(ssad.grad(branchy)(x), [3.0, 3.0, 3.0])  # nan > 0 is False
        assert ssad.jvp(branchy, (x,), (np.ones(3),))[1] == 9.0
    assert ssad.grad(scalar_branch)(nan) == -1.0
    assert ssad.grad(halve_while_large)(nan) == 3.0  # nan > 1.0 is False: no iteration runs
    assert ssad.grad(halve_while_large)(8.0) == 3.0 * 0.125


def masked_squares(x):
    return np.sum(np.where(np.isnan(x), 0.0, x * x))


def masked_squares_safely(x):
    missing = np.isnan(x)
    clean = np.where(missing, 0.0, x)
    return np.sum(np.where(missing, 0.0, clean * clean))


def test_where_masks_nan_only_when_the_branch_is_made_harmless_first():
    x = np.array([nan, 3.0, inf])
    with _quiet():
        np.testing.assert_array_equal(ssad.grad(masked_squares)(x), [nan, 6.0, inf])
    np.testing.assert_array_equal(ssad.grad(masked_squares_safely)(np.array([nan, 3.0])), [0.0, 6.0])


def summed_product(x, W):
    return np.sum(x @ W)


def test_a_derivative_that_does_not_read_the_nan_stays_finite():
    x = np.array([[1.0, nan, 2.0], [inf, 0.5, 1.0]])
    W = np.array([[1.0, 2.0], [nan, 1.0], [0.5, -1.0]])
    with _quiet():
        d_x, d_W = ssad.grad(summed_product, wrt=(0, 1))(np.ones((2, 3)), W)
        np.testing.assert_array_equal(d_x, [[3.0, nan, -0.5], [3.0, nan, -0.5]])  # NaN only where W is
        np.testing.assert_array_equal(d_W, np.full((3, 2), 2.0))
        np.testing.assert_array_equal(ssad.grad(mean)(x), np.full((2, 3), 1.0 / 6.0))


def projection(x, W):
    return np.sum(np.tanh(x @ W))


def gathered(x, index):
    return np.sum(np.sin(x[index]) * 2.0)


def bias_added(x, b):
    return np.sum(np.exp(x + b))


def euler(y, dt, n):
    for _ in range(n):
        y = y + dt * np.sin(y)
    return np.sum(y)


def test_helpers_never_raise_on_nan_or_inf():
    """matmul, unbroadcast, scatter (both code paths), seed and the tape all pass NaN through."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    x[1, 2] = nan
    x[2, 0] = inf
    W = rng.normal(size=(3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        d_x, d_W = ssad.grad(projection, wrt=(0, 1))(x, W)
        assert np.isnan(d_x[1]).all() and np.isfinite(d_x[0]).all()
        assert np.isnan(d_W).any()
        # gathers: np.add.at for a few rows, bincount sums for many
        for rows, index in [(5, np.array([0, 1, 1, 4])), (200, np.arange(100).repeat(3))]:
            table = rng.normal(size=(rows, 50))
            table[1, 0] = nan
            d_table = ssad.grad(gathered)(table, index)
            assert np.isnan(d_table[1, 0]) and np.isfinite(np.delete(d_table.ravel(), 50)).all()
        # unbroadcast sums NaN into the bias's adjoint
        d_b = ssad.grad(bias_added, wrt=1)(x, np.zeros(3))
        assert d_b[0] == inf and np.isfinite(d_b[1]) and np.isnan(d_b[2])
        # seed of a NaN result, a loop on the tape fed NaN and inf
        d_y = ssad.grad(euler)(np.array([nan, inf, 0.5]), 0.1, 20)
        assert np.isnan(d_y[0]) and np.isnan(d_y[1]) and np.isfinite(d_y[2])
        assert math.isnan(ssad.grad(cube)(np.array([nan]))[0])
        value, pullback = ssad.vjp(cube, np.array([inf, 1.0]))
        assert value == inf
        np.testing.assert_array_equal(pullback(1.0)[0], [inf, 3.0])
        assert np.isnan(pullback(nan)[0]).all()


def float_chain(a):
    return math.exp(a) + math.tanh(a) + a * a + math.sqrt(abs(a)) + abs(a)


def test_python_floats_carry_nan_and_inf_too():
    assert math.isnan(ssad.grad(float_chain)(nan))
    assert ssad.grad(float_chain)(inf) == inf
    assert math.isnan(ssad.jvp(float_chain, (nan,), (1.0,))[1])
    assert ssad.grad(math_root)(inf) == 0.0
