"""Common subexpressions: a pure computation repeated on unchanged operands runs once.

Each case checks the generated code (the repeat is gone, or must stay) and the
gradient against finite differences.
"""

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches

W = np.random.default_rng(0).standard_normal((6, 3))
ROWS = np.array([0, 2, 2, 5])


def gathered_twice(W, rows):
    a = W[rows]
    return np.sum(np.tanh(a)) + 0.5 * np.sum(W[rows] ** 2)


def same_call_twice(W, rows):
    return np.sum(np.exp(W) * np.sin(W)) + np.sum(np.exp(W))


def operand_rebound_in_a_branch(W, rows):
    first = np.sum(W * W)
    if first > 0.0:
        W = W * 0.5
    return first + np.sum(W * W)


def repeat_assigned_again_later(W, rows):
    a = np.tanh(W)
    b = np.tanh(W)
    for _ in range(2):
        b = b * 1.5
    return np.sum(a) + np.sum(b)


def written_in_place(W, rows):
    a = W * 2.0
    b = W * 2.0
    b[0] = 0.0
    return np.sum(a * b)


MERGED = [(gathered_twice, "W[rows]", 1), (same_call_twice, "np.exp(W)", 1)]
KEPT = [
    (operand_rebound_in_a_branch, "W * W", 2),
    (repeat_assigned_again_later, "np.tanh(W)", 2),
    (written_in_place, "W * 2.0", 2),
]


@pytest.mark.parametrize("f, text, count", MERGED + KEPT, ids=lambda v: getattr(v, "__name__", None))
def test_repeats_merge_only_when_the_operands_cannot_change(f, text, count):
    source = str(ssad.show(f)).split("\n\n\n")[0]
    forward = source.split("seed(")[0]
    assert forward.count(text) == count, source
    args = (W.copy(), ROWS)
    assert_gradient_matches(f, args, 0, ssad.grad(f)(*args))


def test_random_draws_are_never_merged():
    def noisy(x):
        rng = np.random.default_rng(0)
        return np.sum(x * rng.standard_normal(3)) + np.sum(x * rng.standard_normal(3))

    forward = str(ssad.show(noisy)).split("seed(")[0]
    assert forward.count("= rng.standard_normal(3)") == 2, forward
