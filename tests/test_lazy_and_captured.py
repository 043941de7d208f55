"""Values Python reads later than ssad does, refused where the difference would show.

A nested function or lambda holds what it captures, a generator (a generator expression,
`map`, `zip`, `filter`, a generator function) reads its items when it is read, a dict's
`.values()` shows later changes of the dict, and `xs += ys` extends the list every name
of it sees. ssad reads all of these where they are made: each program below, where that
would give another value or derivative than Python's, was silently wrong in grad and jvp
(a closure's derivative read the array as it was after a later write; a generator read
twice gave its values twice; a view missed the dict's change; `xs += [v]` did not reach
`ys`), and is refused now at the user's line, in both modes. The programs that read them
as Python does are differentiated, and checked against central differences at first and
second order.
"""

import inspect

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

def lambda_reads_an_array_written_after(x):
    y = x * 1.0
    g = lambda: np.sum(y ** 2)
    y[0] = x[1] ** 3
    return g()


def lambda_reads_a_dict_item_written_after(x):
    d = {"k": x[0]}
    g = lambda: d["k"] * 2.0
    d["k"] = x[1] ** 2
    return g()


def lambda_reads_a_slice_scaled_after(x):
    y = x * 1.0
    g = lambda: np.sum(y ** 2)
    y[1:] *= 2.0
    return g()


def lambda_reads_an_array_written_through_a_second_name(x):
    y = x * 1.0
    g = lambda: np.sum(y ** 2)
    z = y
    z[0] = x[1] ** 3
    return g()


def default_holds_an_array_written_after(x):
    y = x * 1.0
    def g(v, w=y):
        return np.sum(w * v)
    y[0] = x[1] ** 3
    return g(x)


def lambda_reads_a_list_appended_to_after(x):
    xs = [x[0]]
    g = lambda: sum(xs)
    xs.append(x[1] ** 2)
    return g()


def lambda_made_in_a_loop_that_writes_what_it_reads(x):
    y = x * 1.0
    total = 0.0
    for k in range(2):
        y[k] = x[k + 1] ** 2
        g = lambda: np.sum(y * y)
        total = total + g()
    return total


def generator_read_twice(x):
    gen = (v * v for v in x)
    s1 = sum(gen)
    return s1 + 10.0 * sum(gen)


def map_read_twice(x):
    m = map(np.sin, x)
    return sum(m) + 10.0 * sum(m)


def generator_zipped_with_itself(x):
    gen = (v * v for v in x)
    tot = 0.0
    for p, q in zip(gen, gen, strict=True):
        tot = tot + p * q
    return tot


def generator_reads_an_array_written_before_it_is_read(x):
    y = x * 1.0
    gen = (v * y[0] for v in x)
    y[0] = 5.0 * x[2]
    return sum(gen)


def gen_fn(xs):
    for v in xs:
        yield np.sin(v)


def generator_function_read_twice(x):
    g = gen_fn(x)
    return sum(g) + 10.0 * sum(g)


def zip_read_twice(x):
    z = zip(x, x * 2, strict=True)
    a = 0.0
    for p, q in z:
        a = a + p * q
    for p, q in z:
        a = a + 10.0 * p * q
    return a


def generator_read_in_a_loop(x):
    gen = (v * v for v in x)
    tot = 0.0
    for _ in range(2):
        tot = tot + sum(gen)
    return tot


def generator_reads_a_name_assigned_again(x):
    y = x[0]
    gen = (v * y for v in x)
    y = x[1] ** 2
    return sum(gen)


def values_of_a_dict_written_after(x):
    d = {"a": x[0], "b": x[1]}
    vals = d.values()
    d["a"] = x[2] ** 2
    return sum(vals)


def items_of_a_dict_extended_after(x):
    d = {"a": x[0]}
    it = d.items()
    d["c"] = x[1] ** 2
    tot = 0.0
    for _, v in it:
        tot = tot + v
    return tot


def keys_of_a_dict_extended_after(x):
    d = {"a": x[0]}
    ks = d.keys()
    d["b"] = x[1]
    tot = 0.0
    for k in ks:
        tot = tot + d[k]
    return tot


def list_extended_by_augmented_assignment_under_a_second_name(x):
    xs = [x[0]]
    ys = xs
    xs += [x[1] ** 2]
    return sum(ys)


def list_repeated_by_augmented_assignment_under_a_second_name(x):
    xs = [x[0]]
    ys = xs
    xs *= 2
    return sum(ys)


def lambda_made_after_the_write(x):
    y = x * 1.0
    y[0] = x[1] ** 3
    g = lambda: np.sum(y ** 2)
    return g()


def zip_read_once_by_a_loop(x):
    tot = 0.0
    pairs = zip(x, x * 2)  # noqa: B905 - zip(..., strict=True) held in a name is refused
    for p, q in pairs:
        tot = tot + p * q
    return tot


def generator_read_once(x):
    gen = (v * v for v in x)
    return sum(gen)


def map_read_once_by_a_loop(x):
    m = map(np.sin, x)
    total = 0.0
    for s in m:
        total = total + s
    return total


def values_read_twice_of_an_unchanged_dict(x):
    d = {"a": x[0], "b": x[1] ** 2}
    vals = d.values()
    return sum(vals) * max(vals)


def list_extended_by_augmented_assignment(x):
    xs = [x[0]]
    xs += [x[1] ** 2]
    return sum(xs)


def number_added_to_in_place_under_a_second_name(x):
    s = x[0]
    t = s
    s += x[1] ** 2
    return s * t


def lambdas_with_defaults_made_in_a_comprehension(x):
    fs = [lambda v, k=k: v * x[k] for k in range(3)]
    return sum(f(x[0]) for f in fs)


def dict_items_written_while_looping_over_items(x):
    d = {"a": x[0]}
    for k, v in d.items():
        d[k] = v * 2.0
    return d["a"] * x[1]


def list_appended_then_looped_over(x):
    acc = []
    for v in x:
        acc.append(v * v)
    total = 0.0
    for item in acc:
        total = total + item
    return total


def rows_added_by_augmented_assignment(x):
    rows = []
    rows += [x * 2.0]
    rows += [x ** 2]
    return np.sum(np.stack(rows))



REFUSED = [
    (lambda_reads_an_array_written_after, 'captured: ssad captures values when a function is made'),
    (lambda_reads_a_dict_item_written_after, 'captured: ssad captures values when a function is made'),
    (lambda_reads_a_slice_scaled_after, 'captured: ssad captures values when a function is made'),
    (lambda_reads_an_array_written_through_a_second_name, 'captured: ssad captures values when a function is made'),
    (default_holds_an_array_written_after, 'captured: ssad captures values when a function is made'),
    (lambda_reads_a_list_appended_to_after, 'captured: ssad captures values when a function is made'),
    (lambda_made_in_a_loop_that_writes_what_it_reads, 'captured: ssad captures values when a function is made'),
    (generator_read_twice, "is read more than once; Python's is empty after the first read"),
    (map_read_twice, "is read more than once; Python's is empty after the first read"),
    (generator_zipped_with_itself, "is read more than once; Python's is empty after the first read"),
    (generator_reads_an_array_written_before_it_is_read, 'which the generator `gen` .* reads'),
    (generator_function_read_twice, "is read more than once; Python's is empty after the first read"),
    (zip_read_twice, "is read more than once; Python's is empty after the first read"),
    (generator_read_in_a_loop, "is read more than once; Python's is empty after the first read"),
    (generator_reads_a_name_assigned_again, 'reads `y`, which is assigned again later'),
    (values_of_a_dict_written_after, "Python's view shows the change"),
    (items_of_a_dict_extended_after, "Python's view shows the change"),
    (keys_of_a_dict_extended_after, "Python's view shows the change"),
    (list_extended_by_augmented_assignment_under_a_second_name, 'would change a list that `ys` shares'),
    (list_repeated_by_augmented_assignment_under_a_second_name, 'would change a list that `ys` shares'),
]

X = np.array([0.5, 0.7, 1.1])
T = np.array([1.0, -0.5, 0.25])


def _lines_of(f):
    """The first and last line of `f` in this file: a refusal names a line of its body."""
    lines, first = inspect.getsourcelines(f)
    return first, first + len(lines) - 1


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_in_both_modes_at_the_users_line(f, message):
    first, last = _lines_of(f)
    for run in (lambda: ssad.grad(f)(X.copy()), lambda: ssad.jvp(f, (X.copy(),), (T,))):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=message) as caught:
            run()
        assert caught.value.filename == __file__
        assert first < caught.value.lineno <= last


READ_AS_PYTHON_DOES = [
    lambda_made_after_the_write,
    zip_read_once_by_a_loop,
    generator_read_once,
    map_read_once_by_a_loop,
    values_read_twice_of_an_unchanged_dict,
    list_extended_by_augmented_assignment,
    number_added_to_in_place_under_a_second_name,
    lambdas_with_defaults_made_in_a_comprehension,
    dict_items_written_while_looping_over_items,
    list_appended_then_looped_over,
    rows_added_by_augmented_assignment,
]


@pytest.mark.parametrize("f", READ_AS_PYTHON_DOES, ids=[f.__name__ for f in READ_AS_PYTHON_DOES])
def test_read_as_python_does_is_differentiated(f):
    expected = numerical_gradient(f, X.copy())
    value, gradient = ssad.value_and_grad(f)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    _, along = ssad.jvp(f, (X.copy(),), (T,))
    np.testing.assert_allclose(along, expected @ T, rtol=1e-6, atol=1e-8)
    grad_f = ssad.grad(f)
    hessian_t = numerical_gradient(lambda v: float(np.sum(grad_f(v) * T)), X.copy())
    np.testing.assert_allclose(ssad.jvp(grad_f, (X.copy(),), (T,))[1], hessian_t, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ssad.hessian(f)(X.copy()) @ T, hessian_t, rtol=1e-5, atol=1e-6)


def test_the_programs_differ_from_what_ssad_would_compute():
    # each refused program reads, in Python, something other than the list ssad would make
    assert generator_read_twice(X) == pytest.approx(np.sum(X ** 2))  # the second sum is 0
    assert values_of_a_dict_written_after(X) == pytest.approx(X[1] + X[2] ** 2)
    assert list_extended_by_augmented_assignment_under_a_second_name(X) == pytest.approx(X[0] + X[1] ** 2)
    assert lambda_reads_an_array_written_after(X) == pytest.approx(X[1] ** 6 + X[1] ** 2 + X[2] ** 2)
