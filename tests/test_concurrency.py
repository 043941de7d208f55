"""Gradients under threads and over many calls: correct results, one cache entry, flat memory.

Every generated function keeps its tape in a local, so calls may overlap freely; the
transformation itself runs once per function even when several threads ask for it at
the same moment. A `threading.Barrier` starts the threads together so that their
calls really overlap instead of running one after the other.
"""

import gc
import math
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import ssad
from ssad import api
from ssad.backend import driver
from ssad.runtime import Tape
from ssad.testing import tape_records

from .conftest import assert_gradient_matches

THREADS = 16


# ----- functions differentiated from many threads -----


def straight_line(W, x):
    h = np.tanh(x @ W)
    return np.sum(np.sin(h) * h)


def euler(y, dt, k, n):
    for _ in range(n):
        y = y + dt * (-k * y + np.sin(y))
    return np.sum(y * y)


def layer(v, w):
    return np.tanh(v * w) + 0.5 * v


def calls_a_function(x, n):
    s = x
    for _ in range(n):
        s = layer(s, 1.1) * 0.9
    return np.sum(np.cos(s))


def with_a_closure(x, scale):
    def shifted(v):
        return np.sin(v * scale) + x

    total = 0.0
    for i in range(3):
        total = total + np.sum(shifted(x * (i + 1.0)) ** 2)
    return total


def branches_in_a_loop(x, n):
    for _ in range(n):
        if np.sum(x) > 0.0:
            x = x * np.cos(x)
        else:
            x = x + 0.3 * np.sin(x)
    return np.sum(x ** 2)


def scalar_loop(y, c, n):
    for _ in range(n):
        y = math.sin(y) * c + y
    return y * y


def _inputs(rng):
    """One argument tuple per function above, drawn from `rng`."""
    W = rng.normal(size=(3, 2))
    return [
        (straight_line, (W, rng.normal(size=(4, 3)))),
        (euler, (rng.normal(size=5), 0.05, 0.3, 25)),
        (calls_a_function, (rng.normal(size=4), 6)),
        (with_a_closure, (rng.normal(size=3), 0.7)),
        (branches_in_a_loop, (rng.normal(size=3), 5)),
        (scalar_loop, (float(rng.uniform(0.2, 0.8)), 0.4, 12)),
    ]


def _run_together(work, count=THREADS):
    """Run `work(k)` in `count` threads started together; re-raise the first error."""
    barrier = threading.Barrier(count)
    errors = []

    def target(k):
        try:
            barrier.wait()
            work(k)
        except BaseException as error:  # noqa: BLE001 - reported in the main thread
            errors.append(error)

    threads = [threading.Thread(target=target, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


# ----- many threads, many calls -----


def test_sixteen_threads_get_the_single_threaded_gradients():
    # Each thread has inputs of its own; half share the first thread's, so the same
    # function is called with the same arguments at the same time too.
    inputs = [_inputs(np.random.default_rng(k if k % 2 else 0)) for k in range(THREADS)]
    gradients = {f: ssad.grad(f) for f, _ in inputs[0]}
    expected = [[gradients[f](*args) for f, args in cases] for cases in inputs]
    for f, args in inputs[1]:  # the reference itself agrees with finite differences
        assert_gradient_matches(f, args, 0, gradients[f](*args))
    for f, args in inputs[0]:
        assert_gradient_matches(f, args, 0, gradients[f](*args))

    def work(k):
        cases = inputs[k]
        order = list(range(len(cases)))
        for step in range(40):
            for j in order[step % len(order):] + order[: step % len(order)]:  # a different mix each step
                f, args = cases[j]
                got = gradients[f](*args)
                np.testing.assert_array_equal(got, expected[k][j], err_msg=f"{f.__name__} in thread {k}")

    _run_together(work)


def test_threads_mixing_grad_vjp_and_jvp_agree():
    rng = np.random.default_rng(3)
    W, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    direction = rng.normal(size=W.shape)
    gradient = ssad.grad(straight_line)(W, x)
    _, pullback = ssad.vjp(straight_line, W, x)
    d_W, d_x = pullback(1.0)
    tangent = ssad.jvp(straight_line, (W, x), (direction, None))[1]

    def work(k):
        for _ in range(50):
            if k % 3 == 0:
                np.testing.assert_array_equal(ssad.grad(straight_line)(W, x), gradient)
            elif k % 3 == 1:
                _, pull = ssad.vjp(straight_line, W, x)
                got_W, got_x = pull(1.0)
                np.testing.assert_array_equal(got_W, d_W)
                np.testing.assert_array_equal(got_x, d_x)
            else:
                np.testing.assert_array_equal(ssad.jvp(straight_line, (W, x), (direction, None))[1], tangent)

    _run_together(work)
    np.testing.assert_allclose(np.sum(gradient * direction), tangent, rtol=1e-12)


# ----- the first transformation, from several threads at once -----


def _fresh():
    """A new function object each call: a function ssad has never seen."""

    def unseen(x, n):
        total = 0.0
        for _ in range(n):
            x = np.sin(x) * 1.1 + helper_scale(x)
            total = total + np.sum(x * x)
        return total

    return unseen


def helper_scale(v):
    return 0.1 * np.tanh(v)


@pytest.mark.parametrize("round_", range(5))
def test_threads_transforming_an_unseen_function_at_once_share_one_result(round_):
    f = _fresh()
    x = np.linspace(-1.0, 1.0, 4)
    made = [None] * 8

    def work(k):
        gradient = ssad.grad(f)
        made[k] = (gradient, gradient(x, 5))

    _run_together(work, count=8)
    functions = [m[0] for m in made]
    assert all(g is functions[0] for g in functions)  # one gradient function for everyone
    for _, value in made:
        np.testing.assert_array_equal(value, made[0][1])
    assert_gradient_matches(f, (x, 5), 0, made[0][1])

    # The cache holds what one thread alone would have made: one entry per variant.
    alone = _fresh()
    ssad.grad(alone)(x, 5)
    assert sorted(map(repr, driver._cache[f])) == sorted(map(repr, driver._cache[alone]))
    assert len(api._wrappers[f]) == 1
    assert ssad.show(f).source == ssad.show(alone).source


def test_threads_transforming_different_unseen_functions_at_once():
    functions = [_fresh() for _ in range(8)]
    x = np.linspace(-0.5, 0.5, 3)
    results = [None] * 8

    def work(k):
        results[k] = ssad.grad(functions[k])(x, 3)

    _run_together(work, count=8)
    for result in results:
        np.testing.assert_array_equal(result, results[0])
    assert_gradient_matches(functions[0], (x, 3), 0, results[0])


# ----- memory and the tape over many calls -----


def _traced_after(calls, run):
    for _ in range(calls):
        run()
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_five_thousand_calls_leave_memory_flat():
    gradient_loop = ssad.grad(euler)
    gradient_calls = ssad.grad(calls_a_function)
    gradient_scalar = ssad.grad(scalar_loop)
    x = np.random.default_rng(1).normal(size=4)

    count = iter(range(10**6))

    def run():
        k = next(count)
        gradient_loop(x, 0.05, 0.3, 4)
        if k % 4 == 1:
            gradient_calls(x, 3)
        elif k % 4 == 2:
            gradient_scalar(0.4, 0.5, 8)
        elif k % 4 == 3:
            try:
                gradient_scalar_log(3.0, -2.0, 6)  # raises mid-loop, its tape half full
            except ValueError:
                pass

    for _ in range(4):
        run()  # compile everything before measuring
    tracemalloc.start()
    try:
        after_1000 = _traced_after(1000, run)
        after_5000 = _traced_after(4000, run)
    finally:
        tracemalloc.stop()
    # Anything kept per call would be thousands of objects (a hundred KiB and more).
    assert after_5000 - after_1000 < 32 * 1024, (after_1000, after_5000)


def scalar_log_loop(y, c, n):
    for _ in range(n):
        y = math.log(y) + c  # math domain error once y drops below 0
    return y * y


gradient_scalar_log = ssad.grad(scalar_log_loop)


@pytest.fixture
def live_tapes(monkeypatch):
    """Weak references to every Tape made while the test runs (callees' tapes too)."""
    made = []

    def recording_init(self, *items):
        list.__init__(self, *items)
        made.append(weakref.ref(self))

    monkeypatch.setattr(Tape, "__init__", recording_init, raising=False)
    return made


def test_every_call_ends_with_an_empty_tape_even_after_a_failed_one(live_tapes):
    gradient = ssad.grad(scalar_log_loop)
    assert len(tape_records(gradient, 3.0, 2.0, 6)) > 0  # the loop does use the tape
    expected = gradient(3.0, 2.0, 6)
    for k in range(60):
        live_tapes.clear()
        if k % 3 == 0:
            with pytest.raises(ValueError, match="math domain error"):
                gradient(3.0, -2.0, 6)
            # the half-full tape of the failed call went away with its frame
            assert live_tapes and all(ref() is None for ref in live_tapes)
        else:
            assert gradient(3.0, 2.0, 6) == expected  # nothing left over changes the next call
            assert live_tapes and all(ref() is None or len(ref()) == 0 for ref in live_tapes)
    assert_gradient_matches(scalar_log_loop, (3.0, 2.0, 6), 0, gradient(3.0, 2.0, 6))


def test_callees_and_loops_leave_no_tape_entries_between_calls(live_tapes):
    gradient = ssad.grad(calls_a_function)
    x = np.array([0.3, -0.2, 0.9])
    first = tape_records(gradient, x, 4)
    for _ in range(50):
        live_tapes.clear()
        gradient(x, 4)
        assert all(ref() is None or len(ref()) == 0 for ref in live_tapes)
        assert len(tape_records(gradient, x, 4)) == len(first)  # no growth between calls


def test_a_failing_call_in_one_thread_does_not_disturb_the_others():
    gradient = ssad.grad(scalar_log_loop)
    expected = gradient(3.0, 2.0, 6)

    def work(k):
        for _ in range(100):
            if k % 2:
                with pytest.raises(ValueError):
                    gradient(3.0, -2.0, 6)
            else:
                assert gradient(3.0, 2.0, 6) == expected

    _run_together(work)
