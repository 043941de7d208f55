"""A check the generated code runs before `z[i] *= v` names a local bound on some paths only.

`z[i] *= v`, where `z` may be a list, changes the item in place; the generated code looks
into the locals read afterwards for another holder of it (`item_held_elsewhere`). One of
them may be bound only in a branch not taken yet: Python never reads it there, and the
check must not either (it raised `UnboundLocalError`, random program 6485 of the sweep).
"""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

X = np.array([0.3, -0.5, 0.8])
Y = np.array([0.1, 0.2, -0.3])


def bound_in_a_branch_read_in_another(x, y, s):
    h = np.tanh(y)
    for _ in [y, x]:
        if s > 0.13:
            doubled, t = x * 2.0, y.dot(y)
        acc = s
        for i in range(3):
            z = h.copy()
            z[i] *= np.tanh(acc)  # `t` is read afterwards, where `s > 0.13` bound it
            acc += np.sum(z)
        if s > 0.13:
            s = s * 0.5 + 0.01 * np.sum(doubled) if t > 0.0 else s
        s = s + 0.1 * acc * np.sum(x)
    h = h + 1.0
    return np.sum(h) + s


def bound_by_unpacking_then_read(x, y, s):
    # random program 6485: `t` is read right after the statement binding it, never before
    h = np.tanh(y)
    for _ in [y, x]:
        if s > 0.13:
            doubled, t = x * 2.0, y.dot(y)
            s = t + 0.1 * np.sum(doubled)
        acc = s
        for i in range(3):
            z = h.copy()
            z[i] *= np.tanh(acc)
            acc += np.sum(z)
        s = s + 0.1 * acc * np.sum(x)
    h = h + 1.0
    return np.sum(h) + s


def _numerical(f, args):
    return [numerical_gradient(lambda v, k=k: f(*args[:k], v, *args[k + 1:]), args[k]) for k in range(len(args))]


FUNCTIONS = [bound_in_a_branch_read_in_another, bound_by_unpacking_then_read]


@pytest.mark.parametrize("s", [-1.0, 1.0])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_gradient_on_either_path(function, s):
    args = (X, Y, s)
    for got, expected in zip(ssad.grad(function, wrt=(0, 1, 2))(*args), _numerical(function, args), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("s", [-1.0, 1.0])
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_mode_on_either_path(function, s):
    tangents = (np.array([0.2, -0.1, 0.4]), np.array([0.5, 0.3, -0.2]), 0.7)
    _, got = ssad.jvp(function, (X, Y, s), tangents)
    expected = sum(np.sum(g * t) for g, t in zip(_numerical(function, (X, Y, s)), tangents, strict=True))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("s", [-1.0, 1.0])
def test_a_function_calling_the_gradient_and_the_function_itself(s):
    gradient = ssad.grad(bound_in_a_branch_read_in_another)

    def inside(y):
        return 0.5 * bound_in_a_branch_read_in_another(X, y, s) + np.sum(np.sin(gradient(X, y, s)) * y)

    np.testing.assert_allclose(ssad.grad(inside)(Y), numerical_gradient(inside, Y), rtol=1e-5, atol=1e-7)


def test_only_a_name_a_check_may_read_unbound_is_bound_first():
    lowered = str(ssad.show(bound_in_a_branch_read_in_another, stage="anf"))
    assert "    t = None\n" in lowered  # the check before `z[i] *= ...` reads `t`
    assert "acc = None" not in lowered and "h = None" not in lowered
