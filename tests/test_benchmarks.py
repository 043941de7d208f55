"""The benchmark workloads are right before they are timed: ssad's gradient, the
hand-written one and central finite differences agree on every workload."""

import sys
from pathlib import Path

import numpy as np
import pytest

import ssad

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import workloads  # noqa: E402

WORKLOADS = {w.name: w for w in workloads.WORKLOADS}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_hand_written_gradient_matches_finite_differences(name):
    # Along random directions v: <hand gradient, v> against the central difference of f.
    workload = WORKLOADS[name]
    rng = np.random.default_rng(3)
    args = workload.inputs(rng)
    hand = workload.hand(*args)
    assert len(hand) == len(workload.wrt)
    for _ in range(3):
        directions = {p: rng.standard_normal(np.shape(args[p])) for p in workload.wrt}

        def along(t, directions=directions):
            moved = list(args)
            for p, v in directions.items():
                moved[p] = args[p] + t * (v if np.ndim(args[p]) else float(v))
            return workload.function(*moved)

        predicted = sum(np.sum(g * directions[p]) for p, g in zip(workload.wrt, hand, strict=True))
        eps = 1e-6
        measured = (along(eps) - along(-eps)) / (2 * eps)
        np.testing.assert_allclose(predicted, measured, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_ssad_gradient_matches_the_hand_written_one(name):
    workload = WORKLOADS[name]
    args = workload.inputs(np.random.default_rng(4))
    got = ssad.grad(workload.function, wrt=workload.wrt)(*args)
    for g, expected in zip(got, workload.hand(*args), strict=True):
        np.testing.assert_allclose(g, expected, rtol=1e-10, atol=1e-13)


def test_the_twenty_line_function_is_differentiated_right():
    """`twenty_lines` is timed for its transform only (it has no hand-written gradient):
    its gradient is checked here against autograd's and against central differences."""
    import autograd
    import autograd.numpy as anp

    twenty = workloads.TWENTY_LINES
    args = twenty.inputs(np.random.default_rng(5))
    got = ssad.grad(twenty.function, wrt=twenty.wrt)(*args)
    expected = autograd.grad(workloads.with_numpy(twenty.function, anp), twenty.wrt)(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-13)
    ssad.check_grads(twenty.function, args, wrt=twenty.wrt)


_FAULTS = """
import resource, sys
import numpy as np
sys.path.insert(0, {here!r})
import run

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):  # a call that makes six 512 KiB temporaries and drops them
        held = [np.ones(65536) for _ in range(6)]
        del held
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

print(faults(), end=" ")
run.settle_allocator()
print(faults())
"""


def test_settled_allocator_serves_large_arrays_without_page_faults():
    # The premise of `settle_allocator`: in a new process the heap is trimmed after many
    # rounds of temporaries and faulted in again by the next (128 pages an array; how many
    # of the 50 rounds depends on what the process allocated before, 48 on one machine and
    # 31 on another); once settled, only the first round faults its pages in.
    import subprocess

    here = str(Path(__file__).resolve().parents[1] / "benchmarks")
    done = subprocess.run([sys.executable, "-c", _FAULTS.format(here=here)], capture_output=True, text=True,
                          check=True)
    new, settled = map(int, done.stdout.split())
    assert new >= 20 * 6 * 128
    assert settled <= 2 * 6 * 128
