"""The aux of `has_aux=True` is what the function computed, as Python's own call returns it.

The backward sweep undoes in place what the forward sweep changed in place (a list's
appends are popped, an array's overwritten elements restored): an aux that is such a list
or array came back emptied or as it stood before the writes (a history built by `append`
came back `[]`). The gradients beside it are checked against central differences.
"""

import numpy as np
import pytest

import ssad

X = np.array([0.3, -1.2, 0.7, 1.5])


def history(x):
    s = 0.0
    hist = []
    for i in range(3):
        s = s + x[i] ** 2
        hist.append(s)
    return s, hist


def appended_once(x):
    hist = []
    hist.append(1.0)
    return np.sum(x**2), hist


def written_in_a_loop(x):
    z = np.ones(4)
    for i in range(1, 4):
        z[i] = np.sin(x[i] * z[i - 1])
    for i in range(1, 4):
        z[i] = z[i] * z[i - 1] + 1.0
    return np.sum(z**2), z


def written_in_place(x):
    z = x * 1.0
    z *= 2.0
    z[1:3] += x[:2] ** 2
    return np.sum(np.sin(z)), z


def nested(x):
    z = np.zeros(3)
    snapshots = []
    for i in range(3):
        z[i] = x[i] ** 2
        snapshots.append(z.copy())
    return np.sum(z), {"snapshots": snapshots, "last": z, "n": len(snapshots)}


def popped(x):
    h = [1.0, 2.0]
    v = h.pop()
    return np.sum(x) * v, h


def inserted_and_extended(x):
    h = [1.0, 2.0]
    h.insert(0, 5.0)
    h.extend([7.0])
    return np.sum(x**3), (h, len(h))


def draws_kept(x):
    s = 0.0
    draws = []
    for _ in range(3):
        e = np.random.randn()
        draws.append(e)
        s = s + np.tanh(x[0] * e + s)
    return s, draws


PROGRAMS = [history, appended_once, written_in_a_loop, written_in_place, nested, popped, inserted_and_extended]


def _same(a, b):
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for u, v in zip(a, b, strict=True):
            _same(u, v)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def _central(f, x, h=1e-6):
    out = np.zeros_like(x)
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = h
        out[k] = (f(x + d)[0] - f(x - d)[0]) / (2 * h)
    return out


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_aux_is_what_python_computes(f):
    want_value, want_aux = f(X.copy())
    gradient, aux = ssad.grad(f, has_aux=True)(X)
    _same(aux, want_aux)
    np.testing.assert_allclose(gradient, _central(f, X), rtol=1e-6, atol=1e-8)
    (value, aux), gradient2 = ssad.value_and_grad(f, has_aux=True)(X)
    _same(aux, want_aux)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(gradient2, gradient, rtol=1e-12)


def test_draws_returned_as_aux_are_those_the_gradient_used():
    np.random.seed(1)
    (value, draws), gradient = ssad.value_and_grad(draws_kept, has_aux=True)(X)
    assert len(draws) == 3

    def replayed(x0):
        s = 0.0
        for e in draws:
            s = s + np.tanh(x0 * e + s)
        return s

    assert value == pytest.approx(replayed(X[0]), rel=1e-12)
    h = 1e-6
    assert gradient[0] == pytest.approx((replayed(X[0] + h) - replayed(X[0] - h)) / (2 * h), rel=1e-6)
    np.testing.assert_array_equal(gradient[1:], 0.0)


def test_aux_sharing_is_kept_and_calls_are_independent():
    def shared(x):
        h = []
        h.append(x[0] * 2.0)
        return np.sum(x**2), (h, h)

    g = ssad.grad(shared, has_aux=True)
    _, (a, b) = g(X)
    assert a is b and len(a) == 1
    _, (c, _) = g(X)
    assert c is not a and a == [pytest.approx(0.6)]  # a later call leaves the first aux alone
