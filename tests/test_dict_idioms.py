"""Dicts and iterators as Python code uses them: a `defaultdict` filled in a loop, copies of
a dict (`d.copy()`, `dict(d)`, `{**d}`, `dict(d, k=v)`), a dict's keys walked or sorted,
constant tuple keys, `enumerate` and `zip` with an endless `itertools` iterator. Each is
differentiated in reverse and forward mode and at second order (reverse over reverse,
forward over reverse, a Hessian-vector product) against central differences and, where it
runs the program, autograd; or refused with a message naming the user's line."""

import inspect
import itertools
from collections import defaultdict
from itertools import count, cycle, repeat

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient
from tests import oracle

X = np.array([0.3, 0.7, -0.4])
PARAMS = {"w": np.array([0.5, -1.0, 0.3]), "b": 0.7}


def check_every_order(function, args, wrt=0):
    """check_grads in both modes at first and second order, and, for a vector argument, the
    gradient and the Hessian (forward over reverse) against central differences."""
    ssad.check_grads(function, args, wrt=wrt)
    ssad.check_grads(function, args, wrt=wrt, order=2)
    if not (isinstance(args[wrt], np.ndarray) and args[wrt].ndim == 1):
        return
    gradient = ssad.grad(function, wrt=wrt)

    def moved(z):
        return [*args[:wrt], z, *args[wrt + 1:]]

    np.testing.assert_allclose(gradient(*args), numerical_gradient(lambda z: function(*moved(z)), args[wrt]),
                               rtol=1e-6, atol=1e-9)
    by_differences = np.array([
        numerical_gradient(lambda z, i=i: gradient(*moved(z))[i], args[wrt]) for i in range(args[wrt].size)])
    np.testing.assert_allclose(ssad.hessian(function, wrt=wrt)(*args), by_differences, rtol=1e-5, atol=1e-7)


def agrees_with_autograd(function, args, runs=True):
    """autograd's first and second derivatives agree with ssad's; `runs`: autograd runs the
    program (it has no `copy` of a dict of its boxes, for one)."""
    verdicts = oracle.compare(function, args)
    failures = [f"[{v.status}] {v.check}\n{v.detail}" for v in verdicts if v.status in ("wrong", "crashed")]
    assert not failures, "\n\n".join(failures)
    statuses = {v.status for v in verdicts}
    assert "agree" in statuses if runs else statuses == {"autograd_cannot"}, [v.status for v in verdicts]


def line_of(function, text):
    """The line of `function`'s file that holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(lines) if text in line)


def refusal(call):
    with pytest.raises(ssad.SsadError) as caught:
        call()
    return caught.value


# ----- collections.defaultdict: a key read anew has a zero tangent (and adjoint)


def defaultdict_sum(x):
    acc = defaultdict(float)
    for v in x:
        acc["a"] += v * v
    return acc["a"]


def defaultdict_two_keys(x):
    acc = defaultdict(float)
    for i in range(3):
        acc[i % 2] += np.sin(x[i])
    return acc[0] * acc[1] + acc[5]


def defaultdict_of_arrays(x):
    acc = defaultdict(lambda: np.zeros(3))
    for k in range(2):
        acc["w"] = acc["w"] + x * k
        acc["z"] += x**2
    return np.sum(acc["w"] * acc["z"])


def defaultdict_walked(x):
    acc = defaultdict(int)
    for i, v in enumerate(x):
        acc[i > 0] += v
    total = 0.0
    for k in acc:
        total = total + acc[k] ** 2
    return total


def defaultdict_in_branches(x):
    acc = defaultdict(float)
    for i in range(3):
        if x[i] > 0:
            acc["pos"] += x[i]
        else:
            acc["neg"] += x[i] ** 2
    return acc["pos"] * acc["neg"]


def defaultdict_values(x):
    acc = defaultdict(float)
    acc["a"] += x[0]
    acc["b"] = acc["a"] * x[1]
    return sum(acc.values()) + acc["c"]


def defaultdict_copied(x):
    acc = defaultdict(float)
    acc["a"] += x[0]
    other = acc.copy()
    other["b"] += x[1] ** 2
    total = 0.0
    for k in acc:
        total = total + acc[k] * 10.0
    return total + other["b"] * other["a"] + len(acc)


def defaultdict_read_after_a_copy(x):
    acc = defaultdict(float)
    for i in range(3):
        acc[i % 2] += x[i] ** 2
    other = {**acc, 5: x[2]}
    plain = dict(acc)
    return other[0] * other[1] * other[5] + plain[1] + acc[7] + len(acc)


DEFAULTDICTS = [defaultdict_sum, defaultdict_two_keys, defaultdict_of_arrays, defaultdict_walked,
                defaultdict_in_branches, defaultdict_values, defaultdict_copied, defaultdict_read_after_a_copy]


@pytest.mark.parametrize("function", DEFAULTDICTS)
def test_a_defaultdict_filled_in_a_loop(function):
    check_every_order(function, (X,))


def test_the_tangent_of_a_defaultdict_sum_is_exact():
    x = np.array([0.3, 0.7])
    value, tangent = ssad.jvp(defaultdict_sum, (x,), (np.array([1.0, 0.0]),))
    assert value == pytest.approx(0.58) and tangent == pytest.approx(0.6)
    np.testing.assert_allclose(ssad.grad(defaultdict_sum)(x), 2 * x)
    np.testing.assert_allclose(ssad.hessian(defaultdict_sum)(x), 2 * np.eye(2))
    agrees_with_autograd(defaultdict_sum, (x,))


def adds_to_a_given_defaultdict(acc, x):
    acc["new"] += x * 2.0
    return acc["new"] * acc["old"]


def test_a_defaultdict_argument_reads_a_new_key_in_both_modes():
    def given():
        acc = defaultdict(float)
        acc["old"] = 1.5
        return acc

    d_acc, d_x = ssad.grad(adds_to_a_given_defaultdict, (0, 1))(given(), 0.3)
    assert d_acc == {"old": pytest.approx(0.6)} and d_x == pytest.approx(3.0)
    for tangent in ({"old": 1.0}, defaultdict(float, old=1.0)):  # the tangent of a key read anew is zero
        value, derivative = ssad.jvp(adds_to_a_given_defaultdict, (given(), 0.3), (tangent, 1.0))
        assert value == pytest.approx(0.9) and derivative == pytest.approx(2.0 * 1.5 + 0.6 * 1.0)


# ----- copies of a dict: d.copy(), dict(d), {**d}, dict(d, k=v), dict(**d), dict(pairs)


def copy_method(params):
    p = params.copy()
    return np.sum(p["w"] ** 2) * p["b"]


def copy_method_written(params):
    p = params.copy()
    p["w"] = p["w"] * p["b"]
    return np.sum(np.sin(p["w"]) ** 2) + p["b"] ** 3


def dict_of_a_dict(params):
    p = dict(params)
    p["w"] = p["w"] * params["b"]
    return np.sum(np.sin(p["w"]) ** 2) + p["b"] ** 3


def spread_alone(params):
    p = {**params}
    return np.sum(p["w"] ** 2) * p["b"]


def spread_alone_written(params):
    p = {**params}
    p["b"] = p["b"] * 2.0
    return np.sum(p["w"] ** 2) * p["b"] + params["b"]


def dict_with_keywords(params):
    p = dict(params, b=params["b"] * 2.0, c=3.0)
    return np.sum(p["w"] ** 2) * p["b"] * p["c"]


def dict_of_keywords_spread(params):
    p = dict(**params)
    return np.sum(p["w"] ** 2) * p["b"]


def dict_of_pairs(params):
    p = dict([("w", params["w"] * 2.0), ("b", params["b"]), ("w", params["w"] ** 2)])
    return np.sum(np.sin(p["w"])) * p["b"]


def dict_of_items(params):
    p = dict(sorted(params.items()))
    return np.sum(np.sin(p["w"])) * p["b"]


def dict_copy_walked(params):
    p = dict(params)
    for k in sorted(p):
        p[k] = p[k] * 1.5
    return np.sum(p["w"] ** 2) * p["b"]


COPIES = [copy_method, copy_method_written, dict_of_a_dict, spread_alone, spread_alone_written, dict_with_keywords,
          dict_of_keywords_spread, dict_of_pairs, dict_of_items, dict_copy_walked]


@pytest.mark.parametrize("function", COPIES)
def test_a_copy_of_a_dict(function):
    check_every_order(function, (PARAMS,))
    agrees_with_autograd(function, (PARAMS,), runs=function not in (copy_method, copy_method_written))


def test_the_tangent_of_a_dict_copy_is_a_dict():
    params = {"w": np.array([0.5, -1.0])}

    def f(params):
        p = params.copy()
        return np.sum(p["w"] ** 2)

    value, tangent = ssad.jvp(f, (params,), ({"w": np.array([1.0, 1.0])},))
    assert value == pytest.approx(1.25) and tangent == pytest.approx(-1.0)
    direction = {"w": np.array([1.0, -2.0])}
    np.testing.assert_allclose(ssad.hvp(f)(params, direction)["w"], 2.0 * direction["w"])


def list_copy_written(x):
    xs = [x[0], x[1] * 2.0, x]
    ys = xs.copy()
    ys[0] = ys[0] * 3.0
    return ys[0] * xs[0] + ys[1] + np.sum(ys[2] ** 2)


def array_copy_row_changed(x):
    y = x.copy()
    row = y[0]
    row *= 2.0
    return np.sum(x**2) * 0.5 + np.sum(np.sin(x[1]))


def test_a_copy_of_a_list_or_an_array():
    check_every_order(list_copy_written, (X,))
    check_every_order(array_copy_row_changed, (np.array([[0.5, -1.0], [2.0, 3.0]]),))


# Python's `op=` on an item changes it in place: a dict's or a list's copy holds the same
# items, so the original, read afterwards, sees the change; ssad's lowering would not.


def copy_item_changed_by_augmented(params):
    p = params.copy()
    p["w"] *= 2.0  # <- here
    return np.sum(params["w"] ** 2) * p["b"]


def spread_item_changed_by_augmented(params):
    p = {**params}
    p["w"] *= 2.0  # <- here
    return np.sum(params["w"] ** 2) * p["b"]


def keyword_copy_item_changed_by_augmented(params):
    p = dict(params, b=1.0)
    p["w"] *= 2.0  # <- here
    return np.sum(params["w"] ** 2) * p["b"]


def item_of_a_copy_written(params):
    p = params.copy()
    w = p["w"]
    w[0] = w[0] * 5.0  # <- here
    return np.sum(params["w"] ** 2)


def list_copy_item_changed_by_augmented(xs):
    ys = xs.copy()
    ys[0] *= 2.0  # <- here
    return np.sum(xs[0] ** 2) + np.sum(ys[1])


@pytest.mark.parametrize("function, argument, names", [
    (copy_item_changed_by_augmented, PARAMS, "`.copy()` of `params`"),
    (spread_item_changed_by_augmented, PARAMS, "`params` holds that item too"),
    (keyword_copy_item_changed_by_augmented, PARAMS, "`params` holds that item too"),
    (item_of_a_copy_written, PARAMS, "an item of `p`, a `.copy()` of `params`"),
    (list_copy_item_changed_by_augmented, [np.array([0.5, -1.0]), np.array([2.0, 3.0])], "`.copy()` of `xs`"),
])
def test_an_item_shared_with_the_copied_dict_changed_in_place_is_refused(function, argument, names):
    for call in (lambda: ssad.grad(function)(argument), lambda: ssad.jvp(function, (argument,), (argument,))):
        error = refusal(call)
        assert isinstance(error, ssad.UnsupportedSyntaxError)
        assert names in error.message and error.lineno == line_of(function, "# <- here")


# ----- a dict's keys walked: they carry no gradient, at any order


def sorted_keys_into_a_dict(params):
    state = {}
    for name in sorted(params):
        state[name] = params[name] ** 2
    return np.sum(state["a"])


def listed_keys_into_a_dict(params):
    state = {}
    for name in list(params):
        state[name] = params[name] ** 2
    return np.sum(state["a"]) * np.sum(state["b"])


def keys_sorted_backwards(params):
    state = {}
    for name in sorted(params, reverse=True):
        state[name] = params[name] ** 2
    return np.sum(state["a"]) * np.sum(np.sin(state["b"]))


def keys_as_a_tuple_and_unpacked(params):
    keys = tuple(params)
    first, second = params
    return np.sum(params[keys[0]] ** 3) + np.sum(params[second] ** 2) * np.sum(params[first])


def keys_zipped_and_enumerated(params):
    total = 0.0
    for k, c in zip(params, [1.0, 2.0], strict=False):
        total = total + c * np.sum(params[k] ** 2)
    for i, k in list(enumerate(params)):
        total = total + (i + 1) * np.sum(np.sin(params[k]))
    return total


def product_of_keywords(**kwargs):
    total = 1.0
    for k in sorted(kwargs):
        total = total * kwargs[k]
    return total


def keywords_sorted_in_a_helper(x):
    return product_of_keywords(a=x[0], b=x[1]) * x[2]


def product_of_values(values):
    total = 1.0
    for k in sorted(values):
        total = total * values[k]
    return total


def dict_sorted_in_a_helper(x):
    return product_of_values({"a": x[0], "b": x[1] * x[2]})


KEYED = {"a": np.array([0.2, 0.9]), "b": np.array([-0.4, 0.6])}


@pytest.mark.parametrize("function", [sorted_keys_into_a_dict, listed_keys_into_a_dict, keys_sorted_backwards,
                                      keys_as_a_tuple_and_unpacked, keys_zipped_and_enumerated])
def test_keys_of_a_dict_argument_at_second_order(function):
    check_every_order(function, (KEYED,))
    gradient = ssad.grad(function)
    v = {"a": np.array([1.0, -0.5]), "b": np.array([0.3, 2.0])}
    # reverse over reverse (the gradient of <gradient, v>), forward over reverse and the
    # Hessian-vector product, against central differences of ssad's gradient along v
    step = 1e-6
    moved = [{k: KEYED[k] + s * step * v[k] for k in KEYED} for s in (1, -1)]
    expected = {k: (gradient(moved[0])[k] - gradient(moved[1])[k]) / (2 * step) for k in KEYED}
    reverse = ssad.grad(lambda p: np.sum(gradient(p)["a"] * v["a"]) + np.sum(gradient(p)["b"] * v["b"]))(KEYED)
    forward = ssad.jvp(gradient, (KEYED,), (v,))[1]
    for got in (reverse, forward, ssad.hvp(function)(KEYED, v)):
        for k in KEYED:
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("function", [keywords_sorted_in_a_helper, dict_sorted_in_a_helper])
def test_keys_sorted_in_a_helper_at_second_order(function):
    check_every_order(function, (X,))
    agrees_with_autograd(function, (X,))


# ----- a dict display with constant tuple (and negative) keys


def tuple_keys_index(x):
    idx = {(0, 1): 0, (1, 0): 1}
    return x[idx[(0, 1)]] * x[idx[(1, 0)]]


def tuple_keys_hold_values(x):
    d = {(0, 1): x[0] ** 2, (1, 0): np.sin(x[1]), -1: x[2], ("a", (1, -2.5)): x}
    return d[(0, 1)] * d[1, 0] + d[-1] ** 3 + np.sum(d["a", (1, -2.5)] ** 2)


def tuple_key_merged(x):
    base = {"a": x[0]}
    d = {**base, (2, 3): x[1] * 2.0}
    total = 0.0
    for key in d:
        total = total + d[key] ** 2
    return total


@pytest.mark.parametrize("function", [tuple_keys_index, tuple_keys_hold_values, tuple_key_merged])
def test_constant_tuple_keys(function):
    check_every_order(function, (X,))
    agrees_with_autograd(function, (X,))


def variable_key(x):
    key = "a"
    d = {key: x}  # <- here
    return np.sum(d["a"])


def test_a_key_computed_where_the_code_runs_is_refused_saying_what_to_write():
    error = refusal(lambda: ssad.grad(variable_key)(X))
    assert isinstance(error, ssad.UnsupportedSyntaxError)
    assert "a dict display needs constant keys" in error.message and "{(0, 1): v}" in error.message
    assert error.lineno == line_of(variable_key, "# <- here")


# ----- zip with an endless iterator stops at the shortest sequence, as zip does


def zip_count(x):
    acc = 0.0
    for k, v in zip(itertools.count(1), x):
        acc += k * v**2
    return acc


def zip_repeat(x):
    acc = 0.0
    for v, c in zip(x, repeat(2.5)):
        acc = acc + c * np.sin(v)
    return acc


def zip_cycle(x):
    acc = 0.0
    for v, s in zip(x, cycle([1.0, -1.0])):
        acc = acc + s * v**3
    return acc


def count_until_break(x):
    acc = 0.0
    for i in count():
        if i >= 2:
            break
        acc = acc + np.exp(x[i]) * (i + 1)
    return acc


def zip_float_count_enumerated(x):
    acc = 0.0
    for j, (k, v) in enumerate(zip(count(0.5, 0.25), x)):
        acc = acc + k * v**2 + j * v
    return acc


def zip_count_in_a_generator_expression(x):
    return sum(k * v**2 for k, v in zip(count(1), x))


def zip_count_listed(x):
    pairs = list(zip(count(1), x))
    return pairs[0][1] * pairs[2][1] * pairs[2][0]


def zip_count_held_in_a_name(x):
    c = count(2)
    acc = 0.0
    for k, v in zip(c, x, strict=False):
        acc = acc + k * v**2
    return acc


def zip_count_into_a_dict(x):
    d = dict(zip(count(), x))
    return d[0] * d[2] ** 2


def zip_empty_cycle(x):
    acc = 0.0
    for _, v in zip(cycle([]), x):
        acc = acc + v
    return acc + np.sum(x**2)


ENDLESS = [zip_count, zip_repeat, zip_cycle, count_until_break, zip_float_count_enumerated,
           zip_count_in_a_generator_expression, zip_count_listed, zip_count_held_in_a_name, zip_count_into_a_dict,
           zip_empty_cycle]


@pytest.mark.parametrize("function", ENDLESS)
def test_zip_with_an_endless_iterator(function):
    check_every_order(function, (X,))
    agrees_with_autograd(function, (X,))


def test_zip_with_count_is_exact():
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(ssad.grad(zip_count)(x), [2 * 1 * x[0], 2 * 2 * x[1]])
    assert ssad.jvp(zip_count, (x,), (np.array([1.0, 0.0]),))[1] == pytest.approx(2 * x[0])


def noise(x):
    while True:  # <- here
        x = np.sin(x)
        yield x


def zip_endless_generator(x):
    acc = 0.0
    for k, v in zip(range(3), noise(x), strict=False):
        acc = acc + k * np.sum(v**2)
    return acc


def test_a_generator_that_never_ends_is_refused_where_it_loops():
    for call in (lambda: ssad.grad(zip_endless_generator)(X), lambda: ssad.jvp(zip_endless_generator, (X,), (X,))):
        error = refusal(call)
        assert isinstance(error, ssad.UnsupportedSyntaxError) and "never ends" in error.message
        assert error.lineno == line_of(noise, "# <- here")


# ----- enumerate as a value; iterators of itertools refused saying what to write instead


def enumerate_listed(x):
    pairs = list(enumerate(x))
    q = list(enumerate(x, start=2))
    return pairs[1][1] * pairs[2][0] + q[2][0] * q[2][1] ** 2


def enumerate_into_a_dict(x):
    d = dict(enumerate(x, 1))
    return d[1] * d[3] ** 2


def enumerate_sorted_by_value(x):
    order = sorted(enumerate(x), key=lambda p: p[1])
    return order[0][1] * 3.0 + order[-1][1] ** 2 + order[0][0]


@pytest.mark.parametrize("function", [enumerate_listed, enumerate_into_a_dict, enumerate_sorted_by_value])
def test_enumerate_as_a_value(function):
    check_every_order(function, (X,))
    agrees_with_autograd(function, (X,))


def chained(x):
    total = 0.0
    for v in itertools.chain([x[0]], [x[1], x[2]]):  # <- here
        total = total + v**2
    return total


def sliced(x):
    return sum(itertools.islice(x, 1, 3))  # <- here


def paired(x):
    total = 0.0
    for a, b in itertools.pairwise(x):  # <- here
        total = total + a * b
    return total


def accumulated(x):
    return list(itertools.accumulate(x))[2]  # <- here


@pytest.mark.parametrize("function, advice", [
    (chained, "join lists with `a + b`"),
    (sliced, "`xs[start:stop:step]`"),
    (paired, "`zip(xs, xs[1:])`"),
    (accumulated, "np.cumsum"),
])
def test_an_iterator_of_itertools_is_refused_saying_what_to_write(function, advice):
    for call, what in ((lambda: ssad.grad(function)(X), "gradients"), (lambda: ssad.jvp(function, (X,), (X,)), "tangents")):
        error = refusal(call)
        assert isinstance(error, ssad.MissingRuleError)
        assert f"makes an iterator from values that carry {what}" in error.message and advice in error.message
        assert "namedtuple" not in error.message and error.lineno == line_of(function, "# <- here")


def joined_instead(x):
    a, b = [x[0]], [x[1], x[2]]
    total = 0.0
    for v in a + b:
        total = total + v**2
    for xs in (a, b):
        for v in xs:
            total = total + np.sin(v)
    return total


def sliced_instead(x):
    xs = [x[0], x[1], x[2]]
    return sum(xs[1:3]) * np.sum(x[::2])


def paired_instead(x):
    total = 0.0
    for a, b in zip(x, x[1:], strict=False):
        total = total + a * b
    return total


def accumulated_instead(x):
    total = 0.0
    sums = []
    for v in x:
        total = total + v
        sums.append(total)
    return sums[1] * sums[2] + np.sum(np.cumsum(x) ** 2)


@pytest.mark.parametrize("function", [joined_instead, sliced_instead, paired_instead, accumulated_instead])
def test_what_the_refusals_advise_is_differentiated(function):
    check_every_order(function, (X,))
