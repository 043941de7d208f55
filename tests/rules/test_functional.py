"""Rules for function values, checked through whole gradients (their outputs are functions)."""

import functools

import numpy as np

import ssad
from ssad.registry import REGISTRY

from ..conftest import assert_gradient_matches

CASES = []
CHECKED_ELSEWHERE = [functools.partial]


def scaled_by_partial(x, w):
    f = functools.partial(np.multiply, w)
    g = functools.partial(np.add, f(x))
    return np.sum(np.sin(g(x * w)))


def test_partial_hands_gradients_to_its_bound_arguments():
    rng = np.random.default_rng(2)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    for position in (0, 1):
        gradient = ssad.grad(scaled_by_partial, wrt=position)(*args)
        assert_gradient_matches(scaled_by_partial, args, position, gradient)


def test_partial_rule_gives_no_gradient_to_the_function():
    rule = REGISTRY.adjoint_rule(functools.partial)
    assert rule((1.0, 2.0), None, np.add, 3.0, 4.0) == (None, 1.0, 2.0)
