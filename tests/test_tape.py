"""What the tape records: only what the adjoint sweep needs and cannot recompute."""

import threading

import numpy as np
import pytest

import ssad
from ssad.runtime import Shape
from ssad.backend.driver import argument_class
from ssad.testing import tape_records

from .conftest import assert_gradient_matches
from .programs import straight


@pytest.mark.parametrize("function, args", straight.CASES, ids=[f.__name__ for f, _ in straight.CASES])
def test_straight_line_code_records_nothing(function, args):
    gradient = ssad.grad(function)
    assert tape_records(gradient, *args) == []
    assert "Tape" not in ssad.show(function).source


def scalar_loop(y, dt, k, n):
    for _ in range(n):
        y = y + dt * (-k * y + np.sin(y))
    return y


def test_scalar_loop_records_one_float_per_step():
    gradient = ssad.grad(scalar_loop)
    records = tape_records(gradient, 0.5, 0.01, 0.3, 1000)
    assert len(records) == 1000
    assert all(type(r) in (float, np.float64) for r in records)
    assert_gradient_matches(scalar_loop, (0.5, 0.01, 0.3, 1000), 0, gradient(0.5, 0.01, 0.3, 1000))


def counts_even_steps(x, n):
    count = 0
    for i in range(n):
        if i % 2 == 0:
            count = count + 1
    return np.sum(x * count)


def test_loop_that_overwrites_nothing_active_records_nothing():
    gradient = ssad.grad(counts_even_steps)
    x = np.array([0.5, -1.0])
    assert tape_records(gradient, x, 7) == []
    np.testing.assert_allclose(gradient(x, 7), [4.0, 4.0])


def halvings(x, n):
    total = 0.0
    for i in range(n):
        y = x * (i + 1.0)
        while np.max(np.abs(y)) > 1.0:
            y = y * 0.5
        total = total + np.sum(y * y)
    return total


def test_nested_while_records_trip_counts_and_overwritten_values():
    gradient = ssad.grad(halvings)
    x = np.array([0.3, -0.45])
    records = tape_records(gradient, x, 4)
    counts = [r for r in records if type(r) is int]
    trips = []
    for i in range(4):
        y, k = x * (i + 1.0), 0
        while np.max(np.abs(y)) > 1.0:
            y, k = y * 0.5, k + 1
        trips.append(k)
    # the while loop's trip count of each outer iteration (but the first, which has
    # no earlier count to overwrite) is saved when the next iteration starts counting
    assert counts == trips[:-1]
    assert_gradient_matches(halvings, (x, 4), 0, gradient(x, 4))


def saves_before_writing(x):
    y = x * 1.0
    z = y * y
    y[0] = 5.0
    return np.sum(z) + np.sum(y * x)


def test_an_in_place_write_saves_a_copy_of_what_it_overwrites():
    gradient = ssad.grad(saves_before_writing)
    x = np.array([0.5, 1.5, -2.0])
    records = tape_records(gradient, x)
    assert len(records) == 1 and records[0] == 0.5  # y[0] before the write
    assert_gradient_matches(saves_before_writing, (x,), 0, gradient(x))


def test_the_tape_is_local_to_each_call():
    gradient = ssad.grad(scalar_loop)
    errors = []

    def work(k):
        for _ in range(30):
            g = gradient(0.2 + 0.1 * k, 0.01, 0.3, 50)
            expected = ssad.grad(scalar_loop)(0.2 + 0.1 * k, 0.01, 0.3, 50)
            if g != expected:
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors


def fails_halfway(x, n):
    for i in range(n):
        x = x * 2.0
        if i == 2:
            x = x / np.array([1.0, 0.0])[1:].sum() * np.ones(1)[5]  # IndexError in the forward sweep
    return np.sum(x)


def test_an_exception_leaves_nothing_behind():
    gradient = ssad.grad(fails_halfway)
    with pytest.raises(IndexError):
        gradient(np.ones(2), 5)
    np.testing.assert_allclose(gradient(np.ones(2), 2), [4.0, 4.0])


def recurrence(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)  # `... + b` broadcasts: its operands' shapes matter
    return np.sum(np.sin(h))


def test_values_read_back_only_for_their_shape_record_only_the_shape():
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 4)), 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal((6, 2, 3)))
    gradient = ssad.grad(recurrence, wrt=(0, 1, 2))
    # the general code, which knows nothing of the arguments' shapes, run for these arguments
    mask = tuple(argument_class(a) for a in args)
    gradient.variants.by_mask[mask] = gradient.variants.general
    try:
        records = tape_records(gradient, *args)
    finally:
        del gradient.variants.by_mask[mask]
        gradient.variants.by_shapes.clear()  # which remembered the general code for these shapes
    arrays = [r for r in records if isinstance(r, np.ndarray)]
    # per step: the previous h (the row xs[t] is read again); the sums of the matmuls are
    # needed only for `unbroadcast`, so only their shapes are kept
    assert all(a.shape == (2, 4) for a in arrays)
    assert sum(a.shape == (2, 4) for a in arrays) == 6
    shapes = [r for r in records if isinstance(r, Shape)]
    assert len(shapes) == 3 * 5 and all(s.shape == (2, 4) for s in shapes)
    for position in range(3):
        assert_gradient_matches(recurrence, args, position, gradient(*args)[position])


def test_code_for_known_shapes_records_only_the_previous_state():
    """Arrays of known ranks without unit dimensions: every `unbroadcast` but the bias's is
    the identity, so no shape is recorded, and the row xs[t] is read again, not recorded."""
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 4)), 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal((6, 2, 3)))
    gradient = ssad.grad(recurrence, wrt=(0, 1, 2))
    records = tape_records(gradient, *args)
    assert len(records) == 6 and all(isinstance(r, np.ndarray) and r.shape == (2, 4) for r in records)
    for position in range(3):
        assert_gradient_matches(recurrence, args, position, gradient(*args)[position])
