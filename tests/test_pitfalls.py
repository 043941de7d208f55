"""Traps that gave users of earlier systems wrong gradients or opaque errors.

Each test names the trap it guards against (see the project's design notes).
"""

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches

rng = np.random.default_rng(11)


# ----- generated names never collide with user names -----


def uses_generated_looking_names(x, d_x, seed, unbroadcast, result):
    d_result = x * d_x + seed
    getitem_adjoint = np.sin(d_result) * unbroadcast
    np_ = getitem_adjoint + result
    return np.sum(np_ * x)


def test_user_names_that_look_like_generated_ones():
    args = (rng.standard_normal(3), rng.standard_normal(3), 0.3, 1.7, 0.2)
    for position in range(5):
        gradient = ssad.grad(uses_generated_looking_names, wrt=position)(*args)
        assert_gradient_matches(uses_generated_looking_names, args, position, gradient)


def parameter_named_np(np, x):
    # `np` here is a number; the rules' numpy must be bound under another name.
    return xp.sum(xp.cos(x) * np)


import numpy as xp  # noqa: E402  (the alias the function above reads)


def test_parameter_shadowing_numpy_name():
    args = (2.5, rng.standard_normal(4))
    gradient = ssad.grad(parameter_named_np, wrt=1)(*args)
    assert_gradient_matches(parameter_named_np, args, 1, gradient)
    source = ssad.show(parameter_named_np, wrt=1).source
    assert "np_1.sin(x)" in source or "xp.sin(x)" in source


K = 0  # a global index, whose name a comprehension, a lambda and a nested function below take as their own


def global_named_as_a_comprehension_variable(x):
    ks = [K * 2.0 for K in range(2)]  # this K is the comprehension's; after it, the global
    return x[K] * ks[1] * x[1]


def global_named_as_a_lambda_parameter(x):
    g = lambda K: K * 2.0  # noqa: E731
    return x[K] * g(3.0) * x[1]


def global_named_as_a_generator_variable(x):
    return sum(x[K] * v for K, v in enumerate(x)) + x[K] * 3.0


@pytest.mark.parametrize("f", [global_named_as_a_comprehension_variable, global_named_as_a_lambda_parameter,
                               global_named_as_a_generator_variable], ids=lambda f: f.__name__)
def test_a_global_named_as_a_variable_of_an_inner_scope(f):
    # NameError before: a name bound in a comprehension or lambda was taken for a local of the function
    x = rng.standard_normal(3)
    assert_gradient_matches(f, (x,), 0, ssad.grad(f)(x))


# ----- methods are primitives, never constants -----


def methods_chain(w, x):
    return w.T.dot(x).sum() + w.dot(w.T.dot(x)).dot(x)


def test_ndarray_methods_carry_gradients():
    w, x = rng.standard_normal((4, 3)), rng.standard_normal(4)
    for position in (0, 1):
        gradient = ssad.grad(methods_chain, wrt=position)(w, x)
        assert_gradient_matches(methods_chain, (w, x), position, gradient)
        assert np.any(gradient != 0)


# ----- kinks follow the documented conventions, never NaN -----


def kinks(x):
    return np.sum(np.maximum(x, 0.0) + np.abs(x) + np.where(x > 0.0, x, 0.5 * x))


def test_kinks_at_exact_zero():
    x = np.array([-1.0, 0.0, 2.0])
    gradient = ssad.grad(kinks)(x)
    # maximum(x, 0) at a tie splits evenly; |x|' at 0 is 0; where picks the else branch at 0.
    np.testing.assert_array_equal(gradient, [0.0 - 1.0 + 0.5, 0.5 + 0.0 + 0.5, 1.0 + 1.0 + 1.0])


def where_with_overflow_in_the_unselected_branch(x):
    # exp(1000) overflows where x < 0 is false; where must not route that branch back.
    return np.sum(np.where(x < 0.0, x, 2.0 * x) + np.where(x > 0.0, 1.0, np.inf))


def test_where_does_not_turn_the_other_branch_into_nan():
    x = np.array([-1.0, 0.5, 2.0])
    with np.errstate(all="ignore"):
        gradient = ssad.grad(where_with_overflow_in_the_unselected_branch)(x)
    np.testing.assert_array_equal(gradient, [1.0, 2.0, 2.0])


# ----- NaN is never hidden -----


def sqrt_of(x):
    return np.sum(np.sqrt(x))


def test_nan_and_inf_propagate_as_numpy_does():
    with np.errstate(all="ignore"):
        gradient = ssad.grad(sqrt_of)(np.array([0.0, 4.0, -1.0]))
    assert np.isinf(gradient[0]) and gradient[1] == 0.25 and np.isnan(gradient[2])


def test_check_grads_fails_on_nan_instead_of_passing():
    @ssad.adjoint(nan_rule_function)
    def broken(dy, y, x):
        return (dy * np.nan,)

    with pytest.raises(AssertionError):
        ssad.check_grads(uses_nan_rule, (np.array([1.0, 2.0]),))


def nan_rule_function(x):
    return x * 2.0


def uses_nan_rule(x):
    return np.sum(nan_rule_function(x))


# ----- every import path of a primitive is the same primitive -----


def test_import_paths_resolve_to_one_primitive():
    from .programs import straight

    x = rng.standard_normal(4)
    gradient = ssad.grad(straight.import_styles)(x)
    assert_gradient_matches(straight.import_styles, (x,), 0, gradient)
    source = ssad.show(straight.import_styles).source
    # the generated code reads numpy through the user's own names
    assert "sin(x)" in source and "xp.cos(x)" in source and "numpy.tanh(x)" in source


# ----- the generated function's namespace holds exactly what it reads -----


def test_generated_namespace_is_exactly_the_free_names():
    from .programs import straight

    gradient = ssad.grad(straight.constants_and_globals)
    namespace = gradient.variants.general.function.__globals__
    names = {k for k in namespace if not (k.startswith("__") and k.endswith("__"))}
    generated_source = ssad.show(straight.constants_and_globals).source
    for name in names:
        assert name in generated_source, f"{name} is bound but never read"
    assert namespace["SCALE"] == 0.75
