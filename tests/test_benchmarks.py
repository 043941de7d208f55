"""The benchmark workloads are right before they are timed: ssad's gradient, the
hand-written one and central finite differences agree on every workload."""

import sys
from pathlib import Path

import numpy as np
import pytest

import ssad
from ssad.testing import numerical_gradient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import workloads  # noqa: E402

WORKLOADS = {w.name: w for w in workloads.WORKLOADS}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_hand_written_gradient_matches_finite_differences(name):
    workload = WORKLOADS[name]
    args = workload.inputs(np.random.default_rng(3))
    hand = workload.hand(*args)
    assert len(hand) == len(workload.wrt)
    for position, expected in zip(workload.wrt, hand, strict=True):

        def along(value, position=position):
            changed = list(args)
            changed[position] = value
            return workload.function(*changed)

        np.testing.assert_allclose(expected, numerical_gradient(along, args[position]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_ssad_gradient_matches_the_hand_written_one(name):
    workload = WORKLOADS[name]
    args = workload.inputs(np.random.default_rng(4))
    got = ssad.grad(workload.function, wrt=workload.wrt)(*args)
    for g, expected in zip(got, workload.hand(*args), strict=True):
        np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-13)
