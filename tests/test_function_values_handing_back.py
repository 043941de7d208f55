"""A function value that hands back what it holds: a write into the result is one into that.

A nested function or lambda holds the values it captures, and a call of it may return one of
them, or a view of one (`g = lambda: z[1:]`), as may a function a helper makes (`make(z)()`)
or a helper that calls such a function (`return g()`). Each refused program below, where the
caller then wrote into what the call returned, changed the captured array without ssad
seeing it: a silently wrong gradient in both modes (the derivative read `z` as it was
before the write). They are refused now at the user's line, as a write through a second name
of a captured array is; where whether the result is that array is known only when the code
runs (a function a helper made), a check there refuses it. The same for a global array: a
write into what `lambda: W` (or a helper's nested function) returns would change what the
gradient takes to be fixed. Programs whose function values hand back new arrays are
differentiated, and checked against central differences at first and second order.
"""

import inspect

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

from tests import oracle

W = np.array([0.5, -1.0, 2.0, 0.1])


def lambda_hands_back_what_it_captures(x):
    z = x * 1.0
    g = lambda: z  # noqa: E731 - the construct under test
    w = g()
    w[0] = 100.0
    return np.sum(z * x)


def lambda_hands_back_a_slice_of_what_it_captures(x):
    z = x * 1.0
    g = lambda: z[1:]  # noqa: E731
    w = g()
    w[0] = 100.0
    return np.sum(z * x)


def nested_function_hands_back_a_transpose(x):
    z = x * 1.0

    def g():
        return z.T

    w = g()
    w[0] = 100.0
    return np.sum(z * x)


def lambda_with_a_parameter_hands_back_what_it_captures(x):
    z = x * 1.0
    g = lambda a: z  # noqa: E731
    w = g(1.0)
    w += 1.0
    return np.sum(z * x)


def lambda_hands_back_an_item_of_a_captured_dict(x):
    z = x * 1.0
    d = {"k": z}
    g = lambda: d["k"]  # noqa: E731
    w = g()
    w[0] = 100.0
    return np.sum(z * x)


def lambda_read_from_a_dict_of_functions(x):
    z = x * 1.0
    fs = {"a": lambda: z}
    w = fs["a"]()
    w[0] = 100.0
    return np.sum(z * x)


def lambda_appended_to_a_list_of_functions(x):
    z = x * 1.0
    fs = []
    fs.append(lambda: z)
    w = fs[-1]()
    w[1] = 3.0
    return np.sum(z * x)


def lambda_under_a_second_name(x):
    z = x * 1.0
    g = lambda: z  # noqa: E731
    h = g
    w = h()
    w[1] = 3.0
    return np.sum(z * x)


def lambda_called_in_a_loop(x):
    z = x * 1.0
    g = lambda: z  # noqa: E731
    for i in range(2):
        w = g()
        w[i] = 3.0
    return np.sum(z * x)


def lambda_chosen_on_one_path(x):
    z = x * 1.0
    g = (lambda: z) if x[0] > 0 else (lambda: x * 2.0)
    w = g()
    w[1] = 3.0
    return np.sum(z * x)


def apply(fn):
    return fn()


def lambda_called_by_a_helper(x):
    z = x * 1.0
    w = apply(lambda: z)
    w[1] = 3.0
    return np.sum(z * x)


def nested_function_hands_back_a_tuple_holding_it(x):
    z = x * 1.0

    def g():
        return (z, 1.0)

    w, c = g()
    w[1] = 3.0
    return np.sum(z * x) * c


def nested_function_hands_back_its_default(x):
    z = x * 1.0

    def g(k=z):
        return k

    w = g()
    w[1] = 3.0
    return np.sum(z * x)


def calls_what_it_makes(a):
    g = lambda: a  # noqa: E731
    return g()


def helper_calling_a_lambda_it_made(x):
    z = x * 1.0
    w = calls_what_it_makes(z)
    w[0] = 100.0
    return np.sum(z * x)


def make_getter(a):
    return lambda: a


def make_slicer(a):
    def inner():
        return a[1:]

    return inner


def function_made_by_a_helper(x):
    z = x * 1.0
    g = make_getter(z)
    w = g()
    w[0] = 100.0
    return np.sum(z * x)


def function_made_by_a_helper_called_at_once(x):
    z = x * 1.0
    w = make_slicer(z)()
    w[0] = 100.0
    return np.sum(z * x)


def make_global_getter():
    return lambda: W


def global_slice_through_a_nested_function():
    def h():
        return W[1:]

    return h()


def global_from_a_function_a_helper_made(x):
    g = make_global_getter()
    w = g()
    w[0] = 100.0 * x[0]
    return np.sum(W * x)


def global_from_a_helpers_nested_function(x):
    w = global_slice_through_a_nested_function()
    w[0] = 100.0 * x[0]
    return np.sum(W * x)


CAPTURED = "captured: ssad captures values when a function is made"
REFUSED = [
    (lambda_hands_back_what_it_captures, CAPTURED),
    (lambda_hands_back_a_slice_of_what_it_captures, CAPTURED),
    (nested_function_hands_back_a_transpose, CAPTURED),
    (lambda_with_a_parameter_hands_back_what_it_captures, CAPTURED),
    (lambda_hands_back_an_item_of_a_captured_dict, CAPTURED),
    (lambda_read_from_a_dict_of_functions, CAPTURED),
    (lambda_appended_to_a_list_of_functions, CAPTURED),
    (lambda_under_a_second_name, CAPTURED),
    (lambda_called_in_a_loop, CAPTURED),
    (lambda_chosen_on_one_path, CAPTURED),
    (lambda_called_by_a_helper, CAPTURED),
    (nested_function_hands_back_a_tuple_holding_it, CAPTURED),
    (nested_function_hands_back_its_default, CAPTURED),
    (helper_calling_a_lambda_it_made, "would change an array that `z` shares"),
    (function_made_by_a_helper, "would change an array that `z` holds or shares"),
    (function_made_by_a_helper_called_at_once, "would change an array that `z` holds or shares"),
    (global_from_a_function_a_helper_made, "would change an array or list defined outside the function"),
    (global_from_a_helpers_nested_function, "would change an array or list defined outside the function"),
]

X = np.array([0.3, 0.5, 0.9, 1.2])
T = np.array([1.0, -0.5, 0.25, 0.75])


def _assert_refused_in_body(f, runs, message):
    """Each of `runs` raises UnsupportedSyntaxError matching `message` at a line of `f`'s body;
    the global W is as it was afterwards."""
    kept = W.copy()
    body = range(f.__code__.co_firstlineno + 1, f.__code__.co_firstlineno + len(inspect.getsource(f).splitlines()))
    try:
        for run in runs:
            with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
                run()
            assert (caught.value.filename, caught.value.lineno in body) == (__file__, True)
    finally:
        W[:] = kept


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_in_both_modes_at_the_users_line(f, message):
    _assert_refused_in_body(f, (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (T,))), message)


def test_python_changes_what_the_function_value_holds():
    # what the refused programs compute: the write reaches the captured (or global) array
    z_written = X.copy()
    z_written[0] = 100.0
    assert lambda_hands_back_what_it_captures(X.copy()) == pytest.approx(np.sum(z_written * X))
    assert function_made_by_a_helper(X.copy()) == pytest.approx(np.sum(z_written * X))
    kept = W.copy()
    try:
        global_from_a_function_a_helper_made(X.copy())
        assert W[0] == pytest.approx(100.0 * X[0])
    finally:
        W[:] = kept


def lambda_hands_back_a_new_array(x):
    z = x * 1.0
    pred = lambda v: z * v  # noqa: E731
    out = pred(2.0)
    out[0] = 0.0
    return np.sum(out * x)


def nested_function_hands_back_a_product(x):
    z = x * 1.0

    def pred(v):
        return z @ v

    out = pred(np.ones((4, 2)))
    out[0] = 0.0
    return np.sum(out * out) + np.sum(z * x)


def lambda_hands_back_what_it_captures_read_only(x):
    z = np.sin(x)
    g = lambda: z[1:]  # noqa: E731
    w = g()
    return np.sum(w * x[:3]) + np.sum(z ** 2)


def helper_makes_a_function_of_an_array(x):
    g = make_getter(x * 2.0)
    return np.sum(g() ** 3)


DIFFERENTIATED = [
    lambda_hands_back_a_new_array,
    nested_function_hands_back_a_product,
    lambda_hands_back_what_it_captures_read_only,
    helper_makes_a_function_of_an_array,
]


@pytest.mark.parametrize("f", DIFFERENTIATED, ids=[f.__name__ for f in DIFFERENTIATED])
def test_function_values_handing_back_new_arrays_are_differentiated(f):
    grad_f = ssad.grad(f)
    first = numerical_gradient(f, X.copy())
    second = numerical_gradient(lambda v: float(np.sum(grad_f(v) * T)), X.copy())  # the Hessian times T
    checks = {
        "grad": (grad_f(X.copy()), first, 1e-6),
        "jvp": (ssad.jvp(f, (X.copy(),), (T,))[1], first @ T, 1e-6),
        "jvp of grad": (ssad.jvp(grad_f, (X.copy(),), (T,))[1], second, 1e-5),
        "hessian": (ssad.hessian(f)(X.copy()) @ T, second, 1e-5),
    }
    for label, (got, want, rtol) in checks.items():
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol / 10, err_msg=label)


@pytest.mark.parametrize("f", [lambda_hands_back_what_it_captures_read_only, helper_makes_a_function_of_an_array])
def test_those_autograd_runs_agree_with_it(f):
    # first order and both second-order ways against autograd running the same program
    verdicts = oracle.compare(f, (X.copy(),))
    assert verdicts and all(v.status == "agree" for v in verdicts), [
        f"[{v.status}] {v.check}\n{v.detail}" for v in verdicts]


def read_global():
    return W


def write_into_what_a_passed_function_returns(x, g):
    w = g()
    w[0] = 100.0 * x[0]
    return np.sum(W * x)


def write_into_what_a_passed_list_of_functions_returns(x, fs):
    w = fs[0]()
    w[0] = 100.0 * x[0]
    return np.sum(W * x)


@pytest.mark.parametrize("f, passed", [(write_into_what_a_passed_function_returns, read_global),
                                       (write_into_what_a_passed_list_of_functions_returns, [read_global])])
def test_a_write_into_what_a_function_passed_in_returns_is_refused(f, passed):
    # ssad reads no source of a function it is given: what it returns may be a global array
    runs = (lambda: ssad.grad(f)(X.copy(), passed), lambda: ssad.jvp(f, (X.copy(), passed), (T, None)))
    _assert_refused_in_body(f, runs, "what a function or an object.s method passed in returns")
    kept = W.copy()
    try:
        f(X.copy(), passed)
        assert W[0] == pytest.approx(100.0 * X[0])  # what Python does: the global changes
    finally:
        W[:] = kept


class Model:
    """An object passed in: ssad does not read the source of its methods."""

    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0, 4.0])

    def global_weights(self):
        return W

    def doubled(self):
        return self.w * 2.0


def write_into_what_a_method_returns(x, m):
    w = m.global_weights()
    w[0] = 10.0 * x[0]
    return np.sum(W * x)


def write_into_what_a_bound_method_returns(x, m):
    f = m.global_weights
    w = f()
    w[0] = 10.0 * x[0]
    return np.sum(W * x)


def write_into_a_new_array_a_method_returns(x, m):
    w = m.doubled()
    w[0] = 10.0 * x[0]
    return np.sum(w * x)


@pytest.mark.parametrize("f", [write_into_what_a_method_returns, write_into_what_a_bound_method_returns,
                               write_into_a_new_array_a_method_returns])
def test_a_write_into_what_a_method_of_an_object_passed_in_returns_is_refused(f):
    # the first two changed the global W where ssad read it as a constant (the gradient in x[0]
    # was W[0] where it is 2 * 10 * x[0]); the third returns a new array, which ssad cannot
    # tell from the source it does not read: refused alike, copying it (`w = w.copy()`) passes
    runs = (lambda: ssad.grad(f)(X.copy(), Model()), lambda: ssad.jvp(f, (X.copy(), Model()), (T, None)))
    _assert_refused_in_body(f, runs, "what a function or an object.s method passed in returns")
