"""A pullback reads what the forward half read, whatever the caller changes in between.

`value, pullback = ssad.vjp(f, x)` runs the forward half at once and the backward half when
`pullback` is called. The residuals the backward half reads included the caller's own
arrays: the argument `x` (for the adjoint of `np.sin(x) * x`), the value returned (the
adjoint of `np.exp(x)` reads its result), an array held in a list or by an object passed
in. A caller that changed one of those in place before calling the pullback (`x[0] = 5.0`,
`y *= 0`) got the adjoint at the changed point: silently wrong (all zeros for `y *= 0`).
The residuals that may share memory with what the caller holds are copies now.
Expected values are closed forms.
"""

import numpy as np

import ssad

X = np.array([0.3, -1.2, 0.8, 2.1])


def sine_times(x):
    return np.sum(np.sin(x) * x)


def exponential(x):
    return np.exp(x)


def first_of_a_list(xs):
    return np.sum(np.sin(xs[0]) * xs[1])


class Weights:
    def __init__(self, w):
        self.w = w


def through_an_object(x, m):
    return np.sum(np.sin(m.w) * x**2)


def test_an_argument_changed_before_the_pullback():
    x = X.copy()
    _, pullback = ssad.vjp(sine_times, x)
    x[0] = 5.0
    x[1:] *= 3.0
    (got,) = pullback(1.0)
    np.testing.assert_allclose(got, np.cos(X) * X + np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(pullback(2.0)[0], 2 * (np.cos(X) * X + np.sin(X)), rtol=1e-12)


def test_the_value_returned_changed_before_the_pullback():
    y, pullback = ssad.vjp(exponential, X.copy())
    y *= 0.0
    (got,) = pullback(np.ones(4))
    np.testing.assert_allclose(got, np.exp(X), rtol=1e-12)


def test_an_array_held_in_a_list_changed_before_the_pullback():
    xs = [X.copy(), X[::-1].copy()]
    _, pullback = ssad.vjp(first_of_a_list, xs)
    xs[0][:] = 0.0
    xs[1][2] = 9.0
    (got,) = pullback(1.0)
    np.testing.assert_allclose(got[0], np.cos(X) * X[::-1], rtol=1e-12)
    np.testing.assert_allclose(got[1], np.sin(X), rtol=1e-12)


def test_an_array_an_object_holds_changed_before_the_pullback():
    m = Weights(np.array([0.5, 1.0, 1.5, 2.0]))
    w = m.w.copy()
    x = X.copy()
    _, pullback = ssad.vjp(through_an_object, x, m, wrt=0)
    m.w[:] = 0.0
    x[:] = 1.0
    np.testing.assert_allclose(pullback(1.0), 2 * np.sin(w) * X, rtol=1e-12)


def test_nothing_changed_gives_the_same_adjoints():
    x = X.copy()
    value, pullback = ssad.vjp(sine_times, x)
    assert value == sine_times(X)
    np.testing.assert_allclose(pullback(1.0)[0], ssad.grad(sine_times)(X), rtol=1e-12)
    np.testing.assert_array_equal(x, X)
