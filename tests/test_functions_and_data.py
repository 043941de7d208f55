"""Reverse mode through user functions, closures and structured data, against finite differences.

Every float leaf of every argument (arrays and floats inside dicts, lists,
tuples, namedtuples, dataclasses and plain objects included) gets its gradient
compared with central differences computed here, one leaf element at a time,
by rebuilding the argument with that element moved. The gradient must also
have the structure of the argument.
"""

import contextlib
import copy
import dataclasses
import numbers
import types
from unittest import mock

import numpy as np
import pytest

import ssad

from .conftest import case_ids
from .programs import functions

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7


IDS = case_ids(functions.CASES)


# ----- structures: leaves, paths, rebuilding -----


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_dataclass_instance(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def _is_plain_object(x):
    return (
        hasattr(x, "__dict__")
        and not _is_dataclass_instance(x)
        and not isinstance(x, (np.ndarray, np.generic, numbers.Number, str, type, types.ModuleType))
        and not callable(x)
    )


def _is_float_leaf(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def _children(x):
    """[(step, child)] for a container or object (a step is ("item", key) or ("attr", name)), else None."""
    if isinstance(x, dict):
        return [(("item", k), v) for k, v in x.items()]
    if isinstance(x, (tuple, list)):
        return [(("item", i), v) for i, v in enumerate(x)]
    if _is_dataclass_instance(x):
        return [(("attr", f.name), getattr(x, f.name)) for f in dataclasses.fields(x)]
    if _is_plain_object(x):
        return [(("attr", name), v) for name, v in vars(x).items()]
    return None


def float_leaves(x, path=()):
    """[(path, leaf)] for every float or float array inside `x`, depth first."""
    if _is_float_leaf(x):
        return [(path, x)]
    children = _children(x)
    if children is None:
        return []
    leaves = []
    for step, child in children:
        leaves.extend(float_leaves(child, path + (step,)))
    return leaves


def get_at(x, path):
    for kind, key in path:
        x = x[key] if kind == "item" else getattr(x, key)
    return x


def replace_at(x, path, value):
    """A copy of `x` (same types, other leaves shared) with the leaf at `path` set to `value`."""
    if not path:
        return value
    (kind, key), rest = path[0], path[1:]
    if kind == "attr":
        new = copy.copy(x)
        object.__setattr__(new, key, replace_at(getattr(x, key), rest, value))
        return new
    if isinstance(x, dict):
        new = dict(x)
        new[key] = replace_at(x[key], rest, value)
        return new
    items = list(x)
    items[key] = replace_at(x[key], rest, value)
    if _is_namedtuple(x):
        return type(x)(*items)
    return type(x)(items)


def structured_positions(args):
    """Positions of the arguments that hold at least one float leaf."""
    return [i for i, a in enumerate(args) if float_leaves(a)]


def _is_int_or_bool(x):
    return isinstance(x, (bool, int, np.integer, np.bool_))


def _assert_no_gradient(gradient, where):
    assert gradient is None or (np.ndim(gradient) == 0 and gradient == 0), (
        f"{where}: expected no gradient (None or 0), got {gradient!r}"
    )


def assert_gradient_structure(gradient, value, where):
    """The gradient of `value` has its structure: same containers, types, shapes and dtypes."""
    if isinstance(value, bool) or (not isinstance(value, float) and _is_int_or_bool(value)):
        _assert_no_gradient(gradient, where)
    elif isinstance(value, float):
        assert type(gradient) is float, f"{where}: gradient of a float is {type(gradient).__name__}"
    elif isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            assert type(gradient) is np.ndarray, f"{where}: gradient of an array is {type(gradient).__name__}"
            assert gradient.shape == value.shape, f"{where}: shape {gradient.shape}, expected {value.shape}"
            assert gradient.dtype == value.dtype, f"{where}: dtype {gradient.dtype}, expected {value.dtype}"
        else:
            assert gradient is None or not np.any(gradient), f"{where}: non-float array got gradient {gradient!r}"
    elif isinstance(value, str) or callable(value):
        assert gradient is None, f"{where}: non-numeric leaf got gradient {gradient!r}"
    elif _is_namedtuple(value) or isinstance(value, (tuple, list)):
        assert type(gradient) is type(value), (
            f"{where}: gradient is {type(gradient).__name__}, expected {type(value).__name__}"
        )
        assert len(gradient) == len(value), f"{where}: {len(gradient)} items, expected {len(value)}"
        for i, (g, v) in enumerate(zip(gradient, value, strict=True)):
            assert_gradient_structure(g, v, f"{where}[{i}]")
    elif isinstance(value, dict):
        assert type(gradient) is dict, f"{where}: gradient is {type(gradient).__name__}, expected dict"
        assert set(gradient) == set(value), f"{where}: keys {sorted(gradient)}, expected {sorted(value)}"
        for k, v in value.items():
            assert_gradient_structure(gradient[k], v, f"{where}[{k!r}]")
    elif _is_dataclass_instance(value):
        assert type(gradient) is type(value), (
            f"{where}: gradient is {type(gradient).__name__}, expected {type(value).__name__}"
        )
        for field in dataclasses.fields(value):
            assert_gradient_structure(getattr(gradient, field.name), getattr(value, field.name), f"{where}.{field.name}")
    elif _is_plain_object(value):
        assert type(gradient) is types.SimpleNamespace, (
            f"{where}: gradient of a {type(value).__name__} is {type(gradient).__name__}, expected SimpleNamespace"
        )
        assert set(vars(gradient)) == set(vars(value)), (
            f"{where}: attributes {sorted(vars(gradient))}, expected {sorted(vars(value))}"
        )
        for name, v in vars(value).items():
            assert_gradient_structure(getattr(gradient, name), v, f"{where}.{name}")
    else:
        raise AssertionError(f"{where}: the test does not know values of type {type(value).__name__}")


def assert_same_value(now, then, where):
    """Deep equality of two argument values (arrays elementwise, objects attribute by attribute)."""
    if isinstance(then, np.ndarray):
        assert isinstance(now, np.ndarray) and now.shape == then.shape, f"{where}: array replaced"
        assert np.array_equal(now, then), f"{where}: array modified in place"
        return
    children = _children(then)
    if children is None:
        assert now is then or now == then, f"{where}: {then!r} became {now!r}"
        return
    now_children = _children(now)
    assert now_children is not None and len(now_children) == len(children), f"{where}: structure changed"
    for (step, child), (now_step, now_child) in zip(children, now_children, strict=True):
        assert step == now_step, f"{where}: {step} became {now_step}"
        assert_same_value(now_child, child, f"{where}{_format_path((step,))}")


def _format_path(path):
    return "".join(f"[{key!r}]" if kind == "item" else f".{key}" for kind, key in path)


# ----- finite differences -----


class _HeldStops:
    """Stands in for ssad.stop_gradient: records what it is given, then hands the same values back.

    Finite differences of a function with `stop_gradient` must treat the stopped
    values as constants: they are recorded at the unperturbed point and replayed,
    in call order, at every perturbed point.
    """

    def __init__(self):
        self.values = []
        self.replaying = False
        self.count = 0

    def __call__(self, value):
        if not self.replaying:
            self.values.append(copy.deepcopy(value))
            return value
        held = self.values[self.count]
        self.count += 1
        return copy.deepcopy(held)


@contextlib.contextmanager
def _evaluator(function, args):
    """A function of the argument list that evaluates `function` with stopped values held fixed."""
    held = _HeldStops()
    with mock.patch.object(ssad, "stop_gradient", held):
        function(*args)
        held.replaying = True

        def evaluate(moved):
            held.count = 0
            value = float(function(*moved))
            assert held.count == len(held.values), f"{function.__name__}: stop_gradient called a different number of times"
            return value

        yield evaluate


def _central_difference(scalar, leaf, eps):
    if isinstance(leaf, float):
        return (scalar(leaf + eps) - scalar(leaf - eps)) / (2 * eps)
    result = np.zeros(leaf.shape)
    for index in np.ndindex(leaf.shape):
        up = leaf.copy()
        up[index] += eps
        down = leaf.copy()
        down[index] -= eps
        result[index] = (scalar(up) - scalar(down)) / (2 * eps)
    return result


def finite_difference_leaves(function, args, position, eps=EPS):
    """{path: central differences} for every float leaf of args[position], each computed on its own."""
    result = {}
    with _evaluator(function, args) as evaluate:
        for path, leaf in float_leaves(args[position]):

            def scalar(moved_leaf, path=path):
                moved = list(args)
                moved[position] = replace_at(args[position], path, moved_leaf)
                return evaluate(moved)

            result[path] = _central_difference(scalar, leaf, eps)
    return result


def assert_leaves_match(function, args, position, gradient):
    name = f"{function.__name__} argument {position}"
    for path, expected in finite_difference_leaves(function, args, position).items():
        where = f"{name}{_format_path(path)}"
        got = np.asarray(get_at(gradient, path), dtype=np.float64)
        expected = np.asarray(expected, dtype=np.float64)
        assert got.shape == expected.shape, f"{where}: gradient has shape {got.shape}, expected {expected.shape}"
        assert np.all(np.isfinite(got)), f"{where}: gradient is not finite: {got}"
        assert np.all(np.isfinite(expected)), f"{where}: finite differences are not finite; move the test point"
        error = np.abs(got - expected)
        bound = ATOL + RTOL * np.abs(expected)
        assert np.all(error <= bound), (
            f"{where}: finite differences give {expected!r}, got {got!r}"
        )


# ----- every case -----


@pytest.mark.parametrize("function, args", functions.CASES, ids=IDS)
def test_gradient_matches_finite_differences(function, args):
    for position in structured_positions(args):
        gradient = ssad.grad(function, wrt=position)(*args)
        assert_gradient_structure(gradient, args[position], f"{function.__name__} argument {position}")
        assert_leaves_match(function, args, position, gradient)


@pytest.mark.parametrize("function, args", functions.CASES, ids=IDS)
def test_value_and_grad_leave_arguments_unchanged(function, args):
    positions = tuple(structured_positions(args))
    before = copy.deepcopy(args)
    expected = function(*args)
    for position, (now, then) in enumerate(zip(args, before, strict=True)):
        assert_same_value(now, then, f"{function.__name__} argument {position} (the function itself)")
    value, gradients = ssad.value_and_grad(function, wrt=positions)(*args)
    for position, (now, then) in enumerate(zip(args, before, strict=True)):
        assert_same_value(now, then, f"{function.__name__} argument {position} (value_and_grad)")
    assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert len(gradients) == len(positions)
    for position, gradient in zip(positions, gradients, strict=True):
        assert_gradient_structure(gradient, args[position], f"{function.__name__} argument {position}")
    gradient = ssad.grad(function, wrt=positions)(*args)
    for position, (now, then) in enumerate(zip(args, before, strict=True)):
        assert_same_value(now, then, f"{function.__name__} argument {position} (grad)")
    assert len(gradient) == len(positions)


INT_CASES = [
    (function, args, position)
    for function, args in functions.CASES
    for position, a in enumerate(args)
    if _is_int_or_bool(a)
]


@pytest.mark.parametrize(
    "function, args, position",
    INT_CASES,
    ids=[f"{function.__name__}-{position}-{args[position]!r}" for function, args, position in INT_CASES],
)
def test_integer_and_bool_arguments_get_no_gradient(function, args, position):
    _assert_no_gradient(ssad.grad(function, wrt=position)(*args), f"{function.__name__} argument {position}")
    floats = tuple(structured_positions(args))
    together = ssad.grad(function, wrt=(position,) + floats)(*args)
    _assert_no_gradient(together[0], f"{function.__name__} argument {position} (with the float arguments)")
    for p, gradient in zip(floats, together[1:], strict=True):
        assert_leaves_match(function, args, p, gradient)


# ----- wrt by name -----


def test_wrt_by_name_for_dict_argument():
    args = (functions.XENT_PARAMS, functions.X54, functions.XENT_Y)
    by_name = ssad.grad(functions.mlp_softmax_xent, wrt="params")(*args)
    assert_gradient_structure(by_name, args[0], "params")
    assert_leaves_match(functions.mlp_softmax_xent, args, 0, by_name)
    by_position = ssad.grad(functions.mlp_softmax_xent, wrt=0)(*args)
    for key in args[0]:
        np.testing.assert_array_equal(by_name[key], by_position[key])


def test_wrt_by_name_for_dataclass_and_object():
    args = (functions.LAYER, functions.V4)
    gradient = ssad.grad(functions.dataclass_params, wrt="p")(*args)
    assert_gradient_structure(gradient, args[0], "p")
    assert_leaves_match(functions.dataclass_params, args, 0, gradient)
    args = (functions.BOX, functions.POINTS)
    gradient = ssad.grad(functions.plain_object_attributes, wrt="box")(*args)
    assert_gradient_structure(gradient, args[0], "box")
    assert_leaves_match(functions.plain_object_attributes, args, 0, gradient)


def test_tuple_wrt_mixing_dict_and_array():
    args = (functions.XENT_PARAMS, functions.X54, functions.XENT_Y)
    d_params, d_X = ssad.grad(functions.mlp_softmax_xent, wrt=("params", "X"))(*args)
    assert_gradient_structure(d_params, args[0], "params")
    assert_gradient_structure(d_X, args[1], "X")
    assert_leaves_match(functions.mlp_softmax_xent, args, 0, d_params)
    assert_leaves_match(functions.mlp_softmax_xent, args, 1, d_X)
    value, (g_params, g_X) = ssad.value_and_grad(functions.mlp_softmax_xent, wrt=("params", 1))(*args)
    assert value == pytest.approx(functions.mlp_softmax_xent(*args), rel=1e-12)
    np.testing.assert_allclose(g_X, d_X, rtol=1e-12)
    for key in args[0]:
        np.testing.assert_allclose(g_params[key], d_params[key], rtol=1e-12)


def test_tuple_wrt_mixing_namedtuple_and_array():
    args = (functions.AFFINE, functions.V3)
    d_p, d_x = ssad.grad(functions.namedtuple_params, wrt=("p", "x"))(*args)
    assert_gradient_structure(d_p, args[0], "p")
    assert_gradient_structure(d_x, args[1], "x")
    assert_leaves_match(functions.namedtuple_params, args, 0, d_p)
    assert_leaves_match(functions.namedtuple_params, args, 1, d_x)


# ----- the corpus and the generated code -----


def test_corpus_size():
    corpus = {function for function, _ in functions.CASES}
    assert len(corpus) >= 45
    assert len(functions.CASES) >= 70
    assert len(set(IDS)) == len(IDS)
    for (function, args), case_id in zip(functions.CASES, IDS, strict=True):
        assert callable(function), case_id
        assert isinstance(args, tuple), case_id
        assert structured_positions(args), f"{case_id} has no float leaf to differentiate"


def test_generated_source_calls_forward_and_backward_of_user_function():
    source = ssad.show(functions.two_layer_tanh).source
    assert "forward_affine" in source
    assert "backward_affine" in source
    source = ssad.show(functions.mutual_recursion).source
    for name in ("forward_descend_even", "backward_descend_even", "forward_descend_odd", "backward_descend_odd"):
        assert name in source


def test_generated_source_of_closure():
    assert "closure(" in ssad.show(functions.closure_used_twice).source
    assert "closure(" in ssad.show(functions.closure_used_twice, wrt="a").source


def test_constructing_a_user_class_inside_is_refused_with_advice():
    with pytest.raises(ssad.MissingRuleError, match="namedtuple or a dataclass"):
        ssad.grad(functions.object_built_inside)


# ----- *args -----


def sum_of_squares(*xs):
    total = 0.0
    for v in xs:
        total = total + np.sum(v * v)
    return total


def weighted_sines(w, *xs):
    return w * sum(np.sum(np.sin(v)) for v in xs) + sum_of_squares(*xs)


def calls_with_many_arguments(a, b, c):
    return sum_of_squares(a, b * 2.0, c) + weighted_sines(0.5, a, c)


def unpacks_into_named_parameters(a, b):
    pair = (a, b)
    return two_named(*pair)


def two_named(p, q):
    return np.sum(p * q)


def test_varargs_parameter_gets_a_tuple_gradient_and_vjp_one_per_argument():
    a, b = np.array([0.1, 0.2]), np.array([0.3, -0.4])
    gradient = ssad.grad(sum_of_squares, wrt="xs")(a, b)
    assert isinstance(gradient, tuple) and len(gradient) == 2
    np.testing.assert_allclose(gradient[0], 2 * a)
    _, pullback = ssad.vjp(sum_of_squares, a, b)
    d_a, d_b = pullback(1.0)
    np.testing.assert_allclose(d_b, 2 * b)


def test_calls_collecting_and_passing_on_varargs():
    rng = np.random.default_rng(21)
    args = (rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3))
    ssad.check_grads(calls_with_many_arguments, args, modes=("reverse",))


def test_unpacking_a_tuple_into_named_parameters_spreads_it():
    rng = np.random.default_rng(22)
    ssad.check_grads(unpacks_into_named_parameters, (rng.standard_normal(3), rng.standard_normal(3)), order=2)
