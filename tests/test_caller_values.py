"""What the caller passes stays the caller's, and what ssad cannot differentiate is refused
at the caller's line.

- A function that writes into an array held in a dict, list or object argument (through
  an item, a field or a view of it) is differentiated on a copy deep enough that the
  caller's values never change, whether or not the argument is in `wrt`, in both modes and
  at second order (the gradient was 3.0 and then 4.0 on the same call, and `d["b"]` changed).
- `y[k] += v` on a list or dict changes the item in place in Python; where something else
  holds that item (the same array twice in the list, a name read afterwards, the list or
  dict `y` was copied from by `list(xs)`, `dict(d)`, `xs[:]` or a comprehension) it is
  refused, never lowered as a new value (the gradient was 3.0 for 8.0, and 0.6 for 1.2).
- Named fields of linear algebra results in forward mode (`slogdet(A).logabsdet` raised
  AttributeError).
- `det` at an exactly singular matrix: its derivative is the adjugate (LinAlgError before).
- Refusals of rule keywords and modes name the user's line and say what to write.
"""

import collections
import dataclasses
import inspect
import types

import gast
import numpy as np
import pytest
import scipy.linalg

import ssad
from ssad.frontend.builders import walk
from ssad.runtime.structure import owned_argument, zeros_like_value
from ssad.testing import numerical_gradient

X0 = 0.7


def line_of(function, text):
    """The line number in this file of the first line of `function` that holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(lines) if text in line)


def snapshot(value):
    """A deep copy of `value` to compare with later, whatever it holds."""
    return repr(vars(value)) if hasattr(value, "__dict__") else repr(value)


# ----- Arguments the function writes into, through an item, a field or a view -----


def writes_through_a_dict_item(x, d):
    b = d["b"]
    b[0] = b[0] + x * x
    return np.sum(np.sin(b) * b)


def writes_a_slice_of_a_dict_item(x, d):
    v = d["b"][1:]
    v *= x
    return np.sum(v ** 2)


def writes_through_a_nested_dict(x, d):
    inner = d["a"]
    b = inner["b"]
    b[2] = x * b[2]
    return np.sum(b ** 2)


def adds_a_key(x, d):
    d["c"] = x * 2.0
    return d["c"] * np.sum(d["b"])


def writes_through_a_field(x, obj):
    w = obj.w
    w[0] = w[0] * x
    return np.sum(w ** 3)


def adds_to_a_list_item(x, xs):
    xs[0] += x * np.array([1.0, 2.0])
    return np.sum(xs[0] * xs[1]) + np.sum(np.cos(xs[0]))


def multiplies_a_matrix_in_a_list(x, xs):
    xs[1] *= x
    return np.sum(np.sin(xs[0] @ xs[1]))


def appends_to_a_list(x, xs):
    xs.append(x * 2.0)
    return sum(xs) * x


@dataclasses.dataclass
class Weights:
    w: np.ndarray


class Plain:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])


CALLER_VALUES = [
    (writes_through_a_dict_item, lambda: {"b": np.array([1.0, 2.0, 3.0])}),
    (writes_a_slice_of_a_dict_item, lambda: {"b": np.array([1.0, 2.0, 3.0]), "c": np.array([0.5, 1.5])}),
    (writes_through_a_nested_dict, lambda: {"a": {"b": np.array([1.0, 2.0, 3.0])}}),
    (adds_a_key, lambda: {"b": np.array([1.0, 2.0, 3.0])}),
    (writes_through_a_field, lambda: types.SimpleNamespace(w=np.array([1.0, 2.0, 3.0]))),
    (writes_through_a_field, lambda: Weights(np.array([1.0, 2.0, 3.0]))),
    (writes_through_a_field, Plain),
    (adds_to_a_list_item, lambda: [np.array([1.0, 2.0]), np.array([3.0, 4.0])]),
    (multiplies_a_matrix_in_a_list, lambda: [np.eye(2) + 1.0, np.array([[2.0, 0.5], [0.0, 1.0]])]),
    (appends_to_a_list, lambda: [1.0, 2.0]),
]
CALLER_IDS = [f"{f.__name__}-{make().__class__.__name__}" for f, make in CALLER_VALUES]


def _derivatives(f, made):
    """{name: (call, its exact value)}: every API function, each against central differences."""
    first = numerical_gradient(lambda x: f(x, made()), X0)
    second = numerical_gradient(lambda x: ssad.grad(f)(x, made()), X0)
    return {
        "grad": (lambda a: ssad.grad(f)(X0, a), first),
        "grad wrt both": (lambda a: ssad.grad(f, wrt=(0, 1))(X0, a)[0], first),
        "value_and_grad": (lambda a: ssad.value_and_grad(f)(X0, a)[1], first),
        "vjp": (lambda a: ssad.vjp(f, X0, a)[1](1.0)[0], first),
        "jvp": (lambda a: ssad.jvp(f, (X0, a), (1.0, zeros_like_value(a)))[1], first),
        "grad of grad": (lambda a: ssad.grad(ssad.grad(f))(X0, a), second),
        "hessian": (lambda a: ssad.hessian(f)(X0, a), second),
    }


@pytest.mark.parametrize("f, made", CALLER_VALUES, ids=CALLER_IDS)
def test_the_caller_values_stay_as_they_were_and_the_derivatives_are_exact(f, made):
    for name, (call, expected) in _derivatives(f, made).items():
        argument = made()
        before = snapshot(argument)
        first, again = call(argument), call(argument)
        assert snapshot(argument) == before, f"{name} changed the caller's argument"
        np.testing.assert_allclose(first, expected, rtol=1e-5, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(again, first, rtol=0, atol=0, err_msg=f"{name}, called again")


def test_the_copy_of_an_argument_is_deep_and_keeps_what_it_shares():
    a = np.array([1.0, 2.0])
    counts = collections.defaultdict(list, {"a": a})
    argument = {"a": a, "again": [a, 1.5], "pair": (a, "name"), "object": types.SimpleNamespace(w=a),
                "counts": counts, "function": np.sin}
    copy = owned_argument(argument)
    assert copy["a"] is not a and np.array_equal(copy["a"], a)
    assert copy["again"][0] is copy["a"] and copy["pair"][0] is copy["a"] and copy["object"].w is copy["a"]
    assert copy["counts"]["a"] is copy["a"] and copy["counts"].default_factory is list
    assert copy["function"] is np.sin and copy["pair"][1] == "name"
    loop = [a]
    loop.append(loop)
    copy = owned_argument(loop)
    assert copy is not loop and copy[1] is copy and copy[0] is not a


def reads_a_dict_item(x, d):
    return np.sum(d["b"] * x)


def test_the_generated_code_copies_the_argument_it_writes_into_and_no_other():
    assert "d_1 = owned_argument(d)" in ssad.show(writes_through_a_dict_item).source
    assert "owned" not in ssad.show(reads_a_dict_item).source


# ----- y[k] += v, where the item is held elsewhere too -----


def adds_to_a_list_item_held_twice(x, xs):
    xs[0] += x
    return np.sum(xs[0] * xs[1])


def adds_to_a_local_list_holding_one_array_twice(x, w):
    a = w * 1.0
    xs = [a, a]
    xs[0] += x
    return np.sum(xs[0] * xs[1])


def adds_to_an_item_another_name_reads(x, w):
    a = w * 1.0
    xs = [a, w]
    xs[0] += x
    return np.sum(a)


def adds_to_a_dict_entry_held_twice(x, d):
    d["a"] += x
    return np.sum(d["a"] * d["b"])


def adds_to_an_item_of_a_list_copied_by_list(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = list(xs)
    ys[0] += x
    return np.sum(xs[0] * w)


def adds_to_an_item_of_a_slice_in_a_loop(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = xs[:]
    for k in range(2):
        ys[k] *= x
    return np.sum(xs[1])


def adds_to_an_entry_of_a_dict_copied_by_dict(x, w):
    d = {"a": w * 1.0}
    e = dict(d)
    e["a"] += x
    return np.sum(d["a"] * w)


def adds_to_an_entry_of_a_merged_dict(x, w):
    d = {"a": w * 1.0}
    e = {**d, "b": 2.0}
    e["a"] += x
    return np.sum(d["a"] * w)


def adds_to_an_item_of_a_comprehension(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = [v for v in xs]
    ys[0] += x
    return np.sum(xs[0] * w)


def adds_to_an_item_of_a_display_of_items(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = [xs[1], xs[0]]
    ys[1] -= x
    return np.sum(xs[0] * w)


def adds_to_an_item_of_a_concatenation(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = xs + [w * 3.0]
    ys[0] += x
    return np.sum(xs[0] * w)


def adds_to_an_item_held_by_a_dict_of_the_list(x, w):
    xs = [w * 1.0]
    outer = {"p": xs}
    ys = list(xs)
    ys[0] += x
    return np.sum(outer["p"][0] * w)


def adds_to_an_item_the_list_holds_again_deeper(x, w):
    a = w * 1.0
    ys = [a, [a]]
    ys[0] += x
    return np.sum(ys[1][0] * w)


HELD_OUTSIDE = [np.array([1.0, 2.0])]


def adds_to_an_item_of_a_global_list(x, w):
    ys = list(HELD_OUTSIDE)
    ys[0] += x  # Python would change the module's array, at each call
    return np.sum(ys[0] * w)


def adds_to_an_item_a_nested_function_reads(x, w):
    xs = [w * 1.0, w * 2.0]

    def first():
        return np.sum(xs[0])

    ys = list(xs)
    ys[0] += x
    return first() * 2.0


def shared():
    w = np.array([1.0, 2.0])
    return w


REFUSED_ITEM_CHANGES = [
    (adds_to_a_list_item_held_twice, lambda: [shared()] * 2, "xs[0] += x", "`xs` holds that array at another place"),
    (adds_to_a_local_list_holding_one_array_twice, shared, "xs[0] += x", "`xs` holds that array at another place"),
    (adds_to_an_item_another_name_reads, shared, "xs[0] += x", "`a` holds that item too"),
    (adds_to_a_dict_entry_held_twice, lambda: dict.fromkeys("ab", shared()), 'd["a"] += x',
     "`d` holds that array at another place"),
    # a new container of the same items, whose source is read afterwards (each gave the
    # gradient of the lowering, `ys[0] = ys[0] + x`, which leaves `xs[0]` as it was)
    (adds_to_an_item_of_a_list_copied_by_list, shared, "ys[0] += x", "`xs` holds that item too"),
    (adds_to_an_item_of_a_slice_in_a_loop, shared, "ys[k] *= x", "`xs` holds that item too"),
    (adds_to_an_entry_of_a_dict_copied_by_dict, shared, 'e["a"] += x', "`d` holds that item too"),
    (adds_to_an_entry_of_a_merged_dict, shared, 'e["a"] += x', "`d` holds that item too"),
    (adds_to_an_item_of_a_comprehension, shared, "ys[0] += x", "`xs` holds that item too"),
    (adds_to_an_item_of_a_display_of_items, shared, "ys[1] -= x", "`xs` holds that item too"),
    (adds_to_an_item_of_a_concatenation, shared, "ys[0] += x", "`xs` holds that item too"),
    (adds_to_an_item_held_by_a_dict_of_the_list, shared, "ys[0] += x", "`outer` holds that item too"),
    (adds_to_an_item_the_list_holds_again_deeper, shared, "ys[0] += x", "`ys` holds that array at another place"),
    (adds_to_an_item_of_a_global_list, shared, "ys[0] += x", "`HELD_OUTSIDE` holds that item too"),
    (adds_to_an_item_a_nested_function_reads, shared, "ys[0] += x", "`xs` holds that item too"),
]


@pytest.mark.parametrize("f, made, text, reason", REFUSED_ITEM_CHANGES, ids=[c[0].__name__ for c in REFUSED_ITEM_CHANGES])
def test_an_item_changed_in_place_and_held_elsewhere_is_refused_at_its_line(f, made, text, reason):
    calls = {
        "grad": lambda: ssad.grad(f)(X0, made()),
        "jvp": lambda: ssad.jvp(f, (X0, made()), (1.0, None)),
        "hessian": lambda: ssad.hessian(f)(X0, made()),
    }
    for name, call in calls.items():
        with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
            call()
        assert caught.value.filename == __file__ and caught.value.lineno == line_of(f, text), name
        assert reason in caught.value.message and "for a new value" in caught.value.message
    np.testing.assert_array_equal(HELD_OUTSIDE[0], [1.0, 2.0])


def test_an_item_of_distinct_arrays_changed_in_place_is_exact():
    def made():
        return [np.array([1.0, 2.0]), np.array([1.0, 2.0])]  # equal, not the same array

    expected = numerical_gradient(lambda x: adds_to_a_list_item_held_twice(x, made()), X0)
    assert expected == pytest.approx(3.0)
    assert ssad.grad(adds_to_a_list_item_held_twice)(X0, made()) == pytest.approx(expected)
    assert ssad.jvp(adds_to_a_list_item_held_twice, (X0, made()), (1.0, None))[1] == pytest.approx(expected)


def adds_to_an_item_of_a_copied_list_whose_source_is_not_read_again(x, w):
    xs = [w * 1.0, w * 2.0]
    ys = list(xs)
    ys[0] += x
    acc = [np.zeros(2), 0.0]
    acc[0] += ys[0] * x
    acc[1] += x
    return np.sum(ys[0] * acc[0]) + acc[1]


def test_an_item_changed_in_place_that_nothing_else_reads_is_exact():
    f = adds_to_an_item_of_a_copied_list_whose_source_is_not_read_again
    expected = numerical_gradient(lambda x: f(x, shared()), X0)
    assert ssad.grad(f)(X0, shared()) == pytest.approx(expected)
    assert ssad.jvp(f, (X0, shared()), (1.0, None))[1] == pytest.approx(expected)
    second = numerical_gradient(lambda x: ssad.grad(f)(x, shared()), X0)
    assert ssad.hessian(f)(X0, shared()) == pytest.approx(second, rel=1e-6)


def accumulates_rows_into_a_dict(w, rows, params):
    totals = {"a": np.zeros(2)}
    for i in range(len(rows)):
        totals["a"] += rows[i] * w
        params["w"] += rows[i]
    return np.sum(totals["a"] ** 2) + np.sum(params["w"] * w)


def test_a_list_that_cannot_hold_the_changed_item_is_not_looked_into_at_each_pass():
    # `rows` is read at each pass; looking through it there made the loop's cost grow with the
    # square of its length (28 s for 4,000 rows, for 0.13 s)
    source = ssad.show(accumulates_rows_into_a_dict).source
    assert source.count("changed_item_held_once(") == 2  # the two items are checked where they change
    held_elsewhere = [line for line in source.splitlines() if "item_held_elsewhere(" in line]
    assert not any("rows" in line.split('"')[0] for line in held_elsewhere)

    def made():
        return [np.array([0.5, -1.0]), np.array([2.0, 0.25]), np.array([-0.3, 0.7])], {"w": np.array([0.1, 0.2])}

    w = np.array([0.3, -0.7])
    expected = numerical_gradient(lambda v: accumulates_rows_into_a_dict(v, *made()), w)
    np.testing.assert_allclose(ssad.grad(accumulates_rows_into_a_dict)(w, *made()), expected, rtol=1e-6)


def test_an_array_made_by_numpy_gets_no_check_of_its_items():
    def accumulates(x):
        y = np.zeros(3)
        for i in range(3):
            y[i] += x[i] * x[i]
        return np.sum(y)

    assert "changed_item_held_once" not in ssad.show(accumulates).source
    np.testing.assert_allclose(ssad.grad(accumulates)(np.array([1.0, 2.0, 3.0])), [2.0, 4.0, 6.0])


def adds_to_a_list_item_in_a_loop(x, xs):
    for _ in range(6):
        xs[0] += x * xs[1]
    return np.sum(xs[0] ** 2)


def test_an_item_changed_in_a_checkpointed_loop_is_checked_and_exact():
    def made():
        return [np.array([1.0, 2.0]), np.array([0.5, 0.25])]

    expected = numerical_gradient(lambda x: adds_to_a_list_item_in_a_loop(x, made()), 0.3)
    argument = made()
    assert ssad.grad(adds_to_a_list_item_in_a_loop, checkpoint="sqrt")(0.3, argument) == pytest.approx(expected)
    np.testing.assert_array_equal(argument[0], [1.0, 2.0])
    with pytest.raises(ssad.UnsupportedSyntaxError):
        ssad.grad(adds_to_a_list_item_in_a_loop, checkpoint="sqrt")(0.3, [argument[1]] * 2)


def helper_writes_its_argument(b, x):
    b[1] = b[1] * x
    return b


def calls_a_helper_that_writes_into_an_argument(x, d):
    b = helper_writes_its_argument(d["b"], x)
    return np.sum(b ** 2)


def test_a_helper_that_writes_into_the_callers_argument_is_refused_at_its_line():
    with pytest.raises(ssad.UnsupportedSyntaxError) as caught:
        ssad.grad(calls_a_helper_that_writes_into_an_argument)(X0, {"b": np.ones(3)})
    assert caught.value.filename == __file__
    assert caught.value.lineno == line_of(helper_writes_its_argument, "b[1] = b[1] * x")
    assert "copy it first" in caught.value.message


def writes_each_array_of_a_list(x, xs):
    for v in xs:
        v[0] = v[0] * x
    return np.sum(v ** 2)


def test_second_derivatives_of_writes_into_the_arrays_of_a_list_argument():
    # the gradient writes into an item of its copy of the list, and reads the list again only
    # after the backward sweep restored the item: its code is differentiated again
    def made():
        return [np.array([1.0, 2.0]), np.array([3.0, 4.0])]

    expected = numerical_gradient(lambda x: ssad.grad(writes_each_array_of_a_list)(x, made()), X0)
    assert ssad.hessian(writes_each_array_of_a_list)(X0, made()) == pytest.approx(expected)
    assert ssad.grad(ssad.grad(writes_each_array_of_a_list))(X0, made()) == pytest.approx(expected)


def test_a_refusal_in_generated_code_names_the_users_line():
    from ssad.frontend.parse import parse_function

    generated = ssad.grad(writes_through_a_dict_item).variants.general.function
    parsed = parse_function(generated)
    write = next(node for node in walk(parsed.node) if isinstance(node, gast.Assign)
                 and isinstance(node.targets[0], gast.Subscript))
    refusal = parsed.unsupported(write, "the reason")
    assert refusal.filename == __file__
    assert refusal.lineno == line_of(writes_through_a_dict_item, "b[0] = b[0] + x * x")
    assert refusal.message == "in the derivative ssad made of this line, the reason"


# ----- Named fields of linear algebra results, in forward mode -----

A = np.array([[3.0, 0.5, 0.1], [0.2, 2.0, 0.3], [0.1, 0.4, 4.0]])
RNG = np.random.default_rng(11)
V, W = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))


def logabsdet_field(a):
    return np.linalg.slogdet(a).logabsdet


def sign_field(a):
    return np.linalg.slogdet(a).sign * np.sum(a ** 2)


def eigh_fields(a):
    result = np.linalg.eigh(a + a.T)
    return np.sum(np.sin(result.eigenvalues)) + np.sum(np.sin(result.eigenvectors ** 2))


def svd_fields(a):
    result = np.linalg.svd(a)
    return np.sum(np.sin(result.S)) + np.sum(np.sin(result.U ** 2)) + np.sum(np.sin(result.Vh ** 2))


def qr_fields(a):
    result = np.linalg.qr(a)
    return np.sum(np.sin(result.Q)) + np.sum(np.sin(result.R))


def eig_field(a):
    return np.sum(np.sin(np.real(np.linalg.eig(a).eigenvalues)))


@pytest.mark.parametrize("f", [logabsdet_field, sign_field, eigh_fields, svd_fields, qr_fields, eig_field])
def test_named_fields_of_linear_algebra_results_in_forward_mode(f):
    expected = np.sum(numerical_gradient(f, A) * V)
    assert ssad.jvp(f, (A,), (V,))[1] == pytest.approx(expected, rel=1e-6, abs=1e-8)
    along = numerical_gradient(lambda t: np.sum(ssad.grad(f)(A + t * V) * W), 0.0)
    assert np.sum(ssad.hvp(f)(A, V) * W) == pytest.approx(along, rel=1e-5, abs=1e-7)
    assert np.sum(ssad.jvp(ssad.grad(f), (A,), (V,))[1] * W) == pytest.approx(along, rel=1e-5, abs=1e-7)
    assert np.einsum("ijkl,ij,kl->", ssad.hessian(f)(A), W, V) == pytest.approx(along, rel=1e-5, abs=1e-7)


# ----- det at singular matrices: the adjugate -----

SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


def det_of_diagonal(x):
    return np.linalg.det(np.diag(x))


def det_of(a):
    return np.sin(np.linalg.det(a))


def scipy_det_of(a):
    return np.sin(scipy.linalg.det(a))


def dets_of_a_stack(a):
    return np.sum(np.sin(np.linalg.det(a)))


def test_det_at_a_singular_diagonal_matrix_has_the_adjugate_as_gradient():
    x = np.array([0.0, 2.0, 3.0])
    np.testing.assert_array_equal(ssad.grad(det_of_diagonal)(x), [6.0, 0.0, 0.0])
    assert ssad.jvp(det_of_diagonal, (x,), (np.array([1.0, 0.0, 0.0]),))[1] == 6.0
    # d2/dxi dxj of x0 x1 x2: the other entry, 0 on the diagonal
    np.testing.assert_allclose(ssad.hessian(det_of_diagonal)(x), [[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


@pytest.mark.parametrize("f, a", [
    (det_of, SINGULAR), (scipy_det_of, SINGULAR), (det_of, np.outer([1.0, 2.0, -1.0], [0.5, 1.0, 2.0])),
    (det_of, np.zeros((3, 3))), (dets_of_a_stack, np.stack([SINGULAR, 2.0 * np.eye(3)])),
    (det_of, SINGULAR + 1e-9 * V), (det_of, A),
], ids=["rank-2", "scipy", "rank-1", "zero", "stack", "nearly-singular", "regular"])
def test_det_at_singular_matrices_in_both_modes_and_at_second_order(f, a):
    direction = V if a.ndim == 2 else np.stack([V, W])
    expected = numerical_gradient(f, a)
    np.testing.assert_allclose(ssad.grad(f)(a), expected, rtol=1e-6, atol=1e-8)
    assert ssad.jvp(f, (a,), (direction,))[1] == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    along = numerical_gradient(lambda t: np.sum(ssad.grad(f)(a + t * direction) * direction), 0.0)
    assert np.sum(ssad.hvp(f)(a, direction) * direction) == pytest.approx(along, rel=1e-5, abs=1e-7)
    second = numerical_gradient(lambda b: np.sum(ssad.grad(f)(b) * direction), a)
    np.testing.assert_allclose(ssad.grad(lambda b: np.sum(ssad.grad(f)(b) * direction))(a), second,
                               rtol=1e-5, atol=1e-6)


def test_slogdet_sign_at_a_singular_matrix_has_a_zero_derivative():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(ssad.grad(sign_field)(singular), np.zeros((2, 2)))
    assert ssad.jvp(sign_field, (singular,), (V[:2, :2],))[1] == 0.0
    np.testing.assert_array_equal(ssad.hessian(sign_field)(singular), np.zeros((2, 2, 2, 2)))


def logabsdet_used(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return logabsdet * 2.0


@pytest.mark.parametrize("f, text", [(logabsdet_used, "sign, logabsdet = np.linalg.slogdet(a)"),
                                     (logabsdet_field, "return np.linalg.slogdet(a).logabsdet")])
def test_logabsdet_at_a_singular_matrix_is_refused_at_its_line(f, text):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for name, call in {
        "grad": lambda: ssad.grad(f)(singular),
        "jvp": lambda: ssad.jvp(f, (singular,), (V[:2, :2],)),
        "hessian": lambda: ssad.hessian(f)(singular),
    }.items():
        with pytest.raises(ssad.SsadError, match="no derivative at a singular matrix") as caught:
            call()
        assert caught.value.filename == __file__ and caught.value.lineno == line_of(f, text), name


def test_a_third_derivative_of_det_at_a_singular_matrix_is_refused_at_the_users_line():
    def third(a):
        return np.sum(ssad.jvp(ssad.grad(det_of), (a,), (V,))[1] * W)

    regular = A + 0.1
    expected = numerical_gradient(third, regular, eps=1e-4)
    np.testing.assert_allclose(ssad.grad(third)(regular), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ssad.SsadError, match="third derivative of np.linalg.det") as caught:
        ssad.grad(third)(SINGULAR)
    assert caught.value.filename == __file__ and caught.value.lineno == line_of(det_of, "np.linalg.det(a)")


# ----- Refusals of rule keywords and modes, at the user's line -----


def pads_with_the_maximum(x):
    return np.sum(np.pad(x, 1, mode="maximum"))


def pads_with_odd_reflection(x):
    return np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd") ** 2)


def maximum_where(x):
    return np.max(x, where=x > 0, initial=-1.0)


def interp_with_period(x):
    return np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 2.0]), period=1.0)


def weighted_quantile(x):
    return np.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(3))


def pads_with_a_constant_that_carries_a_gradient(x, c):
    return np.sum(np.pad(x, 1, constant_values=c))


REFUSALS = [
    (pads_with_the_maximum, (np.ones((2, 2)),), 0, "np.pad(x, 1", "np.max(x, axis=0, keepdims=True)"),
    (pads_with_odd_reflection, (np.ones(3),), 0, "np.pad(x, 1", "np.pad(x, w, mode='edge')"),
    (maximum_where, (np.ones(3),), 0, "np.max(x", "np.max(np.where(mask, x, -np.inf))"),
    (interp_with_period, (0.3,), 0, "np.interp(x", "x % period"),
    (weighted_quantile, (np.ones(3),), 0, "np.quantile(x", "np.searchsorted(c, q)"),
    (pads_with_a_constant_that_carries_a_gradient, (np.ones((2, 2)), 0.5), 1, "np.pad(x, 1",
     "c * np.pad(np.zeros_like(x), w, constant_values=1.0)"),
]


@pytest.mark.parametrize("f, args, wrt, text, advice", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_refusals_name_the_users_line_and_what_to_write(f, args, wrt, text, advice):
    tangents = tuple(np.ones_like(a) if k == wrt else None for k, a in enumerate(args))
    for name, call in {"grad": lambda: ssad.grad(f, wrt=wrt)(*args), "jvp": lambda: ssad.jvp(f, args, tangents)}.items():
        with pytest.raises(ssad.SsadError) as caught:
            call()
        assert caught.value.filename == __file__ and caught.value.lineno == line_of(f, text), name
        assert advice in caught.value.message, name
        assert "sum_adjoint" not in caught.value.message and "reflect_type='even')" not in caught.value.message


def test_the_advice_for_a_constant_border_computes_the_same_value_and_gradient():
    def written_out(x, c):
        return np.sum(np.sin(np.pad(x, 1) + c * np.pad(np.zeros_like(x), 1, constant_values=1.0)))

    x = np.array([[0.3, -0.2], [0.5, 1.0]])
    assert written_out(x, 0.5) == pytest.approx(np.sum(np.sin(np.pad(x, 1, constant_values=0.5))))
    assert ssad.grad(written_out, wrt=1)(x, 0.5) == pytest.approx(
        numerical_gradient(lambda c: written_out(x, c), 0.5))


def masked_sum(x):
    return np.sum(np.sin(x) * 2.0, where=x > 0) + np.sum(np.sin(np.sum(x ** 2, axis=1, where=x > -0.5)))


def masked_mean(x):
    return np.mean(np.sin(x), where=x > 0) + np.sum(np.cos(x.mean(axis=0, keepdims=True, where=np.array([[True], [False], [True]]))))


@pytest.mark.parametrize("f", [masked_sum, masked_mean])
def test_sum_and_mean_take_a_mask(f):
    x = RNG.standard_normal((3, 4))
    direction = RNG.standard_normal((3, 4))
    expected = numerical_gradient(f, x)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    assert ssad.jvp(f, (x,), (direction,))[1] == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    along = numerical_gradient(lambda t: np.sum(ssad.grad(f)(x + t * direction) * direction), 0.0)
    assert np.sum(ssad.hvp(f)(x, direction) * direction) == pytest.approx(along, rel=1e-5, abs=1e-7)


def adds_to_an_array_argument(x, y):
    y[0] += x
    return np.sum(y ** 2)


def test_an_array_argument_changed_in_place_still_compiles():
    pytest.importorskip("numba")
    argument = np.array([1.0, 2.0, 3.0])
    assert ssad.grad(adds_to_an_array_argument, compile="strict")(0.5, argument) == pytest.approx(3.0)
    np.testing.assert_array_equal(argument, [1.0, 2.0, 3.0])
