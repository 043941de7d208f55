"""A gradient made after a global or a closure variable was rebound uses the new value.

Generated code holds the objects the free names of the user's functions denoted when it
was made. A fresh `ssad.grad(f)` (or `value_and_grad`, `vjp`, `jvp`, `hessian`, `hvp`,
`jacobian`, `has_aux=True`, `elementwise_grad`) must see the values of now of every
global and closure cell that `f` and the functions it calls, at any depth, read; code
made with the old values was once reused (a stale gradient, Hessian and even value)
where the rebound value was a closure cell or a global only a callee reads. A gradient
function already made sees them too: each of its calls looks that the objects it was
compiled with are still those read, and compiles again where one was rebound
(docs/how-it-works.md, "cache"); making the gradient again while nothing changed finds
the code already made.
Expected values are closed forms or central differences.
"""

import types

import numpy as np
import pytest

import ssad
from ssad import api
from ssad.backend import driver
from ssad.backend.driver import argument_facts, compiled
from ssad.runtime.handles import GRAD, JVP, vjp_handles
from ssad.runtime.reads import MOST_KEPT
from ssad.testing import numerical_gradient

from .conftest import assert_gradient_matches

W = np.array([0.5, -1.0])
V = np.array([0.3, 0.7])


# ----- closure cells -----


def test_a_closure_cell_rebound_between_epochs_gives_each_epochs_gradient():
    lam = 1.0

    def loss(w):
        return np.sum((w - 1.0) ** 2) + lam * np.sum(w**2)

    w = np.array([0.5, 2.0])
    for _ in range(3):
        got = ssad.grad(loss)(w)  # a new ssad.grad each epoch
        np.testing.assert_allclose(got, 2 * (w - 1.0) + 2 * lam * w, rtol=1e-12)
        lam = lam * 0.1


def test_a_lambda_capturing_a_rebound_local():
    c = 1.0
    f = lambda x: c * x**2  # noqa: E731 - a lambda is what is being tested
    assert ssad.grad(f)(1.0) == pytest.approx(2.0)
    c = 3.0
    assert ssad.grad(f)(1.0) == pytest.approx(6.0)
    assert ssad.jvp(f, (1.0,), (1.0,)) == pytest.approx((3.0, 6.0))


def _with_setter():
    k = 1.0

    def loss(x):
        return k * x**2

    def set_k(value):
        nonlocal k
        k = value

    return loss, set_k


def test_a_value_a_nonlocal_setter_changed_reaches_every_derivative():
    loss, set_k = _with_setter()
    # every derivative made once with k = 1, so that a stale entry would be there to find
    assert ssad.grad(loss)(1.0) == pytest.approx(2.0)
    assert ssad.hvp(loss)(1.0, 1.0) == pytest.approx(2.0)
    assert ssad.jvp(loss, (1.0,), (1.0,)) == pytest.approx((1.0, 2.0))
    assert ssad.value_and_grad(loss)(1.0) == pytest.approx((1.0, 2.0))
    set_k(5.0)  # 5 x**2: derivative 10 x, second derivative 10
    assert ssad.grad(loss)(1.0) == pytest.approx(10.0)
    assert ssad.hvp(loss)(1.0, 1.0) == pytest.approx(10.0)
    assert ssad.jvp(loss, (1.0,), (1.0,)) == pytest.approx((5.0, 10.0))
    assert ssad.value_and_grad(loss)(1.0) == pytest.approx((5.0, 10.0))
    assert float(ssad.hessian(loss)(1.0)) == pytest.approx(10.0)
    value, pullback = ssad.vjp(loss, 2.0)
    assert value == pytest.approx(20.0) and pullback(1.0)[0] == pytest.approx(20.0)


def test_a_helper_closing_over_a_rebound_cell():
    s = 1.0

    def helper(x):
        return s * np.sin(x)

    def loss(x):
        return helper(x) ** 2

    x = 0.7
    assert ssad.grad(loss)(x) == pytest.approx(2 * np.sin(x) * np.cos(x))
    s = 4.0  # loss reads s only through helper, a closure it captured
    assert ssad.grad(loss)(x) == pytest.approx(2 * s**2 * np.sin(x) * np.cos(x))
    assert float(ssad.hessian(loss)(x)) == pytest.approx(2 * s**2 * np.cos(2 * x))
    assert ssad.jvp(loss, (x,), (1.0,))[1] == pytest.approx(s**2 * np.sin(2 * x))


# ----- module globals read by the functions called -----


X = np.array([[1.0, 2.0], [3.0, 4.0]])


def predict(w):
    return X @ w


def squared_error(w):
    return np.sum(predict(w) ** 2)


def _check_every_derivative_of_squared_error(matrix):
    """Each derivative of squared_error, made afresh, against the closed forms for X = matrix."""
    gram = matrix.T @ matrix
    np.testing.assert_allclose(ssad.grad(squared_error)(W), 2 * gram @ W, rtol=1e-12)
    value, gradient = ssad.value_and_grad(squared_error)(W)
    assert value == pytest.approx(np.sum((matrix @ W) ** 2)) == pytest.approx(squared_error(W))
    np.testing.assert_allclose(gradient, 2 * gram @ W, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(squared_error)(W), 2 * gram, rtol=1e-12)
    np.testing.assert_allclose(ssad.hvp(squared_error)(W, V), 2 * gram @ V, rtol=1e-12)
    value, tangent = ssad.jvp(squared_error, (W,), (V,))
    assert value == pytest.approx(squared_error(W)) and tangent == pytest.approx(2 * W @ gram @ V)
    value, pullback = ssad.vjp(squared_error, W)
    np.testing.assert_allclose(pullback(1.0)[0], 2 * gram @ W, rtol=1e-12)
    np.testing.assert_allclose(ssad.jacobian(predict)(W), matrix, rtol=1e-12)
    np.testing.assert_allclose(ssad.jacobian(predict, mode="forward")(W), matrix, rtol=1e-12)


def test_a_global_array_read_only_by_a_helper(monkeypatch):
    _check_every_derivative_of_squared_error(X)
    monkeypatch.setitem(globals(), "X", np.array([[1.0, 0.0], [0.0, 1.0]]))
    _check_every_derivative_of_squared_error(X)
    monkeypatch.setitem(globals(), "X", np.array([[2.0, -1.0], [0.5, 3.0], [1.0, 1.0]]))
    _check_every_derivative_of_squared_error(X)


RATE = 1.0


def scaled(x):
    return RATE * x**2


def sine_of_scaled(x):
    return np.sin(scaled(x))


def test_a_scalar_global_read_only_by_a_helper(monkeypatch):
    x = 0.8
    for rate in (1.0, 2.5, -0.5):
        monkeypatch.setitem(globals(), "RATE", rate)
        assert ssad.grad(sine_of_scaled)(x) == pytest.approx(np.cos(rate * x**2) * 2 * rate * x)
        assert_gradient_matches(sine_of_scaled, (x,), 0, ssad.grad(sine_of_scaled)(x))
        second = 2 * rate * np.cos(rate * x**2) - 4 * rate**2 * x**2 * np.sin(rate * x**2)
        assert float(ssad.hessian(sine_of_scaled)(x)) == pytest.approx(second, rel=1e-10)
        assert ssad.hvp(sine_of_scaled)(x, 2.0) == pytest.approx(2.0 * second, rel=1e-10)
        assert numerical_gradient(lambda y: float(ssad.grad(sine_of_scaled)(y)), x) == pytest.approx(second, rel=1e-6)
        assert ssad.jvp(sine_of_scaled, (x,), (1.0,))[1] == pytest.approx(np.cos(rate * x**2) * 2 * rate * x)


def scaled_with_aux(x):
    return np.sum(scaled(x)), {"calls": 1}


def test_has_aux_and_elementwise_grad_see_a_global_a_helper_reads(monkeypatch):
    x = np.array([1.0, 2.0])
    for rate in (1.0, 3.0):
        monkeypatch.setitem(globals(), "RATE", rate)
        gradient, aux = ssad.grad(scaled_with_aux, has_aux=True)(x)
        np.testing.assert_allclose(gradient, 2 * rate * x, rtol=1e-12)
        assert aux == {"calls": 1}
        np.testing.assert_allclose(ssad.elementwise_grad(scaled)(x), 2 * rate * x, rtol=1e-12)


SHIFT = 0.0


def innermost(w):
    return np.tanh(SHIFT + w)


def middle(w):
    return 2.0 * innermost(w)


def two_calls_deep(w):
    return np.sum(middle(w) ** 2)


def test_a_global_read_two_calls_deep(monkeypatch):
    for shift in (0.0, 0.4, -1.5):
        monkeypatch.setitem(globals(), "SHIFT", shift)
        t = np.tanh(shift + W)
        closed = 8.0 * t * (1 - t**2)
        np.testing.assert_allclose(ssad.grad(two_calls_deep)(W), closed, rtol=1e-12)
        assert_gradient_matches(two_calls_deep, (W,), 0, ssad.grad(two_calls_deep)(W))
        value, gradient = ssad.value_and_grad(two_calls_deep)(W)
        assert value == pytest.approx(4.0 * np.sum(t**2))
        np.testing.assert_allclose(gradient, closed, rtol=1e-12)
        second = 8.0 * (1 - t**2) * (1 - 3 * t**2)  # d/dw of 8 t (1 - t^2), elementwise
        np.testing.assert_allclose(ssad.hessian(two_calls_deep)(W), np.diag(second), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ssad.hvp(two_calls_deep)(W, V), second * V, rtol=1e-10)
        assert ssad.jvp(two_calls_deep, (W,), (V,))[1] == pytest.approx(closed @ V)
        np.testing.assert_allclose(ssad.vjp(two_calls_deep, W)[1](1.0)[0], closed, rtol=1e-12)


def project_a(w):
    return 3.0 * w


def project_b(w):
    return -w


HELPERS = types.ModuleType("stale_values_helpers")  # a module of the user's
HELPERS.project = project_a


def through_a_module(w):
    return np.sum(HELPERS.project(w) ** 2)


def test_a_helper_of_a_module_rebound(monkeypatch):
    np.testing.assert_allclose(ssad.grad(through_a_module)(W), 18.0 * W, rtol=1e-12)
    monkeypatch.setattr(HELPERS, "project", project_b)
    np.testing.assert_allclose(ssad.grad(through_a_module)(W), 2.0 * W, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(through_a_module)(W), 2.0 * np.eye(2), rtol=1e-12)


# ----- what a gradient function already made does -----
#
# A gradient function kept from before a rebinding (a notebook cell that sets `X` again,
# then calls the `grad` made in an earlier cell) once went on running the code it had
# compiled with the old objects: a stale gradient, and a stale value from
# `value_and_grad`. Each call now looks that the objects are still the ones read.


def test_a_gradient_function_already_made_sees_a_rebound_global(monkeypatch):
    monkeypatch.setitem(globals(), "X", np.array([[1.0, 2.0], [3.0, 4.0]]))
    made = ssad.grad(squared_error)
    with_value = ssad.value_and_grad(squared_error)
    np.testing.assert_allclose(made(W), 2 * X.T @ X @ W, rtol=1e-12)
    with_value(W)
    for matrix in (np.eye(2), np.array([[2.0, -1.0], [0.5, 3.0], [1.0, 1.0]])):
        monkeypatch.setitem(globals(), "X", matrix)
        np.testing.assert_allclose(made(W), 2 * matrix.T @ matrix @ W, rtol=1e-12)
        value, gradient = with_value(W)
        assert value == pytest.approx(squared_error(W))
        np.testing.assert_allclose(gradient, 2 * matrix.T @ matrix @ W, rtol=1e-12)
        assert_gradient_matches(squared_error, (W,), 0, made(W))


def test_every_derivative_function_already_made_sees_a_global_a_helper_reads(monkeypatch):
    x = 0.8
    monkeypatch.setitem(globals(), "RATE", 1.0)
    made = ssad.grad(sine_of_scaled)
    hessian = ssad.hessian(sine_of_scaled)
    hvp = ssad.hvp(sine_of_scaled)
    with_aux = ssad.grad(scaled_with_aux, has_aux=True)
    elementwise = ssad.elementwise_grad(scaled)
    for function in (made, hessian):
        function(x)
    hvp(x, 1.0)
    with_aux(np.array([1.0, 2.0]))
    for rate in (2.5, -0.5):
        monkeypatch.setitem(globals(), "RATE", rate)
        assert made(x) == pytest.approx(np.cos(rate * x**2) * 2 * rate * x)
        second = 2 * rate * np.cos(rate * x**2) - 4 * rate**2 * x**2 * np.sin(rate * x**2)
        assert float(hessian(x)) == pytest.approx(second, rel=1e-10)
        assert hvp(x, 2.0) == pytest.approx(2.0 * second, rel=1e-10)
        np.testing.assert_allclose(with_aux(np.array([1.0, 2.0]))[0], 2 * rate * np.array([1.0, 2.0]), rtol=1e-12)
        np.testing.assert_allclose(elementwise(np.array([1.0, 2.0])), 2 * rate * np.array([1.0, 2.0]), rtol=1e-12)


def test_a_hessian_of_two_parameters_already_made_sees_a_rebound_global(monkeypatch):
    def f(w, v):
        return np.sum(RATE * w**2 * v)

    monkeypatch.setitem(globals(), "RATE", 1.0)
    hessian = ssad.hessian(f, wrt=(0, 1))
    np.testing.assert_allclose(hessian(W, V)[0][0], 2 * np.diag(V), rtol=1e-12)
    monkeypatch.setitem(globals(), "RATE", 3.0)
    blocks = hessian(W, V)
    np.testing.assert_allclose(blocks[0][0], 6 * np.diag(V), rtol=1e-12)
    np.testing.assert_allclose(blocks[0][1], 6 * np.diag(W), rtol=1e-12)


def test_a_gradient_function_already_made_sees_a_rebound_closure_cell():
    s = 1.0

    def helper(x):
        return s * x**3

    def loss(x):
        return helper(x) + 0.0

    made = ssad.grad(loss)
    assert made(1.0) == pytest.approx(3.0)
    s = 2.0
    assert made(1.0) == pytest.approx(6.0)
    assert ssad.grad(made)(1.0) == pytest.approx(12.0)
    s = -1.0  # noqa: F841 (read by helper)
    assert made(2.0) == pytest.approx(-12.0)


def test_a_gradient_function_already_made_sees_a_global_two_calls_deep_and_a_new_helper(monkeypatch):
    monkeypatch.setitem(globals(), "SHIFT", 0.25)
    deep = ssad.grad(two_calls_deep)
    deep(W)
    monkeypatch.setitem(globals(), "SHIFT", -0.5)
    t = np.tanh(-0.5 + W)
    np.testing.assert_allclose(deep(W), 8.0 * t * (1 - t**2), rtol=1e-12)
    monkeypatch.setitem(globals(), "innermost", lambda w: np.sin(w))  # a new function under the same name
    np.testing.assert_allclose(deep(W), 8.0 * np.sin(W) * np.cos(W), rtol=1e-12)


def test_a_second_derivative_already_made_sees_a_rebound_global(monkeypatch):
    # grad(grad(f)) differentiates the generated code of grad(f), whose namespace held the
    # old RATE: the second derivative already made stayed at 6 * 1.0
    def cube(x):
        return RATE * x**3

    monkeypatch.setitem(globals(), "RATE", 1.0)
    second = ssad.grad(ssad.grad(cube))
    made = ssad.grad(cube)

    def calls_the_gradient(x):
        return made(x) * x

    outer = ssad.grad(calls_the_gradient)
    assert second(1.0) == pytest.approx(6.0) and outer(1.0) == pytest.approx(9.0)
    monkeypatch.setitem(globals(), "RATE", 5.0)
    assert second(1.0) == pytest.approx(30.0)
    assert second(2.0) == pytest.approx(60.0)
    assert outer(1.0) == pytest.approx(45.0)
    assert ssad.jvp(made, (1.0,), (1.0,))[1] == pytest.approx(30.0)


def test_a_rebinding_to_what_ssad_cannot_differentiate_is_refused_at_the_next_call(monkeypatch):
    monkeypatch.setitem(globals(), "innermost", lambda w: np.tanh(w))
    made = ssad.grad(two_calls_deep)
    made(W)
    monkeypatch.setitem(globals(), "innermost", lambda w: np.frompyfunc(np.tanh, 1, 1)(w).astype(float))
    with pytest.raises(ssad.SsadError):
        made(W)


def test_a_gradient_function_already_made_reuses_its_code_while_nothing_is_rebound(monkeypatch):
    made = ssad.grad(two_calls_deep)
    code = made.variants.for_args((W,)).function
    made(W)
    monkeypatch.setitem(globals(), "SHIFT", SHIFT)  # the same object again: nothing changed
    assert made.variants.for_args((W,)).function is code
    monkeypatch.setitem(globals(), "SHIFT", 0.75)
    assert made.variants.for_args((W,)).function is not code


# ----- compiled code is reused while nothing changed -----


def test_an_unchanged_function_reuses_its_compiled_code():
    first = ssad.grad(two_calls_deep)
    first(W)
    again = ssad.grad(two_calls_deep)
    assert again is first
    assert again.variants.for_args((W,)).function is first.variants.for_args((W,)).function
    facts = argument_facts(["w"], (W,))
    entry = compiled(two_calls_deep, ("w",), GRAD, True, facts)
    assert compiled(two_calls_deep, ("w",), GRAD, True, facts) is entry
    assert vjp_handles(middle, ("w",)) == vjp_handles(middle, ("w",))
    code = first.variants.for_args((W,)).function  # forward over reverse: the jvp of that code
    assert compiled(code, ("w",), JVP, True, facts) is compiled(code, ("w",), JVP, True, facts)


def test_a_rebinding_makes_new_code_and_rebinding_back_finds_the_old(monkeypatch):
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    monkeypatch.setitem(globals(), "X", a)
    with_a = ssad.grad(squared_error)
    code_a = with_a.variants.for_args((W,)).function
    monkeypatch.setitem(globals(), "X", b)
    with_b = ssad.grad(squared_error)
    assert with_b is not with_a and with_b.variants.for_args((W,)).function is not code_a
    monkeypatch.setitem(globals(), "X", a)
    assert ssad.grad(squared_error) is with_a
    assert ssad.grad(squared_error).variants.for_args((W,)).function is code_a


def test_the_caches_keep_a_few_versions_of_a_function_whose_globals_keep_changing(monkeypatch):
    for k in range(3 * MOST_KEPT):
        monkeypatch.setitem(globals(), "RATE", 1.0 + k)
        assert ssad.grad(sine_of_scaled)(0.5) == pytest.approx(np.cos((1.0 + k) * 0.25) * (1.0 + k))
    assert all(len(entries) <= MOST_KEPT for entries in api._wrappers[sine_of_scaled].values())
    assert all(len(entries) <= MOST_KEPT for entries in driver._cache[sine_of_scaled].values())
