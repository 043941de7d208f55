"""A method of the user's class named like an array's (`sum`, `copy`) that returns a field.

ssad reads `r = o.sum()` as NumPy's method, which returns a new value, so it does not
follow `r` sharing `o.w`: a change in place of `r` (`r[0] = v`, `r += v`, `r[0] *= v` of
a list holding the field) changed `o.w` in Python and not in ssad's lowering, a silently
wrong gradient. The generated code now checks such a result where it is made
(`fresh_result`) in a function that changes a value in place, and refuses one sharing
what the object holds.
"""

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient


class Model:
    def __init__(self, w):
        self.w = w

    def sum(self):
        return self.w  # the field itself, named like NumPy's sum

    def copy(self):
        return [self.w]  # a list holding the field

    def mean(self):
        return np.mean(self.w)  # a new value

    def flatten(self):
        return self.w * 1.0  # a new array


def writes_into_what_sum_returned(x, p):
    r = p.sum()
    r[0] = x[1]
    return np.sum(np.sin(p.w) * x)


def scales_an_item_of_what_copy_returned(x, p):
    r = p.copy()
    r[0] *= x[0]
    return np.sum(np.sin(p.w) * x)


def adds_to_what_sum_returned(x, p):
    r = p.sum()
    r += x
    return np.sum(np.sin(p.w) * x)


def adds_to_a_new_mean(x, p):
    r = p.mean()
    r += np.sum(x)
    return np.sum(np.sin(p.w) * x) * r


def writes_into_a_new_array(x, p):
    r = p.flatten()
    r[0] = x[1]
    return np.sum(np.sin(p.w) * x) + np.sum(r * x)


def reads_what_sum_returned(x, p):
    r = p.sum()  # nothing changes in place: the field is read as it is
    return np.sum(np.sin(r) * x)


W = np.array([0.5, 0.1, -0.2])
X = np.array([0.3, -1.4, 2.2])


def _model():
    return Model(W.copy())


@pytest.mark.parametrize("function", [writes_into_what_sum_returned, scales_an_item_of_what_copy_returned,
                                      adds_to_what_sum_returned], ids=lambda f: f.__name__)
def test_a_field_returned_by_a_method_named_like_an_arrays_is_refused_where_it_is_changed(function):
    with pytest.raises(ssad.UnsupportedSyntaxError, match="calls the method `(sum|copy)` of a Model"):
        ssad.grad(function)(X, _model())
    with pytest.raises(ssad.UnsupportedSyntaxError, match="calls the method `(sum|copy)` of a Model"):
        ssad.jvp(function, (X, _model()), (np.ones(3), Model(np.zeros(3))))


@pytest.mark.parametrize("function", [adds_to_a_new_mean, writes_into_a_new_array, reads_what_sum_returned],
                         ids=lambda f: f.__name__)
def test_a_new_value_or_a_field_nothing_changes_is_differentiated(function):
    expected = numerical_gradient(lambda x: function(x, _model()), X)
    np.testing.assert_allclose(ssad.grad(function)(X, _model()), expected, rtol=1e-6, atol=1e-8)
    _, tangent = ssad.jvp(function, (X, _model()), (np.ones(3), Model(np.zeros(3))))
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6, atol=1e-8)


def copies_an_array_and_a_list(x, xs):
    z = x.copy()
    z[0] = xs[1] * x[2]
    ys = xs.copy()
    ys[1] *= x[1]
    return np.sum(z * x) + ys[0] * ys[1] + xs[1]


def test_an_arrays_and_a_lists_own_copy_pass():
    xs = [0.4, -0.7]
    expected = numerical_gradient(lambda x: copies_an_array_and_a_list(x, list(xs)), X)
    np.testing.assert_allclose(ssad.grad(copies_an_array_and_a_list)(X, xs), expected, rtol=1e-6, atol=1e-8)
    # an array argument is known to be NumPy's where the gradient is made: no check for it
    shown = str(ssad.show(copies_an_array_and_a_list, args=(X, xs)))
    assert "fresh_result(z, x" not in shown and "fresh_result(ys, xs" in shown
