"""A name only one path assigns has a zero derivative on the other paths, never an unbound name.

The adjoint (or tangent) of such a name meets an explicit zero where the paths join;
that zero is shaped like the name, which the path not taken never bound. Each case
runs at second order (forward over reverse, reverse over reverse) down the path that
does not bind the name, against central differences of the first gradient.
"""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


def jacobian_by_differences(g, x, step=1e-6):
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = step
        columns.append((g(x + e) - g(x - e)) / (2 * step))
    return np.stack(columns, axis=-1)


def branch_binds_temporaries(x):
    if np.sum(x) > 0:
        y = np.tanh(x)
        z = y * y
    else:
        z = x
    return np.sum(z * x)


def loop_may_not_run(x, n):
    s = x * 1.0
    for _ in range(n):
        t = np.tanh(s)
        s = s + t * x
    return np.sum(s * s)


def while_binds_in_body(x):
    s = np.sum(x)
    while s > 10.0:
        u = np.sin(s)
        s = s * 0.5 + u
    return s * np.sum(x * x)


def loop_run_zero_times(x):
    return loop_may_not_run(x, 0)


def loop_run_twice(x):
    return loop_may_not_run(x, 2)


CASES = [
    (branch_binds_temporaries, np.array([-0.3, 0.2, -0.4])),
    (branch_binds_temporaries, np.array([0.3, 0.2, -0.4])),
    (loop_run_zero_times, np.array([0.3, -0.2])),
    (loop_run_twice, np.array([0.3, -0.2])),
    (while_binds_in_body, np.array([0.3, -0.2, 0.5])),
    (while_binds_in_body, np.array([8.0, 7.5, 3.0])),
]


@pytest.mark.parametrize("function, x", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_second_order_down_the_path_that_binds_nothing(function, x):
    gradient = ssad.grad(function)
    expected = jacobian_by_differences(gradient, x)
    np.testing.assert_allclose(ssad.hessian(function)(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.jacobian(gradient)(x), expected, rtol=1e-5, atol=1e-6)

    def summed(v):
        return np.sum(np.sin(gradient(v)))

    np.testing.assert_allclose(ssad.grad(summed)(x), numerical_gradient(summed, x), rtol=1e-5, atol=1e-6)
