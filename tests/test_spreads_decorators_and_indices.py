"""Three forms users write that gave a wrong derivative or crashed, now exact or refused.

- A list made by a comprehension and spread into a call (`total(*[x * k for k in ks])`)
  was taken for the empty list it starts as: value 0 and gradient 0, in both modes.
  A record filled from such a list (`Params(*[...])`) gave zero gradients too; it is
  refused now, since which field each item fills is known only where the code runs.
- A function decorated with `functools.wraps` was read from the source of the function
  it wraps (what `inspect.getsource` follows `__wrapped__` to), while its code is the
  wrapper's: jvp through it gave a zero tangent. ssad reads the wrapper that runs; one
  that passes on `**kwargs` is refused saying what to write.
- A tuple or dict spread into a call (`h(*args)`, `h(**opts)`) and bound again later in
  the loop's body to one of another length (`args = (a, b, c)`) was spread in every pass
  with the length known before the loop: the third item was dropped, a wrong value and a
  wrong gradient. Such a spread is refused; one that every pass binds alike
  (`params = (w * c, b + d)`) is differentiated.
- A loop index used as a number in a helper (`s = s + x[i] * i`) crashed every
  second-order mode (`'NoneType' object is not subscriptable`): the range the backward
  sweep walks again had no zero tangent or adjoint.
"""

import functools
from collections import namedtuple

import numpy as np
import pytest

import ssad

from .conftest import check_every_order

X = np.array([0.3, -0.4, 1.1])
V = np.array([1.0, 0.5, -0.3])


# ----- a comprehension spread into a call -----


def _total(*parts):
    return sum(np.sum(p ** 2) for p in parts)


def spreads_a_comprehension_into_star_args(x):
    return _total(*[x * k for k in (2.0, 1.0)])


def spreads_a_filtered_comprehension(x):
    return _total(*[np.sin(x) * k for k in (2.0, -1.0, 0.5) if k > 0])


def spreads_a_map(x):
    return _total(*map(np.tanh, [x, 2.0 * x]))


@pytest.mark.parametrize("f", [spreads_a_comprehension_into_star_args, spreads_a_filtered_comprehension,
                               spreads_a_map])
def test_a_list_made_by_a_loop_and_spread_into_a_call_is_differentiated(f):
    check_every_order(f, X, V)


def test_a_comprehension_spread_is_not_the_empty_list_it_starts_as():
    # ssad gave value 0 and gradient 0 here
    value, gradient = ssad.value_and_grad(spreads_a_comprehension_into_star_args)(X)
    assert value == pytest.approx(5.0 * np.sum(X ** 2))
    np.testing.assert_allclose(gradient, 10.0 * X)


def zips_the_rows_of_a_comprehension(x):
    rows = [x * k for k in (1.0, 2.0, 3.0)]
    return sum(c[0] * c[1] * c[2] for c in zip(*rows, strict=True))


Params = namedtuple("Params", "w b")


def fills_a_record_from_a_comprehension(x):
    q = Params(*[x * k for k in (2.0, 1.0)])
    return np.sum(q.w ** 2) + np.sum(q.b)


@pytest.mark.parametrize("f, message", [
    (zips_the_rows_of_a_comprehension, r"`\*` passes values that carry (gradients|tangents) to zip; pass them one "
                                       r"by one"),
    (fills_a_record_from_a_comprehension, r"`Params\(\*\.\.\.\)` fills the fields of Params from a list or tuple "
                                          r"that carries gradients and whose length ssad does not see"),
])
def test_a_spread_of_a_length_ssad_does_not_see_is_refused_in_both_modes(f, message):
    line = f.__code__.co_firstlineno + (2 if f is zips_the_rows_of_a_comprehension else 1)
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (V,))):
        with pytest.raises(ssad.SsadError, match=message) as caught:
            run()
        assert (caught.value.filename, caught.value.lineno) == (__file__, line)


def test_the_refused_spreads_are_what_python_computes():
    x0, x1, x2 = X
    assert zips_the_rows_of_a_comprehension(X) == pytest.approx(6.0 * (x0 ** 3 + x1 ** 3 + x2 ** 3))
    assert fills_a_record_from_a_comprehension(X) == pytest.approx(4.0 * np.sum(X ** 2) + np.sum(X))


# ----- functools.wraps -----


def _named(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)  # not the function it wraps: ssad must read this one

    return wrapper


def _passes_everything_on(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@_named
def _doubled_energy(x):
    return np.sum(np.sin(x) ** 2)


@_passes_everything_on
def _energy(x):
    return np.sum(x ** 2)


def calls_a_decorated_function(x):
    return _doubled_energy(x) + np.sum(x)


def test_a_function_made_by_functools_wraps_is_read_as_the_wrapper_that_runs():
    check_every_order(calls_a_decorated_function, X, V)
    # the wrapper doubles: the function it wraps alone would give half of this
    np.testing.assert_allclose(ssad.grad(calls_a_decorated_function)(X), 2.0 * np.sin(2.0 * X) + 1.0)


def test_a_wrapper_passing_on_its_keywords_is_refused_in_both_modes():
    def f(x):
        return _energy(x)

    message = (r"`\*\*kwargs` passes on the keywords this function was given, which ssad does not follow.*"
               r"differentiate that function itself \(`f\.__wrapped__`")
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (V,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__
    np.testing.assert_allclose(ssad.jvp(_energy.__wrapped__, (X,), (V,))[1], 2.0 * X @ V)


# ----- a loop index used as a number, at second order -----


def _weighted(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * i
    return s


def _first_past(x):
    for i, v in enumerate(x):
        if v > 1.0:
            return v * v * i
    return np.sum(x)


def squares_a_helpers_index_weighted_sum(x):
    return _weighted(x) ** 2


def returns_from_an_enumerate_in_a_helper(x):
    return _first_past(x) * np.sum(x ** 2)


@pytest.mark.parametrize("f", [squares_a_helpers_index_weighted_sum, returns_from_an_enumerate_in_a_helper])
def test_a_loop_index_used_as_a_number_in_a_helper_is_differentiated_twice(f):
    check_every_order(f, X, V)


def test_the_hessian_of_an_index_weighted_sum_in_closed_form():
    k = np.arange(3.0)
    np.testing.assert_allclose(ssad.hvp(squares_a_helpers_index_weighted_sum)(X, V), 2.0 * k * (k @ V))


# ----- zip(*rows) in a loop's header -----


def walks_the_zip_of_rows_given(x, data):
    t = 0.0
    for a, b in zip(*data, strict=True):
        t = t + a * b * x[0]
    return t + np.sum(x)


def walks_the_zip_of_a_display(x):
    rows = [x, 2.0 * x, 3.0 * x]
    return sum(c[0] * c[1] * c[2] for c in zip(*rows, strict=True))


def test_a_loop_over_zip_of_star_rows_walks_the_tuples_zip_makes():
    # ssad walked `zip(*rows)` as one sequence (`iterated(*rows)`): a TypeError where it ran
    data = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    assert ssad.value_and_grad(walks_the_zip_of_rows_given)(X, data)[0] == pytest.approx(0.3 * 11.0 + np.sum(X))
    check_every_order(lambda x: walks_the_zip_of_rows_given(x, data), X, V)
    check_every_order(walks_the_zip_of_a_display, X, V)


# ----- a spread whose tuple or dict a loop binds again -----


def _affine(a, b, c=0.0):
    return a * b + c * 3.0


def spreads_a_tuple_the_loop_lengthens(x):
    args = (x[0], x[1])
    s = 0.0
    for _ in range(2):
        s = s + _affine(*args)
        args = (x[0], x[1], x[2])
    return s


def spreads_a_dict_the_loop_widens(x):
    opts = {"a": x[0], "b": x[1]}
    s = 0.0
    for _ in range(2):
        s = s + _affine(**opts)
        opts = {"a": x[0], "b": x[1], "c": x[2]}
    return s


@pytest.mark.parametrize("f", [spreads_a_tuple_the_loop_lengthens, spreads_a_dict_the_loop_widens])
def test_a_spread_the_loop_binds_to_another_length_is_refused_in_both_modes(f):
    assert f(X) == pytest.approx(2 * X[0] * X[1] + 3.0 * X[2])  # what Python computes
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (V,))):
        with pytest.raises(ssad.SsadError, match=r"`\*\*?(args|options)`") as caught:
            run()
        assert caught.value.lineno == f.__code__.co_firstlineno + 4


def spreads_parameters_every_pass_binds_alike(x):
    params = (x[0], x[1])
    opts = {"a": x[2], "b": x[1]}
    s = 0.0
    for _ in range(3):
        s = s + _affine(*params) + _affine(**opts)
        params = (params[0] * x[2], params[1] + x[0])
        opts = {"a": opts["a"] * x[0], "b": opts["b"] - x[2]}
    return s


def test_a_spread_every_pass_binds_alike_is_differentiated_in_every_order():
    check_every_order(spreads_parameters_every_pass_binds_alike, X.copy(), V)
