"""Python's protocols on objects of the user's inside differentiated code: what `for v in p`,
`list(p)` or `a, b = p` walk (`__iter__`), `p[i]` (`__getitem__`), `abs(u)`, `float(u)`,
`complex(u)`, `math.sqrt(u)` (`__abs__`, `__float__`, ...), `a += v` (`__iadd__` before
`__add__`), and methods of the user's named like a list's changes (`s.push(x)`).

The method Python calls is what runs and is differentiated: every derivative is compared
with central differences (and autograd, which runs these programs too) in reverse mode,
forward mode and at second order. What ssad cannot differentiate is refused at the user's
line.
"""

import inspect
import math
import operator
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import ssad

from .conftest import finite_difference_gradient

X = np.array([0.3, 0.7, -0.4])
V = np.array([0.5, -1.0, 2.0])


def _line_of(function, text):
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _hessian_by_differences(f, x):
    gradient = ssad.grad(f)
    return np.array([finite_difference_gradient(lambda y, k=k: gradient(y)[k], (x,), 0) for k in range(len(x))])


def _check_every_order(f, x=X, autograd_too=True):
    """ssad's gradient, tangent, Hessian-vector products (forward over reverse and reverse over
    reverse) and Hessian against central differences, and against autograd."""
    expected = finite_difference_gradient(f, (x,), 0)
    np.testing.assert_allclose(ssad.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    value, tangent = ssad.jvp(f, (x,), (V,))
    assert value == pytest.approx(f(x), rel=1e-12)
    assert tangent == pytest.approx(expected @ V, rel=1e-6, abs=1e-8)
    hessian = _hessian_by_differences(f, x)
    np.testing.assert_allclose(ssad.hvp(f)(x, V), hessian @ V, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ssad.grad(lambda y: np.dot(ssad.grad(f)(y), V))(x), hessian @ V, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ssad.hessian(f)(x), hessian, rtol=1e-5, atol=1e-7)
    if autograd_too:
        autograd = pytest.importorskip("autograd")
        np.testing.assert_allclose(ssad.grad(f)(x), autograd.grad(f)(x), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ssad.hessian(f)(x), autograd.hessian(f)(x), rtol=1e-8, atol=1e-10)


# ----- `__iter__`: what a loop, list(p), sum(p), an unpacking ... walk -----


@dataclass
class Poly:
    c: object

    def __iter__(self):
        return iter(self.c)


@dataclass
class Squares:
    """Walks the squares of its coefficients, indexes their cubes, is called as a polynomial."""

    c: object

    def __len__(self):
        return len(self.c)

    def __iter__(self):
        return iter(self.c * self.c)

    def __getitem__(self, i):
        return self.c[i] ** 3

    def __call__(self, t):
        return sum(ci * t ** i for i, ci in enumerate(self))


def walked_by_a_generator_expression(x):
    return sum(v * v for v in Poly(x))


def test_a_loop_over_an_object_walks_its_iter():
    # was a zero gradient and a zero tangent: the object taken for a sequence of nothing to differentiate
    np.testing.assert_allclose(ssad.grad(walked_by_a_generator_expression)(X), 2 * X, rtol=1e-12)
    assert ssad.jvp(walked_by_a_generator_expression, (X,), (np.array([1.0, 0.0, 0.0]),))[1] == pytest.approx(
        2 * X[0])
    _check_every_order(walked_by_a_generator_expression)


def by_list(x):
    return sum(v ** 3 for v in list(Squares(x)))


def by_tuple(x):
    a, b, c = tuple(Squares(x))
    return a * b + c


def by_sum(x):
    return sum(Squares(x)) * x[0]


def by_sorted(x):
    return sorted(Squares(x))[-1] * x[1]


def by_max_and_min(x):
    return max(Squares(x)) - 2.0 * min(Squares(x))


def by_unpacking(x):
    a, b, c = Squares(x)
    return a * b - c * x[0]


def by_zip(x):
    return sum(a * b for a, b in zip(Squares(x), x, strict=True))


def by_enumerate(x):
    return sum((i + 1.0) * v for i, v in enumerate(Squares(x)))


def by_a_for_loop(x):
    total = 0.0
    for v in Squares(x):
        total = total + v * total + v
    return total


def called_as_a_polynomial(x):
    p = Squares(x[:2])
    return p(x[2]) + p[1] * len(p) + sum(v for v in p)


WALKS = [by_list, by_tuple, by_sum, by_sorted, by_max_and_min, by_unpacking, by_zip, by_enumerate, by_a_for_loop,
         called_as_a_polynomial]


@pytest.mark.parametrize("function", WALKS)
def test_what_python_walks_by_iter_walks_the_objects_iter(function):
    _check_every_order(function)


def test_list_of_an_object_is_its_items_in_forward_mode():
    # was an array for the tangent of a number (list(p) taken for p itself)
    f = by_list
    tangent = ssad.jvp(f, (X,), (V,))[1]
    assert np.ndim(tangent) == 0
    assert tangent == pytest.approx(finite_difference_gradient(f, (X,), 0) @ V, rel=1e-7)


def extended_by_an_object(x):
    items = [x[0]]
    items.extend(Squares(x))
    return sum(v * v for v in items)


def test_extending_a_list_by_an_object_walks_its_iter():
    expected = finite_difference_gradient(extended_by_an_object, (X,), 0)
    np.testing.assert_allclose(ssad.grad(extended_by_an_object)(X), expected, rtol=1e-7)
    assert ssad.jvp(extended_by_an_object, (X,), (V,))[1] == pytest.approx(expected @ V, rel=1e-7)


@dataclass
class Sines:
    c: object

    def __iter__(self):  # a generator: the list of what it yields
        for v in self.c:
            yield np.sin(v)
        yield from self.c


def walked_generator(x):
    return sum(v * v for v in Sines(x))


def test_an_iter_written_as_a_generator():
    _check_every_order(walked_generator, autograd_too=False)  # np.sin in the method: autograd cannot run it


def walks_an_argument(x, p):
    return sum(v * x[0] + v * v for v in p) + x[1]


def test_an_object_passed_in_is_walked_by_its_iter_and_gets_its_gradient():
    p = Squares(np.array([1.0, 2.0, 3.0]))
    expected = finite_difference_gradient(lambda y: walks_an_argument(y, p), (X,), 0)
    np.testing.assert_allclose(ssad.grad(walks_an_argument)(X, p), expected, rtol=1e-7)
    assert ssad.jvp(walks_an_argument, (X, p), (V, None))[1] == pytest.approx(expected @ V, rel=1e-7)
    d_p = ssad.grad(walks_an_argument, wrt=1)(X, p)
    expected_c = finite_difference_gradient(lambda c: walks_an_argument(X, Squares(c)), (p.c,), 0)
    np.testing.assert_allclose(d_p.c, expected_c, rtol=1e-7)
    second = _hessian_by_differences(lambda y: walks_an_argument(y, p), X)
    np.testing.assert_allclose(ssad.hessian(walks_an_argument)(X, p), second, rtol=1e-5, atol=1e-7)


Pair = namedtuple("Pair", "a b")


def namedtuple_walked_and_indexed(x):
    p = Pair(x[0], x[1] * x[2])
    a, b = p
    return p[0] * p[1] + sum(p) + a * b + sum(v * v for v in p)


def namedtuple_argument_indexed(x, p):
    return p[0] * x[0] + p[1] * x[1] ** 2 + sum(v for v in p) * x[2]


def test_namedtuples_are_walked_and_indexed_as_tuples():
    _check_every_order(namedtuple_walked_and_indexed)
    p = Pair(1.5, -2.0)
    expected = finite_difference_gradient(lambda y: namedtuple_argument_indexed(y, p), (X,), 0)
    np.testing.assert_allclose(ssad.grad(namedtuple_argument_indexed)(X, p), expected, rtol=1e-7)
    assert ssad.jvp(namedtuple_argument_indexed, (X, p), (V, None))[1] == pytest.approx(expected @ V, rel=1e-7)
    assert ssad.grad(namedtuple_argument_indexed, wrt=1)(X, p) == pytest.approx(Pair(X[0] + X[2], X[1] ** 2 + X[2]))


@dataclass
class Countdown:
    n: object

    def __iter__(self):  # an iterator of its own, read one `__next__` at a time
        return self

    def __next__(self):
        if self.n <= 0.5:
            raise StopIteration
        self.n = self.n - 1.0
        return self.n


def counted_down(x):
    return sum(v * x[1] for v in Countdown(x[0] + 3.0))


def counts_down_an_argument(x, c):
    return sum(v * x[0] for v in c)


@dataclass
class OldStyle:
    c: object

    def __getitem__(self, i):  # Python walks it from 0 until IndexError
        return self.c[i]


def walked_by_getitem(x):
    return sum(v * v for v in OldStyle(x))


@dataclass
class Holder:
    inner: object


def walks_an_attribute(x):
    h = Holder(Poly(x))
    return sum(v * v for v in h.inner)


def indexes_an_attribute(x):
    h = Holder(Squares(x))
    return h.inner[0] * x[1]


def lists_an_item(x):
    polys = [Poly(x)]
    return sum(list(polys[0]))


def test_an_iter_returning_an_iterator_is_refused_at_the_users_line():
    line = _line_of(counted_down, "return sum(")
    for make in (lambda: ssad.grad(counted_down)(X), lambda: ssad.jvp(counted_down, (X,), (V,))):
        with pytest.raises(ssad.SsadError, match=r"the `__iter__` of Countdown returns a Countdown, which ssad does not "
                                                 r"walk; make it a generator") as error:
            make()
        assert error.value.lineno == line


def test_an_iterator_that_carries_no_derivative_is_walked_as_python_walks_it():
    # 2.0, 1.0, 0.0: Python's own `__iter__` and `__next__`, run as the code runs
    np.testing.assert_allclose(ssad.grad(counts_down_an_argument)(X, Countdown(3.0)), [3.0, 0.0, 0.0])
    assert ssad.jvp(counts_down_an_argument, (X, Countdown(3.0)), (V, None))[1] == pytest.approx(3.0 * V[0])


def test_the_old_sequence_protocol_is_refused_at_the_users_line():
    line = _line_of(walked_by_getitem, "return sum(")
    for make in (lambda: ssad.grad(walked_by_getitem)(X), lambda: ssad.jvp(walked_by_getitem, (X,), (V,))):
        with pytest.raises(ssad.MissingRuleError, match=r"iterating a OldStyle walks its `__getitem__` from 0 .* give the "
                                                        r"class an `__iter__`") as error:
            make()
        assert error.value.lineno == line


@pytest.mark.parametrize("function", [walks_an_attribute, indexes_an_attribute, lists_an_item])
def test_an_object_ssad_cannot_tell_is_one_is_refused_where_it_is_walked_or_indexed(function):
    # was a zero gradient (walked) or an IndexError (indexed)
    line = _line_of(function, "return ")
    for make in (lambda: ssad.grad(function)(X), lambda: ssad.jvp(function, (X,), (V,))):
        with pytest.raises(ssad.MissingRuleError, match=r"walks or indexes a (Poly|Squares) \(its own `__iter__` or "
                                                        r"`__getitem__`\), which ssad took for a list or an array.*"
                                                        r"Pass the object to the function as an argument") as error:
            make()
        assert error.value.lineno == line


# ----- `__getitem__` -----


def indexed_twice(x):
    p = Squares(x)
    return p[0] * p[1] + p[-1]


def indexed_in_a_loop(x):
    p = Squares(x)
    total = 0.0
    for i in range(len(p)):
        total = total + p[i] * x[i]
    return total


@dataclass
class Sliced:
    c: object

    def __getitem__(self, index):
        return self.c[index] * self.c[index]


def sliced(x):
    p = Sliced(x)
    a = p[1:3]
    return a[0] * a[1] + p[::2][1]


@dataclass
class Grid:
    m: object

    def __getitem__(self, index):
        i, j = index
        return self.m[i] * self.m[j]


def indexed_by_a_tuple(x):
    g = Grid(x)
    return g[0, 1] + g[2, 2] * g[1, 0]


@pytest.mark.parametrize("function", [indexed_twice, indexed_in_a_loop, sliced, indexed_by_a_tuple])
def test_subscripting_an_object_calls_its_getitem(function):
    # was an IndexError in getitem_adjoint (or an AttributeError), and a tangent of the wrong method
    _check_every_order(function)


# ----- builtins that call a method: abs, float, complex, pow, operator.*, math.*, np.float64 -----


@dataclass
class Q:
    v: object

    def __abs__(self):
        return Q(abs(self.v) ** 1.5)

    def __float__(self):
        return float(self.v * self.v)

    def __complex__(self):
        return complex(self.v, 2.0)

    def __pow__(self, p):
        return Q(self.v ** p)

    def __rpow__(self, base):
        return Q(base ** self.v)

    def __mul__(self, s):
        return Q(self.v * s)


@dataclass
class Plain:
    v: object

    def __abs__(self):
        return Plain(abs(self.v))

    def __float__(self):
        return float(self.v)


def abs_of_an_object(x):
    return abs(Plain(x[0])).v * x[1]


def float_of_an_object(x):
    return float(Plain(x[0] * x[1]))


def test_abs_and_float_of_an_object_call_its_methods():
    x = np.array([-0.3, 0.7])
    # abs: was NumPy's rule for abs on a Plain (TypeError); float: an AttributeError and a tangent Plain(v=0.7)
    np.testing.assert_allclose(ssad.grad(abs_of_an_object)(x), [-x[1], abs(x[0])], rtol=1e-12)
    assert ssad.jvp(abs_of_an_object, (x,), (np.array([1.0, 0.0]),))[1] == pytest.approx(-x[1])
    np.testing.assert_allclose(ssad.grad(float_of_an_object)(x), [x[1], x[0]], rtol=1e-12)
    value, tangent = ssad.jvp(float_of_an_object, (x,), (np.array([1.0, 0.0]),))
    assert type(value) is float and value == pytest.approx(x[0] * x[1])
    assert tangent == pytest.approx(x[1])


def abs_pow_and_operator_functions(x):
    a = abs(Q(x[0])).v * x[1] + pow(Q(x[0]), 3).v + (2.0 ** Q(x[1])).v
    return a + operator.mul(Q(x[2]), x[1]).v + operator.abs(Q(x[1])).v


def float_and_complex(x):
    return float(Q(x[1] * x[2])) + complex(Q(x[2])).real * x[0]


def through_math_and_numpy_floats(x):
    return math.sqrt(Q(x[0] + 2.0)) + math.exp(Q(x[1])) * x[2] + np.float64(Q(x[2])) * x[0]


def test_abs_pow_and_the_operator_functions_on_an_object_call_its_methods():
    _check_every_order(abs_pow_and_operator_functions)


@pytest.mark.parametrize("function", [float_and_complex, through_math_and_numpy_floats])
def test_conversions_of_an_object_call_its_float_and_complex(function):
    _check_every_order(function, autograd_too=False)  # float(...) and math.* of a box: autograd cannot


# ----- `a += v`: `__iadd__` first, then `__add__`, then the right operand's `__radd__` -----


@dataclass
class Acc:
    total: object

    def __iadd__(self, v):
        return Acc(self.total + v)


def added_in_place(x):
    a = Acc(x[0])
    a += x[1] * x[1]
    return a.total


def test_augmented_addition_calls_iadd():
    # was a TypeError: ssad called `__add__`, which Acc does not define
    np.testing.assert_allclose(ssad.grad(added_in_place)(X), [1.0, 2 * X[1], 0.0], rtol=1e-12)
    assert ssad.jvp(added_in_place, (X,), (np.array([1.0, 0.0, 0.0]),))[1] == pytest.approx(1.0)


@dataclass
class Both:
    v: object

    def __iadd__(self, s):
        return Both(self.v + 2.0 * s)

    def __add__(self, s):
        return Both(self.v + s)

    def __isub__(self, s):
        return NotImplemented  # Python goes on to `__sub__`

    def __sub__(self, s):
        return Both(self.v - s * s)

    def __mul__(self, s):
        return Both(self.v * s)


@dataclass
class Right:
    w: object

    def __radd__(self, other):
        return other * self.w


def in_place_operators(x):
    a = Both(x[0])
    a += x[1] * x[2]  # __iadd__
    a -= x[2]  # __isub__ gives NotImplemented: __sub__
    a *= x[1]  # no __imul__: __mul__
    for v in x:
        a += v * v
    b = 0.5
    b += Right(x[1])  # a float's += takes Right's __radd__
    return a.v * x[0] + b


def test_augmented_operators_follow_pythons_protocol_in_every_mode_and_order():
    assert in_place_operators(X) == pytest.approx(
        ((X[0] + 2 * X[1] * X[2] - X[2] ** 2) * X[1] + 2 * np.sum(X ** 2)) * X[0] + 0.5 * X[1])
    _check_every_order(in_place_operators)


def added_in_place_where_not_differentiated(x, c):
    a = Acc(c)
    a += 1.0  # no derivative: still Acc's `__iadd__`, which Python calls
    return a.total * x[0]


def test_augmented_addition_without_a_derivative_calls_iadd_too():
    assert ssad.grad(added_in_place_where_not_differentiated)(X, 2.0) == pytest.approx([3.0, 0.0, 0.0])
    assert ssad.jvp(added_in_place_where_not_differentiated, (X, 2.0), (V, 0.0))[1] == pytest.approx(3.0 * V[0])


# ----- methods named like a list's changes, called for their effect -----


class Summing:
    def __init__(self):
        self.total = 0.0

    def push(self, x):
        self.total = self.total + x

    def append(self, x):
        self.total = self.total + x


def pushes_into_an_object_made_here(xs):
    s = Summing()
    for x in xs:
        s.push(x)
    return s.total ** 2


def appends_into_an_object_passed_in(xs, s):
    for x in xs:
        s.append(x * 2.0)
    return xs[0] ** 2


@pytest.mark.parametrize("function, args, method", [
    (pushes_into_an_object_made_here, (X,), "push"),
    (appends_into_an_object_passed_in, (X, Summing()), "append"),
])
def test_a_method_of_an_object_named_like_a_lists_change_is_refused_at_the_users_line(function, args, method):
    # was an AttributeError in generated code: `d_s.pop()`, `d_s.append(...)`
    line = _line_of(function, f"s.{method}(")
    tangents = (V,) + (None,) * (len(args) - 1)
    for make in (lambda: ssad.grad(function)(*args), lambda: ssad.jvp(function, args, tangents)):
        with pytest.raises(ssad.UnsupportedSyntaxError, match=rf"`.{method}\(...\)` calls the method `{method}` of a "
                                                              r"Summing \(yours\).*have it return a new Summing and "
                                                              r"assign it") as error:
            make()
        assert error.value.lineno == line


def started(x):
    return [x[0]]


def grows_a_list(x):
    items = []
    for v in x:
        items.append(v * v)
    items.insert(1, x[0] * x[2])
    items.extend([x[1], x[2] ** 3])
    return sum(w * w for w in items)


def grows_a_list_a_call_gives(x):
    items = []
    for v in x:
        items.append(v * v)
    out = started(x)  # its kind is told where the code runs
    out.append(x[1] * x[2])
    return sum(w * w for w in items) + sum(w ** 3 for w in out)


@pytest.mark.parametrize("function", [grows_a_list, grows_a_list_a_call_gives])
def test_lists_still_grow_by_append_extend_and_insert_in_every_mode_and_order(function):
    _check_every_order(function)
    shown = str(ssad.show(function))
    assert "items.append(" in shown and "list_changed(items" not in shown  # a list ssad sees made: no check
    # a call's result may be an object with a method of that name: checked where the code runs
    assert ("list_changed(out" in shown) == (function is grows_a_list_a_call_gives)
