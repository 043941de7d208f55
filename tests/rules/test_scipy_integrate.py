"""Numerical checks of the rules in ssad/rules/scipy_integrate.py.

The rules are checked against central differences of the solution computed with tight
tolerances (rtol = atol = 1e-10): a gradient through an ODE solver is that of the
exact solution, good to about the solver tolerance, so the comparisons use rtol 1e-5.
`check_rule` reserves the keywords `rtol` and `atol` for itself, so the odeint Cases pass
odeint's tolerances positionally (one per state component, as odeint allows).
"""

import dataclasses
import functools

import numpy as np
import pytest
import scipy.integrate
from scipy.integrate import odeint, solve_ivp
from scipy.integrate._ivp.ivp import OdeResult

import ssad
import ssad.rules  # noqa: F401  (registers the built-in rules)
from ssad.registry import REGISTRY
from ssad.rules.scipy_integrate import (
    odeint_adjoint, odeint_adjoint_adjoint, odeint_adjoint_tangent, odeint_tangent, odeint_tangent_adjoint,
    odeint_tangent_tangent, solve_ivp_adjoint, solve_ivp_adjoint_adjoint, solve_ivp_adjoint_tangent, solve_ivp_tangent,
    solve_ivp_tangent_adjoint, solve_ivp_tangent_tangent,
)
from ssad.testing import assert_close, check_rule, check_second_order, check_tangent, numerical_gradient

from .cases import Case, case_id

TIGHT = 1e-10


def tight(n):
    return [TIGHT] * n


def lotka(y, t, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * b * y[0] * y[1] + np.sin(t)])


def lotka_time_first(t, y, a, b):
    return lotka(y, t, a, b)


def decay(y, t, k):
    return -k * y * y + 0.3 * np.cos(t)


def odeint_call(func, y0, t, args):
    """odeint's positional arguments up to `atol`, with tight tolerances."""
    n = np.size(y0)
    return (func, y0, t, args, None, 0, 0, None, None, tight(n), tight(n))


T3 = np.array([0.0, 0.4, 1.0])
K3 = np.array([1.4, 0.6, 0.9])
Y0 = np.array([1.0, 0.5])

CASES = [
    Case(odeint, odeint_call(lotka, Y0, T3, (0.7, 1.3)), id="odeint"),
    Case(odeint, odeint_call(lotka_time_first, Y0, np.array([0.2, 0.5, 0.9, 1.1]), (0.7, 1.3)), {"tfirst": True},
         id="odeint-tfirst"),
    Case(odeint, odeint_call(decay, 0.8, np.array([0.1, 0.6]), (1.4,)), id="odeint-scalar-state"),
    Case(odeint, odeint_call(decay, np.array([0.8, -0.3, 1.2]), np.array([1.0, 0.7, 0.2]), (K3,)),
         id="odeint-backwards-array-parameter"),
]
FIRST_ORDER_RULES = [odeint_adjoint, odeint_tangent, solve_ivp_adjoint, solve_ivp_tangent]
SECOND_ORDER_RULES = [
    odeint_adjoint_tangent, odeint_adjoint_adjoint, odeint_tangent_tangent, odeint_tangent_adjoint,
    solve_ivp_adjoint_tangent, solve_ivp_adjoint_adjoint, solve_ivp_tangent_tangent, solve_ivp_tangent_adjoint,
]
# solve_ivp's tolerances are keywords check_rule reserves: it is checked below; the first-order
# rules' own rules are checked under "Second derivatives", and refuse a third derivative
CHECKED_ELSEWHERE = [solve_ivp] + FIRST_ORDER_RULES + SECOND_ORDER_RULES


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rule(case):
    check_rule(case.primitive, *case.args, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_tangent(case):
    check_tangent(case.primitive, *case.args, **case.kwargs)


# ----- Adjoints of the extra arguments (a tuple, which check_rule does not perturb) -----


def inner(a, b):
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def args_differences(objective, args):
    """Central differences of objective(args) for each float entry of the tuple `args`."""
    expected = []
    for k, value in enumerate(args):

        def moved(v, k=k):
            return objective(args[:k] + (v,) + args[k + 1 :])

        expected.append(numerical_gradient(moved, value))
    return expected


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_odeint_adjoint_of_args(case):
    rng = np.random.default_rng(1)
    y = odeint(*case.args, **case.kwargs)
    dy = rng.uniform(0.5, 1.5, y.shape) * rng.choice([-1.0, 1.0], y.shape)
    d_args = REGISTRY.adjoint_rule(odeint)(dy, y, *case.args, **case.kwargs)[3]
    args = case.args[3]

    def objective(moved):
        call = case.args[:3] + (moved,) + case.args[4:]
        return inner(dy, odeint(*call, **case.kwargs))

    assert type(d_args) is tuple and len(d_args) == len(args)
    for k, (got, expected) in enumerate(zip(d_args, args_differences(objective, args), strict=True)):
        assert_close(f"odeint args[{k}]", got, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_odeint_tangent_of_args(case):
    rng = np.random.default_rng(2)
    args = case.args[3]
    t_args = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal()) for a in args)
    y = odeint(*case.args, **case.kwargs)
    tangents = (None, np.zeros(np.shape(case.args[1])), np.zeros(np.shape(case.args[2])), t_args)
    got = REGISTRY.tangent_rule(odeint)(tangents, y, *case.args, **case.kwargs)
    eps = 1e-6

    def at(step):
        moved = tuple(np.asarray(a) + step * np.asarray(t) for a, t in zip(args, t_args, strict=True))
        return odeint(*(case.args[:3] + (moved,) + case.args[4:]), **case.kwargs)

    assert_close("odeint tangent of args", got, (at(eps) - at(-eps)) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_odeint_tangent_is_the_transpose_of_the_adjoint(case):
    # two solves of the exact solution's derivative: equal to about the solver tolerance
    rng = np.random.default_rng(3)
    y = odeint(*case.args, **case.kwargs)
    dy = rng.standard_normal(y.shape)
    args = case.args[3]
    tangents = (
        None, rng.standard_normal(np.shape(case.args[1])), rng.standard_normal(np.shape(case.args[2])),
        tuple(rng.standard_normal(np.shape(a)) for a in args),
    )
    adjoints = REGISTRY.adjoint_rule(odeint)(dy, y, *case.args, **case.kwargs)
    t_y = REGISTRY.tangent_rule(odeint)(tangents, y, *case.args, **case.kwargs)
    backward = sum(inner(d, t) for d, t in zip(adjoints[1:3], tangents[1:3], strict=True))
    backward += sum(inner(d, t) for d, t in zip(adjoints[3], tangents[3], strict=True))
    np.testing.assert_allclose(backward, inner(dy, t_y), rtol=1e-7)


def test_odeint_full_output_is_refused():
    y = odeint(decay, 0.8, T3, (1.4,))
    with pytest.raises(ssad.SsadError, match="full_output"):
        REGISTRY.adjoint_rule(odeint)(np.ones_like(y), y, decay, 0.8, T3, (1.4,), full_output=1)


# ----- odeint end to end: parameters, initial state, times, closures -----


def odeint_loss(k, c, y0, t):
    ys = odeint(decay_forced, y0, t, args=(k, c), rtol=1e-10, atol=1e-10)
    return np.sum(np.sin(ys))


def decay_forced(y, t, k, c):
    return -k * y + c * np.sin(t)


def odeint_closure_loss(k, y0):
    def f(y, t):
        return -k * y * y + np.cos(t)

    return np.sum(odeint(f, y0, T3, rtol=1e-10, atol=1e-10) ** 2)


def odeint_partial_loss(k, y0):
    f = functools.partial(decay_forced, k=k, c=0.4)
    return np.sum(np.cos(odeint(f, y0, T3, rtol=1e-10, atol=1e-10)))


ODEINT_POINT = (np.array([0.7, 1.2]), 0.4, np.array([1.0, -0.5]), np.array([0.1, 0.5, 0.9]))


def differences(f, args, position):
    def moved(value):
        changed = list(args)
        changed[position] = value
        return float(f(*changed))

    return numerical_gradient(moved, args[position])


@pytest.mark.parametrize("position", [0, 1, 2, 3], ids=["array-parameter", "scalar-parameter", "y0", "t"])
def test_odeint_gradient_end_to_end(position):
    got = ssad.grad(odeint_loss, wrt=position)(*ODEINT_POINT)
    assert_close(f"odeint_loss argument {position}", got, differences(odeint_loss, ODEINT_POINT, position), 1e-5, 1e-7)


def test_odeint_jvp_end_to_end():
    rng = np.random.default_rng(4)
    directions = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else 0.8 for a in ODEINT_POINT)
    _, got = ssad.jvp(odeint_loss, ODEINT_POINT, directions)
    expected = sum(inner(differences(odeint_loss, ODEINT_POINT, k), d) for k, d in enumerate(directions))
    assert_close("jvp of odeint_loss", got, expected, 1e-5, 1e-7)


@pytest.mark.parametrize("f", [odeint_closure_loss, odeint_partial_loss], ids=["closure", "partial"])
def test_odeint_gradient_of_a_function_values_parameters(f):
    point = (0.8, np.array([1.0, -0.5]))
    got = ssad.grad(f, wrt=(0, 1))(*point)
    for position in (0, 1):
        assert_close(f"{f.__name__} argument {position}", got[position], differences(f, point, position), 1e-5, 1e-7)
    _, tangent = ssad.jvp(f, point, (1.0, np.array([0.5, -2.0])))
    expected = differences(f, point, 0) + inner(differences(f, point, 1), [0.5, -2.0])
    assert_close(f"jvp of {f.__name__}", tangent, expected, 1e-5, 1e-7)


@dataclasses.dataclass
class Field:
    """A right-hand side holding its own weights: its gradient is a Field too."""

    W: np.ndarray

    def __call__(self, y, t):
        return np.tanh(self.W @ y) - 0.2 * y


def odeint_callable_object_loss(field, y0):
    return np.sum(np.sin(odeint(field, y0, T3, rtol=1e-10, atol=1e-10)))


def test_odeint_gradient_of_a_callable_objects_attributes():
    W, y0 = np.array([[0.3, -0.8], [0.5, 0.2]]), np.array([1.0, -0.4])
    got = ssad.grad(odeint_callable_object_loss)(Field(W), y0)
    expected = numerical_gradient(lambda w: odeint_callable_object_loss(Field(w), y0), W)
    assert isinstance(got, Field)
    assert_close("odeint_callable_object_loss field.W", got.W, expected, 1e-5, 1e-7)
    direction = np.array([[1.0, -0.5], [0.3, 2.0]])
    _, tangent = ssad.jvp(odeint_callable_object_loss, (Field(W), y0), (Field(direction), np.zeros(2)))
    assert_close("jvp of odeint_callable_object_loss", tangent, inner(expected, direction), 1e-5, 1e-7)


# ----- A neural ODE: a tanh network as the right-hand side, its weights as args -----


def mlp(y, t, W1, b1, W2):
    return W2 @ np.tanh(W1 @ y + b1)


def neural_ode_loss(W1, b1, W2, y0):
    ys = odeint(mlp, y0, np.array([0.0, 0.5, 1.0]), args=(W1, b1, W2), rtol=1e-10, atol=1e-10)
    return np.sum(np.sin(ys[1:]))


def neural_ode_point():
    rng = np.random.default_rng(5)
    W1, b1, W2 = rng.standard_normal((3, 2)), rng.standard_normal(3), 0.7 * rng.standard_normal((2, 3))
    return W1, b1, W2, np.array([0.5, -1.0])


def test_neural_ode_gradient_and_jvp():
    point = neural_ode_point()
    got = ssad.grad(neural_ode_loss, wrt=(0, 1, 2, 3))(*point)
    expected = [differences(neural_ode_loss, point, k) for k in range(4)]
    for k in range(4):
        assert_close(f"neural_ode_loss argument {k}", got[k], expected[k], 1e-5, 1e-7)
    rng = np.random.default_rng(6)
    directions = tuple(rng.standard_normal(np.shape(a)) for a in point)
    _, tangent = ssad.jvp(neural_ode_loss, point, directions)
    assert_close("jvp of neural_ode_loss", tangent, sum(inner(e, d) for e, d in zip(expected, directions, strict=True)), 1e-5, 1e-7)


def test_neural_ode_matches_autograd():
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.integrate import odeint as autograd_odeint

    def autograd_mlp(y, t, W1, b1, W2):
        return anp.dot(W2, anp.tanh(anp.dot(W1, y) + b1))

    W1, b1, W2, y0 = neural_ode_point()
    times = np.array([0.0, 0.5, 1.0])

    def autograd_loss(args, y0):
        ys = autograd_odeint(autograd_mlp, y0, times, args, rtol=1e-10, atol=1e-10)
        return anp.sum(anp.sin(ys[1:]))

    expected_args, expected_y0 = autograd.grad(autograd_loss, (0, 1))((W1, b1, W2), y0)
    got = ssad.grad(neural_ode_loss, wrt=(0, 1, 2, 3))(W1, b1, W2, y0)
    for k, expected in enumerate(list(expected_args) + [expected_y0]):
        assert_close(f"neural ODE against autograd, argument {k}", got[k], expected, 1e-6, 1e-8)


# ----- solve_ivp -----


def spring(t, y, k, c):
    return np.array([y[1], -k * y[0] - c * y[1] + 0.2 * np.sin(t)])


IVP_EVAL = np.array([0.3, 0.8, 1.5])
IVP_SPAN = (0.1, 2.0)
IVP_Y0 = np.array([1.0, -0.4])
IVP_ARGS = (np.array(1.7), 0.3)


def ivp(fun=spring, t_span=IVP_SPAN, y0=IVP_Y0, t_eval=IVP_EVAL, args=IVP_ARGS, method="RK45"):
    return solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, args=args, rtol=TIGHT, atol=TIGHT)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA"])
def test_solve_ivp_adjoint_against_differences(method):
    rng = np.random.default_rng(7)
    sol = ivp(method=method)
    dy = {"y": rng.uniform(0.5, 1.5, sol.y.shape), "t": rng.uniform(-1.0, 1.0, sol.t.shape)}
    rule = REGISTRY.adjoint_rule(solve_ivp)
    adjoints = rule(dy, sol, spring, IVP_SPAN, IVP_Y0, method, IVP_EVAL, rtol=TIGHT, atol=TIGHT, args=IVP_ARGS)
    d_fun, d_span, d_y0, d_method, d_eval = adjoints[:5]
    d_args = adjoints[8]

    def objective(**changed):
        moved = ivp(method=method, **changed)
        return inner(dy["y"], moved.y) + inner(dy["t"], moved.t)

    assert d_fun is None and d_method is None and type(d_span) is tuple
    assert_close("solve_ivp y0", d_y0, numerical_gradient(lambda v: objective(y0=v), IVP_Y0), 1e-5, 1e-7)
    assert_close("solve_ivp t_eval", d_eval, numerical_gradient(lambda v: objective(t_eval=v), IVP_EVAL), 1e-5, 1e-7)
    start = numerical_gradient(lambda v: objective(t_span=(v, IVP_SPAN[1])), IVP_SPAN[0])
    assert_close("solve_ivp t_span", d_span, (start, 0.0), 1e-5, 1e-7)
    expected = args_differences(lambda moved: objective(args=moved), IVP_ARGS)
    for k in range(2):
        assert_close(f"solve_ivp args[{k}]", d_args[k], expected[k], 1e-5, 1e-7)


def test_solve_ivp_tangent_against_differences_and_the_adjoint():
    rng = np.random.default_rng(8)
    sol = ivp()
    t_span, t_y0, t_eval = (0.6, 0.0), rng.standard_normal(2), rng.standard_normal(3)
    t_args = (np.array(0.9), -1.1)
    tangents = (None, t_span, t_y0, None, t_eval, None, None, None, t_args)
    got = REGISTRY.tangent_rule(solve_ivp)(tangents, sol, spring, IVP_SPAN, IVP_Y0, "RK45", IVP_EVAL,
                                           rtol=TIGHT, atol=TIGHT, args=IVP_ARGS)
    eps = 1e-6

    def at(step):
        return ivp(
            t_span=(IVP_SPAN[0] + step * t_span[0], IVP_SPAN[1]),
            y0=IVP_Y0 + step * t_y0,
            t_eval=IVP_EVAL + step * t_eval,
            args=tuple(a + step * t for a, t in zip(IVP_ARGS, t_args, strict=True)),
        )

    up, down = at(eps), at(-eps)
    assert_close("solve_ivp tangent of y", got.y, (up.y - down.y) / (2 * eps), 1e-5, 1e-7)
    assert_close("solve_ivp tangent of t", got.t, t_eval, 1e-12, 0.0)
    dy = {"y": rng.standard_normal(sol.y.shape), "t": rng.standard_normal(3)}
    adjoints = REGISTRY.adjoint_rule(solve_ivp)(dy, sol, spring, IVP_SPAN, IVP_Y0, "RK45", IVP_EVAL,
                                                rtol=TIGHT, atol=TIGHT, args=IVP_ARGS)
    backward = inner(adjoints[1], t_span) + inner(adjoints[2], t_y0) + inner(adjoints[4], t_eval)
    backward += sum(inner(d, t) for d, t in zip(adjoints[8], t_args, strict=True))
    np.testing.assert_allclose(backward, inner(dy["y"], got.y) + inner(dy["t"], got.t), rtol=1e-7)


def ivp_loss(k, y0, t_eval):
    sol = solve_ivp(spring, (0.0, 2.0), y0, t_eval=t_eval, args=(k, 0.3), rtol=1e-10, atol=1e-10)
    return np.sum(np.sin(sol["y"])) + np.sum(sol["t"] ** 2)


def ivp_closure_loss(k, y0):
    def rhs(t, y):
        return np.array([y[1], -k[0] * y[0] - k[1] * y[1] * y[1]])

    sol = solve_ivp(rhs, (0.0, 1.5), y0, method="DOP853", t_eval=np.array([0.5, 1.5]), rtol=1e-10, atol=1e-10)
    return np.sum(np.cos(sol["y"]))


def ivp_attribute_loss(k, y0):
    sol = solve_ivp(spring, (0.0, 1.0), y0, t_eval=np.array([0.25, 1.0]), args=(k, 0.3), rtol=1e-10, atol=1e-10)
    return np.sum(np.sin(sol.y))


IVP_POINT = (1.7, np.array([1.0, -0.4]), np.array([0.2, 0.9, 1.6]))


@pytest.mark.parametrize("position", [0, 1, 2], ids=["parameter", "y0", "t_eval"])
def test_solve_ivp_gradient_end_to_end(position):
    got = ssad.grad(ivp_loss, wrt=position)(*IVP_POINT)
    assert_close(f"ivp_loss argument {position}", got, differences(ivp_loss, IVP_POINT, position), 1e-5, 1e-7)


def test_solve_ivp_closure_gradient_and_jvp():
    point = (np.array([1.3, 0.4]), np.array([0.8, 0.1]))
    got = ssad.grad(ivp_closure_loss, wrt=(0, 1))(*point)
    expected = [differences(ivp_closure_loss, point, k) for k in (0, 1)]
    for k in (0, 1):
        assert_close(f"ivp_closure_loss argument {k}", got[k], expected[k], 1e-5, 1e-7)
    directions = (np.array([0.5, -1.0]), np.array([1.5, 0.3]))
    _, tangent = ssad.jvp(ivp_closure_loss, point, directions)
    expected_tangent = inner(expected[0], directions[0]) + inner(expected[1], directions[1])
    assert_close("jvp of ivp_closure_loss", tangent, expected_tangent, 1e-5, 1e-7)


def test_solve_ivp_attribute_read_in_forward_mode():
    point = (1.7, np.array([1.0, -0.4]))
    directions = (0.6, np.array([-0.5, 1.2]))
    _, tangent = ssad.jvp(ivp_attribute_loss, point, directions)
    expected = 0.6 * differences(ivp_attribute_loss, point, 0)
    expected += inner(differences(ivp_attribute_loss, point, 1), directions[1])
    assert_close("jvp of ivp_attribute_loss", tangent, expected, 1e-5, 1e-7)


def test_solve_ivp_result_read_by_attribute_in_reverse_mode():
    point = (1.7, np.array([1.0, -0.4]))
    got = ssad.grad(ivp_attribute_loss, wrt=(0, 1))(*point)
    assert_close("d k of ivp_attribute_loss", got[0], differences(ivp_attribute_loss, point, 0), 1e-5, 1e-7)
    assert_close("d y0 of ivp_attribute_loss", got[1], differences(ivp_attribute_loss, point, 1), 1e-5, 1e-7)


def test_solve_ivp_without_t_eval_events_or_dense_output_is_refused():
    rule = REGISTRY.adjoint_rule(solve_ivp)
    sol = solve_ivp(spring, IVP_SPAN, IVP_Y0, args=IVP_ARGS)
    with pytest.raises(ssad.SsadError, match="pass t_eval"):
        rule({"y": np.ones_like(sol.y)}, sol, spring, IVP_SPAN, IVP_Y0, args=IVP_ARGS)
    sol = solve_ivp(spring, IVP_SPAN, IVP_Y0, t_eval=IVP_EVAL, dense_output=True, args=IVP_ARGS)
    with pytest.raises(ssad.SsadError, match="events or dense_output"):
        rule({"y": np.ones_like(sol.y)}, sol, spring, IVP_SPAN, IVP_Y0, t_eval=IVP_EVAL, dense_output=True,
             args=IVP_ARGS)

    def without_t_eval(y0):
        return np.sum(solve_ivp(spring, IVP_SPAN, y0, args=IVP_ARGS)["y"])

    with pytest.raises(ssad.SsadError, match="pass t_eval"):
        ssad.grad(without_t_eval)(IVP_Y0)


# ----- Second derivatives -----
#
# The tangent and adjoint rules of the first-order rules (forward over reverse: `hessian`,
# `jvp(grad(f))`; reverse over reverse: `grad(grad(f))`; forward and reverse over a jvp)
# are checked against a closed form, against central differences of ssad's own gradient
# (step 1e-5 with solver tolerances 1e-11: the differences are good to about 1e-6), and
# against each other (the adjoint of a rule is the transpose of its tangent).

EXACT = 1e-11


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_second_order_through_odeint(case):
    check_second_order(case.primitive, *case.args, **case.kwargs)


def replaced(point, position, value):
    """`point` with its entry `position` replaced by `value` (a float for a 0-d value)."""
    changed = list(point)
    changed[position] = float(value) if np.ndim(value) == 0 else value
    return tuple(changed)


def hessian_by_differences(f, point, position, eps=1e-5):
    """Central differences of ssad.grad(f, wrt=position): shaped x.shape + x.shape."""
    gradient = ssad.grad(f, wrt=position)
    x = np.asarray(point[position], dtype=np.float64)
    columns = []
    for e in np.eye(x.size):
        step = eps * e.reshape(x.shape)
        up = np.asarray(gradient(*replaced(point, position, x + step)))
        down = np.asarray(gradient(*replaced(point, position, x - step)))
        columns.append((up - down) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


def check_second_derivatives(f, point, position, rtol=1e-5, atol=1e-6):
    """hessian, jvp(grad(f)) and grad of <w, grad(f)> at `point` (three arguments) in argument
    `position`, against differences of ssad.grad (used as they come, not symmetrized)."""
    expected = hessian_by_differences(f, point, position)
    name = f"{f.__name__} argument {position}"
    x = point[position]
    assert_close(f"hessian of {name}", ssad.hessian(f, wrt=position)(*point), expected, rtol, atol)
    rng = np.random.default_rng(9)
    v, w = rng.standard_normal(np.shape(x)), rng.standard_normal(np.shape(x))
    axes = np.ndim(x)
    gradient = ssad.grad(f, wrt=position)
    tangents = tuple(v if k == position else None for k in range(len(point)))
    _, product = ssad.jvp(gradient, point, tangents)
    assert_close(f"jvp of the gradient of {name}", product, np.tensordot(expected, v, axes), rtol, atol)

    def weighted_gradient(a, b, c):
        return np.sum(w * gradient(a, b, c))

    got = ssad.grad(weighted_gradient, wrt=position)(*point)
    assert_close(f"gradient of the gradient of {name}", got, np.tensordot(w, expected, axes), rtol, atol)


DECAY_TIMES = np.array([0.0, 0.5, 1.2])


def exponential_decay(y, t, k):
    return -k * y


def decay_loss(p):
    """sum_i y(t_i)^2 = sum_i y0^2 exp(-2 k t_i) for y' = -k y, y(0) = y0, with p = (k, y0)."""
    ys = odeint(exponential_decay, p[1], DECAY_TIMES, args=(p[0],), rtol=EXACT, atol=EXACT)
    return np.sum(ys**2)


def decay_in_k(k):
    return decay_loss(np.array([k, 1.3]))


def decay_hessian(p):
    k, y0 = p
    e = np.exp(-2 * k * DECAY_TIMES)
    d_kk, d_ky, d_yy = np.sum(4 * DECAY_TIMES**2 * y0**2 * e), np.sum(-4 * DECAY_TIMES * y0 * e), np.sum(2 * e)
    return np.array([[d_kk, d_ky], [d_ky, d_yy]])


def test_odeint_second_derivatives_of_a_decay_in_closed_form():
    p = np.array([0.7, 1.3])
    expected = decay_hessian(p)
    assert_close("hessian of decay_loss", ssad.hessian(decay_loss)(p), expected, 1e-7, 1e-9)
    v = np.array([0.4, -1.1])
    _, product = ssad.jvp(ssad.grad(decay_loss), (p,), (v,))
    assert_close("jvp of the gradient of decay_loss", product, expected @ v, 1e-7, 1e-9)
    assert_close("grad(grad(decay_in_k))", ssad.grad(ssad.grad(decay_in_k))(0.7), expected[0, 0], 1e-7, 1e-9)


LOTKA_TIMES = np.array([0.0, 0.4, 1.0])


def lotka_volterra_loss(rates, y0, c):
    """Predators and prey: the rates (a, b) pass through args, the death rate c is captured."""

    def populations(y, t, a, b):
        return np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + 0.5 * b * y[0] * y[1] + 0.1 * np.sin(t)])

    ys = odeint(populations, y0, LOTKA_TIMES, args=(rates[0], rates[1]), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(ys[1:])) + 0.3 * np.sum(ys[-1] ** 2)


def pendulum_loss(coefficients, y0, damping):
    """A damped pendulum: (gravity, drive) pass through args, the damping is captured; t_span
    starts before the first output time."""

    def swing(t, y, gravity, drive):
        return np.array([y[1], -gravity * np.sin(y[0]) - damping * y[1] + drive * np.cos(t)])

    sol = solve_ivp(swing, (0.1, 2.0), y0, method="DOP853", t_eval=np.array([0.3, 1.0]),
                    args=(coefficients[0], coefficients[1]), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(sol.y)) + 0.3 * np.sum(sol.y[:, -1] ** 2)


LOTKA_POINT = (np.array([0.9, 0.6]), np.array([1.0, 0.5]), 0.7)
PENDULUM_POINT = (np.array([1.7, 0.2]), np.array([1.0, -0.4]), 0.3)


@pytest.mark.parametrize("position", [0, 1, 2], ids=["args", "y0", "captured"])
def test_odeint_second_derivatives(position):
    check_second_derivatives(lotka_volterra_loss, LOTKA_POINT, position)


@pytest.mark.parametrize("position", [0, 1, 2], ids=["args", "y0", "captured"])
def test_solve_ivp_second_derivatives(position):
    check_second_derivatives(pendulum_loss, PENDULUM_POINT, position)


def odeint_times_loss(t, y0, k):
    ys = odeint(decay_forced, y0, t, args=(k, 0.5), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(ys)) + np.sum(ys[-1] ** 2)


def solve_ivp_times_loss(t_eval, y0, k):
    sol = solve_ivp(spring, (t_eval[0] - 0.2, 2.0), y0, t_eval=t_eval, args=(k, 0.3), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(sol.y)) + np.sum(sol.t * sol.y[0])


def test_odeint_second_derivatives_in_the_times():
    check_second_derivatives(odeint_times_loss, (np.array([0.1, 0.5, 0.9]), np.array([1.0, -0.5]), 0.8), 0)


def test_solve_ivp_second_derivatives_in_the_times():
    check_second_derivatives(solve_ivp_times_loss, (np.array([0.2, 0.7]), IVP_Y0, 1.7), 0)


def odeint_field_loss(W, y0):
    return odeint_callable_object_loss(Field(W), y0)


@pytest.mark.parametrize(
    "f, first", [(odeint_partial_loss, 0.8), (odeint_field_loss, np.array([[0.3, -0.8], [0.5, 0.2]]))],
    ids=["partial", "callable-object"],
)
def test_odeint_hessian_of_a_function_values_parameters(f, first):
    point = (first, np.array([1.0, -0.5]))
    expected = hessian_by_differences(f, point, 0)
    assert_close(f"hessian of {f.__name__}", ssad.hessian(f)(*point), expected, 1e-5, 1e-6)


# The rules of the rules, on their own: the adjoint rules read the solution `y` as the
# states they restart from, so their derivatives treat its rows as independent inputs.


def odeint_rule_arguments(step=0.0, direction=None):
    """(dy, y, func, y0, t, args) of an odeint_adjoint call, moved by `step` along `direction`."""
    t_dy, t_y, t_t, t_args = direction if direction is not None else (0.0, 0.0, 0.0, (0.0, 0.0))
    y = odeint(lotka, Y0, T3, (0.7, 1.3), rtol=EXACT, atol=EXACT)
    dy = np.cos(y)
    args = (0.7 + step * t_args[0], 1.3 + step * t_args[1])
    return dy + step * t_dy, y + step * t_y, lotka, Y0, T3 + step * t_t, args


def odeint_rule_direction(rng):
    shape = (len(T3), 2)
    return rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(3), tuple(rng.standard_normal(2))


def flat_adjoints(adjoints):
    """The odeint_adjoint outputs (d_y0, d_t, d_args) as one vector (d_func is None for lotka)."""
    return np.concatenate([np.ravel(adjoints[1]), np.ravel(adjoints[2]), np.ravel(adjoints[3])])


def test_odeint_adjoint_rules_against_differences_and_each_other():
    rng = np.random.default_rng(10)
    direction = odeint_rule_direction(rng)
    options = dict(rtol=EXACT, atol=EXACT)
    arguments = odeint_rule_arguments()
    out = odeint_adjoint(*arguments, **options)
    t_dy, t_y, t_t, t_args = direction
    tangent_of_rule = odeint_adjoint_tangent((t_dy, t_y, None, None, t_t, t_args), out, *arguments, **options)
    eps = 1e-6
    up = flat_adjoints(odeint_adjoint(*odeint_rule_arguments(eps, direction), **options))
    down = flat_adjoints(odeint_adjoint(*odeint_rule_arguments(-eps, direction), **options))
    assert_close("tangent of odeint_adjoint", flat_adjoints(tangent_of_rule), (up - down) / (2 * eps), 1e-5, 1e-7)
    weights = (None, rng.standard_normal(2), rng.standard_normal(3), tuple(rng.standard_normal(2)))
    d_dy, d_y, d_func, d_y0, d_t, d_args = odeint_adjoint_adjoint(weights, out, *arguments, **options)
    assert d_func is None and d_y0 is None  # the rule reads y[0], not y0
    backward = inner(d_dy, t_dy) + inner(d_y, t_y) + inner(d_t, t_t) + inner(d_args, t_args)
    forward = inner(np.concatenate([weights[1], weights[2], weights[3]]), flat_adjoints(tangent_of_rule))
    np.testing.assert_allclose(backward, forward, rtol=1e-7)


def test_solve_ivp_adjoint_rules_against_each_other():
    rng = np.random.default_rng(11)
    sol = ivp()
    dy = {"y": rng.standard_normal(sol.y.shape), "t": rng.standard_normal(3)}
    arguments = (dy, sol, spring, IVP_SPAN, IVP_Y0, "RK45", IVP_EVAL, False, None, False, IVP_ARGS)
    options = dict(rtol=TIGHT, atol=TIGHT)
    out = solve_ivp_adjoint(*arguments, **options)
    t_dy = {"y": rng.standard_normal(sol.y.shape), "t": rng.standard_normal(3)}
    t_sol = OdeResult(y=rng.standard_normal(sol.y.shape), t=rng.standard_normal(3))
    t_span, t_y0, t_args = (rng.standard_normal(), 0.0), rng.standard_normal(2), tuple(rng.standard_normal(2))
    tangents = (t_dy, t_sol, None, t_span, t_y0, None, None, None, None, None, t_args)
    tangent_of_rule = solve_ivp_adjoint_tangent(tangents, out, *arguments, **options)
    weights = (None, (rng.standard_normal(), 0.0), rng.standard_normal(2), None, rng.standard_normal(3), None, None,
               None, tuple(rng.standard_normal(2)))
    adjoints = solve_ivp_adjoint_adjoint(weights, out, *arguments, **options)
    forward = sum(inner(weights[k], tangent_of_rule[k]) for k in (1, 2, 4, 8))
    backward = inner(adjoints[0]["y"], t_dy["y"]) + inner(adjoints[0]["t"], t_dy["t"])
    backward += inner(adjoints[1]["y"], t_sol.y) + inner(adjoints[1]["t"], t_sol.t)
    backward += inner(adjoints[3], t_span) + inner(adjoints[4], t_y0) + inner(adjoints[10], t_args)
    np.testing.assert_allclose(backward, forward, rtol=1e-7)


def second_directional_by_differences(f, point, u, v, eps=1e-5):
    """u . H v by central differences of ssad.grad along v."""
    gradient = ssad.grad(f, wrt=tuple(range(len(point))))
    up = gradient(*(p + eps * d for p, d in zip(point, v, strict=True)))
    down = gradient(*(p - eps * d for p, d in zip(point, v, strict=True)))
    return sum(inner(a, (np.asarray(b) - np.asarray(c)) / (2 * eps)) for a, b, c in zip(u, up, down, strict=True))


@pytest.mark.parametrize("f, point", [(lotka_volterra_loss, LOTKA_POINT), (pendulum_loss, PENDULUM_POINT)],
                         ids=["odeint", "solve_ivp"])
def test_second_derivatives_of_a_jvp(f, point):
    """Forward over forward (ssad.jvp of a function that calls ssad.jvp) and reverse over forward
    (ssad.grad of it), in every argument at once."""
    rng = np.random.default_rng(12)
    u = (rng.standard_normal(2), rng.standard_normal(2), 0.3)
    v = (rng.standard_normal(2), rng.standard_normal(2), -0.5)

    def directional(a, b, c):
        return ssad.jvp(f, (a, b, c), u)[1]

    expected = second_directional_by_differences(f, point, u, v)
    _, got = ssad.jvp(directional, point, v)
    assert_close(f"jvp of the jvp of {f.__name__}", got, expected, 1e-5, 1e-6)
    gradient = ssad.grad(directional, wrt=(0, 1, 2))(*point)
    got = sum(inner(g, d) for g, d in zip(gradient, v, strict=True))
    assert_close(f"gradient of the jvp of {f.__name__}", got, expected, 1e-5, 1e-6)


def odeint_tangent_arguments(step=0.0, direction=None):
    """(tangents, y, func, y0, t, args) of an odeint_tangent call, moved by `step` along `direction`."""
    rng = np.random.default_rng(13)
    tangents = (None, rng.standard_normal(2), rng.standard_normal(3), tuple(rng.standard_normal(2)))
    y = odeint(lotka, Y0, T3, (0.7, 1.3), rtol=EXACT, atol=EXACT)
    if direction is None:
        return tangents, y, lotka, Y0, T3, (0.7, 1.3)
    u_tangents, u_y, u_t, u_args = direction
    moved = (None,) + tuple(
        tuple(a + step * b for a, b in zip(x, d, strict=True)) if isinstance(x, tuple) else x + step * d
        for x, d in zip(tangents[1:], u_tangents[1:], strict=True)
    )
    args = (0.7 + step * u_args[0], 1.3 + step * u_args[1])
    return moved, y + step * u_y, lotka, Y0, T3 + step * u_t, args


def test_odeint_tangent_rules_against_differences_and_each_other():
    rng = np.random.default_rng(14)
    direction = (
        (None, rng.standard_normal(2), rng.standard_normal(3), tuple(rng.standard_normal(2))),
        rng.standard_normal((3, 2)), rng.standard_normal(3), tuple(rng.standard_normal(2)),
    )
    options = dict(rtol=EXACT, atol=EXACT)
    arguments = odeint_tangent_arguments()
    out = odeint_tangent(*arguments, **options)
    u_tangents, u_y, u_t, u_args = direction
    got = odeint_tangent_tangent((u_tangents, u_y, None, None, u_t, u_args), out, *arguments, **options)
    eps = 1e-4  # the differences' error is eps^2 times a third derivative; the solves' is 1e-11 / eps
    up = odeint_tangent(*odeint_tangent_arguments(eps, direction), **options)
    down = odeint_tangent(*odeint_tangent_arguments(-eps, direction), **options)
    assert_close("tangent of odeint_tangent", got, (up - down) / (2 * eps), 1e-5, 1e-7)
    weights = rng.standard_normal(out.shape)
    d_tangents, d_y, d_func, d_y0, d_t, d_args = odeint_tangent_adjoint(weights, out, *arguments, **options)
    assert d_func is None and d_y0 is None and d_tangents[0] is None
    backward = inner(d_y, u_y) + inner(d_t, u_t) + inner(d_args, u_args)
    backward += sum(inner(d, t) for d, t in zip(d_tangents[1:], u_tangents[1:], strict=True))
    np.testing.assert_allclose(backward, inner(weights, got), rtol=1e-7)


def test_solve_ivp_tangent_rules_against_each_other():
    rng = np.random.default_rng(15)
    sol = ivp()
    options = dict(rtol=TIGHT, atol=TIGHT)
    first = (None, (0.4, 0.0), rng.standard_normal(2), None, rng.standard_normal(3), None, None, None,
             tuple(rng.standard_normal(2)))
    arguments = (first, sol, spring, IVP_SPAN, IVP_Y0, "RK45", IVP_EVAL, False, None, False, IVP_ARGS)
    out = solve_ivp_tangent(*arguments[:-1], args=IVP_ARGS, **options)
    u_first = (None, (-0.7, 0.0), rng.standard_normal(2), None, rng.standard_normal(3), None, None, None,
               tuple(rng.standard_normal(2)))
    u_sol = OdeResult(y=rng.standard_normal(sol.y.shape), t=rng.standard_normal(3))
    u_span, u_y0, u_args = (0.8, 0.0), rng.standard_normal(2), tuple(rng.standard_normal(2))
    tangents = (u_first, u_sol, None, u_span, u_y0, None, None, None, None, None, u_args)
    got = solve_ivp_tangent_tangent(tangents, out, *arguments, **options)
    assert_close("tangent of the tangent of sol.t", got.t, u_first[4], 1e-12, 0.0)
    weights = {"y": rng.standard_normal(sol.y.shape), "t": rng.standard_normal(3)}
    adjoints = solve_ivp_tangent_adjoint(weights, out, *arguments, **options)
    forward = inner(weights["y"], got.y) + inner(weights["t"], got.t)
    d_first = adjoints[0]
    backward = sum(inner(d_first[k], u_first[k]) for k in (1, 2, 4, 8))
    backward += inner(adjoints[1]["y"], u_sol.y) + inner(adjoints[1]["t"], u_sol.t)
    backward += inner(adjoints[3], u_span) + inner(adjoints[4], u_y0) + inner(adjoints[10], u_args)
    np.testing.assert_allclose(backward, forward, rtol=1e-7)


def pendulum_in_gravity(gravity):
    sol = solve_ivp(spring, (0.0, 1.0), IVP_Y0, t_eval=np.array([0.5, 1.0]), args=(gravity, 0.3), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(sol["y"]))


def pendulum_read_by_attribute(gravity):
    sol = solve_ivp(spring, (0.0, 1.0), IVP_Y0, t_eval=np.array([0.5, 1.0]), args=(gravity, 0.3), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(sol.y))


def pendulum_read_twice(gravity):
    sol = solve_ivp(spring, (0.0, 1.0), IVP_Y0, t_eval=np.array([0.5, 1.0]), args=(gravity, 0.3), rtol=EXACT, atol=EXACT)
    return np.sum(np.sin(sol["y"])) + np.sum(sol["t"]) * gravity


THIRD_DERIVATIVES = {
    "grad-grad-grad": lambda f: ssad.grad(ssad.grad(ssad.grad(f))),
    "jacobian-hessian": lambda f: ssad.jacobian(ssad.hessian(f)),
}


@pytest.mark.parametrize("form", list(THIRD_DERIVATIVES))
@pytest.mark.parametrize(
    "f", [decay_in_k, pendulum_in_gravity, pendulum_read_by_attribute, pendulum_read_twice],
    ids=["odeint", "solve_ivp", "solve_ivp-attribute", "solve_ivp-two-keys"],
)
def test_third_derivatives_are_refused(f, form):
    with pytest.raises(ssad.SsadError, match=r"third derivative through an ODE solution .*finite differences"):
        THIRD_DERIVATIVES[form](f)(0.7)


def test_integrate_rules_are_registered_once_scipy_is_imported():
    assert REGISTRY.adjoint_rule(scipy.integrate.odeint) is not None
    assert REGISTRY.tangent_rule(scipy.integrate.solve_ivp) is not None


@dataclasses.dataclass
class DecayModel:
    k: float

    def rhs(self, y, t):
        return -self.k * y


def decay_through_a_bound_method(k):
    model = DecayModel(k)
    return np.sum(odeint(model.rhs, np.array([1.0, 2.0]), np.array([0.0, 1.0]), rtol=EXACT, atol=EXACT))


def test_a_bound_method_of_a_dataclass_as_the_right_hand_side():
    """`model.rhs` is a method, not a field, of the dataclass: its adjoint is the object's own."""
    k = 0.5
    np.testing.assert_allclose(ssad.grad(decay_through_a_bound_method)(k), -3.0 * np.exp(-k), rtol=1e-7)
    d_model = ssad.grad(lambda m: np.sum(odeint(m.rhs, np.array([1.0, 2.0]), np.array([0.0, 1.0]),
                                                rtol=EXACT, atol=EXACT)))(DecayModel(k))
    np.testing.assert_allclose(d_model.k, -3.0 * np.exp(-k), rtol=1e-7)
