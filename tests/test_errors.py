"""Every error path: what is reported, where, and what to do."""

import inspect
import math
import re

import numpy as np
import pytest

import ssad
from ssad.errors import SourceError
from ssad.testing import numerical_gradient

from .programs import unsupported


def marked_line(function):
    lines, first = inspect.getsourcelines(function)
    for offset, text in enumerate(lines):
        if "# <- here" in text:
            return first + offset, text.rstrip("\n")
    raise AssertionError(f"{function.__name__} has no marker")


@pytest.mark.parametrize("function", unsupported.CASES, ids=lambda f: f.__name__)
def test_unsupported_construct_is_reported_where_it_stands(function):
    with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
        ssad.grad(function)
    error = caught.value
    lineno, text = marked_line(function)
    assert error.filename == unsupported.__file__
    assert error.lineno == lineno
    assert error.line == text
    assert error.col is not None and text[error.col:].strip()  # the column points into the line
    message = str(error)
    assert f"{unsupported.__file__}:{lineno}:{error.col + 1}:" in message
    assert text.strip() in message
    # It is a SyntaxError too, with the standard fields.
    assert isinstance(error, SyntaxError) and isinstance(error, ssad.SsadError)
    assert error.offset == error.col + 1


def test_the_message_says_what_to_do():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="outside the differentiated function"):
        ssad.grad(unsupported.uses_try)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="raise the exception by name"):
        ssad.grad(unsupported.uses_bare_raise)


def test_undefined_name_is_reported_with_its_location():
    with pytest.raises(SourceError, match="UNDEFINED_THING") as caught:
        ssad.grad(unsupported.uses_undefined_name)
    assert caught.value.lineno == marked_line(unsupported.uses_undefined_name)[0]


def opaque(x):
    return x * 2.0


opaque_builtin = np.frompyfunc(lambda v: v * 2.0, 1, 1)


def calls_function_without_rule(x):
    y = np.polynomial.hermite.hermval(x, [0.5, 1.0])  # <- here
    return np.sum(np.abs(y))


def calls_user_function(x):
    y = opaque(x)  # <- here
    return np.sum(y)


def calls_unknown_method(x):
    y = x.nonexistent_method()  # <- here
    return np.sum(y)


def test_missing_rule_names_function_call_site_and_remedy():
    with pytest.raises(ssad.MissingRuleError) as caught:
        ssad.grad(calls_function_without_rule)
    message = str(caught.value)
    lineno, _ = marked_line(calls_function_without_rule)
    assert "numpy.polynomial.hermite.hermval" in message
    assert f"{__file__}:{lineno}" in message
    assert "@ssad.adjoint(np.polynomial.hermite.hermval)" in message


def test_missing_rule_for_a_builtin_callable_mentions_registration():
    with pytest.raises(ssad.MissingRuleError, match=r"@ssad\.adjoint\(opaque_builtin\)"):
        ssad.grad(calls_builtin_without_rule)


def calls_builtin_without_rule(x):
    y = opaque_builtin(x)
    return np.sum(y)


def test_a_user_function_with_source_is_differentiated():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(ssad.grad(calls_user_function)(x), [2.0, 2.0])


def test_unknown_method_of_an_active_value_is_an_error_not_a_zero():
    with pytest.raises(ssad.MissingRuleError, match="nonexistent_method"):
        ssad.grad(calls_unknown_method)(np.ones(3))


def calls_unruled_array_method(x):
    y = x.byteswap()  # an ndarray method with no rule: refused when differentiating
    return np.sum(x * y)


def test_array_method_without_rule_is_reported_at_transform_time():
    with pytest.raises(ssad.MissingRuleError, match="byteswap"):
        ssad.grad(calls_unruled_array_method)


def inactive_unknown_call(x):
    noise = np.fft.fft(np.ones(4)).real  # depends on no input: no rule needed
    return np.sum(x * noise)


def test_unknown_call_on_constants_needs_no_rule():
    x = np.array([0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(ssad.grad(inactive_unknown_call)(x), np.fft.fft(np.ones(4)).real)


def vector_output(x):
    return x * 2.0


def test_grad_of_non_scalar_output_points_to_vjp():
    with pytest.raises(ssad.SsadError, match=r"vjp") as caught:
        ssad.grad(vector_output)(np.ones(3))
    assert "shape (3,)" in str(caught.value)


def test_bad_wrt():
    with pytest.raises(ssad.SsadError, match="out of range"):
        ssad.grad(vector_output, wrt=3)
    with pytest.raises(ssad.SsadError, match="not a parameter"):
        ssad.grad(vector_output, wrt="y")
    with pytest.raises(ssad.SsadError, match="twice"):
        ssad.grad(vector_output, wrt=(0, "x"))


def test_builtin_is_refused_clearly_and_a_lambda_is_differentiated():
    with pytest.raises(ssad.SsadError, match="register a rule"):
        ssad.grad(np.frompyfunc(math.sin, 1, 1))  # a C function without a rule (math.sin has one)
    assert ssad.grad(lambda x: x * 2.0 + np.sin(x))(0.5) == pytest.approx(2.0 + np.cos(0.5))


def test_two_lambdas_on_one_line_are_told_apart():
    pair = (lambda x: x * 2.0, lambda x: x * 3.0)  # noqa: E731
    assert (ssad.grad(pair[0])(1.0), ssad.grad(pair[1])(1.0)) == (2.0, 3.0)


def test_function_without_source():
    scope = {}
    exec("def made_by_exec(x):\n    return x * 2\n", scope)
    with pytest.raises(ssad.SsadError, match="source") as caught:
        ssad.grad(scope["made_by_exec"])
    assert "linecache" in str(caught.value)


def active_keyword(x, lo):
    return np.sum(np.clip(x, a_min=lo, a_max=2.0))


def test_active_keyword_argument_is_an_error_with_advice():
    with pytest.raises(SourceError, match="positionally"):
        ssad.grad(active_keyword, wrt=1)


def test_errors_are_ssad_errors_never_internal():
    for function in unsupported.CASES + [calls_function_without_rule, calls_unruled_array_method]:
        try:
            ssad.grad(function)
        except ssad.SsadError:
            pass
        else:
            raise AssertionError(f"{function.__name__} was accepted")


def test_error_messages_have_no_internal_names():
    for function in unsupported.CASES:
        with pytest.raises(ssad.SsadError) as caught:
            ssad.grad(function)
        assert not re.search(r"gast|KeyError|ssad/", str(caught.value))


def augmented_after_copy(x):
    y = x * 1.0
    z = y
    y += 1.0
    return np.sum(z * y)


def augmented_fresh_values(x):
    y = x * 2.0
    y += np.sin(x)
    s = np.sum(y)
    s *= 3.0
    return s


def test_augmented_assignment_on_a_shared_array_is_refused():
    # `y` holds an array or a number as `x` does: which, is known when the code runs
    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"test_errors.py:\d+:.*`z` shares") as caught:
        ssad.grad(augmented_after_copy)(np.array([0.5, -1.0]))
    assert "y = y + ..." in str(caught.value)
    # of a number, `y += 1.0` binds a new number, which `z` does not see
    x = 0.7
    assert ssad.grad(augmented_after_copy)(x) == pytest.approx(numerical_gradient(augmented_after_copy, x))


def augmented_view(x):
    y = x[1:]
    z = y * 1.0
    w = y
    y += 1.0
    return np.sum(z * w)


def test_augmented_assignment_on_a_shared_view_is_refused_before_it_runs():
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`w` shares"):
        ssad.grad(augmented_view)


def test_augmented_assignment_on_fresh_values_is_exact():
    x = np.array([0.3, -0.8, 1.1])
    gradient = ssad.grad(augmented_fresh_values)(x)
    np.testing.assert_allclose(gradient, 3.0 * (2.0 + np.cos(x)))


def writes_into_argument(x):
    x[0] = 2.0 * x[1]
    return np.sum(x)


def writes_into_a_copy(x):
    x = x.copy()
    x[0] = 2.0 * x[1]
    return np.sum(x * x)


def test_in_place_write_into_an_argument_differentiates_a_copy():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ssad.grad(writes_into_argument)(x), [0.0, 3.0, 1.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])  # the caller's array is unchanged
    before = x.copy()
    gradient = ssad.grad(writes_into_a_copy)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(gradient, [0.0, 2 * 2 * 2.0 * 2.0 + 2 * 2.0, 2 * 3.0])


def test_pullback_of_a_function_writing_in_place_runs_once():
    value, pullback = ssad.vjp(writes_into_a_copy, np.array([1.0, 2.0, 3.0]))
    first = pullback(1.0)
    np.testing.assert_allclose(first[0], [0.0, 20.0, 6.0])
    with pytest.raises(ssad.SsadError, match="already called"):
        pullback(1.0)


OPAQUE = np.frompyfunc(lambda v: v * 2.0, 1, 1)


def lambda_calling_an_opaque_function(x):
    g = lambda v: OPAQUE(v) * x  # <- here  # noqa: E731
    return g(x)


def nested_def_calling_an_opaque_function(x):
    def inner(v):
        return np.sum(OPAQUE(v * x))  # <- here

    return inner(x)


@pytest.mark.parametrize("function", [lambda_calling_an_opaque_function, nested_def_calling_an_opaque_function])
def test_errors_inside_nested_functions_point_at_the_users_line(function):
    line, _ = marked_line(function)
    for attempt in (lambda: ssad.grad(function)(1.5), lambda: ssad.jvp(function, (1.5,), (1.0,))):
        with pytest.raises(ssad.MissingRuleError) as caught:
            attempt()
        error = caught.value
        assert error.filename == __file__ and error.lineno == line, (error.filename, error.lineno)
        assert "<ssad" not in str(error) and "_template" not in str(error)


# ----- errors raised while the generated code runs -----


def calls_an_opaque_function_value(x):
    chosen = OPAQUE if np.sum(x) > 0 else np.sin
    scaled = x * 2.0
    return np.sum(chosen(scaled))  # <- here


def uses_a_parameter_without_a_derivative(x, v):
    y = np.sin(x)
    return np.sum(scipy_special().jv(v, y))  # <- here


def scipy_special():
    import scipy.special

    return scipy.special


def returns_no_pair_for_has_aux(x):
    y = np.sin(x)
    return np.sum(y)  # <- here


def _raised_at_the_marked_line(function, attempt, error_type=ssad.SsadError):
    line, _ = marked_line(function)
    with pytest.raises(error_type) as caught:
        attempt()
    error = caught.value
    assert (error.filename, error.lineno) == (__file__, line), (error.filename, error.lineno)
    assert "# <- here" in error.line
    assert "<ssad" not in str(error) and "dynamic" not in str(error)


def test_a_call_through_a_function_value_without_a_rule_names_the_users_line():
    x = np.array([0.5, 1.5])
    function = calls_an_opaque_function_value
    _raised_at_the_marked_line(function, lambda: ssad.grad(function)(x), ssad.MissingRuleError)
    _raised_at_the_marked_line(function, lambda: ssad.jvp(function, (x,), (x,)), ssad.MissingRuleError)
    _raised_at_the_marked_line(function, lambda: ssad.vjp(function, x)[1](1.0), ssad.MissingRuleError)


def test_a_parameter_without_a_derivative_names_the_users_line_where_it_is_used():
    pytest.importorskip("scipy")
    function = uses_a_parameter_without_a_derivative
    _raised_at_the_marked_line(function, lambda: ssad.grad(function, wrt=1)(np.array([0.5, 1.5]), 2.0))


def test_has_aux_without_a_pair_names_the_users_return():
    function = returns_no_pair_for_has_aux
    _raised_at_the_marked_line(function, lambda: ssad.grad(function, has_aux=True)(np.array([0.5, 1.5])))


def loops_branches_and_calls_a_function_value(x, w):
    total = 0.0
    for k in range(3):
        if x[k] > 0:
            total = total + np.sin(x[k] * w)
        else:
            act = np.tanh
            total = total + act(x[k]) ** 2
    return total


def test_every_located_line_of_generated_code_is_a_line_of_the_users_function():
    """The map from generated lines to the user's: each names a line inside the function."""
    from ssad.runtime.locations import ORIGINS

    function = loops_branches_and_calls_a_function_value
    x = np.array([0.5, -1.5, 2.0])
    before = set(ORIGINS)
    ssad.grad(function)(x, 2.0)
    ssad.vjp(function, x, 2.0)
    ssad.jvp(function, (x, 2.0), (x, 1.0))
    made = [ORIGINS[f] for f in set(ORIGINS) - before]
    assert len(made) >= 3, "each generated function records where its lines come from"
    source, first = inspect.getsourcelines(function)
    for origins in made:
        assert len({lineno for _, lineno, _, _ in origins.values()}) >= 6
        for filename, lineno, _, text in origins.values():
            assert filename == __file__ and first <= lineno < first + len(source)
            assert text == source[lineno - first].rstrip("\n")
