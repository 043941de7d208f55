"""Objects built from values that carry derivatives (dataclasses and namedtuples with
defaults, a constructor or property of the user's), and lists built by `append` or a
comprehension, then given to a NumPy function: each differentiated in both modes and at
second order against central differences, or refused with a message naming the line."""

import collections
import dataclasses
import functools
import typing
from dataclasses import dataclass, field

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

from .conftest import check_every_order as check_against_differences

W = np.array([0.4, -0.7, 1.2, 0.3, -0.5, 0.9])


def check_every_order(function, w=W):
    ssad.check_grads(function, (w,))
    ssad.check_grads(function, (w,), order=2)
    gradient = ssad.grad(function)
    np.testing.assert_allclose(gradient(w), numerical_gradient(function, w), rtol=1e-6, atol=1e-9)
    by_differences = np.array([numerical_gradient(lambda z, i=i: gradient(z)[i], w) for i in range(w.size)])
    np.testing.assert_allclose(ssad.hessian(function)(w), by_differences, rtol=1e-5, atol=1e-7)


# ----- records: a field the constructor is not given is a constant (its tangent is zero)


@dataclass
class Scaled:
    a: np.ndarray
    b: float = 1.5


def dataclass_default(w):
    q = Scaled(w[1:])
    return np.sum(q.a**2) * q.b + q.b * w[0]


def dataclass_default_given(w):
    q = Scaled(w[1:], b=w[0] * 3.0)
    return np.sum(q.a**2) * q.b


Pair = collections.namedtuple("Pair", "a b", defaults=[2.0])


def namedtuple_default(w):
    q = Pair(w[:3] * 2.0)
    return np.sum(np.sin(q.a)) * q.b + q[1] * w[3]


class Typed(typing.NamedTuple):
    a: np.ndarray
    b: float = 2.0


def typed_namedtuple_default(w):
    q = Typed(w[:3])
    return np.sum(q.a**2) * q.b + q.b


@dataclass
class Many:
    a: np.ndarray
    k: int = 3
    c: float = field(init=False, default=2.0)
    xs: list = field(default_factory=lambda: [1.0, 2.0])


def fields_not_given(w):
    q = Many(w[:2])
    return np.sum(q.a**q.k) * q.c + q.xs[1] * w[2]


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    scale: float = 0.5


def layer_with_a_default(w):
    layer = Layer(w[:4].reshape(2, 2), w[4:])
    return np.sum((np.tanh(layer.W @ w[4:] + layer.b) * layer.scale) ** 2)


def records_in_a_comprehension(w):
    qs = [Scaled(w[i : i + 2]) for i in range(3)]
    return sum(np.sum(q.a**2) * q.b for q in qs)


@pytest.mark.parametrize("function", [
    dataclass_default, dataclass_default_given, namedtuple_default, typed_namedtuple_default, fields_not_given,
    layer_with_a_default, records_in_a_comprehension,
])
def test_a_default_field_carries_no_tangent(function):
    # the tangent was built by calling the constructor on tangents, which took the default
    # (1.5) for the tangent of `b`: jvp 7.0 for 2.0
    check_every_order(function)


# ----- records whose constructor or property computes: refused, never differentiated wrongly


@dataclass
class Posted:
    a: np.ndarray
    s: float = 0.0

    def __post_init__(self):
        self.s = np.sum(self.a**2)


def post_init(w):
    return Posted(w).s


@dataclass
class OwnInit:
    a: np.ndarray

    def __init__(self, a):
        self.a = a * 2.0


def own_init(w):
    return np.sum(OwnInit(w).a)


class OwnNew(collections.namedtuple("OwnNew", "a b")):
    def __new__(cls, a):
        return super().__new__(cls, a * 2.0, 3.0)


def own_new(w):
    return np.sum(OwnNew(w).a)


@dataclass
class WithProperty:
    a: np.ndarray

    @property
    def square(self):
        return np.sum(self.a**2)

    @functools.cached_property
    def cube(self):
        return np.sum(self.a**3)

    def power(self, k):
        return np.sum(self.a**k)


def read_property(w):
    return WithProperty(w).square


def read_cached_property(w):
    return WithProperty(w).cube


def read_property_of_a_parameter(p):
    return p.square * 2.0


@pytest.mark.parametrize("function, message", [
    (post_init, "constructing a Posted .* its `__post_init__` computes from them"),
    (own_init, "constructing an OwnInit .* its own `__init__` or `__new__` computes from them"),
    (own_new, "constructing an OwnNew .* its `__new__` computes from them"),
    (read_property, r"`\.square` is a property of WithProperty"),
    (read_cached_property, r"`\.cube` is a property of WithProperty"),
])
def test_a_record_that_computes_is_refused(function, message):
    # __post_init__ gave a zero gradient; a property a wrong tangent (computed from the
    # tangent as if it were the object) and an AttributeError in reverse mode
    w = W[:2]
    pattern = r"test_records_and_lists.py:\d+.*" + message
    with pytest.raises(ssad.SsadError, match=pattern):
        ssad.grad(function)(w)
    with pytest.raises(ssad.SsadError, match=pattern):
        ssad.jvp(function, (w,), (w,))


def test_a_property_of_an_argument_is_refused_and_a_method_is_differentiated():
    p = WithProperty(W[:3])
    with pytest.raises(ssad.SsadError, match=r"`\.square` is a property of WithProperty"):
        ssad.grad(read_property_of_a_parameter)(p)
    with pytest.raises(ssad.SsadError, match=r"`\.square` is a property of WithProperty"):
        ssad.jvp(read_property_of_a_parameter, (p,), (WithProperty(np.ones(3)),))
    check_every_order(method_of_a_record)


def method_of_a_record(w):
    return WithProperty(w).power(3) * 2.0


# ----- lists given to NumPy functions


def mean_of_appended(w):
    losses = []
    for i in range(3):
        losses.append((w[i] - w[i + 3]) ** 2)
    return np.mean(losses)


def sum_of_comprehension(w):
    return np.sum([np.sin(v) for v in w])


def appended_read_several_ways(w):
    xs = []
    for v in w:
        xs.append(v**2)
    return np.sum(xs) * 2.0 + np.max(xs) + xs[0] + np.std(xs)


def rows_summed_over_an_axis(w):
    rows = []
    for i in range(3):
        rows.append(w[2 * i : 2 * i + 2] * w[i])
    return np.sum(np.sum(rows, axis=0) ** 2)


def dot_of_appended(w):
    xs = []
    for i in range(3):
        xs.append(np.tanh(w[i]))
    return np.dot(xs, w[3:])


def helper_reduces(w):
    def average(values):
        return np.mean(values)

    xs = []
    for v in w:
        xs.append(v**3)
    return average(xs)


def product_of_appended(w):
    xs = []
    for v in w[:3]:
        xs.append(v + 2.0)
    return np.prod(xs) + np.sum(np.exp(xs)) + np.var(xs)


def extended_and_popped(w):
    xs = [w[0] * 2.0]
    xs.extend([w[1] ** 2, w[2]])
    xs.insert(0, w[3])
    v = xs.pop()
    return np.linalg.norm(xs) + v * np.mean(xs)


def max_and_min_of_displays(w):
    return np.max([w[0] ** 2, w[1]]) + np.min([w[2], w[3] * 3.0])


def ufuncs_of_displays(w):
    return np.add([w[0], w[1]], [w[1], w[0] ** 2])[1] + np.sum(np.multiply([w[2], w[3]], w[:2]))


def ufuncs_of_lists_held_in_names(w):
    xs, ys = [], []
    for i in range(3):
        xs.append(w * i)
        ys.append(w + i)
    pair = [w, w * 2.0]
    return np.sum(np.add(xs, ys) ** 2) + np.sum(np.multiply(pair, list(pair))) + np.sum(np.square(pair))


def unary_ufuncs_of_lists_held_in_names(w):
    rows = (w * 2.0, w + 1.0)
    scaled = [w[0] * 2.0, w[1], w[2] ** 2]
    return (np.sum(np.reciprocal(rows)) + np.sum(np.negative(scaled) * np.arange(3.0))
            + np.sum(np.sort(scaled) * np.arange(3.0)) + np.sum(np.divide(scaled, 2)))


@pytest.mark.parametrize("function", [
    mean_of_appended, sum_of_comprehension, appended_read_several_ways, rows_summed_over_an_axis, dot_of_appended,
    helper_reduces, product_of_appended, extended_and_popped, max_and_min_of_displays, ufuncs_of_displays,
    ufuncs_of_lists_held_in_names, unary_ufuncs_of_lists_held_in_names,
])
def test_a_list_given_to_a_numpy_function(function):
    # the adjoint of np.mean(losses) is one array, which the adjoint of `append` popped
    # from (AttributeError); np.max of a list had no tangent (TypeError); the tangent of
    # np.add of two lists joined them (ValueError); the adjoint of np.square(pair), `d * 2 *
    # pair`, repeated the list (TypeError), and the tangent of np.negative or np.sort of a
    # list held in a name raised TypeError or AttributeError
    check_every_order(function)


def histogram_of_weights(w):
    counts, _ = np.histogram(np.array([0.1, 0.4, 0.5]), bins=2, weights=w[:3] ** 2)
    return np.sum(counts)


def density_of_weights(w):
    counts, _ = np.histogram(np.array([0.1, 0.4, 0.5]), bins=2, weights=w[:3] ** 3 + 1.0, density=True)
    return np.sum(counts * np.array([1.0, 2.0]))


@pytest.mark.parametrize("function", [histogram_of_weights, density_of_weights])
def test_the_hessian_of_a_histogram_of_weights(function):
    # a result linear in the counts gives the weights' adjoint a zero tangent, the number
    # 0.0, which the adjoint indexed (TypeError)
    check_every_order(function)


@dataclass
class NamedWeights:
    w: np.ndarray
    name: str


NamedPair = collections.namedtuple("NamedPair", ["w", "tag"])


def cubed_named(p):
    return np.sum(p.w**3)


def test_a_field_that_is_no_number_is_none_in_every_derivative_of_the_gradient():
    # the gradient gives the string field None; its Hessian-vector product gave 0.0 there
    w, v = np.array([1.0, 2.0]), np.array([1.0, -0.5])
    for make, label in ((lambda a: NamedWeights(a, "layer"), "name"), (lambda a: NamedPair(a, "layer"), "tag")):
        p, direction = make(w), make(v)
        gradient = ssad.grad(cubed_named)(p)
        np.testing.assert_allclose(gradient.w, 3 * w**2)
        assert getattr(gradient, label) is None
        for product in (ssad.hvp(cubed_named)(p, direction), ssad.jvp(ssad.grad(cubed_named), (p,), (direction,))[1]):
            np.testing.assert_allclose(product.w, 6 * w * v)
            assert getattr(product, label) is None


@dataclass
class ScaledWeights:
    w: np.ndarray
    b: float
    label: str = "layer"


@dataclass
class WithPostInit:
    w: np.ndarray
    total: float = 0.0

    def __post_init__(self):
        self.total = float(np.sum(self.w))


ScaledPair = collections.namedtuple("ScaledPair", ["w", "b"])


def replaced_bias(p, x):
    q = dataclasses.replace(p, b=p.b * 2.0 + np.sum(x))
    return np.sum(q.w * x) * q.b + q.b**2


def replaced_in_a_namedtuple(p, x):
    q = p._replace(w=p.w * x)
    return np.sum(q.w**2) * q.b


def replaced_inside(x):
    p = ScaledWeights(x * 1.0, 0.5)
    q = dataclasses.replace(p, w=np.sin(p.w), b=p.b * np.sum(x))
    return np.sum(q.w * p.w) + q.b**2


GRAD_REPLACED_BIAS = ssad.grad(replaced_bias, wrt=1)


def weighted_gradient_through_replace(x):
    return np.sum(GRAD_REPLACED_BIAS(ScaledWeights(np.array([0.3, 0.8]), 0.7), x) * np.array([1.0, -2.0]))


def replaced_post_init(p, x):
    return dataclasses.replace(p, w=x * 2.0).total


def test_dataclasses_replace_and_namedtuple_replace_at_every_order():
    # both were refused ("no adjoint rule for dataclasses.replace", "a function made at run time")
    x, w, v = np.array([0.5, -1.0]), np.array([0.3, 0.8]), np.array([1.0, -0.5])
    p = ScaledWeights(w, 0.7)
    d_p = ssad.grad(replaced_bias)(p, x)
    np.testing.assert_allclose(d_p.w, numerical_gradient(lambda u: replaced_bias(ScaledWeights(u, 0.7), x), w.copy()), rtol=1e-6)
    assert d_p.b == pytest.approx(numerical_gradient(lambda u: replaced_bias(ScaledWeights(w, float(u[0])), x), np.array([0.7]))[0])
    assert d_p.label is None
    tangent = ssad.jvp(replaced_bias, (p, x), (ScaledWeights(v, 1.0, "layer"), None))[1]
    assert tangent == pytest.approx(float(d_p.w @ v + d_p.b), rel=1e-9)
    q = ScaledPair(w, 0.7)
    d_q = ssad.grad(replaced_in_a_namedtuple)(q, x)
    np.testing.assert_allclose(d_q.w, numerical_gradient(lambda u: replaced_in_a_namedtuple(ScaledPair(u, 0.7), x), w.copy()),
                               rtol=1e-6)
    check_against_differences(replaced_inside, x, v)
    check_against_differences(lambda u: replaced_bias(p, u), x, v)
    np.testing.assert_allclose(ssad.grad(weighted_gradient_through_replace)(x),
                               numerical_gradient(weighted_gradient_through_replace, x.copy()), rtol=1e-5, atol=1e-7)


def test_replace_of_a_dataclass_with_a_post_init_is_refused():
    with pytest.raises(ssad.SsadError, match=r"`dataclasses.replace` of a WithPostInit .*`__post_init__`"):
        ssad.grad(replaced_post_init, wrt=1)(WithPostInit(np.array([1.0, 2.0])), np.array([0.5, -1.0]))
