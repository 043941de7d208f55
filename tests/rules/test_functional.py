"""Rules for function values, checked through whole gradients (their outputs are functions)."""

import functools

import numpy as np

import ssad
from ssad.registry import REGISTRY
from ssad.runtime import concat

from ..conftest import assert_gradient_matches

CASES = []
CHECKED_ELSEWHERE = [functools.partial, concat, list, tuple, dict.items, dict.values]


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
    assert rule(((1.0, 2.0), {}), None, np.add, 3.0, 4.0) == (None, 1.0, 2.0)


def test_sequence_rules_against_finite_differences():
    from ssad.testing import numerical_gradient

    a, b = [0.5, -1.0], [2.0]
    d = [0.3, -0.7, 1.1]
    d_a, d_b = REGISTRY.adjoint_rule(concat)(d, concat(a, b), a, b)
    assert d_a == [0.3, -0.7] and d_b == [1.1]
    rows = np.array([[1.0, 2.0], [3.0, -4.0]])
    (d_rows,) = REGISTRY.adjoint_rule(list)([np.ones(2), 2 * np.ones(2)], list(rows), rows)
    expected = numerical_gradient(lambda r: float(np.sum(np.ones(2) * r[0] + 2 * r[1])), rows)
    np.testing.assert_allclose(d_rows, expected, rtol=1e-6)
    (d_pair,) = REGISTRY.adjoint_rule(tuple)([1.5, 2.5], (0.1, 0.2), (0.1, 0.2))
    assert d_pair == (1.5, 2.5)


def joins_sequences(x, y):
    parts = [x, x * 2.0] + [np.sin(y)]
    pair = tuple(parts)
    return np.sum(parts[1] * parts[2]) + np.sum(list(pair)[0])


def test_joined_sequences_carry_gradients():
    rng = np.random.default_rng(4)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    for position in (0, 1):
        assert_gradient_matches(joins_sequences, args, position, ssad.grad(joins_sequences, wrt=position)(*args))


def over_items(params, x):
    total = 0.0
    for _name, value in params.items():
        total = total + np.sum(np.sin(value * x))
    return total + sum(np.sum(v) for v in params.values())


def test_dict_views_carry_gradients_to_their_dict():
    params = {"a": np.array([0.3, -0.2]), "b": np.array([1.1, 0.4])}
    x = np.array([0.5, 1.5])
    gradient = ssad.grad(over_items)(params, x)
    for key in params:
        expected = np.cos(params[key] * x) * x + 1.0
        np.testing.assert_allclose(gradient[key], expected, rtol=1e-12)
    assert REGISTRY.is_nondifferentiable(dict.keys)
