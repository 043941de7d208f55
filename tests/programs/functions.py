"""A corpus of functions that call functions and move structured data, each returning a scalar.

User functions called with positional, keyword and default arguments; recursion
(direct, mutual, to a depth the data decides); nested `def`, closures and
lambdas; higher-order functions and functions kept in lists and dicts; methods
of user classes; `functools.partial`; comprehensions, generator expressions and
`map`; tuples, lists, dicts, namedtuples, dataclasses and plain objects as
inputs, intermediates and helper outputs; in-place writes into arrays made
inside the function; `ssad.stop_gradient`.

Arguments in CASES may be structured: a gradient is expected for every float
leaf of every argument. Every data-dependent comparison stays well away from its
threshold, so central differences never cross a branch. Parameters are never
written in place; a function that wants to mutate one copies it first.

Functions that cut a path with `stop_gradient` call it as `ssad.stop_gradient`
(looked up on the module at run time), so that the finite-difference reference
can hold the stopped values fixed.
"""

import dataclasses
import functools
from collections import namedtuple

import numpy as np

import ssad

rng = np.random.default_rng(20240702)
V3 = rng.standard_normal(3)
V4 = rng.standard_normal(4)
V5 = rng.standard_normal(5)
V6 = rng.standard_normal(6)
A33 = rng.standard_normal((3, 3))
A34 = rng.standard_normal((3, 4))
A43 = rng.standard_normal((4, 3))
A44 = rng.standard_normal((4, 4))
W33 = rng.standard_normal((3, 3)) * 0.6
X54 = rng.standard_normal((5, 4))
Y5 = rng.standard_normal(5)
COEFFS5 = rng.standard_normal(5)
POS4 = rng.uniform(0.5, 1.5, 4)
POS5 = rng.uniform(0.5, 1.5, 5)

Affine = namedtuple("Affine", ["W", "b"])


@dataclasses.dataclass
class LayerParams:
    W: np.ndarray
    b: np.ndarray
    gain: float
    activation: str = "tanh"


@dataclasses.dataclass
class Quadratic:
    A: np.ndarray
    c: float

    def energy(self, x):
        return 0.5 * x @ (self.A @ x) + self.c * np.sum(x)


class Box:
    """A plain object: a centre, a radius, and a label that carries no gradient."""

    def __init__(self, center, radius, label):
        self.center = center
        self.radius = radius
        self.label = label


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def predict(self, X):
        return X @ self.w + self.b

    def loss(self, X, y):
        return np.mean((self.predict(X) - y) ** 2)


class Smoother:
    """Methods calling methods; `steps` is an int attribute."""

    def __init__(self, w, steps):
        self.w = w
        self.steps = steps

    def step(self, h):
        return np.tanh(self.w * h) + 0.5 * h

    def run(self, h):
        for _ in range(self.steps):
            h = self.step(h)
        return h


# ----- module-level helpers -----


def affine(W, b, x):
    return W @ x + b


def softplus(t):
    return np.log1p(np.exp(t))


def square(t):
    return t * t


def energy(v):
    return np.sum(v * v)


def scaled_power_sum(v, scale=1.0, power=2.0):
    return scale * np.sum(v ** power)


def moments(v):
    m = np.mean(v)
    return m, np.mean((v - m) ** 2)


def layer_stats(h):
    return {"mean": np.mean(h), "energy": np.sum(h * h), "peak": h[0]}


def split_halves(v):
    n = len(v) // 2
    return [v[:n], v[n:]]


def make_affine(W, x):
    return Affine(W=W * 0.5, b=np.sin(x))


def repeat_sine(v, times):
    for _ in range(times):
        v = np.sin(v) + 0.1 * v
    return v


def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def compose(f, g):
    return lambda t: f(g(t))


def make_scaler(a):
    def scale(t):
        return a * t + np.sin(t)

    return scale


ACTIVATIONS = {"tanh": np.tanh, "softplus": softplus, "sine": np.sin}


def pick_activation(name):
    return ACTIVATIONS[name]


COLUMN_MEAN = functools.partial(np.mean, axis=0)


# ----- calls to user functions -----


def two_layer_tanh(W1, b1, W2, x):
    h = np.tanh(affine(W1, b1, x))
    return np.sum(affine(W2, 0.0, h) ** 2)


def keyword_and_default_args(x, s):
    a = scaled_power_sum(x)
    b = scaled_power_sum(x, scale=s)
    c = scaled_power_sum(power=3.0, v=np.sin(x), scale=0.5 * s)
    return a + b * c


def tuple_from_helper(x, w):
    m, var = moments(x * w)
    return (m * m + 1.0) / np.sqrt(var + 0.1)


def nested_helper_calls(x):
    return np.sum(softplus(square(np.sin(x)) - 0.5))


def helper_with_int_argument(x, k):
    return np.sum(repeat_sine(x, k) ** 2)


def helper_in_loop(W, b, h, steps):
    for _ in range(steps):
        h = np.tanh(affine(W, b, h))
    return np.sum(h)


def dict_from_helper(x):
    stats = layer_stats(np.tanh(x))
    return stats["energy"] - 2.0 * stats["mean"] + stats["peak"] ** 2


def list_from_helper(x):
    left, right = split_halves(np.sin(x))
    parts = split_halves(x)
    return np.sum(left) * np.sum(right) + energy(parts[1])


# ----- recursion -----


def horner_rec(coeffs, x, i=0):
    if i == len(coeffs):
        return 0.0
    return coeffs[i] + x * horner_rec(coeffs, x, i + 1)


def recursive_polynomial(coeffs, x):
    return horner_rec(coeffs, x) + 0.5 * horner_rec(coeffs, -x, i=2)


def descend_even(x, n):
    if n == 0:
        return x
    return descend_odd(np.sin(x) + 0.3 * x, n - 1)


def descend_odd(x, n):
    if n == 0:
        return -x
    return descend_even(x * np.cos(x) + 0.5, n - 1)


def mutual_recursion(x, n):
    return np.sum(descend_even(x, n) ** 2)


def halvings(x):
    if x < 1.0:
        return x * x
    return 1.0 + 0.5 * halvings(0.5 * x + 0.1 * np.sin(x))


def tree_reduce(x, lo, hi):
    if hi - lo == 1:
        return np.tanh(x[lo])
    mid = (lo + hi) // 2
    left = tree_reduce(x, lo, mid)
    right = tree_reduce(x, mid, hi)
    return left + right + left * right


def tree_reduction(x):
    return tree_reduce(x, 0, len(x))


def apply_layers(layers, h, i):
    if i == len(layers):
        return h
    layer = layers[i]
    return apply_layers(layers, np.tanh(layer["W"] @ h + layer["b"]), i + 1)


def recursive_network(layers, x):
    return np.sum(apply_layers(layers, x, 0) ** 2)


# ----- nested def and closures -----


def closure_used_twice(x, a):
    def bump(t):
        return np.sin(a * t) + t

    return np.sum(bump(x) * bump(x * x))


def returned_closure(x, a):
    f = make_scaler(a)
    y = f(x)
    return np.sum(f(y) ** 2)


def closure_over_intermediate(x):
    m = np.mean(x)
    s = np.sqrt(np.mean((x - m) ** 2) + 0.1)

    def standardize(t):
        return (t - m) / s

    z = standardize(x)
    return np.sum(np.tanh(z) * z) + standardize(x[0])


def local_factory(x, w):
    def make(k):
        def g(t):
            return k * np.tanh(t)

        return g

    g1 = make(w[0])
    g2 = make(w[1] * w[2])
    return np.sum(g1(x) + g2(x * 0.5))


def closure_in_loop(x, w, steps):
    def step(h):
        return np.tanh(w * h + x)

    h = x
    for _ in range(steps):
        h = step(h)
    return np.sum(h)


def closure_calls_recursive(coeffs, x):
    def p(t):
        return horner_rec(coeffs, t)

    return p(x) * p(0.5 * x)


# ----- lambda and higher-order functions -----


def lambda_apply_twice(x, a):
    return np.sum(apply_twice(lambda t: np.sin(a * t) + t, x))


def apply_numpy_function(x):
    return np.sum(apply(np.sin, x) * apply(np.exp, 0.5 * x))


def apply_user_function(x):
    return np.sum(apply(softplus, x) + apply_twice(square, x))


def local_lambdas(x, y):
    sq = lambda t: t * t  # noqa: E731
    mix = lambda a, b=0.5: a * b + np.sin(a)  # noqa: E731
    return np.sum(sq(x) * mix(y) + mix(x, b=y))


def closure_with_constant_keyword(x):
    def mix(a, b=0.5):
        return a * b + np.sin(a)

    return np.sum(mix(x, b=2.0) + mix(x))


def defaults_of_the_enclosing_values(x, w):
    # each lambda keeps the k of its iteration, and `scale` the w[j] of its own
    powers = [lambda t, k=k: t ** k for k in range(1, 4)]
    total = 0.0
    for j in range(2):
        scale = w[j]
        mix = lambda a, b=scale * 2.0: a * b + np.sin(a)  # noqa: E731
        scale = 0.0
        total = total + np.sum(mix(x)) + np.sum(mix(x, b=w[2]))
    return total + sum(np.sum(power(x * w[0])) for power in powers)


def composed_functions(x):
    h = compose(np.tanh, square)
    k = compose(h, lambda t: 0.5 * t + 1.0)
    return np.sum(h(x) + k(x))


def functions_in_list(x):
    fs = [np.sin, np.tanh, softplus, lambda t: 0.25 * t * t]
    total = 0.0
    for f in fs:
        total = total + np.sum(f(x))
    return total + np.sum(fs[2](x * fs[0](x)))


def functions_in_dict(x, w):
    acts = {"sin": np.sin, "soft": softplus, "cube": lambda t: t ** 3}
    return np.sum(acts["sin"](x) * acts["soft"](w)) + np.sum(acts["cube"](x * w))


def returned_function(x, W):
    act = pick_activation("softplus")
    h = act(W @ x)
    return np.sum(pick_activation("tanh")(h))


def closure_passed_to_apply(x, a):
    return np.sum(apply(make_scaler(a), x) * x)


def function_chosen_by_int(x, k):
    fs = [np.sin, np.cos, softplus]
    return np.sum(fs[k](x) ** 2)


# ----- methods of user classes -----


def method_reading_self(model, X, y):
    return model.loss(X, y)


def dataclass_method(q, x):
    return q.energy(x)


def methods_calling_methods(sm, h):
    return np.sum(sm.run(h) ** 2)


def object_built_inside(w, b, X):
    model = Linear(w, b)
    return np.sum(np.tanh(model.predict(X)))


# ----- functools.partial -----


def partial_of_user_function(x, s):
    cube_sum = functools.partial(scaled_power_sum, power=3.0)
    scaled = functools.partial(scaled_power_sum, scale=s)
    return cube_sum(x) + scaled(np.sin(x))


def partial_of_numpy_function(A, v):
    row_sums = functools.partial(np.sum, axis=1)
    return np.sum(np.tanh(row_sums(A * v)))


def partial_binding_active_value(x, a):
    with_x = functools.partial(scaled_power_sum, np.sin(x))
    return with_x(scale=a) + with_x(power=4.0)


def module_level_partial(X):
    return np.sum(np.sin(COLUMN_MEAN(X)) ** 2)


# ----- dict parameters -----


def mlp_softmax_xent(params, X, Y):
    H = np.tanh(X @ params["W1"] + params["b1"])
    logits = H @ params["W2"] + params["b2"]
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def mlp_mse(params, X, y):
    H = softplus(X @ params["W1"] + params["b1"])
    pred = H @ params["w2"] + params["b2"]
    return np.mean((pred - y) ** 2)


def nested_dict_params(params, x):
    enc = params["encoder"]
    h = np.tanh(enc["W"] @ x + enc["b"])
    z = params["decoder"]["W"] @ h
    return np.sum((z - x) ** 2) + params["reg"] * np.sum(enc["W"] ** 2)


def dict_display_and_update(x, w):
    state = {"h": x, "scale": 2.0}
    state["h"] = np.tanh(state["h"] * w)
    state["energy"] = np.sum(state["h"] ** 2)
    state["scale"] = state["scale"] * state["energy"]
    return state["scale"] + np.sum(state["h"])


def dict_with_non_float_leaves(config, x):
    h = x
    for _ in range(config["steps"]):
        h = np.tanh(config["w"] * h) * config["gain"]
    return np.sum(h) if config["name"] == "sum" else np.sum(h ** 2)


def dict_comprehension(params, x):
    halved = {k: 0.5 * params[k] for k in ("W", "b")}
    norms = {k: np.sum(v ** 2) for k, v in params.items()}
    return np.sum(np.tanh(halved["W"] @ x + halved["b"])) + norms["W"] * norms["b"]


def dict_of_lists(data, w):
    total = 0.0
    for v in data["inputs"]:
        total = total + np.sum(np.sin(v * w))
    return total * data["weight"]


# ----- namedtuples, dataclasses, plain objects -----


def namedtuple_params(p, x):
    return np.sum(np.tanh(p.W @ x + p.b) ** 2)


def namedtuple_index_and_unpack(p, x):
    W, b = p
    return np.sum(np.sin(p[0] @ x) * b) + 0.1 * np.sum(W ** 2)


def namedtuple_intermediate(W, x):
    q = make_affine(W, x)
    r = Affine(W=q.W @ q.W, b=q.b * x)
    return np.sum(r.W @ r.b) + np.sum(q.b)


def list_of_namedtuples(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h ** 2)


def dataclass_params(p, x):
    h = p.gain * np.tanh(p.W @ x + p.b)
    return np.sum(h ** 2)


def dataclass_built_inside(W, x):
    p = LayerParams(W=W, b=np.sin(x), gain=1.5)
    return np.sum(p.gain * np.tanh(p.W @ x + p.b))


def plain_object_attributes(box, points):
    d = points - box.center
    r2 = np.sum(d * d, axis=1)
    return np.sum(np.exp(-r2 / (box.radius ** 2)))


# ----- tuples and lists -----


def tuple_input(pair, x):
    W, b = pair
    return np.sum(np.tanh(W @ x + b)) + np.sum(pair[1] ** 2)


def list_of_arrays_input(arrays, w):
    total = 0.0
    for a in arrays:
        total = total + np.dot(a, w) ** 2
    return total + np.sum(arrays[0] * arrays[-1])


def append_then_sum(x):
    terms = []
    for i in range(1, len(x)):
        terms.append(x[i] * x[i - 1])
    terms.append(np.sum(x) ** 2)
    return sum(terms)


def extend_insert_pop(x, y):
    items = [x[0], x[1]]
    items.extend([y * 2.0, np.sin(y)])
    items.insert(1, x[2] * y)
    last = items.pop()
    first = items.pop(0)
    return first * last + sum(items)


def pop_from_the_end(x, y):
    items = [x[0] * y, np.sin(x[1]), x[2] ** 2, y * 3.0]
    second_last = items.pop(-2)
    last = items.pop(-1)
    return second_last * items[-1] + last * items[0] + sum(items)


def dict_pop_and_new_keys(x, w):
    state = {"h": x * w, "bias": np.cos(x)}
    bias = state.pop("bias")
    for step in range(3):
        state[step] = np.tanh(state["h"] + bias * step)
        state["h"] = state[step] * w
    return np.sum(state[2] * state[0]) + np.sum(state["h"])


def list_slicing(x):
    items = [np.sin(v) for v in x]
    head = items[:2]
    tail = items[2:]
    every_other = items[::2]
    return sum(head) * sum(tail) + sum(every_other) + items[-1] * items[1]


def list_comprehension(x):
    terms = [np.sin(v) * v for v in x]
    return sum(terms)


def filtered_comprehension(x):
    return sum([v * v for v in x if v > 0.0]) + sum([np.exp(v) for v in x if v <= 0.0])


def generator_in_sum(w, x):
    return sum(w[i] * np.tanh(x[i]) for i in range(len(x)))


def nested_comprehension(A):
    n = A.shape[0]
    return sum([sum([A[i, j] * A[j, i] for j in range(n)]) for i in range(n)])


def map_user_function(x):
    return sum(map(softplus, x))


def map_over_arrays(arrays):
    return sum(map(energy, arrays)) + sum(map(lambda a: np.sum(np.sin(a)), arrays))


# ----- in-place updates on arrays made in the function -----


def fill_in_loop(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = np.sin(x[i]) * (i + 1)
    return np.sum(y * y)


def copy_then_slice_update(x, v):
    y = x.copy()
    y[1:3] = v * y[1:3]
    y[0] += v * y[-1]
    return np.sum(y * np.cos(y))


def masked_assignment(x, s):
    y = x.copy()
    mask = x > 0.2
    y[mask] = s * y[mask] ** 2
    return np.sum(y * np.cos(y))


def augmented_elements_in_loop(x, w):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] += w * x[i]
        if i > 0:
            y[i] += y[i - 1] * 0.5
    return np.sum(y ** 2)


def multiply_copy_in_place(x, w):
    z = x.copy()
    z *= 2.0
    z += w
    z *= np.tanh(w)
    return np.sum(z ** 2)


def rows_in_place(A, v):
    M = np.zeros((A.shape[0], A.shape[1]))
    for i in range(A.shape[0]):
        M[i, :] = np.tanh(A[i] * v)
    return np.sum(M @ v)


def sliding_window_in_place(x):
    y = x.copy()
    for i in range(len(x) - 2):
        y[i : i + 2] = y[i : i + 2] * 0.5 + y[i + 2]
    return np.sum(y ** 2)


# ----- stop_gradient, int and bool arguments -----


def stop_gradient_baseline(x):
    baseline = ssad.stop_gradient(np.mean(x * x))
    return np.sum((x - baseline) ** 2)


def stop_gradient_target(params, x):
    target = ssad.stop_gradient(np.tanh(params["W"] @ x))
    pred = params["W"] @ x + params["b"]
    return np.sum((pred - target) ** 2) + np.sum(target * params["b"])


def bool_flag(x, w, use_sine):
    h = x * w
    if use_sine:
        h = np.sin(h)
    return np.sum(h ** 2)


def _dict_params(rng_seed, sizes):
    local = np.random.default_rng(rng_seed)
    n_in, n_hidden, n_out = sizes
    return {
        "W1": local.standard_normal((n_in, n_hidden)) * 0.5,
        "b1": local.standard_normal(n_hidden) * 0.1,
        "W2": local.standard_normal((n_hidden, n_out)) * 0.5,
        "b2": local.standard_normal(n_out) * 0.1,
    }


XENT_PARAMS = _dict_params(1, (4, 5, 3))
XENT_Y = np.eye(3)[[0, 2, 1, 1, 0]]
MSE_PARAMS = {
    "W1": A43 * 0.5,
    "b1": V3 * 0.1,
    "w2": np.array([0.7, -0.4, 0.3]),
    "b2": 0.25,
}
NESTED_PARAMS = {
    "encoder": {"W": W33, "b": V3 * 0.2},
    "decoder": {"W": A33 * 0.5},
    "reg": 0.05,
}
RECURSIVE_LAYERS = [
    {"W": W33, "b": V3 * 0.1},
    {"W": A33 * 0.4, "b": -V3 * 0.2},
    {"W": np.eye(3) * 0.8, "b": np.array([0.1, -0.2, 0.3])},
]
AFFINE = Affine(W=W33, b=V3 * 0.3)
AFFINE_LAYERS = [Affine(W=W33, b=V3 * 0.1), Affine(W=A33 * 0.4, b=np.array([0.2, -0.1, 0.05]))]
LAYER = LayerParams(W=A34 * 0.5, b=V3 * 0.2, gain=1.3)
BOX = Box(center=np.array([0.2, -0.1]), radius=1.2, label="unit")
POINTS = rng.standard_normal((6, 2)) * 0.8
LINEAR = Linear(w=V4 * 0.5, b=0.3)
QUAD = Quadratic(A=A44 @ A44.T * 0.25 + np.eye(4), c=0.4)
SMOOTHER = Smoother(w=np.array([0.8, -0.6, 1.1]), steps=3)
CONFIG = {"steps": 3, "name": "sum", "w": np.array([0.9, -0.7, 1.2]), "gain": 1.1}
CONFIG_SQUARES = {"steps": 2, "name": "squares", "w": np.array([0.5, 0.3, -0.8]), "gain": 0.9}
DATA = {"inputs": [V3, V3 * 0.5 + 0.2, np.array([0.3, -0.6, 1.0])], "weight": 0.8}

CASES = [
    # calls to user functions
    (two_layer_tanh, (A33 * 0.5, V3 * 0.1, W33, V3)),
    (two_layer_tanh, (A43 * 0.5, V4 * 0.1, A34 * 0.5, V3)),
    (keyword_and_default_args, (POS4, 0.7)),
    (keyword_and_default_args, (POS5, -1.2)),
    (tuple_from_helper, (V5, POS5)),
    (nested_helper_calls, (V4,)),
    (helper_with_int_argument, (V3, 3)),
    (helper_with_int_argument, (V3, 0)),
    (helper_in_loop, (W33, V3 * 0.1, V3, 4)),
    (helper_in_loop, (W33, V3 * 0.1, V3, 0)),
    (dict_from_helper, (V4,)),
    (list_from_helper, (V6,)),
    # recursion
    (horner_rec, (COEFFS5, 0.7)),
    (horner_rec, (COEFFS5, -1.3, 2)),
    (recursive_polynomial, (COEFFS5, 0.6)),
    (mutual_recursion, (V3, 0)),
    (mutual_recursion, (V3, 1)),
    (mutual_recursion, (V3, 4)),
    (mutual_recursion, (V3, 7)),
    (halvings, (0.3,)),
    (halvings, (5.0,)),
    (halvings, (37.0,)),
    (tree_reduction, (V5 * 0.5,)),
    (tree_reduction, (np.array([0.4]),)),
    (recursive_network, (RECURSIVE_LAYERS, V3)),
    # nested def and closures
    (closure_used_twice, (V4, 0.8)),
    (returned_closure, (V4, 0.6)),
    (returned_closure, (V3, -1.1)),
    (closure_over_intermediate, (V5,)),
    (local_factory, (V4, V3)),
    (closure_in_loop, (V3 * 0.5, 0.9, 3)),
    (closure_in_loop, (V3 * 0.5, 0.9, 0)),
    (closure_calls_recursive, (COEFFS5, 0.8)),
    # lambda and higher-order functions
    (lambda_apply_twice, (V4, 0.7)),
    (apply_numpy_function, (V4,)),
    (apply_user_function, (V4 * 0.5,)),
    (local_lambdas, (V4, POS4)),
    (closure_with_constant_keyword, (V4,)),
    (defaults_of_the_enclosing_values, (V4, POS4[:3])),
    (composed_functions, (V5,)),
    (functions_in_list, (V4,)),
    (functions_in_dict, (V3, POS4[:3])),
    (returned_function, (V3, A43)),
    (closure_passed_to_apply, (V4, 1.3)),
    (function_chosen_by_int, (V3, 0)),
    (function_chosen_by_int, (V3, 2)),
    # methods of user classes
    (method_reading_self, (LINEAR, X54, Y5)),
    (dataclass_method, (QUAD, V4)),
    (methods_calling_methods, (SMOOTHER, V3)),
    # functools.partial
    (partial_of_user_function, (POS4, 0.9)),
    (partial_of_numpy_function, (A34, V4)),
    (partial_binding_active_value, (V4, 1.4)),
    (module_level_partial, (X54,)),
    # dicts
    (mlp_softmax_xent, (XENT_PARAMS, X54, XENT_Y)),
    (mlp_mse, (MSE_PARAMS, X54, Y5)),
    (nested_dict_params, (NESTED_PARAMS, V3)),
    (dict_display_and_update, (V4, 0.8)),
    (dict_with_non_float_leaves, (CONFIG, V3)),
    (dict_with_non_float_leaves, (CONFIG_SQUARES, V3)),
    (dict_comprehension, ({"W": A34 * 0.5, "b": V3 * 0.3}, V4)),
    (dict_of_lists, (DATA, V3)),
    # namedtuples, dataclasses, plain objects
    (namedtuple_params, (AFFINE, V3)),
    (namedtuple_index_and_unpack, (AFFINE, V3)),
    (namedtuple_intermediate, (W33, V3)),
    (list_of_namedtuples, (AFFINE_LAYERS, V3)),
    (dataclass_params, (LAYER, V4)),
    (dataclass_built_inside, (A33 * 0.5, V3)),
    (plain_object_attributes, (BOX, POINTS)),
    # tuples and lists
    (tuple_input, ((W33, V3 * 0.2), V3)),
    (list_of_arrays_input, ([V3, V3 * 0.5, np.array([0.2, 0.4, -0.3])], V3)),
    (append_then_sum, (V5,)),
    (append_then_sum, (np.array([0.7]),)),
    (extend_insert_pop, (V3, 0.6)),
    (pop_from_the_end, (V3, 0.6)),
    (dict_pop_and_new_keys, (V3, 0.8)),
    (list_slicing, (V5,)),
    (list_comprehension, (V4,)),
    (filtered_comprehension, (np.array([0.5, -0.8, 1.2, -0.3, 0.9]),)),
    (filtered_comprehension, (POS4,)),
    (generator_in_sum, (V4, V4 * 0.7 + 0.1)),
    (nested_comprehension, (A33,)),
    (map_user_function, (V4,)),
    (map_over_arrays, ([V3, V4, V5],)),
    # in-place updates
    (fill_in_loop, (V5,)),
    (copy_then_slice_update, (V5, 0.7)),
    (masked_assignment, (np.array([0.5, -0.8, 1.2, 0.05, 0.9]), 0.8)),
    (augmented_elements_in_loop, (V5, 1.2)),
    (multiply_copy_in_place, (V4, 0.6)),
    (rows_in_place, (A34, V4)),
    (sliding_window_in_place, (V6,)),
    # stop_gradient, int and bool arguments
    (stop_gradient_baseline, (V5,)),
    (stop_gradient_target, ({"W": A33 * 0.5, "b": V3 * 0.2}, V3)),
    (bool_flag, (V3, 0.8, True)),
    (bool_flag, (V3, 0.8, False)),
]
