"""Objects of the user's in differentiated code: their own methods and attributes named like
NumPy's (`m.sum(x)`, `p.T`), constants of their class read through `self`, classmethods,
`super()`, and operators (`u * x` calling the class's `__mul__`).

Every derivative is compared with a closed form or central differences, in reverse mode,
forward mode and, where the program is twice differentiable, at second order; what ssad
cannot differentiate is refused at the user's line.
"""

import functools
import math
import statistics
from collections import namedtuple
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

import ssad

from .conftest import finite_difference_gradient

X = np.array([0.3, -1.2, 2.0])
T = np.array([1.0, 2.0, 3.0])
W = np.array([1.0, 2.0, 3.0])


def _line_of(function, text):
    """The line of `function`'s file that holds `text`, searched from the function's first line."""
    import inspect

    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


# ----- methods of the user's named like NumPy's -----


def _quadratic(self, v):
    return np.sum(self.w * v**2)


NAMES = ["sum", "mean", "prod", "dot", "max", "min", "std", "var", "clip", "round", "cumsum", "reshape",
         "transpose", "copy", "astype", "argmax", "trace"]

# An object whose every method above is the same quadratic form sum(w * v**2).
Model = type("Model", (), {"__init__": lambda self, w: setattr(self, "w", w), **{n: _quadratic for n in NAMES}})

CALLS = {
    "sum": lambda x, m: m.sum(x),
    "mean": lambda x, m: m.mean(x),
    "prod": lambda x, m: m.prod(x),
    "dot": lambda x, m: m.dot(x),
    "max": lambda x, m: m.max(x),
    "min": lambda x, m: m.min(x),
    "std": lambda x, m: m.std(x),
    "var": lambda x, m: m.var(x),
    "clip": lambda x, m: m.clip(x),
    "round": lambda x, m: m.round(x),
    "cumsum": lambda x, m: m.cumsum(x),
    "reshape": lambda x, m: m.reshape(x),
    "transpose": lambda x, m: m.transpose(x),
    "copy": lambda x, m: m.copy(x),
    "astype": lambda x, m: m.astype(x),
    "argmax": lambda x, m: m.argmax(x),
    "trace": lambda x, m: m.trace(x),
}


@pytest.mark.parametrize("method", NAMES)
def test_a_method_of_an_object_passed_in_is_its_own_whatever_its_name(method):
    f, m = CALLS[method], Model(W)
    np.testing.assert_allclose(ssad.grad(f)(X, m), 2 * W * X, rtol=1e-12)
    value, tangent = ssad.jvp(f, (X, m), (T, None))
    assert value == pytest.approx(np.sum(W * X**2))
    assert tangent == pytest.approx((2 * W * X) @ T)


class Quadratic:
    def __init__(self, w):
        self.w = w

    def sum(self, v):  # named like ndarray.sum
        return np.sum(self.w * v**2)

    def loss(self, v):
        return self.sum(v) + np.sum(np.sin(v))


def test_a_method_named_sum_called_on_self_is_the_objects_in_both_modes_and_at_second_order():
    m = Quadratic(W)
    expected = 2 * W * X + np.cos(X)
    np.testing.assert_allclose(ssad.grad(m.loss)(X), expected, rtol=1e-12)
    assert ssad.jvp(m.loss, (X,), (T,))[1] == pytest.approx(expected @ T)
    np.testing.assert_allclose(ssad.hessian(m.loss)(X), np.diag(2 * W - np.sin(X)), rtol=1e-12, atol=1e-12)


def loss_of(x, m):
    return m.loss(x)


def test_the_gradient_of_the_object_itself_through_its_method_named_sum():
    gradient = ssad.grad(loss_of, wrt=1)(X, Quadratic(W))
    np.testing.assert_allclose(gradient.w, X**2, rtol=1e-12)
    second = ssad.grad(lambda x, m: np.sum(ssad.grad(loss_of)(x, m)))(X, Quadratic(W))
    np.testing.assert_allclose(second, 2 * W - np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(loss_of)(X, Quadratic(W)), np.diag(2 * W - np.sin(X)), atol=1e-12)


def dotted_by_name(x, *, model):
    return model.dot(x)


def test_an_object_passed_by_name_is_its_own():
    m = Model(W)
    np.testing.assert_allclose(ssad.grad(dotted_by_name)(X, model=m), 2 * W * X, rtol=1e-12)
    np.testing.assert_allclose(ssad.vjp(dotted_by_name, X, model=m)[1](1.0)[0], 2 * W * X, rtol=1e-12)
    np.testing.assert_allclose(ssad.hessian(dotted_by_name)(X, model=m), np.diag(2 * W), atol=1e-12)


def through_a_module(x, m):
    return m.sum(x * x) + m.max(x) + m.pi * m.mean(x)


def test_a_module_passed_in_is_called_as_itself():
    expected = 2 * X + np.array([0.0, 0.0, 1.0]) + np.pi / 3
    np.testing.assert_allclose(ssad.grad(through_a_module)(X, np), expected, rtol=1e-12)
    assert ssad.jvp(through_a_module, (X, np), (T, None))[1] == pytest.approx(expected @ T)


def mean_of_a_module(x, m):
    return m.mean([x, 2.0 * x, x * x])


@pytest.mark.parametrize("module, name", [(statistics, "statistics.mean")])
def test_a_module_function_without_a_rule_is_refused_where_it_is_called(module, name):
    # before: a tangent of zero in forward mode
    for make in (lambda: ssad.grad(mean_of_a_module)(0.7, module),
                 lambda: ssad.jvp(mean_of_a_module, (0.7, module), (1.0, None))):
        with pytest.raises(ssad.MissingRuleError, match=name) as caught:
            make()
        assert caught.value.lineno == _line_of(mean_of_a_module, "m.mean(")


def product_of_a_module(x, m):
    return m.prod([x, 2.0]) * m.pi


def test_math_passed_in_is_math():
    with pytest.raises(ssad.MissingRuleError, match="math.prod"):
        ssad.grad(product_of_a_module)(0.7, math)


class Outer:
    def __init__(self, inner):
        self.inner = inner

    def loss(self, v):
        return self.inner.sum(v) + np.sum(v)

    def dotted(self, v):
        return self.inner.dot(v)


class Dotted(Quadratic):
    def dot(self, v):
        return np.sum(self.w * v**2)


def test_a_method_named_sum_of_an_object_held_in_an_attribute():
    outer = Outer(Quadratic(W))
    np.testing.assert_allclose(ssad.grad(outer.loss)(X), 2 * W * X + 1.0, rtol=1e-12)
    assert ssad.jvp(outer.loss, (X,), (T,))[1] == pytest.approx((2 * W * X + 1.0) @ T)
    gradient = ssad.grad(lambda x, o: o.loss(x), wrt=1)(X, outer)
    np.testing.assert_allclose(gradient.inner.w, X**2, rtol=1e-12)


def test_an_objects_method_taken_for_numpys_where_ssad_cannot_tell_is_refused_at_the_users_line():
    # `self.inner.dot(v)` reads like ndarray.dot, whose rule differentiates v: what
    # self.inner holds is only known when the code runs, and it is checked there
    outer = Outer(Dotted(W))
    for make in (lambda: ssad.grad(outer.dotted)(X), lambda: ssad.jvp(outer.dotted, (X,), (T,))):
        with pytest.raises(ssad.MissingRuleError, match=r"`dot` of a Dotted.*ndarray\.dot.*Dotted\.dot") as caught:
            make()
        assert caught.value.lineno == _line_of(Outer.dotted, "self.inner.dot(v)")


Pair = namedtuple("Pair", "T k")


def field_named_T(p):
    return p.T * p.k + np.sin(p.T)


class Sized:
    def __init__(self, size, real):
        self.size, self.real = size, real


def attributes_named_size_and_real(x, o):
    return x * o.size * o.real


def test_fields_named_like_array_attributes_are_fields():
    p = Pair(2.0, 3.0)
    gradient = ssad.grad(field_named_T)(p)
    assert gradient == pytest.approx(Pair(3.0 + np.cos(2.0), 2.0))
    assert ssad.jvp(field_named_T, (p,), (Pair(1.0, 0.0),))[1] == pytest.approx(3.0 + np.cos(2.0))
    gradient = ssad.grad(attributes_named_size_and_real, wrt=1)(1.5, Sized(2.0, 3.0))
    assert (gradient.size, gradient.real) == pytest.approx((4.5, 3.0))  # size was a zero gradient


def array_methods(x, y):
    return x.dot(y).sum() + x.mean(axis=0).sum() + (x * 2.0).max() + x.T.sum()


def test_array_methods_stay_numpys_own_calls_in_the_code_that_runs():
    x, y = np.array([[0.5, -1.0], [2.0, 0.3]]), np.array([1.5, -0.5])
    gradient = ssad.grad(array_methods)(x, y)
    np.testing.assert_allclose(gradient, finite_difference_gradient(array_methods, (x, y), 0), rtol=1e-6)
    for source in (ssad.show(array_methods).source, ssad.show(array_methods, args=(x, y)).source,
                   ssad.grad(array_methods).variants.for_args((x, y)).source,
                   ssad.show(array_methods, mode="forward").source):
        assert "x.dot(y)" in source and "x.mean(axis=0)" in source
        assert "method_forward" not in source and "method_jvp" not in source and "numpy_member" not in source


# ----- constants of a class, classmethods, properties -----


class Scaled:
    scale = 3.0  # a constant of the class, read through self

    def __init__(self, w):
        self.w = w

    def predict(self, v):
        return self.scale * self.w * v**2


SCALED = Scaled(2.0)


def through_a_global_object(x):
    return SCALED.predict(x)


def through_an_object(x, m):
    return m.predict(x)


@dataclass
class ScaledRecord:
    w: float
    scale = 3.0  # not a field

    def predict(self, v):
        return self.scale * self.w * v**2


def test_a_class_attribute_read_through_self_is_a_constant():
    x = 0.4
    assert ssad.grad(through_a_global_object)(x) == pytest.approx(12.0 * x)
    assert ssad.jvp(through_a_global_object, (x,), (1.0,))[1] == pytest.approx(12.0 * x)
    assert ssad.grad(ssad.grad(through_a_global_object))(x) == pytest.approx(12.0)
    assert ssad.hessian(through_a_global_object)(x) == pytest.approx(12.0)
    for m, tangent in ((Scaled(2.0), SimpleNamespace(w=1.0)), (ScaledRecord(2.0), ScaledRecord(1.0))):
        gradient = ssad.grad(through_an_object, wrt=1)(x, m)
        assert vars(gradient) == pytest.approx({"w": 3.0 * x**2})  # the constant is no field of it
        # the tangent of the record has the class's constant too: it is no tangent (was 3.6)
        assert ssad.jvp(through_an_object, (x, m), (0.0, tangent))[1] == pytest.approx(3.0 * x**2)


class Util:
    scale = 3.0

    @classmethod
    def scaled(cls, v):
        return cls.scale * v**2


def through_a_classmethod(x):
    return Util.scaled(x)


def test_a_classmethod_reading_its_class():
    assert ssad.grad(through_a_classmethod)(0.4) == pytest.approx(2.4)
    assert ssad.jvp(through_a_classmethod, (0.4,), (1.0,))[1] == pytest.approx(2.4)
    assert ssad.grad(ssad.grad(through_a_classmethod))(0.4) == pytest.approx(6.0)


class WithProperty:
    def __init__(self, w):
        self.w = w

    @property
    def doubled(self):
        return self.w * 2.0


def through_a_property(p, x):
    return p.doubled * x


def test_a_property_of_a_plain_object_is_refused_at_the_users_line():
    with pytest.raises(ssad.SsadError, match="`.doubled` is a property of WithProperty") as caught:
        ssad.grad(through_a_property)(WithProperty(1.5), 2.0)
    assert caught.value.lineno == _line_of(through_a_property, "p.doubled")


class Lookup:
    def __init__(self, table):
        self.table = table

    def __getattr__(self, name):  # `p.w` is table["w"]: no attribute of p's
        return self.__dict__["table"][name]


def through_getattr(p, x):
    return p.w * x


def test_an_attribute_computed_by_getattr_is_refused_where_it_carries_a_derivative():
    p = Lookup({"w": 1.5})
    assert ssad.grad(through_getattr, wrt=1)(p, 2.0) == pytest.approx(1.5)  # p carries none: p.w is a constant
    for make in (lambda: ssad.grad(through_getattr)(p, 2.0),
                 lambda: ssad.jvp(through_getattr, (p, 2.0), (SimpleNamespace(table={"w": 1.0}), 0.0))):
        with pytest.raises(ssad.SsadError, match=r"`.w` is no attribute of this Lookup but computed by its class"):
            make()


# ----- super() -----


class Base:
    def __init__(self, w):
        self.w = w

    def act(self, h):
        return np.tanh(self.w * h)

    def sum(self, h):
        return np.sum(self.w * h**2)


class Child(Base):
    def act(self, h):
        return super().act(h) * 2.0 + self.w

    def sum(self, h):
        return super().sum(h) * 3.0


def through_super(x, m):
    return np.sum(m.act(x)) + m.sum(x)


def test_super_calls_the_parents_method_in_both_modes_and_at_second_order():
    m = Child(0.7)
    t = np.tanh(0.7 * X)
    expected = 2.0 * 0.7 * (1 - t**2) + 6.0 * 0.7 * X
    np.testing.assert_allclose(ssad.grad(through_super)(X, m), expected, rtol=1e-12)
    assert ssad.jvp(through_super, (X, m), (T, None))[1] == pytest.approx(expected @ T)
    hessian = np.diag(2.0 * 0.7**2 * -2 * t * (1 - t**2) + 6.0 * 0.7)
    np.testing.assert_allclose(ssad.hessian(through_super)(X, m), hessian, rtol=1e-10, atol=1e-12)
    second = ssad.grad(lambda x, c: np.sum(ssad.grad(through_super)(x, c)))(X, m)
    np.testing.assert_allclose(second, np.diag(hessian), rtol=1e-10)
    # with respect to the object: the parent's method reads the same field
    d_w = ssad.grad(through_super, wrt=1)(X, m).w
    exact = np.sum(2.0 * X * (1 - t**2) + 1.0) + 3.0 * np.sum(X**2)
    assert d_w == pytest.approx(exact)
    assert ssad.jvp(through_super, (X, m), (np.zeros(3), SimpleNamespace(w=1.0)))[1] == pytest.approx(exact)


def test_super_in_a_method_called_on_a_global_object():
    m = Child(0.7)
    assert ssad.grad(m.act)(0.4) == pytest.approx(2.0 * 0.7 * (1 - np.tanh(0.28) ** 2))


# ----- operators -----


@dataclass
class V2:
    a: float
    b: float

    def __mul__(self, s):
        return V2(self.a * s, self.b * s)

    def __rmul__(self, s):
        return V2(s * self.a * self.a, s * self.b)

    def __add__(self, other):
        return V2(self.a + other.a, self.b * other.b)

    def __neg__(self):
        return V2(-self.a, self.b)


def built_and_multiplied(x):
    u = V2(x, 2.0)
    w = u * x
    return w.a + w.b


def every_operator(x):
    u = V2(x, 2.0)
    w = x * u + (-u) * 3.0  # __rmul__, __neg__, __mul__, __add__
    return w.a * w.b


def times_an_object_passed_in(x, u):
    w = u * x + x * u
    return w.a * w.b + x


@pytest.mark.parametrize("function", [built_and_multiplied, every_operator])
def test_operators_of_a_dataclass_call_its_methods(function):
    x = 0.7
    expected = finite_difference_gradient(function, (x,), 0)
    assert ssad.grad(function)(x) == pytest.approx(expected, rel=1e-7)
    assert ssad.jvp(function, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-7)
    second = finite_difference_gradient(ssad.grad(function), (x,), 0)
    assert ssad.grad(ssad.grad(function))(x) == pytest.approx(second, rel=1e-6)
    assert ssad.hessian(function)(x) == pytest.approx(second, rel=1e-6)


def test_operators_of_an_object_passed_in():
    x, u = 0.7, V2(1.5, 2.0)
    expected = finite_difference_gradient(times_an_object_passed_in, (x, u), 0)
    assert ssad.grad(times_an_object_passed_in)(x, u) == pytest.approx(expected, rel=1e-7)
    assert ssad.jvp(times_an_object_passed_in, (x, u), (1.0, None))[1] == pytest.approx(expected, rel=1e-7)
    gradient = ssad.grad(times_an_object_passed_in, wrt=1)(x, u)
    for field, step in (("a", V2(1e-6, 0.0)), ("b", V2(0.0, 1e-6))):
        up = times_an_object_passed_in(x, V2(u.a + step.a, u.b + step.b))
        down = times_an_object_passed_in(x, V2(u.a - step.a, u.b - step.b))
        assert getattr(gradient, field) == pytest.approx((up - down) / 2e-6, rel=1e-6)
    second = finite_difference_gradient(lambda y: ssad.grad(times_an_object_passed_in)(y, u), (x,), 0)
    assert ssad.grad(ssad.grad(times_an_object_passed_in))(x, u) == pytest.approx(second, rel=1e-6)
    assert ssad.hessian(times_an_object_passed_in)(x, u) == pytest.approx(second, rel=1e-6)


def an_array_times_an_object(x):
    u = V2(x, 2.0)
    w = np.ones(2) * u  # NumPy's own product: an array of objects
    return w[0].a


def test_numpys_own_operation_on_an_object_is_refused_at_the_users_line():
    for make in (lambda: ssad.grad(an_array_times_an_object)(0.7),
                 lambda: ssad.jvp(an_array_times_an_object, (0.7,), (1.0,))):
        with pytest.raises(ssad.MissingRuleError, match=r"`\*` here is NumPy's or Python's own operation on a V2"):
            make()


# ----- what a method of the user's object returns may be a field of the object or a view of one


@dataclass
class _Held:
    a: np.ndarray
    s: float

    def head(self):
        return self.a[:2]  # a view of the field

    def whole(self):
        return self.a

    def scaled(self):
        return self.a * self.s  # a new array


def _head_then_write(x):
    v = x * 1.0
    h = _Held(v, 1.0).head()
    v[0] = 3.0  # changes h too
    return np.sum(h * x[:2])


def _field_then_write(x):
    v = x * 1.0
    w = _Held(v, 1.0).whole()
    v[1] = 3.0
    return np.sum(w * x)


@pytest.mark.parametrize("f", [_head_then_write, _field_then_write])
def test_a_write_into_what_a_method_of_yours_returned_is_refused(f):
    # `_head_then_write` gave a wrong gradient: the method's result was taken for a new array
    with pytest.raises(ssad.SsadError, match="would change an array that"):
        ssad.grad(f)(X)


def _layer_then_relu_in_place(x):
    o = _Held(np.array([0.5, -1.0, 2.0]), 2.0)
    h = o.scaled() * x[0] + x
    h = o.head() * h[:2]
    g = o.scaled()
    g[g < 0] = 0.0  # `g` may be a field of `o` for all ssad can see: the generated code checks it
    g *= x[1]
    return np.sum(g * g) + np.sum(h) + np.sum(o.head())  # `o` read after the write


def test_a_write_into_a_new_array_a_method_returned_is_differentiated():
    got = ssad.grad(_layer_then_relu_in_place)(X)
    np.testing.assert_allclose(got, finite_difference_gradient(_layer_then_relu_in_place, (X,), 0), rtol=1e-6)
    assert "unshared_with(g, o, " in ssad.show(_layer_then_relu_in_place).source


def _residual_blocks(x):
    o = _Held(np.array([0.5, -1.0, 2.0]), 2.0)
    h = x * 1.0
    for _ in range(2):
        u = o.scaled() * h  # a new array, for all ssad can see perhaps `o.a`: `u +=` is checked where it runs
        u += h
        h = np.tanh(u)
    return np.sum(h * h)


def test_an_augmented_assignment_to_what_a_method_returned_is_differentiated():
    got = ssad.grad(_residual_blocks)(X)
    expected = finite_difference_gradient(_residual_blocks, (X,), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    tangent = np.array([0.2, -0.4, 0.9])
    np.testing.assert_allclose(ssad.jvp(_residual_blocks, (X,), (tangent,))[1], expected @ tangent, rtol=1e-6, atol=1e-8)


def _field_scaled_in_place(x):
    o = _Held(x * 0.1, 2.0)
    b = o.whole()  # o.a itself
    b *= 2.0
    return np.sum(o.scaled() * b)


def test_an_augmented_assignment_to_a_field_a_method_returned_is_refused():
    with pytest.raises(ssad.SsadError, match="`b \\*= ...` would change an array or a list that `o`"):
        ssad.grad(_field_scaled_in_place)(X)


def _scaled_then_write(x):
    u = x * 2.0
    w = _Held(x * 1.0, 2.0).scaled()
    u[0] = 3.0 * x[1]  # neither the object nor an operand of the call: nothing `w` may share
    return np.sum(w * x) + np.sum(u * u)


def test_a_write_into_what_a_method_call_did_not_take_is_differentiated():
    np.testing.assert_allclose(ssad.grad(_scaled_then_write)(X),
                               finite_difference_gradient(_scaled_then_write, (X,), 0), rtol=1e-6)


# ----- a call through a function value: a bound method, a partial, a lambda, a function chosen


def _bound_method_then_write(x):
    v = x * 1.0
    head = _Held(v, 1.0).head  # a bound method holds its object
    h = head()
    v[0] = 3.0  # changes h: it is a view of the field
    return np.sum(h * x[:2])


def _partial_then_write(x):
    v = x * 1.0
    first_two = functools.partial(_first_two, v)
    h = first_two()
    v[0] = 3.0
    return np.sum(h * x[:2])


def _first_two(t):
    return t[:2]


@pytest.mark.parametrize("f", [_bound_method_then_write, _partial_then_write])
def test_a_write_into_what_a_function_value_returned_is_refused(f):
    # both gave a wrong gradient: the call's result was taken to share nothing the function value held
    with pytest.raises(ssad.SsadError, match="would change an array"):
        ssad.grad(f)(X)


def _chosen_activation_then_write(x):
    act = np.tanh if x[0] > 0 else np.abs
    z = x * 2.0
    h = act(z)  # a new array: the write below leaves z alone, which the generated code checks
    h[0] = 0.0
    return np.sum(h * z)


def _lambda_then_add(x):
    double = lambda t: t * 2.0  # noqa: E731
    z = x * 1.0
    h = double(z)
    h += z
    return np.sum(h * z)


@pytest.mark.parametrize("f", [_chosen_activation_then_write, _lambda_then_add])
def test_a_write_into_a_new_array_a_function_value_returned_is_differentiated(f):
    # refused before, where the operand was read afterwards
    for x in (X, -X):
        np.testing.assert_allclose(ssad.grad(f)(x), finite_difference_gradient(f, (x,), 0), rtol=1e-6, atol=1e-8)
