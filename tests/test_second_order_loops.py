"""What the second-order code of a loop does once a pass: nothing the size of the whole loop.

A Hessian-vector product `jvp(grad(f))` of a loop pops the gradient's tape once a pass
and writes into the adjoint arrays once a pass. If the tangent of the tape or of such an
array were copied before each pop or write, the product would cost the loop's length
squared: it did, 15 times the gradient at 20,000 steps of a scalar loop (2.5 times at
200). These tests read the generated code: no tangent is copied inside a loop, and the
gradient of a gradient adds an item's adjoint in place (`add_at(d_y, i, ...)`), not into
an array of zeros made each pass. Each program's derivatives are checked too, against
central differences (`check_every_order`). What they cost is measured by `make bench`.
"""

import gast
import numpy as np

import ssad

from .conftest import check_every_order


def scalar_loop(x):
    y = x[0]
    for _ in range(50):
        y = y + 0.01 * (-x[1] * y + np.sin(y))
    return y


def running_recurrence(x):
    y = np.zeros(len(x))
    for i in range(1, len(x)):
        y[i] = y[i - 1] * 0.5 + x[i]
    return np.sum(y * y)


def written_then_read(x):
    y = np.zeros(len(x))
    total = 0.0
    for i in range(len(x)):
        y[i] = np.sin(x[i]) * x[i]
        total = total + y[i] * y[i - 1]
    return total


def list_in_a_loop(x):
    parts = []
    for i in range(len(x)):
        parts.append(x[i] * x[i])
    s = 0.0
    while parts:
        s = s + np.tanh(parts.pop())
    return s


PROGRAMS = [scalar_loop, running_recurrence, written_then_read, list_in_a_loop]
X = np.array([0.7, 0.3, -0.4, 1.1, 0.2])
V = np.array([0.4, -1.0, 0.6, 0.3, -0.8])


def _loops(tree):
    return [node for node in gast.walk(tree) if isinstance(node, (gast.For, gast.While))]


def _calls(node, helper):
    return [c for c in gast.walk(node) if isinstance(c, gast.Call) and isinstance(c.func, gast.Name) and c.func.id == helper]


def _functions(source):
    return {f.name: f for f in gast.parse(source).body if isinstance(f, gast.FunctionDef)}


def test_their_derivatives_match_differences_in_every_order():
    for f in PROGRAMS:
        check_every_order(f, X.copy(), V)


def test_the_product_copies_no_tangent_inside_a_loop():
    for f in PROGRAMS:
        source = str(ssad.show(ssad.grad(f), mode="forward", args=(X,)))
        copies = [gast.unparse(c) for loop in _loops(gast.parse(source)) for c in _calls(loop, "copy_adjoint")]
        assert copies == [], (f.__name__, copies)


def test_the_tape_tangent_is_popped_in_place():
    # before: `d_tape = copy_adjoint(d_tape)` then `d_tape.pop()`, a copy of the whole tape a pass
    source = str(ssad.show(ssad.grad(scalar_loop), mode="forward", args=(X,)))
    backward = _loops(gast.parse(source))[-1]
    assert any(isinstance(c.func, gast.Attribute) and c.func.attr == "pop" and c.func.value.id == "d_tape"
               for c in gast.walk(backward) if isinstance(c, gast.Call))
    assert _calls(backward, "copy_adjoint") == []


def gradient_weighted(x):
    return np.sum(GRAD_RECURRENCE(x) * np.cos(x))


GRAD_RECURRENCE = ssad.grad(running_recurrence)


def test_the_gradient_of_a_gradient_adds_an_item_in_place():
    source = str(ssad.show(ssad.grad(gradient_weighted), args=(X,)))
    # the reverse sweep of the inner gradient's forward sweep: the adjoint of `written_part(d_y, i)`,
    # `take_part` and `saved_part` is added at i, as the adjoint of `d_y[i]` is
    backward = _functions(source)["backward_forward_grad_running_recurrence"]
    assert _loops(backward)
    for loop in _loops(backward):
        for helper in ("add_at", "add_at_1", "added_at", "add_adjoint"):
            for c in _calls(loop, helper):
                assert not _calls(c, "zeros_like_value"), helper
                assert not _calls(c, "getitem_adjoint"), helper
    expected = ssad.testing.numerical_gradient(gradient_weighted, X.copy())
    np.testing.assert_allclose(ssad.grad(gradient_weighted)(X.copy()), expected, rtol=1e-5, atol=1e-6)
