"""Ordinary Python that code ported from autograd and Tangent uses: `assert` and `import` in a
differentiated function, generators its helpers yield from, lambdas told apart by their
columns, writes into an argument array, `dict(a=...)`, `{**d, 'k': v}`, `dict.get`,
`sorted`, `for` over a dict, `f(*args)` into named parameters, `zip(*rows)`, `**kwargs`
parameters, `f(**options)` and `copy.deepcopy`. Each is checked against central finite differences in
reverse and forward mode and at second order (`check_grads(..., order=2)`)."""

import copy

import numpy as np
import pytest

import ssad
from ssad import check_grads
from ssad.testing import numerical_gradient

X = np.array([0.3, -0.7, 1.1])


# ----- assert -----


def asserts_its_inputs(x, s):
    assert x.shape == (3,), f"expected three numbers, got {x.shape}"
    assert s > 0, "s must be positive"
    total = 0.0
    for k in range(3):
        assert np.isfinite(x[k])
        total = total + np.sin(x[k] * s)
    return total * s


def test_assert_runs_in_the_forward_sweep_and_carries_no_gradient():
    check_grads(asserts_its_inputs, (X, 1.3))
    check_grads(asserts_its_inputs, (X, 1.3), order=2)


def test_a_failing_assert_raises_assertion_error_with_its_message():
    with pytest.raises(AssertionError, match="s must be positive"):
        ssad.grad(asserts_its_inputs)(X, -1.0)
    with pytest.raises(AssertionError, match="s must be positive"):
        ssad.jvp(asserts_its_inputs, (X, -1.0), (X, 1.0))
    # a message that is not a constant string: the assertion's own text and place
    with pytest.raises(AssertionError, match=r"assert x.shape == \(3,\).*test_python_surface.py, line"):
        ssad.grad(asserts_its_inputs)(np.ones(4), 1.0)


# ----- import inside a function -----


def imports_inside(x):
    import numpy as numpy_inside
    import scipy.special
    from scipy.special import expit as sigmoid

    return numpy_inside.sum(sigmoid(x) * scipy.special.erf(x))


def test_import_inside_a_function_binds_its_module():
    check_grads(imports_inside, (X,))
    check_grads(imports_inside, (X,), order=2)
    assert "sigmoid(x)" in ssad.show(imports_inside).source


def imports_and_assigns(x):
    import numpy as np

    np = 2.0  # noqa: F811
    return x * np


def test_a_name_both_imported_and_assigned_is_refused():
    with pytest.raises(ssad.SsadError, match="imports `np` and also assigns it"):
        ssad.grad(imports_and_assigns)(1.0)


# ----- generators -----


def scaled(weights, x):
    for w in weights:
        yield np.sin(w * x)
    yield from [x * x, np.cos(x)]


def sums_a_generator(x):
    return sum(scaled([0.5, 2.0], x))


def lists_a_generator(x):
    return np.sum(np.array(list(scaled([0.5, 2.0], x))) ** 2)


def loops_over_a_generator(x, y):
    total = 0.0
    for value in scaled([1.5, -0.5], x):
        total = total + value * y
    return total


@pytest.mark.parametrize("f, args", [
    (sums_a_generator, (0.7,)),
    (lists_a_generator, (0.7,)),
    (loops_over_a_generator, (0.7, 1.9)),
])
def test_generators_consumed_inside_the_function(f, args):
    check_grads(f, args)
    check_grads(f, args, order=2)


def sends_into_a_generator(x):
    received = yield x
    yield received


def uses_a_sent_value(x):
    return sum(sends_into_a_generator(x))


def test_a_yield_whose_value_is_used_is_refused():
    with pytest.raises(ssad.SsadError, match="a `yield` whose value is used"):
        ssad.grad(uses_a_sent_value)(1.0)


# ----- lambdas told apart by their columns -----

SINE, COSINE = (lambda h: np.sin(3.0 * h)), (lambda h: np.cos(2.0 * h))
LAYERS = [lambda h: np.tanh(h * 2.0),
          lambda h: h * h * 3.0,
          ]


def test_two_lambdas_on_one_line():
    assert ssad.grad(SINE)(0.4) == pytest.approx(3.0 * np.cos(1.2), rel=1e-12)
    assert ssad.grad(COSINE)(0.4) == pytest.approx(-2.0 * np.sin(0.8), rel=1e-12)
    check_grads(SINE, (0.4,), order=2)
    check_grads(COSINE, (0.4,), order=2)


def test_lambdas_in_a_multi_line_list():
    assert ssad.grad(LAYERS[0])(0.3) == pytest.approx(2.0 / np.cosh(0.6) ** 2, rel=1e-12)
    assert ssad.grad(LAYERS[1])(0.3) == pytest.approx(6.0 * 0.3, rel=1e-12)
    check_grads(LAYERS[1], (0.3,), order=2)


def test_a_lambda_inside_a_lambda():
    outer = lambda a: (lambda b: a * np.sin(b))(2.0 * a)  # noqa: E731
    assert ssad.grad(outer)(0.5) == pytest.approx(np.sin(1.0) + 2.0 * 0.5 * np.cos(1.0), rel=1e-12)


# ----- writing into an argument -----


def overwrites_its_argument(x, a):
    x[0] = a * a
    x[1:] *= a
    return np.sum(np.sin(x) * x)


def _copied(f):
    def on_copies(x, a):
        return f(x.copy(), a)

    return on_copies


def test_writing_into_an_argument_leaves_the_callers_array_and_differentiates_what_f_computes():
    x = X.copy()
    d_x, d_a = ssad.grad(overwrites_its_argument, wrt=(0, 1))(x, 0.8)
    np.testing.assert_array_equal(x, X)  # the caller's array is as it was
    reference = _copied(overwrites_its_argument)
    np.testing.assert_allclose(d_x, numerical_gradient(lambda v: reference(v, 0.8), X), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(d_a, numerical_gradient(lambda a: reference(X, a), 0.8), rtol=1e-6)
    assert d_x[0] == 0.0  # x[0] is overwritten before anything reads it
    value, tangent = ssad.jvp(overwrites_its_argument, (x, 0.8), (np.ones(3), 1.0))
    np.testing.assert_array_equal(x, X)
    assert value == pytest.approx(reference(X, 0.8), rel=1e-12)
    expected = numerical_gradient(lambda t: reference(X + t, 0.8 + t), 0.0)
    assert tangent == pytest.approx(expected, rel=1e-6)
    second = ssad.hessian(overwrites_its_argument, wrt=1)(x, 0.8)
    np.testing.assert_array_equal(x, X)
    assert second == pytest.approx(numerical_gradient(lambda a: ssad.grad(overwrites_its_argument, wrt=1)(X, a), 0.8),
                                   rel=1e-6)


def appends_to_its_argument(items, v):
    items.append(v * 2.0)
    return sum(items) * v


def test_changing_an_argument_list_leaves_the_callers_list():
    items = [1.0, 2.0]
    d_items, d_v = ssad.grad(appends_to_its_argument, wrt=(0, 1))(items, 3.0)
    assert items == [1.0, 2.0]
    assert d_items == [3.0, 3.0] and d_v == pytest.approx(3.0 + 4.0 * 3.0)


# ----- dicts and sorted -----


def builds_dicts(x, y):
    params = dict(w=x, b=2.0 * y)
    more = {**params, "b": y * y, "c": np.sin(x)}
    final = {"z": 1.0, **more}
    return final["w"] * final["b"] + final["c"] * params["b"] + more.get("c") * more.get("missing", y)


def test_dict_with_keywords_and_merged_displays():
    check_grads(builds_dicts, (0.7, -1.3))
    check_grads(builds_dicts, (0.7, -1.3), order=2)


def sorts(x, y):
    values = sorted([x * y, np.sin(x), y - 1.0, 0.25])
    largest = sorted([x, y, x * y], key=lambda v: -v)
    return values[0] * 3.0 + values[2] * values[3] + largest[0] * 2.0 - largest[2]


@pytest.mark.parametrize("point", [(0.7, -1.3), (1.9, 0.4), (-0.6, 2.2)])
def test_sorted_in_both_modes(point):
    check_grads(sorts, point)
    check_grads(sorts, point, order=2)


def walks_a_dict(x, d):
    total = 0.0
    for key in d:
        total = total + d[key] * key * x
    for key in {"a": 1, "b": 2}:
        total = total + x * len(key)
    return total


def test_for_over_a_dict_walks_its_keys():
    # integer keys that are also valid positions: walking by position would read values
    d = {0: 5.0, 1: 7.0, 2: 1.0}
    assert ssad.grad(walks_a_dict)(1.5, d) == pytest.approx(7.0 + 2.0 + 2.0)
    assert ssad.jvp(walks_a_dict, (1.5, d), (1.0, None))[1] == pytest.approx(11.0)
    assert ssad.grad(walks_a_dict, wrt=1)(1.5, d) == {0: 0.0, 1: 1.5, 2: 3.0}


# ----- `*args` into named parameters, zip(*rows) -----


def product_of(p, q, r=1.0):
    return p * q * r


def spreads_tuples(x, y):
    args = (x * y, np.sin(x))
    rows = [(x, 1.0, y), (2.0, x * y, np.cos(y))]
    a, b, c = zip(*rows)  # noqa: B905
    return product_of(*args) + product_of(*(a[0], b[1]), r=c[1]) + sum(c)


def test_star_arguments_of_known_length_bind_to_named_parameters():
    check_grads(spreads_tuples, (0.7, 1.3))
    check_grads(spreads_tuples, (0.7, 1.3), order=2)


def spreads_a_changed_list(x):
    args = [x]
    args.append(2.0)
    return product_of(*args)


def test_a_list_changed_in_place_is_not_spread():
    with pytest.raises(ssad.SsadError, match="in place of named parameters"):
        ssad.grad(spreads_a_changed_list)(1.5)


# ----- **kwargs parameters and f(**options) -----


def takes_options(x, **options):
    return x * options["scale"] + np.sin(options.get("shift", 0.0))


def passes_options(x, y):
    options = {"scale": y * y, "shift": x}
    return takes_options(x, scale=3.0 * y) + takes_options(y, **options) + takes_options(x, shift=y, scale=2.0)


def test_kwargs_parameters_and_spread_options():
    check_grads(passes_options, (0.7, 1.3))
    check_grads(passes_options, (0.7, 1.3), order=2)
    expected = (3 * 1.3 + np.cos(0.7) + 2.0, 3 * 0.7 + 3 * 1.3 ** 2 + np.cos(1.3))
    np.testing.assert_allclose(ssad.grad(passes_options, wrt=(0, 1))(0.7, 1.3), expected, rtol=1e-12)


def test_the_differentiated_function_may_take_kwargs():
    assert ssad.grad(takes_options)(2.0, scale=3.0, shift=0.5) == pytest.approx(3.0)
    value, tangent = ssad.jvp(lambda x: takes_options(x, scale=3.0), (2.0,), (1.0,))
    assert (value, tangent) == (pytest.approx(6.0), pytest.approx(3.0))


def spreads_unknown_options(x, options):
    return takes_options(x, **options)


def test_options_whose_keys_are_unknown_are_refused():
    with pytest.raises(ssad.SsadError, match=r"`\*\*options` in a call is supported for a dict display"):
        ssad.grad(spreads_unknown_options)(1.0, {"scale": 2.0})


def nested_star_parameters(x, y):
    pair = lambda *a: a[0] * a[1]  # noqa: E731

    def scaled(u, *rest, **options):
        return u * sum(rest) * options["s"]

    return pair(x, y) + scaled(x, y, x * y, s=y) + scaled(y, x, s=np.sin(x))


def test_star_and_double_star_parameters_of_nested_functions_and_lambdas():
    check_grads(nested_star_parameters, (0.7, 1.3))
    check_grads(nested_star_parameters, (0.7, 1.3), order=2)


# ----- ssad.grad called inside a differentiated function -----


def cube(v):
    return v * v * v


def test_grad_of_a_function_calling_grad_of_a_global_function():
    outer = lambda x: ssad.grad(cube)(x) * x  # noqa: E731
    assert ssad.grad(outer)(2.0) == pytest.approx(9.0 * 2.0 ** 2, rel=1e-12)  # d/dx 3x^3


def perturbation_confusion(x):
    """Siskind and Pearlmutter's test: d/dx (x * d/dy (x + y) at y = 1) at x = 1 is 1, not 2."""

    def shifted(y):
        return x + y

    return x * ssad.grad(shifted)(1.0)


def inner_closure_over_an_active_value(x, w):
    def energy(v):
        return np.sum(np.sin(v * x) * w)

    g = ssad.grad(energy)
    return np.sum(g(np.array([0.3, -0.2])) ** 2) + x * w


def test_nested_grad_of_closures_has_no_perturbation_confusion():
    assert ssad.grad(perturbation_confusion)(1.0) == pytest.approx(1.0, rel=1e-12)
    assert ssad.jvp(perturbation_confusion, (1.0,), (1.0,))[1] == pytest.approx(1.0, rel=1e-12)
    check_grads(inner_closure_over_an_active_value, (0.7, 1.3))
    check_grads(inner_closure_over_an_active_value, (0.7, 1.3), order=2)


def deep_copy_written(x):
    y = copy.deepcopy(x)
    y[0] = y[0] * 3.0
    return np.sum(y * x) + np.sum(y**2)


def deep_copy_of_params(x):
    params = {"w": x * 2.0, "b": [x[0], x[1]]}
    state = copy.deepcopy(params)
    state["w"] *= 0.5
    state["b"] = [state["b"][0] + 1.0, state["b"][1]]
    return np.sum(state["w"] * params["w"]) + state["b"][0] * params["b"][1] * params["b"][0]


def shallow_copy_of_an_array_written(x):
    y = copy.copy(x)
    y[0] = 3.0 * y[1]
    y *= x
    return np.sum(y * x)


def shallow_copy_of_a_list_grown(x):
    xs = [x * 1.0, np.sin(x)]
    ys = copy.copy(xs)
    ys[0] = ys[0] * x
    ys.append(x * 3.0)
    return np.sum(ys[0] * ys[2]) + np.sum(xs[0]) * len(xs)


def shallow_copy_of_a_dict(x):
    d = {"a": x * 2.0, "b": np.cos(x)}
    e = copy.copy(d)
    e["a"] = e["a"] * e["b"]
    return np.sum(e["a"]) + np.sum(d["a"] ** 2)


def shallow_copy_item_changed_in_place(x):
    xs = [x * 1.0, np.sin(x)]
    ys = copy.copy(xs)
    ys[0] += x  # changes xs[0] too, which is read below
    return np.sum(xs[0] * x)


@pytest.mark.parametrize("f", [deep_copy_written, deep_copy_of_params, shallow_copy_of_an_array_written,
                               shallow_copy_of_a_list_grown, shallow_copy_of_a_dict], ids=lambda f: f.__name__)
def test_copy_deepcopy_is_a_new_value_with_its_input_s_derivative(f):
    # was refused ("a function made at run time"); the copy is written in place, the input is not
    x = np.array([0.5, -1.2, 0.8])
    check_grads(f, (x,), order=2)
    np.testing.assert_allclose(ssad.grad(f)(x), numerical_gradient(f, x.copy()), rtol=1e-6, atol=1e-8)


def test_an_item_of_a_shallow_copy_changed_in_place_is_refused_where_the_original_is_read():
    # the copy holds the original's arrays: `ys[0] += x` changes `xs[0]`, which the lowering would not show
    with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
        ssad.grad(shallow_copy_item_changed_in_place)(np.array([0.5, -1.2]))
    assert "`xs` holds that item too" in caught.value.message
    assert caught.value.lineno == shallow_copy_item_changed_in_place.__code__.co_firstlineno + 3
