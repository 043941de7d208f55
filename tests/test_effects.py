"""Having no derivative is not being pure: random draws inside differentiated code.

A draw carries no gradient, but two draws are different values: the tape must save
each iteration's draw, CSE must not merge two draws, and dead-code elimination must
not drop one (the random state would then differ from the user's function).
"""

import dataclasses

import numpy as np
import pytest

import ssad
from ssad.registry import REGISTRY

X = np.array([0.3, -0.4, 0.5])


def draws_in_a_loop(x):
    s = 0.0
    for _ in range(3):
        e = np.random.normal(size=3)
        s = s + np.sum(np.sin(x * e))
    return s


def true_gradient_of_draws_in_a_loop(x, seed):
    np.random.seed(seed)
    draws = [np.random.normal(size=3) for _ in range(3)]
    return sum(np.cos(x * e) * e for e in draws)


def test_a_draw_in_a_loop_is_saved_each_iteration():
    np.random.seed(0)
    got = ssad.grad(draws_in_a_loop)(X)
    np.testing.assert_allclose(got, true_gradient_of_draws_in_a_loop(X, 0), rtol=1e-12)


def test_a_draw_declared_non_differentiable_is_still_impure():
    def scaled_draw(size):
        return np.random.standard_normal(size)

    ssad.nondifferentiable(scaled_draw, pure=False)
    assert REGISTRY.is_nondifferentiable(scaled_draw) and not REGISTRY.is_pure(scaled_draw)

    def f(x):
        s = 0.0
        for _ in range(3):
            e = scaled_draw(3)
            s = s + np.sum(np.sin(x * e))
        return s

    np.random.seed(4)
    got = ssad.grad(f)(X)
    np.random.seed(4)
    draws = [np.random.standard_normal(3) for _ in range(3)]
    np.testing.assert_allclose(got, sum(np.cos(X * e) * e for e in draws), rtol=1e-12)


def test_generator_and_random_state_methods_are_draws():
    rs = np.random.RandomState(0)
    rng = np.random.default_rng(1)

    def f(x):
        s = 0.0
        for _ in range(2):
            s = s + np.sum(x * rs.randn(3)) + np.sum(np.cos(x * rng.normal(size=3)))
        return s

    got = ssad.grad(f)(X)
    rs.seed(0)
    check = np.random.default_rng(1)
    expected = 0.0
    for _ in range(2):
        a, b = rs.randn(3), check.normal(size=3)
        expected = expected + a - np.sin(X * b) * b
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_two_draws_are_not_one_and_an_unused_draw_still_runs():
    def f(x):
        a = np.random.normal(size=3)
        b = np.random.normal(size=3)
        np.random.normal(size=2)  # unused: the random state still advances
        return np.sum(x * a) + np.sum(x * b)

    np.random.seed(3)
    got = ssad.grad(f)(X)
    after = np.random.normal()
    np.random.seed(3)
    a, b = np.random.normal(size=3), np.random.normal(size=3)
    np.random.normal(size=2)
    np.testing.assert_allclose(got, a + b, rtol=1e-12)
    assert after == np.random.normal()


def test_a_draw_whose_parameter_carries_a_gradient_is_refused():
    def f(mu):
        return np.sum(np.random.normal(mu, 1.0, size=3))

    with pytest.raises(ssad.SsadError, match=r"test_effects.py:\d+:\d+: .*draws random numbers.*Reparameterize"):
        ssad.grad(f)(0.5)


def test_pure_and_impure_primitives():
    assert REGISTRY.is_pure(np.sin) and REGISTRY.is_pure(np.zeros_like)
    for draw in (np.random.normal, np.random.default_rng().normal, np.random.RandomState(0).randn):
        assert not REGISTRY.is_pure(draw)
    assert not REGISTRY.is_pure(print)


def reads_a_global_function(x):
    return np.sum(GLOBAL_FUNCTION(x))


GLOBAL_FUNCTION = np.sin


def test_a_gradient_made_before_or_after_a_global_is_rebound_uses_the_new_value():
    global GLOBAL_FUNCTION
    x = np.array([0.3, -0.2, 0.5])
    before = ssad.grad(reads_a_global_function)
    np.testing.assert_allclose(before(x), np.cos(x), rtol=1e-12)
    GLOBAL_FUNCTION = np.cos
    try:
        np.testing.assert_allclose(ssad.grad(reads_a_global_function)(x), -np.sin(x), rtol=1e-12)
        np.testing.assert_allclose(before(x), -np.sin(x), rtol=1e-12)  # made before: compiled again
    finally:
        GLOBAL_FUNCTION = np.sin


def _noisy_map(x):
    return np.exp(x * np.random.normal(size=3))


def _noisy_loss(x):
    return np.sum(_noisy_map(x))  # the draw is in a function it calls


def _loss_on_a_generator(x, rng):
    return np.sum(np.exp(x * rng.standard_normal(3)))


def _loss_on_a_held_generator(x, state):
    return np.exp(x * state["rng"].standard_normal(3))


@pytest.mark.parametrize(
    "make, args",
    [
        (lambda: ssad.jacobian(_noisy_map), (X,)),
        (lambda: ssad.jacobian(_noisy_map, mode="reverse"), (X,)),
        (lambda: ssad.hessian(_noisy_loss), (X,)),
        (lambda: ssad.hessian(_loss_on_a_generator), (X, np.random.default_rng(0))),
        (lambda: ssad.jacobian(_loss_on_a_held_generator), (X, {"rng": np.random.default_rng(0)})),
        (lambda: ssad.hessian(_loss_on_a_generator, wrt=(0,)), (X, np.random.default_rng(0))),
        (lambda: ssad.jacobian(ssad.grad(_noisy_loss)), (X,)),
        (lambda: ssad.jacobian(ssad.jacobian(_noisy_map)), (X,)),
    ],
    ids=["jacobian", "jacobian-reverse", "hessian", "hessian-generator", "jacobian-held-generator", "hessian-tuple",
         "jacobian-of-grad",
         "jacobian-of-jacobian"],
)
def test_a_matrix_of_a_function_that_draws_is_refused(make, args):
    # jacobian and hessian run the function once per row or column: each would be the
    # derivative at other draws (the diagonal of the Hessian of sum(exp(x * e)) mixed
    # e*e*exp(x*e) of four different e). The message names the draw's line, or the
    # generator passed in (a method's name alone does not tell a draw).
    with pytest.raises(ssad.SsadError, match=r"once per row or column.*(not pure|random generator)") as caught:
        make()(*args)
    message = str(caught.value)
    assert "test_effects.py" in message or "given a random generator (Generator)" in message


def test_one_run_derivatives_of_a_function_that_draws_use_one_draw():
    np.random.seed(5)
    e = np.random.normal(size=3)
    np.random.seed(5)
    hv = ssad.hvp(_noisy_loss)(X, np.ones(3))
    np.testing.assert_allclose(hv, e * e * np.exp(X * e), rtol=1e-12)
    np.random.seed(5)
    gg = ssad.grad(lambda x: np.sum(ssad.grad(_noisy_loss)(x)))(X)
    np.testing.assert_allclose(gg, e * e * np.exp(X * e), rtol=1e-12)


def test_a_matrix_of_a_function_that_prints_is_built(capsys):
    def loud(x):
        print("loss")
        return np.sum(np.sin(x) ** 2)

    H = ssad.hessian(loud)(X)
    np.testing.assert_allclose(H, np.diag(2 * np.cos(2 * X)), rtol=1e-12)
    assert "loss" in capsys.readouterr().out


@dataclasses.dataclass
class _Powers:
    w: np.ndarray

    def power(self, k):  # named like a generator's draw
        return np.sum(self.w**k)


def test_a_method_named_like_a_draw_is_no_draw():
    H = ssad.hessian(lambda w: _Powers(w).power(3) * 2.0)(X)
    np.testing.assert_allclose(H, np.diag(12.0 * X), rtol=1e-12)
