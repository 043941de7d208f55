"""Writes into arrays: derivatives equal to finite differences in both modes and at second
order, or a refusal at the user's line.

- a write whose right side is the array itself or a view of it (`y[::-1] = y`): NumPy reads
  the right side in full first; its adjoint takes the written part before zeroing it;
- a write into a 0-d array (`a[()] = v`, `a[...] = v`), whose adjoint may be a number;
- adjoints and tangents that are another value's array: an adjoint that the unit seed
  folds to an array a write restores later, a tangent a rule hands back as is;
- calls that may return their operand itself (`np.array(a, copy=None)`) are views, and
  flags that let a function write into its operand (`np.nan_to_num(a, copy=False)`) are
  refused;
- the forward code of a rule that tests a zero tangent against None compiles without a
  SyntaxWarning.
"""

import inspect
import warnings

import gast
import numpy as np
import pytest
import scipy.linalg

import ssad
from ssad.testing import assert_close, numerical_gradient
from ssad.transform.fold import fold, materialize_zeros

from .conftest import assert_gradient_matches

W4 = np.array([1.0, 2.0, 3.0, 4.0])
W23 = np.arange(1.0, 7.0).reshape(2, 3)
X4 = np.array([0.5, -1.0, 2.0, 0.7])
X23 = np.array([[0.5, -1.0, 2.0], [0.3, 0.9, -0.4]])
X22 = np.array([[0.5, -1.0], [0.3, 0.9]])


def check_all_modes(f, x, second=True):
    """Reverse and forward mode against central differences, and the Hessian against
    differences of the gradient; the function is given copies (some write into it)."""
    got = ssad.grad(f)(x.copy())
    assert_gradient_matches(f, (x.copy(),), 0, got)
    direction = np.linspace(0.3, 1.1, x.size).reshape(x.shape)
    value, slope = ssad.jvp(f, (x.copy(),), (direction,))
    assert_close(f"{f.__name__} value", value, f(x.copy()), 1e-12, 1e-12)
    expected = numerical_gradient(lambda t: f(x + t * direction), 0.0)
    assert_close(f"{f.__name__} jvp", slope, expected, 1e-5, 1e-7)
    if second:
        flat = x.reshape(-1)
        hessian = np.asarray(ssad.hessian(f)(x.copy())).reshape(flat.size, flat.size)
        for k in range(flat.size):
            column = numerical_gradient(lambda t, k=k: ssad.grad(f)(_moved(x, k, t)).reshape(-1), 0.0)
            assert_close(f"{f.__name__} hessian column {k}", hessian[:, k], column, 1e-4, 1e-6)


def _moved(x, k, t):
    moved = x.copy().reshape(-1)
    moved[k] += t
    return moved.reshape(x.shape)


def refusal_line(f, marker):
    """The line number of the line of `f` that contains `marker`."""
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, text in enumerate(lines) if marker in text)


# ----- the right side is the array written, or a view of it -----


def same_all(x):
    y = x * 1.0
    y[:] = y  # NumPy: nothing changes
    return np.sum(np.sin(y) * W4)


def same_reversed(x):
    y = x * 1.0
    y[::-1] = y  # NumPy copies the overlap first: y becomes x reversed
    return np.sum(np.sin(y) * W4)


def same_ellipsis(x):
    y = x * 1.0
    y[...] = y
    return np.sum(y * y * W4)


def same_permuted(x):
    y = x * 1.0
    y[[2, 0, 1, 3]] = y
    return np.sum(np.sin(y) * W4)


def same_reversed_argument(x):
    x[::-1] = x  # the gradient function works on a copy of the argument
    return np.sum(np.sin(x) * W4)


def same_reversed_in_a_loop(x):
    y = x * 1.0
    for _ in range(3):
        y[::-1] = y
        y = np.sin(y) * 1.5
    return np.sum(y * W4)


def same_reversed_in_place_in_a_loop(x):
    y = x * 1.0
    for k in range(3):
        y[::-1] = y
        y[k] = y[k] * y[k + 1]
    return np.sum(y * W4)


def second_name(x):
    y = x * 1.0
    z = y
    y[::-1] = z
    return np.sum(np.sin(y) * W4)


def view_reversed(x):
    y = x * 1.0
    y[:] = y[::-1]
    return np.sum(np.sin(y) * W4)


def view_shifted(x):
    y = x * 1.0
    y[1:] = y[:-1] * y[1:]
    return np.sum(np.sin(y) * W4)


def view_reshaped(x):
    y = x * 1.0
    y[:] = y.reshape(2, 2).T.ravel()
    return np.sum(np.sin(y) * W4)


def columns_reversed(x):
    y = x * 1.0
    y[:, ::-1] = y
    return np.sum(np.sin(y) * W23)


def rows_reversed(x):
    y = x * 1.0
    y[::-1] = y
    return np.sum(np.sin(y) * W23)


def transposed(x):
    y = x * 1.0
    y[:] = y.T
    return np.sum(np.sin(y) * W23[:, :2])


@pytest.mark.parametrize("f", [same_all, same_reversed, same_ellipsis, same_permuted, same_reversed_argument,
                               same_reversed_in_a_loop, same_reversed_in_place_in_a_loop, second_name,
                               view_reversed, view_shifted, view_reshaped])
def test_a_vector_written_with_itself(f):
    check_all_modes(f, X4)


@pytest.mark.parametrize("f, x", [(columns_reversed, X23), (rows_reversed, X23), (transposed, X22)])
def test_a_matrix_written_with_itself(f, x):
    check_all_modes(f, x)


def test_writing_an_array_with_itself_gives_numpy_values_and_the_exact_gradient():
    def reversed_weighted(x):
        y = x * 1.0
        y[::-1] = y
        return np.sum(y * W4)

    value, gradient = ssad.value_and_grad(reversed_weighted)(X4)
    assert value == np.sum(X4[::-1] * W4)
    np.testing.assert_array_equal(gradient, W4[::-1])
    np.testing.assert_array_equal(ssad.grad(same_all)(X4), np.cos(X4) * W4)


def test_a_write_of_another_value_keeps_its_code():
    def assigned(x):
        y = x * 1.0
        v = np.sin(x)
        y[::-1] = v
        return np.sum(y * W4)

    def looped(x):
        y = x * 1.0
        for i in range(3):
            y[i + 1] = y[i] * x[i]
        return np.sum(y * W4)

    source = ssad.show(assigned, args=(X4,)).source
    assert "d_v = unbroadcast(written_part(d_y, np.s_[::-1]), v)\n    d_y = zero_at(d_y, np.s_[::-1])\n" in source
    assert "_written" not in source  # no temporary: the part goes straight to the value's adjoint
    # the adjoint of a vector, ours alone in the loop, zeroed in place; of an array of unknown
    # rank (the code made for no particular arguments), by `clear_at`
    assert "d_y[i_plus_1] = 0.0" in ssad.show(looped, args=(X4,)).source
    assert "d_y = clear_at(d_y, i_plus_1)" in ssad.show(looped).source
    check_all_modes(looped, X4)


# ----- 0-d arrays -----


def zero_d_written(s):
    a = np.zeros(())
    a[()] = s * 3.0
    return a * s  # 3 s**2


def zero_d_ellipsis(s):
    a = np.array(0.0)
    a[...] = s * 2
    return a * s


def zero_d_none_index(s):
    a = np.zeros(())
    a[None] = s * 3.0
    return a * s


def zero_d_in_a_loop(s):
    a = np.zeros(())
    for _ in range(3):
        a[()] = a * s + 1.0
    return a * s


def zero_d_written_twice(s):
    a = np.zeros(())
    a[...] = s
    a[()] = a * a + s
    return np.sum(a) * s


def zero_d_read_before_the_write(s):
    a = np.array(s * 1.0)
    b = a * s
    a[()] = s ** 2
    return a * b  # s**4


def zero_d_tangent_handed_on(s):
    a = np.array(s * 2.0)
    a[()] = a * s
    c = a + 1.0  # its tangent is a's, as the rule of + hands it on
    a[()] = c * c
    return a + c


@pytest.mark.parametrize("f", [zero_d_written, zero_d_ellipsis, zero_d_none_index, zero_d_in_a_loop,
                               zero_d_written_twice, zero_d_read_before_the_write, zero_d_tangent_handed_on])
@pytest.mark.parametrize("s", [0.7, np.array(-0.4)])
def test_writes_into_a_0d_array(f, s):
    def scalar(t):
        return float(f(t))

    assert_close(f"{f.__name__} grad", ssad.grad(f)(s), numerical_gradient(scalar, float(s)), 1e-5, 1e-7)
    value, slope = ssad.jvp(f, (s,), (1.0,))
    assert_close(f"{f.__name__} value", value, f(s), 1e-12, 1e-12)
    assert_close(f"{f.__name__} jvp", slope, numerical_gradient(scalar, float(s)), 1e-5, 1e-7)
    second = numerical_gradient(lambda t: float(ssad.grad(f)(t)), float(s))
    assert_close(f"{f.__name__} grad of grad", ssad.grad(ssad.grad(f))(s), second, 1e-4, 1e-6)
    assert_close(f"{f.__name__} hessian", np.reshape(ssad.hessian(f)(s), ()), second, 1e-4, 1e-6)


def test_a_0d_array_written_by_a_vector_sum():
    def total(x):
        a = np.zeros(())
        a[()] = np.sum(x * x)
        return a * x[0]

    check_all_modes(total, np.array([0.3, -0.8, 1.1]))


def test_closed_form_of_a_0d_write():
    np.testing.assert_allclose(ssad.grad(zero_d_written)(0.7), 6 * 0.7, rtol=1e-15)


# ----- an adjoint or tangent that is another value's array -----


def product_of_a_restored_array(x):
    a = x * 1.0
    b = a * x
    a[0] = x[1] ** 2  # restored in the adjoint sweep, which reads b's adjoint, a itself
    return np.sum(a * b)


def dot_of_a_restored_array(x):
    a = x * 1.0
    b = a * x
    a[0] = x[1] ** 2
    return a @ b


def tangent_handed_on(x):
    a = x * 2.0
    a[0] = a[1] * x[0]
    c = a + 1.0  # c's tangent is a's tangent, the array the next write changes
    a[1] = c[0] * c[2]
    return np.sum(a * c)


@pytest.mark.parametrize("f", [product_of_a_restored_array, dot_of_a_restored_array, tangent_handed_on])
def test_an_array_shared_by_two_derivatives(f):
    check_all_modes(f, np.array([0.3, -0.8, 1.1]))


def test_the_unit_seed_is_not_folded_into_an_array_restored_later():
    source = ssad.show(product_of_a_restored_array, args=(np.ones(3),)).source
    assert "d_b = a\n" not in source
    assert "restore_part(a, 0, tape.pop())" in source


# ----- calls that may return their operand -----


def copy_none(x):
    a = x * 1.0
    b = np.array(a, copy=None)  # a itself
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def copy_false(x):
    a = x * 1.0
    b = np.array(a, dtype=np.float64, copy=False)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def copy_if_needed(x):
    a = x * 1.0
    b = np.array(a, copy=np._CopyMode.IF_NEEDED)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def astype_function_no_copy(x):
    a = x * 1.0
    b = np.astype(a, np.float64, copy=False)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def astype_method_no_copy(x):
    a = x * 1.0
    b = a.astype(np.float64, copy=False)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def astype_through_the_class(x):
    a = x * 1.0
    b = np.ndarray.astype(a, np.float64, copy=False)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def view_through_the_class(x):
    a = x * 1.0
    b = np.ndarray.view(a)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def meshgrid_no_copy(x):
    a = x * 1.0
    u, v = np.meshgrid(a, a, copy=False)
    u[0, 0] = 0.0  # <- here
    return np.sum(a * x)


def helper_returning_its_argument(a):
    return np.array(a, copy=None)


def through_a_helper(x):
    a = x * 1.0
    b = helper_returning_its_argument(a)
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def sliced_in_one_expression(x):
    a = x * 1.0
    b = np.array(a, copy=None)[1:]
    b[0] = 0.0  # <- here
    return np.sum(a * x)


def from_buffer(x):
    a = np.zeros(3)
    b = np.frombuffer(a)
    a[0] = x[0]  # <- here
    return np.sum(b * x)


SHARING = [copy_none, copy_false, copy_if_needed, astype_function_no_copy, astype_method_no_copy,
           astype_through_the_class, view_through_the_class, meshgrid_no_copy, through_a_helper,
           sliced_in_one_expression, from_buffer]


def test_the_calls_taken_for_views_unless_copied_are_so():
    x = np.arange(3.0)
    assert np.array(x, copy=None) is x and np.array(x, copy=False) is x
    assert np.astype(x, np.float64, copy=False) is x
    assert all(np.shares_memory(grid, x) for grid in np.meshgrid(x, x, copy=False))
    assert not np.shares_memory(np.array(x), x) and not np.shares_memory(np.astype(x, np.float64), x)
    assert not any(np.shares_memory(grid, x) for grid in np.meshgrid(x, x))


@pytest.mark.parametrize("f", SHARING)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_call_that_may_return_its_operand_is_a_view(f, mode):
    x = np.array([0.3, 1.2, -0.8])
    with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
        ssad.grad(f)(x) if mode == "grad" else ssad.jvp(f, (x,), (np.ones(3),))
    assert caught.value.filename == __file__
    assert caught.value.lineno == refusal_line(f, "# <- here")
    assert "would change an array that" in str(caught.value) and "shares" in str(caught.value)


def copy_true(x):
    a = x * 1.0
    b = np.array(a, copy=True)
    b[0] = 0.0
    return np.sum(a * x) + np.sum(np.sin(b) * x)


def copy_default(x):
    a = x * 1.0
    b = np.array(a)
    c = np.astype(a, np.float64)
    b[0] = 0.0
    c[1] = 2.0
    return np.sum(a * x) + np.sum(np.sin(b) * c * x)


def copy_none_read_only(x):
    a = x * 1.0
    b = np.array(a, copy=None)
    return np.sum(np.sin(b) * a)


@pytest.mark.parametrize("f", [copy_true, copy_default, copy_none_read_only])
def test_a_copy_is_its_own_array(f):
    check_all_modes(f, np.array([0.3, 1.2, -0.8]))


def nan_to_num_in_place(x):
    a = x * 1.0
    b = np.nan_to_num(a, copy=False)  # <- here
    return np.sum(b * x)


def nan_to_num_in_place_by_position(x):
    a = x * 1.0
    b = np.nan_to_num(a, False)  # <- here
    return np.sum(b * x)


SPD = np.array([[2.0, 0.3, 0.1], [0.3, 3.0, 0.2], [0.1, 0.2, 4.0]])


def overwriting_solve(x):
    a = SPD * x[0]
    return np.sum(scipy.linalg.solve(a, x, overwrite_a=True))  # <- here


@pytest.mark.parametrize("f, flag", [(nan_to_num_in_place, "copy"), (nan_to_num_in_place_by_position, "copy"),
                                     (overwriting_solve, "overwrite_a")])
def test_a_flag_that_lets_a_function_write_into_its_operand_is_refused(f, flag):
    with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
        ssad.grad(f)
    assert caught.value.lineno == refusal_line(f, "# <- here")
    assert f"{flag}=...)` may write into its argument in place" in str(caught.value)
    assert f"leave `{flag}` at its default" in str(caught.value)


def test_the_flags_at_their_defaults_are_differentiated():
    def solved(x):
        a = SPD * x[0]
        return np.sum(scipy.linalg.solve(a, x, overwrite_a=False)) + np.sum(np.nan_to_num(x * x, copy=True))

    check_all_modes(solved, np.array([0.3, 1.2, -0.8]))


# ----- forward code compiles without warnings -----


def select_with_a_literal_default(x):
    return np.sum(np.select([x > -1, x > 0], [x ** 2, x ** 3], 0.0))


def test_a_rule_testing_a_zero_tangent_against_none_compiles_without_a_warning():
    x = np.array([0.5, -2.0, 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a SyntaxWarning of the generated code is an error
        value, slope = ssad.jvp(select_with_a_literal_default, (x,), (np.ones(3),))
    expected = numerical_gradient(lambda t: select_with_a_literal_default(x + t), 0.0)
    assert_close("select jvp", slope, expected, 1e-6, 1e-8)
    assert value == select_with_a_literal_default(x)
    source = ssad.show(select_with_a_literal_default, mode="forward").source
    assert " is not None" not in source and " is None" not in source


@pytest.mark.parametrize("text, folded", [
    ("__ssad_zero__ is not None", True), ("__ssad_zero__ is None", False), ("None is __ssad_zero__", False),
    ("0.0 is not None", True), ("(1, 2) is None", False), ("None is None", True),
])
def test_identity_with_none_folds(text, folded):
    expr = fold(gast.parse(text, mode="eval").body)
    assert isinstance(expr, gast.Constant) and expr.value is folded


def test_a_zero_either_way_is_the_zero():
    expr = gast.parse("__ssad_zero__ if len(t) > 2 and __ssad_zero__ is not None else 0.0", mode="eval").body
    materialized = materialize_zeros(fold(expr))
    assert isinstance(materialized, gast.Constant) and materialized.value == 0.0
