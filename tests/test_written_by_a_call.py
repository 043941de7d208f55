"""An array (or an object) a call writes into, after the function read it: refused.

A function of the user's that writes into its parameter (`a[0] = v`) and is passed nothing
that carries a gradient runs as written, changing the caller's array. The derivative of a
read of that array before the call (`np.sum(buf * x)`: its adjoint multiplies by `buf`)
read it again in the backward sweep, after the change: a silently wrong gradient. So did a
method of an object passed in that changes the object (`self.w[0] = v`, `self.w *= s`)
after the function read a field of it. Each is refused now where the call runs, in both
modes; a read only after the call sees what Python sees, and is differentiated.
"""

import inspect

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


def put_first(a, v):
    a[0] = v
    return 0.0


def fill_with(a, v):
    a.fill(v)
    return 1.0


class Model:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0, 4.0])

    def set_first(self, v):
        self.w[0] = v
        return 0.0

    def scale(self, s):
        self.w *= s
        return 1.0


def local_array_read_then_written_by_a_helper(x):
    buf = np.ones(4) * 2.0
    s = np.sum(buf * x)
    t = put_first(buf, 7.0)
    return s + t


def argument_read_then_written_by_a_helper(x, buf):
    s = np.sum(buf * x)
    t = fill_with(buf, 3.0)
    return s * t


def read_in_an_earlier_pass_of_a_loop(x):
    buf = np.ones(4)
    s = 0.0
    for k in range(2):
        s = s + np.sum(buf * x)
        put_first(buf, 5.0 + k)
    return s


def field_read_then_changed_by_a_method(x, m):
    s = np.sum(m.w * x)
    t = m.set_first(5.0)
    return s + t


def field_read_then_scaled_by_a_method(x, m):
    s = np.sum(m.w * x)
    t = m.scale(2.0)
    return s * t


X = np.array([0.3, 0.5, 0.9, 1.2])
T = np.array([1.0, -0.5, 0.25, 0.75])
REFUSED = [
    (local_array_read_then_written_by_a_helper, (), "put_first writes into its argument `buf` in place"),
    (argument_read_then_written_by_a_helper, (np.ones(4),), "fill_with writes into its argument `buf` in place"),
    (read_in_an_earlier_pass_of_a_loop, (), "put_first writes into its argument `buf` in place"),
    (field_read_then_changed_by_a_method, (Model(),), "calls set_first, which changes its parameter `self`"),
    (field_read_then_scaled_by_a_method, (Model(),), "calls scale, which changes its parameter `self`"),
]


@pytest.mark.parametrize("f, rest, message", REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_a_call_writing_into_what_the_function_read_before_is_refused(f, rest, message):
    source, first = inspect.getsourcelines(f)
    fresh = lambda: [Model() if isinstance(r, Model) else np.copy(r) for r in rest]  # noqa: E731
    for run in (lambda: ssad.grad(f)(X.copy(), *fresh()),
                lambda: ssad.jvp(f, (X.copy(), *fresh()), (T, *[None] * len(rest)))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__
        assert first < caught.value.lineno < first + len(source)


def test_python_reads_the_array_as_it_was():
    # the derivative in x of the refused first program is buf before the call: all 2.0
    # (ssad gave 7.0 in the first place, buf as it was after the call)
    np.testing.assert_allclose(numerical_gradient(local_array_read_then_written_by_a_helper, X.copy()),
                               np.full(4, 2.0), rtol=1e-6)


def written_by_a_helper_then_read(x):
    buf = np.ones(4) * 2.0
    t = put_first(buf, 7.0)
    return np.sum(buf * x) + t


def test_a_read_only_after_the_call_is_differentiated():
    expected = numerical_gradient(written_by_a_helper_then_read, X.copy())
    np.testing.assert_allclose(expected, [7.0, 2.0, 2.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(ssad.grad(written_by_a_helper_then_read)(X.copy()), expected, rtol=1e-6)
    _, along = ssad.jvp(written_by_a_helper_then_read, (X.copy(),), (T,))
    np.testing.assert_allclose(along, expected @ T, rtol=1e-6)


# ----- an array an object passed in holds, written into by a function of the user's -----


class Settings:
    def __init__(self):
        self.s = np.array([2.0, 2.0, 2.0, 2.0])
        self.count = 1.0


def put_into_the_field(b):
    b.s[0] = 7.0


def count_once_more(b):
    b.count = b.count + 1.0


def field_read_then_written_by_a_helper(x, b):
    y = np.sum(b.s * x**2)
    put_into_the_field(b)
    return y


def number_field_read_then_rebound_by_a_helper(x, b):
    y = np.sum(b.count * x**2)
    count_once_more(b)
    return y


def test_a_field_of_an_object_written_by_a_helper_after_the_function_read_it_is_refused():
    # the helper's write into `b.s` changed the array the backward sweep read for the
    # derivative of the read before: ssad gave [4.2, ...] where Python's gradient is 2 * 2 * x
    source, first = inspect.getsourcelines(field_read_then_written_by_a_helper)
    for run in (lambda: ssad.grad(field_read_then_written_by_a_helper)(X.copy(), Settings()),
                lambda: ssad.jvp(field_read_then_written_by_a_helper, (X.copy(), Settings()), (T, None))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="put_into_the_field writes into its argument `b`") as caught:
            run()
        assert caught.value.filename == __file__
        assert first < caught.value.lineno < first + len(source)
    expected = numerical_gradient(lambda v: field_read_then_written_by_a_helper(v, Settings()), X.copy())
    np.testing.assert_allclose(expected, 4.0 * X, rtol=1e-6)


def test_a_helper_rebinding_a_number_field_of_an_object_holding_numbers_only_is_differentiated():
    def numbers_only():
        b = Settings()
        b.s = 3.0
        return b

    f = number_field_read_then_rebound_by_a_helper
    np.testing.assert_allclose(ssad.grad(f)(X.copy(), numbers_only()), 2.0 * X, rtol=1e-12)
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(), numbers_only()), (T, None))[1], 2.0 * X @ T, rtol=1e-12)
    np.testing.assert_allclose(numerical_gradient(lambda v: f(v, numbers_only()), X.copy()), 2.0 * X, rtol=1e-6)
