"""Every construct of the Python grammar either works or is refused where it stands.

Supported constructs are checked against central finite differences, in reverse
and forward mode. Refused ones must raise the documented error at the construct
itself: the line marked `# <- here`, the column of the text the registration
names, and a message that says what to do. docs/supported-python.md has the
matching table.
"""

import inspect
import math
import textwrap
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import ssad
from ssad.errors import SourceError

SCALE = 1.5  # a module constant read by `global_constant`
SEEN = []  # what `side_effect_on_a_global_list` appends to


def marked_line(function):
    lines, first = inspect.getsourcelines(function)
    for offset, text in enumerate(lines):
        if "# <- here" in text:
            return first + offset, text.rstrip("\n")
    raise AssertionError(f"{function.__name__} has no `# <- here` marker")


# ----- supported: statements -----


def assignment_forms(x):
    a = b = x * 2.0
    p, q = np.sin(x), np.cos(x)
    [r, s] = [p * q, p + q]
    p, q = q, p
    first, (second, third) = x[0], (x[1], x[2])
    return np.sum(a * b + r * s + p) + first * second * third


def augmented_assignment_forms(x):
    y = x * 1.0
    y += 1.0
    y -= 0.5
    y *= 2.0
    y /= 3.0
    y **= 2.0
    v = x * 1.0
    v @= np.eye(3) * 2.0
    s = np.sum(y)
    s //= 1.0
    t = np.sum(y)
    t %= 7.0
    return np.sum(y) + np.sum(v) + s + t


def item_assignment_forms(x):
    y = np.zeros(3)
    y[0] = x[1]
    y[1:3] = x[:2] * 2.0
    y[y > 100.0] = 0.0
    y[0] += x[2]
    y[1:] *= 3.0
    d = {}
    d["k"] = y * x
    return np.sum(d["k"])


def annotations(x: np.ndarray, k: float = 2.0) -> float:
    y: np.ndarray = x * k
    return np.sum(y)


def if_elif_else(x):
    s = np.sum(x)
    if s > 100.0:
        y = x
    elif s > 0.0:
        y = x * x
    else:
        y = -x
    return np.sum(y)


def loop_forms(x):
    total = 0.0
    for i in range(3):
        total = total + x[i] * i
    for v in x:
        total = total + v * v
    for v in [x[0], x[1]]:
        total = total + v
    for v in (x[2],):
        total = total + v
    for i, v in enumerate(x):
        total = total + v * i
    for a, b in zip(x, x):  # noqa: B905
        total = total + a * b
    for v in reversed(x):
        total = total * 1.01 + v
    for i, (a, b) in enumerate(zip(x, x)):  # noqa: B905
        total = total + a * b * i
    d = {"a": x[0], "b": x[1]}
    for _key, v in d.items():
        total = total + v
    for v in d.values():
        total = total + v
    for key in d.keys():
        total = total + d[key]
    return total


def while_forms(x):
    y = x * 1.0
    i = 0
    while i < 3:
        y = y * 1.1
        i += 1
    while True:
        y = np.sin(y)
        i -= 1
        if i <= 0:
            break
    for i in range(4):
        if i == 1:
            continue
        y = y + x * i
    return np.sum(y)


def early_returns(x):
    for i in range(3):
        if x[i] > 100.0:
            return x[i]
    if np.sum(x) < -100.0:
        return 0.0
    return np.sum(x ** 2)


def pass_and_docstring(x):
    """A docstring is not a statement to differentiate."""
    pass
    return np.sum(x * 3.0)


def side_effect_calls(x):
    print("side_effect_calls runs", np.shape(x), end="\n", sep=" ")
    items = []
    items.append(x[0])
    items.extend([x[1], x[2]])
    items.insert(0, x[2] * 2.0)
    items.pop()
    return items[0] * items[1] * items[2]


def side_effect_on_a_global_list(x):
    SEEN.append(len(x))
    return np.sum(x * x)


def nested_functions(x, flag=True):
    def scale(v, k=2.0, *, offset=np.pi):
        return v * k + offset

    if flag:

        def pick(v):
            return v * x

    else:

        def pick(v):
            return v

    return np.sum(scale(pick(x), k=3.0))


def lambdas(x):
    square = lambda v: v * v  # noqa: E731
    scaled = lambda v, k=2.0, *, shift=0.5: v * k + shift  # noqa: E731
    chosen = (lambda v: v * 2.0) if np.sum(x) > 0 else (lambda v: v * 3.0)
    return np.sum(square(x) + scaled(x, shift=1.0) + chosen(x))


def defaults_computed_when_made(x):
    # a default is computed when the function is made, as Python does: each lambda keeps
    # its own k, and `s` keeps the value `scale` had then
    powers = [lambda v, k=k: v ** k for k in range(1, 4)]
    total = sum(np.sum(power(x)) for power in powers)
    for j in range(2):
        scale = x[j] * 2.0

        def scaled(v, s=scale, *, shift=x[2]):
            return v * s + shift

        scale = 0.0
        total = total + np.sum(scaled(x)) + np.sum(scaled(x, 3.0, shift=scale))
    return total


def _positive(v):
    if v > 0.0:
        return v
    raise ValueError(f"{v} is not positive")


def raises_on_bad_input(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got {x.ndim} dimensions")

    def checked(v):
        if np.any(np.abs(v) > 1e6):
            raise OverflowError("too large") from None
        return np.tanh(v)

    total = 0.0
    for v in x:
        if not np.isfinite(v):
            raise FloatingPointError
        total = total + _positive(v) * v
    return total + np.sum(checked(x))


def register(function):  # a decorator that returns the function itself
    return function


@register
def decorated(x):
    return np.sum(np.tanh(x))


# ----- supported: expressions -----


def arithmetic(x):
    return np.sum(x + x * 2.0 - x / 3.0 + x ** 3 + (x @ np.ones((3, 3))) + (-x) + (+x) + x // 2.0 + x % 5.0)


def comparisons_and_boolean_operators(x, extra=None, keys=("a",)):
    s = np.sum(x)
    out = 0.0
    if 0.0 < s < 10.0 and not s > 100.0 or s < -100.0:
        out = out + s * s
    if extra is None and extra is not x:
        out = out + s
    if "a" in keys and "b" not in keys:
        out = out + 2.0 * s
    scale = (s > 0.0) and 2.0 or 3.0
    fallback = extra or x
    return out * scale + np.sum(fallback * x) + (s if s > 0 else -s)


def calls(x, *rest, k=2.0):
    return np.sum(np.multiply(x, k)) + np.sum(np.clip(x, -5.0, 5.0)) + sum_of(x, *rest)


def sum_of(first, *values):
    total = np.sum(first)
    for v in values:
        total = total + np.sum(v)
    return total


def positional_only(x, /, k=2.0):
    return np.sum(x * k)


def comprehensions(x):
    squares = [v * v for v in x if v > -100.0]
    pairs = [a * b for a in x for b in x if a > b]
    table = {i: x[i] * 2.0 for i in range(3) if i != 1}
    stacked = np.stack([v * 2.0 for v in x])
    return sum(squares) + sum(pairs) + table[0] * table[2] + sum(v * 3.0 for v in x) + np.sum(stacked)


def displays(x):
    t = (x[0], x[1])
    items = [x[0], x[2]]
    d = {"a": x[0], "b": x[1]}
    return t[0] * items[1] + t[1] + d["a"] * d["b"]


def strings(x):
    label = "a" + "b"
    joined = "c" "d"
    formatted = "%d" % 3
    parts = "x,y".split(",")
    braces = "{}".format(3)
    shown = f"{x[0]:.2f} {len(parts)!r:>{len(label) + 1}} {{}} {label=}"  # "0.30   2 {} label='ab'"
    return np.sum(x) * (len(label) + len(joined) + len(formatted) + len(parts) + len(braces) + len(b"raw")
                        + len(shown))


def indexing(m):
    v = m[0]
    return (
        v[-1] * 3.0
        + np.sum(v[::2])
        + np.sum(v[::-1] * v)
        + np.sum(m[1:3, ::2])
        + np.sum(m[..., 0] * 2.0)
        + np.sum(v[:, None] * v[None, :])
        + np.sum(v[np.array([0, 2])])
        + np.sum(v[v > 0.5])
        + m[1, -1]
    )


def attributes_and_methods(x):
    m = x.reshape(3, 1)
    size = x.shape[0] + x.ndim + x.size
    return np.sum(m.T * 2.0) * size + x.sum() + x.mean() + x.dot(x) + (x.dtype == np.float64)


def global_constant(x):
    return np.sum(x * SCALE + math.pi)


def recursive(x, n=2):
    if n == 0:
        return np.sum(x)
    return recursive(np.sin(x), n - 1)


Pair = namedtuple("Pair", ["a", "b"])


@dataclass
class Weights:
    w: np.ndarray


def records(x):
    p = Pair(x * 2.0, x)
    w = Weights(x * x)
    return np.sum(p.a * p.b + w.w)


class Layer:
    """A callable object: calling it calls `__call__`."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w * x)

    def scaled(self, x):
        return self.w * x


MODEL = Layer(np.array([0.5, -0.3, 0.8]))


def callable_objects(x, layer):
    return np.sum(np.sin(layer(x)) + layer.scaled(x) + MODEL(x))


X = np.array([0.3, 0.7, 1.1])
M = np.arange(12.0).reshape(3, 4) / 10.0 + 0.05

SUPPORTED = [
    (assignment_forms, (X,)),
    (augmented_assignment_forms, (X,)),
    (item_assignment_forms, (X,)),
    (annotations, (X,)),
    (if_elif_else, (X,)),
    (if_elif_else, (-X,)),
    (loop_forms, (X,)),
    (while_forms, (X,)),
    (early_returns, (X,)),
    (pass_and_docstring, (X,)),
    (side_effect_calls, (X,)),
    (side_effect_on_a_global_list, (X,)),
    (nested_functions, (X,)),
    (lambdas, (X,)),
    (defaults_computed_when_made, (X,)),
    (raises_on_bad_input, (X,)),
    (decorated, (X,)),
    (arithmetic, (X,)),
    (comparisons_and_boolean_operators, (X,)),
    (positional_only, (X,)),
    (comprehensions, (X,)),
    (displays, (X,)),
    (strings, (X,)),
    (indexing, (M,)),
    (attributes_and_methods, (X,)),
    (global_constant, (X,)),
    (recursive, (X,)),
    (records, (X,)),
    (callable_objects, (X, Layer(np.array([1.3, 0.4, -0.6])))),
]


@pytest.mark.parametrize("function, args", SUPPORTED, ids=[f.__name__ for f, _ in SUPPORTED])
def test_supported_construct_matches_finite_differences(function, args):
    ssad.check_grads(function, args, wrt=0)


def test_star_args_pass_a_tuple_on():
    x = np.array([0.3, -0.2, 0.9])
    rest = (x * 2.0, 1.5)
    ssad.check_grads(calls, (x, *rest), wrt=0, modes=("reverse",))
    gradient = ssad.grad(calls, wrt="rest")(x, *rest)
    np.testing.assert_allclose(gradient[0], np.ones(3))  # through sum_of's *values
    assert gradient[1] == pytest.approx(1.0)


def test_keyword_only_parameter_is_differentiated_by_name():
    x = np.array([0.3, -0.2, 0.9])
    assert ssad.grad(calls, wrt="k")(x, k=2.5) == pytest.approx(np.sum(x))


def test_gradient_reaches_a_callable_objects_attributes():
    layer = Layer(np.array([1.3, 0.4, -0.6]))
    x = np.array([0.3, -0.2, 0.9])
    gradient = ssad.grad(callable_objects, wrt=1)(x, layer)
    inner = layer.w * x
    expected = np.cos(np.tanh(inner)) * (1 - np.tanh(inner) ** 2) * x + x
    np.testing.assert_allclose(gradient.w, expected)


@pytest.mark.parametrize("bad, error, message", [
    (np.ones((2, 2)), ValueError, "expected a vector, got 2 dimensions"),
    (np.array([0.5, np.inf]), FloatingPointError, ""),
    (np.array([0.5, -0.5]), ValueError, "-0.5 is not positive"),
    (np.array([0.5, 2e6]), OverflowError, "too large"),
])
def test_a_raise_ends_the_call_in_every_mode(bad, error, message):
    gradient = ssad.grad(raises_on_bad_input)
    calls = [gradient, lambda v: ssad.jvp(raises_on_bad_input, (v,), (v,)),
             lambda v: ssad.jvp(gradient, (v,), (v,)), ssad.grad(lambda v: np.sum(gradient(v))),
             ssad.grad(raises_on_bad_input, checkpoint=("every", 1))]
    for call in calls:
        with pytest.raises(error, match=f"^{message}$") as raised:
            call(bad)
        assert raised.value.__suppress_context__ == (error is OverflowError)  # `from None`
    ssad.check_grads(raises_on_bad_input, (X,), order=2)
    np.testing.assert_allclose(calls[-1](X), gradient(X), rtol=1e-12)


# ----- side effects run once per call -----


def prints(x):
    print("prints runs")
    return np.sum(x ** 2)


def prints_in_a_loop(x):
    for i in range(2):
        print("iteration", i)
        x = np.sin(x)
    return np.sum(x)


def calls_a_function_that_prints(x):
    return prints(x) * np.sum(x)


def prints_what_carries_gradients(x):
    for i in range(3):
        loss = np.sum(x ** 2)
        print(f"step {i} loss {loss:.6f}", x[0], sep=" ")
        x = np.sin(x) * 1.1
    return np.sum(x)


PRINTERS = [(prints, 1), (prints_in_a_loop, 2), (calls_a_function_that_prints, 1),
            (prints_what_carries_gradients, 3)]


@pytest.mark.parametrize("function, lines", PRINTERS, ids=[f.__name__ for f, _ in PRINTERS])
def test_print_runs_once_per_call_of_the_gradient(function, lines, capsys):
    x = np.array([0.3, -0.2])

    def printed_lines():
        return len(capsys.readouterr().out.splitlines())

    function(x)
    assert printed_lines() == lines
    gradient = ssad.grad(function)
    assert printed_lines() == 0  # making the gradient runs nothing
    for _ in range(2):
        gradient(x)
        assert printed_lines() == lines
    ssad.value_and_grad(function)(x)
    assert printed_lines() == lines
    value, pullback = ssad.vjp(function, x)
    assert printed_lines() == lines
    pullback(1.0)
    assert printed_lines() == 0  # the backward sweep does not run the statements again
    ssad.jvp(function, (x,), (np.ones(2),))
    assert printed_lines() == lines
    ssad.jvp(ssad.grad(function), (x,), (np.ones(2),))  # second order: still once
    assert printed_lines() == lines
    ssad.vjp(ssad.grad(function), x)[1](np.ones(2))
    assert printed_lines() == lines
    ssad.grad(function, checkpoint=("every", 1))(x)  # segments run again without printing
    assert printed_lines() == lines


def test_print_shows_the_values_of_the_call(capsys):
    x = np.array([0.3, -0.2])
    prints_what_carries_gradients(x)
    plain = capsys.readouterr().out
    first = ssad.grad(prints_what_carries_gradients)
    for gradient in (first, ssad.grad(lambda v: np.sum(first(v)))):
        gradient(x)
        assert capsys.readouterr().out == plain
    ssad.check_grads(prints_what_carries_gradients, (x,), order=2)


def test_a_side_effect_on_a_global_runs_once_per_call():
    del SEEN[:]
    gradient = ssad.grad(side_effect_on_a_global_list)
    gradient(X)
    gradient(X)
    ssad.value_and_grad(side_effect_on_a_global_list)(X)
    assert SEEN == [3, 3, 3]


# ----- refused: UnsupportedSyntaxError where the construct stands -----

REFUSED = []


def refused(at, says, error=ssad.UnsupportedSyntaxError):
    """Register a function whose marked line holds a construct refused at the text `at`."""

    def add(function):
        REFUSED.append((function, at, says, error))
        return function

    return add


@refused("*rest", "starred assignment targets")
def starred_target(x):
    first, *rest = x  # <- here
    return first


@refused("y[0][1]", "assignment into an expression's result")
def subscript_of_subscript(x):
    y = np.zeros((2, 2))
    y[0][1] = x[0]  # <- here
    return np.sum(y)


@refused("box.w", "assignment to an attribute")
def attribute_assignment(x, box):
    box.w = x  # <- here
    return np.sum(x)


@refused("y: float", "annotation without a value")
def annotation_without_value(x):
    y: float  # <- here  # noqa: F842
    return np.sum(x)


@refused("y = x * 2", "can reach its end without a `return`")
def no_return(x):
    y = x * 2  # <- here  # noqa: F841


@refused("return", "`return` needs a value")
def bare_return(x):
    if np.sum(x) > 100.0:
        return  # <- here
    return np.sum(x)


@refused("y.sort()", "calling the method `sort` for its side effect")
def method_for_its_effect(x):
    y = x * 1.0
    y.sort()  # <- here
    return np.sum(y)


@refused("x + 1", "not a call has no effect")
def expression_without_effect(x):
    x + 1  # <- here
    return np.sum(x)


@refused("lambda v", "the lambda reads `i`, which is assigned again later")
def lambda_over_a_loop_variable(x):
    functions = []
    for i in range(3):
        functions.append(lambda v: v * i)  # <- here  # noqa: B023
    return np.sum(functions[0](x))


@refused("lambda v", "the lambda reads `i`, which is assigned again later; ssad captures values when the function is "
                    "made, Python reads them when it is called: bind the value as a default (`i=i`)")
def lambda_over_a_comprehension_variable(x):
    functions = [lambda v: v * i for i in range(3)]  # <- here  # noqa: B023
    return np.sum(functions[0](x))


def bound_as_a_default(x):
    functions = [lambda v, i=i: v * i for i in range(3)]
    return np.sum(sum(f(x) for f in functions))


def test_the_way_out_of_a_late_binding_lambda_is_exact():
    # the comprehension's variable was named by its renamed form (`i_1`); the default it suggests works
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(ssad.grad(bound_as_a_default)(x), [3.0, 3.0])
    np.testing.assert_allclose(ssad.jvp(bound_as_a_default, (x,), (np.array([1.0, 2.0]),))[1], 9.0)


@refused("def g", "the nested function g reads `k`")
def nested_def_over_a_reassigned_variable(x):
    k = 2.0

    def g(v):  # <- here
        return v * k

    k = 3.0
    return np.sum(g(x))


@refused("class", "class definition inside a differentiated function")
def class_inside(x):
    class Inner:  # <- here
        pass

    return np.sum(x)


@refused("try", "`try` statements are not supported")
def try_except(x):
    try:  # <- here
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


@refused("try", "`try` statements are not supported")
def try_finally(x):
    try:  # <- here
        y = x * 2.0
    finally:
        print("done")
    return np.sum(y)


@refused("try", "`try` statements are not supported")
def return_inside_try(x):
    try:  # <- here
        return np.sum(x * 2.0)
    except ValueError:
        return np.sum(x)


@refused("with", "`with` statements are not supported")
def with_statement(x):
    with np.errstate(all="ignore"), np.errstate(divide="ignore"):  # <- here
        return np.sum(np.log(x))


@refused("match", "`match` statements are not supported")
def match_statement(x):
    match x.ndim:  # <- here
        case 1:
            return np.sum(x)
    return np.sum(x * 2.0)


@refused("del", "`del ys[...]` of a slice is not supported")
def del_statement(x):
    ys = [x * 2.0, x, x * 3.0]
    del ys[0:2]  # <- here
    return np.sum(ys[0])


@refused("raise", "a bare `raise`")
def bare_raise(x):
    if np.sum(x) < -100.0:
        raise  # <- here
    return np.sum(x)


@refused("global", "`global` is not supported")
def global_statement(x):
    global SCALE  # <- here
    return np.sum(x * SCALE)


@refused("nonlocal", "`nonlocal` is not supported")
def nonlocal_statement(x):
    y = x

    def double():
        nonlocal y  # <- here
        y = y * 2.0
        return y

    return np.sum(double())


@refused("async def", "`async def` cannot be differentiated")
def nested_async_def(x):
    async def fetch():  # <- here
        async with lock():  # noqa: F821
            async for v in stream():  # noqa: F821
                await v
        return x

    return np.sum(x)


@refused("async def", "`async def` function, which ssad cannot differentiate")
async def async_function(x):  # <- here
    return np.sum(x)


@refused("yield", "is a generator function")
def yield_statement(x):
    yield x  # <- here
    return np.sum(x)


@refused("yield", "a `yield` whose value is used")
def yield_expression(x):
    sent = yield x  # <- here
    return np.sum(x * sent)


@refused("yield from", "is a generator function")
def yield_from_statement(x):
    yield from x  # <- here
    return np.sum(x)


@refused("yield", "generators (`yield`) cannot be differentiated")
def yield_in_a_lambda(x):
    g = lambda: (yield)  # <- here  # noqa: E731, F841
    return np.sum(x)


@refused("*x", "`*` is supported only as the last argument")
def starred_in_a_display(x):
    items = [*x]  # <- here
    return items[0]


@refused("*args", "`*` is supported only as the last argument")
def starred_before_another_argument(x):
    args = (x,)
    return np.sum(np.multiply(*args, 2.0))  # <- here


@refused("*rest", "`*` in a call of a function value")
def starred_call_of_a_nested_function(x):
    def g(a, b):
        return a * b

    rest = (x,)
    return np.sum(g(x, *rest))  # <- here


@refused("{1, 2}", "set displays")
def set_display(x):
    s = {1, 2}  # <- here
    return np.sum(x) * len(s)


@refused("{i for", "set comprehensions")
def set_comprehension(x):
    s = {i for i in range(3)}  # <- here
    return np.sum(x) * len(s)


@refused("key", "a dict display needs constant keys")
def dict_display_with_a_variable_key(x):
    key = "a"
    d = {key: x}  # <- here
    return np.sum(d["a"])


@refused("y := ", "assignment expressions (`:=`)")
def walrus_expression(x):
    z = (y := x * 2.0)  # <- here
    return np.sum(y + z)


@refused("y := ", "assignment expressions (`:=`)")
def walrus_statement(x):
    (y := x * 2.0)  # <- here
    return np.sum(y)


@refused("y := ", "assignment expressions (`:=`)")
def walrus_in_a_comprehension(x):
    return sum([(y := v * 2.0) for v in x])  # <- here  # noqa: F841


@refused("register", "decorators on a nested `def`")
def decorated_nested_def(x):
    @register  # <- here
    def g(v):
        return v

    return np.sum(g(x))


@refused("*rest", "a loop variable must be a name or a tuple of names")
def starred_loop_target(x):
    total = 0.0
    for first, *rest in [(1.0, 2.0)]:  # <- here  # noqa: B007
        total = total + first
    return np.sum(x) * total


@refused("x.tolist()", "looping over `.tolist()`")
def loop_over_a_method_result(x):
    total = 0.0
    for v in x.tolist():  # <- here
        total = total + v
    return total


@refused("eval", "`eval` runs code ssad cannot read")
def eval_call(x):
    return np.sum(eval("x * 2.0"))  # <- here


@refused("exec", "`exec` runs code ssad cannot read")
def exec_call(x):
    exec("y = 1")  # <- here
    return np.sum(x)


@refused("locals", "`locals()` reads variables by name")
def locals_call(x):
    return np.sum(locals()["x"])  # <- here


@refused("UNDEFINED", "is not defined where", error=SourceError)
def undefined_name(x):
    return x * UNDEFINED  # <- here  # noqa: F821


@refused("layer = Layer(", "constructing a Layer from values that carry gradients", error=ssad.MissingRuleError)
def constructs_a_plain_object(x):
    layer = Layer(x * 2.0)  # <- here
    return np.sum(layer.w)


@refused("return", "pass it positionally", error=SourceError)
def active_keyword_to_a_primitive(x):
    return np.sum(np.clip(-1.0, a_min=x, a_max=2.0))  # <- here


@pytest.mark.parametrize("function, at, says, error", REFUSED, ids=[f.__name__ for f, *_ in REFUSED])
def test_refused_construct_is_reported_where_it_stands(function, at, says, error):
    with pytest.raises(error) as caught:
        ssad.grad(function)(X)
    raised = caught.value
    assert type(raised) is error, f"{type(raised).__name__}: {raised}"
    lineno, text = marked_line(function)
    assert raised.filename == __file__
    assert raised.lineno == lineno, str(raised)
    assert raised.line == text
    assert raised.col is not None and text[raised.col :].startswith(at), (raised.col, text)
    assert says in raised.message
    assert f"{__file__}:{lineno}:{raised.col + 1}: " in str(raised)
    if error is ssad.UnsupportedSyntaxError:
        # the standard fields of a SyntaxError, so editors and tracebacks show the place
        assert isinstance(raised, SyntaxError)
        assert (raised.filename, raised.lineno, raised.offset, raised.text) == (__file__, lineno, raised.col + 1, text)
    assert not any(internal in str(raised) for internal in ("gast", "KeyError", "Traceback"))


@pytest.mark.parametrize(
    "function", [f for f, _, _, error in REFUSED if error is ssad.UnsupportedSyntaxError], ids=lambda f: f.__name__
)
def test_refused_the_same_way_by_every_entry_point(function):
    x = X
    for attempt in (
        lambda: ssad.value_and_grad(function),
        lambda: ssad.show(function),
        lambda: ssad.vjp(function, x),
        lambda: ssad.jvp(function, (x,), (x,)),
    ):
        with pytest.raises(ssad.UnsupportedSyntaxError):
            attempt()


def test_the_message_of_each_refusal_says_what_to_do():
    for function, _, _, error in REFUSED:
        with pytest.raises(error) as caught:
            ssad.grad(function)(X)
        what, _, to_do = caught.value.message.partition("; ")
        assert what and to_do, f"{function.__name__}: {caught.value.message}"


TRY_EXCEPT_STAR = """
import numpy as np

def try_except_star(x):
    try:
        y = x * 2.0
    except* ValueError:
        y = x
    return np.sum(y)
"""


@pytest.mark.skipif(not hasattr(__import__("ast"), "TryStar"), reason="`except*` needs Python 3.11")
def test_try_with_except_star_is_refused_at_the_try(tmp_path):
    path = tmp_path / "grouped.py"
    path.write_text(TRY_EXCEPT_STAR)
    scope = {}
    exec(compile(TRY_EXCEPT_STAR, str(path), "exec"), scope)
    with pytest.raises(ssad.UnsupportedSyntaxError, match="`try` statements are not supported") as caught:
        ssad.grad(scope["try_except_star"])
    assert (caught.value.filename, caught.value.lineno, caught.value.col) == (str(path), 5, 4)


# ----- the fixes -----


class Scale:
    """A class with `__call__` and other methods."""

    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return x

    def apply(self, x):
        return self.s * x


def applies(x, scale):
    return np.sum(scale.apply(x) ** 2)


def test_other_methods_of_a_class_with_call_are_differentiated():
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(ssad.grad(applies)(x, Scale(2.0)), 8.0 * x)
    assert ssad.grad(applies, wrt=1)(x, Scale(2.0)).s == pytest.approx(2 * 2.0 * np.sum(x * x))


def calls_a_layer(x, layer):
    return np.sum(layer(x) ** 2)


def test_calling_a_callable_object_differentiates_its_call_method():
    x = np.array([0.4, -0.9])
    layer = Layer(np.array([1.5, 0.5]))
    ssad.check_grads(calls_a_layer, (x, layer), wrt=0)
    d_layer = ssad.grad(calls_a_layer, wrt=1)(x, layer)
    t = np.tanh(layer.w * x)
    np.testing.assert_allclose(d_layer.w, 2 * t * (1 - t ** 2) * x)


def kinked(x):
    return np.sum(np.abs(x))


@ssad.adjoint(kinked)
def kinked_adjoint(dy, y, x):
    return (dy * np.where(x > 0, 1.0, -0.5),)  # not what the body gives: the rule is used


@ssad.tangent(kinked)
def kinked_tangent(tangents, y, x):
    return np.sum(tangents[0] * np.where(x > 0, 1.0, -0.5))


def test_a_rule_registered_on_the_function_itself_wins_at_the_top_level():
    x = np.array([1.0, -2.0])
    expected = np.array([1.0, -0.5])
    np.testing.assert_allclose(ssad.grad(kinked)(x), expected)
    value, gradient = ssad.value_and_grad(kinked)(x)
    assert value == pytest.approx(3.0)
    np.testing.assert_allclose(gradient, expected)
    value, pullback = ssad.vjp(kinked, x)
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * expected)
    assert ssad.jvp(kinked, (x,), (np.ones(2),))[1] == pytest.approx(0.5)
    assert "kinked(x)" in str(ssad.show(kinked))
    # the same rule when kinked is called from another function
    np.testing.assert_allclose(ssad.grad(lambda v: kinked(v) * 2.0)(x), 2.0 * expected)


def rule_with_try(x, *rest):
    try:
        return np.sum(x) * len(rest)
    except TypeError:
        return 0.0


@ssad.adjoint(rule_with_try)
def rule_with_try_adjoint(dy, y, x, *rest):
    return (dy * len(rest) * np.ones_like(x),)


def test_a_function_with_a_rule_is_not_transformed_so_its_body_may_use_anything():
    np.testing.assert_allclose(ssad.grad(rule_with_try)(np.ones(2), 1.0, 2.0), [2.0, 2.0])


def ndarray_method_without_rule(x):
    y = x.byteswap()
    return np.sum(x * y)


def test_missing_rule_for_an_array_method_suggests_valid_code():
    with pytest.raises(ssad.MissingRuleError) as caught:
        ssad.grad(ndarray_method_without_rule)
    message = caught.value.message
    assert "@ssad.adjoint(np.ndarray.byteswap)" in message
    snippet = message.split("Register one:")[1]
    compile(textwrap.dedent(snippet).strip() + "\n", "<suggested>", "exec")  # the suggestion is valid Python


def puts_along_an_axis(x):
    a = np.outer(x, x)
    np.put_along_axis(a, np.array([[0], [2], [1]]), x[:, None] * 2.0, axis=1)
    return np.sum(np.sin(a))


def puts_into_the_flat_array(x):
    a = np.zeros(4)
    np.put_along_axis(a, np.array([3, 1]), x[:2], axis=None)
    return np.sum(np.cos(a))


def fills_the_diagonal(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, x**2)
    return np.sum(np.sin(a))


def fills_a_tall_diagonal_wrapping(x, v):
    a = np.ones((7, 3)) * x[0]
    np.fill_diagonal(a, v, wrap=True)
    return np.sum(np.sin(a * 1.3))


@pytest.mark.parametrize(
    "f, args",
    [
        (puts_along_an_axis, (np.array([0.3, -0.2, 0.5]),)),
        (puts_into_the_flat_array, (np.array([0.3, -0.2, 0.5]),)),
        (fills_the_diagonal, (np.array([0.3, -0.2, 0.5]),)),
        (fills_a_tall_diagonal_wrapping, (np.array([0.3, -0.2]), 0.7)),
        (fills_a_tall_diagonal_wrapping, (np.array([0.3, -0.2]), np.array([0.7, -0.4]))),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_put_along_axis_and_fill_diagonal_are_the_writes_they_are(f, args):
    # read as `a[index] = value`: the overwritten elements get no gradient, the values do
    ssad.check_grads(f, args, wrt=tuple(range(len(args))), order=2)
    assert "a[diagonal_index_a_" in str(ssad.show(fills_the_diagonal))


def test_wrt_out_of_range_counts_parameters_in_words():
    with pytest.raises(ssad.SsadError, match=r"has 1 positional parameter \(x\)$"):
        ssad.grad(kinked, wrt=1)
    with pytest.raises(ssad.SsadError, match=r"has 2 positional parameters \(x, layer\)$"):
        ssad.grad(calls_a_layer, wrt=5)


def _put_in_place(x):
    y = x * 2.0
    np.put(y, np.array([0]), 1.0)
    return np.sum(y)


def _ufunc_at_in_place(x):
    y = x * 2.0
    np.multiply.at(y, np.array([0, 0]), x[:2])
    return np.sum(y)


@pytest.mark.parametrize("f, label", [(_put_in_place, "np.put"), (_ufunc_at_in_place, "np.multiply.at")])
def test_numpy_functions_that_write_in_place_are_refused_where_they_stand(f, label):
    # the write would be invisible to ssad: the gradient would silently miss it
    with pytest.raises(ssad.UnsupportedSyntaxError, match=f"{label} writes into its argument in place") as caught:
        ssad.grad(f)(np.array([0.3, -1.2, 0.8, 2.0]))
    assert caught.value.lineno == f.__code__.co_firstlineno + 2
    assert label in caught.value.text
