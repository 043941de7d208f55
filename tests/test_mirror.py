"""The mirror checker: every value the adjoint sweep reads is the forward sweep's value there.

tests/conftest.py turns the checker on for everything the tests compile; these tests
show that it catches what it must (a tape that skips a value a later iteration
overwrites) and that the tape passes it on the programs that once fooled it.
"""

import numpy as np
import pytest

import ssad
from ssad.transform import mirror, tape

from . import conftest
from .conftest import finite_difference_gradient, structural_checks_in


def rebuilt_and_written_each_iteration(x, y):
    for _ in range(2):
        z2 = y * 1.0
        z2[1:3] *= np.sqrt(1.5 + x * x)
        x += np.max(z2) + x * x
    return x


def max_read_after_a_later_write(x):
    total = 0.0
    for i in range(3):
        z = x * 1.0
        m = np.max(z)
        z[i] = m * 0.5
        total = total + m * np.sum(z)
    return total


def sorted_and_argmax_read_after_writes(x):
    out = 0.0
    for i in range(3):
        z = x * 2.0
        z[i] = z[i] * np.cos(x[0])
        order = np.sort(z)
        out = out + order[1] * z[np.argmax(z)]
        z[0] = out
        out = out + np.sum(z * z)
    return out


Y = np.array([0.2, -0.5, 0.9, 1.1])


def test_a_selecting_reduction_of_an_array_rebuilt_and_written_each_iteration():
    got = ssad.grad(rebuilt_and_written_each_iteration)(0.3, Y)
    expected = finite_difference_gradient(rebuilt_and_written_each_iteration, (0.3, Y), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(got, 8.619634674806491, rtol=1e-9)
    value, (d_x, d_y) = ssad.value_and_grad(rebuilt_and_written_each_iteration, (0, 1))(0.3, Y)
    np.testing.assert_allclose(d_y, finite_difference_gradient(rebuilt_and_written_each_iteration, (0.3, Y), 1),
                               rtol=1e-6, atol=1e-9)


def first_item_read_while_the_list_grows(x):
    # items[0] is one value however many items the loop appends after it; the checker
    # once took the read before an append and the read after it for two values
    h = x * 1.0
    items = [np.cos(x), x * 2.0]
    for _ in range(3):
        if np.sum(h) > 2.5:
            break
        items.append(np.tanh(h))
        for _ in range(2):
            h = np.tanh(h * h + items[0][2] + x)
    return np.sum(h) + np.sum(np.sin(items[-1]))


@pytest.mark.parametrize(
    "function", [max_read_after_a_later_write, sorted_and_argmax_read_after_writes, first_item_read_while_the_list_grows]
)
def test_arrays_written_in_place_in_loops(function):
    x = np.array([0.7, -1.3, 0.4, 2.1])
    got = ssad.grad(function)(x)
    np.testing.assert_allclose(got, finite_difference_gradient(function, (x,), 0), rtol=1e-6, atol=1e-9)


def test_the_checker_catches_a_tape_that_skips_an_overwritten_value(monkeypatch):
    # Pretend every pure statement of a loop recomputes the same value (the old mistake
    # for arrays written in place): the checker must refuse the resulting gradient.
    def everything_invariant(program, forward):
        names = set()
        for statement in tape._all_statements(forward):
            if isinstance(statement, (tape.gast.For, tape.gast.While)):
                names |= tape._stores(statement.body) - {"x"}
        return names

    monkeypatch.setattr(tape, "loop_invariants", everything_invariant)

    def fresh(x, y):  # a new function: nothing cached
        for _ in range(2):
            z2 = y * 1.0
            z2[1:3] *= np.sqrt(1.5 + x * x)
            x += np.max(z2) + x * x
        return x

    with pytest.raises(mirror.MirrorError, match="reads `"):
        ssad.grad(fresh)(0.3, Y)


def test_the_checker_is_on_in_the_tests_and_off_for_users():
    assert mirror.ENABLED  # tests/conftest.py: always in this file
    assert "ENABLED = False" in open(mirror.__file__).read()


def test_the_checks_run_in_a_third_of_the_other_tests(monkeypatch):
    monkeypatch.setattr(conftest, "_EVERY_TEST", False)  # as `make test` runs, whatever runs this
    ids = [f"tests/test_{k % 40}.py::test_case[{k}]" for k in range(6000)]
    chosen = [i for i in ids if structural_checks_in(i)]
    assert 0.3 < len(chosen) / len(ids) < 0.37
    assert structural_checks_in("tests/test_tape.py::test_anything")
    monkeypatch.setattr(conftest, "_EVERY_TEST", True)  # SSAD_STRUCTURAL_CHECKS=all
    assert all(structural_checks_in(i) for i in ids)
