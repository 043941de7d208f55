"""Reverse mode through branches and loops, against central finite differences."""

import numpy as np
import pytest

import ssad

from .conftest import assert_gradient_matches, case_ids, float_positions
from .programs import control


IDS = case_ids(control.CASES)


def _copies(args):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


def _assert_arguments_unchanged(function, args, before, when):
    for position, (now, then) in enumerate(zip(args, before, strict=True)):
        if isinstance(then, np.ndarray):
            assert np.array_equal(now, then), (
                f"{function.__name__}: {when} modified argument {position} in place"
            )


def _check_argument(function, args, position):
    """ssad's gradient for one argument against finite differences computed without ssad."""
    gradient = ssad.grad(function, wrt=position)(*args)
    assert_gradient_matches(function, args, position, gradient)


@pytest.mark.parametrize("function, args", control.CASES, ids=IDS)
def test_gradient_matches_finite_differences(function, args):
    for position in float_positions(args):
        _check_argument(function, args, position)


@pytest.mark.parametrize("function, args", control.CASES, ids=IDS)
def test_check_grads_all_arguments(function, args):
    positions = tuple(float_positions(args))
    ssad.check_grads(function, args, wrt=positions)


@pytest.mark.parametrize("function, args", control.CASES, ids=IDS)
def test_value_and_grad_value(function, args):
    positions = tuple(float_positions(args))
    before = _copies(args)
    expected = function(*args)
    _assert_arguments_unchanged(function, args, before, "the function itself")
    value, gradients = ssad.value_and_grad(function, wrt=positions)(*args)
    _assert_arguments_unchanged(function, args, before, "value_and_grad")
    assert value == pytest.approx(expected, rel=1e-12)
    assert len(gradients) == len(positions)
    gradient = ssad.grad(function, wrt=positions)(*args)
    _assert_arguments_unchanged(function, args, before, "grad")
    assert len(gradient) == len(positions)


def test_corpus_size():
    functions = {function for function, _ in control.CASES}
    assert len(functions) >= 48
    assert len(control.CASES) >= 80
    assert len(set(IDS)) == len(IDS)
    for (function, args), case_id in zip(control.CASES, IDS, strict=True):
        assert callable(function), case_id
        assert isinstance(args, tuple), case_id
        assert float_positions(args), f"{case_id} has no float argument to differentiate"
