"""Programs random testing once found wrong; each now checked against finite differences."""

import functools

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

X = np.array([0.1, 0.2, 0.3, 0.4])


def overwritten_in_branch_only(y, s):
    # s is overwritten in a branch the adjoint sweep has no code for: s must still be restored
    w = s**2
    if np.mean(y) < 1.0:
        s += np.sum(y)
    return w


def copied_then_written_in_loop(y, s):
    for _ in range(2):
        y = y.copy()  # a copy frees y from the caller's array
        y[1:3] *= s
    return np.sum(y * y)


def copy_each_iteration(y, s):
    y = y * 1.0
    for _ in range(2):
        y = y.copy()  # a new array each iteration: the name itself must be restored
        y[1:3] *= s
    return np.sum(y)


def loop_without_adjoint_code(x, s):
    w = np.sum(np.sin(x))
    for _ in range(2):
        x = x * 2.0  # x is never used again, but the sine above needs the first x
    return w + s


def flag_set_in_branches(x, s):
    acc = 0.0
    for i in range(3):
        if i == 2:
            c = True
        else:
            c = s > 1.0
        if c:
            acc = acc + np.sum(x * x)
        else:
            acc = acc + np.sum(np.sin(x))
    return acc


def or_in_loop_condition(x, s):
    acc = 0.0
    for i in range(3):
        if i == 2 or s > 1.0:
            acc = acc + np.sum(x * x)
        else:
            acc = acc + np.sum(np.sin(x))
    return acc


def only_pass_in_branches(x, s):
    if s > 0.0:
        pass
    for _ in range(2):
        pass
    return np.sum(x) * s


def rebinds_what_it_walks(x):
    acc = 0.0
    for v in x:
        acc = acc + v * v
        x = x * 2.0  # the loop keeps walking the x it started with
    return acc


def negative_literal_power(x):
    return np.sum(x * (-2.0) ** 2) + (-1.0) ** 2


def inner_loop_invariant(y):
    v = y
    for _ in range(2):
        for _ in range(1):
            w = np.sin(v) * v  # the same in every inner iteration, not in every outer one
        v = w
    return np.sum(v)


def return_from_nested_loop(x, y):
    for i in range(2):
        for _ in x:
            if i > 0:
                return np.sum(y * y)
    return np.sum(x)


def return_with_or_in_loop(x, s):
    for i in range(3):
        if i > 0 or s > 1.0:
            return np.sum(x)
    return np.sum(x * x)


def augmented_on_a_reduction(x, s):
    t = np.sum(x)
    u = t  # a NumPy scalar: immutable, so `t += s` cannot change u
    t += s
    return t * u


CASES = [
    (overwritten_in_branch_only, (X, 0.7)),
    (copied_then_written_in_loop, (X, 0.7)),
    (copy_each_iteration, (X, 0.7)),
    (loop_without_adjoint_code, (X, 0.7)),
    (flag_set_in_branches, (X, 0.7)),
    (flag_set_in_branches, (X, 1.3)),
    (or_in_loop_condition, (X, 0.7)),
    (only_pass_in_branches, (X, 0.7)),
    (rebinds_what_it_walks, (X,)),
    (negative_literal_power, (X,)),
    (inner_loop_invariant, (X,)),
    (return_from_nested_loop, (X, X * 2.0)),
    (return_with_or_in_loop, (X, 0.7)),
    (return_with_or_in_loop, (X, 1.3)),
    (augmented_on_a_reduction, (X, 0.7)),
]


@pytest.mark.parametrize("function, args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_regression(function, args):
    value, _ = ssad.value_and_grad(function)(*args)
    assert value == pytest.approx(function(*args), rel=1e-12)
    ssad.check_grads(function, args)


def reversed_loop_writing_without_gradient(x, y):
    x = x.copy()
    z = 0.0
    for i in reversed(range(4)):
        z = z + np.sum(y * x)
        x[i] = 0.0  # no gradient flows through the write, but its restore needs the right i
    return z


def conditional_expression_in_loop(x, y):
    for _ in range(2):
        b = np.sum(y * x) if np.sum(y) > 0 else np.cos(1.0)
    return b


def integer_loop_variable_in_branch(x, s):
    r = s
    if np.sum(x) > 10.0:
        for i in range(2):
            r = i
    return r


@pytest.mark.parametrize("optimize", [True, False])
def test_reversed_loop_restores_at_the_right_index(optimize):
    y = np.array([0.5, -0.3, 0.8, 1.1])
    for wrt in (1, (0, 1)):
        gradient = ssad.grad(reversed_loop_writing_without_gradient, wrt=wrt, optimize=optimize)(X, y)
        d_y = gradient if wrt == 1 else gradient[1]
        np.testing.assert_allclose(d_y, [0.4, 0.6, 0.6, 0.4])


@pytest.mark.parametrize(
    "function, args", [(conditional_expression_in_loop, (X, X + 1.0)), (integer_loop_variable_in_branch, (X, 0.7))]
)
def test_unoptimized_code_compiles_and_runs(function, args):
    for position in (0, 1):
        optimized = ssad.grad(function, wrt=position)(*args)
        plain = ssad.grad(function, wrt=position, optimize=False)(*args)
        np.testing.assert_allclose(plain, optimized, rtol=1e-12)
    ssad.check_grads(function, args)


def parameter_overwritten_by_invariant_loop(x, y, s):
    b = np.sum(np.exp(0.5 * np.sin(x)))
    for _ in range(1):
        x = y * 2.0  # the same in every iteration, but not the x the sine above read
    return np.sum(x) + b * 3.0


def test_loop_invariant_value_still_restores_the_value_before_the_loop():
    ssad.check_grads(parameter_overwritten_by_invariant_loop, (X, X + 0.5, 0.7))


def slice_update_then_name_rebound_in_loop(x, y, s):
    u = np.ones(4) * s
    u[0:3] *= s  # the adjoint reads the slice `u[0:3]` as it was before this write
    for _ in y:
        u /= 1 + x**2  # rebinds u: the slice must still be restored in the old array
    return np.sum(u * 1.32)


def test_in_place_slice_update_restored_after_the_name_is_rebound_in_a_loop():
    args = (X, X + 0.5, 0.7)
    ssad.check_grads(slice_update_then_name_rebound_in_loop, args)
    s = 0.7
    closed_form = 1.32 * np.sum((np.array([2 * s, 2 * s, 2 * s, 1.0])) / (1 + X**2) ** 4)
    np.testing.assert_allclose(ssad.grad(slice_update_then_name_rebound_in_loop, wrt=2)(*args), closed_form, rtol=1e-12)


def built_with_append(k):
    ys = []
    ys.append(k * k)
    ys.append(np.sin(k))
    return ys[0] * ys[1]


def popped_for_effect(x):
    ys = [x, 2.0 * x, x * x]
    ys.pop()
    ys.pop(0)
    return ys[0] * x


def test_generated_code_that_undoes_an_append_differentiates_again():
    # The gradient undoes each append with a bare `ys.pop()`, which a second
    # transformation must accept: grad(grad(f)), jvp(grad(f)) and hessian all go through it.
    k = 0.7
    second = 2 * np.sin(k) + 4 * k * np.cos(k) - k * k * np.sin(k)
    np.testing.assert_allclose(ssad.grad(ssad.grad(built_with_append))(k), second, rtol=1e-12)
    np.testing.assert_allclose(ssad.jvp(ssad.grad(built_with_append), (k,), (1.0,))[1], second, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(built_with_append)(np.array(k)), second, rtol=1e-12)


def test_forward_mode_starts_the_tangent_list_before_the_first_append():
    # The tangent list of `ys = []` is made at the first append; made after it, it
    # already had a zero for the appended value and every tangent sat one place late.
    k = 0.7
    first = 2 * k * np.sin(k) + k * k * np.cos(k)
    np.testing.assert_allclose(ssad.jvp(built_with_append, (k,), (1.0,))[1], first, rtol=1e-12)
    ssad.check_grads(built_with_append, (k,), modes=("forward",))


def test_a_pop_whose_value_is_dropped_is_differentiated():
    x = 1.5
    np.testing.assert_allclose(ssad.grad(popped_for_effect)(x), 4 * x, rtol=1e-12)
    np.testing.assert_allclose(ssad.grad(ssad.grad(popped_for_effect))(x), 4.0, rtol=1e-12)
    ssad.check_grads(popped_for_effect, (x,))


def keyword_helper(a, b, scale=0.5):
    return np.sin(a) + 0.0 * b * scale


def helper_called_in_loop_and_after(x, y):
    t = y[3]
    h = x
    for _ in range(3):
        h = np.tanh(h * y + keyword_helper(h, x, scale=t))
    return np.sum(h) + np.sum(keyword_helper(x, x))


def test_forward_mode_helper_variants_keep_their_names_after_a_loop():
    # The loop's second pass over its body freed the name of the callee's forward
    # code (with a tangent for `scale`); the call after the loop, with no tangent
    # for `scale`, then took that name, and the loop called the wrong variant.
    x = np.array([-1.12, 0.39, 0.12, -0.19])
    y = np.array([0.41, -1.15, 0.2, 1.21])
    dx = np.array([0.3, -1.1, 0.7, 0.9])
    dy = np.array([-0.6, 0.2, 1.4, -0.8])
    _, tangent = ssad.jvp(helper_called_in_loop_and_after, (x, y), (dx, dy))
    eps = 1e-6
    expected = (
        helper_called_in_loop_and_after(x + eps * dx, y + eps * dy)
        - helper_called_in_loop_and_after(x - eps * dx, y - eps * dy)
    ) / (2 * eps)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    ssad.check_grads(helper_called_in_loop_and_after, (x, y))


def squashed_twice(a):
    for _ in range(2):
        a = np.tanh(a * 1.5)  # overwritten in a loop: the callee's backward sweep pops a tape
    return a


def sum_of_squashed(x):
    return np.sum(squashed_twice(x) * np.array([0.7, -0.4, 1.3, 0.2]))


def test_a_pullback_through_a_callee_with_a_tape_runs_twice():
    # The pullback copied only the caller's own tape; a callee's tape, inside the
    # residuals, was used up by the first call and the second raised IndexError.
    x = np.array([0.3, -0.7, 1.1, 0.45])
    _, pullback = ssad.vjp(sum_of_squashed, x)
    first = pullback(1.0)[0]
    second = pullback(0.5)[0]
    ssad.check_grads(sum_of_squashed, (x,))
    np.testing.assert_allclose(first, ssad.grad(sum_of_squashed)(x), rtol=1e-12)
    np.testing.assert_allclose(second, 0.5 * first, rtol=1e-12)


def squashed_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(squashed_twice(x * (k + 1.0)))  # each call's saved tape rides on ours
    return total


def test_a_pullback_through_callees_called_in_a_loop_runs_twice():
    x = np.array([0.3, -0.7, 1.1, 0.45])
    _, pullback = ssad.vjp(squashed_in_a_loop, x)
    first = pullback(1.0)[0]
    second = pullback(2.0)[0]
    np.testing.assert_allclose(first, ssad.grad(squashed_in_a_loop)(x), rtol=1e-12)
    np.testing.assert_allclose(second, 2.0 * first, rtol=1e-12)
    ssad.check_grads(squashed_in_a_loop, (x,))


def rebound_then_break(x, y):
    h = np.sin(x)
    for _ in range(3):
        h = np.cos(y)  # with y held constant, h has no tangent from here on
        if np.sum(h) > 0.5:
            break
    return np.sum(h * np.array([0.7, -0.4, 1.3, 0.2]))


def test_forward_mode_zeroes_a_dropped_tangent_before_a_break():
    # The tangent of a value a loop carries, rebound to something without one, was
    # zeroed only at the end of the loop body, which a `break` skips: the old tangent
    # of sin(x) came out of the loop.
    x = np.array([0.3, -0.7, 1.1, 0.45])
    y = x + 0.5
    _, tangent = ssad.jvp(rebound_then_break, (x, y), (np.ones(4), None))
    assert tangent == 0.0
    dy = np.array([-0.6, 0.2, 1.4, -0.8])
    _, tangent = ssad.jvp(rebound_then_break, (x, y), (np.ones(4), dy))
    np.testing.assert_allclose(tangent, np.sum(-np.sin(y) * dy * np.array([0.7, -0.4, 1.3, 0.2])), rtol=1e-12)
    ssad.check_grads(rebound_then_break, (x, y))


def returns_early_then_updates(x, s):
    if s > 10.0:
        return s
    s -= np.sum(np.sin(x))  # runs only when the early return did not
    return s * 2.0


def returns_written_array_early(x, s):
    z = x * 1.0
    for i in range(3):
        if z[i] > s:
            return z
        z[i] *= s
    return z * 3.0


def test_an_update_after_an_early_return_is_not_refused_as_aliasing():
    # The early return became `result = s`, and `s -= ...` after it was refused as
    # an in-place change of an array `result` shares, naming a variable the user never wrote.
    x = np.array([0.3, -0.7, 1.1, 0.45])
    d_x, d_s = ssad.grad(returns_early_then_updates, wrt=(0, 1))(x, 0.5)
    np.testing.assert_allclose(d_x, -2.0 * np.cos(x), rtol=1e-12)
    assert d_s == 2.0
    for s in (0.1, 0.5, 2.0):  # returns at i = 0, at i = 2, and at the end
        ssad.check_grads(returns_written_array_early, (x, s))


def dict_item_written_over(x):
    d = {"a": np.repeat(x[1:3], 2), "b": np.cumsum(x)}
    for _ in range(2):
        d["a"] = np.sin(x)
    d["b"] = np.cos(x)
    return np.sum(d["a"] * d["b"])


def list_item_written_over(x):
    items = [np.concatenate([x[1:], x[:1]]), x * 2.0]
    items[0] = np.tanh(x)
    return np.sum(items[0] * items[1])


def test_an_item_written_over_passes_a_shaped_zero_to_the_rule_that_made_it():
    # After `d["a"] = v` the adjoint of the item it replaced is a bare 0.0; the
    # adjoints of np.repeat, np.cumsum and np.concatenate need it shaped like their
    # output and failed (reshape, axis and modulo-by-zero errors).
    x = np.array([0.3, -0.7, 1.1, 0.45])
    np.testing.assert_allclose(
        ssad.grad(dict_item_written_over)(x), np.cos(x) ** 2 - np.sin(x) ** 2, rtol=1e-12
    )
    ssad.check_grads(dict_item_written_over, (x,))
    ssad.check_grads(list_item_written_over, (x,))


def arcsinh_total(a):
    return np.sum(np.arcsinh(a))  # its backward sweep reads `a`, kept in its saved values


def written_after_a_call_that_kept_it(y):
    z = y.copy()
    z[0] = arcsinh_total(z)  # overwrites the array the call above saved
    return np.sum(np.sin(z))


def test_an_array_a_callee_saved_is_restored_before_the_callee_backward_runs():
    # The callee kept a reference to `z` for its backward sweep; `z[0] = ...` changed
    # it, and the caller restored nothing because its own adjoint code never read z
    # again: a silently wrong gradient.
    y = np.array([0.3, -0.7, 1.1, 0.45])
    z0 = np.sum(np.arcsinh(y))
    kept = np.array([0.0, 1.0, 1.0, 1.0])  # z[0] is written over: y[0] reaches sin only through the call
    expected = kept * np.cos(y) + np.cos(z0) / np.hypot(y, 1.0)
    np.testing.assert_allclose(ssad.grad(written_after_a_call_that_kept_it)(y), expected, rtol=1e-12)
    ssad.check_grads(written_after_a_call_that_kept_it, (y,))


def twice(a, b):
    return b + b


def overwritten_by_a_call_in_one_branch(x, y):
    x0 = x
    for i in range(2):
        if i == 0:
            t = y + x0  # the same value every iteration, were this its only assignment
        else:
            t = twice(x0, x)
        x = 0.5 * x + np.sin(t)
    return x[1] * 1.5 + x[2]


def test_a_name_a_call_also_assigns_in_the_loop_is_not_loop_invariant():
    # `t, t_saved = forward_twice(...)` was not counted as an assignment of t, so
    # `t = y + x0` looked like t's only one, loop-invariant, and t was never
    # restored: the adjoint of np.sin(t) read the last iteration's t.
    x = np.array([-1.42, 0.8, -0.72, 0.38])
    y = np.array([1.27, 1.11, 0.23, -1.14])
    ssad.check_grads(overwritten_by_a_call_in_one_branch, (x, y))


def scaled_middle_squared(a, s):
    z = a.copy()
    z[1:3] *= s
    return z * z


def sum_of_scaled_middle(x, s):
    return np.sum(scaled_middle_squared(x, s))


def test_a_pullback_whose_callee_writes_in_place_refuses_a_second_run():
    # The callee's backward sweep restores z in place, so its residuals are used up;
    # a second run gave a wrong gradient silently instead of the documented error.
    x, s = np.array([0.3, -0.35, 0.55, 0.45]), 2.0
    _, pullback = ssad.vjp(sum_of_scaled_middle, x, s)
    d_x, d_s = pullback(1.0)
    np.testing.assert_allclose(d_x, 2 * x * np.array([1.0, s * s, s * s, 1.0]), rtol=1e-12)
    np.testing.assert_allclose(d_s, 2 * s * np.sum(x[1:3] ** 2), rtol=1e-12)
    with pytest.raises(ssad.SsadError, match="was already called"):
        pullback(1.0)


# ----- rules registered after a gradient was made, and rules of one mode only -----


def scaled_square(x):
    return x * x


def calls_scaled_square(x):
    return np.sin(scaled_square(x))


def calls_the_caller(x):
    return calls_scaled_square(x) * 2.0


def test_a_rule_registered_again_reaches_callers_made_before():
    # calls_the_caller -> calls_scaled_square -> scaled_square: the callee handles are resolved
    # per registry version, so a caller compiled after the change sees the new rule.
    x = 0.7
    made_before = None
    for factor in (2.0, 5.0, 3.0):

        @ssad.adjoint(scaled_square)
        def adjoint_rule(dy, y, x, factor=factor):
            return (dy * factor * x,)

        @ssad.tangent(scaled_square)
        def tangent_rule(tangents, y, x, factor=factor):
            return tangents[0] * factor * x

        expected = 2.0 * np.cos(x * x) * factor * x  # the rule's derivative, by design not 2x
        assert ssad.grad(calls_scaled_square)(x) == pytest.approx(expected / 2.0)
        assert ssad.grad(calls_the_caller)(x) == pytest.approx(expected)
        assert ssad.jvp(calls_the_caller, (x,), (1.0,))[1] == pytest.approx(expected)
        assert ssad.vjp(calls_the_caller, x)[1](1.0)[0] == pytest.approx(expected)
        if made_before is not None:  # a gradient made earlier keeps the rules of its time
            assert made_before[0](x) == pytest.approx(made_before[1])
        made_before = (ssad.grad(calls_the_caller), expected)


def cube_with_tangent_only(x):
    return x * x * x


@ssad.tangent(cube_with_tangent_only)
def _cube_tangent(tangents, y, x):
    return 3.0 * x * x * tangents[0]


def calls_cube(x):
    return np.sum(np.sin(cube_with_tangent_only(x)))


def test_a_tangent_rule_alone_is_used_forward_and_the_source_in_reverse():
    x = np.array([0.3, -0.6, 0.9])
    expected = np.cos(x**3) * 3.0 * x**2
    v = np.array([1.0, -2.0, 0.5])
    value, tangent = ssad.jvp(calls_cube, (x,), (v,))
    assert value == pytest.approx(calls_cube(x))
    assert tangent == pytest.approx(np.dot(expected, v))
    np.testing.assert_allclose(ssad.grad(calls_cube)(x), expected)
    ssad.check_grads(calls_cube, (x,), order=2)
    hessian = ssad.hessian(calls_cube)(x)
    np.testing.assert_allclose(hessian, np.diag(6 * x * np.cos(x**3) - 9 * x**4 * np.sin(x**3)), atol=1e-9)


def test_a_tangent_rule_alone_without_source_is_a_missing_adjoint_rule():
    scope = {}
    exec("def cube(x):\n    return x * x * x\n", scope)
    cube = scope["cube"]
    ssad.tangent(cube)(lambda tangents, y, x: 3.0 * x * x * tangents[0])

    def f(x):
        return np.sin(cube(x))

    assert ssad.jvp(f, (0.5,), (1.0,))[1] == pytest.approx(np.cos(0.125) * 0.75)
    with pytest.raises(ssad.MissingRuleError, match=r"(?s)test_regressions.py:\d+.*ssad.adjoint\(cube\)"):
        ssad.grad(f)(0.5)


# ----- a function that returns a free name -----

FREE_CONSTANT = 2.0
FREE_ARRAY = np.array([1.0, -2.0])


def returns_a_global(x):
    return FREE_CONSTANT


def returns_a_global_array(x, y):
    return FREE_ARRAY


def returns_a_closure_value():
    captured = 3.0

    def f(x):
        return captured

    return f


@pytest.mark.parametrize("function", [returns_a_global, returns_a_closure_value()], ids=["global", "closure"])
def test_a_returned_free_name_has_a_zero_gradient(function):
    assert ssad.grad(function)(1.5) == 0.0
    assert ssad.value_and_grad(function)(1.5) == (function(1.5), 0.0)
    np.testing.assert_array_equal(ssad.grad(function)(np.ones(3)), np.zeros(3))
    assert ssad.jvp(function, (1.5,), (1.0,)) == (function(1.5), 0.0)
    assert ssad.grad(ssad.grad(function))(1.5) == 0.0
    np.testing.assert_array_equal(ssad.hessian(function)(np.ones(2)), np.zeros((2, 2)))


def test_a_returned_free_array_has_zero_pullback_and_tangent():
    x = np.array([0.5, 0.25])
    value, pullback = ssad.vjp(returns_a_global_array, x, 1.5)
    np.testing.assert_array_equal(value, FREE_ARRAY)
    d_x, d_y = pullback(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(d_x, np.zeros(2))
    assert d_y == 0.0
    value, tangent = ssad.jvp(returns_a_global_array, (x, 1.5), (np.ones(2), 1.0))
    np.testing.assert_array_equal(tangent, np.zeros(2))
    np.testing.assert_array_equal(ssad.jacobian(returns_a_global_array)(x, 1.5), np.zeros((2, 2)))


# ----- np.r_ and np.c_, and subscripts of objects that have no rule -----


def joined_by_r_(x):
    return np.sum(np.sin(np.r_[x, x] * np.arange(1.0, 7.0)))


def joined_by_r_with_constant_pieces(x):
    return np.sum(np.sin(np.r_[0:3, x, 2.0, x[0], 0:1:3j]) * np.arange(1.0, 12.0))


def joined_by_c_(x):
    return np.sum(np.sin(np.c_[x, 2.0 * x, np.ones(3)] * np.arange(1.0, 10.0).reshape(3, 3)))


def joined_by_c_with_a_matrix(x):
    return np.sum(np.sin(np.c_[np.outer(x, x), x]) * np.arange(12.0).reshape(3, 4))


def joined_by_a_local_name_for_r_(x):
    rr = np.r_
    return np.sum(np.sin(rr[x, 0:2, x] * np.arange(1.0, 9.0)))


def joined_by_a_local_name_for_c_(x):
    cc = np.c_
    return np.sum(np.sin(cc[x, 2.0 * x, np.ones(3)] * np.arange(1.0, 10.0).reshape(3, 3)))


@pytest.mark.parametrize(
    "function",
    [joined_by_r_, joined_by_r_with_constant_pieces, joined_by_c_, joined_by_c_with_a_matrix,
     joined_by_a_local_name_for_r_, joined_by_a_local_name_for_c_],
)
def test_r_and_c_join_pieces_that_carry_gradients(function):
    x = np.array([0.3, 0.7, -1.1])
    v = np.array([1.0, -2.0, 0.5])
    gradient = ssad.grad(function)(x)
    assert np.all(gradient != 0.0)
    ssad.check_grads(function, (x,), order=2)
    expected = numerical_gradient(lambda z: function(z), x)
    np.testing.assert_allclose(ssad.jvp(function, (x,), (v,))[1], expected @ v, rtol=1e-6)
    np.testing.assert_allclose(ssad.hessian(function)(x), ssad.jacobian(ssad.grad(function))(x), rtol=1e-9)


def joined_with_a_directive(x):
    return np.sum(np.r_["0,2", x, x])


def grid_from_a_value(x):
    return np.sum(np.mgrid[0 : x[0] : 5j])


def index_expression_of_a_value(x):
    return np.sum(np.s_[x])


@pytest.mark.parametrize("function", [joined_with_a_directive, grid_from_a_value])
def test_a_subscript_of_an_object_without_a_rule_is_refused(function):
    x = np.array([0.3, 0.7, 1.1])
    with pytest.raises(ssad.MissingRuleError, match=r"test_regressions.py:\d+.*no rule for subscripting"):
        ssad.grad(function)(x)
    with pytest.raises(ssad.MissingRuleError, match=r"test_regressions.py:\d+.*no rule for subscripting"):
        ssad.jvp(function, (x,), (x,))


def test_a_value_in_an_index_built_by_np_s_is_refused_where_it_runs():
    # np.s_[x] is x itself: a part of an index carries no gradient, and a float is no index
    x = np.array([0.3, 0.7, 1.1])
    for run in (lambda: ssad.grad(index_expression_of_a_value)(x),
                lambda: ssad.jvp(index_expression_of_a_value, (x,), (x,))):
        with pytest.raises(ssad.SsadError, match=r"test_regressions.py:\d+.*`x` in an index built with `np.s_.*"
                                                 r"is a ndarray, not an index"):
            run()


def columns_by_index_expression(w):
    # Gram-Schmidt-like: the gradient writes and reads columns by `np.s_[:, k]`, with `k`
    # a loop variable that its second-order code pops from the gradient's tape
    Q = np.zeros((2, 3))
    for j in range(3):
        v = w[:2] * 1.0
        for k in range(j):
            v = v - Q[:, k] * w[j + 1]
        Q[:, j] = v
    return np.sum(Q**2) + Q[np.s_[1, int(np.argmax(w))]]


def test_an_index_built_by_np_s_is_differentiated_at_every_order():
    w = np.array([0.3, -0.5, 0.8, 0.4])
    v = np.array([1.0, -2.0, 0.5, 0.3])
    ssad.check_grads(columns_by_index_expression, (w,), order=2)
    gradient = ssad.grad(columns_by_index_expression)
    np.testing.assert_allclose(gradient(w), numerical_gradient(columns_by_index_expression, w), rtol=1e-6)
    hessian = ssad.hessian(columns_by_index_expression)(w)
    by_differences = np.array([numerical_gradient(lambda z, i=i: gradient(z)[i], w) for i in range(w.size)])
    np.testing.assert_allclose(hessian, by_differences, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(ssad.jvp(gradient, (w,), (v,))[1], hessian @ v, rtol=1e-9)
    np.testing.assert_allclose(ssad.grad(lambda z: np.sum(gradient(z) * v))(w), hessian @ v, rtol=1e-9)


def windows_by_index_expression(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + np.sum(x[np.s_[i : i + 2]] ** 2)
    return total


def test_the_bounds_of_a_slice_built_by_np_s_carry_no_gradient():
    # np.s_[i:i + 2] is slice(i, i + 2): at second order its bounds come back from the
    # gradient's tape, and an index is no value to differentiate.
    x = np.array([0.3, -0.7, 1.1, 0.4])
    counts = np.array([1.0, 2.0, 2.0, 1.0])  # how many windows hold each element
    np.testing.assert_allclose(ssad.grad(windows_by_index_expression)(x), 2 * counts * x, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(windows_by_index_expression)(x), np.diag(2 * counts), rtol=1e-12)


def indexes_a_constant_with_an_inactive_value(x, n):
    return np.sum(x * np.r_[0:n])


def test_a_subscript_of_an_object_with_inactive_values_still_runs():
    x = np.array([0.3, 0.7, 1.1])
    np.testing.assert_allclose(ssad.grad(indexes_a_constant_with_an_inactive_value)(x, 3), [0.0, 1.0, 2.0])


# ----- std where nothing spreads -----


def std_of_one_row(x):
    return np.sum(np.std(x, axis=0) * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    "function, x, expected",
    [
        (lambda x: np.std(x), 3.5, 0.0),
        (lambda x: np.std(x), np.array([2.0, 2.0, 2.0]), np.zeros(3)),
        (lambda x: x.std(), np.array([[0.5, 0.5]]), np.zeros((1, 2))),
        (std_of_one_row, np.array([[0.3, -0.2, 1.5]]), np.zeros((1, 3))),
        # the flat row has slope 0, the other the usual (x - mean) / (n * std)
        (lambda x: np.sum(np.std(x, axis=1, keepdims=True)), np.array([[0.3, 0.3], [0.1, 0.2]]), [[0, 0], [-0.5, 0.5]]),
        (lambda x: np.sum(np.var(x, axis=0)), np.array([[0.3, -0.2]]), np.zeros((1, 2))),
    ],
    ids=["scalar", "equal", "method", "one-row", "one-flat-row", "var"],
)
def test_std_without_spread_has_slope_zero(function, x, expected):
    gradient = ssad.grad(function)(x)
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)
    v = np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 0.5
    tangent = ssad.jvp(function, (x,), (v,))[1]
    np.testing.assert_allclose(tangent, np.sum(np.asarray(expected) * v), rtol=1e-12, atol=1e-15)
    assert np.all(np.isfinite(ssad.hessian(function)(x)))
    assert np.all(np.isfinite(ssad.grad(lambda z: np.sum(ssad.grad(function)(z) ** 2 + z))(x)))


def std_over_rows(z):
    return np.sum(np.std(z, axis=0) ** 1.5)


def std_unbiased(z):
    return np.std(z, ddof=1)


@pytest.mark.parametrize("function", [std_over_rows, std_unbiased])
def test_std_with_spread_still_matches_finite_differences(function):
    x = np.array([[0.3, -0.2, 1.5], [0.9, 0.4, -0.7]])
    ssad.check_grads(function, (x,), order=2)


# ----- second order through a list of differently shaped arrays -----


def sum_over_a_ragged_list(xs):
    return np.sum(np.sin(xs[0])) + np.sum(np.cos(xs[1]) * xs[1])


def test_hessian_vector_product_of_a_list_of_differently_shaped_arrays():
    xs = [np.array([0.3, -0.5, 1.2]), np.array([[0.4, 0.9], [-0.8, 0.1]])]
    vs = [np.array([1.0, 0.5, -2.0]), np.array([[0.3, -1.0], [0.7, 2.0]])]
    value, hvp = ssad.jvp(ssad.grad(sum_over_a_ragged_list), (xs,), (vs,))
    assert isinstance(value, list) and isinstance(hvp, list)
    # closed form: d2/dx2 sin(x) = -sin(x); d2/dx2 x cos(x) = -2 sin(x) - x cos(x)
    np.testing.assert_allclose(hvp[0], -np.sin(xs[0]) * vs[0], rtol=1e-12)
    np.testing.assert_allclose(hvp[1], (-2 * np.sin(xs[1]) - xs[1] * np.cos(xs[1])) * vs[1], rtol=1e-12)
    # reverse over reverse gives the same product
    def directional(xs):
        g = ssad.grad(sum_over_a_ragged_list)(xs)
        return np.sum(g[0] * vs[0]) + np.sum(g[1] * vs[1])

    again = ssad.grad(directional)(xs)
    for got, expected in zip(again, hvp, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    # and the same as finite differences of the gradient along vs
    eps = 1e-6
    up = ssad.grad(sum_over_a_ragged_list)([x + eps * v for x, v in zip(xs, vs, strict=True)])
    down = ssad.grad(sum_over_a_ragged_list)([x - eps * v for x, v in zip(xs, vs, strict=True)])
    for got, u, d in zip(hvp, up, down, strict=True):
        np.testing.assert_allclose(got, (u - d) / (2 * eps), rtol=1e-6, atol=1e-8)


# ----- third order through np.dot -----

DOT_WEIGHTS = np.array([0.2, -0.4, 0.7])


def sine_of_a_dot(x):
    return np.sin(np.dot(x, DOT_WEIGHTS))


gradient_of_sine_of_a_dot = ssad.grad(sine_of_a_dot)


def summed_gradient_of_sine_of_a_dot(x):
    return np.sum(gradient_of_sine_of_a_dot(x))


def test_third_order_through_dot():
    # h(x) = cos(x.w) sum(w): grad h = -sin(x.w) sum(w) w, its Jacobian -cos(x.w) sum(w) w w^T
    x = np.array([0.3, 0.7, 1.1])
    w = DOT_WEIGHTS
    s = np.dot(x, w)
    jacobian = -np.cos(s) * np.sum(w) * np.outer(w, w)
    second = ssad.grad(summed_gradient_of_sine_of_a_dot)
    np.testing.assert_allclose(second(x), -np.sin(s) * np.sum(w) * w, rtol=1e-12)
    value, pullback = ssad.vjp(second, x)
    v = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(pullback(np.ones(3))[0], jacobian.T @ np.ones(3), rtol=1e-12)
    np.testing.assert_allclose(ssad.vjp(second, x)[1](v)[0], jacobian.T @ v, rtol=1e-12)
    np.testing.assert_allclose(ssad.jvp(second, (x,), (v,))[1], jacobian @ v, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(summed_gradient_of_sine_of_a_dot)(x), jacobian, rtol=1e-12)
    third = ssad.grad(lambda z: np.sum(ssad.grad(summed_gradient_of_sine_of_a_dot)(z) * v))
    np.testing.assert_allclose(third(x), jacobian.T @ v, rtol=1e-12)


# ----- np.pad with widths passed in, and rules that give fewer adjoints than arguments -----


def padded_by_argument(x, widths):
    padded = np.pad(x, widths, "constant")
    return np.sum(np.sin(padded) * np.linspace(0.5, 1.5, padded.size))


def padded_by_reflection(x, widths):
    padded = np.pad(x, widths, mode="reflect")
    return np.sum(np.sin(padded) * np.linspace(0.5, 1.5, padded.size))


@pytest.mark.parametrize("function", [padded_by_argument, padded_by_reflection])
@pytest.mark.parametrize("widths", [2, (1, 2), [(2, 1)]], ids=["int", "pair", "list"])
def test_pad_widths_passed_as_an_argument_get_no_gradient(function, widths):
    x = np.array([0.3, 0.7, 1.1, -0.4])
    v = np.array([1.0, -0.5, 2.0, 0.25])
    expected = numerical_gradient(lambda z: function(z, widths), x)
    np.testing.assert_allclose(ssad.grad(function)(x, widths), expected, rtol=1e-6)
    d_x, d_widths = ssad.grad(function, wrt=(0, 1))(x, widths)
    np.testing.assert_allclose(d_x, expected, rtol=1e-6)
    assert not np.any(d_widths)
    value, pullback = ssad.vjp(function, x, widths)
    assert value == pytest.approx(function(x, widths))
    d_x, d_widths = pullback(1.0)
    np.testing.assert_allclose(d_x, expected, rtol=1e-6)
    assert not np.any(d_widths)
    np.testing.assert_allclose(ssad.jvp(function, (x, widths), (v, None))[1], expected @ v, rtol=1e-6)
    ssad.check_grads(lambda z: function(z, widths), (x,), order=2)
    hessian = ssad.hessian(function)(x, widths)
    np.testing.assert_allclose(hessian, ssad.jacobian(ssad.grad(function))(x, widths), rtol=1e-12)


def scaled_by(x, k):
    return x * k


@ssad.adjoint(scaled_by)
def _scaled_by_adjoint(dy, y, x, k):
    if np.ndim(x) == 0:  # a branch: the rule is called, not inlined
        return (dy * k,)
    return (dy * k,)


def calls_scaled_by(x, k):
    return np.sum(np.sin(scaled_by(x, k)))


def test_a_called_rule_that_gives_no_gradient_to_an_active_argument_is_refused():
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(ssad.grad(calls_scaled_by)(x, 2.0), 2.0 * np.cos(2.0 * x))
    with pytest.raises(ssad.MissingRuleError, match=r"test_regressions.py:\d+.*no gradient for its argument 1"):
        ssad.grad(calls_scaled_by, wrt=(0, 1))(x, 2.0)
    with pytest.raises(ssad.MissingRuleError, match=r"no gradient for its argument 1"):
        ssad.vjp(calls_scaled_by, x, 2.0)


# ----- function values that take *args -----


def product_of_all(*xs):
    return xs[0] * xs[1] * np.sin(xs[-1])


def scaled_product(scale, *xs):
    return scale * np.sum(xs[0] * xs[1])


def pick_product():
    return product_of_all


def pick_scaled():
    return scaled_product


def calls_a_returned_star_function(x):
    return pick_product()(x, x, x)


def calls_a_returned_function_with_leading_parameter(x, y):
    return pick_scaled()(y[0], x, np.cos(y))


def partial_of_a_star_function(x, y):
    g = functools.partial(scaled_product, y[1], x)
    return g(np.sin(y))


@pytest.mark.parametrize(
    "function, args",
    [
        (calls_a_returned_star_function, (0.7,)),
        (calls_a_returned_star_function, (np.array([0.3, -0.8]),)),
        (calls_a_returned_function_with_leading_parameter, (np.array([0.3, -0.8]), np.array([1.1, 0.4]))),
        (partial_of_a_star_function, (np.array([0.3, -0.8]), np.array([1.1, 0.4]))),
    ],
    ids=["scalar", "array", "leading-parameter", "partial"],
)
def test_a_function_value_with_star_args(function, args):
    # first order only: second derivatives through calls to function values are a documented limit
    ssad.check_grads(function, args)
    tangents = tuple(np.ones_like(a) if np.ndim(a) else 1.0 for a in args)
    value, tangent = ssad.jvp(function, args, tangents)
    assert value == pytest.approx(function(*args))
    eps = 1e-6
    up = function(*(a + eps * t for a, t in zip(args, tangents, strict=True)))
    down = function(*(a - eps * t for a, t in zip(args, tangents, strict=True)))
    np.testing.assert_allclose(tangent, (up - down) / (2 * eps), rtol=1e-6)


def test_a_returned_star_function_matches_the_closed_form():
    # x * x * sin(x): derivative 2 x sin(x) + x^2 cos(x)
    x = 0.7
    assert ssad.grad(calls_a_returned_star_function)(x) == pytest.approx(2 * x * np.sin(x) + x * x * np.cos(x))
    assert ssad.jvp(calls_a_returned_star_function, (x,), (1.0,))[1] == pytest.approx(
        2 * x * np.sin(x) + x * x * np.cos(x)
    )
    value, pullback = ssad.vjp(calls_a_returned_star_function, np.array([x, 0.2]))
    np.testing.assert_allclose(pullback(np.array([1.0, 2.0]))[0], [2 * x * np.sin(x) + x * x * np.cos(x),
                                                                 2 * (0.4 * np.sin(0.2) + 0.04 * np.cos(0.2))])


# ----- a gradient with a one-element tuple wrt keeps its tuple in every mode -----


def sine_times(x, y):
    return np.sum(np.sin(x) * y)


@pytest.mark.parametrize("with_value", [False, True], ids=["grad", "value_and_grad"])
def test_a_one_tuple_gradient_is_a_tuple_to_every_mode(with_value):
    x = np.array([0.3, 0.7, 1.1])
    y = np.array([1.0, 2.0, -1.0])
    u = np.array([0.5, -1.0, 2.0])
    make = ssad.value_and_grad if with_value else ssad.grad
    g = make(sine_times, wrt=(0,))

    def gradient_part(out):
        return out[1] if with_value else out

    direct = gradient_part(g(x, y))
    assert isinstance(direct, tuple) and len(direct) == 1
    np.testing.assert_allclose(direct[0], np.cos(x) * y)
    # the gradient's derivative: d/dx = diag(-sin(x) y), d/dy = diag(cos(x))
    value, tangent = ssad.jvp(g, (x, y), (u, u))
    assert isinstance(gradient_part(value), tuple) and isinstance(gradient_part(tangent), tuple)
    np.testing.assert_allclose(gradient_part(tangent)[0], -np.sin(x) * y * u + np.cos(x) * u)
    value, pullback = ssad.vjp(g, x, y)
    assert isinstance(gradient_part(value), tuple)
    seed = (0.0, (u,)) if with_value else (u,)
    d_x, d_y = pullback(seed)
    np.testing.assert_allclose(d_x, -np.sin(x) * y * u)
    np.testing.assert_allclose(d_y, np.cos(x) * u)

    def through_a_call(x, y):
        return np.sum(gradient_part(g(x, y))[0] * u)

    np.testing.assert_allclose(ssad.grad(through_a_call)(x, y), -np.sin(x) * y * u)
    assert str(ssad.show(sine_times, wrt=(0,))).rstrip().endswith(("return d_x,", "return (d_x,)"))


# A primitive returning a tuple, read both whole and by index: its adjoint is a tuple, and
# two contributions to it used to be joined with `+`, which concatenated them (the gradient
# came out halved). Unpacked and differentiated twice, reverse over reverse was wrong too.

_SQUARE = np.array([[2.0, 0.3], [0.1, 1.5]])
_DIRECTION = np.array([[0.3, -0.2], [0.5, 0.1]])


def slogdet_read_whole_and_by_index(x):
    t = np.linalg.slogdet(x)
    return np.sum(np.stack(t)) + t[1]


def frexp_read_whole_and_by_index(x):
    parts = np.frexp(x)
    return np.sum(np.stack(parts) * x) + np.sum(np.sin(parts[0]))


def test_tuple_results_read_whole_and_by_index():
    np.testing.assert_allclose(
        ssad.grad(slogdet_read_whole_and_by_index)(_SQUARE), 2 * np.linalg.inv(_SQUARE).T, rtol=1e-12
    )
    x = np.array([0.3, 2.5, -5.0])
    expected = numerical_gradient(frexp_read_whole_and_by_index, x)
    np.testing.assert_allclose(ssad.grad(frexp_read_whole_and_by_index)(x), expected, rtol=1e-7)


def squared_logdet(a):
    sign, logdet = np.linalg.slogdet(a.T @ a)
    return logdet**2


_d_squared_logdet = ssad.grad(squared_logdet)


def _along_direction(a):
    return np.sum(_d_squared_logdet(a) * _DIRECTION)


def test_second_derivatives_through_an_unpacked_tuple_result():
    eps = 1e-6
    expected = (_d_squared_logdet(_SQUARE + eps * _DIRECTION) - _d_squared_logdet(_SQUARE - eps * _DIRECTION)) / (2 * eps)
    np.testing.assert_allclose(ssad.grad(_along_direction)(_SQUARE), expected, rtol=1e-6)  # reverse over reverse
    np.testing.assert_allclose(ssad.jvp(_d_squared_logdet, (_SQUARE,), (_DIRECTION,))[1], expected, rtol=1e-6)


# A call whose result is unused used to be dropped from the derivative, so a change it
# made in place (a helper writing `y[0, 0] = v`, `np.fill_diagonal` through a variable) was
# missed: a wrong gradient, silently. Now it is refused where it stands, and a helper that
# changes nothing it was given is still differentiated around.

_MATRIX = np.array([[0.5, 0.3], [0.2, 0.9]])


def _write_corner(y, v):
    y[0, 0] = v


def _write_through_a_view(y, v):
    row = y[0]
    row *= v


def _report(y, log):
    log.append(float(np.sum(y)))  # a list of the helper's own: nothing of the caller changes
    return None


def calls_a_writing_helper(x):
    y = x * 2.0
    _write_corner(y, x[0, 1] ** 2)
    return np.sum(y**2)


def calls_a_helper_writing_through_a_view(x):
    y = x * 2.0
    _write_through_a_view(y, x[0, 1])
    return np.sum(y**2)


def calls_fill_diagonal_through_a_variable(x):
    y = x * 2.0
    fill = np.fill_diagonal
    fill(y, x[0, 0] ** 2)
    return np.sum(y**2)


def calls_a_reporting_helper(x):
    y = np.sin(x)
    _report(y, [])
    return np.sum(y**2)


@pytest.mark.parametrize(
    "f", [calls_a_writing_helper, calls_a_helper_writing_through_a_view, calls_fill_diagonal_through_a_variable],
    ids=lambda f: f.__name__,
)
def test_a_discarded_call_that_may_write_in_place_is_refused(f):
    for make in (lambda: ssad.grad(f)(_MATRIX), lambda: ssad.jvp(f, (_MATRIX,), (np.ones((2, 2)),))):
        with pytest.raises(ssad.SsadError, match="is not used") as caught:
            make()
        assert caught.value.lineno == f.__code__.co_firstlineno + (3 if "variable" in f.__name__ else 2)


def test_a_discarded_call_that_changes_nothing_is_differentiated_around():
    expected = numerical_gradient(calls_a_reporting_helper, _MATRIX)
    np.testing.assert_allclose(ssad.grad(calls_a_reporting_helper)(_MATRIX), expected, rtol=1e-7)


# ----- a write that names one position twice keeps the last value -----
# `a[[0, 0]] = v` keeps v[1] (NumPy assigns in order); the adjoint of the written value used
# to give both v[0] and v[1] the adjoint of a[0]: a silently wrong gradient.


def writes_one_position_twice(v):
    a = np.zeros(3)
    a[np.array([0, 0])] = v
    return np.sum(a * np.array([1.0, 2.0, 3.0]))


def puts_twice_along_an_axis(x):
    a = np.zeros((2, 3))
    np.put_along_axis(a, np.array([[0, 0], [2, 1]]), np.sin(x), axis=1)
    return np.sum(a * np.arange(1.0, 7.0).reshape(2, 3))


def test_a_position_written_twice_passes_its_adjoint_to_the_last_value_only():
    np.testing.assert_array_equal(ssad.grad(writes_one_position_twice)(np.array([5.0, 7.0])), [0.0, 1.0])
    x = np.array([[0.3, -0.2], [0.5, 0.9]])
    expected = np.cos(x) * np.array([[0.0, 1.0], [6.0, 5.0]])
    np.testing.assert_allclose(ssad.grad(puts_twice_along_an_axis)(x), expected, rtol=1e-12)
    ssad.check_grads(puts_twice_along_an_axis, (x,), order=2)


# ----- a method of a string in code that is differentiated again -----
# `for k in p: if k.startswith("W")` over a dict of arrays had a right first derivative, but
# every second-order mode refused it ("no tangent rule for str.startswith, called through a
# variable with values that carry tangents"): in the gradient, `k` is read out of the keys
# the gradient iterates, which the second pass could not tell from values carrying gradients.

_PARAMS = {"W1": np.array([1.0, 2.0]), "b": np.array([3.0]), "W2": np.array([-0.5])}
_ALONG = {"W1": np.array([0.5, -1.0]), "b": np.array([2.0]), "W2": np.array([1.5])}


def cubes_the_weights(p):
    t = 0.0
    for k in p:
        if k.startswith("W"):
            t = t + np.sum(p[k] ** 3)
    return t


def squares_the_weights(p):
    return sum(np.sum(v ** 2) for k, v in p.items() if k.upper().startswith("W"))


def _hessian_along(f, p, v):
    """The Hessian of `f` along `v`, for the two functions above (closed form)."""
    power = 3 if f is cubes_the_weights else 2
    return {k: (power * (power - 1) * p[k] ** (power - 2) * v[k] if k.startswith("W") else 0.0 * p[k])
            for k in p}


@pytest.mark.parametrize("f", [cubes_the_weights, squares_the_weights])
def test_a_string_method_at_second_order(f):
    gradient = ssad.grad(f)
    expected = _hessian_along(f, _PARAMS, _ALONG)
    _, along = ssad.jvp(gradient, (_PARAMS,), (_ALONG,))
    reverse = ssad.grad(lambda q: sum(np.sum(gradient(q)[k] * _ALONG[k]) for k in q))(_PARAMS)
    for k in _PARAMS:
        np.testing.assert_allclose(along[k], expected[k], rtol=1e-12)
        np.testing.assert_allclose(reverse[k], expected[k], rtol=1e-12)
    np.testing.assert_allclose(ssad.hvp(f)(_PARAMS, _ALONG)["W1"], expected["W1"], rtol=1e-12)


# ----- a zero tangent through np.expand_dims -----
# Batched `np.linalg.slogdet` reduced by `np.sum` or `np.mean`: every second-order mode raised
# ValueError ("cannot reshape array of size 1 into shape (2,1,1)") in the generated code: the
# gradient's `np.expand_dims` got the zero tangent of the seed as a scalar.


def log_determinants(a):
    batch = a.reshape(2, 2, 2) + 3 * np.eye(2)
    sign, logabsdet = np.linalg.slogdet(batch)
    return np.sum(logabsdet) + np.mean(logabsdet)


def test_a_batched_log_determinant_at_second_order():
    a = np.array([0.1, 0.2, -0.3, 0.4, 0.5, -0.1, 0.2, 0.3])
    t = np.array([0.5, -1.0, 0.25, 2.0, -0.3, 0.7, 1.1, -0.4])
    gradient = ssad.grad(log_determinants)
    np.testing.assert_allclose(gradient(a), numerical_gradient(log_determinants, a), rtol=1e-6, atol=1e-9)
    expected = numerical_gradient(lambda v: float(np.sum(gradient(v) * t)), a)
    np.testing.assert_allclose(ssad.jvp(gradient, (a,), (t,))[1], expected, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(ssad.hessian(log_determinants)(a) @ t, expected, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(ssad.grad(lambda v: np.sum(gradient(v) * t))(a), expected, rtol=1e-5, atol=1e-8)


# ----- ssad.hessian, ssad.jacobian, ssad.hvp and has_aux called inside differentiated code -----
# jvp raised ValueError ("'args' is not in list"); grad read ssad's own source and refused a
# name there ("matrices.py:7:16: name `seed` is not defined where grad_energy can see it").


def _energy(x):
    return np.sum(np.sin(x) * x ** 2)


def _energy_and_residual(x):
    return np.sum(x ** 2), x - 1.0


def calls_a_hessian(x):
    return np.sum(ssad.hessian(_energy)(x) ** 2)


def calls_a_jacobian(x):
    return np.sum(ssad.jacobian(np.sin)(x) @ x)


def calls_an_hvp(x):
    return np.sum(ssad.hvp(_energy)(x, x) ** 2)


def calls_a_gradient_with_aux(x):
    g, _ = ssad.grad(_energy_and_residual, has_aux=True)(x)
    return np.sum(g ** 2)


@pytest.mark.parametrize("f, made_by", [(calls_a_hessian, "ssad.jacobian or ssad.hessian"),
                                        (calls_a_jacobian, "ssad.jacobian or ssad.hessian"),
                                        (calls_an_hvp, "ssad.hvp"),
                                        (calls_a_gradient_with_aux, "has_aux=True")])
def test_a_matrix_function_called_inside_is_refused_at_the_users_line(f, made_by):
    x = np.array([0.3, 0.5])
    for run in (lambda: ssad.grad(f)(x), lambda: ssad.jvp(f, (x,), (x,))):
        with pytest.raises(ssad.MissingRuleError, match="is called inside a function being differentiated") as caught:
            run()
        assert made_by in str(caught.value)
        assert caught.value.filename == __file__


# ----- an element read, then a write into the array it was read from -----
# `v = t[1]` then `t[0] = 5.0` was refused ("would change an array that `v` shares"), and so was
# the preallocated trajectory `x, v = traj[i]; traj[i + 1, 0] = x + dt * v`: an element of a
# vector is a number, which the write leaves alone. Of a matrix it is a row, which the write
# changes: that is refused where the code runs.


def reads_an_element_then_writes_another(p):
    t = p * 1.0
    v = t[1]
    t[0] = 5.0
    return v * t[0] + np.sum(t)


def steps_a_preallocated_trajectory(p):
    traj = np.zeros((4, 2))
    traj[0] = p
    for i in range(3):
        x, v = traj[i]
        traj[i + 1, 0] = x + 0.1 * v
        traj[i + 1, 1] = v - 0.1 * np.sin(x)
    return np.sum(traj[-1] ** 2)


def reads_a_row_then_writes_into_it(p):
    m = np.outer(p, p)
    r = m[0]
    m[0, 0] = 3.0
    return np.sum(r)


def unpacks_rows_then_writes_into_them(p):
    block = np.zeros((2, 2, 2)) + p
    x, v = block[0]
    block[0, 1, 0] = 7.0
    return np.sum(x * v)


@pytest.mark.parametrize("f", [reads_an_element_then_writes_another, steps_a_preallocated_trajectory])
def test_an_element_read_is_left_alone_by_a_write(f):
    p = np.array([0.3, 0.7])
    t = np.array([0.5, -1.5])
    gradient = ssad.grad(f)
    np.testing.assert_allclose(gradient(p), numerical_gradient(f, p), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ssad.jvp(f, (p,), (t,))[1], numerical_gradient(f, p) @ t, rtol=1e-6, atol=1e-9)
    expected = numerical_gradient(lambda v: float(np.sum(gradient(v) * t)), p)
    np.testing.assert_allclose(ssad.jvp(gradient, (p,), (t,))[1], expected, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(ssad.grad(lambda v: np.sum(gradient(v) * t))(p), expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("f", [reads_a_row_then_writes_into_it, unpacks_rows_then_writes_into_them])
def test_a_row_read_then_written_into_is_refused(f):
    p = np.array([0.3, 0.7])
    for run in (lambda: ssad.grad(f)(p), lambda: ssad.jvp(f, (p,), (p,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match="would change an array that `[rxv]` shares") as caught:
            run()
        assert caught.value.filename == __file__


def test_zip_of_a_starred_slice_is_refused_naming_zip():
    def f(x):
        pairs = [(x[0], x[1]), (x[1], x[2])]
        a, b = zip(*pairs[:1], strict=True)
        return sum(a) * sum(b)

    with pytest.raises(ssad.UnsupportedSyntaxError, match=r"`\*` passes values that carry gradients to zip; pass "
                                                         r"them one by one, or unpack a list of a length ssad sees"):
        ssad.grad(f)(np.array([0.3, -0.7, 1.1]))
