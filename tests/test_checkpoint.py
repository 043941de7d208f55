"""Checkpointing: `grad(f, checkpoint=...)` for loops, and `ssad.checkpoint(g)` for calls.

Every checkpointed gradient is compared with the gradient without checkpointing (the
same operations in the same order: equal to rounding) and, once per program, with
central differences. Side effects: a `print` runs once per forward call; what would
repeat an effect the user sees is refused.
"""

import contextlib
import io
import types

import numpy as np
import pytest

import ssad
from ssad.runtime import Tape
from ssad.runtime.checkpoints import Checkpoints, _descent
from ssad.testing import numerical_gradient

STRATEGIES = ["sqrt", ("revolve", 2), ("every", 3)]
# the schedule itself is cheap to run: every strategy at the edges (one slot, a snapshot each iteration)
SCHEDULES = STRATEGIES + [("revolve", 1), ("revolve", 3), ("every", 1), ("every", 7)]
RNG = np.random.default_rng(7)
W4 = 0.6 * RNG.standard_normal((4, 4))
X4 = RNG.standard_normal(4)


def _close(got, expected):
    got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-13)


def _check(f, args, wrt=0, strategies=STRATEGIES):
    expected = ssad.grad(f, wrt)(*args)
    for strategy in strategies:
        _close(ssad.grad(f, wrt, checkpoint=strategy)(*args), expected)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    differences = [
        numerical_gradient(lambda v, p=p: f(*args[:p], v, *args[p + 1 :]), args[p]) for p in positions
    ]
    for got, want in zip(expected if isinstance(wrt, tuple) else (expected,), differences, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# ----- the schedule -----


def _reverse_all(strategy, planned, ran):
    """Run the schedule as generated code does; the iterations reversed, each one's re-runs, the peak snapshots."""
    checkpoints = Checkpoints(strategy, planned)
    for i in range(ran):
        checkpoints.keep(i)
    reversed_order, reruns, peak = [], [0] * ran, len(checkpoints.snapshots)
    if strategy != "sqrt" and strategy[0] == "revolve":
        for restart, first, stop in checkpoints.reversal():
            assert checkpoints.restore(restart) == (restart,)
            for i in range(restart, first):
                checkpoints.keep(i)
                reruns[i] += 1
            peak = max(peak, len(checkpoints.snapshots))
            reversed_order += list(reversed(range(first, stop)))
    else:
        for first, stop in checkpoints.segments():
            assert checkpoints.restore(first) == (first,)
            reversed_order += list(reversed(range(first, stop)))
    return reversed_order, reruns, peak


@pytest.mark.parametrize("strategy", SCHEDULES)
def test_every_iteration_is_reversed_once_last_first(strategy):
    for planned in range(0, 40):
        for ran in sorted({planned, planned // 2, max(planned - 1, 0)}):  # a loop may stop early
            order, _, _ = _reverse_all(strategy, planned, ran)
            assert order == list(reversed(range(ran)))


def test_sqrt_keeps_about_sqrt_n_snapshots():
    checkpoints = Checkpoints("sqrt", 10_000)
    for i in range(10_000):
        checkpoints.keep(i)
    assert len(checkpoints.snapshots) == 100
    assert [b - a for a, b in checkpoints.segments()] == [100] * 100


@pytest.mark.parametrize("slots", [1, 2, 3, 5, 20])
def test_revolve_holds_at_most_its_snapshots_and_reruns_binomially(slots):
    from math import comb

    for n in (1, 2, 7, 30, 200):
        _, reruns, peak = _reverse_all(("revolve", slots), n, n)
        assert peak <= slots
        repeats = next(r for r in range(n + 1) if comb(slots + r, slots) >= n)  # Griewank's bound
        assert max(reruns, default=0) <= repeats


def test_revolve_places_the_first_snapshots_in_the_forward_sweep():
    from math import comb

    placed = _descent(0, 10_000, 19)
    assert len(placed) == 19 and placed == sorted(placed)
    # the first leaves 1,771 iterations before it: as many as 19 slots reverse with 3 re-runs each
    assert placed[0] == comb(19 + 3 + 1, 19 + 1)


# ----- loop checkpointing gives the same gradient -----


def heat(u, k):
    for _t in range(30):
        u = u + k * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(u**2)


def test_heat_equation():
    _check(heat, (np.sin(np.linspace(0, 3, 12)), 0.2), wrt=(0, 1))


def breaks(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x * i)
        if s > 2.0:
            break
    return s


def continues(x):
    s = x
    for i in range(12):
        if i % 3 == 0:
            continue
        s = np.sin(s) * x + i
    return s


def returns_early(x):
    s = x
    for _i in range(12):
        s = np.cos(s) * x
        if s < -0.5:
            return s * 2.0
    return s


def writes_in_place(x):
    a = np.zeros(10)
    for i in range(10):
        a[i] = np.sin(x * i)
        if i > 0:
            a[i] = a[i] + a[i - 1] * x
    return np.sum(a**2)


def writes_into_a_copy(x, y):
    for _i in range(3):
        z = y * 1.0
        z[1:3] *= np.sqrt(1.5 + x * x)
        x += np.max(z) + x * x
    return x


def assigns_on_one_branch(x):
    s = 0.0
    t = 0.0
    for i in range(9):
        if i % 2 == 0:
            t = np.sin(x * i)
        s = s + t * x
    return s


def nested(x, W):
    h = x
    for _i in range(5):
        for j in range(3):
            h = np.tanh(W @ h + j)
    return np.sum(h)


def cell(h, W):
    return np.tanh(W @ h)


def calls_a_helper(x, W):
    h = x
    for _i in range(6):
        h = cell(h, W) + 0.1 * h
    return np.sum(h**2)


def calls_a_closure(x, W):
    def step(h):
        return np.tanh(W @ h)

    h = x
    for _i in range(5):
        h = step(h)
    return np.sum(h)


def appends(x):
    hs = []
    h = x
    for _i in range(5):
        h = np.sin(h) * x
        hs.append(h)
    return sum(hs)


def loop_in_a_branch(x, n):
    s = x
    if x > 0:
        for _i in range(n):
            s = np.sin(s) + x
    return s


def two_loops(x):
    for _i in range(4):
        x = np.sin(x) * 1.1
    y = x * x
    for _i in range(7):
        y = np.cos(y) + x
    return y


@pytest.mark.parametrize(
    "f, args, wrt",
    [
        (breaks, (0.7, 20), 0),
        (breaks, (0.1, 20), 0),
        (continues, (0.3,), 0),
        (returns_early, (0.9,), 0),
        (returns_early, (0.2,), 0),
        (writes_in_place, (0.8,), 0),
        (writes_into_a_copy, (0.3, np.array([0.2, -0.5, 0.9, 1.1])), (0, 1)),
        (assigns_on_one_branch, (0.4,), 0),
        (nested, (X4, W4), (0, 1)),
        (calls_a_helper, (X4, W4), (0, 1)),
        (calls_a_closure, (X4, W4), (0, 1)),
        (appends, (0.5,), 0),
        (loop_in_a_branch, (0.5, 6), 0),
        (loop_in_a_branch, (-0.5, 6), 0),
        (two_loops, (0.4,), 0),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_same_gradient_as_without_checkpointing(f, args, wrt):
    _check(f, args, wrt)


def grows(x):
    while x < 10.0:
        x = x * 1.5 + np.sin(x)
    return x


def test_while_loops_take_every_k():
    for strategy in [("every", 1), ("every", 2), ("every", 50)]:
        _close(ssad.grad(grows, checkpoint=strategy)(0.5), ssad.grad(grows)(0.5))
    for strategy in ["sqrt", ("revolve", 3)]:
        with pytest.raises(ssad.SsadError, match=r"needs the trip count.*\(\"every\", k\)"):
            ssad.grad(grows, checkpoint=strategy)(0.5)


def test_zero_trips():
    for strategy in STRATEGIES:
        assert ssad.grad(loop_in_a_branch, checkpoint=strategy)(0.5, 0) == 1.0


def test_value_and_grad_and_vjp():
    u, k = np.cos(np.linspace(0, 2, 9)), 0.15
    value, gradient = ssad.value_and_grad(heat, (0, 1), checkpoint=("revolve", 2))(u, k)
    assert value == heat(u, k)
    _close(gradient, ssad.grad(heat, (0, 1))(u, k))
    value, pullback = ssad.vjp(heat, u, k, checkpoint="sqrt")
    first, second = pullback(0.5), pullback(0.5)  # the snapshots are not used up by the first
    _close(first, tuple(0.5 * g for g in ssad.grad(heat, (0, 1))(u, k)))
    _close(second, first)


def test_the_generated_code_shows_the_strategy():
    shown = str(ssad.show(heat, (0, 1), checkpoint="sqrt"))
    assert "checkpoints = Checkpoints('sqrt', len(range_30))" in shown
    assert "keep(checkpoints, u)" in shown
    assert "for segment_start, segment_stop in segments(checkpoints):" in shown
    assert "for _t in reversed(range_30[segment_start:segment_stop]):" in shown
    revolve = str(ssad.show(heat, (0, 1), checkpoint=("revolve", 4)))
    assert "for restart, segment_start, segment_stop in reversal(checkpoints):" in revolve
    assert "for _t in range_30[restart:segment_start]:" in revolve
    assert "tape.push" not in str(ssad.show(heat, (0, 1), checkpoint="sqrt")).split("d_result =")[0]


def _peak_tape(gradient, *args):
    """The most values the tape held at once while `gradient(*args)` ran."""
    function = gradient.variants.for_args(args).function
    peak = [0]

    class Counting(Tape):
        def push(self, value):
            self.append(value)
            peak[0] = max(peak[0], len(self))

    scope = {k: Counting if v is Tape else v for k, v in function.__globals__.items()}
    types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__)(*args)
    return peak[0]


def long_heat(u, k):
    for _t in range(100):
        u = u + k * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(u**2)


def test_the_tape_holds_one_segment():
    args = (np.sin(np.linspace(0, 3, 8)), 0.2)
    plain = _peak_tape(ssad.grad(long_heat, (0, 1)), *args)
    per_iteration = plain // 100
    assert per_iteration >= 1 and plain == 100 * per_iteration
    assert _peak_tape(ssad.grad(long_heat, (0, 1), checkpoint="sqrt"), *args) == 10 * per_iteration
    assert _peak_tape(ssad.grad(long_heat, (0, 1), checkpoint=("every", 4)), *args) == 4 * per_iteration
    assert _peak_tape(ssad.grad(long_heat, (0, 1), checkpoint=("revolve", 5)), *args) == per_iteration


def test_only_the_state_is_kept():
    shown = str(ssad.show(heat, (0, 1), checkpoint="sqrt"))
    assert "keep(checkpoints, u)\n" in shown  # not the temporaries each iteration recomputes


def test_bad_strategies_are_refused():
    for bad in ["log", ("revolve", 0), ("every", -1), ("revolve",), ("binomial", 3), ("every", 2.5)]:
        with pytest.raises(ssad.SsadError, match="checkpoint="):
            ssad.grad(heat, checkpoint=bad)


# ----- effects -----


def prints(x):
    for i in range(6):
        x = np.sin(x)
        print("step", i)
    return x


def test_print_runs_once_per_forward_call():
    for strategy in STRATEGIES:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            gradient = ssad.grad(prints, checkpoint=strategy)(0.5)
        assert out.getvalue().count("step") == 6
        _close(gradient, ssad.grad(prints)(0.5))


def draws(x):
    for _i in range(4):
        x = x + 0.1 * np.random.normal()
    return x


def noisy_cell(h):
    print(h)
    return np.tanh(h)


def jittered_cell(h):
    return np.tanh(h) + 0.01 * np.random.normal()


def calls_noisy(x):
    for _i in range(3):
        x = jittered_cell(x)
    return x


def calls_through_a_value(x, step):
    for _i in range(3):
        x = step(x)
    return x


def test_effects_that_would_repeat_are_refused():
    with pytest.raises(ssad.SsadError, match=r"np\.random\.normal.*not pure") as caught:
        ssad.grad(draws, checkpoint="sqrt")(0.5)
    assert caught.value.lineno == draws.__code__.co_firstlineno + 2 and "x = x + 0.1 * np.random" in caught.value.line
    with pytest.raises(ssad.SsadError, match=r"np\.random\.normal.*test_checkpoint\.py, line"):
        ssad.grad(calls_noisy, checkpoint="sqrt")(0.5)
    rng = np.random.default_rng(0)
    with pytest.raises(ssad.SsadError, match="repeat an effect"):
        ssad.grad(calls_through_a_value, checkpoint="sqrt")(0.5, lambda h: h + rng.normal())
    pure = ssad.grad(calls_through_a_value, checkpoint="sqrt")(0.5, np.sin)
    _close(pure, ssad.grad(calls_through_a_value)(0.5, np.sin))


def test_a_checkpointed_gradient_is_not_differentiated_again_silently():
    inner = ssad.grad(heat, 1, checkpoint="sqrt")
    with pytest.raises(ssad.SsadError, match="checkpoint=, which is not differentiated again"):
        ssad.grad(lambda k: inner(np.ones(5), k))(0.2)
    with pytest.raises(ssad.SsadError, match="checkpoint=, which is not differentiated again"):
        ssad.jvp(inner, (np.ones(5), 0.2), (None, 1.0))


# ----- ssad.checkpoint(g) -----


def block(h, W):
    return np.tanh(W @ h)


def plain_calls(x, W):
    h = x
    for _i in range(5):
        h = block(h, W)
    return np.sum(h**2)


def checkpointed_calls(x, W):
    h = x
    for _i in range(5):
        h = ssad.checkpoint(block)(h, W)
    return np.sum(h**2)


def checkpointed_closure(x, W):
    def step(h):
        return np.tanh(W @ h)

    h = x
    for _i in range(5):
        h = ssad.checkpoint(step)(h)
    return np.sum(h**2)


@ssad.checkpoint
def decorated(h, W):
    return np.tanh(W @ h)


def decorated_calls(x, W):
    h = x
    for _i in range(5):
        h = decorated(h, W)
    return np.sum(h**2)


class Layer:
    def __init__(self, W):
        self.W = W

    def step(self, h):
        return np.tanh(self.W @ h)


def checkpointed_method(x, layer):
    h = x
    for _i in range(5):
        h = ssad.checkpoint(layer.step)(h)
    return np.sum(h**2)


@pytest.mark.parametrize("f", [checkpointed_calls, checkpointed_closure, decorated_calls])
def test_checkpoint_call_gives_the_same_derivatives(f):
    _close(ssad.grad(f, (0, 1))(X4, W4), ssad.grad(plain_calls, (0, 1))(X4, W4))
    _close(ssad.jvp(f, (X4, W4), (np.ones(4), W4))[1], ssad.jvp(plain_calls, (X4, W4), (np.ones(4), W4))[1])
    _close(ssad.hessian(f, 0)(X4, W4), ssad.hessian(plain_calls, 0)(X4, W4))
    twice = ssad.grad(lambda x, W: np.sum(np.sin(ssad.grad(f, 1)(x, W))), 0)(X4, W4)
    _close(twice, ssad.grad(lambda x, W: np.sum(np.sin(ssad.grad(plain_calls, 1)(x, W))), 0)(X4, W4))
    assert f(X4, W4) == plain_calls(X4, W4)


def test_checkpoint_a_method():
    gradient = ssad.grad(checkpointed_method, 1)(X4, Layer(W4))
    _close(gradient.W, ssad.grad(plain_calls, 1)(X4, W4))


def test_checkpoint_refuses_a_block_with_effects():
    def f(x):
        return ssad.checkpoint(noisy_cell)(x)

    with pytest.raises(ssad.SsadError, match="print"):
        ssad.grad(f)(0.3)
    runs = []

    def counted(h):
        runs.append(h)
        return np.tanh(h)

    with pytest.raises(ssad.SsadError, match="runs"):
        ssad.grad(lambda x: ssad.checkpoint(counted)(x))(0.3)
    with pytest.raises(TypeError, match="takes a function"):
        ssad.checkpoint(3.0)
