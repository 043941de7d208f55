"""Names swapped inside a block, and random draws from a generator the function makes.

- `a, b = b, a` inside an `if`, `for` or `while` body was lowered as `a = b; b = a`
  (inside control flow a name keeps its name, so the second read saw the new `a`): the
  value and every derivative were wrong (f below: 33.0 and 0.0 for 10.0 and 10.0). The
  swap reads every name before any is assigned now. Recurrences written this way
  (Clenshaw, Fibonacci-like updates, the secant method) are checked in every mode.
- A draw whose parameter carries a gradient, from a generator made inside the function
  or passed in (`rng = np.random.default_rng(0)`, `rng.normal(mu, 1.0)`), gave a zero
  derivative, where a draw from `np.random.normal` or a module's generator is refused.
  It is refused the same way now, where the code runs.
"""

import numpy as np
import pytest

import ssad

from .conftest import check_every_order

X = np.array([0.3, -0.4, 1.1])
V = np.array([1.0, 0.5, -0.3])


# ----- swaps -----


def swaps_in_a_branch(x):
    a, b = x, 3.0
    if x > 0:
        a, b = b, a
    return a + 10 * b


def test_a_swap_in_a_branch_reads_both_names_first():
    assert ssad.value_and_grad(swaps_in_a_branch)(0.7) == (pytest.approx(10.0), pytest.approx(10.0))
    assert ssad.jvp(swaps_in_a_branch, (0.7,), (1.0,)) == (pytest.approx(10.0), pytest.approx(10.0))


def clenshaw(x):
    # sum of c[k] T_k(t) by Clenshaw's recurrence, t a number
    c = np.array([0.5, -1.0, 0.25, 2.0])
    t = np.tanh(x[0]) * 0.9
    b1, b2 = 0.0, 0.0
    for k in range(len(c) - 1, 0, -1):
        b1, b2 = 2.0 * t * b1 - b2 + c[k], b1
    return (t * b1 - b2 + c[0]) * x[1] + x[2] ** 2


def fibonacci_like(x):
    a, b = x[0], x[1]
    for _ in range(4):
        a, b = b, a + b * x[2]
    return a * b


def rotates_three_in_a_while(x):
    a, b, c = x[0], x[1], x[2]
    k = 0
    while k < 2:
        a, b, c = b, c, a * 1.5
        k += 1
    return a + 2.0 * b + 3.0 * c


def swaps_arrays_in_a_loop(x):
    p, q = x * 1.0, np.sin(x)
    for _ in range(3):
        p, q = q, p * 0.5 + q
    return np.sum(p * q)


def swaps_nested_targets(x):
    a, b, c = x[0], x[1], x[2]
    if a < 1.0:
        (a, b), c = (c, a), b
    return a + 2.0 * b + 4.0 * c


def secant_steps(x):
    # the secant method for t ** 3 = s, with its two iterates swapped each step
    s = 2.0 + x[0] ** 2
    a, b = 1.0 + 0.1 * x[1], 1.5
    for _ in range(5):
        fa, fb = a ** 3 - s, b ** 3 - s
        a, b = b, b - fb * (b - a) / (fb - fa)
    return b * x[2]


@pytest.mark.parametrize("f", [clenshaw, fibonacci_like, rotates_three_in_a_while, swaps_arrays_in_a_loop,
                               swaps_nested_targets, secant_steps])
def test_a_recurrence_written_as_a_swap_is_differentiated(f):
    check_every_order(f, X, V)


def test_a_rotation_in_a_while_loop_in_closed_form():
    x0, x1, x2 = X
    # after two rotations: a = x2, b = 1.5 * x0, c = 1.5 * x1
    assert rotates_three_in_a_while(X) == pytest.approx(x2 + 3.0 * x0 + 4.5 * x1)
    np.testing.assert_allclose(ssad.grad(rotates_three_in_a_while)(X), [3.0, 4.5, 1.0])


# ----- draws from a generator the function makes or is given -----


def draws_from_a_local_generator(mu):
    rng = np.random.default_rng(42)
    return np.sum(rng.normal(mu, 1.0) ** 2)


def draws_from_a_generator_passed_in(mu, rng):
    return np.sum(rng.exponential(np.exp(mu)))


def draws_from_a_generator_made_in_place(mu):
    return np.sum(np.random.default_rng(0).uniform(low=mu, high=mu + 1.0))


def scales_a_local_standard_draw(mu):
    rng = np.random.default_rng(42)
    return np.sum((mu + 0.5 * rng.standard_normal(mu.shape)) ** 2)


@pytest.mark.parametrize("f, extra", [
    (draws_from_a_local_generator, ()),
    (draws_from_a_generator_passed_in, (np.random.default_rng(1),)),
    (draws_from_a_generator_made_in_place, ()),
])
def test_a_draw_whose_parameter_carries_a_gradient_is_refused_in_both_modes(f, extra):
    line = f.__code__.co_firstlineno + (2 if f is draws_from_a_local_generator else 1)
    runs = (lambda: ssad.grad(f)(X.copy(), *extra),
            lambda: ssad.jvp(f, (X.copy(), *extra), (V,) + (None,) * len(extra)),
            lambda: ssad.hvp(f)(X.copy(), V) if not extra else ssad.grad(f)(X.copy(), *extra))
    for run in runs:
        with pytest.raises(ssad.MissingRuleError, match=r"draws random numbers with a parameter that carries a "
                                                        r"gradient; a draw has no derivative\. Reparameterize") as e:
            run()
        assert (e.value.filename, e.value.lineno) == (__file__, line)


def test_a_reparameterized_draw_from_a_local_generator_is_differentiated():
    noise = 0.5 * np.random.default_rng(42).standard_normal(X.shape)
    np.testing.assert_allclose(ssad.grad(scales_a_local_standard_draw)(X), 2.0 * (X + noise), rtol=1e-12)
    check_every_order(scales_a_local_standard_draw, X, V)
