"""Twelve seeded random programs at first and second order, in every CI run.

The same programs `python -m tests.fuzz 0 N --modes first,fwd_over_rev,rev_over_rev,grad_inside`
checks: the gradient against central differences, then forward over reverse (a
Hessian-vector product), reverse over reverse (the gradient of <gradient, v>) and a
gradient called inside a differentiated function, each against differences of the
gradient. A program may be unfair (its differences are not trustworthy there); none may
be wrong, crash, or be refused at second order when its first order works. `make fuzz`
runs 10,000 of them; `SSAD_FUZZ_SECOND_ORDER_PROGRAMS` sets how many run here (each
program compiles a dozen generated functions at first and second order, a few seconds
in all, so CI keeps to a few dozen).
"""

import os
import warnings

import pytest

from tests.fuzz.generate import from_seed
from tests.fuzz.harness import evaluate

PROGRAMS = int(os.environ.get("SSAD_FUZZ_SECOND_ORDER_PROGRAMS", "12"))
MODES = ("first", "fwd_over_rev", "rev_over_rev", "grad_inside")
CHUNK = 6


@pytest.mark.parametrize("start", range(0, PROGRAMS, CHUNK), ids=lambda s: f"seeds-{s}-{min(s + CHUNK, PROGRAMS) - 1}")
def test_random_programs_at_second_order(start):
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for seed in range(start, min(start + CHUNK, PROGRAMS)):
            for mode, outcome in evaluate(from_seed(seed), [m for m in MODES if m != "compiled"]).items():
                if outcome.status not in ("correct", "unfair"):
                    failures.append(f"seed {seed} [{mode}] {outcome.status}: {str(outcome.detail)[:400]}")
    assert not failures, "\n".join(failures)
