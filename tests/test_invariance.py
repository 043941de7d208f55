"""A maximum subtracted only to stabilize a softmax or log-sum-exp gets no adjoint.

The result is exactly independent of such a maximum, so ssad proves it and leaves
the maximum's adjoint out (no reduction, no search for ties). Every case here is
checked against finite differences, and the cases where the proof must not apply
keep the maximum's adjoint and stay correct.
"""

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches


def log_softmax_nll(x, labels):
    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    log_probs = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(x.shape[0]), labels])


def softmax_weighted(x, w):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    probs = e / e.sum(axis=-1, keepdims=True)
    return np.sum(probs * w)


def logsumexp(x):
    m = np.max(x, axis=0, keepdims=True)
    return np.sum(m + np.log(np.sum(np.exp(x - m), axis=0, keepdims=True)))


def scaled_softmax(x, w):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(2.0 * (x - m) - 1.0)
    return np.sum(w * (e / np.sum(e, axis=1, keepdims=True)))


def max_also_returned(x):
    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return np.sum(s - lse) + 0.5 * np.sum(m)


def shift_not_cancelled(x):
    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    return np.sum(np.exp(s))


def summed_over_other_axis(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return np.sum(np.log(e / np.sum(e, axis=0, keepdims=True)))


def without_keepdims(x):
    m = np.max(x, axis=1)
    s = x - m[:, None]
    return np.sum(s - np.log(np.sum(np.exp(s), axis=1, keepdims=True)))


def against_another_array(x, y):
    m = np.max(x, axis=1, keepdims=True)
    s = y - m
    return np.sum(s - np.log(np.sum(np.exp(s), axis=1, keepdims=True)))


def multiplied_by_an_array(x, w):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m) * w
    return np.sum(np.log(e / np.sum(e, axis=1, keepdims=True)))


def used_in_a_loop(x):
    m = np.max(x, axis=1, keepdims=True)
    total = 0.0
    for _ in range(2):
        s = x - m
        total = total + np.sum(s - np.log(np.sum(np.exp(s), axis=1, keepdims=True)))
    return total


def _inputs(rng, shape=(5, 4)):
    x = rng.standard_normal(shape)
    x[0, 1] = x[0, 2] = x[0].max() + 0.5  # a tie for the maximum in one row
    return x


STABILIZED = [
    (log_softmax_nll, lambda rng: (_inputs(rng), np.array([0, 1, 2, 3, 1]))),
    (softmax_weighted, lambda rng: (_inputs(rng), rng.standard_normal((5, 4)))),
    (logsumexp, lambda rng: (_inputs(rng),)),
    (scaled_softmax, lambda rng: (_inputs(rng), rng.standard_normal((5, 4)))),
]
KEPT = [
    (max_also_returned, lambda rng: (rng.standard_normal((5, 4)),)),
    (shift_not_cancelled, lambda rng: (rng.standard_normal((5, 4)),)),
    (summed_over_other_axis, lambda rng: (rng.standard_normal((5, 4)),)),
    (without_keepdims, lambda rng: (rng.standard_normal((5, 4)),)),
    (against_another_array, lambda rng: (rng.standard_normal((5, 4)), rng.standard_normal((5, 4)))),
    (multiplied_by_an_array, lambda rng: (rng.standard_normal((5, 4)), rng.uniform(0.5, 2.0, (5, 4)))),
    (used_in_a_loop, lambda rng: (rng.standard_normal((5, 4)),)),
]


@pytest.mark.parametrize("f, make", STABILIZED, ids=lambda v: getattr(v, "__name__", ""))
def test_a_stabilizing_maximum_gets_no_adjoint_and_the_gradient_is_right(f, make):
    args = make(np.random.default_rng(0))
    source = str(ssad.show(f))
    assert "_share_among_ties" not in source and "d_m " not in source, source
    assert_gradient_matches(f, args, 0, ssad.grad(f)(*args))


@pytest.mark.parametrize("f, make", KEPT, ids=lambda v: getattr(v, "__name__", ""))
def test_a_maximum_the_result_depends_on_keeps_its_adjoint(f, make):
    args = make(np.random.default_rng(1))
    assert "_share_among_ties" in str(ssad.show(f)), f.__name__
    assert_gradient_matches(f, args, 0, ssad.grad(f)(*args))


def test_the_maximum_is_still_differentiated_where_it_matters():
    # Same shape as log_softmax_nll, but the maximum leaks into the result, so the
    # gradient differs from the stabilized one by exactly the leak's derivative.
    x = np.random.default_rng(2).standard_normal((3, 4))
    leak = ssad.grad(max_also_returned)(x) - ssad.grad(lambda_free_stable)(x)
    expected = np.zeros_like(x)
    expected[np.arange(3), np.argmax(x, axis=1)] = 0.5
    np.testing.assert_allclose(leak, expected, atol=1e-12)


def lambda_free_stable(x):
    m = np.max(x, axis=1, keepdims=True)
    s = x - m
    lse = np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return np.sum(s - lse)


def test_second_derivatives_through_a_stabilized_softmax():
    x = np.random.default_rng(3).standard_normal(4)

    def lse(v):
        m = np.max(v, axis=0, keepdims=True)
        return np.sum(m + np.log(np.sum(np.exp(v - m), axis=0, keepdims=True)))

    p = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
    np.testing.assert_allclose(ssad.hessian(lse)(x), np.diag(p) - np.outer(p, p), atol=1e-10)
