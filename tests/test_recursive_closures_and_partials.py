"""Nested functions that call themselves or one another, and `functools.partial` of nested
functions: the derivative through the values they capture.

A recursive nested function (or lambda) captures itself; the adjoint of that entry is
what its recursive calls gave the captured values, added into theirs. Nested functions
that call one another share one dict of captured values. A partial's adjoint carries
the adjoint of the function it holds (what a closure captured). Each program is checked
in reverse mode, forward mode and at second order against central differences and
autograd; a nested function that reads a variable assigned only after it is made is
refused where it reads it.
"""

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import ssad
from ssad.testing import assert_close, numerical_gradient
from tests import oracle

X = np.array([0.3, 0.7])
V = np.array([0.4, -1.1])


# ----- functions that call themselves -----


def fib_nested(x):
    def fib(n):
        if n < 1:
            return x[0]
        return fib(n - 1) * x[1]

    return fib(2) * np.sin(x[0])


def fib_two_calls(x):
    def fib(n):
        if n < 2:
            return x[0] * x[1]
        return fib(n - 1) + np.cos(x[1]) * fib(n - 2)

    return fib(4)


def recursive_lambda(x):
    g = lambda n: x[0] if n == 0 else g(n - 1) * x[1]  # noqa: E731 (the form under test)
    return g(2)


def make_recursive(w):
    def rec(n):
        return w if n == 0 else rec(n - 1) * w

    return rec


def recursive_from_a_factory(x):
    return make_recursive(x[0])(2) * x[1]


def apply(fn, v):
    return fn(v)


def recursive_through_a_helper(x):
    def fib(n):
        return x[0] if n == 0 else apply(fib, n - 1) * x[1]

    return fib(2) + apply(fib, 1)


def recursive_on_arrays(x):
    def grow(n):
        return x if n == 0 else np.sin(grow(n - 1)) * x

    return np.sum(grow(3))


def recursive_mapped(x):
    def fib(n):
        return x[0] if n == 0 else fib(n - 1) * x[1]

    return sum(map(fib, [1, 2]))


def recursive_with_an_accumulator(x):
    def walk(n, acc):
        return acc if n == 0 else walk(n - 1, acc * x[1] + x[0])

    return walk(3, x[0])


def recursive_capturing_nothing_that_moves(x):
    def fib(n, y):
        return y if n == 0 else fib(n - 1, y) * 2.0 + np.sin(y)

    return fib(3, x[0]) * x[1]


def recursive_made_in_a_loop(x):
    total = 0.0
    for k in range(2):
        def power(n):
            return 1.0 if n == 0 else power(n - 1) * x[0] + x[1]

        total = total + power(k + 1)
    return total


# ----- functions that call one another -----


def even_and_odd(x):
    def even(n):
        return x[0] if n == 0 else odd(n - 1) * x[1]

    def odd(n):
        return x[1] if n == 0 else even(n - 1)

    return even(2)


def even_and_odd_both_called(x):
    y = np.cos(x[1])

    def even(n):
        return x[0] if n == 0 else odd(n - 1) * x[1]

    def odd(n):
        return y if n == 0 else even(n - 1) * y

    return even(3) + odd(2) * x[0]


def ping_pong_lambdas(x):
    ping = lambda n: x[0] if n == 0 else pong(n - 1) * x[1]  # noqa: E731
    pong = lambda n: x[1] * x[1] if n == 0 else ping(n - 1) + x[0]  # noqa: E731
    return ping(3)


def three_in_a_cycle(x):
    def a(n):
        return x[0] if n == 0 else b(n - 1) * x[1]

    def b(n):
        return x[1] if n == 0 else c(n - 1) + x[0]

    def c(n):
        return np.sin(x[0]) if n == 0 else a(n - 1) * x[0]

    return a(5)


def make_pair(w):
    def even(n):
        return w if n == 0 else odd(n - 1) * w

    def odd(n):
        return 1.0 if n == 0 else even(n - 1) + w

    return even


def even_and_odd_from_a_factory(x):
    return make_pair(x[0])(3) * x[1]


# ----- partials of nested functions -----


def partial_of_a_closure(x):
    def weigh(v, w):
        return v * w * x[0]

    return functools.partial(weigh, w=2.0)(x[1])


def partial_of_a_lambda(x):
    return functools.partial(lambda v, w: v * w * x[0] ** 2, w=2.0)(x[1])


def make(w):
    def g(v):
        return w * v

    return g


def partial_of_a_factory_closure(x):
    return functools.partial(make(x[0]))(x[1])


def partial_binding_a_moving_value(x):
    def weigh(v, w):
        return v * w * x[0]

    return functools.partial(weigh, x[1])(x[0])


def partial_of_a_partial(x):
    def weigh(v, w, u):
        return v * w * u * np.sin(x[0])

    p = functools.partial(weigh, x[1])
    q = functools.partial(p, u=x[0])  # Python flattens: q.func is weigh
    return q(3.0)


def partial_keyword_given_again(x):
    def weigh(v, w, u=1.0):
        return v * w * u * x[0]

    p = functools.partial(weigh, u=x[1])
    q = functools.partial(p, u=x[0])
    return q(2.0, 3.0)


def partial_passed_to_a_helper(x):
    def weigh(v, w):
        return v * w * x[0]

    return apply(functools.partial(weigh, w=x[1]), x[1])


def partial_called_twice(x):
    def weigh(v, w):
        return v * w * np.exp(x[0])

    p = functools.partial(weigh, w=x[1])
    return p(x[0]) + p(2.0)


def partial_mapped(x):
    def weigh(v, w):
        return v * w * x[0]

    return sum(map(functools.partial(weigh, w=3.0), [x[1], x[0]]))


def partial_of_a_recursive_closure(x):
    def scale(n, w):
        return w if n == 0 else scale(n - 1, w) * x[1]

    return functools.partial(scale, w=x[0])(2)


def partial_of_mutual_functions(x):
    def even(n, s):
        return s if n == 0 else odd(n - 1, s) * x[1]

    def odd(n, s):
        return x[0] if n == 0 else even(n - 1, s) * s

    return functools.partial(even, s=x[0])(3)


def partial_made_by_a_closure(x):
    def make_weigh():
        def weigh(v, w):
            return v * w * x[0]

        return functools.partial(weigh, w=x[1])

    return make_weigh()(x[0])


def partial_of_numpy_with_a_keyword(x):
    return functools.partial(np.sum, axis=0)(x * x * x[0])


def weighted(v, w):
    return v * w


def partial_of_a_module_function(x):
    return functools.partial(weighted, w=x[0])(x[1])


PARTIAL = functools.partial


def partial_called_through_a_variable(x):
    def weigh(v, w):
        return v * w * x[0]

    return PARTIAL(weigh, 2.0)(x[1])


PROGRAMS = [
    fib_nested, fib_two_calls, recursive_lambda, recursive_from_a_factory, recursive_through_a_helper,
    recursive_on_arrays, recursive_mapped, recursive_with_an_accumulator, recursive_capturing_nothing_that_moves,
    recursive_made_in_a_loop,
    even_and_odd, even_and_odd_both_called, ping_pong_lambdas, three_in_a_cycle, even_and_odd_from_a_factory,
    partial_of_a_closure, partial_of_a_lambda, partial_of_a_factory_closure, partial_binding_a_moving_value,
    partial_of_a_partial, partial_keyword_given_again, partial_passed_to_a_helper, partial_called_twice,
    partial_mapped, partial_of_a_recursive_closure, partial_of_mutual_functions, partial_called_through_a_variable,
    partial_made_by_a_closure, partial_of_numpy_with_a_keyword, partial_of_a_module_function,
]


def _differences(f):
    return numerical_gradient(lambda y: float(f(y)), X.copy())


def _hessian_vector_by_differences(f, eps=1e-5):
    """Central differences of ssad's gradient (checked against differences of f above) along V."""
    gradient = ssad.grad(f)
    return (gradient(X + eps * V) - gradient(X - eps * V)) / (2 * eps)


def _autograd_of(f):
    return oracle.for_autograd(f)[0]


@pytest.mark.parametrize("f", PROGRAMS)
def test_gradient_matches_differences_and_autograd(f):
    got = ssad.grad(f)(X)
    assert_close(f"{f.__name__} grad", got, _differences(f), 1e-6, 1e-8)
    assert_close(f"{f.__name__} grad vs autograd", got, autograd.grad(_autograd_of(f))(X.copy()), 1e-10, 1e-12)


@pytest.mark.parametrize("f", PROGRAMS)
def test_forward_mode_matches_differences(f):
    value, tangent = ssad.jvp(f, (X,), (V,))
    np.testing.assert_allclose(value, f(X), rtol=1e-12)
    assert_close(f"{f.__name__} jvp", tangent, _differences(f) @ V, 1e-6, 1e-8)


@pytest.mark.parametrize("f", PROGRAMS)
def test_second_order_matches_autograd_and_differences(f):
    boxed = autograd.grad(_autograd_of(f))
    want = autograd.grad(lambda y: anp.sum(boxed(y) * V))(X.copy())
    assert_close(f"{f.__name__} H v by differences", _hessian_vector_by_differences(f), want, 1e-5, 1e-7)
    gradient = ssad.grad(f)
    assert_close(f"{f.__name__} hvp", ssad.hvp(f)(X, V), want, 1e-10, 1e-12)
    assert_close(f"{f.__name__} jvp(grad)", ssad.jvp(gradient, (X,), (V,))[1], want, 1e-10, 1e-12)
    assert_close(f"{f.__name__} grad(<grad, v>)", ssad.grad(lambda y: gradient(y) @ V)(X), want, 1e-10, 1e-12)
    hessian = autograd.hessian(_autograd_of(f))(X.copy())
    assert_close(f"{f.__name__} hessian", ssad.hessian(f)(X), hessian, 1e-10, 1e-12)


def test_the_reported_programs_give_the_closed_forms():
    x0, x1 = X

    def fib_once(x):
        def fib(n):
            if n < 1:
                return x[0]
            return fib(n - 1) * x[1]

        return fib(1)

    np.testing.assert_allclose(ssad.grad(fib_once)(X), [x1, x0], rtol=1e-14)
    np.testing.assert_allclose(ssad.jvp(fib_once, (X,), (np.array([1.0, 0.0]),))[1], x1, rtol=1e-14)
    np.testing.assert_allclose(ssad.hvp(fib_once)(X, V), [V[1], V[0]], rtol=1e-14)

    def weighed(x):
        def weigh(v, w):
            return v * w * x[0]

        return functools.partial(weigh, w=2.0)(x[1])

    np.testing.assert_allclose(ssad.grad(weighed)(X), [2 * x1, 2 * x0], rtol=1e-14)
    np.testing.assert_allclose(ssad.jvp(weighed, (X,), (np.array([1.0, 0.0]),))[1], 2 * x1, rtol=1e-14)


def test_grad_of_a_recursive_closure_inside_the_function():
    def f(x):
        def power(n, y):
            return y if n == 0 else power(n - 1, y) * x[1]

        return ssad.grad(power, wrt=1)(2, x[0]) * x[0]  # = x1^2 x0

    assert_close("grad", ssad.grad(f)(X), _differences(f), 1e-6, 1e-8)
    assert_close("jvp", ssad.jvp(f, (X,), (V,))[1], _differences(f) @ V, 1e-6, 1e-8)
    # its second derivative is a third derivative through the recursive call: refused, not wrong
    with pytest.raises(ssad.SsadError, match="third derivative through a call of a function value"):
        ssad.hvp(f)(X, V)


# ----- refused: a variable read before the enclosing function assigns it -----


def lambda_reading_a_later_variable(x):
    g = lambda t: t * y  # noqa: E731
    y = x[1] * 2.0
    return g(x[0])


def function_reading_a_later_variable(x):
    def g(t):
        return t * y

    y = x[1] * 2.0
    return g(x[0])


def mutual_reading_a_variable_between(x):
    def even(n):
        return x[0] if n == 0 else odd(n - 1) * x[1]

    w = x[0] * 3.0

    def odd(n):
        return w if n == 0 else even(n - 1)

    return even(2)


def mutual_defined_twice(x):
    def even(n):
        return x[0] if n == 0 else odd(n - 1) * x[1]

    def odd(n):
        return x[1] if n == 0 else even(n - 1)

    r = even(2)

    def odd(n):  # noqa: F811 (the form under test)
        return x[0]

    return r + even(2)


def _line_of(f, text):
    import inspect

    lines, start = inspect.getsourcelines(f)
    return start + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "f, read, message",
    [
        (lambda_reading_a_later_variable, "g = lambda t: t * y",
         r"the lambda g reads `y`, which is assigned only after it is made \(line \d+\); ssad captures values"),
        (function_reading_a_later_variable, "return t * y",
         r"the nested function g reads `y`, which is assigned only after it is made"),
        (mutual_reading_a_variable_between, "return w if n == 0",
         r"the nested function odd is called by `even`, made before it, and reads `w`, which is assigned after"),
        (mutual_defined_twice, "return x[0] if n == 0 else odd",
         r"the nested function even reads `odd`, which is defined only after it is made .*each is defined once"),
    ],
)
def test_a_variable_read_before_it_is_assigned_is_refused_where_it_is_read(f, read, message):
    f(X)  # Python runs it
    for run in (lambda: ssad.grad(f)(X), lambda: ssad.jvp(f, (X,), (V,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as refused:
            run()
        assert refused.value.lineno == _line_of(f, read)
        assert refused.value.filename == __file__
