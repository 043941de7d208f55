"""A global the function changes in place and also reads: refused where it is changed.

ssad reads globals as constants. Each refused program below changed a global in place with a
value computed from the input (by `LOG.append(v)` in the function, or in a function of the
user's it calls) and read it too: after the change the gradient missed the derivative through
it (a silently wrong gradient, `W[0]`'s part of it), before it the backward sweep read the
changed value for the adjoint of the earlier read (wrong again), and for a list the function
itself appended to, the transformation stopped with an internal KeyError. Each is refused now
at the change, in both modes. Changing a global as a log, never read, is differentiated (in
forward mode, `LOG.append(loss)` stopped with an internal KeyError too).
"""

import inspect
import types

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

W = np.array([0.5, -1.0, 2.0, 0.1])
LOG = []
TABLE = {}


def record_weight(v):
    W[0] = v
    return 0.0


def log(v):
    LOG.append(v)


def total_weight():
    return np.sum(W)


def helper_writes_a_global_array_then_it_is_read(x):
    record_weight(x[0] * 10)
    return np.sum(W * x)


def helper_appends_to_a_global_list_then_it_is_read(x):
    log(x[0] ** 2)
    return LOG[-1] * x[1]


def appended_to_a_global_list_then_read(x):
    LOG.append(x[0] ** 2)
    return LOG[-1] * x[1]


def global_dict_written_then_read(x):
    TABLE.update(a=x[0] ** 2)
    return TABLE["a"] * x[1]


def changed_then_read_by_a_helper(x):
    record_weight(x[0] * 10)
    return total_weight() * x[1]


def read_in_the_next_pass_of_a_loop(x):
    s = 0.0
    for v in x:
        s = s + (LOG[-1] if LOG else 0.0) * v
        LOG.append(v ** 2)
    return s


def read_before_a_helper_changes_it(x):
    s = np.sum(W * x)
    record_weight(x[0])
    return s


REFUSED = [
    (helper_writes_a_global_array_then_it_is_read, "`record_weight\\(...\\)` changes `W`, defined outside"),
    (helper_appends_to_a_global_list_then_it_is_read, "`log\\(...\\)` changes `LOG`, defined outside"),
    (appended_to_a_global_list_then_read, "`LOG.append\\(x\\[0\\] \\*\\* 2\\)` changes `LOG`"),
    (global_dict_written_then_read, "`TABLE.update\\(a=x\\[0\\] \\*\\* 2\\)` changes `TABLE`"),
    (changed_then_read_by_a_helper, "`record_weight\\(...\\)` changes `W`, defined outside"),
    (read_in_the_next_pass_of_a_loop, "`LOG.append\\(v \\*\\* 2\\)` changes `LOG`"),
    (read_before_a_helper_changes_it, "`record_weight\\(...\\)` changes `W`, defined outside"),
]

X = np.array([0.3, 0.5, 0.9, 1.2])
T = np.array([1.0, -0.5, 0.25, 0.75])


@pytest.fixture(autouse=True)
def _globals_as_they_were():
    kept = W.copy()
    yield
    W[:] = kept
    LOG.clear()
    TABLE.clear()


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_a_global_the_function_reads_and_changes_is_refused(f, message):
    _refused_in_both_modes(f, message)


def _refused_in_both_modes(f, message):
    source, first = inspect.getsourcelines(f)
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (T,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__
        assert first < caught.value.lineno < first + len(source)


def test_python_reads_what_was_put_into_the_global():
    # the derivative ssad would have given misses d(W[0])/dx[0] = 10
    kept = W[0]
    assert helper_writes_a_global_array_then_it_is_read(X.copy()) == pytest.approx(
        10 * X[0] * X[0] + np.sum(W[1:] * X[1:]))
    assert kept != W[0]


def logs_the_loss(x):
    loss = np.sum(np.sin(x) ** 2)
    LOG.append(loss)
    log(loss * 2.0)
    return loss


@pytest.mark.parametrize("f", [logs_the_loss])
def test_a_global_changed_and_not_read_afterwards_is_differentiated(f):
    kept = W.copy()
    expected = numerical_gradient(lambda v: (W.__setitem__(slice(None), kept), f(v))[1], X.copy())
    W[:] = kept
    np.testing.assert_allclose(ssad.grad(f)(X.copy()), expected, rtol=1e-6, atol=1e-8)
    W[:] = kept
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(),), (T,))[1], expected @ T, rtol=1e-6, atol=1e-8)


# ----- an attribute of a module of the user's, changed by a function the function calls -----
#
# `config.S = v` or `config.A[0] = v` in a function of the user's that runs as written, after
# the function read `config.S` (or `config.A`): the backward sweep read the changed attribute
# for the derivative of the read before (2.4 for 1.2), silently wrong. Refused at the call.

config = types.ModuleType("ssad_test_settings")
config.S, config.A, config.T = 2.0, np.ones(4), 3.0


def double_the_scale():
    config.S = config.S * 2.0


def set_the_scale():
    config.S = 4.0


def put_into_the_settings_array(v):
    config.A[0] = v


def scale_read_then_changed_by_a_helper(x):
    s = np.sum(config.S * x**2)
    double_the_scale()
    return s


def settings_array_read_then_written_by_a_helper(x):
    s = np.sum(config.A * x**2)
    put_into_the_settings_array(5.0)
    return s


def other_setting_read_while_a_helper_changes_the_scale(x):
    s = np.sum(config.T * x**2)
    set_the_scale()
    return s


class Settings:
    S = 2.0
    A = np.ones(4)


def double_the_class_scale():
    Settings.S = Settings.S * 2.0


def put_into_the_class_array(v):
    Settings.A[0] = v


def class_scale_read_then_changed_by_a_helper(x):
    s = np.sum(Settings.S * x**2)
    double_the_class_scale()
    return s


def class_array_read_then_written_by_a_helper(x):
    s = np.sum(Settings.A * x**2)
    put_into_the_class_array(5.0)
    return s


@pytest.fixture
def _settings_as_they_were():
    yield
    config.S, config.A = 2.0, np.ones(4)
    Settings.S, Settings.A = 2.0, np.ones(4)


@pytest.mark.parametrize("f, message", [
    (scale_read_then_changed_by_a_helper, "`double_the_scale\\(...\\)` changes `config.S`, defined outside"),
    (settings_array_read_then_written_by_a_helper, "`put_into_the_settings_array\\(...\\)` changes `config.A`"),
    (class_scale_read_then_changed_by_a_helper, "`double_the_class_scale\\(...\\)` changes `Settings.S`, .* reads \\(line"),
    (class_array_read_then_written_by_a_helper, "`put_into_the_class_array\\(...\\)` changes `Settings.A`"),
])
def test_a_module_attribute_a_helper_changes_after_the_function_read_it_is_refused(f, message, _settings_as_they_were):
    _refused_in_both_modes(f, message)


def test_python_reads_the_scale_as_it_was_before_the_helper(_settings_as_they_were):
    # the gradient of the refused program is 2 * S * x with S = 2.0 (ssad gave it with 4.0)
    expected = numerical_gradient(lambda v: (setattr(config, "S", 2.0), scale_read_then_changed_by_a_helper(v))[1],
                                  X.copy())
    np.testing.assert_allclose(expected, 4.0 * X, rtol=1e-6)


def test_another_attribute_of_the_module_is_differentiated(_settings_as_they_were):
    f = other_setting_read_while_a_helper_changes_the_scale
    np.testing.assert_allclose(ssad.grad(f)(X.copy()), 6.0 * X, rtol=1e-12)
    np.testing.assert_allclose(ssad.jvp(f, (X.copy(),), (T,))[1], 6.0 * X @ T, rtol=1e-12)
    np.testing.assert_allclose(numerical_gradient(f, X.copy()), 6.0 * X, rtol=1e-6)


# ----- a function value that changes a global the function reads -----
#
# A function passed in (`g(1.0)`), taken from a list (`fs[0](1.0)`), or a lambda calling an
# operator's method by name (`W.__setitem__(0, v)`) changed `W` after the function read it:
# the backward sweep read the changed `W` (3.0 for 0.6), silently wrong. The function is
# known where the call runs: `keeps_globals` refuses it there; one changing only what the
# function does not read (a log) is differentiated.


def put_five_first(v):
    W[0] = 5.0
    return v


CALLBACKS = [put_five_first]
set_by_dunder = lambda v: W.__setitem__(0, 5.0)  # noqa: E731


def calls_a_function_passed_in(x, g):
    s = np.sum(W * x**2)
    g(1.0)
    return s


def calls_a_function_from_a_list(x):
    s = np.sum(W * x**2)
    CALLBACKS[0](1.0)
    return s


def calls_a_lambda_setting_an_item(x):
    s = np.sum(W * x**2)
    set_by_dunder(1.0)
    return s


def test_a_function_value_changing_a_global_the_function_reads_is_refused_where_it_is_called():
    source, first = inspect.getsourcelines(calls_a_function_passed_in)
    for run in (lambda: ssad.grad(calls_a_function_passed_in, wrt=0)(X.copy(), put_five_first),
                lambda: ssad.jvp(calls_a_function_passed_in, (X.copy(), put_five_first), (T, None))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="`g\\(1.0\\)` calls put_five_first, which changes `W`") as caught:
            run()
        assert caught.value.filename == __file__ and caught.value.lineno == first + 2
    _refused_in_both_modes(calls_a_function_from_a_list, "`CALLBACKS\\[0\\]\\(1.0\\)` calls put_five_first, which changes `W`")
    _refused_in_both_modes(calls_a_lambda_setting_an_item, "`set_by_dunder\\(...\\)` changes `W`")


def test_python_reads_w_as_it_was_before_the_function_value_changed_it():
    kept = W.copy()
    expected = numerical_gradient(lambda v: (W.__setitem__(slice(None), kept), calls_a_function_passed_in(v, put_five_first))[1],
                                  X.copy())
    np.testing.assert_allclose(expected, 2 * kept * X, rtol=1e-6)


def test_a_function_value_changing_what_the_function_does_not_read_is_differentiated():
    got = ssad.grad(calls_a_function_passed_in, wrt=0)(X.copy(), lambda v: LOG.append(v))
    np.testing.assert_allclose(got, 2 * W * X, rtol=1e-12)
    assert LOG == [1.0]
    np.testing.assert_allclose(ssad.jvp(calls_a_function_passed_in, (X.copy(), abs), (T, None))[1], 2 * W * X @ T,
                               rtol=1e-12)
